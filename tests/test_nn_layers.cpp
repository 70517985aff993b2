// nn layers (linear, embedding, convolution, normalization, dropout, Sequential, pooling):
// MLX's parameter names, shapes and initial ranges, values against double-precision formulas
// written here, gradients through nn::value_and_grad, train/eval behaviour, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "braid/nn.h"
#include "braid/random.h"
#include "nn_layers_support.h"
#include "support.h"

using namespace braid;
using test::draw;
using test::expect_close;
using test::leaf_names;
using test::make;
using test::parameter;
using test::values;
using Names = std::vector<std::string>;

namespace {

void expect_within(const array& a, double bound, const std::string& what) {
  for (double v : values(a)) ASSERT_LE(std::abs(v), bound) << what;
}

// y[r, o] = sum_i x[r, i] w[o, i] + b[o].
std::vector<double> linear_ref(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b, int in, int out) {
  std::vector<double> y;
  for (size_t r = 0; r < x.size() / in; ++r) {
    for (int o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : b[o];
      for (int i = 0; i < in; ++i) acc += x[r * in + i] * w[o * in + i];
      y.push_back(acc);
    }
  }
  return y;
}

}  // namespace

// ---- Linear, Bilinear, Embedding ----

TEST(NnLinear, HasMlxShapesNamesAndInitialRange) {
  nn::Linear layer(16, 5);
  EXPECT_EQ(leaf_names(layer.parameters()), (Names{"weight", "bias"}));
  EXPECT_EQ(parameter(layer, "weight").shape(), (Shape{5, 16}));
  EXPECT_EQ(parameter(layer, "bias").shape(), (Shape{5}));
  expect_within(parameter(layer, "weight"), 0.25, "weight");
  expect_within(parameter(layer, "bias"), 0.25, "bias");
  EXPECT_EQ(leaf_names(nn::Linear(4, 3, false).parameters()), (Names{"weight"}));
}

TEST(NnLinear, InitializationDrawsWeightThenBiasFromTheGlobalKeySequence) {
  random::seed(7);
  nn::Linear layer(9, 4);
  random::seed(7);
  const float k = static_cast<float>(std::sqrt(1.0 / 9));
  array w = random::uniform(array(-k), array(k), {4, 9});
  array b = random::uniform(array(-k), array(k), {4});
  EXPECT_EQ(values(parameter(layer, "weight")), values(w));
  EXPECT_EQ(values(parameter(layer, "bias")), values(b));
}

TEST(NnLinear, ComputesXTimesWeightTransposedPlusBiasOnEveryDevice) {
  nn::Linear layer(3, 2);
  nn::Linear plain(3, 2, false);
  auto x = draw(4 * 3, 1);
  for (const auto& dev : test::test_devices()) {
    StreamContext ctx(dev);
    expect_close(values(layer(make(x, {2, 2, 3}, float32))),
                 linear_ref(x, values(parameter(layer, "weight")), values(parameter(layer, "bias")), 3, 2),
                 1e-5, 1e-6, "linear " + test::device_name(dev));
    expect_close(values(plain(make(x, {4, 3}, float32))),
                 linear_ref(x, values(parameter(plain, "weight")), {}, 3, 2), 1e-5, 1e-6, "no bias");
  }
}

TEST(NnLinear, GradientsMatchTheFormula) {
  nn::Linear layer(3, 2);
  array x = make(draw(4 * 3, 2), {4, 3}, float32);
  test::expect_parameter_gradients(
      layer, [&] { return sum(square(layer(x))); },
      [&](const std::vector<array>& p) { return sum(square(add(matmul(x, transpose(p[0])), p[1]))); });
}

TEST(NnLinear, RejectsInputsOfTheWrongWidth) {
  nn::Linear layer(3, 2);
  EXPECT_THROW(layer(zeros({2, 4})), std::invalid_argument);
  EXPECT_THROW(nn::Linear(0, 2), std::invalid_argument);
}

TEST(NnIdentity, ReturnsItsInput) {
  nn::Identity id;
  array x = array({1.0f, 2.0f});
  EXPECT_EQ(id(x).id(), x.id());
  EXPECT_TRUE(id.parameters().empty());
}

