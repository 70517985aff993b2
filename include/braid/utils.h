// MLX's utils.h: type promotion over arrays, shape broadcasting, axis normalization and small
// helpers. (Print options, also in MLX's utils.h, are in array.h with operator<<.)
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "braid/array.h"

namespace braid {

/// The dtype type promotion gives for `arrays` (promote_types over all of them). Throws
/// std::invalid_argument for an empty list.
Dtype result_type(const std::vector<array>& arrays);
inline Dtype result_type(const array& a, const array& b) { return promote_types(a.dtype(), b.dtype()); }
inline Dtype result_type(const array& a, const array& b, const array& c) {
  return promote_types(result_type(a, b), c.dtype());
}

/// The shape `s1` and `s2` broadcast to under NumPy's rules. Throws std::invalid_argument when
/// they do not broadcast.
Shape broadcast_shapes(const Shape& s1, const Shape& s2);

/// `axis` made non-negative for an array of `ndim` dimensions (negative axes count from the
/// end). Throws std::invalid_argument, its message starting with `msg_prefix`, when it is out
/// of bounds.
int normalize_axis_index(int axis, int ndim, const std::string& msg_prefix = "");

/// Shapes, strides and vectors print as MLX prints them: `(2,3)`.
template <typename T, size_t N>
std::ostream& operator<<(std::ostream& os, const SmallVector<T, N>& v) {
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os << ")";
}
template <typename T>
std::ostream& operator<<(std::ostream& os, const std::vector<T>& v) {
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os << ")";
}

inline bool is_power_of_2(int n) { return n > 0 && (n & (n - 1)) == 0; }
/// The smallest power of two at least `n` (1 for n <= 1). Throws std::invalid_argument above
/// 2^30, where the answer does not fit an int.
inline int next_power_of_2(int n) {
  if (n > (1 << 30))
    throw std::invalid_argument("[next_power_of_2] No int power of two is at least " + std::to_string(n) +
                                ".");
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace braid
