// Function transforms: every differentiable primitive's vjp and jvp against central finite
// differences (one table row per op drives both checks, on every device: float64 on the
// CPU, float32 with a looser tolerance on the GPU), the grad/value_and_grad forms and their
// errors, zero cotangents of integer outputs, stop_gradient, custom_vjp, checkpoint, a
// 10^6-node chain, and differentiation across threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "braid/fft.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using test::values;

namespace {

using Fn = std::function<array(const std::vector<array>&)>;
using VecFn = std::function<std::vector<array>(const std::vector<array>&)>;

// One differentiable op: its inputs' shapes and value range, and the call. Values closer than
// 0.1 to `avoid` are drawn again (kinks); `zeros` lists (input, flat index) set to 0.
struct GradCase {
  std::string name;
  std::vector<Shape> shapes;
  double lo, hi;
  Fn f;
  double avoid = std::nan("");
  std::vector<std::pair<int, int>> zeros = {};
  bool float32_kernel = false;  // computes in float32 whatever the dtype: a wider step
  bool linear = false;          // linear in each input: a wide step is exact, and rounds less
};

size_t numel(const Shape& s) {
  size_t n = 1;
  for (auto d : s) n *= static_cast<size_t>(d);
  return n;
}

struct Precision {
  Dtype dtype;
  double step, tol;
};

Precision precision_for(const Device& dev, const GradCase& c) {
  // The GPU runs float32 (not every GPU kernel takes float64), with a wider step.
  if (dev != Device::cpu) return {float32, c.linear ? 0.1 : 1e-2, 3e-2};
  if (!c.float32_kernel) return {float64, 1e-6, 2e-6};
  return {float64, c.linear ? 0.1 : 1e-3, 1e-3};
}

std::vector<double> draw(size_t n, const GradCase& c, std::mt19937& rng) {
  // Distinct values at least 0.03 apart (points of a 0.05 grid, each moved by up to 0.01), so
  // that no finite-difference step (at most 0.01) reorders two elements: sort, max, topk and
  // the like have kinks where elements tie. Plain uniform draws when the range is too narrow.
  std::vector<double> grid;
  for (double x = c.lo + 0.025; x < c.hi - 0.01; x += 0.05) {
    if (std::isnan(c.avoid) || std::abs(x - c.avoid) >= 0.11) grid.push_back(x);
  }
  if (grid.size() >= n) {
    std::shuffle(grid.begin(), grid.end(), rng);
    std::uniform_real_distribution<double> jitter(-0.01, 0.01);
    std::vector<double> v(grid.begin(), grid.begin() + static_cast<std::ptrdiff_t>(n));
    for (auto& x : v) x += jitter(rng);
    return v;
  }
  std::uniform_real_distribution<double> u(c.lo, c.hi);
  std::vector<double> v(n);
  for (auto& x : v) {
    do {
      x = u(rng);
    } while (!std::isnan(c.avoid) && std::abs(x - c.avoid) < 0.1);
  }
  return v;
}

// Checks a case's vjp and jvp against the finite-difference Jacobian on `dev`.
void check_case(const GradCase& c, const Device& dev, uint32_t seed) {
  SCOPED_TRACE(c.name + " on " + test::device_name(dev) + ", seed " + std::to_string(seed));
  StreamContext ctx(dev);
  const Precision p = precision_for(dev, c);
  std::mt19937 rng(seed);
  std::vector<std::vector<double>> xs;
  for (const auto& s : c.shapes) xs.push_back(draw(numel(s), c, rng));
  for (auto [i, k] : c.zeros) xs[i][k] = 0.0;
  auto build = [&](const std::vector<std::vector<double>>& vals) {
    std::vector<array> in;
    for (size_t i = 0; i < vals.size(); ++i) in.push_back(test::make(vals[i], c.shapes[i], p.dtype));
    return in;
  };
  const std::vector<array> inputs = build(xs);
  array y0 = c.f(inputs);
  const std::vector<double> y = values(y0);
  const Shape out_shape = y0.shape();

  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> cot(y.size());
  for (auto& v : cot) v = u(rng);
  std::vector<std::vector<double>> tans;
  for (const auto& x : xs) {
    tans.emplace_back(x.size());
    for (auto& v : tans.back()) v = u(rng);
  }

  // Columns of the Jacobian by central differences: want_vjp[i][k] = <cot, J e_ik>.
  std::vector<std::vector<double>> want_vjp(xs.size());
  std::vector<double> want_jvp(y.size(), 0.0);
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t k = 0; k < xs[i].size(); ++k) {
      auto plus = xs, minus = xs;
      plus[i][k] += p.step;
      minus[i][k] -= p.step;
      std::vector<double> fp = values(c.f(build(plus))), fm = values(c.f(build(minus)));
      double dot = 0;
      for (size_t o = 0; o < y.size(); ++o) {
        // Equal (say, infinite identity) values: constant.
        const double d = fp[o] == fm[o] ? 0.0 : (fp[o] - fm[o]) / (2 * p.step);
        dot += cot[o] * d;
        want_jvp[o] += d * tans[i][k];
      }
      want_vjp[i].push_back(dot);
    }
  }

  VecFn vf = [&c](const std::vector<array>& in) { return std::vector<array>{c.f(in)}; };
  auto [vals, grads] = vjp(vf, inputs, {test::make(cot, out_shape, p.dtype)});
  ASSERT_EQ(grads.size(), xs.size());
  const double same = dev == Device::cpu ? 1e-12 : 1e-5;  // the same kernels, maybe another order on the GPU
  test::expect_close(values(vals[0]), y, same, same, "vjp value");
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(grads[i].shape(), c.shapes[i]) << "vjp shape of input " << i;
    EXPECT_EQ(grads[i].dtype(), p.dtype) << "vjp dtype of input " << i;
    test::expect_close(values(grads[i]), want_vjp[i], p.tol, p.tol, "vjp of input " + std::to_string(i));
  }

  std::vector<array> tangents;
  for (size_t i = 0; i < xs.size(); ++i) tangents.push_back(test::make(tans[i], c.shapes[i], p.dtype));
  auto [jvals, jtans] = jvp(vf, inputs, tangents);
  ASSERT_EQ(jtans.size(), 1u);
  EXPECT_EQ(jtans[0].shape(), out_shape) << "jvp shape";
  test::expect_close(values(jtans[0]), want_jvp, p.tol, p.tol, "jvp");
}

void run_cases(const std::vector<GradCase>& cases, uint32_t seed) {
  for (const Device& dev : test::test_devices()) {
    for (const auto& c : cases) check_case(c, dev, seed++);
  }
}

const Shape s23{2, 3};

GradCase unary(const std::string& name, array (*op)(const array&, StreamOrDevice), double lo, double hi,
               double avoid = std::nan("")) {
  return {name, {s23}, lo, hi, [op](const std::vector<array>& x) { return op(x[0], {}); }, avoid};
}

GradCase binary(const std::string& name, array (*op)(const array&, const array&, StreamOrDevice),
                std::vector<Shape> shapes, double lo, double hi) {
  return {name, std::move(shapes), lo, hi, [op](const std::vector<array>& x) { return op(x[0], x[1], {}); }};
}

// ---- the tables ----

std::vector<GradCase> unary_cases() {
  return {
      unary("abs", abs, -2, 2, 0.0),
      unary("negative", negative, -2, 2),
      unary("square", square, -2, 2),
      unary("sign", sign, -2, 2, 0.0),
      unary("floor", floor, 0.2, 0.8),
      unary("ceil", ceil, 0.2, 0.8),
      {"round", {s23}, 0.1, 0.4, [](const std::vector<array>& x) { return round(x[0]); }},
      unary("sin", sin, -3, 3),
      unary("cos", cos, -3, 3),
      unary("tan", tan, -1, 1),
      unary("arcsin", arcsin, -0.8, 0.8),
      unary("arccos", arccos, -0.8, 0.8),
      unary("arctan", arctan, -3, 3),
      unary("sinh", sinh, -2, 2),
      unary("cosh", cosh, -2, 2),
      unary("tanh", tanh, -2, 2),
      unary("arcsinh", arcsinh, -2, 2),
      unary("arccosh", arccosh, 1.5, 3),
      unary("arctanh", arctanh, -0.8, 0.8),
      unary("exp", exp, -2, 2),
      unary("expm1", expm1, -2, 2),
      unary("log", log, 0.5, 3),
      unary("log2", log2, 0.5, 3),
      unary("log10", log10, 0.5, 3),
      unary("log1p", log1p, 0, 2),
      unary("sqrt", sqrt, 0.5, 3),
      unary("rsqrt", rsqrt, 0.5, 3),
      unary("reciprocal", reciprocal, 0.5, 2),
      unary("sigmoid", sigmoid, -3, 3),
      unary("erf", erf, -1.5, 1.5),
      unary("erfinv", erfinv, -0.8, 0.8),
  };
}

std::vector<GradCase> binary_cases() {
  const std::vector<Shape> same{s23, s23}, bcast{{2, 1}, {3}};
  return {
      binary("add", add, same, -2, 2),
      binary("add broadcast", add, bcast, -2, 2),
      binary("subtract", subtract, bcast, -2, 2),
      binary("multiply", multiply, same, -2, 2),
      binary("multiply broadcast", multiply, {s23, {}}, -2, 2),
      binary("divide", divide, bcast, 0.5, 2),
      binary("power", power, same, 0.5, 2),
      binary("maximum", maximum, same, -2, 2),
      binary("minimum", minimum, bcast, -2, 2),
      binary("logaddexp", logaddexp, same, -2, 2),
      binary("arctan2", arctan2, same, 0.5, 2),
      {"remainder", same, 0, 0.3,  // a / b stays inside (2, 3)
       [](const std::vector<array>& x) { return remainder(x[0] + array(4.5), x[1] + array(1.9)); }},
      {"where",
       {s23, {3}},
       -2,
       2,
       [](const std::vector<array>& x) { return where(x[0] > x[1], x[0] * x[1], x[1]); }},
      {"comparison is constant", same, -2, 2,
       [](const std::vector<array>& x) { return x[0] * astype(greater(x[0], x[1]), x[0].dtype()); }},
      {"clip", {s23}, -2, 2, [](const std::vector<array>& x) { return clip(x[0], array(-1.0), array(1.0)); }},
  };
}

