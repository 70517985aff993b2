// The byte encoding of exported functions (.mlxfn files written by export_function): fixed-
// width little-endian integers, IEEE doubles, length-prefixed strings and lists. A reader
// checks every length against the bytes left, so a truncated or malicious file is a
// std::runtime_error, never an out-of-bounds read or an unbounded allocation.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "braid/array.h"
#include "braid/dtype.h"
#include "braid/export.h"
#include "braid/primitive.h"

namespace braid::detail {

class ByteWriter {
 public:
  void u8(uint8_t v) { raw(&v, 1); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void u32(uint32_t v) { raw(&v, 4); }
  void i32(int32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(std::string_view s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  template <typename Ints>
  void ints(const Ints& v) {  // std::vector<int>, Shape, ...: a count, then int32 values
    u64(v.size());
    for (auto x : v) i32(static_cast<int32_t>(x));
  }
  void int64s(const std::vector<int64_t>& v) {
    u64(v.size());
    for (int64_t x : v) i64(x);
  }
  void dtype(Dtype d) { u8(static_cast<uint8_t>(d.val())); }
  void raw(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  const std::string& data() const { return buf_; }

 private:
  std::string buf_;  // the host is little-endian (x86-64, aarch64), as the format
};

class ByteReader {
 public:
  ByteReader(const char* data, size_t size) : p_(data), end_(data + size) {}

  uint8_t u8() { return pod<uint8_t>(); }
  bool boolean() {
    uint8_t v = u8();
    if (v > 1) fail("a boolean is neither 0 nor 1");
    return v == 1;
  }
  uint32_t u32() { return pod<uint32_t>(); }
  int32_t i32() { return pod<int32_t>(); }
  uint64_t u64() { return pod<uint64_t>(); }
  int64_t i64() { return pod<int64_t>(); }
  double f64() { return pod<double>(); }
  /// A count of items of at least `item_bytes` each: never more than the bytes left allow.
  size_t count(size_t item_bytes) {
    uint64_t n = u64();
    if (item_bytes > 0 && n > left() / item_bytes) fail("a count is larger than the file");
    return static_cast<size_t>(n);
  }
  std::string str() {
    size_t n = count(1);
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  std::vector<int> ints() {
    std::vector<int> v(count(4));
    for (int& x : v) x = i32();
    return v;
  }
  Shape shape() {
    Shape s;
    for (int x : ints()) s.push_back(x);
    return s;
  }
  std::vector<int64_t> int64s() {
    std::vector<int64_t> v(count(8));
    for (int64_t& x : v) x = i64();
    return v;
  }
  Dtype dtype() {
    static constexpr Dtype all[] = {bool_, uint8, uint16,  uint32,  uint64,  int8,     int16,
                                    int32, int64, float16, float32, float64, bfloat16, complex64};
    uint8_t v = u8();
    if (v >= sizeof(all) / sizeof(all[0])) fail("unknown dtype");
    return all[v];
  }
  /// `n` bytes, in place (valid while the reader's buffer is).
  const char* raw(size_t n) {
    if (n > left()) fail("truncated");
    const char* p = p_;
    p_ += n;
    return p;
  }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  /// An enumerator read as a byte and checked against the number of enumerators.
  template <typename Enum>
  Enum enumerator(int num_values) {
    uint8_t v = u8();
    if (v >= num_values) fail("unknown enumerator");
    return static_cast<Enum>(v);
  }
  [[noreturn]] static void fail(const std::string& what) {
    throw std::runtime_error("[import_function] Invalid file: " + what + ".");
  }

 private:
  template <typename T>
  T pod() {
    T v;
    std::memcpy(&v, raw(sizeof(T)), sizeof(T));
    return v;
  }
  const char* p_;
  const char* end_;
};

/// Writes `p`'s kind and state (not its stream). Throws std::invalid_argument
/// ("[export_function] Unable to export primitive <name>.") for a primitive that holds what
/// a file cannot (a Python or C++ callback, an open file).
void write_primitive(ByteWriter& w, const Primitive& p);

/// `p`'s state as an export callback reports it (ExportCallbackInput's "arguments"); `shape`
/// and `dtype` are its output's. Throws as write_primitive does.
std::vector<StateT> primitive_state(const Primitive& p, const Shape& shape, Dtype dtype);

/// The primitive written by write_primitive, rebuilt on `s`. Throws std::runtime_error for an
/// unknown kind or a state that does not decode.
std::shared_ptr<Primitive> read_primitive(ByteReader& r, Stream s);

/// How many outputs a node of `p` has (each exportable primitive has a fixed number).
size_t num_outputs(const Primitive& p);

}  // namespace braid::detail
