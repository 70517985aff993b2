/* braid's C API: devices (mlx-c's mlx/c/device.h).
 *
 * Thread safety: every function may be called from any thread. The default device is
 * process-wide (an atomic: every thread sees a change on its next call). */
#ifndef BRAID_C_DEVICE_H
#define BRAID_C_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "braid/c/string.h"
#include "braid/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A device: where arrays are computed. */
typedef struct mlx_device_ {
  void* ctx;
} mlx_device;

/** Device type (fixed to int in C++, as mlx_dtype). */
typedef enum mlx_device_type_
#ifdef __cplusplus
    : int
#endif
{ MLX_CPU,
  MLX_GPU } mlx_device_type;

/** A new empty handle. */
mlx_device mlx_device_new(void);
/** The device of `type` with `index`. */
mlx_device mlx_device_new_type(mlx_device_type type, int index);
int mlx_device_free(mlx_device dev);
int mlx_device_set(mlx_device* dev, const mlx_device src);
/** "Device(cpu, 0)", "Device(gpu, 0)", as MLX prints them. */
int mlx_device_tostring(mlx_string* str, mlx_device dev);
bool mlx_device_equal(mlx_device lhs, mlx_device rhs);
int mlx_device_get_index(int* index, mlx_device dev);
int mlx_device_get_type(mlx_device_type* type, mlx_device dev);
/** The calling thread's default device (a stream context's, else the process-wide one). */
int mlx_get_default_device(mlx_device* dev);
/** Sets the process-wide default device; fails if the device is not available. */
int mlx_set_default_device(mlx_device dev);
/** Whether this build and machine can run work on `dev`. */
int mlx_device_is_available(bool* avail, mlx_device dev);
/** How many devices of `type` are available (1 CPU; 0 or 1 GPU). */
int mlx_device_count(int* count, mlx_device_type type);

/** Facts about a device (mlx-c's mlx_device_info): a map from keys ("device_name",
 * "architecture": strings; "memory_size", "total_memory", "max_recommended_working_set_size":
 * sizes in bytes) to string or size values. */
typedef struct mlx_device_info_ {
  void* ctx;
} mlx_device_info;
/** A new, empty map. */
mlx_device_info mlx_device_info_new(void);
/** Fills `info` with the facts about `dev`; fails if the device is not available. */
int mlx_device_info_get(mlx_device_info* info, mlx_device dev);
int mlx_device_info_free(mlx_device_info info);
int mlx_device_info_has_key(bool* exists, mlx_device_info info, const char* key);
int mlx_device_info_is_string(bool* is_string, mlx_device_info info, const char* key);
/** The string under `key`, valid while `info` lives. Returns 2 (no error reported) if the key is
 * missing or holds a size. */
int mlx_device_info_get_string(const char** value, mlx_device_info info, const char* key);
/** The size under `key`. Returns 2 (no error reported) if the key is missing or holds a string. */
int mlx_device_info_get_size(size_t* value, mlx_device_info info, const char* key);
/** The keys, in a new vector set into `keys`. */
int mlx_device_info_get_keys(mlx_vector_string* keys, mlx_device_info info);

#ifdef __cplusplus
}
#endif

#endif
