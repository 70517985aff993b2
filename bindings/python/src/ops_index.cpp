// Indexing ops of braid.core as functions: dynamic slices, take, take/put along an axis, and
// braid's gathers and scatters (which mlx.core keeps behind a[...] and a.at[...]).
#include "ops_args.h"

namespace braid::python {

namespace {

/// Index arrays as gather and scatter take them: one array or a list of arrays.
std::vector<array> index_arrays(py::handle indices, const char* fn) {
  if (PyList_Check(indices.ptr()) || PyTuple_Check(indices.ptr())) {
    auto seq = py::reinterpret_borrow<py::sequence>(indices);
    // A list of ints is one index array; a list holding arrays is one per axis.
    bool has_array = false;
    for (auto item : seq) has_array = has_array || !is_python_scalar(item);
    if (has_array) return arg_array_list(indices, fn, "indices");
  }
  return {arg_array(indices, fn, "indices")};
}

std::vector<int> axes_of(py::handle axes, const char* fn) { return arg_int_or_ints(axes, 0, fn, "axes"); }

using Scatter = array (*)(const array&, const std::vector<array>&, const array&, const std::vector<int>&,
                          StreamOrDevice);

void def_scatter(py::module_& m, const char* name, Scatter op, const char* doc) {
  m.def(
      name,
      [op, name](py::object a, py::object indices, py::object updates, py::object axes, StreamOrDevice s) {
        auto x = arg_array(a, name, "a");
        return op(x, index_arrays(indices, name), arg_array_like(updates, x, name, "updates"),
                  axes_of(axes, name), s);
      },
      "a"_a, py::pos_only(), "indices"_a, "updates"_a, "axes"_a, py::kw_only(), "stream"_a = py::none(), doc);
}

using SliceCombine = array (*)(const array&, const array&, Shape, Shape, Shape, StreamOrDevice);

/// braid's slice_update_add/prod/max/min (mlx.core keeps them behind a.at[...]):
/// name(a, update, start, stop, strides=None, *, stream=None).
void def_slice_combine(py::module_& m, const char* name, SliceCombine op, const char* doc) {
  m.def(
      name,
      [op, name](py::object a, py::object update, py::object start, py::object stop, py::object strides,
                 StreamOrDevice s) {
        auto x = arg_array(a, name, "a");
        Shape st = strides.is_none() ? Shape(x.ndim(), 1) : arg_shape(strides, name, "strides");
        return op(x, arg_array_like(update, x, name, "update"), arg_shape(start, name, "start"),
                  arg_shape(stop, name, "stop"), std::move(st), s);
      },
      "a"_a, py::pos_only(), "update"_a, "start"_a, "stop"_a, "strides"_a = py::none(), py::kw_only(),
      "stream"_a = py::none(), doc);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  def_slice_combine(m, "slice_update_add", &slice_update_add, "`a` with update added to the slice start:stop:strides.");
  def_slice_combine(m, "slice_update_prod", &slice_update_prod,
                    "`a` with the slice start:stop:strides multiplied by update.");
  def_slice_combine(m, "slice_update_max", &slice_update_max,
                    "`a` with the slice start:stop:strides replaced by its maximum with update.");
  def_slice_combine(m, "slice_update_min", &slice_update_min,
                    "`a` with the slice start:stop:strides replaced by its minimum with update.");
  m.def(
      "depends",
      [](py::object inputs, py::object dependencies) -> py::object {
        // An array alone (inputs or dependencies) stands for a list of one; a single input
        // comes back as an array.
        auto list = [](py::object o, const char* name) {
          return py::isinstance<array>(o) ? std::vector<array>{o.cast<array>()}
                                          : arg_array_list(o, "depends", name);
        };
        std::vector<array> out = depends(list(inputs, "inputs"), list(dependencies, "dependencies"));
        if (py::isinstance<array>(inputs)) return py::cast(out.at(0));
        return py::cast(out);
      },
      "inputs"_a, "dependencies"_a,
      "The inputs, unchanged, but computed only after every one of the dependencies.");
  m.def(
      "slice",
      [](py::object a, py::object start_indices, py::object axes, py::object slice_size, StreamOrDevice s) {
        return slice(arg_array(a, "slice", "a"), arg_array(start_indices, "slice", "start_indices"),
                     arg_ints(axes, "slice", "axes"), arg_shape(slice_size, "slice", "slice_size"), s);
      },
      "a"_a, py::pos_only(), "start_indices"_a, "axes"_a, "slice_size"_a, py::kw_only(),
      "stream"_a = py::none(),
      "The slice of shape slice_size that starts at the positions in start_indices along `axes`.");
  m.def(
      "slice_update",
      [](py::object a, py::object update, py::object start_indices, py::object axes, StreamOrDevice s) {
        auto x = arg_array(a, "slice_update", "a");
        return slice_update(x, arg_array_like(update, x, "slice_update", "update"),
                            arg_array(start_indices, "slice_update", "start_indices"),
                            arg_ints(axes, "slice_update", "axes"), s);
      },
      "a"_a, py::pos_only(), "update"_a, "start_indices"_a, "axes"_a, py::kw_only(), "stream"_a = py::none(),
      "A copy of `a` with the slice at start_indices along `axes` replaced by `update`.");
  m.def(
      "take",
      [](py::object a, py::object indices, std::optional<int> axis, StreamOrDevice s) {
        auto x = arg_array(a, "take", "a");
        if (is_int_like(indices)) {
          const int index = indices.cast<int>();
          return axis ? take(x, index, *axis, s) : take(x, index, s);
        }
        auto idx = arg_array(indices, "take", "indices");
        return axis ? take(x, idx, *axis, s) : take(x, idx, s);
      },
      "a"_a, py::pos_only(), "indices"_a, "axis"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "Elements at `indices` along `axis` (of the flattened array when axis is None).");
  m.def(
      "take_along_axis",
      [](py::object a, py::object indices, std::optional<int> axis, StreamOrDevice s) {
        auto x = arg_array(a, "take_along_axis", "a");
        auto idx = arg_array(indices, "take_along_axis", "indices");
        if (axis) return take_along_axis(x, idx, *axis, s);
        return take_along_axis(reshape(x, {-1}, s), idx, 0, s);
      },
      "a"_a, py::pos_only(), "indices"_a, "axis"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "Elements at `indices` along `axis`; the other axes broadcast (flattened first when axis is None).");
  m.def(
      "put_along_axis",
      [](py::object a, py::object indices, py::object values, std::optional<int> axis, StreamOrDevice s) {
        auto x = arg_array(a, "put_along_axis", "a");
        auto idx = arg_array(indices, "put_along_axis", "indices");
        auto vals = arg_array_like(values, x, "put_along_axis", "values");
        if (axis) return put_along_axis(x, idx, vals, *axis, s);
        return reshape(put_along_axis(reshape(x, {-1}, s), idx, vals, 0, s), x.shape(), s);
      },
      "a"_a, py::pos_only(), "indices"_a, "values"_a, "axis"_a = py::none(), py::kw_only(),
      "stream"_a = py::none(),
      "A copy of `a` with `values` written at `indices` along `axis` (of the flattened array when None).");
  m.def(
      "scatter_add_axis",
      [](py::object a, py::object indices, py::object values, int axis, StreamOrDevice s) {
        auto x = arg_array(a, "scatter_add_axis", "a");
        return scatter_add_axis(x, arg_array(indices, "scatter_add_axis", "indices"),
                                arg_array_like(values, x, "scatter_add_axis", "values"), axis, s);
      },
      "a"_a, py::pos_only(), "indices"_a, "values"_a, "axis"_a, py::kw_only(), "stream"_a = py::none(),
      "put_along_axis that adds `values` (duplicate indices accumulate).");
  m.def(
      "gather",
      [](py::object a, py::object indices, py::object axes, py::object slice_sizes, StreamOrDevice s) {
        return gather(arg_array(a, "gather", "a"), index_arrays(indices, "gather"), axes_of(axes, "gather"),
                      arg_shape(slice_sizes, "gather", "slice_sizes"), s);
      },
      "a"_a, py::pos_only(), "indices"_a, "axes"_a, "slice_sizes"_a, py::kw_only(), "stream"_a = py::none(),
      "Slices of `a` at the broadcast index arrays (indices[i] along axes[i]): indices' shape + "
      "slice_sizes.");
  def_scatter(m, "scatter", &scatter,
              "A copy of `a` with update slices written at the index arrays along `axes`.");
  def_scatter(m, "scatter_add", &scatter_add, "scatter that adds the updates (duplicates accumulate).");
  def_scatter(m, "scatter_prod", &scatter_prod, "scatter that multiplies by the updates.");
  def_scatter(m, "scatter_max", &scatter_max, "scatter that keeps the maximum of `a` and the updates.");
  def_scatter(m, "scatter_min", &scatter_min, "scatter that keeps the minimum of `a` and the updates.");
  m.def(
      "masked_scatter",
      [](py::object a, py::object mask, py::object src, StreamOrDevice s) {
        auto x = arg_array(a, "masked_scatter", "a");
        return masked_scatter(x, arg_array(mask, "masked_scatter", "mask"),
                              arg_array_like(src, x, "masked_scatter", "src"), s);
      },
      "a"_a, py::pos_only(), "mask"_a, "src"_a, py::kw_only(), "stream"_a = py::none(),
      "A copy of `a` whose positions where `mask` is true take src's elements in row-major order.");
}

}  // namespace braid::python
