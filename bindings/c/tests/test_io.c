/* File io: .npy and safetensors through paths and through user readers and writers. */
#include "check.h"  /* first: it sets the feature macros */

#include <stdint.h>

static mlx_stream s;
static char dir[256];

static void path(char* out, size_t n, const char* name) { snprintf(out, n, "%s/%s", dir, name); }

static void NpyRoundTripsThroughAFile(void) {
  int32_t data[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {3, 2};
  mlx_array a = mlx_array_new_data(data, shape, 2, MLX_INT32), b = mlx_array_new();
  char file[300];
  path(file, sizeof(file), "a.npy");
  CHECK_OK(mlx_save(file, a));
  CHECK_OK(mlx_load(&b, file, s));
  CHECK(mlx_array_dtype(b) == MLX_INT32 && mlx_array_dim(b, 0) == 3);
  CHECK_OK(mlx_array_eval(b));
  CHECK(mlx_array_data_int32(b)[5] == 6);
  char missing[300];
  path(missing, sizeof(missing), "missing.npy");
  CHECK_FAILS(mlx_load(&b, missing, s), "missing.npy");
  mlx_array_free(a);
  mlx_array_free(b);
}

static void SafetensorsKeepArraysAndMetadata(void) {
  float w[] = {0.5f, 1.5f};
  int shape[] = {2};
  mlx_array a = mlx_array_new_data(w, shape, 1, MLX_FLOAT32), b = mlx_array_new_int(9);
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "w", a));
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "b", b));
  CHECK_OK(mlx_map_string_to_string_insert(meta, "format", "mlx"));
  char file[300];
  path(file, sizeof(file), "model.safetensors");
  CHECK_OK(mlx_save_safetensors(file, arrays, meta));
  mlx_map_string_to_array loaded = mlx_map_string_to_array_new();
  mlx_map_string_to_string loaded_meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_load_safetensors(&loaded, &loaded_meta, file, s));
  mlx_array got = mlx_array_new();
  CHECK_OK(mlx_map_string_to_array_get(&got, loaded, "w"));
  float out[2];
  read_floats(got, out, 2);
  CHECK(out[0] == 0.5f && out[1] == 1.5f);
  CHECK_OK(mlx_map_string_to_array_get(&got, loaded, "b"));
  CHECK(item_float(got) == 9);
  const char* format = NULL;
  CHECK_OK(mlx_map_string_to_string_get(&format, loaded_meta, "format"));
  CHECK(strcmp(format, "mlx") == 0);
  mlx_array_free(got);
  mlx_map_string_to_array_free(loaded);
  mlx_map_string_to_string_free(loaded_meta);
  mlx_map_string_to_array_free(arrays);
  mlx_map_string_to_string_free(meta);
  mlx_array_free(a);
  mlx_array_free(b);
}

/* A growable in-memory file for the vtable. */
typedef struct {
  char bytes[1 << 16];
  size_t size, pos;
  bool failed;
} MemFile;

static bool mem_is_open(void* d) { return d != NULL; }
static bool mem_good(void* d) { return !((MemFile*)d)->failed; }
static size_t mem_tell(void* d) { return ((MemFile*)d)->pos; }
static void mem_seek(void* d, int64_t off, int whence) {
  MemFile* f = d;
  int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)f->pos : (int64_t)f->size;
  f->pos = (size_t)(base + off);
}
static void mem_read(void* d, char* data, size_t n) {
  MemFile* f = d;
  if (f->pos + n > f->size) {
    f->failed = true;
    return;
  }
  memcpy(data, f->bytes + f->pos, n);
  f->pos += n;
}
static void mem_read_at(void* d, char* data, size_t n, size_t off) {
  MemFile* f = d;
  if (off + n > f->size) {
    f->failed = true;
    return;
  }
  memcpy(data, f->bytes + off, n);
}
static void mem_write(void* d, const char* data, size_t n) {
  MemFile* f = d;
  if (f->pos + n > sizeof(f->bytes)) {
    f->failed = true;
    return;
  }
  memcpy(f->bytes + f->pos, data, n);
  f->pos += n;
  if (f->pos > f->size) f->size = f->pos;
}
static const char* mem_label(void* d) {
  (void)d;
  return "memory file";
}

