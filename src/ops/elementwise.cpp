// Element-wise ops that build one Unary or Binary node: validate, broadcast shapes, apply
// MLX's dtype rule, cast the inputs to the dtype the kernel takes. The kernel's accepted dtypes
// come from the op's row in primitives/elementwise_ops.h.
#include <sstream>

#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/elementwise_utils.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::throw_invalid;

namespace detail {

Dtype at_least_float(Dtype d) { return is_floating_point(d) ? d : promote_types(d, float32); }

void check_accepts(uint8_t cls, Dtype d, const char* name) {
  if (ew::accepts(cls, d)) return;
  std::ostringstream os;
  os << "Not supported for inputs of type " << d << ".";
  throw_invalid(name, os.str());
}

// The inputs are moved into the node's list: a braced list would copy each one (two atomic
// reference count updates per input, on every element-wise op).
array unary_node(const array& a, Unary::Op op, Dtype in, Dtype out, const char* name, const Stream& st) {
  check_accepts(Unary::accepts(op), in, name);
  std::vector<array> inputs;
  inputs.reserve(1);
  inputs.push_back(astype(a, in, st));
  return array(a.shape(), out, make_pooled<Unary>(st, op), std::move(inputs));
}

array binary_node(const array& a, const array& b, Binary::Op op, Dtype in, Dtype out, const char* name,
                  const Stream& st) {
  Shape shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), name);
  check_accepts(Binary::accepts(op), in, name);
  std::vector<array> inputs;
  inputs.reserve(2);
  inputs.push_back(astype(a, in, st));
  inputs.push_back(astype(b, in, st));
  return array(std::move(shape), out, make_pooled<Binary>(st, op), std::move(inputs));
}

}  // namespace detail

namespace {

using detail::at_least_float;
using detail::binary_node;
using detail::unary_node;

// The input's dtype in and out.
array same_type(const array& a, Unary::Op op, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  return unary_node(a, op, a.dtype(), a.dtype(), name, st);
}

// Bool and integers are computed in float32 (MLX's at_least_float).
array float_type(const array& a, Unary::Op op, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  const Dtype t = at_least_float(a.dtype());
  return unary_node(a, op, t, t, name, st);
}

// Integers and bool pass through floor, ceil and round unchanged.
array rounding(const array& a, Unary::Op op, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  if (a.dtype() == complex64 && op != Unary::Op::round) throw_invalid(name, "Not supported for complex64.");
  if (!is_floating_point(a.dtype())) return a;
  return unary_node(a, op, a.dtype(), a.dtype(), name, st);
}

// Bool for inexact inputs; integers and bool are never NaN or infinite.
array predicate(const array& a, Unary::Op op, bool integral_value, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  if (!is_floating_point(a.dtype())) return integral_value ? ones(a.shape(), bool_, st) : zeros(a.shape(), bool_, st);
  return unary_node(a, op, a.dtype(), bool_, name, st);
}

// Promoted dtype in and out.
array promoted(const array& a, const array& b, Binary::Op op, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  const Dtype t = promote_types(a.dtype(), b.dtype());
  return binary_node(a, b, op, t, t, name, st);
}

array promoted_float(const array& a, const array& b, Binary::Op op, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  const Dtype t = at_least_float(promote_types(a.dtype(), b.dtype()));
  return binary_node(a, b, op, t, t, name, st);
}

array comparison(const array& a, const array& b, Binary::Op op, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  return binary_node(a, b, op, promote_types(a.dtype(), b.dtype()), bool_, name, st);
}

array logical(const array& a, const array& b, Binary::Op op, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  return binary_node(a, b, op, bool_, bool_, name, st);
}

// Bool or integer inputs; shifts compute bool in uint8.
array bitwise(const array& a, const array& b, Binary::Op op, bool shift, const char* name, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), name);
  Dtype t = promote_types(a.dtype(), b.dtype());
  if (shift && t == bool_) t = uint8;
  return binary_node(a, b, op, t, t, name, st);
}

}  // namespace

// ---- unary ----
array abs(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "abs");
  return unary_node(a, Unary::Op::abs, a.dtype(), a.dtype() == complex64 ? float32 : a.dtype(), "abs", st);
}
array sign(const array& a, StreamOrDevice s) { return same_type(a, Unary::Op::sign, "sign", std::move(s)); }
array negative(const array& a, StreamOrDevice s) {
  if (a.dtype() == bool_) throw_invalid("negative", "The argument cannot be a boolean; use logical_not.");
  return same_type(a, Unary::Op::negative, "negative", std::move(s));
}
array square(const array& a, StreamOrDevice s) { return same_type(a, Unary::Op::square, "square", std::move(s)); }
array floor(const array& a, StreamOrDevice s) { return rounding(a, Unary::Op::floor, "floor", std::move(s)); }
array ceil(const array& a, StreamOrDevice s) { return rounding(a, Unary::Op::ceil, "ceil", std::move(s)); }

