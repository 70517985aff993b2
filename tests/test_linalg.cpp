// braid::linalg on every device: norms and the cross product against references computed here
// in double (on the CPU and the GPU); the factorizations on the CPU, checked by reconstruction
// and against known values, with their errors (bad input at graph build, singular and
// indefinite matrices at evaluation) and their refusal of GPU streams; derivatives against
// central finite differences in float64; vmap against the batched call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "support.h"

using namespace braid;
using test::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string shape_name(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

size_t numel(const Shape& s) {
  size_t n = 1;
  for (auto d : s) n *= static_cast<size_t>(d);
  return n;
}

std::vector<double> uniform(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

array random_array(const Shape& shape, Dtype dt, uint32_t seed) {
  return test::make(uniform(numel(shape), seed), shape, dt);
}

// Random matrices [..., n, n] plus n times the identity: well conditioned.
array well_conditioned(const Shape& shape, Dtype dt, uint32_t seed) {
  const int n = shape[shape.size() - 1];
  return add(random_array(shape, dt, seed), multiply(array(static_cast<double>(n), dt), eye(n, n, 0, dt)));
}

// Symmetric positive-definite matrices x x^T + n I.
array spd(const Shape& shape, Dtype dt, uint32_t seed) {
  const int n = shape[shape.size() - 1];
  const array x = random_array(shape, dt, seed);
  return add(matmul(x, swapaxes(x, -1, -2)), multiply(array(static_cast<double>(n), dt), eye(n, n, 0, dt)));
}

array mT(const array& a) { return swapaxes(a, -1, -2); }

double tol_for(Dtype dt) { return dt == float64 ? 1e-10 : 2e-5; }

void expect_near_arrays(const array& got, const array& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  test::expect_close(values(got), values(want), tol, tol, what);
}

void expect_identity(const array& m, double tol, const std::string& what) {
  const int n = m.shape(-1);
  expect_near_arrays(m, broadcast_to(eye(n, n, 0, float64), m.shape()), tol, what);
}

template <typename F>
void expect_invalid(F&& f, const std::string& start, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": expected std::invalid_argument starting with " << start;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(start, 0), 0u) << what << ": " << e.what();
  }
}

template <typename F>
void expect_eval_error(F&& f, const std::string& start, const std::string& contains) {
  try {
    array r = f();
    r.eval();
    ADD_FAILURE() << "expected an evaluation error starting with " << start;
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(start, 0), 0u) << msg;
    EXPECT_NE(msg.find(contains), std::string::npos) << msg;
  }
}

// `op` called once on a CPU-made 3 x 3 matrix with the calling thread's default stream.
void call_on_default_stream(const std::string& op) {
  const array a = eye(3, float32, Device::cpu), b = ones({3}, float32, Device::cpu);
  const std::map<std::string, std::function<void()>> calls = {
      {"qr", [&] { linalg::qr(a); }},
      {"svd", [&] { linalg::svd(a); }},
      {"inv", [&] { linalg::inv(a); }},
      {"tri_inv", [&] { linalg::tri_inv(a); }},
      {"cholesky", [&] { linalg::cholesky(a); }},
      {"pinv", [&] { linalg::pinv(a); }},
      {"lu", [&] { linalg::lu(a); }},
      {"solve", [&] { linalg::solve(a, b); }},
      {"solve_triangular", [&] { linalg::solve_triangular(a, b); }},
      {"eigh", [&] { linalg::eigh(a); }},
      {"eig", [&] { linalg::eig(a); }},
      {"det", [&] { linalg::det(a); }},
  };
  calls.at(op)();
}

// Runs `check` on the CPU; on the GPU (the default device there), expects `op` to refuse the
// stream before any node exists.
void on_cpu_refused_on_gpu(const std::string& op, const std::function<void()>& check) {
  for (const Device& dev : test::test_devices()) {
    SCOPED_TRACE(test::device_name(dev));
    StreamContext ctx(dev);
    if (dev == Device::cpu) {
      check();
    } else {
      expect_invalid([&] { call_on_default_stream(op); },
                     "[linalg::" + op + "] This op is not yet supported on the GPU.", op);
    }
  }
}

// ---- norms and cross: every device, references in double ----

std::vector<double> ref_vector_norms(const std::vector<double>& x, int rows, int cols, double ord) {
  std::vector<double> out;
  for (int r = 0; r < rows; ++r) {
    double acc = ord == -kInf ? kInf : 0.0;
    for (int c = 0; c < cols; ++c) {
      const double v = std::abs(x[r * cols + c]);
      if (ord == 0) {
        acc += v != 0;
      } else if (ord == kInf) {
        acc = std::max(acc, v);
      } else if (ord == -kInf) {
        acc = std::min(acc, v);
      } else {
        acc += std::pow(v, ord);
      }
    }
    if (ord != 0 && std::isfinite(ord)) acc = std::pow(acc, 1.0 / ord);
    out.push_back(acc);
  }
  return out;
}

TEST(Linalg, VectorNormsOfEveryOrderMatchTheirDefinitions) {
  std::vector<double> x = uniform(12, 1);
  x[5] = 0.0;  // a zero for ord 0 to skip
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    for (Dtype dt : {float32, float64}) {
      if (dev != Device::cpu && dt == float64) continue;
      const array a = test::make(x, {3, 4}, dt);
      for (double ord : {0.0, 1.0, 2.0, kInf, -kInf, 3.0, -3.0, 0.5}) {
        const std::string what =
            test::device_name(dev) + " " + dtype_name(dt) + " ord " + std::to_string(ord);
        const array n = linalg::norm(a, ord, -1);
        EXPECT_EQ(n.dtype(), dt) << what;
        ASSERT_EQ(n.shape(), (Shape{3})) << what;
        test::expect_close(values(n), ref_vector_norms(x, 3, 4, ord), 1e-5, 1e-6, what);
        EXPECT_EQ(linalg::norm(a, ord, 1, true).shape(), (Shape{3, 1})) << what;
      }
      // The first axis: the transposed problem.
      std::vector<double> xt(12);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) xt[c * 3 + r] = x[r * 4 + c];
      test::expect_close(values(linalg::norm(a, 3.0, 0)), ref_vector_norms(xt, 4, 3, 3.0), 1e-5, 1e-6,
                         "axis 0");
    }
  }
}

