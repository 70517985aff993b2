// braid::optimizers: each update rule against a double-precision statement of its formula over
// three steps, the state's layout, schedules, clip_grad_norm, state files, optimizers on many
// threads, bad arguments, and a small model trained to a lower loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <thread>

#include "braid/braid.h"
#include "braid/nn.h"
#include "braid/optimizers.h"
#include "optimizers/fused.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using braid::test::expect_close;
using braid::test::test_devices;
using braid::test::values;
namespace optim = braid::optimizers;

namespace {

using Vec = std::vector<double>;
using RefState = std::map<std::string, Vec>;
// One step of an optimizer's formula on one parameter, in double; t counts from 1.
using RefStep = std::function<void(Vec& p, const Vec& g, RefState& state, int t)>;

const Shape kMatrix = {2, 3};
const Shape kVector = {3};

Vec initial_parameter(const Shape& shape) {
  int64_t n = 1;
  for (int d : shape) n *= d;
  Vec p(n);
  for (int64_t i = 0; i < n; ++i) p[i] = 0.6 - 0.23 * static_cast<double>(i) + 0.05 * shape.size();
  return p;
}

// Gradients that differ per step and per element, away from zero.
Vec gradient_at(const Shape& shape, int t) {
  Vec g = initial_parameter(shape);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = 0.7 * std::sin(1.3 * static_cast<double>(i) + t) + 0.1 * t - 0.05;
  return g;
}

// Float32 values as the optimizer sees them, so that the reference starts from the same numbers.
Vec rounded(const Vec& v) {
  Vec out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

// Runs `make()` for three steps on a matrix and a vector parameter on every device and
// compares both with `reference`.
void expect_three_steps_match(const std::function<std::unique_ptr<optim::Optimizer>()>& make,
                              const RefStep& reference, double rtol = 2e-5, double atol = 1e-6) {
  for (const auto& device : test_devices()) {
    StreamContext context(device);
    auto optimizer = make();
    Tree parameters;
    parameters.set("w", array(initial_parameter(kMatrix).begin(), kMatrix, float32));
    parameters["layer"].set("b", array(initial_parameter(kVector).begin(), kVector, float32));
    std::map<std::string, Vec> want = {{"w", rounded(initial_parameter(kMatrix))},
                                       {"b", rounded(initial_parameter(kVector))}};
    std::map<std::string, RefState> ref_state;
    for (int t = 1; t <= 3; ++t) {
      Tree gradients;
      gradients.set("w", array(gradient_at(kMatrix, t).begin(), kMatrix, float32));
      gradients["layer"].set("b", array(gradient_at(kVector, t).begin(), kVector, float32));
      parameters = optimizer->apply_gradients(gradients, parameters);
      reference(want["w"], rounded(gradient_at(kMatrix, t)), ref_state["w"], t);
      reference(want["b"], rounded(gradient_at(kVector, t)), ref_state["b"], t);
      std::string what =
          optimizer->name() + " on " + test::device_name(device) + " at step " + std::to_string(t);
      EXPECT_EQ(parameters.at("w").leaf().dtype(), float32) << what;
      expect_close(values(parameters.at("w").leaf()), want["w"], rtol, atol, what + ", w");
      expect_close(values(parameters.at("layer").at("b").leaf()), want["b"], rtol, atol, what + ", b");
    }
    EXPECT_EQ(optimizer->step().item<uint64_t>(), 3u);
  }
}

// Starts a state array at zeros the first time it is read.
Vec& slot(RefState& state, const std::string& name, size_t n) {
  auto& v = state[name];
  if (v.empty()) v.assign(n, 0.0);
  return v;
}

RefStep sgd_reference(double lr, double momentum, double weight_decay, double dampening, bool nesterov) {
  return [=](Vec& p, const Vec& g0, RefState& s, int) {
    Vec& v = slot(s, "v", p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      double g = g0[i] + weight_decay * p[i];
      if (momentum <= 0) {
        p[i] -= lr * g;
        continue;
      }
      v[i] = momentum * v[i] + (dampening > 0 ? 1 - dampening : 1.0) * g;
      p[i] -= lr * (nesterov ? g + momentum * v[i] : v[i]);
    }
  };
}

RefStep adam_reference(double lr, double b1, double b2, double eps, bool bias_correction,
                       double weight_decay = 0) {
  return [=](Vec& p, const Vec& g, RefState& s, int t) {
    Vec& m = slot(s, "m", p.size());
    Vec& v = slot(s, "v", p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - lr * weight_decay;
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      if (bias_correction) {
        p[i] -= lr / (1 - std::pow(b1, t)) * m[i] / (std::sqrt(v[i]) / std::sqrt(1 - std::pow(b2, t)) + eps);
      } else {
        p[i] -= lr * m[i] / (std::sqrt(v[i]) + eps);
      }
    }
  };
}

double rms(const Vec& x) {
  double sum = 0;
  for (double e : x) sum += e * e;
  return std::sqrt(sum / static_cast<double>(x.size()));
}

struct AdafactorOptions {
  std::optional<double> lr;
  double eps1 = 1e-30, eps2 = 1e-3, clip = 1.0, decay_rate = -0.8;
  std::optional<double> beta_1;
  double weight_decay = 0;
  bool scale_parameter = true, relative_step = true, warmup_init = false;
};

// Adafactor on a 2x3 matrix (factored) or a vector, told apart by the size.
RefStep adafactor_reference(AdafactorOptions o) {
  return [=](Vec& p, const Vec& g, RefState& s, int t) {
    const bool factored = p.size() == 6;
    double rel =
        o.relative_step ? std::min(o.warmup_init ? 1e-6 * t : 1e-2, 1 / std::sqrt(double(t))) : *o.lr;
    double lr = o.scale_parameter ? std::max(o.eps2, rms(p)) * rel : rel;
    double beta_2 = 1 - std::pow(double(t), o.decay_rate);
    Vec update(p.size());
    for (size_t i = 0; i < p.size(); ++i) update[i] = g[i] * g[i] + o.eps1;
    if (factored) {
      Vec& row = slot(s, "row", 2);
      Vec& col = slot(s, "col", 3);
      for (int r = 0; r < 2; ++r)
        row[r] = beta_2 * row[r] + (1 - beta_2) * (update[3 * r] + update[3 * r + 1] + update[3 * r + 2]) / 3;
      for (int c = 0; c < 3; ++c) col[c] = beta_2 * col[c] + (1 - beta_2) * (update[c] + update[3 + c]) / 2;
      double row_mean = (row[0] + row[1]) / 2;
      for (int r = 0; r < 2; ++r) {
        for (int c = 0; c < 3; ++c)
          update[3 * r + c] = g[3 * r + c] / std::sqrt(row[r] / row_mean) / std::sqrt(col[c]);
      }
    } else {
      Vec& sq = slot(s, "sq", p.size());
      for (size_t i = 0; i < p.size(); ++i) {
        sq[i] = beta_2 * sq[i] + (1 - beta_2) * update[i];
        update[i] = g[i] / std::sqrt(sq[i]);
      }
    }
    double scale = std::max(1.0, rms(update) / o.clip);
    for (double& u : update) u = lr * u / scale;
    if (o.beta_1) {
      Vec& avg = slot(s, "avg", p.size());
      for (size_t i = 0; i < p.size(); ++i)
        update[i] = avg[i] = *o.beta_1 * avg[i] + (1 - *o.beta_1) * update[i];
    }
    for (size_t i = 0; i < p.size(); ++i) p[i] = p[i] + p[i] * (-o.weight_decay * lr) - update[i];
  };
}

// A row-major matrix in double.
struct Matrix {
  int64_t rows, cols;
  Vec v;
  double at(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

Matrix transposed(const Matrix& m) {
  Matrix t{m.cols, m.rows, Vec(m.v.size())};
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) t.v[c * m.rows + r] = m.at(r, c);
  return t;
}

Matrix product(const Matrix& a, const Matrix& b) {
  Matrix out{a.rows, b.cols, Vec(a.rows * b.cols, 0.0)};
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t c = 0; c < b.cols; ++c) out.v[r * b.cols + c] += a.at(r, k) * b.at(k, c);
  return out;
}

// x <- a x + (b G + c G G) x with G = x x^T, on the wide orientation of x / ||x||_F.
Matrix orthogonalized(Matrix x, int steps) {
  const bool tall = x.rows > x.cols;
  if (tall) x = transposed(x);
  double norm = 0;
  for (double e : x.v) norm += e * e;
  norm = std::sqrt(norm);
  for (double& e : x.v) e /= norm + 1e-7;
  for (int i = 0; i < steps; ++i) {
    Matrix gram = product(x, transposed(x));
    Matrix gram2 = product(gram, gram);
    Matrix poly = gram;
    for (size_t j = 0; j < poly.v.size(); ++j) poly.v[j] = -4.7750 * gram.v[j] + 2.0315 * gram2.v[j];
    Matrix px = product(poly, x);
    for (size_t j = 0; j < x.v.size(); ++j) x.v[j] = 3.4445 * x.v[j] + px.v[j];
  }
  return tall ? transposed(x) : x;
}

struct MuonOptions {
  double lr = 0.05, momentum = 0.95, weight_decay = 0.01;
  bool nesterov = true;
  int ns_steps = 5;
};

// One Muon step on a parameter of `shape`: momentum on g + wd w; above one axis the update is
// orthogonalized as a [shape[0], -1] matrix and lr scaled by sqrt(max(1, shape[-2] / shape[-1])).
void muon_reference(const MuonOptions& o, const Shape& shape, Vec& p, const Vec& g0, RefState& s) {
  Vec& v = slot(s, "v", p.size());
  Vec update(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    double g = g0[i] + o.weight_decay * p[i];
    v[i] = o.momentum * v[i] + (1 - o.momentum) * g;
    update[i] = o.nesterov ? g * (1 - o.momentum) + o.momentum * v[i] : v[i];
  }
  double lr = o.lr;
  if (shape.size() >= 2) {
    const int64_t rows = shape[0];
    update = orthogonalized(Matrix{rows, static_cast<int64_t>(p.size()) / rows, update}, o.ns_steps).v;
    lr *= std::sqrt(std::max(1.0, double(shape[shape.size() - 2]) / double(shape.back())));
  }
  for (size_t i = 0; i < p.size(); ++i) p[i] -= lr * update[i];
}

// Three Muon steps on parameters of each shape, on every device, against muon_reference.
void expect_muon_matches(const MuonOptions& o, const std::vector<Shape>& shapes) {
  for (const auto& device : test_devices()) {
    StreamContext context(device);
    optim::Muon optimizer(o.lr, o.momentum, o.weight_decay, o.nesterov, o.ns_steps);
    Tree parameters;
    std::vector<Vec> want;
    std::vector<RefState> ref_state(shapes.size());
    for (size_t k = 0; k < shapes.size(); ++k) {
      parameters.set("p" + std::to_string(k),
                     array(initial_parameter(shapes[k]).begin(), shapes[k], float32));
      want.push_back(rounded(initial_parameter(shapes[k])));
    }
    for (int t = 1; t <= 3; ++t) {
      Tree gradients;
      for (size_t k = 0; k < shapes.size(); ++k) {
        gradients.set("p" + std::to_string(k), array(gradient_at(shapes[k], t).begin(), shapes[k], float32));
        muon_reference(o, shapes[k], want[k], rounded(gradient_at(shapes[k], t)), ref_state[k]);
      }
      parameters = optimizer.apply_gradients(gradients, parameters);
      for (size_t k = 0; k < shapes.size(); ++k) {
        const array& got = parameters.at("p" + std::to_string(k)).leaf();
        std::string what = "Muon on " + test::device_name(device) + ", shape " + std::to_string(k) +
                           ", step " + std::to_string(t);
        EXPECT_EQ(got.shape(), shapes[k]) << what;
        expect_close(values(got), want[k], 1e-4, 1e-5, what);
      }
    }
  }
}

template <class T, class... Args>
std::function<std::unique_ptr<optim::Optimizer>()> factory(Args... args) {
  return [=] { return std::make_unique<T>(args...); };
}

// y = x w^T + b, with its parameters registered so that nn::value_and_grad sees them.
struct TinyLinear : nn::Module {
  TinyLinear(int in, int out) {
    register_parameter("weight", zeros({out, in}));
    register_parameter("bias", zeros({out}));
  }
  std::string name() const override { return "TinyLinear"; }
  array operator()(const array& x) override { return matmul(x, transpose(param("weight"))) + param("bias"); }
};

}  // namespace

// ---- update rules ----

TEST(Optimizers, SgdMatchesItsFormula) {
  expect_three_steps_match(factory<optim::SGD>(0.1), sgd_reference(0.1, 0, 0, 0, false));
}

TEST(Optimizers, SgdWithMomentumDampeningAndWeightDecayMatchesItsFormula) {
  expect_three_steps_match(factory<optim::SGD>(0.1, 0.9, 0.01, 0.2, false),
                           sgd_reference(0.1, 0.9, 0.01, 0.2, false));
}

TEST(Optimizers, SgdWithNesterovMomentumMatchesItsFormula) {
  expect_three_steps_match(factory<optim::SGD>(0.1, 0.8, 0.0, 0.0, true),
                           sgd_reference(0.1, 0.8, 0, 0, true));
}

TEST(Optimizers, RmspropMatchesItsFormula) {
  expect_three_steps_match(factory<optim::RMSprop>(0.01, 0.9, 1e-8),
                           [](Vec& p, const Vec& g, RefState& s, int) {
                             Vec& v = slot(s, "v", p.size());
                             for (size_t i = 0; i < p.size(); ++i) {
                               v[i] = 0.9 * v[i] + 0.1 * g[i] * g[i];
                               p[i] -= 0.01 * g[i] / (std::sqrt(v[i]) + 1e-8);
                             }
                           });
}

TEST(Optimizers, AdagradMatchesItsFormula) {
  expect_three_steps_match(factory<optim::Adagrad>(0.1), [](Vec& p, const Vec& g, RefState& s, int) {
    Vec& v = slot(s, "v", p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      v[i] += g[i] * g[i];
      p[i] -= 0.1 * g[i] / (std::sqrt(v[i]) + 1e-8);
    }
  });
}

TEST(Optimizers, AdaDeltaMatchesItsFormula) {
  expect_three_steps_match(factory<optim::AdaDelta>(1.0, 0.95), [](Vec& p, const Vec& g, RefState& s, int) {
    Vec& v = slot(s, "v", p.size());
    Vec& u = slot(s, "u", p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      v[i] = 0.95 * v[i] + 0.05 * g[i] * g[i];
      double d = std::sqrt(u[i] + 1e-6) / std::sqrt(v[i] + 1e-6) * g[i];
      u[i] = 0.95 * u[i] + 0.05 * d * d;
      p[i] -= d;
    }
  });
}

TEST(Optimizers, AdamMatchesItsFormula) {
  expect_three_steps_match(factory<optim::Adam>(0.01), adam_reference(0.01, 0.9, 0.999, 1e-8, false));
}

TEST(Optimizers, AdamWithBiasCorrectionMatchesItsFormula) {
  expect_three_steps_match(factory<optim::Adam>(0.01, std::array<double, 2>{0.8, 0.99}, 1e-6, true),
                           adam_reference(0.01, 0.8, 0.99, 1e-6, true));
}

TEST(Optimizers, AdamWDecaysWeightsBeforeTheAdamStep) {
  expect_three_steps_match(factory<optim::AdamW>(0.01), adam_reference(0.01, 0.9, 0.999, 1e-8, false, 0.01));
  expect_three_steps_match(factory<optim::AdamW>(0.05, std::array<double, 2>{0.9, 0.999}, 1e-8, 0.1, true),
                           adam_reference(0.05, 0.9, 0.999, 1e-8, true, 0.1));
}

TEST(Optimizers, AdamaxMatchesItsFormula) {
  expect_three_steps_match(factory<optim::Adamax>(0.02), [](Vec& p, const Vec& g, RefState& s, int) {
    Vec& m = slot(s, "m", p.size());
    Vec& v = slot(s, "v", p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = std::max(0.999 * v[i], std::abs(g[i]));
      p[i] -= 0.02 * m[i] / (v[i] + 1e-8);
    }
  });
}

TEST(Optimizers, LionMatchesItsFormulaWithAndWithoutWeightDecay) {
  for (double weight_decay : {0.0, 0.1}) {
    expect_three_steps_match(factory<optim::Lion>(0.01, std::array<double, 2>{0.9, 0.99}, weight_decay),
                             [=](Vec& p, const Vec& g, RefState& s, int) {
                               Vec& m = slot(s, "m", p.size());
                               for (size_t i = 0; i < p.size(); ++i) {
                                 double c = 0.9 * m[i] + 0.1 * g[i];
                                 m[i] = 0.99 * m[i] + 0.01 * g[i];
                                 p[i] = (1 - 0.01 * weight_decay) * p[i] - 0.01 * (c > 0 ? 1 : -1);
                               }
                             });
  }
}

TEST(Optimizers, AdafactorWithRelativeStepsMatchesItsFormula) {
  expect_three_steps_match(factory<optim::Adafactor>(), adafactor_reference({}), 1e-4, 1e-6);
}

TEST(Optimizers, AdafactorWithALearningRateFirstMomentAndWeightDecayMatchesItsFormula) {
  AdafactorOptions o;
  o.lr = 0.05;
  o.beta_1 = 0.9;
  o.weight_decay = 0.01;
  o.relative_step = false;
  expect_three_steps_match(
      [] {
        return std::make_unique<optim::Adafactor>(0.05, std::array<double, 2>{1e-30, 1e-3}, 1.0, -0.8, 0.9,
                                                  0.01, true, false, false);
      },
      adafactor_reference(o), 1e-4, 1e-6);
}

TEST(Optimizers, AdafactorWithWarmupAndUnscaledStepsMatchesItsFormula) {
  AdafactorOptions o;
  o.warmup_init = true;
  o.scale_parameter = false;
  o.clip = 0.5;
  o.decay_rate = -0.5;
  expect_three_steps_match(
      [] {
        return std::make_unique<optim::Adafactor>(std::nullopt, std::array<double, 2>{1e-30, 1e-3}, 0.5, -0.5,
                                                  std::nullopt, 0.0, false, true, true);
      },
      adafactor_reference(o), 1e-4, 1e-9);
}

TEST(Optimizers, AdafactorFactorsMomentsOfEveryParameterAboveOneDimension) {
  optim::Adafactor optimizer;
  Tree parameters;
  parameters.set("cube", ones({2, 3, 4}));
  parameters.set("vector", ones({4}));
  optimizer.init(parameters);
  EXPECT_EQ(optimizer.state().at("cube").at("exp_avg_sq_row").leaf().shape(), (Shape{2, 3}));
  EXPECT_EQ(optimizer.state().at("cube").at("exp_avg_sq_col").leaf().shape(), (Shape{2, 4}));
  EXPECT_FALSE(optimizer.state().at("vector").contains("exp_avg_sq_row"));
  EXPECT_EQ(optimizer.state().at("vector").at("exp_avg_sq").leaf().shape(), (Shape{4}));
  Tree gradients = tree_map([](const array& p) { return p * 0.5f; }, parameters);
  Tree updated = optimizer.apply_gradients(gradients, parameters);
  EXPECT_EQ(updated.at("cube").leaf().shape(), (Shape{2, 3, 4}));
  for (double v : values(updated.at("cube").leaf())) EXPECT_TRUE(std::isfinite(v));
}

TEST(Optimizers, MuonMatchesItsFormulaForEveryKindOfParameter) {
  // A scalar and a vector (momentum only); a wide and a tall matrix (the tall one is
  // orthogonalized transposed and its step scaled by sqrt(3 / 2)); parameters above two axes,
  // flattened to [shape[0], -1], scaled by their own last two axes: (2, 6, 2) by sqrt(3),
  // (8, 1, 1, 2) and (4, 3, 1, 5) not at all.
  const std::vector<Shape> shapes = {{}, {5}, {2, 3}, {3, 2}, {2, 6, 2}, {8, 1, 1, 2}, {4, 3, 1, 5}};
  expect_muon_matches({}, shapes);
  expect_muon_matches({.lr = 0.02, .momentum = 0.9, .weight_decay = 0.0, .nesterov = false, .ns_steps = 3},
                      shapes);
  expect_muon_matches({.lr = 0.1, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true, .ns_steps = 0},
                      shapes);
}

// The same numbers as test_muon_agrees_with_the_cpp_optimizer in bindings/python/tests: one
// problem whose result both implementations must reach (a tall [4, 3] matrix after
// flattening, scaled by sqrt(3 / 1) from the parameter's last two axes).
TEST(Optimizers, MuonGivesThePythonModulesNumbers) {
  const Shape shape = {4, 3, 1};
  Vec w0(12);
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = 0.5 - 0.1 * static_cast<double>(i);
  optim::Muon optimizer(0.05, 0.9, 0.1, true, 5);
  array w = array(w0.begin(), shape, float32);
  for (int t = 1; t <= 2; ++t) {
    Vec g(12);
    for (size_t i = 0; i < g.size(); ++i)
      g[i] = 0.7 * std::sin(1.3 * static_cast<double>(i) + t) + 0.1 * t - 0.05;
    Tree gradients;
    gradients.set("w", array(g.begin(), shape, float32));
    Tree parameters;
    parameters.set("w", w);
    w = optimizer.apply_gradients(gradients, parameters).at("w").leaf();
  }
  const Vec want = {0.361359604,  0.363284262,  0.311751893,  0.212407722,  0.0866715304, -0.155399341,
                    -0.172099802, -0.103136544, -0.282874375, -0.431190432, -0.605691017, -0.593170259};
  expect_close(values(w), want, 0, 2e-5, "Muon");
}

TEST(Optimizers, MuonKeepsOneMomentumArrayPerParameter) {
  optim::Muon optimizer(0.02);
  Tree parameters;
  parameters.set("conv", ones({4, 3, 3, 2}));
  parameters.set("bias", ones({4}));
  optimizer.init(parameters);
  EXPECT_EQ(optimizer.state().at("conv").at("v").leaf().shape(), (Shape{4, 3, 3, 2}));
  EXPECT_EQ(optimizer.state().at("bias").at("v").leaf().shape(), (Shape{4}));
  EXPECT_EQ(optimizer.state().at("conv").size(), 1u);
  EXPECT_EQ(optimizer.name(), "Muon");
}

// ---- state ----
// ---- state ----

TEST(Optimizers, StateHasMlxLayoutAndNames) {
  optim::Adam optimizer(0.1);
  Tree parameters;
  parameters.set("weight", ones({2, 2}));
  parameters.set("layers", Tree(Tree::List{Tree(Tree::Dict{{"bias", Tree(zeros({3}))}})}));
  optimizer.init(parameters);
  const Tree& state = optimizer.state();
  EXPECT_EQ(state.at("step").leaf().dtype(), uint64);
  EXPECT_EQ(optimizer.step().item<uint64_t>(), 0u);
  EXPECT_EQ(state.at("learning_rate").leaf().dtype(), float32);
  EXPECT_FLOAT_EQ(optimizer.learning_rate().item<float>(), 0.1f);
  std::vector<std::string> paths;
  for (const auto& [path, leaf] : tree_flatten(state)) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{"step", "learning_rate", "weight.m", "weight.v",
                                             "layers.0.bias.m", "layers.0.bias.v"}));
  EXPECT_TRUE(state.at("layers").is_list());
}

