/* braid's C API: maps from strings to arrays and to strings (mlx-c's mlx/c/map.h), used by
 * the safetensors functions.
 *
 * *_get returns 2 when the key is absent (nothing reported); *_iterator_next returns 2 once
 * every entry has been visited. Keys and string values returned point into the map and stay
 * valid until the map changes. Iteration order is unspecified.
 *
 * Thread safety: every function may be called from any thread; any number of threads may read
 * one map at once. Changing a map (insert, set, free) while another thread uses it or iterates
 * over it is the caller's race; an iterator is used by one thread at a time. */
#ifndef BRAID_C_MAP_H
#define BRAID_C_MAP_H

#include "braid/c/array.h"
#include "braid/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A string-to-array map. */
typedef struct mlx_map_string_to_array_ {
  void* ctx;
} mlx_map_string_to_array;
mlx_map_string_to_array mlx_map_string_to_array_new(void);
int mlx_map_string_to_array_set(mlx_map_string_to_array* map, const mlx_map_string_to_array src);
int mlx_map_string_to_array_free(mlx_map_string_to_array map);
/** Inserts or replaces the value at `key`. */
int mlx_map_string_to_array_insert(mlx_map_string_to_array map, const char* key, const mlx_array value);
int mlx_map_string_to_array_get(mlx_array* value, const mlx_map_string_to_array map, const char* key);

typedef struct mlx_map_string_to_array_iterator_ {
  void* ctx;
  void* map_ctx;
} mlx_map_string_to_array_iterator;
mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(mlx_map_string_to_array map);
int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it);
int mlx_map_string_to_array_iterator_next(const char** key, mlx_array* value,
                                          mlx_map_string_to_array_iterator it);

/** A string-to-string map. */
typedef struct mlx_map_string_to_string_ {
  void* ctx;
} mlx_map_string_to_string;
mlx_map_string_to_string mlx_map_string_to_string_new(void);
int mlx_map_string_to_string_set(mlx_map_string_to_string* map, const mlx_map_string_to_string src);
int mlx_map_string_to_string_free(mlx_map_string_to_string map);
/** Inserts or replaces the value at `key`. */
int mlx_map_string_to_string_insert(mlx_map_string_to_string map, const char* key, const char* value);
int mlx_map_string_to_string_get(const char** value, const mlx_map_string_to_string map, const char* key);

typedef struct mlx_map_string_to_string_iterator_ {
  void* ctx;
  void* map_ctx;
} mlx_map_string_to_string_iterator;
mlx_map_string_to_string_iterator mlx_map_string_to_string_iterator_new(mlx_map_string_to_string map);
int mlx_map_string_to_string_iterator_free(mlx_map_string_to_string_iterator it);
int mlx_map_string_to_string_iterator_next(const char** key, const char** value,
                                           mlx_map_string_to_string_iterator it);

#ifdef __cplusplus
}
#endif

#endif
