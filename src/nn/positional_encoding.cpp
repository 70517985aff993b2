// Positional encodings (MLX's positional_encoding.py): RoPE, sinusoidal embeddings and ALiBi.
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

array ALiBi::create_alibi_slope(int num_heads) {
  if (num_heads <= 0) throw std::invalid_argument("[ALiBi] num_heads must be positive.");
  const double base = std::pow(256.0, 1.0 / num_heads);
  array slopes = power(array(static_cast<float>(base)), negative(arange(1, num_heads + 1)));
  return expand_dims(slopes, {-1, -2});
}

array ALiBi::create_alibi_matrix(int q_sequence_length, int k_sequence_length, int num_heads, int offset,
                                 Dtype dtype) {
  array queries = arange(offset, q_sequence_length);
  array keys = arange(0, k_sequence_length);
  array distance = negative(abs(subtract(expand_dims(queries, 1), expand_dims(keys, 0))));
  distance = expand_dims(distance, {0, 1});
  return astype(multiply(distance, create_alibi_slope(num_heads)), dtype);
}

array ALiBi::operator()(const array& attention_scores, int offset, const std::optional<array>& mask) {
  if (attention_scores.ndim() != 4) {
    fail("Expected attention scores [B, H, T_q, T_k]; got " + std::to_string(attention_scores.ndim()) +
         " axes.");
  }
  array bias = create_alibi_matrix(attention_scores.shape(-2) + offset, attention_scores.shape(-1),
                                   attention_scores.shape(1), offset, attention_scores.dtype());
  if (mask) bias = add(bias, *mask);
  return add(attention_scores, bias);
}

}  // namespace braid::nn
