// braid::optimizers: MLX's mlx.optimizers in C++. Optimizers that update an nn::Module (or any
// Tree of parameters) from a Tree of gradients, learning-rate schedules, and clip_grad_norm.
//
// An optimizer keeps its state in a Tree laid out as MLX's: state()["step"] (uint64, the number
// of apply_gradients calls), state()["learning_rate"] (float32), and for each parameter path a
// dict of that optimizer's arrays ("m", "v", ...), of the parameter's dtype. As in MLX, the
// updated parameters and state are lazy: evaluate both after each update (eval of the model's
// parameters and tree_leaves(state())), or the state's graph grows with every step.
//
// Threads: an optimizer behaves like a standard container. Its const members may run on any
// number of threads at once; init, update, apply_gradients, set_state, set_learning_rate and
// load_state need exclusive use. Schedules and clip_grad_norm keep no state: call them from any
// thread. The arrays an optimizer hands out are lazy and may go to any thread.
#pragma once

#include <array>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "braid/array.h"
#include "braid/nn/module.h"
#include "braid/tree.h"

namespace braid::optimizers {

/// A learning rate (or other hyperparameter) as a function of the step count, an integer array.
using Schedule = std::function<array(const array& step)>;

namespace detail {
template <class T>
concept Number = std::is_arithmetic_v<T>;
template <class F>
concept ScheduleFunction = !Number<std::decay_t<F>> && !std::same_as<std::decay_t<F>, array> &&
                           std::is_invocable_r_v<array, F&, const array&>;
}  // namespace detail

/// What an optimizer takes as its learning rate: a number (kept as a float32 array), an array,
/// or a Schedule evaluated at the step count before each update (MLX's float-or-callable).
class LearningRate {
 public:
  template <detail::Number T>
  LearningRate(T value) : value_(array(static_cast<float>(value))) {}  // NOLINT(google-explicit-constructor)
  LearningRate(array value) : value_(std::move(value)) {}              // NOLINT(google-explicit-constructor)
  template <detail::ScheduleFunction F>
  LearningRate(F schedule) : schedule_(std::move(schedule)) {}  // NOLINT(google-explicit-constructor)

  /// True when made from a schedule; value() is then unset and schedule() is the function.
  bool is_schedule() const { return static_cast<bool>(schedule_); }
  const std::optional<array>& value() const { return value_; }
  const Schedule& schedule() const { return schedule_; }

 private:
  std::optional<array> value_;
  Schedule schedule_;
};

/// The base of every optimizer (MLX's Optimizer). Subclasses say how one parameter's state
/// starts (init_single) and how one parameter is updated (apply_single).
class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  /// The optimizer's type name ("Adam").
  virtual std::string name() const = 0;

  /// Creates the state of every leaf of `parameters` that has none yet, so that state() is
  /// complete before the first update. Optional: apply_gradients does it too.
  virtual void init(const Tree& parameters);
  /// model.update(apply_gradients(gradients, model.parameters())).
  void update(nn::Module& model, const Tree& gradients);
  /// The updated parameters, shaped like `gradients` (`parameters` may hold more). Advances the
  /// schedules (evaluated at the old step count) and then the step count, once per call.
  /// Throws std::invalid_argument when `parameters` lacks a place `gradients` has.
  virtual Tree apply_gradients(const Tree& gradients, const Tree& parameters);

  /// The state Tree (see the top of this file).
  virtual const Tree& state() const { return state_; }
  /// Replaces the state (e.g. one read back from a file); leaves without state get theirs on
  /// the next update.
  virtual void set_state(Tree state);
  /// state()["step"], a uint64 scalar.
  virtual array step() const;
  /// state()["learning_rate"].
  virtual array learning_rate() const;
  /// Sets state()["learning_rate"] (a schedule, if any, overwrites it on the next update).
  virtual void set_learning_rate(float learning_rate);
  virtual void set_learning_rate(const array& learning_rate);

  /// Writes tree_flatten(state()) as a .safetensors file (evaluating the state).
  void save_state(const std::string& file) const;
  /// Reads a file written by save_state into set_state; training then continues exactly as
  /// it would have without the round trip.
  void load_state(const std::string& file);

