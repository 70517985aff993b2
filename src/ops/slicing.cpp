// slice, slice_update (and its combining forms), split, concatenate, stack, pad, roll,
// diagonal, diag, trace. Slices, splits and diagonals are views; the rest copy each piece into
// a region of the output.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "braid/ops.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

namespace {

struct NormalizedSlice {
  Shape start;
  Shape strides;
  Shape shape;
  bool negative_strides = false;
};

// NumPy's slice normalization, per axis: negative bounds count from the end, then clamp.
NormalizedSlice normalize_slice(const array& a, const Shape& start, const Shape& stop, const Shape& strides,
                                const char* op) {
  if (start.size() != a.ndim() || stop.size() != a.ndim() || strides.size() != a.ndim()) {
    throw_invalid(op, "Invalid number of indices or strides for array with dimension " +
                          std::to_string(a.ndim()) + ".");
  }
  NormalizedSlice r{start, strides, a.shape(), false};
  for (size_t i = 0; i < a.ndim(); ++i) {
    const int64_t n = a.shape()[i];
    const int64_t step = strides[i];
    if (step == 0) throw_invalid(op, "Slice strides cannot be 0.");
    int64_t b = start[i] < 0 ? start[i] + n : start[i];
    int64_t e = stop[i] < 0 ? stop[i] + n : stop[i];
    int64_t len;
    if (step < 0) {
      r.negative_strides = true;
      b = std::min(b, n - 1);
      e = std::max<int64_t>(e, -1);
      e = std::min(e, b);
      len = (b - e + (-step) - 1) / (-step);
    } else {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      e = std::max(e, b);
      len = (e - b + step - 1) / step;
    }
    // An empty slice may start anywhere; keep it in range so its (unused) offset is too.
    r.start[i] = static_cast<int32_t>(len == 0 ? 0 : b);
    r.shape[i] = static_cast<int32_t>(len);
    if (len <= 1) r.strides[i] = 1;
  }
  return r;
}

void check_integer_starts(const array& start, size_t naxes, const char* op) {
  if (!issubdtype(start.dtype(), integer)) throw_invalid(op, "Start indices must be integers.");
  if (start.ndim() > 1) throw_invalid(op, "Start indices must be a 0-d or 1-d array.");
  if (start.size() != naxes) throw_invalid(op, "Number of starting indices does not match number of axes.");
}

}  // namespace

array slice(const array& a, Shape start, Shape stop, Shape strides, StreamOrDevice s) {
  NormalizedSlice n = normalize_slice(a, start, stop, strides, "slice");
  Stream st = detail::op_stream(std::move(s), "slice");
  if (!n.negative_strides && n.shape == a.shape()) return a;
  return array(std::move(n.shape), a.dtype(),
               detail::make_pooled<Slice>(std::move(st), std::move(n.start), std::move(n.strides)), {a});
}

array slice(const array& a, Shape start, Shape stop, StreamOrDevice s) {
  return slice(a, std::move(start), std::move(stop), Shape(a.ndim(), 1), std::move(s));
}

array slice(const array& a, const array& start, std::vector<int> axes, Shape slice_size, StreamOrDevice s) {
  if (slice_size.size() != a.ndim()) {
    throw_invalid("slice", "Invalid slice size " + shape_str(slice_size) + " for array with dimension " +
                               std::to_string(a.ndim()) + ".");
  }
  check_integer_starts(start, axes.size(), "slice");
  for (size_t i = 0; i < a.ndim(); ++i) {
    if (slice_size[i] < 0 || slice_size[i] > a.shape()[i]) {
      throw_invalid("slice", "Invalid slice size " + shape_str(slice_size) + " for array with shape " +
                                 shape_str(a.shape()) + ".");
    }
  }
  const std::vector<int> sorted = detail::normalize_axes(axes, static_cast<int>(a.ndim()), "slice");
  for (auto& ax : axes) ax = detail::normalize_axis(ax, static_cast<int>(a.ndim()), "slice");
  Stream st = detail::op_stream(std::move(s), "slice");
  array starts = astype(start, int64, st);
  return array(std::move(slice_size), a.dtype(), detail::make_pooled<DynamicSlice>(st, std::move(axes)),
               {a, starts});
}

