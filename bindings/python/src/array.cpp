// The array class of braid.core: construction from Python values, properties, conversion to
// Python and NumPy, printing and the arithmetic operators (with MLX's rules for Python scalars).
// Indexing and the op methods (a.sum(), a.reshape(), ...) are added by other files.
#include <complex>
#include <sstream>
#include <string_view>

#include "python.h"

namespace braid::python {

namespace {

using Binary = array (*)(const array&, const array&, StreamOrDevice);

/// MLX's operands of an array operator: arrays, Python scalars and array-likes (NumPy arrays
/// and scalars). Lists, tuples, strings and other objects are not: `==` and `!=` with them give
/// False and True, every other operator raises ValueError.
bool is_operand(py::handle b) {
  return py::isinstance<array>(b) || is_python_scalar(b) || py::hasattr(b, "__array__");
}

void check_operand(const char* name, py::handle b) {
  if (!is_operand(b)) {
    throw std::invalid_argument(std::string("[") + name + "] Cannot perform the operation with an operand of type " +
                                py::str(py::type::of(b).attr("__name__")).cast<std::string>() +
                                ": expected an array, a Python scalar or a NumPy array.");
  }
}

/// Binds `name` and its reflected form (`rname`, operands swapped) to `op`.
void def_binary(py::class_<array>& cls, const char* name, const char* rname, Binary op) {
  cls.def(name, [op, name](const array& a, py::object b) -> py::object {
    if (!is_operand(b)) {
      if (std::string_view(name) == "__eq__") return py::bool_(false);
      if (std::string_view(name) == "__ne__") return py::bool_(true);
      check_operand(name, b);
    }
    auto [x, y] = to_arrays(py::cast(a), b);
    return py::cast(op(x, y, {}));
  });
  if (rname != nullptr) {
    cls.def(rname, [op, rname](const array& a, py::object b) -> py::object {
      check_operand(rname, b);
      auto [x, y] = to_arrays(b, py::cast(a));
      return py::cast(op(x, y, {}));
    });
  }
}

/// `a op= b`: a's Python object now holds the result (other names for the same object see it).
void def_inplace(py::class_<array>& cls, const char* name, Binary op) {
  cls.def(
      name,
      [op, name](array& a, py::object b) -> array& {
        check_operand(name, b);
        auto [x, y] = to_arrays(py::cast(a), b);
        a = op(x, y, {});
        return a;
      },
      py::return_value_policy::reference_internal);
}

/// `a /= b` keeps a's dtype in MLX: an integer or boolean array cannot take a quotient in place.
array divide_in_place(const array& a, const array& b, StreamOrDevice s) {
  if (!issubdtype(a.dtype(), inexact)) {
    throw std::invalid_argument("[__itruediv__] In-place division cannot cast to a non-floating point type.");
  }
  return divide(a, b, s);
}

array logical_or_bitwise_and(const array& a, const array& b, StreamOrDevice s) {
  return bitwise_and(a, b, s);
}
array logical_or_bitwise_or(const array& a, const array& b, StreamOrDevice s) { return bitwise_or(a, b, s); }

/// A pickled array: a NumPy array and the dtype. NumPy has no bfloat16, so its bits travel as
/// uint16 and are read back as bfloat16 (MLX's format).
py::tuple pickle_state(const array& a) {
  const array data = a.dtype() == bfloat16 ? view(a, uint16) : a;
  return py::make_tuple(to_numpy(data), py::cast(a.dtype()));
}

array from_pickle_state(const py::tuple& state) {
  const Dtype dtype = state[1].cast<Dtype>();
  if (dtype == bfloat16) return view(to_array(state[0], uint16), bfloat16);
  return to_array(state[0], dtype);
}

std::string repr(array a) {
  {
    py::gil_scoped_release release;
    a.eval();
  }
  std::ostringstream os;
  os << a;
  std::string out = os.str();
  if (a.dtype() == bool_) {
    // Python's spelling of the booleans.
    for (auto [from, to] : {std::pair<std::string, std::string>{"true", "True"}, {"false", "False"}}) {
      for (size_t pos = out.find(from); pos != std::string::npos; pos = out.find(from, pos + to.size())) {
        out.replace(pos, from.size(), to);
      }
    }
  }
  return out;
}

/// `with mx.printoptions(precision=p):` sets the print options and restores the old ones on exit.
struct PrintOptionsContext {
  PrintOptions options;
  PrintOptions saved;
};

}  // namespace

BRAID_PYTHON_INIT(kInitArray) {
  py::class_<array> cls(m, "array", "An N-dimensional array, computed lazily (mlx.core.array).",
                        py::custom_type_setup(&enable_array_buffer));
  cls.def(py::init([](py::object val, std::optional<Dtype> dtype) { return to_array(val, dtype); }), "val"_a,
          "dtype"_a = py::none(),
          "An array from a Python scalar, a nested list or tuple, an array or a NumPy array.")
      .def_property_readonly("shape",
                             [](const array& a) {
                               py::tuple t(a.ndim());
                               for (size_t i = 0; i < a.ndim(); ++i)
                                 t[i] = py::int_(a.shape(static_cast<int>(i)));
                               return t;
                             })
      .def_property_readonly("dtype", &array::dtype)
      .def_property_readonly("ndim", &array::ndim)
      .def_property_readonly("size", &array::size)
      .def_property_readonly("itemsize", &array::itemsize)
      .def_property_readonly("nbytes", &array::nbytes)
      .def_property_readonly("T", [](const array& a) { return transpose(a); })
      .def_property_readonly("real", [](const array& a) { return real(a); })
      .def_property_readonly("imag", [](const array& a) { return imag(a); })
      .def(
          "item", [](const array& a) { return to_scalar(a); },
          "Element 0 of a one-element array as a Python scalar.")
      .def(
          "tolist", [](const array& a) { return to_list(a); }, "The array as nested lists of Python scalars.")
      .def(
          "astype",
          [](const array& a, Dtype dtype, py::object s) { return astype(a, dtype, to_stream_or_device(s)); },
          "dtype"_a, "stream"_a = py::none(), "The array cast to `dtype`.")
      .def(
          "__array__",
          [](const array& a, py::object dtype, py::object /*copy*/) {
            return to_numpy(a, dtype.is_none() ? std::nullopt : std::optional<py::object>(dtype));
          },
          "dtype"_a = py::none(), "copy"_a = py::none())
      .def("__repr__", &repr)
      .def("__str__", &repr)
      .def("__len__",
           [](const array& a) {
             if (a.ndim() == 0) throw py::type_error("len() of a 0-dimensional array");
             return a.shape(0);
           })
      .def("__iter__",
           [](const array& a) {
             if (a.ndim() == 0) throw py::type_error("iteration over a 0-dimensional array");
             py::list rows;
             for (int32_t i = 0; i < a.shape(0); ++i) {
               Shape start(a.ndim(), 0);
               Shape stop(a.shape().begin(), a.shape().end());
               start[0] = i;
               stop[0] = i + 1;
               rows.append(py::cast(squeeze(slice(a, start, stop), 0)));
             }
             return py::iter(rows);
           })
      .def("__bool__",
           [](const array& a) { return to_scalar(a.size() == 1 ? astype(a, bool_) : a).cast<bool>(); })
      .def("__int__", [](const array& a) { return py::int_(to_scalar(a)); })
      .def("__float__", [](const array& a) { return py::float_(to_scalar(a)); })
      .def("__index__",
           [](const array& a) {
             // TypeError (not ValueError) for anything but one integer: bytes(a) and other
             // callers then fall back to the buffer protocol, as with MLX.
             if (!issubdtype(a.dtype(), integer) || a.size() != 1)
               throw py::type_error("only integer scalar arrays can be converted to a scalar index");
             return py::int_(to_scalar(a));
           })
      .def("__complex__", [](const array& a) { return py::module_::import("builtins").attr("complex")(to_scalar(a)); })
      .def("__format__",
           [](const array& a, const std::string& spec) -> py::object {
             // A 0-d array formats its item (f"{a:.2f}"); others take only the empty spec.
             if (spec.empty()) return py::str(py::cast(a));
             if (a.ndim() != 0) throw py::type_error("unsupported format string passed to array.__format__");
             return py::module_::import("builtins").attr("format")(to_scalar(a), spec);
           })
      .def("__copy__", [](const array& a) { return copy(a); })
      .def(
          "__deepcopy__", [](const array& a, py::object) { return copy(a); }, "memo"_a)
      .def(py::pickle(&pickle_state, &from_pickle_state))
      .def(
          "__reduce_ex__",
          [](py::handle self, int /*protocol*/) {
            // Protocol 2's form at every protocol: 0 and 1 would rebuild through object.__new__,
            // which cannot make a bound array (pybind11 aborts the process).
            return py::make_tuple(py::module_::import("copyreg").attr("__newobj__"),
                                  py::make_tuple(py::type::handle_of(self)), self.attr("__getstate__")());
          },
          "protocol"_a)
      .def("__neg__", [](const array& a) { return negative(a); })
      .def("__pos__", [](const array& a) { return a; })
      .def("__abs__", [](const array& a) { return abs(a); })
      .def("__invert__",
           [](const array& a) { return a.dtype() == bool_ ? logical_not(a) : bitwise_invert(a); });

  def_binary(cls, "__add__", "__radd__", &add);
  def_binary(cls, "__sub__", "__rsub__", &subtract);
  def_binary(cls, "__mul__", "__rmul__", &multiply);
  def_binary(cls, "__truediv__", "__rtruediv__", &divide);
  def_binary(cls, "__floordiv__", "__rfloordiv__", &floor_divide);
  def_binary(cls, "__mod__", "__rmod__", &remainder);
  def_binary(cls, "__pow__", "__rpow__", &power);
  def_binary(cls, "__matmul__", "__rmatmul__", &matmul);
  def_binary(cls, "__and__", "__rand__", &logical_or_bitwise_and);
  def_binary(cls, "__or__", "__ror__", &logical_or_bitwise_or);
  def_binary(cls, "__xor__", "__rxor__", &bitwise_xor);
  def_binary(cls, "__lshift__", "__rlshift__", &left_shift);
  def_binary(cls, "__rshift__", "__rrshift__", &right_shift);
  def_binary(cls, "__eq__", nullptr, &equal);
  def_binary(cls, "__ne__", nullptr, &not_equal);
  def_binary(cls, "__lt__", nullptr, &less);
  def_binary(cls, "__le__", nullptr, &less_equal);
  def_binary(cls, "__gt__", nullptr, &greater);
  def_binary(cls, "__ge__", nullptr, &greater_equal);
  def_inplace(cls, "__iadd__", &add);
  def_inplace(cls, "__isub__", &subtract);
  def_inplace(cls, "__imul__", &multiply);
  def_inplace(cls, "__itruediv__", &divide_in_place);
  def_inplace(cls, "__ifloordiv__", &floor_divide);
  def_inplace(cls, "__imod__", &remainder);
  def_inplace(cls, "__ipow__", &power);
  def_inplace(cls, "__imatmul__", &matmul);
  def_inplace(cls, "__iand__", &logical_or_bitwise_and);
  def_inplace(cls, "__ior__", &logical_or_bitwise_or);
  def_inplace(cls, "__ixor__", &bitwise_xor);
  def_inplace(cls, "__ilshift__", &left_shift);
  def_inplace(cls, "__irshift__", &right_shift);
  // Arrays compare element-wise, so they hash by identity (the Python object's), which keeps
  // them usable as dict keys.
  cls.def("__hash__", [](py::object self) { return reinterpret_cast<py::ssize_t>(self.ptr()); });
}

BRAID_PYTHON_INIT(kInitFunctions) {
  py::class_<PrintOptions>(m, "PrintOptions",
                           "How arrays print: `precision` digits after the point (-1: default).")
      .def(py::init([](int precision) { return PrintOptions{precision}; }), "precision"_a = -1)
      .def_readwrite("precision", &PrintOptions::precision)
      .def("__repr__", [](const PrintOptions& p) {
        return "PrintOptions(precision=" + std::to_string(p.precision) + ")";
      });
  m.def(
      "set_printoptions", [](int precision) { set_printoptions(PrintOptions{precision}); },
      "precision"_a = -1,
      "Sets the precision arrays print with, for the whole process (-1: the default format).");
  m.def("get_printoptions", &get_printoptions, "The print options in effect.");
  py::class_<PrintOptionsContext>(m, "_PrintOptionsContext")
      .def("__enter__",
           [](PrintOptionsContext& c) {
             c.saved = get_printoptions();
             set_printoptions(c.options);
             return c.options;
           })
      .def("__exit__", [](PrintOptionsContext& c, py::args) { set_printoptions(c.saved); });
  m.def(
      "printoptions",
      [](int precision) {
        return PrintOptionsContext{PrintOptions{precision}, PrintOptions{}};
      },
      "precision"_a = -1,
      "A context manager that sets the print precision inside a with block and restores the previous "
      "options after it.");
}

}  // namespace braid::python
