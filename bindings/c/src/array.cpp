// mlx_array: creation from host data, properties, evaluation, item and data access, text.
#include "braid/c/array.h"

#include <complex>
#include <cstring>
#include <sstream>

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

Shape shape_arg(const int* shape, int dim) {
  if (dim < 0) throw std::invalid_argument("[mlx_array_new_data] Negative number of dimensions.");
  return sequence_arg<Shape>(shape, static_cast<size_t>(dim));
}

template <typename T>
array copy_from(const void* data, Shape shape, Dtype dtype) {
  size_t count = 1;
  for (auto d : shape) {
    if (d < 0) throw std::invalid_argument("[mlx_array_new_data] Negative dimension.");
    count *= static_cast<size_t>(d);
  }
  if (count > 0 && data == nullptr) throw std::invalid_argument("[mlx_array_new_data] NULL data.");
  static const T none{};
  return array(count > 0 ? static_cast<const T*>(data) : &none, std::move(shape), dtype);
}

/// A copy of `shape`-many row-major elements of `dtype` read from `data`.
array from_data(const void* data, const int* shape, int dim, mlx_dtype c_dtype) {
  const Dtype dtype = to_dtype(c_dtype);
  Shape s = shape_arg(shape, dim);
  switch (dtype.val()) {
    case Dtype::Val::bool_: return copy_from<uint8_t>(data, std::move(s), dtype);  // bool is one byte
    case Dtype::Val::uint8: return copy_from<uint8_t>(data, std::move(s), dtype);
    case Dtype::Val::uint16: return copy_from<uint16_t>(data, std::move(s), dtype);
    case Dtype::Val::uint32: return copy_from<uint32_t>(data, std::move(s), dtype);
    case Dtype::Val::uint64: return copy_from<uint64_t>(data, std::move(s), dtype);
    case Dtype::Val::int8: return copy_from<int8_t>(data, std::move(s), dtype);
    case Dtype::Val::int16: return copy_from<int16_t>(data, std::move(s), dtype);
    case Dtype::Val::int32: return copy_from<int32_t>(data, std::move(s), dtype);
    case Dtype::Val::int64: return copy_from<int64_t>(data, std::move(s), dtype);
    case Dtype::Val::float16: return copy_from<float16_t>(data, std::move(s), dtype);
    case Dtype::Val::float32: return copy_from<float>(data, std::move(s), dtype);
    case Dtype::Val::float64: return copy_from<double>(data, std::move(s), dtype);
    case Dtype::Val::bfloat16: return copy_from<bfloat16_t>(data, std::move(s), dtype);
    case Dtype::Val::complex64: return copy_from<complex64_t>(data, std::move(s), dtype);
  }
  throw std::invalid_argument("[mlx_array_new_data] Unknown dtype.");
}

const array* array_or_report(const mlx_array arr) noexcept {
  try {
    return &get(arr);
  } catch (...) {
    report_current_exception();
    return nullptr;
  }
}

/// Element 0 of an evaluated array of dtype `want`; NULL when it is not evaluated yet.
template <typename T>
const T* data_of(const mlx_array arr, Dtype want) noexcept {
  return guard_value<const T*>(nullptr, [&]() -> const T* {
    const array& a = get(arr);
    if (!a.is_available()) return nullptr;
    if (a.dtype() != want) {
      throw std::invalid_argument("[mlx_array_data] The array's dtype is " + dtype_name(a.dtype()) +
                                  ", not " + dtype_name(want) + ".");
    }
    return static_cast<const T*>(a.host_data());
  });
}

template <typename T>
int item_of(T* res, const mlx_array arr) noexcept {
  return guard([&] { out(res) = get(arr).item<T>(); });
}

}  // namespace

extern "C" size_t mlx_dtype_size(mlx_dtype dtype) {
  return guard_value<size_t>(0, [&] { return size_t{to_dtype(dtype).size()}; });
}

extern "C" int mlx_array_tostring(mlx_string* str, const mlx_array arr) {
  return guard([&] {
    std::ostringstream os;
    os << get(arr);
    set(out(str), os.str());
  });
}

extern "C" mlx_array mlx_array_new(void) { return mlx_array{nullptr}; }

extern "C" int mlx_array_free(mlx_array arr) {
  release(arr);
  return 0;
}

