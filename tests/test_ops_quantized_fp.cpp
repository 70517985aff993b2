// The floating-point quantization modes (mxfp4, mxfp8, nvfp4) and qqmm, on every device,
// against references computed here in double from the formats' definitions: OCP MX (E2M1 or
// E4M3 elements sharing an E8M0 scale over 32) and NVFP4 (E2M1 elements, an E4M3 scale over
// 16, optionally a float32 global scale). Every mode is described once in kModes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "support.h"

using namespace braid;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// E2M1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is subnormal.
double e2m1_value(int code) {
  const int e = (code >> 1) & 3, m = code & 1;
  const double mag = e == 0 ? m * 0.5 : std::ldexp(1 + m / 2.0, e - 1);
  return code & 8 ? -mag : mag;
}

// E4M3 ("fn"): sign, 4 exponent bits (bias 7), 3 mantissa bits; S.1111.111 is NaN.
double e4m3_value(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return kNaN;
  const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
  return code & 0x80 ? -mag : mag;
}

// E8M0: 2^(code - 127); 0xFF is NaN.
double e8m0_value(int code) { return code == 0xFF ? kNaN : std::ldexp(1.0, code - 127); }

struct FpMode {
  std::string name;
  int group;
  int bits;
  double elem_max;  // the largest element
  bool e4m3_elements;
  bool e8m0_scales;
};

const FpMode kModes[] = {
    {"mxfp4", 32, 4, 6.0, false, true},
    {"mxfp8", 32, 8, 448.0, true, true},
    {"nvfp4", 16, 4, 6.0, false, false},
};

double element_value(const FpMode& m, int code) {
  return m.e4m3_elements ? e4m3_value(code) : e2m1_value(code);
}
double scale_value(const FpMode& m, int code) { return m.e8m0_scales ? e8m0_value(code) : e4m3_value(code); }

// The code nearest v in E2M1 or E4M3 (ties to the even code), saturating at the largest.
int nearest_code(bool e4m3, double v) {
  const int top = e4m3 ? 0x7E : 7;
  const int sign = std::signbit(v) ? (e4m3 ? 0x80 : 8) : 0;
  const double a = std::fabs(v);
  int best = 0;
  for (int c = 1; c <= top; ++c) {
    const double vc = e4m3 ? e4m3_value(c) : e2m1_value(c);
    const double vb = e4m3 ? e4m3_value(best) : e2m1_value(best);
    const double d = std::fabs(vc - a), db = std::fabs(vb - a);
    if (d < db || (d == db && c % 2 == 0)) best = c;
  }
  return sign | best;
}

// A group's scale code: E8M0 is the smallest power of two not below s; E4M3 the nearest.
int scale_code(const FpMode& m, double s) {
  if (!m.e8m0_scales) return nearest_code(true, s);
  for (int c = 0; c < 0xFF; ++c) {
    if (e8m0_value(c) >= s) return c;
  }
  return 0xFE;
}

// The reference quantization of rows of `values` (K per row): element codes, scale codes and
// the dequantized values. `global` > 0 is nvfp4's global scale.
struct Quantized {
  std::vector<int> codes, scales;
  std::vector<double> values;
};

Quantized reference_quantize(const FpMode& m, const std::vector<double>& w, double global = 0) {
  const double enc = global > 0 ? 448.0 * 6.0 / global : 1.0;
  const double dec = global > 0 ? global / (448.0 * 6.0) : 1.0;
  Quantized q;
  for (size_t g0 = 0; g0 < w.size(); g0 += m.group) {
    double amax = 0;
    for (int i = 0; i < m.group; ++i) amax = std::max(amax, std::fabs(w[g0 + i]));
    const int sc = scale_code(m, amax / m.elem_max * enc);
    const double sv = scale_value(m, sc);
    q.scales.push_back(sc);
    // Elements are multiplied by the float32 factor enc / scale (as MLX's CUDA backend does),
    // which is exact for the E8M0 scales but not for every E4M3 one: a tie of w / scale can
    // land on either side.
    const float factor = sv == 0 ? 0.0f : static_cast<float>(enc / sv);
    for (int i = 0; i < m.group; ++i) {
      const int c =
          nearest_code(m.e4m3_elements, static_cast<double>(static_cast<float>(w[g0 + i]) * factor));
      q.codes.push_back(c);
      q.values.push_back(element_value(m, c) * sv * dec);
    }
  }
  return q;
}

