// Reductions and scans.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// Reduction over `axes` (sorted, unique, non-negative); the output keeps reduced axes as
/// size 1 (the op reshapes them away when keepdims is false).
class Reduce : public UnaryPrimitive {
 public:
  enum class Op { sum, max };
  Reduce(Stream s, Op op, std::vector<int> axes)
      : UnaryPrimitive(std::move(s)), op_(op), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return op_ == Op::sum ? "Sum" : "Max"; }
  Op op() const { return op_; }
  const std::vector<int>& axes() const { return axes_; }

 private:
  Op op_;
  std::vector<int> axes_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_REDUCE_PRIMITIVES(X) X(Reduce)

}  // namespace braid
