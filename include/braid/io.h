// Reading and writing arrays: NumPy's .npy, safetensors and GGUF files (MLX's io.h). Every
// function is thread-safe; distinct threads may save and load distinct files at once, and the
// arrays a load returns may be evaluated from any thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ios>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

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
  /// Reads exactly n bytes starting `offset` bytes from the start (MLX's positional read);
  /// throws std::runtime_error when fewer are there. Lazily loaded arrays read through this,
  /// possibly from several threads at once: an override must be safe for that. The default
  /// seeks and reads under a lock of this reader's own, and leaves the position after the
  /// bytes read.
  virtual void read(char* data, size_t n, size_t offset);
  virtual std::string label() const = 0;

 private:
  std::mutex positional_read_mutex_;
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

/// A file opened for binary reading (MLX's class of this name). Positional reads (pread) leave
/// the position alone, so any number of threads may make them at once. is_open() tells
/// whether the file could be opened.
class ParallelFileReader : public Reader {
 public:
  explicit ParallelFileReader(std::string file_path);
  ~ParallelFileReader() override;
  ParallelFileReader(const ParallelFileReader&) = delete;
  ParallelFileReader& operator=(const ParallelFileReader&) = delete;
  bool is_open() const override;
  bool good() const override;
  size_t tell() override;
  void seek(int64_t offset, std::ios_base::seekdir way = std::ios_base::beg) override;
  void read(char* data, size_t n) override;
  void read(char* data, size_t n, size_t offset) override;
  std::string label() const override;

 private:
  std::string path_;
  std::FILE* f_;
};

/// A file created (or truncated) for binary writing (MLX's class of this name).
class FileWriter : public Writer {
 public:
  explicit FileWriter(std::string file_path);
  ~FileWriter() override;
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  bool is_open() const override;
  bool good() const override;
  size_t tell() override;
  void seek(int64_t offset, std::ios_base::seekdir way = std::ios_base::beg) override;
  void write(const char* data, size_t n) override;
  std::string label() const override;

 private:
  std::string path_;
  std::FILE* f_;
};

/// A file opened for binary reading.
std::shared_ptr<Reader> file_reader(const std::string& path);
/// A file created (or truncated) for binary writing.
std::shared_ptr<Writer> file_writer(const std::string& path);

}  // namespace io

/// A GGUF metadata value: a scalar (0-d array) or 1-d array of numbers, a string or a list of
/// strings; monostate only as a placeholder.
using GGUFMetaData = std::variant<std::monostate, array, std::string, std::vector<std::string>>;
/// Arrays by name, and the metadata by key.
using GGUFLoad = std::pair<std::unordered_map<std::string, array>, std::unordered_map<std::string, GGUFMetaData>>;
using SafetensorsLoad = std::pair<std::unordered_map<std::string, array>, std::unordered_map<std::string, std::string>>;

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

/// Reads a NumPy .npz archive (numpy.savez or savez_compressed: stored or deflated members,
/// ZIP64 included): its arrays by member name without ".npy". Eager, like load. Malformed
/// archives throw std::invalid_argument("[load_npz] ..."), checking every offset and size
/// against the file and never inflating past what the stored bytes allow.
std::unordered_map<std::string, array> load_npz(std::shared_ptr<io::Reader> in, StreamOrDevice s = {});
std::unordered_map<std::string, array> load_npz(const std::string& file, StreamOrDevice s = {});

/// Writes the arrays (evaluated first) as a NumPy .npz archive, members in name order; with
/// `compressed`, deflated (numpy.savez_compressed). A file name without ".npz" gets it.
void savez(std::shared_ptr<io::Writer> out, const std::unordered_map<std::string, array>& arrays,
           bool compressed = false);
void savez(std::string file, const std::unordered_map<std::string, array>& arrays, bool compressed = false);
void savez_compressed(std::string file, const std::unordered_map<std::string, array>& arrays);

/// Reads a safetensors file: its arrays and its "__metadata__" strings. The header is read
/// and checked when the call is made (a malformed one throws std::runtime_error
/// "[load_safetensors] ..."); each array's data is read when the array is evaluated, on
/// stream `s`, so the reader stays open while an unevaluated array refers to it. Types: BOOL,
/// U8..U64, I8..I64, F16, BF16, F32, F64, C64, and F8_E4M3 (decoded to bfloat16, as MLX).
SafetensorsLoad load_safetensors(std::shared_ptr<io::Reader> in, StreamOrDevice s = {});
SafetensorsLoad load_safetensors(const std::string& file, StreamOrDevice s = {});

/// Writes the arrays (evaluated first; any layout) and the metadata strings in safetensors
/// format, arrays in key order. A file name without ".safetensors" gets it, as MLX does.
void save_safetensors(std::shared_ptr<io::Writer> out, std::unordered_map<std::string, array> arrays,
                      std::unordered_map<std::string, std::string> metadata = {});
void save_safetensors(std::string file, std::unordered_map<std::string, array> arrays,
                      std::unordered_map<std::string, std::string> metadata = {});

/// Reads a GGUF file (versions 2 and 3) into host arrays, eagerly. F32, F16, BF16, F64, I8,
/// I16, I32 and I64 tensors load as those types (shape reversed from GGML's order); Q4_0,
/// Q4_1, Q4_K and Q8_0 tensors load as MLX's affine quantized layout with group size 32: the
/// packed uint32 weights under the tensor's name, float16 scales and biases under
/// "<name>.scales" and "<name>.biases" (".weight" dropped from the name). Other types and
/// malformed files throw std::runtime_error("[load_gguf] ...").
GGUFLoad load_gguf(const std::string& file, StreamOrDevice s = {});

/// Writes a GGUF (version 3) file: float32, float16, bfloat16, float64 and int8..int64
/// arrays, and metadata of strings, string lists, and 0-d or 1-d arrays of bool, integers,
/// float32 or float64. A file name without ".gguf" gets it, as MLX does.
void save_gguf(std::string file, std::unordered_map<std::string, array> array_map,
               std::unordered_map<std::string, GGUFMetaData> meta_data = {});

}  // namespace braid
