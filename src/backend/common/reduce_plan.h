// How both backends see a reduction: the input's dimensions split into kept and reduced ones,
// size-1 dimensions dropped, reduced ones walked in memory order, each group collapsed (its
// neighbours that walk memory as one dimension merged). The backends then pick rows (the
// innermost reduced dimension has unit stride) or columns (a kept one does) from this plan.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "braid/array.h"

namespace braid::common {

struct ReduceDim {
  int64_t n;
  int64_t in_stride;
  int64_t out_stride;  // 0 for reduced dimensions
};
using ReduceDims = std::vector<ReduceDim>;

inline int64_t count_of(const ReduceDims& dims) {
  int64_t c = 1;
  for (const ReduceDim& d : dims) c *= d.n;
  return c;
}

/// Merges neighbours that walk memory as one dimension (for input and output alike).
inline ReduceDims collapse(const ReduceDims& dims) {
  ReduceDims out;
  for (const ReduceDim& d : dims) {
    if (!out.empty() && out.back().in_stride == d.in_stride * d.n &&
        out.back().out_stride == d.out_stride * d.n) {
      out.back() = {out.back().n * d.n, d.in_stride, d.out_stride};
    } else {
      out.push_back(d);
    }
  }
  return out;
}

struct ReducePlan {
  ReduceDims kept;     // row-major over the outputs
  ReduceDims reduced;  // in memory order (largest stride first)
  int64_t outputs = 1;
  int64_t count = 1;  // reduced positions per output

  /// The innermost reduced dimension has unit stride: each output reads contiguous runs.
  bool inner_reduced() const { return !reduced.empty() && reduced.back().in_stride == 1; }
  /// The kept dimension with unit input stride, or -1.
  int unit_kept() const {
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept[i].in_stride == 1) return static_cast<int>(i);
    }
    return -1;
  }
};

/// The plan of reducing `in` over `axes` (sorted, unique) into `out` (same rank, reduced axes
/// of size 1). An empty input reads nothing: its kept strides are zeroed (they may be any
/// size) and it reduces one empty dimension, so every output is the identity.
inline ReducePlan make_reduce_plan(const array& in, const array& out, const std::vector<int>& axes) {
  ReducePlan p;
  for (size_t i = 0, j = 0; i < in.ndim(); ++i) {
    const bool is_reduced = j < axes.size() && axes[j] == static_cast<int>(i);
    if (is_reduced) ++j;
    if (in.shape()[i] == 1) continue;  // never moves an offset
    if (is_reduced) {
      p.reduced.push_back({in.shape()[i], in.strides()[i], 0});
    } else {
      p.kept.push_back({in.shape()[i], in.strides()[i], out.strides()[i]});
    }
  }
  if (in.size() == 0) {
    for (ReduceDim& d : p.kept) d.in_stride = 0;
    p.reduced.assign(1, ReduceDim{0, 0, 0});
  }
  std::stable_sort(p.reduced.begin(), p.reduced.end(),
                   [](const ReduceDim& a, const ReduceDim& b) { return a.in_stride > b.in_stride; });
  p.kept = collapse(p.kept);
  p.reduced = collapse(p.reduced);
  p.outputs = count_of(p.kept);
  p.count = count_of(p.reduced);
  return p;
}

/// A single axis seen as [outer, n, inner] of a row-contiguous array (argmin/argmax, scans).
struct AxisSplit {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

inline AxisSplit split_axis(const Shape& shape, int axis) {
  AxisSplit s;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (i < axis) s.outer *= shape[i];
    if (i > axis) s.inner *= shape[i];
  }
  s.n = shape.empty() ? 1 : shape[axis];
  return s;
}

}  // namespace braid::common
