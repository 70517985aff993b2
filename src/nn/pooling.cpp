// Max and average pooling (MLX's pooling.py): the windows are a strided view of the (padded)
// input, reduced over their window axes.
#include <limits>
#include <numeric>
#include <stdexcept>

#include "braid/nn/layers.h"
#include "braid/ops.h"

namespace braid::nn {

std::string Pool::layer_name(bool max, int spatial_dims) {
  return std::string(max ? "MaxPool" : "AvgPool") + std::to_string(spatial_dims) + "d";
}

Pool::Pool(bool max, int spatial_dims, const Sizes& kernel_size, const Sizes& stride, const Sizes& padding)
    : max_(max),
      kernel_size_(kernel_size.expand(spatial_dims, layer_name(max, spatial_dims), "kernel_size")),
      stride_(stride.empty() ? kernel_size_
                             : stride.expand(spatial_dims, layer_name(max, spatial_dims), "stride")),
      padding_(padding.expand(spatial_dims, layer_name(max, spatial_dims), "padding")) {
  const std::string layer = layer_name(max, spatial_dims);
  for (int i = 0; i < spatial_dims; ++i) {
    if (kernel_size_[i] <= 0 || stride_[i] <= 0 || padding_[i] < 0) {
      throw std::invalid_argument("[" + layer +
                                  "] kernel_size and stride must be positive and padding non-negative.");
    }
  }
}

namespace {

// [N, spatial..., C] -> [N, out spatial..., window..., C] (MLX's _sliding_windows).
array sliding_windows(const array& x, const std::vector<int>& window, const std::vector<int>& stride) {
  const int n = static_cast<int>(window.size());
  const Shape& shape = x.shape();
  bool tiles = true;
  for (int i = 0; i < n; ++i) tiles = tiles && window[i] == stride[i] && shape[1 + i] % window[i] == 0;
  if (tiles) {
    // Non-overlapping windows that cover the input: a reshape and a transpose, no gather.
    Shape split{shape[0]};
    for (int i = 0; i < n; ++i) {
      split.push_back(shape[1 + i] / window[i]);
      split.push_back(window[i]);
    }
    split.push_back(shape.back());
    std::vector<int> order{0};
    for (int i = 0; i < n; ++i) order.push_back(1 + 2 * i);
    for (int i = 0; i < n; ++i) order.push_back(2 + 2 * i);
    order.push_back(2 * n + 1);
    return transpose(reshape(x, split), order);
  }
  Strides strides(shape.size(), 1);  // of the row-contiguous input
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  Shape out_shape{shape[0]};
  Strides out_strides{strides[0]};
  for (int i = 0; i < n; ++i) {
    out_shape.push_back((shape[1 + i] - window[i]) / stride[i] + 1);
    out_strides.push_back(strides[1 + i] * stride[i]);
  }
  for (int i = 0; i < n; ++i) {
    out_shape.push_back(window[i]);
    out_strides.push_back(strides[1 + i]);
  }
  out_shape.push_back(shape.back());
  out_strides.push_back(1);
  return as_strided(x, out_shape, out_strides, 0);
}

}  // namespace

array Pool::operator()(const array& x_in) {
  const int n = static_cast<int>(kernel_size_.size());
  if (static_cast<int>(x_in.ndim()) != n + 2) {
    fail("Expected an input [batch, " + std::to_string(n) + " spatial axes, channels]; got " +
         std::to_string(x_in.ndim()) + " dimensions.");
  }
  array x = x_in;
  bool padded = false;
  std::vector<std::pair<int, int>> widths{{0, 0}};
  for (int p : padding_) {
    widths.emplace_back(p, p);
    padded = padded || p > 0;
  }
  widths.emplace_back(0, 0);
  if (padded) {
    const double fill = max_ ? -std::numeric_limits<double>::infinity() : 0.0;
    x = pad(x, widths, array(static_cast<float>(fill), x.dtype()));
  }
  for (int i = 0; i < n; ++i) {
    if (x.shape(1 + i) < kernel_size_[i]) {
      fail("The pooling window (" + std::to_string(kernel_size_[i]) + ") is larger than the padded input (" +
           std::to_string(x.shape(1 + i)) + ") along spatial axis " + std::to_string(i) + ".");
    }
  }
  std::vector<int> axes(n);
  std::iota(axes.begin(), axes.end(), -n - 1);
  array windows = sliding_windows(x, kernel_size_, stride_);
  return max_ ? max(windows, axes) : mean(windows, axes);
}

}  // namespace braid::nn
