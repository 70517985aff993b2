// Creation, conversion and data-movement primitives: copies, fills and views.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

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

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_SHAPE_PRIMITIVES(X) X(AsType) X(Full) X(Arange) X(Broadcast) X(Reshape) X(Transpose)

}  // namespace braid