// The element codes in packed words (little-endian, `bits` each).
std::vector<int> unpack_codes(const array& packed, int bits) {
  std::vector<int> out;
  const uint32_t mask = (1u << bits) - 1u;
  for (double word : test::values(packed)) {
    const uint32_t u = static_cast<uint32_t>(word);
    for (int at = 0; at < 32; at += bits) out.push_back(static_cast<int>((u >> at) & mask));
  }
  return out;
}

// Packed uint32 words of shape [rows, K * bits / 32] holding `codes` (row-major).
array pack_codes(const std::vector<int>& codes, int rows, int bits) {
  const int per_word = 32 / bits;
  std::vector<double> words(codes.size() / per_word, 0.0);
  for (size_t j = 0; j < codes.size(); ++j) {
    words[j / per_word] += static_cast<double>(static_cast<uint32_t>(codes[j]) << ((j % per_word) * bits));
  }
  return test::make(words, {rows, static_cast<int>(words.size()) / rows}, uint32);
}

std::vector<double> random_values(size_t n, uint32_t seed, double spread = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, spread);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

// Rows of test data for a mode: random groups at several magnitudes, a zero group, and a
// group of exact ties (scale 1: amax is the largest element) with their negatives.
std::vector<double> sample_rows(const FpMode& m, int rows, uint32_t seed) {
  std::vector<double> v = random_values(static_cast<size_t>(rows) * 2 * m.group, seed);
  for (size_t i = 0; i < v.size(); ++i) v[i] *= std::ldexp(1.0, static_cast<int>(i / m.group) % 7 - 3);
  for (int i = 0; i < m.group; ++i) v[i] = 0;
  const std::vector<double> ties = m.e4m3_elements
                                       ? std::vector<double>{1.0625, 1.1875, 17.0, 104.0, 0.0029296875, 432.0}
                                       : std::vector<double>{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};
  double* tie_group = v.data() + m.group;
  for (int i = 0; i < m.group; ++i) tie_group[i] = (i % 2 ? -1 : 1) * ties[(i / 2) % ties.size()];
  tie_group[m.group - 1] = m.elem_max;
  return v;
}

}  // namespace

TEST(OpsQuantizedFp, QuantizeGivesTheFormatsCodesScalesAndValues) {
  for (Device dev : test::test_devices()) {
    for (const FpMode& m : kModes) {
      for (Dtype dt : {float32, bfloat16, float16}) {
        const std::string what = test::device_name(dev) + " " + m.name + " " + dtype_name(dt);
        const int rows = 3, k = 2 * m.group;
        array w = test::make(sample_rows(m, rows, 7), {rows, k}, dt);
        const Quantized want = reference_quantize(m, test::values(w));
        auto q = quantize(w, std::nullopt, std::nullopt, m.name, std::nullopt, dev);
        ASSERT_EQ(q.size(), 2u) << what;
        EXPECT_EQ(q[0].dtype(), uint32) << what;
        EXPECT_EQ(q[0].shape(), (Shape{rows, k * m.bits / 32})) << what;
        EXPECT_EQ(q[1].dtype(), uint8) << what;
        EXPECT_EQ(q[1].shape(), (Shape{rows, k / m.group})) << what;
        std::vector<int> scales;
        for (double s : test::values(q[1])) scales.push_back(static_cast<int>(s));
        EXPECT_EQ(scales, want.scales) << what;
        EXPECT_EQ(unpack_codes(q[0], m.bits), want.codes) << what;
        // Back to values: bfloat16 by default, exact in float32.
        array back = dequantize(q[0], q[1], std::nullopt, std::nullopt, std::nullopt, m.name, std::nullopt,
                                std::nullopt, dev);
        EXPECT_EQ(back.dtype(), bfloat16) << what;
        array exact =
            dequantize(q[0], q[1], std::nullopt, m.group, m.bits, m.name, std::nullopt, float32, dev);
        test::expect_close(test::values(exact), want.values, 0, 0, what);
      }
    }
  }
}

