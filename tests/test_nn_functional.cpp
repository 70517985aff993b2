// braid::nn's functional parts: activations (values on every device, dtypes, gradients,
// layers), losses (each against its formula in double precision, every reduction, weights,
// label smoothing, bad input) and initializers (fans, statistics, orthogonality).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "braid/nn.h"
#include "support.h"

using namespace braid;
using braid::test::expect_close;
using braid::test::make;
using braid::test::test_devices;
using braid::test::values;

namespace {

using Fn = std::function<array(const array&)>;
using RefFn = std::function<double(double)>;

struct Activation {
  std::string name;
  Fn f;
  RefFn ref;
};

double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double ref_softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
double ref_elu(double x, double alpha) { return x > 0 ? x : alpha * std::expm1(x); }

// Every element-wise activation with its defaults, and some with other arguments.
std::vector<Activation> elementwise_activations() {
  const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
  return {
      {"sigmoid", [](const array& x) { return nn::sigmoid(x); }, ref_sigmoid},
      {"relu", [](const array& x) { return nn::relu(x); }, [](double x) { return std::max(x, 0.0); }},
      {"relu2", [](const array& x) { return nn::relu2(x); }, [](double x) { return x > 0 ? x * x : 0.0; }},
      {"leaky_relu", [](const array& x) { return nn::leaky_relu(x); },
       [](double x) { return x > 0 ? x : 0.01 * x; }},
      {"leaky_relu(0.2)", [](const array& x) { return nn::leaky_relu(x, 0.2f); },
       [](double x) { return x > 0 ? x : 0.2 * x; }},
      {"elu", [](const array& x) { return nn::elu(x); }, [](double x) { return ref_elu(x, 1.0); }},
      {"elu(0.5)", [](const array& x) { return nn::elu(x, 0.5f); }, [](double x) { return ref_elu(x, 0.5); }},
      {"relu6", [](const array& x) { return nn::relu6(x); },
       [](double x) { return std::clamp(x, 0.0, 6.0); }},
      {"softplus", [](const array& x) { return nn::softplus(x); }, ref_softplus},
      {"softsign", [](const array& x) { return nn::softsign(x); },
       [](double x) { return x / (1 + std::abs(x)); }},
      {"softshrink", [](const array& x) { return nn::softshrink(x); },
       [](double x) { return x > 0.5 ? x - 0.5 : (x < -0.5 ? x + 0.5 : 0.0); }},
      {"softshrink(1.2)", [](const array& x) { return nn::softshrink(x, 1.2f); },
       [](double x) { return x > 1.2 ? x - 1.2 : (x < -1.2 ? x + 1.2 : 0.0); }},
      {"celu", [](const array& x) { return nn::celu(x); }, [](double x) { return ref_elu(x, 1.0); }},
      {"celu(1.5)", [](const array& x) { return nn::celu(x, 1.5f); },
       [](double x) { return std::max(x, 0.0) + std::min(0.0, 1.5 * std::expm1(x / 1.5)); }},
      {"silu", [](const array& x) { return nn::silu(x); }, [](double x) { return x * ref_sigmoid(x); }},
      {"log_sigmoid", [](const array& x) { return nn::log_sigmoid(x); },
       [](double x) { return -ref_softplus(-x); }},
      {"gelu", [](const array& x) { return nn::gelu(x); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu_approx", [](const array& x) { return nn::gelu_approx(x); },
       [sqrt_2_over_pi](double x) {
         return 0.5 * x * (1 + std::tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
       }},
      {"gelu_fast_approx", [](const array& x) { return nn::gelu_fast_approx(x); },
       [](double x) { return x * ref_sigmoid(1.702 * x); }},
      {"selu", [](const array& x) { return nn::selu(x); },
       [](double x) { return 1.0507 * ref_elu(x, 1.67326); }},
      {"mish", [](const array& x) { return nn::mish(x); },
       [](double x) { return x * std::tanh(ref_softplus(x)); }},
      {"hardswish", [](const array& x) { return nn::hardswish(x); },
       [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; }},
      {"hard_tanh", [](const array& x) { return nn::hard_tanh(x); },
       [](double x) { return std::clamp(x, -1.0, 1.0); }},
      {"hard_tanh(-2, 0.5)", [](const array& x) { return nn::hard_tanh(x, -2.0f, 0.5f); },
       [](double x) { return std::clamp(x, -2.0, 0.5); }},
      {"hard_shrink", [](const array& x) { return nn::hard_shrink(x); },
       [](double x) { return std::abs(x) > 0.5 ? x : 0.0; }},
      {"tanh", [](const array& x) { return nn::tanh(x); }, [](double x) { return std::tanh(x); }},
  };
}

// Away from every kink (0, +-0.5, +-1, +-1.2, +-3, 6), so finite differences are smooth there.
const std::vector<double> kPoints = {-7.5, -3.2, -2.1, -1.4, -0.8, -0.3, -0.05,
                                     0.15, 0.45, 0.9,  1.7,  2.6,  4.1,  7.7};

std::vector<double> map_ref(const RefFn& f, const std::vector<double>& xs) {
  std::vector<double> out;
  for (double x : xs) out.push_back(f(x));
  return out;
}

// Central difference of a smooth double function.
double derivative(const RefFn& f, double x) {
  const double h = 1e-6;
  return (f(x + h) - f(x - h)) / (2 * h);
}

array arr(const std::vector<double>& v, const Shape& shape, Dtype dt = float32) { return make(v, shape, dt); }

}  // namespace

// ---- activations ----

TEST(NnActivations, EveryElementwiseFunctionMatchesItsDoubleFormulaOnEveryDevice) {
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    for (const auto& act : elementwise_activations()) {
      array x = arr(kPoints, {static_cast<int>(kPoints.size())});
      array y = act.f(x);
      EXPECT_EQ(y.dtype(), float32) << act.name;
      expect_close(values(y), map_ref(act.ref, kPoints), 2e-5, 2e-6,
                   act.name + " on " + test::device_name(device));
    }
  }
}

TEST(NnActivations, HalfPrecisionInputsStayInTheirDtype) {
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    for (Dtype dt : {float16, bfloat16}) {
      const double tol = dt == float16 ? 1e-2 : 4e-2;
      for (const auto& act : elementwise_activations()) {
        array x = arr(kPoints, {static_cast<int>(kPoints.size())}, dt);
        array y = act.f(x);
        EXPECT_EQ(y.dtype(), dt) << act.name;
        // The reference starts from the rounded inputs.
        expect_close(values(y), map_ref(act.ref, values(x)), tol, tol, act.name);
      }
    }
  }
}

