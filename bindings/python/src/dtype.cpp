// Dtypes as Python objects: braid.core.float32 and the rest, DtypeCategory, issubdtype, finfo, iinfo.
#include <pybind11/operators.h>

#include <cmath>
#include <limits>

#include "python.h"

namespace braid::python {

namespace {
const std::pair<const char*, Dtype> kDtypes[] = {
    {"bool_", bool_},     {"uint8", uint8},     {"uint16", uint16},   {"uint32", uint32},   {"uint64", uint64},
    {"int8", int8},       {"int16", int16},     {"int32", int32},     {"int64", int64},     {"float16", float16},
    {"bfloat16", bfloat16}, {"float32", float32}, {"float64", float64}, {"complex64", complex64},
};

std::string category_name(Dtype::Category c) {
  switch (c) {
    case Dtype::Category::complexfloating:
      return "complexfloating";
    case Dtype::Category::floating:
      return "floating";
    case Dtype::Category::inexact:
      return "inexact";
    case Dtype::Category::signedinteger:
      return "signedinteger";
    case Dtype::Category::unsignedinteger:
      return "unsignedinteger";
    case Dtype::Category::integer:
      return "integer";
    case Dtype::Category::number:
      return "number";
    case Dtype::Category::generic:
      return "generic";
  }
  return "unknown";
}
}  // namespace

BRAID_PYTHON_INIT(kInitDtype) {
  py::class_<Dtype>(m, "Dtype", "An array's element type (braid.core.float32, ...).")
      .def_property_readonly("size", [](const Dtype& d) { return static_cast<int>(d.size()); },
                             "The size of one element in bytes.")
      .def("__repr__", [](const Dtype& d) { return "braid.core." + dtype_name(d); })
      .def("__eq__", [](const Dtype& a, py::object b) {
        return py::isinstance<Dtype>(b) && a == b.cast<Dtype>();
      })
      .def("__hash__", [](const Dtype& d) { return static_cast<int>(d.val()); })
      .def("__reduce__", [](const Dtype& d) {
        // Pickled by name, looked up again in braid.core when unpickled (braid._dtype).
        for (const auto& [name, dtype] : kDtypes) {
          if (dtype == d) return py::make_tuple(py::module_::import("braid").attr("_dtype"), py::make_tuple(name));
        }
        throw std::invalid_argument("[Dtype] Unknown dtype.");
      });
  for (const auto& [name, dtype] : kDtypes) m.attr(name) = py::cast(dtype);

  py::enum_<Dtype::Category>(m, "DtypeCategory", "A family of dtypes, as NumPy's abstract types.")
      .value("complexfloating", Dtype::Category::complexfloating)
      .value("floating", Dtype::Category::floating)
      .value("inexact", Dtype::Category::inexact)
      .value("signedinteger", Dtype::Category::signedinteger)
      .value("unsignedinteger", Dtype::Category::unsignedinteger)
      .value("integer", Dtype::Category::integer)
      .value("number", Dtype::Category::number)
      .value("generic", Dtype::Category::generic);
  for (auto c : {Dtype::Category::complexfloating, Dtype::Category::floating, Dtype::Category::inexact,
                 Dtype::Category::signedinteger, Dtype::Category::unsignedinteger, Dtype::Category::integer,
                 Dtype::Category::number, Dtype::Category::generic}) {
    m.attr(category_name(c).c_str()) = py::cast(c);
  }

  m.def(
      "issubdtype",
      [](py::object a, py::object b) -> bool {
        auto is_dtype = [](py::handle h) { return py::isinstance<Dtype>(h); };
        auto check = [](py::handle h) {
          if (!py::isinstance<Dtype>(h) && !py::isinstance<Dtype::Category>(h)) {
            throw std::invalid_argument("[issubdtype] Expected a Dtype or a DtypeCategory.");
          }
        };
        check(a);
        check(b);
        if (is_dtype(a) && is_dtype(b)) return issubdtype(a.cast<Dtype>(), b.cast<Dtype>());
        if (is_dtype(a)) return issubdtype(a.cast<Dtype>(), b.cast<Dtype::Category>());
        if (is_dtype(b)) return issubdtype(a.cast<Dtype::Category>(), b.cast<Dtype>());
        return issubdtype(a.cast<Dtype::Category>(), b.cast<Dtype::Category>());
      },
      "arg1"_a, "arg2"_a, "Whether arg1 is a subtype of arg2 (dtypes or categories), as numpy.issubdtype.");
  m.def("promote_types", &promote_types, "dtype1"_a, "dtype2"_a, "The dtype both operands convert to.");

  py::class_<finfo>(m, "finfo", "The limits of a floating dtype.")
      .def(py::init<Dtype>(), "dtype"_a)
      .def_readonly("dtype", &finfo::dtype)
      .def_property_readonly("min", [](const finfo& f) { return f.min; })
      .def_property_readonly("max", [](const finfo& f) { return f.max; })
      .def_property_readonly("eps", [](const finfo& f) { return f.eps; })
      .def_readonly("smallest_normal", &finfo::smallest_normal)
      .def_readonly("bits", &finfo::bits)
      .def("__repr__", [](const finfo& f) {
        return "finfo(min=" + py::repr(py::float_(f.min)).cast<std::string>() +
               ", max=" + py::repr(py::float_(f.max)).cast<std::string>() + ", dtype=" + dtype_name(f.dtype) + ")";
      });
  py::class_<iinfo>(m, "iinfo", "The limits of an integer dtype.")
      .def(py::init<Dtype>(), "dtype"_a)
      .def_readonly("dtype", &iinfo::dtype)
      .def_property_readonly("min", [](const iinfo& i) { return i.min; })
      .def_property_readonly("max", [](const iinfo& i) { return i.max; })
      .def("__repr__", [](const iinfo& i) {
        return "iinfo(min=" + std::to_string(i.min) + ", max=" + std::to_string(i.max) +
               ", dtype=" + dtype_name(i.dtype) + ")";
      });
}

}  // namespace braid::python
