// ArgReduce::eval_gpu: the index of the first maximum (minimum) along one axis, with MLX's CPU
// rule (start at element 0, move only to a strictly better element). Said another way: a NaN
// first element wins; otherwise the first extreme among the non-NaN elements. The second form
// splits across threads: each keeps its best (value, index), ties going to the lower index.
//  - a warp per output (or per chunk of one, when outputs are few and rows long) when the
//    axis has unit stride, reading 16-byte vectors; a block per output (or chunk) when
//    outputs are few; chunk partials are combined by a second pass.
//  - a thread per output otherwise (adjacent outputs read adjacent addresses), or per
//    16-byte vector of adjacent outputs when the columns allow, or per chunk of the axis when
//    outputs are too few to fill the device, combined by the same second pass.
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
constexpr int64_t kMaxColumnSplits = 65535;  // chunks of a column walk (gridDim.y)
constexpr int64_t kMaxColumnBlocks = 1 << 20;  // blocks of column walkers (gridDim.x)
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
  // The value every real element is at least as good as (a share starts from it).
  __device__ static C worst() {
    if constexpr (is_complex_v<C>) {
      return C();
    } else {
      return kMax ? lowest<C>() : highest<C>();
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

// Visits element r (value x) of a thread's share of one output. Every caller visits its share in
// increasing r, so for real types a strictly better value is all it takes (a tie keeps the
// earlier index), and NaN never compares better: a compare and two selects per element, no
// branch. The best starts at Op::worst() with index kNone; a share whose every element is
// NaN or the worst value itself keeps kNone, which the combining steps pass over (the
// output's answer is then index 0 either way). complex64 keeps the general rule.
template <typename Op, typename T>
__device__ __forceinline__ void visit(T x, int64_t r, compute_t<T>& bv, uint32_t& bi) {
  const compute_t<T> c = Op::load(x);
  if constexpr (is_complex_v<compute_t<T>>) {
    if (!Op::is_nan(c) && Op::takes(c, static_cast<uint32_t>(r), bv, bi)) {
      bv = c;
      bi = static_cast<uint32_t>(r);
    }
  } else {
    const bool take = Op::better(c, bv);
    bv = take ? c : bv;
    bi = take ? static_cast<uint32_t>(r) : bi;
  }
}

// Thread t of a group of `group` threads visits elements [begin, end) of the contiguous row p
// a group apart: the unaligned head and the tail one by one, the body in 16-byte vectors,
// kUnroll of them loaded before any is compared.
template <typename Op, typename T>
__device__ __forceinline__ void scan_contiguous(const T* __restrict__ p, int64_t begin, int64_t end, int t,
                                                int group, compute_t<T>& bv, uint32_t& bi) {
  constexpr int V = vec_width_v<T>;
  constexpr int kUnroll = 4;
  using Vector = Vec<T, V>;
  const int64_t past = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p + begin) % 16 / sizeof(T));
  const int64_t body = begin + min64(end - begin, past == 0 ? 0 : V - past);
  for (int64_t r = begin + t; r < body; r += group) visit<Op>(p[r], r, bv, bi);
  const int64_t nvec = (end - body) / V;
  const Vector* vp = reinterpret_cast<const Vector*>(p + body);
  for (int64_t v0 = t; v0 < nvec; v0 += int64_t{kUnroll} * group) {
    Vector x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (v0 + u * group < nvec) x[u] = vp[v0 + u * group];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (v0 + u * group >= nvec) break;
      const int64_t r = body + (v0 + u * group) * V;
#pragma unroll
      for (int e = 0; e < V; ++e) visit<Op>(x[u].v[e], r + e, bv, bi);
    }
  }
  for (int64_t r = body + nvec * V + t; r < end; r += group) visit<Op>(p[r], r, bv, bi);
}

// As scan_contiguous for a row `stride` elements apart, kUnroll loads in flight.
template <typename Op, typename T>
__device__ __forceinline__ void scan_strided(const T* __restrict__ p, int64_t begin, int64_t end,
                                             int64_t stride, int t, int group, compute_t<T>& bv, uint32_t& bi) {
  constexpr int kUnroll = 4;
  for (int64_t r0 = begin + t; r0 < end; r0 += int64_t{kUnroll} * group) {
    T x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (r0 + u * group < end) x[u] = p[(r0 + u * group) * stride];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (r0 + u * group < end) visit<Op>(x[u], r0 + u * group, bv, bi);
    }
  }
}

