// Device copies with dtype conversion, shared by the CUDA primitives (host-side interface).
// None of these uses the stream's scratch buffer (callers may hold it across a copy).
#pragma once

#include <cuda_runtime.h>

#include "backend/common/region.h"
#include "braid/array.h"

namespace braid::cuda {

/// Device int64 element offsets added to a side of a copy when it runs (dynamic slices);
/// nullptr for none.
struct DynamicOffsets {
  const int64_t* src = nullptr;
  const int64_t* dst = nullptr;
};

/// Enqueues on `stream` a copy of the `shape` elements read from `src` through `src_strides`
/// into `dst` through `dst_strides` (element strides, any sign; zero source strides broadcast),
/// converting the dtype as the CPU backend does. Dynamic offsets need equal dtypes.
void copy_region(const void* src, Dtype src_dtype, const Strides& src_strides, void* dst, Dtype dst_dtype,
                 const Strides& dst_strides, const Shape& shape, cudaStream_t stream,
                 const DynamicOffsets& dyn = {});

/// As copy_region into the contiguous buffer `dst` (row-major over `shape`).
void copy_strided(const void* src, Dtype src_dtype, const Shape& shape, const Strides& strides, void* dst,
                  Dtype dst_dtype, cudaStream_t stream);

/// Writes `in` broadcast to `shape` into `region` of out's (allocated) buffer, converting.
void copy_into(const array& in, array& out, const common::Region& region, const Shape& shape,
               cudaStream_t stream, const DynamicOffsets& dyn = {});

/// Allocates `out` and fills it, on stream `s`, with `in` broadcast to out.shape() and
/// converted to out.dtype().
void copy_to_contiguous(const array& in, array& out, const Stream& s);

}  // namespace braid::cuda
