// The CUDA element-wise kernels: a functor of backend/common/elementwise_ops.h applied by one
// flat kernel per arity, moving 16 bytes per access in a grid-stride loop. Each input of the
// flat kernel is contiguous in the output's order or a single broadcast value; any other
// input (strided, broadcast along some axes, or misaligned) is first gathered into a
// contiguous scratch buffer by the shared strided copy. So an op instantiates exactly one
// kernel per dtype its row accepts.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "backend/common/elementwise_ops.h"
#include "backend/common/layout.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/elementwise_ops.h"

namespace braid::ew {
template <>
struct ComplexParts<cuda::complex64> {
  static constexpr bool value = true;
  __host__ __device__ static float re(const cuda::complex64& z) { return z.re; }
  __host__ __device__ static float im(const cuda::complex64& z) { return z.im; }
  __host__ __device__ static cuda::complex64 make(float r, float i) { return {r, i}; }
};
}  // namespace braid::ew

namespace braid::cuda {
namespace {

constexpr int kEwBlock = 256;

/// The kind (ew::Kind) of device type T.
template <typename T>
inline constexpr uint8_t kind_v = std::is_same_v<T, bool>   ? ew::kBool
                                  : std::is_integral_v<T>   ? ew::kInt
                                  : is_complex_v<T>         ? ew::kComplex
                                                            : ew::kFloat;

/// Calls f(TypeTag<T>{}) for `d` when dtype class `Cls` accepts it (the ops cast inputs to an
/// accepted dtype; anything else is a bug and instantiates nothing).
template <uint8_t Cls, typename F>
void dispatch_class(Dtype d, const char* name, F&& f) {
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr ((Cls & kind_v<T>) != 0) {
      f(tag);
    } else {
      throw std::logic_error(std::string("[") + name + "] kernel called with an unsupported dtype.");
    }
  });
}

/// The storage type of an op's result on inputs of device type T: T when the functor returns
/// T's compute type (so __half stays __half), else what it returns (bool, float).
template <typename T, typename Res>
using result_storage_t = std::conditional_t<std::is_same_v<Res, compute_t<T>>, T, Res>;

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

// One operand of binary_rows: row r starts at ptr + the outer dimensions' offset, its
// elements `stride` apart; 0 is one value for the whole row, read once; `vec` (stride 1, every
// row aligned) reads N at a time; any other stride gathers.
template <typename T>
struct RowOperand {
  const T* ptr;
  int64_t stride;
  bool vec;
};

template <int N, typename T>
__device__ __forceinline__ Vec<T, N> row_load(const RowOperand<T>& in, const T* row, T first, int64_t c) {
  if (in.vec) return *reinterpret_cast<const Vec<T, N>*>(row + c);
  Vec<T, N> r;
  if (in.stride == 0) {
#pragma unroll
    for (int j = 0; j < N; ++j) r.v[j] = first;
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) r.v[j] = row[(c + j) * in.stride];
  }
  return r;
}

constexpr int kRowVectors = 4;  // vectors of N outputs a thread of binary_rows stores per step

// A binary op whose operands are read in place at any strides (broadcast, transposed) over
// `rows` rows of `cols` outputs (cols a multiple of N, out aligned): thread (x, y) of a block
// takes row blockIdx.y * blockDim.y + y, whose offsets cost one index computation, and stores
// kRowVectors vectors of N outputs per step, loading them all first. 32-bit index arithmetic
// over the rows: the host uses it for at most INT32_MAX outputs.
template <int N, typename T, typename R, typename Op>
__global__ void binary_rows(RowOperand<T> a, RowOperand<T> b, R* __restrict__ out, Strided<2> outer,
                            int64_t rows, int64_t cols, Op op) {
  const int64_t vstep = static_cast<int64_t>(blockDim.x) * N;
  const int64_t cstep = static_cast<int64_t>(gridDim.x) * vstep * kRowVectors;
  for (int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; r < rows;
       r += static_cast<int64_t>(gridDim.y) * blockDim.y) {
    int64_t off[2];
    offsets_of<uint32_t>(outer, static_cast<uint32_t>(r), off);
    const T* ra = a.ptr + off[0];
    const T* rb = b.ptr + off[1];
    const T fa = a.stride == 0 ? ra[0] : T{}, fb = b.stride == 0 ? rb[0] : T{};
    R* ro = out + r * cols;
    for (int64_t c0 = static_cast<int64_t>(blockIdx.x) * vstep * kRowVectors + threadIdx.x * N; c0 < cols;
         c0 += cstep) {
      Pair<T, N> in[kRowVectors];
#pragma unroll
      for (int u = 0; u < kRowVectors; ++u) {
        const int64_t c = c0 + u * vstep;
        if (c < cols) in[u] = {row_load<N>(a, ra, fa, c), row_load<N>(b, rb, fb, c)};
      }
#pragma unroll
      for (int u = 0; u < kRowVectors; ++u) {
        const int64_t c = c0 + u * vstep;
        if (c >= cols) break;
        Vec<R, N> res;
#pragma unroll
        for (int j = 0; j < N; ++j)
          res.v[j] = from_compute<R>(op(to_compute(in[u].a.v[j]), to_compute(in[u].b.v[j])));
        *reinterpret_cast<Vec<R, N>*>(ro + c) = res;
      }
    }
  }
}

