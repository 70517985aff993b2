// Reading and writing arrays: NumPy's .npy format (MLX's io.h). Every function is thread-safe;
// distinct threads may save and load distinct files at once.
#pragma once

#include <cstdint>
#include <ios>
#include <memory>
#include <string>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid {

namespace io {

/// A source of bytes (MLX's io::Reader).
class Reader {
 public:
  virtual ~Reader() = default;
  virtual bool is_open() const = 0;
  virtual bool good() const = 0;
  virtual size_t tell() = 0;
  virtual void seek(int64_t offset, std::ios_base::seekdir way = std::ios_base::beg) = 0;
  /// Reads exactly n bytes; throws std::runtime_error when fewer are there.
  virtual void read(char* data, size_t n) = 0;
  virtual std::string label() const = 0;
};

/// A sink of bytes (MLX's io::Writer).
class Writer {
 public:
  virtual ~Writer() = default;
  virtual bool is_open() const = 0;
  virtual bool good() const = 0;
  virtual size_t tell() = 0;
  virtual void seek(int64_t offset, std::ios_base::seekdir way = std::ios_base::beg) = 0;
  virtual void write(const char* data, size_t n) = 0;
  virtual std::string label() const = 0;
};

/// A file opened for binary reading.
std::shared_ptr<Reader> file_reader(const std::string& path);
/// A file created (or truncated) for binary writing.
std::shared_ptr<Writer> file_writer(const std::string& path);

}  // namespace io

/// Writes `a` (evaluated first) in .npy format. A file name without the ".npy" extension gets
/// it, as MLX does. bfloat16 is written with the type string "<V2".
void save(std::shared_ptr<io::Writer> out, array a);
void save(std::string file, array a);

/// Reads a .npy array (C or Fortran order, either byte order; every dtype braid has).
/// Malformed or truncated files throw std::invalid_argument("[load] ...") and never read
/// past what the file holds. The data is read when the call is made; the result lives on
/// the host and any stream may use it.
array load(std::shared_ptr<io::Reader> in, StreamOrDevice s = {});
array load(std::string file, StreamOrDevice s = {});

}  // namespace braid
