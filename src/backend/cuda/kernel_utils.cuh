// Helpers shared by the CUDA kernels: device element types, conversions with the CPU
// backend's semantics, 16-byte vector access, collapsed strided layouts and launch sizing.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backend/common/layout.h"
#include "backend/cuda/cuda_utils.h"
#include "braid/array.h"

namespace braid::cuda {

template <typename T>
struct TypeTag {
  using type = T;
};

/// complex64 on the device: (real, imaginary) floats, the layout of braid::complex64_t.
/// Orders lexicographically, as the CPU backend.
struct alignas(8) complex64 {
  float re = 0, im = 0;
  complex64() = default;
  __host__ __device__ constexpr complex64(float r, float i) : re(r), im(i) {}
  __host__ __device__ constexpr complex64(float r) : re(r), im(0) {}  // NOLINT
  __host__ __device__ complex64 operator-() const { return {-re, -im}; }
  __host__ __device__ friend complex64 operator+(complex64 a, complex64 b) { return {a.re + b.re, a.im + b.im}; }
  __host__ __device__ friend complex64 operator-(complex64 a, complex64 b) { return {a.re - b.re, a.im - b.im}; }
  // Each product rounded on its own (no fused multiply-add): the same bits as the CPU's
  // std::complex, and a * b == b * a bit for bit.
  __host__ __device__ friend complex64 operator*(complex64 a, complex64 b) {
#if defined(__CUDA_ARCH__)
    return {__fsub_rn(__fmul_rn(a.re, b.re), __fmul_rn(a.im, b.im)),
            __fadd_rn(__fmul_rn(a.re, b.im), __fmul_rn(a.im, b.re))};
#else
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
#endif
  }
  __host__ __device__ friend complex64 operator/(complex64 a, complex64 b) {
    const float d = b.re * b.re + b.im * b.im;
    return {(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d};
  }
  __host__ __device__ friend bool operator==(complex64 a, complex64 b) { return a.re == b.re && a.im == b.im; }
  __host__ __device__ friend bool operator!=(complex64 a, complex64 b) { return !(a == b); }
  __host__ __device__ friend bool operator<(complex64 a, complex64 b) {
    return a.re < b.re || (a.re == b.re && a.im < b.im);
  }
  __host__ __device__ friend bool operator>(complex64 a, complex64 b) { return b < a; }
  __host__ __device__ friend bool operator<=(complex64 a, complex64 b) { return !(b < a); }
  __host__ __device__ friend bool operator>=(complex64 a, complex64 b) { return !(a < b); }
};

/// Calls f(TypeTag<T>{}) with T the device type of `d` (__half and __nv_bfloat16 for the
/// 16-bit floats, cuda::complex64 for complex64).
template <typename F>
void dispatch_dtype(Dtype d, F&& f) {
  switch (d.val()) {
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

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <typename T>
inline constexpr bool is_complex_v = std::is_same_v<T, complex64>;

/// Real floating types (the 16-bit floats, float, double).
template <typename T>
inline constexpr bool is_float_v = is_half_v<T> || std::is_floating_point_v<T>;

/// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise (as the CPU).
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

/// The least and greatest values of a compute type: -inf and +inf for floating types, the
/// ends of the range for integers, false and true for bool.
template <typename T>
__device__ __forceinline__ T lowest() {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_integral_v<T>) {
    // The most negative value: the sign bit alone for signed types, 0 for unsigned ones.
    return std::is_signed_v<T>
               ? static_cast<T>(static_cast<std::make_unsigned_t<T>>(1) << (sizeof(T) * 8 - 1))
               : T(0);
  } else {
    return static_cast<T>(-INFINITY);
  }
}

template <typename T>
__device__ __forceinline__ T highest() {
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(~lowest<T>());
  } else {
    return static_cast<T>(INFINITY);
  }
}

template <typename T>
__device__ __forceinline__ compute_t<T> to_compute(T x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else {
    return x;
  }
}

/// The CPU's conversion of a compute value: the 16-bit floats rounded to nearest even from
/// float, complex to real keeps the real part, anything to bool is "nonzero".
template <typename D, typename C>
__device__ __forceinline__ D from_compute(C c) {
  if constexpr (std::is_same_v<D, C>) {
    return c;
  } else if constexpr (is_complex_v<C>) {
    if constexpr (std::is_same_v<D, bool>) {
      return c.re != 0 || c.im != 0;
    } else {
      return from_compute<D>(c.re);
    }
  } else if constexpr (is_complex_v<D>) {
    return D(static_cast<float>(c), 0.0f);
  } else if constexpr (std::is_same_v<D, __half>) {
    return __float2half_rn(static_cast<float>(c));
  } else if constexpr (std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(c));
  } else {
    return static_cast<D>(c);
  }
}

/// The CPU's conversion: from_compute<D>(to_compute(s)).
template <typename D, typename S>
__device__ __forceinline__ D convert(S s) {
  return from_compute<D>(to_compute(s));
}

/// N elements moved as one aligned access (16 bytes when N * sizeof(T) == 16).
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

/// Elements per 16-byte access for the widest of the given types.
template <typename... Ts>
inline constexpr int vec_width_v = static_cast<int>(16 / std::max({sizeof(Ts)...}));

inline bool is_aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

/// Dimensions a kernel indexes directly; layouts with more (after collapsing) are split into
/// several launches by for_each_launch.
constexpr int kMaxDims = 8;

/// A collapsed layout of K operands over one logical row-major index, passed by value.
template <int K>
struct Strided {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[K][kMaxDims] = {};
};

/// Element offsets of the row-major position `i` for each operand. Idx is 32-bit when the
/// index space allows, which makes the divisions much cheaper.
template <typename Idx, int K>
__device__ __forceinline__ void offsets_of(const Strided<K>& l, Idx i, int64_t (&off)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 1; --d) {
    if (d < l.ndim) {
      const Idx n = static_cast<Idx>(l.shape[d]);
      const Idx q = i / n;
      const int64_t r = static_cast<int64_t>(i - q * n);
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += r * l.strides[k][d];
      i = q;
    }
  }
  if (l.ndim > 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += static_cast<int64_t>(i) * l.strides[k][0];
  }
}