// The general in-place binary op: out[i] = op(a[offset], b[offset]), one output per thread.
template <typename T, typename R, typename Op>
__global__ void binary_strided(const T* __restrict__ a, const T* __restrict__ b, R* __restrict__ out,
                               Strided<2> l, int64_t n, Op op) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    int64_t off[2];
    offsets_of<uint32_t>(l, static_cast<uint32_t>(i), off);
    out[i] = from_compute<R>(op(to_compute(a[off[0]]), to_compute(b[off[1]])));
  }
}

// ---- host side ----

inline bool flat_readable(const array& in, const array& out) {
  return in.flags().row_contiguous && in.size() == out.size();
}
inline bool scalar_like(const array& in) { return in.data_size() == 1; }

// Bytes reserved per gathered input in the scratch buffer (keeps every part 16-byte aligned).
inline size_t gather_bytes(const array& out, Dtype t) { return (out.size() * t.size() + 255) / 256 * 256; }

/// The flat operands of an element-wise kernel over `out`: each input is used in place when
/// it is contiguous and aligned for N-element access, or a single value; otherwise it is
/// gathered (broadcast and made contiguous) into one scratch buffer of `s`.
template <typename T, int N, size_t K>
std::array<Flat<T>, K> flat_operands(const std::array<const array*, K>& ins, const array& out, const Stream& s,
                                     cudaStream_t stream) {
  std::array<Flat<T>, K> f{};
  std::array<bool, K> gather{};
  size_t bytes = 0;
  for (size_t k = 0; k < K; ++k) {
    const array& in = *ins[k];
    const T* p = static_cast<const T*>(in.desc()->data_ptr);
    if (flat_readable(in, out) && is_aligned(p, N * sizeof(T))) {
      f[k] = {p, false};
    } else if (scalar_like(in)) {
      f[k] = {p, true};
    } else {
      gather[k] = true;
      bytes += gather_bytes(out, in.dtype());
    }
  }
  if (bytes == 0) return f;
  char* tmp = static_cast<char*>(scratch(s, bytes));
  for (size_t k = 0; k < K; ++k) {
    if (!gather[k]) continue;
    const array& in = *ins[k];
    copy_strided(in.desc()->data_ptr, in.dtype(), out.shape(), common::broadcast_strides(in, out.shape()), tmp,
                 in.dtype(), stream);
    f[k] = {reinterpret_cast<const T*>(tmp), false};
    tmp += gather_bytes(out, in.dtype());
  }
  return f;
}

template <typename T, typename Op>
void unary_launch(const array& a, array& out, Op op, const Stream& s) {
  using R = result_storage_t<T, decltype(op(std::declval<compute_t<T>>()))>;
  if (out.itemsize() != sizeof(R)) throw std::logic_error("[elementwise] output dtype does not match the op.");
  constexpr int N = vec_width_v<T, R>;
  const cudaStream_t stream = stream_of(s);
  const int64_t n = static_cast<int64_t>(out.size());
  const auto f = flat_operands<T, N, 1>({&a}, out, s, stream);
  unary_flat<N, T, R><<<flat_grid(n, N, kEwBlock), kEwBlock, 0, stream>>>(f[0], static_cast<R*>(out.desc()->data_ptr),
                                                                          n, op);
  check_launch("Unary");
}

