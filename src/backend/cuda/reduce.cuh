// The CUDA reduction engine behind Reduce::eval_gpu (private to reduce*.cu). As on the CPU,
// the input's dimensions are split into kept and reduced ones and each group is collapsed
// (backend/common/reduce_plan.h); then:
//  - rows (the smallest reduced stride is 1, or no dimension has unit stride): a warp per
//    output for short rows, a block per output for long ones, reading 16 bytes at a time
//    along contiguous runs. Few long rows (an all-axes sum, say) are cut into chunks, one block
//    each, enough to fill the device once; a second pass combines the partials.
//  - columns (a kept dimension has unit stride, or rows are very short): a thread per output
//    (or per 16 bytes of adjacent outputs) walks the reduced positions, so a warp reads
//    consecutive addresses. Few outputs split the reduced range over blockIdx.y, and a second
//    pass combines the partials.
// Partials live in the stream's scratch buffer; results never depend on timing (no atomics).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "backend/common/reduce_plan.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;
constexpr int64_t kWarpRowMax = 1024;   // longer rows get a block each
constexpr int64_t kMinColumnRows = 32;  // shorter reductions use a thread per output
constexpr int64_t kMinColumnOutputs = 256;
constexpr int64_t kMinBlockChunk = 4096;  // elements per block when rows are split
constexpr int64_t kMinThreadChunk = 32;   // reduced positions per thread when columns are split
constexpr int64_t kMaxColumnSplits = 65535;
constexpr int64_t kMinRun = 64;  // shorter contiguous runs are read element by element
constexpr int kStage = 128;      // column sums add this many values before folding into the total

// ---- operations ----

// Sums and products accumulate in float when either side is a float, in complex64 for
// complex64, and integers in the unsigned type of the output's width, so overflow wraps
// exactly as the CPU's uint64 total cast to the output.
template <typename In, typename Out>
using ArithAcc = std::conditional_t<
    is_complex_v<In>, complex64,
    std::conditional_t<std::is_same_v<In, double> || std::is_same_v<Out, double>, double,
                       std::conditional_t<is_float_v<In> || is_float_v<Out>, float,
                                          std::conditional_t<sizeof(Out) == 8, uint64_t, uint32_t>>>>;

template <typename In, typename Out>
struct SumOp {
  using Acc = ArithAcc<In, Out>;
  __device__ static Acc init() { return Acc(0); }
  template <typename X>
  __device__ static Acc load(X x) {
    return static_cast<Acc>(to_compute(x));
  }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

template <typename In, typename Out>
struct ProdOp {
  using Acc = ArithAcc<In, Out>;
  __device__ static Acc init() { return Acc(1); }
  template <typename X>
  __device__ static Acc load(X x) {
    return static_cast<Acc>(to_compute(x));
  }
  __device__ static Acc combine(Acc a, Acc b) { return a * b; }
};

// max (kMax) or min. NaN wins, as on the CPU: once a side is NaN, the result is NaN whatever
// the order. complex64 compares lexicographically and is NaN when either part is.
template <typename T, bool kMax>
struct ExtremeOp {
  using Acc = compute_t<T>;
  __device__ static Acc init() {
    if constexpr (is_complex_v<Acc>) {
      return kMax ? Acc(-INFINITY, -INFINITY) : Acc(INFINITY, INFINITY);
    } else {
      return kMax ? lowest<Acc>() : highest<Acc>();
    }
  }
  template <typename X>
  __device__ static Acc load(X x) {
    return static_cast<Acc>(to_compute(x));
  }
  __device__ static Acc combine(Acc a, Acc b) {
    const bool better = kMax ? (b > a) : (b < a);
    if constexpr (std::is_floating_point_v<Acc>) {
      return (better || b != b) ? b : a;
    } else if constexpr (is_complex_v<Acc>) {
      // A NaN part compares false either way, so the lexicographic order alone would skip it.
      if (a.re != a.re || a.im != a.im) return a;
      return (better || b.re != b.re || b.im != b.im) ? b : a;
    } else {
      return better ? b : a;
    }
  }
};

template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int mask) {
  if constexpr (is_complex_v<T>) {
    return T(__shfl_xor_sync(0xffffffffu, v.re, mask), __shfl_xor_sync(0xffffffffu, v.im, mask));
  } else if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_xor_sync(0xffffffffu, static_cast<int>(v), mask));
  } else {
    return __shfl_xor_sync(0xffffffffu, v, mask);
  }
}

