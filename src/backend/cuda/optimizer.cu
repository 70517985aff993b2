// The fused optimizer updates on the GPU: one flat kernel per update over row-contiguous
// operands, 16-byte accesses where every pointer allows. Arithmetic in float (double for
// float64) through the _rn intrinsics, so that nothing is contracted into a fused multiply-add
// and every step rounds as the separate element-wise kernels would.
#include <cstdint>
#include <stdexcept>

#include "backend/common/optimizer.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;

struct DeviceArith {
  static __device__ __forceinline__ float add(float x, float y) { return __fadd_rn(x, y); }
  static __device__ __forceinline__ float sub(float x, float y) { return __fsub_rn(x, y); }
  static __device__ __forceinline__ float mul(float x, float y) { return __fmul_rn(x, y); }
  static __device__ __forceinline__ float div(float x, float y) { return __fdiv_rn(x, y); }
  static __device__ __forceinline__ float sqrt(float x) { return __fsqrt_rn(x); }
  static __device__ __forceinline__ double add(double x, double y) { return __dadd_rn(x, y); }
  static __device__ __forceinline__ double sub(double x, double y) { return __dsub_rn(x, y); }
  static __device__ __forceinline__ double mul(double x, double y) { return __dmul_rn(x, y); }
  static __device__ __forceinline__ double div(double x, double y) { return __ddiv_rn(x, y); }
  static __device__ __forceinline__ double sqrt(double x) { return __dsqrt_rn(x); }
};

template <typename T>
struct Round {
  __device__ __forceinline__ compute_t<T> operator()(compute_t<T> x) const {
    return to_compute(from_compute<T>(x));
  }
};

struct Coefficients {
  double a, b, eps;
};

// kind 0: moment, 1: moment_square. x and g row-contiguous, n elements.
template <int N, typename T>
__global__ void moment_kernel(const T* __restrict__ x, const T* __restrict__ g, T* __restrict__ out,
                              int64_t n, Coefficients k, bool square) {
  using A = compute_t<T>;
  const Round<T> round;
  const A a = round(static_cast<A>(k.a)), b = round(static_cast<A>(k.b));
  auto one = [&](T xi, T gi) {
    const A xa = to_compute(xi), ga = to_compute(gi);
    return from_compute<T>(square ? common::moment_square_update<DeviceArith>(a, b, xa, ga, round)
                                  : common::moment_update<DeviceArith>(a, b, xa, ga, round));
  };
  const int64_t nvec = n / N;
  struct Two {
    Vec<T, N> x, g;
  };
  flat_vectors(
      nvec,
      [&](int64_t v) {
        return Two{reinterpret_cast<const Vec<T, N>*>(x)[v], reinterpret_cast<const Vec<T, N>*>(g)[v]};
      },
      [&](int64_t v, const Two& in) {
        Vec<T, N> r;
#pragma unroll
        for (int j = 0; j < N; ++j) r.v[j] = one(in.x.v[j], in.g.v[j]);
        reinterpret_cast<Vec<T, N>*>(out)[v] = r;
      });
  for (int64_t i = nvec * N + thread_index(); i < n; i += thread_count()) out[i] = one(x[i], g[i]);
}