TEST(OpsQuantizedFp, RoundTripIsWithinHalfAnElementStep) {
  for (Device dev : test::test_devices()) {
    for (const FpMode& m : kModes) {
      const std::vector<double> v = random_values(static_cast<size_t>(4) * 128, 11, 3.0);
      array w = test::make(v, {4, 128}, float32);
      auto q = quantize(w, std::nullopt, std::nullopt, m.name, std::nullopt, dev);
      const auto back = test::values(dequantize(q[0], q[1], std::nullopt, std::nullopt, std::nullopt, m.name,
                                                std::nullopt, float32, dev));
      const auto scales = test::values(q[1]);
      for (size_t i = 0; i < v.size(); ++i) {
        const double s = scale_value(m, static_cast<int>(scales[i / m.group]));
        // Half the spacing of the element format around |v| / s, in units of the scale.
        const double a = std::fabs(v[i]) / s;
        const double step =
            m.e4m3_elements
                ? std::ldexp(1.0,
                             std::max(-6, static_cast<int>(std::floor(std::log2(std::max(a, 1e-30))))) - 3)
                : (a < 2 ? 0.5 : (a < 4 ? 1.0 : 2.0));
        ASSERT_LE(std::fabs(back[i] - v[i]), step * s / 2 * (1 + 1e-9)) << m.name << " at " << i;
      }
    }
  }
}

TEST(OpsQuantizedFp, EveryE2M1AndE4M3ElementCodeDecodes) {
  for (Device dev : test::test_devices()) {
    for (const FpMode& m : kModes) {
      const int codes_n = 1 << m.bits;  // every element code, repeated to whole groups
      const int k = std::max(codes_n, m.group);
      std::vector<int> codes(k);
      for (int j = 0; j < k; ++j) codes[j] = j % codes_n;
      // Scale codes for 1.0: E8M0 127, E4M3 0x38.
      const int one = m.e8m0_scales ? 127 : 0x38;
      array scales = test::make(std::vector<double>(k / m.group, one), {1, k / m.group}, uint8);
      array got = dequantize(pack_codes(codes, 1, m.bits), scales, std::nullopt, m.group, m.bits, m.name,
                             std::nullopt, float32, dev);
      std::vector<double> want;
      for (int c : codes) want.push_back(element_value(m, c));
      test::expect_close(test::values(got), want, 0, 0, test::device_name(dev) + " " + m.name);
    }
  }
}

TEST(OpsQuantizedFp, EveryScaleCodeDecodes) {
  for (Device dev : test::test_devices()) {
    for (const FpMode& m : kModes) {
      // Row c: one group of elements 1.0 under scale code c.
      const int one = m.e4m3_elements ? 0x38 : 2;
      array w = pack_codes(std::vector<int>(256 * m.group, one), 256, m.bits);
      std::vector<double> codes(256), want;
      for (int c = 0; c < 256; ++c) {
        codes[c] = c;
        for (int i = 0; i < m.group; ++i) want.push_back(scale_value(m, c));
      }
      EXPECT_EQ(e8m0_value(0), std::ldexp(1.0, -127));
      array got = dequantize(w, test::make(codes, {256, 1}, uint8), std::nullopt, m.group, m.bits, m.name,
                             std::nullopt, float32, dev);
      test::expect_close(test::values(got), want, 0, 0, test::device_name(dev) + " " + m.name);
    }
  }
}

TEST(OpsQuantizedFp, Nvfp4GlobalScaleSpansTheTensorsRange) {
  const FpMode& m = kModes[2];
  // 2688 / 42 = 64: the encoding factor is exact, so the reference's codes are the format's.
  const double global = 42.0;
  for (Device dev : test::test_devices()) {
    std::vector<double> v = random_values(64, 21, 0.5);
    array w = test::make(v, {2, 32}, float32);
    array gs = array(static_cast<float>(global));
    const Quantized want = reference_quantize(m, test::values(w), global);
    auto q = quantize(w, std::nullopt, std::nullopt, "nvfp4", gs, dev);
    std::vector<int> scales;
    for (double s : test::values(q[1])) scales.push_back(static_cast<int>(s));
    EXPECT_EQ(scales, want.scales);
    EXPECT_EQ(unpack_codes(q[0], 4), want.codes);
    array back = dequantize(q[0], q[1], std::nullopt, std::nullopt, std::nullopt, "nvfp4", gs, float32, dev);
    test::expect_close(test::values(back), want.values, 1e-6, 0, test::device_name(dev) + " global scale");
  }
}

