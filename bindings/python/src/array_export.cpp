// The array's zero-copy exports: the Python buffer protocol (memoryview(a), np.asarray(a),
// np.array(a, copy=False)) and DLPack (__dlpack__, __dlpack_device__, np.from_dlpack(a)), with
// MLX's semantics; and the imports, mx.from_dlpack and mx.asarray, which read host tensors in
// place. Both evaluate the array with the GIL released and hand out its host buffer
// with its own strides (a transposed or broadcast array is not copied). Each export holds a
// reference of its own to the array, so the memory stays valid after the Python object is
// dropped or rebound by an in-place operator (`a += 1` gives the object a new array).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "ops_args.h"
#include "python.h"
#include "transforms_support.h"

namespace braid::python {

namespace {

/// Where a zero-size export points: consumers expect a non-null address.
alignas(16) unsigned char empty_export[16];

void* export_pointer(const array& a) {
  void* p = a.size() > 0 ? a.host_data() : nullptr;
  return p != nullptr ? p : empty_export;
}

/// True when `a`'s elements lie in C order (or Fortran order when `fortran`), without gaps.
/// Axes of length 1 place no constraint; an empty array is contiguous both ways.
bool is_dense(const array& a, bool fortran) {
  if (a.size() == 0) return true;
  const int n = static_cast<int>(a.ndim());
  int64_t expected = 1;
  for (int k = 0; k < n; ++k) {
    const int i = fortran ? k : n - 1 - k;
    if (a.shape(i) == 1) continue;
    if (a.strides(i) != expected) return false;
    expected *= a.shape(i);
  }
  return true;
}

/// Copies `a`'s elements, in C order, to `dst` (nbytes() bytes).
void copy_c_order(const array& a, char* dst) {
  const size_t item = a.itemsize();
  const char* base = static_cast<const char*>(a.host_data());
  const int n = static_cast<int>(a.ndim());
  std::vector<int32_t> index(static_cast<size_t>(n), 0);
  for (size_t done = 0; done < a.size(); ++done) {
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) offset += index[static_cast<size_t>(i)] * a.strides(i);
    std::memcpy(dst + done * item, base + offset * static_cast<int64_t>(item), item);
    for (int i = n - 1; i >= 0; --i) {
      if (++index[static_cast<size_t>(i)] < a.shape(i)) break;
      index[static_cast<size_t>(i)] = 0;
    }
  }
}

/// A copy of `a`'s elements (evaluated on the host, any layout) in C order, in memory of its
/// own: later writes to `a`'s memory (an imported tensor's producer) do not reach it.
array host_copy(const array& a) {
  eval_to_host_released(a);
  void* buffer = std::malloc(std::max<size_t>(a.nbytes(), 1));
  if (buffer == nullptr) throw std::bad_alloc();
  try {
    if (a.size() > 0 && a.flags().row_contiguous) {
      std::memcpy(buffer, a.host_data(), a.nbytes());
    } else if (a.size() > 0) {
      copy_c_order(a, static_cast<char*>(buffer));
    }
    return array(buffer, a.shape(), a.dtype(), [](void* p) { std::free(p); });
  } catch (...) {
    std::free(buffer);
    throw;
  }
}

// --- The buffer protocol -------------------------------------------------------------------

/// The struct-module format of each dtype, as MLX exports them. bfloat16 has none: MLX gives
/// "B" with itemsize 2, which memoryview accepts (as raw bytes) and NumPy refuses.
const char* buffer_format(Dtype d) {
  switch (d.val()) {
    case Dtype::Val::bool_: return "?";
    case Dtype::Val::uint8: return "B";
    case Dtype::Val::uint16: return "H";
    case Dtype::Val::uint32: return "I";
    case Dtype::Val::uint64: return "Q";
    case Dtype::Val::int8: return "b";
    case Dtype::Val::int16: return "h";
    case Dtype::Val::int32: return "i";
    case Dtype::Val::int64: return "q";
    case Dtype::Val::float16: return "e";
    case Dtype::Val::bfloat16: return "B";
    case Dtype::Val::float32: return "f";
    case Dtype::Val::float64: return "d";
    case Dtype::Val::complex64: return "Zf";
  }
  throw std::logic_error("unreachable");
}

/// What a buffer view owns until it is released: the array and the shape and strides (in
/// bytes) that the view points at.
struct BufferExport {
  array source;
  std::vector<Py_ssize_t> shape;
  std::vector<Py_ssize_t> strides;
};

/// Why a request with these flags cannot be met by `a`'s layout, or nullptr. A consumer that
/// takes no strides reads the bytes in C order, so a strided array must be asked for with
/// strides (memoryview, bytes() and NumPy do), as NumPy's arrays require.
const char* layout_refusal(const array& a, int flags) {
  const bool c_order = is_dense(a, false);
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_order) return "array is not C-contiguous";
  if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !is_dense(a, true))
    return "array is not Fortran contiguous";
  if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_order && !is_dense(a, true))
    return "array is not contiguous";
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_order) return "array is not C-contiguous";
  return nullptr;
}