TEST(NnActivations, SoftplusAndLogSigmoidStayFiniteForLargeInputs) {
  array x = array({-200.0f, -90.0f, 90.0f, 200.0f});
  expect_close(values(nn::softplus(x)), {0.0, 0.0, 90.0, 200.0}, 1e-6, 1e-30, "softplus");
  expect_close(values(nn::log_sigmoid(x)), {-200.0, -90.0, 0.0, 0.0}, 1e-6, 1e-30, "log_sigmoid");
  expect_close(values(nn::mish(x)), {0.0, 0.0, 90.0, 200.0}, 1e-6, 1e-30, "mish");
}

TEST(NnActivations, EveryElementwiseGradientMatchesTheFormulasDerivative) {
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    for (const auto& act : elementwise_activations()) {
      array x = arr(kPoints, {static_cast<int>(kPoints.size())});
      auto g = grad([&](const array& in) { return sum(act.f(in)); })(x);
      std::vector<double> want;
      for (double p : kPoints) want.push_back(derivative(act.ref, p));
      expect_close(values(g), want, 1e-4, 1e-5, act.name + "'");
    }
  }
}

TEST(NnActivations, StepIsOneAboveTheThresholdAsInt32) {
  array x = array({-1.0f, 0.0f, 0.5f, 2.0f});
  array y = nn::step(x);
  EXPECT_EQ(y.dtype(), int32);
  expect_close(values(y), {0, 0, 1, 1}, 0, 0, "step");
  expect_close(values(nn::step(x, 0.5f)), {0, 0, 0, 1}, 0, 0, "step(0.5)");
}

TEST(NnActivations, SoftmaxSoftminAndLogSoftmaxNormalizeAlongTheAxis) {
  const std::vector<double> v = {0.3, -1.2, 2.5, 0.0, 4.0, -0.7};
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    array x = arr(v, {2, 3});
    for (int axis : {-1, 0}) {
      std::vector<double> sm(6), smin(6), lsm(6);
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) {
          double z = 0, zmin = 0;
          const int n = axis == 0 ? 2 : 3;
          for (int k = 0; k < n; ++k) {
            const double o = axis == 0 ? v[k * 3 + j] : v[i * 3 + k];
            z += std::exp(o);
            zmin += std::exp(-o);
          }
          sm[i * 3 + j] = std::exp(v[i * 3 + j]) / z;
          smin[i * 3 + j] = std::exp(-v[i * 3 + j]) / zmin;
          lsm[i * 3 + j] = v[i * 3 + j] - std::log(z);
        }
      }
      expect_close(values(nn::softmax(x, axis)), sm, 1e-5, 1e-7, "softmax");
      expect_close(values(nn::softmin(x, axis)), smin, 1e-5, 1e-7, "softmin");
      expect_close(values(nn::log_softmax(x, axis)), lsm, 1e-5, 1e-6, "log_softmax");
    }
  }
}

TEST(NnActivations, GluGatesTheFirstHalfByTheSigmoidOfTheSecond) {
  const std::vector<double> v = {1.0, -2.0, 0.5, 3.0, -1.0, 2.0, 0.25, -0.5};
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    array x = arr(v, {2, 4});
    // Along the last axis: rows [a0 a1 | b0 b1].
    std::vector<double> want_last = {v[0] * ref_sigmoid(v[2]), v[1] * ref_sigmoid(v[3]),
                                     v[4] * ref_sigmoid(v[6]), v[5] * ref_sigmoid(v[7])};
    expect_close(values(nn::glu(x)), want_last, 1e-6, 1e-7, "glu(-1)");
    std::vector<double> want_first;
    for (int j = 0; j < 4; ++j) want_first.push_back(v[j] * ref_sigmoid(v[4 + j]));
    expect_close(values(nn::glu(x, 0)), want_first, 1e-6, 1e-7, "glu(0)");
  }
}

TEST(NnActivations, GluRejectsAnOddOrMissingAxis) {
  EXPECT_THROW(nn::glu(zeros({2, 3})), std::invalid_argument);
  EXPECT_THROW(nn::glu(zeros({2, 4}), 2), std::invalid_argument);
}

TEST(NnActivations, PreluScalesNegativeInputsPerChannel) {
  array x = array({-2.0f, 3.0f, -1.0f, -4.0f, 1.0f, -0.5f}, {2, 3});
  array alpha = array({0.1f, 0.2f, 0.3f});
  expect_close(values(nn::prelu(x, alpha)), {-0.2, 3.0, -0.3, -0.4, 1.0, -0.15}, 1e-6, 1e-7, "prelu");
}