TEST(Linalg, MatrixNormsOfEveryOrderMatchKnownValues) {
  // [[3, 0], [4, 5]]: column sums 7, 5; row sums 3, 9; singular values 3 sqrt(5), sqrt(5).
  for (const Device& dev : test::test_devices()) {
    SCOPED_TRACE(test::device_name(dev));
    StreamContext ctx(dev);
    const array a = array({3.0f, 0.0f, 4.0f, 5.0f}, {2, 2});
    auto one = [](const array& r) { return values(r)[0]; };
    EXPECT_NEAR(one(linalg::norm(a, 1.0)), 7.0, 1e-6);
    EXPECT_NEAR(one(linalg::norm(a, -1.0)), 5.0, 1e-6);
    EXPECT_NEAR(one(linalg::norm(a, kInf)), 9.0, 1e-6);
    EXPECT_NEAR(one(linalg::norm(a, -kInf)), 3.0, 1e-6);
    EXPECT_NEAR(one(linalg::norm(a, "fro")), std::sqrt(50.0), 1e-5);
    EXPECT_NEAR(one(linalg::norm(a, "f")), std::sqrt(50.0), 1e-5);
    EXPECT_NEAR(one(linalg::norm(a, 2.0)), 3 * std::sqrt(5.0), 1e-5);
    EXPECT_NEAR(one(linalg::norm(a, -2.0)), std::sqrt(5.0), 1e-5);
    EXPECT_NEAR(one(linalg::norm(a, "nuc")), 4 * std::sqrt(5.0), 1e-5);
    EXPECT_EQ(linalg::norm(a, 2.0).dtype(), float32);
    // Axes in either order and anywhere, with keepdims: (row, col) = (2, 0) of [2, 3, 2].
    const array b = transpose(broadcast_to(expand_dims(a, 1), {2, 3, 2}), {2, 1, 0});
    EXPECT_EQ(linalg::norm(b, 1.0, std::vector<int>{2, 0}).shape(), (Shape{3}));
    test::expect_close(values(linalg::norm(b, 1.0, std::vector<int>{2, 0})), {7, 7, 7}, 1e-6, 1e-6,
                       "ord 1 axes");
    test::expect_close(values(linalg::norm(b, kInf, std::vector<int>{2, 0})), {9, 9, 9}, 1e-6, 1e-6,
                       "inf axes");
    EXPECT_EQ(linalg::norm(b, 1.0, std::vector<int>{2, 0}, true).shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(linalg::norm(b, -kInf, std::vector<int>{0, -1}, true).shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(linalg::norm(b, 2.0, std::vector<int>{2, 0}, true).shape(), (Shape{1, 3, 1}));
    test::expect_close(values(linalg::norm(b, "nuc", std::vector<int>{-1, 0})),
                       std::vector<double>(3, 4 * std::sqrt(5.0)), 1e-5, 1e-5, "nuc axes");
  }
}

TEST(Linalg, NormWithoutOrdIsTheTwoNormOfTheFlattenedArray) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const array a = array({-4, -3, -2, -1, 0, 1, 2, 3, 4}, {3, 3});
    const array n = linalg::norm(a);
    EXPECT_EQ(n.dtype(), float32);  // integers give float32
    EXPECT_NEAR(values(n)[0], std::sqrt(60.0), 1e-5);
    EXPECT_EQ(linalg::norm(a, std::nullopt, true).shape(), (Shape{1}));  // MLX keeps one axis
    test::expect_close(values(linalg::norm(a, 0)), {std::sqrt(21.0), std::sqrt(18.0), std::sqrt(21.0)}, 1e-5,
                       1e-5, "axis 0");
    EXPECT_NEAR(values(linalg::norm(a, std::vector<int>{0, 1}))[0], std::sqrt(60.0), 1e-5);
    // Complex entries: a real norm.
    const array z = astype(array({3.0f, 4.0f}), complex64);
    const array zi = multiply(z, array(complex64_t(0.0f, 1.0f)));
    EXPECT_EQ(linalg::norm(zi).dtype(), float32);
    EXPECT_NEAR(values(linalg::norm(zi))[0], 5.0, 1e-6);
    EXPECT_NEAR(values(linalg::norm(zi, 1.0))[0], 7.0, 1e-6);
  }
}

TEST(Linalg, NormRejectsBadOrdersAndAxes) {
  const array v = array({1.0f, 2.0f, 3.0f});
  const array m = ones({2, 2});
  const array t = ones({2, 2, 2});
  expect_invalid([&] { linalg::norm(t, 2.0); }, "[linalg::norm] Received too many axes", "3-d ord");
  expect_invalid(
      [&] {
        linalg::norm(t, std::vector<int>{0, 1, 2});
      },
      "[linalg::norm] Received too many axes", "3 axes");
  expect_invalid([&] { linalg::norm(v, "fro"); }, "[linalg::norm] Norm 'fro' only supported for matrices",
                 "fro 1-d");
  expect_invalid([&] { linalg::norm(m, 3.0); }, "[linalg::norm] Invalid ord 3 for matrix norm.", "ord 3");
  expect_invalid([&] { linalg::norm(m, "spectral"); }, "[linalg::norm] Invalid ord value 'spectral'",
                 "bad string");
  expect_invalid(
      [&] {
        linalg::norm(m, 1.0, std::vector<int>{1, -1});
      },
      "[linalg::norm] Received duplicate axes", "duplicate");
  expect_invalid([&] { linalg::norm(m, 1.0, 2); }, "[linalg::norm] Axis 2 is out of bounds", "axis range");
}

TEST(Linalg, CrossProductsOfTwoAndThreeComponentVectors) {
  for (const Device& dev : test::test_devices()) {
    SCOPED_TRACE(test::device_name(dev));
    StreamContext ctx(dev);
    const array x = array({1.0f, 2.0f, 3.0f}), y = array({4.0f, 5.0f, 6.0f});
    test::expect_close(values(linalg::cross(x, y)), {-3, 6, -3}, 0, 0, "3 x 3");
    const array x2 = array({1.0f, 2.0f}), y2 = array({3.0f, 4.0f});
    test::expect_close(values(linalg::cross(x2, y2)), {0, 0, -2}, 0, 0, "2 x 2");
    test::expect_close(values(linalg::cross(x2, y)), {12, -6, -3}, 0, 0, "2 x 3");
    test::expect_close(values(linalg::cross(x, y2)), {-12, 9, -2}, 0, 0, "3 x 2");
    // Along axis 0 of [3, 2], with a broadcast operand, in int32.
    const array a = array({1, 0, 0, 1, 0, 0}, {3, 2});
    const array b = array({0, 0, 1}, {3, 1});
    const array c = linalg::cross(a, b, 0);
    EXPECT_EQ(c.dtype(), int32);
    ASSERT_EQ(c.shape(), (Shape{3, 2}));
    test::expect_close(values(c), {0, 1, -1, 0, 0, 0}, 0, 0, "axis 0");
    // Batched rows, float64.
    if (dev == Device::cpu) {
      const array r = random_array({5, 3}, float64, 3), q = random_array({5, 3}, float64, 4);
      const array d = linalg::cross(r, q);
      test::expect_close(values(sum(multiply(d, r), -1)), std::vector<double>(5, 0.0), 0, 1e-14,
                         "orthogonal");
    }
  }
  expect_invalid([] { linalg::cross(ones({4}), ones({3})); },
                 "[linalg::cross] The specified axis must have size 2 or 3", "size 4");
  expect_invalid([] { linalg::cross(ones({3}), ones({3}), 1); }, "[linalg::cross] axis 1 invalid", "axis");
}

