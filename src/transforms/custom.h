// The nodes of custom_function, custom_vjp and checkpoint. A call's outputs are one node each
// (braid's primitives have one output); the transforms differentiate the nodes of one call
// together, so the user's vjp sees every output's cotangent at once and runs once, and the
// user's jvp runs once for all outputs, as in MLX.
#pragma once

#include <functional>
#include <memory>
#include <typeinfo>
#include <utility>
#include <vector>

#include "braid/array.h"
#include "braid/primitive.h"

namespace braid::detail {

struct CustomFunctions {
  using Vjp = std::function<std::vector<array>(const std::vector<array>&, const std::vector<array>&,
                                               const std::vector<array>&)>;
  using Jvp = std::function<std::vector<array>(const std::vector<array>&, const std::vector<array>&,
                                               const std::vector<int>&)>;
  using Vmap = std::function<std::pair<std::vector<array>, std::vector<int>>(const std::vector<array>&,
                                                                             const std::vector<int>&)>;
  Vjp vjp;
  Jvp jvp;
  Vmap vmap;
};

/// Output `index` of a custom function's call: inputs are the function's arguments followed by
/// all of its outputs (under stop_gradient), and the node shares the buffer of its output.
/// The nodes of one call have equal input lists; `group_key` tells them apart from others'.
class CustomTransforms : public UnaryPrimitive {
 public:
  CustomTransforms(Stream s, int index, int num_outputs, std::shared_ptr<const CustomFunctions> fns)
      : UnaryPrimitive(std::move(s)), index_(index), num_outputs_(num_outputs), fns_(std::move(fns)) {}

  void eval_cpu(const std::vector<array>& inputs, array& out) override;
  void eval_gpu(const std::vector<array>& inputs, array& out) override;
  using UnaryPrimitive::eval_cpu;
  using UnaryPrimitive::eval_gpu;

  /// This output's share alone (the others' cotangents zero); the transforms use group_vjp.
  std::vector<array> vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                         const std::vector<int>& argnums, const std::vector<array>& outputs) override;
  std::vector<array> jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                         const std::vector<int>& argnums) override;
  std::pair<std::vector<array>, std::vector<int>> vmap(const std::vector<array>& inputs,
                                                       const std::vector<int>& axes) override;
  const char* name() const override { return "CustomTransforms"; }

  int index() const { return index_; }
  int num_outputs() const { return num_outputs_; }
  /// What the nodes of one call share (the node of its first output, an input of each).
  const void* group_key(const std::vector<array>& primals) const {
    return primals[primals.size() - num_outputs_].desc();
  }
  /// The arguments' cotangents (for `argnums`) from every output's cotangent: one call of the
  /// user's vjp.
  std::vector<array> group_vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>& argnums) const;
  /// Every output's tangent: one call of the user's jvp.
  std::vector<array> group_jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>& argnums) const;

 private:
  int index_;
  int num_outputs_;
  std::shared_ptr<const CustomFunctions> fns_;
};

/// `p` as a custom function's node, or null: one type comparison, cheap enough for every
/// node of a tape.
inline const CustomTransforms* as_custom(const Primitive& p) {
  return typeid(p) == typeid(CustomTransforms) ? static_cast<const CustomTransforms*>(&p) : nullptr;
}

}  // namespace braid::detail
