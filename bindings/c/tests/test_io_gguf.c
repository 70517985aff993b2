/* GGUF files through the C API: arrays and every kind of metadata value round trip, the
 * metadata handles and map (mlx-c's io_gguf.h), errors reported instead of thrown, and threads
 * saving and loading their own files at once. */
#include "check.h" /* first: it sets the feature macros */

#include <pthread.h>
#include <stdint.h>

static mlx_stream s;
static char dir[256];

static void path(char* out, size_t n, const char* name) { snprintf(out, n, "%s/%s", dir, name); }

/* The metadata value at `key` of `map`, which must be there. */
static mlx_gguf_metadata lookup(mlx_map_string_to_gguf_metadata map, const char* key) {
  mlx_gguf_metadata value = {NULL};
  CHECK_OK(mlx_map_string_to_gguf_metadata_get(&value, map, key));
  CHECK(value.ctx != NULL);
  return value;
}

static void ArraysAndEveryKindOfMetadataRoundTrip(void) {
  float w[] = {0.5f, -1.5f, 2.0f, 4.25f, -8.0f, 16.5f};
  int32_t ids[] = {7, -3, 11};
  int w_shape[] = {2, 3}, ids_shape[] = {3};
  mlx_array weight = mlx_array_new_data(w, w_shape, 2, MLX_FLOAT32);
  mlx_array token_ids = mlx_array_new_data(ids, ids_shape, 1, MLX_INT32);
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "blk.0.weight", weight));
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "ids", token_ids));

  mlx_array scale = mlx_array_new_float32(0.125f);
  float eps[] = {1e-5f, 1e-6f};
  int eps_shape[] = {2};
  mlx_array eps_array = mlx_array_new_data(eps, eps_shape, 1, MLX_FLOAT32);
  const char* names[] = {"alpha", "beta", "gamma"};
  mlx_vector_string tokens = mlx_vector_string_new_data(names, 3);
  mlx_gguf_metadata values[] = {
      mlx_gguf_metadata_new_string("llama"),
      mlx_gguf_metadata_new_array(scale),
      mlx_gguf_metadata_new_array(eps_array),
      mlx_gguf_metadata_new_string_vector(tokens),
  };
  const char* keys[] = {"general.architecture", "llama.scale", "llama.eps", "tokenizer.tokens"};
  mlx_map_string_to_gguf_metadata meta = mlx_map_string_to_gguf_metadata_new();
  for (int i = 0; i < 4; ++i) {
    CHECK(values[i].ctx != NULL);
    CHECK_OK(mlx_map_string_to_gguf_metadata_insert(meta, keys[i], values[i]));
  }

  char file[300], stem[300];
  path(stem, sizeof(stem), "model"); /* ".gguf" is added, as MLX does */
  path(file, sizeof(file), "model.gguf");
  CHECK_OK(mlx_save_gguf(stem, arrays, meta));

  mlx_map_string_to_array loaded = mlx_map_string_to_array_new();
  mlx_map_string_to_gguf_metadata loaded_meta = mlx_map_string_to_gguf_metadata_new();
  CHECK_OK(mlx_load_gguf(&loaded, &loaded_meta, file, s));

  mlx_array got = mlx_array_new();
  CHECK_OK(mlx_map_string_to_array_get(&got, loaded, "blk.0.weight"));
  CHECK(mlx_array_dtype(got) == MLX_FLOAT32 && mlx_array_ndim(got) == 2);
  CHECK(mlx_array_dim(got, 0) == 2 && mlx_array_dim(got, 1) == 3);
  float out[6];
  read_floats(got, out, 6);
  for (int i = 0; i < 6; ++i) CHECK(out[i] == w[i]);
  CHECK_OK(mlx_map_string_to_array_get(&got, loaded, "ids"));
  CHECK(mlx_array_dtype(got) == MLX_INT32);
  CHECK_OK(mlx_array_eval(got));
  CHECK(mlx_array_data_int32(got)[0] == 7 && mlx_array_data_int32(got)[2] == 11);

  mlx_gguf_metadata arch = lookup(loaded_meta, "general.architecture");
  CHECK(mlx_gguf_metadata_get_type(arch) == MLX_GGUF_METADATA_STRING);
  mlx_string text = mlx_string_new();
  CHECK_OK(mlx_gguf_metadata_get_string(&text, arch));
  CHECK(strcmp(mlx_string_data(text), "llama") == 0);

  mlx_gguf_metadata scale_back = lookup(loaded_meta, "llama.scale");
  CHECK(mlx_gguf_metadata_get_type(scale_back) == MLX_GGUF_METADATA_ARRAY);
  CHECK_OK(mlx_gguf_metadata_get_array(&got, scale_back));
  CHECK(mlx_array_ndim(got) == 0 && mlx_array_dtype(got) == MLX_FLOAT32);
  CHECK(item_float(got) == 0.125f);

  mlx_gguf_metadata eps_back = lookup(loaded_meta, "llama.eps");
  CHECK_OK(mlx_gguf_metadata_get_array(&got, eps_back));
  CHECK(mlx_array_ndim(got) == 1 && mlx_array_dim(got, 0) == 2);
  read_floats(got, out, 2);
  CHECK(out[0] == 1e-5f && out[1] == 1e-6f);

  mlx_gguf_metadata tokens_back = lookup(loaded_meta, "tokenizer.tokens");
  CHECK(mlx_gguf_metadata_get_type(tokens_back) == MLX_GGUF_METADATA_STRING_VECTOR);
  mlx_vector_string words = mlx_vector_string_new();
  CHECK_OK(mlx_gguf_metadata_get_string_vector(&words, tokens_back));
  CHECK(mlx_vector_string_size(words) == 3);
  for (size_t i = 0; i < 3; ++i) {
    char* word = NULL;
    CHECK_OK(mlx_vector_string_get(&word, words, i));
    CHECK(strcmp(word, names[i]) == 0);
  }

  mlx_vector_string_free(words);
  mlx_gguf_metadata_free(arch);
  mlx_gguf_metadata_free(scale_back);
  mlx_gguf_metadata_free(eps_back);
  mlx_gguf_metadata_free(tokens_back);
  mlx_string_free(text);
  mlx_array_free(got);
  mlx_map_string_to_array_free(loaded);
  mlx_map_string_to_gguf_metadata_free(loaded_meta);
  mlx_map_string_to_gguf_metadata_free(meta);
  for (int i = 0; i < 4; ++i) mlx_gguf_metadata_free(values[i]);
  mlx_vector_string_free(tokens);
  mlx_array_free(scale);
  mlx_array_free(eps_array);
  mlx_map_string_to_array_free(arrays);
  mlx_array_free(weight);
  mlx_array_free(token_ids);
}

