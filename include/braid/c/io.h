/* braid's C API: .npy and safetensors files (mlx-c's mlx/c/io.h).
 *
 * Thread safety: every function may be called from any thread; distinct threads may load and
 * save distinct files at once, and loaded arrays may be evaluated on any thread. */
#ifndef BRAID_C_IO_H
#define BRAID_C_IO_H

#include "braid/c/array.h"
#include "braid/c/io_types.h"
#include "braid/c/map.h"
#include "braid/c/stream.h"
#include "braid/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Reads a .npy array (read when called; a host array any stream may use). */
int mlx_load_reader(mlx_array* res, mlx_io_reader in_stream, const mlx_stream s);
int mlx_load(mlx_array* res, const char* file, const mlx_stream s);
/** Reads a safetensors file: its arrays (read when evaluated, on stream `s`) and metadata. */
int mlx_load_safetensors_reader(mlx_map_string_to_array* res_0, mlx_map_string_to_string* res_1,
                                mlx_io_reader in_stream, const mlx_stream s);
int mlx_load_safetensors(mlx_map_string_to_array* res_0, mlx_map_string_to_string* res_1, const char* file,
                         const mlx_stream s);
/** Writes `a` (evaluated first) as .npy; a file name without ".npy" gets it. */
int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a);
int mlx_save(const char* file, const mlx_array a);
/** Writes the arrays and metadata as safetensors; a file name without ".safetensors" gets it. */
int mlx_save_safetensors_writer(mlx_io_writer in_stream, const mlx_map_string_to_array param,
                                const mlx_map_string_to_string metadata);
int mlx_save_safetensors(const char* file, const mlx_map_string_to_array param,
                         const mlx_map_string_to_string metadata);

#ifdef __cplusplus
}
#endif

#endif
