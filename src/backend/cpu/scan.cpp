// Scan::eval_cpu: running sum, product, max, min or logaddexp along one axis.
//  - rows (the axis has unit stride in and out): a sequential loop per row, rows in parallel.
//  - columns (the innermost other dimension has unit stride in and out): blocks of adjacent
//    columns carry one accumulator each while the rows along the axis stream past (vectorized).
//  - anything else: the sequential loop with strides.
// Integers accumulate in unsigned types, so overflow wraps as in the output type.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "backend/common/elementwise_ops.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using cpu::compute_t;

constexpr int64_t kChunk = 1 << 15;  // elements per task
constexpr int64_t kColBlock = 256;   // columns per column task

template <typename T>
using Wide = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// Real types and complex64 in their compute type; integers and bool in an unsigned type.
template <typename In>
using ArithAcc = std::conditional_t<std::is_integral_v<In>, Wide<In>, compute_t<In>>;

template <typename In>
struct SumScan {
  using Acc = ArithAcc<In>;
  static Acc init() { return Acc(0); }
  static Acc step(Acc a, In x) { return a + static_cast<Acc>(x); }
};

template <typename In>
struct ProdScan {
  using Acc = ArithAcc<In>;
  static Acc init() { return Acc(1); }
  static Acc step(Acc a, In x) { return a * static_cast<Acc>(x); }
};

