// Index and sort-key arithmetic that the CPU and CUDA kernels share: how gather and scatter
// treat negative and out-of-range indices, and the unsigned keys whose order is the sort order.
#pragma once

#include <cstdint>

#include "braid/array.h"

#if defined(__CUDACC__)
#define BRAID_HD __host__ __device__ __forceinline__
#else
#define BRAID_HD inline
#endif

namespace braid::common {

/// A gather's start along an axis of size `dim` for a slice of `slice` elements: a negative
/// index wraps once; what is still outside [0, dim - slice] is clamped into it.
BRAID_HD int64_t gather_start(int64_t idx, int64_t dim, int64_t slice) {
  if (idx < 0) idx += dim;
  const int64_t limit = dim - slice;
  return idx < 0 ? 0 : (idx > limit ? limit : idx);
}

/// A scatter's start: wrapped as for gather, or -1 when the slice would not fit (dropped).
BRAID_HD int64_t scatter_start(int64_t idx, int64_t dim, int64_t slice) {
  if (idx < 0) idx += dim;
  return (idx < 0 || idx > dim - slice) ? -1 : idx;
}

/// Sort keys: unsigned integers of the element's width whose unsigned order is the element
/// order. Signed integers flip the sign bit.
template <typename U>
BRAID_HD U signed_key(U bits) {
  return static_cast<U>(bits ^ (U{1} << (sizeof(U) * 8 - 1)));
}

/// IEEE floats: NaNs (any sign or payload) sort last, -0.0 equals +0.0, negatives reversed.
template <typename U>
BRAID_HD U float_key(U bits, U exp_mask, U mant_mask) {
  const U sign = static_cast<U>(U{1} << (sizeof(U) * 8 - 1));
  if ((bits & exp_mask) == exp_mask && (bits & mant_mask) != 0) return static_cast<U>(~U{0});
  if (static_cast<U>(bits & ~sign) == 0) bits = 0;
  return (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
}

/// The float whose key is `key` (NaNs come back as a NaN, -0.0 as +0.0).
template <typename U>
BRAID_HD U float_from_key(U key) {
  const U sign = static_cast<U>(U{1} << (sizeof(U) * 8 - 1));
  return (key & sign) ? static_cast<U>(key ^ sign) : static_cast<U>(~key);
}

// Exponent and mantissa masks of the float formats.
inline constexpr uint16_t kHalfExp = 0x7C00, kHalfMant = 0x03FF;
inline constexpr uint16_t kBf16Exp = 0x7F80, kBf16Mant = 0x007F;
inline constexpr uint32_t kF32Exp = 0x7F800000u, kF32Mant = 0x007FFFFFu;
inline constexpr uint64_t kF64Exp = 0x7FF0000000000000ull, kF64Mant = 0x000FFFFFFFFFFFFFull;

/// Rows of an array along one axis: `n` elements each, `rows` of them, and the shape of the
/// other axes (in order) that enumerates them.
struct AxisRows {
  int64_t n = 0;
  int64_t rows = 0;
  Shape others;
  Strides others_of(const Strides& strides, int axis) const {
    Strides st;
    for (size_t i = 0; i < strides.size(); ++i) {
      if (static_cast<int>(i) != axis) st.push_back(strides[i]);
    }
    return st;
  }
};

inline AxisRows axis_rows(const Shape& shape, int axis) {
  AxisRows r;
  r.n = shape[axis];
  r.rows = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int>(i) == axis) continue;
    r.others.push_back(shape[i]);
    r.rows *= shape[i];
  }
  return r;
}

/// The unsigned integer type of N bytes: radix-sort keys of an N-byte element.
template <size_t N>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOfSize<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOfSize<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOfSize<8> {
  using type = uint64_t;
};

}  // namespace braid::common
