/* Devices and streams: handles, defaults (the stream per thread, the device per process), ops
 * on explicit and default streams, synchronize, and the memory counters. */
#include "check.h"  /* first: it sets the feature macros */

#include <pthread.h>

static void DevicesDescribeThemselves(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0), other = mlx_device_new();
  CHECK_OK(mlx_device_set(&other, cpu));
  CHECK(mlx_device_equal(cpu, other));
  mlx_device_type type = MLX_GPU;
  int index = -1;
  CHECK_OK(mlx_device_get_type(&type, cpu));
  CHECK_OK(mlx_device_get_index(&index, cpu));
  CHECK(type == MLX_CPU && index == 0);
  mlx_string str = mlx_string_new();
  CHECK_OK(mlx_device_tostring(&str, cpu));
  CHECK(strcmp(mlx_string_data(str), "Device(cpu, 0)") == 0);
  bool available = false;
  CHECK_OK(mlx_device_is_available(&available, cpu));
  CHECK(available);
  int count = 0;
  CHECK_OK(mlx_device_count(&count, MLX_CPU));
  CHECK(count == 1);
  CHECK_OK(mlx_device_count(&count, MLX_GPU));
  mlx_device gpu = mlx_device_new_type(MLX_GPU, 0);
  CHECK_OK(mlx_device_is_available(&available, gpu));
  CHECK(available == (count == 1));
  mlx_device def = mlx_device_new();
  CHECK_OK(mlx_get_default_device(&def));
  CHECK_OK(mlx_set_default_device(def));
  mlx_string_free(str);
  mlx_device_free(cpu);
  mlx_device_free(gpu);
  mlx_device_free(other);
  mlx_device_free(def);
}

static void DeviceInfoDescribesTheDevice(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_device_info info = mlx_device_info_new();
  CHECK_OK(mlx_device_info_get(&info, cpu));
  bool exists = false, is_string = false;
  CHECK_OK(mlx_device_info_has_key(&exists, info, "device_name"));
  CHECK(exists);
  CHECK_OK(mlx_device_info_is_string(&is_string, info, "device_name"));
  CHECK(is_string);
  const char* name = NULL;
  CHECK_OK(mlx_device_info_get_string(&name, info, "device_name"));
  CHECK(name != NULL && strlen(name) > 0);
  size_t memory = 0;
  CHECK_OK(mlx_device_info_get_size(&memory, info, "memory_size"));
  CHECK(memory > ((size_t)1 << 20));
  CHECK_OK(mlx_device_info_is_string(&is_string, info, "memory_size"));
  CHECK(!is_string);
  /* A missing key, or one of the other kind: 2, and nothing reported. */
  const int reported = atomic_load(&error_count);
  CHECK(mlx_device_info_get_size(&memory, info, "device_name") == 2);
  CHECK(mlx_device_info_get_string(&name, info, "no such key") == 2);
  CHECK(atomic_load(&error_count) == reported);
  CHECK_OK(mlx_device_info_has_key(&exists, info, "no such key"));
  CHECK(!exists);
  mlx_vector_string keys = mlx_vector_string_new();
  CHECK_OK(mlx_device_info_get_keys(&keys, info));
  CHECK(mlx_vector_string_size(keys) == 5);
  mlx_vector_string_free(keys);
  /* The GPU, when there is none, is an error. */
  int gpus = 0;
  CHECK_OK(mlx_device_count(&gpus, MLX_GPU));
  mlx_device gpu = mlx_device_new_type(MLX_GPU, 0);
  if (gpus == 0) {
    CHECK_FAILS(mlx_device_info_get(&info, gpu), "not available");
  } else {
    CHECK_OK(mlx_device_info_get(&info, gpu));
    CHECK_OK(mlx_device_info_get_string(&name, info, "architecture"));
    CHECK(strncmp(name, "sm_", 3) == 0);
  }
  mlx_device_free(gpu);
  mlx_device_info_free(info);
  mlx_device_free(cpu);
}

