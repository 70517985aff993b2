// nn's recurrent layers (RNN, GRU, LSTM), quantized layers and ALiBi: MLX's parameter names,
// shapes and initialization order, values against step-by-step references in double, and
// gradients against central differences in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nn_layers_support.h"

using namespace braid;
using namespace braid::test;

namespace {

using Names = std::vector<std::string>;
using Vec = std::vector<double>;

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }

// y[o] = sum_i w[row0 + o, i] x[i] over `out` rows of a row-major [*, in] matrix.
Vec rows_times(const Vec& w, int row0, int out, int in, const double* x) {
  Vec y(static_cast<size_t>(out), 0.0);
  for (int o = 0; o < out; ++o) {
    for (int i = 0; i < in; ++i) y[o] += w[static_cast<size_t>(row0 + o) * in + i] * x[i];
  }
  return y;
}

// One recurrent layer's step in double: the next state(s) from the input row and the state(s)
// (empty before the first step). Returns what the layer stacks (hidden, or hidden then cell).
using StepRef = std::function<std::vector<Vec>(const double* x, const std::vector<Vec>& state)>;

// Runs `step` over sequences [batch, len, in] (row-major in `x`); returns each stacked output
// as [batch, len, hidden] row-major.
std::vector<Vec> run_ref(const Vec& x, int batch, int len, int in, const std::vector<Vec>& initial,
                         const StepRef& step, size_t outputs) {
  std::vector<Vec> out(outputs);
  for (int b = 0; b < batch; ++b) {
    std::vector<Vec> state = initial;
    for (int t = 0; t < len; ++t) {
      state = step(&x[(static_cast<size_t>(b) * len + t) * in], state);
      for (size_t k = 0; k < outputs; ++k) out[k].insert(out[k].end(), state[k].begin(), state[k].end());
    }
  }
  return out;
}

StepRef rnn_ref(const nn::Module& m, int in, int h, bool bias, const std::function<double(double)>& f) {
  const Vec wxh = values(parameter(m, "Wxh")), whh = values(parameter(m, "Whh"));
  const Vec b = bias ? values(parameter(m, "bias")) : Vec(h, 0.0);
  return [=](const double* x, const std::vector<Vec>& state) {
    Vec pre = rows_times(wxh, 0, h, in, x);
    if (!state.empty()) {
      const Vec r = rows_times(whh, 0, h, h, state[0].data());
      for (int i = 0; i < h; ++i) pre[i] += r[i];
    }
    for (int i = 0; i < h; ++i) pre[i] = f(pre[i] + b[i]);
    return std::vector<Vec>{pre};
  };
}

StepRef gru_ref(const nn::Module& m, int in, int h, bool bias) {
  const Vec wx = values(parameter(m, "Wx")), wh = values(parameter(m, "Wh"));
  const Vec b = bias ? values(parameter(m, "b")) : Vec(3 * h, 0.0);
  const Vec bhn = bias ? values(parameter(m, "bhn")) : Vec(h, 0.0);
  return [=](const double* x, const std::vector<Vec>& state) {
    const Vec px = rows_times(wx, 0, 3 * h, in, x);
    const bool has = !state.empty();
    const Vec ph = has ? rows_times(wh, 0, 3 * h, h, state[0].data()) : Vec(3 * h, 0.0);
    Vec next(h);
    for (int i = 0; i < h; ++i) {
      const double r = sigmoid_ref(px[i] + b[i] + ph[i]);
      const double z = sigmoid_ref(px[h + i] + b[h + i] + ph[h + i]);
      const double n = std::tanh(px[2 * h + i] + b[2 * h + i] + (has ? r * (ph[2 * h + i] + bhn[i]) : 0.0));
      next[i] = (1 - z) * n + (has ? z * state[0][i] : 0.0);
    }
    return std::vector<Vec>{next};
  };
}

