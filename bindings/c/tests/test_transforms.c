/* Closures and transforms: C callbacks applied directly and through vjp, jvp, value_and_grad,
 * custom vjp/jvp/vmap, checkpoint and vmap; payload lifetimes; eval and async_eval. */
#include "check.h"

static mlx_stream s;

/* f(x) = x * x, as a vector closure. */
static int square_fun(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  if (mlx_vector_array_get(&x, in, 0) != 0) return 1;
  mlx_multiply(&y, x, x, s);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(y);
  return 0;
}

/* f(x) = x + 1, unary. */
static int inc_fun(mlx_array* res, const mlx_array in) {
  mlx_array one = mlx_array_new_float(1.0f);
  int status = mlx_add(res, in, one, s);
  mlx_array_free(one);
  return status;
}

/* f(x, y) = sum(x * payload) + y, with the payload an array. */
static int scaled_sum(mlx_vector_array* res, const mlx_vector_array in, void* payload) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), t = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  mlx_vector_array_get(&y, in, 1);
  mlx_multiply(&t, x, *(mlx_array*)payload, s);
  mlx_sum(&t, t, false, s);
  mlx_add(&t, t, y, s);
  mlx_vector_array_set_value(res, t);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(t);
  return 0;
}

static int payload_frees;
static void free_array_payload(void* p) {
  mlx_array_free(*(mlx_array*)p);
  ++payload_frees;
}

static int failing_fun(mlx_vector_array* res, const mlx_vector_array in) {
  (void)res;
  (void)in;
  return 3;
}

static float first_item(mlx_vector_array v) {
  mlx_array a = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&a, v, 0));
  float f = item_float(a);
  mlx_array_free(a);
  return f;
}

static void ClosuresApplyCallbacks(void) {
  mlx_closure sq = mlx_closure_new_func(square_fun), inc = mlx_closure_new_unary(inc_fun), copy = mlx_closure_new();
  mlx_array three = mlx_array_new_float(3.0f);
  mlx_vector_array in = mlx_vector_array_new_value(three), out = mlx_vector_array_new();
  CHECK_OK(mlx_closure_apply(&out, sq, in));
  CHECK(first_item(out) == 9.0f);
  CHECK_OK(mlx_closure_set(&copy, inc));
  CHECK_OK(mlx_closure_apply(&out, copy, in));
  CHECK(first_item(out) == 4.0f);
  mlx_closure_free(sq);
  mlx_closure_free(inc);
  mlx_closure_free(copy);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
  mlx_array_free(three);
}

static void VjpAndJvpDifferentiateClosures(void) {
  mlx_closure sq = mlx_closure_new_func(square_fun);
  mlx_array x = mlx_array_new_float(3.0f), one = mlx_array_new_float(1.0f);
  mlx_vector_array primals = mlx_vector_array_new_value(x), seeds = mlx_vector_array_new_value(one);
  mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
  CHECK_OK(mlx_vjp(&outs, &grads, sq, primals, seeds));
  CHECK(first_item(outs) == 9.0f && first_item(grads) == 6.0f);
  CHECK_OK(mlx_jvp(&outs, &grads, sq, primals, seeds));
  CHECK(first_item(outs) == 9.0f && first_item(grads) == 6.0f);
  mlx_vector_array_free(outs);
  mlx_vector_array_free(grads);
  mlx_vector_array_free(primals);
  mlx_vector_array_free(seeds);
  mlx_array_free(x);
  mlx_array_free(one);
  mlx_closure_free(sq);
}

static void ValueAndGradWithPayloadFreesItOnce(void) {
  payload_frees = 0;
  mlx_array* scale = malloc(sizeof(mlx_array));
  float w[] = {1, 2, 3};
  int shape[] = {3};
  *scale = mlx_array_new_data(w, shape, 1, MLX_FLOAT32);
  mlx_closure f = mlx_closure_new_func_payload(scaled_sum, scale, free_array_payload);
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  int argnums[] = {0, 1};
  CHECK_OK(mlx_value_and_grad(&vg, f, argnums, 2));
  mlx_closure_free(f); /* vg keeps the closure, and so the payload, alive */
  CHECK(payload_frees == 0);
  float xv[] = {1, 1, 1};
  mlx_array x = mlx_array_new_data(xv, shape, 1, MLX_FLOAT32), y = mlx_array_new_float(10.0f);
  mlx_array args[] = {x, y};
  mlx_vector_array in = mlx_vector_array_new_data(args, 2), values = mlx_vector_array_new(),
                   grads = mlx_vector_array_new();
  CHECK_OK(mlx_closure_value_and_grad_apply(&values, &grads, vg, in));
  CHECK(first_item(values) == 16.0f);
  CHECK(mlx_vector_array_size(grads) == 2);
  mlx_array dx = mlx_array_new(), dy = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&dx, grads, 0));
  CHECK_OK(mlx_vector_array_get(&dy, grads, 1));
  float g[3];
  read_floats(dx, g, 3);
  CHECK(g[0] == 1 && g[1] == 2 && g[2] == 3);
  CHECK(item_float(dy) == 1.0f);
  mlx_closure_value_and_grad_free(vg);
  CHECK(payload_frees == 1);
  free(scale);
  mlx_array_free(dx);
  mlx_array_free(dy);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_vector_array_free(in);
  mlx_vector_array_free(values);
  mlx_vector_array_free(grads);
}

/* A vjp that returns 100 * cotangent, to show it replaced the derived one. */
static int big_vjp(mlx_vector_array* res, const mlx_vector_array primals, const mlx_vector_array cotangents,
                   const mlx_vector_array outputs) {
  (void)primals;
  (void)outputs;
  mlx_array c = mlx_array_new(), hundred = mlx_array_new_float(100.0f), r = mlx_array_new();
  mlx_vector_array_get(&c, cotangents, 0);
  mlx_multiply(&r, c, hundred, s);
  mlx_vector_array_set_value(res, r);
  mlx_array_free(c);
  mlx_array_free(hundred);
  mlx_array_free(r);
  return 0;
}

