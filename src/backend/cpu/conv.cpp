// Convolution::eval_cpu: oneDNN's kernels where the build has oneDNN and it takes the case
// (backend/cpu/conv_dnnl.cpp), else im2col + OpenBLAS sgemm (src/backend/common/conv.h has
// the geometry): input dilation, and what oneDNN has no fast kernel for. The output rows are
// cut into blocks that run on the worker pool; each block gathers its rows of the float32
// column matrix and multiplies them by every group's weights (BLAS on one thread:
// backend/cpu/gemm.h). The column buffer is bounded: large outputs are computed in chunks of
// rows. float16 and bfloat16 are gathered into float32 and rounded once at the end; a
// pointwise convolution of a row-contiguous float32 input skips im2col.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/common/conv.h"
#include "backend/cpu/conv_dnnl.h"
#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/gemm.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using common::ConvGeometry;
using common::kMaxConvDims;

// Bytes of column buffer (and 16-bit staging) per chunk of output rows.
constexpr int64_t kChunkBytes = int64_t{64} << 20;
constexpr int64_t kMaxChunkRows = int64_t{1} << 30;  // keeps every sgemm size within int

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Writes rows [r0, r1) of the column matrix to `col` (row r at (r - r0) * columns): per group,
// per kernel position, that group's channels.
template <typename T>
void im2col(const T* in, const Strides& strides, const ConvGeometry& g, int64_t r0, int64_t r1, float* col) {
  const int64_t cg = g.group_channels(), patch = g.patch(), positions = g.kernel_positions();
  const int64_t sc = strides[g.dims + 1];
  int64_t out_pos[kMaxConvDims] = {}, k[kMaxConvDims] = {};
  for (int64_t r = r0; r < r1; ++r) {
    int64_t rem = r;
    for (int d = g.dims - 1; d >= 0; --d) {
      out_pos[d] = rem % g.out_size[d];
      rem /= g.out_size[d];
    }
    const T* sample = in + rem * strides[0];
    float* row = col + (r - r0) * g.columns();
    for (int64_t kp = 0; kp < positions; ++kp) {
      int64_t krem = kp;
      for (int d = g.dims - 1; d >= 0; --d) {
        k[d] = krem % g.kernel[d];
        krem /= g.kernel[d];
      }
      int64_t offset = 0;
      bool inside = true;
      for (int d = 0; d < g.dims && inside; ++d) {
        const int64_t i = g.input_index(d, out_pos[d], k[d]);
        inside = i >= 0;
        offset += i * strides[d + 1];
      }
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        float* dst = row + grp * patch + kp * cg;
        if (!inside) {
          std::fill(dst, dst + cg, 0.0f);
          continue;
        }
        const T* src = sample + offset + grp * cg * sc;
        if constexpr (std::is_same_v<T, float>) {
          if (sc == 1) {
            std::memcpy(dst, src, static_cast<size_t>(cg) * sizeof(float));
            continue;
          }
        }
        for (int64_t c = 0; c < cg; ++c) dst[c] = cpu::convert<float>(src[c * sc]);
      }
    }
  }
}

