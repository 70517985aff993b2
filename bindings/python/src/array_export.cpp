// The array's zero-copy exports: the Python buffer protocol (memoryview(a), np.asarray(a),
// np.array(a, copy=False)) and DLPack (__dlpack__, __dlpack_device__, np.from_dlpack(a)), with
// MLX's semantics. Both evaluate the array with the GIL released and hand out its host buffer
// with its own strides (a transposed or broadcast array is not copied). Each export holds a
// reference of its own to the array, so the memory stays valid after the Python object is
// dropped or rebound by an in-place operator (`a += 1` gives the object a new array).
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "python.h"

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
    view->readonly = 0;  // as MLX: writes through the view change the array's buffer
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

enum DLDeviceType : int32_t { kDLCPU = 1 };
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
        copied ? kDLPackFlagIsCopied : 0, tensor};
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

}  // namespace

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
}

}  // namespace braid::python
