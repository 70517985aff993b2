// Operations. Each validates its arguments and builds a lazy node; none computes.
// Every op throws std::invalid_argument("[op] ...") on bad input, before any node exists
// (std::out_of_range, as MLX's, for an axis out of range of a reduction or diagonal).
// Every op is thread-safe: any thread may build graphs from any arrays at any time.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>
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

/// An array like `a` (shape and dtype) of zeros / ones.
array zeros_like(const array& a, StreamOrDevice s = {});
array ones_like(const array& a, StreamOrDevice s = {});
/// `vals` broadcast with a's shape (the result has the broadcast shape), as `dtype`.
array full_like(const array& a, array vals, Dtype dtype, StreamOrDevice s = {});
/// As above with a's dtype.
array full_like(const array& a, array vals, StreamOrDevice s = {});
template <typename T>
array full_like(const array& a, T val, Dtype dtype, StreamOrDevice s = {}) {
  return full_like(a, array(val, dtype), dtype, s);
}
template <typename T>
array full_like(const array& a, T val, StreamOrDevice s = {}) {
  return full_like(a, array(val, a.dtype()), s);
}
/// `num` evenly spaced values from start to stop inclusive, computed in float32 (float64 for a
/// float64 dtype) as start * (1 - t) + stop * t, then converted to `dtype`.
array linspace(double start, double stop, int num = 50, Dtype dtype = float32, StreamOrDevice s = {});
/// With `endpoint` false, stop is left out: `num` values start + i (stop - start) / num (NumPy's).
array linspace(double start, double stop, int num, bool endpoint, Dtype dtype = float32,
               StreamOrDevice s = {});
/// An n x m array with ones on diagonal k (k > 0 above the main one), zeros elsewhere.
array eye(int n, int m, int k, Dtype dtype, StreamOrDevice s = {});
array eye(int n, Dtype dtype, StreamOrDevice s = {});
array eye(int n, int m, StreamOrDevice s = {});
array eye(int n, int m, int k, StreamOrDevice s = {});
array eye(int n, StreamOrDevice s = {});
/// eye(n, n, 0, dtype).
array identity(int n, Dtype dtype, StreamOrDevice s = {});
array identity(int n, StreamOrDevice s = {});
/// out[i, j] = (j <= i + k), as `type`.
array tri(int n, int m, int k, Dtype type, StreamOrDevice s = {});
array tri(int n, Dtype type, StreamOrDevice s = {});
/// x with the entries above (tril) / below (triu) diagonal k of the last two axes zeroed.
array tril(array x, int k = 0, StreamOrDevice s = {});
array triu(array x, int k = 0, StreamOrDevice s = {});
/// Coordinate grids of the flattened inputs; indexing "xy" (Cartesian, the first two axes
/// swapped) or "ij" (matrix). With `sparse` the outputs keep unit axes instead of broadcasting.
std::vector<array> meshgrid(const std::vector<array>& arrays, bool sparse = false,
                            const std::string& indexing = "xy", StreamOrDevice s = {});
/// float32 windows of M points (M < 1 gives shape {0}, M == 1 gives [1]): Hann, Hamming,
/// Bartlett (triangular) and Blackman.
array hanning(int M, StreamOrDevice s = {});
array hamming(int M, StreamOrDevice s = {});
array bartlett(int M, StreamOrDevice s = {});
array blackman(int M, StreamOrDevice s = {});

// (creation: more ops above this line)

// ---- type and shape ----
array astype(array a, Dtype dtype, StreamOrDevice s = {});
/// Same data in a new shape; one dimension may be -1. A view when the layout allows.
array reshape(const array& a, Shape shape, StreamOrDevice s = {});
/// Permutes the axes (a view, no copy). Without axes, reverses them.
array transpose(const array& a, std::vector<int> axes, StreamOrDevice s = {});
/// MLX's overload for a braced list of axes, so that `transpose(a, {})` (no axes: a scalar) and
/// `transpose(a, {1, 0})` pick the axes form.
inline array transpose(const array& a, std::initializer_list<int> axes, StreamOrDevice s = {}) {
  return transpose(a, std::vector<int>(axes), std::move(s));
}
array transpose(const array& a, StreamOrDevice s = {});
/// Broadcasts with NumPy rules (a view with zero strides).
array broadcast_to(const array& a, const Shape& shape, StreamOrDevice s = {});

