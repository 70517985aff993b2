/* compile: a compiled closure gives the function's results, calls the callback once per input
 * signature, traces again for a new shape, calls it every time while compilation is disabled,
 * and refuses evaluation inside the traced callback; closures compiled under one id share their
 * traces. */
#include "check.h"

static mlx_stream s;
static atomic_int traces;

/* f(x) = exp(x) * x + 1, counting its calls. */
static int counted_fun(mlx_vector_array* res, const mlx_vector_array in) {
  atomic_fetch_add(&traces, 1);
  mlx_array x = mlx_array_new(), y = mlx_array_new(), one = mlx_array_new_float(1.0f);
  if (mlx_vector_array_get(&x, in, 0) != 0) return 1;
  mlx_exp(&y, x, s);
  mlx_multiply(&y, y, x, s);
  mlx_add(&y, y, one, s);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(one);
  return 0;
}

/* Evaluates its input's square: not allowed while compile traces it. */
static int evaluating_fun(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  mlx_multiply(&y, x, x, s);
  int status = mlx_array_eval(y);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(y);
  return status;
}

static float apply_first(mlx_closure f, const float* data, int n) {
  int shape[1] = {n};
  mlx_array x = mlx_array_new_data(data, shape, 1, MLX_FLOAT32), y = mlx_array_new();
  mlx_vector_array in = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
  CHECK_OK(mlx_closure_apply(&out, f, in));
  CHECK(mlx_vector_array_size(out) == 1);
  CHECK_OK(mlx_vector_array_get(&y, out, 0));
  float first = 0;
  read_floats(y, &first, 1);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
  mlx_array_free(x);
  mlx_array_free(y);
  return first;
}

static void CompiledClosureTracesOncePerSignature(void) {
  mlx_closure f = mlx_closure_new_func(counted_fun), c = mlx_closure_new();
  CHECK_OK(mlx_compile(&c, f, false));
  const float a[3] = {0.0f, 1.0f, 2.0f}, b[3] = {1.0f, 1.0f, 1.0f};
  atomic_store(&traces, 0);
  CHECK_NEAR(apply_first(c, a, 3), 1.0, 1e-6);
  CHECK_NEAR(apply_first(c, b, 3), exp(1.0) + 1.0, 1e-5);
  CHECK(atomic_load(&traces) == 1);
  CHECK_NEAR(apply_first(c, b, 2), exp(1.0) + 1.0, 1e-5); /* a new shape */
  CHECK(atomic_load(&traces) == 2);
  mlx_closure_free(c);
  mlx_closure_free(f);
}

/* mlx_detail_compile, as mlx-rs and mlx-swift use it: a new closure compiled under the same id
 * replays the first one's trace (its callback is not called); after erase (or clear_cache)
 * the id traces again. */
static void ClosuresCompiledUnderOneIdShareTheirTraces(void) {
  const uintptr_t id = 0x5eed;
  const uint64_t constants[1] = {7};
  const float a[3] = {0.0f, 1.0f, 2.0f};
  atomic_store(&traces, 0);
  for (int call = 0; call < 3; ++call) {
    mlx_closure f = mlx_closure_new_func(counted_fun), c = mlx_closure_new();
    CHECK_OK(mlx_detail_compile(&c, f, id, false, constants, 1));
    CHECK_NEAR(apply_first(c, a, 3), 1.0, 1e-6);
    mlx_closure_free(c);
    mlx_closure_free(f);
  }
  CHECK(atomic_load(&traces) == 1);
  mlx_closure f = mlx_closure_new_func(counted_fun), c = mlx_closure_new();
  CHECK_OK(mlx_detail_compile(&c, f, id, false, NULL, 0)); /* other constants: another key */
  CHECK_NEAR(apply_first(c, a, 3), 1.0, 1e-6);
  CHECK(atomic_load(&traces) == 2);
  CHECK_OK(mlx_detail_compile_erase(id));
  CHECK_OK(mlx_detail_compile(&c, f, id, false, NULL, 0));
  CHECK_NEAR(apply_first(c, a, 3), 1.0, 1e-6);
  CHECK(atomic_load(&traces) == 3);
  CHECK_OK(mlx_detail_compile_clear_cache());
  CHECK_OK(mlx_detail_compile(&c, f, id, false, NULL, 0));
  CHECK_NEAR(apply_first(c, a, 3), 1.0, 1e-6);
  CHECK(atomic_load(&traces) == 4);
  CHECK(mlx_detail_compile(&c, f, id, false, NULL, 2) != 0); /* null constants, count 2 */
  mlx_closure_free(c);
  mlx_closure_free(f);
}

static void DisabledCompileCallsTheFunctionEachTime(void) {
  mlx_closure f = mlx_closure_new_func(counted_fun), c = mlx_closure_new();
  CHECK_OK(mlx_compile(&c, f, true));
  const float a[2] = {0.0f, 0.0f};
  CHECK_OK(mlx_disable_compile());
  atomic_store(&traces, 0);
  apply_first(c, a, 2);
  apply_first(c, a, 2);
  CHECK(atomic_load(&traces) == 2);
  CHECK_OK(mlx_set_compile_mode(MLX_COMPILE_MODE_NO_FUSE));
  apply_first(c, a, 2);
  apply_first(c, a, 2);
  CHECK(atomic_load(&traces) == 3);
  CHECK_OK(mlx_enable_compile());
  mlx_closure_free(c);
  mlx_closure_free(f);
}

static void EvalInsideATraceFails(void) {
  mlx_closure f = mlx_closure_new_func(evaluating_fun), c = mlx_closure_new();
  CHECK_OK(mlx_compile(&c, f, false));
  mlx_array x = mlx_array_new_float(2.0f);
  mlx_vector_array in = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
  /* The callback's eval reports MLX's message, then the callback's status fails the call. */
  int before = atomic_load(&error_count);
  CHECK(mlx_closure_apply(&out, c, in) != 0);
  CHECK(atomic_load(&error_count) == before + 2);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
  mlx_array_free(x);
  mlx_closure_free(c);
  mlx_closure_free(f);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(CompiledClosureTracesOncePerSignature);
  RUN(ClosuresCompiledUnderOneIdShareTheirTraces);
  RUN(DisabledCompileCallsTheFunctionEachTime);
  RUN(EvalInsideATraceFails);
  mlx_stream_free(s);
  return 0;
}
