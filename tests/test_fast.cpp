// braid::fast against double-precision formulas written out here: norms (also of half inputs,
// whose statistics are computed in float32), rotary embeddings, and attention with masks,
// grouped heads and sinks; their gradients against finite differences; bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "braid/fast.h"
#include "support.h"

using namespace braid;
using test::expect_close;
using test::make;
using test::values;

namespace {

std::vector<double> draw(size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Reference rms_norm / layer_norm over rows of `d` features.
std::vector<double> rms_norm_ref(const std::vector<double>& x, const std::vector<double>& w, int d,
                                 double eps) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / d; ++r) {
    double ss = 0;
    for (int i = 0; i < d; ++i) ss += x[r * d + i] * x[r * d + i];
    const double n = 1.0 / std::sqrt(ss / d + eps);
    for (int i = 0; i < d; ++i) out[r * d + i] = x[r * d + i] * n * w[i];
  }
  return out;
}

std::vector<double> layer_norm_ref(const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& b, int d, double eps) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / d; ++r) {
    double mu = 0, var = 0;
    for (int i = 0; i < d; ++i) mu += x[r * d + i] / d;
    for (int i = 0; i < d; ++i) var += (x[r * d + i] - mu) * (x[r * d + i] - mu) / d;
    for (int i = 0; i < d; ++i) out[r * d + i] = (x[r * d + i] - mu) / std::sqrt(var + eps) * w[i] + b[i];
  }
  return out;
}

// Central finite differences of sum(f(x) * cotangent) at x (float64), against braid::grad. A
// function through softmax, whose kernel computes in float32, takes a wider step.
void expect_gradient_matches_differences(const std::function<array(const array&)>& f,
                                         const std::vector<double>& x, const Shape& shape,
                                         const std::string& what, double h = 1e-6, double tol = 1e-5) {
  auto loss = [&](const array& in) {
    array y = f(in);
    return sum(multiply(y, make(draw(y.size(), 99), y.shape(), float64)));  // one cotangent per output
  };
  auto g = values(grad(loss)(make(x, shape, float64)));
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    auto up = x, down = x;
    up[i] += h;
    down[i] -= h;
    want[i] =
        (loss(make(up, shape, float64)).item<double>() - loss(make(down, shape, float64)).item<double>()) /
        (2 * h);
  }
  expect_close(g, want, tol, tol / 10, what);
}

}  // namespace

TEST(Fast, RmsNormMatchesItsFormulaOnEveryDevice) {
  const int d = 8;
  auto x = draw(3 * d, 1, -3.0, 3.0);
  auto w = draw(d, 2);
  for (const auto& dev : test::test_devices()) {
    array y = fast::rms_norm(make(x, {3, d}, float32), make(w, {d}, float32), 1e-5f, dev);
    EXPECT_EQ(y.dtype(), float32);
    expect_close(values(y), rms_norm_ref(x, w, d, 1e-5), 1e-5, 1e-6, "rms_norm " + test::device_name(dev));
    array unweighted = fast::rms_norm(make(x, {3, d}, float32), std::nullopt, 1e-5f, dev);
    expect_close(values(unweighted), rms_norm_ref(x, std::vector<double>(d, 1.0), d, 1e-5), 1e-5, 1e-6,
                 "rms_norm without weight " + test::device_name(dev));
  }
}

TEST(Fast, FusedRmsSiluIsSiluOfTheNorm) {
  const int d = 8;
  auto x = draw(3 * d, 11, -3.0, 3.0);
  auto w = draw(d, 12);
  for (const auto& dev : test::test_devices()) {
    for (const bool weighted : {true, false}) {
      auto want = rms_norm_ref(x, weighted ? w : std::vector<double>(d, 1.0), d, 1e-5);
      for (double& h : want) h = h / (1.0 + std::exp(-h));
      const std::optional<array> weight =
          weighted ? std::optional<array>(make(w, {d}, float32)) : std::nullopt;
      array y = fast::fused_rms_silu(make(x, {3, d}, float32), weight, 1e-5f, dev);
      EXPECT_EQ(y.dtype(), float32);
      expect_close(values(y), want, 1e-5, 1e-6, "fused_rms_silu " + test::device_name(dev));
    }
    EXPECT_THROW(fast::fused_rms_silu(make(x, {3, d}, float32), ones({d - 1}), 1e-5f, dev),
                 std::invalid_argument);
  }
}