TEST(Optimizers, StateKeepsTheParameterDtype) {
  for (Dtype dtype : {float16, bfloat16, float32}) {
    for (auto& make : {factory<optim::SGD>(0.1, 0.9),
                       factory<optim::Adam>(0.1, std::array<double, 2>{0.9, 0.999}, 1e-8, true),
                       factory<optim::AdamW>(0.1), factory<optim::Lion>(0.1), factory<optim::Adafactor>(),
                       factory<optim::Muon>(0.1)}) {
      auto optimizer = make();
      Tree parameters;
      parameters.set("w", astype(full({2, 3}, 0.5f), dtype));
      Tree gradients;
      gradients.set("w", astype(full({2, 3}, 0.25f), dtype));
      Tree updated = optimizer->apply_gradients(gradients, parameters);
      EXPECT_EQ(updated.at("w").leaf().dtype(), dtype) << optimizer->name();
      for (const auto& [path, leaf] : tree_flatten(optimizer->state().at("w"))) {
        EXPECT_EQ(leaf.dtype(), dtype) << optimizer->name() << " " << path;
      }
    }
  }
}

TEST(Optimizers, ParametersMayHoldMoreThanTheGradients) {
  optim::SGD optimizer(1.0);
  Tree parameters;
  parameters.set("a", ones({2}));
  parameters.set("frozen", ones({2}));
  Tree gradients;
  gradients.set("a", ones({2}));
  Tree updated = optimizer.apply_gradients(gradients, parameters);
  EXPECT_FALSE(updated.contains("frozen"));
  EXPECT_EQ(values(updated.at("a").leaf()), (Vec{0, 0}));
  EXPECT_FALSE(optimizer.state().contains("frozen"));
}