/// Views of `a` without the named size-1 axes / without every size-1 axis.
array squeeze(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});
array squeeze(const array& a, int axis, StreamOrDevice s = {});
array squeeze(const array& a, StreamOrDevice s = {});
/// A view with size-1 axes inserted at `axes` (positions in the result).
array expand_dims(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});
array expand_dims(const array& a, int axis, StreamOrDevice s = {});
/// Merges axes [start_axis, end_axis] (clamped to the array's axes); a 0-d input gives {1}.
array flatten(const array& a, int start_axis, int end_axis = -1, StreamOrDevice s = {});
array flatten(const array& a, StreamOrDevice s = {});
/// Splits `axis` into `shape` (one entry may be -1).
array unflatten(const array& a, int axis, Shape shape, StreamOrDevice s = {});
/// Exchanges two axes (a view).
array swapaxes(const array& a, int axis1, int axis2, StreamOrDevice s = {});
/// Moves axis `source` to position `destination` (a view).
array moveaxis(const array& a, int source, int destination, StreamOrDevice s = {});
/// Every input broadcast to their common shape (views).
std::vector<array> broadcast_arrays(const std::vector<array>& inputs, StreamOrDevice s = {});
/// np.tile: `arr` repeated `reps` times along each axis (reps or shape padded with leading 1s).
array tile(const array& arr, std::vector<int> reps, StreamOrDevice s = {});
/// Each element repeated `repeats` times along `axis` (of the flattened array without one).
array repeat(const array& arr, int repeats, int axis, StreamOrDevice s = {});
array repeat(const array& arr, int repeats, StreamOrDevice s = {});
/// Pads `axes` with low_pad_size / high_pad_size elements: `pad_value` (mode "constant") or
/// copies of the edge (mode "edge").
array pad(const array& a, const std::vector<int>& axes, const Shape& low_pad_size, const Shape& high_pad_size,
          const array& pad_value = array(0), const std::string& mode = "constant", StreamOrDevice s = {});
/// One (low, high) pair per axis.
array pad(const array& a, const std::vector<std::pair<int, int>>& pad_width, const array& pad_value = array(0),
          const std::string& mode = "constant", StreamOrDevice s = {});
/// The same (low, high) pair on every axis.
array pad(const array& a, const std::pair<int, int>& pad_width, const array& pad_value = array(0),
          const std::string& mode = "constant", StreamOrDevice s = {});
/// The same width on both sides of every axis.
array pad(const array& a, int pad_width, const array& pad_value = array(0), const std::string& mode = "constant",
          StreamOrDevice s = {});
/// Rolls elements: of the flattened array (then reshaped back) without axes; the shifts of a
/// Shape are summed when there is one axis or none.
array roll(const array& a, int shift, StreamOrDevice s = {});
array roll(const array& a, const Shape& shift, StreamOrDevice s = {});
array roll(const array& a, int shift, int axis, StreamOrDevice s = {});
array roll(const array& a, int shift, const std::vector<int>& axes, StreamOrDevice s = {});
array roll(const array& a, const Shape& shift, int axis, StreamOrDevice s = {});
array roll(const array& a, const Shape& shift, const std::vector<int>& axes, StreamOrDevice s = {});
/// Diagonal `offset` of axes (axis1, axis2), as the last axis of the result (a view).
array diagonal(const array& a, int offset = 0, int axis1 = 0, int axis2 = 1, StreamOrDevice s = {});
/// 1-d input: the square matrix with `a` on diagonal k; 2-d input: diagonal(a, k).
array diag(const array& a, int k = 0, StreamOrDevice s = {});
/// Sum of diagonal `offset` of (axis1, axis2), after converting to `dtype`.
array trace(const array& a, int offset, int axis1, int axis2, Dtype dtype, StreamOrDevice s = {});
array trace(const array& a, int offset, int axis1, int axis2, StreamOrDevice s = {});
array trace(const array& a, StreamOrDevice s = {});
/// A view of the flattened (row-contiguous) `a`: `shape` with element `strides` from element
/// `offset`. Every element it reaches must lie inside `a`.
array as_strided(array a, Shape shape, Strides strides, size_t offset, StreamOrDevice s = {});
/// A new node with a's values.
array copy(array a, StreamOrDevice s = {});
/// A row-contiguous array with a's values (a itself when it already is; also column-major
/// ones when allowed).
array contiguous(const array& a, bool allow_col_major = false, StreamOrDevice s = {});
/// a's bytes read as `dtype`; the last axis scales by the ratio of the item sizes.
array view(const array& a, const Dtype& dtype, StreamOrDevice s = {});
/// At least 1, 2 or 3 dimensions: (N) -> (1, N) -> (1, N, 1); (M, N) -> (M, N, 1).
array atleast_1d(const array& a, StreamOrDevice s = {});
std::vector<array> atleast_1d(const std::vector<array>& a, StreamOrDevice s = {});
array atleast_2d(const array& a, StreamOrDevice s = {});
std::vector<array> atleast_2d(const std::vector<array>& a, StreamOrDevice s = {});
array atleast_3d(const array& a, StreamOrDevice s = {});
std::vector<array> atleast_3d(const std::vector<array>& a, StreamOrDevice s = {});
/// A 0-d array: the product of a's dimensions over `axes` (its reciprocal when inverted).
array number_of_elements(const array& a, std::vector<int> axes, bool inverted, Dtype dtype = int32,
                         StreamOrDevice s = {});
/// The inputs, each computed only after every one of `dependencies`.
std::vector<array> depends(const std::vector<array>& inputs, const std::vector<array>& dependencies);

// (type, shape and data movement: more ops above this line)

// ---- slicing and concatenation ----
/// NumPy slicing: one start, stop and stride per axis; negative start/stop count from the end
/// and are clamped; a negative stride walks backwards. A view.
array slice(const array& a, Shape start, Shape stop, Shape strides, StreamOrDevice s = {});
inline array slice(const array& a, std::initializer_list<int> start, Shape stop, Shape strides,
                   StreamOrDevice s = {}) {
  return slice(a, Shape(start), std::move(stop), std::move(strides), std::move(s));
}
array slice(const array& a, Shape start, Shape stop, StreamOrDevice s = {});
/// A slice of shape `slice_size` starting at the integer positions in `start` (0-d or 1-d, one
/// per axis of `axes`; clamped so the slice fits).
array slice(const array& a, const array& start, std::vector<int> axes, Shape slice_size, StreamOrDevice s = {});
/// A copy of src with the slice replaced by `update` (converted to src's dtype, broadcast).
array slice_update(const array& src, const array& update, Shape start, Shape stop, Shape strides,
                   StreamOrDevice s = {});
