// Affine quantization in MLX's packed layout, on every device: round trips within half a
// step, the exact bit layout, quantized_matmul against matmul of the dequantized weights on
// both of its paths, and the invalid calls.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support.h"

using namespace braid;

namespace {

array random_weights(const Shape& shape, uint32_t seed, Dtype dt = float32) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  size_t n = 1;
  for (int32_t d : shape) n *= static_cast<size_t>(d);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return test::make(v, shape, dt);
}

}  // namespace

// MLX's scheme represents each group's larger-magnitude extreme exactly, which can push the
// other extreme up to one step past the grid: every element is within one step, and the
// typical error is about a quarter step.
TEST(OpsQuantized, RoundTripIsWithinAStepForEveryGroupSizeAndBitWidth) {
  for (Device dev : test::test_devices()) {
    for (int group : {32, 64, 128}) {
      for (int bits : {2, 3, 4, 5, 6, 8}) {
        const std::string what = test::device_name(dev) + " group " + std::to_string(group) + " bits " + std::to_string(bits);
        array w = random_weights({6, 256}, group * 10 + bits);
        auto q = quantize(w, group, bits, "affine", std::nullopt, dev);
        ASSERT_EQ(q.size(), 3u);
        EXPECT_EQ(q[0].dtype(), uint32);
        EXPECT_EQ(q[0].shape(), (Shape{6, 256 * bits / 32})) << what;
        EXPECT_EQ(q[1].shape(), (Shape{6, 256 / group})) << what;
        EXPECT_EQ(q[1].dtype(), float32);
        array back = dequantize(q[0], q[1], q[2], group, bits, "affine", std::nullopt, std::nullopt, dev);
        EXPECT_EQ(back.shape(), w.shape());
        const auto wv = test::values(w), bv = test::values(back), sv = test::values(q[1]);
        double mean_steps = 0;
        for (size_t i = 0; i < wv.size(); ++i) {
          const double step = std::abs(sv[i / group]);
          ASSERT_LE(std::abs(wv[i] - bv[i]), step * 1.0001 + 1e-6) << what << " at " << i;
          mean_steps += std::abs(wv[i] - bv[i]) / step / static_cast<double>(wv.size());
        }
        EXPECT_LT(mean_steps, 0.3) << what;
      }
    }
  }
}

TEST(OpsQuantized, PackedBitsFollowMlxsLayout) {
  // One group of 32 values 0..15, 0..15: the largest-magnitude extreme 15 is exact, the scale
  // is -1 and the bias 15, so value v becomes q = 15 - v, packed 4 bits at a time from bit 0.
  std::vector<double> v(32);
  for (int j = 0; j < 32; ++j) v[j] = j % 16;
  for (Device dev : test::test_devices()) {
    auto q = quantize(test::make(v, {1, 32}, float32), 32, 4, "affine", std::nullopt, dev);
    EXPECT_EQ(test::values(q[1]), std::vector<double>{-1.0});
    EXPECT_EQ(test::values(q[2]), std::vector<double>{15.0});
    std::vector<double> words(4, 0);
    for (int j = 0; j < 32; ++j) {
      words[j / 8] += static_cast<double>(static_cast<uint32_t>(15 - j % 16) << (4 * (j % 8)));
    }
    EXPECT_EQ(test::values(q[0]), words) << test::device_name(dev);
    // 3 bits: value j's bits start at bit 3j of the row's stream, straddling words.
    auto q3 = quantize(test::make(v, {1, 32}, float32), 32, 3, "affine", std::nullopt, dev);
    const auto packed = test::values(q3[0]);
    ASSERT_EQ(packed.size(), 3u);
    const double s = test::values(q3[1])[0], b = test::values(q3[2])[0];
    for (int j = 0; j < 32; ++j) {
      const uint64_t lo = static_cast<uint64_t>(packed[(3 * j) / 32]);
      const uint64_t hi = (3 * j) / 32 + 1 < 3 ? static_cast<uint64_t>(packed[(3 * j) / 32 + 1]) : 0;
      const uint64_t stream = lo | (hi << 32);
      const uint32_t qj = static_cast<uint32_t>((stream >> ((3 * j) % 32)) & 7u);
      EXPECT_NEAR(s * qj + b, v[j], std::abs(s) * 0.5 + 1e-6) << j;
    }
  }
}

