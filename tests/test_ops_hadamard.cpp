// hadamard_transform on every device: the tables of order 12, 20 and 28 are MLX's Hadamard matrices, and the
// transform equals the dense product with H_m (x) Sylvester's H_(2^k), built here from the
// definition, for every supported factor, dtype, layout and scale.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/common/hadamard.h"
#include "support.h"

using namespace braid;

namespace {

// Entry (r, c) of H_n = H_m (x) H_p, Sylvester's H_p[i][k] = (-1)^popcount(i & k).
double dense_entry(const common::HadamardMatrix& hm, int m, int64_t p, int64_t r, int64_t c) {
  const int64_t j = r / p, i = r % p, l = c / p, k = c % p;
  const double sylvester = std::popcount(static_cast<uint64_t>(i & k)) % 2 ? -1.0 : 1.0;
  return hm.h[j * m + l] * sylvester;
}

std::vector<double> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(rng);
  return v;
}

double eps_of(Dtype dt) {
  if (dt == float16) return 1e-3;
  if (dt == bfloat16) return 8e-3;
  if (dt == float64) return 1e-13;
  return 2e-6;
}

// Checks the transform of `rows` rows of n values in `dt` against the dense product, on
// every output (n <= 1024) or on a sample of them.
void check_transform(int64_t n, int rows, Dtype dt, std::optional<float> scale, const std::string& what) {
  const common::HadamardPlan plan = common::hadamard_plan(n);
  ASSERT_NE(plan.m, 0) << what;
  const common::HadamardMatrix hm = common::hadamard_matrix(plan.m);
  array x =
      test::make(random_values(rows * n, static_cast<uint32_t>(n + rows)), {rows, static_cast<int>(n)}, dt);
  const std::vector<double> xv = test::values(x);  // the inputs as the dtype holds them
  // The scale is a float, as MLX's (also for float64 data).
  const double sc = scale ? *scale : 1.0f / std::sqrt(static_cast<float>(n));
  const bool every = n <= 1024;
  for (Device dev : test::test_devices()) {
    const std::string tag = what + " on " + test::device_name(dev);
    array y = hadamard_transform(x, scale, dev);
    EXPECT_EQ(y.dtype(), dt) << tag;
    EXPECT_EQ(y.shape(), x.shape()) << tag;
    const std::vector<double> yv = test::values(y);
    std::vector<double> got, want;
    for (int r = 0; r < rows; ++r) {
      for (int64_t o = 0; o < n; o += every ? 1 : 257) {
        double acc = 0;
        for (int64_t c = 0; c < n; ++c) acc += dense_entry(hm, plan.m, plan.pow2, o, c) * xv[r * n + c];
        want.push_back(acc * sc);
        got.push_back(yv[r * n + o]);
      }
    }
    const double atol = eps_of(dt) * 4 * std::sqrt(static_cast<double>(n)) * std::abs(sc) * 4;
    test::expect_close(got, want, eps_of(dt) * 2, atol, tag);
  }
}

}  // namespace

TEST(OpsHadamard, TablesAreMlxsHadamardMatrices) {
  // The first row of each of MLX's tables (MLX's test_hadamard spells out its order-28 table).
  const std::pair<int, std::string> first_rows[] = {
      {12, "+-++++++++++"}, {20, "+----+----++--++-++-"}, {28, "+------++----++-+--+-+--++--"}};
  for (const auto& [m, row] : first_rows) {
    const common::HadamardMatrix hm = common::hadamard_matrix(m);
    for (int j = 0; j < m; ++j) EXPECT_EQ(hm.h[j], row[j] == '+' ? 1 : -1) << m << " at " << j;
  }
  for (int m : {12, 20, 28}) {
    const common::HadamardMatrix hm = common::hadamard_matrix(m);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) {
        ASSERT_TRUE(hm.h[i * m + j] == 1 || hm.h[i * m + j] == -1) << m << " at " << i << ", " << j;
        int dot = 0;
        for (int k = 0; k < m; ++k) dot += hm.h[i * m + k] * hm.h[j * m + k];
        EXPECT_EQ(dot, i == j ? m : 0) << "H H^T for m = " << m << " at " << i << ", " << j;
      }
    }
  }
}

