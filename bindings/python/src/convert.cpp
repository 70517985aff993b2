// Python values to arrays and back (python.h), with MLX's rules for Python scalars and lists.
#include <pybind11/numpy.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>

#include "python.h"

namespace braid::python {

namespace {

bool is_bool(py::handle obj) { return PyBool_Check(obj.ptr()); }
bool is_int(py::handle obj) { return PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr()); }
bool is_float(py::handle obj) { return PyFloat_Check(obj.ptr()); }
bool is_complex(py::handle obj) { return PyComplex_Check(obj.ptr()); }

/// A Python int as int64; ints past int64's range are an error, as in MLX.
int64_t int_value(py::handle obj) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  if (overflow != 0) {
    throw std::invalid_argument("[array] Python int " + py::repr(obj).cast<std::string>() +
                                " does not fit in a 64-bit integer.");
  }
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

/// A Python int for a uint64 array: the whole of [int64 min, 2^64); negative ones wrap.
uint64_t uint64_value(py::handle obj) {
  py::int_ zero(0);
  const int negative = PyObject_RichCompareBool(obj.ptr(), zero.ptr(), Py_LT);
  if (negative < 0) throw py::error_already_set();
  if (negative == 1) return static_cast<uint64_t>(int_value(obj));
  const unsigned long long v = PyLong_AsUnsignedLongLong(obj.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw std::invalid_argument("[array] Python int " + py::repr(obj).cast<std::string>() +
                                " does not fit in a 64-bit integer.");
  }
  return v;
}

bool fits_int32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

bool is_inexact(Dtype d) { return issubdtype(d, inexact); }

complex64_t complex_value(py::handle obj) {
  Py_complex c = PyComplex_AsCComplex(obj.ptr());
  return complex64_t(static_cast<float>(c.real), static_cast<float>(c.imag));
}

// --- Nested lists ------------------------------------------------------------------------

enum class LeafKind { boolean = 0, integer = 1, real = 2, complex = 3 };

bool is_sequence(py::handle obj) { return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()); }

// MLX's message, word for word (no "[array]" tag): programs match it.
constexpr const char* kNonUniform = "Initialization encountered non-uniform length.";

