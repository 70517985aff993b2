// Operations. Each validates its arguments and builds a lazy node; none computes.
// Every op throws std::invalid_argument("[op] ...") on bad input, before any node exists.
// Every op is thread-safe: any thread may build graphs from any arrays at any time.
#pragma once

#include <optional>
#include <string>
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
array sum(const array& a, bool keepdims, StreamOrDevice s = {});
array sum(const array& a, StreamOrDevice s = {});
array sum(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array sum(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
array max(const array& a, bool keepdims, StreamOrDevice s = {});
array max(const array& a, StreamOrDevice s = {});
array max(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array max(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});
array mean(const array& a, bool keepdims, StreamOrDevice s = {});
array mean(const array& a, StreamOrDevice s = {});
array mean(const array& a, const std::vector<int>& axes, bool keepdims = false, StreamOrDevice s = {});
array mean(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {});

// (reductions: more ops above this line)

// ---- scans ----
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
array matmul(const array& a, const array& b, StreamOrDevice s = {});
/// exp(a - max) / sum(exp(a - max)) over `axes`.
array softmax(const array& a, const std::vector<int>& axes, bool precise = false, StreamOrDevice s = {});
array softmax(const array& a, int axis, bool precise = false, StreamOrDevice s = {});
array softmax(const array& a, bool precise = false, StreamOrDevice s = {});

// (linear algebra: more ops above this line)

// ---- quantization (MLX's "affine" mode and packed layout) ----
/// Quantizes w along its last axis in groups of group_size (32, 64 or 128; default 64) to
/// `bits` bits (2, 3, 4, 5, 6 or 8; default 4). Returns {packed uint32 words, scales, biases},
/// scales and biases in w's dtype. w: real floating, ndim >= 2, last dim a multiple of
/// group_size. Only mode "affine" is supported.
std::vector<array> quantize(const array& w, std::optional<int> group_size = std::nullopt,
                            std::optional<int> bits = std::nullopt, const std::string& mode = "affine",
                            const std::optional<array>& global_scale = std::nullopt, StreamOrDevice s = {});
/// scales * q + biases for every packed value; the dtype defaults to that of scales/biases.
array dequantize(const array& w, const array& scales, const std::optional<array>& biases = std::nullopt,
                 std::optional<int> group_size = std::nullopt, std::optional<int> bits = std::nullopt,
                 const std::string& mode = "affine", const std::optional<array>& global_scale = std::nullopt,
                 std::optional<Dtype> dtype = std::nullopt, StreamOrDevice s = {});
/// x @ dequantize(w).T (transpose = true) or x @ dequantize(w), without materializing the
/// dequantized weights when x has few rows.
array quantized_matmul(array x, array w, array scales, std::optional<array> biases = std::nullopt,
                       bool transpose = true, std::optional<int> group_size = std::nullopt,
                       std::optional<int> bits = std::nullopt, const std::string& mode = "affine",
                       StreamOrDevice s = {});
// (quantization: more ops above this line)

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
