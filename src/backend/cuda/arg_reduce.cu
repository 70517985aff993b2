// ArgReduce::eval_gpu: the index of the first maximum (minimum) along one axis, with MLX's CPU
// rule (start at element 0, move only to a strictly better element). Said another way: a NaN
// first element wins; otherwise the first extreme among the non-NaN elements. The second form
// splits across threads: each keeps its best (value, index), ties going to the lower index.
//  - a block per output (or per chunk of one, when outputs are few and rows long) when the
//    axis has unit stride or outputs are few; chunk partials are combined by a second pass.
//  - a thread per output otherwise (adjacent outputs read adjacent addresses), or per chunk
//    of one when outputs are too few to fill the device, combined by the same second pass.
#include <algorithm>
#include <cstdint>

#include "backend/common/reduce_plan.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;
constexpr int64_t kMinChunk = 8192;     // elements per block when a row is split
constexpr int64_t kMinColumnChunk = 32;  // elements per thread when a column walk is split
constexpr int64_t kFewOutputs = 2048;   // fewer outputs than this take a block each
constexpr uint32_t kNone = UINT32_MAX;  // index of an empty partial

template <typename T, bool kMax>
struct ArgOp {
  using C = compute_t<T>;
  __device__ static C load(T x) { return static_cast<C>(to_compute(x)); }
  __device__ static bool better(C b, C a) {
    if constexpr (kMax) {
      return b > a;
    } else {
      return b < a;
    }
  }
  // complex64 keeps MLX's lexicographic comparisons as they are (no NaN skipping).
  __device__ static bool is_nan(C x) {
    if constexpr (std::is_floating_point_v<C>) {
      return x != x;
    } else {
      return false;
    }
  }
  // (bv, bi) replaces (av, ai): strictly better, or as good at a lower index.
  __device__ static bool takes(C bv, uint32_t bi, C av, uint32_t ai) {
    if (bi == kNone) return false;
    if (ai == kNone) return true;
    return better(bv, av) || (!better(av, bv) && bi < ai);
  }
};

template <typename T>
__device__ __forceinline__ T shfl_down(T v, int delta) {
  if constexpr (is_complex_v<T>) {
    return T(__shfl_down_sync(0xffffffffu, v.re, delta), __shfl_down_sync(0xffffffffu, v.im, delta));
  } else if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_down_sync(0xffffffffu, static_cast<int>(v), delta));
  } else {
    return __shfl_down_sync(0xffffffffu, v, delta);
  }
}

// A block per (output, chunk). With splits == 1 the result goes to dst; otherwise chunk c of
// output o goes to pv/pi[o * splits + c].
template <typename T, bool kMax>
__global__ void arg_rows(const T* __restrict__ src, uint32_t* __restrict__ dst, compute_t<T>* __restrict__ pv,
                         uint32_t* __restrict__ pi, Strided<2> kept, int64_t outputs, int64_t n,
                         int64_t stride, int64_t chunk, int64_t splits) {
  using Op = ArgOp<T, kMax>;
  using C = compute_t<T>;
  // Raw storage: a __shared__ array cannot have a constructor (complex64 has one).
  __shared__ alignas(C) unsigned char sv_raw[kWarp * sizeof(C)];
  __shared__ uint32_t si[kWarp];
  C* sv = reinterpret_cast<C*>(sv_raw);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int64_t task = blockIdx.x; task < outputs * splits; task += gridDim.x) {
    const int64_t o = task / splits, split = task - o * splits;
    int64_t off[2];
    offsets_of<uint64_t>(kept, static_cast<uint64_t>(o), off);
    const T* p = src + off[0];
    C bv = C();
    uint32_t bi = kNone;
    const int64_t end = min64(n, (split + 1) * chunk);
    // kUnroll loads in flight per thread before they are compared, in index order.
    constexpr int kUnroll = 4;
    const int64_t step = blockDim.x;
    for (int64_t r0 = split * chunk + threadIdx.x; r0 < end; r0 += kUnroll * step) {
      C x[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t r = r0 + u * step;
        if (r < end) x[u] = Op::load(p[r * stride]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t r = r0 + u * step;
        if (r < end && !Op::is_nan(x[u]) && Op::takes(x[u], static_cast<uint32_t>(r), bv, bi)) {
          bv = x[u];
          bi = static_cast<uint32_t>(r);
        }
      }
    }
#pragma unroll
    for (int d = kWarp / 2; d > 0; d >>= 1) {
      const C ov = shfl_down(bv, d);
      const uint32_t oi = __shfl_down_sync(0xffffffffu, bi, d);
      if (Op::takes(ov, oi, bv, bi)) {
        bv = ov;
        bi = oi;
      }
    }
    if (lane == 0) {
      sv[warp] = bv;
      si[warp] = bi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < static_cast<int>(blockDim.x / kWarp); ++w) {
        if (Op::takes(sv[w], si[w], bv, bi)) {
          bv = sv[w];
          bi = si[w];
        }
      }
      if (splits == 1) {
        dst[off[1]] = (Op::is_nan(Op::load(p[0])) || bi == kNone) ? 0u : bi;
      } else {
        pv[task] = bv;
        pi[task] = bi;
      }
    }
    __syncthreads();
  }
}