TEST(Fast, LayerNormMatchesItsFormulaWithAndWithoutAffineArrays) {
  const int d = 6;
  auto x = draw(4 * d, 3, -2.0, 5.0);
  auto w = draw(d, 4), b = draw(d, 5);
  const std::vector<double> one(d, 1.0), zero(d, 0.0);
  for (const auto& dev : test::test_devices()) {
    auto xa = make(x, {2, 2, d}, float32);
    auto name = test::device_name(dev);
    expect_close(values(fast::layer_norm(xa, make(w, {d}, float32), make(b, {d}, float32), 1e-5f, dev)),
                 layer_norm_ref(x, w, b, d, 1e-5), 1e-5, 1e-5, "weight and bias " + name);
    expect_close(values(fast::layer_norm(xa, make(w, {d}, float32), std::nullopt, 1e-5f, dev)),
                 layer_norm_ref(x, w, zero, d, 1e-5), 1e-5, 1e-5, "weight " + name);
    expect_close(values(fast::layer_norm(xa, std::nullopt, std::nullopt, 1e-5f, dev)),
                 layer_norm_ref(x, one, zero, d, 1e-5), 1e-5, 1e-5, "plain " + name);
  }
}

TEST(Fast, NormsOfHalfInputsAccumulateInFloat32) {
  // 300^2 overflows float16; the statistics in float32 do not.
  const int d = 4;
  std::vector<double> x = {300, -200, 250, 100, 1, 2, 3, 4};
  const std::vector<double> one(d, 1.0), zero(d, 0.0);
  for (const auto& dev : test::test_devices()) {
    array r = fast::rms_norm(make(x, {2, d}, float16), std::nullopt, 1e-5f, dev);
    EXPECT_EQ(r.dtype(), float16);
    expect_close(values(r), rms_norm_ref(x, one, d, 1e-5), 2e-3, 1e-3, "rms_norm float16");
    array l = fast::layer_norm(make(x, {2, d}, bfloat16), std::nullopt, std::nullopt, 1e-5f, dev);
    EXPECT_EQ(l.dtype(), bfloat16);
    expect_close(values(l), layer_norm_ref(x, one, zero, d, 1e-5), 1e-2, 1e-2, "layer_norm bfloat16");
    array promoted = fast::rms_norm(make(x, {2, d}, float16), ones({d}, float32), 1e-5f, dev);
    EXPECT_EQ(promoted.dtype(), float32) << "the result has promote(x, weight)";
  }
}

TEST(Fast, NormsAreDifferentiable) {
  const int d = 5;
  auto x = draw(2 * d, 6);
  auto w = make(draw(d, 7), {d}, float64), b = make(draw(d, 8), {d}, float64);
  expect_gradient_matches_differences([&](const array& in) { return fast::rms_norm(in, w, 1e-5f); }, x,
                                      {2, d}, "rms_norm");
  expect_gradient_matches_differences([&](const array& in) { return fast::layer_norm(in, w, b, 1e-5f); }, x,
                                      {2, d}, "layer_norm");
}

