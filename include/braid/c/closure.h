/* braid's C API: closures, C functions that the transforms can call (mlx-c's mlx/c/closure.h).
 *
 * A closure wraps a C callback. The callback writes its outputs to its first argument (a
 * vector handle to set, e.g. with mlx_vector_array_set_value) and returns 0; a non-zero
 * return makes the call that applied the closure fail. A `_payload` closure passes `payload`
 * to every call and calls `dtor(payload)` (when not NULL) once the last copy of the closure
 * is gone, which may be on another thread.
 *
 * Thread safety: every function may be called from any thread, and a closure may be applied
 * by several threads at once (the transforms are reentrant), so the callback and its payload
 * must allow that. The callback runs on the thread that applies the closure or runs the
 * transform. */
#ifndef BRAID_C_CLOSURE_H
#define BRAID_C_CLOSURE_H

#include "braid/c/array.h"
#include "braid/c/map.h"
#include "braid/c/optional.h"
#include "braid/c/stream.h"
#include "braid/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A function from a vector of arrays to a vector of arrays. */
typedef struct mlx_closure_ {
  void* ctx;
} mlx_closure;
mlx_closure mlx_closure_new(void);
int mlx_closure_free(mlx_closure cls);
mlx_closure mlx_closure_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array));
mlx_closure mlx_closure_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array, void*),
                                         void* payload, void (*dtor)(void*));
int mlx_closure_set(mlx_closure* cls, const mlx_closure src);
int mlx_closure_apply(mlx_vector_array* res, mlx_closure cls, const mlx_vector_array input);
/** A closure of one array to one array. */
mlx_closure mlx_closure_new_unary(int (*fun)(mlx_array*, const mlx_array));

/** A function from positional arrays and keyword arrays (a map of names) to arrays. */
typedef struct mlx_closure_kwargs_ {
  void* ctx;
} mlx_closure_kwargs;
mlx_closure_kwargs mlx_closure_kwargs_new(void);
int mlx_closure_kwargs_free(mlx_closure_kwargs cls);
mlx_closure_kwargs mlx_closure_kwargs_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array,
                                                          const mlx_map_string_to_array));
mlx_closure_kwargs mlx_closure_kwargs_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array,
                                                                  const mlx_map_string_to_array, void*),
                                                       void* payload, void (*dtor)(void*));
int mlx_closure_kwargs_set(mlx_closure_kwargs* cls, const mlx_closure_kwargs src);
int mlx_closure_kwargs_apply(mlx_vector_array* res, mlx_closure_kwargs cls, const mlx_vector_array input_0,
                             const mlx_map_string_to_array input_1);

/** A function returning values and gradients (made by mlx_value_and_grad). */
typedef struct mlx_closure_value_and_grad_ {
  void* ctx;
} mlx_closure_value_and_grad;
mlx_closure_value_and_grad mlx_closure_value_and_grad_new(void);
int mlx_closure_value_and_grad_free(mlx_closure_value_and_grad cls);
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func(int (*fun)(mlx_vector_array*,
                                                                          mlx_vector_array*,
                                                                          const mlx_vector_array));
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func_payload(
    int (*fun)(mlx_vector_array*, mlx_vector_array*, const mlx_vector_array, void*), void* payload,
    void (*dtor)(void*));
int mlx_closure_value_and_grad_set(mlx_closure_value_and_grad* cls, const mlx_closure_value_and_grad src);
int mlx_closure_value_and_grad_apply(mlx_vector_array* res_0, mlx_vector_array* res_1,
                                     mlx_closure_value_and_grad cls, const mlx_vector_array input);

/** A custom vector-Jacobian product: (primals, cotangents, outputs) -> one cotangent per primal. */
typedef struct mlx_closure_custom_ {
  void* ctx;
} mlx_closure_custom;
mlx_closure_custom mlx_closure_custom_new(void);
int mlx_closure_custom_free(mlx_closure_custom cls);
mlx_closure_custom mlx_closure_custom_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array,
                                                          const mlx_vector_array, const mlx_vector_array));
mlx_closure_custom mlx_closure_custom_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array,
                                                                  const mlx_vector_array,
                                                                  const mlx_vector_array, void*),
                                                       void* payload, void (*dtor)(void*));
int mlx_closure_custom_set(mlx_closure_custom* cls, const mlx_closure_custom src);
int mlx_closure_custom_apply(mlx_vector_array* res, mlx_closure_custom cls, const mlx_vector_array input_0,
                             const mlx_vector_array input_1, const mlx_vector_array input_2);

/** A custom Jacobian-vector product: (primals, tangents, argnums) -> one tangent per output. */
typedef struct mlx_closure_custom_jvp_ {
  void* ctx;
} mlx_closure_custom_jvp;
mlx_closure_custom_jvp mlx_closure_custom_jvp_new(void);
int mlx_closure_custom_jvp_free(mlx_closure_custom_jvp cls);
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array,
                                                                  const mlx_vector_array, const int*,
                                                                  size_t _num));
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func_payload(int (*fun)(mlx_vector_array*,
                                                                          const mlx_vector_array,
                                                                          const mlx_vector_array, const int*,
                                                                          size_t _num, void*),
                                                               void* payload, void (*dtor)(void*));
int mlx_closure_custom_jvp_set(mlx_closure_custom_jvp* cls, const mlx_closure_custom_jvp src);
int mlx_closure_custom_jvp_apply(mlx_vector_array* res, mlx_closure_custom_jvp cls,
                                 const mlx_vector_array input_0, const mlx_vector_array input_1,
                                 const int* input_2, size_t input_2_num);

/** A custom vectorization: (inputs, axes) -> (outputs, output axes). */
typedef struct mlx_closure_custom_vmap_ {
  void* ctx;
} mlx_closure_custom_vmap;
mlx_closure_custom_vmap mlx_closure_custom_vmap_new(void);
int mlx_closure_custom_vmap_free(mlx_closure_custom_vmap cls);
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func(int (*fun)(mlx_vector_array*, mlx_vector_int*,
                                                                    const mlx_vector_array, const int*,
                                                                    size_t _num));
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func_payload(
    int (*fun)(mlx_vector_array*, mlx_vector_int*, const mlx_vector_array, const int*, size_t _num, void*),
    void* payload, void (*dtor)(void*));
int mlx_closure_custom_vmap_set(mlx_closure_custom_vmap* cls, const mlx_closure_custom_vmap src);
int mlx_closure_custom_vmap_apply(mlx_vector_array* res_0, mlx_vector_int* res_1, mlx_closure_custom_vmap cls,
                                  const mlx_vector_array input_0, const int* input_1, size_t input_1_num);

#ifdef __cplusplus
}
#endif

#endif
