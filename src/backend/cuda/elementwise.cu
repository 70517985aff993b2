// Element-wise kernels: Unary, Binary, Select. When every input is either contiguous in the
// output's order or a single broadcast value, a grid-stride loop moves 16 bytes per access;
// otherwise each thread maps its flat output index to every input's strided offset.
#include <cmath>
#include <stdexcept>
#include <string>

#include "backend/common/layout.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;

// ---- operations, on compute types (float for the 16-bit floats), as the CPU defines them ----

struct Negative {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(-x);
  }
};
struct Exp {
  __device__ float operator()(float x) const { return expf(x); }
};
struct Log {
  __device__ float operator()(float x) const { return logf(x); }
};
struct Sqrt {
  __device__ float operator()(float x) const { return sqrtf(x); }
};
struct Tanh {
  __device__ float operator()(float x) const { return tanhf(x); }
};

struct Add {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return static_cast<C>(x + y);
  }
};
struct Subtract {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return static_cast<C>(x - y);
  }
};
struct Multiply {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return static_cast<C>(x * y);
  }
};
struct Divide {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return static_cast<C>(x / y);
  }
};
// NaN wins, as on the CPU.
struct Maximum {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return x;
      if (y != y) return y;
    }
    return x > y ? x : y;
  }
};
struct Minimum {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return x;
      if (y != y) return y;
    }
    return x < y ? x : y;
  }
};
struct Equal {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x == y;
  }
};
struct Less {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x < y;
  }
};
struct Greater {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x > y;
  }
};

// ---- flat kernels ----

// An input of a flat kernel: contiguous in the output's order, or one value for every element.
template <typename T>
struct Flat {
  const T* ptr;
  bool scalar;
};

template <int N, typename T>
__device__ __forceinline__ Vec<T, N> splat(const Flat<T>& in) {
  Vec<T, N> r;
  if (in.scalar) {
    const T x = in.ptr[0];
#pragma unroll
    for (int j = 0; j < N; ++j) r.v[j] = x;
  }
  return r;
}

template <int N, typename T>
__device__ __forceinline__ Vec<T, N> load(const Flat<T>& in, const Vec<T, N>& splatted, int64_t v) {
  return in.scalar ? splatted : reinterpret_cast<const Vec<T, N>*>(in.ptr)[v];
}

template <typename T>
__device__ __forceinline__ T load1(const Flat<T>& in, int64_t i) {
  return in.ptr[in.scalar ? 0 : i];
}

template <typename T, int N>
struct Pair {
  Vec<T, N> a, b;
};
template <typename T, int N>
struct Triple {
  Vec<bool, N> c;
  Vec<T, N> x, y;
};

template <int N, typename T, typename R, typename Op>
__global__ void unary_flat(Flat<T> a, R* __restrict__ out, int64_t n, Op op) {
  const int64_t nvec = n / N;
  const Vec<T, N> sa = splat<N>(a);
  flat_vectors(
      nvec, [&](int64_t v) { return load<N>(a, sa, v); },
      [&](int64_t v, const Vec<T, N>& x) {
        Vec<R, N> r;
#pragma unroll
        for (int j = 0; j < N; ++j) r.v[j] = from_compute<R>(op(to_compute(x.v[j])));
        reinterpret_cast<Vec<R, N>*>(out)[v] = r;
      });
  for (int64_t i = nvec * N + thread_index(); i < n; i += thread_count()) {
    out[i] = from_compute<R>(op(to_compute(load1(a, i))));
  }
}

