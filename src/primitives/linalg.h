// Matrix products and normalizations.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

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

/// The Hadamard transform of every row along the last axis (n = m * 2^k elements; the op
/// checks n), times `scale`; real floating inputs, output of the same dtype.
class Hadamard : public UnaryPrimitive {
 public:
  Hadamard(Stream s, float scale) : UnaryPrimitive(std::move(s)), scale_(scale) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Hadamard"; }
  float scale() const { return scale_; }

 private:
  float scale_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_LINALG_PRIMITIVES(X) X(Matmul) X(Softmax) X(Hadamard)

}  // namespace braid
