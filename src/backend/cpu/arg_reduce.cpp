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
#include "backend/cpu/reduce_simd.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using cpu::compute_t;

constexpr int64_t kChunk = 1 << 15;     // elements per task
constexpr int64_t kColBlock = 1024;     // outputs per column task
constexpr int64_t kFewTasks = 64;       // below this many column tasks, the rows are split too
constexpr uint32_t kNone = UINT32_MAX;  // index of an empty split
constexpr int kLanes = 16;

// The value every non-NaN element beats or ties: where a split of the rows starts.
template <typename T, bool kMax>
compute_t<T> worst() {
  using C = compute_t<T>;
  if constexpr (std::is_floating_point_v<C>) {
    return kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  } else if constexpr (cpu::is_complex_v<C>) {
    return C();  // complex64 never splits
  } else {
    return kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
}

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
  } else if constexpr (cpu::simd::has_v<T>) {
    const T best = cpu::simd::extreme_dispatched<T, kMax>(p, n, p[0]);
    if (best != best) return sequential<T, kMax>(p, n, 1);
    return static_cast<uint32_t>(cpu::simd::find_first(p, n, best));
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
    const int64_t cols = std::min(width, kColBlock);
    cpu::StridedLayout<2> batch = kept;
    batch.shape.pop_back();
    batch.strides[0].pop_back();
    batch.strides[1].pop_back();
    // Few blocks: the rows are split too (not for complex64, whose NaNs keep the plain loop).
    int64_t splits = 1;
    if (!cpu::is_complex_v<T> && batches * blocks < kFewTasks) {
      splits =
          std::clamp<int64_t>(n * cols / kChunk, 1, (kFewTasks + batches * blocks - 1) / (batches * blocks));
    }
    const int64_t rows_per_split = (n + splits - 1) / splits;
    splits = (n + rows_per_split - 1) / rows_per_split;
    const int64_t tasks = batches * blocks * splits;
    std::unique_ptr<C[]> part_best(splits > 1 ? new C[static_cast<size_t>(tasks * cols)] : nullptr);
    std::unique_ptr<uint32_t[]> part_idx(splits > 1 ? new uint32_t[static_cast<size_t>(tasks * cols)]
                                                    : nullptr);
    const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, rows_per_split * cols));
    detail::parallel_for(tasks, grain, [&](int64_t b, int64_t e) {
      std::unique_ptr<C[]> best_buf(new C[static_cast<size_t>(cols)]);
      std::unique_ptr<uint32_t[]> idx_buf(new uint32_t[static_cast<size_t>(cols)]);
      for (int64_t task = b; task < e; ++task) {
        const int64_t split = task % splits, blk = (task / splits) % blocks, bt = task / (splits * blocks);
        const int64_t c0 = blk * kColBlock, cw = std::min(kColBlock, width - c0);
        const int64_t r0 = split * rows_per_split, r1 = std::min(n, r0 + rows_per_split);
        C* best = splits > 1 ? part_best.get() + task * cols : best_buf.get();
        uint32_t* idx = splits > 1 ? part_idx.get() + task * cols : idx_buf.get();
        batch.for_each_run(bt, bt + 1, [&](const std::array<int64_t, 2>& off, int64_t) {
          const T* p = src + off[0] + c0;
          int64_t r = r0;
          if (split == 0) {
            // MLX's start: element 0 (a NaN there stays).
            for (int64_t j = 0; j < cw; ++j) {
              best[j] = B::load(p[j]);
              idx[j] = 0;
            }
            ++r;
          } else {
            // Later splits start empty: only a non-NaN element better than the worst fills them.
            for (int64_t j = 0; j < cw; ++j) {
              best[j] = worst<T, kMax>();
              idx[j] = kNone;
            }
          }
          for (; r < r1; ++r) {
            const T* row = p + r * rs;
            if constexpr (cpu::is_complex_v<T>) {
              for (int64_t j = 0; j < cw; ++j) {
                const C x = B::load(row[j]);
                const bool take = B::test(x, best[j]);
                best[j] = take ? x : best[j];
                idx[j] = take ? static_cast<uint32_t>(r) : idx[j];
              }
            } else {
              cpu::simd::arg_row<T, C, kMax>(best, idx, row, cw, static_cast<uint32_t>(r));
            }
          }
          if (splits == 1) {
            uint32_t* o = dst + off[1] + c0 * out_stride;
            for (int64_t j = 0; j < cw; ++j) o[j * out_stride] = idx[j];
          }
        });
      }
    });
    if (splits == 1) return;
    // In row order: a NaN start stays; a later split wins only when strictly better.
    for (int64_t bt = 0; bt < batches; ++bt) {
      batch.for_each_run(bt, bt + 1, [&](const std::array<int64_t, 2>& off, int64_t) {
        for (int64_t blk = 0; blk < blocks; ++blk) {
          const int64_t c0 = blk * kColBlock, cw = std::min(kColBlock, width - c0);
          const int64_t t0 = (bt * blocks + blk) * splits;
          for (int64_t j = 0; j < cw; ++j) {
            C b = part_best[t0 * cols + j];
            uint32_t i = part_idx[t0 * cols + j];
            for (int64_t sp = 1; sp < splits && b == b; ++sp) {
              const C x = part_best[(t0 + sp) * cols + j];
              if (part_idx[(t0 + sp) * cols + j] != kNone && B::test(x, b)) {
                b = x;
                i = part_idx[(t0 + sp) * cols + j];
              }
            }
            dst[off[1] + (c0 + j) * out_stride] = i;
          }
        }
      });
    }
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
