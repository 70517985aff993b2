// Element-wise primitives: Unary, Binary (their ops are the rows of elementwise_ops.h),
// Select, StopGradient.
#pragma once

#include <typeinfo>
#include <vector>

#include "primitives/elementwise_ops.h"
#include "primitives/primitive_base.h"

namespace braid {

/// Element-wise function of one input. The op casts the input to a dtype its row accepts and
/// chooses the output dtype (the input's, bool for predicates, float32 for complex parts).
class Unary : public UnaryPrimitive {
 public:
#define BRAID_EW_ENUM(op, Name, accepts) op,
  enum class Op { BRAID_UNARY_OPS(BRAID_EW_ENUM) };
#undef BRAID_EW_ENUM
  Unary(Stream s, Op op) : UnaryPrimitive(std::move(s)), op_(op) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override;
  Op op() const { return op_; }
  bool is_equivalent(const Primitive& o) const override;
  /// The dtype class of the inputs the kernel of `op` takes.
  static uint8_t accepts(Op op);

 private:
  Op op_;
};

/// Element-wise function of two same-dtype inputs, broadcasting to the output's shape
/// inside the kernel (no extra broadcast nodes). Comparisons and logical ops output bool.
class Binary : public UnaryPrimitive {
 public:
#define BRAID_EW_ENUM(op, Name, accepts) op,
  enum class Op { BRAID_BINARY_OPS(BRAID_EW_ENUM) };
#undef BRAID_EW_ENUM
  Binary(Stream s, Op op) : UnaryPrimitive(std::move(s)), op_(op) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override;
  Op op() const { return op_; }
  bool is_equivalent(const Primitive& o) const override;
  static uint8_t accepts(Op op);

 private:
  Op op_;
};

/// divmod(a, b) as one node with two outputs (MLX's DivMod): the quotient floored, as
/// floor_divide's kernel computes it, and the remainder. Both inputs have the outputs' dtype;
/// broadcasting inside the kernels. Not differentiable (zero gradients, as MLX's).
class DivMod : public Primitive {
 public:
  explicit DivMod(Stream s) : Primitive(std::move(s)) {}
  void eval_cpu(const std::vector<array>& inputs, std::vector<array>& outputs) override;
  void eval_gpu(const std::vector<array>& inputs, std::vector<array>& outputs) override;
  std::vector<array> vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                         const std::vector<int>& argnums, const std::vector<array>& outputs) override;
  using Primitive::jvp;
  std::vector<array> jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                         const std::vector<int>& argnums, const std::vector<array>& outputs) override;
  std::pair<std::vector<array>, std::vector<int>> vmap(const std::vector<array>& inputs,
                                                       const std::vector<int>& axes) override;
  std::vector<Shape> output_shapes(const std::vector<array>& inputs) override;
  const char* name() const override { return "DivMod"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// where(condition, x, y): inputs are bool, T, T; broadcasting inside the kernel.
class Select : public UnaryPrimitive {
 public:
  explicit Select(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Select"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// The identity (its output shares the input's buffer); gradients stop here.
class StopGradient : public UnaryPrimitive {
 public:
  explicit StopGradient(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "StopGradient"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// Whether `p` is a StopGradient, asked per node by the transforms' graph walks. Compares the
/// addresses of the type_info objects (this library emits StopGradient's once), where
/// type_info's operator== would compare the names as strings for every other type.
inline bool is_stop_gradient(const Primitive& p) { return &typeid(p) == &typeid(StopGradient); }

/// g * op(x) for g and x of one shape and dtype: the derivative of sin, sinh or cosh (a
/// cotangent or tangent times cos, cosh or sinh of the input) as one node instead of two.
/// Bit for bit multiply(g, op(x)): the kernels compute op(x) as Unary's do, then the product.
class ScaledUnary : public UnaryPrimitive {
 public:
  ScaledUnary(Stream s, Unary::Op op) : UnaryPrimitive(std::move(s)), op_(op) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "ScaledUnary"; }
  Unary::Op op() const { return op_; }
  bool is_equivalent(const Primitive& o) const override;

 private:
  Unary::Op op_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_ELEMENTWISE_PRIMITIVES(X) X(Unary) X(Binary) X(Select) X(StopGradient) X(ScaledUnary)

}  // namespace braid
