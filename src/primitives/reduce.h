// Reductions and scans.
#pragma once

#include <vector>

#include "braid/dtype.h"
#include "primitives/primitive_base.h"

namespace braid {

/// Reduction over `axes` (sorted, unique, non-negative); the output keeps reduced axes as
/// size 1 (the op reshapes them away when keepdims is false). all/any take a bool input (the
/// op casts first); sum and prod widen small integers (sum_dtype), and a sum of 16-bit
/// floats may also be asked for in float32 (mean's); max and min keep the dtype.
class Reduce : public UnaryPrimitive {
 public:
  enum class Op { sum, prod, max, min, all, any };
  Reduce(Stream s, Op op, std::vector<int> axes)
      : UnaryPrimitive(std::move(s)), op_(op), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override;
  bool is_equivalent(const Primitive& o) const override;
  Op op() const { return op_; }
  const std::vector<int>& axes() const { return axes_; }

  /// MLX's dtype of a sum or product: bool and signed ints up to 32 bits give int32, unsigned
  /// ones up to 32 bits give uint32, anything else is kept.
  static Dtype sum_dtype(Dtype in);

 private:
  Op op_;
  std::vector<int> axes_;
};

/// Index (uint32) of the first maximum or minimum along `axis`; the output keeps the axis as
/// size 1. NaN follows MLX's CPU: a NaN first element wins, later NaNs are skipped.
class ArgReduce : public UnaryPrimitive {
 public:
  enum class Op { argmin, argmax };
  ArgReduce(Stream s, Op op, int axis) : UnaryPrimitive(std::move(s)), op_(op), axis_(axis) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override;
  bool is_equivalent(const Primitive& o) const override;
  Op op() const { return op_; }
  int axis() const { return axis_; }

 private:
  Op op_;
  int axis_;
};

/// Running sum, product, max, min or logaddexp along `axis`, from the end when `reverse`;
/// exclusive scans start from the identity. Output shape is the input's; the dtype is kept
/// (a bool cumsum gives int32).
class Scan : public UnaryPrimitive {
 public:
  enum class Op { sum, prod, max, min, logaddexp };
  Scan(Stream s, Op op, int axis, bool reverse, bool inclusive)
      : UnaryPrimitive(std::move(s)), op_(op), axis_(axis), reverse_(reverse), inclusive_(inclusive) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override;
  bool is_equivalent(const Primitive& o) const override;
  Op op() const { return op_; }
  int axis() const { return axis_; }
  bool reverse() const { return reverse_; }
  bool inclusive() const { return inclusive_; }

 private:
  Op op_;
  int axis_;
  bool reverse_;
  bool inclusive_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_REDUCE_PRIMITIVES(X) X(Reduce) X(ArgReduce) X(Scan)

}  // namespace braid
