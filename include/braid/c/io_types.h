/* braid's C API: custom byte sources and sinks for the io functions (mlx-c's mlx/c/io_types.h).
 *
 * Thread safety: every function may be called from any thread. The vtable's functions are
 * called on whichever thread loads or saves, and, for safetensors, on the thread that evaluates
 * a lazily loaded array (read_at_offset may be called by several threads at once; without it,
 * braid serializes seek + read itself). */
#ifndef BRAID_C_IO_TYPES_H
#define BRAID_C_IO_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "braid/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A byte source. */
typedef struct mlx_io_reader_ {
  void* ctx;
} mlx_io_reader;
/** A byte sink. */
typedef struct mlx_io_writer_ {
  void* ctx;
} mlx_io_writer;

/** Callbacks on a user descriptor. seek's `whence` is SEEK_SET, SEEK_CUR or SEEK_END. A reader
 * needs is_open, good, tell, seek, read and label (read_at_offset may be NULL); a writer needs
 * is_open, good, tell, seek, write and label. `free` (may be NULL) is called once on the
 * descriptor when braid releases it: after the last *_free of the handle and once no lazily
 * loaded array reads from it any more, on whichever thread drops it last. */
typedef struct mlx_io_vtable_ {
  bool (*is_open)(void*);
  bool (*good)(void*);
  size_t (*tell)(void*);
  void (*seek)(void*, int64_t off, int whence);
  void (*read)(void*, char* data, size_t n);
  void (*read_at_offset)(void*, char* data, size_t n, size_t off);
  void (*write)(void*, const char* data, size_t n);
  const char* (*label)(void*);
  void (*free)(void*);
} mlx_io_vtable;

/** A reader calling `vtable` on `desc`. */
mlx_io_reader mlx_io_reader_new(void* desc, mlx_io_vtable vtable);
int mlx_io_reader_descriptor(void** desc_, mlx_io_reader io);
int mlx_io_reader_tostring(mlx_string* str_, mlx_io_reader io);
int mlx_io_reader_free(mlx_io_reader io);
/** A writer calling `vtable` on `desc`. */
mlx_io_writer mlx_io_writer_new(void* desc, mlx_io_vtable vtable);
int mlx_io_writer_descriptor(void** desc_, mlx_io_writer io);
int mlx_io_writer_tostring(mlx_string* str_, mlx_io_writer io);
int mlx_io_writer_free(mlx_io_writer io);

#ifdef __cplusplus
}
#endif

#endif