std::vector<GradCase> reduce_cases() {
  const Shape s234{2, 3, 4};
  auto r = [](const std::string& name, std::function<array(const array&)> f, Shape shape, double lo,
              double hi) {
    return GradCase{name, {std::move(shape)}, lo, hi, [f](const std::vector<array>& x) { return f(x[0]); }};
  };
  std::vector<GradCase> cases = {
      r(
          "sum", [](const array& x) { return sum(x); }, s234, -1, 1),
      r(
          "sum axes",
          [](const array& x) {
            return sum(x, {0, 2});
          },
          s234, -1, 1),
      r(
          "sum keepdims", [](const array& x) { return sum(x, 1, true); }, s234, -1, 1),
      r(
          "prod", [](const array& x) { return prod(x, 1); }, s234, 0.5, 1.5),
      r(
          "prod axes",
          [](const array& x) {
            return prod(x, {0, 2});
          },
          s234, 0.5, 1.5),
      r(
          "max", [](const array& x) { return max(x, 2); }, s234, -1, 1),
      r(
          "min",
          [](const array& x) {
            return min(x, {0, 1});
          },
          s234, -1, 1),
      r(
          "mean", [](const array& x) { return mean(x, 1); }, s234, -1, 1),
      r(
          "var", [](const array& x) { return var(x, 2); }, s234, -1, 1),
      r(
          "logsumexp", [](const array& x) { return logsumexp(x, 1); }, s234, -1, 1),
      r(
          "softmax other axis", [](const array& x) { return softmax(x, 0); }, s234, -1, 1),
      r(
          "argmax is constant", [](const array& x) { return x * astype(argmax(x, 1, true), x.dtype()); },
          s234, -1, 1),
      r(
          "cumsum", [](const array& x) { return cumsum(x, 1); }, s234, -1, 1),
      r(
          "cumsum reverse exclusive", [](const array& x) { return cumsum(x, 2, true, false); }, s234, -1, 1),
      r(
          "cumprod", [](const array& x) { return cumprod(x, 2); }, s234, 0.5, 1.5),
      r(
          "cumprod reverse", [](const array& x) { return cumprod(x, 2, true); }, s234, 0.5, 1.5),
      r(
          "cumprod exclusive", [](const array& x) { return cumprod(x, 2, false, false); }, s234, 0.5, 1.5),
      r(
          "cumprod reverse exclusive", [](const array& x) { return cumprod(x, 1, true, false); }, s234, 0.5,
          1.5),
      r(
          "cummax", [](const array& x) { return cummax(x, 2); }, s234, -1, 1),
      r(
          "cummin reverse", [](const array& x) { return cummin(x, 1, true); }, s234, -1, 1),
      r(
          "cummax exclusive", [](const array& x) { return cummax(x, 2, false, false); }, s234, -1, 1),
      r(
          "logcumsumexp", [](const array& x) { return logcumsumexp(x, 2); }, s234, -1, 1),
      r(
          "logcumsumexp reverse exclusive", [](const array& x) { return logcumsumexp(x, 2, true, false); },
          s234, -1, 1),
  };
  // Products through zeros: one zero, and two in the same group.
  GradCase p1 = r(
      "prod with a zero", [](const array& x) { return prod(x, 1); }, s234, 0.5, 1.5);
  p1.zeros = {{0, 5}};
  GradCase p2 = r(
      "prod with two zeros", [](const array& x) { return prod(x, 2); }, s234, 0.5, 1.5);
  p2.zeros = {{0, 1}, {0, 3}};
  GradCase c1 = r(
      "cumprod with a zero", [](const array& x) { return cumprod(x, 2); }, s234, 0.5, 1.5);
  c1.zeros = {{0, 1}, {0, 6}, {0, 7}};
  GradCase c2 = r(
      "cumprod reverse exclusive with zeros", [](const array& x) { return cumprod(x, 2, true, false); }, s234,
      0.5, 1.5);
  c2.zeros = {{0, 2}, {0, 4}, {0, 5}};
  GradCase c3 = r(
      "prod all with a zero", [](const array& x) { return prod(x); }, {2, 3}, 0.5, 1.5);
  c3.zeros = {{0, 4}};
  GradCase sm = r(
      "softmax last axis", [](const array& x) { return softmax(x, -1); }, s234, -1, 1);
  sm.float32_kernel = true;
  cases.insert(cases.end(), {p1, p2, c1, c2, c3, sm});
  return cases;
}

std::vector<GradCase> shape_cases() {
  const Shape s234{2, 3, 4};
  auto r = [](const std::string& name, std::function<array(const array&)> f, Shape shape) {
    return GradCase{name, {std::move(shape)}, -1, 1, [f](const std::vector<array>& x) { return f(x[0]); }};
  };
  return {
      r(
          "reshape",
          [](const array& x) {
            return reshape(x, {4, 6});
          },
          s234),
      r(
          "transpose",
          [](const array& x) {
            return transpose(x, {2, 0, 1});
          },
          s234),
      r("squeeze", [](const array& x) { return squeeze(x, 1); }, {2, 1, 3}),
      r(
          "expand_dims",
          [](const array& x) {
            return expand_dims(x, {0, 2});
          },
          s23),
      r("broadcast_to",
        [](const array& x) {
          return broadcast_to(x, {2, 3, 3});
        },
        {3, 1}),
      r(
          "flatten", [](const array& x) { return flatten(x, 0, 1); }, s234),
      r(
          "slice",
          [](const array& x) {
            return slice(x, {0, 1, 0}, {2, 3, 4}, {1, 1, 2});
          },
          s234),
      r(
          "slice negative stride",
          [](const array& x) {
            return slice(x, {1, 2, 3}, {-3, -4, -5}, {-1, -1, -2});
          },
          s234),
      r(
          "dynamic slice",
          [](const array& x) {
            return slice(x, array({1}), {1}, {2, 2, 4});
          },
          s234),
      r(
          "concatenate",
          [](const array& x) {
            return concatenate({x, square(x), x}, 1);
          },
          s234),
      r(
          "pad",
          [](const array& x) {
            return pad(x, {{1, 0}, {0, 2}});
          },
          s23),
      r(
          "as_strided",
          [](const array& x) {
            return as_strided(x, {3, 3}, {2, 1}, 1);
          },
          s234),
      r(
          "diagonal", [](const array& x) { return diagonal(x, 1, 1, 2); }, s234),
      r(
          "diagonal negative", [](const array& x) { return diagonal(x, -1, 2, 0); }, s234),
      r("trace", [](const array& x) { return trace(x, 0, 0, 1); }, {3, 3}),
      r(
          "split", [](const array& x) { return split(x, 2, 2)[1] * split(x, 2, 2)[0]; }, s234),
      r(
          "repeat", [](const array& x) { return repeat(x, 2, 1); }, s23),
      r(
          "tile",
          [](const array& x) {
            return tile(x, {2, 1});
          },
          s23),
      r(
          "swapaxes", [](const array& x) { return swapaxes(x, 0, 2); }, s234),
      r(
          "copy and contiguous", [](const array& x) { return contiguous(transpose(copy(x))); }, s23),
      r("full",
        [](const array& x) {
          return full({2, 3}, x) * x;
        },
        {3}),
      {"slice_update",
       {s234, {2, 1, 2}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return slice_update(x[0], x[1], {0, 1, 1}, {2, 2, 4}, {1, 1, 2});
       }},
      {"dynamic slice_update",
       {s234, {1, 2}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return slice_update(x[0], x[1], array({1, 2}), {1, 2});
       }},
      {"concatenate two inputs",
       {s23, {2, 2}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return concatenate({x[0], x[1]}, 1);
       }},
      {"pad value",
       {s23, {}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return pad(x[0], {{1, 1}, {0, 1}}, x[1]);
       }},
      {"depends",
       {s23, s23},
       -1,
       1,
       [](const std::vector<array>& x) { return depends({x[0]}, {x[1]})[0] * x[1]; }},
  };
}

// Fixed float32 weights of `shape` for the quantized products: sin of their positions.
array fixed_weights(const Shape& shape) {
  return reshape(sin(arange(0.0, static_cast<double>(numel(shape)), float32)), shape);
}