array slice_update(const array& src, const array& update, Shape start, Shape stop, Shape strides,
                   StreamOrDevice s) {
  NormalizedSlice n = normalize_slice(src, start, stop, strides, "slice_update");
  if (update.ndim() > n.shape.size() ||
      detail::broadcast_shapes(update.shape(), n.shape, "slice_update") != n.shape) {
    throw_invalid("slice_update", "Update of shape " + shape_str(update.shape()) +
                                      " cannot be broadcast to the slice's shape " + shape_str(n.shape) +
                                      ".");
  }
  Stream st = detail::op_stream(std::move(s), "slice_update");
  array upd = broadcast_to(update, n.shape, st);
  // A slice that covers the source is the update, except in a shapeless trace (the next
  // source may be larger).
  if (!n.negative_strides && n.shape == src.shape() && !detail::in_dynamic_tracing()) {
    return astype(upd, src.dtype(), st);
  }
  return array(src.shape(), src.dtype(),
               detail::make_pooled<SliceUpdate>(st, std::move(n.start), std::move(n.strides)), {src, upd});
}

array slice_update(const array& src, const array& update, Shape start, Shape stop, StreamOrDevice s) {
  return slice_update(src, update, std::move(start), std::move(stop), Shape(src.ndim(), 1), std::move(s));
}

array slice_update(const array& src, const array& update, const array& start, std::vector<int> axes,
                   StreamOrDevice s) {
  check_integer_starts(start, axes.size(), "slice_update");
  const int nd = static_cast<int>(src.ndim());
  detail::normalize_axes(axes, nd, "slice_update");
  for (auto& ax : axes) ax = detail::normalize_axis(ax, nd, "slice_update");
  if (update.ndim() > src.ndim()) {
    throw_invalid("slice_update", "Update of shape " + shape_str(update.shape()) +
                                      " has more dimensions than the array of shape " +
                                      shape_str(src.shape()) + ".");
  }
  // Missing leading axes of the update broadcast over src (or are 1 where they are sliced).
  Shape box = src.shape();
  const size_t lead = src.ndim() - update.ndim();
  for (size_t i = 0; i < src.ndim(); ++i) {
    const bool named = std::find(axes.begin(), axes.end(), static_cast<int>(i)) != axes.end();
    if (i < lead) {
      if (named) box[i] = 1;
    } else {
      const int32_t u = update.shape()[i - lead];
      box[i] = (u == 1 && !named) ? src.shape()[i] : u;
      if (box[i] > src.shape()[i]) {
        throw_invalid("slice_update", "Update of shape " + shape_str(update.shape()) +
                                          " does not fit in the array of shape " + shape_str(src.shape()) +
                                          ".");
      }
    }
  }
  Stream st = detail::op_stream(std::move(s), "slice_update");
  array upd = broadcast_to(astype(update, src.dtype(), st), box, st);
  array starts = astype(start, int64, st);
  return array(src.shape(), src.dtype(), detail::make_pooled<DynamicSliceUpdate>(st, std::move(axes)),
               {src, upd, starts});
}

namespace {

using Combine = array (*)(const array&, const array&, StreamOrDevice);

// src with the slice combined with update: the slice, combined, written back.
array slice_update_with(const array& src, const array& update, const Shape& start, const Shape& stop,
                        const Shape& strides, StreamOrDevice s, Combine combine, const char* op) {
  NormalizedSlice n = normalize_slice(src, start, stop, strides, op);
  if (update.ndim() > n.shape.size() || detail::broadcast_shapes(update.shape(), n.shape, op) != n.shape) {
    throw_invalid(op, "Update of shape " + shape_str(update.shape()) +
                          " cannot be broadcast to the slice's shape " + shape_str(n.shape) + ".");
  }
  Stream st = detail::op_stream(std::move(s), op);
  array upd = astype(update, src.dtype(), st);
  if (!n.negative_strides && n.shape == src.shape()) return astype(combine(src, upd, st), src.dtype(), st);
  array part = combine(slice(src, start, stop, strides, st), upd, st);
  return slice_update(src, astype(part, src.dtype(), st), start, stop, strides, st);
}

}  // namespace

