/* braid's C API: the allocator's counters and limits (mlx-c's mlx/c/memory.h). Sizes in bytes.
 *
 * Thread safety: every function may be called from any thread at any time. */
#ifndef BRAID_C_MEMORY_H
#define BRAID_C_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Returns every cached buffer to the system. */
int mlx_clear_cache(void);
/** Bytes held by live arrays. */
int mlx_get_active_memory(size_t* res);
/** Bytes kept in the cache for reuse. */
int mlx_get_cache_memory(size_t* res);
/** The active-memory guideline (see mlx_set_memory_limit). */
int mlx_get_memory_limit(size_t* res);
/** The largest active memory since start or the last reset. */
int mlx_get_peak_memory(size_t* res);
int mlx_reset_peak_memory(void);
/** Sets the cache limit (0 disables caching); `res` receives the previous limit. */
int mlx_set_cache_limit(size_t* res, size_t limit);
/** Sets the active-memory guideline; `res` receives the previous limit. */
int mlx_set_memory_limit(size_t* res, size_t limit);
/** Wired memory is a Metal notion: accepted for compatibility, ignored; `res` receives 0. */
int mlx_set_wired_limit(size_t* res, size_t limit);

#ifdef __cplusplus
}
#endif

#endif