TEST(NnBilinear, ComputesX1WeightX2PlusBias) {
  const int in1 = 3, in2 = 2, out = 4;
  nn::Bilinear layer(in1, in2, out);
  EXPECT_EQ(parameter(layer, "weight").shape(), (Shape{out, in2, in1}));
  expect_within(parameter(layer, "weight"), 1 / std::sqrt(3.0), "weight");
  auto x1 = draw(2 * 3 * in1, 3), x2 = draw(2 * 3 * in2, 4);
  auto w = values(parameter(layer, "weight")), b = values(parameter(layer, "bias"));
  std::vector<double> want;
  for (int r = 0; r < 6; ++r) {
    for (int o = 0; o < out; ++o) {
      double acc = b[o];
      for (int i = 0; i < in1; ++i) {
        for (int j = 0; j < in2; ++j) acc += x1[r * in1 + i] * w[(o * in2 + j) * in1 + i] * x2[r * in2 + j];
      }
      want.push_back(acc);
    }
  }
  array y = layer(make(x1, {2, 3, in1}, float32), make(x2, {2, 3, in2}, float32));
  EXPECT_EQ(y.shape(), (Shape{2, 3, out}));
  expect_close(values(y), want, 1e-5, 1e-6, "bilinear");
  EXPECT_THROW(layer(zeros({2, in2}), zeros({2, in2})), std::invalid_argument);
}

TEST(NnBilinear, GradientsMatchTheFormula) {
  nn::Bilinear layer(3, 2, 2);
  array x1 = make(draw(4 * 3, 5), {4, 3}, float32), x2 = make(draw(4 * 2, 6), {4, 2}, float32);
  test::expect_parameter_gradients(
      layer, [&] { return sum(square(layer(x1, x2))); },
      [&](const std::vector<array>& p) {
        // y[r, o] = sum_ij x1[r, i] W[o, j, i] x2[r, j] + b[o]
        array t =
            matmul(expand_dims(x1, {1, 2}), expand_dims(transpose(p[0], {0, 2, 1}), 0));  // [r, o, 1, in2]
        array y = sum(multiply(squeeze(t, 2), expand_dims(x2, 1)), -1);
        return sum(square(add(y, p[1])));
      });
}