// Every lane ends with the warp's total.
template <typename Op, typename Acc>
__device__ __forceinline__ Acc warp_reduce(Acc v) {
#pragma unroll
  for (int m = kWarp / 2; m > 0; m >>= 1) v = Op::combine(v, shfl_xor(v, m));
  return v;
}

// Thread 0 ends with the block's total. Ends with a barrier, so `smem` may be reused at once.
template <typename Op, typename Acc>
__device__ __forceinline__ Acc block_reduce(Acc v, Acc* smem) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_reduce<Op>(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / kWarp) ? smem[lane] : Op::init();
    v = warp_reduce<Op>(v);
  }
  __syncthreads();
  return v;
}

// This thread's share (thread t of nt) of p[0, n): 16-byte loads for the aligned middle, with
// one accumulator per vector lane.
template <typename Op, typename In>
__device__ __forceinline__ typename Op::Acc partial_contiguous(const In* p, int64_t n, int t, int nt) {
  using Acc = typename Op::Acc;
  constexpr int N = 16 / sizeof(In);
  Acc acc = Op::init();
  const int64_t misalign = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) % 16);
  const int64_t head = min64(n, ((16 - misalign) % 16) / static_cast<int64_t>(sizeof(In)));
  for (int64_t i = t; i < head; i += nt) acc = Op::combine(acc, Op::load(p[i]));
  const Vec<In, N>* body = reinterpret_cast<const Vec<In, N>*>(p + head);
  const int64_t nvec = (n - head) / N;
  Acc lanes[N];
#pragma unroll
  for (int j = 0; j < N; ++j) lanes[j] = Op::init();
  // kUnroll loads in flight before any is used.
  for (int64_t v0 = t; v0 < nvec; v0 += static_cast<int64_t>(nt) * kUnroll) {
    Vec<In, N> x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (v0 + u * nt < nvec) x[u] = body[v0 + u * nt];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (v0 + u * nt < nvec) {
#pragma unroll
        for (int j = 0; j < N; ++j) lanes[j] = Op::combine(lanes[j], Op::load(x[u].v[j]));
      }
    }
  }
#pragma unroll
  for (int j = 0; j < N; ++j) acc = Op::combine(acc, lanes[j]);
  for (int64_t i = head + nvec * N + t; i < n; i += nt) acc = Op::combine(acc, Op::load(p[i]));
  return acc;
}

// This thread's share of reduced positions [begin, end) of `red`, starting from p.
template <typename Op, typename Idx, typename In>
__device__ __forceinline__ typename Op::Acc partial_strided(const In* p, const Strided<1>& red, int64_t begin,
                                                            int64_t end, int t, int nt) {
  typename Op::Acc acc = Op::init();
  for (int64_t r = begin + t; r < end; r += nt) {
    int64_t off[1];
    offsets_of<Idx>(red, static_cast<Idx>(r), off);
    acc = Op::combine(acc, Op::load(p[off[0]]));
  }
  return acc;
}

// As partial_strided when the innermost reduced dimension has unit stride: positions
// [begin, end) are walked as contiguous runs along it, each shared out by partial_contiguous.
template <typename Op, typename Idx, typename In>
__device__ __forceinline__ typename Op::Acc partial_runs(const In* p, const Strided<1>& red, int64_t begin,
                                                         int64_t end, int t, int nt) {
  typename Op::Acc acc = Op::init();
  const int64_t run = red.shape[red.ndim - 1];
  for (int64_t r = begin; r < end;) {
    const int64_t inner = r % run;
    const int64_t len = min64(run - inner, end - r);
    int64_t off[1];
    offsets_of<Idx>(red, static_cast<Idx>(r - inner), off);
    acc = Op::combine(acc, partial_contiguous<Op>(p + off[0] + inner, len, t, nt));
    r += len;
  }
  return acc;
}