/// Walks a nested list of Python scalars: its shape, the widest kind among its leaves and the
/// leaves in row-major order. Returns false when some leaf is not a Python scalar (a list of
/// arrays, which is stacked instead).
bool walk_list(py::handle obj, size_t depth, Shape& shape, LeafKind& kind, std::vector<py::handle>& leaves) {
  if (is_sequence(obj)) {
    auto seq = py::reinterpret_borrow<py::sequence>(obj);
    const auto n = static_cast<int64_t>(py::len(seq));
    if (n > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("[array] A list is too long.");
    if (depth == shape.size()) {
      if (!leaves.empty()) throw std::invalid_argument(kNonUniform);
      shape.push_back(static_cast<int32_t>(n));
    } else if (depth > shape.size() || shape[depth] != n) {
      throw std::invalid_argument(kNonUniform);
    }
    for (auto item : seq) {
      if (!walk_list(item, depth + 1, shape, kind, leaves)) return false;
    }
    return true;
  }
  if (!is_python_scalar(obj)) return false;
  if (depth != shape.size()) throw std::invalid_argument(kNonUniform);
  LeafKind k = is_bool(obj)      ? LeafKind::boolean
               : is_int(obj)     ? LeafKind::integer
               : is_complex(obj) ? LeafKind::complex
                                 : LeafKind::real;
  if (static_cast<int>(k) > static_cast<int>(kind)) kind = k;
  leaves.push_back(obj);
  return true;
}

array list_to_array(py::handle obj, std::optional<Dtype> dtype) {
  Shape shape;
  LeafKind kind = LeafKind::boolean;
  std::vector<py::handle> leaves;
  bool scalars_only = false;
  try {
    scalars_only = walk_list(obj, 0, shape, kind, leaves);
  } catch (const std::invalid_argument&) {
    // A ragged list of arrays may still stack (its elements are converted one by one below).
    scalars_only = false;
    shape.clear();
    leaves.clear();
    bool has_array_like = false;
    for (auto item : py::reinterpret_borrow<py::sequence>(obj)) {
      if (!is_sequence(item) && !is_python_scalar(item)) has_array_like = true;
    }
    if (!has_array_like) throw;
  }
  if (!scalars_only) {
    // Some element is an array (or NumPy array, or a list holding one): convert each and stack.
    std::vector<array> parts;
    for (auto item : py::reinterpret_borrow<py::sequence>(obj)) {
      parts.push_back(to_array(item));
      if (parts.back().shape() != parts.front().shape()) throw std::invalid_argument(kNonUniform);
    }
    array out = stack(parts);
    return dtype && out.dtype() != *dtype ? astype(out, *dtype) : out;
  }
  if (leaves.empty()) return array(static_cast<const float*>(nullptr), shape, dtype.value_or(float32));
  switch (kind) {
    case LeafKind::boolean: {
      std::vector<uint8_t> v;
      v.reserve(leaves.size());
      for (auto h : leaves) v.push_back(h.ptr() == Py_True ? 1 : 0);
      return array(v.data(), shape, dtype.value_or(bool_));
    }
    case LeafKind::integer: {
      if (dtype == uint64) {
        std::vector<uint64_t> u;
        u.reserve(leaves.size());
        for (auto h : leaves) u.push_back(is_bool(h) ? (h.ptr() == Py_True ? 1 : 0) : uint64_value(h));
        return array(u.data(), shape, uint64);
      }
      std::vector<int64_t> v;
      v.reserve(leaves.size());
      bool all_int32 = true;
      for (auto h : leaves) {
        v.push_back(is_bool(h) ? (h.ptr() == Py_True ? 1 : 0) : int_value(h));
        all_int32 = all_int32 && fits_int32(v.back());
      }
      return array(v.data(), shape, dtype.value_or(all_int32 ? int32 : int64));
    }
    case LeafKind::real: {
      std::vector<double> v;
      v.reserve(leaves.size());
      for (auto h : leaves) v.push_back(PyFloat_AsDouble(h.ptr()));
      if (PyErr_Occurred()) throw py::error_already_set();
      return array(v.data(), shape, dtype.value_or(float32));
    }
    case LeafKind::complex: {
      std::vector<complex64_t> v;
      v.reserve(leaves.size());
      for (auto h : leaves)
        v.push_back(is_complex(h) ? complex_value(h)
                                  : complex64_t(static_cast<float>(PyFloat_AsDouble(h.ptr())), 0.0f));
      if (PyErr_Occurred()) throw py::error_already_set();
      return array(v.data(), shape, dtype.value_or(complex64));
    }
  }
  throw std::logic_error("unreachable");
}

// --- NumPy and the buffer protocol ---------------------------------------------------------

template <typename T>
array from_buffer(const void* data, const Shape& shape, Dtype dtype) {
  return array(static_cast<const T*>(data), shape, dtype);
}

array numpy_to_array(const py::array& arr, std::optional<Dtype> dtype) {
  Shape shape;
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    if (arr.shape(i) > std::numeric_limits<int32_t>::max()) {
      throw std::invalid_argument("Shape dimension falls outside supported `int` range.");  // MLX's words
    }
    shape.push_back(static_cast<int32_t>(arr.shape(i)));
  }
  // The dtype's kind and size through its Python attributes: pybind11 2.10 reads them from the
  // descriptor struct, whose layout NumPy 2 changed.
  const auto dt = arr.dtype();
  const char kind = dt.attr("kind").cast<std::string>().at(0);
  const auto size = dt.attr("itemsize").cast<py::ssize_t>();
  if (dt.attr("byteorder").cast<std::string>() == ">") {
    throw std::invalid_argument(
        "[array] Big-endian NumPy arrays are not supported; convert with .astype(dtype.newbyteorder('=')).");
  }
  const void* p = arr.data();
  switch (kind) {
    case 'b':
      // NumPy's bool is one byte holding 0 or 1.
      return from_buffer<uint8_t>(p, shape, dtype.value_or(bool_));
    case 'u':
      if (size == 1) return from_buffer<uint8_t>(p, shape, dtype.value_or(uint8));
      if (size == 2) return from_buffer<uint16_t>(p, shape, dtype.value_or(uint16));
      if (size == 4) return from_buffer<uint32_t>(p, shape, dtype.value_or(uint32));
      if (size == 8) return from_buffer<uint64_t>(p, shape, dtype.value_or(uint64));
      break;
    case 'i':
      if (size == 1) return from_buffer<int8_t>(p, shape, dtype.value_or(int8));
      if (size == 2) return from_buffer<int16_t>(p, shape, dtype.value_or(int16));
      if (size == 4) return from_buffer<int32_t>(p, shape, dtype.value_or(int32));
      if (size == 8) return from_buffer<int64_t>(p, shape, dtype.value_or(int64));
      break;
    case 'f':
      if (size == 2) return from_buffer<float16_t>(p, shape, dtype.value_or(float16));
      if (size == 4) return from_buffer<float>(p, shape, dtype.value_or(float32));
      // float64 becomes float32 unless asked for, as in MLX.
      if (size == 8) return from_buffer<double>(p, shape, dtype.value_or(float32));
      break;
    case 'c': {
      const size_t n = static_cast<size_t>(arr.size());
      std::vector<complex64_t> v(n);
      if (size == 8) {
        std::memcpy(v.data(), p, n * sizeof(complex64_t));
      } else if (size == 16) {
        const auto* src = static_cast<const std::complex<double>*>(p);
        for (size_t i = 0; i < n; ++i)
          v[i] = complex64_t(static_cast<float>(src[i].real()), static_cast<float>(src[i].imag()));
      } else {
        break;
      }
      return array(v.data(), shape, dtype.value_or(complex64));
    }
    default: break;
  }
  throw std::invalid_argument("[array] Cannot convert a NumPy array of dtype " +
                              dt.attr("name").cast<std::string>() + " to an array.");
}

