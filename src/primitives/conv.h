// Convolution (MLX's Convolution primitive): one N-d primitive behind conv1d/2d/3d,
// conv_general and the transposed convolutions.
#pragma once

#include <cstdint>
#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// inputs: x [N, S..., C] and w [O, K..., C / groups], both of the output's floating dtype
/// (float32, float16 or bfloat16), any layout. Padding may be negative (it crops the dilated
/// input); the op has checked that every output size is positive. See
/// src/backend/common/conv.h.
class Convolution : public UnaryPrimitive {
 public:
  Convolution(Stream s, std::vector<int> stride, std::vector<int> padding_lo, std::vector<int> padding_hi,
              std::vector<int> kernel_dilation, std::vector<int> input_dilation, int groups, bool flip)
      : UnaryPrimitive(std::move(s)),
        stride_(std::move(stride)),
        padding_lo_(std::move(padding_lo)),
        padding_hi_(std::move(padding_hi)),
        kernel_dilation_(std::move(kernel_dilation)),
        input_dilation_(std::move(input_dilation)),
        groups_(groups),
        flip_(flip) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  const char* name() const override { return "Convolution"; }
  bool is_equivalent(const Primitive& other) const override {
    const auto* o = dynamic_cast<const Convolution*>(&other);
    return o && stride_ == o->stride_ && padding_lo_ == o->padding_lo_ && padding_hi_ == o->padding_hi_ &&
           kernel_dilation_ == o->kernel_dilation_ && input_dilation_ == o->input_dilation_ &&
           groups_ == o->groups_ && flip_ == o->flip_;
  }
  const std::vector<int>& stride() const { return stride_; }
  const std::vector<int>& padding_lo() const { return padding_lo_; }
  const std::vector<int>& padding_hi() const { return padding_hi_; }
  const std::vector<int>& kernel_dilation() const { return kernel_dilation_; }
  const std::vector<int>& input_dilation() const { return input_dilation_; }
  int groups() const { return groups_; }
  bool flip() const { return flip_; }

 private:
  std::vector<int> stride_;
  std::vector<int> padding_lo_;
  std::vector<int> padding_hi_;
  std::vector<int> kernel_dilation_;
  std::vector<int> input_dilation_;
  int groups_;
  bool flip_;
};

/// The bytes of column buffer per chunk of output rows that the backends use: `fallback`
/// (their own bound) unless a test has set a smaller one.
int64_t conv_chunk_bytes(int64_t fallback);
/// Test hook: makes the backends cut convolutions into chunks of at most `bytes` of column
/// buffer (0 restores their defaults), so that small tests reach the chunked path.
void set_conv_chunk_bytes_for_testing(int64_t bytes);

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_CONV_PRIMITIVES(X) X(Convolution)

}  // namespace braid
