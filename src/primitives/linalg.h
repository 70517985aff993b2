// Matrix products and normalizations.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// Batched matrix product of two inputs of the same inexact dtype whose batch dimensions
/// already match (the op broadcasts them). Shapes [..., M, K] x [..., K, N].
class Matmul : public UnaryPrimitive {
 public:
  explicit Matmul(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Matmul"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// alpha (a @ b) + beta c in one GEMM (BLAS's and cuBLASLt's beta): inputs a, b, c of the
/// output dtype, a and b with the batch dimensions of the output, c broadcast to its shape.
class AddMM : public UnaryPrimitive {
 public:
  AddMM(Stream s, float alpha, float beta) : UnaryPrimitive(std::move(s)), alpha_(alpha), beta_(beta) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "AddMM"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const AddMM&>(o);
    return alpha_ == p.alpha_ && beta_ == p.beta_;
  }
  float alpha() const { return alpha_; }
  float beta() const { return beta_; }

 private:
  float alpha_;
  float beta_;
};

/// out[i] = a[lhs[i]] @ b[rhs[i]] for every position i of the (broadcast) uint32 index arrays,
/// indexing the flattened batch matrices of a [..., M, K] and b [..., K, N]; one GEMM per
/// product, reading the gathered matrices in place. inputs: a, b, lhs, rhs.
class GatherMM : public UnaryPrimitive {
 public:
  GatherMM(Stream s, bool left_sorted, bool right_sorted)
      : UnaryPrimitive(std::move(s)), left_sorted_(left_sorted), right_sorted_(right_sorted) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "GatherMM"; }
  bool left_sorted() const { return left_sorted_; }
  bool right_sorted() const { return right_sorted_; }

 private:
  bool left_sorted_;
  bool right_sorted_;
};

/// out[s] = a[:, start:end] @ b[start:end, :] for every segment s = (start, end) of the uint32
/// array segments [..., 2] (empty when end <= start). inputs: a [M, K], b [K, N], segments.
/// Not differentiable (as in MLX); vmap maps it one slice at a time.
class SegmentedMM : public UnaryPrimitive {
 public:
  explicit SegmentedMM(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "SegmentedMM"; }
};

/// Softmax over the last axis, in one pass per row (float inputs).
class Softmax : public UnaryPrimitive {
 public:
  Softmax(Stream s, bool precise) : UnaryPrimitive(std::move(s)), precise_(precise) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Softmax"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Softmax&>(o);
    return precise_ == p.precise_;
  }
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
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Hadamard"; }
  float scale() const { return scale_; }

 private:
  float scale_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_LINALG_PRIMITIVES(X) X(Matmul) X(AddMM) X(GatherMM) X(SegmentedMM) X(Softmax) X(Hadamard)

}  // namespace braid
