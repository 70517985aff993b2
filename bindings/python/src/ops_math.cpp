// Element-wise ops of braid.core (mlx.core's names and signatures): unary math, binary
// arithmetic with MLX's weak Python scalars, comparisons, logic and bitwise ops, and the
// matching array methods (a.abs(), a.exp(), a.round(), ...). Each op is one table row.
#include <string_view>

#include "python.h"

namespace braid::python {

namespace {

using UnaryOp = array (*)(const array&, StreamOrDevice);
using BinaryOp = array (*)(const array&, const array&, StreamOrDevice);

struct UnaryRow {
  const char* name;
  UnaryOp op;
  const char* doc;
};

struct BinaryRow {
  const char* name;
  BinaryOp op;
  const char* doc;
};

const UnaryRow kUnary[] = {
    {"abs", &abs, "Element-wise absolute value."},
    {"sign", &sign, "Element-wise sign: -1, 0 or 1 (a / |a| for complex)."},
    {"negative", &negative, "Element-wise negation."},
    {"square", &square, "Element-wise square."},
    {"floor", &floor, "Element-wise floor."},
    {"ceil", &ceil, "Element-wise ceiling."},
    {"sin", &sin, "Element-wise sine."},
    {"cos", &cos, "Element-wise cosine."},
    {"tan", &tan, "Element-wise tangent."},
    {"arcsin", &arcsin, "Element-wise inverse sine."},
    {"arccos", &arccos, "Element-wise inverse cosine."},
    {"arctan", &arctan, "Element-wise inverse tangent."},
    {"sinh", &sinh, "Element-wise hyperbolic sine."},
    {"cosh", &cosh, "Element-wise hyperbolic cosine."},
    {"tanh", &tanh, "Element-wise hyperbolic tangent."},
    {"arcsinh", &arcsinh, "Element-wise inverse hyperbolic sine."},
    {"arccosh", &arccosh, "Element-wise inverse hyperbolic cosine."},
    {"arctanh", &arctanh, "Element-wise inverse hyperbolic tangent."},
    {"degrees", &degrees, "Angles in radians converted to degrees."},
    {"radians", &radians, "Angles in degrees converted to radians."},
    {"exp", &exp, "Element-wise exponential."},
    {"expm1", &expm1, "exp(a) - 1, accurate for small a."},
    {"log", &log, "Element-wise natural logarithm."},
    {"log2", &log2, "Element-wise base-2 logarithm."},
    {"log10", &log10, "Element-wise base-10 logarithm."},
    {"log1p", &log1p, "log(1 + a), accurate for small a."},
    {"sqrt", &sqrt, "Element-wise square root."},
    {"rsqrt", &rsqrt, "Element-wise reciprocal square root."},
    {"reciprocal", &reciprocal, "Element-wise reciprocal."},
    {"sigmoid", &sigmoid, "Element-wise logistic sigmoid 1 / (1 + exp(-a))."},
    {"erf", &erf, "Element-wise error function."},
    {"erfinv", &erfinv, "Element-wise inverse of erf."},
    {"isnan", &isnan, "True where an element is NaN."},
    {"isinf", &isinf, "True where an element is +inf or -inf."},
    {"isfinite", &isfinite, "True where an element is neither infinite nor NaN."},
    {"isposinf", &isposinf, "True where an element is +inf."},
    {"isneginf", &isneginf, "True where an element is -inf."},
    {"real", &real, "The real part of a complex array."},
    {"imag", &imag, "The imaginary part of a complex array."},
    {"conjugate", &conjugate, "Element-wise complex conjugate."},
    {"conj", &conjugate, "Element-wise complex conjugate (same as conjugate)."},
    {"stop_gradient", &stop_gradient, "The identity, through which no gradient flows."},
    {"logical_not", &logical_not, "Element-wise logical not."},
    {"bitwise_invert", &bitwise_invert, "Element-wise bitwise complement (~a)."},
};

// The unary ops that mlx.core.array also has as methods.
const char* const kUnaryMethods[] = {"abs",  "square", "sqrt", "rsqrt", "reciprocal", "exp", "log",
                                     "log2", "log10",  "sin",  "cos",   "log1p",      "conj"};

// Binary ops whose Python scalar operands follow MLX's weak-scalar rule (python.h to_arrays).
const BinaryRow kBinary[] = {
    {"add", &add, "Element-wise a + b with NumPy broadcasting."},
    {"subtract", &subtract, "Element-wise a - b with NumPy broadcasting."},
    {"multiply", &multiply, "Element-wise a * b with NumPy broadcasting."},
    {"divide", &divide, "Element-wise true division a / b."},
    {"floor_divide", &floor_divide, "Element-wise a // b."},
    {"remainder", &remainder, "Element-wise a % b, with the sign of b."},
    {"power", &power, "Element-wise a ** b."},
    {"maximum", &maximum, "Element-wise maximum."},
    {"minimum", &minimum, "Element-wise minimum."},
    {"logaddexp", &logaddexp, "Element-wise log(exp(a) + exp(b)), computed stably."},
    {"arctan2", &arctan2, "Element-wise angle of the point (b, a)."},
    {"equal", &equal, "Element-wise a == b."},
    {"not_equal", &not_equal, "Element-wise a != b."},
    {"less", &less, "Element-wise a < b."},
    {"less_equal", &less_equal, "Element-wise a <= b."},
    {"greater", &greater, "Element-wise a > b."},
    {"greater_equal", &greater_equal, "Element-wise a >= b."},
    {"bitwise_and", &bitwise_and, "Element-wise bitwise and."},
    {"bitwise_or", &bitwise_or, "Element-wise bitwise or."},
    {"bitwise_xor", &bitwise_xor, "Element-wise bitwise exclusive or."},
    {"left_shift", &left_shift, "Element-wise a << b."},
    {"right_shift", &right_shift, "Element-wise a >> b."},
};

// Logical ops convert each operand on its own (the result is bool either way).
const BinaryRow kLogical[] = {
    {"logical_and", &logical_and, "Element-wise logical and."},
    {"logical_or", &logical_or, "Element-wise logical or."},
};

bool has_method(const char* name) {
  for (const char* m : kUnaryMethods) {
    if (std::string_view(m) == name) return true;
  }
  return false;
}

void def_unary(py::module_& m, const UnaryRow& row) {
  m.def(
      row.name, [op = row.op](py::handle a, py::handle s) { return op(to_array(a), to_stream_or_device(s)); },
      "a"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(), row.doc);
}

void def_binary(py::module_& m, const BinaryRow& row, bool weak_scalars) {
  m.def(
      row.name,
      [op = row.op, weak_scalars](py::handle a, py::handle b, py::handle s) {
        if (weak_scalars) {
          auto [x, y] = to_arrays(a, b);
          return op(x, y, to_stream_or_device(s));
        }
        return op(to_array(a), to_array(b), to_stream_or_device(s));
      },
      "a"_a, "b"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(), row.doc);
}

std::optional<array> optional_bound(const array& a, py::handle bound) {
  if (bound.is_none()) return std::nullopt;
  return to_arrays(py::cast(a), bound).second;
}

void def_special(py::module_& m) {
  m.def(
      "round",
      [](py::handle a, int decimals, py::handle s) {
        return round(to_array(a), decimals, to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "decimals"_a = 0, py::kw_only(), "stream"_a = py::none(),
      "Rounds half to even at `decimals` digits (negative: left of the decimal point).");
  m.def(
      "nan_to_num",
      [](py::handle a, float nan, std::optional<float> posinf, std::optional<float> neginf, py::handle s) {
        return nan_to_num(to_array(a), nan, posinf, neginf, to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "nan"_a = 0.0f, "posinf"_a = py::none(), "neginf"_a = py::none(), py::kw_only(),
      "stream"_a = py::none(),
      "NaN, +inf and -inf replaced by `nan`, `posinf` and `neginf` (the infinities default to the "
      "dtype's largest and lowest finite values).");
  m.def(
      "divmod",
      [](py::handle a, py::handle b, py::handle s) {
        auto [x, y] = to_arrays(a, b);
        return divmod(x, y, to_stream_or_device(s));
      },
      "a"_a, "b"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(),
      "The quotient a // b and the remainder a % b, as a list of two arrays.");
  m.def(
      "clip",
      [](py::handle a_obj, py::handle a_min, py::handle a_max, py::handle s) {
        const array a = to_array(a_obj);
        return clip(a, optional_bound(a, a_min), optional_bound(a, a_max), to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "a_min"_a.none(true), "a_max"_a.none(true), py::kw_only(),
      "stream"_a = py::none(), "a clipped to [a_min, a_max]; either bound may be None, not both.");
  m.def(
      "where",
      [](py::handle condition, py::handle x, py::handle y, py::handle s) {
        auto [xa, ya] = to_arrays(x, y);
        return where(to_array(condition), xa, ya, to_stream_or_device(s));
      },
      "condition"_a, "x"_a, "y"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(),
      "Elements of x where condition is true, else of y (all three broadcast together).");
  m.def(
      "isclose",
      [](py::handle a, py::handle b, double rtol, double atol, bool equal_nan, py::handle s) {
        auto [x, y] = to_arrays(a, b);
        return isclose(x, y, rtol, atol, equal_nan, to_stream_or_device(s));
      },
      "a"_a, "b"_a, py::pos_only(), "rtol"_a = 1e-5, "atol"_a = 1e-8, py::kw_only(), "equal_nan"_a = false,
      "stream"_a = py::none(), "Element-wise |a - b| <= atol + rtol * |b|, with NumPy broadcasting.");
  m.def(
      "allclose",
      [](py::handle a, py::handle b, double rtol, double atol, bool equal_nan, py::handle s) {
        auto [x, y] = to_arrays(a, b);
        return allclose(x, y, rtol, atol, equal_nan, to_stream_or_device(s));
      },
      "a"_a, "b"_a, py::pos_only(), "rtol"_a = 1e-5, "atol"_a = 1e-8, py::kw_only(), "equal_nan"_a = false,
      "stream"_a = py::none(), "True (a 0-d bool array) when every element pair is close (see isclose).");
  m.def(
      "array_equal",
      [](py::handle a, py::handle b, bool equal_nan, py::handle s) {
        auto [x, y] = to_arrays(a, b);
        return array_equal(x, y, equal_nan, to_stream_or_device(s));
      },
      "a"_a, "b"_a, py::pos_only(), py::kw_only(), "equal_nan"_a = false, "stream"_a = py::none(),
      "True (a 0-d bool array) when a and b have the same shape and equal values; dtypes may differ.");
  m.def(
      "astype",
      [](py::handle a, Dtype dtype, py::handle s) {
        return astype(to_array(a), dtype, to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "dtype"_a, py::kw_only(), "stream"_a = py::none(), "a converted to `dtype`.");
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  for (const auto& row : kUnary) def_unary(m, row);
  for (const auto& row : kBinary) def_binary(m, row, true);
  for (const auto& row : kLogical) def_binary(m, row, false);
  def_special(m);
}

BRAID_PYTHON_INIT(kInitArrayMethods) {
  auto cls = array_class(m);
  for (const auto& row : kUnary) {
    if (!has_method(row.name)) continue;
    cls.def(
        row.name, [op = row.op](const array& a, py::handle s) { return op(a, to_stream_or_device(s)); },
        py::kw_only(), "stream"_a = py::none(), row.doc);
  }
  cls.def(
      "round",
      [](const array& a, int decimals, py::handle s) { return round(a, decimals, to_stream_or_device(s)); },
      "decimals"_a = 0, py::kw_only(), "stream"_a = py::none(), "See round.");
}

}  // namespace braid::python
