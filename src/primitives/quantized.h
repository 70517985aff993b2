// Quantization in MLX's modes and packed layouts (see src/backend/common/quantized.h).
#pragma once

#include <vector>

#include "backend/common/quantized.h"
#include "primitives/primitive_base.h"

namespace braid {

using common::QuantizationMode;

/// One output of quantizing w along its last axis: the packed uint32 words, the scales or
/// the biases (nodes share the input; each computes its groups' parameters). inputs: w, and
/// for nvfp4 with a global scale, that scale (float32, one element). Scales are in w's dtype
/// for affine and uint8 codes for the fp modes, which have no biases.
class Quantize : public UnaryPrimitive {
 public:
  enum class Part { packed, scales, biases };
  Quantize(Stream s, int group_size, int bits, QuantizationMode mode, Part part)
      : UnaryPrimitive(std::move(s)), group_size_(group_size), bits_(bits), mode_(mode), part_(part) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Quantize"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }
  QuantizationMode mode() const { return mode_; }
  Part part() const { return part_; }

 private:
  int group_size_;
  int bits_;
  QuantizationMode mode_;
  Part part_;
};

/// inputs: packed w, scales, then biases (affine, in the output dtype, as are its scales) or
/// the global scale (nvfp4 when given; float32, one element).
class Dequantize : public UnaryPrimitive {
 public:
  Dequantize(Stream s, int group_size, int bits, QuantizationMode mode)
      : UnaryPrimitive(std::move(s)), group_size_(group_size), bits_(bits), mode_(mode) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Dequantize"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }
  QuantizationMode mode() const { return mode_; }

 private:
  int group_size_;
  int bits_;
  QuantizationMode mode_;
};

/// x [R, K] (R rows of all batches, contiguous) times the transposed dequantized w [N, K]:
/// the path for few rows, which reads the packed weights once. inputs: x, w, scales and, for
/// affine, biases; x (and affine's scales and biases) in the output dtype.
class QuantizedMatmul : public UnaryPrimitive {
 public:
  QuantizedMatmul(Stream s, int group_size, int bits, QuantizationMode mode)
      : UnaryPrimitive(std::move(s)), group_size_(group_size), bits_(bits), mode_(mode) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "QuantizedMatmul"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }
  QuantizationMode mode() const { return mode_; }

 private:
  int group_size_;
  int bits_;
  QuantizationMode mode_;
};

/// x [Bx, M, K] times w of batch rhs[b] for every b, with x of batch lhs[b]: out [B, M, N].
/// inputs: x, w [Bw, N, K * bits / 32] (transpose) or [Bw, K, N * bits / 32], scales (and for
/// affine biases; [Bw, rows of w, groups]), then lhs and rhs (uint32 [B]); indices past the
/// end are clamped to the last batch.
class GatherQMM : public UnaryPrimitive {
 public:
  GatherQMM(Stream s, int group_size, int bits, QuantizationMode mode, bool transpose)
      : UnaryPrimitive(std::move(s)),
        group_size_(group_size),
        bits_(bits),
        mode_(mode),
        transpose_(transpose) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "GatherQMM"; }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }
  QuantizationMode mode() const { return mode_; }
  bool transpose() const { return transpose_; }

 private:
  int group_size_;
  int bits_;
  QuantizationMode mode_;
  bool transpose_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_QUANTIZED_PRIMITIVES(X) X(Quantize) X(Dequantize) X(QuantizedMatmul) X(GatherQMM)

}  // namespace braid
