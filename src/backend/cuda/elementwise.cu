// Select, StopGradient and ScaledUnary on the GPU. Select only moves elements, so it runs on unsigned
// carriers of the element's size (four instantiations for fourteen dtypes): a 16-byte flat
// kernel when every input is contiguous or a single value, else a strided one.
#include <cstdint>
#include <stdexcept>

#include "backend/cuda/elementwise_kernels.cuh"
#include "graph/node.h"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

template <typename T, int N>
struct Triple {
  Vec<bool, N> c;
  Vec<T, N> x, y;
};

template <int N, typename T>
__global__ void select_flat(Flat<bool> c, Flat<T> x, Flat<T> y, T* __restrict__ out, int64_t n) {
  const int64_t nvec = n / N;
  const Vec<bool, N> sc = splat<N>(c);
  const Vec<T, N> sx = splat<N>(x), sy = splat<N>(y);
  flat_vectors(
      nvec, [&](int64_t v) { return Triple<T, N>{load<N>(c, sc, v), load<N>(x, sx, v), load<N>(y, sy, v)}; },
      [&](int64_t v, const Triple<T, N>& t) {
        Vec<T, N> r;
#pragma unroll
        for (int j = 0; j < N; ++j) r.v[j] = t.c.v[j] ? t.x.v[j] : t.y.v[j];
        reinterpret_cast<Vec<T, N>*>(out)[v] = r;
      });
  for (int64_t i = nvec * N + thread_index(); i < n; i += thread_count()) out[i] = load1(c, i) ? load1(x, i) : load1(y, i);
}

// ---- strided kernels (output contiguous, inputs at any strides) ----

template <typename Idx, typename T>
__global__ void select_strided(const bool* __restrict__ c, const T* __restrict__ x, const T* __restrict__ y,
                               T* __restrict__ out, Strided<3> l, int64_t n) {
  const int64_t step = thread_count();
  for (int64_t i = thread_index(); i < n; i += step) {
    int64_t off[3];
    offsets_of<Idx>(l, static_cast<Idx>(i), off);
    out[i] = c[off[0]] ? x[off[1]] : y[off[2]];
  }
}

// ---- host side ----

template <typename T>
Flat<T> flat_of(const array& in, const array& out) {
  return {static_cast<const T*>(in.desc()->data_ptr), !flat_readable(in, out) && scalar_like(in)};
}

// Whether a flat operand allows N-element vector access (scalars are read one at a time).
template <int N, typename T>
bool vector_ok(const Flat<T>& in) {
  return in.scalar || is_aligned(in.ptr, N * sizeof(T));
}

// Launches kernel<Idx> over each piece of `layout` (usually one), choosing 32-bit indexing
// when the piece allows.
template <int K, typename Launch>
void launch_strided(const HostLayout<K>& layout, Launch&& launch) {
  for_each_launch(layout, [&](const std::array<int64_t, K>& base, const Strided<K>& inner, int64_t begin,
                              int64_t count) {
    if (count <= INT32_MAX) {
      launch(uint32_t{}, base, inner, begin, count);
    } else {
      launch(uint64_t{}, base, inner, begin, count);
    }
  });
}

template <typename T>
void select_launch(const array& c, const array& x, const array& y, array& out, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(out.size());
  T* dst = static_cast<T*>(out.desc()->data_ptr);
  auto flat_ok = [&](const array& in) { return flat_readable(in, out) || scalar_like(in); };
  if (flat_ok(c) && flat_ok(x) && flat_ok(y)) {
    const Flat<bool> fc = flat_of<bool>(c, out);
    const Flat<T> fx = flat_of<T>(x, out), fy = flat_of<T>(y, out);
    constexpr int N = vec_width_v<T>;
    if (vector_ok<N>(fc) && vector_ok<N>(fx) && vector_ok<N>(fy) && is_aligned(dst, N * sizeof(T))) {
      select_flat<N, T><<<flat_grid(n, N, kEwBlock), kEwBlock, 0, stream>>>(fc, fx, fy, dst, n);
    } else {
      select_flat<1, T><<<flat_grid(n, 1, kEwBlock), kEwBlock, 0, stream>>>(fc, fx, fy, dst, n);
    }
    check_launch("Select");
    return;
  }
  const bool* pc = static_cast<const bool*>(c.desc()->data_ptr);
  const T* px = static_cast<const T*>(x.desc()->data_ptr);
  const T* py = static_cast<const T*>(y.desc()->data_ptr);
  HostLayout<3> layout(out.shape(), {common::broadcast_strides(c, out.shape()), common::broadcast_strides(x, out.shape()),
                                     common::broadcast_strides(y, out.shape())});
  launch_strided(layout, [&](auto idx, const std::array<int64_t, 3>& base, const Strided<3>& l, int64_t begin,
                             int64_t count) {
    using Idx = decltype(idx);
    select_strided<Idx, T><<<grid_for(count, kEwBlock), kEwBlock, 0, stream>>>(pc + base[0], px + base[1], py + base[2],
                                                                            dst + begin, l, count);
    check_launch("Select");
  });
}

}  // namespace
}  // namespace cuda

void Select::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t s = cuda::stream_of(stream());
  switch (out.itemsize()) {
    case 1: cuda::select_launch<uint8_t>(inputs[0], inputs[1], inputs[2], out, s); break;
    case 2: cuda::select_launch<uint16_t>(inputs[0], inputs[1], inputs[2], out, s); break;
    case 4: cuda::select_launch<uint32_t>(inputs[0], inputs[1], inputs[2], out, s); break;
    case 8: cuda::select_launch<uint64_t>(inputs[0], inputs[1], inputs[2], out, s); break;
    default: throw std::logic_error("[where] unexpected element size.");
  }
}

void StopGradient::eval_gpu(const std::vector<array>& inputs, array& out) { detail::share_buffer(out, inputs[0]); }

namespace cuda {
namespace {
// g * op(x), with op's value rounded to T as Unary's kernel stores it: multiply(g, op(x)).
template <typename T, typename Op>
struct TimesUnary {
  Op op;
  template <typename C>
  __device__ __forceinline__ C operator()(C g, C x) const {
    return ew::Multiply{}(g, to_compute(from_compute<T>(op(x))));
  }
};
}  // namespace
}  // namespace cuda

void ScaledUnary::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& g = inputs[0];
  const array& x = inputs[1];
  cuda::alloc_output_or_donate(inputs, out);
  if (out.size() == 0) return;
  auto run = [&](auto op) {
    cuda::dispatch_class<ew::DtypeClass::inexact>(x.dtype(), name(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::binary_launch<T>(g, x, out, cuda::TimesUnary<T, decltype(op)>{op}, stream());
    });
  };
  ew::with_scaled_unary_functor(op_, run);
}

}  // namespace braid
