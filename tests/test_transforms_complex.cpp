// Complex derivatives follow MLX's (PyTorch's) convention: the gradient of a real loss L of
// z = x + iy is dL/dx + i dL/dy, so a vjp multiplies its cotangent by the conjugated
// derivative and a jvp by the derivative itself. MLX's own test cases, exact rules of the
// linear parts, and a table of ops checked against central differences in x and in y, on
// every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support.h"

using namespace braid;
using cf = std::complex<float>;

namespace {

using Fn = std::function<array(const std::vector<array>&)>;
using UnaryFn = std::function<array(const array&)>;

array cplx(const std::vector<cf>& v, const Shape& shape) { return array(v.begin(), shape, complex64); }

void expect_near(const std::vector<cf>& got, const std::vector<cf>& want, float tol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::abs(got[i] - want[i]), tol * (1.0f + std::abs(want[i])))
        << what << " at " << i << ": got " << got[i] << ", want " << want[i];
  }
}

bool all_equal(const array& a, const array& b) { return array_equal(a, b).item<bool>(); }

// Values away from every branch cut the table's ops have: real part in [0.3, 0.9], imaginary
// part of magnitude in [0.1, 0.5].
std::vector<cf> draw(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> re(0.3f, 0.9f), im(0.1f, 0.5f);
  std::bernoulli_distribution flip;
  std::vector<cf> v(n);
  for (auto& z : v) z = {re(rng), flip(rng) ? -im(rng) : im(rng)};
  return v;
}

size_t numel(const Shape& s) {
  size_t n = 1;
  for (auto d : s) n *= static_cast<size_t>(d);
  return n;
}

// One op: its inputs (complex64 unless listed as real) and the call.
struct ComplexCase {
  std::string name;
  std::vector<Shape> shapes;
  Fn f;
  std::vector<int> real_inputs = {};
};

array make_input(const std::vector<cf>& v, const Shape& shape, bool real_input) {
  array z = cplx(v, shape);
  return real_input ? real(z) : z;
}

// sum(Re(conj(w) f(z))): its gradient in the convention is the vjp of the cotangent w.
double loss(const ComplexCase& c, const std::vector<array>& in, const array& w) {
  array y = c.f(in);
  return sum(real(multiply(conjugate(astype(w, complex64)), astype(y, complex64)))).item<float>();
}

void check_case(const ComplexCase& c, const Device& dev, uint32_t seed) {
  StreamContext ctx(dev);
  std::mt19937 rng(seed);
  const std::string what = c.name + " on " + test::device_name(dev) + " (seed " + std::to_string(seed) + ")";
  auto is_real = [&](size_t i) {
    return std::find(c.real_inputs.begin(), c.real_inputs.end(), static_cast<int>(i)) != c.real_inputs.end();
  };
  std::vector<std::vector<cf>> vals;
  std::vector<array> primals, tangents;
  std::vector<std::vector<cf>> tvals;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    vals.push_back(draw(numel(c.shapes[i]), rng));
    if (is_real(i)) {
      for (auto& z : vals.back()) z = {z.real(), 0.0f};
    }
    primals.push_back(make_input(vals.back(), c.shapes[i], is_real(i)));
    tvals.push_back(draw(numel(c.shapes[i]), rng));
    tangents.push_back(make_input(tvals.back(), c.shapes[i], is_real(i)));
  }
  const array y = c.f(primals);
  std::vector<cf> wv = draw(y.size(), rng);
  array w = y.dtype() == complex64 ? cplx(wv, y.shape()) : real(cplx(wv, y.shape()));

  auto [outs, grads] =
      vjp([&](const std::vector<array>& in) { return std::vector<array>{c.f(in)}; }, primals, {w});
  ASSERT_EQ(grads.size(), primals.size()) << what;
  const float h = 5e-3f;
  for (size_t i = 0; i < primals.size(); ++i) {
    EXPECT_EQ(grads[i].dtype(), primals[i].dtype()) << what << ", input " << i;
    std::vector<cf> want(vals[i].size());
    for (size_t k = 0; k < vals[i].size(); ++k) {
      for (int part = 0; part < (is_real(i) ? 1 : 2); ++part) {
        const cf step = part == 0 ? cf(h, 0.0f) : cf(0.0f, h);
        auto at = [&](cf d) {
          std::vector<array> in = primals;
          std::vector<cf> v = vals[i];
          v[k] += d;
          in[i] = make_input(v, c.shapes[i], is_real(i));
          return loss(c, in, w);
        };
        const double slope = (at(step) - at(-step)) / (2.0 * h);
        want[k] += part == 0 ? cf(static_cast<float>(slope), 0.0f) : cf(0.0f, static_cast<float>(slope));
      }
    }
    expect_near(test::complex_values(grads[i]), want, 2e-2f, what + ", vjp of input " + std::to_string(i));
  }

  // The jvp is f'(z) t, unconjugated: the central difference of f along t.
  auto [jouts, jt] =
      jvp([&](const std::vector<array>& in) { return std::vector<array>{c.f(in)}; }, primals, tangents);
  auto along = [&](float d) {
    std::vector<array> in;
    for (size_t i = 0; i < primals.size(); ++i) {
      std::vector<cf> v = vals[i];
      for (size_t k = 0; k < v.size(); ++k) v[k] += d * tvals[i][k];
      in.push_back(make_input(v, c.shapes[i], is_real(i)));
    }
    return test::complex_values(c.f(in));
  };
  const std::vector<cf> hi = along(h), lo = along(-h);
  std::vector<cf> want(hi.size());
  for (size_t k = 0; k < hi.size(); ++k) want[k] = (hi[k] - lo[k]) / (2.0f * h);
  EXPECT_EQ(jt[0].dtype(), y.dtype()) << what;
  expect_near(test::complex_values(jt[0]), want, 2e-2f, what + ", jvp");
}

