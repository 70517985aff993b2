// Sort keys on the device, shared by the sorting kernels: each element is encoded as an
// unsigned key of its width whose unsigned order is the element order (NaNs last, -0.0 equal
// to +0.0, complex64 as one 64-bit key: real then imaginary; backend/common/indexing.h), and
// decoded back after sorting (a sorted -0.0 comes back as +0.0, NaNs lose their payload).
#pragma once

#include "backend/common/indexing.h"
#include "backend/cuda/indexing_common.cuh"

namespace braid::cuda {

template <typename T>
using key_t = typename common::UnsignedOfSize<sizeof(T)>::type;

template <typename T>
__device__ __forceinline__ key_t<T> encode(T x) {
  using U = key_t<T>;
  if constexpr (is_complex_v<T>) {
    if (isnan(x.re) || isnan(x.im)) return ~U{0};
    const U hi = common::float_key<uint32_t>(bits_as<uint32_t>(x.re), common::kF32Exp, common::kF32Mant);
    const U lo = common::float_key<uint32_t>(bits_as<uint32_t>(x.im), common::kF32Exp, common::kF32Mant);
    return (hi << 32) | lo;
  } else if constexpr (std::is_same_v<T, __half>) {
    return common::float_key<U>(bits_as<U>(x), common::kHalfExp, common::kHalfMant);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return common::float_key<U>(bits_as<U>(x), common::kBf16Exp, common::kBf16Mant);
  } else if constexpr (std::is_same_v<T, float>) {
    return common::float_key<U>(bits_as<U>(x), common::kF32Exp, common::kF32Mant);
  } else if constexpr (std::is_same_v<T, double>) {
    return common::float_key<U>(bits_as<U>(x), common::kF64Exp, common::kF64Mant);
  } else if constexpr (std::is_same_v<T, bool>) {
    return static_cast<U>(x);
  } else if constexpr (std::is_signed_v<T>) {
    return common::signed_key<U>(bits_as<U>(x));
  } else {
    return x;
  }
}

template <typename T>
__device__ __forceinline__ T decode(key_t<T> k) {
  using U = key_t<T>;
  if constexpr (is_complex_v<T>) {
    const auto re = common::float_from_key<uint32_t>(static_cast<uint32_t>(k >> 32));
    const auto im = common::float_from_key<uint32_t>(static_cast<uint32_t>(k & 0xFFFFFFFFu));
    return T(bits_as<float>(re), bits_as<float>(im));
  } else if constexpr (is_float_v<T>) {
    return bits_as<T>(common::float_from_key<U>(k));
  } else if constexpr (std::is_same_v<T, bool>) {
    return k != 0;
  } else if constexpr (std::is_signed_v<T>) {
    return bits_as<T>(common::signed_key<U>(k));
  } else {
    return k;
  }
}

/// Calls f(TypeTag<T>{}) in device code with T the device type of `v` (as dispatch_dtype).
template <typename F>
__device__ __forceinline__ void dispatch_device(Dtype::Val v, F&& f) {
  switch (v) {
    case Dtype::Val::bool_: f(TypeTag<bool>{}); break;
    case Dtype::Val::uint8: f(TypeTag<uint8_t>{}); break;
    case Dtype::Val::uint16: f(TypeTag<uint16_t>{}); break;
    case Dtype::Val::uint32: f(TypeTag<uint32_t>{}); break;
    case Dtype::Val::uint64: f(TypeTag<uint64_t>{}); break;
    case Dtype::Val::int8: f(TypeTag<int8_t>{}); break;
    case Dtype::Val::int16: f(TypeTag<int16_t>{}); break;
    case Dtype::Val::int32: f(TypeTag<int32_t>{}); break;
    case Dtype::Val::int64: f(TypeTag<int64_t>{}); break;
    case Dtype::Val::float16: f(TypeTag<__half>{}); break;
    case Dtype::Val::float32: f(TypeTag<float>{}); break;
    case Dtype::Val::float64: f(TypeTag<double>{}); break;
    case Dtype::Val::bfloat16: f(TypeTag<__nv_bfloat16>{}); break;
    case Dtype::Val::complex64: f(TypeTag<complex64>{}); break;
  }
}

/// The key of element i of `src`, whose dtype `form` is known only at run time (so that one
/// kernel per key width serves every dtype), widened to K. Elements wider than K are never
/// passed (the host picks K by width); encoded keys are read as their unsigned dtype.
template <typename K>
__device__ __forceinline__ K load_key(const void* src, int64_t i, Dtype::Val form) {
  K key = 0;
  dispatch_device(form, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) <= sizeof(K)) key = encode(static_cast<const T*>(src)[i]);
  });
  return key;
}

/// Writes the element whose key is `key` (as K) at position i of `dst` of dtype `form`.
template <typename K>
__device__ __forceinline__ void store_decoded(void* dst, int64_t i, K key, Dtype::Val form) {
  dispatch_device(form, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) <= sizeof(K)) static_cast<T*>(dst)[i] = decode<T>(static_cast<key_t<T>>(key));
  });
}

/// The unsigned dtype of `bytes` bytes: how encoded keys of that width are read as elements.
inline Dtype::Val key_form(size_t bytes) {
  return bytes == 1   ? Dtype::Val::uint8
         : bytes == 2 ? Dtype::Val::uint16
         : bytes == 4 ? Dtype::Val::uint32
                      : Dtype::Val::uint64;
}

/// Rows the block sort takes: longer than a few elements (shorter rows waste most of a
/// block; the segmented sort packs them) and at most kBlockSortMax.
constexpr int64_t kBlockSortMin = 33;
constexpr int64_t kBlockSortMax = 4096;

/// Sorts `rows` contiguous rows of `n` elements (kBlockSortMin <= n <= kBlockSortMax), one
/// block per row, stably: reads elements of dtype `in_form` (encoded keys as key_form), writes
/// the sorted elements decoded as `out_form` to `dst` (when not null) and each one's position
/// in its row to `positions` (when not null). `key_bytes` is the element width.
void block_sort_rows(const void* src, Dtype::Val in_form, void* dst, Dtype::Val out_form, uint32_t* positions,
                     size_t key_bytes, int64_t rows, int64_t n, cudaStream_t stream);

}  // namespace braid::cuda
