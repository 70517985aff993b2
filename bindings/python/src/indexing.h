// NumPy's indexing rules for braid.core.array, shared by reading (a[idx], indexing.cpp) and
// updating (a[idx] = v and a.at[idx].add(v), indexing_update.cpp).
#pragma once

#include <optional>
#include <vector>

#include "python.h"

namespace braid::python::indexing {

/// One entry of an index once the ellipsis is expanded. Every entry but new_axis stands for one
/// axis of Index::src, in order.
struct Entry {
  enum class Kind { integer, slice, new_axis, array };
  Kind kind;
  int64_t start = 0;             // integer: the position (in range); slice: the first position
  int64_t step = 1;              // slice
  int64_t length = 0;            // slice: how many positions
  std::optional<array> indices;  // array: integer indices (any shape)
};

/// A parsed index: `src` is the indexed array with a length-1 axis inserted where the index
/// holds a boolean scalar (NumPy indexes that new axis with [0] or [] ), every axis of `src` has
/// its entry (missing trailing axes are full slices).
struct Index {
  array src;
  std::vector<Entry> entries;
  std::vector<int> inserted;  // the axes of src added for boolean scalars
  bool advanced = false;      // some entry is an array: integers become advanced indices too
  bool adjacent = true;       // the advanced entries are next to each other (NumPy's placement rule)
};

/// Result dimensions: a value >= 0 is that axis of Index::src (a slice), kNewAxis a length-1
/// axis from None, kBroadcast the block of dimensions of the broadcast index arrays.
inline constexpr int kNewAxis = -1;
inline constexpr int kBroadcast = -2;

/// Where each dimension of a[idx] comes from, and its shape.
struct Layout {
  std::vector<int> tokens;
  Shape broadcast;  // the index arrays broadcast together (advanced indexing only)
  Shape shape;      // the shape of a[idx]
};

/// A boolean array used as a whole index (a[mask]), if `key` is one.
std::optional<array> boolean_mask(py::handle key);

/// Parses `key` (an int, slice, None, Ellipsis, array, list, NumPy array, bool, or a tuple of
/// these) for indexing `a`. Errors: ValueError as MLX (unsupported types, too many indices, a
/// second ellipsis, boolean arrays), IndexError for an integer out of range.
Index parse(const array& a, py::handle key);

Layout layout_of(const Index& index);

/// The start, stop and stride per axis of Index::src that narrow it to the slices and integers of
/// the index (array-indexed axes are kept whole), in the form braid's slice takes.
void bounds_of(const Index& index, Shape& start, Shape& stop, Shape& strides);

/// The entry of each axis of Index::src.
std::vector<const Entry*> by_axis(const Index& index);

/// `x`, whose dimensions come from the tokens `have`, transposed to the order of `want` (the same
/// tokens; kBroadcast stands for `nb` dimensions).
array reorder(const array& x, const std::vector<int>& have, const std::vector<int>& want, size_t nb);

/// The result positions of the new axes in `tokens`.
std::vector<int> new_axis_positions(const std::vector<int>& tokens, size_t nb);

/// The product of `shape`.
int64_t size_of(const Shape& shape);

}  // namespace braid::python::indexing
