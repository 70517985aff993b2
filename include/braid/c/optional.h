/* braid's C API: optional scalars (mlx-c's mlx/c/optional.h). has_value false stands for
 * std::nullopt (the op's default). */
#ifndef BRAID_C_OPTIONAL_H
#define BRAID_C_OPTIONAL_H

#include <stdbool.h>

#include "braid/c/array.h"
#include "braid/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlx_optional_int_ {
  int value;
  bool has_value;
} mlx_optional_int;

typedef struct mlx_optional_float_ {
  float value;
  bool has_value;
} mlx_optional_float;

typedef struct mlx_optional_dtype_ {
  mlx_dtype value;
  bool has_value;
} mlx_optional_dtype;

#ifdef __cplusplus
}
#endif

#endif
