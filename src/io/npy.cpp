// NumPy's .npy format (versions 1.0, 2.0 and 3.0). The header is a Python dict literal with
// exactly 'descr', 'fortran_order' and 'shape'; the parser accepts only that, bounds every
// length by what the file holds, and never allocates more than the file could fill.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "braid/io.h"
#include "braid/ops.h"
#include "graph/node.h"
#include "io/common.h"
#include "memory/object_pool.h"

namespace braid {

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
constexpr size_t kMaxNpyHeader = size_t{1} << 20;  // NumPy's own headers are far smaller
constexpr size_t kNpyMaxDims = 64;

[[noreturn]] void bad_npy(const std::string& label, const std::string& why) {
  throw std::invalid_argument("[load] Invalid .npy data in " + label + ": " + why);
}

// ---- header parsing ----

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
  bool has_descr = false, has_order = false, has_shape = false;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string label) : s_(text), label_(std::move(label)) {}

  NpyHeader parse() {
    NpyHeader h;
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        h.descr = quoted();
        h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        h.has_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        h.has_shape = true;
      } else {
        fail("unknown header key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' in the header");
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) fail("trailing characters after the header dict");
    if (!h.has_descr || !h.has_order || !h.has_shape) fail("the header lacks descr, fortran_order or shape");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) { bad_npy(label_, why); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "' in the header");
    ++pos_;
  }
  std::string quoted() {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string in the header");
    const size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string in the header");
    std::string r(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return r;
  }
  bool boolean() {
    skip_space();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("fortran_order is neither True nor False");
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("a shape entry is not a non-negative integer");
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        v = v * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
        if (v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
          fail("a dimension is larger than 2147483647");
        }
      }
      skip_space();
      while (peek() == 'L') ++pos_;  // Python 2 long suffix
      if (shape.size() == kNpyMaxDims) fail("more than 64 dimensions");
      shape.push_back(static_cast<int32_t>(v));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++pos_;
    return shape;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string label_;
};

// The dtype of an array-protocol string, and whether its bytes need swapping.
std::pair<Dtype, bool> parse_descr(const std::string& descr, const std::string& label) {
  if (descr.size() != 3) bad_npy(label, "unsupported descr '" + descr + "'");
  Dtype d = float32;
  try {
    d = dtype_from_array_protocol(std::string_view(descr).substr(1));
  } catch (const std::invalid_argument&) {
    bad_npy(label, "unsupported descr '" + descr + "'");
  }
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    bad_npy(label, "bad byte order in '" + descr + "'");
  return {d, order == '>' && d.size() > 1};
}

// Reverses the bytes of each of `count` units of `width` bytes.
void swap_bytes(char* p, size_t count, size_t width) {
  for (size_t i = 0; i < count; ++i) std::reverse(p + i * width, p + (i + 1) * width);
}

std::string header_text(const array& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.ndim(); ++i) shape += std::to_string(a.shape()[i]) + (a.ndim() == 1 ? "," : (i + 1 < a.ndim() ? ", " : ""));
  shape += ")";
  return "{'descr': '" + dtype_to_array_protocol(a.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

}  // namespace

void save(std::shared_ptr<io::Writer> out, array a) {
  if (!out || !out->is_open() || !out->good()) {
    throw std::invalid_argument("[save] Cannot write to " + (out ? out->label() : std::string("a null writer")) + ".");
  }
  a.eval();  // a layout is known once evaluated; any but row-major is gathered first
  if (!a.flags().row_contiguous) {
    a = contiguous(a, false, Device::cpu);
    a.eval();
  }
  std::string dict = header_text(a);
  // Magic, version, length, dict and its newline padded to a multiple of 64 bytes.
  size_t total = kMagicBytes + 2 + 2 + dict.size() + 1;
  const bool v2 = (total + 63) / 64 * 64 - 10 > 65535;  // the dict no longer fits 2 bytes
  if (v2) total += 2;
  const size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string head(kNpyMagic, kMagicBytes);
  head += static_cast<char>(v2 ? 2 : 1);
  head += '\0';
  const uint32_t len = static_cast<uint32_t>(dict.size());
  for (int i = 0; i < (v2 ? 4 : 2); ++i) head += static_cast<char>((len >> (8 * i)) & 0xff);
  out->write(head.data(), head.size());
  out->write(dict.data(), dict.size());
  out->write(static_cast<const char*>(a.host_data()), a.nbytes());
  if (!out->good()) throw std::runtime_error("[save] Writing to " + out->label() + " failed.");
}