namespace {

// x [rows, K] @ values [N, K].T (transpose) or x @ values [K, N], in double.
std::vector<double> reference_product(const std::vector<double>& x, const std::vector<double>& w, int rows,
                                      int k, int n, bool transpose) {
  std::vector<double> out(static_cast<size_t>(rows) * n, 0.0);
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int i = 0; i < k; ++i) acc += x[r * k + i] * (transpose ? w[j * k + i] : w[i * n + j]);
      out[r * n + j] = acc;
    }
  }
  return out;
}

double tolerance(Dtype dt) { return dt == float32 ? 1e-4 : (dt == float16 ? 4e-3 : 3e-2); }

}  // namespace

TEST(OpsQuantizedFp, QuantizedMatmulMatchesTheProductOfTheDequantizedWeights) {
  for (Device dev : test::test_devices()) {
    for (const FpMode& m : kModes) {
      for (Dtype dt : {float32, bfloat16}) {
        for (bool transpose : {true, false}) {
          for (int rows : {1, 3, 9}) {  // 9 rows take the dequantize-and-matmul path
            const std::string what = test::device_name(dev) + " " + m.name + " " + dtype_name(dt) +
                                     (transpose ? " T" : " N") + " rows " + std::to_string(rows);
            const int k = 64, n = 32;
            // Quantized along its last axis: [N, K] when transposed, [K, N] otherwise.
            array w =
                test::make(random_values(k * n, 31 + rows), transpose ? Shape{n, k} : Shape{k, n}, float32);
            auto q = quantize(w, std::nullopt, std::nullopt, m.name, std::nullopt, dev);
            const std::vector<double> wv = test::values(dequantize(
                q[0], q[1], std::nullopt, std::nullopt, std::nullopt, m.name, std::nullopt, float32, dev));
            array x = test::make(random_values(static_cast<size_t>(rows) * k, 41 + rows), {rows, k}, dt);
            array got = quantized_matmul(x, q[0], q[1], std::nullopt, transpose, std::nullopt, std::nullopt,
                                         m.name, dev);
            EXPECT_EQ(got.dtype(), dt) << what;
            EXPECT_EQ(got.shape(), (Shape{rows, n})) << what;
            const auto want = reference_product(test::values(x), wv, rows, k, n, transpose);
            test::expect_close(test::values(got), want, tolerance(dt), tolerance(dt), what);
          }
        }
      }
    }
  }
}

TEST(OpsQuantizedFp, GatherQmmMatchesGathersOfTheDequantizedWeights) {
  for (Device dev : test::test_devices()) {
    for (const FpMode& m : kModes) {
      for (bool transpose : {true, false}) {
        const std::string what = test::device_name(dev) + " " + m.name + (transpose ? " T" : " N");
        const int k = 64, n = 32, rows = 2, experts = 3;
        array w = test::make(random_values(static_cast<size_t>(experts) * k * n, 51),
                             transpose ? Shape{experts, n, k} : Shape{experts, k, n}, float32);
        auto q = quantize(w, std::nullopt, std::nullopt, m.name, std::nullopt, dev);
        const auto wv = test::values(dequantize(q[0], q[1], std::nullopt, std::nullopt, std::nullopt, m.name,
                                                std::nullopt, float32, dev));
        array x = test::make(random_values(static_cast<size_t>(2) * rows * k, 52), {2, rows, k}, float32);
        const std::vector<int> lhs{1, 0, 1, 0}, rhs{2, 2, 0, 1};
        array got =
            gather_qmm(x, q[0], q[1], std::nullopt, array({1u, 0u, 1u, 0u}, {4}), array({2, 2, 0, 1}, {4}),
                       transpose, std::nullopt, std::nullopt, m.name, false, dev);
        EXPECT_EQ(got.shape(), (Shape{4, rows, n})) << what;
        const auto xv = test::values(x);
        std::vector<double> want;
        for (size_t b = 0; b < lhs.size(); ++b) {
          const std::vector<double> xb(xv.begin() + lhs[b] * rows * k, xv.begin() + (lhs[b] + 1) * rows * k);
          const std::vector<double> wb(wv.begin() + rhs[b] * k * n, wv.begin() + (rhs[b] + 1) * k * n);
          const auto p = reference_product(xb, wb, rows, k, n, transpose);
          want.insert(want.end(), p.begin(), p.end());
        }
        test::expect_close(test::values(got), want, 1e-4, 1e-4, what);
      }
    }
  }
}

