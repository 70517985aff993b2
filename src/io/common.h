// What the file formats share: preparing arrays for writing, making loaded host arrays, and
// little-endian byte strings.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "braid/array.h"
#include "braid/io.h"

namespace braid::io_detail {

/// Evaluates `arrays` together, then replaces each one that is not row-contiguous by a
/// row-major copy (evaluated), so that host_data() holds its elements in order.
void eval_row_contiguous(std::vector<array*> arrays);

/// A host array, already available, whose nbytes() uninitialized bytes are at `*data`.
array new_host_array(Shape shape, Dtype dtype, void** data);

/// load_gguf over any reader, from its start (the fuzz tests read from memory).
GGUFLoad load_gguf(io::Reader& in);

/// True when `file` ends with `suffix` (".npz").
inline bool has_suffix(const std::string& file, const std::string& suffix) {
  return file.size() >= suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// `file` with `suffix` appended unless it already ends with it, as MLX names saved files.
inline std::string with_suffix(std::string file, const std::string& suffix) {
  return has_suffix(file, suffix) ? file : file + suffix;
}

/// Appends `v` to `out` in little-endian byte order (the hosts braid builds for).
template <typename T>
void append_le(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

}  // namespace braid::io_detail
