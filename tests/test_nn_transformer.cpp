// Attention and transformer layers, RoPE and sinusoidal encodings: MLX's parameter names,
// values against float64 formulas written here from the layers' parameters, the causal mask,
// gradients through nn::value_and_grad, checkpointed layers (nn::checkpoint), bad input.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "braid/fast.h"
#include "braid/nn.h"
#include "nn_layers_support.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using test::draw;
using test::expect_close;
using test::leaf_names;
using test::make;
using test::parameter;
using test::values;
using Names = std::vector<std::string>;

namespace {

// "prefix.name", or "name" at the top.
std::string at(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// The layers' formulas in float64, from the model's parameters at `prefix`.
struct Reference {
  using UnaryFn = std::function<array(const array&)>;
  const nn::Module& model;

  array p(const std::string& path) const { return astype(parameter(model, path), float64); }

  array linear(const array& x, const std::string& prefix, bool bias = true) const {
    array y = matmul(x, transpose(p(at(prefix, "weight"))));
    return bias ? add(y, p(at(prefix, "bias"))) : y;
  }

  array layer_norm(const array& x, const std::string& prefix) const {
    array centered = subtract(x, mean(x, -1, true));
    array n = divide(centered, sqrt(add(mean(square(centered), -1, true), array(1e-5, float64))));
    return add(multiply(n, p(at(prefix, "weight"))), p(at(prefix, "bias")));
  }

  static array softmax_rows(const array& s) {
    array e = exp(subtract(s, max(s, -1, true)));
    return divide(e, sum(e, -1, true));
  }

  array attention(const array& q_in, const array& k_in, const array& v_in, int heads,
                  const std::string& prefix, const std::optional<array>& mask = std::nullopt) const {
    auto split = [heads](const array& x) {
      return transpose(reshape(x, {x.shape(0), x.shape(1), heads, -1}), {0, 2, 1, 3});
    };
    array q = split(linear(q_in, at(prefix, "query_proj"), false));
    array k = split(linear(k_in, at(prefix, "key_proj"), false));
    array v = split(linear(v_in, at(prefix, "value_proj"), false));
    array s =
        divide(matmul(q, swapaxes(k, -1, -2)), array(std::sqrt(static_cast<double>(q.shape(-1))), float64));
    if (mask) s = add(s, astype(*mask, float64));
    array o = matmul(softmax_rows(s), v);
    o = reshape(transpose(o, {0, 2, 1, 3}), {o.shape(0), o.shape(2), -1});
    return linear(o, at(prefix, "out_proj"), false);
  }

  array mlp(const array& x, const std::string& prefix, const UnaryFn& activation) const {
    return linear(activation(linear(x, at(prefix, "linear1"))), at(prefix, "linear2"));
  }
};

array relu64(const array& x) { return maximum(x, array(0.0, float64)); }

array encoder_layer_ref(const Reference& r, const array& x, int heads, const std::string& prefix,
                        bool norm_first, const std::optional<array>& mask,
                        const Reference::UnaryFn& act = relu64) {
  if (norm_first) {
    array y = r.layer_norm(x, at(prefix, "ln1"));
    array h = add(x, r.attention(y, y, y, heads, at(prefix, "attention"), mask));
    return add(h, r.mlp(r.layer_norm(h, at(prefix, "ln2")), prefix, act));
  }
  array h =
      r.layer_norm(add(x, r.attention(x, x, x, heads, at(prefix, "attention"), mask)), at(prefix, "ln1"));
  return r.layer_norm(add(h, r.mlp(h, prefix, act)), at(prefix, "ln2"));
}

array decoder_layer_ref(const Reference& r, const array& x, const array& memory, int heads,
                        const std::string& prefix, bool norm_first, const std::optional<array>& x_mask) {
  if (norm_first) {
    array y = r.layer_norm(x, at(prefix, "ln1"));
    array h = add(x, r.attention(y, y, y, heads, at(prefix, "self_attention"), x_mask));
    y = r.layer_norm(h, at(prefix, "ln2"));
    h = add(h, r.attention(y, memory, memory, heads, at(prefix, "cross_attention")));
    return add(h, r.mlp(r.layer_norm(h, at(prefix, "ln3")), prefix, relu64));
  }
  array h = r.layer_norm(add(x, r.attention(x, x, x, heads, at(prefix, "self_attention"), x_mask)),
                         at(prefix, "ln1"));
  h = r.layer_norm(add(h, r.attention(h, memory, memory, heads, at(prefix, "cross_attention"))),
                   at(prefix, "ln2"));
  return r.layer_norm(add(h, r.mlp(h, prefix, relu64)), at(prefix, "ln3"));
}

// Random affine parameters for every LayerNorm, so that the references see them.
void randomize_norms(nn::Module& model, unsigned seed) {
  std::vector<std::pair<std::string, array>> updates;
  for (auto& [name, value] : tree_flatten(model.parameters())) {
    if (name.find(".ln") != std::string::npos || name.rfind("ln", 0) == 0) {
      updates.emplace_back(name, make(draw(value.size(), seed++), value.shape(), float32));
    }
  }
  model.update(tree_unflatten(updates));
}

}  // namespace

TEST(NnAttention, HasMlxProjectionsAndShapes) {
  nn::MultiHeadAttention mha(8, 2, std::nullopt, 6, std::nullopt, 4, 10);
  EXPECT_EQ(leaf_names(mha.parameters()),
            (Names{"query_proj.weight", "key_proj.weight", "value_proj.weight", "out_proj.weight"}));
  EXPECT_EQ(parameter(mha, "query_proj.weight").shape(), (Shape{8, 8}));
  EXPECT_EQ(parameter(mha, "key_proj.weight").shape(), (Shape{8, 6}));
  EXPECT_EQ(parameter(mha, "value_proj.weight").shape(), (Shape{4, 6}))
      << "value_input_dims defaults to key's";
  EXPECT_EQ(parameter(mha, "out_proj.weight").shape(), (Shape{10, 4}));
  EXPECT_EQ(mha(zeros({2, 3, 8}), zeros({2, 5, 6}), zeros({2, 5, 6})).shape(), (Shape{2, 3, 10}));
  EXPECT_EQ(leaf_names(nn::MultiHeadAttention(4, 2, {}, {}, {}, {}, {}, true).parameters()).size(), 8u);
}

TEST(NnAttention, MatchesSoftmaxAttentionOfTheProjectionsOnEveryDevice) {
  const int B = 2, L = 4, S = 3, dims = 6, heads = 3;
  nn::MultiHeadAttention mha(dims, heads);
  Reference ref{mha};
  auto q = draw(B * L * dims, 1), kv = draw(B * S * dims, 2), bias = draw(L * S, 3);
  array q64 = make(q, {B, L, dims}, float64), kv64 = make(kv, {B, S, dims}, float64);
  for (const auto& dev : test::test_devices()) {
    StreamContext ctx(dev);
    array y = mha(make(q, {B, L, dims}, float32), make(kv, {B, S, dims}, float32),
                  make(kv, {B, S, dims}, float32), make(bias, {L, S}, float32));
    expect_close(values(y), values(ref.attention(q64, kv64, kv64, heads, "", make(bias, {L, S}, float64))),
                 1e-4, 1e-5, "attention " + test::device_name(dev));
  }
}

TEST(NnAttention, AdditiveCausalMaskHidesLaterKeys) {
  array mask = nn::MultiHeadAttention::create_additive_causal_mask(3);
  EXPECT_EQ(mask.dtype(), float32);
  const double low = -FLT_MAX;
  EXPECT_EQ(values(mask), (std::vector<double>{0, low, low, 0, 0, low, 0, 0, 0}));
  EXPECT_EQ(values(nn::MultiHeadAttention::create_additive_causal_mask(2, float16)),
            (std::vector<double>{0, -65504, 0, 0}));
  EXPECT_THROW(nn::MultiHeadAttention::create_additive_causal_mask(2, int32), std::invalid_argument);
}

TEST(NnAttention, GradientsMatchTheFormula) {
  const int B = 1, L = 3, dims = 4, heads = 2;
  nn::MultiHeadAttention mha(dims, heads);
  array x = make(draw(B * L * dims, 4), {B, L, dims}, float32);
  array mask = nn::MultiHeadAttention::create_additive_causal_mask(L);
  test::expect_parameter_gradients(
      mha, [&] { return sum(square(mha(x, x, x, mask))); },
      [&](const std::vector<array>& p) {  // query, key, value, out weights
        auto heads_of = [&](const array& w) {
          return transpose(reshape(matmul(x, transpose(w)), {B, L, heads, -1}), {0, 2, 1, 3});
        };
        array s = add(
            divide(matmul(heads_of(p[0]), swapaxes(heads_of(p[1]), -1, -2)), array(std::sqrt(2.0f))), mask);
        array o = matmul(softmax(s, -1), heads_of(p[2]));
        o = reshape(transpose(o, {0, 2, 1, 3}), {B, L, dims});
        return sum(square(matmul(o, transpose(p[3]))));
      },
      1e-4);
}

TEST(NnAttention, BadArgumentsThrow) {
  EXPECT_THROW(nn::MultiHeadAttention(6, 4), std::invalid_argument);
  nn::MultiHeadAttention mha(4, 2);
  EXPECT_THROW(mha(zeros({3, 4}), zeros({3, 4}), zeros({3, 4})), std::invalid_argument);
  EXPECT_THROW(mha(zeros({1, 3, 4}), zeros({1, 2, 4}), zeros({1, 2, 4}), zeros({3, 3})),
               std::invalid_argument);
}

TEST(NnTransformer, EncoderLayerMatchesItsFormulaWithNormFirstOrLast) {
  const int B = 2, L = 3, dims = 4, heads = 2;
  auto x = draw(B * L * dims, 5);
  array mask = nn::MultiHeadAttention::create_additive_causal_mask(L);
  for (bool norm_first : {true, false}) {
    nn::TransformerEncoderLayer layer(dims, heads, 8, 0.0f, {}, norm_first);
    randomize_norms(layer, 6);
    EXPECT_EQ(
        leaf_names(layer.parameters()),
        (Names{"attention.query_proj.weight", "attention.key_proj.weight", "attention.value_proj.weight",
               "attention.out_proj.weight", "ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias",
               "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"}));
    array y = layer(make(x, {B, L, dims}, float32), mask);
    array want = encoder_layer_ref(Reference{layer}, make(x, {B, L, dims}, float64), heads, "", norm_first,
                                   astype(mask, float64));
    expect_close(values(y), values(want), 1e-4, 1e-4, norm_first ? "norm first" : "norm last");
  }
}

TEST(NnTransformer, EncoderLayerUsesTheGivenActivation) {
  const int dims = 4;
  nn::TransformerEncoderLayer layer(dims, 1, std::nullopt, 0.0f, [](const array& a) { return tanh(a); });
  EXPECT_EQ(parameter(layer, "linear1.weight").shape(), (Shape{16, dims})) << "mlp_dims defaults to 4 * dims";
  auto x = draw(2 * dims, 7);
  array want = encoder_layer_ref(Reference{layer}, make(x, {1, 2, dims}, float64), 1, "", true, std::nullopt,
                                 [](const array& a) { return tanh(a); });
  expect_close(values(layer(make(x, {1, 2, dims}, float32))), values(want), 1e-4, 1e-4, "tanh");
}

TEST(NnTransformer, DecoderLayerAttendsToMemoryWithNormFirstOrLast) {
  const int B = 1, L = 3, S = 2, dims = 4, heads = 2;
  auto x = draw(B * L * dims, 8), memory = draw(B * S * dims, 9);
  array mask = nn::MultiHeadAttention::create_additive_causal_mask(L);
  for (bool norm_first : {true, false}) {
    nn::TransformerDecoderLayer layer(dims, heads, 8, 0.0f, {}, norm_first);
    randomize_norms(layer, 10);
    EXPECT_EQ(leaf_names(layer.parameters()).size(), 8u + 6u + 4u);
    array y = layer(make(x, {B, L, dims}, float32), make(memory, {B, S, dims}, float32), mask, std::nullopt);
    array want =
        decoder_layer_ref(Reference{layer}, make(x, {B, L, dims}, float64),
                          make(memory, {B, S, dims}, float64), heads, "", norm_first, astype(mask, float64));
    expect_close(values(y), values(want), 1e-4, 1e-4, norm_first ? "norm first" : "norm last");
  }
}

TEST(NnTransformer, EncoderDecoderModelChainsItsStacks) {
  const int B = 1, Ls = 3, Lt = 2, dims = 4, heads = 2;
  nn::Transformer model(dims, heads, 2, 1, 8);
  randomize_norms(model, 11);
  auto names = leaf_names(model.parameters());
  EXPECT_EQ(names.front(), "encoder.layers.0.attention.query_proj.weight");
  EXPECT_EQ(names.back(), "decoder.ln.bias");
  EXPECT_EQ(names.size(), 2 * 12 + 2 + 18 + 2u);
  auto src = draw(B * Ls * dims, 12), tgt = draw(B * Lt * dims, 13);
  array tgt_mask = nn::MultiHeadAttention::create_additive_causal_mask(Lt);
  array y = model(make(src, {B, Ls, dims}, float32), make(tgt, {B, Lt, dims}, float32), std::nullopt,
                  tgt_mask, std::nullopt);
  Reference r{model};
  array memory = make(src, {B, Ls, dims}, float64);
  for (int i = 0; i < 2; ++i) {
    memory = encoder_layer_ref(r, memory, heads, "encoder.layers." + std::to_string(i), true, std::nullopt);
  }
  memory = r.layer_norm(memory, "encoder.ln");
  array want = decoder_layer_ref(r, make(tgt, {B, Lt, dims}, float64), memory, heads, "decoder.layers.0",
                                 true, astype(tgt_mask, float64));
  want = r.layer_norm(want, "decoder.ln");
  expect_close(values(y), values(want), 1e-4, 1e-4, "transformer");
}

TEST(NnTransformer, StackGradientsReachEveryLayer) {
  nn::TransformerEncoder encoder(2, 4, 2, 8);
  array x = make(draw(2 * 3 * 4, 14), {2, 3, 4}, float32);
  auto [value, grads] =
      nn::value_and_grad(encoder, [&](const std::vector<array>&) { return sum(square(encoder(x))); })({});
  auto flat = tree_flatten(grads);
  EXPECT_EQ(flat.size(), leaf_names(encoder.trainable_parameters()).size());
  for (auto& [name, g] : flat) {
    double norm = 0;
    for (double v : values(g)) norm += v * v;
    EXPECT_GT(norm, 0.0) << name;
  }
}

// MLX's checkpoint flag: each layer's activations are computed again in the backward pass
// (the activation runs once per layer more), and the loss and every gradient, through all
// three masks and through the memory into the encoder, are those of the same model without it
// (up to the rounding of sums taken in another order).
TEST(NnTransformer, CheckpointedLayersGiveTheSameGradientsAndRunAgainInTheBackwardPass) {
  StreamContext on_cpu(Device::cpu);
  const int B = 2, Ls = 3, Lt = 2, dims = 4, heads = 2, layers = 2;
  int activation_calls = 0;
  auto counting_relu = [&activation_calls](const array& x) {
    ++activation_calls;
    return nn::relu(x);
  };
  random::seed(276);  // the same initial weights in every run, so that a failure reproduces
  for (bool norm_first : {true, false}) {
    nn::Transformer plain(dims, heads, layers, layers, 8, 0.0f, counting_relu, nullptr, nullptr, norm_first);
    nn::Transformer checkpointed(dims, heads, layers, layers, 8, 0.0f, counting_relu, nullptr, nullptr,
                                 norm_first, /*checkpoint=*/true);
    randomize_norms(plain, 21);
    checkpointed.update(plain.parameters());
    array src = make(draw(B * Ls * dims, 22), {B, Ls, dims}, float32);
    array tgt = make(draw(B * Lt * dims, 23), {B, Lt, dims}, float32);
    array src_mask = make(draw(Ls * Ls, 24, -0.5, 0.5), {Ls, Ls}, float32);
    array tgt_mask = nn::MultiHeadAttention::create_additive_causal_mask(Lt);
    array memory_mask = make(draw(Lt * Ls, 25, -0.5, 0.5), {Lt, Ls}, float32);
    auto gradients = [&](nn::Transformer& model) {
      activation_calls = 0;
      auto [loss, grads] = nn::value_and_grad(model, [&](const std::vector<array>&) {
        return sum(square(model(src, tgt, src_mask, tgt_mask, memory_mask)));
      })({});
      auto flat = tree_flatten(grads);
      std::vector<std::pair<std::string, std::vector<double>>> out{{"loss", values(loss)}};
      for (auto& [name, g] : flat) out.emplace_back(name, values(g));
      return std::make_pair(out, activation_calls);
    };
    const auto [want, plain_calls] = gradients(plain);
    const auto [got, checkpointed_calls] = gradients(checkpointed);
    const std::string what = norm_first ? "norm first" : "norm last";
    EXPECT_EQ(plain_calls, 2 * layers) << what;
    EXPECT_EQ(checkpointed_calls, 4 * layers) << what;
    ASSERT_EQ(got.size(), want.size()) << what;
    EXPECT_EQ(want.size(), leaf_names(plain.trainable_parameters()).size() + 1) << what;
    EXPECT_EQ(got[0].second, want[0].second) << what << ", the loss";  // the same forward ops
    for (size_t i = 1; i < want.size(); ++i) {
      // The recomputed layers' cotangents reach a shared input (the memory, a residual) in
      // another order than the plain graph's, so sums may round differently. A reordered sum's
      // error scales with its terms, not its result: an element that cancels to near zero can
      // differ by hundreds of its own ulps. The bound is therefore relative to the tensor's
      // largest element as well as to the element itself (over 300 random initializations the
      // largest difference was 5e-6 of that element; with this seed it is 2e-7).
      EXPECT_EQ(got[i].first, want[i].first) << what;
      double scale = 0;
      for (double w : want[i].second) scale = std::max(scale, std::abs(w));
      expect_close(got[i].second, want[i].second, 1e-5, 1e-5 * scale, what + ", " + want[i].first);
    }
  }
}

// nn::checkpoint of a module's one-array call: the forward value, and the gradients of its
// parameters inside nn::value_and_grad, are those without it.
TEST(NnTransformer, CheckpointOfAModuleKeepsItsValueAndGradients) {
  StreamContext on_cpu(Device::cpu);
  nn::TransformerEncoderLayer layer(4, 2, 8);
  randomize_norms(layer, 31);
  array x = make(draw(2 * 3 * 4, 32), {2, 3, 4}, float32);
  auto plain =
      nn::value_and_grad(layer, [&](const std::vector<array>&) { return sum(square(layer(x))); })({});
  auto checkpointed = nn::value_and_grad(
      layer, [&](const std::vector<array>&) { return sum(square(nn::checkpoint(layer)({x})[0])); })({});
  EXPECT_EQ(values(checkpointed.first), values(plain.first));
  auto want = tree_flatten(plain.second), got = tree_flatten(checkpointed.second);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(values(got[i].second), values(want[i].second)) << want[i].first;
  }
}