TEST(NnActivationLayers, EveryLayerAppliesItsFunction) {
  struct Case {
    std::shared_ptr<nn::Module> layer;
    std::string name;
    Fn f;
  };
  const std::vector<Case> cases = {
      {std::make_shared<nn::Sigmoid>(), "Sigmoid", [](const array& x) { return nn::sigmoid(x); }},
      {std::make_shared<nn::ReLU>(), "ReLU", [](const array& x) { return nn::relu(x); }},
      {std::make_shared<nn::ReLU2>(), "ReLU2", [](const array& x) { return nn::relu2(x); }},
      {std::make_shared<nn::ReLU6>(), "ReLU6", [](const array& x) { return nn::relu6(x); }},
      {std::make_shared<nn::LeakyReLU>(0.3f), "LeakyReLU",
       [](const array& x) { return nn::leaky_relu(x, 0.3f); }},
      {std::make_shared<nn::ELU>(0.7f), "ELU", [](const array& x) { return nn::elu(x, 0.7f); }},
      {std::make_shared<nn::CELU>(1.3f), "CELU", [](const array& x) { return nn::celu(x, 1.3f); }},
      {std::make_shared<nn::SELU>(), "SELU", [](const array& x) { return nn::selu(x); }},
      {std::make_shared<nn::SiLU>(), "SiLU", [](const array& x) { return nn::silu(x); }},
      {std::make_shared<nn::LogSigmoid>(), "LogSigmoid", [](const array& x) { return nn::log_sigmoid(x); }},
      {std::make_shared<nn::Softmax>(), "Softmax", [](const array& x) { return nn::softmax(x); }},
      {std::make_shared<nn::Softmin>(), "Softmin", [](const array& x) { return nn::softmin(x); }},
      {std::make_shared<nn::LogSoftmax>(), "LogSoftmax", [](const array& x) { return nn::log_softmax(x); }},
      {std::make_shared<nn::Softplus>(), "Softplus", [](const array& x) { return nn::softplus(x); }},
      {std::make_shared<nn::Softsign>(), "Softsign", [](const array& x) { return nn::softsign(x); }},
      {std::make_shared<nn::Softshrink>(0.8f), "Softshrink",
       [](const array& x) { return nn::softshrink(x, 0.8f); }},
      {std::make_shared<nn::HardShrink>(), "HardShrink", [](const array& x) { return nn::hard_shrink(x); }},
      {std::make_shared<nn::HardTanh>(), "HardTanh", [](const array& x) { return nn::hard_tanh(x); }},
      {std::make_shared<nn::Hardswish>(), "Hardswish", [](const array& x) { return nn::hardswish(x); }},
      {std::make_shared<nn::Mish>(), "Mish", [](const array& x) { return nn::mish(x); }},
      {std::make_shared<nn::Tanh>(), "Tanh", [](const array& x) { return nn::tanh(x); }},
      {std::make_shared<nn::GLU>(0), "GLU", [](const array& x) { return nn::glu(x, 0); }},
      {std::make_shared<nn::Step>(0.4f), "Step", [](const array& x) { return nn::step(x, 0.4f); }},
      {std::make_shared<nn::GELU>(), "GELU", [](const array& x) { return nn::gelu(x); }},
      {std::make_shared<nn::GELU>("precise"), "GELU", [](const array& x) { return nn::gelu_approx(x); }},
      {std::make_shared<nn::GELU>("tanh"), "GELU", [](const array& x) { return nn::gelu_approx(x); }},
      {std::make_shared<nn::GELU>("fast"), "GELU", [](const array& x) { return nn::gelu_fast_approx(x); }},
  };
  array x = array({-2.5f, -0.7f, 0.2f, 0.6f, 1.9f, 7.0f}, {2, 3});
  for (const auto& c : cases) {
    EXPECT_EQ(c.layer->name(), c.name);
    EXPECT_TRUE(c.layer->parameters().empty()) << c.name;
    EXPECT_EQ(values((*c.layer)(x)), values(c.f(x))) << c.name;
  }
}

TEST(NnActivationLayers, GeluRejectsAnUnknownApproximation) {
  try {
    nn::GELU("erf");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[GELU]"), std::string::npos) << e.what();
  }
}

TEST(NnActivationLayers, PreluLearnsOneWeightPerChannelStartingAtInit) {
  nn::PReLU layer(3);
  Tree params = layer.parameters();
  array w = params.at("weight").leaf();
  EXPECT_EQ(w.shape(), Shape({3}));
  EXPECT_EQ(w.dtype(), float32);
  expect_close(values(w), {0.25, 0.25, 0.25}, 0, 0, "init");
  expect_close(values(nn::PReLU(1, 0.1f).parameters().at("weight").leaf()), {static_cast<double>(0.1f)}, 0, 0,
               "init 0.1");
  EXPECT_THROW(nn::PReLU(0), std::invalid_argument);
}

TEST(NnActivationLayers, PreluGradientReachesItsWeight) {
  nn::PReLU layer(3, 0.2f);
  array x = array({-2.0f, 3.0f, -1.0f, -4.0f, 1.0f, -0.5f}, {2, 3});
  auto vg =
      nn::value_and_grad(layer, [&](const std::vector<array>& in) { return sum(square(layer(in[0]))); });
  auto [value, grads] = vg({x});
  auto formula = [&](const std::vector<array>& in) { return sum(square(nn::prelu(in[0], in[1]))); };
  auto [want_value, want_grads] = value_and_grad(formula, 1)({x, full({3}, 0.2f)});
  expect_close(values(value), values(want_value), 1e-6, 1e-7, "value");
  expect_close(values(grads.at("weight").leaf()), values(want_grads[0]), 1e-6, 1e-7, "d weight");
  // d/da of sum((a * x)^2) over the negative x of each channel: 2 a sum(x^2).
  expect_close(values(grads.at("weight").leaf()), {2 * 0.2 * 20.0, 0.0, 2 * 0.2 * 1.25}, 1e-5, 1e-6,
               "formula");
}

// ---- losses ----

namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// Expects `loss(reduction)` to give `elementwise` for "none" and its mean and sum otherwise.
void expect_reductions(const std::function<array(const std::string&)>& loss,
                       const std::vector<double>& elementwise, double rtol, double atol,
                       const std::string& what) {
  array none = loss("none");
  expect_close(values(none), elementwise, rtol, atol, what + " none");
  array m = loss("mean");
  array s = loss("sum");
  EXPECT_EQ(m.ndim(), 0u) << what;
  EXPECT_EQ(s.ndim(), 0u) << what;
  expect_close(values(m), {mean_of(elementwise)}, rtol, atol, what + " mean");
  expect_close(values(s), {sum_of(elementwise)}, rtol, atol, what + " sum");
}

const std::vector<double> kLogits = {2.0, -1.0, 0.5, 0.1, -0.3, 1.7,
                                     0.0, -2.2, 0.9, 0.4, 3.1,  -0.6};  // 3 x 4
const std::vector<int> kClasses = {0, 3, 2};

double logsumexp_row(const std::vector<double>& v, int row, int n) {
  double m = -INFINITY, s = 0;
  for (int j = 0; j < n; ++j) m = std::max(m, v[row * n + j]);
  for (int j = 0; j < n; ++j) s += std::exp(v[row * n + j] - m);
  return m + std::log(s);
}

}  // namespace