// ---- factorizations: CPU, reconstruction and known values ----

const std::vector<Shape> kShapes = {{4, 4}, {5, 3}, {3, 5}, {2, 4, 3}, {2, 1, 3, 3}};

TEST(Linalg, QrReconstructsWithOrthonormalQAndTriangularR) {
  on_cpu_refused_on_gpu("qr", [] {
    for (Dtype dt : {float32, float64}) {
      for (const Shape& shape : kShapes) {
        const std::string what = dtype_name(dt) + " " + shape_name(shape);
        const array a = random_array(shape, dt, 7);
        auto [q, r] = linalg::qr(a);
        const int m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
        EXPECT_EQ(q.dtype(), dt);
        EXPECT_EQ(q.shape(-1), k) << what;
        EXPECT_EQ(r.shape(-2), k) << what;
        expect_near_arrays(matmul(q, r), a, 10 * tol_for(dt), what + " q r");
        expect_identity(matmul(mT(q), q), 10 * tol_for(dt), what + " q^T q");
        expect_near_arrays(triu(r), r, 0, what + " r upper");
      }
    }
    // MLX's documented example.
    auto [q, r] = linalg::qr(array({2.0f, 3.0f, 1.0f, 2.0f}, {2, 2}));
    test::expect_close(values(q), {-0.894427, -0.447214, -0.447214, 0.894427}, 1e-5, 1e-6, "q");
    test::expect_close(values(r), {-2.23607, -3.57771, 0, 0.447214}, 1e-5, 1e-6, "r");
  });
}

TEST(Linalg, SvdReconstructsWithDescendingValues) {
  on_cpu_refused_on_gpu("svd", [] {
    for (Dtype dt : {float32, float64}) {
      for (const Shape& shape : kShapes) {
        const std::string what = dtype_name(dt) + " " + shape_name(shape);
        const array a = random_array(shape, dt, 11);
        const auto usv = linalg::svd(a);
        ASSERT_EQ(usv.size(), 3u);
        const int m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
        EXPECT_EQ(usv[0].shape(-1), m) << what;
        EXPECT_EQ(usv[1].shape(-1), k) << what;
        EXPECT_EQ(usv[2].shape(-1), n) << what;
        expect_identity(matmul(mT(usv[0]), usv[0]), 10 * tol_for(dt), what + " u");
        expect_identity(matmul(usv[2], mT(usv[2])), 10 * tol_for(dt), what + " vt");
        Shape start(shape.size(), 0);
        Shape u_stop = usv[0].shape(), vt_stop = usv[2].shape();
        u_stop.back() = k;
        vt_stop[vt_stop.size() - 2] = k;
        const array us = multiply(slice(usv[0], start, u_stop), expand_dims(usv[1], -2));
        expect_near_arrays(matmul(us, slice(usv[2], start, vt_stop)), a, 10 * tol_for(dt), what + " u s vt");
        const std::vector<double> s = values(usv[1]);
        for (size_t i = 0; i + 1 < s.size(); ++i) {
          if ((i + 1) % k != 0) {
            EXPECT_GE(s[i], s[i + 1]) << what;
          }
        }
        const auto s_only = linalg::svd(a, false, {});
        ASSERT_EQ(s_only.size(), 1u);
        expect_near_arrays(s_only[0], usv[1], 10 * tol_for(dt), what + " compute_uv false");
      }
    }
    test::expect_close(values(linalg::svd(array({3.0, 0.0, 4.0, 5.0}, {2, 2}, float64), false, {})[0]),
                       {3 * std::sqrt(5.0), std::sqrt(5.0)}, 1e-14, 0, "known values");
    // Empty matrices: no values, identity bases.
    const auto e = linalg::svd(zeros({3, 0}));
    EXPECT_EQ(e[1].shape(), (Shape{0}));
    expect_identity(e[0], 0, "empty u");
  });
}

TEST(Linalg, SvdOfComplexMatricesReconstructs) {
  on_cpu_refused_on_gpu("svd", [] {
    const array re = random_array({3, 3}, float32, 13), im = random_array({3, 3}, float32, 14);
    const array a =
        add(astype(re, complex64), multiply(astype(im, complex64), array(complex64_t(0.0f, 1.0f))));
    const auto usv = linalg::svd(a);
    EXPECT_EQ(usv[1].dtype(), float32);
    const array rebuilt = matmul(multiply(usv[0], expand_dims(astype(usv[1], complex64), -2)), usv[2]);
    const auto got = test::complex_values(rebuilt), want = test::complex_values(a);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_LT(std::abs(got[i] - want[i]), 1e-5) << i;
  });
}

TEST(Linalg, InverseTimesMatrixIsTheIdentity) {
  on_cpu_refused_on_gpu("inv", [] {
    for (Dtype dt : {float32, float64}) {
      for (const Shape& shape : {Shape{1, 1}, Shape{4, 4}, Shape{3, 2, 5, 5}}) {
        const array a = well_conditioned(shape, dt, 17);
        const array ai = linalg::inv(a);
        EXPECT_EQ(ai.dtype(), dt);
        expect_identity(matmul(a, ai), 10 * tol_for(dt), dtype_name(dt) + " a inv(a)");
        expect_identity(matmul(ai, a), 10 * tol_for(dt), dtype_name(dt) + " inv(a) a");
      }
    }
    test::expect_close(values(linalg::inv(array({4.0, 7.0, 2.0, 6.0}, {2, 2}, float64))),
                       {0.6, -0.7, -0.2, 0.4}, 1e-14, 1e-15, "known inverse");
    // A transposed (strided) input.
    const array a = well_conditioned({4, 4}, float64, 19);
    expect_near_arrays(linalg::inv(mT(a)), mT(linalg::inv(a)), 1e-12, "transposed input");
    EXPECT_EQ(linalg::inv(zeros({2, 0, 0})).shape(), (Shape{2, 0, 0}));
  });
}

TEST(Linalg, SingularMatricesFailTheEvaluation) {
  on_cpu_refused_on_gpu("inv", [] {
    const array singular = array({1.0f, 2.0f, 2.0f, 4.0f}, {2, 2});
    expect_eval_error([&] { return linalg::inv(singular); }, "[linalg::inv]", "singular");
    // The batch names the matrix that failed; the stream keeps working afterwards.
    const array batch = stack({eye(2), singular});
    expect_eval_error([&] { return linalg::inv(batch); }, "[linalg::inv]", "matrix 1 of the batch");
    expect_eval_error(
        [&] {
          return linalg::tri_inv(array({1.0f, 0.0f, 3.0f, 0.0f}, {2, 2}));
        },
        "[linalg::tri_inv]", "singular");
    expect_eval_error(
        [&] {
          return linalg::solve(singular, array({1.0f, 2.0f}));
        },
        "[linalg::solve]", "singular");
    expect_eval_error(
        [&] {
          return linalg::solve_triangular(array({0.0f, 0.0f, 1.0f, 1.0f}, {2, 2}), ones({2}));
        },
        "[linalg::solve_triangular]", "singular");
    EXPECT_NEAR(values(linalg::inv(array({2.0f}, {1, 1})))[0], 0.5, 1e-7);
  });
}