array slice_update(const array& src, const array& update, Shape start, Shape stop, StreamOrDevice s = {});
/// As above at the integer positions in `start` along `axes`.
array slice_update(const array& src, const array& update, const array& start, std::vector<int> axes,
                   StreamOrDevice s = {});
/// Like slice_update, combining the slice with update (+, *, max, min) instead of replacing it.
array slice_update_add(const array& src, const array& update, Shape start, Shape stop, Shape strides,
                       StreamOrDevice s = {});
array slice_update_add(const array& src, const array& update, Shape start, Shape stop, StreamOrDevice s = {});
array slice_update_prod(const array& src, const array& update, Shape start, Shape stop, Shape strides,
                        StreamOrDevice s = {});
array slice_update_prod(const array& src, const array& update, Shape start, Shape stop, StreamOrDevice s = {});
array slice_update_max(const array& src, const array& update, Shape start, Shape stop, Shape strides,
                       StreamOrDevice s = {});
array slice_update_max(const array& src, const array& update, Shape start, Shape stop, StreamOrDevice s = {});
array slice_update_min(const array& src, const array& update, Shape start, Shape stop, Shape strides,
                       StreamOrDevice s = {});
array slice_update_min(const array& src, const array& update, Shape start, Shape stop, StreamOrDevice s = {});
/// num_splits equal pieces along `axis` (views).
std::vector<array> split(const array& a, int num_splits, int axis, StreamOrDevice s = {});
std::vector<array> split(const array& a, int num_splits, StreamOrDevice s = {});
/// Pieces that start at each of `indices` along `axis` (views).
std::vector<array> split(const array& a, const Shape& indices, int axis, StreamOrDevice s = {});
std::vector<array> split(const array& a, const Shape& indices, StreamOrDevice s = {});
/// The inputs, converted to their promoted dtype, one after another along `axis`.
array concatenate(std::vector<array> arrays, int axis, StreamOrDevice s = {});
/// The flattened inputs one after another.
array concatenate(std::vector<array> arrays, StreamOrDevice s = {});
/// Equal-shaped inputs along a new axis.
array stack(const std::vector<array>& arrays, int axis, StreamOrDevice s = {});
array stack(const std::vector<array>& arrays, StreamOrDevice s = {});
/// The slices of `a` along `axis`, that axis removed (views; the inverse of stack).
std::vector<array> unstack(const array& a, int axis = 0, StreamOrDevice s = {});
/// The elements in reverse order along `axes` (a view: a slice with stride -1 on each).
array flip(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});
array flip(const array& a, int axis, StreamOrDevice s = {});
/// Reversed along every axis.
array flip(const array& a, StreamOrDevice s = {});

// (slicing: ops above this line)

// ---- elementwise (NumPy broadcasting and type promotion) ----
// Binary ops cast both inputs to promote_types(a, b) and broadcast them. "Float" below means
// MLX's at_least_float: bool and integers compute in float32, inexact dtypes are kept.

/// |a|, in a's dtype (complex64 gives its float32 magnitude).
array abs(const array& a, StreamOrDevice s = {});
/// -1, 0 or 1 in a's dtype (0 for NaN); a / |a| for complex.
array sign(const array& a, StreamOrDevice s = {});
/// -a; throws for bool (use logical_not). Integers wrap.
array negative(const array& a, StreamOrDevice s = {});
/// a * a in a's dtype.
array square(const array& a, StreamOrDevice s = {});
/// Floor and ceiling; integers and bool are returned unchanged; complex throws.
array floor(const array& a, StreamOrDevice s = {});
array ceil(const array& a, StreamOrDevice s = {});
/// Rounds half to even at `decimals` digits (negative: left of the point), in a's dtype.
array round(const array& a, int decimals, StreamOrDevice s = {});
inline array round(const array& a, StreamOrDevice s = {}) { return round(a, 0, std::move(s)); }
/// Float functions (complex64 is accepted except by erf and erfinv).
array sin(const array& a, StreamOrDevice s = {});
array cos(const array& a, StreamOrDevice s = {});
array tan(const array& a, StreamOrDevice s = {});
array arcsin(const array& a, StreamOrDevice s = {});
array arccos(const array& a, StreamOrDevice s = {});
array arctan(const array& a, StreamOrDevice s = {});
array sinh(const array& a, StreamOrDevice s = {});
array cosh(const array& a, StreamOrDevice s = {});
array tanh(const array& a, StreamOrDevice s = {});
array arcsinh(const array& a, StreamOrDevice s = {});
array arccosh(const array& a, StreamOrDevice s = {});
array arctanh(const array& a, StreamOrDevice s = {});
/// a * 180 / pi and a * pi / 180, in float.
array degrees(const array& a, StreamOrDevice s = {});
array radians(const array& a, StreamOrDevice s = {});
array exp(const array& a, StreamOrDevice s = {});
/// exp(a) - 1, accurate near 0.
array expm1(const array& a, StreamOrDevice s = {});
array log(const array& a, StreamOrDevice s = {});
array log2(const array& a, StreamOrDevice s = {});
array log10(const array& a, StreamOrDevice s = {});
/// log(1 + a), accurate near 0.
array log1p(const array& a, StreamOrDevice s = {});
array sqrt(const array& a, StreamOrDevice s = {});
/// 1 / sqrt(a).
array rsqrt(const array& a, StreamOrDevice s = {});
/// 1 / a.
array reciprocal(const array& a, StreamOrDevice s = {});
/// 1 / (1 + exp(-a)), computed without overflow.
array sigmoid(const array& a, StreamOrDevice s = {});
array erf(const array& a, StreamOrDevice s = {});
array erfinv(const array& a, StreamOrDevice s = {});
/// Bool predicates; bool and integer inputs are never NaN or infinite.
array isnan(const array& a, StreamOrDevice s = {});
array isinf(const array& a, StreamOrDevice s = {});
array isfinite(const array& a, StreamOrDevice s = {});
array isposinf(const array& a, StreamOrDevice s = {});
array isneginf(const array& a, StreamOrDevice s = {});
/// NaN, +inf and -inf replaced (the infinities by the dtype's largest and lowest values by
/// default). Non-float inputs are returned unchanged; float64 and complex64 throw (as MLX).
array nan_to_num(const array& a, float nan = 0.0f, const std::optional<float> posinf = std::nullopt,
                 const std::optional<float> neginf = std::nullopt, StreamOrDevice s = {});
