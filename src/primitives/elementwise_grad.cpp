// Derivatives of the element-wise primitives. Each Unary and Binary op gives its partial
// derivatives in one switch without a default (-Werror=switch): adding a row to
// elementwise_ops.h without its derivative does not compile. vjp and jvp both use them: a jvp
// multiplies by the derivative f'(z), a vjp by its conjugate (MLX's complex convention).
#include <cmath>
#include <optional>

#include "memory/object_pool.h"
#include "primitives/elementwise.h"
#include "primitives/grad_utils.h"

namespace braid {

using detail::conj_if_complex;
using detail::scalar_like;
using detail::unbroadcast;

namespace detail {

array unbroadcast(const array& g, const Shape& shape, const Stream& s) {
  if (g.shape() == shape) return g;
  const int lead = static_cast<int>(g.ndim()) - static_cast<int>(shape.size());
  std::vector<int> axes;
  for (int i = 0; i < static_cast<int>(g.ndim()); ++i) {
    if (i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1)) axes.push_back(i);
  }
  array r = axes.empty() ? g : sum(g, axes, /*keepdims=*/true, s);
  return reshape(r, shape, s);
}

std::vector<array> zero_grads(const std::vector<array>& primals, const std::vector<int>& argnums,
                              const Stream& s) {
  std::vector<array> out;
  for (int a : argnums) out.push_back(zeros_like(primals[a], s));
  return out;
}

}  // namespace detail