#define BRAID_EW_FLOAT_OP(op) \
  array op(const array& a, StreamOrDevice s) { return float_type(a, Unary::Op::op, #op, std::move(s)); }
BRAID_EW_FLOAT_OP(sin)
BRAID_EW_FLOAT_OP(cos)
BRAID_EW_FLOAT_OP(tan)
BRAID_EW_FLOAT_OP(arcsin)
BRAID_EW_FLOAT_OP(arccos)
BRAID_EW_FLOAT_OP(arctan)
BRAID_EW_FLOAT_OP(sinh)
BRAID_EW_FLOAT_OP(cosh)
BRAID_EW_FLOAT_OP(tanh)
BRAID_EW_FLOAT_OP(arcsinh)
BRAID_EW_FLOAT_OP(arccosh)
BRAID_EW_FLOAT_OP(arctanh)
BRAID_EW_FLOAT_OP(exp)
BRAID_EW_FLOAT_OP(expm1)
BRAID_EW_FLOAT_OP(log)
BRAID_EW_FLOAT_OP(log2)
BRAID_EW_FLOAT_OP(log10)
BRAID_EW_FLOAT_OP(log1p)
BRAID_EW_FLOAT_OP(sqrt)
BRAID_EW_FLOAT_OP(rsqrt)
BRAID_EW_FLOAT_OP(reciprocal)
BRAID_EW_FLOAT_OP(sigmoid)
BRAID_EW_FLOAT_OP(erf)
BRAID_EW_FLOAT_OP(erfinv)
#undef BRAID_EW_FLOAT_OP

array isnan(const array& a, StreamOrDevice s) { return predicate(a, Unary::Op::isnan, false, "isnan", std::move(s)); }
array isinf(const array& a, StreamOrDevice s) { return predicate(a, Unary::Op::isinf, false, "isinf", std::move(s)); }
array isfinite(const array& a, StreamOrDevice s) {
  return predicate(a, Unary::Op::isfinite, true, "isfinite", std::move(s));
}
array isposinf(const array& a, StreamOrDevice s) {
  return predicate(a, Unary::Op::isposinf, false, "isposinf", std::move(s));
}
array isneginf(const array& a, StreamOrDevice s) {
  return predicate(a, Unary::Op::isneginf, false, "isneginf", std::move(s));
}

array real(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "real");
  if (a.dtype() != complex64) return a;
  return unary_node(a, Unary::Op::real, complex64, float32, "real", st);
}
array imag(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "imag");
  if (a.dtype() != complex64) return zeros(a.shape(), a.dtype(), st);
  return unary_node(a, Unary::Op::imag, complex64, float32, "imag", st);
}
array conjugate(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "conjugate");
  if (a.dtype() != complex64) return a;
  return unary_node(a, Unary::Op::conjugate, complex64, complex64, "conjugate", st);
}

array logical_not(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "logical_not");
  return unary_node(a, Unary::Op::logical_not, bool_, bool_, "logical_not", st);
}
array bitwise_invert(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "bitwise_invert");
  if (is_floating_point(a.dtype())) throw_invalid("bitwise_invert", "Only integers and bool can be inverted.");
  if (a.dtype() == bool_) return logical_not(a, st);
  return unary_node(a, Unary::Op::bitwise_invert, a.dtype(), a.dtype(), "bitwise_invert", st);
}

array stop_gradient(const array& a, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "stop_gradient");
  return array(a.shape(), a.dtype(), detail::make_pooled<StopGradient>(st), {a});
}