static void StreamListsThreadLocalHandlesAndClearing(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream mine = mlx_stream_new_device(cpu), got = mlx_stream_new();
  /* The new stream is listed, in index order. */
  mlx_vector_stream all = mlx_vector_stream_new();
  CHECK_OK(mlx_get_streams(&all));
  size_t n = mlx_vector_stream_size(all);
  bool listed = false;
  int previous = -1;
  for (size_t i = 0; i < n; ++i) {
    int index = -1;
    CHECK_OK(mlx_vector_stream_get(&got, all, i));
    CHECK_OK(mlx_stream_get_index(&index, got));
    CHECK(index > previous);
    previous = index;
    listed = listed || mlx_stream_equal(got, mine);
  }
  CHECK(listed);
  CHECK_FAILS(mlx_vector_stream_get(&got, all, n), "out of range");
  /* The vector family. */
  mlx_stream two[] = {mine, mine};
  mlx_vector_stream v = mlx_vector_stream_new_data(two, 2);
  CHECK_OK(mlx_vector_stream_append_value(v, mine));
  CHECK(mlx_vector_stream_size(v) == 3);
  mlx_vector_stream_free(v);
  mlx_vector_stream_free(all);
  /* A thread-local handle resolves to a real stream that runs work. */
  mlx_stream_thread_local tls = mlx_stream_thread_local_new(cpu);
  mlx_stream real = mlx_stream_new();
  CHECK_OK(mlx_stream_from_thread_local(&real, tls));
  int real_index = -1;
  CHECK_OK(mlx_stream_get_index(&real_index, real));
  CHECK(real_index >= 0);
  mlx_array one = mlx_array_new_float(1.0f), x = mlx_array_new();
  CHECK_OK(mlx_add(&x, one, one, real));
  CHECK_OK(mlx_synchronize_thread_local(tls));
  CHECK(item_float(x) == 2.0f);
  /* Clearing the thread's streams gives it a new default. */
  mlx_stream before = mlx_default_cpu_stream_new();
  CHECK_OK(mlx_synchronize_default());
  CHECK_OK(mlx_clear_streams());
  mlx_stream after = mlx_default_cpu_stream_new();
  CHECK(!mlx_stream_equal(before, after));
  mlx_stream unsafe = mlx_stream_new_thread_unsafe(cpu);
  CHECK(unsafe.ctx != NULL);
  mlx_stream_free(unsafe);
  mlx_stream_free(before);
  mlx_stream_free(after);
  mlx_array_free(one);
  mlx_array_free(x);
  mlx_stream_free(real);
  mlx_stream_thread_local_free(tls);
  mlx_stream_free(got);
  mlx_stream_free(mine);
  mlx_device_free(cpu);
}

static void NewStreamsAreDistinctQueues(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream a = mlx_stream_new_device(cpu), b = mlx_stream_new_device(cpu), c = mlx_stream_new();
  CHECK(!mlx_stream_equal(a, b));
  CHECK_OK(mlx_stream_set(&c, a));
  CHECK(mlx_stream_equal(a, c));
  int ia = -1, ib = -1;
  CHECK_OK(mlx_stream_get_index(&ia, a));
  CHECK_OK(mlx_stream_get_index(&ib, b));
  CHECK(ia != ib && ia >= 0 && ib >= 0);
  mlx_device dev = mlx_device_new();
  CHECK_OK(mlx_stream_get_device(&dev, a));
  CHECK(mlx_device_equal(dev, cpu));
  mlx_string str = mlx_string_new();
  CHECK_OK(mlx_stream_tostring(&str, a));
  CHECK(strstr(mlx_string_data(str), "Stream(cpu") != NULL);
  /* Work on b consumes work on a: the runtime orders them. */
  mlx_array one = mlx_array_new_float(1.0f), x = mlx_array_new(), y = mlx_array_new();
  CHECK_OK(mlx_add(&x, one, one, a));
  CHECK_OK(mlx_multiply(&y, x, x, b));
  CHECK(item_float(y) == 4.0f);
  CHECK_OK(mlx_synchronize(a));
  CHECK_OK(mlx_synchronize(b));
  mlx_array_free(one);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_string_free(str);
  mlx_device_free(dev);
  mlx_device_free(cpu);
  mlx_stream_free(a);
  mlx_stream_free(b);
  mlx_stream_free(c);
}

