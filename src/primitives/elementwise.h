// Element-wise primitives: Unary, Binary, Select.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// Element-wise function of one input. Output dtype is decided by the op.
class Unary : public UnaryPrimitive {
 public:
  enum class Op { negative, exp, log, sqrt, tanh };
  Unary(Stream s, Op op) : UnaryPrimitive(std::move(s)), op_(op) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override;
  Op op() const { return op_; }
  bool is_equivalent(const Primitive& o) const override;

 private:
  Op op_;
};

/// Element-wise function of two same-dtype inputs, broadcasting to the output's shape
/// inside the kernel (no extra broadcast nodes).
class Binary : public UnaryPrimitive {
 public:
  enum class Op { add, subtract, multiply, divide, maximum, minimum, equal, less, greater };
  Binary(Stream s, Op op) : UnaryPrimitive(std::move(s)), op_(op) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override;
  Op op() const { return op_; }
  bool is_equivalent(const Primitive& o) const override;

 private:
  Op op_;
};

/// where(condition, x, y): inputs are bool, T, T; broadcasting inside the kernel.
class Select : public UnaryPrimitive {
 public:
  explicit Select(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Select"; }
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_ELEMENTWISE_PRIMITIVES(X) X(Unary) X(Binary) X(Select)

}  // namespace braid
