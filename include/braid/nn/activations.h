// Activation functions and their layers (MLX's mlx/nn/layers/activations.py). Each function
// builds a lazy graph from braid's ops, so it runs on any device and differentiates; scalar
// parameters take the input's floating dtype (a float16 input gives a float16 output), as
// MLX's Python scalars do. The layers keep no state besides PReLU's weight, so their forward
// calls may run on any number of threads at once (nn/module.h). Call the functions qualified
// (nn::tanh(x)): unqualified, argument lookup also finds braid's op of the same name.
#pragma once

#include <memory>
#include <string>

#include "braid/array.h"
#include "braid/nn/module.h"

namespace braid::nn {

// ---- functions ----

/// 1 / (1 + exp(-x)).
array sigmoid(const array& x);
/// max(x, 0).
array relu(const array& x);
/// max(x, 0)^2 (ReLU squared).
array relu2(const array& x);
/// max(negative_slope * x, x).
array leaky_relu(const array& x, float negative_slope = 0.01f);
/// x - logsumexp(x, axis), keeping the axis.
array log_softmax(const array& x, int axis = -1);
/// x where x > 0, else alpha * (exp(x) - 1).
array elu(const array& x, float alpha = 1.0f);
/// min(max(x, 0), 6).
array relu6(const array& x);
/// exp(x) / sum(exp(x)) over `axis`.
array softmax(const array& x, int axis = -1);
/// log(1 + exp(x)), computed as logaddexp(x, 0) so that it never overflows.
array softplus(const array& x);
/// x / (1 + |x|).
array softsign(const array& x);
/// x - lambd * sign(x) where |x| > lambd, else 0.
array softshrink(const array& x, float lambd = 0.5f);
/// max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1).
array celu(const array& x, float alpha = 1.0f);
/// x * sigmoid(x) (Swish).
array silu(const array& x);
/// log(sigmoid(x)) = -softplus(-x).
array log_sigmoid(const array& x);
/// x * Phi(x), Phi the standard normal CDF: x * (1 + erf(x / sqrt(2))) / 2.
array gelu(const array& x);
/// The tanh approximation of gelu: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
array gelu_approx(const array& x);
/// The sigmoid approximation of gelu: x * sigmoid(1.702 x).
array gelu_fast_approx(const array& x);
/// a * sigmoid(b) for the two halves a, b of `axis` (whose size must be even).
array glu(const array& x, int axis = -1);
/// 1 where x > threshold, else 0, as int32.
array step(const array& x, float threshold = 0.0f);
/// 1.0507 * elu(x, 1.67326).
array selu(const array& x);
/// max(0, x) + alpha * min(0, x); alpha broadcasts against x (one value per channel of the
/// last axis, or a single one).
array prelu(const array& x, const array& alpha);
/// x * tanh(softplus(x)).
array mish(const array& x);
/// x * min(max(x + 3, 0), 6) / 6.
array hardswish(const array& x);
/// min(max(x, min_val), max_val).
array hard_tanh(const array& x, float min_val = -1.0f, float max_val = 1.0f);
/// x where |x| > lambd, else 0.
array hard_shrink(const array& x, float lambd = 0.5f);
/// softmax(-x, axis).
array softmin(const array& x, int axis = -1);
/// tanh(x).
array tanh(const array& x);

// ---- layers ----
// Each applies the function of the same name with the arguments given at construction.

class Sigmoid : public Module {
 public:
  std::string name() const override { return "Sigmoid"; }
  array operator()(const array& x) override { return nn::sigmoid(x); }
};

class ReLU : public Module {
 public:
  std::string name() const override { return "ReLU"; }
  array operator()(const array& x) override { return nn::relu(x); }
};

class ReLU2 : public Module {
 public:
  std::string name() const override { return "ReLU2"; }
  array operator()(const array& x) override { return nn::relu2(x); }
};

class ReLU6 : public Module {
 public:
  std::string name() const override { return "ReLU6"; }
  array operator()(const array& x) override { return nn::relu6(x); }
};

class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(float negative_slope = 0.01f) : negative_slope_(negative_slope) {}
  std::string name() const override { return "LeakyReLU"; }
  array operator()(const array& x) override { return nn::leaky_relu(x, negative_slope_); }

 private:
  float negative_slope_;
};

class ELU : public Module {
 public:
  explicit ELU(float alpha = 1.0f) : alpha_(alpha) {}
  std::string name() const override { return "ELU"; }
  array operator()(const array& x) override { return nn::elu(x, alpha_); }

 private:
  float alpha_;
};

