/* export: a closure exported with mlx_export_function imports and gives its results; a
 * keyword closure needs its keywords; an exporter keeps one trace per signature; a damaged
 * or missing file is an error through the handler, never a crash. */
#include "check.h"

static mlx_stream s;

/* f(x) = exp(x) * 2, appended to the result vector the closure hands in (as mlx-c's, it is an
 * empty vector, not an empty handle). */
static int twice_exp(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), two = mlx_array_new_float(2.0f);
  if (mlx_vector_array_get(&x, in, 0) != 0) return 1;
  mlx_exp(&y, x, s);
  mlx_multiply(&y, y, two, s);
  if (mlx_vector_array_append_value(*res, y) != 0) return 1;
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(two);
  return 0;
}

/* g(x; scale) = x * scale */
static int scaled(mlx_vector_array* res, const mlx_vector_array args, const mlx_map_string_to_array kwargs) {
  mlx_array x = mlx_array_new(), scale = mlx_array_new(), y = mlx_array_new();
  if (mlx_vector_array_get(&x, args, 0) != 0) return 1;
  if (mlx_map_string_to_array_get(&scale, kwargs, "scale") != 0) return 1;
  mlx_multiply(&y, x, scale, s);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(scale);
  mlx_array_free(y);
  return 0;
}

/* The sum of its inputs (any count). */
static int sum_all(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array acc = mlx_array_new_float(0.0f), x = mlx_array_new();
  for (size_t i = 0; i < mlx_vector_array_size(in); ++i) {
    mlx_vector_array_get(&x, in, i);
    mlx_add(&acc, acc, x, s);
  }
  mlx_vector_array_set_value(res, acc);
  mlx_array_free(acc);
  mlx_array_free(x);
  return 0;
}

static float first_output(mlx_imported_function f, mlx_vector_array args, mlx_map_string_to_array kwargs) {
  mlx_vector_array out = mlx_vector_array_new();
  mlx_array y = mlx_array_new();
  CHECK_OK(kwargs.ctx ? mlx_imported_function_apply_kwargs(&out, f, args, kwargs)
                      : mlx_imported_function_apply(&out, f, args));
  CHECK_OK(mlx_vector_array_get(&y, out, 0));
  float v = item_float(y);
  mlx_array_free(y);
  mlx_vector_array_free(out);
  return v;
}

static void ExportedClosureImports(void) {
  const char* path = "c_export_basic.mlxfn";
  mlx_closure f = mlx_closure_new_func(twice_exp);
  mlx_array x = mlx_array_new_float(1.0f), wrong = mlx_array_new_int(1);
  mlx_vector_array args = mlx_vector_array_new_value(x);
  CHECK_OK(mlx_export_function(path, f, args, false));
  mlx_imported_function g = mlx_imported_function_new(path);
  CHECK(g.ctx != NULL);
  mlx_map_string_to_array none = {NULL};
  CHECK_NEAR(first_output(g, args, none), 2.0 * exp(1.0), 1e-5);
  mlx_vector_array bad = mlx_vector_array_new_value(wrong), out = mlx_vector_array_new();
  CHECK_FAILS(mlx_imported_function_apply(&out, g, bad), "[import_function]");
  mlx_vector_array_free(bad);
  mlx_vector_array_free(out);
  mlx_imported_function_free(g);
  mlx_vector_array_free(args);
  mlx_array_free(x);
  mlx_array_free(wrong);
  mlx_closure_free(f);
  remove(path);
}

static void KeywordClosureNeedsItsKeywords(void) {
  const char* path = "c_export_kwargs.mlxfn";
  mlx_closure_kwargs f = mlx_closure_kwargs_new_func(scaled);
  mlx_array x = mlx_array_new_float(3.0f), scale = mlx_array_new_float(4.0f);
  mlx_vector_array args = mlx_vector_array_new_value(x);
  mlx_map_string_to_array kwargs = mlx_map_string_to_array_new();
  CHECK_OK(mlx_map_string_to_array_insert(kwargs, "scale", scale));
  CHECK_OK(mlx_export_function_kwargs(path, f, args, kwargs, false));
  mlx_imported_function g = mlx_imported_function_new(path);
  CHECK_NEAR(first_output(g, args, kwargs), 12.0, 1e-6);
  mlx_vector_array out = mlx_vector_array_new();
  CHECK_FAILS(mlx_imported_function_apply(&out, g, args), "[import_function]");
  mlx_vector_array_free(out);
  mlx_imported_function_free(g);
  mlx_map_string_to_array_free(kwargs);
  mlx_vector_array_free(args);
  mlx_array_free(x);
  mlx_array_free(scale);
  mlx_closure_kwargs_free(f);
  remove(path);
}

static void ExporterKeepsOneTracePerSignature(void) {
  const char* path = "c_export_variable.mlxfn";
  mlx_closure f = mlx_closure_new_func(sum_all);
  mlx_function_exporter ex = mlx_function_exporter_new(path, f, false);
  CHECK(ex.ctx != NULL);
  mlx_array one = mlx_array_new_float(1.0f);
  mlx_vector_array two = mlx_vector_array_new(), three = mlx_vector_array_new();
  for (int i = 0; i < 2; ++i) mlx_vector_array_append_value(two, one);
  for (int i = 0; i < 3; ++i) mlx_vector_array_append_value(three, one);
  CHECK_OK(mlx_function_exporter_apply(ex, two));
  CHECK_OK(mlx_function_exporter_apply(ex, three));
  CHECK_FAILS(mlx_function_exporter_apply(ex, two), "same signature");
  CHECK_OK(mlx_function_exporter_free(ex));
  mlx_imported_function g = mlx_imported_function_new(path);
  mlx_map_string_to_array none = {NULL};
  CHECK_NEAR(first_output(g, two, none), 2.0, 1e-6);
  CHECK_NEAR(first_output(g, three, none), 3.0, 1e-6);
  mlx_imported_function_free(g);
  mlx_vector_array_free(two);
  mlx_vector_array_free(three);
  mlx_array_free(one);
  mlx_closure_free(f);
  remove(path);
}

static void DamagedOrMissingFilesFail(void) {
  const char* path = "c_export_damaged.mlxfn";
  FILE* file = fopen(path, "wb");
  CHECK(file != NULL);
  fputs("not an exported function", file);
  fclose(file);
  int before = atomic_load(&error_count);
  mlx_imported_function g = mlx_imported_function_new(path);
  CHECK(g.ctx == NULL);
  CHECK(atomic_load(&error_count) == before + 1);
  g = mlx_imported_function_new("c_export_missing.mlxfn");
  CHECK(g.ctx == NULL);
  CHECK(strstr(last_error_message(), "[import_function]") != NULL);
  remove(path);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(ExportedClosureImports);
  RUN(KeywordClosureNeedsItsKeywords);
  RUN(ExporterKeepsOneTracePerSignature);
  RUN(DamagedOrMissingFilesFail);
  mlx_stream_free(s);
  return 0;
}