std::vector<GradCase> linalg_cases() {
  // Convolutions take no float64: the case computes in float32 with the wider step.
  auto conv = [](const std::string& name, std::vector<Shape> shapes, std::function<array(const array&, const array&)> f) {
    GradCase c{name, std::move(shapes), -1, 1, [f](const std::vector<array>& x) {
                 return astype(f(astype(x[0], float32), astype(x[1], float32)), x[0].dtype());
               }};
    c.float32_kernel = true;
    return c;
  };
  // The quantized products take float32 x (the weights are constants of the case).
  auto quantized = [](const std::string& name, std::vector<Shape> shapes,
                      std::function<array(const array&)> f) {
    GradCase c{name, std::move(shapes), -1, 1,
               [f](const std::vector<array>& x) { return astype(f(astype(x[0], float32)), x[0].dtype()); }};
    c.float32_kernel = true;
    return c;
  };
  // Derivatives with respect to affine scales and biases (and x where given): every input in
  // float32, the packed integers of fixed weights.
  auto affine_params = [](const std::string& name, std::vector<Shape> shapes,
                          std::function<array(const std::vector<array>&)> f) {
    GradCase c{name, std::move(shapes), -1, 1, [f](const std::vector<array>& x) {
                 std::vector<array> in;
                 for (const auto& a : x) in.push_back(astype(a, float32));
                 return astype(f(in), x[0].dtype());
               }};
    c.float32_kernel = true;
    c.linear = true;
    return c;
  };
  auto packed = [](const Shape& shape) { return quantize(fixed_weights(shape), 32, 4)[0]; };
  // The Fourier transforms compute in complex64: their real and imaginary parts side by side.
  auto fourier = [](const std::string& name, std::vector<Shape> shapes, std::function<array(const std::vector<array>&)> f) {
    GradCase c{name, std::move(shapes), -1, 1, [f](const std::vector<array>& x) {
                 array y = f(x);
                 if (y.dtype() == complex64) y = concatenate({real(y), imag(y)}, -1);
                 return astype(y, x[0].dtype());
               }};
    c.float32_kernel = true;
    return c;
  };
  auto complex_of = [](const array& re, const array& im) {
    return astype(re, complex64) + astype(im, complex64) * array(complex64_t(0.0f, 1.0f));
  };
  return {
      fourier("fft::fft", {{2, 5}}, [](const std::vector<array>& x) { return fft::fft(x[0]); }),
      fourier("fft::ifft2 of a complex input, padded and truncated", {{3, 4}, {3, 4}},
              [complex_of](const std::vector<array>& x) { return fft::ifft2(complex_of(x[0], x[1]), {4, 3}, {0, 1}); }),
      fourier("fft::rfft odd", {{2, 5}}, [](const std::vector<array>& x) { return fft::rfft(x[0]); }),
      fourier("fft::rfftn axes (1, 0)", {{3, 4}}, [](const std::vector<array>& x) { return fft::rfftn(x[0], {1, 0}); }),
      fourier("fft::irfft even", {{2, 3}, {2, 3}},
              [complex_of](const std::vector<array>& x) { return fft::irfft(complex_of(x[0], x[1])); }),
      fourier("fft::irfft2 odd", {{3, 3}, {3, 3}},
              [complex_of](const std::vector<array>& x) { return fft::irfft2(complex_of(x[0], x[1]), {3, 5}, {0, 1}); }),
      binary("matmul", matmul, {{2, 3}, {3, 4}}, -1, 1),
      binary("matmul batched broadcast", matmul, {{2, 2, 3}, {3, 2}}, -1, 1),
      binary("matmul vector", matmul, {{3}, {3, 2}}, -1, 1),
      {"addmm",
       {{2, 4}, {2, 3}, {3, 4}},
       -1,
       1,
       [](const std::vector<array>& x) { return addmm(x[0], x[1], x[2], 0.5f, 2.0f); }},
      {"addmm broadcast c",
       {{4}, {2, 3}, {3, 4}},
       -1,
       1,
       [](const std::vector<array>& x) { return addmm(x[0], x[1], x[2]); }},
      conv("conv1d", {{2, 7, 3}, {4, 3, 3}}, [](const array& x, const array& w) { return conv1d(x, w); }),
      conv("conv1d stride, padding, dilation", {{1, 9, 2}, {3, 2, 2}},
           [](const array& x, const array& w) { return conv1d(x, w, 2, 1, 2); }),
      conv("conv2d groups", {{1, 4, 5, 4}, {4, 2, 3, 2}},
           [](const array& x, const array& w) { return conv2d(x, w, {1, 2}, {1, 0}, {1, 1}, 2); }),
      conv("conv_general asymmetric, input dilation, flip", {{1, 4, 4, 2}, {2, 2, 3, 2}},
           [](const array& x, const array& w) {
             return conv_general(x, w, {2, 1}, {0, 2}, {1, -1}, {1, 2}, {2, 1}, 1, true);
           }),
      conv("conv_transpose1d", {{1, 4, 2}, {3, 3, 2}},
           [](const array& x, const array& w) { return conv_transpose1d(x, w, 2, 1, 1, 1); }),
      {"gather_mm repeated indices",
       {{2, 2, 3}, {3, 3, 2}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return gather_mm(x[0], x[1], array({1, 0, 1}), array({2, 0, 2}));
       }},
      {"gather_mm one index array",
       {{2, 3}, {3, 3, 2}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return gather_mm(x[0], x[1], std::nullopt, array({0, 2}));
       }},
      {"hadamard_transform",
       {{2, 4}},
       -1,
       1,
       [](const std::vector<array>& x) { return hadamard_transform(x[0]); }},
      {"hadamard_transform m = 12, scale",
       {{2, 12}},
       -1,
       1,
       [](const std::vector<array>& x) { return hadamard_transform(x[0], 0.5f); }},
      quantized("quantized_matmul affine", {{2, 32}},
                [](const array& x) {
                  auto q = quantize(fixed_weights({4, 32}), 32, 4);
                  return quantized_matmul(x, q[0], q[1], q[2], true, 32, 4);
                }),
      quantized("quantized_matmul mxfp4", {{1, 32}},
                [](const array& x) {
                  auto q = quantize(fixed_weights({3, 32}), std::nullopt, std::nullopt, "mxfp4");
                  return quantized_matmul(x, q[0], q[1], std::nullopt, true, std::nullopt, std::nullopt,
                                          "mxfp4");
                }),
      quantized("gather_qmm affine", {{2, 1, 32}},
                [](const array& x) {
                  auto q = quantize(fixed_weights({3, 4, 32}), 32, 4);
                  return gather_qmm(x, q[0], q[1], q[2], array({1, 0, 1}), array({2, 0, 1}), true, 32, 4);
                }),
      quantized("gather_qmm untransposed", {{2, 1, 4}},
                [](const array& x) {
                  auto q = quantize(fixed_weights({2, 4, 32}), 32, 4);
                  return gather_qmm(x, q[0], q[1], q[2], array({1, 1}), array({0, 1}), false, 32, 4);
                }),
      affine_params(
          "quantized_matmul scales and biases, few rows", {{3, 2}, {3, 2}},
          [packed](const std::vector<array>& p) {
            return quantized_matmul(fixed_weights({2, 64}), packed({3, 64}), p[0], p[1], true, 32, 4);
          }),
      affine_params("quantized_matmul x, scales and biases, batched rows", {{3, 3, 64}, {3, 2}, {3, 2}},
                    [packed](const std::vector<array>& p) {
                      return quantized_matmul(p[0], packed({3, 64}), p[1], p[2], true, 32, 4);
                    }),
      affine_params(
          "quantized_matmul untransposed scales and biases", {{4, 2}, {4, 2}},
          [packed](const std::vector<array>& p) {
            return quantized_matmul(fixed_weights({2, 4}), packed({4, 64}), p[0], p[1], false, 32, 4);
          }),
      affine_params(
          "quantized_matmul batched weights, scales and biases", {{2, 3, 2}, {2, 3, 2}},
          [packed](const std::vector<array>& p) {
            return quantized_matmul(fixed_weights({2, 64}), packed({2, 3, 64}), p[0], p[1], true, 32, 4);
          }),
      affine_params("dequantize scales and biases", {{3, 2}, {3, 2}},
                    [packed](const std::vector<array>& p) {
                      return dequantize(packed({3, 64}), p[0], p[1], 32, 4);
                    }),
      affine_params("gather_qmm scales and biases, repeated experts", {{3, 4, 1}, {3, 4, 1}},
                    [packed](const std::vector<array>& p) {
                      return gather_qmm(fixed_weights({2, 1, 32}), packed({3, 4, 32}), p[0], p[1],
                                        array({1, 0, 1}), array({2, 0, 2}), true, 32, 4);
                    }),
      affine_params("gather_qmm untransposed x, scales and biases", {{2, 1, 4}, {2, 4, 1}, {2, 4, 1}},
                    [packed](const std::vector<array>& p) {
                      return gather_qmm(p[0], packed({2, 4, 32}), p[1], p[2], array({0, 1, 1}),
                                        array({1, 1, 0}), false, 32, 4);
                    }),
      affine_params("gather_qmm sorted rhs indices only, scales and biases", {{3, 4, 1}, {3, 4, 1}},
                    [packed](const std::vector<array>& p) {
                      return gather_qmm(fixed_weights({4, 1, 32}), packed({3, 4, 32}), p[0], p[1],
                                        std::nullopt, array({0, 0, 2, 2}), true, 32, 4, "affine", true);
                    }),
      {"matmul chain",
       {{2, 3}, {3, 3}},
       -1,
       1,
       [](const std::vector<array>& x) { return matmul(tanh(matmul(x[0], x[1])), x[1]); }},
  };
}

std::vector<GradCase> indexing_cases() {
  const Shape s34{3, 4};
  auto r = [](const std::string& name, std::function<array(const array&)> f, Shape shape) {
    return GradCase{name, {std::move(shape)}, -1, 1, [f](const std::vector<array>& x) { return f(x[0]); }};
  };
  return {
      r(
          "take",
          [](const array& x) {
            return take(x, array({2, 0, 2}), 1);
          },
          s34),
      r(
          "take flat",
          [](const array& x) {
            return take(x, array({5, 1, 11, 5}));
          },
          s34),
      r(
          "take_along_axis",
          [](const array& x) {
            return take_along_axis(x, array({0, 2, 1, 0}, {1, 4}), 0);
          },
          s34),
      r(
          "gather",
          [](const array& x) {
            return gather(x, {array({0, 2}), array({1, 1})}, {0, 1}, {1, 2});
          },
          s34),
      r(
          "sort", [](const array& x) { return sort(x, 1); }, s34),
      r(
          "sort axis 0", [](const array& x) { return sort(x, 0); }, s34),
      r(
          "partition", [](const array& x) { return partition(x, 1, 1); }, s34),
      r(
          "topk", [](const array& x) { return topk(x, 2, 1); }, s34),
      r(
          "argsort indices under stop_gradient",
          [](const array& x) { return take_along_axis(x, stop_gradient(argsort(x, 1)), 1); }, s34),
      {"scatter",
       {s34, {2, 1, 4}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return scatter(x[0], array({2, 0}), x[1], 0);
       }},
      {"scatter_add",
       {s34, {3, 1, 4}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return scatter_add(x[0], array({2, 0, 2}), x[1], 0);
       }},
      {"scatter_max",
       {s34, {2, 1, 4}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return scatter_max(x[0], array({2, 0}), x[1], 0);
       }},
      {"scatter_prod, zero updates",
       {s34, {3, 1, 4}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return scatter_prod(x[0], array({2, 0, 2}), x[1], 0);
       },
       std::nan(""),
       // Two zeros on one position (row 2, column 0), one alone (row 2, column 2; row 0, column 1).
       {{1, 0}, {1, 8}, {1, 2}, {1, 5}}},
      {"masked_scatter, src shorter than the mask",
       {s34, {5}},
       -1,
       1,
       [](const std::vector<array>& x) {
         array mask({true, false, true, true, false, false, true, false, true, false, true, false}, {3, 4});
         return masked_scatter(x[0], mask, x[1]);
       }},
      {"masked_scatter, row mask, src longer",
       {s34, {2, 5}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return masked_scatter(x[0], array({false, true, false}), x[1]);
       }},
      {"put_along_axis",
       {s34, {1, 4}},
       -1,
       1,
       [](const std::vector<array>& x) {
         return put_along_axis(x[0], array({0, 2, 1, 0}, {1, 4}), x[1], 0);
       }},
  };
}

}  // namespace

