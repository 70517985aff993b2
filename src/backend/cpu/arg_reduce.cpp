// ArgReduce::eval_cpu: the index of the first maximum (minimum) along one axis, as MLX's CPU
// computes it: start from element 0 and move only to a strictly better element. So a NaN
// first element stays, and later NaNs never win (no comparison with them is true).
//  - rows (the axis has unit stride): outputs in parallel; real types find the extreme with
//    vector lanes, then its first position (rows with a NaN take the sequential loop).
//  - columns (a kept dimension has unit stride): a block of adjacent outputs keeps a best value
//    and index each while the rows along the axis stream past.
//  - anything else: the sequential loop with strides.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

#include "backend/common/reduce_plan.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using cpu::compute_t;

constexpr int64_t kChunk = 1 << 15;  // elements per task
constexpr int64_t kColBlock = 256;   // outputs per column task
constexpr int kLanes = 16;

template <typename T, bool kMax>
struct Better {
  using C = compute_t<T>;
  static C load(T x) { return static_cast<C>(x); }
  // b replaces a (strictly better).
  static bool test(C b, C a) {
    if constexpr (kMax) {
      return b > a;
    } else {
      return b < a;
    }
  }
};

template <typename T, bool kMax>
uint32_t sequential(const T* p, int64_t n, int64_t stride) {
  using B = Better<T, kMax>;
  auto best = B::load(p[0]);
  uint32_t idx = 0;
  for (int64_t i = 1; i < n; ++i) {
    const auto x = B::load(p[i * stride]);
    if (B::test(x, best)) {
      best = x;
      idx = static_cast<uint32_t>(i);
    }
  }
  return idx;
}

// A contiguous row: the extreme by lanes (vectorized), then its first occurrence. Equal to the
// sequential loop when the row has no NaN; rows with one fall back to it.
template <typename T, bool kMax>
uint32_t contiguous(const T* p, int64_t n) {
  using B = Better<T, kMax>;
  using C = compute_t<T>;
  if constexpr (cpu::is_complex_v<T>) {
    return sequential<T, kMax>(p, n, 1);
  } else {
    if (n < 2 * kLanes) return sequential<T, kMax>(p, n, 1);
    C lanes[kLanes];
    int32_t nan[kLanes] = {};
    for (int j = 0; j < kLanes; ++j) lanes[j] = B::load(p[j]);
    int64_t i = kLanes;
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        const C x = B::load(p[i + j]);
        lanes[j] = B::test(x, lanes[j]) ? x : lanes[j];
        if constexpr (std::is_floating_point_v<C>) nan[j] |= (x != x);
      }
    }
    C best = lanes[0];
    bool any_nan = false;
    for (int j = 0; j < kLanes; ++j) {
      best = B::test(lanes[j], best) ? lanes[j] : best;
      any_nan |= nan[j] != 0 || lanes[j] != lanes[j];
    }
    for (; i < n; ++i) {
      const C x = B::load(p[i]);
      best = B::test(x, best) ? x : best;
      any_nan |= x != x;
    }
    if (any_nan) return sequential<T, kMax>(p, n, 1);
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes) {
      int hit = 0;
      for (int j = 0; j < kLanes; ++j) hit |= B::load(p[k + j]) == best;
      if (hit) break;
    }
    for (; k < n; ++k) {
      if (B::load(p[k]) == best) return static_cast<uint32_t>(k);
    }
    return 0;
  }
}

template <typename T, bool kMax>
void arg_reduce(const T* src, uint32_t* dst, const common::ReducePlan& plan) {
  using B = Better<T, kMax>;
  using C = compute_t<T>;
  const int64_t n = plan.count;
  const int64_t rs = plan.reduced.back().in_stride;
  cpu::StridedLayout<2> kept;
  for (const common::ReduceDim& d : plan.kept) {
    kept.push(d.n, [&](int k) { return k == 0 ? d.in_stride : d.out_stride; });
  }
  if (rs != 1 && kept.ndim() > 0 && kept.strides[0].back() == 1) {
    // Columns: the innermost kept dimension has unit stride.
    const int64_t width = kept.shape.back();
    const int64_t out_stride = kept.strides[1].back();
    const int64_t batches = plan.outputs / width;
    const int64_t blocks = (width + kColBlock - 1) / kColBlock;
    cpu::StridedLayout<2> batch = kept;
    batch.shape.pop_back();
    batch.strides[0].pop_back();
    batch.strides[1].pop_back();
    const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, n * std::min(width, kColBlock)));
    detail::parallel_for(batches * blocks, grain, [&](int64_t b, int64_t e) {
      C best[kColBlock];
      uint32_t idx[kColBlock];
      for (int64_t task = b; task < e; ++task) {
        const int64_t bt = task / blocks, c0 = (task % blocks) * kColBlock;
        const int64_t cw = std::min(kColBlock, width - c0);
        batch.for_each_run(bt, bt + 1, [&](const std::array<int64_t, 2>& off, int64_t) {
          const T* p = src + off[0] + c0;
          for (int64_t j = 0; j < cw; ++j) {
            best[j] = B::load(p[j]);
            idx[j] = 0;
          }
          for (int64_t r = 1; r < n; ++r) {
            const T* row = p + r * rs;
            for (int64_t j = 0; j < cw; ++j) {
              const C x = B::load(row[j]);
              const bool take = B::test(x, best[j]);
              best[j] = take ? x : best[j];
              idx[j] = take ? static_cast<uint32_t>(r) : idx[j];
            }
          }
          uint32_t* o = dst + off[1] + c0 * out_stride;
          for (int64_t j = 0; j < cw; ++j) o[j * out_stride] = idx[j];
        });
      }
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kChunk / n);
  detail::parallel_for(plan.outputs, grain, [&](int64_t b, int64_t e) {
    kept.for_each_run(b, e, [&](const std::array<int64_t, 2>& off, int64_t len) {
      const int64_t is = kept.inner_stride(0), os = kept.inner_stride(1);
      for (int64_t t = 0; t < len; ++t) {
        const T* p = src + off[0] + t * is;
        dst[off[1] + t * os] = rs == 1 ? contiguous<T, kMax>(p, n) : sequential<T, kMax>(p, n, rs);
      }
    });
  });
}

}  // namespace

void ArgReduce::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  uint32_t* dst = static_cast<uint32_t*>(out.desc()->data_ptr);
  const common::ReducePlan plan = common::make_reduce_plan(in, out, {axis_});
  if (plan.reduced.empty() || plan.count <= 1) {
    std::fill(dst, dst + out.size(), 0u);
    return;
  }
  cpu::dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(in.desc()->data_ptr);
    switch (op_) {
      case Op::argmax: return arg_reduce<T, true>(src, dst, plan);
      case Op::argmin: return arg_reduce<T, false>(src, dst, plan);
    }
  });
}

}  // namespace braid
