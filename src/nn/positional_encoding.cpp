// Positional encodings (MLX's positional_encoding.py): RoPE and sinusoidal embeddings.
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "braid/fast.h"
#include "braid/nn/layers.h"
#include "braid/ops.h"

namespace braid::nn {

RoPE::RoPE(int dims, bool traditional, float base, float scale)
    : dims_(dims), traditional_(traditional), base_(base), scale_(scale) {
  if (dims <= 0 || dims % 2 != 0) fail("dims must be positive and even; got " + std::to_string(dims) + ".");
}

array RoPE::operator()(const array& x, int offset) {
  return fast::rope(x, dims_, traditional_, base_, scale_, offset);
}

namespace {

// exp of frequencies spaced evenly in log space from max_freq down to min_freq.
array sinusoid_frequencies(int dims, float min_freq, float max_freq, bool full_turns) {
  const int half = dims / 2;
  array one_zero = subtract(array(1.0f), divide(arange(0, half), array(static_cast<float>(half - 1))));
  const double log_min = std::log(static_cast<double>(min_freq));
  const double log_max = std::log(static_cast<double>(max_freq));
  array sigmas = exp(add(multiply(one_zero, array(static_cast<float>(log_max - log_min))),
                         array(static_cast<float>(log_min))));
  if (full_turns) sigmas = multiply(sigmas, array(static_cast<float>(2 * std::numbers::pi)));
  return sigmas;
}

}  // namespace

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(int dims, float min_freq, float max_freq,
                                                           std::optional<float> scale, bool cos_first,
                                                           bool full_turns)
    : sigmas_(array(0.0f)), scale_(0.0f), cos_first_(cos_first) {
  if (dims < 4) fail("dims must be at least 4 (two frequencies); got " + std::to_string(dims) + ".");
  if (!(min_freq > 0.0f && max_freq > 0.0f)) fail("min_freq and max_freq must be positive.");
  sigmas_ = sinusoid_frequencies(dims, min_freq, max_freq, full_turns);
  // As MLX's `scale or sqrt(2 / dims)`: a scale of 0 also takes the default.
  scale_ = scale && *scale != 0.0f ? *scale : static_cast<float>(std::sqrt(2.0 / dims));
}

array SinusoidalPositionalEncoding::operator()(const array& x) {
  array y = multiply(expand_dims(x, -1), sigmas_);
  array cosy = cos(y), siny = sin(y);
  y = cos_first_ ? concatenate({cosy, siny}, -1) : concatenate({siny, cosy}, -1);
  return scale_ != 1.0f ? multiply(y, array(scale_, y.dtype())) : y;
}

}  // namespace braid::nn