namespace {

constexpr double kPi = 3.14159265358979323846;

// A partial derivative: zero, +-1 (no multiply needed), an array made for it, or an array
// the primitive already has (an input or its output), borrowed without a reference count.
struct Slope {
  enum Kind { zero, one, minus_one, value } kind;
  std::optional<array> v;
  const array* borrowed = nullptr;
  static Slope of(array a) { return {value, std::move(a)}; }
  static Slope of_existing(const array& a) { return {value, std::nullopt, &a}; }
  const array& get() const { return borrowed ? *borrowed : *v; }
};

std::optional<array> apply(const Slope& d, const array& g, bool adjoint, const Stream& s) {
  switch (d.kind) {
    case Slope::zero: return std::nullopt;
    case Slope::one: return g;
    case Slope::minus_one: return negative(g, s);
    case Slope::value:
      // Real slopes (the usual case) go to multiply as they are: no temporary copy.
      if (adjoint && d.get().dtype() == complex64) return multiply(g, conj_if_complex(d.get(), s), s);
      return multiply(g, d.get(), s);
  }
  return std::nullopt;
}

// d y / d x of y = op(x). Complex parts and the complex abs are handled by the callers.
Slope unary_slope(Unary::Op op, const array& x, const array& y, const Stream& s) {
  using Op = Unary::Op;
  auto one = [&] { return scalar_like(1.0, x); };
  switch (op) {
    case Op::abs: return Slope::of(sign(x, s));
    case Op::negative: return {Slope::minus_one, std::nullopt};
    case Op::square: return Slope::of(multiply(scalar_like(2.0, x), x, s));
    case Op::sin: return Slope::of(cos(x, s));
    case Op::cos: return Slope::of(negative(sin(x, s), s));
    case Op::tan: return Slope::of(add(one(), square(y, s), s));
    case Op::arcsin: return Slope::of(rsqrt(subtract(one(), square(x, s), s), s));
    case Op::arccos: return Slope::of(negative(rsqrt(subtract(one(), square(x, s), s), s), s));
    case Op::arctan: return Slope::of(reciprocal(add(one(), square(x, s), s), s));
    case Op::sinh: return Slope::of(cosh(x, s));
    case Op::cosh: return Slope::of(sinh(x, s));
    case Op::tanh: return Slope::of(subtract(one(), square(y, s), s));
    case Op::arcsinh: return Slope::of(rsqrt(add(square(x, s), one(), s), s));
    case Op::arccosh: return Slope::of(rsqrt(subtract(square(x, s), one(), s), s));
    case Op::arctanh: return Slope::of(reciprocal(subtract(one(), square(x, s), s), s));
    case Op::exp: return Slope::of_existing(y);
    case Op::expm1: return Slope::of(add(y, one(), s));
    case Op::log: return Slope::of(reciprocal(x, s));
    case Op::log2: return Slope::of(reciprocal(multiply(x, scalar_like(std::log(2.0), x), s), s));
    case Op::log10: return Slope::of(reciprocal(multiply(x, scalar_like(std::log(10.0), x), s), s));
    case Op::log1p: return Slope::of(reciprocal(add(x, one(), s), s));
    case Op::sqrt: return Slope::of(divide(scalar_like(0.5, x), y, s));
    case Op::rsqrt: return Slope::of(multiply(scalar_like(-0.5, x), divide(y, x, s), s));
    case Op::reciprocal: return Slope::of(negative(square(y, s), s));
    case Op::sigmoid: return Slope::of(multiply(y, subtract(one(), y, s), s));
    case Op::erf:
      return Slope::of(multiply(scalar_like(2.0 / std::sqrt(kPi), x), exp(negative(square(x, s), s), s), s));
    case Op::erfinv:
      return Slope::of(multiply(scalar_like(std::sqrt(kPi) / 2.0, x), exp(square(y, s), s), s));
    // Piecewise constant, or integer/bool valued: no gradient.
    case Op::sign:
    case Op::floor:
    case Op::ceil:
    case Op::round:
    case Op::isnan:
    case Op::isinf:
    case Op::isfinite:
    case Op::isposinf:
    case Op::isneginf:
    case Op::logical_not:
    case Op::bitwise_invert:
    case Op::to_fp8:
    case Op::from_fp8: return {Slope::zero, std::nullopt};
    // Complex parts: linear, handled by complex_part below.
    case Op::real:
    case Op::imag:
    case Op::conjugate: return {Slope::one, std::nullopt};
  }
  return {Slope::zero, std::nullopt};
}

// The linear complex parts: the adjoint maps of real, imag and conjugate (MLX's rules: the
// gradient of imag(z) is i, as d/dy of y is 1).
std::optional<array> complex_part(Unary::Op op, const array& g, bool adjoint, const Stream& s) {
  if (op == Unary::Op::real) return adjoint ? astype(g, complex64, s) : real(g, s);
  if (op == Unary::Op::imag) {
    return adjoint ? multiply(array(complex64_t(0.0f, 1.0f)), astype(g, complex64, s), s) : imag(g, s);
  }
  if (op == Unary::Op::conjugate) return conjugate(g, s);
  return std::nullopt;
}

// d out / d input `arg` of out = op(a, b).
Slope binary_slope(Binary::Op op, int arg, const array& a, const array& b, const array& out,
                   const Stream& s) {
  using Op = Binary::Op;
  switch (op) {
    case Op::add: return {Slope::one, std::nullopt};
    case Op::subtract: return {arg == 0 ? Slope::one : Slope::minus_one, std::nullopt};
    case Op::multiply: return Slope::of_existing(arg == 0 ? b : a);
    case Op::divide: return Slope::of(arg == 0 ? reciprocal(b, s) : negative(divide(out, b, s), s));
    case Op::remainder:
      if (arg == 0) return {Slope::one, std::nullopt};
      return Slope::of(negative(floor(divide(a, b, s), s), s));
    case Op::power: {
      if (arg == 0) return Slope::of(multiply(b, power(a, subtract(b, scalar_like(1.0, b), s), s), s));
      // d/db a^b = log(a) a^b; taken as 0 where a <= 0 (MLX: 0 ** x has no gradient in x), and
      // for complex a only where a == 0 (log is defined off the real axis too).
      const array zero = scalar_like(0.0, a);
      const array defined = a.dtype() == complex64 ? not_equal(a, zero, s) : greater(a, zero, s);
      return Slope::of(multiply(log(where(defined, a, scalar_like(1.0, a), s), s), out, s));
    }
    case Op::maximum:  // ties go to the second argument, as MLX
      return Slope::of(arg == 0 ? greater(a, b, s) : less_equal(a, b, s));
    case Op::minimum: return Slope::of(arg == 0 ? less(a, b, s) : greater_equal(a, b, s));
    case Op::logaddexp:
      return Slope::of(arg == 0 ? sigmoid(subtract(a, b, s), s) : sigmoid(subtract(b, a, s), s));
    case Op::arctan2: {
      array denom = add(square(a, s), square(b, s), s);
      return Slope::of(arg == 0 ? divide(b, denom, s) : negative(divide(a, denom, s), s));
    }
    case Op::floor_divide:
    case Op::equal:
    case Op::not_equal:
    case Op::less:
    case Op::less_equal:
    case Op::greater:
    case Op::greater_equal:
    case Op::logical_and:
    case Op::logical_or:
    case Op::bitwise_and:
    case Op::bitwise_or:
    case Op::bitwise_xor:
    case Op::left_shift:
    case Op::right_shift: return {Slope::zero, std::nullopt};
  }
  return {Slope::zero, std::nullopt};
}

// The Unary op whose value times `g` is the derivative of `op` at x, when that product can
// be one ScaledUnary node: sin' = cos, sinh' = cosh, cosh' = sinh, with g of x's shape and
// dtype (then multiply(g, op'(x)) neither broadcasts nor casts).
std::optional<Unary::Op> scaled_slope(Unary::Op op, const array& g, const array& x) {
  if (g.shape() != x.shape() || g.dtype() != x.dtype()) return std::nullopt;
  switch (op) {
    case Unary::Op::sin: return Unary::Op::cos;
    case Unary::Op::sinh: return Unary::Op::cosh;
    case Unary::Op::cosh: return Unary::Op::sinh;
    default: return std::nullopt;
  }
}

array scaled_unary(Unary::Op op, const array& g, const array& x, const Stream& s) {
  return array(x.shape(), x.dtype(), detail::make_pooled<ScaledUnary>(s, op), {g, x});
}

// `g` as `like`'s dtype: astype, without its copies when the dtype already matches.
array as_dtype_of(array g, const array& like, const Stream& s) {
  if (g.dtype() == like.dtype()) return g;  // moved out, not copied
  return astype(std::move(g), like.dtype(), s);
}

// A vjp's single result, moved into the vector (a braced list would copy it).
std::vector<array> single(array a) {
  std::vector<array> out;
  out.push_back(std::move(a));
  return out;
}

// A jvp result of the output's shape and dtype.
array as_output_tangent(std::optional<array> t, const Shape& shape, Dtype dtype, const Stream& s) {
  if (!t) return zeros(shape, dtype, s);
  array r = t->shape() == shape ? *t : broadcast_to(*t, shape, s);
  return astype(r, dtype, s);
}

}  // namespace