 protected:
  /// A schedule in `learning_rate` is evaluated at step 0 for the initial state, as MLX's.
  explicit Optimizer(std::optional<LearningRate> learning_rate);
  /// Adds the initial arrays of `parameter` to `state` (an empty dict).
  virtual void init_single(const array& parameter, Tree& state) = 0;
  /// The updated `parameter`; writes the new state arrays into `state`.
  virtual array apply_single(const array& gradient, const array& parameter, Tree& state) = 0;
  /// Throws std::invalid_argument("[<name>] <what>").
  [[noreturn]] void fail(const std::string& what) const;

  Tree state_;

 private:
  void init_state(const Tree& parameters, Tree& state, const std::string& path);
  Tree apply_tree(const Tree& gradients, const Tree& parameters, Tree& state, const std::string& path);

  std::map<std::string, Schedule> schedules_;
};

/// Different optimizers for different parameters: a parameter goes to the first optimizer
/// whose filter accepts its dotted path and array; the last optimizer takes the rest.
/// state() is {"states": [each optimizer's state]} as of the last call through this object.
class MultiOptimizer : public Optimizer {
 public:
  using Filter = std::function<bool(const std::string& path, const array& gradient)>;
  /// Throws std::invalid_argument unless filters.size() == optimizers.size() - 1.
  explicit MultiOptimizer(std::vector<std::shared_ptr<Optimizer>> optimizers,
                          std::vector<Filter> filters = {});
  std::string name() const override { return "MultiOptimizer"; }

  void init(const Tree& parameters) override;
  Tree apply_gradients(const Tree& gradients, const Tree& parameters) override;
  /// Takes {"states": [one state per optimizer]}; throws std::invalid_argument otherwise.
  void set_state(Tree state) override;
  /// The first optimizer's step and learning rate.
  array step() const override;
  array learning_rate() const override;
  /// Sets every optimizer's learning rate.
  void set_learning_rate(float learning_rate) override;
  void set_learning_rate(const array& learning_rate) override;

 protected:
  void init_single(const array&, Tree&) override {}
  array apply_single(const array&, const array& parameter, Tree&) override { return parameter; }

 private:
  std::vector<Tree> split(const Tree& gradients) const;
  void refresh_state();

  std::vector<std::shared_ptr<Optimizer>> optimizers_;
  std::vector<Filter> filters_;
};

/// Stochastic gradient descent with optional momentum, dampening, Nesterov momentum and L2
/// weight decay. State: "v". Nesterov needs momentum > 0 and dampening == 0.
class SGD : public Optimizer {
 public:
  explicit SGD(LearningRate learning_rate, double momentum = 0.0, double weight_decay = 0.0,
               double dampening = 0.0, bool nesterov = false);
  std::string name() const override { return "SGD"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  double momentum_, weight_decay_, dampening_;
  bool nesterov_;
};

/// RMSprop: v = alpha v + (1 - alpha) g^2, w -= lr g / (sqrt(v) + eps). State: "v".
class RMSprop : public Optimizer {
 public:
  explicit RMSprop(LearningRate learning_rate, double alpha = 0.99, double eps = 1e-8);
  std::string name() const override { return "RMSprop"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  double alpha_, eps_;
};

/// Adagrad: v += g^2, w -= lr g / (sqrt(v) + eps). State: "v".
class Adagrad : public Optimizer {
 public:
  explicit Adagrad(LearningRate learning_rate, double eps = 1e-8);
  std::string name() const override { return "Adagrad"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  double eps_;
};

/// AdaDelta with a learning rate. State: "v" (squared gradients) and "u" (squared updates).
class AdaDelta : public Optimizer {
 public:
  explicit AdaDelta(LearningRate learning_rate, double rho = 0.9, double eps = 1e-6);
  std::string name() const override { return "AdaDelta"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  double rho_, eps_;
};

/// Adam, without bias correction unless asked (MLX's default). State: "m" and "v".
class Adam : public Optimizer {
 public:
  explicit Adam(LearningRate learning_rate, std::array<double, 2> betas = {0.9, 0.999}, double eps = 1e-8,
                bool bias_correction = false);
  std::string name() const override { return "Adam"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;
  /// The Adam step of `parameter`, scaled first by the 0-d `decay` when given (AdamW).
  array adam_step(const array& gradient, const array& parameter, Tree& state,
                  const std::optional<array>& decay);

  /// What every parameter's step of one update shares: the learning rate in the gradient's
  /// dtype, the bias corrections and (set by AdamW) the decay factor. Built once per update
  /// and dtype, not once per parameter.
  struct StepScalars {
    array step, learning_rate;  // the update's (kept, so that their ids stay theirs)
    Dtype dtype;
    array lr;
    std::optional<array> c1, c2, decay;
  };
  StepScalars& step_scalars(Dtype dtype);

  std::array<double, 2> betas_;
  double eps_;
  bool bias_correction_;
  std::vector<StepScalars> step_scalars_;
};

/// Adam with decoupled weight decay: the parameter is scaled by 1 - lr * weight_decay first.
class AdamW : public Adam {
 public:
  explicit AdamW(LearningRate learning_rate, std::array<double, 2> betas = {0.9, 0.999}, double eps = 1e-8,
                 double weight_decay = 0.01, bool bias_correction = false);
  std::string name() const override { return "AdamW"; }

