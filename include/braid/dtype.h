// Element types, their promotion rules, and the 16-bit float storage types.
#pragma once

#include <cstdint>
#include <complex>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

namespace braid {

/// IEEE-754 half precision, stored as 16 bits; arithmetic goes through float.
struct float16_t {
  uint16_t bits = 0;
  float16_t() = default;
  float16_t(float f) : bits(from_float(f)) {}  // NOLINT(google-explicit-constructor)
  operator float() const { return to_float(bits); }  // NOLINT(google-explicit-constructor)
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

/// bfloat16: the upper half of a float32, rounded to nearest even.
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) : bits(from_float(f)) {}  // NOLINT(google-explicit-constructor)
  operator float() const { return to_float(bits); }  // NOLINT(google-explicit-constructor)
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

inline float float16_t::to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        --exp;
      }
      man &= 0x3ffu;
      u = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (man << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float16_t::from_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (abs < 0x38800000u) {  // result is subnormal or zero
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t exp = abs >> 23;
    uint32_t man = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;  // 14 + (112 - exp) + 1 - 1
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

/// complex64: two float32 (real, imaginary), as std::complex<float>.
struct complex64_t : std::complex<float> {
  complex64_t() = default;
  constexpr complex64_t(float re, float im) : std::complex<float>(re, im) {}
  constexpr complex64_t(std::complex<float> c) : std::complex<float>(c) {}  // NOLINT
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  constexpr complex64_t(T re) : std::complex<float>(static_cast<float>(re), 0.0f) {}  // NOLINT
  complex64_t(float16_t re) : std::complex<float>(static_cast<float>(re), 0.0f) {}  // NOLINT
  complex64_t(bfloat16_t re) : std::complex<float>(static_cast<float>(re), 0.0f) {}  // NOLINT
  /// The real part, as MLX's complex64_t converts. The operators below keep arithmetic and
  /// comparisons complex, so the conversion applies only where a float is asked for.
  constexpr operator float() const { return real(); }  // NOLINT(google-explicit-constructor)
  /// Nonzero when either part is, as MLX's.
  constexpr explicit operator bool() const { return real() != 0 || imag() != 0; }
};

/// MLX's order of complex64_t: lexicographic (the real parts, then the imaginary parts).
constexpr bool operator<(const complex64_t& a, const complex64_t& b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
constexpr bool operator>(const complex64_t& a, const complex64_t& b) { return b < a; }
constexpr bool operator<=(const complex64_t& a, const complex64_t& b) { return !(b < a); }
constexpr bool operator>=(const complex64_t& a, const complex64_t& b) { return !(a < b); }

/// complex64_t with a real number of any arithmetic type is complex64_t (not the float that
/// the conversion above would give).
#define BRAID_COMPLEX_SCALAR_OP(op)                                             \
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>   \
  complex64_t operator op(const complex64_t& a, T b) {                          \
    return static_cast<const std::complex<float>&>(a) op static_cast<float>(b); \
  }                                                                             \
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>   \
  complex64_t operator op(T a, const complex64_t& b) {                          \
    return static_cast<float>(a) op static_cast<const std::complex<float>&>(b); \
  }
BRAID_COMPLEX_SCALAR_OP(+)
BRAID_COMPLEX_SCALAR_OP(-)
BRAID_COMPLEX_SCALAR_OP(*)
BRAID_COMPLEX_SCALAR_OP(/)
#undef BRAID_COMPLEX_SCALAR_OP

/// An element type (MLX's Dtype): usable in a switch through its Val, compared by value.
struct Dtype {
  enum class Val : uint8_t {
    bool_,
    uint8,
    uint16,
    uint32,
    uint64,
    int8,
    int16,
    int32,
    int64,
    float16,
    float32,
    float64,
    bfloat16,
    complex64,
  };
  /// NumPy's kind characters: b(ool), u(nsigned), i(nteger), f(loat), c(omplex), V (bfloat16).
  enum class Kind : char { b = 'b', u = 'u', i = 'i', f = 'f', c = 'c', V = 'V' };
  /// Abstract groups of types, as NumPy's dtype hierarchy (see issubdtype).
  enum class Category {
    complexfloating,
    floating,
    inexact,
    signedinteger,
    unsignedinteger,
    integer,
    number,
    generic,
  };

  constexpr explicit Dtype(Val val, uint8_t size) : val_(val), size_(size) {}
  constexpr operator Val() const { return val_; }  // NOLINT(google-explicit-constructor)
  constexpr Val val() const { return val_; }
  /// Bytes per element.
  constexpr uint8_t size() const { return size_; }
  constexpr bool operator==(const Dtype& o) const { return val_ == o.val_; }
  constexpr bool operator!=(const Dtype& o) const { return val_ != o.val_; }

 private:
  Val val_;
  uint8_t size_;
};

/// Number of element types.
inline constexpr int kNumDtypes = 14;

inline constexpr Dtype bool_{Dtype::Val::bool_, 1};
inline constexpr Dtype uint8{Dtype::Val::uint8, 1};
inline constexpr Dtype uint16{Dtype::Val::uint16, 2};
inline constexpr Dtype uint32{Dtype::Val::uint32, 4};
inline constexpr Dtype uint64{Dtype::Val::uint64, 8};
inline constexpr Dtype int8{Dtype::Val::int8, 1};
inline constexpr Dtype int16{Dtype::Val::int16, 2};
inline constexpr Dtype int32{Dtype::Val::int32, 4};
inline constexpr Dtype int64{Dtype::Val::int64, 8};
inline constexpr Dtype float16{Dtype::Val::float16, 2};
inline constexpr Dtype float32{Dtype::Val::float32, 4};
inline constexpr Dtype float64{Dtype::Val::float64, 8};
inline constexpr Dtype bfloat16{Dtype::Val::bfloat16, 2};
inline constexpr Dtype complex64{Dtype::Val::complex64, 8};

inline constexpr Dtype::Category complexfloating = Dtype::Category::complexfloating;
inline constexpr Dtype::Category floating = Dtype::Category::floating;
inline constexpr Dtype::Category inexact = Dtype::Category::inexact;
inline constexpr Dtype::Category signedinteger = Dtype::Category::signedinteger;
inline constexpr Dtype::Category unsignedinteger = Dtype::Category::unsignedinteger;
inline constexpr Dtype::Category integer = Dtype::Category::integer;
inline constexpr Dtype::Category number = Dtype::Category::number;
inline constexpr Dtype::Category generic = Dtype::Category::generic;

/// The dtype of a Val (its size filled in).
Dtype dtype_of(Dtype::Val v);
/// Number of bytes of one element.
inline uint8_t size_of(const Dtype& d) { return d.size(); }
Dtype::Kind kindof(const Dtype& d);
/// True for bool and the unsigned integers.
bool is_unsigned(const Dtype& d);
/// True for float16, bfloat16, float32, float64 and complex64 (as MLX).
bool is_floating_point(const Dtype& d);
bool is_complex(const Dtype& d);
/// True for bool and the integers.
bool is_integral(const Dtype& d);
/// The type both operands convert to (MLX's promotion table, JAX's rules).
Dtype promote_types(const Dtype& a, const Dtype& b);
/// NumPy's subtype relation over dtypes and categories (e.g. issubdtype(int8, integer)).
bool issubdtype(const Dtype& a, const Dtype& b);
bool issubdtype(const Dtype& a, const Dtype::Category& b);
bool issubdtype(const Dtype::Category& a, const Dtype& b);
bool issubdtype(const Dtype::Category& a, const Dtype::Category& b);
/// NumPy's array-protocol type string ("<f4", "|b1", "<V2" for bfloat16) and back.
std::string dtype_to_array_protocol(const Dtype& d);
Dtype dtype_from_array_protocol(std::string_view s);
/// The dtype's name ("float32").
std::string dtype_name(Dtype d);
std::ostream& operator<<(std::ostream& os, const Dtype& d);
/// As MLX prints one: `1+2j`, `0.5-1j`.
std::ostream& operator<<(std::ostream& os, const complex64_t& v);
/// The half-precision types print their value as a float does (and need their own operators:
/// both convert to float and to complex64_t).
std::ostream& operator<<(std::ostream& os, const float16_t& v);
std::ostream& operator<<(std::ostream& os, const bfloat16_t& v);
std::ostream& operator<<(std::ostream& os, const Dtype::Kind& k);

/// Limits of a floating dtype (MLX's finfo): width, lowest, largest, machine epsilon and the
/// smallest normal number.
struct finfo {
  explicit finfo(Dtype dtype);
  Dtype dtype;  // complex64 reports its float32 component, as NumPy
  int bits;     // the width of `dtype`
  double min;
  double max;
  double eps;
  double smallest_normal;  // the smallest positive normal number
};

/// Limits of an integer or bool dtype (MLX's iinfo).
struct iinfo {
  explicit iinfo(Dtype dtype);
  Dtype dtype;
  int64_t min;
  uint64_t max;
};

/// The dtype an array made from a C++ value of type T gets (double gives float32, as MLX).
template <typename T>
struct TypeToDtype;
#define BRAID_TYPE_TO_DTYPE(T, D)                                 \
  template <>                                                     \
  struct TypeToDtype<T> {                                         \
    constexpr operator Dtype() const { return D; } /* NOLINT */   \
  };
BRAID_TYPE_TO_DTYPE(bool, bool_)
BRAID_TYPE_TO_DTYPE(uint8_t, uint8)
BRAID_TYPE_TO_DTYPE(uint16_t, uint16)
BRAID_TYPE_TO_DTYPE(uint32_t, uint32)
BRAID_TYPE_TO_DTYPE(uint64_t, uint64)
BRAID_TYPE_TO_DTYPE(int8_t, int8)
BRAID_TYPE_TO_DTYPE(int16_t, int16)
BRAID_TYPE_TO_DTYPE(int32_t, int32)
BRAID_TYPE_TO_DTYPE(int64_t, int64)
BRAID_TYPE_TO_DTYPE(float16_t, float16)
BRAID_TYPE_TO_DTYPE(bfloat16_t, bfloat16)
BRAID_TYPE_TO_DTYPE(float, float32)
BRAID_TYPE_TO_DTYPE(double, float32)
BRAID_TYPE_TO_DTYPE(complex64_t, complex64)
BRAID_TYPE_TO_DTYPE(std::complex<float>, complex64)
#undef BRAID_TYPE_TO_DTYPE

/// Whether C++ values of type T make arrays (TypeToDtype<T> is defined for T). Keeps array's
/// value constructors out of overload resolution for other types, e.g. std::nullopt when a
/// std::optional<array> parameter defaults to it (clang instantiates the default dtype there).
template <typename T>
concept ArrayScalar = requires { sizeof(TypeToDtype<T>); };

namespace detail {
/// The dtype whose elements have T's exact representation (double is float64 here), used to
/// read C++ values into arrays and elements out of them.
template <typename T>
constexpr Dtype storage_dtype() {
  if constexpr (std::is_same_v<T, double>) {
    return float64;
  } else if constexpr (std::is_same_v<T, char>) {
    return std::is_signed_v<char> ? int8 : uint8;
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // long long, unsigned long and the like: the integer type of the same size and sign.
    if constexpr (sizeof(T) == 1) return std::is_signed_v<T> ? int8 : uint8;
    else if constexpr (sizeof(T) == 2) return std::is_signed_v<T> ? int16 : uint16;
    else if constexpr (sizeof(T) == 4) return std::is_signed_v<T> ? int32 : uint32;
    else return std::is_signed_v<T> ? int64 : uint64;
  } else {
    return TypeToDtype<T>();
  }
}
}  // namespace detail

}  // namespace braid