// How a row kernel walks the reduced positions of one output.
enum class Walk { contiguous, runs, strided };

template <typename Op, typename Idx, Walk kWalk, typename In>
__device__ __forceinline__ typename Op::Acc partial_row(const In* p, const Strided<1>& red, int64_t begin,
                                                        int64_t end, int t, int nt) {
  if constexpr (kWalk == Walk::contiguous) {
    return partial_contiguous<Op>(p + begin, end - begin, t, nt);
  } else if constexpr (kWalk == Walk::runs) {
    return partial_runs<Op, Idx>(p, red, begin, end, t, nt);
  } else {
    return partial_strided<Op, Idx>(p, red, begin, end, t, nt);
  }
}

// ---- kernels ----
// `kept` maps an output index to its input offset (strides[0]) and output offset (strides[1]).

// A warp per output; the rows are whole (no splits).
template <typename Op, typename Idx, Walk kWalk, typename In, typename Out>
__global__ void reduce_rows_warp(const In* __restrict__ src, Out* __restrict__ dst, Strided<2> kept,
                                 int64_t rows, Strided<1> red, int64_t count) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = thread_count() / kWarp;
  for (int64_t row = thread_index() / kWarp; row < rows; row += warps) {
    int64_t off[2];
    offsets_of<Idx>(kept, static_cast<Idx>(row), off);
    typename Op::Acc acc = partial_row<Op, Idx, kWalk>(src + off[0], red, 0, count, lane, kWarp);
    acc = warp_reduce<Op>(acc);
    if (lane == 0) dst[off[1]] = from_compute<Out>(acc);
  }
}

// A block per (output, chunk); chunk `split` of output `row` goes to dst[out_offset + split].
template <typename Op, typename Idx, Walk kWalk, typename In, typename Out>
__global__ void reduce_rows_block(const In* __restrict__ src, Out* __restrict__ dst, Strided<2> kept,
                                  int64_t rows, Strided<1> red, int64_t count, int64_t chunk,
                                  int64_t splits) {
  // Raw storage: a __shared__ array cannot have a constructor (complex64 has one).
  __shared__ alignas(typename Op::Acc) unsigned char smem_raw[kWarp * sizeof(typename Op::Acc)];
  typename Op::Acc* smem = reinterpret_cast<typename Op::Acc*>(smem_raw);
  for (int64_t task = blockIdx.x; task < rows * splits; task += gridDim.x) {
    const int64_t row = task / splits, split = task - row * splits;
    int64_t off[2];
    offsets_of<Idx>(kept, static_cast<Idx>(row), off);
    const int64_t begin = split * chunk, end = min64(count, begin + chunk);
    typename Op::Acc acc =
        partial_row<Op, Idx, kWalk>(src + off[0], red, begin, end, threadIdx.x, blockDim.x);
    acc = block_reduce<Op>(acc, smem);
    if (threadIdx.x == 0) dst[off[1] + split] = from_compute<Out>(acc);
  }
}