template <int N, typename T, typename R, typename Op>
__global__ void binary_flat(Flat<T> a, Flat<T> b, R* __restrict__ out, int64_t n, Op op) {
  const int64_t nvec = n / N;
  const Vec<T, N> sa = splat<N>(a), sb = splat<N>(b);
  flat_vectors(
      nvec, [&](int64_t v) { return Pair<T, N>{load<N>(a, sa, v), load<N>(b, sb, v)}; },
      [&](int64_t v, const Pair<T, N>& p) {
        Vec<R, N> r;
#pragma unroll
        for (int j = 0; j < N; ++j) r.v[j] = from_compute<R>(op(to_compute(p.a.v[j]), to_compute(p.b.v[j])));
        reinterpret_cast<Vec<R, N>*>(out)[v] = r;
      });
  for (int64_t i = nvec * N + thread_index(); i < n; i += thread_count()) {
    out[i] = from_compute<R>(op(to_compute(load1(a, i)), to_compute(load1(b, i))));
  }
}

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

template <typename Idx, typename T, typename R, typename Op>
__global__ void unary_strided(const T* __restrict__ a, R* __restrict__ out, Strided<1> l, int64_t n, Op op) {
  const int64_t step = thread_count();
  for (int64_t i = thread_index(); i < n; i += step) {
    int64_t off[1];
    offsets_of<Idx>(l, static_cast<Idx>(i), off);
    out[i] = from_compute<R>(op(to_compute(a[off[0]])));
  }
}

template <typename Idx, typename T, typename R, typename Op>
__global__ void binary_strided(const T* __restrict__ a, const T* __restrict__ b, R* __restrict__ out, Strided<2> l,
                               int64_t n, Op op) {
  const int64_t step = thread_count();
  for (int64_t i = thread_index(); i < n; i += step) {
    int64_t off[2];
    offsets_of<Idx>(l, static_cast<Idx>(i), off);
    out[i] = from_compute<R>(op(to_compute(a[off[0]]), to_compute(b[off[1]])));
  }
}

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

// Whether `in` can be read at the flat output index, or as one value.
bool flat_readable(const array& in, const array& out) {
  return in.flags().row_contiguous && in.size() == out.size();
}
bool scalar_like(const array& in) { return in.data_size() == 1; }

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

template <typename T, typename R, typename Op>
void unary_launch(const array& a, array& out, Op op, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(out.size());
  R* dst = static_cast<R*>(out.desc()->data_ptr);
  if (flat_readable(a, out) || scalar_like(a)) {
    const Flat<T> fa = flat_of<T>(a, out);
    constexpr int N = vec_width_v<T, R>;
    if (vector_ok<N>(fa) && is_aligned(dst, N * sizeof(R))) {
      unary_flat<N, T, R><<<flat_grid(n, N, kBlock), kBlock, 0, stream>>>(fa, dst, n, op);
    } else {
      unary_flat<1, T, R><<<flat_grid(n, 1, kBlock), kBlock, 0, stream>>>(fa, dst, n, op);
    }
    check_launch("Unary");
    return;
  }
  const T* src = static_cast<const T*>(a.desc()->data_ptr);
  HostLayout<1> layout(out.shape(), {common::broadcast_strides(a, out.shape())});
  launch_strided(layout, [&](auto idx, const std::array<int64_t, 1>& base, const Strided<1>& l, int64_t begin,
                             int64_t count) {
    using Idx = decltype(idx);
    unary_strided<Idx, T, R><<<grid_for(count, kBlock), kBlock, 0, stream>>>(src + base[0], dst + begin, l, count, op);
    check_launch("Unary");
  });
}