extern "C" mlx_array mlx_array_new_bool(bool val) {
  return guard_value(mlx_array{nullptr}, [&] { return make<mlx_array>(array(val)); });
}
extern "C" mlx_array mlx_array_new_int(int val) {
  return guard_value(mlx_array{nullptr}, [&] { return make<mlx_array>(array(val, int32)); });
}
extern "C" mlx_array mlx_array_new_float32(float val) {
  return guard_value(mlx_array{nullptr}, [&] { return make<mlx_array>(array(val, float32)); });
}
extern "C" mlx_array mlx_array_new_float(float val) { return mlx_array_new_float32(val); }
extern "C" mlx_array mlx_array_new_float64(double val) {
  return guard_value(mlx_array{nullptr}, [&] { return make<mlx_array>(array(val, float64)); });
}
extern "C" mlx_array mlx_array_new_double(double val) { return mlx_array_new_float64(val); }
extern "C" mlx_array mlx_array_new_complex(float real_val, float imag_val) {
  return guard_value(mlx_array{nullptr},
                     [&] { return make<mlx_array>(array(complex64_t(real_val, imag_val), complex64)); });
}

extern "C" mlx_array mlx_array_new_data(const void* data, const int* shape, int dim, mlx_dtype dtype) {
  return guard_value(mlx_array{nullptr}, [&] { return make<mlx_array>(from_data(data, shape, dim, dtype)); });
}

extern "C" mlx_array mlx_array_new_data_managed_payload(void* data, const int* shape, int dim,
                                                        mlx_dtype dtype, void* payload, void (*dtor)(void*)) {
  // As mlx-c: the array reads `data` in place and `dtor(payload)` runs once no array uses it.
  // When the call fails, the memory stays the caller's (dtor is not called).
  return guard_value(mlx_array{nullptr}, [&] {
    Shape s = shape_arg(shape, dim);
    const Dtype d = to_dtype(dtype);
    // Built in the handle's own storage: allocating the handle cannot fail after the array
    // owns the memory (which would run dtor and report a failure).
    return mlx_array{new array(data, std::move(s), d, [payload, dtor](void*) {
      if (dtor != nullptr) dtor(payload);
    })};
  });
}

extern "C" mlx_array mlx_array_new_data_managed(void* data, const int* shape, int dim, mlx_dtype dtype,
                                                void (*dtor)(void*)) {
  return mlx_array_new_data_managed_payload(data, shape, dim, dtype, data, dtor);
}

extern "C" int mlx_array_set(mlx_array* arr, const mlx_array src) {
  return guard([&] { set(out(arr), get(src)); });
}
extern "C" int mlx_array_set_bool(mlx_array* arr, bool val) {
  return guard([&] { set(out(arr), array(val)); });
}
extern "C" int mlx_array_set_int(mlx_array* arr, int val) {
  return guard([&] { set(out(arr), array(val, int32)); });
}
extern "C" int mlx_array_set_float32(mlx_array* arr, float val) {
  return guard([&] { set(out(arr), array(val, float32)); });
}
extern "C" int mlx_array_set_float(mlx_array* arr, float val) { return mlx_array_set_float32(arr, val); }
extern "C" int mlx_array_set_float64(mlx_array* arr, double val) {
  return guard([&] { set(out(arr), array(val, float64)); });
}
extern "C" int mlx_array_set_double(mlx_array* arr, double val) { return mlx_array_set_float64(arr, val); }
extern "C" int mlx_array_set_complex(mlx_array* arr, float real_val, float imag_val) {
  return guard([&] { set(out(arr), array(complex64_t(real_val, imag_val), complex64)); });
}
extern "C" int mlx_array_set_data(mlx_array* arr, const void* data, const int* shape, int dim,
                                  mlx_dtype dtype) {
  return guard([&] { set(out(arr), from_data(data, shape, dim, dtype)); });
}

extern "C" size_t mlx_array_itemsize(const mlx_array arr) {
  const array* a = array_or_report(arr);
  return a ? a->itemsize() : 0;
}
extern "C" size_t mlx_array_size(const mlx_array arr) {
  const array* a = array_or_report(arr);
  return a ? a->size() : 0;
}
extern "C" size_t mlx_array_nbytes(const mlx_array arr) {
  const array* a = array_or_report(arr);
  return a ? a->nbytes() : 0;
}
extern "C" size_t mlx_array_ndim(const mlx_array arr) {
  const array* a = array_or_report(arr);
  return a ? a->ndim() : 0;
}
extern "C" const int* mlx_array_shape(const mlx_array arr) {
  const array* a = array_or_report(arr);
  return a ? a->shape().data() : nullptr;
}
extern "C" const size_t* mlx_array_strides(const mlx_array arr) {
  static_assert(sizeof(size_t) == sizeof(int64_t), "strides are read as size_t");
  const array* a = array_or_report(arr);
  return a ? reinterpret_cast<const size_t*>(a->strides().data()) : nullptr;
}
extern "C" int mlx_array_dim(const mlx_array arr, int dim) {
  return guard_value(0, [&] { return static_cast<int>(get(arr).shape(dim)); });
}
extern "C" mlx_dtype mlx_array_dtype(const mlx_array arr) {
  return guard_value(MLX_FLOAT32, [&] { return to_c_dtype(get(arr).dtype()); });
}

