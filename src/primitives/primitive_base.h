// What every primitive declaration uses: the base classes and the eval declarations macro.
#pragma once

#include <vector>

#include "braid/primitive.h"

namespace braid {

#define BRAID_PRIMITIVE_EVALS                                          \
  using UnaryPrimitive::eval_cpu;                                        \
  using UnaryPrimitive::eval_gpu;                                        \
  void eval_cpu(const std::vector<array>& inputs, array& out) override; \
  void eval_gpu(const std::vector<array>& inputs, array& out) override;

}  // namespace braid
