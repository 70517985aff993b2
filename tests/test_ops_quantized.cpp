// Affine quantization in MLX's packed layout, on every device: round trips within half a
// step, the exact bit layout, quantized_matmul against matmul of the dequantized weights on
// both of its paths, gather_qmm against gathers of the dequantized weights, the derivatives'
// dtypes and errors (their values are checked in test_transforms.cpp), the float8 e4m3
// conversions against the format's definition, and the invalid calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
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
      for (int bits : {1, 2, 3, 4, 5, 6, 8}) {
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
        // One bit reads back each group's extremes: a typical element sits between them.
        EXPECT_LT(mean_steps, bits == 1 ? 0.5 : 0.3) << what;
      }
    }
  }
}

// One bit (MLX): scale = max(hi - lo, 1e-7), bias = lo, so a group of two values reads back
// exactly, whatever their signs, and a group of zeros stays zero.
TEST(OpsQuantized, OneBitKeepsBothExtremesOfEachGroup) {
  for (Device dev : test::test_devices()) {
    std::vector<double> two_values(4 * 128), zeros(4 * 128, 0.0);
    for (size_t i = 0; i < two_values.size(); ++i) two_values[i] = (i * 7919 % 5 < 2) ? 0.9f : 0.1f;
    for (float shift : {0.0f, -0.5f}) {
      std::vector<double> v = two_values;
      for (double& x : v) x = static_cast<float>(x + shift);
      array w = test::make(v, {4, 128}, float32);
      for (int group : {32, 64, 128}) {
        auto q = quantize(w, group, 1, "affine", std::nullopt, dev);
        const auto sv = test::values(q[1]), bv = test::values(q[2]);
        for (size_t g = 0; g < sv.size(); ++g) {
          EXPECT_NEAR(sv[g], 0.8, 1e-6);
          EXPECT_NEAR(bv[g], 0.1 + shift, 1e-6);
        }
        const auto back = test::values(dequantize(q[0], q[1], q[2], group, 1, "affine", std::nullopt, std::nullopt, dev));
        for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(back[i], v[i], 1e-6) << test::device_name(dev) << " at " << i;
      }
    }
    auto q = quantize(test::make(zeros, {4, 128}, float32), 64, 1, "affine", std::nullopt, dev);
    for (double s : test::values(q[1])) EXPECT_FLOAT_EQ(s, 1e-7f);
    for (double b : test::values(q[2])) EXPECT_EQ(b, 0.0);
    for (double x : test::values(dequantize(q[0], q[1], q[2], 64, 1, "affine", std::nullopt, std::nullopt, dev)))
      EXPECT_EQ(x, 0.0);
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

namespace {

// quantized_matmul of x [rows, k] by transposed weights [n, k] against the matmul of the
// dequantized weights.
void expect_few_row_product(Device dev, Dtype dt, int rows, int n, int k, int group, int bits,
                            uint32_t seed) {
  const std::string what = test::device_name(dev) + " " + dtype_name(dt) + " rows " + std::to_string(rows) +
                           " n " + std::to_string(n) + " k " + std::to_string(k) + " group " +
                           std::to_string(group) + " bits " + std::to_string(bits);
  array w = random_weights({n, k}, seed, dt);
  auto q = quantize(w, group, bits, "affine", std::nullopt, dev);
  array x = random_weights({rows, k}, seed + 1, dt);
  array want = matmul(
      x, transpose(dequantize(q[0], q[1], q[2], group, bits, "affine", std::nullopt, std::nullopt, dev)),
      dev);
  array got = quantized_matmul(x, q[0], q[1], q[2], true, group, bits, "affine", dev);
  EXPECT_EQ(got.dtype(), dt) << what;
  EXPECT_EQ(got.shape(), (Shape{rows, n})) << what;
  const double tol = dt == float32 ? 1e-3 : (dt == float16 ? 5e-2 : 0.25);
  test::expect_close(test::values(got), test::values(want), tol, tol, what);
}

}  // namespace

// Every width and group size, rows 1 to 8 (the GPU's gemv for 2, 4 and 8 bits), n = 37 not a
// multiple of the outputs a GPU block computes.
TEST(OpsQuantized, FewRowProductsMatchForEveryWidthGroupSizeAndRowCount) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {float32, float16, bfloat16}) {
      for (int bits : {1, 2, 3, 4, 5, 6, 8}) {
        for (int group : {32, 64, 128}) {
          for (int rows = 1; rows <= 8; ++rows)
            expect_few_row_product(dev, dt, rows, 37, 256, group, bits, rows * 7 + bits);
        }
      }
    }
  }
}

