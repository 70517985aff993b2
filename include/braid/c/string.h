/* braid's C API: strings (mlx-c's mlx/c/string.h).
 *
 * Thread safety: every function may be called from any thread. A handle is a value owned by
 * the caller: any number of threads may read one at once; freeing or setting a handle while
 * another thread uses it is the caller's race, as for any C object. */
#ifndef BRAID_C_STRING_H
#define BRAID_C_STRING_H

#ifdef __cplusplus
extern "C" {
#endif

/** A string object (its text is copied in and owned by the handle). */
typedef struct mlx_string_ {
  void* ctx;
} mlx_string;

/** A new empty string handle (nothing allocated until it is set). */
mlx_string mlx_string_new(void);
/** A new string holding a copy of `str` (nul-terminated). */
mlx_string mlx_string_new_data(const char* str);
/** Makes `str` hold a copy of `src`. */
int mlx_string_set(mlx_string* str, const mlx_string src);
/** The text, valid until the string is set again or freed ("" for an empty handle). */
const char* mlx_string_data(mlx_string str);
/** Frees the string (an empty handle is fine). */
int mlx_string_free(mlx_string str);

#ifdef __cplusplus
}
#endif

#endif