TEST(NnEmbedding, LooksUpRowsAndProjectsAsLinear) {
  nn::Embedding emb(5, 3);
  EXPECT_EQ(leaf_names(emb.parameters()), (Names{"weight"}));
  auto w = values(parameter(emb, "weight"));
  array y = emb(array({4, 0, 4, 2}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  std::vector<double> want;
  for (int idx : {4, 0, 4, 2}) {
    for (int d = 0; d < 3; ++d) want.push_back(w[idx * 3 + d]);
  }
  EXPECT_EQ(values(y), want);
  auto x = draw(2 * 3, 7);
  expect_close(values(emb.as_linear(make(x, {2, 3}, float32))), linear_ref(x, w, {}, 3, 5), 1e-5, 1e-6,
               "as_linear");
  EXPECT_THROW(emb(array({1.0f})), std::invalid_argument);
}

TEST(NnEmbedding, InitializationIsMlxsScaledNormal) {
  random::seed(11);
  nn::Embedding emb(6, 4);
  random::seed(11);
  EXPECT_EQ(values(parameter(emb, "weight")), values(random::normal({6, 4}, 0.0f, 0.5f)));
}

TEST(NnEmbedding, GradientsReachTheLookedUpRows) {
  nn::Embedding emb(4, 2);
  array idx = array({1, 3, 1});
  test::expect_parameter_gradients(
      emb, [&] { return sum(square(emb(idx))); },
      [&](const std::vector<array>& p) { return sum(square(take(p[0], idx, 0))); });
}

// ---- convolutions ----

namespace {

// y[n, t, o] = b[o] + sum_{k, i} x[n, t * stride + k * dil - pad, g * cin_g + i] w[o, k, i].
std::vector<double> conv1d_ref(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b, int N, int L, int Cin, int Cout, int K,
                               int stride, int pad, int dil, int groups) {
  const int out_len = (L + 2 * pad - dil * (K - 1) - 1) / stride + 1;
  const int cin_g = Cin / groups, cout_g = Cout / groups;
  std::vector<double> y;
  for (int n = 0; n < N; ++n) {
    for (int t = 0; t < out_len; ++t) {
      for (int o = 0; o < Cout; ++o) {
        double acc = b[o];
        const int g = o / cout_g;
        for (int k = 0; k < K; ++k) {
          const int pos = t * stride + k * dil - pad;
          if (pos < 0 || pos >= L) continue;
          for (int i = 0; i < cin_g; ++i)
            acc += x[(n * L + pos) * Cin + g * cin_g + i] * w[(o * K + k) * cin_g + i];
        }
        y.push_back(acc);
      }
    }
  }
  return y;
}

}  // namespace

TEST(NnConv, Conv1dMatchesTheCorrelationFormula) {
  const int N = 2, L = 9, Cin = 4, Cout = 6, K = 3;
  for (int groups : {1, 2}) {
    nn::Conv1d conv(Cin, Cout, K, 2, 1, 2, groups);
    EXPECT_EQ(parameter(conv, "weight").shape(), (Shape{Cout, K, Cin / groups}));
    expect_within(parameter(conv, "weight"), 1 / std::sqrt(Cin * K), "weight");
    EXPECT_EQ(values(parameter(conv, "bias")), std::vector<double>(Cout, 0.0));
    conv.update(tree_unflatten({{"bias", make(draw(Cout, 8), {Cout}, float32)}}));
    auto x = draw(N * L * Cin, 9);
    for (const auto& dev : test::test_devices()) {
      StreamContext ctx(dev);
      array y = conv(make(x, {N, L, Cin}, float32));
      expect_close(values(y),
                   conv1d_ref(x, values(parameter(conv, "weight")), values(parameter(conv, "bias")), N, L,
                              Cin, Cout, K, 2, 1, 2, groups),
                   1e-5, 1e-5, "groups " + std::to_string(groups) + " " + test::device_name(dev));
    }
  }
}

TEST(NnConv, Conv2dTakesPerAxisSizes) {
  const int H = 5, W = 6, Cin = 2, Cout = 3;
  nn::Conv2d conv(Cin, Cout, {2, 3}, {1, 2}, 1);
  EXPECT_EQ(parameter(conv, "weight").shape(), (Shape{Cout, 2, 3, Cin}));
  expect_within(parameter(conv, "weight"), 1 / std::sqrt(Cin * 6.0), "weight");
  auto x = draw(H * W * Cin, 10);
  auto w = values(parameter(conv, "weight"));
  const int OH = (H + 2 - 2) / 1 + 1, OW = (W + 2 - 3) / 2 + 1;
  std::vector<double> want;
  for (int oh = 0; oh < OH; ++oh) {
    for (int ow = 0; ow < OW; ++ow) {
      for (int o = 0; o < Cout; ++o) {
        double acc = 0;
        for (int kh = 0; kh < 2; ++kh) {
          for (int kw = 0; kw < 3; ++kw) {
            const int h = oh + kh - 1, c = ow * 2 + kw - 1;
            if (h < 0 || h >= H || c < 0 || c >= W) continue;
            for (int i = 0; i < Cin; ++i)
              acc += x[(h * W + c) * Cin + i] * w[((o * 2 + kh) * 3 + kw) * Cin + i];
          }
        }
        want.push_back(acc);
      }
    }
  }
  array y = conv(make(x, {1, H, W, Cin}, float32));
  EXPECT_EQ(y.shape(), (Shape{1, OH, OW, Cout}));
  expect_close(values(y), want, 1e-5, 1e-5, "conv2d");
}

TEST(NnConv, Conv3dAndTransposedConvolutionsHaveMlxShapes) {
  nn::Conv3d conv3(2, 4, 3, 1, 1);
  EXPECT_EQ(parameter(conv3, "weight").shape(), (Shape{4, 3, 3, 3, 2}));
  expect_within(parameter(conv3, "weight"), 1 / std::sqrt(2 * 27.0), "conv3d weight");
  EXPECT_EQ(conv3(zeros({1, 4, 5, 6, 2})).shape(), (Shape{1, 4, 5, 6, 4}));
  nn::ConvTranspose2d t2(3, 2, {2, 3}, 2, 0, 1, {1, 0});
  EXPECT_EQ(parameter(t2, "weight").shape(), (Shape{2, 2, 3, 3}));
  // (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 + output_padding
  EXPECT_EQ(t2(zeros({1, 4, 5, 3})).shape(), (Shape{1, 3 * 2 + 1 + 1 + 1, 4 * 2 + 2 + 1, 2}));
  nn::ConvTranspose3d t3(1, 2, 2, 2);
  EXPECT_EQ(t3(zeros({1, 2, 2, 2, 1})).shape(), (Shape{1, 4, 4, 4, 2}));
}

TEST(NnConv, ConvTranspose1dScattersEachInputThroughTheKernel) {
  const int L = 4, Cin = 2, Cout = 3, K = 3, stride = 2, pad = 1, dil = 1, out_pad = 1;
  nn::ConvTranspose1d conv(Cin, Cout, K, stride, pad, dil, out_pad);
  conv.update(tree_unflatten({{"bias", make(draw(Cout, 12), {Cout}, float32)}}));
  auto x = draw(L * Cin, 13);
  auto w = values(parameter(conv, "weight")), b = values(parameter(conv, "bias"));
  const int out_len = (L - 1) * stride - 2 * pad + dil * (K - 1) + 1 + out_pad;
  std::vector<double> want(out_len * Cout);
  for (int t = 0; t < out_len; ++t) {
    for (int o = 0; o < Cout; ++o) want[t * Cout + o] = b[o];
  }
  for (int s = 0; s < L; ++s) {
    for (int k = 0; k < K; ++k) {
      const int t = s * stride + k * dil - pad;
      if (t < 0 || t >= out_len) continue;
      for (int o = 0; o < Cout; ++o) {
        for (int i = 0; i < Cin; ++i) want[t * Cout + o] += x[s * Cin + i] * w[(o * K + k) * Cin + i];
      }
    }
  }
  array y = conv(make(x, {1, L, Cin}, float32));
  EXPECT_EQ(y.shape(), (Shape{1, out_len, Cout}));
  expect_close(values(y), want, 1e-5, 1e-5, "conv_transpose1d");
}

TEST(NnConv, BadArgumentsThrow) {
  EXPECT_THROW(nn::Conv1d(3, 4, 2, 1, 0, 1, 2), std::invalid_argument);  // 3 channels, 2 groups
  EXPECT_THROW(nn::Conv2d(2, 4, {2, 2, 2}), std::invalid_argument);      // three kernel sizes
  EXPECT_THROW(nn::Conv2d(2, 4, 0), std::invalid_argument);
  nn::Conv2d conv(2, 4, 3);
  EXPECT_THROW(conv(zeros({1, 5, 5, 3})), std::invalid_argument);  // wrong channel count
}

// ---- normalization ----

namespace {

// Normalizes each group of `members` (indices into x) and applies weight/bias per feature.
void normalize_group(const std::vector<double>& x, std::vector<double>& out,
                     const std::vector<size_t>& members, double eps) {
  double mu = 0, var = 0;
  for (size_t i : members) mu += x[i] / members.size();
  for (size_t i : members) var += (x[i] - mu) * (x[i] - mu) / members.size();
  for (size_t i : members) out[i] = (x[i] - mu) / std::sqrt(var + eps);
}

std::vector<double> affine(std::vector<double> y, const std::vector<double>& w,
                           const std::vector<double>& b) {
  const size_t c = w.size();
  for (size_t i = 0; i < y.size(); ++i) y[i] = y[i] * w[i % c] + b[i % c];
  return y;
}

// Random affine parameters of `dims` for a normalization layer.
void randomize_affine(nn::Module& layer, int dims, unsigned seed) {
  layer.update(tree_unflatten({{"weight", make(draw(dims, seed), {dims}, float32)},
                               {"bias", make(draw(dims, seed + 1), {dims}, float32)}}));
}

}  // namespace

TEST(NnNorm, LayerNormNormalizesTheLastAxisThenScalesAndShifts) {
  const int d = 5;
  nn::LayerNorm ln(d);
  EXPECT_EQ(leaf_names(ln.parameters()), (Names{"weight", "bias"}));
  EXPECT_EQ(leaf_names(nn::LayerNorm(d, 1e-5f, true, false).parameters()), (Names{"weight"}));
  EXPECT_TRUE(nn::LayerNorm(d, 1e-5f, false).parameters().empty());
  randomize_affine(ln, d, 20);
  auto x = draw(3 * d, 21, -2, 4);
  std::vector<double> want(x.size());
  for (size_t r = 0; r < 3; ++r) {
    std::vector<size_t> row;
    for (int i = 0; i < d; ++i) row.push_back(r * d + i);
    normalize_group(x, want, row, 1e-5);
  }
  want = affine(want, values(parameter(ln, "weight")), values(parameter(ln, "bias")));
  for (const auto& dev : test::test_devices()) {
    StreamContext ctx(dev);
    expect_close(values(ln(make(x, {3, d}, float32))), want, 1e-5, 1e-5,
                 "layer norm " + test::device_name(dev));
  }
}

TEST(NnNorm, RmsNormScalesByTheRootMeanSquare) {
  const int d = 4;
  nn::RMSNorm norm(d, 1e-6f);
  norm.update(tree_unflatten({{"weight", make(draw(d, 22), {d}, float32)}}));
  auto x = draw(2 * d, 23);
  auto w = values(parameter(norm, "weight"));
  std::vector<double> want;
  for (int r = 0; r < 2; ++r) {
    double ms = 0;
    for (int i = 0; i < d; ++i) ms += x[r * d + i] * x[r * d + i] / d;
    for (int i = 0; i < d; ++i) want.push_back(x[r * d + i] / std::sqrt(ms + 1e-6) * w[i]);
  }
  expect_close(values(norm(make(x, {2, d}, float32))), want, 1e-5, 1e-6, "rms norm");
}

TEST(NnNorm, GroupNormGroupsFeaturesAsMlxOrAsPytorch) {
  const int B = 2, S = 3, dims = 6, G = 2;
  auto x = draw(B * S * dims, 24, -1, 3);
  for (bool pytorch : {false, true}) {
    nn::GroupNorm gn(G, dims, 1e-5f, true, pytorch);
    EXPECT_EQ(leaf_names(gn.parameters()), (Names{"bias", "weight"}));
    randomize_affine(gn, dims, 25);
    std::vector<double> want(x.size());
    for (int b = 0; b < B; ++b) {
      for (int g = 0; g < G; ++g) {
        std::vector<size_t> members;
        for (int s = 0; s < S; ++s) {
          for (int f = 0; f < dims; ++f) {
            const int group = pytorch ? f / (dims / G) : f % G;
            if (group == g) members.push_back((static_cast<size_t>(b) * S + s) * dims + f);
          }
        }
        normalize_group(x, want, members, 1e-5);
      }
    }
    want = affine(want, values(parameter(gn, "weight")), values(parameter(gn, "bias")));
    expect_close(values(gn(make(x, {B, S, dims}, float32))), want, 1e-5, 1e-5,
                 pytorch ? "pytorch grouping" : "mlx grouping");
  }
  EXPECT_THROW(nn::GroupNorm(4, 6, 1e-5f, true, true), std::invalid_argument);
}

TEST(NnNorm, InstanceNormNormalizesEachChannelOverSpace) {
  const int B = 2, H = 2, W = 3, C = 2;
  nn::InstanceNorm norm(C);
  EXPECT_TRUE(norm.parameters().empty()) << "affine defaults to false";
  auto x = draw(B * H * W * C, 26);
  std::vector<double> want(x.size());
  for (int b = 0; b < B; ++b) {
    for (int c = 0; c < C; ++c) {
      std::vector<size_t> members;
      for (int p = 0; p < H * W; ++p) members.push_back((static_cast<size_t>(b) * H * W + p) * C + c);
      normalize_group(x, want, members, 1e-5);
    }
  }
  expect_close(values(norm(make(x, {B, H, W, C}, float32))), want, 1e-5, 1e-5, "instance norm");
  EXPECT_EQ(leaf_names(nn::InstanceNorm(C, 1e-5f, true).parameters()), (Names{"weight", "bias"}));
}

TEST(NnNorm, NormGradientsMatchTheFormula) {
  const int d = 4;
  nn::LayerNorm ln(d);
  randomize_affine(ln, d, 27);
  array x = make(draw(3 * d, 28), {3, d}, float32);
  array cot = make(draw(3 * d, 29), {3, d}, float32);
  test::expect_parameter_gradients(
      ln, [&] { return sum(multiply(ln(x), cot)); },
      [&](const std::vector<array>& p) {
        array n = divide(subtract(x, mean(x, -1, true)), sqrt(add(var(x, -1, true), array(1e-5f))));
        return sum(multiply(add(multiply(n, p[0]), p[1]), cot));
      });
  nn::GroupNorm gn(2, d);
  randomize_affine(gn, d, 30);
  test::expect_parameter_gradients(
      gn, [&] { return sum(multiply(gn(x), cot)); },
      [&](const std::vector<array>& p) {  // p: bias, weight
        array g = reshape(x, {3, -1, 2});
        array n = divide(subtract(g, mean(g, 1, true)), sqrt(add(var(g, 1, true), array(1e-5f))));
        return sum(multiply(add(multiply(reshape(n, {3, d}), p[1]), p[0]), cot));
      });
}

TEST(NnBatchNorm, TrainingNormalizesByTheBatchAndUpdatesRunningStatistics) {
  const int N = 4, L = 3, C = 2;
  nn::BatchNorm bn(C);
  EXPECT_EQ(leaf_names(bn.parameters()), (Names{"weight", "bias", "running_mean", "running_var"}));
  EXPECT_EQ(leaf_names(bn.trainable_parameters()), (Names{"weight", "bias"}));
  auto x = draw(N * L * C, 31, -1, 3);
  std::vector<double> want(x.size()), mu(C), var(C);
  for (int c = 0; c < C; ++c) {
    std::vector<size_t> members;
    for (int p = 0; p < N * L; ++p) members.push_back(static_cast<size_t>(p) * C + c);
    for (size_t i : members) mu[c] += x[i] / members.size();
    for (size_t i : members) var[c] += (x[i] - mu[c]) * (x[i] - mu[c]) / members.size();
    normalize_group(x, want, members, 1e-5);
  }
  expect_close(values(bn(make(x, {N, L, C}, float32))), want, 1e-5, 1e-5, "training output");
  expect_close(values(parameter(bn, "running_mean")), {0.1 * mu[0], 0.1 * mu[1]}, 1e-5, 1e-6, "running_mean");
  expect_close(values(parameter(bn, "running_var")), {0.9 + 0.1 * var[0], 0.9 + 0.1 * var[1]}, 1e-5, 1e-6,
               "running_var");
}

TEST(NnBatchNorm, EvalModeNormalizesByTheRunningStatistics) {
  const int C = 3;
  nn::BatchNorm bn(C);
  bn.update(tree_unflatten(
      {{"running_mean", array({1.0f, -1.0f, 0.5f})}, {"running_var", array({4.0f, 1.0f, 0.25f})}}));
  bn.eval();
  auto x = draw(2 * C, 32);
  std::vector<double> m = {1.0, -1.0, 0.5}, v = {4.0, 1.0, 0.25}, want;
  for (int i = 0; i < 2 * C; ++i) want.push_back((x[i] - m[i % C]) / std::sqrt(v[i % C] + 1e-5));
  expect_close(values(bn(make(x, {2, C}, float32))), want, 1e-5, 1e-6, "eval output");
  EXPECT_EQ(values(parameter(bn, "running_mean")), m) << "eval mode leaves the statistics alone";
}

TEST(NnBatchNorm, RunningStatisticsStayFrozenAndOutOfGradients) {
  const int C = 2;
  nn::BatchNorm bn(C);
  bn.unfreeze();
  EXPECT_EQ(leaf_names(bn.trainable_parameters()), (Names{"weight", "bias"}));
  randomize_affine(bn, C, 33);
  array x = make(draw(5 * C, 34), {5, C}, float32);
  array cot = make(draw(5 * C, 35), {5, C}, float32);
  test::expect_parameter_gradients(
      bn, [&] { return sum(multiply(bn(x), cot)); },
      [&](const std::vector<array>& p) {
        array n = divide(subtract(x, mean(x, 0, true)), sqrt(add(var(x, 0, true), array(1e-5f))));
        return sum(multiply(add(multiply(n, p[0]), p[1]), cot));
      });
  // Running statistics written while differentiating are ordinary arrays afterwards.
  auto mu = values(mean(x, 0));
  expect_close(values(parameter(bn, "running_mean")), {0.1 * mu[0], 0.1 * mu[1]}, 1e-5, 1e-6,
               "after gradients");
  EXPECT_FALSE(parameter(bn, "running_mean").is_tracer());
}

TEST(NnBatchNorm, RejectsInputsOfTheWrongRank) {
  nn::BatchNorm bn(2);
  EXPECT_THROW(bn(zeros({2})), std::invalid_argument);
  EXPECT_THROW(bn(zeros({1, 2, 2, 2, 2})), std::invalid_argument);
  EXPECT_THROW(bn(zeros({4, 3})), std::invalid_argument);
}

// ---- dropout ----

TEST(NnDropout, TrainingZeroesAboutPOfTheElementsAndScalesTheRest) {
  nn::Dropout drop(0.25f);
  array y = drop(ones({20000}));
  size_t zeros_seen = 0;
  for (double v : values(y)) {
    if (v == 0.0) {
      ++zeros_seen;
    } else {
      ASSERT_NEAR(v, 1 / 0.75, 1e-6);
    }
  }
  EXPECT_NEAR(zeros_seen / 20000.0, 0.25, 0.02);
  EXPECT_EQ(drop(ones({4}, float16)).dtype(), float16);
}

TEST(NnDropout, IsTheIdentityInEvalModeAndForPZero) {
  nn::Dropout drop(0.5f);
  array x = make(draw(100, 36), {100}, float32);
  drop.eval();
  EXPECT_EQ(values(drop(x)), values(x));
  nn::Dropout none(0.0f);
  EXPECT_EQ(values(none(x)), values(x));
  EXPECT_THROW(nn::Dropout(1.0f), std::invalid_argument);
  EXPECT_THROW(nn::Dropout(-0.1f), std::invalid_argument);
}

TEST(NnDropout, Dropout2dZeroesWholeChannels) {
  nn::Dropout2d drop(0.5f);
  const int N = 3, H = 4, W = 4, C = 8;
  auto y = values(drop(ones({N, H, W, C})));
  for (int n = 0; n < N; ++n) {
    for (int c = 0; c < C; ++c) {
      const double first = y[(n * H * W) * C + c];
      EXPECT_TRUE(first == 0.0 || first == 2.0);
      for (int p = 0; p < H * W; ++p)
        ASSERT_EQ(y[(n * H * W + p) * C + c], first) << "channel " << n << "," << c;
    }
  }
  EXPECT_THROW(drop(ones({2, 2})), std::invalid_argument);
  nn::Dropout3d drop3(0.5f);
  EXPECT_EQ(drop3(ones({2, 2, 2, 2, 3})).shape(), (Shape{2, 2, 2, 2, 3}));
  EXPECT_THROW(drop3(ones({2, 2, 2})), std::invalid_argument);
}

// ---- Sequential ----

TEST(NnSequential, CallsItsLayersInOrderAndNumbersThemAsMlx) {
  auto first = std::make_shared<nn::Linear>(3, 4);
  auto second = std::make_shared<nn::Linear>(4, 2);
  nn::Sequential model(
      first, [](const array& x) { return tanh(x); }, second);
  EXPECT_EQ(leaf_names(model.parameters()),
            (Names{"layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias"}));
  array x = make(draw(2 * 3, 37), {2, 3}, float32);
  EXPECT_EQ(values(model(x)), values((*second)(tanh((*first)(x)))));
  test::expect_parameter_gradients(
      model, [&] { return sum(square(model(x))); },
      [&](const std::vector<array>& p) {
        array h = tanh(add(matmul(x, transpose(p[0])), p[1]));
        return sum(square(add(matmul(h, transpose(p[2])), p[3])));
      });
  nn::Sequential from_list({first, second});
  EXPECT_EQ(from_list.layers().size(), 2u);
}

// ---- pooling ----

namespace {

// Pooling of x [N, S..., C] over windows (reference): `max` or mean, padding filled with -inf
// (max) or 0 (mean).
std::vector<double> pool_ref(const std::vector<double>& x, const Shape& shape, const std::vector<int>& kernel,
                             const std::vector<int>& stride, const std::vector<int>& pad, bool max) {
  const int n_sp = static_cast<int>(kernel.size());
  const int N = shape[0], C = shape.back();
  std::vector<int> size(n_sp), out(n_sp);
  int out_count = 1, win_count = 1;
  for (int i = 0; i < n_sp; ++i) {
    size[i] = shape[1 + i];
    out[i] = (size[i] + 2 * pad[i] - kernel[i]) / stride[i] + 1;
    out_count *= out[i];
    win_count *= kernel[i];
  }
  std::vector<double> y;
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < out_count; ++o) {
      for (int c = 0; c < C; ++c) {
        double acc = max ? -INFINITY : 0.0;
        for (int w = 0; w < win_count; ++w) {
          int rem_o = o, rem_w = w;
          size_t flat = 0;
          bool inside = true;
          for (int i = n_sp - 1, mul = 1; i >= 0; --i) {
            const int pos = (rem_o % out[i]) * stride[i] + rem_w % kernel[i] - pad[i];
            rem_o /= out[i];
            rem_w /= kernel[i];
            inside = inside && pos >= 0 && pos < size[i];
            flat += static_cast<size_t>(pos) * mul;
            mul *= size[i];
          }
          const double v = inside ? x[(n * (x.size() / N / C) + flat) * C + c] : (max ? -INFINITY : 0.0);
          acc = max ? std::max(acc, v) : acc + v / win_count;
        }
        y.push_back(acc);
      }
    }
  }
  return y;
}

}  // namespace