// Rows of several thousand values: each lane of the GPU's gemv goes round its loop more than
// once and ends on a partial step.
TEST(OpsQuantized, FewRowProductsMatchOverLongRows) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {float32, float16, bfloat16}) {
      for (int bits : {2, 4, 8}) {
        for (int rows : {1, 6})
          expect_few_row_product(dev, dt, rows, 19, 2304 * 2, 128, bits, 40 + rows + bits);
      }
    }
  }
}

// Where the gemv cannot read 16 bytes at a time the general kernel answers alike: x starting
// one element into its buffer, 2-bit rows of 32 values (8 bytes of packed words).
TEST(OpsQuantized, FewRowProductsMatchForUnalignedInputsAndShortPackedRows) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {float32, float16}) {
      for (int rows : {1, 3}) {
        const int k = 256, n = 21;
        array w = random_weights({n, k}, 70 + rows, dt);
        auto q = quantize(w, 64, 4, "affine", std::nullopt, dev);
        array flat = random_weights({1 + rows * k}, 71 + rows, dt);
        array x = reshape(slice(flat, {1}, {1 + rows * k}, dev), {rows, k}, dev);
        array want = matmul(
            x, transpose(dequantize(q[0], q[1], q[2], 64, 4, "affine", std::nullopt, std::nullopt, dev)),
            dev);
        array got = quantized_matmul(x, q[0], q[1], q[2], true, 64, 4, "affine", dev);
        const double tol = dt == float32 ? 1e-3 : 5e-2;
        test::expect_close(test::values(got), test::values(want), tol, tol,
                           test::device_name(dev) + " unaligned x");
      }
      for (int rows : {1, 5}) expect_few_row_product(dev, dt, rows, 37, 32, 32, 2, 80 + rows);
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

// ---- gather_qmm ----

namespace {

// x[lhs] @ dequantize(w)[rhs] (transposed when asked), from take and matmul.
array gathered_reference(const array& x, const array& w_deq, const array& lhs, const array& rhs, bool transpose,
                         Device dev) {
  const int xb = static_cast<int>(x.size() / (x.shape(-2) * x.shape(-1)));
  const int wb = static_cast<int>(w_deq.size() / (w_deq.shape(-2) * w_deq.shape(-1)));
  array xs = take(reshape(x, {xb, x.shape(-2), x.shape(-1)}, dev), lhs, 0, dev);
  array ws = take(reshape(w_deq, {wb, w_deq.shape(-2), w_deq.shape(-1)}, dev), rhs, 0, dev);
  return matmul(xs, transpose ? swapaxes(ws, -1, -2, dev) : ws, dev);
}

}  // namespace

TEST(OpsQuantized, GatherQmmMatchesGathersOfTheDequantizedWeights) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {float32, float16, bfloat16}) {
      for (bool transpose : {true, false}) {
        for (int rows : {1, 3, 10}) {
          const std::string what = test::device_name(dev) + " " + dtype_name(dt) + (transpose ? " T" : " N") +
                                   " rows " + std::to_string(rows);
          // 4 experts of [48, 128] (transposed: 48 outputs of 128 inputs) or [128, 64].
          array w = transpose ? random_weights({4, 48, 128}, 11, dt) : random_weights({4, 128, 64}, 12, dt);
          auto q = quantize(w, 64, 4, "affine", std::nullopt, dev);
          array wd = dequantize(q[0], q[1], q[2], 64, 4, "affine", std::nullopt, std::nullopt, dev);
          array x = random_weights({5, rows, 128}, 13 + rows, dt);
          array lhs = array({4u, 0u, 2u, 2u, 1u, 3u}, {6});
          array rhs = array({3, 3, 0, 1, 2, 0}, {6});
          array got = gather_qmm(x, q[0], q[1], q[2], lhs, rhs, transpose, 64, 4, "affine", false, dev);
          const int n = transpose ? 48 : 64;
          EXPECT_EQ(got.shape(), (Shape{6, rows, n})) << what;
          EXPECT_EQ(got.dtype(), dt) << what;
          array want = gathered_reference(x, wd, lhs, rhs, transpose, dev);
          const double tol = dt == float32 ? 1e-3 : (dt == float16 ? 5e-2 : 0.25);
          test::expect_close(test::values(got), test::values(want), tol, tol, what);
        }
      }
    }
  }
}

