/* braid's C API: function export (mlx-c's mlx/c/export.h and export_impl.h).
 *
 * mlx_export_function traces a closure on example arrays and writes the trace to a file;
 * mlx_imported_function_new reads one back as a callable that runs the traced graph on new
 * arrays without the closure (braid's export.h says how signatures are matched). An exporter
 * adds one trace per call with a new signature.
 *
 * Thread safety: every function may be called from any thread; an imported function may be
 * applied by several threads at once, and an exporter's calls are serialized. */
#ifndef BRAID_C_EXPORT_H
#define BRAID_C_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* as mlx-c's headers: programs written for them may rely on it */

#include "braid/c/array.h"
#include "braid/c/closure.h"
#include "braid/c/map.h"
#include "braid/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Adds traces of a closure to a file (made by mlx_function_exporter_new). */
typedef struct mlx_function_exporter_ {
  void* ctx;
} mlx_function_exporter;
/** A function read from a file (made by mlx_imported_function_new). */
typedef struct mlx_imported_function_ {
  void* ctx;
} mlx_imported_function;

int mlx_export_function(const char* file, const mlx_closure fun, const mlx_vector_array args, bool shapeless);
int mlx_export_function_kwargs(const char* file, const mlx_closure_kwargs fun, const mlx_vector_array args,
                               const mlx_map_string_to_array kwargs, bool shapeless);

/** An exporter writing to `file` (created now); an empty handle (ctx NULL) on error. */
mlx_function_exporter mlx_function_exporter_new(const char* file, const mlx_closure fun, bool shapeless);
/** Closes the exporter (no more traces) and frees the handle. */
int mlx_function_exporter_free(mlx_function_exporter xfunc);
int mlx_function_exporter_apply(const mlx_function_exporter xfunc, const mlx_vector_array args);
int mlx_function_exporter_apply_kwargs(const mlx_function_exporter xfunc, const mlx_vector_array args,
                                       const mlx_map_string_to_array kwargs);

/** The function in `file`; an empty handle (ctx NULL) when it cannot be read. */
mlx_imported_function mlx_imported_function_new(const char* file);
int mlx_imported_function_free(mlx_imported_function xfunc);
int mlx_imported_function_apply(mlx_vector_array* res, const mlx_imported_function xfunc,
                                const mlx_vector_array args);
int mlx_imported_function_apply_kwargs(mlx_vector_array* res, const mlx_imported_function xfunc,
                                       const mlx_vector_array args, const mlx_map_string_to_array kwargs);

#ifdef __cplusplus
}
#endif

#endif