// A thread per V adjacent outputs (V > 1 only when they are adjacent in memory too, so one
// 16-byte load feeds all of them), over reduced positions [y * chunk, (y + 1) * chunk) for
// y = blockIdx.y; output k of the V goes to dst[out_offset + k * k_stride + y].
template <typename Op, typename Idx, int V, typename In, typename Out>
__global__ void reduce_columns(const In* __restrict__ src, Out* __restrict__ dst, Strided<2> kept,
                               int64_t outputs, Strided<1> red, int64_t count, int64_t chunk,
                               int64_t k_stride) {
  using Acc = typename Op::Acc;
  const int64_t split = blockIdx.y;
  const int64_t begin = split * chunk, end = min64(count, begin + chunk);
  for (int64_t o = thread_index(); o < outputs; o += thread_count()) {
    int64_t off[2];
    offsets_of<Idx>(kept, static_cast<Idx>(o), off);
    const In* p = src + off[0];
    Acc total[V];
#pragma unroll
    for (int k = 0; k < V; ++k) total[k] = Op::init();
    // Sums add kStage values per lane before folding them into the total.
    for (int64_t r0 = begin; r0 < end; r0 += kStage) {
      const int64_t r1 = min64(end, r0 + kStage);
      Acc acc[V];
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] = Op::init();
      if (red.ndim == 1) {
        const int64_t stride = red.strides[0][0];
#pragma unroll 4
        for (int64_t r = r0; r < r1; ++r) {
          const Vec<In, V> x = *reinterpret_cast<const Vec<In, V>*>(p + r * stride);
#pragma unroll
          for (int k = 0; k < V; ++k) acc[k] = Op::combine(acc[k], Op::load(x.v[k]));
        }
      } else {
        for (int64_t r = r0; r < r1; ++r) {
          int64_t roff[1];
          offsets_of<Idx>(red, static_cast<Idx>(r), roff);
          const Vec<In, V> x = *reinterpret_cast<const Vec<In, V>*>(p + roff[0]);
#pragma unroll
          for (int k = 0; k < V; ++k) acc[k] = Op::combine(acc[k], Op::load(x.v[k]));
        }
      }
#pragma unroll
      for (int k = 0; k < V; ++k) total[k] = Op::combine(total[k], acc[k]);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) dst[off[1] + k * k_stride + split] = from_compute<Out>(total[k]);
  }
}

template <typename Op, typename Out>
__global__ void fill_init(Out* __restrict__ dst, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) dst[i] = from_compute<Out>(Op::init());
}

// ---- host side ----

using Dim = common::ReduceDim;

// The kept dimensions as a kernel layout: input strides as given (or, when `from_output`, the
// output's row-major strides times in_scale), output strides times out_scale.
inline HostLayout<2> kept_layout(const std::vector<Dim>& kept, bool from_output, int64_t in_scale,
                                 int64_t out_scale) {
  HostLayout<2> l;
  for (const Dim& d : kept) {
    const int64_t in = from_output ? d.out_stride * in_scale : d.in_stride;
    l.push(d.n, [&](int k) { return k == 0 ? in : d.out_stride * out_scale; });
  }
  return l;
}

inline HostLayout<1> reduced_layout(const std::vector<Dim>& reduced) {
  HostLayout<1> l;
  for (const Dim& d : reduced) l.push(d.n, [&](int) { return d.in_stride; });
  return l;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks of `kernel` that fit on the whole device at once.
template <typename Kernel>
int64_t resident_blocks(Kernel kernel, int block) {
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0), "Reduce");
  return static_cast<int64_t>(std::max(per_sm, 1)) * device_props().multiProcessorCount;
}

template <typename Op, typename In, typename Out>
class GpuReducer {
 public:
  using Acc = typename Op::Acc;

  GpuReducer(const array& in, array& out, const std::vector<int>& axes, const Stream& stream)
      : in_(in), out_(out), stream_(stream), cu_stream_(stream_of(stream)) {
    common::ReducePlan plan = common::make_reduce_plan(in, out, axes);
    kept_ = std::move(plan.kept);
    reduced_ = std::move(plan.reduced);
    outputs_ = plan.outputs;
    count_ = plan.count;
  }

  void run() {
    Out* dst = static_cast<Out*>(out_.desc()->data_ptr);
    if (count_ == 0) {
      fill_init<Op, Out><<<grid_for(outputs_, kBlock), kBlock, 0, cu_stream_>>>(dst, outputs_);
      check_launch("Reduce");
      return;
    }
    if (outputs_ <= UINT32_MAX && count_ <= UINT32_MAX) {
      run_indexed<uint32_t>(dst);
    } else {
      run_indexed<uint64_t>(dst);
    }
  }

 private:
  enum class Kind { rows_warp, rows_block, columns };
  struct Plan {
    Kind kind = Kind::rows_warp;
    Walk walk = Walk::strided;  // rows: how the reduced positions are read
    int vector = 1;             // columns: adjacent outputs per thread
    int block = kBlock;
    int64_t splits = 1;
    int64_t chunk = 0;
  };

  static size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