TEST(Optimizers, SavedAndRestoredStateContinuesBitIdentically) {
  auto run_step = [](optim::Optimizer& optimizer, Tree parameters, int t) {
    Tree gradients;
    gradients.set("w", array(gradient_at(kMatrix, t).begin(), kMatrix, float32));
    gradients["layers"] = Tree(
        Tree::List{Tree(Tree::Dict{{"b", Tree(array(gradient_at(kVector, t).begin(), kVector, float32))}})});
    return optimizer.apply_gradients(gradients, parameters);
  };
  const std::vector<std::function<std::unique_ptr<optim::Optimizer>()>> makers = {
      [] {
        return std::make_unique<optim::Adam>(optim::cosine_decay(0.1, 10), std::array<double, 2>{0.9, 0.99},
                                             1e-8, true);
      },
      [] { return std::make_unique<optim::Muon>(optim::cosine_decay(0.05, 10), 0.9, 0.01, true, 5); },
      factory<optim::SGD>(0.1, 0.9),
      factory<optim::Lion>(0.01),
      factory<optim::AdamW>(0.01),
      factory<optim::Adafactor>(std::nullopt, std::array<double, 2>{1e-30, 1e-3}, 1.0, -0.8, 0.9)};
  for (const auto& make : makers) {
    Tree parameters;
    parameters.set("w", array(initial_parameter(kMatrix).begin(), kMatrix, float32));
    parameters["layers"] = Tree(Tree::List{
        Tree(Tree::Dict{{"b", Tree(array(initial_parameter(kVector).begin(), kVector, float32))}})});
    auto original = make();
    const std::string name = original->name();
    for (int t = 1; t <= 2; ++t) parameters = run_step(*original, parameters, t);
    std::string file = testing::TempDir() + "braid_optimizer_state.safetensors";
    original->save_state(file);

    auto restored = make();
    restored->load_state(file);
    std::remove(file.c_str());
    EXPECT_EQ(restored->step().item<uint64_t>(), 2u) << name;
    for (int t = 3; t <= 4; ++t) {
      Tree a = run_step(*original, parameters, t);
      Tree b = run_step(*restored, parameters, t);
      EXPECT_EQ(values(a.at("w").leaf()), values(b.at("w").leaf())) << name << ", step " << t;
      EXPECT_EQ(values(a.at("layers").at(0).at("b").leaf()), values(b.at("layers").at(0).at("b").leaf()))
          << name << ", step " << t;
      parameters = a;
    }
    auto original_state = tree_flatten(original->state());
    std::map<std::string, array> restored_state;
    for (const auto& [path, leaf] : tree_flatten(restored->state())) restored_state.emplace(path, leaf);
    ASSERT_EQ(original_state.size(), restored_state.size()) << name;
    for (const auto& [path, leaf] : original_state) {
      ASSERT_TRUE(restored_state.count(path)) << name << " " << path;
      EXPECT_EQ(leaf.dtype(), restored_state.at(path).dtype()) << name << " " << path;
      EXPECT_EQ(values(leaf), values(restored_state.at(path))) << name << " " << path;
    }
  }
}

