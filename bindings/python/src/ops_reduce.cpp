// Reductions, scans and softmax of braid.core (mlx.core's names and signatures), and the
// matching array methods (a.sum(), a.argmax(), a.cumsum(), ...). `axis` is None (every axis),
// an int or a sequence of ints, as in MLX.
#include <numeric>
#include <type_traits>

#include "python.h"

namespace braid::python {

namespace {

using AxesReduce = array (*)(const array&, const std::vector<int>&, bool, StreamOrDevice);
using DdofReduce = array (*)(const array&, const std::vector<int>&, bool, int, StreamOrDevice);
using ArgReduceAxis = array (*)(const array&, int, bool, StreamOrDevice);
using ArgReduceAll = array (*)(const array&, bool, StreamOrDevice);
using ScanAxis = array (*)(const array&, int, bool, bool, StreamOrDevice);
using ScanAll = array (*)(const array&, bool, bool, StreamOrDevice);

struct ReduceRow {
  const char* name;
  AxesReduce op;
  bool method;  // mlx.core.array has it as a method
  const char* doc;
};

struct DdofRow {
  const char* name;
  DdofReduce op;
  const char* doc;
};

struct ArgRow {
  const char* name;
  ArgReduceAxis along;
  ArgReduceAll all;
  const char* doc;
};

struct ScanRow {
  const char* name;
  ScanAxis along;
  ScanAll all;
  const char* doc;
};

const ReduceRow kReduce[] = {
    {"all", &all, true, "True where every element over the axes is nonzero."},
    {"any", &any, true, "True where some element over the axes is nonzero."},
    {"sum", &sum, true, "Sum over the axes."},
    {"prod", &prod, true, "Product over the axes."},
    {"min", &min, true, "Minimum over the axes."},
    {"max", &max, true, "Maximum over the axes."},
    {"mean", &mean, true, "Mean over the axes."},
    {"median", &median, false, "Median over the axes."},
    {"logsumexp", &logsumexp, true, "log(sum(exp(a))) over the axes, computed stably."},
};

const DdofRow kDdof[] = {
    {"var", &var, "Variance over the axes: sum((a - mean)^2) / (N - ddof)."},
    {"std", &braid::std, "Standard deviation over the axes: sqrt(var)."},
};

const ArgRow kArg[] = {
    {"argmin", &argmin, &argmin,
     "uint32 index of the first minimum along the axis (of the flattened array without one)."},
    {"argmax", &argmax, &argmax,
     "uint32 index of the first maximum along the axis (of the flattened array without one)."},
};

const ScanRow kScan[] = {
    {"cumsum", &cumsum, &cumsum, "Running sum along the axis (of the flattened array without one)."},
    {"cumprod", &cumprod, &cumprod, "Running product along the axis (of the flattened array without one)."},
    {"cummax", &cummax, &cummax, "Running maximum along the axis (of the flattened array without one)."},
    {"cummin", &cummin, &cummin, "Running minimum along the axis (of the flattened array without one)."},
    {"logcumsumexp", &logcumsumexp, &logcumsumexp,
     "Running log(sum(exp(a))) along the axis (of the flattened array without one)."},
};

/// One axis: a Python int or anything with __index__ (NumPy's integers), never a bool.
std::optional<int> index_axis(py::handle axis) {
  if (PyBool_Check(axis.ptr())) return std::nullopt;
  if (PyLong_Check(axis.ptr())) return axis.cast<int>();
  if (PyIndex_Check(axis.ptr())) {
    auto index = py::reinterpret_steal<py::object>(PyNumber_Index(axis.ptr()));
    if (!index) throw py::error_already_set();
    return index.cast<int>();
  }
  return std::nullopt;
}

[[noreturn]] void bad_axis(py::handle axis, const char* expected) {
  throw py::type_error(std::string("axis must be ") + expected + ", got " +
                       py::str(py::type::handle_of(axis).attr("__name__")).cast<std::string>() + ".");
}

/// MLX's reduction axes: None is every axis of `a`.
std::vector<int> reduce_axes(py::handle axis, const array& a) {
  if (axis.is_none()) {
    std::vector<int> all_axes(a.ndim());
    std::iota(all_axes.begin(), all_axes.end(), 0);
    return all_axes;
  }
  if (auto one = index_axis(axis)) return {*one};
  if (!PyList_Check(axis.ptr()) && !PyTuple_Check(axis.ptr()))
    bad_axis(axis, "None, an int or a sequence of ints");
  std::vector<int> out;
  for (auto item : py::reinterpret_borrow<py::sequence>(axis)) {
    auto one = index_axis(item);
    if (!one) bad_axis(item, "None, an int or a sequence of ints");
    out.push_back(*one);
  }
  return out;
}

std::optional<int> optional_axis(py::handle axis) {
  if (axis.is_none()) return std::nullopt;
  auto one = index_axis(axis);
  if (!one) bad_axis(axis, "None or an int");
  return one;
}

// The functions and methods differ only in how `a` arrives (any array-like or self), so one
// template body serves both: Input is py::handle for functions, const array& for methods.
array as_input(py::handle a) { return to_array(a); }
const array& as_input(const array& a) { return a; }
template <typename Input>
constexpr bool kIsMethod = std::is_same_v<Input, const array&>;

template <typename Input, typename Cls>
void def_reduce(Cls& scope, const ReduceRow& row) {
  auto fn = [op = row.op](Input a, py::handle axis, bool keepdims, py::handle s) {
    const array x = as_input(a);
    return op(x, reduce_axes(axis, x), keepdims, to_stream_or_device(s));
  };
  if constexpr (kIsMethod<Input>) {
    scope.def(row.name, fn, "axis"_a = py::none(), "keepdims"_a = false, py::kw_only(),
              "stream"_a = py::none(), row.doc);
  } else {
    scope.def(row.name, fn, "a"_a, py::pos_only(), "axis"_a = py::none(), "keepdims"_a = false, py::kw_only(),
              "stream"_a = py::none(), row.doc);
  }
}

template <typename Input, typename Cls>
void def_ddof(Cls& scope, const DdofRow& row) {
  auto fn = [op = row.op](Input a, py::handle axis, bool keepdims, int ddof, py::handle s) {
    const array x = as_input(a);
    return op(x, reduce_axes(axis, x), keepdims, ddof, to_stream_or_device(s));
  };
  if constexpr (kIsMethod<Input>) {
    scope.def(row.name, fn, "axis"_a = py::none(), "keepdims"_a = false, "ddof"_a = 0, py::kw_only(),
              "stream"_a = py::none(), row.doc);
  } else {
    scope.def(row.name, fn, "a"_a, py::pos_only(), "axis"_a = py::none(), "keepdims"_a = false, "ddof"_a = 0,
              py::kw_only(), "stream"_a = py::none(), row.doc);
  }
}

template <typename Input, typename Cls>
void def_arg(Cls& scope, const ArgRow& row) {
  auto fn = [along = row.along, all_axes = row.all](Input a, py::handle axis, bool keepdims, py::handle s) {
    const array x = as_input(a);
    const auto ax = optional_axis(axis);
    return ax ? along(x, *ax, keepdims, to_stream_or_device(s))
              : all_axes(x, keepdims, to_stream_or_device(s));
  };
  if constexpr (kIsMethod<Input>) {
    scope.def(row.name, fn, "axis"_a = py::none(), "keepdims"_a = false, py::kw_only(),
              "stream"_a = py::none(), row.doc);
  } else {
    scope.def(row.name, fn, "a"_a, py::pos_only(), "axis"_a = py::none(), "keepdims"_a = false, py::kw_only(),
              "stream"_a = py::none(), row.doc);
  }
}

template <typename Input, typename Cls>
void def_scan(Cls& scope, const ScanRow& row) {
  auto fn = [along = row.along, flat = row.all](Input a, py::handle axis, bool reverse, bool inclusive,
                                                py::handle s) {
    const array x = as_input(a);
    const auto ax = optional_axis(axis);
    return ax ? along(x, *ax, reverse, inclusive, to_stream_or_device(s))
              : flat(x, reverse, inclusive, to_stream_or_device(s));
  };
  if constexpr (kIsMethod<Input>) {
    scope.def(row.name, fn, "axis"_a = py::none(), py::kw_only(), "reverse"_a = false, "inclusive"_a = true,
              "stream"_a = py::none(), row.doc);
  } else {
    scope.def(row.name, fn, "a"_a, py::pos_only(), "axis"_a = py::none(), py::kw_only(), "reverse"_a = false,
              "inclusive"_a = true, "stream"_a = py::none(), row.doc);
  }
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  for (const auto& row : kReduce) def_reduce<py::handle>(m, row);
  for (const auto& row : kDdof) def_ddof<py::handle>(m, row);
  for (const auto& row : kArg) def_arg<py::handle>(m, row);
  for (const auto& row : kScan) def_scan<py::handle>(m, row);
  m.def(
      "softmax",
      [](py::handle a, py::handle axis, bool precise, py::handle s) {
        const array x = to_array(a);
        return softmax(x, reduce_axes(axis, x), precise, to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "axis"_a = py::none(), py::kw_only(), "precise"_a = false,
      "stream"_a = py::none(),
      "exp(a) / sum(exp(a)) over the axes (every axis when None), computed stably; `precise` accumulates "
      "half-precision inputs in float32.");
  m.def(
      "number_of_elements",
      [](py::handle a, py::handle axes, bool inverted, Dtype dtype, py::handle s) {
        const array x = to_array(a);
        return number_of_elements(x, reduce_axes(axes, x), inverted, dtype, to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "axes"_a = py::none(), "inverted"_a = false, "dtype"_a = int32, py::kw_only(),
      "stream"_a = py::none(),
      "A 0-d array: the product of a's dimensions over `axes` (every axis when None), or its reciprocal when "
      "`inverted`.");
}

BRAID_PYTHON_INIT(kInitArrayMethods) {
  auto cls = array_class(m);
  for (const auto& row : kReduce) {
    if (row.method) def_reduce<const array&>(cls, row);
  }
  for (const auto& row : kDdof) def_ddof<const array&>(cls, row);
  for (const auto& row : kArg) def_arg<const array&>(cls, row);
  for (const auto& row : kScan) def_scan<const array&>(cls, row);
}

}  // namespace braid::python