/* A vmap rule for square_fun: square the batch, keep the axis. */
static int square_vmap(mlx_vector_array* res_0, mlx_vector_int* res_1, const mlx_vector_array in, const int* axes,
                       size_t axes_num) {
  (void)axes_num;
  square_fun(res_0, in);
  mlx_vector_int_set_value(res_1, axes[0]);
  return 0;
}

static void CustomRulesReplaceDerivedOnes(void) {
  mlx_closure sq = mlx_closure_new_func(square_fun), custom = mlx_closure_new(), both = mlx_closure_new();
  mlx_closure_custom vjp = mlx_closure_custom_new_func(big_vjp);
  mlx_closure_custom_jvp no_jvp = mlx_closure_custom_jvp_new();
  mlx_closure_custom_vmap vm = mlx_closure_custom_vmap_new_func(square_vmap);
  CHECK_OK(mlx_custom_vjp(&custom, sq, vjp));
  CHECK_OK(mlx_custom_function(&both, sq, vjp, no_jvp, vm));
  mlx_array x = mlx_array_new_float(3.0f), one = mlx_array_new_float(1.0f);
  mlx_vector_array primals = mlx_vector_array_new_value(x), seeds = mlx_vector_array_new_value(one),
                   outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
  CHECK_OK(mlx_vjp(&outs, &grads, custom, primals, seeds));
  CHECK(first_item(outs) == 9.0f && first_item(grads) == 100.0f);
  CHECK_OK(mlx_vjp(&outs, &grads, both, primals, seeds));
  CHECK(first_item(grads) == 100.0f);
  CHECK_OK(mlx_jvp(&outs, &grads, both, primals, seeds)); /* derived jvp: 2x */
  CHECK(first_item(grads) == 6.0f);
  mlx_closure ck = mlx_closure_new();
  CHECK_OK(mlx_checkpoint(&ck, sq));
  CHECK_OK(mlx_vjp(&outs, &grads, ck, primals, seeds));
  CHECK(first_item(grads) == 6.0f);
  mlx_closure_free(ck);
  mlx_closure_free(sq);
  mlx_closure_free(custom);
  mlx_closure_free(both);
  mlx_closure_custom_free(vjp);
  mlx_closure_custom_jvp_free(no_jvp);
  mlx_closure_custom_vmap_free(vm);
  mlx_vector_array_free(primals);
  mlx_vector_array_free(seeds);
  mlx_vector_array_free(outs);
  mlx_vector_array_free(grads);
  mlx_array_free(x);
  mlx_array_free(one);
}

static void VmapMapsOverAnAxis(void) {
  mlx_closure sq = mlx_closure_new_func(square_fun), mapped = mlx_closure_new();
  int in_axes[] = {1}, out_axes[] = {0};
  CHECK_OK(mlx_vmap(&mapped, sq, in_axes, 1, out_axes, 1));
  float data[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {2, 3};
  mlx_array x = mlx_array_new_data(data, shape, 2, MLX_FLOAT32);
  mlx_vector_array in = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
  CHECK_OK(mlx_closure_apply(&out, mapped, in));
  mlx_array y = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&y, out, 0));
  CHECK(mlx_array_dim(y, 0) == 3 && mlx_array_dim(y, 1) == 2);
  float v[6];
  read_floats(y, v, 6);
  CHECK(v[0] == 1 && v[1] == 16 && v[5] == 36);
  mlx_closure_free(sq);
  mlx_closure_free(mapped);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
  mlx_array_free(x);
  mlx_array_free(y);
}

static void FailingCallbackFailsTheTransform(void) {
  mlx_closure bad = mlx_closure_new_func(failing_fun);
  mlx_array x = mlx_array_new_float(1.0f);
  mlx_vector_array in = mlx_vector_array_new_value(x), outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
  CHECK_FAILS(mlx_closure_apply(&outs, bad, in), "returned 3");
  CHECK_FAILS(mlx_vjp(&outs, &grads, bad, in, in), "returned 3");
  mlx_closure_free(bad);
  mlx_vector_array_free(in);
  mlx_vector_array_free(outs);
  mlx_vector_array_free(grads);
  mlx_array_free(x);
}

static void EvalAndAsyncEvalComputeOutputs(void) {
  mlx_array a = mlx_array_new_float(2.0f), b = mlx_array_new(), c = mlx_array_new();
  CHECK_OK(mlx_exp(&b, a, s));
  CHECK_OK(mlx_log(&c, b, s));
  mlx_vector_array outs = mlx_vector_array_new_value(c);
  CHECK_OK(mlx_async_eval(outs));
  CHECK_OK(_mlx_array_wait(c));
  CHECK_NEAR(item_float(c), 2.0, 1e-6);
  CHECK_OK(mlx_vector_array_set_value(&outs, b));
  CHECK_OK(mlx_eval(outs));
  bool available = false;
  CHECK_OK(_mlx_array_is_available(&available, b));
  CHECK(available);
  mlx_vector_array_free(outs);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_array_free(c);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(ClosuresApplyCallbacks);
  RUN(VjpAndJvpDifferentiateClosures);
  RUN(ValueAndGradWithPayloadFreesItOnce);
  RUN(CustomRulesReplaceDerivedOnes);
  RUN(VmapMapsOverAnAxis);
  RUN(FailingCallbackFailsTheTransform);
  RUN(EvalAndAsyncEvalComputeOutputs);
  mlx_stream_free(s);
  return 0;
}
