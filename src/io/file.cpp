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

// A file that could not be opened is an error to use, never a null FILE* passed to stdio.
std::FILE* opened(std::FILE* f, const std::string& path) {
  if (f == nullptr) throw std::runtime_error("[io] The file " + path + " is not open.");
  return f;
}

int whence(std::ios_base::seekdir way) {
  if (way == std::ios_base::cur) return SEEK_CUR;
  if (way == std::ios_base::end) return SEEK_END;
  return SEEK_SET;
}

}  // namespace

ParallelFileReader::ParallelFileReader(std::string file_path)
    : path_(std::move(file_path)), f_(std::fopen(path_.c_str(), "rb")) {}
ParallelFileReader::~ParallelFileReader() {
  if (f_) std::fclose(f_);
}
bool ParallelFileReader::is_open() const { return f_ != nullptr; }
bool ParallelFileReader::good() const { return f_ && !std::ferror(f_); }
size_t ParallelFileReader::tell() { return static_cast<size_t>(std::ftell(opened(f_, path_))); }
void ParallelFileReader::seek(int64_t offset, std::ios_base::seekdir way) {
  std::fseek(opened(f_, path_), offset, whence(way));
}
void ParallelFileReader::read(char* data, size_t n) {
  if (std::fread(data, 1, n, opened(f_, path_)) != n)
    throw std::runtime_error("[load] Unexpected end of file " + path_ + ".");
}
// pread leaves the stream's position alone, so threads may read at once.
void ParallelFileReader::read(char* data, size_t n, size_t offset) {
  const int fd = ::fileno(opened(f_, path_));
  while (n > 0) {
    const ssize_t got = ::pread(fd, data, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error("[load] Unexpected end of file " + path_ + ".");
    data += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<size_t>(got);
  }
}
std::string ParallelFileReader::label() const { return "file " + path_; }

FileWriter::FileWriter(std::string file_path)
    : path_(std::move(file_path)), f_(std::fopen(path_.c_str(), "wb")) {}
FileWriter::~FileWriter() {
  if (f_) std::fclose(f_);
}
bool FileWriter::is_open() const { return f_ != nullptr; }
bool FileWriter::good() const { return f_ && !std::ferror(f_); }
size_t FileWriter::tell() { return static_cast<size_t>(std::ftell(opened(f_, path_))); }
void FileWriter::seek(int64_t offset, std::ios_base::seekdir way) {
  std::fseek(opened(f_, path_), offset, whence(way));
}
void FileWriter::write(const char* data, size_t n) {
  if (std::fwrite(data, 1, n, opened(f_, path_)) != n)
    throw std::runtime_error("[save] Could not write to " + path_ + ".");
}
std::string FileWriter::label() const { return "file " + path_; }

std::shared_ptr<Reader> file_reader(const std::string& path) {
  return std::make_shared<ParallelFileReader>(path);
}
std::shared_ptr<Writer> file_writer(const std::string& path) { return std::make_shared<FileWriter>(path); }

}  // namespace braid::io
