// How the matrix products read their operands, the same for BLAS and cuBLASLt: a matrix goes
// to the library as it is when it is row-major (possibly with a padded leading dimension) or
// column-major (a transposed view); anything else is copied first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/common/indexing.h"  // BRAID_HD
#include "braid/array.h"

namespace braid::common {

/// A [rows, cols] matrix as a GEMM library reads it: row-major (trans = false) or
/// column-major (trans = true), with leading dimension `ld`.
struct MatrixLayout {
  bool trans = false;
  int64_t ld = 1;
};

/// Whether a [rows, cols] matrix with element strides (sr, sc) is row- or column-major, and
/// how; false when it is neither and must be copied.
inline bool matrix_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, MatrixLayout& out) {
  if ((sc == 1 || cols == 1) && (rows == 1 || sr >= cols)) {
    out = {false, std::max<int64_t>(1, rows == 1 ? cols : sr)};
    return true;
  }
  if ((sr == 1 || rows == 1) && (cols == 1 || sc >= rows)) {
    out = {true, std::max<int64_t>(1, cols == 1 ? rows : sc)};
    return true;
  }
  return false;
}

/// Element offsets of every position of `shape` walked in row-major order through `strides`
/// (the batch matrices of an operand, or the elements of an index array).
inline std::vector<int64_t> row_major_offsets(const Shape& shape, const Strides& strides) {
  const int nd = static_cast<int>(shape.size());
  int64_t count = 1;
  for (int32_t d : shape) count *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(count), 0);
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < count; ++i) {
    offsets[i] = off;
    for (int d = nd - 1; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < shape[d]) break;
      off -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
  return offsets;
}

/// A gathered matrix index clamped into [0, count) (MLX leaves out-of-range ones undefined).
BRAID_HD int64_t clamp_matrix_index(int64_t idx, int64_t count) {
  return idx < 0 ? 0 : (idx >= count ? count - 1 : idx);
}

/// One segment [start, end) of the inner dimension of size k, clamped into [0, k]; empty
/// when end <= start (MLX leaves out-of-range bounds undefined).
struct Segment {
  int64_t start, size;
};
BRAID_HD Segment clamp_segment(int64_t start, int64_t end, int64_t k) {
  start = start < 0 ? 0 : (start > k ? k : start);
  end = end < start ? start : (end > k ? k : end);
  return {start, end - start};
}

}  // namespace braid::common
