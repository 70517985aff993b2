// Operations. Each validates its arguments and builds a lazy node; none computes.
// Every op throws std::invalid_argument("[op] ...") on bad input, before any node exists.
// Every op is thread-safe: any thread may build graphs from any arrays at any time.
#pragma once

#include <vector>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid {

// ---- creation ----
array zeros(const Shape& shape, Dtype dtype, StreamOrDevice s = {});
array zeros(const Shape& shape, StreamOrDevice s = {});
array ones(const Shape& shape, Dtype dtype, StreamOrDevice s = {});
array ones(const Shape& shape, StreamOrDevice s = {});
/// `vals` broadcast to `shape`, converted to `dtype`.
array full(Shape shape, array vals, Dtype dtype, StreamOrDevice s = {});
array full(Shape shape, array vals, StreamOrDevice s = {});
template <typename T>
array full(Shape shape, T val, Dtype dtype, StreamOrDevice s = {}) {
  return full(std::move(shape), array(val, dtype), s);
}
template <typename T>
array full(Shape shape, T val, StreamOrDevice s = {}) {
  return full(std::move(shape), array(val), s);
}
/// Values start, start + step, ... below stop (above it for a negative step).
array arange(double start, double stop, double step, Dtype dtype, StreamOrDevice s = {});
array arange(double start, double stop, double step, StreamOrDevice s = {});
array arange(double start, double stop, Dtype dtype, StreamOrDevice s = {});
array arange(double start, double stop, StreamOrDevice s = {});
array arange(double stop, Dtype dtype, StreamOrDevice s = {});
array arange(double stop, StreamOrDevice s = {});
array arange(int start, int stop, int step, StreamOrDevice s = {});
array arange(int start, int stop, StreamOrDevice s = {});
array arange(int stop, StreamOrDevice s = {});

// (creation: more ops above this line)

// ---- type and shape ----
array astype(array a, Dtype dtype, StreamOrDevice s = {});
/// Same data in a new shape; one dimension may be -1. A view when the layout allows.
array reshape(const array& a, Shape shape, StreamOrDevice s = {});
/// Permutes the axes (a view, no copy). Without axes, reverses them.
array transpose(const array& a, std::vector<int> axes, StreamOrDevice s = {});
array transpose(const array& a, StreamOrDevice s = {});
/// Broadcasts with NumPy rules (a view with zero strides).
array broadcast_to(const array& a, const Shape& shape, StreamOrDevice s = {});

// (type, shape and data movement: more ops above this line)

// ---- slicing and concatenation ----
// (slicing: ops above this line)

// ---- elementwise (NumPy broadcasting and type promotion) ----
array add(const array& a, const array& b, StreamOrDevice s = {});
array subtract(const array& a, const array& b, StreamOrDevice s = {});
array multiply(const array& a, const array& b, StreamOrDevice s = {});
/// True division: integer inputs give float32.
array divide(const array& a, const array& b, StreamOrDevice s = {});
array maximum(const array& a, const array& b, StreamOrDevice s = {});
array minimum(const array& a, const array& b, StreamOrDevice s = {});
array equal(const array& a, const array& b, StreamOrDevice s = {});
array less(const array& a, const array& b, StreamOrDevice s = {});
array greater(const array& a, const array& b, StreamOrDevice s = {});
array negative(const array& a, StreamOrDevice s = {});
array exp(const array& a, StreamOrDevice s = {});
array log(const array& a, StreamOrDevice s = {});
array sqrt(const array& a, StreamOrDevice s = {});
array tanh(const array& a, StreamOrDevice s = {});
/// Elements of x where condition is true, else of y (all three broadcast together).
array where(const array& condition, const array& x, const array& y, StreamOrDevice s = {});

// (elementwise: more ops above this line)