std::vector<ComplexCase> cases() {
  const Shape v6{6}, m23{2, 3};
  auto un = [&](std::string name, array (*op)(const array&, StreamOrDevice)) {
    return ComplexCase{std::move(name), {m23}, [op](const std::vector<array>& x) { return op(x[0], {}); }};
  };
  std::vector<ComplexCase> c = {
      un("exp", exp),
      un("expm1", expm1),
      un("log", log),
      un("log1p", log1p),
      un("log2", log2),
      un("log10", log10),
      un("sin", sin),
      un("cos", cos),
      un("tan", tan),
      un("arcsin", arcsin),
      un("arccos", arccos),
      un("arctan", arctan),
      un("sinh", sinh),
      un("cosh", cosh),
      un("tanh", tanh),
      un("arcsinh", arcsinh),
      un("arccosh", arccosh),
      un("arctanh", arctanh),
      un("sqrt", sqrt),
      un("rsqrt", rsqrt),
      un("square", square),
      un("reciprocal", reciprocal),
      un("sigmoid", sigmoid),
      un("negative", negative),
      un("abs", abs),
      un("real", real),
      un("imag", imag),
      un("conjugate", conjugate),
      {"multiply", {m23, {3}}, [](const std::vector<array>& x) { return multiply(x[0], x[1]); }},
      {"divide", {m23, m23}, [](const std::vector<array>& x) { return divide(x[0], x[1]); }},
      {"power", {m23, m23}, [](const std::vector<array>& x) { return power(x[0], x[1]); }},
      {"add", {m23, m23}, [](const std::vector<array>& x) { return add(x[0], x[1]); }},
      {"subtract", {m23, m23}, [](const std::vector<array>& x) { return subtract(x[0], x[1]); }},
      {"multiply real by complex",
       {m23, m23},
       [](const std::vector<array>& x) { return multiply(x[0], x[1]); },
       {0}},
      {"divide complex by real",
       {m23, m23},
       [](const std::vector<array>& x) { return divide(x[0], x[1]); },
       {1}},
      {"sum", {m23}, [](const std::vector<array>& x) { return sum(x[0], 1); }},
      {"mean", {m23}, [](const std::vector<array>& x) { return mean(x[0], 0); }},
      {"prod", {{2, 4}}, [](const std::vector<array>& x) { return prod(x[0], 1); }},
      {"prod of all", {v6}, [](const std::vector<array>& x) { return prod(x[0]); }},
      {"cumprod", {{2, 4}}, [](const std::vector<array>& x) { return cumprod(x[0], 1); }},
      {"cumprod reverse exclusive",
       {{2, 4}},
       [](const std::vector<array>& x) { return cumprod(x[0], 1, true, false); }},
      {"cumsum", {{2, 4}}, [](const std::vector<array>& x) { return cumsum(x[0], 1); }},
      {"matmul", {{2, 3}, {3, 4}}, [](const std::vector<array>& x) { return matmul(x[0], x[1]); }},
      {"matmul batched", {{2, 2, 3}, {3, 2}}, [](const std::vector<array>& x) { return matmul(x[0], x[1]); }},
      {"matmul of a transposed operand",
       {{2, 3}, {4, 3}},
       [](const std::vector<array>& x) { return matmul(x[0], transpose(x[1])); }},
      {"addmm",
       {{2, 4}, {2, 3}, {3, 4}},
       [](const std::vector<array>& x) { return addmm(x[0], x[1], x[2], 0.5f, 2.0f); }},
      // Other axes than the last compose exp, max and divide (the kernel takes real floats).
      {"softmax", {m23}, [](const std::vector<array>& x) { return softmax(x[0], 0); }},
      {"scatter_prod",
       {v6, {2, 1}},
       [](const std::vector<array>& x) {
         return scatter_prod(x[0], array({1, 4}), x[1], 0);
       }},
  };
  return c;
}

}  // namespace