std::vector<array> Unary::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                              const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& x = primals[0];
  if (auto c = complex_part(op_, cotangents[0], /*adjoint=*/true, s)) return {*c};
  // |z| is not holomorphic: its gradient is d|z|/dx + i d|z|/dy = z / |z|, unconjugated.
  if (op_ == Op::abs && x.dtype() == complex64) return {multiply(cotangents[0], sign(x, s), s)};
  // One ScaledUnary node computes g * f'(x); a complex x needs g * conj(f'(x)) instead.
  if (x.dtype() != complex64) {
    if (auto u = scaled_slope(op_, cotangents[0], x)) return single(scaled_unary(*u, cotangents[0], x, s));
  }
  auto g = apply(unary_slope(op_, x, outputs[0], s), cotangents[0], /*adjoint=*/true, s);
  return single(g ? as_dtype_of(std::move(*g), x, s) : zeros_like(x, s));
}

std::vector<array> Unary::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                              const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& y = outputs[0];
  if (auto t = complex_part(op_, tangents[0], /*adjoint=*/false, s)) return {*t};
  // d|z| = Re(conj(z / |z|) dz).
  if (op_ == Op::abs && primals[0].dtype() == complex64) {
    return {real(multiply(tangents[0], conjugate(sign(primals[0], s), s), s), s)};
  }
  if (auto u = scaled_slope(op_, tangents[0], primals[0]))
    return {scaled_unary(*u, tangents[0], primals[0], s)};
  return {as_output_tangent(apply(unary_slope(op_, primals[0], y, s), tangents[0], /*adjoint=*/false, s),
                            y.shape(), y.dtype(), s)};
}

