// Reductions. One Reduce (or ArgReduce) node keeps the reduced axes as size 1; dropping them
// (keepdims = false) is a reshape, which is a view of the fresh contiguous output. mean, var,
// std and logsumexp compose other ops, as MLX does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "braid/ops.h"
#include "graph/trace.h"
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

// a.shape without the (normalized) axes.
Shape squeezed_shape(const array& a, const std::vector<int>& axes) {
  Shape squeezed;
  for (size_t i = 0, j = 0; i < a.ndim(); ++i) {
    if (j < axes.size() && axes[j] == static_cast<int>(i)) {
      ++j;
    } else {
      squeezed.push_back(a.shape()[i]);
    }
  }
  return squeezed;
}

// A reduction's output without its reduced axes (kept as size 1 by the node): a reshape, or
// in a shapeless trace a Squeeze, which a replay on other shapes can follow.
array drop_reduced(const array& out, const array& a, const std::vector<int>& axes, const Stream& st) {
  if (axes.empty()) return out;
  if (detail::in_dynamic_tracing()) return squeeze(out, axes, st);
  return reshape(out, squeezed_shape(a, axes), st);
}

// `axes` must already be normalized (sorted, unique, in range).
array reduce_node(const array& a, const std::vector<int>& axes, bool keepdims, Reduce::Op op, Dtype out_dtype,
                  const Stream& st) {
  Shape kept_shape = a.shape();
  for (int ax : axes) kept_shape[ax] = 1;
  array out(kept_shape, out_dtype, detail::make_pooled<Reduce>(st, op, axes), {a});
  if (keepdims) return out;
  return drop_reduced(out, a, axes, st);
}

// MLX's at_least_float: inexact dtypes stay, everything else becomes float32.
Dtype float_dtype(Dtype t) { return issubdtype(t, inexact) ? t : float32; }

// Number of elements over `axes` (normalized).
double count_over(const array& a, const std::vector<int>& axes) {
  double count = 1;
  for (int i : axes) count *= a.shape()[i];
  return count;
}

// sum, prod, all, any: the shared front (validation, the empty axis list).
array reduce_op(const array& a, const std::vector<int>& axes, bool keepdims, Reduce::Op op, const char* name,
                StreamOrDevice s) {
  std::vector<int> ax = detail::reduction_axes(axes, static_cast<int>(a.ndim()), name);
  Stream st = detail::op_stream(std::move(s), name);
  const bool logical = op == Reduce::Op::all || op == Reduce::Op::any;
  if (ax.empty()) return logical ? astype(a, bool_, st) : a;
  if (logical) return reduce_node(astype(a, bool_, st), ax, keepdims, op, bool_, st);
  if (op == Reduce::Op::max || op == Reduce::Op::min) return reduce_node(a, ax, keepdims, op, a.dtype(), st);
  return reduce_node(a, ax, keepdims, op, Reduce::sum_dtype(a.dtype()), st);
}

array extreme_op(const array& a, const std::vector<int>& axes, bool keepdims, Reduce::Op op, const char* name,
                 StreamOrDevice s) {
  // As NumPy: max and min have no identity, so only an empty reduced axis is an error; an array
  // empty along another axis reduces to an empty result.
  if (a.size() == 0) {
    for (int ax : detail::reduction_axes(axes, static_cast<int>(a.ndim()), name)) {
      if (a.shape(ax) == 0) throw_invalid(name, std::string("Cannot ") + name + " reduce zero size array.");
    }
  }
  return reduce_op(a, axes, keepdims, op, name, std::move(s));
}

}  // namespace

