// Convolution layers (MLX's convolution.py and convolution_transpose.py): channels-last
// weights drawn from U(-k, k), k = 1 / sqrt(in_channels * prod(kernel_size)), zero biases.
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "braid/nn/layers.h"
#include "braid/ops.h"
#include "braid/random.h"
#include "nn/scalars.h"

namespace braid::nn {

namespace {

// Weight [out_channels, kernel..., in_channels / groups] with MLX's scale.
array conv_weight(int in_channels, int out_channels, const std::vector<int>& kernel, int groups) {
  double fan_in = in_channels;
  Shape shape{out_channels};
  for (int k : kernel) {
    fan_in *= k;
    shape.push_back(k);
  }
  shape.push_back(in_channels / groups);
  return detail::uniform_init(std::sqrt(1.0 / fan_in), shape);
}

void check_channels(const std::string& layer, int in_channels, int out_channels,
                    const std::vector<int>& kernel, int groups) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument("[" + layer + "] " + what); };
  if (in_channels <= 0 || out_channels <= 0) fail("The numbers of channels must be positive.");
  for (int k : kernel) {
    if (k <= 0) fail("kernel_size must be positive; got " + std::to_string(k) + ".");
  }
  if (groups <= 0 || in_channels % groups != 0) {
    fail("The number of input channels (" + std::to_string(in_channels) +
         ") must be divisible by the number of groups (" + std::to_string(groups) + ")");
  }
}

std::pair<int, int> pair_of(const std::vector<int>& v) { return {v[0], v[1]}; }
std::tuple<int, int, int> triple_of(const std::vector<int>& v) { return {v[0], v[1], v[2]}; }

}  // namespace

Conv1d::Conv1d(int in_channels, int out_channels, int kernel_size, int stride, int padding, int dilation,
               int groups, bool bias)
    : stride_(stride), padding_(padding), dilation_(dilation), groups_(groups) {
  check_channels("Conv1d", in_channels, out_channels, {kernel_size}, groups);
  register_parameter("weight", conv_weight(in_channels, out_channels, {kernel_size}, groups));
  if (bias) register_parameter("bias", zeros({out_channels}));
}

array Conv1d::operator()(const array& x) {
  array y = conv1d(x, param("weight"), stride_, padding_, dilation_, groups_);
  return has_param("bias") ? add(y, param("bias")) : y;
}

Conv2d::Conv2d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride, Sizes padding,
               Sizes dilation, int groups, bool bias)
    : stride_(stride.expand(2, "Conv2d", "stride")),
      padding_(padding.expand(2, "Conv2d", "padding")),
      dilation_(dilation.expand(2, "Conv2d", "dilation")),
      groups_(groups) {
  auto kernel = kernel_size.expand(2, "Conv2d", "kernel_size");
  check_channels("Conv2d", in_channels, out_channels, kernel, groups);
  register_parameter("weight", conv_weight(in_channels, out_channels, kernel, groups));
  if (bias) register_parameter("bias", zeros({out_channels}));
}

array Conv2d::operator()(const array& x) {
  array y = conv2d(x, param("weight"), pair_of(stride_), pair_of(padding_), pair_of(dilation_), groups_);
  return has_param("bias") ? add(y, param("bias")) : y;
}

Conv3d::Conv3d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride, Sizes padding,
               Sizes dilation, bool bias)
    : stride_(stride.expand(3, "Conv3d", "stride")),
      padding_(padding.expand(3, "Conv3d", "padding")),
      dilation_(dilation.expand(3, "Conv3d", "dilation")) {
  auto kernel = kernel_size.expand(3, "Conv3d", "kernel_size");
  check_channels("Conv3d", in_channels, out_channels, kernel, 1);
  register_parameter("weight", conv_weight(in_channels, out_channels, kernel, 1));
  if (bias) register_parameter("bias", zeros({out_channels}));
}

array Conv3d::operator()(const array& x) {
  array y = conv3d(x, param("weight"), triple_of(stride_), triple_of(padding_), triple_of(dilation_));
  return has_param("bias") ? add(y, param("bias")) : y;
}

ConvTranspose1d::ConvTranspose1d(int in_channels, int out_channels, int kernel_size, int stride, int padding,
                                 int dilation, int output_padding, bool bias)
    : stride_(stride), padding_(padding), dilation_(dilation), output_padding_(output_padding) {
  check_channels("ConvTranspose1d", in_channels, out_channels, {kernel_size}, 1);
  register_parameter("weight", conv_weight(in_channels, out_channels, {kernel_size}, 1));
  if (bias) register_parameter("bias", zeros({out_channels}));
}

array ConvTranspose1d::operator()(const array& x) {
  array y = conv_transpose1d(x, param("weight"), stride_, padding_, dilation_, output_padding_);
  return has_param("bias") ? add(y, param("bias")) : y;
}

ConvTranspose2d::ConvTranspose2d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride,
                                 Sizes padding, Sizes dilation, Sizes output_padding, bool bias)
    : stride_(stride.expand(2, "ConvTranspose2d", "stride")),
      padding_(padding.expand(2, "ConvTranspose2d", "padding")),
      dilation_(dilation.expand(2, "ConvTranspose2d", "dilation")),
      output_padding_(output_padding.expand(2, "ConvTranspose2d", "output_padding")) {
  auto kernel = kernel_size.expand(2, "ConvTranspose2d", "kernel_size");
  check_channels("ConvTranspose2d", in_channels, out_channels, kernel, 1);
  register_parameter("weight", conv_weight(in_channels, out_channels, kernel, 1));
  if (bias) register_parameter("bias", zeros({out_channels}));
}

array ConvTranspose2d::operator()(const array& x) {
  array y = conv_transpose2d(x, param("weight"), pair_of(stride_), pair_of(padding_), pair_of(dilation_),
                             pair_of(output_padding_));
  return has_param("bias") ? add(y, param("bias")) : y;
}

ConvTranspose3d::ConvTranspose3d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride,
                                 Sizes padding, Sizes dilation, Sizes output_padding, bool bias)
    : stride_(stride.expand(3, "ConvTranspose3d", "stride")),
      padding_(padding.expand(3, "ConvTranspose3d", "padding")),
      dilation_(dilation.expand(3, "ConvTranspose3d", "dilation")),
      output_padding_(output_padding.expand(3, "ConvTranspose3d", "output_padding")) {
  auto kernel = kernel_size.expand(3, "ConvTranspose3d", "kernel_size");
  check_channels("ConvTranspose3d", in_channels, out_channels, kernel, 1);
  register_parameter("weight", conv_weight(in_channels, out_channels, kernel, 1));
  if (bias) register_parameter("bias", zeros({out_channels}));
}

array ConvTranspose3d::operator()(const array& x) {
  array y = conv_transpose3d(x, param("weight"), triple_of(stride_), triple_of(padding_),
                             triple_of(dilation_), triple_of(output_padding_));
  return has_param("bias") ? add(y, param("bias")) : y;
}

}  // namespace braid::nn
