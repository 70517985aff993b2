/* braid's C API: arrays (mlx-c's mlx/c/array.h).
 *
 * An mlx_array is a handle to a braid::array: a cheap reference to a node of a lazy graph.
 * Functions that produce an array write it through their first argument, replacing what that
 * handle held (`mlx_add(&a, a, b, s)` is fine); a handle made by mlx_array_new() holds nothing
 * until then. Every handle must be freed with mlx_array_free.
 *
 * Thread safety: every function may be called from any thread. Arrays may be built on one
 * thread and evaluated or read on another; any number of threads may use the same array at
 * once. Writing a handle (freeing or setting it) while another thread uses that same handle is
 * the caller's race, as for any C object. */
#ifndef BRAID_C_ARRAY_H
#define BRAID_C_ARRAY_H

#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "braid/c/half.h"
#include "braid/c/string.h"

#ifdef __cplusplus
/* The same layout as C's float _Complex (and std::complex<float>). */
typedef _Complex float mlx_complex64_t;
#else
#include <complex.h>
typedef float _Complex mlx_complex64_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** An N-dimensional array. */
typedef struct mlx_array_ {
  void* ctx;
} mlx_array;

/** An empty handle, as mlx-c's. */
#if defined(__GNUC__)
__attribute__((unused))
#endif
static mlx_array mlx_array_empty;

/** Array element type. (C++ fixes the enum's type to int, of the size C gives it, so that any value
 * a C caller passes is a valid C++ value that the library can check.) */
typedef enum mlx_dtype_
#ifdef __cplusplus
    : int
#endif
{ MLX_BOOL,
  MLX_UINT8,
  MLX_UINT16,
  MLX_UINT32,
  MLX_UINT64,
  MLX_INT8,
  MLX_INT16,
  MLX_INT32,
  MLX_INT64,
  MLX_FLOAT16,
  MLX_FLOAT32,
  MLX_FLOAT64,
  MLX_BFLOAT16,
  MLX_COMPLEX64,
} mlx_dtype;

/** Size of an element of `dtype` in bytes. */
size_t mlx_dtype_size(mlx_dtype dtype);

/** Sets `str` to the array's values as text (evaluates the array). */
int mlx_array_tostring(mlx_string* str, const mlx_array arr);

/** A new empty handle. */
mlx_array mlx_array_new(void);
/** Frees the handle (an empty one is fine); the array lives on while others refer to it. */
int mlx_array_free(mlx_array arr);

/** Scalar (0-d) arrays: bool, int32, float32, float64 and complex64. */
mlx_array mlx_array_new_bool(bool val);
mlx_array mlx_array_new_int(int val);
mlx_array mlx_array_new_float32(float val);
mlx_array mlx_array_new_float(float val);
mlx_array mlx_array_new_float64(double val);
mlx_array mlx_array_new_double(double val);
mlx_array mlx_array_new_complex(float real_val, float imag_val);
/** An array of `shape` (`dim` dimensions) copied from `data`, row-major elements of `dtype`. */
mlx_array mlx_array_new_data(const void* data, const int* shape, int dim, mlx_dtype dtype);
/** As mlx_array_new_data; braid copies the buffer and calls `dtor(data)` right away. */
mlx_array mlx_array_new_data_managed(void* data, const int* shape, int dim, mlx_dtype dtype,
                                     void (*dtor)(void*));
/** As mlx_array_new_data_managed, calling `dtor(payload)` instead. */
mlx_array mlx_array_new_data_managed_payload(void* data, const int* shape, int dim, mlx_dtype dtype,
                                             void* payload, void (*dtor)(void*));

/** Makes `arr` refer to `src`'s array. */
int mlx_array_set(mlx_array* arr, const mlx_array src);
/** Makes `arr` a new scalar or data array, as the mlx_array_new_* functions. */
int mlx_array_set_bool(mlx_array* arr, bool val);
int mlx_array_set_int(mlx_array* arr, int val);
int mlx_array_set_float32(mlx_array* arr, float val);
int mlx_array_set_float(mlx_array* arr, float val);
int mlx_array_set_float64(mlx_array* arr, double val);
int mlx_array_set_double(mlx_array* arr, double val);
int mlx_array_set_complex(mlx_array* arr, float real_val, float imag_val);
int mlx_array_set_data(mlx_array* arr, const void* data, const int* shape, int dim, mlx_dtype dtype);