// The recomputation reads the parameters through its own table on whichever thread runs the
// backward pass: threads differentiating one checkpointed model at once all get its gradients.
TEST(NnTransformer, CheckpointedEncoderDifferentiatesOnManyThreadsAtOnce) {
  braid_test::Watchdog watchdog;
  constexpr int kThreads = 4;
  nn::TransformerEncoder encoder(2, 4, 2, 8, 0.0f, {}, true, /*checkpoint=*/true);
  randomize_norms(encoder, 41);
  array x = make(draw(2 * 3 * 4, 42), {2, 3, 4}, float32);
  auto vg = nn::value_and_grad(
      encoder, [&](const std::vector<array>& in) { return sum(square(encoder(in[0], std::nullopt))); });
  auto gradients = [&] {
    std::vector<std::vector<double>> out;
    for (const auto& g : tree_leaves(vg({x}).second)) out.push_back(values(g));
    return out;
  };
  const auto want = gradients();
  std::vector<std::vector<std::vector<double>>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { got[t] = gradients(); });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[t], want) << "thread " << t;
}

TEST(NnRoPE, AppliesFastRopeWithItsSettings) {
  nn::RoPE rope(4, true, 500.0f, 2.0f);
  EXPECT_TRUE(rope.parameters().empty());
  array x = make(draw(2 * 3 * 6, 15), {2, 3, 6}, float32);
  EXPECT_EQ(values(rope(x, 5)), values(fast::rope(x, 4, true, 500.0f, 2.0f, 5)));
  EXPECT_EQ(values(rope(x)), values(fast::rope(x, 4, true, 500.0f, 2.0f, 0)));
  EXPECT_THROW(nn::RoPE(3), std::invalid_argument);
}

TEST(NnSinusoidal, EmbedsWithGeometricFrequencies) {
  const int dims = 6;
  nn::SinusoidalPositionalEncoding enc(dims, 0.01f, 2.0f);
  auto x = draw(3, 16, 0, 10);
  std::vector<double> want;
  const int half = dims / 2;
  for (double p : x) {
    std::vector<double> s, c;
    for (int i = 0; i < half; ++i) {
      const double t = 1.0 - static_cast<double>(i) / (half - 1);
      const double sigma = std::exp(t * (std::log(2.0) - std::log(0.01)) + std::log(0.01));
      s.push_back(std::sin(p * sigma) * std::sqrt(2.0 / dims));
      c.push_back(std::cos(p * sigma) * std::sqrt(2.0 / dims));
    }
    want.insert(want.end(), s.begin(), s.end());
    want.insert(want.end(), c.begin(), c.end());
  }
  array y = enc(make(x, {3}, float32));
  EXPECT_EQ(y.shape(), (Shape{3, dims}));
  expect_close(values(y), want, 1e-4, 1e-5, "sinusoidal");
}