StepRef lstm_ref(const nn::Module& m, int in, int h, bool bias) {
  const Vec wx = values(parameter(m, "Wx")), wh = values(parameter(m, "Wh"));
  const Vec b = bias ? values(parameter(m, "bias")) : Vec(4 * h, 0.0);
  return [=](const double* x, const std::vector<Vec>& state) {
    Vec g = rows_times(wx, 0, 4 * h, in, x);
    const bool has_h = !state.empty() && !state[0].empty(), has_c = !state.empty() && !state[1].empty();
    if (has_h) {
      const Vec r = rows_times(wh, 0, 4 * h, h, state[0].data());
      for (int i = 0; i < 4 * h; ++i) g[i] += r[i];
    }
    Vec hidden(h), cell(h);
    for (int i = 0; i < h; ++i) {
      const double ig = sigmoid_ref(g[i] + b[i]), fg = sigmoid_ref(g[h + i] + b[h + i]);
      const double cg = std::tanh(g[2 * h + i] + b[2 * h + i]), og = sigmoid_ref(g[3 * h + i] + b[3 * h + i]);
      cell[i] = (has_c ? fg * state[1][i] : 0.0) + ig * cg;
      hidden[i] = og * std::tanh(cell[i]);
    }
    return std::vector<Vec>{hidden, cell};
  };
}

// Central differences of `loss` (a float64 scalar of the model) for every trainable parameter
// element, against nn::value_and_grad's gradients.
void expect_gradients_match_differences(nn::Module& model, const std::function<array()>& loss,
                                        const std::string& what) {
  model.set_dtype(float64);
  auto [value, grads] = nn::value_and_grad(model, [&](const std::vector<array>&) { return loss(); })({});
  const auto params = tree_flatten(model.trainable_parameters());
  const auto got = tree_flatten(grads);
  ASSERT_EQ(got.size(), params.size()) << what;
  const double h = 1e-6;
  for (size_t k = 0; k < params.size(); ++k) {
    const auto& [name, p] = params[k];
    const Vec base = values(p);
    Vec want(base.size());
    for (size_t i = 0; i < base.size(); ++i) {
      auto at = [&](double delta) {
        Vec v = base;
        v[i] += delta;
        model.load_weights({{name, make(v, p.shape(), float64)}}, false);
        return loss().item<double>();
      };
      want[i] = (at(h) - at(-h)) / (2 * h);
    }
    model.load_weights({{name, p}}, false);
    expect_close(values(got[k].second), want, 1e-5, 1e-7, what + " gradient of " + name);
  }
}

}  // namespace

// ---- RNN ----

TEST(NnRecurrent, RnnHasMlxNamesShapesAndInitializationOrder) {
  random::seed(3);
  nn::RNN layer(5, 4);
  EXPECT_EQ(leaf_names(layer.parameters()), (Names{"Wxh", "Whh", "bias"}));
  random::seed(3);
  const float k = 0.5f;  // 1 / sqrt(4)
  array wxh = random::uniform(array(-k), array(k), {4, 5});
  array whh = random::uniform(array(-k), array(k), {4, 4});
  array bias = random::uniform(array(-k), array(k), {4});
  EXPECT_EQ(values(parameter(layer, "Wxh")), values(wxh));
  EXPECT_EQ(values(parameter(layer, "Whh")), values(whh));
  EXPECT_EQ(values(parameter(layer, "bias")), values(bias));
  EXPECT_EQ(leaf_names(nn::RNN(5, 4, false).parameters()), (Names{"Wxh", "Whh"}));
}