TEST(OpsQuantizedFp, QqmmMultipliesBothOperandsAsQuantized) {
  for (Device dev : test::test_devices()) {
    for (int mi : {1, 2}) {  // mxfp8, nvfp4
      const FpMode& m = kModes[mi];
      for (bool global : {false, true}) {
        if (global && m.e8m0_scales) continue;  // global scales are nvfp4's
        for (Dtype dt : {float32, bfloat16}) {
          const std::string what =
              test::device_name(dev) + " " + m.name + (global ? " global " : " ") + dtype_name(dt);
          const int rows = 3, k = 64, n = 5;
          array x = test::make(random_values(static_cast<size_t>(rows) * k, 61), {rows, k}, dt);
          array w = test::make(random_values(static_cast<size_t>(n) * k, 62), {n, k}, dt);
          const double gx = 42.0, gw = 21.0;  // exact encoding factors 64 and 128
          std::optional<array> gsx, gsw;
          if (global) {
            gsx = array(static_cast<float>(gx));
            gsw = array(static_cast<float>(gw));
          }
          const Quantized xq = reference_quantize(m, test::values(x), global ? gx : 0);
          const Quantized wq = reference_quantize(m, test::values(w), global ? gw : 0);
          const auto want = reference_product(xq.values, wq.values, rows, k, n, true);
          const double tol = dt == float32 ? 1e-5 : 1e-2;
          // w as floats, quantized inside.
          array got = qqmm(x, w, std::nullopt, std::nullopt, std::nullopt, m.name, gsx, gsw, dev);
          EXPECT_EQ(got.dtype(), dt) << what;
          EXPECT_EQ(got.shape(), (Shape{rows, n})) << what;
          test::expect_close(test::values(got), want, tol, tol, what);
          // w already quantized (with the same global scale).
          auto wqa = quantize(w, std::nullopt, std::nullopt, m.name, gsw, dev);
          array got_q = qqmm(x, wqa[0], wqa[1], std::nullopt, std::nullopt, m.name, gsx, gsw, dev);
          test::expect_close(test::values(got_q), want, tol, tol, what + " quantized w");
          // A vector x gives a vector.
          array xv = reshape(slice(x, {0, 0}, {1, k}), {k});
          EXPECT_EQ(qqmm(xv, w, std::nullopt, std::nullopt, std::nullopt, m.name, gsx, gsw, dev).shape(),
                    (Shape{n}));
        }
      }
    }
  }
}

