// Scan::eval_gpu: running sum, product, max, min or logaddexp along one axis of a row-contiguous
// input (others are gathered first), seen as [outer, n, inner]:
//  - inner == 1 and long rows: a block per row scans tiles of kBlock * kItems elements with
//    CUB's BlockScan, carrying the running total from tile to tile.
//  - otherwise: a thread per (outer, inner) line walks the axis; adjacent threads read adjacent
//    addresses when inner > 1.
// Integers accumulate in unsigned types, so overflow wraps as in the output type.
#include <cub/block/block_scan.cuh>

#include <cmath>

#include "backend/common/reduce_plan.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/elementwise_kernels.cuh"  // the element-wise functors, complex64 included
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kItems = 4;
constexpr int64_t kMinBlockRow = 64;  // shorter rows take a thread each

// Integer limits on the device (std::numeric_limits is host-only without relaxed constexpr).
template <typename T>
__device__ __forceinline__ T int_lowest() {
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return T(0);
  } else {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(1) << (sizeof(T) * 8 - 1));
  }
}
template <typename T>
__device__ __forceinline__ T int_highest() {
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else {
    return static_cast<T>(~int_lowest<T>());
  }
}

template <typename In>
using ArithAcc = std::conditional_t<std::is_integral_v<In>,
                                    std::conditional_t<sizeof(In) == 8, uint64_t, uint32_t>, compute_t<In>>;

template <typename In>
struct SumScan {
  using Acc = ArithAcc<In>;
  __device__ static Acc init() { return Acc(0); }
  __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

template <typename In>
struct ProdScan {
  using Acc = ArithAcc<In>;
  __device__ static Acc init() { return Acc(1); }
  __device__ Acc operator()(Acc a, Acc b) const { return a * b; }
};

// NaN propagates; complex64 compares lexicographically and is NaN when either part is (the
// earlier NaN wins, which keeps the operator associative).
template <typename In, bool kMax>
struct ExtremeScan {
  using Acc = compute_t<In>;
  __device__ static Acc init() {
    if constexpr (is_complex_v<Acc>) {
      return kMax ? Acc(-INFINITY, -INFINITY) : Acc(INFINITY, INFINITY);
    } else if constexpr (std::is_floating_point_v<Acc>) {
      return static_cast<Acc>(kMax ? -INFINITY : INFINITY);
    } else {
      return kMax ? int_lowest<Acc>() : int_highest<Acc>();
    }
  }
  __device__ Acc operator()(Acc a, Acc b) const {
    bool take = kMax ? (b > a) : (b < a);
    if constexpr (std::is_floating_point_v<Acc>) take = take || (b != b && a == a);
    if constexpr (is_complex_v<Acc>) {
      const bool a_nan = a.re != a.re || a.im != a.im;
      take = !a_nan && (take || b.re != b.re || b.im != b.im);
    }
    return take ? b : a;
  }
};

// log(exp(a) + exp(b)) without overflow, each step the element-wise logaddexp (for complex64,
// MLX's: the lexicographically larger operand factored out); -inf is the identity.
template <typename In>
struct LogAddExpScan {
  using Acc = std::conditional_t<is_complex_v<compute_t<In>>, compute_t<In>,
                                 std::conditional_t<std::is_same_v<In, double>, double, float>>;
  __device__ static Acc init() { return Acc(-INFINITY); }
  __device__ Acc operator()(Acc a, Acc b) const { return ew::LogAddExp{}(a, b); }
};

// The conversion to the output; integer outputs of a float scan store infinities as the
// type's limits, as the CPU does.
template <typename Out, typename Acc>
__device__ __forceinline__ Out store(Acc a) {
  if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool> && std::is_floating_point_v<Acc>) {
    if (a != a) return Out(0);
    if (a >= static_cast<Acc>(int_highest<Out>())) return int_highest<Out>();
    if (a <= static_cast<Acc>(int_lowest<Out>())) return int_lowest<Out>();
  }
  return from_compute<Out>(a);
}

template <typename Op, typename In>
__device__ __forceinline__ typename Op::Acc load(In x) {
  return static_cast<typename Op::Acc>(to_compute(x));
}

// Hands each tile the running total of the tiles before it.
template <typename Op>
struct Carry {
  using Acc = typename Op::Acc;
  Acc total;
  __device__ Acc operator()(Acc tile) {
    const Acc before = total;
    total = Op()(total, tile);
    return before;
  }
};