static void AValueOfAnotherKindIsReportedNotRead(void) {
  mlx_gguf_metadata name = mlx_gguf_metadata_new_string("x");
  mlx_array a = mlx_array_new();
  mlx_vector_string v = mlx_vector_string_new();
  mlx_string str = mlx_string_new();
  CHECK_FAILS(mlx_gguf_metadata_get_array(&a, name), "not an array");
  CHECK_FAILS(mlx_gguf_metadata_get_string_vector(&v, name), "not a string vector");
  CHECK_OK(mlx_gguf_metadata_get_string(&str, name));
  mlx_gguf_metadata empty = {NULL};
  int before = atomic_load(&error_count);
  CHECK(mlx_gguf_metadata_get_type(empty) == MLX_GGUF_METADATA_NONE);
  CHECK(atomic_load(&error_count) == before + 1 && strstr(last_error_message(), "empty") != NULL);
  CHECK_FAILS(mlx_gguf_metadata_get_string(&str, empty), "empty");
  CHECK(mlx_gguf_metadata_new_string(NULL).ctx == NULL);
  mlx_gguf_metadata_free(name);
  mlx_string_free(str);
  mlx_vector_string_free(v);
  mlx_array_free(a);
}

static void TheMapReplacesGetsAndIterates(void) {
  mlx_map_string_to_gguf_metadata map = mlx_map_string_to_gguf_metadata_new();
  mlx_gguf_metadata first = mlx_gguf_metadata_new_string("first");
  mlx_gguf_metadata second = mlx_gguf_metadata_new_string("second");
  mlx_array seven = mlx_array_new_int(7);
  mlx_gguf_metadata number = mlx_gguf_metadata_new_array(seven);
  CHECK_OK(mlx_map_string_to_gguf_metadata_insert(map, "name", first));
  CHECK_OK(mlx_map_string_to_gguf_metadata_insert(map, "name", second)); /* replaces */
  CHECK_OK(mlx_map_string_to_gguf_metadata_insert(map, "count", number));
  mlx_gguf_metadata_free(first);
  mlx_gguf_metadata_free(second); /* the map holds its own copies */

  int before = atomic_load(&error_count);
  mlx_gguf_metadata missing = {NULL};
  CHECK(mlx_map_string_to_gguf_metadata_get(&missing, map, "absent") == 2);
  CHECK(missing.ctx == NULL && atomic_load(&error_count) == before);

  mlx_map_string_to_gguf_metadata copy = mlx_map_string_to_gguf_metadata_new();
  CHECK_OK(mlx_map_string_to_gguf_metadata_set(&copy, map));
  mlx_map_string_to_gguf_metadata_iterator it = mlx_map_string_to_gguf_metadata_iterator_new(copy);
  CHECK(it.ctx != NULL);
  int seen_name = 0, seen_count = 0, steps = 0;
  const char* key = NULL;
  mlx_gguf_metadata value = {NULL};
  mlx_string str = mlx_string_new();
  mlx_array a = mlx_array_new();
  while (mlx_map_string_to_gguf_metadata_iterator_next(&key, &value, it) == 0) {
    ++steps;
    if (strcmp(key, "name") == 0) {
      CHECK_OK(mlx_gguf_metadata_get_string(&str, value));
      CHECK(strcmp(mlx_string_data(str), "second") == 0);
      ++seen_name;
    } else {
      CHECK(strcmp(key, "count") == 0);
      CHECK_OK(mlx_gguf_metadata_get_array(&a, value));
      CHECK(item_float(a) == 7);
      ++seen_count;
    }
    mlx_gguf_metadata_free(value); /* each value handed out is a new handle */
    CHECK(steps <= 2);
  }
  CHECK(seen_name == 1 && seen_count == 1 && atomic_load(&error_count) == before);
  /* Past the end it stays at the end. */
  CHECK(mlx_map_string_to_gguf_metadata_iterator_next(&key, &value, it) == 1);
  CHECK_OK(mlx_map_string_to_gguf_metadata_iterator_free(it));
  mlx_map_string_to_gguf_metadata empty_map = {NULL};
  CHECK(mlx_map_string_to_gguf_metadata_iterator_new(empty_map).ctx == NULL);

  mlx_string_free(str);
  mlx_array_free(a);
  mlx_array_free(seven);
  mlx_gguf_metadata_free(number);
  mlx_map_string_to_gguf_metadata_free(copy);
  mlx_map_string_to_gguf_metadata_free(map);
}

