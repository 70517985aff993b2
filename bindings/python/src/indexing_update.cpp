// Updating with NumPy's indexing rules: a[idx] = v (the Python object then holds the updated
// array, as in MLX) and a.at[idx].add(v) and its kin (new arrays; repeated indices accumulate).
// The value broadcasts to the shape of a[idx]. Basic indices update one strided slice
// (slice_update); array indices scatter, into a window of a when every slice has step 1, else
// into the sliced part, which is then written back.
#include <algorithm>

#include "indexing.h"

namespace braid::python::indexing {

namespace {

enum class Combine { assign, add, subtract, multiply, divide, maximum, minimum };

/// `value` as an array of a's dtype shaped as a[idx] (leading length-1 axes beyond that shape are
/// dropped, as NumPy does).
array broadcast_value(const array& a, py::handle value, const Shape& shape) {
  array v = to_array(value, a.dtype());
  size_t lead = 0;
  while (v.ndim() - lead > shape.size() && v.shape(static_cast<int>(lead)) == 1) ++lead;
  if (lead > 0) v = reshape(v, Shape(v.shape().begin() + lead, v.shape().end()));
  return broadcast_to(v, shape);
}

/// a[mask] = v: v broadcasts to a.shape[mask.ndim:] (written wherever mask is true), or holds one
/// such row per true position, in row-major order.
array assign_masked(const array& a, const array& mask, py::handle value) {
  if (mask.ndim() > a.ndim()) {
    throw py::value_error("A boolean mask of " + std::to_string(mask.ndim()) +
                          " dimensions cannot index an array of " + std::to_string(a.ndim()) + ".");
  }
  for (size_t i = 0; i < mask.ndim(); ++i) {
    if (mask.shape(static_cast<int>(i)) != a.shape(static_cast<int>(i))) {
      throw py::value_error("The boolean mask does not match the array along dimension " + std::to_string(i) +
                            ": the dimension is " + std::to_string(a.shape(static_cast<int>(i))) +
                            " but the mask's is " + std::to_string(mask.shape(static_cast<int>(i))) + ".");
    }
  }
  const Shape rest(a.shape().begin() + mask.ndim(), a.shape().end());
  array v = to_array(value, a.dtype());
  while (v.ndim() > rest.size() + 1 && v.shape(0) == 1) v = squeeze(v, 0);
  if (v.ndim() == rest.size() + 1 && v.shape(0) == 1) v = squeeze(v, 0);
  if (v.ndim() <= rest.size()) {
    Shape padded = mask.shape();
    padded.resize(a.ndim(), 1);
    array where_mask = broadcast_to(reshape(mask, padded), a.shape());
    return where(where_mask, broadcast_to(broadcast_to(v, rest), a.shape()), a);
  }
  Shape rows = rest;
  rows.insert(rows.begin(), v.shape(0));
  return masked_scatter(a, mask, broadcast_to(v, rows));
}

/// The slice of `src` combined by scatter_max or scatter_min with `update` (which broadcasts
/// to the slice), written back. As MLX's ArrayAt, the maximum and minimum go through a scatter,
/// whose gradient reaches both the source and the update where they tie (maximum's own
/// gradient gives a tie to one side only).
array update_slice_extremum(const array& src, const array& update, const Shape& start, const Shape& stop,
                            const Shape& strides, Combine op) {
  const array part = slice(src, start, stop, strides);
  const Shape shape = part.shape();
  const array flat_update = reshape(broadcast_to(astype(update, src.dtype()), shape), {1, -1});
  const array flat = reshape(part, {1, -1});
  const std::vector<array> row{array(0)};
  const array combined = reshape(op == Combine::maximum ? scatter_max(flat, row, flat_update, {0})
                                                        : scatter_min(flat, row, flat_update, {0}),
                                 shape);
  return slice_update(src, combined, start, stop, strides);
}

/// Basic indices: the slice of `src` combined with `update` (shaped as the slice).
array update_slice(const array& src, const array& update, const Shape& start, const Shape& stop,
                   const Shape& strides, Combine op) {
  switch (op) {
    case Combine::assign: return slice_update(src, update, start, stop, strides);
    case Combine::add: return slice_update_add(src, update, start, stop, strides);
    case Combine::subtract: return slice_update_add(src, negative(update), start, stop, strides);
    case Combine::multiply: return slice_update_prod(src, update, start, stop, strides);
    case Combine::divide:
      return slice_update(src, divide(slice(src, start, stop, strides), update), start, stop, strides);
    case Combine::maximum:
    case Combine::minimum: return update_slice_extremum(src, update, start, stop, strides, op);
  }
  throw std::logic_error("unreachable");
}

array scatter_with(const array& target, const std::vector<array>& indices, const array& updates,
                   const std::vector<int>& axes, Combine op) {
  switch (op) {
    case Combine::assign: return scatter(target, indices, updates, axes);
    case Combine::add: return scatter_add(target, indices, updates, axes);
    case Combine::subtract: return scatter_add(target, indices, negative(updates), axes);
    case Combine::multiply: return scatter_prod(target, indices, updates, axes);
    case Combine::divide:
      // Repeated indices divide repeatedly, so the reciprocals multiply (as MLX).
      return scatter_prod(target, indices, reciprocal(updates), axes);
    case Combine::maximum: return scatter_max(target, indices, updates, axes);
    case Combine::minimum: return scatter_min(target, indices, updates, axes);
  }
  throw std::logic_error("unreachable");
}

array update(const array& a, py::handle key, py::handle value, Combine op) {
  if (op == Combine::assign) {
    if (std::optional<array> mask = boolean_mask(key)) return assign_masked(a, *mask, value);
  }
  Index index = parse(a, key);
  Layout layout = layout_of(index);
  array v = broadcast_value(a, value, layout.shape);
  if (size_of(layout.shape) == 0) return a;  // nothing is written

  const std::vector<const Entry*> entry = by_axis(index);
  const size_t nb = layout.broadcast.size();
  Shape start, stop, strides;
  bounds_of(index, start, stop, strides);

  // The value without the new axes, its dimensions in the order of src's axes (after the
  // broadcast block), with length 1 where an integer or array indexes src.
  std::vector<int> news = new_axis_positions(layout.tokens, nb);
  if (!news.empty()) v = squeeze(v, news);
  std::vector<int> have, want;
  if (index.advanced) want.push_back(kBroadcast);
  std::vector<int> unit_axes;
  for (size_t ax = 0; ax < entry.size(); ++ax) {
    if (entry[ax]->kind == Entry::Kind::slice) {
      want.push_back(static_cast<int>(ax));
    } else {
      unit_axes.push_back(static_cast<int>(nb + ax));
    }
  }
  for (int t : layout.tokens) {
    if (t != kNewAxis) have.push_back(t);
  }
  v = reorder(v, have, want, nb);
  if (!unit_axes.empty()) v = expand_dims(v, unit_axes);

  array out = index.src;
  if (!index.advanced) {
    out = update_slice(index.src, v, start, stop, strides, op);
  } else {
    // Slices of step 1 become windows of the scatter (their start as a 0-d index); other slices
    // are taken first and the scattered part written back.
    const bool windows = std::all_of(entry.begin(), entry.end(), [](const Entry* e) {
      return e->kind != Entry::Kind::slice || e->step == 1 || e->length <= 1;
    });
    std::vector<array> indices;
    std::vector<int> axes;
    for (size_t ax = 0; ax < entry.size(); ++ax) {
      const Entry& e = *entry[ax];
      const int axis = static_cast<int>(ax);
      if (e.kind == Entry::Kind::array) {
        indices.push_back(*e.indices);
        axes.push_back(axis);
      } else if (e.kind == Entry::Kind::integer) {
        indices.push_back(array(static_cast<int32_t>(windows ? e.start : 0)));
        axes.push_back(axis);
      } else if (windows && e.length != index.src.shape(axis)) {
        indices.push_back(array(static_cast<int32_t>(e.start)));
        axes.push_back(axis);
      }
    }
    if (windows) {
      out = scatter_with(index.src, indices, v, axes, op);
    } else {
      array part = scatter_with(slice(index.src, start, stop, strides), indices, v, axes, op);
      out = slice_update(index.src, part, start, stop, strides);
    }
  }
  if (!index.inserted.empty()) out = squeeze(out, index.inserted);
  return out;
}

/// a.at[idx]: the array and the index its update methods apply to (mlx.core.ArrayAt).
struct ArrayAt {
  array a;
  std::optional<py::object> key;

