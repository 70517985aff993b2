// Array creation functions of braid.core (mlx.core's names and signatures): zeros, ones, full
// and their _like forms, arange, linspace, eye, identity, tri, tril, triu, meshgrid and the
// window functions.
#include <limits>
#include <string_view>

#include "python.h"

namespace braid::python {

namespace {

/// A Python bool, int or float as arange and linspace take it, with the dtype MLX infers
/// from it (bool; int32 for every int, as MLX: arange converts outside values saturating;
/// float32).
struct RangeScalar {
  double value;
  Dtype dtype;
};

RangeScalar range_scalar(py::handle obj, const char* op, const char* name) {
  if (PyBool_Check(obj.ptr())) return {obj.ptr() == Py_True ? 1.0 : 0.0, bool_};
  if (PyLong_Check(obj.ptr())) {
    // MLX's arange takes a Python int as a C++ int64: one outside it matches no overload.
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow != 0 && std::string_view(op) == "arange") {
      throw py::type_error(std::string(op) + "(): `" + name +
                           "` is an int outside the 64-bit range; pass a float.");
    }
    return {obj.cast<double>(), int32};
  }
  if (PyFloat_Check(obj.ptr())) return {PyFloat_AsDouble(obj.ptr()), float32};
  throw py::type_error(std::string(op) + "(): `" + name + "` must be an int or a float, got " +
                       py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>() + ".");
}

array arange_from(RangeScalar start, RangeScalar stop, py::handle step_obj, std::optional<Dtype> dtype,
                  py::handle s) {
  Dtype inferred = promote_types(start.dtype, stop.dtype);
  double step = 1.0;
  if (!step_obj.is_none()) {
    const auto st = range_scalar(step_obj, "arange", "step");
    inferred = promote_types(inferred, st.dtype);
    step = st.value;
  }
  return arange(start.value, stop.value, step, dtype.value_or(inferred), to_stream_or_device(s));
}

using WindowFn = array (*)(int, StreamOrDevice);

struct WindowRow {
  const char* name;
  WindowFn fn;
  const char* doc;
};

const WindowRow kWindows[] = {
    {"hanning", &hanning, "The Hann window of M points (float32)."},
    {"hamming", &hamming, "The Hamming window of M points (float32)."},
    {"bartlett", &bartlett, "The Bartlett (triangular) window of M points (float32)."},
    {"blackman", &blackman, "The Blackman window of M points (float32)."},
};

void def_filled(py::module_& m) {
  m.def(
      "zeros",
      [](py::handle shape, std::optional<Dtype> dtype, py::handle s) {
        return zeros(to_shape(shape), dtype.value_or(float32), to_stream_or_device(s));
      },
      "shape"_a, "dtype"_a = float32, py::kw_only(), "stream"_a = py::none(),
      "An array of zeros of `shape` (an int or a sequence of ints).");
  m.def(
      "ones",
      [](py::handle shape, std::optional<Dtype> dtype, py::handle s) {
        return ones(to_shape(shape), dtype.value_or(float32), to_stream_or_device(s));
      },
      "shape"_a, "dtype"_a = float32, py::kw_only(), "stream"_a = py::none(),
      "An array of ones of `shape` (an int or a sequence of ints).");
  m.def(
      "full",
      [](py::handle shape, py::handle vals, std::optional<Dtype> dtype, py::handle s) {
        return full(to_shape(shape), to_array(vals, dtype), to_stream_or_device(s));
      },
      "shape"_a, "vals"_a, "dtype"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "An array of `shape` filled with `vals` (a scalar or an array broadcast to the shape); the dtype is "
      "that of `vals` unless given.");
  m.def(
      "zeros_like",
      [](py::handle a, py::handle s) { return zeros_like(to_array(a), to_stream_or_device(s)); }, "a"_a,
      py::pos_only(), py::kw_only(), "stream"_a = py::none(), "Zeros with a's shape and dtype.");
  m.def(
      "ones_like", [](py::handle a, py::handle s) { return ones_like(to_array(a), to_stream_or_device(s)); },
      "a"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(), "Ones with a's shape and dtype.");
  m.def(
      "full_like",
      [](py::handle a_obj, py::handle vals, std::optional<Dtype> dtype, py::handle s) {
        const array a = to_array(a_obj);
        if (dtype) return full_like(a, to_array(vals), *dtype, to_stream_or_device(s));
        // A Python scalar takes a's dtype, as the C++ full_like(a, T) does.
        const array v = is_python_scalar(vals) ? to_array(vals, a.dtype()) : to_array(vals);
        return full_like(a, v, to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "vals"_a, "dtype"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "`vals` broadcast with a's shape, in `dtype` (a's dtype when None).");
}

void def_ranges(py::module_& m) {
  m.def(
      "arange",
      [](py::handle start, py::handle stop, py::handle step, std::optional<Dtype> dtype, py::handle s) {
        return arange_from(range_scalar(start, "arange", "start"), range_scalar(stop, "arange", "stop"), step,
                           dtype, s);
      },
      "start"_a, "stop"_a, "step"_a = py::none(), "dtype"_a = py::none(), py::kw_only(),
      "stream"_a = py::none(),
      "Values from start up to (not including) stop in increments of step (default 1). The dtype is "
      "float32 when any of start, stop, step is a float, else int32 (start and start + step are "
      "converted to it saturating, so ints past its range give its limits), unless given.");
  m.def(
      "arange",
      [](py::handle stop, py::handle step, std::optional<Dtype> dtype, py::handle s) {
        return arange_from(RangeScalar{0.0, bool_}, range_scalar(stop, "arange", "stop"), step, dtype, s);
      },
      "stop"_a, "step"_a = py::none(), "dtype"_a = py::none(), py::kw_only(), "stream"_a = py::none());
  m.def(
      "linspace",
      [](py::handle start, py::handle stop, int num, py::handle endpoint, std::optional<Dtype> dtype,
         py::handle s) {
        // endpoint comes before dtype (NumPy's order); a dtype in its place is taken as the dtype,
        // as braid's earlier (start, stop, num, dtype) order had it.
        bool include_stop = true;
        if (py::isinstance<Dtype>(endpoint)) {
          dtype = endpoint.cast<Dtype>();
        } else if (endpoint.is_none()) {
          // braid's earlier order: a None dtype in fourth place
        } else if (py::isinstance<py::bool_>(endpoint)) {
          include_stop = endpoint.cast<bool>();
        } else {
          throw py::type_error("[linspace] endpoint must be a bool.");
        }
        return linspace(range_scalar(start, "linspace", "start").value,
                        range_scalar(stop, "linspace", "stop").value, num, include_stop,
                        dtype.value_or(float32), to_stream_or_device(s));
      },
      "start"_a, "stop"_a, "num"_a = 50, "endpoint"_a = true, "dtype"_a = float32, "stream"_a = py::none(),
      "`num` evenly spaced values from start to stop (stop left out when endpoint is False, as NumPy).");
}

void def_matrices(py::module_& m) {
  m.def(
      "eye",
      [](int n, std::optional<int> cols, int k, std::optional<Dtype> dtype, py::handle s) {
        return eye(n, cols.value_or(n), k, dtype.value_or(float32), to_stream_or_device(s));
      },
      "n"_a, "m"_a = py::none(), "k"_a = 0, "dtype"_a = float32, py::kw_only(), "stream"_a = py::none(),
      "An n x m matrix with ones on diagonal k and zeros elsewhere.");
  m.def(
      "identity",
      [](int n, std::optional<Dtype> dtype, py::handle s) {
        return identity(n, dtype.value_or(float32), to_stream_or_device(s));
      },
      "n"_a, "dtype"_a = float32, py::kw_only(), "stream"_a = py::none(), "The n x n identity matrix.");
  m.def(
      "tri",
      [](int n, std::optional<int> cols, int k, std::optional<Dtype> dtype, py::handle s) {
        return tri(n, cols.value_or(n), k, dtype.value_or(float32), to_stream_or_device(s));
      },
      "n"_a, "m"_a = py::none(), "k"_a = 0, "dtype"_a = float32, py::kw_only(), "stream"_a = py::none(),
      "An n x m matrix with ones at and below diagonal k and zeros elsewhere.");
  m.def(
      "tril", [](py::handle x, int k, py::handle s) { return tril(to_array(x), k, to_stream_or_device(s)); },
      "x"_a, "k"_a = 0, py::kw_only(), "stream"_a = py::none(),
      "x with the elements above diagonal k zeroed.");
  m.def(
      "triu", [](py::handle x, int k, py::handle s) { return triu(to_array(x), k, to_stream_or_device(s)); },
      "x"_a, "k"_a = 0, py::kw_only(), "stream"_a = py::none(),
      "x with the elements below diagonal k zeroed.");
  m.def(
      "meshgrid",
      [](py::args arrays, bool sparse, const std::string& indexing, py::handle s) {
        std::vector<array> inputs;
        inputs.reserve(arrays.size());
        for (auto item : arrays) inputs.push_back(to_array(item));
        return meshgrid(inputs, sparse, indexing, to_stream_or_device(s));
      },
      "sparse"_a = false, "indexing"_a = "xy", "stream"_a = py::none(),
      "Coordinate grids of the 1-d inputs, as a list: Cartesian ('xy') or matrix ('ij') indexing; with "
      "`sparse`, unit axes instead of broadcast ones.");
  for (const auto& row : kWindows) {
    m.def(
        row.name, [fn = row.fn](int M, py::handle s) { return fn(M, to_stream_or_device(s)); }, "M"_a,
        py::kw_only(), "stream"_a = py::none(), row.doc);
  }
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  def_filled(m);
  def_ranges(m);
  def_matrices(m);
}

}  // namespace braid::python