TEST(NnPool, MaxAndAveragePoolingMatchTheWindowFormula) {
  auto x1 = draw(2 * 7 * 3, 38);
  auto x2 = draw(2 * 5 * 6 * 2, 39);
  for (const auto& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const std::string where = test::device_name(dev);
    expect_close(values(nn::MaxPool1d(3, 2, 1)(make(x1, {2, 7, 3}, float32))),
                 pool_ref(x1, {2, 7, 3}, {3}, {2}, {1}, true), 1e-6, 1e-6, "MaxPool1d " + where);
    expect_close(values(nn::AvgPool1d(2)(make(x1, {2, 7, 3}, float32))),
                 pool_ref(x1, {2, 7, 3}, {2}, {2}, {0}, false), 1e-6, 1e-6, "AvgPool1d " + where);
    expect_close(values(nn::MaxPool2d({2, 3}, 1)(make(x2, {2, 5, 6, 2}, float32))),
                 pool_ref(x2, {2, 5, 6, 2}, {2, 3}, {1, 1}, {0, 0}, true), 1e-6, 1e-6, "MaxPool2d " + where);
    expect_close(values(nn::AvgPool2d(2, {1, 2}, {1, 0})(make(x2, {2, 5, 6, 2}, float32))),
                 pool_ref(x2, {2, 5, 6, 2}, {2, 2}, {1, 2}, {1, 0}, false), 1e-6, 1e-6,
                 "AvgPool2d padded " + where);
    expect_close(values(nn::MaxPool2d(2)(make(x2, {2, 5, 6, 2}, float32))),
                 pool_ref(x2, {2, 5, 6, 2}, {2, 2}, {2, 2}, {0, 0}, true), 1e-6, 1e-6,
                 "MaxPool2d partial tiles " + where);
  }
  auto x3 = draw(1 * 4 * 4 * 2, 40);
  EXPECT_EQ(nn::AvgPool2d(2)(make(x3, {1, 4, 4, 2}, float32)).shape(), (Shape{1, 2, 2, 2}));
  expect_close(values(nn::AvgPool2d(2)(make(x3, {1, 4, 4, 2}, float32))),
               pool_ref(x3, {1, 4, 4, 2}, {2, 2}, {2, 2}, {0, 0}, false), 1e-6, 1e-6, "tiles");
}