TEST(OpsQuantized, GatherQmmIndicesBroadcastDefaultAndWrap) {
  for (Device dev : test::test_devices()) {
    array w = random_weights({3, 32, 64}, 21);
    auto q = quantize(w, 32, 8, "affine", std::nullopt, dev);
    array wd = dequantize(q[0], q[1], q[2], 32, 8, "affine", std::nullopt, std::nullopt, dev);
    // Broadcast index shapes [2, 1] and [1, 3] give products of shape [2, 3].
    array x = random_weights({2, 2, 64}, 22);
    array lhs = array({1, 0}, {2, 1});
    array rhs = array({0, 2, 1}, {1, 3});
    array got = gather_qmm(x, q[0], q[1], q[2], lhs, rhs, true, 32, 8, "affine", false, dev);
    EXPECT_EQ(got.shape(), (Shape{2, 3, 2, 32}));
    array want = gathered_reference(x, wd, reshape(broadcast_to(lhs, {2, 3}), {6}), reshape(broadcast_to(rhs, {2, 3}), {6}),
                                    true, dev);
    test::expect_close(test::values(got), test::values(want), 1e-4, 1e-4, "broadcast");
    // Only rhs: x's single batch for every product; -1 wraps to the last expert.
    array x2 = random_weights({3, 64}, 23);
    array rhs2 = array({-1, 0, 1, 2}, {4});
    array got2 = gather_qmm(x2, q[0], q[1], q[2], std::nullopt, rhs2, true, 32, 8, "affine", true, dev);
    EXPECT_EQ(got2.shape(), (Shape{4, 3, 32}));
    array want2 = gathered_reference(x2, wd, array({0, 0, 0, 0}, {4}), array({2, 0, 1, 2}, {4}), true, dev);
    test::expect_close(test::values(got2), test::values(want2), 1e-4, 1e-4, "rhs only");
    // Neither: quantized_matmul.
    array plain = gather_qmm(x2, q[0], q[1], q[2], std::nullopt, std::nullopt, true, 32, 8, "affine", false, dev);
    EXPECT_EQ(plain.shape(), (Shape{3, 3, 32}));
  }
}

TEST(OpsQuantized, HalfPrecisionScaleGradientsMatchTheFloat32Ones) {
  // Both paths of quantized_matmul (2 rows read the packed weights, 12 the dequantized ones):
  // the cotangents come back in the scales' dtype and shape.
  for (Device dev : test::test_devices()) {
    StreamContext ctx(dev);
    for (int rows : {2, 12}) {
      auto q = quantize(random_weights({16, 128}, 31), 64, 4);
      array x = random_weights({rows, 128}, 32 + rows);
      auto loss = [&](Dtype dt) {
        return grad(
            [&](const std::vector<array>& p) {
              return sum(quantized_matmul(astype(x, dt), q[0], p[0], p[1], true, 64, 4));
            },
            {0, 1})({astype(q[1], dt), astype(q[2], dt)});
      };
      const std::vector<array> want = loss(float32), got = loss(float16);
      const std::string what = test::device_name(dev) + " rows " + std::to_string(rows);
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(got[i].dtype(), float16) << what;
        EXPECT_EQ(got[i].shape(), q[1].shape()) << what;
        test::expect_close(test::values(got[i]), test::values(want[i]), 2e-2, 0.5,
                           what + " input " + std::to_string(i));
      }
    }
  }
}

