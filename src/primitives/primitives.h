// The primitive set. Declarations only: ops build these, backends define eval_cpu/eval_gpu
// (src/backend/cpu/*.cpp, src/backend/cuda/*.cu or the no_gpu stub).
#pragma once

#include <string>
#include <vector>

#include "braid/primitive.h"

namespace braid {

#define BRAID_PRIMITIVE_EVALS                                          \
  using UnaryPrimitive::eval_cpu;                                        \
  using UnaryPrimitive::eval_gpu;                                        \
  void eval_cpu(const std::vector<array>& inputs, array& out) override; \
  void eval_gpu(const std::vector<array>& inputs, array& out) override;

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

/// Converts the input to the output's dtype (a contiguous copy).
class AsType : public UnaryPrimitive {
 public:
  explicit AsType(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "AsType"; }
};

/// Materializes the (broadcast) input into a contiguous output: used by full/zeros/ones.
class Full : public UnaryPrimitive {
 public:
  explicit Full(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Full"; }
};

class Arange : public UnaryPrimitive {
 public:
  Arange(Stream s, double start, double step) : UnaryPrimitive(std::move(s)), start_(start), step_(step) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Arange"; }
  double start() const { return start_; }
  double step() const { return step_; }

 private:
  double start_;
  double step_;
};

/// A view with zero strides where dimensions are broadcast.
class Broadcast : public UnaryPrimitive {
 public:
  explicit Broadcast(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Broadcast"; }
};

/// A view when the input's layout allows it, else a contiguous copy.
class Reshape : public UnaryPrimitive {
 public:
  explicit Reshape(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Reshape"; }
};

/// Permuted strides over the same buffer.
class Transpose : public UnaryPrimitive {
 public:
  Transpose(Stream s, std::vector<int> axes) : UnaryPrimitive(std::move(s)), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Transpose"; }
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;
};

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

/// Batched matrix product of two inputs of the same floating dtype whose batch dimensions
/// already match (the op broadcasts them). Shapes [..., M, K] x [..., K, N].
class Matmul : public UnaryPrimitive {
 public:
  explicit Matmul(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Matmul"; }
};

/// Softmax over the last axis, in one pass per row (float inputs).
class Softmax : public UnaryPrimitive {
 public:
  Softmax(Stream s, bool precise) : UnaryPrimitive(std::move(s)), precise_(precise) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Softmax"; }
  bool precise() const { return precise_; }

 private:
  bool precise_;
};

}  // namespace braid