extern "C" int array_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    auto exported = std::make_unique<BufferExport>(BufferExport{py::handle(obj).cast<array>(), {}, {}});
    array& a = exported->source;
    eval_to_host_released(a);
    if (const char* refusal = layout_refusal(a, flags)) {
      PyErr_SetString(PyExc_BufferError, refusal);
      return -1;
    }
    const auto item = static_cast<Py_ssize_t>(a.itemsize());
    for (size_t i = 0; i < a.ndim(); ++i) {
      exported->shape.push_back(a.shape(static_cast<int>(i)));
      exported->strides.push_back(static_cast<Py_ssize_t>(a.strides(static_cast<int>(i))) * item);
    }
    view->buf = export_pointer(a);
    view->len = static_cast<Py_ssize_t>(a.nbytes());
    view->itemsize = item;
    // As MLX: writes through the view change the array's buffer. Memory the array only reads
    // (imported with from_dlpack or asarray) is exported read-only: it may be immutable
    // (bytes, a read-only map) and braid never writes into it.
    const bool borrowed = a.desc()->data && a.desc()->data->external;
    if (borrowed && (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
      PyErr_SetString(PyExc_BufferError, "array reads memory it does not own (an import): it is read-only");
      return -1;
    }
    view->readonly = borrowed ? 1 : 0;
    view->format =
        (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? const_cast<char*>(buffer_format(a.dtype())) : nullptr;
    if ((flags & PyBUF_ND) == PyBUF_ND) {
      view->ndim = static_cast<int>(a.ndim());
      view->shape = exported->shape.data();
    } else {
      view->ndim = 1;  // unstructured bytes, as PyBuffer_FillInfo describes them
      view->shape = nullptr;
    }
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? exported->strides.data() : nullptr;
    view->suboffsets = nullptr;
    view->internal = exported.release();
    view->obj = py::handle(obj).inc_ref().ptr();
    return 0;
  } catch (...) {
    py::detail::translate_exception(std::current_exception());
    return -1;
  }
}

extern "C" void array_releasebuffer(PyObject* /*obj*/, Py_buffer* view) {
  delete static_cast<BufferExport*>(view->internal);
}

// --- DLPack --------------------------------------------------------------------------------
// The structs of dlpack.h (v1.0), which Python consumers read from the capsule.

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDAHost = 3 };
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
};

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLPackFlagReadOnly = 1ull << 0;
constexpr uint64_t kDLPackFlagIsCopied = 1ull << 1;
constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kVersionedCapsuleName = "dltensor_versioned";

DLDataType dlpack_dtype(Dtype d) {
  const auto bits = static_cast<uint8_t>(d.size() * 8);
  switch (d.val()) {
    case Dtype::Val::bool_: return {kDLBool, 8, 1};
    case Dtype::Val::uint8:
    case Dtype::Val::uint16:
    case Dtype::Val::uint32:
    case Dtype::Val::uint64: return {kDLUInt, bits, 1};
    case Dtype::Val::int8:
    case Dtype::Val::int16:
    case Dtype::Val::int32:
    case Dtype::Val::int64: return {kDLInt, bits, 1};
    case Dtype::Val::float16:
    case Dtype::Val::float32:
    case Dtype::Val::float64: return {kDLFloat, bits, 1};
    case Dtype::Val::bfloat16: return {kDLBfloat, 16, 1};
    case Dtype::Val::complex64: return {kDLComplex, 64, 1};
  }
  throw std::logic_error("unreachable");
}

