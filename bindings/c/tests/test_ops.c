/* The generated op wrappers, one case per kind of C signature: arrays, shapes and strides,
 * axis lists, scalars, dtypes, optionals, strings, pairs and triples, vector results; and the
 * fast and fft families. */
#include "check.h"

static mlx_stream s;

static mlx_array floats(const float* data, const int* shape, int dim) {
  return mlx_array_new_data(data, shape, dim, MLX_FLOAT32);
}

static void ElementwiseOpsBroadcast(void) {
  float a_data[] = {1, 2, 3, 4, 5, 6};
  int a_shape[] = {2, 3};
  float b_data[] = {10, 20, 30};
  int b_shape[] = {3};
  mlx_array a = floats(a_data, a_shape, 2), b = floats(b_data, b_shape, 1), r = mlx_array_new();
  CHECK_OK(mlx_add(&r, a, b, s));
  float out[6];
  read_floats(r, out, 6);
  CHECK(out[0] == 11 && out[5] == 36);
  CHECK_OK(mlx_sqrt(&r, a, s));
  read_floats(r, out, 6);
  CHECK_NEAR(out[3], 2.0, 1e-6);
  CHECK_OK(mlx_greater(&r, a, b, s));
  CHECK(mlx_array_dtype(r) == MLX_BOOL);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_array_free(r);
}

