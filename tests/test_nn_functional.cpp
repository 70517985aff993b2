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
