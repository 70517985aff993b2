/* braid's C API: vectors of arrays, of array vectors, of ints and of strings (mlx-c's
 * mlx/c/vector.h). A vector holds its own references to the arrays put in it.
 *
 * For each element type T (array, vector_array, int, string): *_new makes an empty vector,
 * *_new_data / *_new_value one holding `size` elements / one element, *_set copies a vector,
 * *_set_data / *_set_value replace the contents, *_append_data / *_append_value add to the
 * end, *_size counts, *_get reads element `idx` (out of range: error), *_free frees.
 *
 * Thread safety: every function may be called from any thread; any number of threads may read
 * one vector at once. Changing a vector (set, append, free) while another thread uses it is the
 * caller's race. */
#ifndef BRAID_C_VECTOR_H
#define BRAID_C_VECTOR_H

#include "braid/c/array.h"
#include "braid/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A vector of arrays. */
typedef struct mlx_vector_array_ {
  void* ctx;
} mlx_vector_array;
mlx_vector_array mlx_vector_array_new(void);
int mlx_vector_array_set(mlx_vector_array* vec, const mlx_vector_array src);
int mlx_vector_array_free(mlx_vector_array vec);
mlx_vector_array mlx_vector_array_new_data(const mlx_array* data, size_t size);
mlx_vector_array mlx_vector_array_new_value(const mlx_array val);
int mlx_vector_array_set_data(mlx_vector_array* vec, const mlx_array* data, size_t size);
int mlx_vector_array_set_value(mlx_vector_array* vec, const mlx_array val);
int mlx_vector_array_append_data(mlx_vector_array vec, const mlx_array* data, size_t size);
int mlx_vector_array_append_value(mlx_vector_array vec, const mlx_array val);
size_t mlx_vector_array_size(mlx_vector_array vec);
int mlx_vector_array_get(mlx_array* res, const mlx_vector_array vec, size_t idx);

/** A vector of array vectors. */
typedef struct mlx_vector_vector_array_ {
  void* ctx;
} mlx_vector_vector_array;
mlx_vector_vector_array mlx_vector_vector_array_new(void);
int mlx_vector_vector_array_set(mlx_vector_vector_array* vec, const mlx_vector_vector_array src);
int mlx_vector_vector_array_free(mlx_vector_vector_array vec);
mlx_vector_vector_array mlx_vector_vector_array_new_data(const mlx_vector_array* data, size_t size);
mlx_vector_vector_array mlx_vector_vector_array_new_value(const mlx_vector_array val);
int mlx_vector_vector_array_set_data(mlx_vector_vector_array* vec, const mlx_vector_array* data, size_t size);
int mlx_vector_vector_array_set_value(mlx_vector_vector_array* vec, const mlx_vector_array val);
int mlx_vector_vector_array_append_data(mlx_vector_vector_array vec, const mlx_vector_array* data,
                                        size_t size);
int mlx_vector_vector_array_append_value(mlx_vector_vector_array vec, const mlx_vector_array val);
size_t mlx_vector_vector_array_size(mlx_vector_vector_array vec);
int mlx_vector_vector_array_get(mlx_vector_array* res, const mlx_vector_vector_array vec, size_t idx);

/** A vector of ints. */
typedef struct mlx_vector_int_ {
  void* ctx;
} mlx_vector_int;
mlx_vector_int mlx_vector_int_new(void);
int mlx_vector_int_set(mlx_vector_int* vec, const mlx_vector_int src);
int mlx_vector_int_free(mlx_vector_int vec);
mlx_vector_int mlx_vector_int_new_data(int* data, size_t size);
mlx_vector_int mlx_vector_int_new_value(int val);
int mlx_vector_int_set_data(mlx_vector_int* vec, int* data, size_t size);
int mlx_vector_int_set_value(mlx_vector_int* vec, int val);
int mlx_vector_int_append_data(mlx_vector_int vec, int* data, size_t size);
int mlx_vector_int_append_value(mlx_vector_int vec, int val);
size_t mlx_vector_int_size(mlx_vector_int vec);
int mlx_vector_int_get(int* res, const mlx_vector_int vec, size_t idx);

/** A vector of strings (copied in; mlx_vector_string_get returns a pointer into the vector,
 * valid until it changes). */
typedef struct mlx_vector_string_ {
  void* ctx;
} mlx_vector_string;
mlx_vector_string mlx_vector_string_new(void);
int mlx_vector_string_set(mlx_vector_string* vec, const mlx_vector_string src);
int mlx_vector_string_free(mlx_vector_string vec);
mlx_vector_string mlx_vector_string_new_data(const char** data, size_t size);
mlx_vector_string mlx_vector_string_new_value(const char* val);
int mlx_vector_string_set_data(mlx_vector_string* vec, const char** data, size_t size);
int mlx_vector_string_set_value(mlx_vector_string* vec, const char* val);
int mlx_vector_string_append_data(mlx_vector_string vec, const char** data, size_t size);
int mlx_vector_string_append_value(mlx_vector_string vec, const char* val);
size_t mlx_vector_string_size(mlx_vector_string vec);
int mlx_vector_string_get(char** res, const mlx_vector_string vec, size_t idx);

#ifdef __cplusplus
}
#endif

#endif
