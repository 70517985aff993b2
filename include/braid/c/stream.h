/* braid's C API: streams (mlx-c's mlx/c/stream.h).
 *
 * A stream is a process-wide queue, not a thread: the same stream works from every thread,
 * any number of threads may submit to it at once, and its work runs in submission order.
 * Arrays built on one thread may be evaluated on any other.
 *
 * Wherever an op takes a stream, an empty handle (from mlx_stream_new) means the calling
 * thread's default stream of the default device.
 *
 * Thread safety: every function may be called from any thread. The default stream is per
 * thread: mlx_get_default_stream and mlx_set_default_stream concern the calling thread only. */
#ifndef BRAID_C_STREAM_H
#define BRAID_C_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "braid/c/device.h"
#include "braid/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A stream: an ordered queue of work on one device. */
typedef struct mlx_stream_ {
  void* ctx;
} mlx_stream;

/** A new empty handle (the default stream where ops take a stream). */
mlx_stream mlx_stream_new(void);
/** A new process-wide stream on `dev`, alive while any handle or array refers to it. */
mlx_stream mlx_stream_new_device(mlx_device dev);
int mlx_stream_set(mlx_stream* stream, const mlx_stream src);
int mlx_stream_free(mlx_stream stream);
/** "Stream(cpu, 3)". */
int mlx_stream_tostring(mlx_string* str, mlx_stream stream);
bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs);
int mlx_stream_get_device(mlx_device* dev, mlx_stream stream);
int mlx_stream_get_index(int* index, mlx_stream stream);
/** Waits until the work submitted to `stream` before the call has finished (an empty handle:
 * the calling thread's default stream). Errors stay on the arrays that failed. */
int mlx_synchronize(mlx_stream stream);
/** The calling thread's default stream on `dev` (created on first use). */
int mlx_get_default_stream(mlx_stream* stream, mlx_device dev);
/** Makes `stream` the calling thread's default for its device; other threads are unaffected. */
int mlx_set_default_stream(mlx_stream stream);
/** The calling thread's default CPU / GPU stream, as a new handle (empty on error). */
mlx_stream mlx_default_cpu_stream_new(void);
mlx_stream mlx_default_gpu_stream_new(void);
/** mlx_synchronize of the calling thread's default stream of its default device. */
int mlx_synchronize_default(void);
/** Lets go of the calling thread's default streams (its next default is a new stream; see
 * braid::clear_streams). */
int mlx_clear_streams(void);
/** For source compatibility with mlx-c: an ordinary stream, safe from any number of threads. */
mlx_stream mlx_stream_new_thread_unsafe(mlx_device dev);

/** A vector of streams. */
typedef struct mlx_vector_stream_ {
  void* ctx;
} mlx_vector_stream;
mlx_vector_stream mlx_vector_stream_new(void);
int mlx_vector_stream_set(mlx_vector_stream* vec, const mlx_vector_stream src);
int mlx_vector_stream_free(mlx_vector_stream vec);
mlx_vector_stream mlx_vector_stream_new_data(const mlx_stream* data, size_t size);
mlx_vector_stream mlx_vector_stream_new_value(const mlx_stream val);
int mlx_vector_stream_set_data(mlx_vector_stream* vec, const mlx_stream* data, size_t size);
int mlx_vector_stream_set_value(mlx_vector_stream* vec, const mlx_stream val);
int mlx_vector_stream_append_data(mlx_vector_stream vec, const mlx_stream* data, size_t size);
int mlx_vector_stream_append_value(mlx_vector_stream vec, const mlx_stream val);
size_t mlx_vector_stream_size(mlx_vector_stream vec);
int mlx_vector_stream_get(mlx_stream* res, const mlx_vector_stream vec, size_t idx);

/** Every live stream, in index order. */
int mlx_get_streams(mlx_vector_stream* res);

/** A thread-local stream handle (mlx-c's type; see braid::new_thread_local_stream): each
 * thread that uses it gets a real stream of its own. */
typedef struct mlx_stream_thread_local_ {
  void* ctx;
} mlx_stream_thread_local;
mlx_stream_thread_local mlx_stream_thread_local_new(mlx_device dev);
int mlx_stream_thread_local_set(mlx_stream_thread_local* tls, const mlx_stream_thread_local src);
int mlx_stream_thread_local_free(mlx_stream_thread_local tls);
/** The calling thread's real stream behind `tls`. */
int mlx_stream_from_thread_local(mlx_stream* res, const mlx_stream_thread_local tls);
/** mlx_synchronize of the calling thread's real stream behind `tls`. */
int mlx_synchronize_thread_local(mlx_stream_thread_local tls);

#ifdef __cplusplus
}
#endif

#endif
