// Shape ops of braid.core with mlx.core's signatures: reshape, flatten, squeeze, transpose,
// broadcasting, concatenation, stacking, splitting, tiling and the atleast_nd family, and the
// array methods that share them (a.reshape(2, 3), a.transpose(1, 0), a.split(2), ...).
#include "ops_args.h"

namespace braid::python {

namespace {

array squeeze_axes(const array& a, py::handle axis, StreamOrDevice s) {
  if (axis.is_none()) return squeeze(a, s);
  if (is_int_like(axis)) return squeeze(a, axis.cast<int>(), s);
  return squeeze(a, arg_ints(axis, "squeeze", "axis"), s);
}

array transpose_axes(const array& a, py::handle axes, StreamOrDevice s) {
  if (axes.is_none()) return transpose(a, s);
  return transpose(a, arg_ints(axes, "transpose", "axes"), s);
}

/// The elements of `a` in reverse order along the axes (all of them when None).
array flip_axes(const array& a, py::handle axis, StreamOrDevice s) {
  if (axis.is_none()) return flip(a, std::move(s));
  if (is_int_like(axis)) return flip(a, axis.cast<int>(), std::move(s));
  return flip(a, arg_ints(axis, "flip", "axis"), std::move(s));
}

std::vector<array> split_by(const array& a, py::handle indices_or_sections, int axis, StreamOrDevice s) {
  if (is_int_like(indices_or_sections)) return split(a, indices_or_sections.cast<int>(), axis, s);
  if (!is_list_or_tuple(indices_or_sections)) {
    throw_arg_type("split", "indices_or_sections", "an int or a sequence of ints", indices_or_sections);
  }
  return split(a, arg_shape(indices_or_sections, "split", "indices_or_sections"), axis, s);
}

// Functions with *args take `stream` as a plain object: pybind11 2.10 loads a keyword argument
// that follows *args without implicit conversions, so a DeviceType would not become a Device.

/// The arguments of a method taking either one sequence or several ints: a.reshape((2, 3)) and
/// a.reshape(2, 3).
py::object varargs_sequence(const py::args& args) {
  if (args.size() == 1 && !is_int_like(args[0])) return args[0];
  return std::move(args);
}

/// NumPy's broadcasting of two shapes.
Shape broadcast_two(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int32_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int32_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw std::invalid_argument("[broadcast_shapes] Shapes cannot be broadcast.");
    }
    out[i] = da == 1 ? db : da;
  }
  return Shape(out);
}

using AtLeast = array (*)(const array&, StreamOrDevice);
using AtLeastMany = std::vector<array> (*)(const std::vector<array>&, StreamOrDevice);

/// atleast_nd(*arys): one array gives an array, several give a list.
void def_atleast(py::module_& m, const char* name, AtLeast one, AtLeastMany many, const char* doc) {
  m.def(
      name,
      [one, many, name](const py::args& arys, py::object stream) -> py::object {
        auto s = to_stream_or_device(stream);
        std::vector<array> inputs;
        for (auto item : arys) inputs.push_back(arg_array(item, name, "arys"));
        if (inputs.size() == 1) return py::cast(one(inputs[0], s));
        return py::cast(many(inputs, s));
      },
      "stream"_a = py::none(), doc);
}