TEST(NnLosses, CrossEntropyOfClassIndicesIsLogSumExpMinusTheTargetLogit) {
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    array logits = arr(kLogits, {3, 4});
    array targets = array({0, 3, 2}, int32);
    std::vector<double> want;
    for (int i = 0; i < 3; ++i) want.push_back(logsumexp_row(kLogits, i, 4) - kLogits[i * 4 + kClasses[i]]);
    expect_reductions(
        [&](const std::string& r) {
          return nn::losses::cross_entropy(logits, targets, std::nullopt, -1, 0.0f, r);
        },
        want, 1e-5, 1e-6, "cross_entropy");
    EXPECT_EQ(nn::losses::cross_entropy(logits, targets).shape(), Shape({3}));  // default reduction "none"
  }
}

TEST(NnLosses, CrossEntropyOfProbabilitiesWeighsEveryLogit) {
  const std::vector<double> probs = {0.7, 0.1, 0.1, 0.1, 0.0, 0.0, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25};
  array logits = arr(kLogits, {3, 4});
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) {
    double score = 0;
    for (int j = 0; j < 4; ++j) score += probs[i * 4 + j] * kLogits[i * 4 + j];
    want.push_back(logsumexp_row(kLogits, i, 4) - score);
  }
  expect_close(values(nn::losses::cross_entropy(logits, arr(probs, {3, 4}))), want, 1e-5, 1e-6,
               "probabilities");
  // One-hot probabilities equal class indices.
  array one_hot = arr({1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0}, {3, 4});
  expect_close(values(nn::losses::cross_entropy(logits, one_hot)),
               values(nn::losses::cross_entropy(logits, array({0, 3, 2}, int32))), 1e-6, 1e-7, "one-hot");
}

TEST(NnLosses, CrossEntropyLabelSmoothingMixesInTheMeanLogit) {
  const double ls = 0.2;
  array logits = arr(kLogits, {3, 4});
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) {
    double mean_logit = 0;
    for (int j = 0; j < 4; ++j) mean_logit += kLogits[i * 4 + j] / 4;
    want.push_back(logsumexp_row(kLogits, i, 4) - (1 - ls) * kLogits[i * 4 + kClasses[i]] - ls * mean_logit);
  }
  array targets = array({0, 3, 2}, int32);
  expect_reductions(
      [&](const std::string& r) {
        return nn::losses::cross_entropy(logits, targets, std::nullopt, -1, 0.2f, r);
      },
      want, 1e-5, 1e-6, "smoothed");
}

TEST(NnLosses, CrossEntropyWeightsMultiplyEachLoss) {
  array logits = arr(kLogits, {3, 4});
  array targets = array({0, 3, 2}, int32);
  const std::vector<double> w = {0.5, 2.0, 0.0};
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    want.push_back(w[i] * (logsumexp_row(kLogits, i, 4) - kLogits[i * 4 + kClasses[i]]));
  expect_reductions(
      [&](const std::string& r) {
        return nn::losses::cross_entropy(logits, targets, arr(w, {3}), -1, 0.0f, r);
      },
      want, 1e-5, 1e-6, "weighted");
}

TEST(NnLosses, CrossEntropyAlongTheFirstAxisTakesTargetsOfTheOtherAxes) {
  // logits [classes = 4, batch = 3]: the transpose of the usual layout.
  array logits = transpose(arr(kLogits, {3, 4}));
  array targets = array({0, 3, 2}, int32);
  expect_close(values(nn::losses::cross_entropy(logits, targets, std::nullopt, 0)),
               values(nn::losses::cross_entropy(arr(kLogits, {3, 4}), targets)), 1e-6, 1e-7, "axis 0");
}

TEST(NnLosses, CrossEntropyGradientIsSoftmaxMinusOneHot) {
  array logits = arr(kLogits, {3, 4});
  array targets = array({0, 3, 2}, int32);
  auto g = grad([&](const array& l) {
    return nn::losses::cross_entropy(l, targets, std::nullopt, -1, 0.0f, "sum");
  })(logits);
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) {
    const double lse = logsumexp_row(kLogits, i, 4);
    for (int j = 0; j < 4; ++j)
      want.push_back(std::exp(kLogits[i * 4 + j] - lse) - (j == kClasses[i] ? 1 : 0));
  }
  expect_close(values(g), want, 1e-5, 1e-6, "d logits");
}

TEST(NnLosses, CrossEntropyRejectsBadArguments) {
  array logits = zeros({3, 4});
  array targets = array({0, 1, 2}, int32);
  EXPECT_THROW(nn::losses::cross_entropy(logits, targets, std::nullopt, -1, 1.0f), std::invalid_argument);
  EXPECT_THROW(nn::losses::cross_entropy(logits, targets, std::nullopt, -1, -0.1f), std::invalid_argument);
  EXPECT_THROW(nn::losses::cross_entropy(logits, array({0, 1}, int32)), std::invalid_argument);
  EXPECT_THROW(nn::losses::cross_entropy(logits, zeros({3, 5})), std::invalid_argument);
  EXPECT_THROW(nn::losses::cross_entropy(logits, zeros({3})), std::invalid_argument);  // float class indices
  EXPECT_THROW(nn::losses::cross_entropy(logits, targets, zeros({4})), std::invalid_argument);
  EXPECT_THROW(nn::losses::cross_entropy(logits, targets, std::nullopt, 2), std::invalid_argument);
  try {
    nn::losses::cross_entropy(logits, targets, std::nullopt, -1, 0.0f, "average");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[cross_entropy] Invalid reduction"), std::string::npos) << e.what();
  }
}

