// astype, reshape, transpose, broadcast_to.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "braid/ops.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

array astype(array a, Dtype dtype, StreamOrDevice s) {
  if (a.dtype() == dtype) return a;
  Stream st = detail::op_stream(std::move(s), "astype");
  Shape shape = a.shape();
  return array(std::move(shape), dtype, detail::make_pooled<AsType>(std::move(st)), {std::move(a)});
}

namespace detail {

Shape reshaped(uint64_t size, Shape shape) {
  constexpr uint64_t kMaxDim = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
  std::optional<size_t> infer;
  // The product of the given dimensions, in 64 bits without wrapping: `overflow` once it
  // passes any array's size (so it can match none, unless a zero dimension makes it 0).
  uint64_t known = 1;
  bool overflow = false, has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) throw_invalid("reshape", "Can only infer one dimension.");
      infer = i;
    } else if (shape[i] < 0) {
      throw_invalid("reshape",
                    "Invalid dimension " + std::to_string(shape[i]) + " in shape " + shape_str(shape) + ".");
    } else if (shape[i] == 0) {
      has_zero = true;
    } else if (!overflow) {
      const auto d = static_cast<uint64_t>(shape[i]);
      if (known > std::numeric_limits<uint64_t>::max() / d) {
        overflow = true;
      } else {
        known *= d;
      }
    }
  }
  if (has_zero) {
    known = 0;
    overflow = false;
  }
  if (infer) {
    if (known == 0 || overflow || size % known != 0) {
      throw_invalid("reshape", "Cannot infer the shape of an array of size " + std::to_string(size) +
                                   " into shape " + shape_str(shape) + ".");
    }
    const uint64_t inferred = size / known;
    if (inferred > kMaxDim) {
      throw_invalid("reshape", "The inferred dimension " + std::to_string(inferred) + " of shape " +
                                   shape_str(shape) + " for an array of size " + std::to_string(size) +
                                   " exceeds the largest dimension, " + std::to_string(kMaxDim) + ".");
    }
    shape[*infer] = static_cast<int32_t>(inferred);
    known = size;
  }
  if (overflow || known != size) {
    throw_invalid("reshape", "Cannot reshape array of size " + std::to_string(size) + " into shape " +
                                 shape_str(shape) + ".");
  }
  return shape;
}

}  // namespace detail

namespace {

array reshape_impl(const array& a, Shape shape, StreamOrDevice s, bool keep_request) {
  Shape out = detail::reshaped(a.size(), shape);
  // Kept for the replays: even a reshape to the input's own shape is a node, whose -1 may
  // infer another shape for other inputs (MLX skips only the literal same shape).
  keep_request = keep_request && detail::in_dynamic_tracing();
  if (keep_request ? shape == a.shape() : out == a.shape()) return a;
  Stream st = detail::op_stream(std::move(s), "reshape");
  auto primitive = keep_request ? detail::make_pooled<Reshape>(std::move(st), std::move(shape))
                                : detail::make_pooled<Reshape>(std::move(st));
  return array(std::move(out), a.dtype(), std::move(primitive), {a});
}

}  // namespace

array reshape(const array& a, Shape shape, StreamOrDevice s) {
  return reshape_impl(a, std::move(shape), std::move(s), false);
}

namespace detail {

array reshape_keeping_request(const array& a, Shape shape, StreamOrDevice s) {
  return reshape_impl(a, std::move(shape), std::move(s), true);
}

}  // namespace detail

array transpose(const array& a, std::vector<int> axes, StreamOrDevice s) {
  if (axes.size() != a.ndim()) {
    throw_invalid("transpose", "Received " + std::to_string(axes.size()) + " axes for an array with " +
                                   std::to_string(a.ndim()) + " dimensions.");
  }
  if (a.ndim() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw_invalid("transpose", "Too many dimensions (" + std::to_string(a.ndim()) + ").");
  }
  const int nd = static_cast<int>(a.ndim());
  for (auto& ax : axes) ax = detail::normalize_axis(ax, nd, "transpose");
  std::vector<int> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw_invalid("transpose", "Repeated axes in the permutation.");
  }
  Shape shape(nd);
  for (int i = 0; i < nd; ++i) shape[i] = a.shape()[axes[i]];
  Stream st = detail::op_stream(std::move(s), "transpose");
  return array(std::move(shape), a.dtype(), detail::make_pooled<Transpose>(std::move(st), std::move(axes)),
               {a});
}

