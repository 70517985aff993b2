/* braid's C API: compile (mlx-c's mlx/c/compile.h).
 *
 * A compiled closure traces `fun` once per input signature (count, shapes, dtypes) and
 * replays the recorded graph on later calls without calling `fun` again (braid's compile.h
 * says how). Thread safety: every function may be called from any thread; a compiled closure
 * may be applied by several threads at once (a signature, which includes the calling thread's
 * default stream, is traced once; another caller of it waits). */
#ifndef BRAID_C_COMPILE_H
#define BRAID_C_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* as mlx-c's headers: programs written for them may rely on it */

#include "braid/c/array.h"
#include "braid/c/closure.h"
#include "braid/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/** MLX's compile modes; braid fuses nothing, so all but DISABLED trace and replay alike. */
typedef enum mlx_compile_mode_ {
  MLX_COMPILE_MODE_DISABLED,
  MLX_COMPILE_MODE_NO_SIMPLIFY,
  MLX_COMPILE_MODE_NO_FUSE,
  MLX_COMPILE_MODE_ENABLED
} mlx_compile_mode;

/** `fun` traced once per input signature and replayed. `shapeless`: one trace serves inputs of
 * other shapes with the same ranks and dtypes where every primitive can follow them (else a
 * new shape traces again). */
int mlx_compile(mlx_closure* res, const mlx_closure fun, bool shapeless);
/** `fun` compiled with its traces kept under `fun_id` in a process-wide cache shared by every
 * closure compiled with that id (MLX's detail::compile, which mlx-rs and mlx-swift use): a
 * binding may compile a new closure for each call and still replay the first one's trace.
 * `constants` (may be null when `constants_num` is 0) join each call's key. */
int mlx_detail_compile(mlx_closure* res, const mlx_closure fun, uintptr_t fun_id, bool shapeless,
                       const uint64_t* constants, size_t constants_num);
/** Forgets every trace kept by id (closures already returned keep theirs). */
int mlx_detail_compile_clear_cache(void);
/** Forgets the traces kept under `fun_id` (closures already returned keep theirs). */
int mlx_detail_compile_erase(uintptr_t fun_id);
/** Makes compiled closures call their function directly (process-wide); so does the
 * environment variable MLX_DISABLE_COMPILE. */
int mlx_disable_compile(void);
/** Makes compiled closures trace and replay again, overriding MLX_DISABLE_COMPILE. */
int mlx_enable_compile(void);
/** Sets the compile mode (process-wide). */
int mlx_set_compile_mode(mlx_compile_mode mode);

#ifdef __cplusplus
}
#endif

#endif
