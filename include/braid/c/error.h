/* braid's C API: error reporting (mlx-c's mlx/c/error.h).
 *
 * No C++ exception crosses the C boundary. Every function that can fail catches whatever the
 * library throws, passes the message to the error handler, and returns non-zero (functions
 * that return a handle return an empty one; those returning a pointer return NULL).
 *
 * The default handler prints "MLX error: <message>" and exits the process, as mlx-c's does;
 * install your own to recover. The handler is process-wide and may be called on any thread
 * that calls into the API, concurrently: it must be thread-safe and must not unwind (throw or
 * longjmp) through the library. */
#ifndef BRAID_C_ERROR_H
#define BRAID_C_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*mlx_error_handler_func)(const char* msg, void* data);

/** Installs `handler` (NULL restores the default) with `data`, which is passed to every call.
 * `dtor`, when not NULL, is called on `data` once the handler has been replaced and no call
 * still uses it. Thread-safe: a call running on another thread finishes with the handler and
 * data it started with. */
void mlx_set_error_handler(mlx_error_handler_func handler, void* data, void (*dtor)(void*));

/** Reports an error to the handler: the printf-style message followed by " at file:line".
 * Thread-safe. */
void _mlx_error(const char* file, const int line, const char* fmt, ...);

/** Reports an error, with the caller's file and line. */
#define mlx_error(...) _mlx_error(__FILE__, __LINE__, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