/// Parts of complex64 as float32; a real input is its own real part (imag gives zeros).
array real(const array& a, StreamOrDevice s = {});
array imag(const array& a, StreamOrDevice s = {});
/// Complex conjugate; other dtypes are returned unchanged.
array conjugate(const array& a, StreamOrDevice s = {});
/// The identity, through which no gradient flows (its output shares a's buffer).
array stop_gradient(const array& a, StreamOrDevice s = {});

array add(const array& a, const array& b, StreamOrDevice s = {});
array subtract(const array& a, const array& b, StreamOrDevice s = {});
array multiply(const array& a, const array& b, StreamOrDevice s = {});
/// True division, in float: integer inputs give float32.
array divide(const array& a, const array& b, StreamOrDevice s = {});
/// floor(a / b) for floats; integers truncate toward zero (as MLX); x // 0 is 0 for integers.
array floor_divide(const array& a, const array& b, StreamOrDevice s = {});
/// a mod b with the divisor's sign (Python's %); x % 0 is 0 for integers.
array remainder(const array& a, const array& b, StreamOrDevice s = {});
/// {floor_divide(a, b), remainder(a, b)}; complex throws.
std::vector<array> divmod(const array& a, const array& b, StreamOrDevice s = {});
/// a ** b; integer powers stay integers.
array power(const array& a, const array& b, StreamOrDevice s = {});
/// Element-wise max and min; NaN propagates, complex compares lexicographically.
array maximum(const array& a, const array& b, StreamOrDevice s = {});
array minimum(const array& a, const array& b, StreamOrDevice s = {});
/// log(exp(a) + exp(b)) without overflow, in float.
array logaddexp(const array& a, const array& b, StreamOrDevice s = {});
/// The angle of the point (b, a), in float.
array arctan2(const array& a, const array& b, StreamOrDevice s = {});
/// a clamped to [a_min, a_max] (either bound may be missing, not both); the bounds broadcast
/// and take part in type promotion.
array clip(const array& a, const std::optional<array>& a_min = std::nullopt,
           const std::optional<array>& a_max = std::nullopt, StreamOrDevice s = {});

/// Comparisons give bool; complex64 orders lexicographically.
array equal(const array& a, const array& b, StreamOrDevice s = {});
array not_equal(const array& a, const array& b, StreamOrDevice s = {});
array less(const array& a, const array& b, StreamOrDevice s = {});
array less_equal(const array& a, const array& b, StreamOrDevice s = {});
array greater(const array& a, const array& b, StreamOrDevice s = {});
array greater_equal(const array& a, const array& b, StreamOrDevice s = {});
/// A 0-d bool: same shape and equal elements (NaNs equal when equal_nan); dtypes may differ.
array array_equal(const array& a, const array& b, bool equal_nan, StreamOrDevice s = {});
inline array array_equal(const array& a, const array& b, StreamOrDevice s = {}) {
  return array_equal(a, b, false, std::move(s));
}
/// |a - b| <= atol + rtol * |b|; infinities are close only to an equal infinity, NaN to NaN only
/// with equal_nan.
array isclose(const array& a, const array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false,
              StreamOrDevice s = {});
/// All of isclose, as a 0-d bool.
array allclose(const array& a, const array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false,
               StreamOrDevice s = {});
/// Elements of x where condition is true, else of y (all three broadcast together).
array where(const array& condition, const array& x, const array& y, StreamOrDevice s = {});

