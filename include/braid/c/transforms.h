/* braid's C API: evaluation and function transforms (mlx-c's mlx/c/transforms.h).
 *
 * Thread safety: every function may be called from any thread. Evaluations may share nodes
 * (each is computed once) and transforms are reentrant: several threads may transform or
 * apply the same closure at once. A graph built on one thread evaluates and differentiates on
 * any other. */
#ifndef BRAID_C_TRANSFORMS_H
#define BRAID_C_TRANSFORMS_H

#include <stdbool.h>
#include <stddef.h>

#include "braid/c/array.h"
#include "braid/c/closure.h"
#include "braid/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Computes the outputs and everything they need; fails with the first error found. */
int mlx_eval(const mlx_vector_array outputs);
/** Submits the outputs for evaluation and returns at once (mlx_array_eval or _mlx_array_wait
 * waits for them; errors surface there). */
int mlx_async_eval(const mlx_vector_array outputs);
/** `fun` whose intermediates are recomputed in the backward pass instead of kept. */
int mlx_checkpoint(mlx_closure* res, const mlx_closure fun);
/** `fun` with its vjp, jvp or vmap replaced by the given closures (an empty handle keeps the
 * derived one). */
int mlx_custom_function(mlx_closure* res, const mlx_closure fun,
                        const mlx_closure_custom fun_vjp /* may be null */,
                        const mlx_closure_custom_jvp fun_jvp /* may be null */,
                        const mlx_closure_custom_vmap fun_vmap /* may be null */);
/** `fun` whose vector-Jacobian product is `fun_vjp`. */
int mlx_custom_vjp(mlx_closure* res, const mlx_closure fun, const mlx_closure_custom fun_vjp);
/** Outputs of `fun` at `primals` (res_0) and the Jacobian-vector products with `tangents` (res_1). */
int mlx_jvp(mlx_vector_array* res_0, mlx_vector_array* res_1, const mlx_closure fun,
            const mlx_vector_array primals, const mlx_vector_array tangents);
/** A closure returning `fun`'s values and the gradient of its first output with respect to the
 * inputs listed in `argnums`. */
int mlx_value_and_grad(mlx_closure_value_and_grad* res, const mlx_closure fun, const int* argnums,
                       size_t argnums_num);
/** Outputs of `fun` at `primals` (res_0) and the vector-Jacobian products of `cotangents` (res_1). */
int mlx_vjp(mlx_vector_array* res_0, mlx_vector_array* res_1, const mlx_closure fun,
            const mlx_vector_array primals, const mlx_vector_array cotangents);

/** braid extension (mlx-c has no public vmap): `fun` vectorized over axis in_axes[i] of input
 * i (-1: not mapped; none given: axis 0 of every input), output j's mapped axis moved to
 * out_axes[j] (none given: 0). */
int mlx_vmap(mlx_closure* res, const mlx_closure fun, const int* in_axes, size_t in_axes_num,
             const int* out_axes, size_t out_axes_num);

#ifdef __cplusplus
}
#endif

#endif
