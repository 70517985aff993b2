/* braid's C API: 16-bit float types, where the C compiler has them (mlx-c's mlx/c/half.h).
 * Elsewhere float16 and bfloat16 data are read and written as uint16_t bit patterns. */
#ifndef BRAID_C_HALF_H
#define BRAID_C_HALF_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __ARM_FEATURE_FP16_SCALAR_ARITHMETIC
#define HAS_FLOAT16
#include <arm_fp16.h>
typedef __fp16 float16_t;
#endif

#ifdef __ARM_FEATURE_BF16
#define HAS_BFLOAT16
#include <arm_bf16.h>
typedef __bf16 bfloat16_t;
#endif

#ifdef __cplusplus
}
#endif

#endif