TEST(NnLosses, BinaryCrossEntropyOfLogitsAndOfProbabilities) {
  const std::vector<double> x = {0.105361, -0.223144, 1.20397, -3.5, 12.0};
  const std::vector<double> y = {0, 0, 1, 1, 0};
  std::vector<double> want_logits, want_probs;
  for (size_t i = 0; i < x.size(); ++i) {
    want_logits.push_back(ref_softplus(x[i]) - x[i] * y[i]);
    const double p = ref_sigmoid(x[i] / 4);  // probabilities in (0, 1)
    want_probs.push_back(-(y[i] * std::log(p) + (1 - y[i]) * std::log(1 - p)));
  }
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    array inputs = arr(x, {5});
    array targets = arr(y, {5});
    expect_reductions(
        [&](const std::string& r) {
          return nn::losses::binary_cross_entropy(inputs, targets, std::nullopt, true, r);
        },
        want_logits, 1e-5, 1e-6, "with logits");
    array probs = sigmoid(inputs / 4.0f);
    expect_reductions(
        [&](const std::string& r) {
          return nn::losses::binary_cross_entropy(probs, targets, std::nullopt, false, r);
        },
        want_probs, 1e-4, 1e-6, "probabilities");
    EXPECT_EQ(nn::losses::binary_cross_entropy(inputs, targets).ndim(), 0u);  // default reduction "mean"
  }
}

TEST(NnLosses, BinaryCrossEntropyClipsLogsOfZeroAtMinus100AndTakesWeights) {
  array probs = array({0.0f, 1.0f, 0.5f});
  array targets = array({1.0f, 0.0f, 1.0f});
  expect_close(values(nn::losses::binary_cross_entropy(probs, targets, std::nullopt, false, "none")),
               {100.0, 100.0, std::log(2.0)}, 1e-6, 1e-6, "clipped");
  array w = array({0.5f, 0.0f, 2.0f});
  expect_close(values(nn::losses::binary_cross_entropy(probs, targets, w, false, "none")),
               {50.0, 0.0, 2 * std::log(2.0)}, 1e-6, 1e-6, "weighted");
  EXPECT_THROW(nn::losses::binary_cross_entropy(probs, zeros({2})), std::invalid_argument);
  EXPECT_THROW(nn::losses::binary_cross_entropy(probs, targets, zeros({2})), std::invalid_argument);
}

TEST(NnLosses, ElementwiseRegressionLossesMatchTheirFormulas) {
  const std::vector<double> p = {0.3, -1.5, 2.0, 0.9, -0.2, 4.0};
  const std::vector<double> t = {0.0, 1.0, 2.2, -0.4, -0.25, -1.0};
  auto each = [&](const std::function<double(double)>& f) {
    std::vector<double> out;
    for (size_t i = 0; i < p.size(); ++i) out.push_back(f(p[i] - t[i]));
    return out;
  };
  auto smooth_l1 = [](double beta) {
    return [beta](double d) { return std::abs(d) < beta ? 0.5 * d * d / beta : std::abs(d) - 0.5 * beta; };
  };
  auto huber = [](double delta) {
    return [delta](double d) {
      return std::abs(d) <= delta ? 0.5 * d * d : delta * (std::abs(d) - 0.5 * delta);
    };
  };
  for (const auto& device : test_devices()) {
    StreamContext ctx(device);
    array a = arr(p, {2, 3});
    array b = arr(t, {2, 3});
    namespace L = nn::losses;
    expect_reductions([&](const std::string& r) { return L::l1_loss(a, b, r); },
                      each([](double d) { return std::abs(d); }), 1e-6, 1e-6, "l1");
    expect_reductions([&](const std::string& r) { return L::mse_loss(a, b, r); },
                      each([](double d) { return d * d; }), 1e-6, 1e-6, "mse");
    expect_reductions([&](const std::string& r) { return L::smooth_l1_loss(a, b, 1.0f, r); },
                      each(smooth_l1(1.0)), 1e-6, 1e-6, "smooth_l1");
    expect_reductions([&](const std::string& r) { return L::smooth_l1_loss(a, b, 0.5f, r); },
                      each(smooth_l1(0.5)), 1e-6, 1e-6, "smooth_l1(0.5)");
    expect_reductions([&](const std::string& r) { return L::huber_loss(a, b, 1.0f, r); }, each(huber(1.0)),
                      1e-6, 1e-6, "huber");
    expect_reductions([&](const std::string& r) { return L::huber_loss(a, b, 2.0f, r); }, each(huber(2.0)),
                      1e-6, 1e-6, "huber(2)");
    expect_reductions([&](const std::string& r) { return L::log_cosh_loss(a, b, r); },
                      each([](double d) { return std::log(std::cosh(d)); }), 1e-5, 1e-6, "log_cosh");
  }
}

TEST(NnLosses, LogCoshStaysFiniteForLargeErrors) {
  array loss = nn::losses::log_cosh_loss(array({200.0f, -200.0f}), array({0.0f, 0.0f}));
  expect_close(values(loss), {200 - std::log(2.0), 200 - std::log(2.0)}, 1e-6, 1e-6, "log_cosh");
}

TEST(NnLosses, HingeAndMarginRankingLossesMatchTheirFormulas) {
  const std::vector<double> x1 = {0.8, -0.4, 2.0, -1.5};
  const std::vector<double> x2 = {0.3, 0.2, 2.5, -2.0};
  const std::vector<double> y = {1, -1, 1, -1};
  std::vector<double> hinge, ranking;
  for (size_t i = 0; i < 4; ++i) {
    hinge.push_back(std::max(0.0, 1 - x1[i] * y[i]));
    ranking.push_back(std::max(0.0, -y[i] * (x1[i] - x2[i]) + 0.5));
  }
  array a = arr(x1, {4}), b = arr(x2, {4}), t = arr(y, {4});
  expect_reductions([&](const std::string& r) { return nn::losses::hinge_loss(a, t, r); }, hinge, 1e-6, 1e-7,
                    "hinge");
  expect_reductions([&](const std::string& r) { return nn::losses::margin_ranking_loss(a, b, t, 0.5f, r); },
                    ranking, 1e-6, 1e-7, "margin_ranking");
  EXPECT_THROW(nn::losses::margin_ranking_loss(a, b, zeros({3})), std::invalid_argument);
}

