// Indexing ops: take, take_along_axis, put_along_axis, scatter_add_axis, gather, the scatters
// and masked_scatter, on the primitives Gather and Scatter (as in MLX), GatherAxis
// (take_along_axis) and MaskedScatter. put_along_axis and scatter_add_axis index every axis,
// with aranges for the others.
#include <algorithm>
#include <numeric>
#include <set>

#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

namespace {

std::string str(int64_t v) { return std::to_string(v); }

void check_index_dtype(const array& idx, const char* op) {
  if (!is_integral(idx.dtype()) || idx.dtype() == bool_) {
    throw_invalid(
        op, "Got indices with invalid dtype " + dtype_name(idx.dtype()) + ". Indices must be integral.");
  }
}

// Axes must be distinct and in [0, ndim) (not normalized, as MLX), one per index array.
void check_axes(const array& a, const std::vector<array>& indices, const std::vector<int>& axes,
                const char* op) {
  if (indices.size() > a.ndim()) {
    throw_invalid(op, "Too many index arrays. Got " + str(indices.size()) + " index arrays for input with " +
                          str(a.ndim()) + " dimensions.");
  }
  std::set<int> dims(axes.begin(), axes.end());
  if (dims.size() != axes.size()) throw_invalid(op, "Repeat axes not allowed.");
  if (!dims.empty() && (*dims.begin() < 0 || *dims.rbegin() >= static_cast<int>(a.ndim()))) {
    throw_invalid(op, "Axes don't match array dimensions.");
  }
  if (indices.size() != axes.size())
    throw_invalid(op, "Number of index arrays does not match number of axes.");
  for (const array& idx : indices) check_index_dtype(idx, op);
}

Shape broadcast_all(const std::vector<array>& arrays, const char* op) {
  Shape out;
  for (size_t i = 0; i < arrays.size(); ++i) {
    out = i == 0 ? arrays[i].shape() : detail::broadcast_shapes(out, arrays[i].shape(), op);
  }
  return out;
}

std::vector<array> broadcast_each(const std::vector<array>& arrays, const Shape& shape, const Stream& st) {
  std::vector<array> out;
  out.reserve(arrays.size());
  for (const array& x : arrays) out.push_back(broadcast_to(x, shape, st));
  return out;
}

array scatter_node(const array& a, const std::vector<array>& indices, const array& updates,
                   const std::vector<int>& axes, Scatter::ReduceType reduce, const char* op,
                   StreamOrDevice s) {
  check_axes(a, indices, axes, op);
  const Shape idx_shape = broadcast_all(indices, op);
  if (updates.ndim() != a.ndim() + idx_shape.size()) {
    throw_invalid(op, "Updates with " + str(updates.ndim()) +
                          " dimensions does not match the sum of the array (" + str(a.ndim()) +
                          ") and indices (" + str(idx_shape.size()) + ") dimensions.");
  }
  for (size_t i = 0; i < idx_shape.size(); ++i) {
    if (updates.shape()[i] != idx_shape[i]) {
      throw_invalid(op, "Update shape " + shape_str(updates.shape()) +
                            " is not valid for broadcasted index shape " + shape_str(idx_shape) + ".");
    }
  }
  for (size_t i = 0; i < a.ndim(); ++i) {
    if (updates.shape()[i + idx_shape.size()] > a.shape()[i]) {
      throw_invalid(op, "Updates with shape " + shape_str(updates.shape()) +
                            " are too large for array with shape " + shape_str(a.shape()) + ".");
    }
  }
  Stream st = detail::op_stream(std::move(s), op);
  std::vector<array> inputs = broadcast_each(indices, idx_shape, st);
  inputs.insert(inputs.begin(), a);
  inputs.push_back(astype(updates, a.dtype(), st));
  return array(a.shape(), a.dtype(), detail::make_pooled<Scatter>(st, reduce, axes), std::move(inputs));
}

// One index array per axis of a: `indices` on `axis`, aranges (shaped to broadcast) elsewhere.
std::vector<array> along_axis_indices(const array& a, const array& indices, int axis, const Stream& st) {
  std::vector<array> nd;
  const int nd_a = static_cast<int>(a.ndim());
  for (int i = 0; i < nd_a; ++i) {
    if (i == axis) {
      nd.push_back(indices);
    } else {
      Shape shape(a.ndim(), 1);
      shape[i] = a.shape()[i];
      nd.push_back(reshape(arange(a.shape()[i], st), std::move(shape), st));
    }
  }
  return nd;
}

int check_along_axis(const array& a, const array& indices, int axis, const char* op) {
  const int nd = static_cast<int>(a.ndim());
  if (axis + nd < 0 || axis >= nd) {
    throw_invalid(op, "Received invalid axis " + str(axis) + " for array with " + str(nd) + " dimensions.");
  }
  if (indices.ndim() != a.ndim()) {
    throw_invalid(op, "Indices of dimension " + str(indices.ndim()) + " does not match array of dimension " +
                          str(nd) + ".");
  }
  check_index_dtype(indices, op);
  return axis < 0 ? axis + nd : axis;
}

array put_along_axis_impl(const array& a, const array& indices, const array& values, int axis,
                          Scatter::ReduceType reduce, const char* op, StreamOrDevice s) {
  axis = check_along_axis(a, indices, axis, op);
  Stream st = detail::op_stream(std::move(s), op);
  // As MLX: leading size-1 dimensions of values beyond the index rank are dropped, then the
  // indices and the values broadcast together.
  array vals = values;
  if (vals.ndim() > a.ndim()) {
    const size_t extra = vals.ndim() - a.ndim();
    for (size_t i = 0; i < extra; ++i) {
      if (vals.shape()[i] != 1) {
        throw_invalid(
            op, "Values of shape " + shape_str(values.shape()) + " have more dimensions than the indices.");
      }
    }
    vals = reshape(vals, Shape(vals.shape().begin() + extra, vals.shape().end()), st);
  }
  std::vector<array> nd = along_axis_indices(a, indices, axis, st);
  const Shape idx_shape = detail::broadcast_shapes(broadcast_all(nd, op), vals.shape(), op);
  if (a.size() == 0) return a;
  nd = broadcast_each(nd, idx_shape, st);
  array update = astype(broadcast_to(vals, idx_shape, st), a.dtype(), st);
  Shape update_shape = idx_shape;
  update_shape.resize(idx_shape.size() + a.ndim(), 1);
  update = reshape(update, std::move(update_shape), st);
  std::vector<int> dims(a.ndim());
  std::iota(dims.begin(), dims.end(), 0);
  return scatter_node(a, nd, update, dims, reduce, op, st);
}

}  // namespace