std::vector<array> Binary::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  std::vector<array> out;
  out.reserve(argnums.size());
  for (int arg : argnums) {
    const array& p = primals[arg];
    auto g = apply(binary_slope(op_, arg, primals[0], primals[1], outputs[0], s), cotangents[0],
                   /*adjoint=*/true, s);
    if (!g) {
      out.push_back(zeros_like(p, s));
    } else {
      out.push_back(
          as_dtype_of(g->shape() == p.shape() ? std::move(*g) : unbroadcast(*g, p.shape(), s), p, s));
    }
  }
  return out;
}

std::vector<array> Binary::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& y = outputs[0];
  std::optional<array> total;
  for (size_t i = 0; i < argnums.size(); ++i) {
    auto t = apply(binary_slope(op_, argnums[i], primals[0], primals[1], y, s), tangents[i],
                   /*adjoint=*/false, s);
    if (t) total = total ? add(*total, *t, s) : *t;
  }
  return {as_output_tangent(total, y.shape(), y.dtype(), s)};
}

std::vector<array> Select::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  std::vector<array> out;
  for (int arg : argnums) {
    const array& p = primals[arg];
    if (arg == 0) {
      out.push_back(zeros_like(p, s));
      continue;
    }
    array zero = zeros_like(c, s);
    array g = arg == 1 ? where(primals[0], c, zero, s) : where(primals[0], zero, c, s);
    out.push_back(unbroadcast(g, p.shape(), s));
  }
  return out;
}

std::vector<array> Select::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& x = primals[1];
  array tx = zeros_like(x, s);
  array ty = zeros_like(primals[2], s);
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 1) tx = tangents[i];
    if (argnums[i] == 2) ty = tangents[i];
  }
  return {where(primals[0], tx, ty, s)};
}

// ScaledUnary's derivatives are those of the pair it fuses, u = op(x) and multiply(g, u),
// taken by the same rules, so that derivatives of any order match the unfused graph's.
namespace {
// The pair a ScaledUnary fuses: u = op(x) and product = multiply(g, u).
struct UnfusedPair {
  Unary unary;
  Binary product;
  array u;
  UnfusedPair(const Stream& s, Unary::Op op, const array& x)
      : unary(s, op),
        product(s, Binary::Op::multiply),
        u(x.shape(), x.dtype(), detail::make_pooled<Unary>(s, op), {x}) {}
};
}  // namespace

std::vector<array> ScaledUnary::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const array& x = primals[1];
  auto [unary, product, u] = UnfusedPair(stream(), op_, x);
  std::vector<array> out;
  for (int arg : argnums) {
    const std::vector<array> d = product.vjp({primals[0], u}, cotangents, {arg}, outputs);
    out.push_back(arg == 0 ? d[0] : unary.vjp({x}, d, {0}, {u})[0]);
  }
  return out;
}

std::vector<array> ScaledUnary::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const array& x = primals[1];
  auto [unary, product, u] = UnfusedPair(stream(), op_, x);
  std::vector<array> product_tangents;
  for (size_t i = 0; i < argnums.size(); ++i) {
    product_tangents.push_back(argnums[i] == 0 ? tangents[i] : unary.jvp({x}, {tangents[i]}, {0}, {u})[0]);
  }
  return product.jvp({primals[0], u}, product_tangents, argnums, outputs);
}

std::vector<array> StopGradient::vjp(const std::vector<array>& primals, const std::vector<array>&,
                                     const std::vector<int>& argnums, const std::vector<array>&) {
  return detail::zero_grads(primals, argnums, stream());
}

std::vector<array> StopGradient::jvp(const std::vector<array>& primals, const std::vector<array>&,
                                     const std::vector<int>&, const std::vector<array>&) {
  return {zeros_like(primals[0], stream())};
}

}  // namespace braid
