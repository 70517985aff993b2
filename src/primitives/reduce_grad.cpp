// Derivatives of reductions and scans. Products are differentiated without dividing by the
// input (zeros are fine); max and min share the cotangent among tied extrema (MLX's rule). A
// complex vjp multiplies by the conjugated derivative, as the element-wise ones.
#include <algorithm>
#include <numeric>

#include "primitives/grad_utils.h"
#include "primitives/reduce.h"

namespace braid {

using detail::conj_if_complex;
using detail::scalar_like;

namespace {

// The product of every other element of each reduced group, shaped like x.
array product_of_others(const array& x, const std::vector<int>& axes, const Stream& s) {
  const int nd = static_cast<int>(x.ndim());
  std::vector<int> perm;
  for (int i = 0; i < nd; ++i) {
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
  }
  const size_t kept = perm.size();
  perm.insert(perm.end(), axes.begin(), axes.end());
  array moved = transpose(x, perm, s);
  Shape flat(moved.shape().begin(), moved.shape().begin() + kept);
  flat.push_back(-1);
  array rows = reshape(moved, flat, s);
  array others = multiply(cumprod(rows, -1, false, false, s), cumprod(rows, -1, true, false, s), s);
  others = reshape(others, moved.shape(), s);
  std::vector<int> inverse(nd);
  for (int i = 0; i < nd; ++i) inverse[perm[i]] = i;
  return transpose(others, inverse, s);
}

// 1 where x equals the (kept-dims) extremum y, divided by the number of ties.
array extremum_share(const array& x, const array& y, const std::vector<int>& axes, const Stream& s) {
  array mask = astype(equal(x, y, s), x.dtype(), s);
  return divide(mask, sum(mask, axes, /*keepdims=*/true, s), s);
}

}  // namespace

std::vector<array> Reduce::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& x = primals[0];
  const array c = broadcast_to(cotangents[0], x.shape(), s);
  switch (op_) {
    case Op::sum: return {astype(c, x.dtype(), s)};
    case Op::prod:
      return {astype(multiply(c, conj_if_complex(product_of_others(x, axes_, s), s), s), x.dtype(), s)};
    case Op::max:
    case Op::min: return {multiply(c, extremum_share(x, outputs[0], axes_, s), s)};
    case Op::all:
    case Op::any: return {zeros_like(x, s)};
  }
  return {zeros_like(x, s)};
}

std::vector<array> Reduce::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& x = primals[0];
  const array& t = tangents[0];
  const array& y = outputs[0];
  switch (op_) {
    case Op::sum: return {astype(sum(t, axes_, true, s), y.dtype(), s)};
    case Op::prod: return {sum(multiply(t, product_of_others(x, axes_, s), s), axes_, true, s)};
    case Op::max:
    case Op::min: return {sum(multiply(t, extremum_share(x, y, axes_, s), s), axes_, true, s)};
    case Op::all:
    case Op::any: return {zeros_like(y, s)};
  }
  return {zeros_like(y, s)};
}

std::vector<array> ArgReduce::vjp(const std::vector<array>& primals, const std::vector<array>&,
                                  const std::vector<int>& argnums, const std::vector<array>&) {
  return detail::zero_grads(primals, argnums, stream());
}
std::vector<array> ArgReduce::jvp(const std::vector<array>&, const std::vector<array>&,
                                  const std::vector<int>&, const std::vector<array>& outputs) {
  return {zeros_like(outputs[0], stream())};
}

namespace {

// Scans run along `axis` in direction `reverse`. An exclusive scan is the inclusive one moved
// one step along the direction: y_i = Y_{i-1}. These move a tangent with it (forward) or a
// cotangent against it (back), filling the vacated end with zeros.
array shift(const array& v, int axis, bool reverse, bool forward, const Stream& s) {
  const int n = v.shape(axis);
  Shape start(v.ndim(), 0), stop(v.shape()), strides(v.ndim(), 1);
  // forward along the direction == towards higher indices when not reversed.
  const bool to_higher = forward != reverse;
  if (to_higher) {
    stop[axis] = std::max(n - 1, 0);
  } else {
    start[axis] = std::min(1, n);
  }
  array part = slice(v, start, stop, strides, s);
  Shape lo{to_higher ? 1 : 0}, hi{to_higher ? 0 : 1};
  return pad(part, std::vector<int>{axis}, lo, hi, array(0, v.dtype()), "constant", s);
}

// Position along `axis` of each element, broadcastable against x.
array positions(const array& x, int axis, const Stream& s) {
  Shape shape(x.ndim(), 1);
  shape[axis] = x.shape(axis);
  return reshape(arange(0, x.shape(axis), s), shape, s);
}

// For a running max/min y of x: the index each output copies (ties: the latest one).
// Indices: computed from stop_gradient(x) and (y), so that a second-order derivative does not
// ask the gather or scatter that use them for their gradient.
array running_source(const array& x, const array& y, int axis, bool reverse, const Stream& s) {
  array pos = broadcast_to(positions(x, axis, s), x.shape(), s);
  array marked = equal(stop_gradient(x, s), stop_gradient(y, s), s);
  if (!reverse) return cummax(where(marked, pos, array(0), s), axis, false, true, s);
  return cummin(where(marked, pos, array(x.shape(axis) - 1), s), axis, true, true, s);
}

// vjp of the inclusive product scan Y of x, zeros allowed: an element before the first zero
// divides out exactly; the first zero gets the scan of x with it replaced by one; later
// elements get nothing.
array cumprod_vjp(const array& x, const array& y, const array& c, int axis, bool reverse, const Stream& s) {
  array zero = equal(x, scalar_like(0.0, x), s);
  array zeros_seen = cumsum(astype(zero, int32, s), axis, reverse, true, s);
  array before = equal(zeros_seen, array(0), s);
  array first = logical_and(zero, equal(zeros_seen, array(1), s), s);
  array one = scalar_like(1.0, x);
  array y_skip = cumprod(where(first, one, x, s), axis, reverse, true, s);
  array at_before = divide(cumsum(multiply(c, y, s), axis, !reverse, true, s), where(zero, one, x, s), s);
  array at_first = cumsum(multiply(c, y_skip, s), axis, !reverse, true, s);
  return where(before, at_before, where(first, at_first, zeros_like(x, s), s), s);
}

}  // namespace

