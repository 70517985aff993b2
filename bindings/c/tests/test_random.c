/* Random numbers: keys and splits (pair results), the process-wide sequence and seeding,
 * and each distribution's C signature. */
#include "check.h"

static mlx_stream s;

static void KeysSplitIntoDistinctKeys(void) {
  mlx_array key = mlx_array_new(), k1 = mlx_array_new(), k2 = mlx_array_new(), many = mlx_array_new();
  CHECK_OK(mlx_random_key(&key, 42));
  CHECK(mlx_array_dtype(key) == MLX_UINT32 && mlx_array_size(key) == 2);
  CHECK_OK(mlx_random_split(&k1, &k2, key, s));
  CHECK_OK(mlx_array_eval(k1));
  CHECK_OK(mlx_array_eval(k2));
  const uint32_t *a = mlx_array_data_uint32(k1), *b = mlx_array_data_uint32(k2);
  CHECK(a[0] != b[0] || a[1] != b[1]);
  CHECK_OK(mlx_random_split_num(&many, key, 5, s));
  CHECK(mlx_array_dim(many, 0) == 5 && mlx_array_dim(many, 1) == 2);
  mlx_array_free(key);
  mlx_array_free(k1);
  mlx_array_free(k2);
  mlx_array_free(many);
}

static void SeedMakesTheGlobalSequenceReproducible(void) {
  int shape[] = {4};
  mlx_array none = mlx_array_new(), first = mlx_array_new(), second = mlx_array_new();
  CHECK_OK(mlx_random_seed(7));
  CHECK_OK(mlx_random_bits(&first, shape, 1, 4, none, s));
  CHECK_OK(mlx_random_seed(7));
  CHECK_OK(mlx_random_bits(&second, shape, 1, 4, none, s));
  mlx_array eq = mlx_array_new();
  CHECK_OK(mlx_array_equal(&eq, first, second, false, s));
  bool same = false;
  CHECK_OK(mlx_array_item_bool(&same, eq));
  CHECK(same);
  mlx_array_free(eq);
  mlx_array_free(none);
  mlx_array_free(first);
  mlx_array_free(second);
}

static void DistributionsHaveTheirShapesAndRanges(void) {
  int shape[] = {1000};
  mlx_array key = mlx_array_new(), none = mlx_array_new(), r = mlx_array_new(), m = mlx_array_new();
  CHECK_OK(mlx_random_key(&key, 1));
  mlx_array lo = mlx_array_new_float(-1.0f), hi = mlx_array_new_float(1.0f);
  CHECK_OK(mlx_random_uniform(&r, lo, hi, shape, 1, MLX_FLOAT32, key, s));
  CHECK_OK(mlx_min(&m, r, false, s));
  CHECK(item_float(m) >= -1.0f);
  CHECK_OK(mlx_max(&m, r, false, s));
  CHECK(item_float(m) < 1.0f);
  CHECK_OK(mlx_random_normal(&r, shape, 1, MLX_FLOAT32, 5.0f, 0.1f, key, s));
  CHECK_OK(mlx_mean(&m, r, false, s));
  CHECK_NEAR(item_float(m), 5.0, 0.05);
  CHECK_OK(mlx_random_normal_broadcast(&r, shape, 1, MLX_FLOAT16, none, none, none, s));
  CHECK(mlx_array_dtype(r) == MLX_FLOAT16);
  mlx_array low = mlx_array_new_int(3), high = mlx_array_new_int(6);
  CHECK_OK(mlx_random_randint(&r, low, high, shape, 1, MLX_INT32, key, s));
  CHECK_OK(mlx_min(&m, r, false, s));
  CHECK(item_float(m) >= 3);
  CHECK_OK(mlx_max(&m, r, false, s));
  CHECK(item_float(m) <= 5);
  mlx_array p = mlx_array_new_float(0.0f);
  CHECK_OK(mlx_random_bernoulli(&r, p, shape, 1, key, s));
  CHECK_OK(mlx_any(&m, r, false, s));
  bool any = true;
  CHECK_OK(mlx_array_item_bool(&any, m));
  CHECK(!any);
  CHECK_OK(mlx_random_truncated_normal(&r, lo, hi, shape, 1, MLX_FLOAT32, key, s));
  CHECK_OK(mlx_random_gumbel(&r, shape, 1, MLX_FLOAT32, key, s));
  CHECK_OK(mlx_random_laplace(&r, shape, 1, MLX_FLOAT32, 0.0f, 1.0f, key, s));
  CHECK(mlx_array_size(r) == 1000);
  float logits_data[] = {0, 0, 100};
  int lshape[] = {3};
  mlx_array logits = mlx_array_new_data(logits_data, lshape, 1, MLX_FLOAT32);
  CHECK_OK(mlx_random_categorical(&r, logits, -1, key, s));
  uint32_t category = 0;
  CHECK_OK(mlx_array_item_uint32(&category, r));
  CHECK(category == 2);
  CHECK_OK(mlx_random_categorical_num_samples(&r, logits, -1, 4, key, s));
  CHECK(mlx_array_size(r) == 4);
  int sshape[] = {2, 3};
  CHECK_OK(mlx_random_categorical_shape(&r, logits, -1, sshape, 2, key, s));
  CHECK(mlx_array_ndim(r) == 2);
  CHECK_OK(mlx_random_permutation_arange(&r, 10, key, s));
  CHECK_OK(mlx_sum(&m, r, false, s));
  CHECK(item_float(m) == 45);
  CHECK_OK(mlx_random_permutation(&r, logits, 0, none, s));
  CHECK_OK(mlx_sum(&m, r, false, s));
  CHECK(item_float(m) == 100);
  mlx_array_free(logits);
  mlx_array_free(p);
  mlx_array_free(low);
  mlx_array_free(high);
  mlx_array_free(lo);
  mlx_array_free(hi);
  mlx_array_free(key);
  mlx_array_free(none);
  mlx_array_free(r);
  mlx_array_free(m);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(KeysSplitIntoDistinctKeys);
  RUN(SeedMakesTheGlobalSequenceReproducible);
  RUN(DistributionsHaveTheirShapesAndRanges);
  mlx_stream_free(s);
  return 0;
}