/** Bytes per element, number of elements, bytes, and number of dimensions (0 on error). */
size_t mlx_array_itemsize(const mlx_array arr);
size_t mlx_array_size(const mlx_array arr);
size_t mlx_array_nbytes(const mlx_array arr);
size_t mlx_array_ndim(const mlx_array arr);
/** The dimensions, valid while the array lives (NULL on error). */
const int* mlx_array_shape(const mlx_array arr);
/** The element strides, valid while the array lives and once it is evaluated (NULL on error). */
const size_t* mlx_array_strides(const mlx_array arr);
/** The size of dimension `dim` (negative counts from the end). */
int mlx_array_dim(const mlx_array arr, int dim);
/** The element type. */
mlx_dtype mlx_array_dtype(const mlx_array arr);

/** Evaluates the array and everything it depends on. */
int mlx_array_eval(mlx_array arr);

/** The single element of a size-1 array, converted to the requested type (evaluates first). */
int mlx_array_item_bool(bool* res, const mlx_array arr);
int mlx_array_item_uint8(uint8_t* res, const mlx_array arr);
int mlx_array_item_uint16(uint16_t* res, const mlx_array arr);
int mlx_array_item_uint32(uint32_t* res, const mlx_array arr);
int mlx_array_item_uint64(uint64_t* res, const mlx_array arr);
int mlx_array_item_int8(int8_t* res, const mlx_array arr);
int mlx_array_item_int16(int16_t* res, const mlx_array arr);
int mlx_array_item_int32(int32_t* res, const mlx_array arr);
int mlx_array_item_int64(int64_t* res, const mlx_array arr);
int mlx_array_item_float32(float* res, const mlx_array arr);
int mlx_array_item_float64(double* res, const mlx_array arr);
int mlx_array_item_complex64(mlx_complex64_t* res, const mlx_array arr);
#ifdef HAS_FLOAT16
int mlx_array_item_float16(float16_t* res, const mlx_array arr);
#endif
#ifdef HAS_BFLOAT16
int mlx_array_item_bfloat16(bfloat16_t* res, const mlx_array arr);
#endif

/** A pointer to element 0 of the array's data (strided: see mlx_array_strides), valid while
 * the array lives. The array must be evaluated (otherwise NULL) and of the named type
 * (otherwise NULL, and the error handler is told). */
const bool* mlx_array_data_bool(const mlx_array arr);
const uint8_t* mlx_array_data_uint8(const mlx_array arr);
const uint16_t* mlx_array_data_uint16(const mlx_array arr);
const uint32_t* mlx_array_data_uint32(const mlx_array arr);
const uint64_t* mlx_array_data_uint64(const mlx_array arr);
const int8_t* mlx_array_data_int8(const mlx_array arr);
const int16_t* mlx_array_data_int16(const mlx_array arr);
const int32_t* mlx_array_data_int32(const mlx_array arr);
const int64_t* mlx_array_data_int64(const mlx_array arr);
const float* mlx_array_data_float32(const mlx_array arr);
const double* mlx_array_data_float64(const mlx_array arr);
const mlx_complex64_t* mlx_array_data_complex64(const mlx_array arr);
#ifdef HAS_FLOAT16
const float16_t* mlx_array_data_float16(const mlx_array arr);
#endif
#ifdef HAS_BFLOAT16
const bfloat16_t* mlx_array_data_bfloat16(const mlx_array arr);
#endif

/** Whether the array's value is computed (never blocks). */
int _mlx_array_is_available(bool* res, const mlx_array arr);
/** Evaluates the array if needed and waits until it is available. */
int _mlx_array_wait(const mlx_array arr);
/** Layout flags of an evaluated array. */
int _mlx_array_is_contiguous(bool* res, const mlx_array arr);
int _mlx_array_is_row_contiguous(bool* res, const mlx_array arr);
int _mlx_array_is_col_contiguous(bool* res, const mlx_array arr);

#ifdef __cplusplus
}
#endif

#endif
