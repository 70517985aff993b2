// Affine quantization (MLX's packed layout; see src/backend/common/quantized.h).
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// One output of quantizing w along its last axis: the packed uint32 words, the scales or
/// the biases (three nodes share the input; each computes its groups' parameters).
class AffineQuantize : public UnaryPrimitive {
 public:
  enum class Part { packed, scales, biases };
  AffineQuantize(Stream s, int group_size, int bits, Part part)
      : UnaryPrimitive(std::move(s)), group_size_(group_size), bits_(bits), part_(part) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "AffineQuantize"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }
  Part part() const { return part_; }

 private:
  int group_size_;
  int bits_;
  Part part_;
};

/// inputs: packed w, scales, biases (scales/biases already in the output dtype).
class AffineDequantize : public UnaryPrimitive {
 public:
  AffineDequantize(Stream s, int group_size, int bits)
      : UnaryPrimitive(std::move(s)), group_size_(group_size), bits_(bits) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "AffineDequantize"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }

 private:
  int group_size_;
  int bits_;
};

/// x [R, K] (R rows of all batches, contiguous) times the transposed dequantized w [N, K]:
/// the path for few rows, which reads the packed weights once. inputs: x, w, scales, biases,
/// all contiguous, x/scales/biases in the output dtype.
class QuantizedMatmul : public UnaryPrimitive {
 public:
  QuantizedMatmul(Stream s, int group_size, int bits)
      : UnaryPrimitive(std::move(s)), group_size_(group_size), bits_(bits) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "QuantizedMatmul"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }

 private:
  int group_size_;
  int bits_;
};

/// x [Bx, M, K] times w of batch rhs[b] for every b, with x of batch lhs[b]: out [B, M, N].
/// inputs: x, w [Bw, N, K * bits / 32] (transpose) or [Bw, K, N * bits / 32], scales and
/// biases ([Bw, rows of w, groups], in the output dtype), lhs and rhs (uint32 [B]); indices
/// past the end are clamped to the last batch.
class GatherQMM : public UnaryPrimitive {
 public:
  GatherQMM(Stream s, int group_size, int bits, bool transpose)
      : UnaryPrimitive(std::move(s)), group_size_(group_size), bits_(bits), transpose_(transpose) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "GatherQMM"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }
  bool transpose() const { return transpose_; }

 private:
  int group_size_;
  int bits_;
  bool transpose_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_QUANTIZED_PRIMITIVES(X) X(AffineQuantize) X(AffineDequantize) X(QuantizedMatmul) X(GatherQMM)

}  // namespace braid
