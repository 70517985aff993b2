// Sub-boxes of a strided buffer: where a slice, a concatenated piece or a padded interior lies
// inside an array's layout. Both backends read and write these regions with their one strided
// copy routine; the views (Slice, Diagonal) use the same offsets and strides.
#pragma once

#include <cstdint>

#include "braid/array.h"

namespace braid::common {

/// Elements [offset + sum_i idx_i * strides_i] of a buffer: offset and strides in elements.
struct Region {
  int64_t offset = 0;
  Strides strides;
};

/// The region of a layout with `strides` that starts at `start` and steps by `steps` (one
/// entry per dimension, any sign).
inline Region slice_region(const Strides& strides, const Shape& start, const Shape& steps) {
  Region r;
  r.strides = Strides(strides.size(), 0);
  for (size_t i = 0; i < strides.size(); ++i) {
    r.offset += static_cast<int64_t>(start[i]) * strides[i];
    r.strides[i] = static_cast<int64_t>(steps[i]) * strides[i];
  }
  return r;
}

/// The region of a layout with `strides` that starts at `start` (unit steps).
inline Region box_region(const Strides& strides, const Shape& start) {
  Region r;
  r.strides = strides;
  for (size_t i = 0; i < strides.size(); ++i) r.offset += static_cast<int64_t>(start[i]) * strides[i];
  return r;
}

/// The region that starts `start` elements along `axis` (a concatenated piece).
inline Region axis_region(const Strides& strides, int axis, int64_t start) {
  return Region{start * strides[static_cast<size_t>(axis)], strides};
}

}  // namespace braid::common
