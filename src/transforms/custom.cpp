// custom_function, custom_vjp and checkpoint: the traced function's outputs become nodes of a
// CustomTransforms primitive (one node per output, each a view of the output's value) whose
// vjp, jvp and vmap are the user's functions, or ones derived from the function itself.
#include <memory>
#include <stdexcept>
#include <string>

#include "braid/ops.h"
#include "braid/primitive.h"
#include "braid/transforms.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "transforms/custom.h"

namespace braid {

namespace detail {

void CustomTransforms::eval_cpu(const std::vector<array>& inputs, array& out) {
  // A view on either device: no kernel, the output's buffer is shared.
  share_buffer(out, inputs[inputs.size() - num_outputs_ + index_]);
}

void CustomTransforms::eval_gpu(const std::vector<array>& inputs, array& out) { eval_cpu(inputs, out); }

std::vector<array> CustomTransforms::group_vjp(const std::vector<array>& primals,
                                               const std::vector<array>& cotangents,
                                               const std::vector<int>& argnums) const {
  const size_t n_args = primals.size() - num_outputs_;
  std::vector<array> args(primals.begin(), primals.begin() + n_args);
  std::vector<array> outs(primals.begin() + n_args, primals.end());
  std::vector<array> all = fns_->vjp(args, cotangents, outs);
  std::vector<array> out;
  for (int a : argnums)
    out.push_back(static_cast<size_t>(a) < all.size() ? all[a] : zeros_like(primals[a], stream()));
  return out;
}

std::vector<array> CustomTransforms::group_jvp(const std::vector<array>& primals,
                                               const std::vector<array>& tangents,
                                               const std::vector<int>& argnums) const {
  const size_t n_args = primals.size() - num_outputs_;
  std::vector<array> args(primals.begin(), primals.begin() + n_args);
  std::vector<array> arg_tangents;
  std::vector<int> arg_nums;
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (static_cast<size_t>(argnums[i]) >= n_args) continue;
    arg_tangents.push_back(tangents[i]);
    arg_nums.push_back(argnums[i]);
  }
  std::vector<array> out = fns_->jvp(args, arg_tangents, arg_nums);
  if (out.size() != static_cast<size_t>(num_outputs_)) {
    throw std::invalid_argument("[custom_function] The jvp function returned " + std::to_string(out.size()) +
                                " tangents for " + std::to_string(num_outputs_) + " outputs.");
  }
  return out;
}

std::vector<array> CustomTransforms::vjp(const std::vector<array>& primals,
                                         const std::vector<array>& cotangents,
                                         const std::vector<int>& argnums, const std::vector<array>&) {
  std::vector<array> cots;
  const size_t n_args = primals.size() - num_outputs_;
  for (int i = 0; i < num_outputs_; ++i) {
    cots.push_back(i == index_ ? cotangents[0] : zeros_like(primals[n_args + i], stream()));
  }
  return group_vjp(primals, cots, argnums);
}

std::vector<array> CustomTransforms::jvp(const std::vector<array>& primals,
                                         const std::vector<array>& tangents,
                                         const std::vector<int>& argnums) {
  return {group_jvp(primals, tangents, argnums)[index_]};
}

std::pair<std::vector<array>, std::vector<int>> CustomTransforms::vmap(const std::vector<array>& inputs,
                                                                       const std::vector<int>& axes) {
  const size_t n_args = inputs.size() - num_outputs_;
  std::vector<array> args(inputs.begin(), inputs.begin() + n_args);
  std::vector<int> arg_axes(axes.begin(), axes.begin() + n_args);
  auto [outs, out_axes] = fns_->vmap(args, arg_axes);
  return {{outs[index_]}, {out_axes[index_]}};
}

}  // namespace detail

namespace {

using detail::CustomFunctions;
using detail::CustomTransforms;
using Fun = std::function<std::vector<array>(const std::vector<array>&)>;
using VjpFun = CustomFunctions::Vjp;
using JvpFun = CustomFunctions::Jvp;
using VmapFun = CustomFunctions::Vmap;

// `fun` as a function of the primals at `positions` only; the others are held as constants
// (never asked for a tangent or a cotangent). The references must outlive the call.
template <typename Positions>
auto with_constants(const Fun& fun, const std::vector<array>& primals, const Positions& positions) {
  return [&fun, &primals, &positions](const std::vector<array>& x) {
    std::vector<array> all = primals;
    for (size_t k = 0; k < positions.size(); ++k) all[positions[k]] = x[k];
    return fun(all);
  };
}

}  // namespace

