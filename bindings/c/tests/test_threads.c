/* The threading contract through the C API: a graph built on one thread evaluates on others,
 * threads share one stream, transform one closure at once, and report errors concurrently.
 * The thread count comes from BRAID_C_TEST_THREADS (default 8); a watchdog bounds every case. */
#include "check.h"  /* first: it sets the feature macros */

#include <pthread.h>

static int thread_count = 8;

/* ---- a graph built on one thread, evaluated on several ---- */

typedef struct {
  mlx_array graph;  /* shared, read-only */
  float value;
} EvalJob;

static void* build_graph(void* arg) {
  mlx_array* out = arg;
  mlx_stream own = mlx_default_cpu_stream_new(); /* this thread's default stream */
  int shape[] = {256};
  mlx_array x = mlx_array_new(), two = mlx_array_new_float(2.0f);
  CHECK_OK(mlx_ones(&x, shape, 1, MLX_FLOAT32, own));
  for (int i = 0; i < 50; ++i) CHECK_OK(mlx_add(&x, x, two, own)); /* 1 + 100 */
  CHECK_OK(mlx_sum(&x, x, false, own));
  *out = x;
  mlx_array_free(two);
  mlx_stream_free(own);
  return NULL; /* the thread exits before anyone evaluates its graph */
}

static void* evaluate_graph(void* arg) {
  EvalJob* job = arg;
  CHECK_OK(mlx_array_item_float32(&job->value, job->graph));
  return NULL;
}

static void GraphBuiltOnOneThreadEvaluatesOnOthers(void) {
  pthread_t builder;
  mlx_array graph = mlx_array_new();
  CHECK(pthread_create(&builder, NULL, build_graph, &graph) == 0);
  CHECK(pthread_join(builder, NULL) == 0);
  pthread_t* threads = malloc(sizeof(pthread_t) * (size_t)thread_count);
  EvalJob* jobs = malloc(sizeof(EvalJob) * (size_t)thread_count);
  for (int i = 0; i < thread_count; ++i) {
    jobs[i].graph = graph;
    jobs[i].value = 0;
    CHECK(pthread_create(&threads[i], NULL, evaluate_graph, &jobs[i]) == 0);
  }
  for (int i = 0; i < thread_count; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(jobs[i].value == 256.0f * 101.0f);
  }
  free(threads);
  free(jobs);
  mlx_array_free(graph);
}

/* ---- many threads submitting to one stream ---- */

typedef struct {
  mlx_stream stream;
  int id;
  float result;
} StreamJob;

static void* use_shared_stream(void* arg) {
  StreamJob* job = arg;
  mlx_array acc = mlx_array_new_float((float)job->id), one = mlx_array_new_float(1.0f);
  for (int i = 0; i < 100; ++i) {
    CHECK_OK(mlx_add(&acc, acc, one, job->stream));
    if (i % 25 == 0) CHECK_OK(mlx_array_eval(acc));
  }
  CHECK_OK(mlx_synchronize(job->stream));
  CHECK_OK(mlx_array_item_float32(&job->result, acc));
  mlx_array_free(acc);
  mlx_array_free(one);
  return NULL;
}

static void ThreadsShareOneStream(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream shared = mlx_stream_new_device(cpu);
  pthread_t* threads = malloc(sizeof(pthread_t) * (size_t)thread_count);
  StreamJob* jobs = malloc(sizeof(StreamJob) * (size_t)thread_count);
  for (int i = 0; i < thread_count; ++i) {
    jobs[i] = (StreamJob){shared, i, 0};
    CHECK(pthread_create(&threads[i], NULL, use_shared_stream, &jobs[i]) == 0);
  }
  for (int i = 0; i < thread_count; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(jobs[i].result == (float)(i + 100));
  }
  free(threads);
  free(jobs);
  mlx_stream_free(shared);
  mlx_device_free(cpu);
}

/* ---- one closure transformed by many threads ---- */

static int cube(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  mlx_stream none = mlx_stream_new();
  mlx_vector_array_get(&x, in, 0);
  mlx_multiply(&y, x, x, none);
  mlx_multiply(&y, y, x, none);
  mlx_sum(&y, y, false, none);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(y);
  return 0;
}

typedef struct {
  mlx_closure_value_and_grad vg;
  float x, grad;
} GradJob;

static void* take_gradient(void* arg) {
  GradJob* job = arg;
  mlx_array x = mlx_array_new_float(job->x), g = mlx_array_new();
  mlx_vector_array in = mlx_vector_array_new_value(x), values = mlx_vector_array_new(),
                   grads = mlx_vector_array_new();
  CHECK_OK(mlx_closure_value_and_grad_apply(&values, &grads, job->vg, in));
  CHECK_OK(mlx_vector_array_get(&g, grads, 0));
  CHECK_OK(mlx_array_item_float32(&job->grad, g));
  mlx_vector_array_free(in);
  mlx_vector_array_free(values);
  mlx_vector_array_free(grads);
  mlx_array_free(x);
  mlx_array_free(g);
  return NULL;
}

static void ThreadsDifferentiateOneClosureAtOnce(void) {
  mlx_closure f = mlx_closure_new_func(cube);
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  int argnum = 0;
  CHECK_OK(mlx_value_and_grad(&vg, f, &argnum, 1));
  pthread_t* threads = malloc(sizeof(pthread_t) * (size_t)thread_count);
  GradJob* jobs = malloc(sizeof(GradJob) * (size_t)thread_count);
  for (int i = 0; i < thread_count; ++i) {
    jobs[i] = (GradJob){vg, (float)(i + 1), 0};
    CHECK(pthread_create(&threads[i], NULL, take_gradient, &jobs[i]) == 0);
  }
  for (int i = 0; i < thread_count; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(jobs[i].grad == 3.0f * (float)((i + 1) * (i + 1)));
  }
  free(threads);
  free(jobs);
  mlx_closure_value_and_grad_free(vg);
  mlx_closure_free(f);
}

/* ---- errors reported from many threads ---- */

static void* fail_repeatedly(void* arg) {
  (void)arg;
  mlx_array empty = mlx_array_new(), r = mlx_array_new();
  mlx_stream none = mlx_stream_new();
  for (int i = 0; i < 100; ++i) CHECK(mlx_abs(&r, empty, none) != 0);
  return NULL;
}

static void ErrorsFromManyThreadsAreEachReported(void) {
  int before = atomic_load(&error_count);
  pthread_t* threads = malloc(sizeof(pthread_t) * (size_t)thread_count);
  for (int i = 0; i < thread_count; ++i) CHECK(pthread_create(&threads[i], NULL, fail_repeatedly, NULL) == 0);
  for (int i = 0; i < thread_count; ++i) CHECK(pthread_join(threads[i], NULL) == 0);
  CHECK(atomic_load(&error_count) == before + 100 * thread_count);
  free(threads);
}

int main(void) {
  test_setup(120);
  const char* env = getenv("BRAID_C_TEST_THREADS");
  if (env != NULL && atoi(env) > 0) thread_count = atoi(env);
  printf("threads: %d\n", thread_count);
  RUN(GraphBuiltOnOneThreadEvaluatesOnOthers);
  RUN(ThreadsShareOneStream);
  RUN(ThreadsDifferentiateOneClosureAtOnce);
  RUN(ErrorsFromManyThreadsAreEachReported);
  return 0;
}