TEST(TransformsFiniteDifferences, UnaryOps) { run_cases(unary_cases(), 1000); }
TEST(TransformsFiniteDifferences, BinaryOps) { run_cases(binary_cases(), 2000); }
TEST(TransformsFiniteDifferences, ReductionsAndScans) { run_cases(reduce_cases(), 3000); }
TEST(TransformsFiniteDifferences, ShapeOps) { run_cases(shape_cases(), 4000); }
TEST(TransformsFiniteDifferences, MatrixProducts) { run_cases(linalg_cases(), 5000); }
TEST(TransformsFiniteDifferences, IndexingAndSorting) { run_cases(indexing_cases(), 6000); }

// ---- the transforms' forms, errors and rules ----

namespace {

double scalar(array a) { return values(a)[0]; }

template <typename F>
void expect_throws_with(F&& f, const std::string& start) {
  try {
    f();
    ADD_FAILURE() << "expected an exception starting with " << start;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(start, 0), 0u) << e.what();
  }
}

}  // namespace

TEST(Transforms, VjpAndJvpOfSimpleFunctions) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    auto [out, dout] = jvp([](const array& x) { return array(2.0f) * x; }, array(1.0f), array(2.0f));
    EXPECT_EQ(scalar(out), 2.0);
    EXPECT_EQ(scalar(dout), 4.0);
    auto [vout, vjps] = vjp(
        [](const std::vector<array>& x) {
          return std::vector<array>{x[0] * x[1], x[1] * x[2]};
        },
        {array(2.0f), array(4.0f), array(6.0f)}, {array(1.0f), array(3.0f)});
    ASSERT_EQ(vjps.size(), 3u);
    EXPECT_EQ(scalar(vjps[0]), 4.0);
    EXPECT_EQ(scalar(vjps[1]), 2.0 + 18.0);
    EXPECT_EQ(scalar(vjps[2]), 12.0);
  }
}

// The derivatives of sin, sinh and cosh are one ScaledUnary node each; they must be the
// unfused product (cotangent or tangent times cos, cosh, sinh) bit for bit, in every float
// dtype and in strided layouts (float32 runs take libmvec there), and so must what
// differentiates or maps them again.
TEST(Transforms, FusedUnaryDerivativesAreTheUnfusedProductsBitForBit) {
  using UnaryFn = array (*)(const array&, StreamOrDevice);
  const std::vector<std::pair<UnaryFn, UnaryFn>> rules = {{sin, cos}, {sinh, cosh}, {cosh, sinh}};
  std::vector<double> xs, cs;
  for (int i = 0; i < 6 * 7; ++i) {
    xs.push_back(std::sin(0.7 * i) * 1.3);
    cs.push_back(std::cos(0.3 * i) - 0.2);
  }
  for (Dtype dt : test::kRealFloatDtypes) {
    const array x0 = test::make(xs, {6, 7}, dt), c0 = test::make(cs, {6, 7}, dt);
    for (bool strided : {false, true}) {
      const array x = strided ? transpose(x0) : x0, c = strided ? transpose(c0) : c0;
      for (auto [f, df] : rules) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + (strided ? " strided" : " contiguous"));
        auto fn = [f = f](const array& a) { return f(a, {}); };
        EXPECT_EQ(values(vjp(fn, x, c).second), values(multiply(c, df(x, {}))));
        EXPECT_EQ(values(jvp(fn, x, c).second), values(multiply(c, df(x, {}))));
        // Second order: d/dx (c * f'(x)), as the rules of multiply and f' give it unfused.
        auto first = [&](const array& a) { return sum(vjp(fn, a, c).second); };
        EXPECT_EQ(
            values(grad(first)(x)),
            values(vjp([&](const array& a) { return sum(multiply(c, df(a, {}))); }, x, array(1.0f)).second));
        // Mapped over rows: as the unfused product maps.
        const array mapped = vmap([&](const array& a) { return vjp(fn, a, a).second; })(x);
        EXPECT_EQ(values(mapped), values(vmap([&](const array& a) { return multiply(a, df(a, {})); })(x)));
      }
    }
  }
}

TEST(Transforms, GradAndValueAndGradForms) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    auto sq = [](const array& x) { return x * x; };
    auto [v, g] = value_and_grad(std::function<array(const array&)>(sq))(array(0.5f));
    EXPECT_EQ(scalar(v), 0.25);
    EXPECT_EQ(scalar(g), 1.0);
    auto d2 = grad(grad(std::function<array(const array&)>(sq)));
    EXPECT_EQ(scalar(d2(array(0.5f))), 2.0);
    EXPECT_EQ(scalar(grad(std::function<array(const array&)>(d2))(array(0.5f))), 0.0);

    std::function<array(const std::vector<array>&)> mul = [](const std::vector<array>& x) {
      return x[0] * x[1];
    };
    const std::vector<array> xy{array(2.0f), array(3.0f)};
    EXPECT_EQ(scalar(grad(mul)(xy)[0]), 3.0);
    EXPECT_EQ(scalar(grad(mul, 1)(xy)[0]), 2.0);
    EXPECT_EQ(scalar(grad(mul, -1)(xy)[0]), 2.0);
    auto both = grad(mul, std::vector<int>{1, 0})(xy);  // in increasing argument order, as MLX
    ASSERT_EQ(both.size(), 2u);
    EXPECT_EQ(scalar(both[0]), 3.0);
    EXPECT_EQ(scalar(both[1]), 2.0);
    auto [value, grads] = value_and_grad(mul, std::vector<int>{0, 1})(xy);
    EXPECT_EQ(scalar(value), 6.0);
    EXPECT_EQ(grads.size(), 2u);

    // Outputs after the first are auxiliary values: returned, not differentiated.
    ValueAndGradFn aux = value_and_grad([](const std::vector<array>& x) {
      array l = sum(x[0] * x[1]);
      return std::vector<array>{l, square(x[1]) + square(x[0])};
    });
    auto [vals, ag] = aux({ones({2, 2}), ones({2, 2})});
    ASSERT_EQ(vals.size(), 2u);
    EXPECT_EQ(scalar(vals[0]), 4.0);
    test::expect_close(values(vals[1]), {2, 2, 2, 2}, 0, 0, "auxiliary value");
    test::expect_close(values(ag[0]), {1, 1, 1, 1}, 0, 0, "gradient");
  }
}

TEST(Transforms, GradErrorsAreMlxs) {
  std::function<array(const std::vector<array>&)> id = [](const std::vector<array>& x) { return x[0]; };
  expect_throws_with([&] { value_and_grad(id, std::vector<int>{}); },
                     "[grad] Must specify at least one argument.");
  expect_throws_with([&] { grad(id, 2)({array(2.0f)}); },
                     "[grad] Invalid argument number for function with 1 inputs.");
  expect_throws_with([&] { grad(id, -2)({array(2.0f)}); }, "[grad] Invalid argument number");
  expect_throws_with(
      [&] {
        grad(id, std::vector<int>{0, 0})({array(2.0f)});
      },
      "[grad] Repeat argument number not allowed in grad.");
  expect_throws_with(
      [&] {
        grad([](const std::vector<array>& x) { return sum(x[0], true); })({ones({2, 2})});
      },
      "[vjp] Output shape (1, 1) does not match cotangent shape ().");
  expect_throws_with(
      [&] { vjp([](const std::vector<array>& x) { return x; }, {array(1.0f)}, {}); },
      "[vjp] Number of outputs to compute gradients for (1) does not match number of cotangents (0).");
  expect_throws_with([&] { jvp([](const std::vector<array>& x) { return x; }, {array(1.0f)}, {}); },
                     "[jvp] Number of inputs does not match number of tangents.");
  expect_throws_with([&] { jvp([](const std::vector<array>& x) { return x; }, {ones({2})}, {ones({3})}); },
                     "[jvp] Input shape does not match shape of tangent.");
}

// Indices computed from the differentiated input (a router's argsort, say) are on the tape:
// gather_mm and gather_qmm refuse their gradient as MLX does, and stop_gradient on the
// indices is the way out.
TEST(Transforms, GatherProductsRefuseGradientsThroughTheirIndices) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array w = reshape(arange(24.0f), {3, 4, 2});
    const array x = reshape(arange(8.0f), {2, 1, 4});
    auto routed = [&](bool stop) {
      return [&, stop](const array& a) {
        array idx = astype(argsort(sum(a, {1, 2}), 0), uint32);
        if (stop) idx = stop_gradient(idx);
        return sum(gather_mm(a, w, std::nullopt, idx));
      };
    };
    expect_throws_with([&] { eval(grad(routed(false))(x)); },
                       "[GatherMM] Cannot calculate VJP with respect to indices.");
    array g = grad(routed(true))(x);
    // d/dx sum(x[i] @ w[idx[i]]) = the row sums of w[idx[i]], broadcast over x's row.
    array want = broadcast_to(expand_dims(sum(take(w, array({0u, 1u}), 0), -1), 1), x.shape());
    test::expect_close(values(g), values(want), 0, 0, "gather_mm with stopped indices");

    const std::vector<array> q = quantize(reshape(arange(3.0f * 32 * 64), {3, 32, 64}), 64, 4);
    const array xq = ones({2, 1, 64});
    auto qrouted = [&](const array& a) {
      array idx = astype(argsort(sum(a, {1, 2}), 0), uint32);
      return sum(gather_qmm(a, q[0], q[1], q[2], std::nullopt, idx, true, 64, 4));
    };
    try {
      eval(grad(qrouted)(xq));
      ADD_FAILURE() << "gather_qmm differentiated through its indices";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "[GatherQMM::vjp] cannot compute the gradient wrt the indices.");
    }
  }
}