TEST(OpsQuantized, QuantizedMatmulMatchesMatmulOfTheDequantizedWeights) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {float32, float16, bfloat16}) {
      for (int rows : {1, 3, 8, 33}) {
        for (int bits : {4, 3, 8}) {
          const std::string what = test::device_name(dev) + " " + dtype_name(dt) + " rows " + std::to_string(rows) + " bits " + std::to_string(bits);
          array w = random_weights({48, 256}, rows + bits, dt);
          auto q = quantize(w, 64, bits, "affine", std::nullopt, dev);
          array x = random_weights({rows, 256}, 99 + rows, dt);
          array want = matmul(x, transpose(dequantize(q[0], q[1], q[2], 64, bits, "affine", std::nullopt, std::nullopt, dev)), dev);
          array got = quantized_matmul(x, q[0], q[1], q[2], true, 64, bits, "affine", dev);
          EXPECT_EQ(got.dtype(), dt) << what;
          EXPECT_EQ(got.shape(), (Shape{rows, 48})) << what;
          const double tol = dt == float32 ? 1e-3 : (dt == float16 ? 5e-2 : 0.25);
          test::expect_close(test::values(got), test::values(want), tol, tol, what);
        }
      }
    }
  }
}

TEST(OpsQuantized, UntransposedAndBatchedInputs) {
  for (Device dev : test::test_devices()) {
    array w = random_weights({128, 64}, 5);  // (K, N) quantized along N
    auto q = quantize(w, 32, 4, "affine", std::nullopt, dev);
    array x = random_weights({2, 3, 128}, 6);
    array want = matmul(x, dequantize(q[0], q[1], q[2], 32, 4, "affine", std::nullopt, std::nullopt, dev), dev);
    array got = quantized_matmul(x, q[0], q[1], q[2], false, 32, 4, "affine", dev);
    EXPECT_EQ(got.shape(), (Shape{2, 3, 64}));
    test::expect_close(test::values(got), test::values(want), 1e-4, 1e-4, "untransposed");
    array wt = random_weights({40, 128}, 7);
    auto qt = quantize(wt, 128, 2, "affine", std::nullopt, dev);
    array got_t = quantized_matmul(x, qt[0], qt[1], qt[2], true, 128, 2, "affine", dev);
    array want_t = matmul(x, transpose(dequantize(qt[0], qt[1], qt[2], 128, 2, "affine", std::nullopt, std::nullopt, dev)), dev);
    EXPECT_EQ(got_t.shape(), (Shape{2, 3, 40}));
    test::expect_close(test::values(got_t), test::values(want_t), 1e-4, 1e-4, "batched");
  }
}

TEST(OpsQuantized, InvalidCallsThrowNamedErrors) {
  array w = random_weights({4, 64}, 1);
  auto q = quantize(w);
  auto expect_invalid = [](const char* op, const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << op << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("[") + op + "]", 0), 0u) << e.what();
    }
  };
  expect_invalid("quantize", [&] { quantize(w, 16); });
  expect_invalid("quantize", [&] { quantize(w, 64, 7); });
  expect_invalid("quantize", [&] { quantize(w, 64, 4, "mxfp4"); });
  expect_invalid("quantize", [&] { quantize(array({1.0f, 2.0f})); });
  expect_invalid("quantize", [&] { quantize(random_weights({2, 48}, 2)); });
  expect_invalid("quantize", [&] { quantize(astype(w, int32)); });
  expect_invalid("dequantize", [&] { dequantize(q[0], q[1]); });
  expect_invalid("dequantize", [&] { dequantize(astype(q[0], int32), q[1], q[2]); });
  expect_invalid("dequantize", [&] { dequantize(q[0], q[1], q[2], 32); });
  expect_invalid("quantized_matmul", [&] { quantized_matmul(random_weights({2, 32}, 3), q[0], q[1], q[2]); });
  expect_invalid("quantized_matmul", [&] { quantized_matmul(astype(random_weights({2, 64}, 3), int32), q[0], q[1], q[2]); });
  expect_invalid("quantized_matmul", [&] { quantized_matmul(random_weights({2, 64}, 3), q[0], q[1], std::nullopt); });
}
