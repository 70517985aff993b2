// Reading an array's bytes from a file when the array is evaluated (MLX's Load).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "braid/io.h"
#include "primitives/primitive_base.h"

namespace braid {

/// The out.nbytes() bytes at `offset` of `reader`, byte-swapped per element when asked, bool
/// bytes made 0 or 1. `op` names the loading function in errors. The reader is kept open
/// while the node lives.
class Load : public UnaryPrimitive {
 public:
  Load(Stream s, std::shared_ptr<io::Reader> reader, size_t offset, bool swap_endianness, const char* op)
      : UnaryPrimitive(std::move(s)),
        reader_(std::move(reader)),
        offset_(offset),
        swap_(swap_endianness),
        op_(op) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Load"; }

  /// Fills the host buffer `dst` with out's bytes (what both backends do first); throws
  /// std::runtime_error("[op] ...") when the file no longer holds them.
  void read_into(const array& out, void* dst) const;

 private:
  std::shared_ptr<io::Reader> reader_;
  size_t offset_;
  bool swap_;
  const char* op_;
};

#define BRAID_IO_PRIMITIVES(X) X(Load)

}  // namespace braid
