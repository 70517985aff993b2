/* Arrays, strings, vectors and maps: creation from data, properties, item and data access,
 * text, and the set-through-the-result-pointer convention. */
#include <stdatomic.h>
#include <threads.h>

#include "check.h"

static void DataOfEveryDtypeRoundTrips(void) {
  int shape[] = {2, 2};
  {
    int32_t in[] = {1, -2, 3, -4};
    mlx_array a = mlx_array_new_data(in, shape, 2, MLX_INT32);
    CHECK(mlx_array_dtype(a) == MLX_INT32);
    CHECK_OK(mlx_array_eval(a));
    const int32_t* p = mlx_array_data_int32(a);
    CHECK(p != NULL && p[0] == 1 && p[1] == -2 && p[3] == -4);
    mlx_array_free(a);
  }
  {
    double in[] = {0.5, 1.5, -2.25, 1e300};
    mlx_array a = mlx_array_new_data(in, shape, 2, MLX_FLOAT64);
    CHECK(mlx_array_dtype(a) == MLX_FLOAT64);
    CHECK_OK(mlx_array_eval(a));
    const double* p = mlx_array_data_float64(a);
    CHECK(p != NULL && p[2] == -2.25 && p[3] == 1e300);
    mlx_array_free(a);
  }
  {
    bool in[] = {true, false, false, true};
    mlx_array a = mlx_array_new_data(in, shape, 2, MLX_BOOL);
    CHECK_OK(mlx_array_eval(a));
    const bool* p = mlx_array_data_bool(a);
    CHECK(p != NULL && p[0] && !p[1] && p[3]);
    mlx_array_free(a);
  }
  {
    uint16_t in[] = {0x3c00, 0x4000, 0xbc00, 0};  /* float16 1, 2, -1, 0 */
    mlx_array a = mlx_array_new_data(in, shape, 2, MLX_FLOAT16);
    float out[4];
    read_floats(a, out, 4);
    CHECK(out[0] == 1.0f && out[1] == 2.0f && out[2] == -1.0f && out[3] == 0.0f);
    mlx_array_free(a);
  }
  {
    mlx_complex64_t in[] = {1.0f + 2.0f * I, 3.0f, -1.0f * I, 0};
    mlx_array a = mlx_array_new_data(in, shape, 2, MLX_COMPLEX64);
    CHECK_OK(mlx_array_eval(a));
    const mlx_complex64_t* p = mlx_array_data_complex64(a);
    CHECK(p != NULL && crealf(p[0]) == 1.0f && cimagf(p[0]) == 2.0f && cimagf(p[2]) == -1.0f);
    mlx_array_free(a);
  }
  for (int d = MLX_BOOL; d <= MLX_COMPLEX64; ++d) {
    unsigned char zeros[64] = {0};
    mlx_array a = mlx_array_new_data(zeros, shape, 2, (mlx_dtype)d);
    CHECK(a.ctx != NULL);
    CHECK(mlx_array_dtype(a) == (mlx_dtype)d);
    CHECK(mlx_array_itemsize(a) == mlx_dtype_size((mlx_dtype)d));
    CHECK(mlx_array_nbytes(a) == 4 * mlx_dtype_size((mlx_dtype)d));
    mlx_array_free(a);
  }
}

static void PropertiesDescribeShapeAndStrides(void) {
  float in[24] = {0};
  int shape[] = {2, 3, 4};
  mlx_array a = mlx_array_new_data(in, shape, 3, MLX_FLOAT32);
  CHECK(mlx_array_ndim(a) == 3);
  CHECK(mlx_array_size(a) == 24);
  CHECK(mlx_array_nbytes(a) == 96);
  CHECK(mlx_array_itemsize(a) == 4);
  const int* s = mlx_array_shape(a);
  CHECK(s[0] == 2 && s[1] == 3 && s[2] == 4);
  CHECK(mlx_array_dim(a, 1) == 3 && mlx_array_dim(a, -1) == 4);
  CHECK_OK(mlx_array_eval(a));
  const size_t* st = mlx_array_strides(a);
  CHECK(st[0] == 12 && st[1] == 4 && st[2] == 1);
  bool flag = false;
  CHECK_OK(_mlx_array_is_row_contiguous(&flag, a));
  CHECK(flag);
  mlx_array_free(a);
}