/// Inputs are cast to bool.
array logical_not(const array& a, StreamOrDevice s = {});
array logical_and(const array& a, const array& b, StreamOrDevice s = {});
array logical_or(const array& a, const array& b, StreamOrDevice s = {});
/// Bool and integer inputs only. Shifts compute bool as uint8; right shifts of signed values
/// are arithmetic.
array bitwise_and(const array& a, const array& b, StreamOrDevice s = {});
array bitwise_or(const array& a, const array& b, StreamOrDevice s = {});
array bitwise_xor(const array& a, const array& b, StreamOrDevice s = {});
array left_shift(const array& a, const array& b, StreamOrDevice s = {});
array right_shift(const array& a, const array& b, StreamOrDevice s = {});
/// ~a for integers, logical_not for bool; floats throw.
array bitwise_invert(const array& a, StreamOrDevice s = {});

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
/// Median over the axes: the middle of the sorted values, or the mean of the two middle ones
/// for an even count, in the float dtype of a. NaNs sort last (counted as the largest values,
/// so unlike np.median a NaN shows only when it reaches the middle). An empty axis list (of an
/// array with dimensions) or an empty reduced axis throws.
array median(const array& a, bool keepdims, StreamOrDevice s = {});
array median(const array& a, StreamOrDevice s = {});
array median(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array median(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
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
// Index arrays may have any integer dtype (bool and floating types are rejected when the op is
// built). Negative indices wrap once (-1 is the last element). Indices still out of range
// after that never touch memory outside the array: gathers clamp them into range, scatters
// drop the update.
/// np.take along `axis`: shape a.shape[:axis] + indices.shape + a.shape[axis+1:].
array take(const array& a, const array& indices, int axis, StreamOrDevice s = {});
/// The slice at `index` along `axis`, with that axis removed. As in MLX, index -1 (and any
/// index outside [-dim, dim) ) throws; other negative indices count from the end.
array take(const array& a, int index, int axis, StreamOrDevice s = {});
/// take on the flattened array.
array take(const array& a, const array& indices, StreamOrDevice s = {});
array take(const array& a, int index, StreamOrDevice s = {});
/// Elements of a at `indices` along `axis`; indices.ndim() == a.ndim(), other axes broadcast.
array take_along_axis(const array& a, const array& indices, int axis, StreamOrDevice s = {});
/// Copy of a with `values` (broadcast, cast to a's dtype) written at `indices` along `axis`.
array put_along_axis(const array& a, const array& indices, const array& values, int axis, StreamOrDevice s = {});
/// put_along_axis, adding; duplicate indices accumulate.
array scatter_add_axis(const array& a, const array& indices, const array& values, int axis, StreamOrDevice s = {});
/// indices[i] indexes axis axes[i] (index arrays broadcast together). Output shape:
/// bcast(indices).shape + slice_sizes (indexed axes are kept as slice dimensions).
array gather(const array& a, const std::vector<array>& indices, const std::vector<int>& axes,
             const Shape& slice_sizes, StreamOrDevice s = {});
array gather(const array& a, const array& indices, int axis, const Shape& slice_sizes, StreamOrDevice s = {});
/// Copy of a with update slices written at the indices: updates.shape is bcast(indices).shape
/// followed by a slice of a.ndim() dimensions, each no larger than a's. Which duplicate wins
/// is unspecified. The _add/_prod/_max/_min forms combine duplicates and a's value.
array scatter(const array& a, const std::vector<array>& indices, const array& updates,
              const std::vector<int>& axes, StreamOrDevice s = {});
array scatter(const array& a, const array& indices, const array& updates, int axis, StreamOrDevice s = {});
array scatter_add(const array& a, const std::vector<array>& indices, const array& updates,
                  const std::vector<int>& axes, StreamOrDevice s = {});
array scatter_add(const array& a, const array& indices, const array& updates, int axis, StreamOrDevice s = {});
array scatter_prod(const array& a, const std::vector<array>& indices, const array& updates,
                   const std::vector<int>& axes, StreamOrDevice s = {});
array scatter_prod(const array& a, const array& indices, const array& updates, int axis, StreamOrDevice s = {});
array scatter_max(const array& a, const std::vector<array>& indices, const array& updates,
                  const std::vector<int>& axes, StreamOrDevice s = {});
array scatter_max(const array& a, const array& indices, const array& updates, int axis, StreamOrDevice s = {});
array scatter_min(const array& a, const std::vector<array>& indices, const array& updates,
                  const std::vector<int>& axes, StreamOrDevice s = {});
array scatter_min(const array& a, const array& indices, const array& updates, int axis, StreamOrDevice s = {});
/// Copy of a whose positions where `mask` (bool, shape a prefix of a.shape, broadcast over
/// the rest) is true take src's elements (cast to a's dtype) in row-major order. Positions
/// past the end of src keep a's value.
array masked_scatter(const array& a, const array& mask, const array& src, StreamOrDevice s = {});
// (indexing: ops above this line)

// ---- sorting and selection ----
// Sorts are stable, put NaNs last and order complex numbers lexicographically. The overloads
// without an axis work on the flattened array (not on the last axis, as Python MLX does).
array sort(const array& a, StreamOrDevice s = {});
array sort(const array& a, int axis, StreamOrDevice s = {});
/// uint32 positions that sort along the axis.
array argsort(const array& a, StreamOrDevice s = {});
array argsort(const array& a, int axis, StreamOrDevice s = {});
/// Element kth (negative counts from the end) in its sorted place, nothing larger before it
/// and nothing smaller after it.
array partition(const array& a, int kth, StreamOrDevice s = {});
array partition(const array& a, int kth, int axis, StreamOrDevice s = {});
/// uint32 positions that partition along the axis.
array argpartition(const array& a, int kth, StreamOrDevice s = {});
array argpartition(const array& a, int kth, int axis, StreamOrDevice s = {});
/// The k largest values along the axis, not in sorted order; k == dim returns a itself.
array topk(const array& a, int k, StreamOrDevice s = {});
array topk(const array& a, int k, int axis, StreamOrDevice s = {});
// (sorting: ops above this line)

// ---- linear algebra and nn ----
/// Matrix product with NumPy semantics: 1-d operands are promoted, batch dims broadcast.
/// Inexact dtypes (the floats and complex64); float64 is computed in double.
array matmul(const array& a, const array& b, StreamOrDevice s = {});
/// beta * c + alpha * (a @ b) in one product (c broadcasts to the result's shape).
array addmm(array c, array a, array b, const float& alpha = 1.f, const float& beta = 1.f,
            StreamOrDevice s = {});
/// Sums products over the last `axis` axes of a and the first `axis` axes of b.
array tensordot(const array& a, const array& b, const int axis = 2, StreamOrDevice s = {});
/// Sums products over axes_a of a paired with axes_b of b; the result has a's other axes,
/// then b's.
array tensordot(const array& a, const array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b, StreamOrDevice s = {});
/// a.flatten()[:, None] * b.flatten() (any dtype).
array outer(const array& a, const array& b, StreamOrDevice s = {});
/// Sum of products over the last axes of a and b (a 0-d operand multiplies).
array inner(const array& a, const array& b, StreamOrDevice s = {});
/// The Kronecker product (any dtype; empty inputs throw).
array kron(const array& a, const array& b, StreamOrDevice s = {});
/// a @ b with block_size x block_size (32 or 64) blocks of a, b and the result masked:
/// mask_lhs [..., ceil(M/bs), ceil(K/bs)], mask_rhs [..., ceil(K/bs), ceil(N/bs)] and mask_out
/// [..., ceil(M/bs), ceil(N/bs)]; a false bool block is zero, a float mask scales its block.
array block_masked_mm(array a, array b, int block_size, std::optional<array> mask_out = std::nullopt,
                      std::optional<array> mask_lhs = std::nullopt,
                      std::optional<array> mask_rhs = std::nullopt, StreamOrDevice s = {});
/// out[i] = a[lhs_indices[i]] @ b[rhs_indices[i]] with the integer indices broadcast together
/// and counting a's and b's matrices in row-major order (absent: every matrix in turn).
/// Out-of-range indices are clamped. sorted_indices is a hint and never changes the result.
array gather_mm(array a, array b, std::optional<array> lhs_indices = std::nullopt,
                std::optional<array> rhs_indices = std::nullopt, bool sorted_indices = false,
                StreamOrDevice s = {});
/// For every (start, end) pair in segments [..., 2]: a[:, start:end] @ b[start:end, :], of
/// a [M, K] and b [K, N]; zeros where end <= start; bounds are clamped into [0, K].
array segmented_mm(array a, array b, array segments, StreamOrDevice s = {});
/// exp(a - max) / sum(exp(a - max)) over `axes`.
array softmax(const array& a, const std::vector<int>& axes, bool precise = false, StreamOrDevice s = {});
array softmax(const array& a, int axis, bool precise = false, StreamOrDevice s = {});
array softmax(const array& a, bool precise = false, StreamOrDevice s = {});

/// a times the Hadamard matrix of order n = a.shape(-1) along the last axis, times `scale`
/// (default 1/sqrt(n), which makes the transform orthonormal). n must be m * 2^k with m in
/// {1, 12, 20, 28} and 2^k <= 2^26; the order-2^k part is Sylvester's matrix and H_n is
/// H_m (x) H_(2^k). Real floating dtypes are kept, any other becomes float32; an empty array
/// throws. For n == 1 the result is a * scale (a itself when scale is 1).
array hadamard_transform(const array& a, std::optional<float> scale = std::nullopt, StreamOrDevice s = {});

// (linear algebra: more ops above this line)

// ---- convolution ----
// MLX's layouts: input [N, spatial..., C_in], weight [C_out, kernel..., C_in / groups], output
// [N, spatial..., C_out]; 1 to 3 spatial dimensions (groups > 1 only for 1 or 2). Inputs must
// be real floating (float16, bfloat16 or float32; float64 is refused); the result has their
// promoted dtype. Computed as im2col + GEMM (OpenBLAS on the CPU, cuBLASLt on the GPU).
/// Convolution with per-axis stride, padding (low and high side; negative padding crops),
/// kernel dilation and input dilation (zeros between input elements); `flip` reverses the
/// kernel (a true convolution rather than a correlation). A vector of size 0 or 1 applies to
/// every spatial axis (defaults: stride 1, padding 0, dilations 1).
array conv_general(array input, array weight, std::vector<int> stride = {}, std::vector<int> padding_lo = {},
                   std::vector<int> padding_hi = {}, std::vector<int> kernel_dilation = {},
                   std::vector<int> input_dilation = {}, int groups = 1, bool flip = false,
                   StreamOrDevice s = {});
/// conv_general with the same padding on both sides of each axis.
inline array conv_general(const array& input, const array& weight, std::vector<int> stride = {},
                          std::vector<int> padding = {}, std::vector<int> kernel_dilation = {},
                          std::vector<int> input_dilation = {}, int groups = 1, bool flip = false,
                          StreamOrDevice s = {}) {
  return conv_general(input, weight, std::move(stride), padding, padding, std::move(kernel_dilation),
                      std::move(input_dilation), groups, flip, std::move(s));
}
/// Convolutions over 1, 2 and 3 spatial axes (symmetric padding).
array conv1d(const array& input, const array& weight, int stride = 1, int padding = 0, int dilation = 1,
             int groups = 1, StreamOrDevice s = {});
array conv2d(const array& input, const array& weight, const std::pair<int, int>& stride = {1, 1},
             const std::pair<int, int>& padding = {0, 0}, const std::pair<int, int>& dilation = {1, 1},
             int groups = 1, StreamOrDevice s = {});
array conv3d(const array& input, const array& weight, const std::tuple<int, int, int>& stride = {1, 1, 1},
             const std::tuple<int, int, int>& padding = {0, 0, 0},
             const std::tuple<int, int, int>& dilation = {1, 1, 1}, int groups = 1, StreamOrDevice s = {});
/// Transposed convolutions, computed as conv_general with input dilation = stride and the
/// kernel flipped; the weight is [C_out, kernel..., C_in / groups] as for conv. Output size
/// along each axis: (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 +
/// output_padding.
array conv_transpose1d(const array& input, const array& weight, int stride = 1, int padding = 0,
                       int dilation = 1, int output_padding = 0, int groups = 1, StreamOrDevice s = {});
array conv_transpose2d(const array& input, const array& weight, const std::pair<int, int>& stride = {1, 1},
                       const std::pair<int, int>& padding = {0, 0},
                       const std::pair<int, int>& dilation = {1, 1},
                       const std::pair<int, int>& output_padding = {0, 0}, int groups = 1,
                       StreamOrDevice s = {});
array conv_transpose3d(const array& input, const array& weight,
                       const std::tuple<int, int, int>& stride = {1, 1, 1},
                       const std::tuple<int, int, int>& padding = {0, 0, 0},
                       const std::tuple<int, int, int>& dilation = {1, 1, 1},
                       const std::tuple<int, int, int>& output_padding = {0, 0, 0}, int groups = 1,
                       StreamOrDevice s = {});
// (convolution: ops above this line)

// ---- quantization (MLX's modes and packed layouts) ----
// Modes: "affine" (group size 32, 64 or 128, default 64; 2, 3, 4, 5, 6 or 8 bits, default 4;
// scales and biases in w's dtype), "mxfp4" (E2M1 elements in groups of 32, E8M0 scales),
// "mxfp8" (E4M3 elements, groups of 32, E8M0 scales) and "nvfp4" (E2M1 elements, groups of
// 16, E4M3 scales, optionally over a float32 global scale). The fp modes take only their own
// group size and bits (the defaults), have no biases, and keep their scales as uint8 codes.
/// Quantizes w along its last axis in groups of group_size. Returns {packed uint32 words,
/// scales, biases} for "affine" and {packed uint32 words, uint8 scale codes} for the fp modes.
/// w: float32, float16 or bfloat16, ndim >= 2, last dim a multiple of group_size.
/// global_scale (nvfp4 only; float32, one element): element values become
/// code * scale * global_scale / (448 * 6), so the E4M3 scales span the tensor's range.
std::vector<array> quantize(const array& w, std::optional<int> group_size = std::nullopt,
                            std::optional<int> bits = std::nullopt, const std::string& mode = "affine",
                            const std::optional<array>& global_scale = std::nullopt, StreamOrDevice s = {});
/// The value of every packed element: scales * q + biases (affine) or the element's value
/// times its group's scale (and the nvfp4 global scale / (448 * 6)). The dtype defaults to
/// that of scales/biases (affine) or bfloat16 (the fp modes).
array dequantize(const array& w, const array& scales, const std::optional<array>& biases = std::nullopt,
                 std::optional<int> group_size = std::nullopt, std::optional<int> bits = std::nullopt,
                 const std::string& mode = "affine", const std::optional<array>& global_scale = std::nullopt,
                 std::optional<Dtype> dtype = std::nullopt, StreamOrDevice s = {});
/// x @ dequantize(w).T (transpose = true) or x @ dequantize(w), without materializing the
/// dequantized weights when x has few rows. The result's dtype is that of x promoted with the
/// scales (affine) or x's (the fp modes).
array quantized_matmul(array x, array w, array scales, std::optional<array> biases = std::nullopt,
                       bool transpose = true, std::optional<int> group_size = std::nullopt,
                       std::optional<int> bits = std::nullopt, const std::string& mode = "affine",
                       StreamOrDevice s = {});
/// For each pair of batch indices (lhs_indices into the flattened batch axes of x,
/// rhs_indices into those of w; broadcast together, each defaulting to every batch of its
/// operand): x[lhs] @ dequantize(w[rhs]).T (transpose) or x[lhs] @ dequantize(w[rhs]). The
/// result has the indices' shape followed by the product's two axes. Without either index
/// array this is quantized_matmul. Negative indices wrap once; others out of range are
/// clamped. `sorted_indices` is a hint braid does not need.
array gather_qmm(const array& x, const array& w, const array& scales, const std::optional<array>& biases = std::nullopt,
                 std::optional<array> lhs_indices = std::nullopt, std::optional<array> rhs_indices = std::nullopt,
                 bool transpose = true, std::optional<int> group_size = std::nullopt,
                 std::optional<int> bits = std::nullopt, const std::string& mode = "affine",
                 bool sorted_indices = false, StreamOrDevice s = {});
/// x @ w.T with both operands quantized in `mode` ("nvfp4", the default, or "mxfp8") and
/// multiplied as their quantized values: x [M, K] or [K] is quantized here (with
/// global_scale_x for nvfp4); w [N, K] is either already quantized (uint32, with w_scales, and
/// global_scale_w if it was quantized with one) or a float matrix quantized here. nvfp4 takes
/// both global scales or neither. The result has x's dtype.
array qqmm(array x, array w, const std::optional<array> w_scales = std::nullopt,
           std::optional<int> group_size = std::nullopt, std::optional<int> bits = std::nullopt,
           const std::string& mode = "nvfp4", const std::optional<array> global_scale_x = std::nullopt,
           const std::optional<array> global_scale_w = std::nullopt, StreamOrDevice s = {});
/// float8 e4m3 codes (uint8) of a real floating array, MLX's "fn" format (no infinities;
/// S.1111.111 is NaN; largest finite 448), rounded to nearest even. Magnitudes of 448 and up,
/// infinities and NaN saturate to +-448 by their sign.
array to_fp8(array x, StreamOrDevice s = {});
/// The values of float8 e4m3 codes (a uint8 array) as `dtype` (real floating); every code
/// is exact in each of them, and 0x7F and 0xFF are NaN.
array from_fp8(array x, Dtype dtype, StreamOrDevice s = {});
// (quantization: more ops above this line)

// ---- operators ----
// A C++ scalar operand becomes array(scalar) with its own dtype (double is float32), as in
// MLX: x_int8 + 1 is int32 and x_float16 * 2.0 is float32.
array operator-(const array& a);
array operator~(const array& a);
array operator+(const array& a, const array& b);
template <typename T>
array operator+(T a, const array& b) {
  return add(array(a), b);
}
template <typename T>
array operator+(const array& a, T b) {
  return add(a, array(b));
}
array operator-(const array& a, const array& b);
template <typename T>
array operator-(T a, const array& b) {
  return subtract(array(a), b);
}
template <typename T>
array operator-(const array& a, T b) {
  return subtract(a, array(b));
}
array operator*(const array& a, const array& b);
template <typename T>
array operator*(T a, const array& b) {
  return multiply(array(a), b);
}
template <typename T>
array operator*(const array& a, T b) {
  return multiply(a, array(b));
}
array operator%(const array& a, const array& b);
template <typename T>
array operator%(T a, const array& b) {
  return remainder(array(a), b);
}
template <typename T>
array operator%(const array& a, T b) {
  return remainder(a, array(b));
}
inline array operator==(const array& a, const array& b) { return equal(a, b); }
template <typename T>
array operator==(T a, const array& b) {
  return equal(array(a), b);
}
template <typename T>
array operator==(const array& a, T b) {
  return equal(a, array(b));
}
inline array operator!=(const array& a, const array& b) { return not_equal(a, b); }
template <typename T>
array operator!=(T a, const array& b) {
  return not_equal(array(a), b);
}
template <typename T>
array operator!=(const array& a, T b) {
  return not_equal(a, array(b));
}
inline array operator<(const array& a, const array& b) { return less(a, b); }
template <typename T>
array operator<(T a, const array& b) {
  return less(array(a), b);
}
template <typename T>
array operator<(const array& a, T b) {
  return less(a, array(b));
}
inline array operator<=(const array& a, const array& b) { return less_equal(a, b); }
template <typename T>
array operator<=(T a, const array& b) {
  return less_equal(array(a), b);
}
template <typename T>
array operator<=(const array& a, T b) {
  return less_equal(a, array(b));
}
inline array operator>(const array& a, const array& b) { return greater(a, b); }
template <typename T>
array operator>(T a, const array& b) {
  return greater(array(a), b);
}
template <typename T>
array operator>(const array& a, T b) {
  return greater(a, array(b));
}
inline array operator>=(const array& a, const array& b) { return greater_equal(a, b); }
template <typename T>
array operator>=(T a, const array& b) {
  return greater_equal(array(a), b);
}
template <typename T>
array operator>=(const array& a, T b) {
  return greater_equal(a, array(b));
}
/// Division by a scalar: the scalar is float32 (a_float16 / 2.0 is float32).
array operator/(const array& a, const array& b);
array operator/(double a, const array& b);
array operator/(const array& a, double b);
/// Array-array only, as MLX; && and || do not short-circuit.
array operator&&(const array& a, const array& b);
array operator||(const array& a, const array& b);
array operator&(const array& a, const array& b);
array operator|(const array& a, const array& b);
array operator^(const array& a, const array& b);
array operator<<(const array& a, const array& b);
array operator>>(const array& a, const array& b);
// (operators: more above this line)

}  // namespace braid