array transpose(const array& a, StreamOrDevice s) {
  std::vector<int> axes(a.ndim());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int>(axes.size() - 1 - i);
  return transpose(a, std::move(axes), std::move(s));
}

array broadcast_to(const array& a, const Shape& shape, StreamOrDevice s) {
  if (a.shape() == shape) return a;
  detail::checked_size(shape, a.dtype(), "broadcast_to");
  bool ok = shape.size() >= a.ndim();
  if (ok) {
    Shape b = detail::broadcast_shapes(a.shape(), shape, "broadcast_to");
    ok = b == shape;
  }
  if (!ok) {
    throw_invalid("broadcast_to", "Unable to broadcast shape " + shape_str(a.shape()) + " to shape " +
                                      shape_str(shape) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "broadcast_to");
  return array(shape, a.dtype(), detail::make_pooled<Broadcast>(std::move(st)), {a});
}

}  // namespace braid

// ---- views and reshapes ----

namespace braid {

namespace {

int checked_ndim(const array& a, const char* op) {
  if (a.ndim() > static_cast<size_t>(std::numeric_limits<int>::max() / 2)) {
    throw_invalid(op, "Too many dimensions (" + std::to_string(a.ndim()) + ").");
  }
  return static_cast<int>(a.ndim());
}

}  // namespace

array squeeze(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  const int nd = checked_ndim(a, "squeeze");
  std::vector<int> ax = detail::normalize_axes(axes, nd, "squeeze");
  for (int i : ax) {
    if (a.shape()[i] != 1) {
      throw_invalid("squeeze", "Cannot squeeze axis " + std::to_string(i) + " of size " +
                                   std::to_string(a.shape()[i]) + " (only size 1).");
    }
  }
  Stream st = detail::op_stream(std::move(s), "squeeze");
  if (ax.empty()) return a;
  Shape shape;
  for (int i = 0, next = 0; i < nd; ++i) {
    if (next < static_cast<int>(ax.size()) && ax[next] == i) {
      ++next;
    } else {
      shape.push_back(a.shape()[i]);
    }
  }
  return array(std::move(shape), a.dtype(), detail::make_pooled<Squeeze>(std::move(st), std::move(ax)), {a});
}

array squeeze(const array& a, int axis, StreamOrDevice s) {
  return squeeze(a, std::vector<int>{axis}, std::move(s));
}

array squeeze(const array& a, StreamOrDevice s) {
  std::vector<int> axes;
  for (size_t i = 0; i < a.ndim(); ++i) {
    if (a.shape()[i] == 1) axes.push_back(static_cast<int>(i));
  }
  return squeeze(a, axes, std::move(s));
}

array expand_dims(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  const int nd = checked_ndim(a, "expand_dims");
  if (axes.size() > static_cast<size_t>(std::numeric_limits<int>::max() / 2)) {
    throw_invalid("expand_dims", "Too many axes.");
  }
  const int out_nd = nd + static_cast<int>(axes.size());
  std::vector<int> ax = detail::normalize_axes(axes, out_nd, "expand_dims");
  Stream st = detail::op_stream(std::move(s), "expand_dims");
  if (ax.empty()) return a;
  Shape shape(out_nd, 1);
  for (int i = 0, next = 0, src = 0; i < out_nd; ++i) {
    if (next < static_cast<int>(ax.size()) && ax[next] == i) {
      ++next;
    } else {
      shape[i] = a.shape()[src++];
    }
  }
  return array(std::move(shape), a.dtype(), detail::make_pooled<ExpandDims>(std::move(st), std::move(ax)),
               {a});
}

array expand_dims(const array& a, int axis, StreamOrDevice s) {
  return expand_dims(a, std::vector<int>{axis}, std::move(s));
}

array flatten(const array& a, int start_axis, int end_axis, StreamOrDevice s) {
  const int nd = checked_ndim(a, "flatten");
  if (nd == 0) return reshape(a, {1}, std::move(s));
  int start = start_axis < 0 ? start_axis + nd : start_axis;
  int end = end_axis < 0 ? end_axis + nd : end_axis;
  start = std::max(start, 0);
  end = std::min(end, nd - 1);
  if (end < start) throw_invalid("flatten", "start_axis must be less than or equal to end_axis.");
  if (start >= nd) throw_invalid("flatten", "Invalid start_axis " + std::to_string(start_axis) + ".");
  if (end < 0) throw_invalid("flatten", "Invalid end_axis " + std::to_string(end_axis) + ".");
  Stream st = detail::op_stream(std::move(s), "flatten");
  if (start == end) return a;
  Shape shape;
  for (int i = 0; i < start; ++i) shape.push_back(a.shape()[i]);
  shape.push_back(-1);
  for (int i = end + 1; i < nd; ++i) shape.push_back(a.shape()[i]);
  // -1 cannot be inferred when the array is empty: give the product itself.
  int64_t n = 1;
  for (int i = start; i <= end; ++i) n *= a.shape()[i];
  shape[start] = static_cast<int32_t>(n);  // at most the array's size or 0
  return reshape(a, std::move(shape), st);
}

array flatten(const array& a, StreamOrDevice s) { return flatten(a, 0, -1, std::move(s)); }

array unflatten(const array& a, int axis, Shape shape, StreamOrDevice s) {
  const int nd = checked_ndim(a, "unflatten");
  if (shape.empty()) throw_invalid("unflatten", "Shape to unflatten to cannot be empty.");
  const int ax = detail::normalize_axis(axis, nd, "unflatten");
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw_invalid("unflatten", "Can only infer one dimension.");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw_invalid("unflatten", "Invalid dimension " + std::to_string(shape[i]) + ".");
    } else {
      known = std::min<int64_t>(known * shape[i], int64_t{1} << 40);
    }
  }
  const int64_t n = a.shape()[ax];
  if (infer >= 0) {
    if (known == 0 || n % known != 0) {
      throw_invalid("unflatten", "Cannot infer a dimension of " + detail::shape_str(shape) + " for axis " +
                                     std::to_string(axis) + " of size " + std::to_string(n) + ".");
    }
    shape[infer] = static_cast<int32_t>(n / known);
  } else if (known != n) {
    throw_invalid("unflatten", "Cannot unflatten axis " + std::to_string(axis) + " of size " +
                                   std::to_string(n) + " into shape " + detail::shape_str(shape) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "unflatten");
  if (shape.size() == 1) return a;
  Shape out;
  for (int i = 0; i < ax; ++i) out.push_back(a.shape()[i]);
  for (int32_t d : shape) out.push_back(d);
  for (int i = ax + 1; i < nd; ++i) out.push_back(a.shape()[i]);
  return reshape(a, std::move(out), st);
}