static void FailuresAreReportedNotThrown(void) {
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
  mlx_map_string_to_gguf_metadata meta = mlx_map_string_to_gguf_metadata_new();
  char missing[300], file[300];
  path(missing, sizeof(missing), "missing.gguf");
  CHECK_FAILS(mlx_load_gguf(&arrays, &meta, missing, s), "load_gguf");
  CHECK_FAILS(mlx_load_gguf(&arrays, &meta, NULL, s), "NULL");
  /* A file that is not GGUF. */
  path(file, sizeof(file), "not.gguf");
  FILE* f = fopen(file, "wb");
  CHECK(f != NULL);
  fputs("definitely not a gguf file", f);
  fclose(f);
  CHECK_FAILS(mlx_load_gguf(&arrays, &meta, file, s), "load_gguf");

  /* Metadata save_gguf cannot write: a 2-d array. */
  float data[] = {1, 2, 3, 4};
  int shape[] = {2, 2};
  mlx_array square = mlx_array_new_data(data, shape, 2, MLX_FLOAT32);
  mlx_gguf_metadata bad = mlx_gguf_metadata_new_array(square);
  CHECK_OK(mlx_map_string_to_gguf_metadata_insert(meta, "bad", bad));
  path(file, sizeof(file), "bad.gguf");
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "w", square));
  CHECK_FAILS(mlx_save_gguf(file, arrays, meta), "save_gguf");

  /* An empty metadata handle means none. */
  mlx_map_string_to_gguf_metadata none = {NULL};
  path(file, sizeof(file), "plain.gguf");
  CHECK_OK(mlx_save_gguf(file, arrays, none));
  mlx_map_string_to_array loaded = mlx_map_string_to_array_new();
  mlx_map_string_to_gguf_metadata loaded_meta = mlx_map_string_to_gguf_metadata_new();
  CHECK_OK(mlx_load_gguf(&loaded, &loaded_meta, file, s));
  mlx_array w = mlx_array_new();
  CHECK_OK(mlx_map_string_to_array_get(&w, loaded, "w"));
  float out[4];
  read_floats(w, out, 4);
  CHECK(out[0] == 1 && out[3] == 4);

  mlx_array_free(w);
  mlx_map_string_to_array_free(loaded);
  mlx_map_string_to_gguf_metadata_free(loaded_meta);
  mlx_gguf_metadata_free(bad);
  mlx_array_free(square);
  mlx_map_string_to_array_free(arrays);
  mlx_map_string_to_gguf_metadata_free(meta);
}