std::vector<array> Scan::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                             const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& x = primals[0];
  if (op_ == Op::sum) return {astype(cumsum(cotangents[0], axis_, !reverse_, inclusive_, s), x.dtype(), s)};
  // Everything else from the inclusive scan, the cotangent moved back for an exclusive one.
  array y = inclusive_
                ? outputs[0]
                : array(x.shape(), x.dtype(), std::make_shared<Scan>(s, op_, axis_, reverse_, true), {x});
  array c = inclusive_ ? cotangents[0] : shift(cotangents[0], axis_, reverse_, /*forward=*/false, s);
  switch (op_) {
    // The derivatives are rational in x with real coefficients: their conjugates are those
    // of conj(x).
    case Op::prod: return {cumprod_vjp(conj_if_complex(x, s), conj_if_complex(y, s), c, axis_, reverse_, s)};
    case Op::max:
    case Op::min:
      return {scatter_add_axis(zeros_like(x, s), running_source(x, y, axis_, reverse_, s), c, axis_, s)};
    case Op::logaddexp:
      // d y_i / d x_k = exp(x_k - y_i) for k at or before i.
      return {
          multiply(exp(x, s), cumsum(multiply(c, exp(negative(y, s), s), s), axis_, !reverse_, true, s), s)};
    case Op::sum: break;
  }
  return {zeros_like(x, s)};
}

std::vector<array> Scan::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                             const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& x = primals[0];
  const array& t = tangents[0];
  if (op_ == Op::sum) return {astype(cumsum(t, axis_, reverse_, inclusive_, s), outputs[0].dtype(), s)};
  array y = inclusive_
                ? outputs[0]
                : array(x.shape(), x.dtype(), std::make_shared<Scan>(s, op_, axis_, reverse_, true), {x});
  array dy = zeros_like(x, s);
  switch (op_) {
    case Op::prod: {
      // The tangent of a product is linear in t: sum over k <= i of t_k * d y_i / d x_k, which
      // is the vjp's transpose; with no zeros in x it is y_i * cumsum(t / x)_i.
      array zero = equal(x, scalar_like(0.0, x), s);
      array zeros_seen = cumsum(astype(zero, int32, s), axis_, reverse_, true, s);
      array first = logical_and(zero, equal(zeros_seen, array(1), s), s);
      array one = scalar_like(1.0, x);
      array y_skip = cumprod(where(first, one, x, s), axis_, reverse_, true, s);
      // Up to the first zero: y_i * sum_k t_k / x_k (x_k nonzero there).
      array safe = where(zero, one, x, s);
      array ratio = cumsum(where(equal(zeros_seen, array(0), s), divide(t, safe, s), zeros_like(x, s), s),
                           axis_, reverse_, true, s);
      array part_before = multiply(y, ratio, s);
      // From the first zero on, only its own tangent survives: t_z * prod of the others.
      array t_first = cumsum(where(first, t, zeros_like(x, s), s), axis_, reverse_, true, s);
      dy = add(part_before, multiply(t_first, y_skip, s), s);
      // After a second zero every product is zero.
      dy = where(greater(zeros_seen, array(1), s), zeros_like(x, s), dy, s);
      break;
    }
    case Op::max:
    case Op::min: dy = take_along_axis(t, running_source(x, y, axis_, reverse_, s), axis_, s); break;
    case Op::logaddexp:
      dy = multiply(cumsum(multiply(t, exp(x, s), s), axis_, reverse_, true, s), exp(negative(y, s), s), s);
      break;
    case Op::sum: break;
  }
  return {inclusive_ ? dy : shift(dy, axis_, reverse_, /*forward=*/true, s)};
}

}  // namespace braid
