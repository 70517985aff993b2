// What every primitive declaration uses: the base classes and the eval and derivative
// declaration macros.
#pragma once

#include <vector>

#include "braid/primitive.h"

namespace braid {

#define BRAID_PRIMITIVE_EVALS                                           \
  using UnaryPrimitive::eval_cpu;                                       \
  using UnaryPrimitive::eval_gpu;                                       \
  void eval_cpu(const std::vector<array>& inputs, array& out) override; \
  void eval_gpu(const std::vector<array>& inputs, array& out) override;

/// Declares a primitive's vjp and jvp overrides (src/primitives/*_grad.cpp define them).
#define BRAID_PRIMITIVE_GRADS                                                                          \
  std::vector<array> vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,      \
                         const std::vector<int>& argnums, const std::vector<array>& outputs) override; \
  using UnaryPrimitive::jvp;                                                                           \
  std::vector<array> jvp(const std::vector<array>& primals, const std::vector<array>& tangents,        \
                         const std::vector<int>& argnums, const std::vector<array>& outputs) override;

/// Declares a primitive's output_shapes override (src/primitives/output_shapes.cpp defines
/// every one: the primitives a shapeless compiled function can replay on new shapes).
#define BRAID_PRIMITIVE_OUTPUT_SHAPES \
  std::vector<Shape> output_shapes(const std::vector<array>& inputs) override;

}  // namespace braid
