// The CUDA backend's GEMM machinery, shared by every matrix-product primitive: operands as
// cuBLASLt reads them (copied first when their layout does not allow it), the types of a
// product, and one cuBLASLt call with its descriptors and cached algorithm. Row-major C = A B
// is computed as the column-major product C^T = B^T A^T, so row-major operands need no
// transpose and column-major ones (a transposed view) pass as transposed.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "backend/common/matmul.h"
#include "braid/array.h"

namespace braid::cuda {

/// How an operand reaches cuBLASLt: as it is, or through a row-major copy of `copy_shape`
/// (broadcast batch dimensions squeezed unless the copy must be dense) of `bytes` bytes.
struct OperandPlan {
  bool copy = false;
  Shape copy_shape;
  size_t bytes = 0;  // rounded up for carving out of one scratch buffer
};

/// `dense`: the batch dimensions must also collapse to one stride (gathered operands).
OperandPlan plan_operand(const array& in, bool dense = false);

/// An operand's matrices: `layout` at `data` plus, per batch dimension of the operand, a
/// stride in elements.
struct GemmOperand {
  const char* data = nullptr;
  common::MatrixLayout layout;
  Strides batch_strides;
};

/// The operand itself, or (plan.copy) its copy enqueued on `stream` into `buffer`.
GemmOperand prepare_operand(const array& in, const OperandPlan& plan, char* buffer, cudaStream_t stream);

/// The largest power of two (up to 256) dividing the address and the byte strides.
uint32_t alignment(const void* p, int64_t ld, int64_t batch_stride, size_t itemsize);

/// One cuBLASLt product D[batch] = alpha op(A) op(B) + beta D, [m, k] x [k, n] row-major D
/// with leading dimension ldd (0: n). Strided batches (stride 0 broadcasts), or with pointer_array the three
/// arguments are device arrays of `batch` matrix pointers each.
struct LtProblem {
  Dtype dtype = float32;
  int64_t m = 0, n = 0, k = 0;
  common::MatrixLayout a, b;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_d = 0;
  int64_t ldd = 0;
  bool pointer_array = false;
  bool tf32 = false;  // float32 and complex64 through TF32 tensor cores (not exact)
  uint32_t align_a = 256, align_b = 256, align_d = 256;
  size_t workspace = 0;
};

/// Enqueues the product on `stream`; false (nothing enqueued) when cuBLASLt has no algorithm
/// for it. The 16-bit floats accumulate in float, float64 in double.
/// Whether BRAID_ALLOW_TF32=1 lets float32 products use TF32.
bool tf32_allowed();

/// A product of `dtype` with these sizes and operand layouts, TF32 as tf32_allowed() says,
/// using stream s's cuBLASLt workspace (returned in *workspace); the caller adds the batch,
/// the strides and the alignments.
LtProblem lt_problem(Dtype dtype, int64_t m, int64_t n, int64_t k, const common::MatrixLayout& a,
                     const common::MatrixLayout& b, const Stream& s, void** workspace);

bool run_lt(const LtProblem& p, const void* a, const void* b, void* d, double alpha, double beta,
            void* workspace, cudaStream_t stream);

}  // namespace braid::cuda