// ---- binary ----
array add(const array& a, const array& b, StreamOrDevice s) { return promoted(a, b, Binary::Op::add, "add", std::move(s)); }
array subtract(const array& a, const array& b, StreamOrDevice s) {
  return promoted(a, b, Binary::Op::subtract, "subtract", std::move(s));
}
array multiply(const array& a, const array& b, StreamOrDevice s) {
  return promoted(a, b, Binary::Op::multiply, "multiply", std::move(s));
}
array divide(const array& a, const array& b, StreamOrDevice s) {
  return promoted_float(a, b, Binary::Op::divide, "divide", std::move(s));
}
array floor_divide(const array& a, const array& b, StreamOrDevice s) {
  const Stream st = detail::op_stream(std::move(s), "floor_divide");
  const Dtype t = promote_types(a.dtype(), b.dtype());
  if (t == complex64) throw_invalid("floor_divide", "Not supported for complex64.");
  if (t == float16 || t == bfloat16) {
    // The quotient rounded to t before the floor, as MLX's floor(divide(a, b)); the kernel
    // computes these types in float32 and rounds once.
    detail::broadcast_shapes(a.shape(), b.shape(), "floor_divide");
    return floor(divide(a, b, st), st);
  }
  return binary_node(a, b, Binary::Op::floor_divide, t, t, "floor_divide", st);
}
array remainder(const array& a, const array& b, StreamOrDevice s) {
  return promoted(a, b, Binary::Op::remainder, "remainder", std::move(s));
}
array power(const array& a, const array& b, StreamOrDevice s) {
  return promoted(a, b, Binary::Op::power, "power", std::move(s));
}
array maximum(const array& a, const array& b, StreamOrDevice s) {
  return promoted(a, b, Binary::Op::maximum, "maximum", std::move(s));
}
array minimum(const array& a, const array& b, StreamOrDevice s) {
  return promoted(a, b, Binary::Op::minimum, "minimum", std::move(s));
}
array logaddexp(const array& a, const array& b, StreamOrDevice s) {
  return promoted_float(a, b, Binary::Op::logaddexp, "logaddexp", std::move(s));
}
array arctan2(const array& a, const array& b, StreamOrDevice s) {
  return promoted_float(a, b, Binary::Op::arctan2, "arctan2", std::move(s));
}

array equal(const array& a, const array& b, StreamOrDevice s) {
  return comparison(a, b, Binary::Op::equal, "equal", std::move(s));
}
array not_equal(const array& a, const array& b, StreamOrDevice s) {
  return comparison(a, b, Binary::Op::not_equal, "not_equal", std::move(s));
}
array less(const array& a, const array& b, StreamOrDevice s) {
  return comparison(a, b, Binary::Op::less, "less", std::move(s));
}
array less_equal(const array& a, const array& b, StreamOrDevice s) {
  return comparison(a, b, Binary::Op::less_equal, "less_equal", std::move(s));
}
array greater(const array& a, const array& b, StreamOrDevice s) {
  return comparison(a, b, Binary::Op::greater, "greater", std::move(s));
}
array greater_equal(const array& a, const array& b, StreamOrDevice s) {
  return comparison(a, b, Binary::Op::greater_equal, "greater_equal", std::move(s));
}

array logical_and(const array& a, const array& b, StreamOrDevice s) {
  return logical(a, b, Binary::Op::logical_and, "logical_and", std::move(s));
}
array logical_or(const array& a, const array& b, StreamOrDevice s) {
  return logical(a, b, Binary::Op::logical_or, "logical_or", std::move(s));
}
array bitwise_and(const array& a, const array& b, StreamOrDevice s) {
  return bitwise(a, b, Binary::Op::bitwise_and, false, "bitwise_and", std::move(s));
}
array bitwise_or(const array& a, const array& b, StreamOrDevice s) {
  return bitwise(a, b, Binary::Op::bitwise_or, false, "bitwise_or", std::move(s));
}
array bitwise_xor(const array& a, const array& b, StreamOrDevice s) {
  return bitwise(a, b, Binary::Op::bitwise_xor, false, "bitwise_xor", std::move(s));
}
array left_shift(const array& a, const array& b, StreamOrDevice s) {
  return bitwise(a, b, Binary::Op::left_shift, true, "left_shift", std::move(s));
}
array right_shift(const array& a, const array& b, StreamOrDevice s) {
  return bitwise(a, b, Binary::Op::right_shift, true, "right_shift", std::move(s));
}

// ---- operators ----
array operator-(const array& a) { return negative(a); }
array operator+(const array& a, const array& b) { return add(a, b); }
array operator-(const array& a, const array& b) { return subtract(a, b); }
array operator*(const array& a, const array& b) { return multiply(a, b); }
array operator/(const array& a, const array& b) { return divide(a, b); }
array operator/(double a, const array& b) { return divide(array(a), b); }
array operator/(const array& a, double b) { return divide(a, array(b)); }
array operator%(const array& a, const array& b) { return remainder(a, b); }
array operator&&(const array& a, const array& b) { return logical_and(a, b); }
array operator||(const array& a, const array& b) { return logical_or(a, b); }
array operator&(const array& a, const array& b) { return bitwise_and(a, b); }
array operator|(const array& a, const array& b) { return bitwise_or(a, b); }
array operator^(const array& a, const array& b) { return bitwise_xor(a, b); }
array operator<<(const array& a, const array& b) { return left_shift(a, b); }
array operator>>(const array& a, const array& b) { return right_shift(a, b); }
array operator~(const array& a) { return bitwise_invert(a); }

}  // namespace braid