// --- Arrays to Python ----------------------------------------------------------------------

py::object element_to_python(const char* p, Dtype dtype) {
  switch (dtype.val()) {
    case Dtype::Val::bool_: return py::bool_(*reinterpret_cast<const bool*>(p));
    case Dtype::Val::uint8: return py::int_(*reinterpret_cast<const uint8_t*>(p));
    case Dtype::Val::uint16: return py::int_(*reinterpret_cast<const uint16_t*>(p));
    case Dtype::Val::uint32: return py::int_(*reinterpret_cast<const uint32_t*>(p));
    case Dtype::Val::uint64: return py::int_(*reinterpret_cast<const uint64_t*>(p));
    case Dtype::Val::int8: return py::int_(*reinterpret_cast<const int8_t*>(p));
    case Dtype::Val::int16: return py::int_(*reinterpret_cast<const int16_t*>(p));
    case Dtype::Val::int32: return py::int_(*reinterpret_cast<const int32_t*>(p));
    case Dtype::Val::int64: return py::int_(*reinterpret_cast<const int64_t*>(p));
    case Dtype::Val::float16: return py::float_(static_cast<float>(*reinterpret_cast<const float16_t*>(p)));
    case Dtype::Val::bfloat16: return py::float_(static_cast<float>(*reinterpret_cast<const bfloat16_t*>(p)));
    case Dtype::Val::float32: return py::float_(*reinterpret_cast<const float*>(p));
    case Dtype::Val::float64: return py::float_(*reinterpret_cast<const double*>(p));
    case Dtype::Val::complex64: {
      complex64_t c;
      std::memcpy(&c, p, sizeof(c));
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
    }
  }
  throw std::logic_error("unreachable");
}

py::object list_level(const char* base, const array& a, size_t dim) {
  if (dim == a.ndim()) return element_to_python(base, a.dtype());
  const int32_t n = a.shape(static_cast<int>(dim));
  const int64_t step = a.strides(static_cast<int>(dim)) * static_cast<int64_t>(a.itemsize());
  py::list out(n);
  for (int32_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = list_level(base + i * step, a, dim + 1);
  }
  return std::move(out);
}

/// NumPy's type string for the dtype.
const char* numpy_typestr(Dtype d) {
  switch (d.val()) {
    case Dtype::Val::bool_: return "?";
    case Dtype::Val::uint8: return "u1";
    case Dtype::Val::uint16: return "u2";
    case Dtype::Val::uint32: return "u4";
    case Dtype::Val::uint64: return "u8";
    case Dtype::Val::int8: return "i1";
    case Dtype::Val::int16: return "i2";
    case Dtype::Val::int32: return "i4";
    case Dtype::Val::int64: return "i8";
    case Dtype::Val::float16: return "f2";
    case Dtype::Val::float32: return "f4";
    case Dtype::Val::float64: return "f8";
    case Dtype::Val::complex64: return "c8";
    case Dtype::Val::bfloat16: break;
  }
  throw std::invalid_argument("[array] NumPy has no bfloat16; convert with astype(float32) first.");
}

}  // namespace