namespace {

// Reference rope of x [B, N, T, D] (row-major), offsets per batch entry.
std::vector<double> rope_ref(const std::vector<double>& x, int B, int N, int T, int D, int dims,
                             bool traditional, const std::vector<double>& inv_freqs, double scale,
                             const std::vector<int>& offsets) {
  std::vector<double> out = x;
  const int half = dims / 2;
  for (int b = 0; b < B; ++b) {
    for (int n = 0; n < N; ++n) {
      for (int t = 0; t < T; ++t) {
        const size_t row = ((static_cast<size_t>(b) * N + n) * T + t) * D;
        const double pos = (t + offsets[offsets.size() == 1 ? 0 : b]) * scale;
        for (int i = 0; i < half; ++i) {
          const int a = traditional ? 2 * i : i, c = traditional ? 2 * i + 1 : i + half;
          const double th = pos * inv_freqs[i];
          out[row + a] = x[row + a] * std::cos(th) - x[row + c] * std::sin(th);
          out[row + c] = x[row + a] * std::sin(th) + x[row + c] * std::cos(th);
        }
      }
    }
  }
  return out;
}

std::vector<double> base_inv_freqs(int dims, double base) {
  std::vector<double> f(dims / 2);
  for (int i = 0; i < dims / 2; ++i) f[i] = std::pow(base, -2.0 * i / dims);
  return f;
}

}  // namespace

TEST(Fast, RopeRotatesFeaturePairsByPositionTimesFrequency) {
  const int B = 2, N = 2, T = 3, D = 8;
  auto x = draw(B * N * T * D, 9);
  for (const auto& dev : test::test_devices()) {
    for (bool traditional : {false, true}) {
      for (int dims : {8, 4}) {
        array y = fast::rope(make(x, {B, N, T, D}, float32), dims, traditional, 10000.0f, 0.5f, 3,
                             std::nullopt, dev);
        auto want = rope_ref(x, B, N, T, D, dims, traditional, base_inv_freqs(dims, 10000.0), 0.5, {3});
        expect_close(values(y), want, 1e-5, 1e-5,
                     "traditional=" + std::to_string(traditional) + " dims=" + std::to_string(dims));
      }
    }
  }
}

TEST(Fast, RopeTakesPerBatchOffsetsFrequenciesAndThreeDimensionalInputs) {
  const int B = 2, T = 3, D = 4;
  auto x = draw(B * T * D, 10);
  std::vector<double> freqs = {2.0, 7.0};
  array y = fast::rope(make(x, {B, T, D}, float32), D, false, std::nullopt, 1.0f, array({1, 5}),
                       make(freqs, {2}, float32));
  EXPECT_EQ(y.shape(), (Shape{B, T, D}));
  expect_close(values(y), rope_ref(x, B, 1, T, D, D, false, {0.5, 1.0 / 7.0}, 1.0, {1, 5}), 1e-5, 1e-5,
               "offsets [1, 5], freqs");
}

TEST(Fast, RopeIsDifferentiable) {
  auto x = draw(1 * 2 * 2 * 4, 11);
  expect_gradient_matches_differences(
      [](const array& in) { return fast::rope(in, 4, true, 100.0f, 1.0f, 2); }, x, {1, 2, 2, 4}, "rope");
}

namespace {

// Reference attention for q [B, Hq, Lq, D], k/v [B, Hkv, Lk, D(v)]; mask(b, h, i, j) returns
// an additive term (or -inf) and sinks one logit per query head.
std::vector<double> attention_ref(const std::vector<double>& q, const std::vector<double>& k,
                                  const std::vector<double>& v, int B, int Hq, int Hkv, int Lq, int Lk, int D,
                                  int Dv, double scale, const std::function<double(int, int, int, int)>& mask,
                                  const std::vector<double>& sinks = {}) {
  std::vector<double> out(static_cast<size_t>(B) * Hq * Lq * Dv);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < Hq; ++h) {
      const int hk = h / (Hq / Hkv);
      for (int i = 0; i < Lq; ++i) {
        std::vector<double> s(Lk);
        double m = sinks.empty() ? -INFINITY : sinks[h];
        for (int j = 0; j < Lk; ++j) {
          double dot = 0;
          for (int e = 0; e < D; ++e) {
            dot += q[((b * Hq + h) * Lq + i) * D + e] * k[((b * Hkv + hk) * Lk + j) * D + e];
          }
          s[j] = dot * scale + mask(b, h, i, j);
          m = std::max(m, s[j]);
        }
        double z = sinks.empty() ? 0.0 : std::exp(sinks[h] - m);
        for (double& x : s) z += (x = std::exp(x - m));
        for (int e = 0; e < Dv; ++e) {
          double acc = 0;
          for (int j = 0; j < Lk; ++j) acc += s[j] / z * v[((b * Hkv + hk) * Lk + j) * Dv + e];
          out[((b * Hq + h) * Lq + i) * Dv + e] = acc;
        }
      }
    }
  }
  return out;
}

