// The argument forms of mlx.core's op signatures, shared by the op binding files (ops_*.cpp,
// fast.cpp): array-like arguments, ints or tuples of ints, lists of arrays. A value of the wrong
// kind is a TypeError naming the function and the argument, as nanobind reports it in MLX.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "python.h"

namespace braid::python {

inline std::string type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

[[noreturn]] inline void throw_arg_type(const char* fn, const char* name, const char* expected,
                                        py::handle obj) {
  throw py::type_error(std::string("[") + fn + "] Expected `" + name + "` to be " + expected + ", got " +
                       type_name(obj) + ".");
}

/// A Python int or a NumPy integer scalar (bools are not ints here).
inline bool is_int_like(py::handle obj) {
  if (PyLong_Check(obj.ptr())) return !PyBool_Check(obj.ptr());
  if (!PyIndex_Check(obj.ptr()) || py::isinstance<array>(obj)) return false;
  // A NumPy scalar exists only once NumPy is imported; looking it up never imports it.
  auto numpy = py::reinterpret_steal<py::object>(PyImport_GetModule(py::str("numpy").ptr()));
  return numpy && py::isinstance(obj, numpy.attr("integer"));
}

inline bool is_list_or_tuple(py::handle obj) { return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()); }

/// True for what to_array converts: arrays, Python scalars, lists, tuples and NumPy arrays.
inline bool is_array_like(py::handle obj) {
  return py::isinstance<array>(obj) || is_python_scalar(obj) || is_list_or_tuple(obj) ||
         PyObject_CheckBuffer(obj.ptr()) || py::hasattr(obj, "__array__");
}

/// An argument MLX types as an array (a Python scalar takes its default dtype).
inline array arg_array(py::handle obj, const char* fn, const char* name) {
  if (py::isinstance<array>(obj)) return obj.cast<array>();
  if (!is_array_like(obj)) throw_arg_type(fn, name, "an array", obj);
  return to_array(obj);
}

/// As arg_array; a Python scalar takes `like`'s dtype where it fits (MLX's weak scalars).
inline array arg_array_like(py::handle obj, const array& like, const char* fn, const char* name) {
  if (is_python_scalar(obj)) return scalar_to_array(obj, like.dtype());
  return arg_array(obj, fn, name);
}

/// None or an array argument.
inline std::optional<array> arg_optional_array(py::handle obj, const char* fn, const char* name) {
  if (obj.is_none()) return std::nullopt;
  return arg_array(obj, fn, name);
}

/// A list or tuple of array-like values.
inline std::vector<array> arg_array_list(py::handle obj, const char* fn, const char* name) {
  if (!is_list_or_tuple(obj)) throw_arg_type(fn, name, "a list or tuple of arrays", obj);
  std::vector<array> out;
  for (auto item : py::reinterpret_borrow<py::sequence>(obj)) out.push_back(arg_array(item, fn, name));
  return out;
}

/// A Python int as int (out of int's range is a ValueError, as a bad value).
inline int arg_int(py::handle obj, const char* fn, const char* name) {
  if (!is_int_like(obj)) throw_arg_type(fn, name, "an int", obj);
  return obj.cast<int>();
}

/// A list or tuple of Python ints.
inline std::vector<int> arg_ints(py::handle obj, const char* fn, const char* name) {
  if (!is_list_or_tuple(obj)) throw_arg_type(fn, name, "a sequence of ints", obj);
  std::vector<int> out;
  for (auto item : py::reinterpret_borrow<py::sequence>(obj)) out.push_back(arg_int(item, fn, name));
  return out;
}

/// An int or a sequence of ints. `count` > 0 repeats an int that many times and requires a
/// sequence of exactly that length; 0 turns an int into a one-element list.
inline std::vector<int> arg_int_or_ints(py::handle obj, size_t count, const char* fn, const char* name) {
  if (is_int_like(obj)) return std::vector<int>(count == 0 ? 1 : count, obj.cast<int>());
  auto v = arg_ints(obj, fn, name);
  if (count > 0 && v.size() != count) {
    throw py::type_error(std::string("[") + fn + "] Expected `" + name + "` to be an int or a tuple of " +
                         std::to_string(count) + " ints, got " + std::to_string(v.size()) + " values.");
  }
  return v;
}

/// A shape: a sequence of ints (or one int).
inline Shape arg_shape(py::handle obj, const char* fn, const char* name) {
  std::vector<int32_t> dims;
  auto add = [&](py::handle item) {
    if (!is_int_like(item)) throw_arg_type(fn, name, "a sequence of ints", obj);
    const auto index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
    if (!index) throw py::error_already_set();
    dims.push_back(shape_dim(index, fn));
  };
  if (is_int_like(obj)) {
    add(obj);
  } else if (is_list_or_tuple(obj)) {
    for (auto item : py::reinterpret_borrow<py::sequence>(obj)) add(item);
  } else {
    throw_arg_type(fn, name, "a sequence of ints", obj);
  }
  return Shape(dims);
}

/// Python's tuple of a shape.
inline py::tuple shape_tuple(const Shape& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
  return t;
}

}  // namespace braid::python