TEST(NnRecurrent, RnnMatchesTheRecurrenceOnEveryDevice) {
  const int n = 2, len = 5, in = 3, h = 4;
  const Vec x = draw(n * len * in, 11);
  const Vec h0 = draw(n * h, 12);
  for (bool bias : {true, false}) {
    nn::RNN layer(in, h, bias);
    nn::RNN relu_layer(in, h, bias, [](const array& a) { return maximum(a, array(0.0f)); });
    for (const auto& dev : test_devices()) {
      StreamContext ctx(dev);
      const std::string what = std::string(bias ? "bias" : "no bias") + " on " + device_name(dev);
      array y = layer(make(x, {n, len, in}, float32));
      EXPECT_EQ(y.shape(), (Shape{n, len, h}));
      auto tanh_f = [](double v) { return std::tanh(v); };
      expect_close(values(y), run_ref(x, n, len, in, {}, rnn_ref(layer, in, h, bias, tanh_f), 1)[0], 1e-5,
                   1e-6, "rnn " + what);
      // One unbatched sequence, and batches from an initial hidden state.
      array one = layer(make(Vec(x.begin(), x.begin() + len * in), {len, in}, float32));
      EXPECT_EQ(one.shape(), (Shape{len, h}));
      expect_close(values(one), run_ref(x, 1, len, in, {}, rnn_ref(layer, in, h, bias, tanh_f), 1)[0], 1e-5,
                   1e-6, "unbatched " + what);
      array from_h0 = layer(make(x, {n, len, in}, float32), make(h0, {n, h}, float32));
      Vec want;
      for (int b = 0; b < n; ++b) {
        const Vec xb(x.begin() + b * len * in, x.begin() + (b + 1) * len * in);
        const Vec hb(h0.begin() + b * h, h0.begin() + (b + 1) * h);
        const Vec r = run_ref(xb, 1, len, in, {hb}, rnn_ref(layer, in, h, bias, tanh_f), 1)[0];
        want.insert(want.end(), r.begin(), r.end());
      }
      expect_close(values(from_h0), want, 1e-5, 1e-6, "initial hidden " + what);
      // One [hidden] state for the whole batch, and a batch of states for one sequence.
      const Vec h1(h0.begin(), h0.begin() + h);
      expect_close(values(layer(make(x, {n, len, in}, float32), make(h1, {h}, float32))),
                   run_ref(x, n, len, in, {h1}, rnn_ref(layer, in, h, bias, tanh_f), 1)[0], 1e-5, 1e-6,
                   "one state for a batch " + what);
      array fanned =
          layer(make(Vec(x.begin(), x.begin() + len * in), {len, in}, float32), make(h0, {n, h}, float32));
      EXPECT_EQ(fanned.shape(), (Shape{n, len, h}));
      Vec want_fanned;
      for (int b = 0; b < n; ++b) {
        const Vec hb(h0.begin() + b * h, h0.begin() + (b + 1) * h);
        const Vec r = run_ref(x, 1, len, in, {hb}, rnn_ref(layer, in, h, bias, tanh_f), 1)[0];
        want_fanned.insert(want_fanned.end(), r.begin(), r.end());
      }
      expect_close(values(fanned), want_fanned, 1e-5, 1e-6, "states for one sequence " + what);
      auto relu_f = [](double v) { return std::max(v, 0.0); };
      expect_close(values(relu_layer(make(x, {n, len, in}, float32))),
                   run_ref(x, n, len, in, {}, rnn_ref(relu_layer, in, h, bias, relu_f), 1)[0], 1e-5, 1e-6,
                   "relu " + what);
    }
  }
}

// ---- GRU ----

TEST(NnRecurrent, GruAndLstmDrawTheirWeightsInMlxsOrder) {
  const float k = 0.5f;  // 1 / sqrt(4)
  auto draw_uniform = [&](const Shape& shape) { return values(random::uniform(array(-k), array(k), shape)); };
  random::seed(5);
  nn::GRU gru(3, 4);
  random::seed(5);
  for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
           {"Wx", {12, 3}}, {"Wh", {12, 4}}, {"b", {12}}, {"bhn", {4}}}) {
    EXPECT_EQ(values(parameter(gru, name)), draw_uniform(shape)) << "GRU " << name;
  }
  random::seed(6);
  nn::LSTM lstm(3, 4);
  random::seed(6);
  for (const auto& [name, shape] :
       std::vector<std::pair<std::string, Shape>>{{"Wx", {16, 3}}, {"Wh", {16, 4}}, {"bias", {16}}}) {
    EXPECT_EQ(values(parameter(lstm, name)), draw_uniform(shape)) << "LSTM " << name;
  }
}

TEST(NnRecurrent, GruHasMlxNamesAndShapes) {
  nn::GRU layer(5, 4);
  EXPECT_EQ(leaf_names(layer.parameters()), (Names{"Wx", "Wh", "b", "bhn"}));
  EXPECT_EQ(parameter(layer, "Wx").shape(), (Shape{12, 5}));
  EXPECT_EQ(parameter(layer, "Wh").shape(), (Shape{12, 4}));
  EXPECT_EQ(parameter(layer, "b").shape(), (Shape{12}));
  EXPECT_EQ(parameter(layer, "bhn").shape(), (Shape{4}));
  EXPECT_EQ(leaf_names(nn::GRU(5, 4, false).parameters()), (Names{"Wx", "Wh"}));
}