typedef struct {
  int index;
  int ok;
} Job;

/* Saves a file of its own, loads it back on its own stream, and checks the values. */
static void* save_and_load(void* arg) {
  Job* job = arg;
  float data[64];
  for (int i = 0; i < 64; ++i) data[i] = (float)(job->index * 100 + i);
  int shape[] = {8, 8};
  mlx_array a = mlx_array_new_data(data, shape, 2, MLX_FLOAT32);
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
  mlx_map_string_to_gguf_metadata meta = mlx_map_string_to_gguf_metadata_new();
  mlx_gguf_metadata owner = mlx_gguf_metadata_new_string(job->index % 2 ? "odd" : "even");
  char file[300], name[64];
  snprintf(name, sizeof(name), "thread%d.gguf", job->index);
  path(file, sizeof(file), name);
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream own = mlx_stream_new_device(cpu);
  mlx_map_string_to_array loaded = mlx_map_string_to_array_new();
  mlx_map_string_to_gguf_metadata loaded_meta = mlx_map_string_to_gguf_metadata_new();
  mlx_array got = mlx_array_new();
  mlx_string text = mlx_string_new();
  job->ok = mlx_map_string_to_array_insert(arrays, "a", a) == 0 &&
            mlx_map_string_to_gguf_metadata_insert(meta, "owner", owner) == 0 &&
            mlx_save_gguf(file, arrays, meta) == 0 && mlx_load_gguf(&loaded, &loaded_meta, file, own) == 0 &&
            mlx_map_string_to_array_get(&got, loaded, "a") == 0;
  if (job->ok) {
    float out[64];
    read_floats(got, out, 64);
    for (int i = 0; i < 64; ++i) job->ok &= out[i] == data[i];
    mlx_gguf_metadata back = {NULL};
    job->ok &= mlx_map_string_to_gguf_metadata_get(&back, loaded_meta, "owner") == 0 &&
               mlx_gguf_metadata_get_string(&text, back) == 0 &&
               strcmp(mlx_string_data(text), job->index % 2 ? "odd" : "even") == 0;
    mlx_gguf_metadata_free(back);
  }
  mlx_string_free(text);
  mlx_array_free(got);
  mlx_map_string_to_array_free(loaded);
  mlx_map_string_to_gguf_metadata_free(loaded_meta);
  mlx_stream_free(own);
  mlx_device_free(cpu);
  mlx_gguf_metadata_free(owner);
  mlx_map_string_to_gguf_metadata_free(meta);
  mlx_map_string_to_array_free(arrays);
  mlx_array_free(a);
  return NULL;
}

static void ThreadsSaveAndLoadTheirOwnFilesAtOnce(void) {
  enum { kThreads = 8 };
  pthread_t threads[kThreads];
  Job jobs[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    jobs[i] = (Job){i, 0};
    CHECK(pthread_create(&threads[i], NULL, save_and_load, &jobs[i]) == 0);
  }
  for (int i = 0; i < kThreads; ++i) CHECK(pthread_join(threads[i], NULL) == 0);
  for (int i = 0; i < kThreads; ++i) CHECK(jobs[i].ok);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  snprintf(dir, sizeof(dir), "/tmp/braid_c_gguf_XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  RUN(ArraysAndEveryKindOfMetadataRoundTrip);
  RUN(AValueOfAnotherKindIsReportedNotRead);
  RUN(TheMapReplacesGetsAndIterates);
  RUN(FailuresAreReportedNotThrown);
  RUN(ThreadsSaveAndLoadTheirOwnFilesAtOnce);
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  mlx_stream_free(s);
  return 0;
}