// A block per row of n contiguous elements (rows [0, rows)).
template <typename Op, typename In, typename Out>
__global__ void scan_rows(const In* __restrict__ src, Out* __restrict__ dst, int64_t rows, int64_t n,
                          bool reverse, bool inclusive) {
  using Acc = typename Op::Acc;
  using BlockScan = cub::BlockScan<Acc, kBlock>;
  __shared__ typename BlockScan::TempStorage temp;
  constexpr int64_t kTile = static_cast<int64_t>(kBlock) * kItems;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const In* p = src + row * n;
    Out* o = dst + row * n;
    Carry<Op> carry{Op::init()};
    for (int64_t t0 = 0; t0 < n; t0 += kTile) {
      Acc items[kItems];
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const int64_t i = t0 + threadIdx.x * kItems + j;  // position in scan order
        items[j] = i < n ? load<Op>(p[reverse ? n - 1 - i : i]) : Op::init();
      }
      if (inclusive) {
        BlockScan(temp).InclusiveScan(items, items, Op(), carry);
      } else {
        BlockScan(temp).ExclusiveScan(items, items, Op(), carry);
      }
      __syncthreads();  // temp is reused by the next tile
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const int64_t i = t0 + threadIdx.x * kItems + j;
        if (i < n) o[reverse ? n - 1 - i : i] = store<Out>(items[j]);
      }
    }
  }
}

// A thread per line (outer index, inner index) walking the axis.
template <typename Op, typename In, typename Out>
__global__ void scan_lines(const In* __restrict__ src, Out* __restrict__ dst, int64_t outer, int64_t n,
                           int64_t inner, bool reverse, bool inclusive) {
  using Acc = typename Op::Acc;
  for (int64_t line = thread_index(); line < outer * inner; line += thread_count()) {
    const int64_t ob = line / inner, ib = line - ob * inner;
    const int64_t base = ob * n * inner + ib;
    Acc acc = Op::init();
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = base + (reverse ? n - 1 - k : k) * inner;
      if (inclusive) {
        acc = Op()(acc, load<Op>(src[at]));
        dst[at] = store<Out>(acc);
      } else {
        dst[at] = store<Out>(acc);
        acc = Op()(acc, load<Op>(src[at]));
      }
    }
  }
}

template <typename Op, typename In, typename Out>
void scan_typed(const In* src, Out* dst, const common::AxisSplit& sp, bool reverse, bool inclusive,
                cudaStream_t cs) {
  if (sp.inner == 1 && sp.n >= kMinBlockRow) {
    scan_rows<Op, In, Out><<<grid_for(sp.outer * kBlock, kBlock), kBlock, 0, cs>>>(src, dst, sp.outer, sp.n,
                                                                                   reverse, inclusive);
  } else {
    scan_lines<Op, In, Out><<<grid_for(sp.outer * sp.inner, kBlock), kBlock, 0, cs>>>(
        src, dst, sp.outer, sp.n, sp.inner, reverse, inclusive);
  }
  check_launch("Scan");
}

}  // namespace
}  // namespace cuda

void Scan::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  cudaStream_t cs = cuda::stream_of(stream());
  const void* src = in.desc()->data_ptr;
  if (!in.flags().row_contiguous) {
    // Gather into a row-contiguous copy first (broadcast and transposed inputs).
    void* tmp = cuda::scratch(stream(), out.size() * in.itemsize());
    cuda::copy_strided(in.desc()->data_ptr, in.dtype(), in.shape(), in.strides(), tmp, in.dtype(), cs);
    src = tmp;
  }
  const common::AxisSplit sp = common::split_axis(in.shape(), axis_);
  cuda::dispatch_dtype(in.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    const In* s = static_cast<const In*>(src);
    void* d = out.desc()->data_ptr;
    switch (op_) {
      case Op::sum:
        if constexpr (std::is_same_v<In, bool>) {
          return cuda::scan_typed<cuda::SumScan<In>>(s, static_cast<int32_t*>(d), sp, reverse_, inclusive_,
                                                     cs);
        } else {
          return cuda::scan_typed<cuda::SumScan<In>>(s, static_cast<In*>(d), sp, reverse_, inclusive_, cs);
        }
      case Op::prod:
        return cuda::scan_typed<cuda::ProdScan<In>>(s, static_cast<In*>(d), sp, reverse_, inclusive_, cs);
      case Op::max:
        return cuda::scan_typed<cuda::ExtremeScan<In, true>>(s, static_cast<In*>(d), sp, reverse_, inclusive_,
                                                             cs);
      case Op::min:
        return cuda::scan_typed<cuda::ExtremeScan<In, false>>(s, static_cast<In*>(d), sp, reverse_,
                                                              inclusive_, cs);
      case Op::logaddexp:
        return cuda::scan_typed<cuda::LogAddExpScan<In>>(s, static_cast<In*>(d), sp, reverse_, inclusive_,
                                                         cs);
    }
  });
}

}  // namespace braid