array swapaxes(const array& a, int axis1, int axis2, StreamOrDevice s) {
  const int nd = checked_ndim(a, "swapaxes");
  const int a1 = detail::normalize_axis(axis1, nd, "swapaxes");
  const int a2 = detail::normalize_axis(axis2, nd, "swapaxes");
  std::vector<int> perm(nd);
  for (int i = 0; i < nd; ++i) perm[i] = i;
  std::swap(perm[a1], perm[a2]);
  Stream st = detail::op_stream(std::move(s), "swapaxes");
  return transpose(a, std::move(perm), st);
}

array moveaxis(const array& a, int source, int destination, StreamOrDevice s) {
  const int nd = checked_ndim(a, "moveaxis");
  const int src = detail::normalize_axis(source, nd, "moveaxis");
  const int dst = detail::normalize_axis(destination, nd, "moveaxis");
  std::vector<int> perm;
  for (int i = 0; i < nd; ++i) {
    if (i != src) perm.push_back(i);
  }
  perm.insert(perm.begin() + dst, src);
  Stream st = detail::op_stream(std::move(s), "moveaxis");
  return transpose(a, std::move(perm), st);
}

std::vector<array> broadcast_arrays(const std::vector<array>& inputs, StreamOrDevice s) {
  Shape shape;
  for (const array& in : inputs) shape = detail::broadcast_shapes(shape, in.shape(), "broadcast_arrays");
  Stream st = detail::op_stream(std::move(s), "broadcast_arrays");
  std::vector<array> out;
  out.reserve(inputs.size());
  for (const array& in : inputs) out.push_back(broadcast_to(in, shape, st));
  return out;
}