static void UserReadersAndWritersCarryTheBytes(void) {
  static MemFile file;
  memset(&file, 0, sizeof(file));
  mlx_io_vtable vt = {mem_is_open, mem_good, mem_tell, mem_seek, mem_read, mem_read_at, mem_write, mem_label};
  mlx_io_writer w = mlx_io_writer_new(&file, vt);
  void* desc = NULL;
  CHECK_OK(mlx_io_writer_descriptor(&desc, w));
  CHECK(desc == &file);
  mlx_string label = mlx_string_new();
  CHECK_OK(mlx_io_writer_tostring(&label, w));
  CHECK(strcmp(mlx_string_data(label), "memory file") == 0);
  double data[] = {1.25, -2.5, 3.75};
  int shape[] = {3};
  mlx_array a = mlx_array_new_data(data, shape, 1, MLX_FLOAT64), b = mlx_array_new();
  CHECK_OK(mlx_save_writer(w, a));
  CHECK(file.size > 0);
  file.pos = 0;
  mlx_io_reader r = mlx_io_reader_new(&file, vt);
  CHECK_OK(mlx_load_reader(&b, r, s));
  CHECK(mlx_array_dtype(b) == MLX_FLOAT64);
  CHECK_OK(mlx_array_eval(b));
  CHECK(mlx_array_data_float64(b)[2] == 3.75);

  /* safetensors through the same kind of streams; the data is read when evaluated. */
  memset(&file, 0, sizeof(file));
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new(), loaded = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta = mlx_map_string_to_string_new(), loaded_meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "a", a));
  CHECK_OK(mlx_save_safetensors_writer(w, arrays, meta));
  file.pos = 0;
  CHECK_OK(mlx_load_safetensors_reader(&loaded, &loaded_meta, r, s));
  CHECK_OK(mlx_map_string_to_array_get(&b, loaded, "a"));
  CHECK_OK(mlx_array_eval(b));
  CHECK(mlx_array_data_float64(b)[0] == 1.25);

  /* A truncated file fails with the reader's label, not a crash. */
  memset(&file, 0, sizeof(file));
  file.size = 4;
  CHECK_FAILS(mlx_load_reader(&b, r, s), "load");

  mlx_map_string_to_array_free(arrays);
  mlx_map_string_to_array_free(loaded);
  mlx_map_string_to_string_free(meta);
  mlx_map_string_to_string_free(loaded_meta);
  mlx_io_reader_free(r);
  mlx_io_writer_free(w);
  mlx_string_free(label);
  mlx_array_free(a);
  mlx_array_free(b);
}

static int frees_of_file;
static void mem_free(void* d) {
  CHECK(d != NULL);
  ++frees_of_file;
}

/* mlx-c's vtable `free`: called once on the descriptor when braid lets it go, which for a
 * safetensors reader is after the handle's free and after its lazily loaded arrays are gone. */
static void VtableFreeRunsOnceWhenTheLastUserLetsGo(void) {
  static MemFile file;
  memset(&file, 0, sizeof(file));
  frees_of_file = 0;
  mlx_io_vtable vt = {mem_is_open, mem_good, mem_tell, mem_seek, mem_read, mem_read_at, mem_write, mem_label,
                      mem_free};
  float data[] = {1, 2, 3, 4};
  int shape[] = {4};
  mlx_array a = mlx_array_new_data(data, shape, 1, MLX_FLOAT32), b = mlx_array_new();
  mlx_map_string_to_array arrays = mlx_map_string_to_array_new(), loaded = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta = mlx_map_string_to_string_new(), loaded_meta = mlx_map_string_to_string_new();
  CHECK_OK(mlx_map_string_to_array_insert(arrays, "a", a));
  mlx_io_writer w = mlx_io_writer_new(&file, vt);
  CHECK_OK(mlx_save_safetensors_writer(w, arrays, meta));
  CHECK(frees_of_file == 0);
  mlx_io_writer_free(w);
  CHECK(frees_of_file == 1);

  file.pos = 0;
  mlx_io_reader r = mlx_io_reader_new(&file, vt);
  CHECK_OK(mlx_load_safetensors_reader(&loaded, &loaded_meta, r, s));
  mlx_io_reader_free(r);
  CHECK_OK(mlx_map_string_to_array_get(&b, loaded, "a"));
  mlx_map_string_to_array_free(loaded);
  CHECK(frees_of_file == 1); /* b may still read from the file */
  CHECK_OK(mlx_array_eval(b));
  CHECK(mlx_array_data_float32(b)[3] == 4.0f);
  mlx_array_free(b);
  CHECK(frees_of_file == 2);

  mlx_map_string_to_array_free(arrays);
  mlx_map_string_to_string_free(meta);
  mlx_map_string_to_string_free(loaded_meta);
  mlx_array_free(a);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  snprintf(dir, sizeof(dir), "/tmp/braid_c_io_XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  RUN(NpyRoundTripsThroughAFile);
  RUN(SafetensorsKeepArraysAndMetadata);
  RUN(UserReadersAndWritersCarryTheBytes);
  RUN(VtableFreeRunsOnceWhenTheLastUserLetsGo);
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  mlx_stream_free(s);
  return 0;
}