// NaN propagates (a NaN accumulator is never replaced); complex64 compares lexicographically
// and is NaN when either part is.
template <typename In, bool kMax>
struct ExtremeScan {
  using Acc = compute_t<In>;
  static Acc init() {
    if constexpr (cpu::is_complex_v<In>) {
      const float inf = std::numeric_limits<float>::infinity();
      return kMax ? Acc(-inf, -inf) : Acc(inf, inf);
    } else if constexpr (std::is_floating_point_v<Acc>) {
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else {
      return kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
  }
  static Acc step(Acc a, In in) {
    const Acc x = static_cast<Acc>(in);
    bool take;
    if constexpr (kMax) {
      take = x > a;
    } else {
      take = x < a;
    }
    if constexpr (std::is_floating_point_v<Acc>) take = take || (x != x && a == a);
    if constexpr (cpu::is_complex_v<In>) {
      take = !ew::is_nan(a) && (take || ew::is_nan(x));
    }
    return take ? x : a;
  }
};

// log(exp(a) + exp(b)) without overflow, each step the element-wise logaddexp (for complex64,
// MLX's: the lexicographically larger operand factored out); -inf is the identity.
template <typename In>
struct LogAddExpScan {
  using Acc = std::conditional_t<cpu::is_complex_v<In>, compute_t<In>,
                                 std::conditional_t<std::is_same_v<In, double>, double, float>>;
  static Acc init() { return Acc(-std::numeric_limits<float>::infinity()); }
  static Acc step(Acc a, In in) { return ew::LogAddExp{}(a, static_cast<Acc>(in)); }
};

// The conversion to the output; a logcumsumexp of integers stores its infinities as the
// type's limits (a float-to-int conversion of them is undefined).
template <typename Out, typename Acc>
Out store(Acc a) {
  if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool> && std::is_floating_point_v<Acc>) {
    if (a != a) return Out(0);
    if (a >= static_cast<Acc>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
    if (a <= static_cast<Acc>(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
  }
  return cpu::convert<Out>(a);
}

template <typename Op, typename In, typename Out>
void scan_typed(const array& in, array& out, int axis, bool reverse, bool inclusive) {
  using Acc = typename Op::Acc;
  const In* src = static_cast<const In*>(in.desc()->data_ptr);
  Out* dst = static_cast<Out*>(out.desc()->data_ptr);
  const int64_t n = in.shape()[axis];
  // Reverse scans walk the axis backwards: start at its last element, negative strides.
  int64_t is = in.strides()[axis], os = out.strides()[axis];
  int64_t in_base = 0, out_base = 0;
  if (reverse) {
    in_base = (n - 1) * is;
    out_base = (n - 1) * os;
    is = -is;
    os = -os;
  }
  cpu::StridedLayout<2> others;
  for (int i = 0; i < static_cast<int>(in.ndim()); ++i) {
    if (i != axis)
      others.push(in.shape()[i], [&](int k) { return k == 0 ? in.strides()[i] : out.strides()[i]; });
  }
  const int64_t lines = others.count();
  auto line = [&](const In* p, Out* o, int64_t ps, int64_t po) {
    Acc acc = Op::init();
    for (int64_t r = 0; r < n; ++r) {
      if (inclusive) {
        acc = Op::step(acc, p[r * ps]);
        o[r * po] = store<Out>(acc);
      } else {
        o[r * po] = store<Out>(acc);
        acc = Op::step(acc, p[r * ps]);
      }
    }
  };
  const bool columns = std::abs(is) != 1 && others.ndim() > 0 && others.strides[0].back() == 1 &&
                       others.strides[1].back() == 1;
  if (!columns) {
    const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, n));
    detail::parallel_for(lines, grain, [&](int64_t b, int64_t e) {
      others.for_each_run(b, e, [&](const std::array<int64_t, 2>& off, int64_t len) {
        for (int64_t t = 0; t < len; ++t) {
          line(src + in_base + off[0] + t * others.inner_stride(0),
               dst + out_base + off[1] + t * others.inner_stride(1), is, os);
        }
      });
    });
    return;
  }
  const int64_t width = others.shape.back();
  const int64_t blocks = (width + kColBlock - 1) / kColBlock;
  cpu::StridedLayout<2> batch = others;
  batch.shape.pop_back();
  batch.strides[0].pop_back();
  batch.strides[1].pop_back();
  const int64_t batches = lines / width;
  const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, n * std::min(width, kColBlock)));
  detail::parallel_for(batches * blocks, grain, [&](int64_t b, int64_t e) {
    Acc acc[kColBlock];
    for (int64_t task = b; task < e; ++task) {
      const int64_t bt = task / blocks, c0 = (task % blocks) * kColBlock;
      const int64_t cw = std::min(kColBlock, width - c0);
      batch.for_each_run(bt, bt + 1, [&](const std::array<int64_t, 2>& off, int64_t) {
        const In* p = src + in_base + off[0] + c0;
        Out* o = dst + out_base + off[1] + c0;
        for (int64_t j = 0; j < cw; ++j) acc[j] = Op::init();
        for (int64_t r = 0; r < n; ++r) {
          const In* pr = p + r * is;
          Out* orow = o + r * os;
          if (inclusive) {
            for (int64_t j = 0; j < cw; ++j) {
              acc[j] = Op::step(acc[j], pr[j]);
              orow[j] = store<Out>(acc[j]);
            }
          } else {
            for (int64_t j = 0; j < cw; ++j) {
              orow[j] = store<Out>(acc[j]);
              acc[j] = Op::step(acc[j], pr[j]);
            }
          }
        }
      });
    }
  });
}

}  // namespace

void Scan::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  cpu::dispatch_dtype(in.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    switch (op_) {
      case Op::sum:
        if constexpr (std::is_same_v<In, bool>) {
          return scan_typed<SumScan<In>, In, int32_t>(in, out, axis_, reverse_, inclusive_);
        } else {
          return scan_typed<SumScan<In>, In, In>(in, out, axis_, reverse_, inclusive_);
        }
      case Op::prod: return scan_typed<ProdScan<In>, In, In>(in, out, axis_, reverse_, inclusive_);
      case Op::max: return scan_typed<ExtremeScan<In, true>, In, In>(in, out, axis_, reverse_, inclusive_);
      case Op::min: return scan_typed<ExtremeScan<In, false>, In, In>(in, out, axis_, reverse_, inclusive_);
      case Op::logaddexp: return scan_typed<LogAddExpScan<In>, In, In>(in, out, axis_, reverse_, inclusive_);
    }
  });
}

}  // namespace braid