class CELU : public Module {
 public:
  explicit CELU(float alpha = 1.0f) : alpha_(alpha) {}
  std::string name() const override { return "CELU"; }
  array operator()(const array& x) override { return nn::celu(x, alpha_); }

 private:
  float alpha_;
};

class SELU : public Module {
 public:
  std::string name() const override { return "SELU"; }
  array operator()(const array& x) override { return nn::selu(x); }
};

class SiLU : public Module {
 public:
  std::string name() const override { return "SiLU"; }
  array operator()(const array& x) override { return nn::silu(x); }
};

class LogSigmoid : public Module {
 public:
  std::string name() const override { return "LogSigmoid"; }
  array operator()(const array& x) override { return nn::log_sigmoid(x); }
};

/// Softmax over the last axis (as MLX's layer, which takes no axis).
class Softmax : public Module {
 public:
  std::string name() const override { return "Softmax"; }
  array operator()(const array& x) override { return nn::softmax(x); }
};

/// Softmin over the last axis.
class Softmin : public Module {
 public:
  std::string name() const override { return "Softmin"; }
  array operator()(const array& x) override { return nn::softmin(x); }
};

/// Log-softmax over the last axis.
class LogSoftmax : public Module {
 public:
  std::string name() const override { return "LogSoftmax"; }
  array operator()(const array& x) override { return nn::log_softmax(x); }
};

class Softplus : public Module {
 public:
  std::string name() const override { return "Softplus"; }
  array operator()(const array& x) override { return nn::softplus(x); }
};

class Softsign : public Module {
 public:
  std::string name() const override { return "Softsign"; }
  array operator()(const array& x) override { return nn::softsign(x); }
};

class Softshrink : public Module {
 public:
  explicit Softshrink(float lambd = 0.5f) : lambd_(lambd) {}
  std::string name() const override { return "Softshrink"; }
  array operator()(const array& x) override { return nn::softshrink(x, lambd_); }

 private:
  float lambd_;
};

/// MLX's HardShrink takes no arguments (always lambd = 0.5); this one also accepts lambd.
class HardShrink : public Module {
 public:
  explicit HardShrink(float lambd = 0.5f) : lambd_(lambd) {}
  std::string name() const override { return "HardShrink"; }
  array operator()(const array& x) override { return nn::hard_shrink(x, lambd_); }

 private:
  float lambd_;
};

/// MLX's HardTanh takes no arguments (always [-1, 1]); this one also accepts the bounds.
class HardTanh : public Module {
 public:
  explicit HardTanh(float min_val = -1.0f, float max_val = 1.0f) : min_val_(min_val), max_val_(max_val) {}
  std::string name() const override { return "HardTanh"; }
  array operator()(const array& x) override { return nn::hard_tanh(x, min_val_, max_val_); }

 private:
  float min_val_, max_val_;
};

class Hardswish : public Module {
 public:
  std::string name() const override { return "Hardswish"; }
  array operator()(const array& x) override { return nn::hardswish(x); }
};

class Mish : public Module {
 public:
  std::string name() const override { return "Mish"; }
  array operator()(const array& x) override { return nn::mish(x); }
};

class Tanh : public Module {
 public:
  std::string name() const override { return "Tanh"; }
  array operator()(const array& x) override { return nn::tanh(x); }
};

class GLU : public Module {
 public:
  explicit GLU(int axis = -1) : axis_(axis) {}
  std::string name() const override { return "GLU"; }
  array operator()(const array& x) override { return nn::glu(x, axis_); }

 private:
  int axis_;
};

class Step : public Module {
 public:
  explicit Step(float threshold = 0.0f) : threshold_(threshold) {}
  std::string name() const override { return "Step"; }
  array operator()(const array& x) override { return nn::step(x, threshold_); }

 private:
  float threshold_;
};

/// gelu ("none"), gelu_approx ("precise", or its alias "tanh") or gelu_fast_approx ("fast");
/// any other `approx` throws std::invalid_argument("[GELU] ...").
class GELU : public Module {
 public:
  explicit GELU(const std::string& approx = "none");
  std::string name() const override { return "GELU"; }
  array operator()(const array& x) override;

 private:
  enum class Approx { none, precise, fast } approx_;
};

/// prelu with a learned float32 "weight" of num_parameters values, all `init` at first.
/// num_parameters < 1 throws std::invalid_argument("[PReLU] ...").
class PReLU : public Module {
 public:
  explicit PReLU(int num_parameters = 1, float init = 0.25f);
  std::string name() const override { return "PReLU"; }
  array operator()(const array& x) override { return nn::prelu(x, param("weight")); }
};

}  // namespace braid::nn
