// The bandwidth-bound product of a few rows of x with affine-quantized weights (transposed:
// w holds one packed row per output), used by quantized_matmul on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "braid/array.h"

namespace braid::cuda {

/// Rows of x the gemv takes (more go through the general kernel or the dequantized matmul).
constexpr int64_t kGemvMaxRows = 8;

/// Enqueues out[r, j] = sum_i x[r, i] * (scale * q[j, i] + bias) on `stream` for x [rows, k]
/// and out [rows, n] of `dtype` (float32, float16 or bfloat16), w [n, k * bits / 32] packed
/// words and scales, biases [n, k / group] of `dtype`, all row-contiguous. Returns false,
/// enqueuing nothing, where the gemv does not apply: bits other than 2, 4 or 8, rows outside
/// [1, kGemvMaxRows], packed rows not a multiple of 16 bytes, x or w not 16-byte aligned.
bool affine_gemv(Dtype dtype, const void* x, const uint32_t* w, const void* scales, const void* biases,
                 void* out, int64_t rows, int64_t n, int64_t k, int group, int bits, cudaStream_t stream);

}  // namespace braid::cuda
