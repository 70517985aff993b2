/* The error boundary: every failure reaches the handler with braid's message and gives a
 * non-zero return; the handler's data and destructor; the default handler; nothing crashes on
 * empty handles, NULL pointers or bad enums. */
#include "check.h"  /* first: it sets the feature macros */

#include <sys/wait.h>

static mlx_stream s;

static void OpErrorsReachTheHandlerWithTheOpsMessage(void) {
  float data[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {6}, bad[] = {4, 4};
  mlx_array a = mlx_array_new_data(data, shape, 1, MLX_FLOAT32), r = mlx_array_new();
  CHECK_FAILS(mlx_reshape(&r, a, bad, 2, s), "[reshape]");
  CHECK(r.ctx == NULL); /* nothing was written */
  int other[] = {4};
  mlx_array b = mlx_array_new_data(data, other, 1, MLX_FLOAT32);
  CHECK_FAILS(mlx_add(&r, a, b, s), "broadcast");
  CHECK_FAILS(mlx_sum_axis(&r, a, 3, false, s), "[sum]");
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_array_free(r);
}

static void BadHandlesAndPointersAreReportedNotCrashes(void) {
  mlx_array empty = mlx_array_new(), one = mlx_array_new_float(1.0f), r = mlx_array_new();
  CHECK_FAILS(mlx_add(&r, empty, one, s), "mlx_array");
  CHECK_FAILS(mlx_add(NULL, one, one, s), "NULL");
  CHECK_FAILS(mlx_array_eval(empty), "empty");
  CHECK(mlx_array_size(empty) == 0);
  CHECK(mlx_array_shape(empty) == NULL);
  CHECK(mlx_array_data_float32(empty) == NULL);
  CHECK_FAILS(mlx_astype(&r, one, (mlx_dtype)99, s), "mlx_dtype");
  CHECK_FAILS(mlx_dtype_size((mlx_dtype)-1) == 0 ? 1 : 0, "mlx_dtype");
  int shape[] = {3};
  int before = atomic_load(&error_count);
  mlx_array bad = mlx_array_new_data(NULL, shape, 1, MLX_FLOAT32);
  CHECK(bad.ctx == NULL && atomic_load(&error_count) == before + 1);
  CHECK_FAILS(mlx_reshape(&r, one, NULL, 2, s), "NULL");
  float x = 0, pair[] = {1, 2};
  int two[] = {2};
  mlx_array vec = mlx_array_new_data(pair, two, 1, MLX_FLOAT32);
  CHECK_FAILS(mlx_array_item_float32(&x, vec), "[item]");
  mlx_array_free(vec);
  mlx_device nodev = mlx_device_new();
  CHECK_FAILS(mlx_set_default_device(nodev), "mlx_device");
  mlx_device gpu = mlx_device_new_type(MLX_GPU, 7);
  CHECK_FAILS(mlx_set_default_device(gpu), "");
  CHECK_FAILS(mlx_device_get_type(NULL, gpu), "NULL");
  mlx_device_free(gpu);
  mlx_array_free(one);
  mlx_array_free(r);
}

static void* seen_data;
static int handler_calls, dtor_calls;
static void counting_handler(const char* msg, void* data) {
  (void)msg;
  seen_data = data;
  ++handler_calls;
}
static void counting_dtor(void* data) {
  (void)data;
  ++dtor_calls;
}

static void HandlerDataIsPassedAndReleasedWhenReplaced(void) {
  static int token;
  mlx_set_error_handler(counting_handler, &token, counting_dtor);
  mlx_array r = mlx_array_new(), empty = mlx_array_new();
  CHECK(mlx_abs(&r, empty, s) != 0);
  CHECK(handler_calls == 1 && seen_data == &token && dtor_calls == 0);
  /* Data without a dtor is passed too. */
  mlx_set_error_handler(counting_handler, &handler_calls, NULL);
  CHECK(dtor_calls == 1);
  CHECK(mlx_abs(&r, empty, s) != 0);
  CHECK(handler_calls == 2 && seen_data == &handler_calls);
  mlx_set_error_handler(record_error, NULL, NULL);
  CHECK(dtor_calls == 1);
}

static void MlxErrorMacroAddsTheLocation(void) {
  int before = atomic_load(&error_count);
  mlx_error("bad value %d", 7);
  CHECK(atomic_load(&error_count) == before + 1);
  CHECK(strstr(last_error_message(), "bad value 7 at ") != NULL);
  CHECK(strstr(last_error_message(), "test_errors.c:") != NULL);
}

static void DefaultHandlerPrintsAndExits(void) {
  int pipefd[2];
  CHECK(pipe(pipefd) == 0);
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    dup2(pipefd[1], STDOUT_FILENO);
    mlx_set_error_handler(NULL, NULL, NULL);
    mlx_array r = mlx_array_new(), empty = mlx_array_new();
    mlx_abs(&r, empty, s);
    _exit(0); /* not reached: the default handler exits */
  }
  close(pipefd[1]);
  char text[512] = {0};
  size_t got = 0;
  ssize_t n;
  while ((n = read(pipefd[0], text + got, sizeof(text) - 1 - got)) > 0) got += (size_t)n;
  close(pipefd[0]);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 255);
  CHECK(strncmp(text, "MLX error: ", 11) == 0);
}

static void EvaluationErrorsSurfaceAtEval(void) {
  /* A safetensors file whose data was cut off after its header was read: the array fails when
   * it is evaluated, and reading it reports instead of crashing. */
  char dir[] = "/tmp/braid_c_errors_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char file[128];
  snprintf(file, sizeof(file), "%s/w.safetensors", dir);
  int shape[] = {1024};
  mlx_array w = mlx_array_new(), loaded = mlx_array_new(), twice = mlx_array_new();
  CHECK_OK(mlx_ones(&w, shape, 1, MLX_FLOAT32, s));
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new(), got = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta = mlx_map_string_to_string_new(), got_meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "w", w));
  CHECK_OK(mlx_save_safetensors(file, arrays, meta));
  CHECK_OK(mlx_load_safetensors(&got, &got_meta, file, s));
  CHECK(truncate(file, 100) == 0);
  CHECK_OK(mlx_map_string_to_array_get(&loaded, got, "w"));
  CHECK_OK(mlx_add(&twice, loaded, loaded, s)); /* building the graph is fine */
  int before = atomic_load(&error_count);
  CHECK(mlx_array_eval(twice) != 0);
  CHECK(atomic_load(&error_count) == before + 1);
  float v = 0;
  CHECK(mlx_array_item_float32(&v, twice) != 0); /* the error stays on the array */
  unlink(file);
  rmdir(dir);
  mlx_map_string_to_array_free(arrays);
  mlx_map_string_to_array_free(got);
  mlx_map_string_to_string_free(meta);
  mlx_map_string_to_string_free(got_meta);
  mlx_array_free(w);
  mlx_array_free(loaded);
  mlx_array_free(twice);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(OpErrorsReachTheHandlerWithTheOpsMessage);
  RUN(BadHandlesAndPointersAreReportedNotCrashes);
  RUN(HandlerDataIsPassedAndReleasedWhenReplaced);
  RUN(MlxErrorMacroAddsTheLocation);
  RUN(DefaultHandlerPrintsAndExits);
  RUN(EvaluationErrorsSurfaceAtEval);
  mlx_stream_free(s);
  return 0;
}