// A group of threads per (output, chunk): a warp when the axis has unit stride (16-byte loads,
// no block barrier), else the whole block. With splits == 1 the result goes to dst; otherwise
// chunk c of output o goes to pv/pi[o * splits + c].
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
  const bool per_warp = stride == 1;
  const int group = per_warp ? kWarp : static_cast<int>(blockDim.x);
  const int per_block = static_cast<int>(blockDim.x) / group;
  const int t = static_cast<int>(threadIdx.x) % group;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t tasks = outputs * splits;
  // Every thread of a block takes the same number of steps (the block barriers below).
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * per_block; first < tasks;
       first += static_cast<int64_t>(gridDim.x) * per_block) {
    const int64_t task = first + static_cast<int>(threadIdx.x) / group;
    C bv = Op::worst();
    uint32_t bi = kNone;
    int64_t off[2] = {0, 0};
    if (task < tasks) {
      const int64_t o = task / splits, split = task - o * splits;
      offsets_of<uint64_t>(kept, static_cast<uint64_t>(o), off);
      const int64_t begin = split * chunk, end = min64(n, begin + chunk);
      if (per_warp) {
        scan_contiguous<Op>(src + off[0], begin, end, t, group, bv, bi);
      } else {
        scan_strided<Op>(src + off[0], begin, end, stride, t, group, bv, bi);
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
    if (!per_warp) {
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
      }
    }
    if (t == 0 && task < tasks) {
      if (splits == 1) {
        dst[off[1]] = (Op::is_nan(Op::load(src[off[0]])) || bi == kNone) ? 0u : bi;
      } else {
        pv[task] = bv;
        pi[task] = bi;
      }
    }
    if (!per_warp) __syncthreads();
  }
}

// Combines the chunks of each output in order (a thread per output); chunk c of output o is
// at pv/pi[o * o_step + c * c_step].
template <typename T, bool kMax>
__global__ void arg_combine(const T* __restrict__ src, uint32_t* __restrict__ dst,
                            const compute_t<T>* __restrict__ pv, const uint32_t* __restrict__ pi,
                            Strided<2> kept, int64_t outputs, int64_t splits, int64_t o_step, int64_t c_step) {
  using Op = ArgOp<T, kMax>;
  for (int64_t o = thread_index(); o < outputs; o += thread_count()) {
    int64_t off[2];
    offsets_of<uint64_t>(kept, static_cast<uint64_t>(o), off);
    compute_t<T> bv = pv[o * o_step];
    uint32_t bi = pi[o * o_step];
    for (int64_t c = 1; c < splits; ++c) {
      const int64_t at = o * o_step + c * c_step;
      if (Op::takes(pv[at], pi[at], bv, bi)) {
        bv = pv[at];
        bi = pi[at];
      }
    }
    dst[off[1]] = (Op::is_nan(Op::load(src[off[0]])) || bi == kNone) ? 0u : bi;
  }
}

