// Reductions: sum, max, mean. One Reduce node keeps the reduced axes as size 1; dropping
// them (keepdims = false) is a reshape, which is a view of the fresh contiguous output.
#include <limits>
#include <numeric>

#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::throw_invalid;

namespace {

std::vector<int> all_axes(const array& a) {
  std::vector<int> axes(a.ndim());
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

// `axes` must already be normalized (sorted, unique, in range).
array reduce_node(const array& a, const std::vector<int>& axes, bool keepdims, Reduce::Op op, Dtype out_dtype,
                  const Stream& st) {
  Shape kept_shape = a.shape();
  for (int ax : axes) kept_shape[ax] = 1;
  array out(kept_shape, out_dtype, detail::make_pooled<Reduce>(st, op, axes), {a});
  if (keepdims) return out;
  Shape squeezed;
  for (size_t i = 0, j = 0; i < a.ndim(); ++i) {
    if (j < axes.size() && axes[j] == static_cast<int>(i)) {
      ++j;
    } else {
      squeezed.push_back(a.shape()[i]);
    }
  }
  return reshape(out, std::move(squeezed), st);
}

// Small integer sums would overflow at once, so they accumulate into int32 (as in MLX).
Dtype sum_dtype(Dtype t) { return (t == bool_ || t == uint8) ? int32 : t; }

}  // namespace

array sum(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  std::vector<int> ax = detail::normalize_axes(axes, static_cast<int>(a.ndim()), "sum");
  Stream st = detail::op_stream(std::move(s), "sum");
  if (ax.empty()) return a;
  return reduce_node(a, ax, keepdims, Reduce::Op::sum, sum_dtype(a.dtype()), st);
}
array sum(const array& a, bool keepdims, StreamOrDevice s) {
  return sum(a, all_axes(a), keepdims, std::move(s));
}
array sum(const array& a, StreamOrDevice s) { return sum(a, all_axes(a), false, std::move(s)); }
array sum(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return sum(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array max(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  std::vector<int> ax = detail::normalize_axes(axes, static_cast<int>(a.ndim()), "max");
  for (int i : ax) {
    if (a.shape()[i] == 0) throw_invalid("max", "Cannot max reduce zero size array.");
  }
  Stream st = detail::op_stream(std::move(s), "max");
  if (ax.empty()) return a;
  return reduce_node(a, ax, keepdims, Reduce::Op::max, a.dtype(), st);
}
array max(const array& a, bool keepdims, StreamOrDevice s) {
  return max(a, all_axes(a), keepdims, std::move(s));
}
array max(const array& a, StreamOrDevice s) { return max(a, all_axes(a), false, std::move(s)); }
array max(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return max(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array mean(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  std::vector<int> ax = detail::normalize_axes(axes, static_cast<int>(a.ndim()), "mean");
  Stream st = detail::op_stream(std::move(s), "mean");
  const Dtype t = is_floating_point(a.dtype()) ? a.dtype() : float32;
  if (ax.empty()) return astype(a, t, st);
  double count = 1;
  for (int i : ax) count *= a.shape()[i];
  // An empty reduction gives 0 * inf = NaN, as NumPy's mean does.
  const double scale = count > 0 ? 1.0 / count : std::numeric_limits<double>::infinity();
  if (t == float16 || t == bfloat16) {
    // Sum and scale in float32: a 16-bit total overflows (float16 past 65504), and 1/count in
    // 16 bits is inexact and underflows past 2^24 elements. Only the mean is rounded to t.
    array total = reduce_node(a, ax, keepdims, Reduce::Op::sum, float32, st);
    return astype(multiply(total, array(scale, float32), st), t, st);
  }
  array total = reduce_node(a, ax, keepdims, Reduce::Op::sum, sum_dtype(a.dtype()), st);
  return multiply(astype(total, t, st), array(scale, t), st);
}
array mean(const array& a, bool keepdims, StreamOrDevice s) {
  return mean(a, all_axes(a), keepdims, std::move(s));
}
array mean(const array& a, StreamOrDevice s) { return mean(a, all_axes(a), false, std::move(s)); }
array mean(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return mean(a, std::vector<int>{axis}, keepdims, std::move(s));
}

}  // namespace braid