/// The manager context of one export: the array (its buffer), or the bytes of a copy, and the
/// shape and strides the tensor points at. The consumer's call of the deleter frees it, on any
/// thread, with or without the GIL: it owns no Python object.
struct DLPackExport {
  std::optional<array> source;  // empty for a copy, which owns its bytes
  std::vector<char> copied;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
  DLManagedTensorVersioned versioned{};
};

/// The tensor of `a` (evaluated), pointing into `e`: at `a`'s buffer, which `e` then holds,
/// or at a copy in C order, which `e` owns.
DLTensor describe(DLPackExport& e, const array& a, bool copy) {
  for (size_t i = 0; i < a.ndim(); ++i) e.shape.push_back(a.shape(static_cast<int>(i)));
  void* data = export_pointer(a);
  if (copy) {
    e.copied.resize(std::max<size_t>(a.nbytes(), 1));
    if (a.size() > 0) copy_c_order(a, e.copied.data());
    data = e.copied.data();
    int64_t stride = 1;
    e.strides.assign(a.ndim(), 0);
    for (int i = static_cast<int>(a.ndim()) - 1; i >= 0; --i) {
      e.strides[static_cast<size_t>(i)] = stride;
      stride *= a.shape(i);
    }
  } else {
    e.strides.assign(a.strides().begin(), a.strides().end());
    e.source = a;
  }
  return DLTensor{data,
                  DLDevice{kDLCPU, 0},
                  static_cast<int32_t>(a.ndim()),
                  dlpack_dtype(a.dtype()),
                  e.shape.data(),
                  e.strides.data(),
                  0};
}

extern "C" void dlpack_capsule_destructor(PyObject* capsule) {
  // A consumer renames the capsule ("used_dltensor") when it takes the tensor over; only an
  // unconsumed export is freed here.
  if (PyCapsule_IsValid(capsule, kCapsuleName)) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
    t->deleter(t);
  } else if (PyCapsule_IsValid(capsule, kVersionedCapsuleName)) {
    auto* t = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedCapsuleName));
    t->deleter(t);
  }
}

/// (major, minor) of a `max_version` argument.
std::pair<int64_t, int64_t> version_arg(py::handle v) {
  if (!PyTuple_Check(v.ptr()) || PyTuple_GET_SIZE(v.ptr()) != 2)
    throw std::invalid_argument("[__dlpack__] max_version must be a tuple (major, minor).");
  auto t = py::reinterpret_borrow<py::tuple>(v);
  return {t[0].cast<int64_t>(), t[1].cast<int64_t>()};
}

py::object to_dlpack(array a, py::object stream, py::object max_version, py::object dl_device,
                     std::optional<bool> copy) {
  if (!stream.is_none())
    throw std::invalid_argument("[__dlpack__] The export is host memory (kDLCPU): stream must be None.");
  if (!dl_device.is_none()) {
    auto device = py::reinterpret_borrow<py::sequence>(dl_device);
    if (device.size() != 2 || device[0].cast<int64_t>() != kDLCPU || device[1].cast<int64_t>() != 0) {
      PyErr_SetString(PyExc_BufferError,
                      "[__dlpack__] Arrays export to the host only: dl_device must be (1, 0).");
      throw py::error_already_set();
    }
  }
  const bool versioned = !max_version.is_none() && version_arg(max_version).first >= 1;
  const bool copied = copy.value_or(false);
  eval_to_host_released(a);

  auto e = std::make_unique<DLPackExport>();
  const DLTensor tensor = describe(*e, a, copied);
  PyObject* capsule = nullptr;
  if (versioned) {
    e->versioned = DLManagedTensorVersioned{
        DLPackVersion{1, 0}, e.get(),
        [](DLManagedTensorVersioned* self) { delete static_cast<DLPackExport*>(self->manager_ctx); },
        copied ? kDLPackFlagIsCopied : (a.desc()->data && a.desc()->data->external ? kDLPackFlagReadOnly : 0),
        tensor};
    capsule = PyCapsule_New(&e->versioned, kVersionedCapsuleName, dlpack_capsule_destructor);
  } else {
    e->managed = DLManagedTensor{
        tensor, e.get(), [](DLManagedTensor* self) { delete static_cast<DLPackExport*>(self->manager_ctx); }};
    capsule = PyCapsule_New(&e->managed, kCapsuleName, dlpack_capsule_destructor);
  }
  if (capsule == nullptr) throw py::error_already_set();
  e.release();  // the capsule, then its consumer, owns it
  return py::reinterpret_steal<py::object>(capsule);
}