struct Qkv {
  int B, Hq, Hkv, Lq, Lk, D, Dv;
  std::vector<double> q, k, v;
  Qkv(int B_, int Hq_, int Hkv_, int Lq_, int Lk_, int D_, int Dv_)
      : B(B_), Hq(Hq_), Hkv(Hkv_), Lq(Lq_), Lk(Lk_), D(D_), Dv(Dv_) {
    q = draw(static_cast<size_t>(B) * Hq * Lq * D, 21);
    k = draw(static_cast<size_t>(B) * Hkv * Lk * D, 22);
    v = draw(static_cast<size_t>(B) * Hkv * Lk * Dv, 23);
  }
  array qa(Dtype t = float32) const { return make(q, {B, Hq, Lq, D}, t); }
  array ka(Dtype t = float32) const { return make(k, {B, Hkv, Lk, D}, t); }
  array va(Dtype t = float32) const { return make(v, {B, Hkv, Lk, Dv}, t); }
};

const auto kNoMask = [](int, int, int, int) { return 0.0; };

}  // namespace

TEST(Fast, AttentionMatchesSoftmaxOfScaledScoresOnEveryDevice) {
  Qkv t(2, 2, 2, 3, 5, 4, 3);
  for (const auto& dev : test::test_devices()) {
    array y =
        fast::scaled_dot_product_attention(t.qa(), t.ka(), t.va(), 0.5f, "", std::nullopt, std::nullopt, dev);
    EXPECT_EQ(y.shape(), (Shape{2, 2, 3, 3}));
    expect_close(values(y), attention_ref(t.q, t.k, t.v, 2, 2, 2, 3, 5, 4, 3, 0.5, kNoMask), 1e-5, 1e-6,
                 "no mask " + test::device_name(dev));
  }
}

TEST(Fast, AttentionCausalMaskAlignsTheLastQueryWithTheLastKey) {
  Qkv t(1, 2, 2, 3, 5, 4, 4);
  array y = fast::scaled_dot_product_attention(t.qa(), t.ka(), t.va(), 0.7f, "causal");
  auto causal = [](int, int, int i, int j) { return j <= i + 2 ? 0.0 : -INFINITY; };
  expect_close(values(y), attention_ref(t.q, t.k, t.v, 1, 2, 2, 3, 5, 4, 4, 0.7, causal), 1e-5, 1e-6,
               "causal");
}

// With more queries than keys, MLX puts query i at position i (its offset is
// max(0, L_kv - L_q)): query i sees keys 0..i, and no row is fully masked.
TEST(Fast, AttentionCausalMaskWithMoreQueriesThanKeysStartsAtTheFirstKey) {
  Qkv t(1, 2, 2, 6, 3, 4, 4);
  array y = fast::scaled_dot_product_attention(t.qa(), t.ka(), t.va(), 1.0f, "causal");
  auto causal = [](int, int, int i, int j) { return j <= i ? 0.0 : -INFINITY; };
  expect_close(values(y), attention_ref(t.q, t.k, t.v, 1, 2, 2, 6, 3, 4, 4, 1.0, causal), 1e-5, 1e-6,
               "causal, 6 queries over 3 keys");
}