void save(std::string file, array a) {
  file = io_detail::with_suffix(std::move(file), ".npy");
  auto w = io::file_writer(file);
  if (!w->is_open()) throw std::invalid_argument("[save] Cannot open " + file + " for writing.");
  save(w, std::move(a));
}

array load(std::shared_ptr<io::Reader> in, StreamOrDevice s) {
  if (!in || !in->is_open() || !in->good()) {
    throw std::invalid_argument("[load] Cannot read from " + (in ? in->label() : std::string("a null reader")) + ".");
  }
  const std::string label = in->label();
  const size_t start = in->tell();
  in->seek(0, std::ios_base::end);
  const size_t end = in->tell();
  in->seek(static_cast<int64_t>(start), std::ios_base::beg);
  if (end < start) bad_npy(label, "cannot tell the file's size");
  size_t left = end - start;
  auto take = [&](char* dst, size_t n, const char* what) {
    if (n > left) bad_npy(label, std::string("truncated ") + what);
    try {
      in->read(dst, n);
    } catch (const std::runtime_error&) {
      bad_npy(label, std::string("truncated ") + what);
    }
    left -= n;
  };

  char pre[kMagicBytes + 2];
  take(pre, sizeof(pre), "magic string");
  if (std::memcmp(pre, kNpyMagic, kMagicBytes) != 0) bad_npy(label, "not a .npy file (bad magic string)");
  const int major = static_cast<unsigned char>(pre[kMagicBytes]);
  if (major < 1 || major > 3) bad_npy(label, "unsupported format version " + std::to_string(major));
  unsigned char lenbytes[4] = {};
  const size_t lensize = major == 1 ? 2 : 4;
  take(reinterpret_cast<char*>(lenbytes), lensize, "header length");
  size_t header_len = 0;
  for (size_t i = 0; i < lensize; ++i) header_len |= static_cast<size_t>(lenbytes[i]) << (8 * i);
  if (header_len > kMaxNpyHeader) bad_npy(label, "header longer than 1 MiB");
  std::string text(header_len, '\0');
  take(text.data(), header_len, "header");
  NpyHeader h = HeaderParser(text, label).parse();
  auto [dtype, swap] = parse_descr(h.descr, label);

  Shape shape = h.shape;
  if (h.fortran_order) std::reverse(shape.begin(), shape.end());
  const size_t size = detail::checked_size(shape, dtype, "load");
  const size_t bytes = size * dtype.size();
  if (bytes > left)
    bad_npy(label, "truncated data (" + std::to_string(bytes) + " bytes expected, " + std::to_string(left) +
                       " left)");

  auto desc = detail::make_pooled<detail::ArrayDesc>(shape, dtype);
  desc->data = detail::new_host_data(bytes);
  desc->data_ptr = desc->data->buffer.ptr;
  desc->data_size = size;
  take(static_cast<char*>(desc->data_ptr), bytes, "data");
  if (swap) {
    const size_t unit = dtype == complex64 ? 4 : dtype.size();
    swap_bytes(static_cast<char*>(desc->data_ptr), bytes / unit, unit);
  }
  if (dtype == bool_) {
    // Only 0 and 1 are valid bools; normalize any other byte.
    auto* p = static_cast<unsigned char*>(desc->data_ptr);
    for (size_t i = 0; i < size; ++i) p[i] = p[i] != 0;
  }
  desc->status.store(detail::Status::available, std::memory_order_release);
  array out(std::move(desc));
  if (!h.fortran_order) return out;
  return transpose(out, std::move(s));
}

array load(std::string file, StreamOrDevice s) {
  auto r = io::file_reader(file);
  if (!r->is_open()) throw std::invalid_argument("[load] Cannot open " + file + " for reading.");
  return load(r, std::move(s));
}

}  // namespace braid