TEST(Transforms, AsyncEvalOfATracerIsRefusedAsInMlx) {
  auto fun = [](const array& x) {
    array y = add(x, array(1.0f));
    async_eval(y);
    return exp(y);
  };
  expect_throws_with([&] { grad(fun)(array(1.0f)); },
                     "[async_eval] Not allowed inside a graph transformation.");
  expect_throws_with([&] { vmap(fun)(ones({2, 2})); },
                     "[async_eval] Not allowed inside a graph transformation.");
  // eval inside the function, and async_eval outside any transformation, are fine.
  auto with_eval = [](const array& x) {
    array y = add(x, array(1.0f));
    eval(y);
    return exp(y);
  };
  EXPECT_NEAR(grad(with_eval)(array(1.0f)).item<float>(), std::exp(2.0f), 1e-5);
  array z = add(ones({3}), array(1.0f));
  async_eval(z).wait();
  EXPECT_TRUE(z.is_available());
}

TEST(Transforms, IntegerOutputsGetZeroCotangents) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array x({0.5f, 2.0f, -1.0f});
    for (auto f : std::vector<std::function<array(const array&)>>{
             [](const array& a) { return argmax(a); }, [](const array& a) { return greater(a, array(0.0f)); },
             [](const array& a) { return argsort(a); },
             [](const array& a) { return floor_divide(astype(a, int32), array(2)); }}) {
      auto [out, g] = vjp(f, x, ones_like(f(x)));
      EXPECT_EQ(g.dtype(), float32);
      test::expect_close(values(g), {0, 0, 0}, 0, 0, "vjp through an integer output");
      auto [jout, t] = jvp(f, x, ones_like(x));
      test::expect_close(values(t), std::vector<double>(out.size(), 0.0), 0, 0, "jvp of an integer output");
    }
  }
}

// As MLX: a gradient asked of gather or scatter indices (an input of the transform, or computed
// from one) is std::invalid_argument naming stop_gradient; stop_gradient on computed indices
// differentiates the data through them.
TEST(Transforms, IndicesHaveNoGradientAndAskingForOneThrows) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array x({1.0f, 2.0f, 3.0f, 4.0f});
    const array idx({1, 3});
    const array upd({5.0f, 6.0f});
    auto expect_index_error = [](const std::function<void()>& f, const std::string& what) {
      try {
        f();
        ADD_FAILURE() << what << ": no error";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("stop_gradient"), std::string::npos) << what << ": " << e.what();
      }
    };
    // The vjp of `f` (one output) with respect to every input, indices included.
    auto expect_vjp_error = [&](const VecFn& f, const std::vector<array>& primals, const array& cotangent,
                                const std::string& what) {
      expect_index_error([&] { vjp(f, primals, {cotangent}); }, what);
    };
    expect_vjp_error([](const std::vector<array>& in) { return std::vector<array>{take(in[0], in[1])}; },
                     {x, idx}, ones({2}), "take");
    expect_vjp_error(
        [](const std::vector<array>& in) { return std::vector<array>{take_along_axis(in[0], in[1], 0)}; },
        {x, idx}, ones({2}), "take_along_axis");
    expect_vjp_error(
        [](const std::vector<array>& in) { return std::vector<array>{scatter_add(in[0], in[1], in[2], 0)}; },
        {x, idx, reshape(upd, {2, 1})}, ones({4}), "scatter_add");
    expect_vjp_error(
        [](const std::vector<array>& in) {
          return std::vector<array>{put_along_axis(in[0], in[1], in[2], 0)};
        },
        {x, idx, upd}, ones({4}), "put_along_axis");
    // The same for a jvp with a tangent for the indices (MLX throws; the tangent is not dropped).
    auto expect_jvp_error = [&](const VecFn& f, const std::vector<array>& primals, const std::string& what) {
      std::vector<array> tangents;
      for (const auto& p : primals) tangents.push_back(ones_like(p));
      expect_index_error([&] { jvp(f, primals, tangents); }, what + " (jvp)");
    };
    expect_jvp_error([](const std::vector<array>& in) { return std::vector<array>{take(in[0], in[1])}; },
                     {x, idx}, "take");
    expect_jvp_error(
        [](const std::vector<array>& in) { return std::vector<array>{take_along_axis(in[0], in[1], 0)}; },
        {x, idx}, "take_along_axis");
    expect_jvp_error(
        [](const std::vector<array>& in) { return std::vector<array>{scatter_add(in[0], in[1], in[2], 0)}; },
        {x, idx, reshape(upd, {2, 1})}, "scatter_add");
    auto [jout, jt] = jvp([&](const array& a) { return take(a, idx); }, x, array({1.0f, 2.0f, 3.0f, 4.0f}));
    test::expect_close(values(jt), {2, 4}, 0, 0, "take's data (jvp)");
    // Indices computed from the differentiated input: an error unless stopped.
    auto smallest_two = [](const array& w, bool stop) {
      array order = slice(argsort(w), {0}, {2});
      return sum(take(w, stop ? stop_gradient(order) : order));
    };
    expect_index_error([&] { grad([&](const array& w) { return smallest_two(w, false); })(x); }, "computed");
    const array g =
        grad([&](const array& w) { return smallest_two(w, true); })(array({4.0f, 3.0f, 2.0f, 1.0f}));
    test::expect_close(values(g), {0, 0, 1, 1}, 0, 0, "through stopped indices");
    // Differentiating only the data is unaffected.
    auto [out, gx] = vjp([&](const array& a) { return take(a, idx); }, x, ones({2}));
    test::expect_close(values(gx), {0, 1, 0, 1}, 0, 0, "take's data");
  }
}

TEST(Transforms, StopGradientBlocksGradients) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array w = ones({4, 4}), x = ones({4, 4}), cot = ones({4, 4});
    auto h = [](const std::vector<array>& in) {
      array y = stop_gradient(array(2.0f) * in[1]);
      return std::vector<array>{matmul(in[0], array(3.0f) * y)};
    };
    auto [out, g] = vjp(h, {w, x}, {cot});
    test::expect_close(values(g[0]), std::vector<double>(16, 24.0), 0, 0, "through the kept path");
    test::expect_close(values(g[1]), std::vector<double>(16, 0.0), 0, 0, "through stop_gradient");
    // An output under stop_gradient takes no cotangent.
    auto [o2, g2] = vjp(
        [](const std::vector<array>& in) {
          return std::vector<array>{stop_gradient(in[0]), in[0]};
        },
        {array(1.0f)}, {array(5.0f)});
    EXPECT_EQ(scalar(g2[0]), 5.0);
  }
}

TEST(Transforms, CapturedArraysAreConstants) {
  const array a(5.0f);
  auto f = std::function<array(const array&)>([a](const array& x) { return a + x; });
  auto g = std::function<array(const array&)>([a](const array&) { return a + a; });
  auto h = std::function<array(const array&)>([](const array& x) { return x + x; });
  EXPECT_EQ(scalar(grad(f)(a)), 1.0);
  EXPECT_EQ(scalar(grad(g)(a)), 0.0);
  EXPECT_EQ(scalar(grad(h)(a)), 2.0);
  EXPECT_EQ(scalar(grad(grad(f))(a)), 0.0);
  EXPECT_EQ(scalar(grad(grad(h))(a)), 0.0);
}

TEST(Transforms, NestedTransformsSeeTheOuterTracers) {
  // d/dy of grad_x(x * y) at x = 2: the inner function captures the outer tracer y.
  auto outer = std::function<array(const array&)>([](const array& y) {
    auto inner = std::function<array(const array&)>([y](const array& x) { return x * x * y; });
    array g = grad(inner)(array(2.0f));
    eval(g);  // evaluating inside both traces keeps the graph
    return g;
  });
  EXPECT_EQ(scalar(grad(outer)(array(3.0f))), 4.0);
  // jvp of a vjp.
  auto [out, t] = jvp(std::function<array(const array&)>([](const array& x) {
                        return vjp(std::function<array(const array&)>([](const array& z) { return sin(z); }),
                                   x, array(1.0f))
                            .second;
                      }),
                      array(0.5f), array(1.0f));
  EXPECT_NEAR(scalar(t), -std::sin(0.5), 1e-6);
}

TEST(Transforms, VjpKeepsPrimalDtypes) {
  for (Dtype t : {float16, bfloat16, float32}) {
    auto f = std::function<array(const std::vector<array>&)>(
        [](const std::vector<array>& x) { return sum(x[0] + x[1]); });
    auto g = grad(f)({array(1.0, t), array(1.0, t)});
    EXPECT_EQ(g[0].dtype(), t);
    auto c = vjp(
                 [](const std::vector<array>& x) {
                   return std::vector<array>{concatenate({x[0], x[1]})};
                 },
                 {ones({3}, float32), ones({3}, t)}, {ones({6})})
                 .second;
    EXPECT_EQ(c[0].dtype(), float32);
    EXPECT_EQ(c[1].dtype(), t);
  }
}