bool is_python_scalar(py::handle obj) {
  return is_bool(obj) || is_int(obj) || is_float(obj) || is_complex(obj);
}

array scalar_to_array(py::handle obj, std::optional<Dtype> hint) {
  if (is_bool(obj)) return array(obj.ptr() == Py_True);
  if (is_int(obj)) {
    if (hint && issubdtype(*hint, integer)) {
      // The int takes the array's integer dtype. As MLX, one that does not fit a dtype narrower
      // than 64 bits is an error rather than a silent wrap; int64 and uint64 take any int of
      // 64 bits (a negative one wraps into uint64, as in MLX).
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
      if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
      if (overflow > 0 && *hint == uint64) {
        const unsigned long long u = PyLong_AsUnsignedLongLong(obj.ptr());
        if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred()))
          return array(static_cast<uint64_t>(u), uint64);
        PyErr_Clear();
      }
      const auto limits = iinfo(*hint);
      const bool fits = overflow == 0 &&
                        (hint->size() == 8 || (v >= limits.min && v <= static_cast<long long>(limits.max)));
      if (!fits) {
        throw std::invalid_argument("Converting " + py::str(obj).cast<std::string>() + " to " +
                                    dtype_name(*hint) + " would result in overflow.");
      }
      return array(static_cast<int64_t>(v), *hint);
    }
    const int64_t v = int_value(obj);
    if (hint && is_inexact(*hint)) return array(v, *hint);
    return fits_int32(v) ? array(static_cast<int32_t>(v)) : array(v);
  }
  if (is_float(obj)) {
    const double v = PyFloat_AsDouble(obj.ptr());
    if (hint && is_inexact(*hint)) return array(v, *hint);
    return array(v, float32);
  }
  if (is_complex(obj)) return array(complex_value(obj));
  throw std::invalid_argument("[array] Expected a Python scalar, got " +
                              py::repr(py::type::handle_of(obj)).cast<std::string>() + ".");
}

array to_array(py::handle obj, std::optional<Dtype> dtype) {
  if (py::isinstance<array>(obj)) {
    auto a = obj.cast<array>();
    return dtype && a.dtype() != *dtype ? astype(a, *dtype) : a;
  }
  if (is_python_scalar(obj)) {
    if (!dtype) return scalar_to_array(obj, std::nullopt);
    if (is_complex(obj)) return astype(array(complex_value(obj)), *dtype);
    if (is_float(obj)) return array(PyFloat_AsDouble(obj.ptr()), *dtype);
    if (is_bool(obj)) return array(obj.ptr() == Py_True, *dtype);
    if (*dtype == uint64) return array(uint64_value(obj), uint64);
    return array(int_value(obj), *dtype);
  }
  if (py::hasattr(obj, "__mlx_array__")) {
    // MLX's protocol for objects that stand for an array; it comes before DLPack and NumPy.
    py::object a = obj.attr("__mlx_array__")();
    if (!py::isinstance<array>(a)) {
      throw std::invalid_argument("[array] __mlx_array__ must return an array, got " +
                                  py::str(py::type::handle_of(a).attr("__name__")).cast<std::string>() + ".");
    }
    return to_array(a, dtype);
  }
  if (is_sequence(obj)) return list_to_array(obj, dtype);
  if (PyCapsule_CheckExact(obj.ptr())) return dlpack_to_array(obj, dtype);
  if (PyBytes_Check(obj.ptr())) {
    // bytes are a buffer of uint8, as bytearray and memoryview (NumPy would make one 'S' scalar).
    return to_array(py::module_::import("numpy").attr("frombuffer")(obj, "uint8"), dtype);
  }
  if (PyObject_CheckBuffer(obj.ptr()) || py::hasattr(obj, "__array__")) {
    py::array arr = py::array::ensure(obj, py::array::c_style);
    if (arr) return numpy_to_array(arr, dtype);
    // NumPy could not read it: its error, raised again to say why, unless it is a TypeError
    // (a dtype NumPy lacks, as torch's bfloat16) and the object has DLPack, which is read then,
    // strides included, and copied. Other refusals (a torch tensor with its negative or
    // conjugate bit set) stay errors: DLPack would hand over the memory without the bit.
    try {
      py::module_::import("numpy").attr("ascontiguousarray")(obj);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError) || !py::hasattr(obj, "__dlpack__")) throw;
      const array a = import_dlpack(py::reinterpret_borrow<py::object>(obj), /*copy=*/true, false);
      return dtype && *dtype != a.dtype() ? astype(a, *dtype) : a;
    }
  }
  if (py::hasattr(obj, "__dlpack__")) return dlpack_to_array(obj, dtype);
  throw std::invalid_argument("[array] Cannot convert a value of type " +
                              py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>() +
                              " to an array.");
}