static void EmptyStreamHandleMeansTheDefault(void) {
  mlx_stream none = mlx_stream_new();
  mlx_array a = mlx_array_new_float(2.0f), r = mlx_array_new();
  CHECK_OK(mlx_square(&r, a, none));
  CHECK(item_float(r) == 4.0f);
  CHECK_OK(mlx_synchronize(none));
  mlx_array_free(a);
  mlx_array_free(r);
}

static mlx_stream main_default;
static void* read_default(void* arg) {
  mlx_stream* out = arg;
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  *out = mlx_stream_new();
  CHECK_OK(mlx_get_default_stream(out, cpu));
  mlx_device_free(cpu);
  return NULL;
}

static void DefaultStreamIsPerThread(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream mine = mlx_stream_new_device(cpu);
  CHECK_OK(mlx_set_default_stream(mine));
  main_default = mlx_stream_new();
  CHECK_OK(mlx_get_default_stream(&main_default, cpu));
  CHECK(mlx_stream_equal(main_default, mine));
  mlx_stream cpu_default = mlx_default_cpu_stream_new();
  CHECK(mlx_stream_equal(cpu_default, mine));
  pthread_t t;
  mlx_stream theirs;
  CHECK(pthread_create(&t, NULL, read_default, &theirs) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(!mlx_stream_equal(theirs, mine));
  mlx_stream_free(theirs);
  mlx_stream_free(cpu_default);
  mlx_stream_free(main_default);
  mlx_stream_free(mine);
  mlx_device_free(cpu);
}

static void MemoryCountersFollowLiveArrays(void) {
  size_t before = 0, after = 0, peak = 0, limit = 0, previous = 0, cache = 0;
  CHECK_OK(mlx_get_active_memory(&before));
  int shape[] = {1 << 20};
  mlx_array big = mlx_array_new();
  mlx_stream s = mlx_stream_new();
  CHECK_OK(mlx_ones(&big, shape, 1, MLX_FLOAT32, s));
  CHECK_OK(mlx_array_eval(big));
  CHECK_OK(mlx_get_active_memory(&after));
  CHECK(after >= before + (4u << 20));
  CHECK_OK(mlx_get_peak_memory(&peak));
  CHECK(peak >= after);
  mlx_array_free(big);
  CHECK_OK(mlx_get_cache_memory(&cache));
  CHECK_OK(mlx_clear_cache());
  CHECK_OK(mlx_get_cache_memory(&cache));
  CHECK(cache == 0);
  CHECK_OK(mlx_reset_peak_memory());
  CHECK_OK(mlx_get_memory_limit(&limit));
  CHECK_OK(mlx_set_memory_limit(&previous, limit / 2));
  CHECK(previous == limit);
  CHECK_OK(mlx_set_memory_limit(&previous, limit));
  CHECK_OK(mlx_set_cache_limit(&previous, 0));
  CHECK_OK(mlx_set_cache_limit(&cache, previous));
  CHECK(cache == 0);
  CHECK_OK(mlx_set_wired_limit(&previous, 1000));
  mlx_stream_free(s);
}

int main(void) {
  test_setup(60);
  RUN(DevicesDescribeThemselves);
  RUN(DeviceInfoDescribesTheDevice);
  RUN(StreamListsThreadLocalHandlesAndClearing);
  RUN(NewStreamsAreDistinctQueues);
  RUN(EmptyStreamHandleMeansTheDefault);
  RUN(DefaultStreamIsPerThread);
  RUN(MemoryCountersFollowLiveArrays);
  return 0;
}