#define BRAID_SLICE_UPDATE_COMBINE(NAME, FN)                                                           \
  array NAME(const array& src, const array& update, Shape start, Shape stop, Shape strides,            \
             StreamOrDevice s) {                                                                       \
    return slice_update_with(src, update, start, stop, strides, std::move(s), FN, #NAME);              \
  }                                                                                                    \
  array NAME(const array& src, const array& update, Shape start, Shape stop, StreamOrDevice s) {       \
    return slice_update_with(src, update, start, stop, Shape(src.ndim(), 1), std::move(s), FN, #NAME); \
  }

BRAID_SLICE_UPDATE_COMBINE(slice_update_add, add)
BRAID_SLICE_UPDATE_COMBINE(slice_update_prod, multiply)
BRAID_SLICE_UPDATE_COMBINE(slice_update_max, maximum)
BRAID_SLICE_UPDATE_COMBINE(slice_update_min, minimum)
#undef BRAID_SLICE_UPDATE_COMBINE

std::vector<array> split(const array& a, const Shape& indices, int axis, StreamOrDevice s) {
  if (a.ndim() == 0) throw_invalid("split", "Cannot split a 0-d array.");
  const int ax = detail::normalize_axis(axis, static_cast<int>(a.ndim()), "split");
  Stream st = detail::op_stream(std::move(s), "split");
  if (indices.empty()) return {a};
  std::vector<array> out;
  Shape start(a.ndim(), 0), stop = a.shape();
  for (size_t i = 0; i <= indices.size(); ++i) {
    stop[ax] = i < indices.size() ? indices[i] : a.shape()[ax];
    out.push_back(slice(a, start, stop, st));
    start[ax] = stop[ax];
  }
  return out;
}

std::vector<array> split(const array& a, const Shape& indices, StreamOrDevice s) {
  return split(a, indices, 0, std::move(s));
}

std::vector<array> split(const array& a, int num_splits, int axis, StreamOrDevice s) {
  if (a.ndim() == 0) throw_invalid("split", "Cannot split a 0-d array.");
  const int ax = detail::normalize_axis(axis, static_cast<int>(a.ndim()), "split");
  if (num_splits <= 0)
    throw_invalid("split", "Number of splits must be positive (got " + std::to_string(num_splits) + ").");
  const int32_t n = a.shape()[ax];
  if (n % num_splits != 0) {
    throw_invalid("split", "Array split does not result in sub arrays with equal size: axis " +
                               std::to_string(axis) + " of size " + std::to_string(n) + " into " +
                               std::to_string(num_splits) + " pieces.");
  }
  Shape indices;
  for (int i = 1; i < num_splits; ++i) indices.push_back(static_cast<int32_t>(int64_t{n} / num_splits * i));
  return split(a, indices, ax, std::move(s));
}

std::vector<array> split(const array& a, int num_splits, StreamOrDevice s) {
  return split(a, num_splits, 0, std::move(s));
}

array concatenate(std::vector<array> arrays, int axis, StreamOrDevice s) {
  if (arrays.empty()) throw_invalid("concatenate", "No arrays provided for concatenation.");
  const size_t nd = arrays[0].ndim();
  if (nd == 0) throw_invalid("concatenate", "Cannot concatenate 0-d arrays.");
  const int ax = detail::normalize_axis(axis, static_cast<int>(nd), "concatenate");
  Shape shape = arrays[0].shape();
  int64_t total = 0;
  Dtype dtype = arrays[0].dtype();
  for (const array& x : arrays) {
    if (x.ndim() != nd) {
      throw_invalid("concatenate", "All the input arrays must have the same number of dimensions (got " +
                                       std::to_string(nd) + " and " + std::to_string(x.ndim()) + ").");
    }
    for (size_t i = 0; i < nd; ++i) {
      if (static_cast<int>(i) != ax && x.shape()[i] != shape[i]) {
        throw_invalid("concatenate",
                      "All the input array dimensions must match exactly except for the "
                      "concatenation axis; got shapes " +
                          shape_str(shape) + " and " + shape_str(x.shape()) + ".");
      }
    }
    total += x.shape()[ax];
    dtype = promote_types(dtype, x.dtype());
  }
  if (total > std::numeric_limits<int32_t>::max())
    throw_invalid("concatenate", "The result's axis is too large.");
  shape[ax] = static_cast<int32_t>(total);
  detail::checked_size(shape, dtype, "concatenate");
  Stream st = detail::op_stream(std::move(s), "concatenate");
  if (arrays.size() == 1) return arrays[0];
  return array(std::move(shape), dtype, detail::make_pooled<Concatenate>(std::move(st), ax),
               std::move(arrays));
}

array concatenate(std::vector<array> arrays, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "concatenate");
  for (auto& x : arrays) x = flatten(x, st);
  return concatenate(std::move(arrays), 0, st);
}

array stack(const std::vector<array>& arrays, int axis, StreamOrDevice s) {
  if (arrays.empty()) throw_invalid("stack", "No arrays provided for stacking.");
  for (const array& x : arrays) {
    if (x.shape() != arrays[0].shape()) throw_invalid("stack", "All arrays must have the same shape.");
  }
  const int ax = detail::normalize_axis(axis, static_cast<int>(arrays[0].ndim()) + 1, "stack");
  if (arrays.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw_invalid("stack", "Too many arrays.");
  }
  Stream st = detail::op_stream(std::move(s), "stack");
  std::vector<array> expanded;
  expanded.reserve(arrays.size());
  for (const array& x : arrays) expanded.push_back(expand_dims(x, ax, st));
  if (expanded.size() == 1) return expanded[0];
  return concatenate(std::move(expanded), ax, st);
}

array stack(const std::vector<array>& arrays, StreamOrDevice s) { return stack(arrays, 0, std::move(s)); }

std::vector<array> unstack(const array& a, int axis, StreamOrDevice s) {
  if (a.ndim() == 0) throw_invalid("unstack", "Cannot unstack a 0-dimensional array.");
  const int ax = detail::normalize_axis(axis, static_cast<int>(a.ndim()), "unstack");
  Stream st = detail::op_stream(std::move(s), "unstack");
  std::vector<array> out;
  if (a.shape()[ax] == 0) return out;
  for (const array& piece : split(a, a.shape()[ax], ax, st)) out.push_back(squeeze(piece, ax, st));
  return out;
}

array flip(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  Shape start(nd, 0), stop = a.shape(), strides(nd, 1);
  for (int axis : axes) {
    const int i = detail::normalize_axis(axis, nd, "flip");
    if (strides[i] == -1) throw_invalid("flip", "Received duplicate axis " + std::to_string(axis) + ".");
    start[i] = -1;  // the last element; the stop lies before the first
    stop[i] = -a.shape()[i] - 1;
    strides[i] = -1;
  }
  return slice(a, std::move(start), std::move(stop), std::move(strides), std::move(s));
}

array flip(const array& a, int axis, StreamOrDevice s) {
  return flip(a, std::vector<int>{axis}, std::move(s));
}

array flip(const array& a, StreamOrDevice s) {
  std::vector<int> axes(a.ndim());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int>(i);
  return flip(a, axes, std::move(s));
}

namespace {

// Edge padding: each padded axis gets copies of its first and last slices.
array edge_pad(const array& a, const std::vector<int>& axes, const Shape& low, const Shape& high,
               const Stream& st) {
  array out = a;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int ax = axes[i];
    if (low[i] == 0 && high[i] == 0) continue;
    std::vector<array> parts;
    Shape start(out.ndim(), 0), stop = out.shape();
    if (low[i] > 0) {
      stop[ax] = 1;
      Shape shape = out.shape();
      shape[ax] = low[i];
      parts.push_back(broadcast_to(slice(out, start, stop, st), shape, st));
    }
    parts.push_back(out);
    if (high[i] > 0) {
      start[ax] = out.shape()[ax] - 1;
      stop[ax] = out.shape()[ax];
      Shape shape = out.shape();
      shape[ax] = high[i];
      parts.push_back(broadcast_to(slice(out, start, stop, st), shape, st));
    }
    out = concatenate(std::move(parts), ax, st);
  }
  return out;
}

// Reflect and symmetric padding (NumPy's): each position of a padded axis reads the element its
// mirror images map it to, the reflection repeating for pads longer than the axis. Reflect
// mirrors about the edge elements (period 2(n - 1)), symmetric about the edges (period 2n).
array mirror_pad(const array& a, const std::vector<int>& axes, const Shape& low, const Shape& high,
                 bool symmetric, const Stream& st) {
  array out = a;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (low[i] == 0 && high[i] == 0) continue;
    const int64_t n = out.shape()[axes[i]];
    const int64_t period = symmetric ? 2 * n : 2 * (n - 1);
    std::vector<int32_t> index;
    index.reserve(static_cast<size_t>(n + low[i] + high[i]));
    for (int64_t p = -int64_t{low[i]}; p < n + high[i]; ++p) {
      int64_t j = 0;  // an axis of one element reflects onto itself
      if (period > 0) {
        j = p % period;
        if (j < 0) j += period;
        if (j >= n) j = symmetric ? period - 1 - j : period - j;
      }
      index.push_back(static_cast<int32_t>(j));
    }
    const auto count = static_cast<int32_t>(index.size());
    out = take(out, array(index.begin(), Shape{count}, int32), axes[i], st);
  }
  return out;
}

}  // namespace

