// Element-wise ops: validate, broadcast shapes, promote types, build one node.
#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::throw_invalid;

namespace {

array binary_op(const array& a, const array& b, Binary::Op op, const char* name, StreamOrDevice s) {
  Shape shape = a.shape() == b.shape() ? a.shape() : detail::broadcast_shapes(a.shape(), b.shape(), name);
  Dtype t = promote_types(a.dtype(), b.dtype());
  if (op == Binary::Op::divide && !is_floating_point(t)) t = float32;
  Stream st = detail::op_stream(std::move(s), name);
  const bool compare = op == Binary::Op::equal || op == Binary::Op::less || op == Binary::Op::greater;
  Dtype out = compare ? bool_ : t;
  return array(std::move(shape), out, detail::make_pooled<Binary>(st, op),
               {astype(a, t, st), astype(b, t, st)});
}

array unary_op(const array& a, Unary::Op op, const char* name, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), name);
  if (op == Unary::Op::negative) {
    if (a.dtype() == bool_) throw_invalid(name, "The argument cannot be a boolean.");
    return array(a.shape(), a.dtype(), detail::make_pooled<Unary>(std::move(st), op), {a});
  }
  // Transcendental functions of integers are computed in float32, as in MLX.
  Dtype t = is_floating_point(a.dtype()) ? a.dtype() : float32;
  return array(a.shape(), t, detail::make_pooled<Unary>(st, op), {astype(a, t, st)});
}

}  // namespace

array add(const array& a, const array& b, StreamOrDevice s) { return binary_op(a, b, Binary::Op::add, "add", std::move(s)); }
array subtract(const array& a, const array& b, StreamOrDevice s) {
  return binary_op(a, b, Binary::Op::subtract, "subtract", std::move(s));
}
array multiply(const array& a, const array& b, StreamOrDevice s) {
  return binary_op(a, b, Binary::Op::multiply, "multiply", std::move(s));
}
array divide(const array& a, const array& b, StreamOrDevice s) {
  return binary_op(a, b, Binary::Op::divide, "divide", std::move(s));
}
array maximum(const array& a, const array& b, StreamOrDevice s) {
  return binary_op(a, b, Binary::Op::maximum, "maximum", std::move(s));
}
array minimum(const array& a, const array& b, StreamOrDevice s) {
  return binary_op(a, b, Binary::Op::minimum, "minimum", std::move(s));
}
array equal(const array& a, const array& b, StreamOrDevice s) {
  return binary_op(a, b, Binary::Op::equal, "equal", std::move(s));
}
array less(const array& a, const array& b, StreamOrDevice s) { return binary_op(a, b, Binary::Op::less, "less", std::move(s)); }
array greater(const array& a, const array& b, StreamOrDevice s) {
  return binary_op(a, b, Binary::Op::greater, "greater", std::move(s));
}

array negative(const array& a, StreamOrDevice s) { return unary_op(a, Unary::Op::negative, "negative", std::move(s)); }
array exp(const array& a, StreamOrDevice s) { return unary_op(a, Unary::Op::exp, "exp", std::move(s)); }
array log(const array& a, StreamOrDevice s) { return unary_op(a, Unary::Op::log, "log", std::move(s)); }
array sqrt(const array& a, StreamOrDevice s) { return unary_op(a, Unary::Op::sqrt, "sqrt", std::move(s)); }
array tanh(const array& a, StreamOrDevice s) { return unary_op(a, Unary::Op::tanh, "tanh", std::move(s)); }

array where(const array& condition, const array& x, const array& y, StreamOrDevice s) {
  Shape shape = detail::broadcast_shapes(detail::broadcast_shapes(condition.shape(), x.shape(), "where"),
                                         y.shape(), "where");
  Dtype t = promote_types(x.dtype(), y.dtype());
  Stream st = detail::op_stream(std::move(s), "where");
  return array(std::move(shape), t, detail::make_pooled<Select>(st),
               {astype(condition, bool_, st), astype(x, t, st), astype(y, t, st)});
}

array operator-(const array& a) { return negative(a); }
array operator+(const array& a, const array& b) { return add(a, b); }
array operator-(const array& a, const array& b) { return subtract(a, b); }
array operator*(const array& a, const array& b) { return multiply(a, b); }
array operator/(const array& a, const array& b) { return divide(a, b); }

}  // namespace braid
