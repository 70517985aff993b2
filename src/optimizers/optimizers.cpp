// The optimizers' update rules, each the same sequence of operations as MLX's apply_single so
// that results round alike; Python numbers become arrays through python_scalars.h.
#include "braid/optimizers.h"

#include <cmath>
#include <stdexcept>

#include "braid/ops.h"
#include "optimizers/fused.h"
#include "python_scalars.h"

namespace braid::optimizers {

using detail::py_float;

namespace {

// Checks a constructor argument before the base class builds any state.
LearningRate checked(LearningRate learning_rate, bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
  return learning_rate;
}

// base ** step, with the Python float base and an integer step count both float32 (MLX's rule).
array power_of_step(double base, const array& step) {
  array base_array = py_float(base, step);
  return power(base_array, astype(step, base_array.dtype()));
}

array one_minus(const array& x) { return py_float(1.0, x) - x; }

array root_mean_square(const array& x) { return sqrt(mean(square(x))); }

// MLX's quintic Newton-Schulz iteration: an almost orthogonal matrix with the singular vectors
// of the 2-d `x`, computed on its wide orientation (the Gram matrix is the smaller one).
array newton_schulz5(array x, int steps) {
  constexpr double a = 3.4445, b = -4.7750;
  constexpr float c = 2.0315f;
  const bool tall = x.shape(0) > x.shape(1);
  if (tall) x = transpose(x);
  array norm = sqrt(sum(square(x), /*keepdims=*/true));  // MLX's linalg.norm of a matrix
  x = x / (norm + py_float(1e-7, norm));
  for (int i = 0; i < steps; ++i) {
    array gram = matmul(x, transpose(x));
    array poly = addmm(py_float(b, gram) * gram, gram, gram, /*alpha=*/c, /*beta=*/1.0f);
    x = addmm(py_float(a, x) * x, poly, x, /*alpha=*/1.0f, /*beta=*/1.0f);
  }
  return tall ? transpose(x) : x;
}

}  // namespace

// ---- SGD ----

SGD::SGD(LearningRate learning_rate, double momentum, double weight_decay, double dampening, bool nesterov)
    : Optimizer(checked(std::move(learning_rate), !(nesterov && (momentum <= 0 || dampening != 0)),
                        "[SGD] Nesterov momentum requires a momentum and zero dampening.")),
      momentum_(momentum),
      weight_decay_(weight_decay),
      dampening_(dampening),
      nesterov_(nesterov) {}

void SGD::init_single(const array& parameter, Tree& state) { state.set("v", zeros_like(parameter)); }

array SGD::apply_single(const array& gradient, const array& parameter, Tree& state) {
  array g = gradient;
  if (weight_decay_ != 0) g = g + py_float(weight_decay_, parameter) * parameter;
  array lr = astype(learning_rate(), gradient.dtype());
  if (momentum_ <= 0) return parameter - lr * g;

  array v = state.at("v").leaf();
  v = py_float(momentum_, v) * v;
  v = dampening_ > 0 ? v + py_float(1 - dampening_, g) * g : v + g;
  array update = nesterov_ ? g + py_float(momentum_, v) * v : v;
  state.set("v", v);
  return parameter - lr * update;
}

// ---- RMSprop ----

RMSprop::RMSprop(LearningRate learning_rate, double alpha, double eps)
    : Optimizer(
          checked(checked(std::move(learning_rate), alpha >= 0,
                          "[RMSprop] alpha should be >= 0, " + std::to_string(alpha) + " was provided."),
                  eps >= 0, "[RMSprop] epsilon should be >= 0, " + std::to_string(eps) + " was provided.")),
      alpha_(alpha),
      eps_(eps) {}

void RMSprop::init_single(const array& parameter, Tree& state) { state.set("v", zeros_like(parameter)); }

array RMSprop::apply_single(const array& gradient, const array& parameter, Tree& state) {
  array lr = astype(learning_rate(), gradient.dtype());
  array v = state.at("v").leaf();
  v = py_float(alpha_, v) * v + py_float(1 - alpha_, gradient) * square(gradient);
  state.set("v", v);
  return parameter - lr * gradient / (sqrt(v) + py_float(eps_, v));
}

// ---- Adagrad ----

Adagrad::Adagrad(LearningRate learning_rate, double eps)
    : Optimizer(checked(std::move(learning_rate), eps >= 0,
                        "[Adagrad] epsilon should be >= 0, " + std::to_string(eps) + " was provided.")),
      eps_(eps) {}

void Adagrad::init_single(const array& parameter, Tree& state) { state.set("v", zeros_like(parameter)); }

array Adagrad::apply_single(const array& gradient, const array& parameter, Tree& state) {
  array lr = astype(learning_rate(), gradient.dtype());
  array v = state.at("v").leaf() + square(gradient);
  state.set("v", v);
  return parameter - lr * gradient / (sqrt(v) + py_float(eps_, v));
}

// ---- AdaDelta ----

AdaDelta::AdaDelta(LearningRate learning_rate, double rho, double eps)
    : Optimizer(checked(checked(std::move(learning_rate), rho >= 0,
                                "[AdaDelta] rho should be >= 0, " + std::to_string(rho) + " was provided."),
                        eps >= 0,
                        "[AdaDelta] epsilon should be >= 0, " + std::to_string(eps) + " was provided.")),
      rho_(rho),
      eps_(eps) {}

void AdaDelta::init_single(const array& parameter, Tree& state) {
  state.set("v", zeros_like(parameter));
  state.set("u", zeros_like(parameter));
}

array AdaDelta::apply_single(const array& gradient, const array& parameter, Tree& state) {
  array lr = astype(learning_rate(), gradient.dtype());
  array v = state.at("v").leaf();
  array u = state.at("u").leaf();
  v = py_float(rho_, v) * v + py_float(1 - rho_, gradient) * square(gradient);
  array d = sqrt(u + py_float(eps_, u)) / sqrt(v + py_float(eps_, v)) * gradient;
  u = py_float(rho_, u) * u + py_float(1 - rho_, d) * square(d);
  state.set("v", v);
  state.set("u", u);
  return parameter - lr * d;
}

// ---- Adam, AdamW, Adamax ----

Adam::Adam(LearningRate learning_rate, std::array<double, 2> betas, double eps, bool bias_correction)
    : Optimizer(std::move(learning_rate)), betas_(betas), eps_(eps), bias_correction_(bias_correction) {}

void Adam::init_single(const array& parameter, Tree& state) {
  state.set("m", zeros_like(parameter));
  state.set("v", zeros_like(parameter));
}

array Adam::apply_single(const array& gradient, const array& parameter, Tree& state) {
  return adam_step(gradient, parameter, state, std::nullopt);
}

Adam::StepScalars& Adam::step_scalars(Dtype dtype) {
  const array t = step();
  const array rate = learning_rate();
  if (!step_scalars_.empty() &&
      (step_scalars_[0].step.id() != t.id() || step_scalars_[0].learning_rate.id() != rate.id())) {
    step_scalars_.clear();  // a new update
  }
  for (auto& k : step_scalars_) {
    if (k.dtype == dtype) return k;
  }
  array lr = astype(rate, dtype);
  StepScalars k{t, rate, dtype, lr, std::nullopt, std::nullopt, std::nullopt};
  if (bias_correction_) {
    k.c1 = astype(lr / one_minus(power_of_step(betas_[0], t)), dtype);
    k.c2 = astype(rsqrt(one_minus(power_of_step(betas_[1], t))), dtype);
  }
  step_scalars_.push_back(std::move(k));
  return step_scalars_.back();
}

array Adam::adam_step(const array& gradient, const array& parameter, Tree& state,
                      const std::optional<array>& decay) {
  const StepScalars& k = step_scalars(gradient.dtype());
  const array& lr = k.lr;
  const std::optional<array>& c1 = k.c1;
  const std::optional<array>& c2 = k.c2;
  const auto [b1, b2] = betas_;
  array m = state.at("m").leaf();
  array v = state.at("v").leaf();
  if (detail::fusable(parameter, gradient, m, v)) {
    // The same arithmetic as below in three nodes instead of about fourteen.
    m = detail::fused_moment(m, gradient, b1, 1 - b1, false);
    v = detail::fused_moment(v, gradient, b2, 1 - b2, true);
    state.set("m", m);
    state.set("v", v);
    return detail::fused_adam_step(parameter, m, v, c1 ? *c1 : lr, c2, decay, eps_);
  }
  m = py_float(b1, m) * m + py_float(1 - b1, gradient) * gradient;
  v = py_float(b2, v) * v + py_float(1 - b2, gradient) * square(gradient);
  state.set("m", m);
  state.set("v", v);
  const array p = decay ? parameter * *decay : parameter;
  if (bias_correction_) {
    array denominator = sqrt(v) * *c2;
    return p - *c1 * m / (denominator + py_float(eps_, denominator));
  }
  array denominator = sqrt(v);
  return p - lr * m / (denominator + py_float(eps_, denominator));
}

AdamW::AdamW(LearningRate learning_rate, std::array<double, 2> betas, double eps, double weight_decay,
             bool bias_correction)
    : Adam(std::move(learning_rate), betas, eps, bias_correction), weight_decay_(weight_decay) {}

array AdamW::apply_single(const array& gradient, const array& parameter, Tree& state) {
  StepScalars& k = step_scalars(gradient.dtype());
  if (!k.decay) k.decay = one_minus(k.lr * py_float(weight_decay_, k.lr));
  const std::optional<array> decay = k.decay;
  return adam_step(gradient, parameter, state, decay);
}

Adamax::Adamax(LearningRate learning_rate, std::array<double, 2> betas, double eps)
    : Adam(checked(std::move(learning_rate), eps >= 0,
                   "[Adamax] Epsilon value should be >= 0, " + std::to_string(eps) + " was provided."),
           betas, eps) {}

array Adamax::apply_single(const array& gradient, const array& parameter, Tree& state) {
  array lr = astype(learning_rate(), gradient.dtype());
  const auto [b1, b2] = betas_;
  array m = state.at("m").leaf();
  array v = state.at("v").leaf();
  m = py_float(b1, m) * m + py_float(1 - b1, gradient) * gradient;
  v = maximum(py_float(b2, v) * v, abs(gradient));
  state.set("m", m);
  state.set("v", v);
  return parameter - lr * m / (v + py_float(eps_, v));
}

// ---- Lion ----

Lion::Lion(LearningRate learning_rate, std::array<double, 2> betas, double weight_decay)
    : Optimizer(std::move(learning_rate)), betas_(betas), weight_decay_(weight_decay) {}

void Lion::init_single(const array& parameter, Tree& state) { state.set("m", zeros_like(parameter)); }

array Lion::apply_single(const array& gradient, const array& parameter, Tree& state) {
  array lr = astype(learning_rate(), gradient.dtype());
  const auto [b1, b2] = betas_;
  array m = state.at("m").leaf();
  array c = py_float(b1, m) * m + py_float(1 - b1, gradient) * gradient;
  state.set("m", py_float(b2, m) * m + py_float(1 - b2, gradient) * gradient);
  array p = parameter;
  if (weight_decay_ > 0) p = one_minus(lr * py_float(weight_decay_, lr)) * p;
  return p - lr * sign(c);
}

// ---- Adafactor ----

Adafactor::Adafactor(std::optional<LearningRate> learning_rate, std::array<double, 2> eps,
                     double clip_threshold, double decay_rate, std::optional<double> beta_1,
                     double weight_decay, bool scale_parameter, bool relative_step, bool warmup_init)
    : Optimizer(relative_step || learning_rate
                    ? std::move(learning_rate)
                    : throw std::invalid_argument(
                          "[Adafactor] Without relative_step a learning_rate is required.")),
      eps_(eps),
      clip_threshold_(clip_threshold),
      decay_rate_(decay_rate),
      beta_1_(beta_1),
      weight_decay_(weight_decay),
      scale_parameter_(scale_parameter),
      relative_step_(relative_step),
      warmup_init_(warmup_init) {}

void Adafactor::init_single(const array& parameter, Tree& state) {
  if (parameter.ndim() >= 2) {
    const Shape& shape = parameter.shape();
    Shape row(shape.begin(), shape.end() - 1);
    Shape col(shape.begin(), shape.end() - 2);
    col.push_back(shape.back());
    state.set("exp_avg_sq_row", zeros(row, parameter.dtype()));
    state.set("exp_avg_sq_col", zeros(col, parameter.dtype()));
  } else {
    state.set("exp_avg_sq", zeros_like(parameter));
  }
  if (beta_1_) state.set("exp_avg", zeros_like(parameter));
}

array Adafactor::step_size(const array& parameter_rms) const {
  array relative_step_size = array(0.0f);
  if (relative_step_) {
    array t = astype(step(), float32);
    array min_step = warmup_init_ ? array(1e-6f) * t : array(1e-2f);
    relative_step_size = minimum(min_step, rsqrt(t));
  } else {
    relative_step_size = learning_rate();
  }
  relative_step_size = astype(relative_step_size, parameter_rms.dtype());
  if (!scale_parameter_) return relative_step_size;
  return maximum(py_float(eps_[1], parameter_rms), parameter_rms) * relative_step_size;
}

array Adafactor::apply_single(const array& gradient, const array& parameter, Tree& state) {
  const bool factored = gradient.ndim() >= 2;
  array parameter_rms = root_mean_square(parameter);
  array lr = step_size(parameter_rms);
  array decay = power(astype(step(), float32), array(static_cast<float>(decay_rate_)));
  array beta_2 = one_minus(astype(decay, parameter_rms.dtype()));
  array update = square(gradient) + py_float(eps_[0], gradient);

  if (factored) {
    array row = beta_2 * state.at("exp_avg_sq_row").leaf() + one_minus(beta_2) * mean(update, -1);
    array col = beta_2 * state.at("exp_avg_sq_col").leaf() + one_minus(beta_2) * mean(update, -2);
    state.set("exp_avg_sq_row", row);
    state.set("exp_avg_sq_col", col);
    array row_factor = rsqrt(row / mean(row, -1, /*keepdims=*/true));
    array col_factor = rsqrt(col);
    // MLX expands the column factor at axis 0, which only works for 2-d parameters; -2 is the
    // same there and gives the intended outer product per leading index above 2-d.
    update = matmul(expand_dims(row_factor, -1), expand_dims(col_factor, -2)) * gradient;
  } else {
    array second_moment = beta_2 * state.at("exp_avg_sq").leaf() + one_minus(beta_2) * update;
    state.set("exp_avg_sq", second_moment);
    update = rsqrt(second_moment) * gradient;
  }

  array clip_ratio = root_mean_square(update) / py_float(clip_threshold_, update);
  update = update / maximum(py_float(1.0, clip_ratio), clip_ratio);
  update = lr * update;

  if (beta_1_) {
    array exp_avg = state.at("exp_avg").leaf();
    exp_avg = py_float(*beta_1_, exp_avg) * exp_avg + py_float(1 - *beta_1_, update) * update;
    state.set("exp_avg", exp_avg);
    update = exp_avg;
  }

  array p = parameter;
  if (weight_decay_ != 0) p = p + p * (py_float(-weight_decay_, lr) * lr);
  return p - update;
}

// ---- Muon ----

Muon::Muon(LearningRate learning_rate, double momentum, double weight_decay, bool nesterov, int ns_steps)
    : Optimizer(std::move(learning_rate)),
      momentum_(momentum),
      weight_decay_(weight_decay),
      nesterov_(nesterov),
      ns_steps_(ns_steps) {}

void Muon::init_single(const array& parameter, Tree& state) { state.set("v", zeros_like(parameter)); }

array Muon::apply_single(const array& gradient, const array& parameter, Tree& state) {
  array g = gradient;
  if (weight_decay_ != 0) g = g + py_float(weight_decay_, parameter) * parameter;
  array v = state.at("v").leaf();
  v = py_float(momentum_, v) * v;
  v = v + py_float(1 - momentum_, g) * g;
  state.set("v", v);
  array update = nesterov_ ? g * py_float(1 - momentum_, g) + py_float(momentum_, v) * v : v;

  array lr = astype(learning_rate(), gradient.dtype());
  if (update.ndim() >= 2) {
    const Shape shape = update.shape();
    if (update.ndim() > 2) {
      update = reshape(newton_schulz5(reshape(update, {shape[0], -1}), ns_steps_), shape);
    } else {
      update = newton_schulz5(update, ns_steps_);
    }
    // MLX takes the ratio of the last two axes of the parameter's shape, not of the flattened
    // matrix; scaling by max(1, ratio) ** 0.5 == 1 leaves lr as it is.
    const double ratio = static_cast<double>(shape[shape.size() - 2]) / static_cast<double>(shape.back());
    if (ratio > 1) lr = lr * py_float(std::pow(ratio, 0.5), lr);
  }
  return parameter - lr * update;
}

}  // namespace braid::optimizers