extern "C" int mlx_array_eval(mlx_array arr) {
  return guard([&] { get(arr).eval(); });
}

extern "C" int mlx_array_item_bool(bool* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_uint8(uint8_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_uint16(uint16_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_uint32(uint32_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_uint64(uint64_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_int8(int8_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_int16(int16_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_int32(int32_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_int64(int64_t* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_float32(float* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_float64(double* res, const mlx_array arr) { return item_of(res, arr); }
extern "C" int mlx_array_item_complex64(mlx_complex64_t* res, const mlx_array arr) {
  static_assert(sizeof(mlx_complex64_t) == sizeof(complex64_t), "complex64 layouts differ");
  return guard([&] {
    const complex64_t v = get(arr).item<complex64_t>();
    std::memcpy(&out(res), &v, sizeof(v));
  });
}

extern "C" const bool* mlx_array_data_bool(const mlx_array arr) { return data_of<bool>(arr, bool_); }
extern "C" const uint8_t* mlx_array_data_uint8(const mlx_array arr) { return data_of<uint8_t>(arr, uint8); }
extern "C" const uint16_t* mlx_array_data_uint16(const mlx_array arr) {
  return data_of<uint16_t>(arr, uint16);
}
extern "C" const uint32_t* mlx_array_data_uint32(const mlx_array arr) {
  return data_of<uint32_t>(arr, uint32);
}
extern "C" const uint64_t* mlx_array_data_uint64(const mlx_array arr) {
  return data_of<uint64_t>(arr, uint64);
}
extern "C" const int8_t* mlx_array_data_int8(const mlx_array arr) { return data_of<int8_t>(arr, int8); }
extern "C" const int16_t* mlx_array_data_int16(const mlx_array arr) { return data_of<int16_t>(arr, int16); }
extern "C" const int32_t* mlx_array_data_int32(const mlx_array arr) { return data_of<int32_t>(arr, int32); }
extern "C" const int64_t* mlx_array_data_int64(const mlx_array arr) { return data_of<int64_t>(arr, int64); }
extern "C" const float* mlx_array_data_float32(const mlx_array arr) { return data_of<float>(arr, float32); }
extern "C" const double* mlx_array_data_float64(const mlx_array arr) { return data_of<double>(arr, float64); }
extern "C" const mlx_complex64_t* mlx_array_data_complex64(const mlx_array arr) {
  return data_of<mlx_complex64_t>(arr, complex64);
}
#ifdef HAS_FLOAT16
extern "C" int mlx_array_item_float16(float16_t* res, const mlx_array arr) {
  return guard([&] { out(res) = static_cast<float16_t>(get(arr).item<float>()); });
}
extern "C" const float16_t* mlx_array_data_float16(const mlx_array arr) {
  return data_of<float16_t>(arr, braid::float16);
}
#endif
#ifdef HAS_BFLOAT16
extern "C" int mlx_array_item_bfloat16(bfloat16_t* res, const mlx_array arr) {
  return guard([&] { out(res) = static_cast<bfloat16_t>(get(arr).item<float>()); });
}
extern "C" const bfloat16_t* mlx_array_data_bfloat16(const mlx_array arr) {
  return data_of<bfloat16_t>(arr, braid::bfloat16);
}
#endif

extern "C" int _mlx_array_is_available(bool* res, const mlx_array arr) {
  return guard([&] { out(res) = get(arr).is_available(); });
}
extern "C" int _mlx_array_wait(const mlx_array arr) {
  return guard([&] { get(arr).eval(); });
}
extern "C" int _mlx_array_is_contiguous(bool* res, const mlx_array arr) {
  return guard([&] { out(res) = get(arr).flags().contiguous; });
}
extern "C" int _mlx_array_is_row_contiguous(bool* res, const mlx_array arr) {
  return guard([&] { out(res) = get(arr).flags().row_contiguous; });
}
extern "C" int _mlx_array_is_col_contiguous(bool* res, const mlx_array arr) {
  return guard([&] { out(res) = get(arr).flags().col_contiguous; });
}