// ---- reductions ----
// Overloads without axes reduce over every axis; reduced axes are dropped unless keepdims.
// An empty axis list returns the input (all/any: cast to bool; mean: cast to its dtype).
/// True where every element over the axes is nonzero (bool result).
array all(const array& a, bool keepdims, StreamOrDevice s = {});
array all(const array& a, StreamOrDevice s = {});
array all(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array all(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// True where some element over the axes is nonzero (bool result).
array any(const array& a, bool keepdims, StreamOrDevice s = {});
array any(const array& a, StreamOrDevice s = {});
array any(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array any(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// Sum. bool and signed ints up to 32 bits give int32, unsigned ones uint32; others kept.
array sum(const array& a, bool keepdims, StreamOrDevice s = {});
array sum(const array& a, StreamOrDevice s = {});
array sum(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array sum(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// Product, with sum's output dtypes.
array prod(const array& a, bool keepdims, StreamOrDevice s = {});
array prod(const array& a, StreamOrDevice s = {});
array prod(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array prod(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// Maximum (NaN wins; complex64 lexicographic); dtype kept; a size-0 input throws.
array max(const array& a, bool keepdims, StreamOrDevice s = {});
array max(const array& a, StreamOrDevice s = {});
array max(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array max(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// Minimum, as max.
array min(const array& a, bool keepdims, StreamOrDevice s = {});
array min(const array& a, StreamOrDevice s = {});
array min(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array min(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// Mean in the float dtype of a (integers and bool give float32).
array mean(const array& a, bool keepdims, StreamOrDevice s = {});
array mean(const array& a, StreamOrDevice s = {});
array mean(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array mean(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// Variance: sum((a - mean)^2) / max(N - ddof, 0), in the float dtype of a.
array var(const array& a, bool keepdims, int ddof = 0, StreamOrDevice s = {});
array var(const array& a, StreamOrDevice s = {});
array var(const array& a, const std::vector<int>& axes, bool keepdims = false, int ddof = 0, StreamOrDevice s = {});
array var(const array& a, int axis, bool keepdims = false, int ddof = 0, StreamOrDevice s = {});
/// Standard deviation: sqrt(var).
array std(const array& a, bool keepdims, int ddof = 0, StreamOrDevice s = {});
array std(const array& a, StreamOrDevice s = {});
array std(const array& a, const std::vector<int>& axes, bool keepdims = false, int ddof = 0, StreamOrDevice s = {});
array std(const array& a, int axis, bool keepdims = false, int ddof = 0, StreamOrDevice s = {});
/// Index (uint32) of the first minimum; without an axis, into the flattened array (keepdims
/// then gives ndim ones). A size-0 input throws.
array argmin(const array& a, bool keepdims, StreamOrDevice s = {});
array argmin(const array& a, StreamOrDevice s = {});
array argmin(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// Index (uint32) of the first maximum, as argmin.
array argmax(const array& a, bool keepdims, StreamOrDevice s = {});
array argmax(const array& a, StreamOrDevice s = {});
array argmax(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
/// log(sum(exp(a))) computed stably, in the float dtype of a; an empty input throws.
array logsumexp(const array& a, bool keepdims, StreamOrDevice s = {});
array logsumexp(const array& a, StreamOrDevice s = {});
array logsumexp(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array logsumexp(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});

// (reductions: more ops above this line)

// ---- scans ----
// Running reductions along an axis (overloads without one scan the flattened array).
// `reverse` scans from the end; inclusive = false shifts by one and starts at the identity.
/// Running sum; bool gives int32, every other dtype is kept.
array cumsum(const array& a, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
array cumsum(const array& a, int axis, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
/// Running product; dtype kept.
array cumprod(const array& a, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
array cumprod(const array& a, int axis, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
/// Running maximum (NaN propagates); dtype kept.
array cummax(const array& a, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
array cummax(const array& a, int axis, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
/// Running minimum (NaN propagates); dtype kept.
array cummin(const array& a, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
array cummin(const array& a, int axis, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
/// Running logaddexp; dtype kept (no float promotion); complex64 throws.
array logcumsumexp(const array& a, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
array logcumsumexp(const array& a, int axis, bool reverse = false, bool inclusive = true, StreamOrDevice s = {});
// (scans: ops above this line)

// ---- indexing: take, gather, scatter ----
// (indexing: ops above this line)

// ---- sorting and selection ----
// (sorting: ops above this line)

// ---- linear algebra and nn ----
/// Matrix product with NumPy semantics: 1-d operands are promoted, batch dims broadcast.
array matmul(const array& a, const array& b, StreamOrDevice s = {});
/// exp(a - max) / sum(exp(a - max)) over `axes`.
array softmax(const array& a, const std::vector<int>& axes, bool precise = false, StreamOrDevice s = {});
array softmax(const array& a, int axis, bool precise = false, StreamOrDevice s = {});
array softmax(const array& a, bool precise = false, StreamOrDevice s = {});

// (linear algebra: more ops above this line)

// ---- operators ----
array operator-(const array& a);
array operator+(const array& a, const array& b);
array operator-(const array& a, const array& b);
array operator*(const array& a, const array& b);
array operator/(const array& a, const array& b);
template <typename T>
array operator+(const array& a, T b) {
  return add(a, array(b));
}
template <typename T>
array operator+(T a, const array& b) {
  return add(array(a), b);
}
template <typename T>
array operator-(const array& a, T b) {
  return subtract(a, array(b));
}
template <typename T>
array operator-(T a, const array& b) {
  return subtract(array(a), b);
}
template <typename T>
array operator*(const array& a, T b) {
  return multiply(a, array(b));
}
template <typename T>
array operator*(T a, const array& b) {
  return multiply(array(a), b);
}
template <typename T>
array operator/(const array& a, T b) {
  return divide(a, array(b));
}
template <typename T>
array operator/(T a, const array& b) {
  return divide(array(a), b);
}
// (operators: more above this line)

}  // namespace braid