std::pair<array, array> to_arrays(py::handle a, py::handle b) {
  const bool a_array = py::isinstance<array>(a);
  const bool b_array = py::isinstance<array>(b);
  if (a_array && is_python_scalar(b)) {
    auto x = a.cast<array>();
    return {x, scalar_to_array(b, x.dtype())};
  }
  if (b_array && is_python_scalar(a)) {
    auto y = b.cast<array>();
    return {scalar_to_array(a, y.dtype()), y};
  }
  if (is_python_scalar(a) && is_python_scalar(b)) {
    auto x = scalar_to_array(a, std::nullopt);
    // Two ints each take their own width (int32, or int64 when large) and then promote.
    if (is_int(b) && issubdtype(x.dtype(), integer)) return {x, scalar_to_array(b, std::nullopt)};
    return {x, scalar_to_array(b, x.dtype())};
  }
  return {to_array(a), to_array(b)};
}

std::vector<int> to_axes(py::handle obj) {
  if (is_int(obj)) return {obj.cast<int>()};
  if (is_sequence(obj)) {
    std::vector<int> out;
    for (auto item : py::reinterpret_borrow<py::sequence>(obj)) {
      if (!is_int(item)) throw std::invalid_argument("[axes] Expected an int or a sequence of ints.");
      out.push_back(item.cast<int>());
    }
    return out;
  }
  throw std::invalid_argument("[axes] Expected an int or a sequence of ints, got " +
                              py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>() + ".");
}

int32_t shape_dim(py::handle obj, const char* fn) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  if (v == -1 && overflow == 0 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()) {
    throw std::invalid_argument(std::string("[") + fn + "] Shape dimension " +
                                py::str(obj).cast<std::string>() + " is outside the supported range [" +
                                std::to_string(std::numeric_limits<int32_t>::min()) + ", " +
                                std::to_string(std::numeric_limits<int32_t>::max()) + "].");
  }
  return static_cast<int32_t>(v);
}

Shape to_shape(py::handle obj) {
  Shape out;
  if (is_int(obj)) {
    out.push_back(shape_dim(obj, "shape"));
    return out;
  }
  if (is_sequence(obj)) {
    for (auto item : py::reinterpret_borrow<py::sequence>(obj)) {
      if (!is_int(item)) throw std::invalid_argument("[shape] Expected an int or a sequence of ints.");
      out.push_back(shape_dim(item, "shape"));
    }
    return out;
  }
  throw std::invalid_argument("[shape] Expected an int or a sequence of ints.");
}

bool computed_in_host_memory(const array& a) {
  // A GPU result is available once its kernels are enqueued; reading it still waits for the
  // device, and that wait must not hold the GIL.
  if (!a.is_available()) return false;
  const auto& data = a.desc()->data;
  return !(data && data->on_device);
}

void eval_released(std::vector<array> arrays) {
  // Arrays already computed in host memory keep the GIL: each release hands it to a waiting
  // thread, and taking it back waits for that thread and for a wake-up.
  if (std::all_of(arrays.begin(), arrays.end(), computed_in_host_memory)) return;
  py::gil_scoped_release release;
  eval(std::move(arrays));
}

void eval_to_host_released(const array& a) {
  if (computed_in_host_memory(a)) return;
  py::gil_scoped_release release;
  eval(std::vector<array>{a});
  // A device result's host copy (a wait for the device and a copy) is made here too, so that
  // the caller reads it with the GIL taken back once.
  if (a.size() > 0) (void)a.host_data();
}

py::object to_list(array a) {
  eval_to_host_released(a);
  const char* base = static_cast<const char*>(a.host_data());
  return list_level(base, a, 0);
}

py::object to_scalar(array a) {
  if (a.size() != 1)
    throw std::invalid_argument("[item] Only size 1 arrays can be converted to Python scalars.");
  eval_to_host_released(a);
  return element_to_python(static_cast<const char*>(a.host_data()), a.dtype());
}