// A thread per W adjacent outputs, walking (a chunk of) the axis in order, kRows loads in
// flight; adjacent threads on adjacent outputs. W is 1, or a 16-byte vector's elements when the
// outputs' columns are adjacent and every row of them starts 16-byte aligned. Chunk
// y = blockIdx.y of the axis; with one chunk the result goes to dst, otherwise chunk y's best
// goes to pv/pi[y * outputs + o] for arg_combine (coalesced there too).
template <typename T, bool kMax, int W>
__global__ void arg_columns(const T* __restrict__ src, uint32_t* __restrict__ dst, compute_t<T>* __restrict__ pv,
                            uint32_t* __restrict__ pi, Strided<2> kept, int64_t outputs, int64_t n,
                            int64_t stride, int64_t chunk) {
  using Op = ArgOp<T, kMax>;
  using C = compute_t<T>;
  constexpr int kRows = 4;
  using Vector = Vec<T, W>;
  const int64_t split = blockIdx.y, splits = gridDim.y;
  const int64_t begin = split * chunk, end = min64(n, begin + chunk);
  for (int64_t g = thread_index(); g < outputs / W; g += thread_count()) {
    const int64_t o = g * W;
    int64_t off[2];
    offsets_of<uint64_t>(kept, static_cast<uint64_t>(o), off);
    const T* p = src + off[0];
    C bv[W];
    uint32_t bi[W];
#pragma unroll
    for (int e = 0; e < W; ++e) {
      bv[e] = Op::worst();
      bi[e] = kNone;
    }
    int64_t r0 = begin;
    for (; r0 + kRows <= end; r0 += kRows) {
      Vector x[kRows];
#pragma unroll
      for (int u = 0; u < kRows; ++u) x[u] = *reinterpret_cast<const Vector*>(p + (r0 + u) * stride);
#pragma unroll
      for (int u = 0; u < kRows; ++u) {
#pragma unroll
        for (int e = 0; e < W; ++e) visit<Op>(x[u].v[e], r0 + u, bv[e], bi[e]);
      }
    }
    for (; r0 < end; ++r0) {
      const Vector x = *reinterpret_cast<const Vector*>(p + r0 * stride);
#pragma unroll
      for (int e = 0; e < W; ++e) visit<Op>(x.v[e], r0, bv[e], bi[e]);
    }
#pragma unroll
    for (int e = 0; e < W; ++e) {
      if (splits == 1) {
        dst[off[1] + e] = (Op::is_nan(Op::load(p[e])) || bi[e] == kNone) ? 0u : bi[e];
      } else {
        pv[split * outputs + o + e] = bv[e];
        pi[split * outputs + o + e] = bi[e];
      }
    }
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
  const int sms = device_props().multiProcessorCount;
  // Columns read as 16-byte vectors: the unit-stride kept dimension innermost (adjacent
  // outputs), its size a multiple of the vector, and every row of it 16-byte aligned.
  constexpr int V = vec_width_v<T>;
  bool vectors = !rows && V > 1 && !plan.kept.empty() && is_aligned(src, 16) && stride % V == 0;
  if (vectors) {
    const common::ReduceDim& inner = plan.kept.back();
    vectors = inner.in_stride == 1 && inner.out_stride == 1 && inner.n % V == 0;
    for (const common::ReduceDim& d : plan.kept) vectors = vectors && d.in_stride % V == 0;
  }
  int64_t splits = 1;
  if (rows) {
    // Groups resident on the device: warps for unit-stride rows, else blocks of kBlock.
    const int64_t resident = static_cast<int64_t>(sms) * (gathered > 0 || stride == 1 ? 2048 / kWarp : 8);
    if (outputs < resident && n >= 2 * kMinChunk)
      splits = std::clamp<int64_t>(resident / outputs, 1, n / kMinChunk);
  } else {
    // Column walks: enough threads to fill the device, each chunk at least kMinColumnChunk long.
    const int64_t threads = static_cast<int64_t>(sms) * 2048;
    const int64_t walkers = vectors ? outputs / V : outputs;
    if (walkers < threads && n >= 2 * kMinColumnChunk)
      splits = std::clamp<int64_t>(threads / walkers, 1, std::min(n / kMinColumnChunk, kMaxColumnSplits));
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
    const int64_t per_block = stride == 1 ? kBlock / kWarp : 1;
    arg_rows<T, kMax><<<grid_for(ceil_div(outputs * splits, per_block) * kBlock, kBlock), kBlock, 0, cs>>>(
        src, dst, pv, pi, k, outputs, n, stride, chunk, splits);
    check_launch("ArgReduce");
    if (splits > 1) {
      arg_combine<T, kMax>
          <<<grid_for(outputs, kBlock), kBlock, 0, cs>>>(src, dst, pv, pi, k, outputs, splits, splits, 1);
      check_launch("ArgReduce");
    }
    return;
  }
  const int64_t walkers = vectors ? outputs / V : outputs;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(ceil_div(walkers, kBlock), kMaxColumnBlocks)),
                  static_cast<unsigned>(splits));
  if (vectors) {
    arg_columns<T, kMax, V><<<grid, kBlock, 0, cs>>>(src, dst, pv, pi, k, outputs, n, stride, chunk);
  } else {
    arg_columns<T, kMax, 1><<<grid, kBlock, 0, cs>>>(src, dst, pv, pi, k, outputs, n, stride, chunk);
  }
  check_launch("ArgReduce");
  if (splits > 1) {
    arg_combine<T, kMax>
        <<<grid_for(outputs, kBlock), kBlock, 0, cs>>>(src, dst, pv, pi, k, outputs, splits, 1, outputs);
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