template <typename T>
void convolve(const array& in, const array& wt, array& out, const ConvGeometry& g) {
  const int64_t rows = g.rows(), columns = g.columns(), patch = g.patch();
  const int64_t og = g.group_out_channels(), o = g.out_channels;
  const bool pointwise = std::is_same_v<T, float> && g.is_pointwise() && in.flags().row_contiguous;
  const bool staged = out.dtype() != float32;
  const int blas_patch = cpu::blas_int(patch, "kernel patch size", "conv");
  const int blas_columns = cpu::blas_int(columns, "column count", "conv");
  cpu::pin_blas_to_one_thread();

  // Weights as a row-contiguous float32 [O, patch] matrix.
  const array w = wt.dtype() == float32 && wt.flags().row_contiguous ? wt : [&] {
    array copy(wt.shape(), float32, nullptr, {});
    cpu::copy_to_contiguous(wt, copy);
    return copy;
  }();
  const float* weights = static_cast<const float*>(w.desc()->data_ptr);
  const T* input = static_cast<const T*>(in.desc()->data_ptr);

  const int64_t row_bytes =
      static_cast<int64_t>(sizeof(float)) * ((pointwise ? 0 : columns) + (staged ? o : 0));
  const int64_t chunk_rows =
      std::min({rows, kMaxChunkRows,
                row_bytes > 0 ? std::max<int64_t>(1, conv_chunk_bytes(kChunkBytes) / row_bytes) : rows});
  // The buffers come from the caching allocator: a fresh multi-megabyte malloc is a fresh
  // mapping, and faulting its pages in on every call cost more than the products.
  const auto scratch = [](int64_t rows_, int64_t cols_) {  // both fit int32: checked above
    array buffer({static_cast<int32_t>(rows_), static_cast<int32_t>(cols_)}, float32, nullptr, {});
    detail::alloc_contiguous(buffer);
    return buffer;
  };
  const array col_buffer = scratch(pointwise ? 0 : chunk_rows, columns);
  const array staging_buffer = scratch(staged ? chunk_rows : 0, o);
  float* const col = pointwise ? nullptr : static_cast<float*>(col_buffer.desc()->data_ptr);
  float* const staging = staged ? static_cast<float*>(staging_buffer.desc()->data_ptr) : nullptr;

  // Blocks big enough for sgemm and a worker's wake-up, and enough of them for every worker.
  const int64_t workers = std::max(1, detail::WorkerPool::instance().num_workers());
  const int64_t row_work = std::max<int64_t>(1, o * patch + columns);
  char* out_bytes = static_cast<char*>(out.desc()->data_ptr);
  for (int64_t c0 = 0; c0 < rows; c0 += chunk_rows) {
    const int64_t chunk = std::min(chunk_rows, rows - c0);
    const int64_t block_rows = std::max(
        {cpu::kMinBlasRows, ceil_div(chunk, 4 * workers), ceil_div(cpu::kMinBlasTaskWork, row_work)});
    detail::parallel_for(ceil_div(chunk, block_rows), 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t r0 = c0 + b * block_rows, r1 = std::min(c0 + chunk, r0 + block_rows);
        const float* a = nullptr;
        if (pointwise) {
          a = reinterpret_cast<const float*>(input) + r0 * columns;
        } else {
          float* block_col = col + (r0 - c0) * columns;
          im2col(input, in.strides(), g, r0, r1, block_col);
          a = block_col;
        }
        float* c = staged ? staging + (r0 - c0) * o : reinterpret_cast<float*>(out_bytes) + r0 * o;
        for (int64_t grp = 0; grp < g.groups; ++grp) {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(r1 - r0),
                      static_cast<int>(og), blas_patch, 1.0f, a + grp * patch, blas_columns,
                      weights + grp * og * patch, blas_patch, 0.0f, c + grp * og, static_cast<int>(o));
        }
        if (staged) {
          detail::convert_contiguous(c, float32, out_bytes + r0 * o * static_cast<int64_t>(out.itemsize()),
                                     out.dtype(), static_cast<size_t>((r1 - r0) * o));
        }
      }
    });
  }
}

}  // namespace

void Convolution::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array& in = inputs[0];
  const array& wt = inputs[1];
  const ConvGeometry g =
      common::make_conv_geometry(in.shape(), wt.shape(), out.shape(), stride(), padding_lo(),
                                 kernel_dilation(), input_dilation(), groups(), flip());
  if (g.patch() == 0) {  // no input channels or an empty kernel: every sum is empty
    std::memset(out.desc()->data_ptr, 0, out.nbytes());
    return;
  }
  if (cpu::dnnl_convolve(in, wt, out, g)) return;
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || cpu::is_half_v<T>) {
      convolve<T>(in, wt, out, g);
    } else {
      throw std::invalid_argument(std::string("[conv] Unsupported dtype ") + dtype_name(out.dtype()) + ".");
    }
  });
}

}  // namespace braid
