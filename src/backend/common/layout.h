// Strided layouts that every backend walks the same way: broadcast strides, and a layout of K
// operands over one row-major index with size-1 dimensions dropped and neighbours that walk
// memory as one dimension merged. Every size, stride and product here is 64-bit: a merged
// dimension can hold more than 2^31 elements even though each array dimension is 32-bit.
#pragma once

#include <array>
#include <cstdint>

#include "braid/array.h"

namespace braid::common {

/// 64-bit dimension sizes of a collapsed layout (inline up to 6, as Shape).
using Extents = SmallVector<int64_t, 6>;

/// Element strides of `in` as seen from an output of `out_shape` (NumPy broadcasting:
/// missing or size-1 dimensions get stride 0).
inline Strides broadcast_strides(const array& in, const Shape& out_shape) {
  Strides st(out_shape.size(), 0);
  const size_t diff = out_shape.size() - in.ndim();
  for (size_t i = 0; i < in.ndim(); ++i) {
    if (in.shape()[i] != 1) st[i + diff] = in.strides()[i];
  }
  return st;
}

/// K operands over one logical row-major index space, collapsed. An all-ones (or 0-d) shape
/// collapses to no dimensions: one element.
template <int K>
struct Layout {
  Extents shape;
  std::array<Strides, K> strides;

  Layout() = default;
  Layout(const Shape& s, const std::array<Strides, K>& st) {
    for (size_t i = 0; i < s.size(); ++i) push(s[i], [&](int k) { return st[k][i]; });
  }

  /// Appends a dimension (skipping size 1, merging into the previous one when possible).
  template <typename StrideOf>
  void push(int64_t n, StrideOf&& stride_of) {
    if (n == 1) return;
    bool merge = !shape.empty();
    for (int k = 0; k < K && merge; ++k) merge = strides[k].back() == stride_of(k) * n;
    if (merge) {
      shape.back() *= n;
      for (int k = 0; k < K; ++k) strides[k].back() = stride_of(k);
    } else {
      shape.push_back(n);
      for (int k = 0; k < K; ++k) strides[k].push_back(stride_of(k));
    }
  }

  int ndim() const { return static_cast<int>(shape.size()); }
  int64_t count() const {
    int64_t c = 1;
    for (int64_t n : shape) c *= n;
    return c;
  }
  /// Stride of operand k along the innermost dimension (0 for a single element).
  int64_t inner_stride(int k) const { return shape.empty() ? 0 : strides[k].back(); }
};

}  // namespace braid::common