TEST(NnRecurrent, GruMatchesTheGatesOnEveryDevice) {
  const int n = 3, len = 4, in = 2, h = 5;
  const Vec x = draw(n * len * in, 21);
  const Vec h0 = draw(h, 22);
  for (bool bias : {true, false}) {
    nn::GRU layer(in, h, bias);
    for (const auto& dev : test_devices()) {
      StreamContext ctx(dev);
      const std::string what = std::string(bias ? "bias" : "no bias") + " on " + device_name(dev);
      array y = layer(make(x, {n, len, in}, float32));
      EXPECT_EQ(y.shape(), (Shape{n, len, h}));
      expect_close(values(y), run_ref(x, n, len, in, {}, gru_ref(layer, in, h, bias), 1)[0], 1e-5, 1e-6,
                   "gru " + what);
      // One [hidden] state broadcast over the batch, as in MLX.
      array from_h0 = layer(make(x, {n, len, in}, float32), make(h0, {h}, float32));
      expect_close(values(from_h0), run_ref(x, n, len, in, {h0}, gru_ref(layer, in, h, bias), 1)[0], 1e-5,
                   1e-6, "initial hidden " + what);
    }
  }
}

// ---- LSTM ----

TEST(NnRecurrent, LstmHasMlxNamesAndShapes) {
  nn::LSTM layer(3, 2);
  EXPECT_EQ(leaf_names(layer.parameters()), (Names{"Wx", "Wh", "bias"}));
  EXPECT_EQ(parameter(layer, "Wx").shape(), (Shape{8, 3}));
  EXPECT_EQ(parameter(layer, "Wh").shape(), (Shape{8, 2}));
  EXPECT_EQ(parameter(layer, "bias").shape(), (Shape{8}));
  EXPECT_EQ(leaf_names(nn::LSTM(3, 2, false).parameters()), (Names{"Wx", "Wh"}));
}

TEST(NnRecurrent, LstmReturnsHiddenAndCellStatesOfEveryStepOnEveryDevice) {
  const int n = 2, len = 6, in = 3, h = 4;
  const Vec x = draw(n * len * in, 31);
  const Vec h0 = draw(n * h, 32), c0 = draw(n * h, 33);
  nn::LSTM layer(in, h);
  for (const auto& dev : test_devices()) {
    StreamContext ctx(dev);
    const std::string what = " on " + device_name(dev);
    auto [hidden, cell] = layer(make(x, {n, len, in}, float32), std::nullopt);
    EXPECT_EQ(hidden.shape(), (Shape{n, len, h}));
    EXPECT_EQ(cell.shape(), (Shape{n, len, h}));
    const auto want = run_ref(x, n, len, in, {Vec{}, Vec{}}, lstm_ref(layer, in, h, true), 2);
    expect_close(values(hidden), want[0], 1e-5, 1e-6, "hidden" + what);
    expect_close(values(cell), want[1], 1e-5, 1e-6, "cell" + what);
    expect_close(values(layer(make(x, {n, len, in}, float32))), want[0], 1e-5, 1e-6, "one-array call" + what);
    // From initial hidden and cell states.
    auto [h2, c2] =
        layer(make(x, {n, len, in}, float32), make(h0, {n, h}, float32), make(c0, {n, h}, float32));
    Vec want_h, want_c;
    for (int b = 0; b < n; ++b) {
      const Vec xb(x.begin() + b * len * in, x.begin() + (b + 1) * len * in);
      const Vec hb(h0.begin() + b * h, h0.begin() + (b + 1) * h),
          cb(c0.begin() + b * h, c0.begin() + (b + 1) * h);
      const auto r = run_ref(xb, 1, len, in, {hb, cb}, lstm_ref(layer, in, h, true), 2);
      want_h.insert(want_h.end(), r[0].begin(), r[0].end());
      want_c.insert(want_c.end(), r[1].begin(), r[1].end());
    }
    expect_close(values(h2), want_h, 1e-5, 1e-6, "hidden from states" + what);
    expect_close(values(c2), want_c, 1e-5, 1e-6, "cell from states" + what);
    // Only an initial cell; then one [hidden] state for the whole batch.
    const Vec c1(c0.begin(), c0.begin() + h), h1(h0.begin(), h0.begin() + h);
    auto [h3, c3] = layer(make(x, {n, len, in}, float32), std::nullopt, make(c1, {h}, float32));
    const auto want3 = run_ref(x, n, len, in, {Vec{}, c1}, lstm_ref(layer, in, h, true), 2);
    expect_close(values(h3), want3[0], 1e-5, 1e-6, "hidden from a cell" + what);
    expect_close(values(c3), want3[1], 1e-5, 1e-6, "cell from a cell" + what);
    auto [h4, c4] = layer(make(x, {n, len, in}, float32), make(h1, {h}, float32), make(c1, {h}, float32));
    const auto want4 = run_ref(x, n, len, in, {h1, c1}, lstm_ref(layer, in, h, true), 2);
    expect_close(values(h4), want4[0], 1e-5, 1e-6, "hidden from one state" + what);
    expect_close(values(c4), want4[1], 1e-5, 1e-6, "cell from one state" + what);
  }
}