TEST(Transforms, CustomVjpReplacesTheDerivative) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    VecFn my_exp = [](const std::vector<array>& x) { return std::vector<array>{exp(x[0])}; };
    auto plain = custom_function(my_exp);
    auto plain1 = std::function<array(const array&)>([plain](const array& x) { return plain({x})[0]; });
    EXPECT_NEAR(scalar(grad(plain1)(array(1.0f))), std::exp(1.0), 1e-5);
    EXPECT_NEAR(scalar(jvp(plain1, array(1.0f), array(1.0f)).second), std::exp(1.0), 1e-5);

    auto custom = custom_vjp(
        my_exp, [](const std::vector<array>& x, const std::vector<array>&, const std::vector<array>&) {
          return std::vector<array>{ones_like(x[0]) * 42};
        });
    auto custom1 = std::function<array(const array&)>([custom](const array& x) { return custom({x})[0]; });
    EXPECT_EQ(scalar(custom1(array(0.0f))), 1.0);
    EXPECT_EQ(scalar(grad(custom1)(array(1.0f))), 42.0);
    EXPECT_NEAR(scalar(jvp(custom1, array(1.0f), array(1.0f)).second), std::exp(1.0), 1e-5);

    auto with_jvp = custom_function(
        my_exp, std::nullopt,
        [](const std::vector<array>& x, const std::vector<array>& t, const std::vector<int>&) {
          return std::vector<array>{ones_like(x[0]) * 7 * t[0]};
        });
    auto with_jvp1 =
        std::function<array(const array&)>([with_jvp](const array& x) { return with_jvp({x})[0]; });
    EXPECT_EQ(scalar(jvp(with_jvp1, array(1.0f), array(1.0f)).second), 7.0);

    // Two outputs: each output's cotangent reaches the function's vjp.
    auto two = custom_vjp(
        [](const std::vector<array>& x) {
          return std::vector<array>{x[0] * 2, x[0] * 3};
        },
        [](const std::vector<array>&, const std::vector<array>& c, const std::vector<array>&) {
          return std::vector<array>{c[0] * 10 + c[1] * 100};
        });
    auto [outs, g] = vjp(two, {array(1.0f)}, {array(1.0f), array(2.0f)});
    EXPECT_EQ(scalar(outs[1]), 3.0);
    EXPECT_EQ(scalar(g[0]), 210.0);
  }
}

// MLX's "test simple custom vjp": the vjp of a function with several outputs runs once, with
// every output's cotangent (a constant vjp is not summed once per output), and so does its jvp.
TEST(Transforms, CustomFunctionOfSeveralOutputsRunsItsDerivativesOnce) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array one(1.0f), x(2.0f), y(3.0f);
    VecFn fn = [](const std::vector<array>& in) { return std::vector<array>{in[0] * in[1], in[0] + in[1]}; };
    int vjp_calls = 0, jvp_calls = 0;
    auto custom = custom_function(
        fn,
        [&](const std::vector<array>&, const std::vector<array>& c, const std::vector<array>&) {
          ++vjp_calls;
          EXPECT_EQ(c.size(), 2u);
          return std::vector<array>{one, one};
        },
        [&](const std::vector<array>& p, const std::vector<array>& t, const std::vector<int>&) {
          ++jvp_calls;
          return std::vector<array>{t[0] * p[1], t[0]};
        });
    auto [z, g] = vjp(custom, {x, y}, {one, one});
    EXPECT_EQ(scalar(z[0]), 6.0);
    EXPECT_EQ(scalar(z[1]), 5.0);
    EXPECT_EQ(scalar(g[0]), 1.0);
    EXPECT_EQ(scalar(g[1]), 1.0);
    EXPECT_EQ(vjp_calls, 1);

    // The outputs reached through separate paths, one of them only through the other's consumer,
    // and one output with no cotangent at all: still one call, with a zero for the missing one.
    vjp_calls = 0;
    VecFn chained = [&](const std::vector<array>& in) {
      std::vector<array> o = custom(in);
      return std::vector<array>{o[0] + exp(o[1]) * 0.0f};
    };
    auto [z2, g2] = vjp(chained, {x, y}, {one});
    EXPECT_EQ(scalar(g2[0]), 1.0);
    EXPECT_EQ(vjp_calls, 1);
    vjp_calls = 0;
    VecFn first_only = [&](const std::vector<array>& in) { return std::vector<array>{custom(in)[0]}; };
    auto [z3, g3] = vjp(first_only, {x, y}, {one});
    EXPECT_EQ(scalar(g3[1]), 1.0);
    EXPECT_EQ(vjp_calls, 1);

    auto [jz, jt] = jvp(custom, {x, y}, {array(2.0f), array(0.0f)});
    EXPECT_EQ(scalar(jt[0]), 6.0);
    EXPECT_EQ(scalar(jt[1]), 2.0);
    EXPECT_EQ(jvp_calls, 1);
  }
}

TEST(Transforms, CheckpointGivesTheSameGradients) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    VecFn f = [](const std::vector<array>& x) { return std::vector<array>{sum(sin(x[0]) * exp(x[0]))}; };
    const array x({0.1f, 0.7f, -1.3f});
    auto [v1, g1] = vjp(f, {x}, {array(1.0f)});
    auto [v2, g2] = vjp(checkpoint(f), {x}, {array(1.0f)});
    test::expect_close(values(v2[0]), values(v1[0]), 1e-6, 1e-6, "value");
    test::expect_close(values(g2[0]), values(g1[0]), 1e-6, 1e-6, "gradient");
  }
}

TEST(Transforms, GradOfAMillionNodeChain) {
  braid_test::Watchdog watchdog;
  // Most of the time goes into building the 10^6 nodes themselves; sanitizer builds take a
  // chain still far deeper than any recursive walk survives.
  const int n = test::kSanitized ? 200'000 : 1'000'000;
  auto f = std::function<array(const array&)>([n](const array& x) {
    array y = x;
    const array one(1.0f);
    for (int i = 0; i < n; ++i) y = y + one;
    return y;
  });
  array g = grad(f)(array(0.0f));
  EXPECT_EQ(scalar(g), 1.0);
}

TEST(Transforms, IntermediateEvaluatedInsideTheFunctionStillDifferentiates) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array y({2.0f, 2.0f});
    auto f = [y](const std::vector<array>& in) {
      array x = in[0] + y;
      EXPECT_TRUE(x.is_tracer());
      array cond = x < array(1.0f);
      eval(cond);  // evaluates x too
      EXPECT_TRUE(x.is_available());
      EXPECT_FALSE(x.inputs().empty()) << "a tracer keeps its inputs after evaluation";
      return std::vector<array>{square(x)};
    };
    auto [out, g] = vjp(f, {array({1.0f})}, {array({1.0f, 1.0f})});
    EXPECT_EQ(scalar(g[0]), 12.0);
    // After the call the outputs are ordinary arrays again: evaluating detaches them.
    EXPECT_FALSE(out[0].is_tracer());
    eval(out[0]);
    EXPECT_TRUE(out[0].inputs().empty());
  }
}

TEST(Transforms, NonTracersAreNotTracers) {
  array a = ones({2}) + ones({2});
  EXPECT_FALSE(a.is_tracer());
  eval(a);
  EXPECT_TRUE(a.inputs().empty());
}

// ---- threads ----

namespace {

ValueAndGradFn loss_and_grad() {
  return value_and_grad(
      [](const std::vector<array>& p) {
        array h = tanh(matmul(p[1], p[0]));
        return std::vector<array>{mean(square(h - array(0.5f)))};
      },
      std::vector<int>{0});
}

std::vector<array> loss_inputs() {
  return {reshape(arange(0.0, 12.0, 1.0, float32), {4, 3}) / array(12.0f),
          reshape(cos(arange(0.0, 20.0, 1.0, float32)), {5, 4})};
}

}  // namespace

TEST(TransformsThreads, ValueAndGradOnEightThreadsMatchesOneThread) {
  braid_test::Watchdog watchdog;
  ValueAndGradFn vg = loss_and_grad();  // defined on the main thread, shared by all
  const std::vector<array> inputs = loss_inputs();
  auto [v0, g0] = vg(inputs);
  const double want_v = scalar(v0[0]);
  const std::vector<double> want_g = values(g0[0]);
  constexpr int kThreads = 8;
  std::vector<std::vector<double>> got_g(kThreads);
  std::vector<double> got_v(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int rep = 0; rep < 5; ++rep) {
        auto [v, g] = vg(inputs);
        eval(v[0], g[0]);
        got_v[t] = scalar(v[0]);
        got_g[t] = values(g[0]);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(got_v[t], want_v) << "thread " << t;
    test::expect_close(got_g[t], want_g, 0, 0, "gradient on thread " + std::to_string(t));
  }
}

TEST(TransformsThreads, GraphBuiltOnOneThreadDifferentiatesOnAnother) {
  braid_test::Watchdog watchdog;
  // Part of the graph (and the function) is built on one thread, differentiated on another.
  std::vector<array> inputs;
  std::function<array(const array&)> f;
  std::thread builder([&] {
    inputs = {exp(arange(0.0, 4.0, 1.0, float32) / array(4.0f))};
    array w = sin(inputs[0]);
    f = [w](const array& x) { return sum(w * x * x); };
  });
  builder.join();
  std::vector<array> g;
  std::thread user([&] { g.push_back(grad(f)(inputs[0])); });
  user.join();
  std::vector<double> x = values(inputs[0]), want;
  for (double v : x) want.push_back(2 * std::sin(v) * v);
  test::expect_close(values(g[0]), want, 1e-5, 1e-6, "gradient");
}

TEST(TransformsThreads, GradInsideThreadsSpawnedPerCase) {
  braid_test::Watchdog watchdog;
  // As a test harness that runs each case on its own thread.
  for (int c = 0; c < 6; ++c) {
    double got = 0;
    std::thread th([&] {
      auto f = std::function<array(const array&)>([c](const array& x) { return power(x, array(float(c))); });
      got = scalar(grad(f)(array(1.5f)));
    });
    th.join();
    EXPECT_NEAR(got, c * std::pow(1.5, c - 1), 1e-4) << "case " << c;
  }
}

