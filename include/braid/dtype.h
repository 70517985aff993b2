// Element types, their promotion rules, and the 16-bit float storage types.
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
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

struct Dtype {
  enum class Val : uint8_t { bool_, uint8, int32, int64, float16, bfloat16, float32 };
  /// Broad category, as MLX's Dtype::Kind: b(ool), u(nsigned), i(nteger), f(loat), V (bfloat16).
  enum class Kind : char { b = 'b', u = 'u', i = 'i', f = 'f', V = 'V' };

  Val val;
  uint8_t size;

  constexpr Dtype(Val v, uint8_t s) : val(v), size(s) {}
  constexpr bool operator==(const Dtype& o) const { return val == o.val; }
  constexpr bool operator!=(const Dtype& o) const { return val != o.val; }
};

inline constexpr Dtype bool_{Dtype::Val::bool_, 1};
inline constexpr Dtype uint8{Dtype::Val::uint8, 1};
inline constexpr Dtype int32{Dtype::Val::int32, 4};
inline constexpr Dtype int64{Dtype::Val::int64, 8};
inline constexpr Dtype float16{Dtype::Val::float16, 2};
inline constexpr Dtype bfloat16{Dtype::Val::bfloat16, 2};
inline constexpr Dtype float32{Dtype::Val::float32, 4};

/// Number of bytes of one element.
inline constexpr int size_of(Dtype d) { return d.size; }
Dtype::Kind kindof(Dtype d);
/// True for float16, bfloat16 and float32.
bool is_floating_point(Dtype d);
/// True for bool, uint8, int32, int64.
bool is_integral(Dtype d);
/// The smallest type both operands convert to without loss (NumPy/MLX table).
Dtype promote_types(Dtype a, Dtype b);
std::string dtype_name(Dtype d);
std::ostream& operator<<(std::ostream& os, Dtype d);

template <typename T>
struct TypeToDtype;
template <>
struct TypeToDtype<bool> {
  constexpr operator Dtype() const { return bool_; }  // NOLINT
};
template <>
struct TypeToDtype<uint8_t> {
  constexpr operator Dtype() const { return uint8; }  // NOLINT
};
template <>
struct TypeToDtype<int32_t> {
  constexpr operator Dtype() const { return int32; }  // NOLINT
};
template <>
struct TypeToDtype<int64_t> {
  constexpr operator Dtype() const { return int64; }  // NOLINT
};
template <>
struct TypeToDtype<float16_t> {
  constexpr operator Dtype() const { return float16; }  // NOLINT
};
template <>
struct TypeToDtype<bfloat16_t> {
  constexpr operator Dtype() const { return bfloat16; }  // NOLINT
};
template <>
struct TypeToDtype<float> {
  constexpr operator Dtype() const { return float32; }  // NOLINT
};
// Doubles are stored as float32, as in MLX (no float64 yet).
template <>
struct TypeToDtype<double> {
  constexpr operator Dtype() const { return float32; }  // NOLINT
};

}  // namespace braid
