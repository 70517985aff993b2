// Convolution::eval_gpu: through cuDNN where it takes the case (conv_dnn.h), otherwise as
// im2col + cuBLASLt (src/backend/common/conv.h has the geometry).
// An im2col kernel writes a chunk of output rows of the column matrix, in the input's dtype,
// into the stream's scratch buffer; one strided-batched cuBLASLt product (run_lt of
// backend/cuda/gemm.h, a batch entry per group) multiplies it by the weights into the output
// rows. float16 and bfloat16 accumulate in float inside cuBLASLt. A pointwise convolution of a row-contiguous input
// multiplies the input directly.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/common/conv.h"
#include "backend/cuda/conv_dnn.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

using common::ConvGeometry;

constexpr int kBlock = 256;
// Bytes of column buffer per chunk of output rows.
constexpr int64_t kChunkBytes = int64_t{256} << 20;

// The input's element strides [N, S..., C], by value.
struct InputStrides {
  int64_t s[common::kMaxConvDims + 2] = {};
};

// One thread per element of rows [r0, r0 + rows) of the column matrix (row r at (r - r0) *
// columns; per group, per kernel position, that group's channels).
template <typename T>
__global__ void im2col(const T* __restrict__ in, InputStrides st, ConvGeometry g, int64_t r0, int64_t rows,
                       T* __restrict__ col) {
  const int64_t columns = g.columns(), patch = g.patch(), cg = g.group_channels();
  const int64_t total = rows * columns;
  for (int64_t e = thread_index(); e < total; e += thread_count()) {
    const int64_t row = e / columns;
    const int64_t j = e - row * columns;
    const int64_t grp = j / patch;
    const int64_t kp = (j - grp * patch) / cg;
    const int64_t c = j - grp * patch - kp * cg;
    int64_t r = r0 + row, k = kp, offset = 0;
    bool inside = true;
    for (int d = g.dims - 1; d >= 0; --d) {
      const int64_t i = g.input_index(d, r % g.out_size[d], k % g.kernel[d]);
      r /= g.out_size[d];
      k /= g.kernel[d];
      inside = inside && i >= 0;
      offset += i * st.s[d + 1];
    }
    col[e] = inside ? in[r * st.s[0] + offset + (grp * cg + c) * st.s[g.dims + 1]] : from_compute<T>(0.0f);
  }
}

template <typename T>
void convolve(const array& in, const array& wt, array& out, const ConvGeometry& g, const Stream& s) {
  const cudaStream_t stream = stream_of(s);
  const int64_t item = sizeof(T), rows = g.rows(), columns = g.columns(), patch = g.patch();
  const int64_t og = g.group_out_channels(), o = g.out_channels;
  const bool pointwise = g.is_pointwise() && in.flags().row_contiguous;
  const bool copy_weights = !wt.flags().row_contiguous;
  const int64_t chunk_rows = std::min<int64_t>(
      {rows, INT32_MAX,
       pointwise ? rows : std::max<int64_t>(1, conv_chunk_bytes(kChunkBytes) / (columns * item))});

  ScratchPlan plan;
  const size_t weights_at = copy_weights ? plan.reserve(wt.nbytes()) : 0;
  const size_t col_at = pointwise ? 0 : plan.reserve(static_cast<size_t>(chunk_rows * columns * item));
  plan.fetch(s);
  const T* weights = static_cast<const T*>(wt.desc()->data_ptr);
  if (copy_weights) {
    copy_strided(wt.desc()->data_ptr, wt.dtype(), wt.shape(), wt.strides(), plan.at<T>(weights_at),
                 wt.dtype(), stream);
    weights = plan.at<T>(weights_at);
  }
  InputStrides st;
  for (size_t i = 0; i < in.strides().size(); ++i) st.s[i] = in.strides()[i];
  const T* input = static_cast<const T*>(in.desc()->data_ptr);
  T* col = pointwise ? nullptr : plan.at<T>(col_at);
  T* output = static_cast<T*>(out.desc()->data_ptr);

  void* workspace = nullptr;
  LtProblem p = lt_problem(out.dtype(), 0, og, patch, common::MatrixLayout{false, columns},
                           common::MatrixLayout{true, patch}, s, &workspace);
  p.batch = g.groups;
  p.stride_a = patch;
  p.stride_b = og * patch;
  p.stride_d = og;
  p.ldd = o;

  // Group b's product: columns [rows, patch] at offset b * patch times its weights [og, patch]
  // (read as a column-major [patch, og] matrix) into output columns [b * og, (b + 1) * og).
  for (int64_t c0 = 0; c0 < rows; c0 += chunk_rows) {
    const int64_t chunk = std::min(chunk_rows, rows - c0);
    const T* a = input + c0 * columns;
    if (!pointwise) {
      im2col<T><<<grid_for(chunk * columns, kBlock), kBlock, 0, stream>>>(input, st, g, c0, chunk, col);
      check_launch("[Convolution] im2col");
      a = col;
    }
    p.m = chunk;
    T* d = output + c0 * o;
    const int64_t batched = p.batch > 1;
    p.align_a = alignment(a, p.a.ld, batched * p.stride_a, item);
    p.align_b = alignment(weights, p.b.ld, batched * p.stride_b, item);
    p.align_d = alignment(d, p.ldd, batched * p.stride_d, item);
    if (!run_lt(p, a, weights, d, 1.0, 0.0, workspace, stream)) {
      throw std::runtime_error("[Convolution] cuBLASLt has no algorithm for a " + std::to_string(chunk) + "x" +
                               std::to_string(patch) + " by " + std::to_string(patch) + "x" + std::to_string(og) +
                               " product in " + std::to_string(g.groups) + " groups.");
    }
  }
}

}  // namespace
}  // namespace cuda

void Convolution::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const array& in = inputs[0];
  const array& wt = inputs[1];
  const common::ConvGeometry g =
      common::make_conv_geometry(in.shape(), wt.shape(), out.shape(), stride(), padding_lo(),
                                 kernel_dilation(), input_dilation(), groups(), flip());
  if (g.patch() == 0) {  // no input channels or an empty kernel: every sum is empty
    cuda::check(cudaMemsetAsync(out.desc()->data_ptr, 0, out.nbytes(), cuda::stream_of(stream())),
                "[Convolution] cudaMemsetAsync");
    return;
  }
  if (cuda::dnn_convolve(in, wt, out, g, padding_hi(), stream())) return;
  cuda::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || cuda::is_half_v<T>) {
      cuda::convolve<T>(in, wt, out, g, stream());
    } else {
      throw std::invalid_argument(std::string("[conv] Unsupported dtype ") + dtype_name(out.dtype()) + ".");
    }
  });
}

}  // namespace braid
