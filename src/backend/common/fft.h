// How both backends split an FFT node into one-dimensional passes (host code, no kernels).
// A multi-axis transform is separable: it is the one-dimensional transforms along each axis in
// turn. A real forward transform halves its last axis first (the other axes then transform
// n / 2 + 1 complex lines instead of n); a real inverse restores it last.
#pragma once

#include <cstdint>
#include <vector>

#include "braid/array.h"

namespace braid::common {

enum class FftKind { c2c, r2c, c2r };

struct FftPass {
  int axis;
  FftKind kind;
};

/// The passes of an FFT node over `axes` (the last one is the real axis), in the order to run.
inline std::vector<FftPass> fft_passes(const std::vector<int>& axes, bool inverse, bool real) {
  std::vector<FftPass> passes;
  if (!real) {
    for (int ax : axes) passes.push_back({ax, FftKind::c2c});
    return passes;
  }
  if (!inverse) passes.push_back({axes.back(), FftKind::r2c});
  for (size_t i = 0; i + 1 < axes.size(); ++i) passes.push_back({axes[i], FftKind::c2c});
  if (inverse) passes.push_back({axes.back(), FftKind::c2r});
  return passes;
}

/// A row-contiguous array seen as [outer, len, inner] around `axis`: lines of `len` elements
/// `inner` apart, line (o, i) starting at o * len * inner + i.
struct LineGeometry {
  int64_t outer = 1;
  int64_t len = 1;
  int64_t inner = 1;
  int64_t lines() const { return outer * inner; }
};

inline LineGeometry line_geometry(const Shape& shape, int axis) {
  LineGeometry g;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < axis) g.outer *= shape[d];
    if (d > axis) g.inner *= shape[d];
  }
  g.len = shape[axis];
  return g;
}

}  // namespace braid::common