array concatenate_axis(py::handle arrays, std::optional<int> axis, StreamOrDevice s) {
  auto inputs = arg_array_list(arrays, "concatenate", "arrays");
  return axis ? concatenate(std::move(inputs), *axis, s) : concatenate(std::move(inputs), s);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def(
      "reshape",
      [](py::object a, py::object shape, StreamOrDevice s) {
        return detail::reshape_keeping_request(arg_array(a, "reshape", "a"),
                                               arg_shape(shape, "reshape", "shape"), s);
      },
      "a"_a, py::pos_only(), "shape"_a, py::kw_only(), "stream"_a = py::none(),
      "The array in a new shape of the same size (one dimension may be -1).");
  m.def(
      "flatten",
      [](py::object a, int start_axis, int end_axis, StreamOrDevice s) {
        return flatten(arg_array(a, "flatten", "a"), start_axis, end_axis, s);
      },
      "a"_a, py::pos_only(), "start_axis"_a = 0, "end_axis"_a = -1, py::kw_only(), "stream"_a = py::none(),
      "Merges the axes from start_axis to end_axis (inclusive, clamped) into one.");
  m.def(
      "unflatten",
      [](py::object a, int axis, py::object shape, StreamOrDevice s) {
        return unflatten(arg_array(a, "unflatten", "a"), axis, arg_shape(shape, "unflatten", "shape"), s);
      },
      "a"_a, py::pos_only(), "axis"_a, "shape"_a, py::kw_only(), "stream"_a = py::none(),
      "Splits `axis` into `shape` (one entry may be -1).");
  m.def(
      "squeeze",
      [](py::object a, py::object axis, StreamOrDevice s) {
        return squeeze_axes(arg_array(a, "squeeze", "a"), axis, s);
      },
      "a"_a, py::pos_only(), "axis"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "Removes the given size-1 axes (every size-1 axis when axis is None).");
  m.def(
      "expand_dims",
      [](py::object a, py::object axis, StreamOrDevice s) {
        auto x = arg_array(a, "expand_dims", "a");
        if (is_int_like(axis)) return expand_dims(x, axis.cast<int>(), s);
        return expand_dims(x, arg_ints(axis, "expand_dims", "axis"), s);
      },
      "a"_a, py::pos_only(), "axis"_a, py::kw_only(), "stream"_a = py::none(),
      "Inserts size-1 axes at the given positions of the result.");
  for (const char* name : {"transpose", "permute_dims"}) {
    m.def(
        name,
        [](py::object a, py::object axes, StreamOrDevice s) {
          return transpose_axes(arg_array(a, "transpose", "a"), axes, s);
        },
        "a"_a, py::pos_only(), "axes"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
        "Permutes the axes (reverses them when axes is None).");
  }
  m.def(
      "swapaxes",
      [](py::object a, int axis1, int axis2, StreamOrDevice s) {
        return swapaxes(arg_array(a, "swapaxes", "a"), axis1, axis2, s);
      },
      "a"_a, py::pos_only(), "axis1"_a, "axis2"_a, py::kw_only(), "stream"_a = py::none(),
      "Exchanges two axes.");
  m.def(
      "moveaxis",
      [](py::object a, int source, int destination, StreamOrDevice s) {
        return moveaxis(arg_array(a, "moveaxis", "a"), source, destination, s);
      },
      "a"_a, py::pos_only(), "source"_a, "destination"_a, py::kw_only(), "stream"_a = py::none(),
      "Moves axis `source` to position `destination`.");
  m.def(
      "broadcast_to",
      [](py::object a, py::object shape, StreamOrDevice s) {
        return broadcast_to(arg_array(a, "broadcast_to", "a"), arg_shape(shape, "broadcast_to", "shape"), s);
      },
      "a"_a, py::pos_only(), "shape"_a, py::kw_only(), "stream"_a = py::none(),
      "Broadcasts with NumPy's rules to `shape`.");
  m.def(
      "broadcast_arrays",
      [](const py::args& arrays, py::object stream) {
        std::vector<array> inputs;
        for (auto item : arrays) inputs.push_back(arg_array(item, "broadcast_arrays", "arrays"));
        return broadcast_arrays(inputs, to_stream_or_device(stream));
      },
      "stream"_a = py::none(), "Every input broadcast to their common shape.");
  m.def(
      "broadcast_shapes",
      [](const py::args& shapes) {
        if (shapes.size() == 0)
          throw std::invalid_argument("[broadcast_shapes] Must provide at least one shape.");
        Shape out;
        for (size_t i = 0; i < shapes.size(); ++i) {
          if (!is_list_or_tuple(shapes[i])) {
            throw std::invalid_argument(
                "[broadcast_shapes] Expects a sequence of shapes (tuple or list of ints).");
          }
          Shape next = arg_shape(shapes[i], "broadcast_shapes", "shapes");
          out = i == 0 ? next : broadcast_two(out, next);
        }
        return shape_tuple(out);
      },
      "The shape that the given shapes broadcast to (a tuple).");
  for (const char* name : {"concatenate", "concat"}) {
    m.def(
        name,
        [](py::object arrays, std::optional<int> axis, StreamOrDevice s) {
          return concatenate_axis(arrays, axis, s);
        },
        "arrays"_a, py::pos_only(), "axis"_a = 0, py::kw_only(), "stream"_a = py::none(),
        "The arrays one after another along `axis` (of the flattened arrays when axis is None).");
  }
  m.def(
      "stack",
      [](py::object arrays, std::optional<int> axis, StreamOrDevice s) {
        auto inputs = arg_array_list(arrays, "stack", "arrays");
        return axis ? stack(inputs, *axis, s) : stack(inputs, s);
      },
      "arrays"_a, py::pos_only(), "axis"_a = 0, py::kw_only(), "stream"_a = py::none(),
      "Equal-shaped arrays stacked along a new axis.");
  m.def(
      "split",
      [](py::object a, py::object indices_or_sections, int axis, StreamOrDevice s) {
        return split_by(arg_array(a, "split", "a"), indices_or_sections, axis, s);
      },
      "a"_a, py::pos_only(), "indices_or_sections"_a, "axis"_a = 0, py::kw_only(), "stream"_a = py::none(),
      "A list of pieces: that many equal ones for an int, or split at each of the given indices.");
  m.def(
      "unstack",
      [](py::object a, int axis, StreamOrDevice s) { return unstack(arg_array(a, "unstack", "a"), axis, s); },
      "a"_a, py::pos_only(), py::kw_only(), "axis"_a = 0, "stream"_a = py::none(),
      "The slices of `a` along `axis`, as a list, with that axis removed (the inverse of stack).");
  m.def(
      "flip",
      [](py::object a, py::object axis, StreamOrDevice s) { return flip_axes(arg_array(a, "flip", "a"), axis, s); },
      "a"_a, py::pos_only(), "axis"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "`a` with the order of its elements reversed along `axis` (an int, a sequence of ints, or None "
      "for every axis).");
  m.def(
      "tile",
      [](py::object a, py::object reps, StreamOrDevice s) {
        return tile(arg_array(a, "tile", "a"), arg_int_or_ints(reps, 0, "tile", "reps"), s);
      },
      "a"_a, "reps"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(),
      "`a` repeated `reps` times along each axis.");
  m.def(
      "repeat",
      [](py::object a, int repeats, std::optional<int> axis, StreamOrDevice s) {
        auto x = arg_array(a, "repeat", "array");
        return axis ? repeat(x, repeats, *axis, s) : repeat(x, repeats, s);
      },
      "array"_a, py::pos_only(), "repeats"_a, "axis"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "Each element repeated `repeats` times along `axis` (of the flattened array when axis is None).");
  def_atleast(m, "atleast_1d", &atleast_1d, &atleast_1d, "The arrays with at least one dimension.");
  def_atleast(m, "atleast_2d", &atleast_2d, &atleast_2d, "The arrays with at least two dimensions.");
  def_atleast(m, "atleast_3d", &atleast_3d, &atleast_3d, "The arrays with at least three dimensions.");
}