TEST(Linalg, TriangularInverseReadsOneTriangleAndZeroesTheOther) {
  on_cpu_refused_on_gpu("tri_inv", [] {
    for (bool upper : {false, true}) {
      const array full = well_conditioned({2, 4, 4}, float64, 23);  // both triangles nonzero
      const array tri = upper ? triu(full) : tril(full);
      const array ti = linalg::tri_inv(full, upper);
      expect_near_arrays(ti, linalg::inv(tri), 1e-12, upper ? "upper" : "lower");
      expect_near_arrays(ti, upper ? triu(ti) : tril(ti), 0, "other triangle zero");
    }
  });
}

TEST(Linalg, CholeskyFactorsReconstruct) {
  on_cpu_refused_on_gpu("cholesky", [] {
    for (Dtype dt : {float32, float64}) {
      const array a = spd({3, 5, 5}, dt, 29);
      const array l = linalg::cholesky(a);
      expect_near_arrays(matmul(l, mT(l)), a, 20 * tol_for(dt), "l l^T");
      expect_near_arrays(l, tril(l), 0, "lower");
      const array u = linalg::cholesky(a, true);
      expect_near_arrays(matmul(mT(u), u), a, 20 * tol_for(dt), "u^T u");
      expect_near_arrays(u, triu(u), 0, "upper");
      expect_near_arrays(linalg::cholesky_inv(l), linalg::inv(a), 20 * tol_for(dt), "cholesky_inv lower");
      expect_near_arrays(linalg::cholesky_inv(u, true), linalg::inv(a), 20 * tol_for(dt),
                         "cholesky_inv upper");
    }
    test::expect_close(values(linalg::cholesky(array({4.0, 2.0, 2.0, 3.0}, {2, 2}, float64))),
                       {2, 0, 1, std::sqrt(2.0)}, 1e-15, 1e-15, "known factor");
    expect_eval_error(
        [] {
          return linalg::cholesky(array({1.0f, 2.0f, 2.0f, 1.0f}, {2, 2}));
        },
        "[linalg::cholesky]", "not positive definite");
  });
}

TEST(Linalg, PseudoInverseSatisfiesThePenroseConditions) {
  on_cpu_refused_on_gpu("pinv", [] {
    for (const Shape& shape : {Shape{4, 4}, Shape{5, 3}, Shape{2, 3, 5}}) {
      const array a = random_array(shape, float64, 31);
      const array p = linalg::pinv(a);
      EXPECT_EQ(p.shape(-1), shape[shape.size() - 2]);
      EXPECT_EQ(p.shape(-2), shape.back());
      expect_near_arrays(matmul(matmul(a, p), a), a, 1e-12, "a p a");
      expect_near_arrays(matmul(matmul(p, a), p), p, 1e-12, "p a p");
    }
    // Rank one: the small singular value is dropped, not inverted.
    const array r1 = array({1.0, 2.0, 2.0, 4.0}, {2, 2}, float64);
    test::expect_close(values(linalg::pinv(r1)), {0.04, 0.08, 0.08, 0.16}, 1e-12, 1e-14, "rank one");
  });
}

TEST(Linalg, LuFactorsReconstructWithTheRowPermutation) {
  on_cpu_refused_on_gpu("lu", [] {
    for (Dtype dt : {float32, float64}) {
      for (const Shape& shape : kShapes) {
        const std::string what = dtype_name(dt) + " " + shape_name(shape);
        const array a = random_array(shape, dt, 37);
        const auto plu = linalg::lu(a);
        ASSERT_EQ(plu.size(), 3u);
        const int m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
        EXPECT_EQ(plu[0].dtype(), uint32);
        EXPECT_EQ(plu[1].shape(-1), k) << what;
        EXPECT_EQ(plu[2].shape(-2), k) << what;
        expect_near_arrays(plu[1], add(tril(plu[1], -1), eye(m, k, 0, dt)), 0, what + " unit lower");
        expect_near_arrays(plu[2], triu(plu[2]), 0, what + " upper");
        const array rebuilt = take_along_axis(matmul(plu[1], plu[2]), expand_dims(plu[0], -1), -2);
        // rows of a = (l u)[p]: gather the rows of l u named by p.
        expect_near_arrays(rebuilt, a, 10 * tol_for(dt), what + " l[p] u");
      }
    }
    // Partial pivoting picks the largest entry of each column: [[1, 2], [3, 4]] swaps its rows.
    const array a = array({1.0, 2.0, 3.0, 4.0}, {2, 2}, float64);
    auto [lu, pivots] = linalg::lu_factor(a);
    test::expect_close(values(pivots), {1, 1}, 0, 0, "pivots");
    test::expect_close(values(lu), {3, 4, 1.0 / 3, 2 - 4.0 / 3}, 1e-15, 1e-15, "lu");
    test::expect_close(values(linalg::lu(a)[0]), {1, 0}, 0, 0, "permutation");
    // A singular matrix factors (a zero pivot is no error).
    EXPECT_EQ(values(linalg::lu_factor(zeros({3, 3})).first), std::vector<double>(9, 0.0));
  });
}

