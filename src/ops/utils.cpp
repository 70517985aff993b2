#include "ops/utils.h"

#include "braid/utils.h"

#include <algorithm>
#include <stdexcept>

namespace braid::detail {

void throw_invalid(const char* op, const std::string& msg) {
  throw std::invalid_argument(std::string("[") + op + "] " + msg);
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) os << ",";
  os << ")";
  return os.str();
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const Shape& big = a.size() >= b.size() ? a : b;
  const Shape& small = a.size() >= b.size() ? b : a;
  Shape out = big;
  const size_t diff = big.size() - small.size();
  for (size_t i = 0; i < small.size(); ++i) {
    int32_t x = big[i + diff], y = small[i];
    if (x == y || y == 1) continue;
    if (x == 1) {
      out[i + diff] = y;
      continue;
    }
    throw_invalid(op, "Shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast.");
  }
  return out;
}

int normalize_axis(int axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= ndim) {
    throw_invalid(op, "Axis " + std::to_string(axis) + " is out of bounds for an array with " +
                          std::to_string(ndim) + " dimensions.");
  }
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* op) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (int a : axes) out.push_back(normalize_axis(a, ndim, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw_invalid(op, "Received duplicate axes.");
  }
  return out;
}

int axis_in_range(int axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= ndim) {
    throw std::out_of_range(std::string("[") + op + "] Axis " + std::to_string(axis) +
                            " is out of bounds for an array with " + std::to_string(ndim) + " dimensions.");
  }
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int> reduction_axes(const std::vector<int>& axes, int ndim, const char* op) {
  for (int a : axes) axis_in_range(a, ndim, op);
  return normalize_axes(axes, ndim, op);
}

Stream op_stream(StreamOrDevice s, const char* op) {
  try {
    return to_stream(std::move(s));
  } catch (const std::invalid_argument& e) {
    throw_invalid(op, e.what());
  }
}

}  // namespace braid::detail

namespace braid {

Dtype result_type(const std::vector<array>& arrays) {
  if (arrays.empty()) throw std::invalid_argument("[result_type] At least one array is required.");
  Dtype out = arrays[0].dtype();
  for (size_t i = 1; i < arrays.size(); ++i) out = promote_types(out, arrays[i].dtype());
  return out;
}

Shape broadcast_shapes(const Shape& s1, const Shape& s2) {
  return detail::broadcast_shapes(s1, s2, "broadcast_shapes");
}

int normalize_axis_index(int axis, int ndim, const std::string& msg_prefix) {
  if (axis < -ndim || axis >= ndim) {
    std::string msg = msg_prefix.empty() ? "[normalize_axis_index]" : msg_prefix;
    throw std::invalid_argument(msg + " Axis " + std::to_string(axis) +
                                " is out of bounds for an array with " + std::to_string(ndim) +
                                " dimensions.");
  }
  return axis < 0 ? axis + ndim : axis;
}

}  // namespace braid
