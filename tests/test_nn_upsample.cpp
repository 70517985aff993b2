// Upsample: nearest (whole and fractional scales), linear and cubic interpolation with and
// without align_corners, against double-precision formulas written here; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "braid/nn.h"
#include "nn_layers_support.h"
#include "support.h"

using namespace braid;
using test::draw;
using test::expect_close;
using test::make;
using test::values;

namespace {

// One output position along an axis of n for output m of M (PyTorch's and MLX's convention).
double source_position(int m, int n, int M, double scale, bool align_corners) {
  if (align_corners) return m * static_cast<double>(n - 1) / (M - 1);
  const double step = 1.0 / scale;
  return m * step - ((M - 1) * step - n + 1) / 2;
}

// Weights of the n inputs for one output position: linear or cubic (a = -0.75, border clamp).
std::vector<double> interpolation_row(double pos, int n, bool cubic) {
  std::vector<double> row(n, 0.0);
  auto clampi = [n](double i) { return static_cast<int>(std::min(std::max(i, 0.0), n - 1.0)); };
  if (!cubic) {
    pos = std::min(std::max(pos, 0.0), n - 1.0);
    const double l = std::floor(pos), w = pos - l;
    row[clampi(l)] += 1 - w;
    row[clampi(std::ceil(pos))] += w;
    return row;
  }
  const double a = -0.75, l1 = std::floor(pos);
  for (double g : {l1 - 1, l1, l1 + 1, l1 + 2}) {
    const double x = std::abs(pos - g);
    const double w = x <= 1 ? ((a + 2) * x - (a + 3)) * x * x + 1 : (((x - 5) * x + 8) * x - 4) * a;
    row[clampi(g)] += w;
  }
  return row;
}

// x [1, H, W, 1] interpolated separably to [1, MH, MW, 1].
std::vector<double> interpolate_ref(const std::vector<double>& x, int H, int W, double scale,
                                    bool align_corners, bool cubic) {
  const int MH = static_cast<int>(scale * H), MW = static_cast<int>(scale * W);
  std::vector<double> y;
  for (int i = 0; i < MH; ++i) {
    auto rh = interpolation_row(source_position(i, H, MH, scale, align_corners), H, cubic);
    for (int j = 0; j < MW; ++j) {
      auto rw = interpolation_row(source_position(j, W, MW, scale, align_corners), W, cubic);
      double acc = 0;
      for (int h = 0; h < H; ++h) {
        for (int w = 0; w < W; ++w) acc += rh[h] * rw[w] * x[h * W + w];
      }
      y.push_back(acc);
    }
  }
  return y;
}

// Antialiased weights of the n inputs for output i of m (PyTorch's algorithm): the kernel
// centred at ratio * (i + 0.5), widened by ratio when it is above 1, taps inside the input only,
// normalized. Triangle (linear) or Keys' cubic with a = -0.5.
std::vector<double> antialias_row(int i, int n, double scale, bool cubic) {
  const double ratio = 1.0 / scale, support = (cubic ? 2.0 : 1.0) * std::max(ratio, 1.0);
  const double inverse = ratio >= 1 ? 1 / ratio : 1.0, center = ratio * (i + 0.5);
  std::vector<double> row(n, 0.0);
  const int first = std::max(static_cast<int>(std::floor(center - support + 0.5)), 0);
  const int last = std::min(static_cast<int>(std::floor(center + support + 0.5)), n);
  double total = 0;
  for (int j = first; j < last; ++j) {
    const double x = std::abs((j - center + 0.5) * inverse), a = -0.5;
    double w = 0;
    if (!cubic) {
      w = std::max(1 - x, 0.0);
    } else if (x < 1) {
      w = ((a + 2) * x - (a + 3)) * x * x + 1;
    } else if (x < 2) {
      w = (((x - 5) * x + 8) * x - 4) * a;
    }
    row[j] = w;
    total += w;
  }
  for (double& w : row) w /= total;
  return row;
}

}  // namespace

