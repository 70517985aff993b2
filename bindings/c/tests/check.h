/* A small harness for the C API's tests: checks that abort with the failing line, an error
 * handler that records what it is told, and a watchdog so that no test can hang. */
#ifndef BRAID_C_TESTS_CHECK_H
#define BRAID_C_TESTS_CHECK_H

#define _XOPEN_SOURCE 700

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "braid/c.h"

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

/* A call that must succeed; on failure prints the last error the handler saw. */
#define CHECK_OK(call)                                                                            \
  do {                                                                                            \
    if ((call) != 0) {                                                                            \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, last_error_message()); \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

/* Runs one test case, named as a sentence. */
#define RUN(test)                     \
  do {                                \
    printf("[ RUN  ] %s\n", #test);   \
    fflush(stdout);                   \
    test();                           \
    printf("[  OK  ] %s\n", #test);   \
  } while (0)

static atomic_int error_count;
static _Thread_local char last_error[4096]; /* per thread: each reads its own */

static inline const char* last_error_message(void) { return last_error; }

/* Records the message in the reporting thread's slot and counts it. */
static inline void record_error(const char* msg, void* data) {
  (void)data;
  atomic_fetch_add(&error_count, 1);
  snprintf(last_error, sizeof(last_error), "%s", msg);
}

/* Installs the recording handler and a watchdog: a test still running after `seconds` is
 * killed by SIGALRM, and so fails. */
static inline void test_setup(unsigned seconds) {
  mlx_set_error_handler(record_error, NULL, NULL);
  alarm(seconds);
}

/* Expects `call` to fail and report a message containing `fragment`. */
#define CHECK_FAILS(call, fragment)                                                         \
  do {                                                                                      \
    int before_ = atomic_load(&error_count);                                                \
    CHECK((call) != 0);                                                                     \
    CHECK(atomic_load(&error_count) == before_ + 1);                                        \
    if (strstr(last_error, (fragment)) == NULL) {                                           \
      fprintf(stderr, "%s:%d: error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, last_error, \
              (fragment));                                                                  \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* The float32 values of an evaluated array, copied out (at most `n`). */
static inline void read_floats(mlx_array a, float* out, size_t n) {
  CHECK_OK(mlx_array_eval(a));
  mlx_array contiguous = mlx_array_new();
  mlx_stream s = mlx_stream_new();
  mlx_array f = mlx_array_new();
  CHECK_OK(mlx_astype(&f, a, MLX_FLOAT32, s));
  CHECK_OK(mlx_contiguous(&contiguous, f, false, s));
  CHECK_OK(mlx_array_eval(contiguous));
  const float* p = mlx_array_data_float32(contiguous);
  CHECK(p != NULL);
  size_t count = mlx_array_size(contiguous);
  for (size_t i = 0; i < n && i < count; ++i) out[i] = p[i];
  mlx_array_free(f);
  mlx_array_free(contiguous);
  mlx_stream_free(s);
}

static inline float item_float(mlx_array a) {
  float v = NAN;
  CHECK_OK(mlx_array_item_float32(&v, a));
  return v;
}

#endif