// NumPy's definitions: det is the product of the eigenvalues (here from known matrices, a
// batch against a Leibniz expansion), slogdet its sign and log |det|; a singular matrix gives 0,
// sign 0 and -inf; a huge determinant overflows det but not slogdet.
TEST(Linalg, DeterminantsMatchTheirDefinitions) {
  on_cpu_refused_on_gpu("det", [] {
    const array a = array({1.0, 2.0, 3.0, 4.0}, {2, 2}, float64);  // a row swap: -2
    test::expect_close(values(linalg::det(a)), {-2}, 1e-14, 0, "2x2");
    auto [sign2, log2] = linalg::slogdet(a);
    test::expect_close(values(sign2), {-1}, 0, 0, "sign 2x2");
    test::expect_close(values(log2), {std::log(2.0)}, 1e-14, 0, "log 2x2");
    const array batch = random_array({4, 3, 3}, float64, 61);
    std::vector<double> x = values(batch), want;
    for (int m = 0; m < 4; ++m) {
      const double* e = x.data() + 9 * m;
      want.push_back(e[0] * (e[4] * e[8] - e[5] * e[7]) - e[1] * (e[3] * e[8] - e[5] * e[6]) +
                     e[2] * (e[3] * e[7] - e[4] * e[6]));
    }
    test::expect_close(values(linalg::det(batch)), want, 1e-12, 1e-12, "Leibniz");
    auto [signs, logs] = linalg::slogdet(batch);
    std::vector<double> got_sign = values(signs), got_log = values(logs);
    for (int m = 0; m < 4; ++m) {
      EXPECT_EQ(got_sign[m], want[m] > 0 ? 1.0 : -1.0);
      EXPECT_NEAR(got_log[m], std::log(std::abs(want[m])), 1e-12);
    }
    const array singular = array({1.0f, 2.0f, 2.0f, 4.0f}, {2, 2});
    EXPECT_EQ(values(linalg::det(singular)), (std::vector<double>{0}));
    auto [zero_sign, minus_inf] = linalg::slogdet(singular);
    EXPECT_EQ(values(zero_sign), (std::vector<double>{0}));
    EXPECT_EQ(values(minus_inf), (std::vector<double>{-std::numeric_limits<double>::infinity()}));
    const array huge = multiply(eye(200), array(1e3f));  // det 1e600: inf in float32
    EXPECT_TRUE(std::isinf(values(linalg::det(huge))[0]));
    test::expect_close(values(linalg::slogdet(huge).second), {200 * std::log(1e3)}, 1e-5, 0, "no overflow");
  });
  StreamContext cpu(Device::cpu);
  // Integer and bool matrices are promoted to float32, as MLX's.
  const array int_det = linalg::det(array({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(int_det.dtype(), float32);
  test::expect_close(values(int_det), {-2}, 1e-6, 0, "int32");
  EXPECT_EQ(linalg::slogdet(array({true, false, false, true}, {2, 2})).first.dtype(), float32);
  expect_invalid(
      [] {
        linalg::det(array({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2}, float16));
      },
      "[linalg::det] Arrays must have type", "float16");
  expect_invalid([] { linalg::slogdet(ones({2, 3})); }, "[linalg::slogdet] Determinants are only defined", "2x3");
  expect_invalid([] { linalg::det(ones({3})); }, "[linalg::det] Arrays must have >= 2 dimensions", "1-d");
}

TEST(Linalg, SolveMatchesTheInverseAndBroadcastsBatches) {
  on_cpu_refused_on_gpu("solve", [] {
    const array a = array({3.0f, 1.0f, 1.0f, 2.0f}, {2, 2});
    test::expect_close(values(linalg::solve(a, array({9.0f, 8.0f}))), {2, 3}, 1e-6, 1e-6, "known solution");
    const array batch = well_conditioned({3, 4, 4}, float64, 41);
    const array b = random_array({4, 2}, float64, 43);  // broadcast over the batch
    const array x = linalg::solve(batch, b);
    ASSERT_EQ(x.shape(), (Shape{3, 4, 2}));
    expect_near_arrays(matmul(batch, x), broadcast_to(b, {3, 4, 2}), 1e-12, "a x = b");
    const array v = random_array({4}, float64, 47);  // a vector for every matrix
    const array xv = linalg::solve(batch, v);
    ASSERT_EQ(xv.shape(), (Shape{3, 4}));
    expect_near_arrays(squeeze(matmul(batch, expand_dims(xv, -1)), -1), broadcast_to(v, {3, 4}), 1e-12,
                       "vector b");
    // Integers promote with a float operand; the result is float.
    const array xi = linalg::solve(array({2, 0, 0, 4}, {2, 2}), array({2.0f, 2.0f}));
    EXPECT_EQ(xi.dtype(), float32);
    test::expect_close(values(xi), {1, 0.5}, 0, 0, "promoted");
    // complex64 (LAPACK's cgesv and ctrtrs): a x = b holds, and a real right-hand side
    // promotes. With a = [[1+i, 2], [1, 3i]], x = [1, 1] solves a x = [3+i, 1+3i], its upper
    // triangle's [3+i, 3i] and its lower triangle's [1+i, 1+3i].
    const array ac = add(array({1.0f, 2.0f, 1.0f, 0.0f}, {2, 2}),
                         multiply(array(complex64_t(0.0f, 1.0f)), array({1.0f, 0.0f, 0.0f, 3.0f}, {2, 2})));
    auto expect_ones = [](const array& x, const std::string& what) {
      EXPECT_EQ(x.dtype(), complex64) << what;
      expect_near_arrays(real(x), ones({2}), 1e-6, what + ", real parts");
      expect_near_arrays(imag(x), zeros({2}), 1e-6, what + ", imaginary parts");
    };
    expect_ones(linalg::solve(ac, array({complex64_t(3.0f, 1.0f), complex64_t(1.0f, 3.0f)})),
                "complex solve");
    expect_ones(linalg::solve_triangular(ac, array({complex64_t(3.0f, 1.0f), complex64_t(0.0f, 3.0f)}), true),
                "complex upper triangle");
    expect_ones(
        linalg::solve_triangular(ac, array({complex64_t(1.0f, 1.0f), complex64_t(1.0f, 3.0f)}), false),
        "complex lower triangle");
    EXPECT_EQ(linalg::solve(ac, array({1.0f, 0.0f})).dtype(), complex64);
  });
}

TEST(Linalg, SolveTriangularReadsOneTriangle) {
  on_cpu_refused_on_gpu("solve_triangular", [] {
    for (bool upper : {false, true}) {
      const array full = well_conditioned({2, 4, 4}, float64, 53);
      const array tri = upper ? triu(full) : tril(full);
      const array b = random_array({2, 4, 3}, float64, 59);
      const array x = linalg::solve_triangular(full, b, upper);
      expect_near_arrays(matmul(tri, x), b, 1e-12, upper ? "upper" : "lower");
    }
  });
}

TEST(Linalg, EighDiagonalizesSymmetricMatrices) {
  on_cpu_refused_on_gpu("eigh", [] {
    const array a = array({1.0f, -2.0f, -2.0f, 1.0f}, {2, 2});
    test::expect_close(values(linalg::eigvalsh(a)), {-1, 3}, 1e-6, 1e-6, "known values");
    for (Dtype dt : {float32, float64}) {
      const array s = spd({2, 5, 5}, dt, 61);
      auto [w, v] = linalg::eigh(s);
      EXPECT_EQ(w.shape(), (Shape{2, 5}));
      expect_identity(matmul(mT(v), v), 20 * tol_for(dt), "orthonormal");
      expect_near_arrays(matmul(multiply(v, expand_dims(w, -2)), mT(v)), s, 50 * tol_for(dt), "v w v^T");
      expect_near_arrays(linalg::eigvalsh(s), w, 50 * tol_for(dt), "eigvalsh");
      const std::vector<double> wv = values(w);
      for (size_t i = 0; i + 1 < wv.size(); ++i) {
        if ((i + 1) % 5 != 0) {
          EXPECT_LE(wv[i], wv[i + 1]);
        }
      }
    }
    // "U" reads the upper triangle, "L" the lower.
    const array lower_only = array({2.0, 0.0, 1.0, 2.0}, {2, 2}, float64);
    test::expect_close(values(linalg::eigvalsh(lower_only, "L")), {1, 3}, 1e-14, 1e-14, "L");
    test::expect_close(values(linalg::eigvalsh(lower_only, "U")), {2, 2}, 1e-14, 1e-14, "U");
    // Hermitian: real eigenvalues, complex vectors.
    const array h =
        array({complex64_t(2, 0), complex64_t(0, -1), complex64_t(0, 1), complex64_t(2, 0)}, {2, 2});
    auto [hw, hv] = linalg::eigh(h);
    EXPECT_EQ(hw.dtype(), float32);
    EXPECT_EQ(hv.dtype(), complex64);
    test::expect_close(values(hw), {1, 3}, 1e-6, 1e-6, "hermitian");
  });
}

TEST(Linalg, EigFindsComplexEigenpairsOfGeneralMatrices) {
  on_cpu_refused_on_gpu("eig", [] {
    // A rotation: eigenvalues +i and -i.
    const array rot = array({0.0f, -1.0f, 1.0f, 0.0f}, {2, 2});
    const array w = linalg::eigvals(rot);
    EXPECT_EQ(w.dtype(), complex64);
    auto wv = test::complex_values(w);
    std::sort(wv.begin(), wv.end(), [](auto x, auto y) { return x.imag() < y.imag(); });
    EXPECT_NEAR(std::abs(wv[0] - std::complex<float>(0, -1)), 0, 1e-6);
    EXPECT_NEAR(std::abs(wv[1] - std::complex<float>(0, 1)), 0, 1e-6);
    for (Dtype dt : {float32, float64, complex64}) {
      const array a = astype(random_array({3, 4, 4}, dt == complex64 ? float32 : dt, 67), dt);
      auto [vals, vecs] = linalg::eig(a);
      EXPECT_EQ(vals.dtype(), complex64);
      EXPECT_EQ(vecs.dtype(), complex64);
      const array av = matmul(astype(a, complex64), vecs);
      const array vw = multiply(vecs, expand_dims(vals, -2));
      const auto got = test::complex_values(av), want = test::complex_values(vw);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_LT(std::abs(got[i] - want[i]), 1e-5) << dtype_name(dt) << i;
      const auto norms = values(linalg::norm(vecs, std::vector<int>{-2}));
      for (double nv : norms) EXPECT_NEAR(nv, 1.0, 1e-5);
    }
  });
}

TEST(Linalg, BadInputIsRejectedBeforeAnyNode) {
  StreamContext ctx(Device::cpu);
  const array ints = array({1, 2, 3, 4}, {2, 2});
  const std::string float_msg = "Arrays must have type float32 or float64. Received array with type int32.";
  expect_invalid([&] { linalg::inv(ints); }, "[linalg::inv] " + float_msg, "inv int");
  expect_invalid([&] { linalg::tri_inv(ints); }, "[linalg::tri_inv] " + float_msg, "tri_inv int");
  expect_invalid([&] { linalg::cholesky(ints); }, "[linalg::cholesky] " + float_msg, "cholesky int");
  expect_invalid([&] { linalg::qr(ints); }, "[linalg::qr] " + float_msg, "qr int");
  expect_invalid([&] { linalg::lu(ints); }, "[linalg::lu] " + float_msg, "lu int");
  expect_invalid([&] { linalg::lu_factor(ints); }, "[linalg::lu_factor] " + float_msg, "lu_factor int");
  expect_invalid([&] { linalg::pinv(ints); }, "[linalg::pinv] " + float_msg, "pinv int");
  expect_invalid([&] { linalg::cholesky_inv(ints); }, "[linalg::cholesky_inv] " + float_msg,
                 "cholesky_inv int");
  expect_invalid([&] { linalg::qr(astype(ints, float16)); }, "[linalg::qr] Arrays must have type", "float16");
  expect_invalid([&] { linalg::svd(ints); },
                 "[linalg::svd] Arrays must have type float32, float64 or complex64", "svd int");
  expect_invalid([&] { linalg::eigh(ints); },
                 "[linalg::eigh] Arrays must have type float32, float64 or complex64", "eigh int");
  expect_invalid([&] { linalg::eig(ints); }, "[linalg::eig] Arrays must have type", "eig int");
  expect_invalid(
      [&] {
        linalg::solve(ints, array({1, 2}));
      },
      "[linalg::solve] Input arrays must promote to float32", "solve int");
  const array v = array({1.0f, 2.0f});
  expect_invalid([&] { linalg::inv(v); }, "[linalg::inv] Arrays must have >= 2 dimensions", "inv 1-d");
  expect_invalid([&] { linalg::svd(v); }, "[linalg::svd] Input array must have >= 2 dimensions", "svd 1-d");
  expect_invalid([&] { linalg::qr(v); }, "[linalg::qr] Arrays must have >= 2 dimensions", "qr 1-d");
  const array wide = ones({2, 3});
  expect_invalid([&] { linalg::inv(wide); }, "[linalg::inv] Inverses are only defined for square matrices",
                 "inv");
  expect_invalid([&] { linalg::cholesky(wide); }, "[linalg::cholesky] Cholesky decomposition is only defined",
                 "cholesky");
  expect_invalid([&] { linalg::eigvalsh(wide); }, "[linalg::eigvalsh] Only defined for square matrices",
                 "eigvalsh");
  expect_invalid([&] { linalg::eigh(ones({2, 2}), "X"); }, "[linalg::eigh] UPLO must be 'L' or 'U'", "UPLO");
  expect_invalid([&] { linalg::solve(wide, v); }, "[linalg::solve] First input must be a square matrix",
                 "solve");
  expect_invalid(
      [&] {
        linalg::solve(ones({2, 2}), ones({3}));
      },
      "[linalg::solve] Last dimension of first input", "solve shapes");
  expect_invalid(
      [&] {
        linalg::solve(ones({2, 2}), array(1.0f));
      },
      "[linalg::solve] Second input must have >= 1", "solve 0-d");
  expect_invalid(
      [&] {
        linalg::solve(ones({2, 2, 2}), ones({3, 2, 1}));
      },
      "[linalg::solve] Shapes", "solve batch");
}

TEST(Linalg, FactorizationsRefuseGpuStreamsAtGraphBuild) {
  if (!is_available(Device::gpu)) GTEST_SKIP() << "no GPU";
  const array a = eye(3);
  const std::string gpu = "This op is not yet supported on the GPU. Explicitly pass a CPU stream to run it.";
  const Device g = Device::gpu;
  expect_invalid([&] { linalg::inv(a, g); }, "[linalg::inv] " + gpu, "inv");
  expect_invalid([&] { linalg::tri_inv(a, false, g); }, "[linalg::tri_inv] " + gpu, "tri_inv");
  expect_invalid([&] { linalg::cholesky(a, false, g); }, "[linalg::cholesky] " + gpu, "cholesky");
  expect_invalid([&] { linalg::cholesky_inv(a, false, g); }, "[linalg::cholesky_inv] " + gpu, "cholesky_inv");
  expect_invalid([&] { linalg::pinv(a, g); }, "[linalg::pinv] " + gpu, "pinv");
  expect_invalid([&] { linalg::qr(a, g); }, "[linalg::qr] " + gpu, "qr");
  expect_invalid([&] { linalg::svd(a, g); }, "[linalg::svd] " + gpu, "svd");
  expect_invalid([&] { linalg::eig(a, g); }, "[linalg::eig] " + gpu, "eig");
  expect_invalid([&] { linalg::eigvals(a, g); }, "[linalg::eigvals] " + gpu, "eigvals");
  expect_invalid([&] { linalg::eigh(a, "L", g); }, "[linalg::eigh] " + gpu, "eigh");
  expect_invalid([&] { linalg::eigvalsh(a, "L", g); }, "[linalg::eigvalsh] " + gpu, "eigvalsh");
  expect_invalid([&] { linalg::lu(a, g); }, "[linalg::lu] " + gpu, "lu");
  expect_invalid([&] { linalg::lu_factor(a, g); }, "[linalg::lu_factor] " + gpu, "lu_factor");
  expect_invalid([&] { linalg::solve(a, ones({3}), g); }, "[linalg::solve] " + gpu, "solve");
  expect_invalid([&] { linalg::solve_triangular(a, ones({3}), false, g); },
                 "[linalg::solve_triangular] " + gpu, "solve_triangular");
  // A GPU input with a CPU stream is fine: the runtime moves the data.
  const array on_gpu = add(eye(3, Device::gpu), eye(3, Device::gpu), Device::gpu);
  test::expect_close(values(linalg::inv(on_gpu, Device::cpu)), {0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5}, 0, 0,
                     "gpu input");
}

// ---- derivatives: vjp and jvp against central differences in float64 ----

using Fn = std::function<array(const std::vector<array>&)>;

void check_grads(const std::string& name, const Fn& f, const std::vector<array>& inputs, uint32_t seed) {
  SCOPED_TRACE(name);
  StreamContext ctx(Device::cpu);
  const double step = 1e-6, tol = 1e-6;
  std::vector<std::vector<double>> xs;
  std::vector<Shape> shapes;
  for (const auto& in : inputs) {
    xs.push_back(values(in));
    shapes.push_back(in.shape());
  }
  auto build = [&](const std::vector<std::vector<double>>& v) {
    std::vector<array> in;
    for (size_t i = 0; i < v.size(); ++i) in.push_back(test::make(v[i], shapes[i], float64));
    return in;
  };
  const array y0 = f(build(xs));
  const std::vector<double> y = values(y0);
  const std::vector<double> cot = uniform(y.size(), seed);
  std::vector<std::vector<double>> tans;
  for (size_t i = 0; i < xs.size(); ++i)
    tans.push_back(uniform(xs[i].size(), seed + 1 + static_cast<uint32_t>(i)));

  std::vector<std::vector<double>> want_vjp(xs.size());
  std::vector<double> want_jvp(y.size(), 0.0);
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t k = 0; k < xs[i].size(); ++k) {
      auto plus = xs, minus = xs;
      plus[i][k] += step;
      minus[i][k] -= step;
      const std::vector<double> fp = values(f(build(plus))), fm = values(f(build(minus)));
      double dot = 0;
      for (size_t o = 0; o < y.size(); ++o) {
        const double d = (fp[o] - fm[o]) / (2 * step);
        dot += cot[o] * d;
        want_jvp[o] += d * tans[i][k];
      }
      want_vjp[i].push_back(dot);
    }
  }
  auto vf = [&f](const std::vector<array>& in) { return std::vector<array>{f(in)}; };
  auto [outs, grads] = vjp(vf, build(xs), {test::make(cot, y0.shape(), float64)});
  ASSERT_EQ(grads.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(grads[i].shape(), shapes[i]);
    test::expect_close(values(grads[i]), want_vjp[i], tol, tol, "vjp of input " + std::to_string(i));
  }
  std::vector<array> tangents;
  for (size_t i = 0; i < xs.size(); ++i) tangents.push_back(test::make(tans[i], shapes[i], float64));
  auto [jouts, jtans] = jvp(vf, build(xs), tangents);
  ASSERT_EQ(jtans.size(), 1u);
  test::expect_close(values(jtans[0]), want_jvp, tol, tol, "jvp");
}

array sym_of(const array& x) { return add(x, mT(x)); }

// A symmetric positive-definite function of free parameters x [..., n, n].
array spd_of(const array& x) {
  const int n = x.shape(-1);
  return add(matmul(x, mT(x)), multiply(array(static_cast<double>(n), float64), eye(n, n, 0, float64)));
}

array wc(const Shape& shape, uint32_t seed) { return well_conditioned(shape, float64, seed); }

TEST(Linalg, InverseDerivativesMatchFiniteDifferences) {
  check_grads(
      "inv", [](const auto& x) { return linalg::inv(x[0]); }, {wc({2, 3, 3}, 101)}, 1);
  check_grads(
      "tri_inv lower", [](const auto& x) { return linalg::tri_inv(x[0]); }, {wc({3, 3}, 102)}, 2);
  check_grads(
      "tri_inv upper", [](const auto& x) { return linalg::tri_inv(x[0], true); }, {wc({3, 3}, 103)}, 3);
  check_grads(
      "cholesky_inv", [](const auto& x) { return linalg::cholesky_inv(linalg::cholesky(spd_of(x[0]))); },
      {random_array({3, 3}, float64, 104)}, 4);
}

TEST(Linalg, CholeskyDerivativesMatchFiniteDifferences) {
  check_grads(
      "cholesky", [](const auto& x) { return linalg::cholesky(spd_of(x[0])); },
      {random_array({2, 3, 3}, float64, 111)}, 11);
  check_grads(
      "cholesky upper", [](const auto& x) { return linalg::cholesky(spd_of(x[0]), true); },
      {random_array({3, 3}, float64, 112)}, 12);
}

TEST(Linalg, QrDerivativesMatchFiniteDifferences) {
  for (const Shape& shape : {Shape{3, 3}, Shape{4, 2}, Shape{2, 4}, Shape{2, 3, 3}}) {
    const std::string s = shape_name(shape);
    check_grads(
        "qr q " + s, [](const auto& x) { return linalg::qr(x[0]).first; },
        {random_array(shape, float64, 121)}, 21);
    check_grads(
        "qr r " + s, [](const auto& x) { return linalg::qr(x[0]).second; },
        {random_array(shape, float64, 122)}, 22);
  }
}

TEST(Linalg, SvdDerivativesMatchFiniteDifferences) {
  // Singular vectors are defined up to sign: losses of u * u and vt * vt do not see it.
  for (const Shape& shape : {Shape{3, 3}, Shape{2, 4, 4}}) {
    const std::string s = shape_name(shape);
    check_grads(
        "svd s " + s, [](const auto& x) { return linalg::svd(x[0])[1]; }, {random_array(shape, float64, 131)},
        31);
    check_grads(
        "svd u " + s, [](const auto& x) { return square(linalg::svd(x[0])[0]); },
        {random_array(shape, float64, 132)}, 32);
    check_grads(
        "svd vt " + s, [](const auto& x) { return square(linalg::svd(x[0])[2]); },
        {random_array(shape, float64, 133)}, 33);
    check_grads(
        "svd values only " + s, [](const auto& x) { return linalg::svd(x[0], false, {})[0]; },
        {random_array(shape, float64, 134)}, 34);
  }
  // Rectangular: the thin factors, and u u^T (which the complement's basis does not change).
  for (const Shape& shape : {Shape{4, 2}, Shape{2, 4}}) {
    const std::string s = shape_name(shape);
    check_grads(
        "svd rect s " + s, [](const auto& x) { return linalg::svd(x[0])[1]; },
        {random_array(shape, float64, 135)}, 35);
    check_grads(
        "svd rect u u^T " + s,
        [](const auto& x) {
          const array u = linalg::svd(x[0])[0];
          return matmul(u, mT(u));  // the identity: zero derivative, through every column
        },
        {random_array(shape, float64, 136)}, 36);
    check_grads(
        "svd rect thin " + s,
        [](const auto& x) {
          const auto usv = linalg::svd(x[0]);
          const int k = usv[1].shape(-1);
          const array uk = slice(usv[0], {0, 0}, {usv[0].shape(0), k});
          const array vk = slice(usv[2], {0, 0}, {k, usv[2].shape(1)});
          return concatenate({flatten(square(uk)), flatten(square(vk))});
        },
        {random_array(shape, float64, 137)}, 37);
    check_grads(
        "svd rect complement projectors " + s,
        [](const auto& x) {
          const auto usv = linalg::svd(x[0]);
          const int m = usv[0].shape(0), n = usv[2].shape(0), k = usv[1].shape(-1);
          const array up = slice(usv[0], {0, k}, {m, m});
          const array vpt = slice(usv[2], {k, 0}, {n, n});
          return concatenate({flatten(matmul(up, mT(up))), flatten(matmul(mT(vpt), vpt))});
        },
        {random_array(shape, float64, 138)}, 38);
  }
  check_grads(
      "norm 2", [](const auto& x) { return linalg::norm(x[0], 2.0); }, {random_array({3, 4}, float64, 139)},
      39);
  check_grads(
      "norm nuc", [](const auto& x) { return linalg::norm(x[0], "nuc"); },
      {random_array({4, 3}, float64, 140)}, 40);
  check_grads(
      "pinv", [](const auto& x) { return linalg::pinv(x[0]); }, {random_array({3, 3}, float64, 141)}, 41);
}

TEST(Linalg, EighDerivativesMatchFiniteDifferences) {
  for (const char* uplo : {"L", "U"}) {
    check_grads(
        std::string("eigh w ") + uplo,
        [uplo](const auto& x) { return linalg::eigh(sym_of(x[0]), uplo).first; },
        {random_array({2, 4, 4}, float64, 151)}, 51);
    check_grads(
        std::string("eigh v*v ") + uplo,
        [uplo](const auto& x) { return square(linalg::eigh(sym_of(x[0]), uplo).second); },
        {random_array({4, 4}, float64, 152)}, 52);
    check_grads(
        std::string("eigvalsh ") + uplo,
        [uplo](const auto& x) { return linalg::eigvalsh(sym_of(x[0]), uplo); },
        {random_array({3, 3}, float64, 153)}, 53);
  }
}

TEST(Linalg, SolveDerivativesMatchFiniteDifferences) {
  check_grads(
      "solve", [](const auto& x) { return linalg::solve(x[0], x[1]); },
      {wc({2, 3, 3}, 161), random_array({3, 2}, float64, 162)}, 61);
  check_grads(
      "solve vector", [](const auto& x) { return linalg::solve(x[0], x[1]); },
      {wc({3, 3}, 163), random_array({3}, float64, 164)}, 62);
  for (bool upper : {false, true}) {
    check_grads(
        upper ? "solve_triangular upper" : "solve_triangular lower",
        [upper](const auto& x) { return linalg::solve_triangular(x[0], x[1], upper); },
        {wc({2, 3, 3}, 165), random_array({2, 3, 2}, float64, 166)}, 63);
  }
}

TEST(Linalg, NormAndCrossDerivativesMatchFiniteDifferences) {
  for (double ord : {1.0, 2.0, 3.0, -kInf, kInf, 0.5}) {
    check_grads(
        "vector norm " + std::to_string(ord), [ord](const auto& x) { return linalg::norm(x[0], ord, -1); },
        {random_array({2, 4}, float64, 171)}, 71);
  }
  for (double ord : {1.0, -1.0, kInf, -kInf}) {
    check_grads(
        "matrix norm " + std::to_string(ord), [ord](const auto& x) { return linalg::norm(x[0], ord); },
        {random_array({3, 4}, float64, 172)}, 72);
  }
  check_grads(
      "fro", [](const auto& x) { return linalg::norm(x[0], "fro"); }, {random_array({3, 4}, float64, 173)},
      73);
  check_grads(
      "norm", [](const auto& x) { return linalg::norm(x[0]); }, {random_array({3, 4}, float64, 174)}, 74);
  check_grads(
      "cross", [](const auto& x) { return linalg::cross(x[0], x[1]); },
      {random_array({2, 3}, float64, 175), random_array({3}, float64, 176)}, 75);
}

// ---- vmap: the batched call ----

TEST(Linalg, VmapOfFactorizationsEqualsTheBatchedCall) {
  StreamContext ctx(Device::cpu);
  const array a = wc({3, 4, 4}, 181);
  const array moved = moveaxis(a, 0, 2);  // the batch on the last axis
  auto inv_fn = [](const array& x) { return linalg::inv(x); };
  expect_near_arrays(vmap(std::function<array(const array&)>(inv_fn), 2)(moved), linalg::inv(a), 1e-12,
                     "inv");
  auto q_fn = [](const array& x) { return linalg::qr(x).first; };
  expect_near_arrays(vmap(std::function<array(const array&)>(q_fn))(a), linalg::qr(a).first, 1e-12, "qr");
  auto s_fn = [](const array& x) { return linalg::svd(x)[1]; };
  expect_near_arrays(vmap(std::function<array(const array&)>(s_fn))(a), linalg::svd(a)[1], 1e-12, "svd");
  auto w_fn = [](const array& x) { return linalg::eigh(x).first; };
  const array s = spd({3, 4, 4}, float64, 182);
  expect_near_arrays(vmap(std::function<array(const array&)>(w_fn))(s), linalg::eigh(s).first, 1e-12, "eigh");
  auto lu_fn = [](const array& x) { return linalg::lu(x)[2]; };
  expect_near_arrays(vmap(std::function<array(const array&)>(lu_fn))(a), linalg::lu(a)[2], 1e-12, "lu");
  // solve with one operand unmapped.
  const array b = random_array({4, 2}, float64, 183);
  auto solve_fn = [](const array& x, const array& y) { return linalg::solve(x, y); };
  const auto mapped = vmap(std::function<array(const array&, const array&)>(solve_fn), 0, -1);
  expect_near_arrays(mapped(a, b), linalg::solve(a, b), 1e-12, "solve");
}

}  // namespace
