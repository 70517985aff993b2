// Helpers for the safetensors and GGUF tests: temporary paths, little-endian byte strings,
// and an in-memory io::Reader / io::Writer.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "braid/braid.h"

namespace braid::test {

inline std::string temp_file(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/braid_iofmt_" + std::to_string(::getpid()) + "_" + name;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// `v`'s bytes, little-endian.
template <typename T>
std::string le(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

/// A reader over bytes in memory. It overrides only the sequential read, so positional reads
/// take io::Reader's default (seek and read under its lock); it counts the bytes read.
class MemoryReader : public io::Reader {
 public:
  explicit MemoryReader(std::string bytes) : bytes_(std::move(bytes)) {}
  bool is_open() const override { return true; }
  bool good() const override { return true; }
  size_t tell() override { return pos_; }
  void seek(int64_t offset, std::ios_base::seekdir way) override {
    const int64_t base = way == std::ios_base::beg   ? 0
                         : way == std::ios_base::cur ? static_cast<int64_t>(pos_)
                                                     : static_cast<int64_t>(bytes_.size());
    pos_ = static_cast<size_t>(base + offset);
  }
  using io::Reader::read;
  void read(char* data, size_t n) override {
    if (pos_ > bytes_.size() || n > bytes_.size() - pos_)
      throw std::runtime_error("[MemoryReader] past the end");
    std::memcpy(data, bytes_.data() + pos_, n);
    pos_ += n;
    bytes_read += n;
  }
  std::string label() const override { return "memory"; }

  std::atomic<size_t> bytes_read{0};

 private:
  std::string bytes_;
  size_t pos_ = 0;
};

class MemoryWriter : public io::Writer {
 public:
  bool is_open() const override { return true; }
  bool good() const override { return true; }
  size_t tell() override { return bytes.size(); }
  void seek(int64_t, std::ios_base::seekdir) override {
    throw std::runtime_error("[MemoryWriter] no seeking");
  }
  void write(const char* data, size_t n) override { bytes.append(data, n); }
  std::string label() const override { return "memory"; }

  std::string bytes;
};

}  // namespace braid::test
