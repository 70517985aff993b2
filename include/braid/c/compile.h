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

/** `fun` traced once per input signature and replayed. braid keys on shapes even when
 * `shapeless` is true (a new shape traces again). */
int mlx_compile(mlx_closure* res, const mlx_closure fun, bool shapeless);
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
