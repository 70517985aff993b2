// Scans: cumsum, cumprod, cummax, cummin, logcumsumexp. One Scan node over one axis; the
// overloads without an axis scan the flattened array.
#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

namespace {

array scan(const array& a, int axis, bool reverse, bool inclusive, Scan::Op op, const char* name,
           StreamOrDevice s) {
  const int ndim = static_cast<int>(a.ndim());
  if (axis >= ndim || axis < -ndim) {
    detail::throw_invalid(name, "Axis " + std::to_string(axis) + " is out of bounds for array with " +
                                    std::to_string(ndim) + " dimensions.");
  }
  Stream st = detail::op_stream(std::move(s), name);
  const int ax = axis < 0 ? axis + ndim : axis;
  const Dtype out = (op == Scan::Op::sum && a.dtype() == bool_) ? int32 : a.dtype();
  return array(a.shape(), out, detail::make_pooled<Scan>(st, op, ax, reverse, inclusive), {a});
}

array scan_flat(const array& a, bool reverse, bool inclusive, Scan::Op op, const char* name,
                StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), name);
  return scan(reshape(a, {-1}, st), 0, reverse, inclusive, op, name, st);
}

}  // namespace

array cumsum(const array& a, int axis, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan(a, axis, reverse, inclusive, Scan::Op::sum, "cumsum", std::move(s));
}
array cumsum(const array& a, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan_flat(a, reverse, inclusive, Scan::Op::sum, "cumsum", std::move(s));
}
array cumprod(const array& a, int axis, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan(a, axis, reverse, inclusive, Scan::Op::prod, "cumprod", std::move(s));
}
array cumprod(const array& a, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan_flat(a, reverse, inclusive, Scan::Op::prod, "cumprod", std::move(s));
}
array cummax(const array& a, int axis, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan(a, axis, reverse, inclusive, Scan::Op::max, "cummax", std::move(s));
}
array cummax(const array& a, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan_flat(a, reverse, inclusive, Scan::Op::max, "cummax", std::move(s));
}
array cummin(const array& a, int axis, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan(a, axis, reverse, inclusive, Scan::Op::min, "cummin", std::move(s));
}
array cummin(const array& a, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan_flat(a, reverse, inclusive, Scan::Op::min, "cummin", std::move(s));
}
array logcumsumexp(const array& a, int axis, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan(a, axis, reverse, inclusive, Scan::Op::logaddexp, "logcumsumexp", std::move(s));
}
array logcumsumexp(const array& a, bool reverse, bool inclusive, StreamOrDevice s) {
  return scan_flat(a, reverse, inclusive, Scan::Op::logaddexp, "logcumsumexp", std::move(s));
}

}  // namespace braid