// binary_rows over layout `l` (rows along its last dimension, a multiple of N long; `count`
// outputs from `out`, aligned for N-element stores): blocks of kEwBlock threads, as many
// across a row as its vectors fill (at most all of them), the others on further rows.
template <int N, typename T, typename R, typename Op>
void launch_rows(const T* a, const T* b, R* out, const Strided<2>& l, int64_t count, Op op,
                 cudaStream_t stream) {
  const int last = l.ndim - 1;
  const int64_t cols = l.shape[last], rows = count / cols;
  Strided<2> outer;
  outer.ndim = last;
  bool outer_vec[2] = {true, true};
  for (int i = 0; i < last; ++i) {
    outer.shape[i] = l.shape[i];
    for (int k = 0; k < 2; ++k) {
      outer.strides[k][i] = l.strides[k][i];
      outer_vec[k] = outer_vec[k] && l.strides[k][i] % N == 0;
    }
  }
  auto operand = [&](const T* p, int k) {
    const int64_t stride = l.strides[k][last];
    return RowOperand<T>{p, stride, stride == 1 && outer_vec[k] && is_aligned(p, N * sizeof(T))};
  };
  int tx = 1;
  while (tx < kEwBlock && static_cast<int64_t>(tx) * kRowVectors * N < cols) tx *= 2;
  const int ty = kEwBlock / tx;
  const int64_t per_block = static_cast<int64_t>(tx) * kRowVectors * N;
  const dim3 grid(static_cast<unsigned>((cols + per_block - 1) / per_block),
                  static_cast<unsigned>(std::min<int64_t>((rows + ty - 1) / ty, 65535)));
  binary_rows<N, T, R>
      <<<grid, dim3(tx, ty), 0, stream>>>(operand(a, 0), operand(b, 1), out, outer, rows, cols, op);
}

template <typename T, typename Op>
void binary_launch(const array& a, const array& b, array& out, Op op, const Stream& s) {
  using C = compute_t<T>;
  using R = result_storage_t<T, decltype(op(std::declval<C>(), std::declval<C>()))>;
  if (out.itemsize() != sizeof(R)) throw std::logic_error("[elementwise] output dtype does not match the op.");
  constexpr int N = vec_width_v<T, R>;
  const cudaStream_t stream = stream_of(s);
  const int64_t n = static_cast<int64_t>(out.size());
  // An operand that is neither flat nor a single value (a bias broadcast along rows, a
  // transposed view) is read in place by the strided kernel rather than gathered first.
  auto in_place = [&](const array& in) { return flat_readable(in, out) || scalar_like(in); };
  if ((!in_place(a) || !in_place(b)) && n <= INT32_MAX) {
    const T* pa = static_cast<const T*>(a.desc()->data_ptr);
    const T* pb = static_cast<const T*>(b.desc()->data_ptr);
    R* dst = static_cast<R*>(out.desc()->data_ptr);
    HostLayout<2> layout(out.shape(),
                         {common::broadcast_strides(a, out.shape()), common::broadcast_strides(b, out.shape())});
    for_each_launch(layout, [&](const std::array<int64_t, 2>& base, const Strided<2>& l, int64_t begin,
                                int64_t count) {
      R* d = dst + begin;
      if (l.ndim > 0 && l.shape[l.ndim - 1] % N == 0 && is_aligned(d, N * sizeof(R))) {
        launch_rows<N>(pa + base[0], pb + base[1], d, l, count, op, stream);
      } else {
        binary_strided<T, R>
            <<<grid_for(count, kEwBlock), kEwBlock, 0, stream>>>(pa + base[0], pb + base[1], d, l, count, op);
      }
      check_launch("Binary");
    });
    return;
  }
  const auto f = flat_operands<T, N, 2>({&a, &b}, out, s, stream);
  binary_flat<N, T, R><<<flat_grid(n, N, kEwBlock), kEwBlock, 0, stream>>>(
      f[0], f[1], static_cast<R*>(out.desc()->data_ptr), n, op);
  check_launch("Binary");
}

}  // namespace
}  // namespace braid::cuda