TEST(Fast, AttentionTakesBoolAndAdditiveMasksThatBroadcast) {
  Qkv t(2, 2, 2, 3, 4, 4, 4);
  // A bool mask [Lq, Lk] and an additive one [B, 1, Lq, Lk].
  std::vector<double> keep(3 * 4), bias = draw(2 * 3 * 4, 30);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) keep[i * 4 + j] = (i + j) % 3 != 0 ? 1.0 : 0.0;
  }
  for (const auto& dev : test::test_devices()) {
    array yb = fast::scaled_dot_product_attention(t.qa(), t.ka(), t.va(), 0.5f, "array",
                                                  make(keep, {3, 4}, bool_), std::nullopt, dev);
    auto bool_mask = [&](int, int, int i, int j) { return keep[i * 4 + j] != 0 ? 0.0 : -INFINITY; };
    expect_close(values(yb), attention_ref(t.q, t.k, t.v, 2, 2, 2, 3, 4, 4, 4, 0.5, bool_mask), 1e-5, 1e-6,
                 "bool");
    array ya = fast::scaled_dot_product_attention(t.qa(), t.ka(), t.va(), 0.5f, "array",
                                                  make(bias, {2, 1, 3, 4}, float32), std::nullopt, dev);
    auto additive = [&](int b, int, int i, int j) { return bias[(b * 3 + i) * 4 + j]; };
    expect_close(values(ya), attention_ref(t.q, t.k, t.v, 2, 2, 2, 3, 4, 4, 4, 0.5, additive), 1e-5, 1e-6,
                 "additive");
  }
}

TEST(Fast, AttentionSharesEachKeyValueHeadAmongItsQueryHeads) {
  Qkv t(1, 6, 2, 2, 3, 4, 2);
  std::vector<double> per_head = draw(6 * 2 * 3, 31);  // an additive mask [1, 6, 2, 3]
  array y = fast::scaled_dot_product_attention(t.qa(), t.ka(), t.va(), 0.5f, "array",
                                               make(per_head, {1, 6, 2, 3}, float32));
  auto mask = [&](int, int h, int i, int j) { return per_head[(h * 2 + i) * 3 + j]; };
  EXPECT_EQ(y.shape(), (Shape{1, 6, 2, 2}));
  expect_close(values(y), attention_ref(t.q, t.k, t.v, 1, 6, 2, 2, 3, 4, 2, 0.5, mask), 1e-5, 1e-6,
               "grouped");
}

TEST(Fast, AttentionSinksJoinTheSoftmaxAndLeaveTheOutput) {
  Qkv t(1, 4, 2, 2, 3, 4, 4);
  std::vector<double> sinks = {0.5, -1.0, 2.0, 0.0};
  array y = fast::scaled_dot_product_attention(t.qa(), t.ka(), t.va(), 0.5f, "", std::nullopt,
                                               make(sinks, {4}, float32));
  expect_close(values(y), attention_ref(t.q, t.k, t.v, 1, 4, 2, 2, 3, 4, 4, 0.5, kNoMask, sinks), 1e-5, 1e-6,
               "sinks");
}

TEST(Fast, AttentionOfHalfInputsKeepsTheirDtype) {
  Qkv t(1, 2, 1, 2, 3, 4, 4);
  array y = fast::scaled_dot_product_attention(t.qa(float16), t.ka(float16), t.va(float16), 0.5f, "causal");
  EXPECT_EQ(y.dtype(), float16);
  auto causal = [](int, int, int i, int j) { return j <= i + 1 ? 0.0 : -INFINITY; };
  expect_close(values(y), attention_ref(t.q, t.k, t.v, 1, 2, 1, 2, 3, 4, 4, 0.5, causal), 5e-3, 5e-3,
               "float16");
}

