/* braid's C API: the library version (mlx-c's mlx_version). Thread-safe. */
#ifndef BRAID_C_VERSION_H
#define BRAID_C_VERSION_H

#include "braid/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Sets `str` to braid's version, "major.minor.patch". */
int mlx_version(mlx_string* str);

#ifdef __cplusplus
}
#endif

#endif