// Combines the chunks of each output in order (a thread per output).
template <typename T, bool kMax>
__global__ void arg_combine(const T* __restrict__ src, uint32_t* __restrict__ dst,
                            const compute_t<T>* __restrict__ pv, const uint32_t* __restrict__ pi,
                            Strided<2> kept, int64_t outputs, int64_t splits) {
  using Op = ArgOp<T, kMax>;
  for (int64_t o = thread_index(); o < outputs; o += thread_count()) {
    int64_t off[2];
    offsets_of<uint64_t>(kept, static_cast<uint64_t>(o), off);
    compute_t<T> bv = pv[o * splits];
    uint32_t bi = pi[o * splits];
    for (int64_t c = 1; c < splits; ++c) {
      if (Op::takes(pv[o * splits + c], pi[o * splits + c], bv, bi)) {
        bv = pv[o * splits + c];
        bi = pi[o * splits + c];
      }
    }
    dst[off[1]] = (Op::is_nan(Op::load(src[off[0]])) || bi == kNone) ? 0u : bi;
  }
}

// A thread per output, walking the axis in order (MLX's loop itself); with splits > 1 a
// thread per (output, chunk of the axis), adjacent threads on adjacent outputs, each chunk's
// best going to pv/pi[o * splits + chunk] for arg_combine.
template <typename T, bool kMax>
__global__ void arg_columns(const T* __restrict__ src, uint32_t* __restrict__ dst, compute_t<T>* __restrict__ pv,
                            uint32_t* __restrict__ pi, Strided<2> kept, int64_t outputs, int64_t n,
                            int64_t stride, int64_t chunk, int64_t splits) {
  using Op = ArgOp<T, kMax>;
  using C = compute_t<T>;
  for (int64_t task = thread_index(); task < outputs * splits; task += thread_count()) {
    const int64_t split = task / outputs, o = task - split * outputs;
    int64_t off[2];
    offsets_of<uint64_t>(kept, static_cast<uint64_t>(o), off);
    const T* p = src + off[0];
    if (splits == 1) {
      C best = Op::load(p[0]);
      uint32_t idx = 0;
      for (int64_t r = 1; r < n; ++r) {
        const C x = Op::load(p[r * stride]);
        if (Op::better(x, best)) {
          best = x;
          idx = static_cast<uint32_t>(r);
        }
      }
      dst[off[1]] = idx;
      continue;
    }
    C bv = C();
    uint32_t bi = kNone;
    const int64_t end = min64(n, (split + 1) * chunk);
    for (int64_t r = split * chunk; r < end; ++r) {
      const C x = Op::load(p[r * stride]);
      if (!Op::is_nan(x) && Op::takes(x, static_cast<uint32_t>(r), bv, bi)) {
        bv = x;
        bi = static_cast<uint32_t>(r);
      }
    }
    pv[o * splits + split] = bv;
    pi[o * splits + split] = bi;
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename T, bool kMax>
void arg_reduce(const array& in, array& out, int axis, const Stream& s) {
  using C = compute_t<T>;
  cudaStream_t cs = stream_of(s);
  uint32_t* dst = static_cast<uint32_t*>(out.desc()->data_ptr);
  const common::ReducePlan plan = common::make_reduce_plan(in, out, {axis});
  const int64_t outputs = plan.outputs, n = plan.count;
  const T* src = static_cast<const T*>(in.desc()->data_ptr);
  int64_t stride = plan.reduced.back().in_stride;
  HostLayout<2> kept;
  for (const common::ReduceDim& d : plan.kept) {
    kept.push(d.n, [&](int k) { return k == 0 ? d.in_stride : d.out_stride; });
  }
  size_t gathered = 0;
  if (kept.ndim() > kMaxDims) {
    // Too many dimensions to index in a kernel: gather into [outputs, n] first (the kept
    // dimensions in output order, so output o is row o).
    for (const common::ReduceDim& d : plan.kept) checked_int32(d.n, "ArgReduce", "a gathered dimension");
    gathered = (static_cast<size_t>(outputs * n) * sizeof(T) + 255) / 256 * 256;
  }
  const bool rows = stride == 1 || outputs < kFewOutputs || gathered > 0;
  int64_t splits = 1;
  if (rows) {
    const int64_t resident = static_cast<int64_t>(device_props().multiProcessorCount) * 8;
    if (outputs < resident && n >= 2 * kMinChunk)
      splits = std::clamp<int64_t>(resident / outputs, 1, n / kMinChunk);
  } else {
    // Column walks: enough threads to fill the device, each chunk at least kMinColumnChunk long.
    const int64_t threads = static_cast<int64_t>(device_props().multiProcessorCount) * 2048;
    if (outputs < threads && n >= 2 * kMinColumnChunk)
      splits = std::clamp<int64_t>(threads / outputs, 1, n / kMinColumnChunk);
  }
  const int64_t chunk = ceil_div(n, splits);
  splits = ceil_div(n, chunk);
  const size_t partial_v =
      splits > 1 ? (static_cast<size_t>(outputs * splits) * sizeof(C) + 255) / 256 * 256 : 0;
  const size_t partial_i = splits > 1 ? static_cast<size_t>(outputs * splits) * sizeof(uint32_t) : 0;
  char* tmp = nullptr;
  if (gathered + partial_v + partial_i > 0)
    tmp = static_cast<char*>(scratch(s, gathered + partial_v + partial_i));
  if (gathered > 0) {
    Shape shape;
    Strides strides;
    for (const common::ReduceDim& d : plan.kept) {
      shape.push_back(static_cast<int32_t>(d.n));
      strides.push_back(d.in_stride);
    }
    shape.push_back(static_cast<int32_t>(n));
    strides.push_back(stride);
    copy_strided(in.desc()->data_ptr, in.dtype(), shape, strides, tmp, in.dtype(), cs);
    src = reinterpret_cast<const T*>(tmp);
    stride = 1;
    kept = HostLayout<2>();
    kept.push(outputs, [&](int k) { return k == 0 ? n : int64_t{1}; });
  }
  C* pv = reinterpret_cast<C*>(tmp + gathered);
  uint32_t* pi = reinterpret_cast<uint32_t*>(tmp + gathered + partial_v);
  const Strided<2> k = device_layout(kept);
  if (rows) {
    arg_rows<T, kMax><<<grid_for(outputs * splits * kBlock, kBlock), kBlock, 0, cs>>>(
        src, dst, pv, pi, k, outputs, n, stride, chunk, splits);
    check_launch("ArgReduce");
    if (splits > 1) {
      arg_combine<T, kMax>
          <<<grid_for(outputs, kBlock), kBlock, 0, cs>>>(src, dst, pv, pi, k, outputs, splits);
      check_launch("ArgReduce");
    }
    return;
  }
  arg_columns<T, kMax><<<grid_for(outputs * splits, kBlock), kBlock, 0, cs>>>(src, dst, pv, pi, k, outputs, n,
                                                                            stride, chunk, splits);
  check_launch("ArgReduce");
  if (splits > 1) {
    arg_combine<T, kMax><<<grid_for(outputs, kBlock), kBlock, 0, cs>>>(src, dst, pv, pi, k, outputs, splits);
    check_launch("ArgReduce");
  }
}

}  // namespace
}  // namespace cuda

void ArgReduce::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  cudaStream_t cs = cuda::stream_of(stream());
  if (in.shape()[axis_] == 1) {
    cuda::check(cudaMemsetAsync(out.desc()->data_ptr, 0, out.nbytes(), cs), "ArgReduce");
    return;
  }
  cuda::dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op_) {
      case Op::argmax: return cuda::arg_reduce<T, true>(in, out, axis_, stream());
      case Op::argmin: return cuda::arg_reduce<T, false>(in, out, axis_, stream());
    }
  });
}

}  // namespace braid