TEST(OpsQuantized, PackedWeightsAndFpScalesHaveNoDerivative) {
  // MLX's exception types: a RuntimeError for the packed integers, a ValueError (here
  // invalid_argument) for the scales of the fp modes.
  for (Device dev : test::test_devices()) {
    StreamContext ctx(dev);
    array x = random_weights({2, 64}, 41);
    auto q = quantize(random_weights({8, 64}, 42));
    for (bool many_rows : {false, true}) {
      array xr = many_rows ? random_weights({16, 64}, 43) : x;
      auto on_w = [&](const array& w) { return sum(quantized_matmul(xr, w, q[1], q[2])); };
      EXPECT_THROW(grad(on_w)(q[0]), std::runtime_error);
    }
    auto gathered = [&](const array& w) {
      return sum(gather_qmm(reshape(x, {2, 1, 64}), w, reshape(q[1], {1, 8, 1}), reshape(q[2], {1, 8, 1}),
                            std::nullopt, array({0, 0})));
    };
    EXPECT_THROW(grad(gathered)(reshape(q[0], {1, 8, 8})), std::runtime_error);
    auto fp = quantize(random_weights({8, 64}, 44), std::nullopt, std::nullopt, "mxfp4");
    auto on_scales = [&](const array& s) {
      return sum(quantized_matmul(x, fp[0], s, std::nullopt, true, std::nullopt, std::nullopt, "mxfp4"));
    };
    EXPECT_THROW(grad(on_scales)(fp[1]), std::invalid_argument);
  }
}

// ---- float8 e4m3 ----

namespace {

// The e4m3 ("fn") value of a code from the format's definition: sign, 4 exponent bits with
// bias 7, 3 mantissa bits; exponent 0 is subnormal; S.1111.111 is NaN.
double e4m3_value(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
  return code & 0x80 ? -mag : mag;
}

// The code MLX gives a float32 value: the nearest finite value, ties to the even code (even
// mantissa); magnitudes of 448 and beyond, infinities and NaN give +-448 by the sign bit.
int e4m3_code(float f) {
  const int sign = std::signbit(f) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (std::isnan(f) || a >= 448) return sign | 0x7E;
  int best = 0;
  for (int c = 1; c <= 0x7E; ++c) {
    const double d = std::fabs(e4m3_value(c) - a), db = std::fabs(e4m3_value(best) - a);
    if (d < db || (d == db && c % 2 == 0)) best = c;
  }
  return sign | best;
}

}  // namespace

TEST(OpsQuantized, FromFp8DecodesEveryCodeExactly) {
  std::vector<double> codes(256), want(256);
  for (int c = 0; c < 256; ++c) {
    codes[c] = c;
    want[c] = e4m3_value(c);
  }
  EXPECT_EQ(want[0x7E], 448.0);
  EXPECT_EQ(want[0x01], std::ldexp(1.0, -9));
  array x = test::make(codes, {16, 16}, uint8);
  for (Device dev : test::test_devices()) {
    for (Dtype dt : test::kRealFloatDtypes) {
      array y = from_fp8(x, dt, dev);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(y.shape(), (Shape{16, 16}));
      test::expect_close(test::values(y), want, 0, 0, test::device_name(dev) + " " + dtype_name(dt));
      // A transposed view decodes as its values.
      test::expect_close(test::values(from_fp8(transpose(x), dt, dev)), test::values(transpose(from_fp8(x, dt, dev))),
                         0, 0, "transposed");
    }
  }
}