TEST(Fast, AttentionIsDifferentiableInQueriesKeysAndValues) {
  Qkv t(1, 2, 1, 2, 3, 2, 2);
  array k = t.ka(float64), v = t.va(float64), q = t.qa(float64);
  expect_gradient_matches_differences(
      [&](const array& in) { return fast::scaled_dot_product_attention(in, k, v, 0.8f, "causal"); }, t.q,
      {1, 2, 2, 2}, "d/dq", 1e-3, 1e-3);
  expect_gradient_matches_differences(
      [&](const array& in) { return fast::scaled_dot_product_attention(q, in, v, 0.8f, "causal"); }, t.k,
      {1, 1, 3, 2}, "d/dk", 1e-3, 1e-3);
  expect_gradient_matches_differences(
      [&](const array& in) { return fast::scaled_dot_product_attention(q, k, in, 0.8f, "causal"); }, t.v,
      {1, 1, 3, 2}, "d/dv", 1e-3, 1e-3);
}

TEST(Fast, BadInputThrowsBeforeBuildingAGraph) {
  array x = zeros({2, 4});
  EXPECT_THROW(fast::rms_norm(array(1.0f), std::nullopt, 1e-5f), std::invalid_argument);
  EXPECT_THROW(fast::rms_norm(x, zeros({3}), 1e-5f), std::invalid_argument);
  EXPECT_THROW(fast::rms_norm(zeros({2, 4}, int32), std::nullopt, 1e-5f), std::invalid_argument);
  EXPECT_THROW(fast::layer_norm(x, std::nullopt, zeros({2, 4}), 1e-5f), std::invalid_argument);
  array x4 = zeros({1, 1, 2, 4});
  EXPECT_THROW(fast::rope(x, 4, false, 1e4f, 1.0f, 0), std::invalid_argument);               // 2-d
  EXPECT_THROW(fast::rope(x4, 3, false, 1e4f, 1.0f, 0), std::invalid_argument);              // odd dims
  EXPECT_THROW(fast::rope(x4, 6, false, 1e4f, 1.0f, 0), std::invalid_argument);              // dims > D
  EXPECT_THROW(fast::rope(x4, 4, false, std::nullopt, 1.0f, 0), std::invalid_argument);      // no base
  EXPECT_THROW(fast::rope(x4, 4, false, 1e4f, 1.0f, 0, zeros({2})), std::invalid_argument);  // both
  EXPECT_THROW(fast::rope(x4, 4, false, 1e4f, 1.0f, array({1.0f})), std::invalid_argument);  // float offset
  EXPECT_THROW(fast::rope(x4, 4, false, 1e4f, 1.0f, array({1, 2, 3})),
               std::invalid_argument);  // offsets != B
  array q = zeros({1, 4, 2, 8}), k = zeros({1, 3, 5, 8});
  EXPECT_THROW(fast::scaled_dot_product_attention(q, k, k, 1.0f), std::invalid_argument);  // 4 % 3 heads
  EXPECT_THROW(fast::scaled_dot_product_attention(zeros({4, 2, 8}), k, k, 1.0f), std::invalid_argument);
  EXPECT_THROW(fast::scaled_dot_product_attention(q, q, q, 1.0f, "sliding"), std::invalid_argument);
  EXPECT_THROW(fast::scaled_dot_product_attention(q, q, q, 1.0f, "causal", zeros({2, 2})),
               std::invalid_argument);
  EXPECT_THROW(fast::scaled_dot_product_attention(q, q, q, 1.0f, "array", zeros({3, 3})),
               std::invalid_argument);
  EXPECT_THROW(fast::scaled_dot_product_attention(q, q, q, 1.0f, "", std::nullopt, zeros({3})),
               std::invalid_argument);
  EXPECT_THROW(fast::scaled_dot_product_attention(q, zeros({1, 4, 2, 6}), q, 1.0f), std::invalid_argument);
}