static void ReductionsTakeAxesAxisOrNone(void) {
  float data[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {2, 3};
  mlx_array a = floats(data, shape, 2), r = mlx_array_new();
  CHECK_OK(mlx_sum(&r, a, false, s));
  CHECK(item_float(r) == 21);
  CHECK_OK(mlx_sum_axis(&r, a, 1, true, s));
  CHECK(mlx_array_ndim(r) == 2 && mlx_array_shape(r)[1] == 1);
  float out[2];
  read_floats(r, out, 2);
  CHECK(out[0] == 6 && out[1] == 15);
  int axes[] = {0, 1};
  CHECK_OK(mlx_mean_axes(&r, a, axes, 2, false, s));
  CHECK(item_float(r) == 3.5f);
  CHECK_OK(mlx_var(&r, a, false, 1, s));
  CHECK_NEAR(item_float(r), 3.5, 1e-5);
  CHECK_OK(mlx_argmax(&r, a, false, s));
  uint32_t idx = 0;
  CHECK_OK(mlx_array_item_uint32(&idx, r));
  CHECK(idx == 5);
  CHECK_OK(mlx_median(&r, a, axes, 2, false, s));
  CHECK(item_float(r) == 3.5f);
  mlx_array_free(a);
  mlx_array_free(r);
}

static void ShapesStridesAndDtypesMap(void) {
  float data[] = {0, 1, 2, 3, 4, 5};
  int shape[] = {6};
  mlx_array a = floats(data, shape, 1), r = mlx_array_new();
  int new_shape[] = {3, 2};
  CHECK_OK(mlx_reshape(&r, a, new_shape, 2, s));
  CHECK(mlx_array_dim(r, 0) == 3 && mlx_array_dim(r, 1) == 2);
  CHECK_OK(mlx_transpose(&r, r, s));
  CHECK(mlx_array_dim(r, 0) == 2);
  int view_shape[] = {2, 2};
  int64_t strides[] = {1, 2};
  CHECK_OK(mlx_as_strided(&r, a, view_shape, 2, strides, 2, 1, s));
  float out[4];
  read_floats(r, out, 4);
  CHECK(out[0] == 1 && out[1] == 3 && out[2] == 2 && out[3] == 4);
  CHECK_OK(mlx_astype(&r, a, MLX_INT16, s));
  CHECK(mlx_array_dtype(r) == MLX_INT16);
  int zshape[] = {2, 3};
  CHECK_OK(mlx_zeros(&r, zshape, 2, MLX_FLOAT64, s));
  CHECK(mlx_array_dtype(r) == MLX_FLOAT64 && mlx_array_size(r) == 6);
  CHECK_OK(mlx_arange(&r, 0, 3, 0.5, MLX_FLOAT32, s));
  CHECK(mlx_array_size(r) == 6);
  mlx_array_free(a);
  mlx_array_free(r);
}

static void OptionalArgumentsAcceptEmptyHandles(void) {
  float data[] = {-2, 0.5f, 3};
  int shape[] = {3};
  mlx_array a = floats(data, shape, 1), hi = mlx_array_new_float(1.0f), none = mlx_array_new(),
            r = mlx_array_new();
  CHECK_OK(mlx_clip(&r, a, none, hi, s)); /* no lower bound */
  float out[3];
  read_floats(r, out, 3);
  CHECK(out[0] == -2 && out[1] == 0.5f && out[2] == 1);
  float nan_data[] = {NAN, INFINITY, 1};
  mlx_array n = floats(nan_data, shape, 1);
  mlx_optional_float posinf = {.value = 7.0f, .has_value = true};
  mlx_optional_float neginf = {.has_value = false};
  CHECK_OK(mlx_nan_to_num(&r, n, -1.0f, posinf, neginf, s));
  read_floats(r, out, 3);
  CHECK(out[0] == -1 && out[1] == 7 && out[2] == 1);
  mlx_array_free(a);
  mlx_array_free(hi);
  mlx_array_free(none);
  mlx_array_free(n);
  mlx_array_free(r);
}

static void VectorResultsAndInputs(void) {
  float data[] = {0, 1, 2, 3, 4, 5};
  int shape[] = {6};
  mlx_array a = floats(data, shape, 1), r = mlx_array_new();
  mlx_vector_array parts = mlx_vector_array_new();
  CHECK_OK(mlx_split(&parts, a, 3, 0, s));
  CHECK(mlx_vector_array_size(parts) == 3);
  int sections[] = {1, 4};
  CHECK_OK(mlx_split_sections(&parts, a, sections, 2, 0, s));
  CHECK(mlx_vector_array_size(parts) == 3);
  mlx_array mid = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&mid, parts, 1));
  CHECK(mlx_array_size(mid) == 3);
  CHECK_OK(mlx_concatenate_axis(&r, parts, 0, s));
  CHECK(mlx_array_size(r) == 6);
  CHECK_FAILS(mlx_stack(&r, parts, s), "[stack]"); /* unequal shapes cannot stack */
  mlx_vector_array dm = mlx_vector_array_new();
  mlx_array seven = mlx_array_new_int(7), two = mlx_array_new_int(2);
  CHECK_OK(mlx_divmod(&dm, seven, two, s));
  mlx_array q = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&q, dm, 1));
  int32_t rem = 0;
  CHECK_OK(mlx_array_item_int32(&rem, q));
  CHECK(rem == 1);
  mlx_vector_array_free(dm);
  mlx_vector_array_free(parts);
  mlx_array_free(q);
  mlx_array_free(seven);
  mlx_array_free(two);
  mlx_array_free(mid);
  mlx_array_free(a);
  mlx_array_free(r);
}