  template <typename Idx>
  void run_indexed(Out* dst) {
    const In* src = static_cast<const In*>(in_.desc()->data_ptr);
    HostLayout<2> kept = kept_layout(kept_, false, 1, 1);
    HostLayout<1> red = reduced_layout(reduced_);
    size_t copy_bytes = 0;
    if (kept.ndim() > kMaxDims || red.ndim() > kMaxDims) {
      // Too many dimensions to index in a kernel: gather into [outputs, count] first.
      copy_bytes = round_up(static_cast<size_t>(outputs_ * count_) * sizeof(In));
      kept = HostLayout<2>();
      kept.push(outputs_, [&](int k) { return k == 0 ? count_ : int64_t{1}; });
      red = HostLayout<1>();
      red.push(count_, [](int) { return int64_t{1}; });
    }
    const Plan plan = make_plan<Idx>(kept, red, copy_bytes > 0 ? nullptr : src);
    const size_t partial_bytes =
        plan.splits > 1 ? static_cast<size_t>(outputs_ * plan.splits) * sizeof(Acc) : 0;
    char* tmp = nullptr;
    if (copy_bytes + partial_bytes > 0)
      tmp = static_cast<char*>(scratch(stream_, copy_bytes + partial_bytes));
    if (copy_bytes > 0) {
      gather(tmp);
      src = reinterpret_cast<const In*>(tmp);
    }
    Acc* partial = reinterpret_cast<Acc*>(tmp + copy_bytes);
    pass1<Idx>(plan, src, dst, partial, kept, red);
    if (plan.splits > 1) pass2(plan, partial, dst);
  }

  // `src` is null when the input is gathered first (then it is contiguous and aligned).
  template <typename Idx>
  Plan make_plan(const HostLayout<2>& kept, const HostLayout<1>& red, const In* src) const {
    const bool inner_reduced = red.ndim() > 0 && red.strides[0].back() == 1;
    bool unit_kept = false;
    for (int i = 0; i < kept.ndim(); ++i) unit_kept |= kept.strides[0][i] == 1;
    Plan plan;
    if (count_ < kMinColumnRows || (!inner_reduced && unit_kept && outputs_ >= kMinColumnOutputs)) {
      plan.kind = Kind::columns;
      plan.vector = column_vector(kept, red, src);
      const int64_t threads = outputs_ / plan.vector;
      plan.block = static_cast<int>(std::min<int64_t>(kBlock, ceil_div(threads, kWarp) * kWarp));
      if (count_ >= 2 * kMinThreadChunk) {
        // Enough chunks of the reduced range to fill the device once.
        const int64_t launched = ceil_div(threads, plan.block) * plan.block;
        const int64_t resident = column_resident_threads<Idx>(plan);
        plan.splits =
            std::clamp<int64_t>(resident / launched, 1, std::min(count_ / kMinThreadChunk, kMaxColumnSplits));
      }
      plan.chunk = ceil_div(count_, plan.splits);
      plan.splits = ceil_div(count_, plan.chunk);
      return plan;
    }
    if (red.ndim() == 1 && red.strides[0][0] == 1) {
      plan.walk = Walk::contiguous;
    } else if (inner_reduced && red.shape.back() >= kMinRun) {
      plan.walk = Walk::runs;
    }
    if (count_ <= kWarpRowMax) {
      plan.kind = Kind::rows_warp;
      plan.chunk = count_;
      return plan;
    }
    plan.kind = Kind::rows_block;
    const int64_t resident = rows_resident_blocks<Idx>(plan.walk);
    if (outputs_ < resident && count_ >= 2 * kMinBlockChunk) {
      // Enough chunks to fill the device once, and no more (a partial second wave would cost
      // as much as the first).
      plan.splits = std::clamp<int64_t>(resident / outputs_, 1, count_ / kMinBlockChunk);
    }
    // Chunks of a multiple of 16 elements keep every chunk as aligned as its row.
    plan.chunk = ceil_div(ceil_div(count_, plan.splits), 16) * 16;
    plan.splits = ceil_div(count_, plan.chunk);
    return plan;
  }