TEST(OpsHadamard, SizesFactorAsMTimesAPowerOfTwo) {
  EXPECT_EQ(common::hadamard_plan(1).m, 1);
  EXPECT_EQ(common::hadamard_plan(1024).pow2, 1024);
  EXPECT_EQ(common::hadamard_plan(12).m, 12);
  EXPECT_EQ(common::hadamard_plan(40).m, 20);
  EXPECT_EQ(common::hadamard_plan(40).pow2, 2);
  EXPECT_EQ(common::hadamard_plan(28 * 64).m, 28);
  for (int64_t bad : std::vector<int64_t>{0, 3, 6, 24 * 5, 36, 12 * 28, int64_t{1} << 27}) {
    EXPECT_EQ(common::hadamard_plan(bad).m, 0) << bad;
  }
}

TEST(OpsHadamard, MatchesTheDenseProductForEveryFactor) {
  for (int64_t n : {2, 4, 8, 64, 256, 12, 24, 96, 20, 40, 28, 56, 448}) {
    check_transform(n, 3, float32, std::nullopt, "n " + std::to_string(n));
  }
}

TEST(OpsHadamard, EveryRealFloatDtypeAndScale) {
  for (Dtype dt : test::kRealFloatDtypes) {
    check_transform(64, 2, dt, std::nullopt, dtype_name(dt) + " n 64");
    check_transform(20 * 8, 2, dt, 0.5f, dtype_name(dt) + " n 160 scale 0.5");
  }
  check_transform(32, 1, float32, 1.0f, "unscaled");
}

// Rows past 48 KiB of floats take the GPU's global-memory path.
TEST(OpsHadamard, LongRowsMatchSampledEntries) {
  check_transform(16384, 1, float32, std::nullopt, "n 16384");
  check_transform(12 * 2048, 1, float32, std::nullopt, "n 24576");
  check_transform(8192, 1, float64, std::nullopt, "float64 n 8192");
}

TEST(OpsHadamard, OtherDtypesBecomeFloat32AndViewsTransformAsTheirValues) {
  for (Device dev : test::test_devices()) {
    array xi = test::make({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}, int32);
    array yi = hadamard_transform(xi, std::nullopt, dev);
    EXPECT_EQ(yi.dtype(), float32);
    test::expect_close(test::values(yi),
                       test::values(hadamard_transform(astype(xi, float32), std::nullopt, dev)), 1e-6, 1e-6,
                       "int32");
    EXPECT_EQ(hadamard_transform(array({true, false}), std::nullopt, dev).dtype(), float32);
    array base = test::make(random_values(96, 5), {12, 8}, float32);
    array view = transpose(base);  // rows of 12 read with a stride
    test::expect_close(test::values(hadamard_transform(view, 2.0f, dev)),
                       test::values(hadamard_transform(contiguous(view), 2.0f, dev)), 1e-6, 1e-6,
                       "transposed on " + test::device_name(dev));
  }
}

TEST(OpsHadamard, SizeOneOnlyScales) {
  for (Device dev : test::test_devices()) {
    array a = array({3, -4}, {2, 1});
    EXPECT_EQ(hadamard_transform(a, std::nullopt, dev).dtype(), int32);  // scale 1: a itself, as MLX
    array s = hadamard_transform(a, 0.5f, dev);
    EXPECT_EQ(s.dtype(), float32);
    EXPECT_EQ(test::values(s), (std::vector<double>{1.5, -2}));
    EXPECT_EQ(test::values(hadamard_transform(array(2.0f), 3.0f, dev)), std::vector<double>{6});
  }
}

TEST(OpsHadamard, InvalidCallsThrowNamedErrors) {
  auto expect_invalid = [](const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[hadamard_transform]", 0), 0u) << e.what();
    }
  };
  expect_invalid([] { hadamard_transform(zeros({2, 6})); });
  expect_invalid([] { hadamard_transform(zeros({3})); });
  expect_invalid([] { hadamard_transform(zeros({120})); });
  expect_invalid([] { hadamard_transform(zeros({0, 4})); });
  expect_invalid([] { hadamard_transform(zeros({1 << 27})); });
}