// --- DLPack import ---------------------------------------------------------------------------

/// The error of an import, named after the entry point (from_dlpack, array).
[[noreturn]] void import_error(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string("[") + op + "] " + what);
}

/// The braid dtype a DLPack element type imports as, and whether its bytes need converting
/// (float64 and complex128 become float32 and complex64, as NumPy arrays do in MLX).
std::pair<Dtype, bool> import_dtype(const DLDataType& t, const char* op) {
  const auto bad = [&]() -> std::pair<Dtype, bool> {
    import_error(op, "Unsupported DLPack dtype (code " + std::to_string(t.code) + ", " +
                         std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) + " lanes).");
  };
  if (t.lanes != 1) return bad();
  switch (t.code) {
    case kDLBool:
      if (t.bits == 8) return {bool_, false};
      break;
    case kDLUInt:
      if (t.bits == 8) return {uint8, false};
      if (t.bits == 16) return {uint16, false};
      if (t.bits == 32) return {uint32, false};
      if (t.bits == 64) return {uint64, false};
      break;
    case kDLInt:
      if (t.bits == 8) return {int8, false};
      if (t.bits == 16) return {int16, false};
      if (t.bits == 32) return {int32, false};
      if (t.bits == 64) return {int64, false};
      break;
    case kDLFloat:
      if (t.bits == 16) return {float16, false};
      if (t.bits == 32) return {float32, false};
      if (t.bits == 64) return {float32, true};
      break;
    case kDLBfloat:
      if (t.bits == 16) return {bfloat16, false};
      break;
    case kDLComplex:
      if (t.bits == 64) return {complex64, false};
      if (t.bits == 128) return {complex64, true};
      break;
    default: break;
  }
  return bad();
}

/// A capsule from x.__dlpack__(): DLPack 1.0's versioned one when the producer takes
/// max_version, else the original one.
py::object request_capsule(const py::object& x) {
  try {
    return x.attr("__dlpack__")("max_version"_a = py::make_tuple(1, 0));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
  }
  return x.attr("__dlpack__")();
}

/// The tensor of an unconsumed DLPack capsule (either name), or null.
DLTensor* capsule_tensor(const py::handle& capsule) {
  if (PyCapsule_IsValid(capsule.ptr(), kVersionedCapsuleName)) {
    return &static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), kVersionedCapsuleName))
                ->dl_tensor;
  }
  if (PyCapsule_IsValid(capsule.ptr(), kCapsuleName)) {
    return &static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName))->dl_tensor;
  }
  return nullptr;
}

/// A host tensor described by a DLPack capsule, checked: its elements at `data` with `strides`
/// (in elements), read as `source` and held by braid as `dtype` (`convert` when they differ).
struct HostTensor {
  char* data;
  Shape shape;
  Strides strides;
  Dtype source;
  Dtype dtype;
  bool convert;
};