array all(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  return reduce_op(a, axes, keepdims, Reduce::Op::all, "all", std::move(s));
}
array all(const array& a, bool keepdims, StreamOrDevice s) {
  return all(a, all_axes(a), keepdims, std::move(s));
}
array all(const array& a, StreamOrDevice s) { return all(a, all_axes(a), false, std::move(s)); }
array all(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return all(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array any(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  return reduce_op(a, axes, keepdims, Reduce::Op::any, "any", std::move(s));
}
array any(const array& a, bool keepdims, StreamOrDevice s) {
  return any(a, all_axes(a), keepdims, std::move(s));
}
array any(const array& a, StreamOrDevice s) { return any(a, all_axes(a), false, std::move(s)); }
array any(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return any(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array sum(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  return reduce_op(a, axes, keepdims, Reduce::Op::sum, "sum", std::move(s));
}
array sum(const array& a, bool keepdims, StreamOrDevice s) {
  return sum(a, all_axes(a), keepdims, std::move(s));
}
array sum(const array& a, StreamOrDevice s) { return sum(a, all_axes(a), false, std::move(s)); }
array sum(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return sum(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array prod(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  return reduce_op(a, axes, keepdims, Reduce::Op::prod, "prod", std::move(s));
}
array prod(const array& a, bool keepdims, StreamOrDevice s) {
  return prod(a, all_axes(a), keepdims, std::move(s));
}
array prod(const array& a, StreamOrDevice s) { return prod(a, all_axes(a), false, std::move(s)); }
array prod(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return prod(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array max(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  return extreme_op(a, axes, keepdims, Reduce::Op::max, "max", std::move(s));
}
array max(const array& a, bool keepdims, StreamOrDevice s) {
  return max(a, all_axes(a), keepdims, std::move(s));
}
array max(const array& a, StreamOrDevice s) { return max(a, all_axes(a), false, std::move(s)); }
array max(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return max(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array min(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  return extreme_op(a, axes, keepdims, Reduce::Op::min, "min", std::move(s));
}
array min(const array& a, bool keepdims, StreamOrDevice s) {
  return min(a, all_axes(a), keepdims, std::move(s));
}
array min(const array& a, StreamOrDevice s) { return min(a, all_axes(a), false, std::move(s)); }
array min(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return min(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array mean(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  std::vector<int> ax = detail::reduction_axes(axes, static_cast<int>(a.ndim()), "mean");
  Stream st = detail::op_stream(std::move(s), "mean");
  const Dtype t = float_dtype(a.dtype());
  if (ax.empty()) return astype(a, t, st);
  const double count = count_over(a, ax);
  // An empty reduction gives 0 * inf = NaN, as NumPy's mean does. In a shapeless trace the
  // scale is a node that counts the elements of each replay's input.
  auto scale = [&](Dtype dt) {
    if (detail::in_dynamic_tracing()) return number_of_elements(a, ax, true, dt, st);
    return array(count > 0 ? 1.0 / count : std::numeric_limits<double>::infinity(), dt);
  };
  if (t == float16 || t == bfloat16) {
    // Sum and scale in float32: a 16-bit total overflows (float16 past 65504), and 1/count in
    // 16 bits is inexact and underflows past 2^24 elements. Only the mean is rounded to t.
    array total = reduce_node(a, ax, keepdims, Reduce::Op::sum, float32, st);
    return astype(multiply(total, scale(float32), st), t, st);
  }
  array total = reduce_node(a, ax, keepdims, Reduce::Op::sum, Reduce::sum_dtype(a.dtype()), st);
  return multiply(astype(total, t, st), scale(t), st);
}
array mean(const array& a, bool keepdims, StreamOrDevice s) {
  return mean(a, all_axes(a), keepdims, std::move(s));
}
array mean(const array& a, StreamOrDevice s) { return mean(a, all_axes(a), false, std::move(s)); }
array mean(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return mean(a, std::vector<int>{axis}, keepdims, std::move(s));
}

// MLX's composition: the reduced axes moved last and flattened, sorted, and the middle one
// (or the mean of the two middle ones) taken.
array median(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  std::vector<int> ax = detail::normalize_axes(axes, nd, "median");
  if (nd > 0 && ax.empty()) throw_invalid("median", "Received no axes to reduce over.");
  int64_t count = 1;
  for (int i : ax) count *= a.shape()[i];
  if (count == 0) throw_invalid("median", "Cannot take median along empty axis.");
  if (count > std::numeric_limits<int32_t>::max()) {
    throw_invalid("median", "The reduced axes hold " + std::to_string(count) + " elements, more than one axis can.");
  }
  Stream st = detail::op_stream(std::move(s), "median");
  const Dtype t = float_dtype(a.dtype());
  array flat = a;
  if (nd == 0) {
    flat = reshape(a, {1}, st);
  } else {
    std::vector<int> perm;
    for (int i = 0; i < nd; ++i) {
      if (!std::binary_search(ax.begin(), ax.end(), i)) perm.push_back(i);
    }
    const int kept = static_cast<int>(perm.size());
    perm.insert(perm.end(), ax.begin(), ax.end());
    flat = flatten(transpose(a, perm, st), kept, nd - 1, st);
  }
  array sorted = sort(flat, -1, st);
  const int32_t mid = static_cast<int32_t>(count / 2);
  Shape start(sorted.ndim(), 0), stop = sorted.shape();
  start.back() = mid;
  stop.back() = mid + 1;
  array med = astype(slice(sorted, start, stop, st), t, st);
  if (count % 2 == 0) {
    start.back() = mid - 1;
    stop.back() = mid;
    med = multiply(add(med, astype(slice(sorted, start, stop, st), t, st), st), array(0.5, t), st);
  }
  med = squeeze(med, -1, st);
  return keepdims && nd > 0 ? expand_dims(med, ax, st) : med;
}
array median(const array& a, bool keepdims, StreamOrDevice s) {
  return median(a, all_axes(a), keepdims, std::move(s));
}
array median(const array& a, StreamOrDevice s) { return median(a, all_axes(a), false, std::move(s)); }
array median(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return median(a, std::vector<int>{axis}, keepdims, std::move(s));
}

array var(const array& a, const std::vector<int>& axes, bool keepdims, int ddof, StreamOrDevice s) {
  std::vector<int> ax = detail::reduction_axes(axes, static_cast<int>(a.ndim()), "var");
  Stream st = detail::op_stream(std::move(s), "var");
  const Dtype t = float_dtype(a.dtype());
  array mu = mean(a, ax, true, st);
  array d = subtract(astype(a, t, st), mu, st);
  // A complex input's variance is the mean of |x - mean|^2, a real number (MLX, NumPy).
  const bool is_complex = t == complex64;
  array v = mean(is_complex ? square(abs(d, st), st) : multiply(d, d, st), ax, keepdims, st);
  if (ddof != 0 && detail::in_dynamic_tracing()) {
    // The count and N / max(N - ddof, 0) in float32 at least (a 16-bit count overflows).
    const Dtype ct = t == float64 ? float64 : float32;
    array n = number_of_elements(a, ax, false, ct, st);
    array factor = divide(n, maximum(subtract(n, array(static_cast<double>(ddof), ct), st), array(0.0, ct), st), st);
    v = multiply(v, astype(factor, v.dtype(), st), st);
  } else if (ddof != 0) {
    // N / max(N - ddof, 0): inf (or NaN for N = 0) when ddof leaves no degrees of freedom.
    const double n = count_over(a, ax);
    const double factor = n / std::max(n - ddof, 0.0);
    v = multiply(v, array(factor, v.dtype()), st);
  }
  return v;
}
array var(const array& a, bool keepdims, int ddof, StreamOrDevice s) {
  return var(a, all_axes(a), keepdims, ddof, std::move(s));
}
array var(const array& a, StreamOrDevice s) { return var(a, all_axes(a), false, 0, std::move(s)); }
array var(const array& a, int axis, bool keepdims, int ddof, StreamOrDevice s) {
  return var(a, std::vector<int>{axis}, keepdims, ddof, std::move(s));
}

array std(const array& a, const std::vector<int>& axes, bool keepdims, int ddof, StreamOrDevice s) {
  // Validated under std's own name before var builds anything.
  detail::reduction_axes(axes, static_cast<int>(a.ndim()), "std");
  Stream st = detail::op_stream(std::move(s), "std");
  return sqrt(var(a, axes, keepdims, ddof, st), st);
}
array std(const array& a, bool keepdims, int ddof, StreamOrDevice s) {
  return std(a, all_axes(a), keepdims, ddof, std::move(s));
}
array std(const array& a, StreamOrDevice s) { return std(a, all_axes(a), false, 0, std::move(s)); }
array std(const array& a, int axis, bool keepdims, int ddof, StreamOrDevice s) {
  return std(a, std::vector<int>{axis}, keepdims, ddof, std::move(s));
}

namespace {

array arg_reduce(const array& a, int axis, bool keepdims, ArgReduce::Op op, const char* name,
                 StreamOrDevice s) {
  const int ax = detail::normalize_axis(axis, static_cast<int>(a.ndim()), name);
  if (a.shape(ax) == 0) throw_invalid(name, std::string("Cannot ") + name + " reduce zero size array.");
  Stream st = detail::op_stream(std::move(s), name);
  Shape kept_shape = a.shape();
  kept_shape[ax] = 1;
  array out(kept_shape, uint32, detail::make_pooled<ArgReduce>(st, op, ax), {a});
  if (keepdims) return out;
  return drop_reduced(out, a, {ax}, st);
}

// Over the flattened array: the index into it; keepdims gives ndim ones.
array arg_reduce_all(const array& a, bool keepdims, ArgReduce::Op op, const char* name, StreamOrDevice s) {
  if (a.size() == 0) throw_invalid(name, std::string("Cannot ") + name + " reduce zero size array.");
  Stream st = detail::op_stream(std::move(s), name);
  array out = arg_reduce(reshape(a, {-1}, st), 0, false, op, name, st);
  if (keepdims) return reshape(out, Shape(a.ndim(), 1), st);
  return out;
}

}  // namespace

array argmin(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return arg_reduce(a, axis, keepdims, ArgReduce::Op::argmin, "argmin", std::move(s));
}
array argmin(const array& a, bool keepdims, StreamOrDevice s) {
  return arg_reduce_all(a, keepdims, ArgReduce::Op::argmin, "argmin", std::move(s));
}
array argmin(const array& a, StreamOrDevice s) { return argmin(a, false, std::move(s)); }
array argmax(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return arg_reduce(a, axis, keepdims, ArgReduce::Op::argmax, "argmax", std::move(s));
}
array argmax(const array& a, bool keepdims, StreamOrDevice s) {
  return arg_reduce_all(a, keepdims, ArgReduce::Op::argmax, "argmax", std::move(s));
}
array argmax(const array& a, StreamOrDevice s) { return argmax(a, false, std::move(s)); }

array logsumexp(const array& a, const std::vector<int>& axes, bool keepdims, StreamOrDevice s) {
  if (a.size() == 0) throw_invalid("logsumexp", "Received empty array.");
  if (a.dtype() == complex64) throw_invalid("logsumexp", "complex64 is not supported.");
  std::vector<int> ax = detail::reduction_axes(axes, static_cast<int>(a.ndim()), "logsumexp");
  Stream st = detail::op_stream(std::move(s), "logsumexp");
  const Dtype t = float_dtype(a.dtype());
  array x = astype(a, t, st);
  // Shifting by the max keeps exp in range; an infinite (or NaN) max shifts by 0 instead, so
  // all -inf gives -inf, any +inf gives +inf and NaN stays NaN.
  const double inf = std::numeric_limits<double>::infinity();
  array m = max(x, ax, true, st);
  array zero(0.0, t);
  array shift =
      where(less(m, array(inf, t), st), where(greater(m, array(-inf, t), st), m, zero, st), zero, st);
  array total = sum(exp(subtract(x, shift, st), st), ax, keepdims, st);
  array out = log(total, st);
  return add(out, keepdims ? shift : reshape(shift, out.shape(), st), st);
}
array logsumexp(const array& a, bool keepdims, StreamOrDevice s) {
  return logsumexp(a, all_axes(a), keepdims, std::move(s));
}
array logsumexp(const array& a, StreamOrDevice s) { return logsumexp(a, all_axes(a), false, std::move(s)); }
array logsumexp(const array& a, int axis, bool keepdims, StreamOrDevice s) {
  return logsumexp(a, std::vector<int>{axis}, keepdims, std::move(s));
}

}  // namespace braid