TEST(OpsQuantizedFp, InvalidCallsThrowNamedErrors) {
  auto expect_invalid = [](const char* op, const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << op << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("[") + op + "]", 0), 0u) << e.what();
    }
  };
  array w = test::make(random_values(4 * 64, 71), {4, 64}, float32);
  auto q = quantize(w, std::nullopt, std::nullopt, "mxfp4");
  array gs = array(1.0f);
  expect_invalid("quantize", [&] { quantize(w, 32, 4, "fp4"); });
  expect_invalid("quantize", [&] { quantize(w, 64, 4, "mxfp4"); });
  expect_invalid("quantize", [&] { quantize(w, 32, 8, "mxfp4"); });
  expect_invalid("quantize", [&] { quantize(w, 16, 4, "mxfp8"); });
  expect_invalid("quantize", [&] { quantize(w, 32, 4, "nvfp4"); });
  expect_invalid("quantize", [&] { quantize(w, std::nullopt, std::nullopt, "mxfp4", gs); });
  expect_invalid("quantize", [&] { quantize(w, std::nullopt, std::nullopt, "nvfp4", astype(gs, float16)); });
  expect_invalid("quantize", [&] { quantize(w, std::nullopt, std::nullopt, "nvfp4", array({1.0f, 2.0f})); });
  expect_invalid("quantize", [&] {
    quantize(test::make(random_values(48, 1), {2, 24}, float32), std::nullopt, std::nullopt, "nvfp4");
  });
  expect_invalid("dequantize", [&] { dequantize(q[0], q[1], q[1], std::nullopt, std::nullopt, "mxfp4"); });
  expect_invalid("dequantize", [&] {
    dequantize(q[0], astype(q[1], float32), std::nullopt, std::nullopt, std::nullopt, "mxfp4");
  });
  expect_invalid("dequantize",
                 [&] { dequantize(q[0], q[1], std::nullopt, std::nullopt, std::nullopt, "nvfp4"); });
  expect_invalid("dequantize",
                 [&] { dequantize(q[0], q[1], std::nullopt, std::nullopt, std::nullopt, "mxfp4", gs); });
  expect_invalid("dequantize", [&] {
    dequantize(q[0], q[1], std::nullopt, std::nullopt, std::nullopt, "mxfp4", std::nullopt, int32);
  });
  expect_invalid("quantized_matmul",
                 [&] { quantized_matmul(w, q[0], q[1], q[1], true, std::nullopt, std::nullopt, "mxfp4"); });
  expect_invalid("quantized_matmul",
                 [&] { quantized_matmul(w, q[0], q[1], std::nullopt, true, 16, 4, "mxfp4"); });
  expect_invalid("gather_qmm", [&] {
    gather_qmm(reshape(w, {1, 4, 64}), q[0], q[1], std::nullopt, array({0}, {1}), array({0}, {1}), true,
               std::nullopt, std::nullopt, "mxfp8");
  });
  // qqmm: modes, dimensions, dtypes, scales and global scales.
  array x = test::make(random_values(2 * 64, 72), {2, 64}, float32);
  auto q8 = quantize(w, std::nullopt, std::nullopt, "mxfp8");
  expect_invalid("qqmm", [&] { qqmm(x, w, std::nullopt, std::nullopt, std::nullopt, "mxfp4"); });
  expect_invalid("qqmm", [&] { qqmm(x, w, std::nullopt, std::nullopt, std::nullopt, "affine"); });
  expect_invalid("qqmm", [&] { qqmm(x, w, std::nullopt, 32, 4, "nvfp4"); });
  expect_invalid("qqmm", [&] { qqmm(reshape(x, {1, 2, 64}), w); });
  expect_invalid("qqmm", [&] { qqmm(astype(x, float64), w); });
  expect_invalid("qqmm", [&] { qqmm(x, astype(w, int32)); });
  expect_invalid("qqmm", [&] { qqmm(x, test::make(random_values(4 * 32, 73), {4, 32}, float32)); });
  expect_invalid("qqmm", [&] { qqmm(x, q8[0], std::nullopt, std::nullopt, std::nullopt, "mxfp8"); });
  expect_invalid("qqmm", [&] { qqmm(x, q8[0], q8[1], std::nullopt, std::nullopt, "nvfp4"); });
  expect_invalid("qqmm", [&] { qqmm(x, w, q8[1], std::nullopt, std::nullopt, "mxfp8"); });
  expect_invalid("qqmm", [&] { qqmm(x, w, std::nullopt, std::nullopt, std::nullopt, "nvfp4", gs); });
  expect_invalid("qqmm", [&] { qqmm(x, w, std::nullopt, std::nullopt, std::nullopt, "mxfp8", gs, gs); });
  expect_invalid("qqmm", [&] {
    qqmm(test::make(random_values(2 * 24, 74), {2, 24}, float32),
         test::make(random_values(4 * 24, 75), {4, 24}, float32));
  });
}