TEST(NnPool, PoolingIsDifferentiable) {
  auto x = draw(1 * 5 * 4 * 1, 41);
  auto cot = make(draw(1 * 4 * 2 * 1, 42), {1, 4, 2, 1}, float64);
  nn::MaxPool2d pool({2, 3}, 1);
  auto loss = [&](const array& in) { return sum(multiply(pool(in), cot)); };
  auto g = values(grad(loss)(make(x, {1, 5, 4, 1}, float64)));
  for (size_t i = 0; i < x.size(); ++i) {
    auto up = x, down = x;
    up[i] += 1e-6;
    down[i] -= 1e-6;
    const double fd = (loss(make(up, {1, 5, 4, 1}, float64)).item<double>() -
                       loss(make(down, {1, 5, 4, 1}, float64)).item<double>()) /
                      2e-6;
    EXPECT_NEAR(g[i], fd, 1e-6) << "element " << i;
  }
}

TEST(NnPool, BadArgumentsThrow) {
  EXPECT_THROW(nn::MaxPool2d({2, 2, 2}), std::invalid_argument);
  EXPECT_THROW(nn::AvgPool1d(0), std::invalid_argument);
  EXPECT_THROW(nn::MaxPool1d(2)(zeros({4, 3})), std::invalid_argument);
  EXPECT_THROW(nn::MaxPool1d(5)(zeros({1, 3, 2})), std::invalid_argument);
}