TEST(TransformsThreads, TracedFunctionEvaluatedByAnotherThread) {
  braid_test::Watchdog watchdog;
  // The traced function hands an intermediate to another thread, which evaluates it; the
  // backward walk still finds the graph.
  auto f = std::function<array(const array&)>([](const array& x) {
    array mid = exp(x) * x;
    std::thread other([mid] { eval(mid); });
    other.join();
    return sum(mid);
  });
  const array x({0.5f, -0.25f});
  array g = grad(f)(x);
  std::vector<double> want;
  for (double v : values(x)) want.push_back(std::exp(v) * (1 + v));
  test::expect_close(values(g), want, 1e-5, 1e-6, "gradient");
}

// ---- vmap ----

namespace {

// One vectorized function: its inputs' shapes, mapped axes (-1: not mapped) and output axis.
struct VmapCase {
  std::string name;
  std::vector<Shape> shapes;
  std::vector<int> in_axes;
  int out_axis;
  Fn f;
};

// vmap(f) against f applied to each slice and stacked.
void check_vmap(const VmapCase& c, const Device& dev, uint32_t seed) {
  SCOPED_TRACE(c.name + " on " + test::device_name(dev) + ", seed " + std::to_string(seed));
  StreamContext ctx(dev);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<array> inputs;
  int b = 0;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    std::vector<double> v(numel(c.shapes[i]));
    for (auto& x : v) x = u(rng);
    inputs.push_back(test::make(v, c.shapes[i], float32));
    if (c.in_axes[i] >= 0) b = c.shapes[i][c.in_axes[i]];
  }
  VecFn vf = [&c](const std::vector<array>& in) { return std::vector<array>{c.f(in)}; };
  array got = vmap(vf, c.in_axes, {c.out_axis})(inputs)[0];
  std::vector<array> slices;
  for (int k = 0; k < b; ++k) {
    std::vector<array> one;
    for (size_t i = 0; i < inputs.size(); ++i)
      one.push_back(c.in_axes[i] < 0 ? inputs[i] : take(inputs[i], k, c.in_axes[i]));
    slices.push_back(c.f(one));
  }
  array want = stack(slices, c.out_axis);
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.dtype(), want.dtype());
  test::expect_close(values(got), values(want), 1e-5, 1e-6, "vmap");
}

std::vector<VmapCase> vmap_cases() {
  auto one = [](const std::string& name, Shape shape, int axis, std::function<array(const array&)> f,
                int out = 0) {
    return VmapCase{
        name, {std::move(shape)}, {axis}, out, [f](const std::vector<array>& x) { return f(x[0]); }};
  };
  return {
      one("exp", {3, 4}, 1, [](const array& x) { return exp(x); }),
      one(
          "exp out axis 1", {3, 4}, 0, [](const array& x) { return exp(x); }, 1),
      {"add unmapped", {{3, 4}, {4}}, {0, -1}, 0, [](const std::vector<array>& x) { return x[0] + x[1]; }},
      {"multiply broadcast",
       {{3, 4}, {2, 3}},
       {0, 1},
       0,
       [](const std::vector<array>& x) {
         return x[0] * reshape(x[1], {2, 1});
       }},
      {"where",
       {{3, 4}, {4, 3}},
       {0, 1},
       0,
       [](const std::vector<array>& x) { return where(x[0] > x[1], x[0], square(x[1])); }},
      one("sum", {2, 3, 4}, 1, [](const array& x) { return sum(x, 1); }),
      one("mean and max", {2, 3, 4}, 2, [](const array& x) { return mean(x, 0) + max(x, 0); }),
      one("argmax", {2, 3, 4}, 0, [](const array& x) { return argmax(x, 1); }),
      one("cumsum", {2, 3, 4}, 0, [](const array& x) { return cumsum(x, 0, true); }),
      one("softmax", {2, 3, 4}, 2, [](const array& x) { return softmax(x, -1); }),
      one("logsumexp", {2, 3, 4}, 1, [](const array& x) { return logsumexp(x, 0); }),
      one("reshape", {2, 3, 4}, 1,
          [](const array& x) {
            return reshape(x, {4, 2});
          }),
      one("transpose", {2, 3, 4}, 0, [](const array& x) { return transpose(x); }),
      one("squeeze and expand_dims", {2, 1, 4}, 2,
          [](const array& x) { return expand_dims(squeeze(x, 1), 0); }),
      one("slice", {5, 3, 4}, 0,
          [](const array& x) {
            return slice(x, {1, 0}, {3, 4}, {1, 2});
          }),
      one("broadcast_to", {3, 1}, 0,
          [](const array& x) {
            return broadcast_to(x, {2, 4});
          }),
      one("sort", {3, 4}, 1, [](const array& x) { return sort(x, 0) + astype(argsort(x, 0), float32); }),
      {"concatenate",
       {{3, 2}, {2}},
       {0, -1},
       0,
       [](const std::vector<array>& x) {
         return concatenate({x[0], x[1], x[0]}, 0);
       }},
      {"matmul",
       {{3, 2, 4}, {4, 3, 5}},
       {0, 1},
       0,
       [](const std::vector<array>& x) { return matmul(x[0], x[1]); }},
      {"matmul unmapped",
       {{2, 4}, {3, 4, 5}},
       {-1, 0},
       0,
       [](const std::vector<array>& x) { return matmul(x[0], x[1]); }},
      {"vector dot",
       {{3, 4}, {4, 3}},
       {0, 1},
       0,
       [](const std::vector<array>& x) { return matmul(x[0], x[1]); }},
      {"addmm",
       {{2, 5}, {3, 2, 4}, {4, 5}},
       {-1, 0, -1},
       0,
       [](const std::vector<array>& x) { return addmm(x[0], x[1], x[2], 2.0f, 0.5f); }},
      one("take", {3, 4}, 1,
          [](const array& x) {
            return take(x, array({2, 0, 2}), 0);
          }),
      {"take mapped indices",
       {{4}, {3, 2}},
       {-1, 0},
       0,
       [](const std::vector<array>& x) { return take(x[0], astype(x[1] > array(0.0f), int32), 0); }},
      one("take_along_axis mapped source", {3, 4}, 1,
          [](const array& x) {
            return take_along_axis(x, array({2, 0, -1, 1}), 0);
          }),
      {"take_along_axis mapped indices",
       {{3, 4}, {4, 5}},
       {-1, 1},
       0,
       [](const std::vector<array>& x) {
         return take_along_axis(x[0], reshape(astype(x[1] > array(0.0f), int32) * 2, {1, 4}), 0);
       }},
      {"take_along_axis both mapped",
       {{2, 3, 4}, {2, 4}},
       {0, 0},
       1,
       [](const std::vector<array>& x) {
         return take_along_axis(x[0], reshape(astype(x[1] > array(0.0f), int32) * 2, {1, 4}), 0);
       }},
      one("scatter", {3, 4}, 0,
          [](const array& x) {
            return scatter(x, array({2, 0}), ones({2, 1}), 0);
          }),
      {"scatter_add mapped updates",
       {{4}, {3, 2, 1}},
       {-1, 0},
       0,
       [](const std::vector<array>& x) {
         return scatter_add(x[0], array({1, 1}), x[1], 0);
       }},
      {"scatter_max mapped indices",
       {{3, 4}, {3, 2}},
       {0, 0},
       0,
       [](const std::vector<array>& x) {
         return scatter_max(x[0], astype(x[1] > array(0.0f), int32) * 3, reshape(x[1], {2, 1}), 0);
       }},
      {"scatter_prod two axes",
       {{4, 3, 3}, {2, 3}},
       {1, 1},
       0,
       [](const std::vector<array>& x) {
         return scatter_prod(x[0], {array({0, 2}), array({1, 1})}, reshape(x[1], {2, 1, 1}), {0, 1});
       }},
      {"slice_update",
       {{5, 3, 4}, {2, 5}},
       {0, 1},
       0,
       [](const std::vector<array>& x) {
         return slice_update(x[0], x[1], Shape{1, 1}, Shape{2, 3});
       }},
      {"slice_update unmapped source",
       {{3, 4}, {3, 2}},
       {-1, 0},
       1,
       [](const std::vector<array>& x) {
         return slice_update(x[0], x[1], Shape{0, 0}, Shape{3, 4}, Shape{2, 2});
       }},
      one("dynamic slice", {3, 5}, 0, [](const array& x) { return slice(x, array({1}), {0}, {2}); }),
      {"dynamic slice mapped starts",
       {{3, 5}, {3}},
       {0, 0},
       0,
       [](const std::vector<array>& x) {
         return slice(x[0], astype(x[1] > array(0.0f), int32) * 2 - 1, {0}, {2});
       }},
      {"dynamic slice mapped starts only",
       {{4, 5}, {3}},
       {-1, 0},
       0,
       [](const std::vector<array>& x) {
         return slice(x[0], reshape(astype(x[1] > array(0.0f), int32) * 2 - 1, {1}), {1}, {4, 3});
       }},
      {"dynamic slice_update",
       {{3, 5}, {2}},
       {0, -1},
       0,
       [](const std::vector<array>& x) { return slice_update(x[0], x[1], array({1}), std::vector<int>{0}); }},
      {"dynamic slice_update mapped starts",
       {{3, 5}, {3, 2}, {3}},
       {0, 0, 0},
       0,
       [](const std::vector<array>& x) {
         return slice_update(x[0], x[1], astype(x[2] > array(0.0f), int32) * 2 - 1, std::vector<int>{0});
       }},
      one("pad", {3, 2, 2}, 0,
          [](const array& x) {
            return pad(x, {{1, 0}, {0, 2}}, array(0.5f));
          }),
      {"pad mapped value",
       {{2, 3}, {3}},
       {1, 0},
       0,
       [](const std::vector<array>& x) { return pad(x[0], 1, x[1]); }},
      one("random bits of mapped keys", {3, 2}, 0,
          [](const array& x) {
            array key = astype(abs(x) * array(1e6f), uint32);
            return astype(random::bits({2, 2}, 4, key), float32) +
                   random::uniform(0.0f, 1.0f, {2, 2}, float32, key);
          }),
      {"conv1d mapped input",
       {{3, 1, 5, 2}, {4, 3, 2}},
       {0, -1},
       0,
       [](const std::vector<array>& x) { return conv1d(x[0], x[1]); }},
      {"conv1d mapped weight, groups",
       {{1, 5, 4}, {2, 4, 3, 2}},
       {-1, 0},
       0,
       [](const std::vector<array>& x) { return conv1d(x[0], x[1], 1, 1, 1, 2); }},
      {"conv2d both mapped, groups",
       {{1, 4, 5, 3, 4}, {4, 3, 2, 2, 2}},
       {3, 1},
       0,
       [](const std::vector<array>& x) {
         return conv2d(x[0], x[1], {2, 1}, {1, 0}, {1, 1}, 2);
       }},
      one("diagonal", {3, 4, 4}, 0, [](const array& x) { return diagonal(x, 1); }),
      one("view", {3, 4}, 1, [](const array& x) { return astype(view(x, uint16), float32); }),
      {"depends",
       {{3, 4}, {4, 3}},
       {0, 1},
       0,
       [](const std::vector<array>& x) { return depends({x[0]}, {x[1]})[0] * 2; }},
      one("hadamard_transform", {4, 3}, 1, [](const array& x) { return hadamard_transform(x); }),
      one("fft::fft", {4, 3}, 1, [](const array& x) { return imag(fft::fft(x)); }),
      one("fft::rfft2 of a 3-d input", {3, 4, 5}, 2, [](const array& x) { return real(fft::rfft2(x)); }),
      one("fft::irfftn axes (1, 0)", {4, 3, 3}, 0,
          [](const array& x) { return fft::irfftn(astype(x, complex64), {3, 4}, {1, 0}); }),
      {"gather_mm (per slice)",
       {{3, 2, 2, 3}, {3, 3, 2}},
       {0, -1},
       0,
       [](const std::vector<array>& x) {
         return gather_mm(x[0], x[1], array({1, 0}), array({2, 2}));
       }},
      {"masked_scatter (per slice)",
       {{3, 4}, {3, 2}},
       {0, 0},
       0,
       [](const std::vector<array>& x) { return masked_scatter(x[0], x[0] > array(0.0f), x[1]); }},
      one("quantized_matmul (per slice)", {3, 1, 32}, 0,
          [](const array& x) {
            auto q = quantize(fixed_weights({4, 32}), 32, 4);
            return quantized_matmul(x, q[0], q[1], q[2], true, 32, 4);
          }),
      {"segmented_mm (per slice)",
       {{3, 2, 4}, {4, 3}},
       {0, -1},
       0,
       [](const std::vector<array>& x) {
         return segmented_mm(x[0], x[1], array({0, 2, 2, 4}, {2, 2}));
       }},
      one("as_strided (per slice)", {3, 6}, 0,
          [](const array& x) {
            return as_strided(x, {2, 2}, {1, 2}, 1);
          }),
      // Gathered products: one product over the batch, each side's indices moved past the
      // earlier elements' matrices when that side is mapped.
      {"gather_mm mapped lhs operand",
       {{2, 3, 2, 4}, {3, 4, 2}},
       {1, -1},
       0,
       [](const std::vector<array>& x) { return gather_mm(x[0], x[1], array({1, 0, 1}), array({2, 0, 2})); }},
      {"gather_mm mapped rhs operand, out axis 1",
       {{2, 1, 4}, {3, 2, 4, 5}},
       {-1, 0},
       1,
       [](const std::vector<array>& x) { return gather_mm(x[0], x[1], array({0, 1, 1}), array({1, 0, 1})); }},
      {"gather_mm both mapped, one index array",
       {{2, 4, 3}, {3, 3, 4, 2}},
       {2, 1},
       0,
       [](const std::vector<array>& x) { return gather_mm(x[0], x[1], std::nullopt, array({2, 0})); }},
      {"gather_mm mapped rhs operand, an index past the end (clamped)",
       {{2, 1, 4}, {3, 2, 4, 5}},
       {-1, 0},
       0,
       [](const std::vector<array>& x) { return gather_mm(x[0], x[1], array({0, 1}), array({1, 7})); }},
      {"gather_mm mapped indices",
       {{2, 3}, {3, 3, 2}, {4, 5}},
       {-1, -1, 0},
       0,
       [](const std::vector<array>& x) {
         // Indices 0..2 from a mapped input: each batch element picks its own matrices.
         array idx = astype(floor((x[2] + array(1.0f)) * array(1.49f)), uint32);
         return gather_mm(x[0], x[1], std::nullopt, idx);
       }},
      {"gather_mm mapped operand and indices",
       {{3, 2, 2, 4}, {4, 2}, {2, 3}},
       {0, -1, 1},
       0,
       [](const std::vector<array>& x) {
         array idx = astype(floor((x[2] + array(1.0f)) * array(0.99f)), uint32);
         return gather_mm(x[0], x[1], idx);
       }},
      one("gather_qmm mapped x", {3, 2, 1, 32}, 0,
          [](const array& x) {
            auto q = quantize(fixed_weights({3, 4, 32}), 32, 4);
            return gather_qmm(x, q[0], q[1], q[2], array({1, 0}), array({2, 0}), true, 32, 4);
          }),
      {"gather_qmm mapped weights",
       {{2, 1, 32}, {3, 2, 4, 32}},
       {-1, 0},
       0,
       [](const std::vector<array>& x) {
         auto q = quantize(x[1], 32, 4);
         return gather_qmm(x[0], q[0], q[1], q[2], array({1, 0, 1}), array({0, 1, 1}), true, 32, 4);
       }},
      one("grad inside", {3, 4}, 0,
          [](const array& x) {
            return grad(std::function<array(const array&)>([](const array& z) { return sum(sin(z)); }))(x);
          }),
  };
}

}  // namespace