  array apply(py::handle value, Combine op) const {
    if (!key) throw py::value_error("Give the indices to update: x.at[idx].add(value).");
    return update(a, *key, value, op);
  }
};

}  // namespace

}  // namespace braid::python::indexing

namespace braid::python {

BRAID_PYTHON_INIT(kInitArrayMethods) {
  using indexing::ArrayAt;
  using indexing::Combine;
  py::class_<ArrayAt>(m, "ArrayAt",
                      "Updates of an array at indices: x.at[idx].add(y) and its kin (mlx.core.ArrayAt).")
      .def(py::init([](const array& x) {
             return ArrayAt{x, std::nullopt};
           }),
           "x"_a)
      .def(
          "__getitem__",
          [](const ArrayAt& at, py::object key) {
            return ArrayAt{at.a, key};
          },
          "indices"_a)
      .def(
          "add", [](const ArrayAt& at, py::object v) { return at.apply(v, Combine::add); }, "value"_a,
          "A new array with `value` added at the indices (repeated indices add repeatedly).")
      .def(
          "subtract", [](const ArrayAt& at, py::object v) { return at.apply(v, Combine::subtract); },
          "value"_a, "A new array with `value` subtracted at the indices.")
      .def(
          "multiply", [](const ArrayAt& at, py::object v) { return at.apply(v, Combine::multiply); },
          "value"_a, "A new array multiplied by `value` at the indices.")
      .def(
          "divide", [](const ArrayAt& at, py::object v) { return at.apply(v, Combine::divide); }, "value"_a,
          "A new array divided by `value` at the indices.")
      .def(
          "maximum", [](const ArrayAt& at, py::object v) { return at.apply(v, Combine::maximum); }, "value"_a,
          "A new array holding the maximum of itself and `value` at the indices.")
      .def(
          "minimum", [](const ArrayAt& at, py::object v) { return at.apply(v, Combine::minimum); }, "value"_a,
          "A new array holding the minimum of itself and `value` at the indices.");

  array_class(m)
      .def(
          "__setitem__",
          [](array& a, py::object key, py::object value) {
            a = indexing::update(a, key, value, Combine::assign);
          },
          "key"_a, "value"_a,
          "Assigns `value` (broadcast to the shape of a[key]) at the indices: this Python object then holds "
          "the updated array. A boolean array as the whole index assigns where it is true.")
      .def_property_readonly(
          "at",
          [](const array& a) {
            return ArrayAt{a, std::nullopt};
          },
          "Updates at indices that return new arrays: x.at[idx].add(y), subtract, multiply, divide, "
          "maximum, minimum; repeated indices accumulate.");
}

}  // namespace braid::python