TEST(NnLosses, NllAndKlDivergenceUseLogProbabilitiesAlongTheAxis) {
  array logits = arr(kLogits, {3, 4});
  array logp = nn::log_softmax(logits);
  array targets = array({0, 3, 2}, int32);
  std::vector<double> nll;
  for (int i = 0; i < 3; ++i) nll.push_back(logsumexp_row(kLogits, i, 4) - kLogits[i * 4 + kClasses[i]]);
  expect_reductions([&](const std::string& r) { return nn::losses::nll_loss(logp, targets, -1, r); }, nll,
                    1e-5, 1e-6, "nll");
  expect_close(values(nn::losses::nll_loss(transpose(logp), targets, 0)), nll, 1e-5, 1e-6, "nll axis 0");

  const std::vector<double> q = {0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.25, 0.25, 0.7, 0.1, 0.1, 0.1};
  array logq = log(arr(q, {3, 4}));
  std::vector<double> kl;
  auto lp = values(logp);
  for (int i = 0; i < 3; ++i) {
    double s = 0;
    for (int j = 0; j < 4; ++j) s += q[i * 4 + j] * (std::log(q[i * 4 + j]) - lp[i * 4 + j]);
    kl.push_back(s);
  }
  expect_reductions([&](const std::string& r) { return nn::losses::kl_div_loss(logp, logq, -1, r); }, kl,
                    1e-5, 1e-6, "kl_div");
  EXPECT_THROW(nn::losses::nll_loss(logp, array({0, 1}, int32)), std::invalid_argument);
}

TEST(NnLosses, GaussianNllClampsTheVarianceAndAddsTheConstantWhenFull) {
  const std::vector<double> mu = {0.5, -1.0, 2.0, 0.0};
  const std::vector<double> t = {0.7, -3.0, 2.0, 1.0};
  const std::vector<double> var = {0.25, 2.0, 1e-9, 1.0};
  std::vector<double> want, want_full;
  for (size_t i = 0; i < 4; ++i) {
    const double v = std::max(var[i], 1e-6);
    want.push_back(0.5 * (std::log(v) + (t[i] - mu[i]) * (t[i] - mu[i]) / v));
    want_full.push_back(want.back() + 0.5 * std::log(2 * std::numbers::pi));
  }
  array a = arr(mu, {4}), b = arr(t, {4}), v = arr(var, {4});
  expect_reductions(
      [&](const std::string& r) { return nn::losses::gaussian_nll_loss(a, b, v, false, 1e-6f, r); }, want,
      1e-5, 1e-5, "gaussian_nll");
  expect_close(values(nn::losses::gaussian_nll_loss(a, b, v, true, 1e-6f, "none")), want_full, 1e-5, 1e-5,
               "full");
  EXPECT_THROW(nn::losses::gaussian_nll_loss(a, b, zeros({3})), std::invalid_argument);
}

TEST(NnLosses, TripletAndCosineSimilarityLossesMatchTheirFormulas) {
  const std::vector<double> an = {1.0, 0.0, 2.0, -1.0, 0.5, 0.5};
  const std::vector<double> po = {0.8, 0.1, 2.5, -0.5, 0.5, 0.0};
  const std::vector<double> ne = {-1.0, 0.3, 0.0, 1.0, 0.4, 0.6};
  std::vector<double> triplet, cosine;
  for (int i = 0; i < 2; ++i) {
    double dp = 0, dn = 0, dot = 0, n1 = 0, n2 = 0;
    for (int j = 0; j < 3; ++j) {
      const int k = i * 3 + j;
      dp += (an[k] - po[k]) * (an[k] - po[k]);
      dn += (an[k] - ne[k]) * (an[k] - ne[k]);
      dot += an[k] * po[k];
      n1 += an[k] * an[k];
      n2 += po[k] * po[k];
    }
    triplet.push_back(std::max(std::sqrt(dp + 1e-6) - std::sqrt(dn + 1e-6) + 1.0, 0.0));
    cosine.push_back(dot / std::max(std::sqrt(n1) * std::sqrt(n2), 1e-8));
  }
  array a = arr(an, {2, 3}), p = arr(po, {2, 3}), n = arr(ne, {2, 3});
  expect_reductions(
      [&](const std::string& r) { return nn::losses::triplet_loss(a, p, n, -1, 2, 1.0f, 1e-6f, r); }, triplet,
      1e-5, 1e-6, "triplet");
  expect_reductions(
      [&](const std::string& r) { return nn::losses::cosine_similarity_loss(a, p, 1, 1e-8f, r); }, cosine,
      1e-5, 1e-6, "cosine");
  // A zero vector meets the eps floor instead of dividing by zero.
  expect_close(values(nn::losses::cosine_similarity_loss(zeros({1, 3}), ones({1, 3}))), {0.0}, 0, 0, "zero");
  EXPECT_THROW(nn::losses::cosine_similarity_loss(a, p, 2), std::invalid_argument);
  EXPECT_THROW(nn::losses::triplet_loss(a, p, zeros({2, 4})), std::invalid_argument);
  // Other p: the p-norm of the differences (MLX's case: 2 - 3 + 1 = 0 for p = 1 and p = 3).
  const array a0 = array({0.0f, 0.0f}, {1, 2}), p0 = array({2.0f, 0.0f}, {1, 2}),
              n0 = array({0.0f, 3.0f}, {1, 2});
  for (int norm : {1, 3}) {
    expect_close(values(nn::losses::triplet_loss(a0, p0, n0, -1, norm)), {0.0}, 1e-5, 1e-5,
                 "triplet p=" + std::to_string(norm));
  }
  expect_close(values(nn::losses::triplet_loss(a0, p0, n0, -1, 3, 2.0f)), {1.0}, 1e-5, 1e-5, "triplet p=3");
}

TEST(NnLosses, EachLossHasMlxsDefaultReduction) {
  namespace L = nn::losses;
  array x = array({0.2f, 0.7f, 0.4f, 0.1f}, {2, 2});
  array y = array({0.0f, 1.0f, 1.0f, 0.0f}, {2, 2});
  array idx = array({1, 0}, int32);
  EXPECT_EQ(L::cross_entropy(x, idx).ndim(), 1u);
  EXPECT_EQ(L::binary_cross_entropy(x, y).ndim(), 0u);
  EXPECT_EQ(L::l1_loss(x, y).ndim(), 0u);
  EXPECT_EQ(L::mse_loss(x, y).ndim(), 0u);
  EXPECT_EQ(L::nll_loss(x, idx).ndim(), 1u);
  EXPECT_EQ(L::gaussian_nll_loss(x, y, ones({2, 2})).ndim(), 0u);
  EXPECT_EQ(L::kl_div_loss(x, y).ndim(), 1u);
  EXPECT_EQ(L::smooth_l1_loss(x, y).ndim(), 0u);
  EXPECT_EQ(L::triplet_loss(x, y, x).ndim(), 1u);
  EXPECT_EQ(L::hinge_loss(x, y).ndim(), 2u);
  EXPECT_EQ(L::huber_loss(x, y).ndim(), 2u);
  EXPECT_EQ(L::log_cosh_loss(x, y).ndim(), 2u);
  EXPECT_EQ(L::cosine_similarity_loss(x, y).ndim(), 1u);
  EXPECT_EQ(L::margin_ranking_loss(x, y, y).ndim(), 2u);
}