TEST(TransformsComplex, GradOfRealIsOneAndOfImagIsI) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array x = cplx({{1, 2}, {-3, 0.5f}, {0, 0}}, {3});
    auto g_re = grad(UnaryFn([](const array& z) { return sum(multiply(array(2.0f), real(z))); }))(x);
    auto g_im = grad(UnaryFn([](const array& z) { return sum(multiply(array(2.0f), imag(z))); }))(x);
    ASSERT_EQ(g_re.dtype(), complex64);
    ASSERT_EQ(g_im.dtype(), complex64);
    for (const cf& v : test::complex_values(g_re)) EXPECT_EQ(v, cf(2, 0)) << test::device_name(dev);
    for (const cf& v : test::complex_values(g_im)) EXPECT_EQ(v, cf(0, 2)) << test::device_name(dev);
  }
}

TEST(TransformsComplex, ConjugateVjpConjugatesTheCotangent) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array z = cplx({{1, 2}, {-3, 0.5f}}, {2});
    const array c = cplx({{0.5f, -1}, {2, 3}}, {2});
    auto [out, g] = vjp([](const array& a) { return conjugate(a); }, z, c);
    EXPECT_TRUE(all_equal(g, conjugate(c))) << test::device_name(dev);
    auto [rout, rg] = vjp([](const array& a) { return real(a); }, z, array({0.5f, -2.0f}));
    EXPECT_TRUE(all_equal(rg, cplx({{0.5f, 0}, {-2, 0}}, {2}))) << test::device_name(dev);
    auto [iout, ig] = vjp([](const array& a) { return imag(a); }, z, array({0.5f, -2.0f}));
    EXPECT_TRUE(all_equal(ig, cplx({{0, 0.5f}, {0, -2}}, {2}))) << test::device_name(dev);
  }
}

// mx.vjp(mx.exp, [z], [c]) == c * conj(exp(z)), and so on: MLX's test_autograd cases.
TEST(TransformsComplex, HolomorphicVjpsMultiplyByTheConjugateDerivative) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const std::string d = test::device_name(dev);
    const array z = cplx({{0.5f, 1}, {-1, 0.25f}, {2, -1.5f}}, {3});
    const array b = cplx({{1.5f, -0.5f}, {0.25f, 2}, {-1, -1}}, {3});
    const array c = cplx({{1, -1}, {0.5f, 2}, {-0.75f, 0.5f}}, {3});
    auto [eo, eg] = vjp([](const array& a) { return exp(a); }, z, c);
    expect_near(test::complex_values(eg), test::complex_values(multiply(c, conjugate(exp(z)))), 1e-6f,
                "exp " + d);
    auto [lo, lg] = vjp([](const array& a) { return log(a); }, z, c);
    expect_near(test::complex_values(lg), test::complex_values(divide(c, conjugate(z))), 1e-6f, "log " + d);
    auto [mo, mg] = vjp([](const std::vector<array>& x) { return std::vector<array>{multiply(x[0], x[1])}; },
                        {z, b}, {c});
    EXPECT_TRUE(all_equal(mg[0], multiply(c, conjugate(b)))) << "multiply " << d;
    EXPECT_TRUE(all_equal(mg[1], multiply(c, conjugate(z)))) << "multiply " << d;
  }
}

// MLX's C++ test "test complex gradients" (as MLX has had it since its vjps conjugate): a real
// input times a complex constant gets the real part of the conjugated product.
TEST(TransformsComplex, MlxComplexGradientCases) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const std::string d = test::device_name(dev);
    auto add_fn = [](const std::vector<array>& in) { return std::vector<array>{add(in[0], in[1])}; };
    const array one_one = array(complex64_t{1.0f, 1.0f});
    auto jout =
        jvp(add_fn, {one_one, one_one}, {array(complex64_t{1.0f, 2.0f}), array(complex64_t{2.0f, 1.0f})});
    EXPECT_EQ(jout.second[0].item<complex64_t>(), complex64_t(3.0f, 3.0f)) << d;
    auto vout = vjp(add_fn, {one_one, one_one}, {array(complex64_t{3.0f, 3.0f})});
    EXPECT_EQ(vout.second[0].item<complex64_t>(), complex64_t(3.0f, 3.0f)) << d;
    EXPECT_EQ(vout.second[1].item<complex64_t>(), complex64_t(3.0f, 3.0f)) << d;

    const array x = array(complex64_t{2.0f, 4.0f}), y = array(3.0f);
    auto by_x = [x](const array& a) { return multiply(a, x); };
    auto by_y = [y](const array& a) { return multiply(a, y); };
    EXPECT_EQ(jvp(by_x, y, array(2.0f)).second.item<complex64_t>(), complex64_t(4.0f, 8.0f)) << d;
    EXPECT_EQ(jvp(by_y, x, array(complex64_t{1.0f, 2.0f})).second.item<complex64_t>(),
              complex64_t(3.0f, 6.0f))
        << d;
    const array cotan = array(complex64_t{2.0f, 3.0f});
    const array real_grad = vjp(by_x, y, cotan).second;
    EXPECT_EQ(real_grad.dtype(), float32) << d;
    EXPECT_EQ(real_grad.item<float>(), 16.0f) << d;  // Re(conj(2+4i) (2+3i))
    EXPECT_EQ(vjp(by_y, x, cotan).second.item<complex64_t>(), complex64_t(6.0f, 9.0f)) << d;
  }
}