  // Adjacent outputs a column thread can read with one 16-byte load: the last kept dimension
  // has unit stride, its size and every other stride are multiples of the vector, and the
  // data is 16-byte aligned.
  static int column_vector(const HostLayout<2>& kept, const HostLayout<1>& red, const In* src) {
    constexpr int V = 16 / sizeof(In);
    if (V == 1 || kept.ndim() == 0 || kept.strides[0].back() != 1 || kept.shape.back() % V != 0) return 1;
    if (src != nullptr && !is_aligned(src, 16)) return 1;
    for (int i = 0; i + 1 < kept.ndim(); ++i) {
      if (kept.strides[0][i] % V != 0) return 1;
    }
    for (int i = 0; i < red.ndim(); ++i) {
      if (red.strides[0][i] % V != 0) return 1;
    }
    return V;
  }

  // The kept layout seen by a column thread of `vector` adjacent outputs.
  static HostLayout<2> vector_layout(const HostLayout<2>& kept, int vector) {
    if (vector == 1) return kept;
    HostLayout<2> l = kept;
    l.shape.back() /= vector;
    l.strides[0].back() *= vector;
    l.strides[1].back() *= vector;
    return l;
  }

  template <typename Idx>
  int64_t column_resident_threads(const Plan& plan) const {
    constexpr int V = 16 / sizeof(In);
    const int64_t blocks = plan.vector == 1
                               ? resident_blocks(reduce_columns<Op, Idx, 1, In, Acc>, plan.block)
                               : resident_blocks(reduce_columns<Op, Idx, V, In, Acc>, plan.block);
    return blocks * plan.block;
  }

  template <typename Idx>
  int64_t rows_resident_blocks(Walk walk) const {
    switch (walk) {
      case Walk::contiguous:
        return resident_blocks(reduce_rows_block<Op, Idx, Walk::contiguous, In, Acc>, kBlock);
      case Walk::runs: return resident_blocks(reduce_rows_block<Op, Idx, Walk::runs, In, Acc>, kBlock);
      case Walk::strided: break;
    }
    return resident_blocks(reduce_rows_block<Op, Idx, Walk::strided, In, Acc>, kBlock);
  }

  void gather(char* tmp) {
    // Kept dimensions first (in order), then the reduced ones: row o is output o's values.
    Shape shape;
    Strides strides;
    for (const Dim& d : kept_) {
      shape.push_back(checked_int32(d.n, "Reduce", "a gathered dimension"));
      strides.push_back(d.in_stride);
    }
    for (const Dim& d : reduced_) {
      shape.push_back(checked_int32(d.n, "Reduce", "a gathered dimension"));
      strides.push_back(d.in_stride);
    }
    copy_strided(in_.desc()->data_ptr, in_.dtype(), shape, strides, tmp, in_.dtype(), cu_stream_);
  }

  // First pass: the whole reduction when splits == 1, else one partial per (output, chunk).
  template <typename Idx>
  void pass1(const Plan& plan, const In* src, Out* dst, Acc* partial, const HostLayout<2>& kept,
             const HostLayout<1>& red) {
    // Partials of output o go to partial[o * splits + chunk]: output strides scaled by splits.
    HostLayout<2> scaled = kept;
    for (auto& s : scaled.strides[1]) s *= plan.splits;
    if (plan.kind == Kind::columns) {
      if (plan.splits > 1) {
        launch_columns<Idx>(plan, src, partial, scaled, red, plan.splits);
      } else {
        launch_columns<Idx>(plan, src, dst, kept, red, 1);
      }
    } else if (plan.splits > 1) {
      launch_rows<Idx>(plan, src, partial, scaled, red);
    } else {
      launch_rows<Idx>(plan, src, dst, kept, red);
    }
    check_launch("Reduce");
  }