TEST(NnUpsample, NearestRepeatsElementsForWholeScales) {
  array x = reshape(arange(1, 5), {1, 2, 2, 1});
  array y = nn::Upsample(2.0f)(x);
  EXPECT_EQ(y.shape(), (Shape{1, 4, 4, 1}));
  EXPECT_EQ(y.dtype(), int32);
  EXPECT_EQ(values(y), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  EXPECT_EQ(nn::Upsample({1.0f, 3.0f})(x).shape(), (Shape{1, 2, 6, 1}));
}

TEST(NnUpsample, NearestPicksTheClosestSourceForFractionalScales) {
  const int n = 4;
  array x = reshape(arange(0, n), {1, n, 1});
  for (float scale : {1.5f, 0.5f}) {
    const int M = static_cast<int>(scale * n);
    std::vector<double> want;
    for (int m = 0; m < M; ++m) {
      const double r = static_cast<double>(n) / M;
      want.push_back(M > n ? std::nearbyint((m + 0.5) * r - 0.5) : std::floor(m * r));
    }
    EXPECT_EQ(values(nn::Upsample(scale)(x)), want) << "scale " << scale;
  }
}

TEST(NnUpsample, LinearAndCubicMatchTheirKernelsOnEveryDevice) {
  const int H = 3, W = 4;
  auto x = draw(H * W, 1);
  for (const auto& dev : test::test_devices()) {
    StreamContext ctx(dev);
    for (bool cubic : {false, true}) {
      for (bool align : {false, true}) {
        nn::Upsample up(2.0f, cubic ? "cubic" : "linear", align);
        expect_close(
            values(up(make(x, {1, H, W, 1}, float32))), interpolate_ref(x, H, W, 2.0, align, cubic), 1e-5,
            1e-5,
            std::string(cubic ? "cubic" : "linear") + (align ? " aligned " : " ") + test::device_name(dev));
      }
    }
  }
}

TEST(NnUpsample, IsDifferentiable) {
  array x = make(draw(2 * 3, 2), {1, 2, 3, 1}, float32);
  array cot = make(draw(4 * 6, 3), {1, 4, 6, 1}, float32);
  nn::Upsample up(2.0f, "linear");
  auto g = grad([&](const array& in) { return sum(multiply(up(in), cot)); })(x);
  // The gradient of a linear map is its transpose: sum over outputs of weight * cotangent.
  auto c = values(cot);
  std::vector<double> want(6, 0.0);
  for (int i = 0; i < 4; ++i) {
    auto rh = interpolation_row(source_position(i, 2, 4, 2.0, false), 2, false);
    for (int j = 0; j < 6; ++j) {
      auto rw = interpolation_row(source_position(j, 3, 6, 2.0, false), 3, false);
      for (int h = 0; h < 2; ++h) {
        for (int w = 0; w < 3; ++w) want[h * 3 + w] += rh[h] * rw[w] * c[i * 6 + j];
      }
    }
  }
  expect_close(values(g), want, 1e-5, 1e-6, "gradient");
}

TEST(NnUpsample, BadArgumentsThrow) {
  EXPECT_THROW(nn::Upsample(2.0f, "area"), std::invalid_argument);
  EXPECT_THROW(nn::Upsample(0.0f), std::invalid_argument);
  EXPECT_THROW(nn::Upsample(2.0f)(zeros({2, 3})), std::invalid_argument);
  EXPECT_THROW(nn::Upsample({2.0f, 2.0f})(zeros({1, 3, 2})), std::invalid_argument);
}

TEST(NnUpsample, AntialiasWidensTheKernelWhenDownsampling) {
  const int H = 8, W = 16;
  auto x = draw(H * W, 7);
  for (const auto& dev : test::test_devices()) {
    StreamContext ctx(dev);
    for (bool cubic : {false, true}) {
      for (float scale : {0.5f, 0.25f, 2.0f}) {
        const int MH = static_cast<int>(scale * H), MW = static_cast<int>(scale * W);
        // Upsampling with the triangle kernel is plain linear interpolation.
        auto row = [&](int i, int n, int m) {
          return !cubic && scale >= 1 ? interpolation_row(source_position(i, n, m, scale, false), n, false)
                                      : antialias_row(i, n, scale, cubic);
        };
        std::vector<double> want;
        for (int i = 0; i < MH; ++i) {
          auto rh = row(i, H, MH);
          for (int j = 0; j < MW; ++j) {
            auto rw = row(j, W, MW);
            double acc = 0;
            for (int h = 0; h < H; ++h) {
              for (int w = 0; w < W; ++w) acc += rh[h] * rw[w] * x[h * W + w];
            }
            want.push_back(acc);
          }
        }
        nn::Upsample up(scale, cubic ? "cubic" : "linear", false, /*antialias=*/true);
        array y = up(make(x, {1, H, W, 1}, float32));
        EXPECT_EQ(y.shape(), (Shape{1, MH, MW, 1}));
        expect_close(
            values(y), want, 1e-5, 1e-5,
            std::string(cubic ? "cubic " : "linear ") + std::to_string(scale) + " " + test::device_name(dev));
      }
    }
    // Halving along one axis: interior outputs weigh their four nearest inputs 1, 3, 3, 1 (/ 8).
    const auto got = values(nn::Upsample(0.5f, "linear", false, true)(
        make(std::vector<double>(x.begin(), x.begin() + W), {1, W, 1}, float32)));
    for (int i = 1; i + 1 < W / 2; ++i) {
      EXPECT_NEAR(got[i], (x[2 * i - 1] + 3 * x[2 * i] + 3 * x[2 * i + 1] + x[2 * i + 2]) / 8, 1e-5) << i;
    }
  }
}

// align_corners with a single output along an axis samples the first input (as Python's
// Upsample and PyTorch do), in every mode that interpolates.
TEST(NnUpsample, AlignCornersWithOneOutputTakesTheFirstInput) {
  const array x = make(std::vector<double>{4.0, -1.0, 7.0}, {1, 3, 1}, float32);
  for (const char* mode : {"linear", "cubic"}) {
    for (bool antialias : {false, true}) {
      array y = nn::Upsample(0.5f, mode, /*align_corners=*/true, antialias)(x);
      ASSERT_EQ(y.shape(), (Shape{1, 1, 1})) << mode;
      if (!antialias) EXPECT_EQ(values(y), std::vector<double>{4.0}) << mode;
    }
  }
}