TEST(NnRecurrent, GradientsMatchCentralDifferences) {
  const int n = 2, len = 3, in = 2, h = 3;
  array x = make(draw(n * len * in, 41), {n, len, in}, float64);
  array h0 = make(draw(n * h, 42), {n, h}, float64);
  nn::RNN rnn(in, h);
  expect_gradients_match_differences(
      rnn, [&] { return sum(square(rnn(x, h0))); }, "rnn");
  nn::GRU gru(in, h);
  expect_gradients_match_differences(
      gru, [&] { return sum(square(gru(x, h0))); }, "gru");
  nn::LSTM lstm(in, h);
  expect_gradients_match_differences(
      lstm,
      [&] {
        auto [hs, cs] = lstm(x, h0);
        return add(sum(square(hs)), sum(cs));
      },
      "lstm");
}

TEST(NnRecurrent, EmptySequencesGiveEmptyStates) {
  nn::RNN rnn(3, 4);
  nn::GRU gru(3, 4);
  nn::LSTM lstm(3, 4);
  EXPECT_EQ(rnn(zeros({2, 0, 3})).shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(gru(zeros({0, 3})).shape(), (Shape{0, 4}));
  auto [hs, cs] = lstm(zeros({2, 0, 3}), std::nullopt);
  EXPECT_EQ(hs.shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(cs.shape(), (Shape{2, 0, 4}));
}

TEST(NnRecurrent, BadArgumentsThrow) {
  EXPECT_THROW(nn::RNN(0, 4), std::invalid_argument);
  EXPECT_THROW(nn::GRU(3, 0), std::invalid_argument);
  EXPECT_THROW(nn::LSTM(-1, 2), std::invalid_argument);
  nn::RNN rnn(3, 4);
  EXPECT_TRUE(throws_bad_input([&] { rnn(zeros({2, 5, 2})); }, "[RNN]"));     // wrong width
  EXPECT_TRUE(throws_bad_input([&] { rnn(zeros({5})); }, "[RNN]"));           // no sequence axis
  EXPECT_TRUE(throws_bad_input([&] { rnn(zeros({1, 2, 5, 3})); }, "[RNN]"));  // too many axes
  EXPECT_TRUE(throws_bad_input([&] { rnn(zeros({2, 5, 3}), zeros({2, 3})); }, "[RNN]"));
  EXPECT_TRUE(throws_bad_input([&] { rnn(zeros({2, 5, 3}), zeros({1, 2, 4})); }, "[RNN]"));
  nn::LSTM lstm(3, 4);
  EXPECT_TRUE(throws_bad_input([&] { lstm(zeros({5, 3}), zeros({4}), zeros({5})); }, "[LSTM]"));
}

// ---- quantized layers ----

TEST(NnQuantized, QuantizedLinearFromLinearIsTheQuantizedProduct) {
  nn::Linear linear(128, 6);
  auto q = nn::QuantizedLinear::from_linear(linear);
  EXPECT_EQ(q->group_size(), 64);
  EXPECT_EQ(q->bits(), 4);
  EXPECT_EQ(leaf_names(q->parameters()), (Names{"weight", "scales", "biases", "bias"}));
  EXPECT_EQ(parameter(*q, "weight").dtype(), uint32);
  EXPECT_EQ(parameter(*q, "weight").shape(), (Shape{6, 16}));  // 128 values of 4 bits: 16 words
  // As MLX's from_linear: the quantized arrays are frozen, the bias set afterwards is not.
  EXPECT_EQ(leaf_names(q->trainable_parameters()), (Names{"bias"}));
  const auto parts = quantize(parameter(linear, "weight"), 64, 4);
  const array w = dequantize(parts[0], parts[1], parts[2], 64, 4);  // the weights the layer multiplies by
  array x = make(draw(3 * 128, 51), {3, 128}, float32);
  for (const auto& dev : test_devices()) {
    StreamContext ctx(dev);
    const std::string what = "on " + device_name(dev);
    array want = add(matmul(x, transpose(w)), parameter(linear, "bias"));
    expect_close(values((*q)(x)), values(want), 1e-4, 1e-4, "quantized product " + what);
    // Within 4-bit quantization error of the float layer: weights of U(-0.088, 0.088) in groups
    // of 64 are off by at most 0.006, so each output by about 0.02 (0.12 is over five of those).
    expect_close(values((*q)(x)), values(linear(x)), 0.0, 0.12, "near the float layer " + what);
  }
}

TEST(NnQuantized, QuantizedLinearStartsFrozenInEveryMode) {
  nn::QuantizedLinear affine(64, 3, true, 32, 8);
  EXPECT_EQ(affine.group_size(), 32);
  EXPECT_EQ(affine.bits(), 8);
  EXPECT_TRUE(tree_flatten(affine.trainable_parameters()).empty());
  EXPECT_EQ(values(parameter(affine, "bias")), Vec(3, 0.0));
  nn::QuantizedLinear mx(64, 3, false, std::nullopt, std::nullopt, "mxfp4");
  EXPECT_EQ(mx.group_size(), 32);
  EXPECT_EQ(mx.bits(), 4);
  EXPECT_EQ(leaf_names(mx.parameters()), (Names{"weight", "scales"}));  // no biases in the fp modes
  array x = make(draw(2 * 64, 52), {2, 64}, float32);
  EXPECT_EQ(mx(x).shape(), (Shape{2, 3}));
  EXPECT_THROW(nn::QuantizedLinear(64, 3, true, std::nullopt, std::nullopt, "int3"), std::invalid_argument);
}

TEST(NnQuantized, QuantizedEmbeddingLooksUpDequantizedRows) {
  nn::Embedding emb(10, 64);
  auto q = nn::QuantizedEmbedding::from_embedding(emb, 32, 8);
  EXPECT_EQ(leaf_names(q->parameters()), (Names{"weight", "scales", "biases"}));
  EXPECT_TRUE(tree_flatten(q->trainable_parameters()).empty());
  const auto parts = quantize(parameter(emb, "weight"), 32, 8);
  const array table = dequantize(parts[0], parts[1], parts[2], 32, 8);
  array ids = array({3, 0, 9, 3}, {2, 2}, int32);
  for (const auto& dev : test_devices()) {
    StreamContext ctx(dev);
    const std::string what = "on " + device_name(dev);
    array rows = (*q)(ids);
    EXPECT_EQ(rows.shape(), (Shape{2, 2, 64}));
    expect_close(values(rows), values(take(table, ids, 0)), 1e-6, 1e-6, "rows " + what);
    expect_close(values(rows), values(emb(ids)), 0.0, 0.02, "near the float table " + what);
    array x = make(draw(2 * 64, 53), {2, 64}, float32);
    expect_close(values(q->as_linear(x)), values(matmul(x, transpose(table))), 1e-4, 1e-4,
                 "as_linear " + what);
  }
  EXPECT_TRUE(throws_bad_input([&] { (*q)(zeros({2})); }, "[QuantizedEmbedding]"));
}

TEST(NnQuantized, QuantizeSwitchesAModelsLayersInPlace) {
  // MLX's nn.quantize: every Linear and Embedding, also those a parent calls through its own
  // members (the attention's projections inside an encoder layer), computes the quantized
  // product afterwards; the packed arrays are frozen, the biases stay trainable.
  auto layer = std::make_shared<nn::TransformerEncoderLayer>(64, 4, 128);
  layer->eval();
  auto head = std::make_shared<nn::Linear>(64, 5);
  auto table = std::make_shared<nn::Embedding>(10, 64);
  nn::Sequential model(layer, head);
  array x = make(draw(2 * 3 * 64, 54), {2, 3, 64}, float32);
  // The expected output: the float model with each weight replaced by its dequantized form.
  nn::Sequential reference(std::make_shared<nn::TransformerEncoderLayer>(64, 4, 128),
                           std::make_shared<nn::Linear>(64, 5));
  reference.eval();
  std::vector<std::pair<std::string, array>> weights;
  for (const auto& [path, w] : tree_flatten(model.parameters())) {
    const array v = w;
    if (path.size() >= 6 && path.compare(path.size() - 6, 6, "weight") == 0 && v.ndim() == 2) {
      const auto parts = quantize(v, 64, 4);
      weights.emplace_back(path, dequantize(parts[0], parts[1], parts[2], 64, 4));
    } else {
      weights.emplace_back(path, v);
    }
  }
  reference.load_weights(weights);
  const array want = reference(x);
  nn::quantize(model);
  EXPECT_EQ(head->name(), "QuantizedLinear");
  ASSERT_TRUE(head->quantization().has_value());
  EXPECT_EQ(head->quantization()->group_size, 64);
  EXPECT_EQ(head->quantization()->bits, 4);
  EXPECT_EQ(parameter(*head, "weight").dtype(), uint32);
  EXPECT_EQ(leaf_names(head->trainable_parameters()), (Names{"bias"}));
  for (const auto& dev : test_devices()) {
    StreamContext ctx(dev);
    expect_close(values(model(x)), values(want), 1e-4, 1e-4, "quantized model on " + device_name(dev));
  }
  // Already quantized layers are left alone; the predicate picks layers by path.
  nn::quantize(model);
  EXPECT_EQ(head->quantization()->bits, 4);
  nn::Sequential pair(std::make_shared<nn::Linear>(64, 8), std::make_shared<nn::Linear>(8, 64));
  nn::quantize(pair, 32, 8, "affine",
               [](const std::string& path, const nn::Module&) { return path == "layers.0"; });
  EXPECT_EQ(pair.named_modules()[1].second->name(), "QuantizedLinear");
  EXPECT_EQ(pair.named_modules()[2].second->name(), "Linear");
  // A layer held twice is quantized when either of its paths is chosen.
  auto shared = std::make_shared<nn::Linear>(64, 64);
  nn::Sequential twice(shared, std::make_shared<nn::Linear>(64, 64), shared);
  nn::quantize(twice, std::nullopt, std::nullopt, "affine",
               [](const std::string& path, const nn::Module&) { return path == "layers.2"; });
  EXPECT_EQ(shared->name(), "QuantizedLinear");
  EXPECT_EQ(twice.named_modules()[2].second->name(), "Linear");
  // unfreeze leaves a quantized layer's parameters frozen, as MLX's quantized layers do.
  head->unfreeze();
  EXPECT_TRUE(tree_flatten(head->trainable_parameters()).empty());
  model.unfreeze();
  EXPECT_TRUE(tree_flatten(head->trainable_parameters()).empty());
  // Embedding: rows and the output projection through the packed table.
  const array ids = array({3, 0, 9}, {3}, int32);
  const auto parts = quantize(parameter(*table, "weight"), 32, 8);
  const array dense = dequantize(parts[0], parts[1], parts[2], 32, 8);
  table->to_quantized(32, 8);
  EXPECT_EQ(table->name(), "QuantizedEmbedding");
  expect_close(values((*table)(ids)), values(take(dense, ids, 0)), 1e-6, 1e-6, "embedding rows");
  expect_close(values(table->as_linear(x)), values(matmul(x, transpose(dense))), 1e-4, 1e-4, "as_linear");
}

TEST(NnQuantized, QuantizeThatCannotApplyChangesNothing) {
  // The second layer's 8 inputs cannot form groups of 64: nothing is quantized.
  nn::Sequential model(std::make_shared<nn::Linear>(64, 8), std::make_shared<nn::Linear>(8, 4));
  EXPECT_THROW(nn::quantize(model), std::invalid_argument);
  for (const auto& [path, m] : model.named_modules()) EXPECT_NE(m->name(), "QuantizedLinear") << path;
  EXPECT_EQ(leaf_names(model.trainable_parameters()).size(), 4u);
  // A module the predicate accepts that has no quantized form; an unknown mode; twice.
  auto norm = std::make_shared<nn::LayerNorm>(64);
  nn::Sequential with_norm(std::make_shared<nn::Linear>(64, 64), norm);
  EXPECT_TRUE(throws_bad_input(
      [&] {
        nn::quantize(with_norm, std::nullopt, std::nullopt, "affine",
                     [](const auto&, const auto&) { return true; });
      },
      "[quantize]"));
  EXPECT_EQ(with_norm.named_modules()[1].second->name(), "Linear");
  nn::Linear linear(64, 4);
  EXPECT_THROW(linear.to_quantized(std::nullopt, std::nullopt, "int3"), std::invalid_argument);
  EXPECT_FALSE(linear.quantization().has_value());
  linear.to_quantized();
  EXPECT_TRUE(throws_bad_input([&] { linear.to_quantized(); }, "[QuantizedLinear]"));
  EXPECT_TRUE(throws_bad_input([&] { nn::QuantizedLinear::from_linear(linear); }, "[QuantizedLinear]"));
  EXPECT_TRUE(throws_bad_input([&] { linear(zeros({2, 32})); }, "[QuantizedLinear]"));
}

// ---- ALiBi ----

TEST(NnAlibi, AddsMinusSlopeTimesDistancePerHead) {
  const int heads = 4, tq = 3, tk = 5, offset = 2;
  array slopes = nn::ALiBi::create_alibi_slope(heads);
  EXPECT_EQ(slopes.shape(), (Shape{heads, 1, 1}));
  Vec want_slopes;
  for (int h = 1; h <= heads; ++h) want_slopes.push_back(std::pow(256.0, -static_cast<double>(h) / heads));
  expect_close(values(slopes), want_slopes, 1e-6, 0, "slopes");
  array m = nn::ALiBi::create_alibi_matrix(tq + offset, tk, heads, offset, float16);
  EXPECT_EQ(m.shape(), (Shape{1, heads, tq, tk}));
  EXPECT_EQ(m.dtype(), float16);
  Vec want;
  for (int h = 0; h < heads; ++h) {
    for (int i = 0; i < tq; ++i) {
      for (int j = 0; j < tk; ++j) want.push_back(-std::abs(i + offset - j) * want_slopes[h]);
    }
  }
  expect_close(values(m), want, 1e-3, 1e-3, "matrix");
  nn::ALiBi alibi;
  const Vec s = draw(2 * heads * tq * tk, 61);
  array scores = make(s, {2, heads, tq, tk}, float32);
  array mask = make(draw(tq * tk, 62), {tq, tk}, float32);
  for (const auto& dev : test_devices()) {
    StreamContext ctx(dev);
    array out = alibi(scores, offset, mask);
    EXPECT_EQ(out.shape(), scores.shape());
    const Vec mv = values(mask);
    Vec w(s.size());
    for (size_t e = 0; e < s.size(); ++e) {
      const size_t inner = e % (heads * tq * tk);
      w[e] = s[e] + want[inner] + mv[inner % (tq * tk)];
    }
    expect_close(values(out), w, 1e-5, 1e-5, "scores on " + device_name(dev));
  }
  EXPECT_TRUE(throws_bad_input([&] { alibi(zeros({2, 3, 4})); }, "[ALiBi]"));
}
