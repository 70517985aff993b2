// Convolutions: conv_general validates and builds one Convolution node; conv1d/2d/3d and the
// transposed convolutions are conv_general with MLX's arguments. Errors are "[conv] ...", the
// name MLX's messages use for every convolution op.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/common/conv.h"
#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

namespace {

constexpr const char* kOp = "conv";

std::string list_str(const std::vector<int>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// MLX's checks of the arrays, in its order.
void check_arrays(const array& in, const array& wt, int groups) {
  if (groups < 1)
    throw_invalid(kOp, "The number of groups must be positive (got " + std::to_string(groups) + ").");
  if (groups != 1 && in.ndim() != 3 && in.ndim() != 4) {
    throw_invalid(kOp, "Groups other than 1 are supported only in 1D and 2D convolutions.");
  }
  const int dims = static_cast<int>(in.ndim()) - 2;
  if (dims < 1 || dims > common::kMaxConvDims) {
    throw_invalid(kOp, "Only inputs with 1 to 3 spatial dimensions are supported (got input of shape " +
                           shape_str(in.shape()) + "); the input's layout is [N, ..., C_in].");
  }
  if (!issubdtype(in.dtype(), floating)) {
    throw_invalid(kOp, "Invalid input array with type " + dtype_name(in.dtype()) +
                           ". Convolution supports only floating point types.");
  }
  if (wt.ndim() != in.ndim()) {
    throw_invalid(kOp, "Invalid weight array with " + std::to_string(wt.ndim()) + " dimensions for " +
                           std::to_string(dims) + "D convolution. Expected an array with " +
                           std::to_string(dims + 2) + " dimensions in the layout [C_out, ..., C_in].");
  }
  const int32_t c_in = in.shape(-1);
  if (c_in % groups != 0) {
    throw_invalid(kOp, "The input channels must be divisible by the number of groups. Got input of shape " +
                           shape_str(in.shape()) + " and " + std::to_string(groups) + " groups.");
  }
  if (groups > 1 && wt.shape(0) % groups != 0) {
    throw_invalid(kOp, "With groups > 1 the output channels must be divisible by the number of groups. Got " +
                           std::to_string(wt.shape(0)) + " output channels and " + std::to_string(groups) +
                           " groups.");
  }
  if (static_cast<int64_t>(c_in) != static_cast<int64_t>(groups) * wt.shape(-1)) {
    if (groups == 1) {
      throw_invalid(kOp,
                    "The input channels of the input and the weight must match, but got input of shape " +
                        shape_str(in.shape()) + " and weight of shape " + shape_str(wt.shape()) + ".");
    }
    throw_invalid(kOp, "With groups=" + std::to_string(groups) + " and weight of shape " +
                           shape_str(wt.shape()) + " the input should have " +
                           std::to_string(static_cast<int64_t>(groups) * wt.shape(-1)) +
                           " channels, but it has " + std::to_string(c_in) + ".");
  }
}

std::vector<int> vec3(const std::tuple<int, int, int>& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

// A parameter given once (or not at all) applies to every spatial axis, as in MLX.
std::vector<int> per_axis(std::vector<int> v, int dims, int fallback) {
  if (v.size() <= 1) return std::vector<int>(static_cast<size_t>(dims), v.empty() ? fallback : v[0]);
  return v;
}

void check_size(const std::vector<int>& v, int dims, const char* what) {
  if (static_cast<int>(v.size()) != dims) {
    throw_invalid(kOp, std::string("Invalid ") + what + " " + list_str(v) + " for " + std::to_string(dims) +
                           "D convolution.");
  }
}

void check_positive(const std::vector<int>& v, const char* what) {
  for (int x : v) {
    if (x <= 0) throw_invalid(kOp, std::string(what) + " must be positive. Got " + list_str(v) + ".");
  }
}

// The transposed convolution as MLX computes it: conv_general over the input dilated by the
// stride, with the kernel flipped and the padding that puts the kernel's far end on the
// first input element (less `padding`), plus output_padding on the high side.
array conv_transpose_general(const array& in, const array& wt, std::vector<int> stride,
                             std::vector<int> padding, std::vector<int> dilation,
                             const std::vector<int>& output_padding, int groups, StreamOrDevice s) {
  const size_t n = padding.size();
  std::vector<int> lo(n, 0), hi(n, 0);
  // Shapes too short for the parameters leave the padding at 0; conv_general then rejects them.
  if (in.ndim() >= n + 2 && wt.ndim() >= n + 2) {
    for (size_t i = 0; i < n; ++i) {
      const int64_t kernel = common::dilated_size(wt.shape(static_cast<int>(i) + 1), dilation[i]);
      lo[i] = static_cast<int>(kernel - 1 - padding[i]);
      hi[i] = static_cast<int>(kernel - 1 - padding[i] + output_padding[i]);
    }
  }
  return conv_general(in, wt, std::vector<int>(n, 1), std::move(lo), std::move(hi), std::move(dilation),
                      std::move(stride), groups, true, std::move(s));
}

}  // namespace

array conv_general(array in, array wt, std::vector<int> stride, std::vector<int> padding_lo,
                   std::vector<int> padding_hi, std::vector<int> kernel_dilation,
                   std::vector<int> input_dilation, int groups, bool flip, StreamOrDevice s) {
  check_arrays(in, wt, groups);
  const int dims = static_cast<int>(in.ndim()) - 2;
  const Dtype t = promote_types(in.dtype(), wt.dtype());
  if (!issubdtype(t, floating)) {
    throw_invalid(kOp, "The input and weight types " + dtype_name(in.dtype()) + " and " +
                           dtype_name(wt.dtype()) + " promote to " + dtype_name(t) +
                           ", which is not a real floating point type.");
  }
  if (t == float64) throw_invalid(kOp, "float64 is not supported.");

  stride = per_axis(std::move(stride), dims, 1);
  padding_lo = per_axis(std::move(padding_lo), dims, 0);
  padding_hi = per_axis(std::move(padding_hi), dims, 0);
  kernel_dilation = per_axis(std::move(kernel_dilation), dims, 1);
  input_dilation = per_axis(std::move(input_dilation), dims, 1);
  check_size(stride, dims, "strides");
  if (static_cast<int>(padding_lo.size()) != dims || static_cast<int>(padding_hi.size()) != dims) {
    throw_invalid(kOp, "Invalid padding " + list_str(padding_lo) + " | " + list_str(padding_hi) + " for " +
                           std::to_string(dims) + "D convolution.");
  }
  check_size(kernel_dilation, dims, "kernel dilation");
  check_size(input_dilation, dims, "input dilation");
  check_positive(kernel_dilation, "Kernel dilation sizes");
  check_positive(input_dilation, "Input dilation sizes");
  check_positive(stride, "Stride sizes");

  // Negative padding crops the (dilated) input; the kernels take it as it is.
  int bad_axis = 0;
  Shape out_shape = common::conv_out_shape(in.shape(), wt.shape(), stride, padding_lo, padding_hi,
                                           kernel_dilation, input_dilation, bad_axis);
  if (bad_axis != 0) {
    throw_invalid(kOp,
                  "The spatial dimensions of the input after dilation and padding cannot be smaller than "
                  "the dilated weight's. Got axis " +
                      std::to_string(bad_axis) + " of input shape " + shape_str(in.shape()) +
                      " with padding low " + list_str(padding_lo) + ", padding high " + list_str(padding_hi) +
                      ", and weight of shape " + shape_str(wt.shape()) + ".");
  }
  detail::checked_size(out_shape, t, kOp);
  Stream st = detail::op_stream(std::move(s), kOp);
  in = astype(in, t, st);
  wt = astype(wt, t, st);
  return array(
      std::move(out_shape), t,
      detail::make_pooled<Convolution>(st, std::move(stride), std::move(padding_lo), std::move(padding_hi),
                                       std::move(kernel_dilation), std::move(input_dilation), groups, flip),
      {in, wt});
}

array conv1d(const array& in, const array& wt, int stride, int padding, int dilation, int groups,
             StreamOrDevice s) {
  return conv_general(in, wt, std::vector<int>{stride}, std::vector<int>{padding}, std::vector<int>{padding},
                      std::vector<int>{dilation}, std::vector<int>{1}, groups, false, std::move(s));
}

array conv2d(const array& in, const array& wt, const std::pair<int, int>& stride,
             const std::pair<int, int>& padding, const std::pair<int, int>& dilation, int groups,
             StreamOrDevice s) {
  const std::vector<int> pad = {padding.first, padding.second};
  return conv_general(in, wt, {stride.first, stride.second}, pad, pad, {dilation.first, dilation.second},
                      {1, 1}, groups, false, std::move(s));
}

array conv3d(const array& in, const array& wt, const std::tuple<int, int, int>& stride,
             const std::tuple<int, int, int>& padding, const std::tuple<int, int, int>& dilation, int groups,
             StreamOrDevice s) {
  return conv_general(in, wt, vec3(stride), vec3(padding), vec3(padding), vec3(dilation), {1, 1, 1}, groups,
                      false, std::move(s));
}

array conv_transpose1d(const array& in, const array& wt, int stride, int padding, int dilation,
                       int output_padding, int groups, StreamOrDevice s) {
  return conv_transpose_general(in, wt, {stride}, {padding}, {dilation}, {output_padding}, groups,
                                std::move(s));
}

array conv_transpose2d(const array& in, const array& wt, const std::pair<int, int>& stride,
                       const std::pair<int, int>& padding, const std::pair<int, int>& dilation,
                       const std::pair<int, int>& output_padding, int groups, StreamOrDevice s) {
  return conv_transpose_general(in, wt, {stride.first, stride.second}, {padding.first, padding.second},
                                {dilation.first, dilation.second},
                                {output_padding.first, output_padding.second}, groups, std::move(s));
}

array conv_transpose3d(const array& in, const array& wt, const std::tuple<int, int, int>& stride,
                       const std::tuple<int, int, int>& padding, const std::tuple<int, int, int>& dilation,
                       const std::tuple<int, int, int>& output_padding, int groups, StreamOrDevice s) {
  return conv_transpose_general(in, wt, vec3(stride), vec3(padding), vec3(dilation), vec3(output_padding),
                                groups, std::move(s));
}

}  // namespace braid
