// Element-wise ops built from other ops: round to decimals, degrees, radians, nan_to_num,
// divmod, clip, isclose, allclose, array_equal, where.
#include <cmath>
#include <optional>

#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/elementwise_utils.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::throw_invalid;

array round(const array& a, int decimals, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "round");
  if (decimals == 0) {
    if (!is_floating_point(a.dtype())) return a;
    return detail::unary_node(a, Unary::Op::round, a.dtype(), a.dtype(), "round", st);
  }
  // Scaled by 10^decimals in at_least_float(a), rounded to even, scaled back, cast back.
  const Dtype t = detail::at_least_float(a.dtype());
  const array scale(std::pow(10.0, decimals), t);
  return astype(divide(round(multiply(astype(a, t, st), scale, st), 0, st), scale, st), a.dtype(), st);
}

array degrees(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "degrees");
  return multiply(a, array(180.0 / M_PI, detail::at_least_float(a.dtype())), st);
}

array radians(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "radians");
  return multiply(a, array(M_PI / 180.0, detail::at_least_float(a.dtype())), st);
}

array nan_to_num(const array& a, float nan, const std::optional<float> posinf, const std::optional<float> neginf,
                 StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "nan_to_num");
  const Dtype t = a.dtype();
  if (!is_floating_point(t)) return a;
  if (t == float64 || t == complex64) throw_invalid("nan_to_num", "Not supported for float64 or complex64.");
  const finfo info(t);
  array out = where(isnan(a, st), array(nan, t), a, st);
  out = where(isposinf(a, st), array(static_cast<float>(posinf.value_or(info.max)), t), out, st);
  return where(isneginf(a, st), array(static_cast<float>(neginf.value_or(info.min)), t), out, st);
}

std::vector<array> divmod(const array& a, const array& b, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "divmod");
  if (promote_types(a.dtype(), b.dtype()) == complex64) throw_invalid("divmod", "Not supported for complex64.");
  const Dtype t = promote_types(a.dtype(), b.dtype());
  detail::check_accepts(Binary::accepts(Binary::Op::floor_divide), t, "divmod");
  Shape shape = detail::broadcast_shapes(a.shape(), b.shape(), "divmod");
  // floor_divide of these types rounds the quotient to the type before the floor (a
  // composition of two nodes): the same quotient here.
  if (t == float16 || t == bfloat16) return {floor_divide(a, b, st), remainder(a, b, st)};
  // One node with two outputs, as MLX's.
  return array::make_arrays({shape, shape}, {t, t}, detail::make_pooled<DivMod>(st),
                            {astype(a, t, st), astype(b, t, st)});
}

array clip(const array& a, const std::optional<array>& a_min, const std::optional<array>& a_max, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "clip");
  if (!a_min && !a_max) throw_invalid("clip", "At most one of a_min and a_max may be None.");
  Shape shape = a.shape();
  if (a_min) shape = detail::broadcast_shapes(shape, a_min->shape(), "clip");
  if (a_max) shape = detail::broadcast_shapes(shape, a_max->shape(), "clip");
  array out = a;
  if (a_min) out = maximum(out, *a_min, st);
  if (a_max) out = minimum(out, *a_max, st);
  return out;
}


array isclose(const array& a, const array& b, double rtol, double atol, bool equal_nan, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "isclose");
  detail::broadcast_shapes(a.shape(), b.shape(), "isclose");
  const Dtype t = promote_types(a.dtype(), b.dtype());
  const array x = astype(a, t, st), y = astype(b, t, st);
  // |x - y| <= atol + rtol * |y| for finite values; infinities are close when equal.
  const array tol = add(array(atol), multiply(array(rtol), abs(y, st), st), st);
  const array near = less_equal(abs(subtract(x, y, st), st), tol, st);
  array out = logical_or(logical_and(near, logical_and(isfinite(x, st), isfinite(y, st), st), st), equal(x, y, st), st);
  if (equal_nan && is_floating_point(t)) out = logical_or(out, logical_and(isnan(x, st), isnan(y, st), st), st);
  return out;
}

array allclose(const array& a, const array& b, double rtol, double atol, bool equal_nan, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "allclose");
  detail::broadcast_shapes(a.shape(), b.shape(), "allclose");
  return all(isclose(a, b, rtol, atol, equal_nan, st), false, st);
}

array array_equal(const array& a, const array& b, bool equal_nan, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "array_equal");
  if (a.shape() != b.shape()) return array(false);
  const Dtype t = promote_types(a.dtype(), b.dtype());
  const array x = astype(a, t, st), y = astype(b, t, st);
  array eq = equal(x, y, st);
  if (equal_nan && is_floating_point(t)) eq = logical_or(eq, logical_and(isnan(x, st), isnan(y, st), st), st);
  return all(eq, false, st);
}

array where(const array& condition, const array& x, const array& y, StreamOrDevice s) {
  Shape shape = detail::broadcast_shapes(detail::broadcast_shapes(condition.shape(), x.shape(), "where"),
                                         y.shape(), "where");
  const Dtype t = promote_types(x.dtype(), y.dtype());
  const Stream st = detail::op_stream(std::move(s), "where");
  return array(std::move(shape), t, detail::make_pooled<Select>(st),
               {astype(condition, bool_, st), astype(x, t, st), astype(y, t, st)});
}

}  // namespace braid