HostTensor read_capsule(const py::handle& capsule, const char* op, bool keep_float64) {
  if (PyCapsule_IsValid(capsule.ptr(), kVersionedCapsuleName)) {
    auto* m =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), kVersionedCapsuleName));
    if (m->version.major != 1)
      import_error(op, "DLPack version " + std::to_string(m->version.major) + " is not supported.");
  }
  const DLTensor* t = capsule_tensor(capsule);
  if (t == nullptr) {
    import_error(op,
                 "Expected an unconsumed DLPack capsule (\"dltensor\"); this one was already used or is "
                 "not a DLPack tensor.");
  }
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost) {
    import_error(op, "Only host memory (kDLCPU) can be imported.");
  }
  auto [dtype, convert] = import_dtype(t->dtype, op);
  if (keep_float64 && t->dtype.code == kDLFloat && t->dtype.bits == 64) dtype = float64, convert = false;
  if (t->ndim < 0) import_error(op, "The tensor has a negative number of dimensions.");
  HostTensor in{static_cast<char*>(t->data) + t->byte_offset, {}, {}, dtype, dtype, convert};
  if (convert) in.source = dtype == float32 ? float64 : complex64;  // complex128 is read pair by pair
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0 || t->shape[i] > std::numeric_limits<int32_t>::max()) {
      import_error(op, "Dimension " + std::to_string(i) + " has size " + std::to_string(t->shape[i]) +
                           ", outside [0, 2^31 - 1].");
    }
    in.shape.push_back(static_cast<int32_t>(t->shape[i]));
  }
  if (t->strides != nullptr) {
    for (int32_t i = 0; i < t->ndim; ++i) {
      // An axis of size 0 or 1 addresses nothing with its stride (NumPy may give it any sign).
      const int64_t stride =
          in.shape[static_cast<size_t>(i)] <= 1 ? std::max<int64_t>(t->strides[i], 0) : t->strides[i];
      if (stride < 0) import_error(op, "Negative strides are not supported; copy the tensor first.");
      in.strides.push_back(stride);
    }
  } else {
    int64_t stride = 1;
    in.strides.resize(in.shape.size());
    for (int i = static_cast<int>(in.shape.size()) - 1; i >= 0; --i) {
      in.strides[static_cast<size_t>(i)] = stride;
      stride *= std::max<int64_t>(in.shape[static_cast<size_t>(i)], 1);
    }
  }
  return in;
}

/// Whether the tensor's elements are dense in C order (axes of size 1 may have any stride).
bool row_contiguous(const HostTensor& in) {
  int64_t expected = 1;
  for (size_t i = in.shape.size(); i-- > 0;) {
    if (in.shape[i] != 1 && in.strides[i] != expected) return false;
    expected *= in.shape[i];
  }
  return true;
}

/// The tensor's elements converted (float64 to float32, complex128 to complex64) into memory
/// of braid's own, computed before this returns.
array converted_copy(const HostTensor& in, const std::function<void(void*)>& hold) {
  if (in.dtype == float32) {
    array converted = astype(array(in.data, in.shape, in.strides, float64, hold), float32, Device::cpu);
    eval_to_host_released(converted);
    return converted;
  }
  // complex128, element by element in C order.
  size_t total = 1;
  for (auto d : in.shape) total *= static_cast<size_t>(d);
  std::vector<complex64_t> values(total);
  std::vector<int32_t> index(in.shape.size(), 0);
  const auto* pairs = reinterpret_cast<const double*>(in.data);
  for (size_t n = 0; n < total; ++n) {
    int64_t offset = 0;
    for (size_t i = 0; i < in.shape.size(); ++i) offset += index[i] * in.strides[i];
    values[n] = complex64_t(static_cast<float>(pairs[2 * offset]), static_cast<float>(pairs[2 * offset + 1]));
    for (size_t i = in.shape.size(); i-- > 0;) {
      if (++index[i] < in.shape[i]) break;
      index[i] = 0;
    }
  }
  return array(values.data(), in.shape, complex64);
}

/// A copy of a row-contiguous tensor of braid's dtype in braid's own memory, computed now:
/// its bytes as uint8 (one more axis of the item size), viewed as the dtype.
array byte_copy(const HostTensor& in) {
  Shape bytes_shape = in.shape;
  bytes_shape.push_back(static_cast<int32_t>(in.dtype.size()));
  array bytes(reinterpret_cast<const uint8_t*>(in.data), bytes_shape, uint8);
  array out = reshape(view(bytes, in.dtype, Device::cpu), in.shape, Device::cpu);
  eval_to_host_released(out);
  return out;
}

}  // namespace