TEST(TransformsVmap, MatchesTheFunctionAppliedPerSlice) {
  uint32_t seed = 7000;
  for (const Device& dev : test::test_devices()) {
    for (const auto& c : vmap_cases()) check_vmap(c, dev, seed++);
  }
}

TEST(TransformsVmap, CustomFunctionsMapThroughTheirFunction) {
  VecFn f = [](const std::vector<array>& x) { return std::vector<array>{exp(x[0])}; };
  auto plain = custom_function(f);
  array got = vmap(plain)({ones({10})})[0];
  test::expect_close(values(got), std::vector<double>(10, std::exp(1.0)), 1e-6, 0, "default vmap");
  auto custom = custom_function(f, std::nullopt, std::nullopt,
                                [](const std::vector<array>& x, const std::vector<int>& axes) {
                                  return std::make_pair(std::vector<array>{ones_like(x[0]) * 3}, axes);
                                });
  test::expect_close(values(vmap(custom)({ones({10})})[0]), std::vector<double>(10, 3.0), 0, 0,
                     "custom vmap");
}

// A primitive of the user's with no vmap: vmap reports it by name.
class NoVmap : public UnaryPrimitive {
 public:
  using UnaryPrimitive::UnaryPrimitive;
  using UnaryPrimitive::eval_cpu;
  using UnaryPrimitive::eval_gpu;
  void eval_cpu(const std::vector<array>&, array&) override { throw std::logic_error("not evaluated"); }
  void eval_gpu(const std::vector<array>&, array&) override { throw std::logic_error("not evaluated"); }
  const char* name() const override { return "NoVmap"; }
};

TEST(TransformsVmap, ErrorsNameTheProblem) {
  auto id = [](const std::vector<array>& x) { return x; };
  expect_throws_with(
      [&] {
        vmap(id, {0, 0})({ones({2})});
      },
      "[vmap] The number of in axes (2) must match the number of inputs (1).");
  expect_throws_with([&] { vmap(id)({array(1.0f)}); }, "[vmap] Cannot vmap an input with zero dimensions.");
  expect_throws_with([&] { vmap(id, {1})({ones({2})}); },
                     "[vmap] Axis 1 invalid for input with 1 dimensions.");
  expect_throws_with([&] { vmap(id)({ones({2}), ones({3})}); }, "[vmap] Inconsistent axis sizes: 3 and 2.");
  expect_throws_with([&] { vmap(id, {-1}, {})({ones({2})}); },
                     "[vmap] Input (or output) axes must be specified if output (or input) axes are.");
  expect_throws_with(
      [&] {
        vmap([](const std::vector<array>& x) {
          auto p = std::make_shared<NoVmap>(default_stream(Device::cpu));
          return std::vector<array>{array(x[0].shape(), x[0].dtype(), p, {x[0]})};
        })({ones({2, 3})});
      },
      "[NoVmap] vmap is not implemented.");
  expect_throws_with(
      [&] {
        vmap([](const std::vector<array>& x) {
          array y = exp(x[0]);
          eval(y);
          return std::vector<array>{y};
        })({ones({2, 3})});
      },
      "[eval] Attempting to eval an array during function transformations like compile or vmap is not "
      "allowed.");
}

// checkpoint differentiates its floating inputs only: an integer input (indices) is a constant
// of the recomputation, so a gather inside is not asked for its indices' gradient.
TEST(Transforms, CheckpointWithIntegerInputs) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    auto f = checkpoint([](const std::vector<array>& in) {
      array t = take(in[0], in[1]);
      return std::vector<array>{sum(multiply(t, t))};
    });
    const array idx({1, 3});
    const array g = grad([&](const array& a) { return f({a, idx})[0]; })(array({1.0f, 2.0f, 3.0f, 4.0f}));
    test::expect_close(values(g), {0, 4, 0, 8}, 0, 0, "checkpoint with indices");
    // Forward mode through it: only the differentiated input carries a tangent, so the
    // gather is never asked for one of its indices.
    auto [out, tan] = jvp(
        [&](const array& a) {
          return f({a, idx})[0];
        },
        array({1.0f, 2.0f, 3.0f, 4.0f}), array({1.0f, 1.0f, 1.0f, 1.0f}));
    test::expect_close(values(tan), {12}, 0, 0, "jvp of checkpoint with indices");
  }
}
