#pragma once

#include <cstddef>

#include "braid/dtype.h"

namespace braid::detail {
/// Converts `n` contiguous elements from `src` (of src_dtype) into `dst` (of dst_dtype).
void convert_contiguous(const void* src, Dtype src_dtype, void* dst, Dtype dst_dtype, size_t n);
}  // namespace braid::detail

namespace braid {
class array;
namespace cpu {
/// Writes `in` (any layout) into `out`'s fresh row-contiguous buffer, converting the dtype.
void copy_to_contiguous(const array& in, array& out);
}  // namespace cpu
}  // namespace braid