/// The import behind mx.from_dlpack and mx.asarray. `keep_float64` keeps a float64 tensor as
/// float64 (asarray with dtype=float64) instead of MLX's float32.
array import_dlpack(py::object x, std::optional<bool> copy, bool keep_float64) {
  // Imports dropped on workers wait for the GIL to release their capsules: release them here,
  // so that a loop of imports does not pin its producers' memory.
  release_dropped_objects();
  if (py::isinstance<array>(x)) {
    const array& a = x.cast<const array&>();
    return copy.value_or(false) ? host_copy(a) : a;  // braid's own arrays keep every dtype
  }
  if (!py::hasattr(x, "__dlpack__")) {
    import_error("from_dlpack",
                 "Expected an object with __dlpack__ and __dlpack_device__, got " + type_name(x) + ".");
  }
  if (py::hasattr(x, "__dlpack_device__")) {
    auto device = x.attr("__dlpack_device__")().cast<std::pair<int64_t, int64_t>>();
    if (device.first != kDLCPU && device.first != kDLCUDAHost) {
      import_error("from_dlpack",
                   "Only host memory (kDLCPU) can be imported; the tensor is on DLPack device type " +
                       std::to_string(device.first) + ". Move it to the host first.");
    }
  }
  py::object capsule = request_capsule(x);
  const HostTensor in = read_capsule(capsule, "from_dlpack", keep_float64);
  if (in.convert && copy == false) {
    import_error("from_dlpack", std::string("copy=False, but a ") + (in.dtype == float32 ? "64" : "128") +
                                    "-bit tensor must be converted (copied).");
  }
  // The array keeps the capsule, unconsumed: dropping it (on any thread, see SharedObject)
  // lets the producer's capsule destructor release the tensor.
  auto hold = [owner = SharedObject(capsule)](void*) {};
  if (in.convert) return converted_copy(in, hold);  // the source may change later
  array in_place(in.data, in.shape, in.strides, in.dtype, hold);
  return copy.value_or(false) ? host_copy(in_place) : in_place;
}

namespace {

/// mx.asarray: the input as an array, sharing memory where it can unless copy=True.
py::object asarray(py::object a, std::optional<Dtype> dtype, std::optional<bool> copy) {
  const bool never_copy = copy == false;
  if (py::isinstance<array>(a)) {
    if (never_copy) {
      throw std::invalid_argument(
          "[asarray] copy=False cannot be met for an array: asarray(x, copy=False) would have to return "
          "x itself; use x.");
    }
    const array& x = a.cast<const array&>();
    if (copy == true) {
      // A copy in memory of its own (the buffer protocol can write into an array's memory).
      const array fresh = host_copy(x);
      return py::cast(dtype && *dtype != fresh.dtype() ? astype(fresh, *dtype) : fresh);
    }
    return dtype && *dtype != x.dtype() ? py::cast(astype(x, *dtype)) : a;  // the same object
  }
  if (py::hasattr(a, "__dlpack__") && !is_python_scalar(a)) {
    // In place when the dtype allows (see import_dlpack); then a cast, which is a copy. A
    // tensor DLPack cannot describe to braid (negative strides, a dtype braid lacks, a
    // read-only NumPy array before NumPy 2) is converted as mx.array converts it, unless
    // copy=False.
    std::optional<array> x;
    try {
      x = import_dlpack(a, copy, dtype == float64);
    } catch (const std::invalid_argument&) {
      if (never_copy) throw;
    } catch (const py::error_already_set& e) {
      if (never_copy ||
          !(e.matches(PyExc_ValueError) || e.matches(PyExc_BufferError) || e.matches(PyExc_TypeError))) {
        throw;
      }
    }
    if (x) {
      if (!dtype || *dtype == x->dtype()) return py::cast(*x);
      if (never_copy) throw std::invalid_argument("[asarray] copy=False, but converting the dtype copies.");
      array cast = astype(*x, *dtype, Device::cpu);
      eval_to_host_released(cast);
      return py::cast(cast);
    }
  }
  if (never_copy) {
    throw std::invalid_argument("[asarray] copy=False, but a " + type_name(a) +
                                " cannot be shared without a copy (only DLPack tensors can).");
  }
  return py::cast(to_array(a, dtype));
}
}  // namespace

