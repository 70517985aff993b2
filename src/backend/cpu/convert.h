#pragma once

#include <cstddef>

#include "backend/common/region.h"
#include "braid/dtype.h"

namespace braid::detail {
/// Converts `n` contiguous elements from `src` (of src_dtype) into `dst` (of dst_dtype).
void convert_contiguous(const void* src, Dtype src_dtype, void* dst, Dtype dst_dtype, size_t n);
}  // namespace braid::detail

namespace braid {
class array;
namespace cpu {
/// Copies the `shape` elements read from `src` through `src_strides` to `dst` through
/// `dst_strides` (element strides, any sign; zero source strides broadcast), converting the
/// dtype. Splits across the pool; same-dtype contiguous runs are memcpy'd.
void copy_region(const void* src, Dtype src_dtype, const Strides& src_strides, void* dst, Dtype dst_dtype,
                 const Strides& dst_strides, const Shape& shape);
/// Writes `in` broadcast to `shape` into `region` of out's (allocated) buffer, converting.
void copy_into(const array& in, array& out, const common::Region& region, const Shape& shape);
/// Writes `in` (any layout) into `out`'s fresh row-contiguous buffer, converting the dtype.
void copy_to_contiguous(const array& in, array& out);
/// A fresh row-contiguous copy of `in` (a new buffer, aligned for any dtype).
array contiguous_copy(const array& in);
/// `in` itself when it is row-contiguous, else contiguous_copy(in).
array row_contiguous(const array& in);
}  // namespace cpu
}  // namespace braid