TEST(OpsQuantized, ToFp8RoundsToNearestEvenAndSaturates) {
  std::vector<float> v;
  for (int c = 0; c <= 0x7E; ++c) {
    const float x = static_cast<float>(e4m3_value(c));
    v.push_back(x);
    v.push_back(-x);
    if (c < 0x7E) {
      // The midpoint to the next code (a tie), and just either side of it.
      const float mid = static_cast<float>((e4m3_value(c) + e4m3_value(c + 1)) / 2);
      v.push_back(mid);
      v.push_back(-mid);
      v.push_back(std::nextafter(mid, 0.0f));
      v.push_back(std::nextafter(mid, 1000.0f));
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, std::ldexp(1.0f, -10), std::ldexp(1.0f, -11), std::ldexp(1.0f, -20), 1e-30f, 449.0f,
                  463.9f, 464.0f, 480.0f, 500.0f, -1e6f, 3e38f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  -std::numeric_limits<float>::quiet_NaN()}) {
    v.push_back(x);
  }
  for (Device dev : test::test_devices()) {
    for (Dtype dt : test::kRealFloatDtypes) {
      std::vector<double> in(v.begin(), v.end());
      array x = test::make(in, {static_cast<int>(in.size())}, dt);
      std::vector<double> want;
      for (double held : test::values(x)) want.push_back(e4m3_code(static_cast<float>(held)));
      if (dt != float32) {
        // A NaN's sign is not kept by every conversion to float32: compare those by magnitude.
        for (size_t i = 0; i < in.size(); ++i) {
          if (std::isnan(in[i])) want[i] = -1;
        }
      }
      array y = to_fp8(x, dev);
      EXPECT_EQ(y.dtype(), uint8);
      std::vector<double> got = test::values(y);
      for (size_t i = 0; i < want.size(); ++i) {
        if (want[i] < 0) {
          EXPECT_EQ(static_cast<int>(got[i]) & 0x7F, 0x7E) << i;
          want[i] = got[i];
        }
      }
      test::expect_close(got, want, 0, 0, test::device_name(dev) + " " + dtype_name(dt));
      // Codes round-trip through their values.
      std::vector<double> all(256);
      for (int c = 0; c < 256; ++c) all[c] = c;
      array codes = test::make(all, {256}, uint8);
      std::vector<double> back = test::values(to_fp8(from_fp8(codes, float32, dev), dev));
      for (int c = 0; c < 256; ++c) {
        if ((c & 0x7F) != 0x7F) EXPECT_EQ(back[c], c) << "code " << c;
      }
    }
  }
}

TEST(OpsQuantized, GatherQmmAndFp8InvalidCallsThrowNamedErrors) {
  auto expect_invalid = [](const char* op, const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << op << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("[") + op + "]", 0), 0u) << e.what();
    }
  };
  array w = random_weights({2, 8, 64}, 31);
  auto q = quantize(w, 64, 4);
  array x = random_weights({2, 3, 64}, 32);
  array idx = array({0, 1}, {2});
  expect_invalid("gather_qmm", [&] { gather_qmm(x, q[0], q[1], q[2], astype(idx, float32), idx); });
  expect_invalid("gather_qmm", [&] { gather_qmm(x, q[0], q[1], q[2], idx, astype(idx, bool_)); });
  expect_invalid("gather_qmm", [&] { gather_qmm(random_weights({64}, 33), q[0], q[1], q[2], idx, idx); });
  expect_invalid("gather_qmm", [&] { gather_qmm(random_weights({2, 3, 32}, 34), q[0], q[1], q[2], idx, idx); });
  expect_invalid("gather_qmm", [&] { gather_qmm(x, q[0], q[1], std::nullopt, idx, idx); });
  expect_invalid("gather_qmm", [&] { gather_qmm(x, q[0], q[1], q[2], idx, idx, true, 64, 4, "mxfp4"); });
  expect_invalid("gather_qmm", [&] { gather_qmm(astype(x, float64), q[0], q[1], q[2], idx, idx); });
  expect_invalid("gather_qmm", [&] { gather_qmm(x, q[0], q[1], q[2], array({0, 1, 0}, {3}), idx); });
  expect_invalid("to_fp8", [&] { to_fp8(array({1, 2})); });
  expect_invalid("to_fp8", [&] { to_fp8(zeros({2}, complex64)); });
  expect_invalid("from_fp8", [&] { from_fp8(array({1, 2}), float32); });
  expect_invalid("from_fp8", [&] { from_fp8(zeros({2}, uint8), int32); });
  expect_invalid("from_fp8", [&] { from_fp8(zeros({2}, uint8), complex64); });
}
