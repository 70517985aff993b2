// Evaluation of lazy graphs.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "braid/array.h"

namespace braid {

/// Computes `outputs` and everything they need, then returns; rethrows the first error
/// found on an output. Any thread may call it on any arrays, concurrently with other
/// evaluations that share nodes: each node is computed exactly once.
void eval(std::vector<array> outputs);
template <typename... Arrays>
void eval(Arrays&&... outputs) {
  eval(std::vector<array>{std::forward<Arrays>(outputs)...});
}

/// A handle on an asynchronous evaluation. Any thread may wait on it, any number of times.
class EvalHandle {
 public:
  EvalHandle() = default;
  explicit EvalHandle(std::vector<array> outputs) : outputs_(std::move(outputs)) {}
  /// Blocks until every output is computed; rethrows the first error.
  void wait() const;
  /// True when every output has finished (computed or failed). Never blocks.
  bool ready() const;

 private:
  std::vector<array> outputs_;
};

/// Submits `outputs` for evaluation and returns at once; the work runs on the streams'
/// workers. The returned handle (ignorable, as in MLX) waits for it. As in MLX, throws
/// std::invalid_argument for an array traced by a transformation (use eval there).
EvalHandle async_eval(std::vector<array> outputs);
template <typename... Arrays>
EvalHandle async_eval(Arrays&&... outputs) {
  return async_eval(std::vector<array>{std::forward<Arrays>(outputs)...});
}

// ---- function transforms (MLX's mlx/transforms.h) ----
// Every transform keeps its state in the call: any number of threads may transform the same
// function at once, and the function may evaluate arrays (on any thread) while it is traced.
// A graph built on another thread differentiates like a local one. The graph walks use
// explicit stacks, so graphs of any depth work.

/// The outputs of `fun` at `primals` and the vector-Jacobian products of `cotangents` (one per
/// output, outputs under stop_gradient excluded) with respect to each primal.
std::pair<std::vector<array>, std::vector<array>> vjp(
    const std::function<std::vector<array>(const std::vector<array>&)>& fun,
    const std::vector<array>& primals, const std::vector<array>& cotangents);
/// vjp of a function of one array.
std::pair<array, array> vjp(const std::function<array(const array&)>& fun, const array& primal,
                            const array& cotangent);

/// The outputs of `fun` at `primals` and the Jacobian-vector products with `tangents` (one
/// per primal, of its shape).
std::pair<std::vector<array>, std::vector<array>> jvp(
    const std::function<std::vector<array>(const std::vector<array>&)>& fun,
    const std::vector<array>& primals, const std::vector<array>& tangents);
/// jvp of a function of one array.
std::pair<array, array> jvp(const std::function<array(const array&)>& fun, const array& primal,
                            const array& tangent);

/// A function's values and its gradients with respect to the first value.
using ValueAndGradFn =
    std::function<std::pair<std::vector<array>, std::vector<array>>(const std::vector<array>&)>;
using SimpleValueAndGradFn = std::function<std::pair<array, std::vector<array>>(const std::vector<array>&)>;

/// Values of `fun` and the gradient of its first output (a scalar) with respect to the
/// inputs listed in `argnums` (negative counts from the end); the other outputs pass
/// through stop_gradient. Throws "[grad] ..." for an empty, repeated or out-of-range argnum.
ValueAndGradFn value_and_grad(const std::function<std::vector<array>(const std::vector<array>&)>& fun,
                              const std::vector<int>& argnums);
inline ValueAndGradFn value_and_grad(const std::function<std::vector<array>(const std::vector<array>&)>& fun,
                                     int argnum = 0) {
  return value_and_grad(fun, std::vector<int>{argnum});
}
/// Value and gradient of a function of one array.
inline std::function<std::pair<array, array>(const array&)> value_and_grad(
    const std::function<array(const array&)>& fun) {
  return [fun](const array& input) { return vjp(fun, input, array(1.0f)); };
}
inline SimpleValueAndGradFn value_and_grad(const std::function<array(const std::vector<array>&)>& fun,
                                           const std::vector<int>& argnums) {
  auto vg =
      value_and_grad([fun](const std::vector<array>& in) { return std::vector<array>{fun(in)}; }, argnums);
  return [vg](const std::vector<array>& inputs) {
    auto result = vg(inputs);
    return std::make_pair(result.first[0], std::move(result.second));
  };
}
inline SimpleValueAndGradFn value_and_grad(const std::function<array(const std::vector<array>&)>& fun,
                                           int argnum = 0) {
  return value_and_grad(fun, std::vector<int>{argnum});
}

/// Gradients of a scalar function with respect to the inputs listed in `argnums`.
inline std::function<std::vector<array>(const std::vector<array>&)> grad(
    const std::function<array(const std::vector<array>&)>& fun, const std::vector<int>& argnums) {
  auto vg = value_and_grad(fun, argnums);
  return [vg](const std::vector<array>& inputs) { return vg(inputs).second; };
}
inline std::function<std::vector<array>(const std::vector<array>&)> grad(
    const std::function<array(const std::vector<array>&)>& fun, int argnum = 0) {
  return grad(fun, std::vector<int>{argnum});
}
/// Gradient of a scalar function of one array.
inline std::function<array(const array&)> grad(const std::function<array(const array&)>& fun) {
  auto vg = value_and_grad(fun);
  return [vg](const array& input) { return vg(input).second; };
}

/// `fun` vectorized over axis `in_axes[i]` of input i (-1: input i is not mapped; empty: axis 0
/// of every input); output j's mapped axis goes to `out_axes[j]` (empty: 0). Throws
/// "[vmap] ..." for inconsistent axes, and "[Name] vmap is not implemented." for a primitive
/// without a vmap rule.
std::function<std::vector<array>(const std::vector<array>&)> vmap(
    const std::function<std::vector<array>(const std::vector<array>&)>& fun,
    const std::vector<int>& in_axes = {}, const std::vector<int>& out_axes = {});
/// vmap of a function of one array.
std::function<array(const array&)> vmap(const std::function<array(const array&)>& fun, int in_axis = 0,
                                        int out_axis = 0);
/// vmap of a function of two arrays.
std::function<array(const array&, const array&)> vmap(
    const std::function<array(const array&, const array&)>& fun, int in_axis_a = 0, int in_axis_b = 0,
    int out_axis = 0);

/// `fun` with its derivatives replaced: `fun_vjp(primals, cotangents, outputs)` returns one
/// cotangent per primal; `fun_jvp(primals, tangents, argnums)` one tangent per output (the
/// tangents are those of the primals in argnums); `fun_vmap(inputs, axes)` the outputs and
/// their vectorized axes. Any left out is derived from `fun` itself.
std::function<std::vector<array>(const std::vector<array>&)> custom_function(
    std::function<std::vector<array>(const std::vector<array>&)> fun,
    std::optional<std::function<std::vector<array>(const std::vector<array>&, const std::vector<array>&,
                                                   const std::vector<array>&)>>
        fun_vjp = std::nullopt,
    std::optional<std::function<std::vector<array>(const std::vector<array>&, const std::vector<array>&,
                                                   const std::vector<int>&)>>
        fun_jvp = std::nullopt,
    std::optional<std::function<std::pair<std::vector<array>, std::vector<int>>(const std::vector<array>&,
                                                                                const std::vector<int>&)>>
        fun_vmap = std::nullopt);

/// `fun` whose vector-Jacobian product is `fun_vjp(primals, cotangents, outputs)`.
std::function<std::vector<array>(const std::vector<array>&)> custom_vjp(
    std::function<std::vector<array>(const std::vector<array>&)> fun,
    std::function<std::vector<array>(const std::vector<array>&, const std::vector<array>&,
                                     const std::vector<array>&)>
        fun_vjp);

/// `fun` whose intermediates are not kept for the backward pass: its vjp computes them again.
std::function<std::vector<array>(const std::vector<array>&)> checkpoint(
    std::function<std::vector<array>(const std::vector<array>&)> fun);

}  // namespace braid