template <typename T, typename R, typename Op>
void binary_launch(const array& a, const array& b, array& out, Op op, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(out.size());
  R* dst = static_cast<R*>(out.desc()->data_ptr);
  if ((flat_readable(a, out) || scalar_like(a)) && (flat_readable(b, out) || scalar_like(b))) {
    const Flat<T> fa = flat_of<T>(a, out), fb = flat_of<T>(b, out);
    constexpr int N = vec_width_v<T, R>;
    if (vector_ok<N>(fa) && vector_ok<N>(fb) && is_aligned(dst, N * sizeof(R))) {
      binary_flat<N, T, R><<<flat_grid(n, N, kBlock), kBlock, 0, stream>>>(fa, fb, dst, n, op);
    } else {
      binary_flat<1, T, R><<<flat_grid(n, 1, kBlock), kBlock, 0, stream>>>(fa, fb, dst, n, op);
    }
    check_launch("Binary");
    return;
  }
  const T* pa = static_cast<const T*>(a.desc()->data_ptr);
  const T* pb = static_cast<const T*>(b.desc()->data_ptr);
  HostLayout<2> layout(out.shape(), {common::broadcast_strides(a, out.shape()), common::broadcast_strides(b, out.shape())});
  launch_strided(layout, [&](auto idx, const std::array<int64_t, 2>& base, const Strided<2>& l, int64_t begin,
                             int64_t count) {
    using Idx = decltype(idx);
    binary_strided<Idx, T, R><<<grid_for(count, kBlock), kBlock, 0, stream>>>(pa + base[0], pb + base[1],
                                                                                dst + begin, l, count, op);
    check_launch("Binary");
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
      select_flat<N, T><<<flat_grid(n, N, kBlock), kBlock, 0, stream>>>(fc, fx, fy, dst, n);
    } else {
      select_flat<1, T><<<flat_grid(n, 1, kBlock), kBlock, 0, stream>>>(fc, fx, fy, dst, n);
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
    select_strided<Idx, T><<<grid_for(count, kBlock), kBlock, 0, stream>>>(pc + base[0], px + base[1], py + base[2],
                                                                            dst + begin, l, count);
    check_launch("Select");
  });
}

}  // namespace
}  // namespace cuda

void Unary::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t s = cuda::stream_of(stream());
  cuda::dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw std::invalid_argument(std::string("[") + name() + "] Not defined for bool.");
    } else if constexpr (cuda::is_float_v<T>) {
      switch (op_) {
        case Op::negative: cuda::unary_launch<T, T>(in, out, cuda::Negative{}, s); break;
        case Op::exp: cuda::unary_launch<T, T>(in, out, cuda::Exp{}, s); break;
        case Op::log: cuda::unary_launch<T, T>(in, out, cuda::Log{}, s); break;
        case Op::sqrt: cuda::unary_launch<T, T>(in, out, cuda::Sqrt{}, s); break;
        case Op::tanh: cuda::unary_launch<T, T>(in, out, cuda::Tanh{}, s); break;
      }
    } else {
      // Integers: only negative reaches here (the op casts to float for the others).
      cuda::unary_launch<T, T>(in, out, cuda::Negative{}, s);
    }
  });
}

void Binary::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  const array& b = inputs[1];
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t s = cuda::stream_of(stream());
  cuda::dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op_) {
      case Op::add: cuda::binary_launch<T, T>(a, b, out, cuda::Add{}, s); break;
      case Op::subtract: cuda::binary_launch<T, T>(a, b, out, cuda::Subtract{}, s); break;
      case Op::multiply: cuda::binary_launch<T, T>(a, b, out, cuda::Multiply{}, s); break;
      case Op::divide: cuda::binary_launch<T, T>(a, b, out, cuda::Divide{}, s); break;
      case Op::maximum: cuda::binary_launch<T, T>(a, b, out, cuda::Maximum{}, s); break;
      case Op::minimum: cuda::binary_launch<T, T>(a, b, out, cuda::Minimum{}, s); break;
      case Op::equal: cuda::binary_launch<T, bool>(a, b, out, cuda::Equal{}, s); break;
      case Op::less: cuda::binary_launch<T, bool>(a, b, out, cuda::Less{}, s); break;
      case Op::greater: cuda::binary_launch<T, bool>(a, b, out, cuda::Greater{}, s); break;
    }
  });
}

void Select::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t s = cuda::stream_of(stream());
  cuda::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::select_launch<T>(inputs[0], inputs[1], inputs[2], out, s);
  });
}

}  // namespace braid
