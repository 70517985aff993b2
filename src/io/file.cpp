// io::Reader and io::Writer over C stdio files.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>

#include "braid/io.h"

namespace braid::io {

void Reader::read(char* data, size_t n, size_t offset) {
  std::lock_guard<std::mutex> lock(positional_read_mutex_);
  seek(static_cast<int64_t>(offset), std::ios_base::beg);
  read(data, n);
}

namespace {

int whence(std::ios_base::seekdir way) {
  if (way == std::ios_base::cur) return SEEK_CUR;
  if (way == std::ios_base::end) return SEEK_END;
  return SEEK_SET;
}

class FileReader final : public Reader {
 public:
  explicit FileReader(std::string path) : path_(std::move(path)), f_(std::fopen(path_.c_str(), "rb")) {}
  ~FileReader() override {
    if (f_) std::fclose(f_);
  }
  bool is_open() const override { return f_ != nullptr; }
  bool good() const override { return f_ && !std::ferror(f_); }
  size_t tell() override { return static_cast<size_t>(std::ftell(f_)); }
  void seek(int64_t offset, std::ios_base::seekdir way) override { std::fseek(f_, offset, whence(way)); }
  void read(char* data, size_t n) override {
    if (std::fread(data, 1, n, f_) != n) throw std::runtime_error("[load] Unexpected end of file " + path_ + ".");
  }
  // pread leaves the stream's position alone, so threads may read at once.
  void read(char* data, size_t n, size_t offset) override {
    const int fd = ::fileno(f_);
    while (n > 0) {
      const ssize_t got = ::pread(fd, data, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) throw std::runtime_error("[load] Unexpected end of file " + path_ + ".");
      data += got;
      n -= static_cast<size_t>(got);
      offset += static_cast<size_t>(got);
    }
  }
  std::string label() const override { return "file " + path_; }

 private:
  std::string path_;
  std::FILE* f_;
};

class FileWriter final : public Writer {
 public:
  explicit FileWriter(std::string path) : path_(std::move(path)), f_(std::fopen(path_.c_str(), "wb")) {}
  ~FileWriter() override {
    if (f_) std::fclose(f_);
  }
  bool is_open() const override { return f_ != nullptr; }
  bool good() const override { return f_ && !std::ferror(f_); }
  size_t tell() override { return static_cast<size_t>(std::ftell(f_)); }
  void seek(int64_t offset, std::ios_base::seekdir way) override { std::fseek(f_, offset, whence(way)); }
  void write(const char* data, size_t n) override {
    if (std::fwrite(data, 1, n, f_) != n) throw std::runtime_error("[save] Could not write to " + path_ + ".");
  }
  std::string label() const override { return "file " + path_; }

 private:
  std::string path_;
  std::FILE* f_;
};

}  // namespace

std::shared_ptr<Reader> file_reader(const std::string& path) { return std::make_shared<FileReader>(path); }
std::shared_ptr<Writer> file_writer(const std::string& path) { return std::make_shared<FileWriter>(path); }

}  // namespace braid::io