/// A collapsed host-side layout of K operands (src/backend/common/layout.h).
template <int K>
using HostLayout = common::Layout<K>;

/// The dimensions [first, ndim) of `l` as a kernel argument (at most kMaxDims of them).
template <int K>
Strided<K> device_layout(const HostLayout<K>& l, int first = 0) {
  Strided<K> d;
  d.ndim = l.ndim() - first;
  for (int i = 0; i < d.ndim; ++i) {
    d.shape[i] = l.shape[first + i];
    for (int k = 0; k < K; ++k) d.strides[k][i] = l.strides[k][first + i];
  }
  return d;
}

/// Splits a layout into launches of at most kMaxDims dimensions: calls
/// fn(base_offsets, inner_layout, flat_begin, flat_count) once per index of the leading
/// dimensions that do not fit (once in total when all fit).
template <int K, typename F>
void for_each_launch(const HostLayout<K>& l, F&& fn) {
  const int outer_dims = std::max(0, l.ndim() - kMaxDims);
  const Strided<K> inner = device_layout(l, outer_dims);
  int64_t inner_count = 1;
  for (int i = outer_dims; i < l.ndim(); ++i) inner_count *= l.shape[i];
  std::vector<int64_t> idx(static_cast<size_t>(outer_dims), 0);
  std::array<int64_t, K> base{};
  for (int64_t begin = 0;; begin += inner_count) {
    fn(base, inner, begin, inner_count);
    int d = outer_dims - 1;
    for (; d >= 0; --d) {
      for (int k = 0; k < K; ++k) base[k] += l.strides[k][d];
      if (++idx[d] < l.shape[d]) break;
      for (int k = 0; k < K; ++k) base[k] -= l.strides[k][d] * l.shape[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

/// Blocks of `block` threads covering `items` work items (one per thread). Kernels loop in
/// grid strides, so the cap on the grid never loses work.
inline unsigned grid_for(int64_t items, int block) {
  const int64_t needed = (items + block - 1) / block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(needed, INT32_MAX)));
}

/// Vectors each thread of a flat kernel moves per step, all loaded before any is used.
constexpr int kUnroll = 4;

/// The vector loop of a flat kernel over vectors [0, nvec): each thread takes kUnroll vectors a
/// block apart per step and loads all of them (load(v)) before storing any (store(v, loaded)),
/// so several loads are in flight per thread.
template <typename Load, typename Store>
__device__ __forceinline__ void flat_vectors(int64_t nvec, Load&& load, Store&& store) {
  using Loaded = decltype(load(int64_t{0}));
  const int64_t block = blockDim.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * block * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * block * kUnroll + threadIdx.x; base < nvec; base += step) {
    Loaded in[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * block < nvec) in[u] = load(base + u * block);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * block < nvec) store(base + u * block, in[u]);
    }
  }
}

/// Blocks for a flat kernel over n elements moved N at a time.
inline unsigned flat_grid(int64_t n, int n_per_vector, int block) {
  const int64_t nvec = n / n_per_vector;
  return grid_for((nvec + kUnroll - 1) / kUnroll, block);
}

/// Carves aligned pieces out of one scratch allocation: sizes are added first (reserve), the
/// buffer is fetched once, then pieces are handed out in the same order (take).
class ScratchPlan {
 public:
  size_t reserve(size_t bytes) {
    const size_t at = total_;
    total_ += (bytes + 255) / 256 * 256;
    return at;
  }
  void fetch(const Stream& s) { base_ = total_ ? static_cast<char*>(scratch(s, total_)) : nullptr; }
  template <typename T>
  T* at(size_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }

 private:
  size_t total_ = 0;
  char* base_ = nullptr;
};

/// Throws if the last kernel launch failed.
inline void check_launch(const char* what) { check(cudaGetLastError(), what); }

__host__ __device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_count() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

}  // namespace braid::cuda