 protected:
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  double weight_decay_;
};

/// Adamax, Adam with the infinity norm: v = max(b2 v, |g|), w -= lr m / (v + eps).
class Adamax : public Adam {
 public:
  explicit Adamax(LearningRate learning_rate, std::array<double, 2> betas = {0.9, 0.999}, double eps = 1e-8);
  std::string name() const override { return "Adamax"; }

 protected:
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;
};

/// Lion: w -= lr sign(b1 m + (1 - b1) g) (after decoupled weight decay); m = b2 m + (1 - b2) g.
class Lion : public Optimizer {
 public:
  explicit Lion(LearningRate learning_rate, std::array<double, 2> betas = {0.9, 0.99},
                double weight_decay = 0.0);
  std::string name() const override { return "Lion"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  std::array<double, 2> betas_;
  double weight_decay_;
};

/// Adafactor, with factored second moments ("exp_avg_sq_row", "exp_avg_sq_col") for
/// parameters of 2 or more dimensions and "exp_avg_sq" otherwise; "exp_avg" with beta_1.
/// Without relative_step a learning rate is required (std::invalid_argument otherwise).
class Adafactor : public Optimizer {
 public:
  explicit Adafactor(std::optional<LearningRate> learning_rate = std::nullopt,
                     std::array<double, 2> eps = {1e-30, 1e-3}, double clip_threshold = 1.0,
                     double decay_rate = -0.8, std::optional<double> beta_1 = std::nullopt,
                     double weight_decay = 0.0, bool scale_parameter = true, bool relative_step = true,
                     bool warmup_init = false);
  std::string name() const override { return "Adafactor"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  array step_size(const array& parameter_rms) const;

  std::array<double, 2> eps_;
  double clip_threshold_, decay_rate_;
  std::optional<double> beta_1_;
  double weight_decay_;
  bool scale_parameter_, relative_step_, warmup_init_;
};

/// Muon: momentum (Nesterov by default) on the gradient plus weight_decay * w; for a parameter
/// of 2 or more axes (flattened to [rows, -1] above 2) the update is replaced by an almost
/// orthogonal matrix from ns_steps quintic Newton-Schulz iterations and the learning rate is
/// scaled by sqrt(max(1, shape[-2] / shape[-1])) of the parameter's own shape, as MLX's. Other
/// parameters take the momentum update. State: "v".
class Muon : public Optimizer {
 public:
  explicit Muon(LearningRate learning_rate, double momentum = 0.95, double weight_decay = 0.01,
                bool nesterov = true, int ns_steps = 5);
  std::string name() const override { return "Muon"; }

 protected:
  void init_single(const array& parameter, Tree& state) override;
  array apply_single(const array& gradient, const array& parameter, Tree& state) override;

 private:
  double momentum_, weight_decay_;
  bool nesterov_;
  int ns_steps_;
};

/// init * decay_rate^step.
Schedule exponential_decay(double init, double decay_rate);
/// init * decay_rate^(step / step_size), the division rounding down.
Schedule step_decay(double init, double decay_rate, int64_t step_size);
/// From init to end along half a cosine over decay_steps steps, then end. Throws
/// std::invalid_argument when decay_steps is 0.
Schedule cosine_decay(double init, int64_t decay_steps, double end = 0.0);
/// From init to end linearly over steps steps, then end. Throws std::invalid_argument when
/// steps < 1.
Schedule linear_schedule(double init, double end, int64_t steps);
/// schedules[i + 1] from step boundaries[i] on, given the steps since that boundary. Throws
/// std::invalid_argument unless there is one schedule more than boundaries.
Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries);

/// The gradients scaled by max_norm / (norm + 1e-6) when their global L2 norm reaches
/// max_norm (unchanged otherwise), and that norm.
std::pair<Tree, array> clip_grad_norm(const Tree& grads, double max_norm);

}  // namespace braid::optimizers