TEST(NnLosses, EveryLossRejectsAnUnknownReduction) {
  namespace L = nn::losses;
  array x = ones({2, 2});
  array idx = array({1, 0}, int32);
  const std::string bad = "avg";
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"cross_entropy", [&] { L::cross_entropy(x, idx, std::nullopt, -1, 0.0f, bad); }},
      {"binary_cross_entropy", [&] { L::binary_cross_entropy(x, x, std::nullopt, true, bad); }},
      {"l1_loss", [&] { L::l1_loss(x, x, bad); }},
      {"mse_loss", [&] { L::mse_loss(x, x, bad); }},
      {"nll_loss", [&] { L::nll_loss(x, idx, -1, bad); }},
      {"gaussian_nll_loss", [&] { L::gaussian_nll_loss(x, x, x, false, 1e-6f, bad); }},
      {"kl_div_loss", [&] { L::kl_div_loss(x, x, -1, bad); }},
      {"smooth_l1_loss", [&] { L::smooth_l1_loss(x, x, 1.0f, bad); }},
      {"triplet_loss", [&] { L::triplet_loss(x, x, x, -1, 2, 1.0f, 1e-6f, bad); }},
      {"hinge_loss", [&] { L::hinge_loss(x, x, bad); }},
      {"huber_loss", [&] { L::huber_loss(x, x, 1.0f, bad); }},
      {"log_cosh_loss", [&] { L::log_cosh_loss(x, x, bad); }},
      {"cosine_similarity_loss", [&] { L::cosine_similarity_loss(x, x, 1, 1e-8f, bad); }},
      {"margin_ranking_loss", [&] { L::margin_ranking_loss(x, x, x, 0.0f, bad); }},
  };
  for (const auto& [name, call] : calls) {
    try {
      call();
      ADD_FAILURE() << name << ": no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[" + name + "] Invalid reduction", 0), 0u) << e.what();
    }
  }
}

TEST(NnLosses, ShapeMismatchesAreRejected) {
  namespace L = nn::losses;
  array a = ones({2, 3}), b = ones({3, 2});
  EXPECT_THROW(L::l1_loss(a, b), std::invalid_argument);
  EXPECT_THROW(L::mse_loss(a, b), std::invalid_argument);
  EXPECT_THROW(L::smooth_l1_loss(a, b), std::invalid_argument);
  EXPECT_THROW(L::kl_div_loss(a, b), std::invalid_argument);
  EXPECT_THROW(L::kl_div_loss(a, a, 2), std::invalid_argument);
}

// ---- initializers ----

namespace {

struct Moments {
  double mean, std, max_abs;
};

Moments moments_of(const array& a) {
  const auto v = values(a);
  double s = 0, s2 = 0, m = 0;
  for (double x : v) {
    s += x;
    m = std::max(m, std::abs(x));
  }
  const double mean = s / static_cast<double>(v.size());
  for (double x : v) s2 += (x - mean) * (x - mean);
  return {mean, std::sqrt(s2 / static_cast<double>(v.size())), m};
}

}  // namespace

TEST(NnInit, FansOfMatricesAndChannelsLastConvolutionWeights) {
  EXPECT_EQ(nn::init::fan_in_fan_out(zeros({8, 5})), std::make_pair(int64_t{5}, int64_t{8}));
  // Conv2d weight [C_out = 16, 3, 3, C_in = 4]: the 3 x 3 kernel multiplies both fans.
  EXPECT_EQ(nn::init::fan_in_fan_out(zeros({16, 3, 3, 4})), std::make_pair(int64_t{36}, int64_t{144}));
  EXPECT_EQ(nn::init::fan_in_fan_out(zeros({6, 5, 2})), std::make_pair(int64_t{10}, int64_t{30}));
  EXPECT_THROW(nn::init::fan_in_fan_out(zeros({4})), std::invalid_argument);
  EXPECT_THROW(nn::init::glorot_normal()(zeros({4})), std::invalid_argument);
  EXPECT_THROW(nn::init::he_uniform()(array(1.0f)), std::invalid_argument);
}

TEST(NnInit, ConstantAndIdentityFillTheShape) {
  array c = nn::init::constant(0.5f)(zeros({2, 3}, int32));
  EXPECT_EQ(c.shape(), Shape({2, 3}));
  EXPECT_EQ(c.dtype(), float32);
  expect_close(values(c), std::vector<double>(6, 0.5), 0, 0, "constant");
  EXPECT_EQ(nn::init::constant(2.0f, float16)(zeros({4})).dtype(), float16);
  array i = nn::init::identity()(zeros({3, 3}));
  expect_close(values(i), {1, 0, 0, 0, 1, 0, 0, 0, 1}, 0, 0, "identity");
  EXPECT_THROW(nn::init::identity()(zeros({2, 3})), std::invalid_argument);
  EXPECT_THROW(nn::init::identity()(zeros({3})), std::invalid_argument);
}

TEST(NnInit, NormalAndUniformHaveTheirMoments) {
  random::seed(7);
  array n = nn::init::normal(1.5f, 0.2f)(zeros({256, 256}));
  EXPECT_EQ(n.shape(), Shape({256, 256}));
  auto mn = moments_of(n);
  EXPECT_NEAR(mn.mean, 1.5, 0.005);
  EXPECT_NEAR(mn.std, 0.2, 0.2 * 0.02);
  array u = nn::init::uniform(-2.0f, 3.0f, float16)(zeros({256, 256}));
  EXPECT_EQ(u.dtype(), float16);
  auto mu = moments_of(u);
  EXPECT_NEAR(mu.mean, 0.5, 0.03);
  EXPECT_NEAR(mu.std, 5 / std::sqrt(12.0), 0.02 * 5 / std::sqrt(12.0));
  const auto uv = values(u);
  EXPECT_GE(*std::min_element(uv.begin(), uv.end()), -2.0);
  EXPECT_LE(*std::max_element(uv.begin(), uv.end()), 3.0);
}

