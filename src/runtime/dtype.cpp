// Dtype tables: kinds, promotion (MLX's table, which follows JAX's lattice), categories,
// array-protocol strings and numeric limits.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "braid/dtype.h"

namespace braid {

namespace {

using V = Dtype::Val;

constexpr int index_of(V v) { return static_cast<int>(v); }

// Rows and columns in Val order: bool uint8 uint16 uint32 uint64 int8 int16 int32 int64
// float16 float32 float64 bfloat16 complex64.
// clang-format off
constexpr V kPromotion[kNumDtypes][kNumDtypes] = {
  {V::bool_,  V::uint8,  V::uint16, V::uint32, V::uint64, V::int8,   V::int16,  V::int32,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::uint8,  V::uint8,  V::uint16, V::uint32, V::uint64, V::int16,  V::int16,  V::int32,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::uint16, V::uint16, V::uint16, V::uint32, V::uint64, V::int32,  V::int32,  V::int32,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::uint32, V::uint32, V::uint32, V::uint32, V::uint64, V::int64,  V::int64,  V::int64,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::uint64, V::uint64, V::uint64, V::uint64, V::uint64, V::float32, V::float32, V::float32, V::float32, V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::int8,   V::int16,  V::int32,  V::int64,  V::float32, V::int8,  V::int16,  V::int32,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::int16,  V::int16,  V::int32,  V::int64,  V::float32, V::int16, V::int16,  V::int32,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::int32,  V::int32,  V::int32,  V::int64,  V::float32, V::int32, V::int32,  V::int32,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::int64,  V::int64,  V::int64,  V::int64,  V::float32, V::int64, V::int64,  V::int64,  V::int64,  V::float16, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::float16, V::float16, V::float16, V::float16, V::float16, V::float16, V::float16, V::float16, V::float16, V::float16, V::float32, V::float64, V::float32, V::complex64},
  {V::float32, V::float32, V::float32, V::float32, V::float32, V::float32, V::float32, V::float32, V::float32, V::float32, V::float32, V::float64, V::float32, V::complex64},
  {V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::float64, V::complex64},
  {V::bfloat16, V::bfloat16, V::bfloat16, V::bfloat16, V::bfloat16, V::bfloat16, V::bfloat16, V::bfloat16, V::bfloat16, V::float32, V::float32, V::float64, V::bfloat16, V::complex64},
  {V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64, V::complex64},
};
// clang-format on

// The category a dtype belongs to directly (issubdtype climbs from there).
Dtype::Category category_of(const Dtype& d) {
  switch (d.val()) {
    case V::bool_: return Dtype::Category::generic;
    case V::uint8:
    case V::uint16:
    case V::uint32:
    case V::uint64: return Dtype::Category::unsignedinteger;
    case V::int8:
    case V::int16:
    case V::int32:
    case V::int64: return Dtype::Category::signedinteger;
    case V::float16:
    case V::float32:
    case V::float64:
    case V::bfloat16: return Dtype::Category::floating;
    case V::complex64: return Dtype::Category::complexfloating;
  }
  return Dtype::Category::generic;
}

}  // namespace

Dtype dtype_of(Dtype::Val v) {
  switch (v) {
    case V::bool_: return bool_;
    case V::uint8: return uint8;
    case V::uint16: return uint16;
    case V::uint32: return uint32;
    case V::uint64: return uint64;
    case V::int8: return int8;
    case V::int16: return int16;
    case V::int32: return int32;
    case V::int64: return int64;
    case V::float16: return float16;
    case V::float32: return float32;
    case V::float64: return float64;
    case V::bfloat16: return bfloat16;
    case V::complex64: return complex64;
  }
  return float32;
}

Dtype::Kind kindof(const Dtype& d) {
  switch (d.val()) {
    case V::bool_: return Dtype::Kind::b;
    case V::uint8:
    case V::uint16:
    case V::uint32:
    case V::uint64: return Dtype::Kind::u;
    case V::int8:
    case V::int16:
    case V::int32:
    case V::int64: return Dtype::Kind::i;
    case V::float16:
    case V::float32:
    case V::float64: return Dtype::Kind::f;
    case V::bfloat16: return Dtype::Kind::V;
    case V::complex64: return Dtype::Kind::c;
  }
  return Dtype::Kind::f;
}

bool is_unsigned(const Dtype& d) { return kindof(d) == Dtype::Kind::u || kindof(d) == Dtype::Kind::b; }
bool is_floating_point(const Dtype& d) {
  const auto k = kindof(d);
  return k == Dtype::Kind::f || k == Dtype::Kind::V || k == Dtype::Kind::c;
}
bool is_complex(const Dtype& d) { return kindof(d) == Dtype::Kind::c; }
bool is_integral(const Dtype& d) { return !is_floating_point(d); }

Dtype promote_types(const Dtype& a, const Dtype& b) {
  return dtype_of(kPromotion[index_of(a.val())][index_of(b.val())]);
}

bool issubdtype(const Dtype& a, const Dtype& b) { return a == b; }

bool issubdtype(const Dtype::Category& a, const Dtype& b) { return false; }

bool issubdtype(const Dtype& a, const Dtype::Category& b) { return issubdtype(category_of(a), b); }

bool issubdtype(const Dtype::Category& a, const Dtype::Category& b) {
  using C = Dtype::Category;
  if (a == b || b == C::generic) return true;
  switch (a) {
    case C::complexfloating:
    case C::floating: return b == C::inexact || b == C::number;
    case C::signedinteger:
    case C::unsignedinteger: return b == C::integer || b == C::number;
    case C::inexact:
    case C::integer: return b == C::number;
    case C::number:
    case C::generic: return false;
  }
  return false;
}

std::string dtype_to_array_protocol(const Dtype& d) {
  std::string r = d.size() > 1 ? "<" : "|";  // braid runs on little-endian machines
  r += static_cast<char>(kindof(d));
  r += std::to_string(static_cast<int>(d.size()));
  return r;
}

Dtype dtype_from_array_protocol(std::string_view s) {
  std::string_view r = s;
  if (r.size() == 3 && (r[0] == '<' || r[0] == '|' || r[0] == '=')) r = r.substr(1);
  if (r.size() == 2) {
    const int size = r[1] - '0';
    switch (r[0]) {
      case 'b':
        if (size == 1) return bool_;
        break;
      case 'u':
        if (size == 1) return uint8;
        if (size == 2) return uint16;
        if (size == 4) return uint32;
        if (size == 8) return uint64;
        break;
      case 'i':
        if (size == 1) return int8;
        if (size == 2) return int16;
        if (size == 4) return int32;
        if (size == 8) return int64;
        break;
      case 'f':
        if (size == 2) return float16;
        if (size == 4) return float32;
        if (size == 8) return float64;
        break;
      case 'c':
        if (size == 8) return complex64;
        break;
      case 'V':
        if (size == 2) return bfloat16;
        break;
      default: break;
    }
  }
  throw std::invalid_argument("[dtype_from_array_protocol] Invalid array protocol type string: " + std::string(s));
}

std::string dtype_name(Dtype d) {
  switch (d.val()) {
    case V::bool_: return "bool";
    case V::uint8: return "uint8";
    case V::uint16: return "uint16";
    case V::uint32: return "uint32";
    case V::uint64: return "uint64";
    case V::int8: return "int8";
    case V::int16: return "int16";
    case V::int32: return "int32";
    case V::int64: return "int64";
    case V::float16: return "float16";
    case V::float32: return "float32";
    case V::float64: return "float64";
    case V::bfloat16: return "bfloat16";
    case V::complex64: return "complex64";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, const Dtype& d) { return os << dtype_name(d); }
std::ostream& operator<<(std::ostream& os, const Dtype::Kind& k) { return os << static_cast<char>(k); }
std::ostream& operator<<(std::ostream& os, const float16_t& v) { return os << static_cast<float>(v); }
std::ostream& operator<<(std::ostream& os, const bfloat16_t& v) { return os << static_cast<float>(v); }
std::ostream& operator<<(std::ostream& os, const complex64_t& v) {
  os << v.real();
  if (!std::signbit(v.imag()) || std::isnan(v.imag())) os << "+";
  return os << v.imag() << "j";
}

finfo::finfo(Dtype d) : dtype(d) {
  switch (d.val()) {
    case V::float16:
      max = 65504.0;
      eps = std::ldexp(1.0, -10);
      break;
    case V::bfloat16:
      max = std::ldexp(255.0 / 128.0, 127);
      eps = std::ldexp(1.0, -7);
      break;
    case V::float32:
    case V::complex64:
      max = std::numeric_limits<float>::max();
      eps = std::numeric_limits<float>::epsilon();
      break;
    case V::float64:
      max = std::numeric_limits<double>::max();
      eps = std::numeric_limits<double>::epsilon();
      break;
    case V::bool_:
    case V::uint8:
    case V::uint16:
    case V::uint32:
    case V::uint64:
    case V::int8:
    case V::int16:
    case V::int32:
    case V::int64:
      throw std::invalid_argument("[finfo] dtype " + dtype_name(d) + " is not inexact.");
  }
  if (d == complex64) dtype = float32;  // as NumPy: the limits of the component type
  min = -max;
  bits = static_cast<int>(dtype.size()) * 8;
  // bfloat16 has float32's exponent range.
  smallest_normal = dtype == float16   ? std::ldexp(1.0, -14)
                    : dtype == float64 ? std::numeric_limits<double>::min()
                                       : static_cast<double>(std::numeric_limits<float>::min());
}

iinfo::iinfo(Dtype d) : dtype(d) {
  switch (d.val()) {
    case V::bool_: min = 0, max = 1; break;
    case V::uint8: min = 0, max = std::numeric_limits<uint8_t>::max(); break;
    case V::uint16: min = 0, max = std::numeric_limits<uint16_t>::max(); break;
    case V::uint32: min = 0, max = std::numeric_limits<uint32_t>::max(); break;
    case V::uint64: min = 0, max = std::numeric_limits<uint64_t>::max(); break;
    case V::int8: min = INT8_MIN, max = INT8_MAX; break;
    case V::int16: min = INT16_MIN, max = INT16_MAX; break;
    case V::int32: min = INT32_MIN, max = INT32_MAX; break;
    case V::int64: min = INT64_MIN, max = INT64_MAX; break;
    case V::float16:
    case V::float32:
    case V::float64:
    case V::bfloat16:
    case V::complex64:
      throw std::invalid_argument("[iinfo] dtype " + dtype_name(d) + " is not integral.");
  }
}

}  // namespace braid