  template <typename Idx, typename D>
  void launch_columns(const Plan& plan, const In* src, D* dst, const HostLayout<2>& kept,
                      const HostLayout<1>& red, int64_t k_stride) {
    constexpr int V = 16 / sizeof(In);
    const Strided<2> k = device_layout(vector_layout(kept, plan.vector));
    const Strided<1> r = device_layout(red);
    const int64_t threads = outputs_ / plan.vector;
    if (plan.splits > kMaxColumnSplits)
      throw std::runtime_error("[Reduce] too many column splits for the grid");
    const dim3 grid(grid_for(threads, plan.block), static_cast<unsigned>(plan.splits));
    if (plan.vector == 1) {
      reduce_columns<Op, Idx, 1>
          <<<grid, plan.block, 0, cu_stream_>>>(src, dst, k, threads, r, count_, plan.chunk, k_stride);
    } else {
      reduce_columns<Op, Idx, V>
          <<<grid, plan.block, 0, cu_stream_>>>(src, dst, k, threads, r, count_, plan.chunk, k_stride);
    }
  }

  template <typename Idx, typename D>
  void launch_rows(const Plan& plan, const In* src, D* dst, const HostLayout<2>& kept,
                   const HostLayout<1>& red) {
    switch (plan.walk) {
      case Walk::contiguous: return launch_rows_walk<Idx, Walk::contiguous>(plan, src, dst, kept, red);
      case Walk::runs: return launch_rows_walk<Idx, Walk::runs>(plan, src, dst, kept, red);
      case Walk::strided: return launch_rows_walk<Idx, Walk::strided>(plan, src, dst, kept, red);
    }
  }

  template <typename Idx, Walk kWalk, typename D>
  void launch_rows_walk(const Plan& plan, const In* src, D* dst, const HostLayout<2>& kept,
                        const HostLayout<1>& red) {
    const Strided<2> k = device_layout(kept);
    const Strided<1> r = device_layout(red);
    if (plan.kind == Kind::rows_warp) {
      reduce_rows_warp<Op, Idx, kWalk>
          <<<grid_for(outputs_ * kWarp, kBlock), kBlock, 0, cu_stream_>>>(src, dst, k, outputs_, r, count_);
    } else {
      reduce_rows_block<Op, Idx, kWalk>
          <<<grid_for(outputs_ * plan.splits * kBlock, kBlock), kBlock, 0, cu_stream_>>>(
              src, dst, k, outputs_, r, count_, plan.chunk, plan.splits);
    }
  }

  // Second pass: partial[o * splits + c] holds chunk c of output o; a warp per output combines
  // them in chunk order.
  void pass2(const Plan& plan, const Acc* partial, Out* dst) {
    // Split only when the outputs are few (under a device's worth), so 32-bit indices hold.
    if (outputs_ > UINT32_MAX)
      throw std::runtime_error("[Reduce] split reduction over more than 2^32 outputs");
    HostLayout<1> red;
    red.push(plan.splits, [](int) { return int64_t{1}; });
    const HostLayout<2> kept = kept_layout(kept_, true, plan.splits, 1);
    reduce_rows_warp<Op, uint32_t, Walk::contiguous>
        <<<grid_for(outputs_ * kWarp, kBlock), kBlock, 0, cu_stream_>>>(
            partial, dst, device_layout(kept), outputs_, device_layout(red), plan.splits);
    check_launch("Reduce");
  }

  const array& in_;
  array& out_;
  const Stream& stream_;
  cudaStream_t cu_stream_;
  std::vector<Dim> kept_;
  std::vector<Dim> reduced_;
  int64_t outputs_ = 1;
  int64_t count_ = 1;
};

// MLX's sum and product types on the device types (Reduce::sum_dtype).
template <typename In>
using SumOut = std::conditional_t<
    std::is_same_v<In, bool> || std::is_same_v<In, int8_t> || std::is_same_v<In, int16_t>, int32_t,
    std::conditional_t<std::is_same_v<In, uint8_t> || std::is_same_v<In, uint16_t>, uint32_t, In>>;

}  // namespace

// Entry points, one file each so that they compile in parallel.
void reduce_sum(const array& in, array& out, const std::vector<int>& axes, const Stream& s);
void reduce_prod(const array& in, array& out, const std::vector<int>& axes, const Stream& s);
void reduce_max(const array& in, array& out, const std::vector<int>& axes, const Stream& s);
void reduce_min(const array& in, array& out, const std::vector<int>& axes, const Stream& s);

}  // namespace cuda
}  // namespace braid