TEST(NnInit, GlorotScalesByBothFans) {
  random::seed(11);
  const Shape shape = {128, 3, 3, 64};  // fan_in 576, fan_out 1152
  const double fans = 576 + 1152;
  auto n = moments_of(nn::init::glorot_normal()(zeros(shape)));
  EXPECT_NEAR(n.mean, 0, 0.002);
  EXPECT_NEAR(n.std, std::sqrt(2 / fans), 0.02 * std::sqrt(2 / fans));
  auto n2 = moments_of(nn::init::glorot_normal()(zeros(shape), 3.0f));
  EXPECT_NEAR(n2.std, 3 * std::sqrt(2 / fans), 0.02 * 3 * std::sqrt(2 / fans));
  const double limit = std::sqrt(6 / fans);
  auto u = moments_of(nn::init::glorot_uniform()(zeros(shape)));
  EXPECT_LE(u.max_abs, limit);
  EXPECT_GT(u.max_abs, 0.99 * limit);
  EXPECT_NEAR(u.std, limit / std::sqrt(3.0), 0.02 * limit / std::sqrt(3.0));
}

TEST(NnInit, HeScalesByTheChosenFan) {
  random::seed(13);
  const Shape shape = {64, 3, 3, 32};  // fan_in 288, fan_out 576
  auto in = moments_of(nn::init::he_normal()(zeros(shape)));
  EXPECT_NEAR(in.std, 1 / std::sqrt(288.0), 0.03 / std::sqrt(288.0));
  auto out = moments_of(nn::init::he_normal()(zeros(shape), "fan_out", 2.0f));
  EXPECT_NEAR(out.std, 2 / std::sqrt(576.0), 0.03 * 2 / std::sqrt(576.0));
  const double limit = std::sqrt(3.0 / 288);
  auto u = moments_of(nn::init::he_uniform(bfloat16)(zeros(shape)));
  EXPECT_LE(u.max_abs, limit * 1.004);  // bfloat16 rounding of the bound
  EXPECT_NEAR(u.std, limit / std::sqrt(3.0), 0.03 * limit / std::sqrt(3.0));
  EXPECT_EQ(nn::init::he_uniform(bfloat16)(zeros({4, 4})).dtype(), bfloat16);
  EXPECT_THROW(nn::init::he_normal()(zeros(shape), "fan_avg"), std::invalid_argument);
  EXPECT_THROW(nn::init::he_uniform()(zeros(shape), "fan_avg"), std::invalid_argument);
}

TEST(NnInit, SparseZeroesTheSameNumberOfEntriesInEveryColumn) {
  random::seed(17);
  const int rows = 50, cols = 64;
  array s = nn::init::sparse(0.3, 0.0f, 0.5f)(zeros({rows, cols}));
  const auto v = values(s);
  std::vector<double> nonzero;
  for (int c = 0; c < cols; ++c) {
    int zeros_in_column = 0;
    for (int r = 0; r < rows; ++r) {
      const double x = v[static_cast<size_t>(r) * cols + c];
      if (x == 0) {
        ++zeros_in_column;
      } else {
        nonzero.push_back(x);
      }
    }
    EXPECT_EQ(zeros_in_column, 15) << "column " << c;  // ceil(0.3 * 50)
  }
  auto m = moments_of(arr(nonzero, {static_cast<int>(nonzero.size())}));
  EXPECT_NEAR(m.std, 0.5, 0.5 * 0.05);
  EXPECT_EQ(values(nn::init::sparse(0.0)(zeros({3, 4}))).size(), 12u);
  EXPECT_THROW(nn::init::sparse(0.5)(zeros({2, 3, 4})), std::invalid_argument);
}

TEST(NnInit, OrthogonalGivesOrthonormalColumnsOrRowsTimesGain) {
  random::seed(19);
  for (auto [rows, cols] : {std::pair{6, 4}, std::pair{4, 6}, std::pair{5, 5}}) {
    array q = nn::init::orthogonal(2.0f)(zeros({rows, cols}));
    EXPECT_EQ(q.shape(), Shape({rows, cols}));
    EXPECT_EQ(q.dtype(), float32);
    // The smaller Gram matrix is gain^2 * I.
    array gram = rows >= cols ? matmul(transpose(q), q) : matmul(q, transpose(q));
    const int k = std::min(rows, cols);
    std::vector<double> want(static_cast<size_t>(k) * k, 0.0);
    for (int i = 0; i < k; ++i) want[static_cast<size_t>(i) * k + i] = 4.0;
    expect_close(values(gram), want, 1e-5, 1e-5, "gram " + std::to_string(rows) + "x" + std::to_string(cols));
  }
  EXPECT_THROW(nn::init::orthogonal()(zeros({2, 2, 2})), std::invalid_argument);
}

TEST(NnInit, OrthogonalIsTheSignNormalizedQOfTheNormalDraw) {
  // Q R = A with R's diagonal positive determines Q: so Q^T A is upper triangular with a
  // positive diagonal, for the A that orthogonal() draws after the same seed.
  random::seed(23);
  array a = random::normal({5, 5});
  random::seed(23);
  array q = nn::init::orthogonal()(zeros({5, 5}));
  const auto r = values(matmul(transpose(q), a));
  for (int i = 0; i < 5; ++i) {
    EXPECT_GT(r[i * 5 + i], 0) << i;
    for (int j = 0; j < i; ++j) EXPECT_NEAR(r[i * 5 + j], 0, 1e-5) << i << "," << j;
  }
}

TEST(NnInit, TheSameSeedGivesTheSameDraw) {
  random::seed(29);
  auto first = values(nn::init::glorot_uniform()(zeros({8, 8})));
  random::seed(29);
  EXPECT_EQ(values(nn::init::glorot_uniform()(zeros({8, 8}))), first);
}