// ---- threads ----

// Every optimizer, stepped on several threads at once (each thread its own optimizer, all
// reading the same parameters and gradients), its lazy results evaluated on another thread
// than the one that built them, and its const members read from every thread at once: each
// thread gets the single-threaded numbers.
TEST(Optimizers, OptimizersSteppedOnManyThreadsGiveTheSingleThreadedNumbers) {
  braid_test::Watchdog watchdog;
  constexpr int kThreads = 4;
  const std::vector<std::function<std::unique_ptr<optim::Optimizer>()>> makers = {
      factory<optim::SGD>(0.1, 0.9), factory<optim::RMSprop>(0.01), factory<optim::Adagrad>(0.1),
      factory<optim::AdaDelta>(1.0), factory<optim::Adam>(0.01),    factory<optim::AdamW>(0.01),
      factory<optim::Adamax>(0.02),  factory<optim::Lion>(0.01),    factory<optim::Adafactor>(),
      factory<optim::Muon>(0.05)};
  Tree parameters;
  parameters.set("w", array(initial_parameter(kMatrix).begin(), kMatrix, float32));
  parameters["layer"].set("b", array(initial_parameter(kVector).begin(), kVector, float32));
  std::vector<Tree> gradients(3);
  for (int t = 1; t <= 3; ++t) {
    gradients[t - 1].set("w", array(gradient_at(kMatrix, t).begin(), kMatrix, float32));
    gradients[t - 1]["layer"].set("b", array(gradient_at(kVector, t).begin(), kVector, float32));
  }
  // The updated parameters and the state after three steps, unevaluated.
  auto build = [&](optim::Optimizer& optimizer) {
    Tree current = parameters;
    for (const Tree& g : gradients) current = optimizer.apply_gradients(g, current);
    std::vector<array> out = tree_leaves(current);
    for (const auto& leaf : tree_leaves(optimizer.state())) out.push_back(leaf);
    return out;
  };
  auto read = [](const std::vector<array>& arrays) {
    std::vector<Vec> out;
    for (const auto& a : arrays) out.push_back(values(a));
    return out;
  };
  for (const auto& make : makers) {
    auto single = make();
    const std::string name = single->name();
    const std::vector<Vec> want = read(build(*single));

    std::vector<std::unique_ptr<optim::Optimizer>> optimizers;
    for (int i = 0; i < kThreads; ++i) optimizers.push_back(make());
    std::vector<std::vector<array>> built(kThreads);
    std::vector<std::vector<Vec>> got(kThreads), shared_reads(kThreads);
    {
      std::vector<std::thread> threads;
      for (int i = 0; i < kThreads; ++i) threads.emplace_back([&, i] { built[i] = build(*optimizers[i]); });
      for (auto& th : threads) th.join();
    }
    {
      std::vector<std::thread> threads;
      for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
          got[i] = read(built[(i + 1) % kThreads]);
          shared_reads[i] = read(tree_leaves(single->state()));
          shared_reads[i].push_back(values(single->step()));
        });
      }
      for (auto& th : threads) th.join();
    }
    const std::vector<Vec> single_state = read(tree_leaves(single->state()));
    for (int i = 0; i < kThreads; ++i) {
      EXPECT_EQ(got[i], want) << name << ", built on thread " << (i + 1) % kThreads << ", read on " << i;
      ASSERT_EQ(shared_reads[i].size(), single_state.size() + 1) << name;
      EXPECT_EQ(std::vector<Vec>(shared_reads[i].begin(), shared_reads[i].end() - 1), single_state) << name;
      EXPECT_EQ(shared_reads[i].back(), Vec{3}) << name;
    }
  }
}