array gather(const array& a, const std::vector<array>& indices, const std::vector<int>& axes,
             const Shape& slice_sizes, StreamOrDevice s) {
  check_axes(a, indices, axes, "gather");
  if (slice_sizes.size() != a.ndim()) {
    throw_invalid("gather", "Got slice_sizes with size " + str(slice_sizes.size()) + " for array with " +
                                str(a.ndim()) + " dimensions.");
  }
  for (size_t i = 0; i < a.ndim(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > a.shape()[i]) {
      throw_invalid("gather", "Slice sizes must be in [0, a.shape(i)]. Got " + shape_str(slice_sizes) +
                                  " for array with shape " + shape_str(a.shape()) + ".");
    }
  }
  Shape out_shape = broadcast_all(indices, "gather");
  out_shape.insert(out_shape.end(), slice_sizes.begin(), slice_sizes.end());
  detail::checked_size(out_shape, a.dtype(), "gather");
  Stream st = detail::op_stream(std::move(s), "gather");
  std::vector<array> inputs = broadcast_each(indices, broadcast_all(indices, "gather"), st);
  inputs.insert(inputs.begin(), a);
  return array(std::move(out_shape), a.dtype(), detail::make_pooled<Gather>(st, axes, slice_sizes),
               std::move(inputs));
}

array gather(const array& a, const array& indices, int axis, const Shape& slice_sizes, StreamOrDevice s) {
  return gather(a, std::vector<array>{indices}, std::vector<int>{axis}, slice_sizes, std::move(s));
}

array take(const array& a, const array& indices, int axis, StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  if (axis + nd < 0 || axis >= nd) {
    throw_invalid("take", "Invalid axis " + str(axis) + " for array with " + str(nd) + " dimensions.");
  }
  if (a.size() == 0 && indices.size() != 0) {
    throw_invalid("take", "Cannot do a non-empty take from an array with zero elements.");
  }
  check_index_dtype(indices, "take");
  axis = axis < 0 ? axis + nd : axis;
  Stream st = detail::op_stream(std::move(s), "take");
  Shape slice_sizes = a.shape();
  slice_sizes[axis] = indices.size() > 0 ? 1 : 0;
  array out = gather(a, indices, axis, slice_sizes, st);
  // Drop the gathered axis' slice dimension, then move the index dimensions to `axis`.
  Shape squeezed = out.shape();
  squeezed.erase(squeezed.begin() + indices.ndim() + axis);
  out = reshape(out, std::move(squeezed), st);
  if (axis == 0 || indices.ndim() == 0) return out;
  const int ni = static_cast<int>(indices.ndim());
  std::vector<int> perm;
  for (int i = 0; i < axis; ++i) perm.push_back(ni + i);
  for (int i = 0; i < ni; ++i) perm.push_back(i);
  for (int i = ni + axis; i < static_cast<int>(out.ndim()); ++i) perm.push_back(i);
  return transpose(out, std::move(perm), st);
}

