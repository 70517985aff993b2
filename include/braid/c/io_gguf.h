/* braid's C API: GGUF files (mlx-c's mlx/c/io_gguf.h): arrays by name and metadata values by key.
 *
 * A metadata value is an array (a scalar or a 1-d array of numbers), a string, or a vector of
 * strings; mlx_gguf_metadata_get_type says which. As in mlx-c, the functions that hand out a
 * metadata value (mlx_map_string_to_gguf_metadata_get, _iterator_next) write a new handle into
 * `*res`, whatever it held: free each value received with mlx_gguf_metadata_free. The other
 * results (mlx_string, mlx_array, mlx_vector_string, the maps) are set like every result of
 * this API. Keys returned point into the map and stay valid until the map changes.
 *
 * Thread safety: every function may be called from any thread; distinct threads may load and
 * save distinct files at once. Reading a map from several threads at once is safe; changing it
 * (insert, set, free) while another thread uses it is the caller's race. An iterator is used by
 * one thread at a time. */
#ifndef BRAID_C_IO_GGUF_H
#define BRAID_C_IO_GGUF_H

#include "braid/c/array.h"
#include "braid/c/map.h"
#include "braid/c/stream.h"
#include "braid/c/string.h"
#include "braid/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a metadata value holds. */
typedef enum {
  MLX_GGUF_METADATA_NONE = 0,
  MLX_GGUF_METADATA_ARRAY = 1,
  MLX_GGUF_METADATA_STRING = 2,
  MLX_GGUF_METADATA_STRING_VECTOR = 3
} mlx_gguf_metadata_type;

/** A metadata value. */
typedef struct mlx_gguf_metadata_ {
  void* ctx;
} mlx_gguf_metadata;

/** A string-to-metadata map. */
typedef struct mlx_map_string_to_gguf_metadata_ {
  void* ctx;
} mlx_map_string_to_gguf_metadata;

mlx_gguf_metadata mlx_gguf_metadata_new_string(const char* value);
/** An array value: a scalar or a 1-d array of a GGUF number type (checked by mlx_save_gguf). */
mlx_gguf_metadata mlx_gguf_metadata_new_array(const mlx_array value);
mlx_gguf_metadata mlx_gguf_metadata_new_string_vector(const mlx_vector_string value);
/** The kind of value; MLX_GGUF_METADATA_NONE, with an error report, for an empty handle. */
mlx_gguf_metadata_type mlx_gguf_metadata_get_type(const mlx_gguf_metadata metadata);
/** The value, when it is of that kind; otherwise 1, with an error report. */
int mlx_gguf_metadata_get_string(mlx_string* res, const mlx_gguf_metadata metadata);
int mlx_gguf_metadata_get_array(mlx_array* res, const mlx_gguf_metadata metadata);
int mlx_gguf_metadata_get_string_vector(mlx_vector_string* res, const mlx_gguf_metadata metadata);
int mlx_gguf_metadata_free(mlx_gguf_metadata metadata);

mlx_map_string_to_gguf_metadata mlx_map_string_to_gguf_metadata_new(void);
int mlx_map_string_to_gguf_metadata_set(mlx_map_string_to_gguf_metadata* map,
                                        const mlx_map_string_to_gguf_metadata src);
/** Inserts or replaces the value at `key` (the map keeps a copy: `value` stays the caller's). */
int mlx_map_string_to_gguf_metadata_insert(mlx_map_string_to_gguf_metadata map, const char* key,
                                           const mlx_gguf_metadata value);
/** A new handle to the value at `key`; 2 when the key is absent (nothing reported). */
int mlx_map_string_to_gguf_metadata_get(mlx_gguf_metadata* res, const mlx_map_string_to_gguf_metadata map,
                                        const char* key);
int mlx_map_string_to_gguf_metadata_free(mlx_map_string_to_gguf_metadata map);

/** An iterator over a string-to-metadata map. */
typedef struct mlx_map_string_to_gguf_metadata_iterator_ {
  void* ctx;
  void* map_ctx;
} mlx_map_string_to_gguf_metadata_iterator;
mlx_map_string_to_gguf_metadata_iterator mlx_map_string_to_gguf_metadata_iterator_new(
    mlx_map_string_to_gguf_metadata map);
int mlx_map_string_to_gguf_metadata_iterator_free(mlx_map_string_to_gguf_metadata_iterator it);
/** The next entry (a new value handle); 1 once every entry has been visited (nothing
 * reported), as mlx-c documents for this iterator. */
int mlx_map_string_to_gguf_metadata_iterator_next(const char** key, mlx_gguf_metadata* value,
                                                  mlx_map_string_to_gguf_metadata_iterator it);

/** Reads a GGUF file (versions 2 and 3) when called: its arrays (host arrays any stream may
 * use; Q4_0, Q4_1, Q4_K and Q8_0 tensors as MLX's quantized layout) and its metadata. */
int mlx_load_gguf(mlx_map_string_to_array* res_arrays, mlx_map_string_to_gguf_metadata* res_metadata,
                  const char* file, const mlx_stream s);
/** Writes the arrays (evaluated first) and metadata as GGUF version 3; a file name without
 * ".gguf" gets it. An empty metadata handle means no metadata. */
int mlx_save_gguf(const char* file, const mlx_map_string_to_array arrays,
                  const mlx_map_string_to_gguf_metadata metadata);

#ifdef __cplusplus
}
#endif

#endif