// Adam and AdamW update each parameter with three fused nodes (the two moments, then the
// parameter); they must compute exactly what the ops they replace compute, in every floating
// dtype, with and without bias correction, on every device, for gradients of any layout.
TEST(Optimizers, FusedAdamStepsEqualTheUnfusedOpsBitForBit) {
  struct Case {
    const char* name;
    std::function<std::unique_ptr<optim::Optimizer>()> make;
  };
  const std::vector<Case> cases = {
      {"Adam",
       [] {
         return std::make_unique<optim::Adam>(1e-2, std::array<double, 2>{0.9, 0.999}, 1e-8);
       }},
      {"Adam bias-corrected",
       [] {
         return std::make_unique<optim::Adam>(3e-2, std::array<double, 2>{0.8, 0.99}, 1e-6, true);
       }},
      {"AdamW", [] { return std::make_unique<optim::AdamW>(1e-2); }},
      {"AdamW bias-corrected",
       [] {
         return std::make_unique<optim::AdamW>(5e-3, std::array<double, 2>{0.9, 0.999}, 1e-8, 0.1, true);
       }},
  };
  const Shape shape = {37, 5};  // odd sizes: the vector loops' tails
  for (const auto& device : test_devices()) {
    StreamContext on(device);
    for (Dtype dtype : {float32, float16, bfloat16, float64}) {
      if (dtype == float64 && device == Device::gpu) continue;
      for (const auto& c : cases) {
        auto run = [&](bool fused) {
          optimizers::detail::fusion_enabled() = fused;
          auto optimizer = c.make();
          Tree parameters;
          parameters.set("w", astype(array(initial_parameter(shape).begin(), shape, float32), dtype));
          for (int t = 1; t <= 3; ++t) {
            // A transposed gradient: the fused path's operands must not assume a layout.
            array g = transpose(astype(array(gradient_at({5, 37}, t).begin(), Shape{5, 37}, float32), dtype));
            Tree gradients;
            gradients.set("w", g);
            parameters = optimizer->apply_gradients(gradients, parameters);
            const array& w = parameters.at("w").leaf();
            EXPECT_EQ(std::string(w.primitive().name()) == "OptimizerUpdate", fused) << c.name;
            eval(w);
          }
          optimizers::detail::fusion_enabled() = true;
          auto state = tree_flatten(optimizer->state());
          std::vector<std::vector<double>> out{values(parameters.at("w").leaf())};
          for (const auto& [path, leaf] : state) out.push_back(values(leaf));
          return out;
        };
        const auto fused = run(true);
        const auto unfused = run(false);
        ASSERT_EQ(fused.size(), unfused.size());
        for (size_t i = 0; i < fused.size(); ++i) {
          EXPECT_EQ(fused[i], unfused[i]) << c.name << ", " << dtype << ", " << device << ", output " << i;
        }
      }
    }
  }
}