array dlpack_to_array(py::handle obj, std::optional<Dtype> dtype) {
  py::object capsule = PyCapsule_CheckExact(obj.ptr())
                           ? py::reinterpret_borrow<py::object>(obj)
                           : request_capsule(py::reinterpret_borrow<py::object>(obj));
  const HostTensor in = read_capsule(capsule, "array", false);
  if (!row_contiguous(in)) {
    import_error("array",
                 "Only row-contiguous DLPack tensors can be converted; make the tensor contiguous "
                 "first (or use mx.from_dlpack, which reads strides).");
  }
  // Copied now, as mx.array copies every input; then the capsule is consumed as DLPack asks
  // of a consumer: renamed, and its tensor released by us (its producer's deleter).
  const auto none = [](void*) {};
  array out = in.convert ? converted_copy(in, none) : byte_copy(in);
  const auto consume = [&](const char* name, const char* used, auto* tensor_type) {
    auto* m = static_cast<decltype(tensor_type)>(PyCapsule_GetPointer(capsule.ptr(), name));
    if (PyCapsule_SetName(capsule.ptr(), used) != 0) throw py::error_already_set();
    if (m->deleter) m->deleter(m);
  };
  if (PyCapsule_IsValid(capsule.ptr(), kVersionedCapsuleName)) {
    consume(kVersionedCapsuleName, "used_dltensor_versioned",
            static_cast<DLManagedTensorVersioned*>(nullptr));
  } else {
    consume(kCapsuleName, "used_dltensor", static_cast<DLManagedTensor*>(nullptr));
  }
  return dtype && *dtype != out.dtype() ? astype(out, *dtype) : out;
}

void enable_array_buffer(PyHeapTypeObject* heap_type) {
  heap_type->as_buffer.bf_getbuffer = array_getbuffer;
  heap_type->as_buffer.bf_releasebuffer = array_releasebuffer;
  heap_type->ht_type.tp_as_buffer = &heap_type->as_buffer;
}

BRAID_PYTHON_INIT(kInitArrayMethods) {
  array_class(m)
      .def("__dlpack__", &to_dlpack, py::kw_only(), "stream"_a = py::none(), "max_version"_a = py::none(),
           "dl_device"_a = py::none(), "copy"_a = py::none(),
           "A DLPack capsule of the evaluated array's host memory (kDLCPU), with its strides; the "
           "capsule keeps the memory alive. A DLPack 1.0 (versioned) capsule when max_version is "
           "(1, x) or later; a copy in C order when copy=True.")
      .def(
          "__dlpack_device__", [](const array&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); },
          "(1, 0): kDLCPU, device 0. Arrays on the GPU export their host copy.");
  m.def(
      "from_dlpack",
      [](py::object x, std::optional<bool> copy) { return import_dlpack(std::move(x), copy, false); }, "x"_a,
      py::pos_only(), py::kw_only(), "copy"_a = py::none(),
      "An array from an object with __dlpack__ (a NumPy array, a host torch tensor, ...). With "
      "copy=None the array reads the tensor's memory in place, strides included, when its dtype "
      "is one of braid's; copy=True always copies; copy=False never does (ValueError when a "
      "copy is needed: float64 and complex128 become float32 and complex64). Host memory only.");
  m.def("asarray", &asarray, "a"_a, "dtype"_a = py::none(), py::kw_only(), "copy"_a = py::none(),
        "The input as an array. copy=None shares memory where possible (an array as itself, a DLPack "
        "tensor read in place) and copies otherwise; copy=True always copies; copy=False never does "
        "and raises ValueError when a copy would be needed.");
}

}  // namespace braid::python