static void ScalarsHaveMlxDtypes(void) {
  mlx_array b = mlx_array_new_bool(true), i = mlx_array_new_int(7), f = mlx_array_new_float(1.5f),
            d = mlx_array_new_double(0.1), c = mlx_array_new_complex(1.0f, -2.0f);
  CHECK(mlx_array_dtype(b) == MLX_BOOL);
  CHECK(mlx_array_dtype(i) == MLX_INT32);
  CHECK(mlx_array_dtype(f) == MLX_FLOAT32);
  CHECK(mlx_array_dtype(d) == MLX_FLOAT64);
  CHECK(mlx_array_dtype(c) == MLX_COMPLEX64);
  CHECK(mlx_array_ndim(i) == 0 && mlx_array_size(i) == 1);
  int32_t iv = 0;
  CHECK_OK(mlx_array_item_int32(&iv, i));
  CHECK(iv == 7);
  double dv = 0;
  CHECK_OK(mlx_array_item_float64(&dv, d));
  CHECK(dv == 0.1);
  mlx_complex64_t cv = 0;
  CHECK_OK(mlx_array_item_complex64(&cv, c));
  CHECK(crealf(cv) == 1.0f && cimagf(cv) == -2.0f);
  bool bv = false;
  CHECK_OK(mlx_array_item_bool(&bv, b));
  CHECK(bv);
  /* item converts: an int32 read as float, a float as int64. */
  CHECK(item_float(i) == 7.0f);
  int64_t lv = 0;
  CHECK_OK(mlx_array_item_int64(&lv, f));
  CHECK(lv == 1);
  mlx_array_free(b);
  mlx_array_free(i);
  mlx_array_free(f);
  mlx_array_free(d);
  mlx_array_free(c);
}

static void DataIsNullUntilEvaluatedAndForAnotherDtype(void) {
  mlx_array a = mlx_array_new_float(2.0f), b = mlx_array_new_float(3.0f), sum = mlx_array_new();
  mlx_stream s = mlx_stream_new();
  CHECK_OK(mlx_add(&sum, a, b, s));
  bool available = true;
  CHECK_OK(_mlx_array_is_available(&available, sum));
  CHECK(!available);
  CHECK(mlx_array_data_float32(sum) == NULL);
  CHECK_OK(_mlx_array_wait(sum));
  CHECK_OK(_mlx_array_is_available(&available, sum));
  CHECK(available);
  CHECK(*mlx_array_data_float32(sum) == 5.0f);
  CHECK(mlx_array_data_int32(sum) == NULL);
  CHECK(strstr(last_error_message(), "float32") != NULL);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_array_free(sum);
  mlx_stream_free(s);
}

static void ResultPointerMayNameAnArgument(void) {
  float in[] = {1, 2, 3};
  int shape[] = {3};
  mlx_array a = mlx_array_new_data(in, shape, 1, MLX_FLOAT32);
  mlx_array alias = mlx_array_new();
  CHECK_OK(mlx_array_set(&alias, a));
  mlx_array two = mlx_array_new_int(2);
  mlx_stream s = mlx_stream_new();
  CHECK_OK(mlx_multiply(&a, a, two, s)); /* a = a * 2, in place of the handle */
  float out[3];
  read_floats(a, out, 3);
  CHECK(out[0] == 2 && out[1] == 4 && out[2] == 6);
  read_floats(alias, out, 3); /* the other handle still holds the old array */
  CHECK(out[0] == 1 && out[2] == 3);
  CHECK_OK(mlx_array_set_data(&alias, in, shape, 1, MLX_FLOAT32));
  CHECK_OK(mlx_array_set_double(&alias, 4.5));
  CHECK(mlx_array_dtype(alias) == MLX_FLOAT64);
  mlx_array_free(a);
  mlx_array_free(alias);
  mlx_array_free(two);
  mlx_stream_free(s);
}

