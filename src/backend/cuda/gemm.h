// A plain strided-batched cuBLASLt product for the CUDA kernels (defined in matmul.cpp, which
// also builds Matmul on it).
#pragma once

#include <cstdint>

#include "braid/array.h"

namespace braid::cuda {

/// One operand of a strided-batched product: matrix b starts `b * batch_stride` elements
/// after `data` and is stored row-major (trans = false) or column-major (trans = true) with
/// leading dimension `ld`.
struct GemmOperand {
  const void* data = nullptr;
  bool trans = false;
  int64_t ld = 1;
  int64_t batch_stride = 0;
};

/// Enqueues D_b = A_b B_b for b in [0, batch) on stream `s`, A_b [m, k], B_b [k, n] and D_b
/// [m, n] row-major with leading dimension `ldd`, matrices `batch_stride_d` elements apart.
/// Every operand has dtype `dtype`: float32 (exact, no TF32, unless BRAID_ALLOW_TF32=1),
/// float16 or bfloat16 (accumulated in float). batch <= INT32_MAX. Errors name `op`. Uses the
/// stream's cuBLASLt workspace, not its scratch buffer.
void gemm(Dtype dtype, int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b, void* d,
          int64_t ldd, int64_t batch_stride_d, int64_t batch, const Stream& s, const char* op);

}  // namespace braid::cuda