std::function<std::vector<array>(const std::vector<array>&)> custom_function(
    Fun fun, std::optional<VjpFun> fun_vjp, std::optional<JvpFun> fun_jvp, std::optional<VmapFun> fun_vmap) {
  auto fns = std::make_shared<CustomFunctions>();
  fns->vjp = fun_vjp
                 ? std::move(*fun_vjp)
                 : VjpFun([fun](const std::vector<array>& primals, const std::vector<array>& cotangents,
                                const std::vector<array>&) { return vjp(fun, primals, cotangents).second; });
  fns->jvp = fun_jvp ? std::move(*fun_jvp)
                     : JvpFun([fun](const std::vector<array>& primals, const std::vector<array>& tangents,
                                    const std::vector<int>& argnums) {
                         // Only the inputs with tangents vary; the others (an integer index
                         // passed through, say) are constants, never asked for a tangent.
                         std::vector<array> varying;
                         for (int a : argnums) varying.push_back(primals[a]);
                         return jvp(with_constants(fun, primals, argnums), varying, tangents).second;
                       });
  fns->vmap = fun_vmap ? std::move(*fun_vmap)
                       : VmapFun([fun](const std::vector<array>& inputs, const std::vector<int>& axes) {
                           std::vector<array> outputs = vmap(fun, axes)(inputs);
                           return std::make_pair(outputs, std::vector<int>(outputs.size(), 0));
                         });
  std::shared_ptr<const CustomFunctions> shared = std::move(fns);
  return [fun = std::move(fun), shared](const std::vector<array>& args) {
    std::vector<array> outputs = fun(args);
    for (auto& out : outputs) out = stop_gradient(out);
    std::vector<array> inputs = args;
    inputs.insert(inputs.end(), outputs.begin(), outputs.end());
    Stream s = !outputs.empty() && outputs[0].primitive_ptr() ? outputs[0].primitive().stream()
                                                              : default_stream(default_device());
    const int n = static_cast<int>(outputs.size());
    std::vector<array> result;
    result.reserve(outputs.size());
    for (int i = 0; i < n; ++i) {
      result.emplace_back(outputs[i].shape(), outputs[i].dtype(),
                          detail::make_pooled<CustomTransforms>(s, i, n, shared), inputs);
    }
    return result;
  };
}

std::function<std::vector<array>(const std::vector<array>&)> custom_vjp(Fun fun, VjpFun fun_vjp) {
  return custom_function(std::move(fun), std::move(fun_vjp));
}

std::function<std::vector<array>(const std::vector<array>&)> checkpoint(Fun fun) {
  auto recompute = [fun](const std::vector<array>& primals, const std::vector<array>& cotangents,
                         const std::vector<array>& outputs) {
    // depends: the recomputation waits for the forward outputs, so both are never live at once.
    const std::vector<array> waited = depends(primals, outputs);
    // Only floating and complex inputs are differentiated: an integer input (token ids, gather
    // indices) takes part as a constant and gets a zero cotangent, so that the recomputation
    // never asks a gather for the gradient of its indices.
    std::vector<size_t> inexact;
    for (size_t i = 0; i < waited.size(); ++i) {
      if (issubdtype(waited[i].dtype(), Dtype::Category::inexact)) inexact.push_back(i);
    }
    if (inexact.size() == waited.size()) return vjp(fun, waited, cotangents).second;
    std::vector<array> xs;
    for (size_t i : inexact) xs.push_back(waited[i]);
    std::vector<array> grads = vjp(with_constants(fun, waited, inexact), xs, cotangents).second;
    std::vector<array> out;
    out.reserve(waited.size());
    for (const array& w : waited) out.push_back(zeros_like(w));
    for (size_t k = 0; k < inexact.size(); ++k) out[inexact[k]] = std::move(grads[k]);
    return out;
  };
  return custom_vjp(std::move(fun), std::move(recompute));
}

}  // namespace braid