array pad(const array& a, const std::vector<int>& axes, const Shape& low_pad_size, const Shape& high_pad_size,
          const array& pad_value, const std::string& mode, StreamOrDevice s) {
  if (axes.size() != low_pad_size.size() || axes.size() != high_pad_size.size()) {
    throw_invalid("pad", "Invalid number of padding sizes passed to pad with axes of size " +
                             std::to_string(axes.size()) + ".");
  }
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "symmetric") {
    throw_invalid("pad", "Invalid padding mode (" + mode +
                             ") passed to pad; use \"constant\", \"edge\", \"reflect\" or \"symmetric\".");
  }
  const int nd = static_cast<int>(a.ndim());
  detail::normalize_axes(axes, nd, "pad");
  std::vector<int> ax(axes.size());
  Shape shape = a.shape(), low(a.ndim(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (low_pad_size[i] < 0) throw_invalid("pad", "Low padding size must be non-negative.");
    if (high_pad_size[i] < 0) throw_invalid("pad", "High padding size must be non-negative.");
    ax[i] = detail::normalize_axis(axes[i], nd, "pad");
    const int64_t n = int64_t{shape[ax[i]]} + low_pad_size[i] + high_pad_size[i];
    if (n > std::numeric_limits<int32_t>::max()) throw_invalid("pad", "The padded dimensions are too large.");
    shape[ax[i]] = static_cast<int32_t>(n);
    low[ax[i]] = low_pad_size[i];
    if (mode != "constant" && a.shape()[ax[i]] == 0 && n > 0) {
      throw_invalid("pad", "Cannot pad an empty axis with " + mode + " padding.");
    }
  }
  if (pad_value.size() != 1) throw_invalid("pad", "The pad value must be a single value.");
  detail::checked_size(shape, a.dtype(), "pad");
  Stream st = detail::op_stream(std::move(s), "pad");
  if (shape == a.shape()) return a;
  if (mode == "edge") return edge_pad(a, ax, low_pad_size, high_pad_size, st);
  if (mode == "reflect" || mode == "symmetric") {
    return mirror_pad(a, ax, low_pad_size, high_pad_size, mode == "symmetric", st);
  }
  array value = pad_value.ndim() == 0 ? pad_value : reshape(pad_value, {}, st);
  return array(std::move(shape), a.dtype(), detail::make_pooled<Pad>(std::move(st), std::move(low)),
               {a, value});
}