// ---- schedules ----

TEST(Schedules, ValuesAtChosenStepsFollowTheirFormulas) {
  const double pi = std::numbers::pi;
  for (const auto& device : test_devices()) {
    StreamContext context(device);
    auto at = [](const optim::Schedule& schedule, uint64_t step) {
      return values(schedule(array(step, uint64)))[0];
    };
    for (uint64_t t : {0u, 1u, 7u, 10u, 25u}) {
      EXPECT_NEAR(at(optim::exponential_decay(0.1, 0.9), t), 0.1 * std::pow(0.9, double(t)), 1e-7);
      EXPECT_NEAR(at(optim::step_decay(0.1, 0.5, 4), t), 0.1 * std::pow(0.5, double(t / 4)), 1e-7);
      double s = std::min<double>(t, 20);
      EXPECT_NEAR(at(optim::cosine_decay(0.1, 20), t), 0.05 * (1 + std::cos(pi * s / 20)), 1e-7);
      EXPECT_NEAR(at(optim::cosine_decay(0.1, 20, 0.01), t), 0.01 + 0.5 * (1 + std::cos(pi * s / 20)) * 0.09,
                  1e-7);
      EXPECT_NEAR(at(optim::linear_schedule(0.0, 0.2, 10), t), std::min<double>(t, 10) * 0.02, 1e-7);
    }
  }
}