array tile(const array& arr, std::vector<int> reps, StreamOrDevice s) {
  for (int r : reps) {
    if (r < 0) throw_invalid("tile", "Repetitions must be non-negative (got " + std::to_string(r) + ").");
  }
  Shape shape = arr.shape();
  while (reps.size() < shape.size()) reps.insert(reps.begin(), 1);
  const size_t lead = reps.size() - shape.size();  // new leading axes of the array
  while (shape.size() < reps.size()) shape.insert(shape.begin(), 1);
  // arr with a unit axis before each repeated one (and the leading ones), broadcast over the
  // repetitions, then merged: one copy.
  std::vector<int> new_axes;
  Shape broad, final_shape;
  int pos = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (reps[i] != 1) {
      new_axes.push_back(pos++);
      broad.push_back(reps[i]);
    }
    if (i < lead) new_axes.push_back(pos);
    ++pos;
    broad.push_back(shape[i]);
    const int64_t n = int64_t{reps[i]} * shape[i];
    if (n > INT32_MAX) throw_invalid("tile", "The result's dimensions are too large.");
    final_shape.push_back(static_cast<int32_t>(n));
  }
  detail::checked_size(final_shape, arr.dtype(), "tile");
  Stream st = detail::op_stream(std::move(s), "tile");
  array x = broadcast_to(expand_dims(arr, new_axes, st), broad, st);
  return reshape(x, final_shape, st);
}

array repeat(const array& arr, int repeats, int axis, StreamOrDevice s) {
  const int nd = checked_ndim(arr, "repeat");
  const int ax = detail::normalize_axis(axis, nd, "repeat");
  if (repeats < 0) throw_invalid("repeat", "Number of repeats cannot be negative.");
  if (int64_t{repeats} * arr.shape()[ax] > INT32_MAX)
    throw_invalid("repeat", "The repeated axis is too large.");
  Stream st = detail::op_stream(std::move(s), "repeat");
  if (repeats == 1) return arr;
  Shape shape = arr.shape();
  shape.insert(shape.begin() + ax + 1, repeats);
  array out = broadcast_to(expand_dims(arr, ax + 1, st), shape, st);
  shape.erase(shape.begin() + ax + 1);
  shape[ax] *= repeats;
  return reshape(out, std::move(shape), st);
}

array repeat(const array& arr, int repeats, StreamOrDevice s) {
  if (repeats < 0) throw_invalid("repeat", "Number of repeats cannot be negative.");
  Stream st = detail::op_stream(std::move(s), "repeat");
  return repeat(flatten(arr, st), repeats, 0, st);
}

array as_strided(array a, Shape shape, Strides strides, size_t offset, StreamOrDevice s) {
  if (shape.size() != strides.size()) {
    throw_invalid("as_strided", "Got " + std::to_string(strides.size()) + " strides for shape " +
                                    detail::shape_str(shape) + ".");
  }
  const size_t out_size = detail::checked_size(shape, a.dtype(), "as_strided");
  // Every element the view reaches must lie inside `a` (MLX leaves this to the caller).
  if (out_size > 0) {
    int64_t lo = 0, hi = 0;
    bool overflow = offset > static_cast<size_t>(INT64_MAX);
    for (size_t i = 0; i < shape.size() && !overflow; ++i) {
      int64_t ext = 0;
      overflow = __builtin_mul_overflow(static_cast<int64_t>(shape[i] - 1), strides[i], &ext) ||
                 __builtin_add_overflow(ext < 0 ? lo : hi, ext, ext < 0 ? &lo : &hi);
    }
    const auto off = static_cast<int64_t>(offset);
    if (overflow || lo + off < 0 || hi > static_cast<int64_t>(a.size()) - 1 - off) {
      throw_invalid("as_strided",
                    "The view reaches elements outside the array of size " + std::to_string(a.size()) + ".");
    }
  }
  Stream st = detail::op_stream(std::move(s), "as_strided");
  array flat = reshape(a, {-1}, st);
  return array(std::move(shape), a.dtype(),
               detail::make_pooled<AsStrided>(st, std::move(strides), static_cast<int64_t>(offset)), {flat});
}

