// Validation helpers shared by the ops. All throw std::invalid_argument("[op] ...").
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid::detail {

[[noreturn]] void throw_invalid(const char* op, const std::string& msg);
std::string shape_str(const Shape& shape);
/// NumPy broadcasting of two shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// `axis` in [-ndim, ndim) made non-negative.
int normalize_axis(int axis, int ndim, const char* op);
/// Axes made non-negative and sorted; duplicates are an error.
std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* op);
/// normalize_axes for the reductions: an axis out of bounds is std::out_of_range, as MLX's
/// reductions report it (duplicates stay std::invalid_argument).
std::vector<int> reduction_axes(const std::vector<int>& axes, int ndim, const char* op);
/// normalize_axis with std::out_of_range for an axis out of bounds (MLX's diagonal).
int axis_in_range(int axis, int ndim, const char* op);
/// Resolves `s` for an op, turning a bad device into "[op] ..." errors.
Stream op_stream(StreamOrDevice s, const char* op);

/// reshape's output shape for an array of `size` elements: `shape` with its -1 (at most one)
/// inferred; std::invalid_argument ("[reshape] ...") when it cannot hold them.
Shape reshaped(uint64_t size, Shape shape);

}  // namespace braid::detail
