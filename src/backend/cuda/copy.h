// Device copies with dtype conversion, shared by the CUDA primitives (host-side interface).
#pragma once

#include <cuda_runtime.h>

#include "braid/array.h"

namespace braid::cuda {

/// Enqueues on `stream` a copy of the elements of `src` (dtype `src_dtype`, read through
/// element `strides` over `shape` in row-major order) into the contiguous buffer `dst`
/// (dtype `dst_dtype`), converting as the CPU backend does. Zero strides broadcast.
void copy_strided(const void* src, Dtype src_dtype, const Shape& shape, const Strides& strides, void* dst,
                  Dtype dst_dtype, cudaStream_t stream);

/// Allocates `out` and fills it, on stream `s`, with `in` broadcast to out.shape() and
/// converted to out.dtype().
void copy_to_contiguous(const array& in, array& out, const Stream& s);

}  // namespace braid::cuda