TEST(Schedules, JoinedSchedulesSwitchAtTheirBoundaries) {
  auto warmup = optim::linear_schedule(0.0, 0.1, 10);
  auto decay = optim::exponential_decay(0.1, 0.5);
  auto joined = optim::join_schedules({warmup, optim::join_schedules({decay}, {})}, {10});
  auto three = optim::join_schedules({warmup, decay, optim::linear_schedule(1.0, 2.0, 4)}, {10, 12});
  for (const auto& device : test_devices()) {
    StreamContext context(device);
    auto at = [](const optim::Schedule& s, uint64_t step) { return values(s(array(step, uint64)))[0]; };
    EXPECT_NEAR(at(joined, 0), 0.0, 1e-8);
    EXPECT_NEAR(at(joined, 9), 0.09, 1e-7);
    EXPECT_NEAR(at(joined, 10), 0.1, 1e-7);  // decay's step 0
    EXPECT_NEAR(at(joined, 12), 0.025, 1e-7);
    EXPECT_NEAR(at(three, 11), 0.05, 1e-7);
    EXPECT_NEAR(at(three, 12), 1.0, 1e-7);
    EXPECT_NEAR(at(three, 14), 1.5, 1e-7);
    EXPECT_NEAR(at(three, 100), 2.0, 1e-7);
  }
}

TEST(Schedules, OptimizerEvaluatesItsScheduleAtTheStepBeforeEachUpdate) {
  optim::SGD optimizer(optim::exponential_decay(0.5, 0.5));
  EXPECT_FLOAT_EQ(optimizer.learning_rate().item<float>(), 0.5f);
  Tree parameters;
  parameters.set("w", zeros({1}));
  Tree gradients;
  gradients.set("w", ones({1}));
  double want = 0;
  for (int t = 1; t <= 3; ++t) {
    parameters = optimizer.apply_gradients(gradients, parameters);
    want -= 0.5 * std::pow(0.5, t - 1);
    EXPECT_FLOAT_EQ(optimizer.learning_rate().item<float>(), static_cast<float>(0.5 * std::pow(0.5, t - 1)));
    EXPECT_NEAR(values(parameters.at("w").leaf())[0], want, 1e-7);
  }
  EXPECT_EQ(optimizer.step().item<uint64_t>(), 3u);
  optim::Adam with_lambda([](const array& step) { return astype(step, float32) * 0.0f + 0.25f; });
  EXPECT_FLOAT_EQ(with_lambda.learning_rate().item<float>(), 0.25f);
}

TEST(Schedules, SetLearningRateReplacesAFixedRate) {
  optim::SGD optimizer(0.1);
  optimizer.set_learning_rate(0.5f);
  Tree parameters;
  parameters.set("w", zeros({1}));
  Tree gradients;
  gradients.set("w", ones({1}));
  EXPECT_FLOAT_EQ(values(optimizer.apply_gradients(gradients, parameters).at("w").leaf())[0], -0.5f);
}

// ---- clip_grad_norm ----

TEST(ClipGradNorm, ScalesGradientsAboveTheNormAndKeepsThoseBelow) {
  for (const auto& device : test_devices()) {
    StreamContext context(device);
    Tree grads;
    grads.set("w1", array({2.0f, 3.0f}));
    grads["inner"].set("w2", array({1.0f}));
    const double norm = std::sqrt(14.0);
    auto [clipped, total] = optim::clip_grad_norm(grads, 2.0);
    EXPECT_NEAR(total.item<float>(), norm, 1e-6);
    double scale = 2.0 / (norm + 1e-6);
    expect_close(values(clipped.at("w1").leaf()), {2 * scale, 3 * scale}, 1e-6, 0, "w1");
    expect_close(values(clipped.at("inner").at("w2").leaf()), {scale}, 1e-6, 0, "w2");

    auto [unclipped, same_total] = optim::clip_grad_norm(grads, 4.0);
    EXPECT_EQ(values(unclipped.at("w1").leaf()), (Vec{2, 3}));
    EXPECT_NEAR(same_total.item<float>(), norm, 1e-6);
  }
}

// ---- MultiOptimizer ----

TEST(MultiOptimizer, SendsEachParameterToTheFirstOptimizerWhoseFilterAcceptsIt) {
  auto sgd = std::make_shared<optim::SGD>(1.0);
  auto other = std::make_shared<optim::SGD>(0.5);
  optim::MultiOptimizer optimizer({sgd, other}, {[](const std::string& path, const array&) {
                                    return path.find("bias") != std::string::npos;
                                  }});
  Tree parameters;
  parameters["layers"] =
      Tree(Tree::List{Tree(Tree::Dict{{"weight", Tree(zeros({2}))}, {"bias", Tree(zeros({2}))}}),
                      Tree(Tree::Dict{{"weight", Tree(zeros({2}))}, {"bias", Tree(zeros({2}))}})});
  Tree gradients = tree_map([](const array& p) { return ones_like(p); }, parameters);
  Tree updated = optimizer.apply_gradients(gradients, parameters);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(values(updated.at("layers").at(i).at("bias").leaf()), (Vec{-1, -1}));
    EXPECT_EQ(values(updated.at("layers").at(i).at("weight").leaf()), (Vec{-0.5, -0.5}));
  }
  EXPECT_EQ(optimizer.state().at("states").size(), 2u);
  EXPECT_TRUE(optimizer.state().at("states").at(0).at("layers").at(1).contains("bias"));
  EXPECT_FALSE(optimizer.state().at("states").at(0).at("layers").at(1).contains("weight"));
  EXPECT_EQ(optimizer.step().item<uint64_t>(), 1u);
  optimizer.set_learning_rate(0.25f);
  EXPECT_FLOAT_EQ(other->learning_rate().item<float>(), 0.25f);
}