static void TostringPrintsValues(void) {
  int32_t in[] = {1, 2, 3, 4};
  int shape[] = {2, 2};
  mlx_array a = mlx_array_new_data(in, shape, 2, MLX_INT32);
  mlx_string str = mlx_string_new();
  CHECK_OK(mlx_array_tostring(&str, a));
  CHECK(strstr(mlx_string_data(str), "[[1, 2],\n       [3, 4]]") != NULL);  /* MLX's layout: a row per line */
  CHECK(strstr(mlx_string_data(str), "int32") != NULL);
  mlx_string_free(str);
  mlx_array_free(a);
}

/* Atomic: the last array may be dropped on one of braid's workers. */
static atomic_int payload_frees;
static void count_free(void* p) {
  (void)p;
  atomic_fetch_add(&payload_frees, 1);
}

static void ManagedDataIsReadInPlaceAndReleasedWithTheLastArray(void) {
  float in[] = {1, 2};
  int shape[] = {2};
  atomic_store(&payload_frees, 0);
  mlx_array a = mlx_array_new_data_managed_payload(in, shape, 1, MLX_FLOAT32, &payload_frees, count_free);
  CHECK(payload_frees == 0);
  in[0] = 100; /* not copied: the array reads the caller's memory */
  float out[2];
  read_floats(a, out, 2);
  CHECK(out[0] == 100 && out[1] == 2);
  /* An operation's result is new memory; the source is never written. */
  mlx_array one = mlx_array_new_float(1.0f), sum = mlx_array_new();
  mlx_stream s = mlx_default_cpu_stream_new();
  CHECK_OK(mlx_add(&sum, a, one, s));
  mlx_array_free(a);
  CHECK(payload_frees == 0); /* the sum's graph still uses it */
  read_floats(sum, out, 2);
  CHECK(out[0] == 101 && out[1] == 3 && in[0] == 100 && in[1] == 2);
  mlx_array_free(sum);
  mlx_array_free(one);
  mlx_stream_free(s);
  /* The worker that computed the sum lets go of its inputs just after: wait up to 10 s. */
  for (int i = 0; i < 10000 && atomic_load(&payload_frees) == 0; ++i) {
    thrd_sleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
  }
  CHECK(payload_frees == 1);

  /* A bad shape fails and leaves the memory with the caller. */
  int bad[] = {-1};
  mlx_array b = mlx_array_new_data_managed_payload(in, bad, 1, MLX_FLOAT32, &payload_frees, count_free);
  CHECK(b.ctx == NULL);
  CHECK(payload_frees == 1);
}

static void VectorsHoldArraysIntsAndStrings(void) {
  mlx_array x = mlx_array_new_float(1.0f), y = mlx_array_new_float(2.0f);
  mlx_array xs[] = {x, y};
  mlx_vector_array v = mlx_vector_array_new_data(xs, 2);
  CHECK(mlx_vector_array_size(v) == 2);
  CHECK_OK(mlx_vector_array_append_value(v, x));
  CHECK(mlx_vector_array_size(v) == 3);
  mlx_array got = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&got, v, 1));
  CHECK(item_float(got) == 2.0f);
  CHECK_FAILS(mlx_vector_array_get(&got, v, 3), "out of range");
  mlx_vector_array copy = mlx_vector_array_new();
  CHECK_OK(mlx_vector_array_set(&copy, v));
  CHECK_OK(mlx_vector_array_set_value(&v, y));
  CHECK(mlx_vector_array_size(v) == 1 && mlx_vector_array_size(copy) == 3);

  mlx_vector_vector_array vv = mlx_vector_vector_array_new_value(copy);
  CHECK_OK(mlx_vector_vector_array_append_value(vv, v));
  mlx_vector_array inner = mlx_vector_array_new();
  CHECK_OK(mlx_vector_vector_array_get(&inner, vv, 0));
  CHECK(mlx_vector_vector_array_size(vv) == 2 && mlx_vector_array_size(inner) == 3);

  int ints[] = {4, 5, 6};
  mlx_vector_int vi = mlx_vector_int_new_data(ints, 3);
  CHECK_OK(mlx_vector_int_append_value(vi, 7));
  int iv = 0;
  CHECK_OK(mlx_vector_int_get(&iv, vi, 3));
  CHECK(iv == 7 && mlx_vector_int_size(vi) == 4);

  const char* words[] = {"alpha", "beta"};
  mlx_vector_string vs = mlx_vector_string_new_data(words, 2);
  CHECK_OK(mlx_vector_string_append_value(vs, "gamma"));
  char* word = NULL;
  CHECK_OK(mlx_vector_string_get(&word, vs, 2));
  CHECK(strcmp(word, "gamma") == 0);

  mlx_vector_string_free(vs);
  mlx_vector_int_free(vi);
  mlx_vector_array_free(inner);
  mlx_vector_vector_array_free(vv);
  mlx_vector_array_free(copy);
  mlx_vector_array_free(v);
  mlx_array_free(got);
  mlx_array_free(x);
  mlx_array_free(y);
}