// MLX's test: the vjp of prod over two rows equals multiply's, element for element.
TEST(TransformsComplex, ProdVjpEqualsMultiplysExactly) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    std::mt19937 rng(7);
    const array x = cplx(draw(40, rng), {2, 20});
    const array c = cplx(draw(20, rng), {20});
    auto [po, pg] = vjp([](const array& a) { return prod(a, 0); }, x, c);
    const array x0 = slice(x, {0, 0}, {1, 20}), x1 = slice(x, {1, 0}, {2, 20});
    auto [mo, mg] = vjp([](const std::vector<array>& a) { return std::vector<array>{multiply(a[0], a[1])}; },
                        {reshape(x0, {20}), reshape(x1, {20})}, {c});
    EXPECT_TRUE(all_equal(pg, stack({mg[0], mg[1]}))) << test::device_name(dev);
    EXPECT_TRUE(all_equal(
        pg, stack({multiply(conjugate(reshape(x1, {20})), c), multiply(conjugate(reshape(x0, {20})), c)})))
        << test::device_name(dev);
  }
}

// |z| is not holomorphic: its gradient is z / |z| (d|z|/dx + i d|z|/dy), its tangent
// Re(conj(z) t) / |z|.
TEST(TransformsComplex, AbsGradientIsZOverItsModulus) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array z = cplx({{3, 4}, {-1, 0}, {0, -2}}, {3});
    auto g = grad(UnaryFn([](const array& a) { return sum(abs(a)); }))(z);
    expect_near(test::complex_values(g), {{0.6f, 0.8f}, {-1, 0}, {0, -1}}, 1e-6f,
                "abs " + test::device_name(dev));
    auto [o, t] = jvp([](const array& a) { return abs(a); }, z, cplx({{1, 1}, {2, 5}, {1, 3}}, {3}));
    ASSERT_EQ(t.dtype(), float32);
    test::expect_close(test::values(t), {(3.0 + 4.0) / 5.0, -2.0, -3.0}, 1e-6, 0,
                       "abs jvp " + test::device_name(dev));
  }
}

TEST(TransformsComplex, MatmulVjpsUseConjugateTransposes) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    std::mt19937 rng(11);
    const array a = cplx(draw(6, rng), {2, 3}), b = cplx(draw(12, rng), {3, 4}),
                c = cplx(draw(8, rng), {2, 4});
    auto [o, g] =
        vjp([](const std::vector<array>& x) { return std::vector<array>{matmul(x[0], x[1])}; }, {a, b}, {c});
    expect_near(test::complex_values(g[0]), test::complex_values(matmul(c, conjugate(transpose(b)))), 1e-6f,
                "a " + test::device_name(dev));
    expect_near(test::complex_values(g[1]), test::complex_values(matmul(conjugate(transpose(a)), c)), 1e-6f,
                "b " + test::device_name(dev));
  }
}

// Real inputs keep their graphs: the vjp of a real product is unchanged bit for bit, with no
// conjugate node.
TEST(TransformsComplex, RealVjpsAddNoConjugate) {
  const array a = array({1.5f, -2.0f}), b = array({0.25f, 3.0f}), c = array({1.0f, -1.0f});
  auto [o, g] =
      vjp([](const std::vector<array>& x) { return std::vector<array>{multiply(x[0], x[1])}; }, {a, b}, {c});
  EXPECT_TRUE(all_equal(g[0], multiply(c, b)));
  EXPECT_EQ(std::string(g[0].primitive().name()), "Multiply");
  for (const array& in : g[0].inputs())
    EXPECT_FALSE(in.has_primitive() && std::string(in.primitive().name()) == "Conjugate");
}

TEST(TransformsComplex, VjpAndJvpMatchCentralDifferences) {
  uint32_t seed = 9000;
  for (const Device& dev : test::test_devices()) {
    for (const ComplexCase& c : cases()) check_case(c, dev, seed++);
  }
}