// ---- bad arguments ----

TEST(Optimizers, BadArgumentsThrowBeforeAnyUpdate) {
  EXPECT_THROW(optim::SGD(0.1, 0.0, 0.0, 0.0, true), std::invalid_argument);
  EXPECT_THROW(optim::SGD(0.1, 0.9, 0.0, 0.1, true), std::invalid_argument);
  EXPECT_THROW(optim::RMSprop(0.1, -0.5), std::invalid_argument);
  EXPECT_THROW(optim::RMSprop(0.1, 0.9, -1.0), std::invalid_argument);
  EXPECT_THROW(optim::Adagrad(0.1, -1.0), std::invalid_argument);
  EXPECT_THROW(optim::AdaDelta(0.1, -0.1), std::invalid_argument);
  EXPECT_THROW(optim::Adamax(0.1, {0.9, 0.999}, -1.0), std::invalid_argument);
  EXPECT_THROW(optim::Adafactor(std::nullopt, {1e-30, 1e-3}, 1.0, -0.8, std::nullopt, 0.0, true, false),
               std::invalid_argument);
  EXPECT_THROW(optim::Adam(optim::Schedule{}), std::invalid_argument);
  EXPECT_THROW(optim::linear_schedule(0.0, 1.0, 0), std::invalid_argument);
  EXPECT_THROW(optim::cosine_decay(0.1, 0), std::invalid_argument);
  EXPECT_THROW(optim::join_schedules({}, {}), std::invalid_argument);
  EXPECT_THROW(optim::join_schedules({optim::exponential_decay(1, 0.5)}, {3}), std::invalid_argument);
  auto sgd = std::make_shared<optim::SGD>(0.1);
  EXPECT_THROW(optim::MultiOptimizer({sgd, sgd}), std::invalid_argument);
  optim::MultiOptimizer multi({sgd});
  EXPECT_THROW(multi.set_state(Tree()), std::invalid_argument);

  optim::SGD optimizer(0.1);
  Tree gradients;
  gradients.set("missing", ones({2}));
  Tree parameters;
  parameters.set("present", ones({2}));
  EXPECT_THROW(optimizer.apply_gradients(gradients, parameters), std::invalid_argument);
}

// ---- end to end ----

TEST(Optimizers, TrainingATinyLinearModelReducesALeastSquaresLoss) {
  for (const auto& device : test_devices()) {
    StreamContext context(device);
    for (auto& make : {factory<optim::SGD>(0.1, 0.9), factory<optim::Adam>(0.05), factory<optim::AdamW>(0.05),
                       factory<optim::Muon>(optim::cosine_decay(0.1, 60))}) {
      auto model = std::make_shared<TinyLinear>(3, 2);
      auto optimizer = make();
      Vec xs, ys;
      for (int i = 0; i < 16; ++i) {
        double a = std::sin(0.7 * i), b = std::cos(1.1 * i), c = 0.1 * i - 0.8;
        xs.insert(xs.end(), {a, b, c});
        ys.insert(ys.end(), {1.5 * a - 0.5 * b + 0.3, 0.2 * a + c - 0.7});
      }
      array x = array(xs.begin(), {16, 3}, float32);
      array y = array(ys.begin(), {16, 2}, float32);
      auto loss_and_grad = nn::value_and_grad(
          *model, [&](const std::vector<array>& in) { return mean(square((*model)(in[0]) - in[1])); });
      double first_loss = 0, last_loss = 0;
      for (int step = 0; step < 60; ++step) {
        auto [loss, grads] = loss_and_grad({x, y});
        optimizer->update(*model, grads);
        // As in MLX: evaluate the parameters and the optimizer state together after each update.
        std::vector<array> to_eval = tree_leaves(model->parameters());
        for (const auto& leaf : tree_leaves(optimizer->state())) to_eval.push_back(leaf);
        eval(to_eval);
        last_loss = loss.item<float>();
        if (step == 0) first_loss = last_loss;
      }
      EXPECT_LT(last_loss, first_loss / 20) << optimizer->name() << " on " << test::device_name(device);
    }
  }
}

TEST(Optimizers, AnUpdateWithNoGradientsStillCountsAStep) {
  optim::Adam optimizer(0.1);
  Tree updated = optimizer.apply_gradients(Tree(), Tree());
  EXPECT_TRUE(updated.is_dict());
  EXPECT_EQ(updated.size(), 0u);
  EXPECT_EQ(optimizer.step().item<uint64_t>(), 1u);
}

TEST(Optimizers, UpdateLeavesFrozenParametersAlone) {
  auto model = std::make_shared<TinyLinear>(2, 1);
  model->freeze(true, {"bias"});
  optim::SGD optimizer(0.1);
  auto loss_and_grad =
      nn::value_and_grad(*model, [&](const std::vector<array>& in) { return sum((*model)(in[0]) - 1.0f); });
  auto [loss, grads] = loss_and_grad({ones({1, 2})});
  optimizer.update(*model, grads);
  EXPECT_EQ(values(model->parameters().at("bias").leaf()), (Vec{0}));
  expect_close(values(model->parameters().at("weight").leaf()), {-0.1, -0.1}, 1e-6, 0, "weight");
}