array take(const array& a, int index, int axis, StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  if (axis + nd < 0 || axis >= nd) {
    throw_invalid("take", "Invalid axis " + str(axis) + " for array with " + str(nd) + " dimensions.");
  }
  if (a.size() == 0) throw_invalid("take", "Cannot do a non-empty take from an array with zero elements.");
  axis = axis < 0 ? axis + nd : axis;
  // MLX slices [index, index + 1) with NumPy's slice rules and squeezes the axis: an index
  // of -1 (or out of range) makes an empty slice, which cannot be squeezed.
  const int64_t n = a.shape()[axis];
  int64_t start = index < 0 ? int64_t{index} + n : index;
  int64_t stop = int64_t{index} + 1 < 0 ? int64_t{index} + 1 + n : int64_t{index} + 1;
  start = std::clamp<int64_t>(start, 0, n);
  stop = std::clamp<int64_t>(stop, 0, n);
  if (stop - start != 1) {
    throw_invalid("take", "Index " + str(index) + " selects no element along axis " + str(axis) +
                              " of size " + str(n) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "take");
  Shape slice_sizes = a.shape();
  slice_sizes[axis] = 1;
  array out = gather(a, array(static_cast<int32_t>(start)), axis, slice_sizes, st);
  Shape squeezed = a.shape();
  squeezed.erase(squeezed.begin() + axis);
  return reshape(out, std::move(squeezed), st);
}

array take(const array& a, const array& indices, StreamOrDevice s) {
  check_index_dtype(indices, "take");
  Stream st = detail::op_stream(std::move(s), "take");
  return take(reshape(a, {-1}, st), indices, 0, st);
}

array take(const array& a, int index, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "take");
  return take(reshape(a, {-1}, st), index, 0, st);
}

array take_along_axis(const array& a, const array& indices, int axis, StreamOrDevice s) {
  axis = check_along_axis(a, indices, axis, "take_along_axis");
  Stream st = detail::op_stream(std::move(s), "take_along_axis");
  // a and the indices broadcast together along every axis but `axis` (as MLX).
  Shape a_rest = a.shape(), idx_rest = indices.shape();
  a_rest[axis] = idx_rest[axis] = 1;
  const Shape rest = detail::broadcast_shapes(a_rest, idx_rest, "take_along_axis");
  Shape idx_shape = rest, src_shape = rest;
  idx_shape[axis] = indices.shape()[axis];
  src_shape[axis] = a.shape()[axis];
  if (a.size() == 0) {
    if (detail::checked_size(idx_shape, a.dtype(), "take_along_axis") != 0) {
      throw_invalid("take_along_axis", "Cannot do a non-empty take from an array with zero elements.");
    }
    return zeros(idx_shape, a.dtype(), st);
  }
  detail::checked_size(idx_shape, a.dtype(), "take_along_axis");
  std::vector<array> inputs{broadcast_to(a, src_shape, st), broadcast_to(indices, idx_shape, st)};
  return array(std::move(idx_shape), a.dtype(), detail::make_pooled<GatherAxis>(st, axis), std::move(inputs));
}

array put_along_axis(const array& a, const array& indices, const array& values, int axis, StreamOrDevice s) {
  return put_along_axis_impl(a, indices, values, axis, Scatter::ReduceType::None, "put_along_axis",
                             std::move(s));
}

array scatter_add_axis(const array& a, const array& indices, const array& values, int axis,
                       StreamOrDevice s) {
  return put_along_axis_impl(a, indices, values, axis, Scatter::ReduceType::Sum, "scatter_add_axis",
                             std::move(s));
}

#define BRAID_SCATTER_OPS(fn, reduce)                                                                \
  array fn(const array& a, const std::vector<array>& indices, const array& updates,                  \
           const std::vector<int>& axes, StreamOrDevice s) {                                         \
    return scatter_node(a, indices, updates, axes, Scatter::ReduceType::reduce, #fn, std::move(s));  \
  }                                                                                                  \
  array fn(const array& a, const array& indices, const array& updates, int axis, StreamOrDevice s) { \
    return fn(a, std::vector<array>{indices}, updates, std::vector<int>{axis}, std::move(s));        \
  }
BRAID_SCATTER_OPS(scatter, None)
BRAID_SCATTER_OPS(scatter_add, Sum)
BRAID_SCATTER_OPS(scatter_prod, Prod)
BRAID_SCATTER_OPS(scatter_max, Max)
BRAID_SCATTER_OPS(scatter_min, Min)
#undef BRAID_SCATTER_OPS

array masked_scatter(const array& a, const array& mask, const array& src, StreamOrDevice s) {
  if (mask.dtype() != bool_) throw_invalid("masked_scatter", "The mask has to be boolean.");
  if (mask.ndim() == 0) throw_invalid("masked_scatter", "Scalar masks are not supported.");
  if (mask.ndim() > a.ndim()) {
    throw_invalid("masked_scatter", "The mask cannot have more dimensions than the target.");
  }
  for (size_t i = 0; i < mask.ndim(); ++i) {
    if (mask.shape()[i] != a.shape()[i] && mask.shape()[i] != 1) {
      throw_invalid("masked_scatter", "The mask of shape " + shape_str(mask.shape()) +
                                          " does not match the leading dimensions of the target " +
                                          shape_str(a.shape()) + ".");
    }
  }
  Stream st = detail::op_stream(std::move(s), "masked_scatter");
  Shape padded = mask.shape();
  padded.resize(a.ndim(), 1);
  array full_mask = broadcast_to(reshape(mask, std::move(padded), st), a.shape(), st);
  array flat_src = astype(reshape(src, {-1}, st), a.dtype(), st);
  return array(a.shape(), a.dtype(), detail::make_pooled<MaskedScatter>(st), {a, full_mask, flat_src});
}

}  // namespace braid