array copy(array a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "copy");
  Shape shape = a.shape();
  const Dtype dtype = a.dtype();  // read before `a` is moved into the inputs
  return array(std::move(shape), dtype, detail::make_pooled<Copy>(std::move(st)), {std::move(a)});
}

array contiguous(const array& a, bool allow_col_major, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "contiguous");
  return array(a.shape(), a.dtype(), detail::make_pooled<Contiguous>(std::move(st), allow_col_major), {a});
}

array view(const array& a, const Dtype& dtype, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "view");
  if (a.dtype() == dtype) return a;
  Shape shape = a.shape();
  const size_t ib = a.itemsize(), ob = dtype.size();
  if (a.ndim() == 0) {
    if (ib != ob) {
      throw_invalid("view", "Changing the type of a scalar is only allowed for types with the same size.");
    }
  } else if (ib < ob) {
    if (shape.back() % static_cast<int32_t>(ob / ib) != 0) {
      throw_invalid("view",
                    "When viewing as a larger dtype, the size in bytes of the last axis must be a "
                    "multiple of the requested type size.");
    }
    shape.back() /= static_cast<int32_t>(ob / ib);
  } else if (ib > ob) {
    if (static_cast<int64_t>(shape.back()) * static_cast<int64_t>(ib / ob) > INT32_MAX) {
      throw_invalid("view", "The last axis of the result is too large.");
    }
    shape.back() *= static_cast<int32_t>(ib / ob);
  }
  return array(std::move(shape), dtype, detail::make_pooled<View>(std::move(st)), {a});
}

array atleast_1d(const array& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "atleast_1d");
  return a.ndim() == 0 ? reshape(a, {1}, st) : a;
}

array atleast_2d(const array& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "atleast_2d");
  switch (a.ndim()) {
    case 0: return reshape(a, {1, 1}, st);
    case 1: return expand_dims(a, 0, st);
    default: return a;
  }
}

array atleast_3d(const array& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "atleast_3d");
  switch (a.ndim()) {
    case 0: return reshape(a, {1, 1, 1}, st);
    case 1: return expand_dims(a, std::vector<int>{0, 2}, st);
    case 2: return expand_dims(a, 2, st);
    default: return a;
  }
}

std::vector<array> atleast_1d(const std::vector<array>& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "atleast_1d");
  std::vector<array> out;
  for (const array& x : a) out.push_back(atleast_1d(x, st));
  return out;
}

std::vector<array> atleast_2d(const std::vector<array>& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "atleast_2d");
  std::vector<array> out;
  for (const array& x : a) out.push_back(atleast_2d(x, st));
  return out;
}

std::vector<array> atleast_3d(const std::vector<array>& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "atleast_3d");
  std::vector<array> out;
  for (const array& x : a) out.push_back(atleast_3d(x, st));
  return out;
}

array number_of_elements(const array& a, std::vector<int> axes, bool inverted, Dtype dtype,
                         StreamOrDevice s) {
  const int nd = checked_ndim(a, "number_of_elements");
  for (int& ax : axes) ax = detail::normalize_axis(ax, nd, "number_of_elements");
  Stream st = detail::op_stream(std::move(s), "number_of_elements");
  // A node only in a shapeless trace, where the count must follow each replay's input shape;
  // elsewhere the shape is known now.
  if (detail::in_dynamic_tracing()) {
    // (A bool count is the float count cast: arange kernels make no bool.)
    const Dtype node_dtype = dtype == bool_ ? float32 : dtype;
    array n(Shape{}, node_dtype, detail::make_pooled<NumberOfElements>(st, std::move(axes), inverted), {a});
    return astype(n, dtype, st);
  }
  return astype(array(NumberOfElements::count(a.shape(), axes, inverted), float64), dtype, st);
}