array pad(const array& a, const std::vector<std::pair<int, int>>& pad_width, const array& pad_value,
          const std::string& mode, StreamOrDevice s) {
  if (pad_width.size() != a.ndim()) {
    throw_invalid("pad", "Invalid number of padding sizes passed to pad with axes of size " +
                             std::to_string(a.ndim()) + ".");
  }
  std::vector<int> axes(a.ndim());
  Shape low, high;
  for (size_t i = 0; i < a.ndim(); ++i) {
    axes[i] = static_cast<int>(i);
    low.push_back(pad_width[i].first);
    high.push_back(pad_width[i].second);
  }
  return pad(a, axes, low, high, pad_value, mode, std::move(s));
}

array pad(const array& a, const std::pair<int, int>& pad_width, const array& pad_value,
          const std::string& mode, StreamOrDevice s) {
  return pad(a, std::vector<std::pair<int, int>>(a.ndim(), pad_width), pad_value, mode, std::move(s));
}

array pad(const array& a, int pad_width, const array& pad_value, const std::string& mode, StreamOrDevice s) {
  return pad(a, std::vector<std::pair<int, int>>(a.ndim(), {pad_width, pad_width}), pad_value, mode,
             std::move(s));
}

array roll(const array& a, const Shape& shift, const std::vector<int>& axes, StreamOrDevice s) {
  if (shift.size() < axes.size()) {
    throw_invalid("roll", "At least one shift value per axis is required (got " +
                              std::to_string(shift.size()) + " shifts for " + std::to_string(axes.size()) +
                              " axes).");
  }
  const int nd = static_cast<int>(a.ndim());
  std::vector<int> ax(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) ax[i] = detail::normalize_axis(axes[i], nd, "roll");
  Stream st = detail::op_stream(std::move(s), "roll");
  array out = a;
  for (size_t i = 0; i < ax.size(); ++i) {
    const int64_t n = a.shape()[ax[i]];
    if (n == 0) continue;
    int64_t k = shift[i] % n;
    if (k < 0) k += n;
    if (k == 0) continue;
    std::vector<array> parts = split(out, Shape{static_cast<int32_t>(n - k)}, ax[i], st);
    out = concatenate({parts[1], parts[0]}, ax[i], st);
  }
  return out;
}

array roll(const array& a, int shift, StreamOrDevice s) { return roll(a, Shape{shift}, std::move(s)); }

array roll(const array& a, const Shape& shift, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "roll");
  return reshape(roll(flatten(a, st), shift, 0, st), a.shape(), st);
}

array roll(const array& a, int shift, int axis, StreamOrDevice s) {
  return roll(a, Shape{shift}, std::vector<int>{axis}, std::move(s));
}

array roll(const array& a, int shift, const std::vector<int>& axes, StreamOrDevice s) {
  return roll(a, Shape(axes.size(), shift), axes, std::move(s));
}

array roll(const array& a, const Shape& shift, int axis, StreamOrDevice s) {
  int64_t total = 0;
  for (int32_t k : shift) total += k;
  const int nd = static_cast<int>(a.ndim());
  const int ax = detail::normalize_axis(axis, nd, "roll");
  const int64_t n = a.shape()[ax];
  const int64_t k = n == 0 ? 0 : total % n;
  return roll(a, Shape{static_cast<int32_t>(k)}, std::vector<int>{ax}, std::move(s));
}

}  // namespace braid
