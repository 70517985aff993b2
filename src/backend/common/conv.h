// Convolution geometry shared by the op and both backends (the index functions compile for the
// host and, under nvcc, for the device).
//
// Layouts are MLX's: input [N, S..., C], weight [O, K..., C / groups], output [N, P..., O].
// The input is conceptually dilated (input_dilation - 1 zeros between neighbours), padded with
// pad_lo / pad_hi zeros, and read by the kernel at out * stride + k * kernel_dilation (k
// counted from the far end when flip is set). Both backends compute it as im2col + GEMM: the
// column matrix has one row per output position and, per group, one column per (kernel
// position, channel of the group), in the weight's own order, so each group's product is
// columns_g [rows, patch] times weight_g [O / groups, patch] transposed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "braid/array.h"

#ifdef __CUDACC__
#define BRAID_CONV_HD __host__ __device__ inline
#else
#define BRAID_CONV_HD inline
#endif

namespace braid::common {

/// Spatial dimensions a convolution may have (MLX: 1, 2 or 3).
constexpr int kMaxConvDims = 3;

/// MLX's size of an axis of n elements with `dilation` - 1 gaps between neighbours.
inline int64_t dilated_size(int64_t n, int64_t dilation) { return 1 + dilation * (n - 1); }

/// Output positions along an axis: floor((dilated input + padding - dilated kernel) / stride)
/// + 1, or a value <= 0 when the padded input is shorter than the kernel.
inline int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                             int64_t kernel_dilation, int64_t input_dilation) {
  const int64_t span =
      dilated_size(in, input_dilation) + pad_lo + pad_hi - dilated_size(kernel, kernel_dilation);
  return span < 0 ? 0 : span / stride + 1;
}

/// The output shape of a convolution of `in` [batch, spatial..., channels] by `wt` [out
/// channels, kernel..., channels / groups]: the input's with each spatial size from
/// conv_out_size and the weight's out channels last. `bad_axis` is the first spatial axis (of
/// `in`, from 1) whose size falls outside [1, INT32_MAX], or 0 when none does.
inline Shape conv_out_shape(const Shape& in, const Shape& wt, const std::vector<int>& stride,
                            const std::vector<int>& pad_lo, const std::vector<int>& pad_hi,
                            const std::vector<int>& kernel_dilation, const std::vector<int>& input_dilation,
                            int& bad_axis) {
  Shape out = in;
  out.back() = wt[0];
  bad_axis = 0;
  for (size_t d = 0; d < stride.size(); ++d) {
    const int64_t size = conv_out_size(in[d + 1], wt[d + 1], stride[d], pad_lo[d], pad_hi[d],
                                       kernel_dilation[d], input_dilation[d]);
    if ((size <= 0 || size > INT32_MAX) && bad_axis == 0) bad_axis = static_cast<int>(d) + 1;
    out[d + 1] = static_cast<int32_t>(std::clamp<int64_t>(size, 0, INT32_MAX));
  }
  return out;
}

/// Everything a kernel needs to map a column-matrix element to an input element. Passed by
/// value to CUDA kernels.
struct ConvGeometry {
  int dims = 0;
  int64_t batch = 0, channels = 0, out_channels = 0, groups = 1;
  int64_t in_size[kMaxConvDims] = {}, kernel[kMaxConvDims] = {}, out_size[kMaxConvDims] = {};
  int64_t stride[kMaxConvDims] = {}, pad_lo[kMaxConvDims] = {};
  int64_t kernel_dilation[kMaxConvDims] = {}, input_dilation[kMaxConvDims] = {};
  bool flip = false;

  BRAID_CONV_HD int64_t group_channels() const { return channels / groups; }
  BRAID_CONV_HD int64_t group_out_channels() const { return out_channels / groups; }
  BRAID_CONV_HD int64_t kernel_positions() const {
    int64_t n = 1;
    for (int d = 0; d < dims; ++d) n *= kernel[d];
    return n;
  }
  BRAID_CONV_HD int64_t out_positions() const {
    int64_t n = 1;
    for (int d = 0; d < dims; ++d) n *= out_size[d];
    return n;
  }
  /// Columns of one group (the GEMM's inner dimension) and of the whole column matrix.
  BRAID_CONV_HD int64_t patch() const { return kernel_positions() * group_channels(); }
  BRAID_CONV_HD int64_t columns() const { return kernel_positions() * channels; }
  /// Rows of the column matrix (and of the output viewed as [rows, out_channels]).
  BRAID_CONV_HD int64_t rows() const { return batch * out_positions(); }

  /// The input index along axis d read by output position `out` and kernel index `k`, or -1
  /// where the kernel reads padding or a dilation gap.
  BRAID_CONV_HD int64_t input_index(int d, int64_t out, int64_t k) const {
    const int64_t kk = flip ? kernel[d] - 1 - k : k;
    const int64_t q = out * stride[d] + kk * kernel_dilation[d] - pad_lo[d];
    if (q < 0 || q % input_dilation[d] != 0) return -1;
    const int64_t i = q / input_dilation[d];
    return i < in_size[d] ? i : -1;
  }

  /// Whether the input, read row by row, already is the column matrix (1x1 kernel, unit
  /// stride, no padding or dilation): then only its layout decides whether im2col is needed.
  BRAID_CONV_HD bool is_pointwise() const {
    for (int d = 0; d < dims; ++d) {
      if (kernel[d] != 1 || stride[d] != 1 || pad_lo[d] != 0 || input_dilation[d] != 1 ||
          out_size[d] != in_size[d]) {
        return false;
      }
    }
    return true;
  }
};

/// The geometry of a convolution of input `in` by weight `wt` into `out` (shapes already
/// validated by the op).
inline ConvGeometry make_conv_geometry(const Shape& in, const Shape& wt, const Shape& out,
                                       const std::vector<int>& stride, const std::vector<int>& pad_lo,
                                       const std::vector<int>& kernel_dilation,
                                       const std::vector<int>& input_dilation, int groups, bool flip) {
  ConvGeometry g;
  g.dims = static_cast<int>(in.size()) - 2;
  g.batch = in[0];
  g.channels = in.back();
  g.out_channels = wt[0];
  g.groups = groups;
  g.flip = flip;
  for (int d = 0; d < g.dims; ++d) {
    g.in_size[d] = in[d + 1];
    g.kernel[d] = wt[d + 1];
    g.out_size[d] = out[d + 1];
    g.stride[d] = stride[d];
    g.pad_lo[d] = pad_lo[d];
    g.kernel_dilation[d] = kernel_dilation[d];
    g.input_dilation[d] = input_dilation[d];
  }
  return g;
}

}  // namespace braid::common
