// Data movement ops of braid.core with mlx.core's signatures: pad, roll, diagonals and trace,
// strided views, contiguous copies and dtype views, and the array methods that share them.
#include "ops_args.h"

namespace braid::python {

namespace {

bool is_int_pair(py::handle obj) {
  if (!is_list_or_tuple(obj) || py::len(obj) != 2) return false;
  auto seq = py::reinterpret_borrow<py::sequence>(obj);
  return is_int_like(seq[0]) && is_int_like(seq[1]);
}

std::pair<int, int> int_pair(py::handle obj) {
  auto seq = py::reinterpret_borrow<py::sequence>(obj);
  return {seq[0].cast<int>(), seq[1].cast<int>()};
}

/// pad_width as MLX takes it: n, (n,), (before, after) or [(before, after), ...] (one pair per
/// axis; a single pair applies to every axis).
array pad_any(const array& a, py::handle width, const std::string& mode, const array& value,
              StreamOrDevice s) {
  constexpr const char* kExpected = "an int, a (before, after) pair or a list of pairs";
  if (is_int_like(width)) return pad(a, width.cast<int>(), value, mode, s);
  if (!is_list_or_tuple(width)) throw_arg_type("pad", "pad_width", kExpected, width);
  auto seq = py::reinterpret_borrow<py::sequence>(width);
  if (seq.size() == 1 && is_int_like(seq[0])) return pad(a, seq[0].cast<int>(), value, mode, s);
  if (is_int_pair(width)) return pad(a, int_pair(width), value, mode, s);
  std::vector<std::pair<int, int>> pairs;
  for (auto item : seq) {
    if (!is_int_pair(item)) throw_arg_type("pad", "pad_width", kExpected, width);
    pairs.push_back(int_pair(item));
  }
  if (pairs.size() == 1) return pad(a, pairs[0], value, mode, s);
  return pad(a, pairs, value, mode, s);
}

/// roll with an int or tuple shift over the flattened array (axis None), one axis or several.
array roll_any(const array& a, py::handle shift, py::handle axis, StreamOrDevice s) {
  const bool int_shift = is_int_like(shift);
  if (!int_shift && !is_list_or_tuple(shift))
    throw_arg_type("roll", "shift", "an int or a tuple of ints", shift);
  if (axis.is_none()) {
    return int_shift ? roll(a, shift.cast<int>(), s) : roll(a, arg_shape(shift, "roll", "shift"), s);
  }
  if (is_int_like(axis)) {
    const int ax = axis.cast<int>();
    return int_shift ? roll(a, shift.cast<int>(), ax, s) : roll(a, arg_shape(shift, "roll", "shift"), ax, s);
  }
  auto axes = arg_ints(axis, "roll", "axis");
  return int_shift ? roll(a, shift.cast<int>(), axes, s)
                   : roll(a, arg_shape(shift, "roll", "shift"), axes, s);
}

/// Row-contiguous element strides of a shape (as_strided's default).
Strides row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  return Strides(strides);
}

Strides arg_strides(py::handle obj) {
  if (!is_list_or_tuple(obj)) throw_arg_type("as_strided", "strides", "a sequence of ints", obj);
  std::vector<int64_t> out;
  for (auto item : py::reinterpret_borrow<py::sequence>(obj)) {
    if (!is_int_like(item)) throw_arg_type("as_strided", "strides", "a sequence of ints", obj);
    out.push_back(item.cast<int64_t>());
  }
  return Strides(out);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def(
      "pad",
      [](py::object a, py::object pad_width, const std::string& mode, py::object constant_values,
         StreamOrDevice s) {
        auto x = arg_array(a, "pad", "a");
        return pad_any(x, pad_width, mode, arg_array_like(constant_values, x, "pad", "constant_values"), s);
      },
      "a"_a, "pad_width"_a, "mode"_a = "constant", "constant_values"_a = 0, py::kw_only(),
      "stream"_a = py::none(),
      "Pads the edges of each axis with constant_values (mode 'constant') or copies of the edge ('edge').");
  m.def(
      "roll",
      [](py::object a, py::object shift, py::object axis, StreamOrDevice s) {
        return roll_any(arg_array(a, "roll", "a"), shift, axis, s);
      },
      "a"_a, "shift"_a, "axis"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "Rolls elements along the axes (of the flattened array, then reshaped back, when axis is None).");
  m.def(
      "diagonal",
      [](py::object a, int offset, int axis1, int axis2, StreamOrDevice s) {
        return diagonal(arg_array(a, "diagonal", "a"), offset, axis1, axis2, s);
      },
      "a"_a, "offset"_a = 0, "axis1"_a = 0, "axis2"_a = 1, "stream"_a = py::none(),
      "Diagonal `offset` of the (axis1, axis2) planes, as the last axis.");
  m.def(
      "diag", [](py::object a, int k, StreamOrDevice s) { return diag(arg_array(a, "diag", "a"), k, s); },
      "a"_a, py::pos_only(), "k"_a = 0, py::kw_only(), "stream"_a = py::none(),
      "Diagonal k of a 2-d array, or the square matrix with a 1-d array on diagonal k.");
  m.def(
      "trace",
      [](py::object a, int offset, int axis1, int axis2, std::optional<Dtype> dtype, StreamOrDevice s) {
        auto x = arg_array(a, "trace", "a");
        return dtype ? trace(x, offset, axis1, axis2, *dtype, s) : trace(x, offset, axis1, axis2, s);
      },
      "a"_a, py::pos_only(), "offset"_a = 0, "axis1"_a = 0, "axis2"_a = 1, "dtype"_a = py::none(),
      py::kw_only(), "stream"_a = py::none(), "Sum along diagonal `offset` of the (axis1, axis2) planes.");
  m.def(
      "as_strided",
      [](py::object a, py::object shape, py::object strides, int64_t offset, StreamOrDevice s) {
        auto x = arg_array(a, "as_strided", "a");
        Shape out_shape = shape.is_none() ? x.shape() : arg_shape(shape, "as_strided", "shape");
        Strides out_strides = strides.is_none() ? row_major_strides(out_shape) : arg_strides(strides);
        if (offset < 0) throw std::invalid_argument("[as_strided] The offset must not be negative.");
        return as_strided(x, out_shape, out_strides, static_cast<size_t>(offset), s);
      },
      "a"_a, py::pos_only(), "shape"_a = py::none(), "strides"_a = py::none(), "offset"_a = 0, py::kw_only(),
      "stream"_a = py::none(),
      "A view of the row-contiguous values of `a` with the given shape and element strides from `offset`.");
  m.def(
      "contiguous",
      [](py::object a, bool allow_col_major, StreamOrDevice s) {
        return contiguous(arg_array(a, "contiguous", "a"), allow_col_major, s);
      },
      "a"_a, py::pos_only(), "allow_col_major"_a = false, py::kw_only(), "stream"_a = py::none(),
      "A row-contiguous array with a's values (column-major ones kept when allowed).");
  m.def(
      "copy", [](py::object a, StreamOrDevice s) { return copy(arg_array(a, "copy", "a"), s); }, "a"_a,
      py::pos_only(), py::kw_only(), "stream"_a = py::none(), "A new array with a's values.");
  m.def(
      "view",
      [](py::object a, Dtype dtype, StreamOrDevice s) { return view(arg_array(a, "view", "a"), dtype, s); },
      "a"_a, py::pos_only(), "dtype"_a, py::kw_only(), "stream"_a = py::none(),
      "a's bytes read as `dtype` (the last axis scales by the ratio of the item sizes).");
}

BRAID_PYTHON_INIT(kInitArrayMethods) {
  array_class(m)
      .def(
          "diagonal",
          [](const array& a, int offset, int axis1, int axis2, StreamOrDevice s) {
            return diagonal(a, offset, axis1, axis2, s);
          },
          "offset"_a = 0, "axis1"_a = 0, "axis2"_a = 1, "stream"_a = py::none(), "See diagonal.")
      .def(
          "diag", [](const array& a, int k, StreamOrDevice s) { return diag(a, k, s); }, "k"_a = 0,
          py::kw_only(), "stream"_a = py::none(), "See diag.")
      .def(
          "view", [](const array& a, Dtype dtype, StreamOrDevice s) { return view(a, dtype, s); }, "dtype"_a,
          py::kw_only(), "stream"_a = py::none(), "See view.")
      .def(
          "conj", [](const array& a, StreamOrDevice s) { return conjugate(a, s); }, py::kw_only(),
          "stream"_a = py::none(), "The complex conjugate (other dtypes unchanged).");
}

}  // namespace braid::python