// Adam's parameter step; s, c, d point at 0-d arrays (c, d null when absent). Its rounded
// square root and division make long dependent chains: at the full vector width the kernel
// took 128 registers a thread and a quarter of the warps the SM can hold, too few to hide
// them. Half-width vectors and a bound of four blocks per SM keep more warps in flight.
template <int N, typename T>
__global__ void __launch_bounds__(kBlock, 4) adam_kernel(const T* __restrict__ p, const T* __restrict__ m, const T* __restrict__ v,
                            T* __restrict__ out, int64_t n, const T* s_ptr, const T* c_ptr, const T* d_ptr,
                            double eps_value) {
  using A = compute_t<T>;
  const Round<T> round;
  const A s = to_compute(*s_ptr);
  const A c = c_ptr ? to_compute(*c_ptr) : A(1);
  const A d = d_ptr ? to_compute(*d_ptr) : A(1);
  const A eps = round(static_cast<A>(eps_value));
  const bool has_c = c_ptr != nullptr, has_d = d_ptr != nullptr;
  auto one = [&](T pi, T mi, T vi) {
    return from_compute<T>(common::adam_update<DeviceArith>(to_compute(pi), to_compute(mi), to_compute(vi), s,
                                                            c, d, eps, has_c, has_d, round));
  };
  const int64_t nvec = n / N;
  struct Three {
    Vec<T, N> p, m, v;
  };
  flat_vectors(
      nvec,
      [&](int64_t i) {
        return Three{reinterpret_cast<const Vec<T, N>*>(p)[i], reinterpret_cast<const Vec<T, N>*>(m)[i],
                     reinterpret_cast<const Vec<T, N>*>(v)[i]};
      },
      [&](int64_t i, const Three& in) {
        Vec<T, N> r;
#pragma unroll
        for (int j = 0; j < N; ++j) r.v[j] = one(in.p.v[j], in.m.v[j], in.v.v[j]);
        reinterpret_cast<Vec<T, N>*>(out)[i] = r;
      });
  for (int64_t i = nvec * N + thread_index(); i < n; i += thread_count()) out[i] = one(p[i], m[i], v[i]);
}

template <typename T>
void launch(const OptimizerUpdate& prim, const std::vector<array>& in, array& out, cudaStream_t stream) {
  constexpr int kVec = vec_width_v<T>;
  const int64_t n = static_cast<int64_t>(out.size());
  auto ptr = [](const array& a) { return static_cast<const T*>(a.desc()->data_ptr); };
  T* dst = static_cast<T*>(out.desc()->data_ptr);
  bool aligned = is_aligned(dst, 16);
  const size_t full = prim.kind() == OptimizerUpdate::Kind::adam ? 3 : 2;
  for (size_t i = 0; i < full; ++i) aligned = aligned && is_aligned(ptr(in[i]), 16);
  const Coefficients k{prim.a(), prim.b(), prim.eps()};
  auto run = [&](auto vec) {
    constexpr int V = decltype(vec)::value;
    switch (prim.kind()) {
      case OptimizerUpdate::Kind::moment:
      case OptimizerUpdate::Kind::moment_square:
        moment_kernel<V, T><<<flat_grid(n, V, kBlock), kBlock, 0, stream>>>(ptr(in[0]), ptr(in[1]), dst, n, k,
                                                                            prim.kind() == OptimizerUpdate::Kind::moment_square);
        return;
      case OptimizerUpdate::Kind::adam: {
        size_t next = 4;
        const T* c = prim.has_c() ? ptr(in[next++]) : nullptr;
        const T* d = prim.has_d() ? ptr(in[next++]) : nullptr;
        constexpr int H = V > 1 ? V / 2 : 1;
        adam_kernel<H, T><<<flat_grid(n, H, kBlock), kBlock, 0, stream>>>(ptr(in[0]), ptr(in[1]), ptr(in[2]), dst, n,
                                                                          ptr(in[3]), c, d, prim.eps());
        return;
      }
    }
  };
  if (aligned) {
    run(std::integral_constant<int, kVec>{});
  } else {
    run(std::integral_constant<int, 1>{});
  }
}

}  // namespace
}  // namespace cuda

void OptimizerUpdate::eval_gpu(const std::vector<array>& inputs, array& out) {
  for (const auto& a : inputs) {
    if (a.size() > 1 && !a.flags().row_contiguous) {
      throw std::logic_error("[OptimizerUpdate] The op passes row-contiguous operands only.");
    }
  }
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  cudaStream_t stream = cuda::stream_of(this->stream());
  cuda::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (cuda::is_float_v<T>) {
      cuda::launch<T>(*this, inputs, out, stream);
    } else {
      throw std::invalid_argument("[OptimizerUpdate] Unsupported dtype " + dtype_name(out.dtype()) + ".");
    }
  });
}

}  // namespace braid