py::object to_numpy(array a, std::optional<py::object> dtype) {
  if (a.dtype() == bfloat16)
    throw py::type_error("bfloat16 arrays cannot be converted to NumPy; use astype(float32) first.");
  eval_to_host_released(a);
  std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
  std::vector<py::ssize_t> strides;
  for (size_t i = 0; i < a.ndim(); ++i)
    strides.push_back(a.strides(static_cast<int>(i)) * static_cast<int64_t>(a.itemsize()));
  // The NumPy array shares the buffer; the capsule keeps the array (and so its buffer) alive.
  auto* owner = new array(a);
  py::capsule base(owner, [](void* p) { delete static_cast<array*>(p); });
  py::array out(py::dtype(numpy_typestr(a.dtype())), shape, strides, a.host_data(), base);
  if (dtype && !dtype->is_none()) return out.attr("astype")(*dtype);
  return std::move(out);
}

// --- Trees -------------------------------------------------------------------------------

namespace {
void flatten_into(py::handle tree, bool strict, std::vector<array>& out) {
  if (py::isinstance<array>(tree)) {
    out.push_back(tree.cast<array>());
  } else if (is_sequence(tree)) {
    for (auto item : py::reinterpret_borrow<py::sequence>(tree)) flatten_into(item, strict, out);
  } else if (PyDict_Check(tree.ptr())) {
    for (auto item : py::reinterpret_borrow<py::dict>(tree)) flatten_into(item.second, strict, out);
  } else if (strict) {
    throw std::invalid_argument("[tree_flatten] The tree holds a leaf that is not an array: " +
                                py::repr(tree).cast<std::string>() + ".");
  }
}
}  // namespace

std::vector<array> tree_flatten_arrays(py::handle tree, bool strict) {
  std::vector<array> out;
  flatten_into(tree, strict, out);
  return out;
}

py::object tree_map_leaves(py::handle tree, const std::function<bool(py::handle)>& is_leaf,
                           const std::function<py::object(py::handle)>& fn) {
  if (is_leaf(tree)) return fn(tree);
  auto map = [&](py::handle item) { return tree_map_leaves(item, is_leaf, fn); };
  if (PyList_Check(tree.ptr())) {
    py::list out;
    for (auto item : py::reinterpret_borrow<py::list>(tree)) out.append(map(item));
    return std::move(out);
  }
  if (PyTuple_Check(tree.ptr())) {
    auto t = py::reinterpret_borrow<py::tuple>(tree);
    py::tuple out(t.size());
    for (size_t i = 0; i < t.size(); ++i) out[i] = map(t[i]);
    if (PyTuple_CheckExact(tree.ptr())) return std::move(out);
    // A tuple subclass keeps its class, as in MLX: a named tuple from its fields, any other
    // from the sequence of items.
    py::handle cls = py::type::handle_of(tree);
    return py::hasattr(tree, "_fields") ? cls(*out) : cls(out);
  }
  if (PyDict_Check(tree.ptr())) {
    py::object out = new_dict_like(tree);
    for (auto item : py::reinterpret_borrow<py::dict>(tree)) out[item.first] = map(item.second);
    return out;
  }
  return py::reinterpret_borrow<py::object>(tree);
}

py::object tree_map_arrays(py::handle tree, const std::function<py::object(const array&)>& fn) {
  return tree_map_leaves(
      tree, [](py::handle h) { return py::isinstance<array>(h); },
      [&](py::handle h) { return fn(h.cast<array>()); });
}

py::object new_dict_like(py::handle dict) {
  if (PyDict_CheckExact(dict.ptr())) return py::dict();
  // A dict subclass (an nn.Module) keeps its class and attributes: a shallow copy, whose
  // items the caller then replaces.
  return py::module_::import("copy").attr("copy")(dict);
}

py::object tree_unflatten_arrays(py::handle tree, const std::vector<array>& leaves, size_t& next) {
  return tree_map_arrays(tree, [&](const array&) -> py::object {
    if (next >= leaves.size())
      throw std::invalid_argument("[tree_unflatten] Fewer arrays than the tree's leaves.");
    return py::cast(leaves[next++]);
  });
}

StreamOrDevice to_stream_or_device(py::handle obj) {
  if (obj.is_none()) return std::monostate{};
  if (py::isinstance<Stream>(obj)) return obj.cast<Stream>();
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (py::isinstance<Device::DeviceType>(obj)) return Device(obj.cast<Device::DeviceType>());
  throw std::invalid_argument("[stream] Expected None, a Stream, a Device or a DeviceType.");
}

}  // namespace braid::python