static void MapsInsertGetAndIterate(void) {
  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  mlx_array one = mlx_array_new_float(1.0f), two = mlx_array_new_float(2.0f);
  CHECK_OK(mlx_map_string_to_array_insert(m, "one", one));
  CHECK_OK(mlx_map_string_to_array_insert(m, "two", one));
  CHECK_OK(mlx_map_string_to_array_insert(m, "two", two)); /* replaces */
  mlx_array got = mlx_array_new();
  CHECK_OK(mlx_map_string_to_array_get(&got, m, "two"));
  CHECK(item_float(got) == 2.0f);
  CHECK(mlx_map_string_to_array_get(&got, m, "three") == 2);
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(m);
  const char* key = NULL;
  float total = 0;
  int entries = 0;
  while (mlx_map_string_to_array_iterator_next(&key, &got, it) == 0) {
    CHECK(strcmp(key, "one") == 0 || strcmp(key, "two") == 0);
    total += item_float(got);
    ++entries;
  }
  CHECK(entries == 2 && total == 3.0f);
  mlx_map_string_to_array_iterator_free(it);

  mlx_map_string_to_string ms = mlx_map_string_to_string_new();
  CHECK_OK(mlx_map_string_to_string_insert(ms, "format", "mlx"));
  const char* value = NULL;
  CHECK_OK(mlx_map_string_to_string_get(&value, ms, "format"));
  CHECK(strcmp(value, "mlx") == 0);
  CHECK(mlx_map_string_to_string_get(&value, ms, "missing") == 2);
  mlx_map_string_to_string_iterator its = mlx_map_string_to_string_iterator_new(ms);
  const char* k = NULL;
  CHECK_OK(mlx_map_string_to_string_iterator_next(&k, &value, its));
  CHECK(strcmp(k, "format") == 0 && strcmp(value, "mlx") == 0);
  CHECK(mlx_map_string_to_string_iterator_next(&k, &value, its) == 2);
  mlx_map_string_to_string_iterator_free(its);

  mlx_map_string_to_string_free(ms);
  mlx_map_string_to_array_free(m);
  mlx_array_free(got);
  mlx_array_free(one);
  mlx_array_free(two);
}

static void StringsCopyTheirText(void) {
  char text[] = "hello";
  mlx_string s = mlx_string_new_data(text);
  text[0] = 'j';
  CHECK(strcmp(mlx_string_data(s), "hello") == 0);
  mlx_string t = mlx_string_new();
  CHECK(strcmp(mlx_string_data(t), "") == 0);
  CHECK_OK(mlx_string_set(&t, s));
  mlx_string_free(s);
  CHECK(strcmp(mlx_string_data(t), "hello") == 0);
  mlx_string_free(t);
  mlx_string v = mlx_string_new();
  CHECK_OK(mlx_version(&v));
  CHECK(strlen(mlx_string_data(v)) >= 5);
  mlx_string_free(v);
}

int main(void) {
  test_setup(60);
  RUN(DataOfEveryDtypeRoundTrips);
  RUN(PropertiesDescribeShapeAndStrides);
  RUN(ScalarsHaveMlxDtypes);
  RUN(DataIsNullUntilEvaluatedAndForAnotherDtype);
  RUN(ResultPointerMayNameAnArgument);
  RUN(TostringPrintsValues);
  RUN(ManagedDataIsReadInPlaceAndReleasedWithTheLastArray);
  RUN(VectorsHoldArraysIntsAndStrings);
  RUN(MapsInsertGetAndIterate);
  RUN(StringsCopyTheirText);
  return 0;
}