BRAID_PYTHON_INIT(kInitArrayMethods) {
  array_class(m)
      .def(
          "reshape",
          [](const array& a, const py::args& shape, py::object stream) {
            if (shape.size() == 0) throw py::type_error("[reshape] Expected a shape.");
            return detail::reshape_keeping_request(a, arg_shape(varargs_sequence(shape), "reshape", "shape"),
                                                   to_stream_or_device(stream));
          },
          "stream"_a = py::none(), "The array in a new shape, given as a tuple or as separate ints.")
      .def(
          "flatten",
          [](const array& a, int start_axis, int end_axis, StreamOrDevice s) {
            return flatten(a, start_axis, end_axis, s);
          },
          "start_axis"_a = 0, "end_axis"_a = -1, py::kw_only(), "stream"_a = py::none(), "See flatten.")
      .def(
          "squeeze",
          [](const array& a, py::object axis, StreamOrDevice s) { return squeeze_axes(a, axis, s); },
          "axis"_a = py::none(), py::kw_only(), "stream"_a = py::none(), "See squeeze.")
      .def(
          "transpose",
          [](const array& a, const py::args& axes, py::object stream) {
            auto s = to_stream_or_device(stream);
            if (axes.size() == 0) return transpose(a, s);
            return transpose_axes(a, varargs_sequence(axes), s);
          },
          "stream"_a = py::none(),
          "The axes permuted, given as a tuple or as separate ints (reversed when none).")
      .def(
          "swapaxes",
          [](const array& a, int axis1, int axis2, StreamOrDevice s) { return swapaxes(a, axis1, axis2, s); },
          "axis1"_a, "axis2"_a, py::kw_only(), "stream"_a = py::none(), "See swapaxes.")
      .def(
          "moveaxis",
          [](const array& a, int source, int destination, StreamOrDevice s) {
            return moveaxis(a, source, destination, s);
          },
          "source"_a, "destination"_a, py::kw_only(), "stream"_a = py::none(), "See moveaxis.")
      .def(
          "split",
          [](const array& a, py::object indices_or_sections, int axis, StreamOrDevice s) {
            return split_by(a, indices_or_sections, axis, s);
          },
          "indices_or_sections"_a, "axis"_a = 0, py::kw_only(), "stream"_a = py::none(), "See split.");
}

}  // namespace braid::python