static void StringsPairsAndTriplesMap(void) {
  float data[] = {1, 2, 3, 4};
  int shape[] = {2, 2};
  mlx_array a = floats(data, shape, 2), zero = mlx_array_new_float(0.0f), r = mlx_array_new();
  CHECK_OK(mlx_pad_symmetric(&r, a, 1, zero, "edge", s));
  CHECK(mlx_array_dim(r, 0) == 4);
  float out[16];
  read_floats(r, out, 16);
  CHECK(out[0] == 1 && out[15] == 4);
  /* conv2d: input [1, 3, 3, 1], weight [1, 2, 2, 1], stride (1, 1), padding (0, 0). */
  float img[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 1, 1, 1};
  int img_shape[] = {1, 3, 3, 1}, w_shape[] = {1, 2, 2, 1};
  mlx_array x = floats(img, img_shape, 4), k = floats(w, w_shape, 4);
  CHECK_OK(mlx_conv2d(&r, x, k, 1, 1, 0, 0, 1, 1, 1, s));
  read_floats(r, out, 4);
  CHECK(out[0] == 12 && out[3] == 28);
  /* conv3d over [1, 2, 2, 2, 1] with a [1, 2, 2, 2, 1] kernel: the sum. */
  float vol[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  int vol_shape[] = {1, 2, 2, 2, 1};
  mlx_array v = floats(vol, vol_shape, 5), kv = floats(ones, vol_shape, 5);
  CHECK_OK(mlx_conv3d(&r, v, kv, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, s));
  CHECK(item_float(r) == 36);
  mlx_vector_array grids = mlx_vector_array_new(), inputs = mlx_vector_array_new_value(a);
  CHECK_OK(mlx_meshgrid(&grids, inputs, false, "ij", s));
  CHECK(mlx_vector_array_size(grids) == 1);
  mlx_vector_array_free(grids);
  mlx_vector_array_free(inputs);
  mlx_array_free(v);
  mlx_array_free(kv);
  mlx_array_free(x);
  mlx_array_free(k);
  mlx_array_free(a);
  mlx_array_free(zero);
  mlx_array_free(r);
}

static void EinsumContractsAVectorOfOperands(void) {
  float ad[] = {1, 2, 3, 4, 5, 6}, bd[] = {1, 0, 0, 1, 1, 1};
  int a_shape[] = {2, 3}, b_shape[] = {3, 2};
  mlx_array a = floats(ad, a_shape, 2), b = floats(bd, b_shape, 2), r = mlx_array_new();
  mlx_array pair[] = {a, b};
  mlx_vector_array operands = mlx_vector_array_new_data(pair, 2);
  CHECK_OK(mlx_einsum(&r, "ij,jk->ki", operands, s)); /* (a @ b).T = [[4, 10], [5, 11]] */
  float out[4];
  read_floats(r, out, 4);
  CHECK(mlx_array_dim(r, 0) == 2 && out[0] == 4 && out[1] == 10 && out[2] == 5 && out[3] == 11);
  CHECK_FAILS(mlx_einsum(&r, "ij,jk,kl", operands, s), "[einsum]");
  mlx_vector_array_free(operands);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_array_free(r);
}

static void QuantizationRoundTrips(void) {
  float w[64 * 2];
  for (int i = 0; i < 128; ++i) w[i] = (float)(i % 16) / 16.0f;
  int shape[] = {2, 64};
  mlx_array a = floats(w, shape, 2), none = mlx_array_new(), r = mlx_array_new();
  mlx_optional_int gs = {.value = 64, .has_value = true}, bits = {.value = 4, .has_value = true};
  mlx_vector_array q = mlx_vector_array_new();
  CHECK_OK(mlx_quantize(&q, a, gs, bits, "affine", none, s));
  CHECK(mlx_vector_array_size(q) == 3);
  mlx_array wq = mlx_array_new(), scales = mlx_array_new(), biases = mlx_array_new();
  CHECK_OK(mlx_vector_array_get(&wq, q, 0));
  CHECK_OK(mlx_vector_array_get(&scales, q, 1));
  CHECK_OK(mlx_vector_array_get(&biases, q, 2));
  mlx_optional_dtype dt = {.has_value = false};
  CHECK_OK(mlx_dequantize(&r, wq, scales, biases, gs, bits, "affine", none, dt, s));
  float out[128];
  read_floats(r, out, 128);
  for (int i = 0; i < 128; ++i) CHECK_NEAR(out[i], w[i], 0.07);
  mlx_vector_array_free(q);
  mlx_array_free(wq);
  mlx_array_free(scales);
  mlx_array_free(biases);
  mlx_array_free(a);
  mlx_array_free(none);
  mlx_array_free(r);
}

static void IndexingAndSortingOps(void) {
  float data[] = {3, 1, 2};
  int shape[] = {3};
  int32_t idx_data[] = {2, 0};
  int idx_shape[] = {2};
  mlx_array a = floats(data, shape, 1), idx = mlx_array_new_data(idx_data, idx_shape, 1, MLX_INT32),
            r = mlx_array_new();
  CHECK_OK(mlx_take(&r, a, idx, s));
  float out[3];
  read_floats(r, out, 2);
  CHECK(out[0] == 2 && out[1] == 3);
  CHECK_OK(mlx_sort(&r, a, s));
  read_floats(r, out, 3);
  CHECK(out[0] == 1 && out[2] == 3);
  CHECK_OK(mlx_topk(&r, a, 1, s));
  CHECK(item_float(r) == 3);
  int start[] = {1}, stop[] = {3}, step[] = {1};
  CHECK_OK(mlx_slice(&r, a, start, 1, stop, 1, step, 1, s));
  read_floats(r, out, 2);
  CHECK(out[0] == 1 && out[1] == 2);
  mlx_array_free(a);
  mlx_array_free(idx);
  mlx_array_free(r);
}

static void FastFunctionsNormalizeAndAttend(void) {
  float data[] = {3, 4};
  int shape[] = {1, 2};
  mlx_array x = floats(data, shape, 2), none = mlx_array_new(), r = mlx_array_new();
  CHECK_OK(mlx_fast_rms_norm(&r, x, none, 0.0f, s)); /* x / sqrt(mean(x^2)) */
  float out[2];
  read_floats(r, out, 2);
  CHECK_NEAR(out[0], 3 / sqrt(12.5), 1e-5);
  CHECK_OK(mlx_fast_layer_norm(&r, x, none, none, 0.0f, s));
  read_floats(r, out, 2);
  CHECK_NEAR(out[0], -1, 1e-5);
  int qshape[] = {1, 2, 3, 4};
  mlx_array q = mlx_array_new();
  CHECK_OK(mlx_ones(&q, qshape, 4, MLX_FLOAT32, s));
  CHECK_OK(mlx_fast_scaled_dot_product_attention(&r, q, q, q, 0.5f, "causal", none, none, s));
  CHECK(mlx_array_ndim(r) == 4 && mlx_array_dim(r, 3) == 4);
  mlx_optional_float base = {.value = 10000.0f, .has_value = true};
  CHECK_OK(mlx_fast_rope(&r, q, 4, false, base, 1.0f, 0, none, s));
  CHECK(mlx_array_size(r) == 24);
  /* The same rotation with the offset as an array (a scalar): equal to the integer form. */
  mlx_array offset = mlx_array_new_int(2), by_int = mlx_array_new(), by_array = mlx_array_new();
  CHECK_OK(mlx_fast_rope(&by_int, q, 4, false, base, 1.0f, 2, none, s));
  CHECK_OK(mlx_fast_rope_dynamic(&by_array, q, 4, false, base, 1.0f, offset, none, s));
  float a[24], b[24], at_zero[24];
  read_floats(by_int, a, 24);
  read_floats(by_array, b, 24);
  read_floats(r, at_zero, 24);
  int moved = 0;
  for (int i = 0; i < 24; ++i) {
    CHECK_NEAR(a[i], b[i], 1e-6);
    moved += fabsf(a[i] - at_zero[i]) > 1e-3f; /* offset 2 rotates further than offset 0 */
  }
  CHECK(moved > 0);
  mlx_array_free(offset);
  mlx_array_free(by_int);
  mlx_array_free(by_array);
  mlx_array_free(q);
  mlx_array_free(x);
  mlx_array_free(none);
  mlx_array_free(r);
}

static void FftRoundTripsAndShifts(void) {
  float data[] = {1, 2, 3, 4};
  int shape[] = {4};
  mlx_array x = floats(data, shape, 1), spec = mlx_array_new(), r = mlx_array_new();
  CHECK_OK(mlx_fft_rfft(&spec, x, 4, -1, s)); /* [10, -2+2i, -2] */
  CHECK(mlx_array_dim(spec, 0) == 3 && mlx_array_dtype(spec) == MLX_COMPLEX64);
  CHECK_OK(mlx_fft_irfft(&r, spec, 4, 0, s));
  float out[4];
  read_floats(r, out, 4);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], data[i], 1e-5);
  int n[] = {4}, axes[] = {0};
  CHECK_OK(mlx_fft_fftn(&spec, x, n, 1, axes, 1, s));
  CHECK_OK(mlx_fft_ifftn(&r, spec, n, 1, axes, 1, s));
  CHECK_OK(mlx_real(&r, r, s));
  read_floats(r, out, 4);
  CHECK_NEAR(out[3], 4, 1e-5);
  CHECK_OK(mlx_fft_fftshift(&r, x, axes, 1, s));
  read_floats(r, out, 4);
  CHECK(out[0] == 3 && out[1] == 4 && out[2] == 1 && out[3] == 2);
  int bad[] = {1};
  CHECK(mlx_fft_fftn(&r, x, n, 1, bad, 1, s) != 0);
  CHECK(strstr(last_error_message(), "[fftn]") != NULL);
  /* mlx-c's current form, with the normalization: ortho scales by 1/sqrt(n), forward by 1/n. */
  CHECK_OK(mlx_fft_rfft(&spec, x, 4, -1, MLX_FFT_NORM_ORTHO, s));
  CHECK_OK(mlx_real(&r, spec, s));
  read_floats(r, out, 3);
  CHECK_NEAR(out[0], 10.0 / 2.0, 1e-5);
  CHECK_OK(mlx_fft_fft2(&spec, x, n, 1, axes, 1, MLX_FFT_NORM_FORWARD, s));
  CHECK_OK(mlx_real(&r, spec, s));
  read_floats(r, out, 4);
  CHECK_NEAR(out[0], 10.0 / 4.0, 1e-5);
  CHECK_OK(mlx_fft_ifftn(&r, spec, n, 1, axes, 1, MLX_FFT_NORM_FORWARD, s));
  CHECK_OK(mlx_real(&r, r, s));
  read_floats(r, out, 4);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], data[i], 1e-5);
  /* The name without arguments is the current form's function. */
  int (*with_norm)(mlx_array*, const mlx_array, int, int, mlx_fft_norm, const mlx_stream) = mlx_fft_fft;
  CHECK_OK(with_norm(&spec, x, 4, 0, MLX_FFT_NORM_BACKWARD, s));
  CHECK(mlx_fft_fft(&spec, x, 4, 0, (mlx_fft_norm)7, s) != 0);
  CHECK(strstr(last_error_message(), "norm") != NULL);
  /* Sample frequencies: [0, 1, -2, -1] / (4 * 0.5) and [0, 1, 2] / (4 * 0.5). */
  CHECK_OK(mlx_fft_fftfreq(&r, 4, 0.5, s));
  read_floats(r, out, 4);
  CHECK(out[0] == 0 && out[1] == 0.5f && out[2] == -1 && out[3] == -0.5f);
  CHECK_OK(mlx_fft_rfftfreq(&r, 4, 0.5, s));
  CHECK(mlx_array_dim(r, 0) == 3);
  read_floats(r, out, 3);
  CHECK(out[0] == 0 && out[1] == 0.5f && out[2] == 1);
  mlx_array_free(x);
  mlx_array_free(spec);
  mlx_array_free(r);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(ElementwiseOpsBroadcast);
  RUN(ReductionsTakeAxesAxisOrNone);
  RUN(ShapesStridesAndDtypesMap);
  RUN(OptionalArgumentsAcceptEmptyHandles);
  RUN(VectorResultsAndInputs);
  RUN(StringsPairsAndTriplesMap);
  RUN(EinsumContractsAVectorOfOperands);
  RUN(QuantizationRoundTrips);
  RUN(IndexingAndSortingOps);
  RUN(FastFunctionsNormalizeAndAttend);
  RUN(FftRoundTripsAndShifts);
  mlx_stream_free(s);
  return 0;
}