std::vector<array> depends(const std::vector<array>& inputs, const std::vector<array>& dependencies) {
  if (inputs.empty()) return {};
  Stream st = inputs[0].primitive_ptr() ? inputs[0].primitive().stream() : detail::op_stream({}, "depends");
  std::vector<array> out;
  out.reserve(inputs.size());
  for (const array& in : inputs) {
    std::vector<array> all{in};
    all.insert(all.end(), dependencies.begin(), dependencies.end());
    out.emplace_back(in.shape(), in.dtype(), detail::make_pooled<Depends>(st), std::move(all));
  }
  return out;
}

}  // namespace braid

// ---- diagonals ----

namespace braid {

array diagonal(const array& a, int offset, int axis1, int axis2, StreamOrDevice s) {
  const int nd = checked_ndim(a, "diagonal");
  if (nd < 2) {
    throw_invalid("diagonal",
                  "Array must have at least two dimensions, but got " + std::to_string(nd) + " dimensions.");
  }
  const int a1 = detail::axis_in_range(axis1, nd, "diagonal");
  const int a2 = detail::axis_in_range(axis2, nd, "diagonal");
  if (a1 == a2) throw_invalid("diagonal", "axis1 and axis2 cannot be the same axis.");
  const int64_t off = offset;
  const int64_t len = std::max<int64_t>(0, std::min<int64_t>(a.shape()[a1] - std::max<int64_t>(-off, 0),
                                                             a.shape()[a2] - std::max<int64_t>(off, 0)));
  Shape shape;
  for (int i = 0; i < nd; ++i) {
    if (i != a1 && i != a2) shape.push_back(a.shape()[i]);
  }
  shape.push_back(static_cast<int32_t>(len));
  Stream st = detail::op_stream(std::move(s), "diagonal");
  return array(std::move(shape), a.dtype(), detail::make_pooled<Diagonal>(std::move(st), offset, a1, a2),
               {a});
}

array diag(const array& a, int k, StreamOrDevice s) {
  if (a.ndim() == 2) return diagonal(a, k, 0, 1, std::move(s));
  if (a.ndim() != 1) {
    throw_invalid("diag",
                  "array must be 1-D or 2-D, got array with " + std::to_string(a.ndim()) + " dimensions.");
  }
  const int64_t n64 = int64_t{a.shape()[0]} + std::abs(int64_t{k});
  if (n64 > std::numeric_limits<int32_t>::max()) throw_invalid("diag", "The result is too large.");
  const auto n = static_cast<int32_t>(n64);
  detail::checked_size({n, n}, a.dtype(), "diag");
  Stream st = detail::op_stream(std::move(s), "diag");
  if (n == 0) return zeros({0, 0}, a.dtype(), st);
  // Row i of diagonal k >= 0 holds a[i]; column j of diagonal k < 0 holds a[j].
  array vals = pad(a, std::pair<int, int>{0, n - a.shape()[0]}, array(0, a.dtype()), "constant", st);
  vals = reshape(vals, k >= 0 ? Shape{n, 1} : Shape{1, n}, st);
  return where(eye(n, n, k, bool_, st), vals, array(0, a.dtype()), st);
}

array trace(const array& a, int offset, int axis1, int axis2, Dtype dtype, StreamOrDevice s) {
  const int nd = checked_ndim(a, "trace");
  if (nd < 2) {
    throw_invalid("trace",
                  "Array must have at least two dimensions, but got " + std::to_string(nd) + " dimensions.");
  }
  const int a1 = detail::normalize_axis(axis1, nd, "trace");
  const int a2 = detail::normalize_axis(axis2, nd, "trace");
  if (a1 == a2) throw_invalid("trace", "axis1 and axis2 cannot be the same axis.");
  Stream st = detail::op_stream(std::move(s), "trace");
  return sum(astype(diagonal(a, offset, a1, a2, st), dtype, st), -1, false, st);
}

array trace(const array& a, int offset, int axis1, int axis2, StreamOrDevice s) {
  return trace(a, offset, axis1, axis2, a.dtype(), std::move(s));
}

array trace(const array& a, StreamOrDevice s) { return trace(a, 0, 0, 1, std::move(s)); }

}  // namespace braid
