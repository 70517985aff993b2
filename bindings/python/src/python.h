// The shared parts of braid's Python module (braid.core): conversions between Python values and
// arrays, MLX's rules for Python scalars, and the registration of each file's bindings.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "braid/braid.h"

namespace braid::python {

namespace py = pybind11;
using namespace pybind11::literals;

// --- Registration ---------------------------------------------------------------------------
// Each source file adds its bindings with BRAID_PYTHON_INIT(order) { ... m.def(...) ... }; the
// module runs them in ascending order (dtypes and devices before the array class, the array
// class before the functions that name it in their signatures).
using InitFn = void (*)(py::module_&);
struct Registrar {
  Registrar(int order, InitFn fn);
};
void run_registered(py::module_& m);

#define BRAID_PYTHON_CAT2(a, b) a##b
#define BRAID_PYTHON_CAT(a, b) BRAID_PYTHON_CAT2(a, b)
#define BRAID_PYTHON_INIT(order)                                                               \
  static void BRAID_PYTHON_CAT(braid_python_init_, __LINE__)(::pybind11::module_ & m);         \
  static const ::braid::python::Registrar BRAID_PYTHON_CAT(braid_python_registrar_, __LINE__)( \
      order, &BRAID_PYTHON_CAT(braid_python_init_, __LINE__));                                 \
  static void BRAID_PYTHON_CAT(braid_python_init_, __LINE__)(::pybind11::module_ & m)

// Orders used by the files of this module.
inline constexpr int kInitDtype = 10;
inline constexpr int kInitDevice = 20;
inline constexpr int kInitArray = 30;
inline constexpr int kInitArrayMethods = 40;  // methods added to the array class later
inline constexpr int kInitFunctions = 50;     // ops, transforms, random, io, memory, fast

/// The bound array class, to add methods from other files:
///   array_class(m).def("sum", ...);
py::class_<array> array_class(py::module_& m);
/// Gives the array type the buffer protocol (array_export.cpp): memoryview(a) and NumPy read
/// the evaluated buffer in place. Passed to the class as py::custom_type_setup.
void enable_array_buffer(PyHeapTypeObject* heap_type);

// --- Python values to arrays ----------------------------------------------------------------

/// True for bool, int, float and complex (Python's or NumPy's scalar types).
bool is_python_scalar(py::handle obj);

/// Any value usable as an array, as mx.array(obj, dtype) takes it: an array (returned as is, or
/// cast when `dtype` is given), a Python scalar (bool -> bool, int -> int32 or int64 when it
/// does not fit, float -> float32, complex -> complex64), a nested list or tuple (of scalars
/// or arrays), or anything with the buffer protocol or __array__ (NumPy arrays: their dtype,
/// float64 -> float32 as MLX). Throws std::invalid_argument for anything else.
array to_array(py::handle obj, std::optional<Dtype> dtype = std::nullopt);

/// MLX's "weak" Python scalar: an int takes `hint` when it is an integer or floating dtype, a
/// float takes `hint` when it is floating (or complex), otherwise the defaults of to_array.
array scalar_to_array(py::handle scalar, std::optional<Dtype> hint);

/// The operands of a binary op, with a Python scalar taking the other operand's dtype where it
/// fits (mx.array([1], int8) + 1 is int8; + 1.5 is float32).
std::pair<array, array> to_arrays(py::handle a, py::handle b);

/// A Python int or a sequence of ints as a list of axes.
std::vector<int> to_axes(py::handle obj);
/// A Python int or a sequence of ints as a shape.
Shape to_shape(py::handle obj);
/// One dimension of a shape: a Python int within int32's range, else std::invalid_argument
/// (ValueError) naming the dimension, as MLX's binding reports it.
int32_t shape_dim(py::handle obj, const char* fn);

// --- Arrays to Python values ----------------------------------------------------------------

/// The array as nested lists of Python scalars (evaluates it with the GIL released).
py::object to_list(array a);
/// Element 0 of a one-element array as a Python scalar.
py::object to_scalar(array a);
/// A NumPy array sharing the array's (evaluated) buffer, which it keeps alive. bfloat16 raises
/// TypeError, as in MLX (NumPy has no bfloat16).
py::object to_numpy(array a, std::optional<py::object> dtype = std::nullopt);

/// mx.array of a DLPack capsule or of an object with __dlpack__ (MLX's consumer): a host
/// tensor in C order copied into braid's memory, float64 as float32 (as NumPy input), then
/// `dtype` if given. The capsule is consumed (renamed "used_dltensor"); a strided or
/// already-used one is rejected (ValueError) and left as it was.
array dlpack_to_array(py::handle obj, std::optional<Dtype> dtype);
/// mx.from_dlpack: a DLPack tensor of host memory, strides included, in place or copied
/// (`copy` true); float64 becomes float32 unless `keep_float64`.
array import_dlpack(py::object x, std::optional<bool> copy, bool keep_float64);

/// Evaluates with the GIL released (the caller holds it); arrays already computed in host
/// memory return at once, keeping the GIL.
void eval_released(std::vector<array> arrays);
/// eval_released for one array whose elements the caller reads next: a device result's host
/// copy is made while the GIL is released too.
void eval_to_host_released(const array& a);

// --- Trees: lists, tuples and dicts of arrays (MLX's tree utilities) ------------------------

/// Every array leaf of `tree` in depth-first order (dicts in their insertion order). Leaves
/// that are not arrays are skipped when `strict` is false and rejected when true.
std::vector<array> tree_flatten_arrays(py::handle tree, bool strict = true);
/// `tree` with each array leaf replaced by the next of `leaves` (same traversal as above).
py::object tree_unflatten_arrays(py::handle tree, const std::vector<array>& leaves, size_t& next);
/// A container for the mapped items of `dict`: a new dict, or for a dict subclass (an
/// nn.Module) a shallow copy of it, keeping its class and attributes.
py::object new_dict_like(py::handle dict);
/// `tree` with `fn` applied to every node for which `is_leaf` holds, rebuilding the lists,
/// tuples and dicts around them (dict subclasses keep their class).
py::object tree_map_leaves(py::handle tree, const std::function<bool(py::handle)>& is_leaf,
                           const std::function<py::object(py::handle)>& fn);
/// `tree` with `fn` applied to every array leaf (dict subclasses keep their class).
py::object tree_map_arrays(py::handle tree, const std::function<py::object(const array&)>& fn);

// --- Streams ---------------------------------------------------------------------------------

/// The `stream` keyword argument of every op: None, a Stream, a Device or a DeviceType.
StreamOrDevice to_stream_or_device(py::handle obj);

}  // namespace braid::python
