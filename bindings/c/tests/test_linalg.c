/* The generated linalg family (mlx-c's mlx/c/linalg.h): a solve, determinants, the norms' "may
 * be null" axis list, a vector result, and an evaluation error reported through the handler. */
#include "check.h"

static mlx_stream s;

static mlx_array floats(const float* data, const int* shape, int dim) {
  return mlx_array_new_data(data, shape, dim, MLX_FLOAT32);
}

static void SolveFindsTheKnownSolution(void) {
  float a_data[] = {3, 1, 1, 2};
  int a_shape[] = {2, 2};
  float b_data[] = {9, 8};
  int b_shape[] = {2};
  mlx_array a = floats(a_data, a_shape, 2), b = floats(b_data, b_shape, 1), x = mlx_array_new();
  CHECK_OK(mlx_linalg_solve(&x, a, b, s));
  float out[2];
  read_floats(x, out, 2);
  CHECK_NEAR(out[0], 2.0, 1e-5);
  CHECK_NEAR(out[1], 3.0, 1e-5);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_array_free(x);
}

static void DeterminantsOfAKnownMatrix(void) {
  float data[] = {1, 2, 3, 4};
  int shape[] = {2, 2};
  mlx_array a = floats(data, shape, 2), d = mlx_array_new(), sign = mlx_array_new(), logabs = mlx_array_new();
  CHECK_OK(mlx_linalg_det(&d, a, s));
  CHECK_NEAR(item_float(d), -2.0, 1e-5);
  CHECK_OK(mlx_linalg_slogdet(&sign, &logabs, a, s));
  CHECK_NEAR(item_float(sign), -1.0, 0);
  CHECK_NEAR(item_float(logabs), log(2.0), 1e-6);
  mlx_array_free(a);
  mlx_array_free(d);
  mlx_array_free(sign);
  mlx_array_free(logabs);
}

static void NormTakesANullAxisListForAll(void) {
  float data[] = {3, 0, 4, 5};
  int shape[] = {2, 2};
  mlx_array a = floats(data, shape, 2), r = mlx_array_new();
  CHECK_OK(mlx_linalg_norm_l2(&r, a, NULL, 0, false, s));
  CHECK_NEAR(item_float(r), sqrt(50.0), 1e-5);
  CHECK_OK(mlx_linalg_norm(&r, a, 1.0, NULL, 0, false, s));
  CHECK_NEAR(item_float(r), 7.0, 1e-6);
  int axis[] = {1};
  CHECK_OK(mlx_linalg_norm(&r, a, INFINITY, axis, 1, false, s));
  float rows[2];
  read_floats(r, rows, 2);
  CHECK(rows[0] == 3 && rows[1] == 5);
  CHECK_OK(mlx_linalg_norm_matrix(&r, a, "nuc", NULL, 0, false, s));
  CHECK_NEAR(item_float(r), 4 * sqrt(5.0), 1e-5);
  mlx_array_free(a);
  mlx_array_free(r);
}

static void SvdReturnsAVectorOfResults(void) {
  float data[] = {3, 0, 4, 5};
  int shape[] = {2, 2};
  mlx_array a = floats(data, shape, 2), sv = mlx_array_new();
  mlx_vector_array usv = mlx_vector_array_new();
  CHECK_OK(mlx_linalg_svd(&usv, a, true, s));
  CHECK(mlx_vector_array_size(usv) == 3);
  CHECK_OK(mlx_vector_array_get(&sv, usv, 1));
  float values[2];
  read_floats(sv, values, 2);
  CHECK_NEAR(values[0], 3 * sqrt(5.0), 1e-5);
  CHECK_NEAR(values[1], sqrt(5.0), 1e-5);
  mlx_vector_array_free(usv);
  mlx_array_free(a);
  mlx_array_free(sv);
}

static void ASingularMatrixFailsItsEvaluation(void) {
  float data[] = {1, 2, 2, 4};
  int shape[] = {2, 2};
  mlx_array a = floats(data, shape, 2), r = mlx_array_new();
  CHECK_OK(mlx_linalg_inv(&r, a, s)); /* building the node succeeds */
  CHECK_FAILS(mlx_array_eval(r), "[linalg::inv] The matrix is singular");
  mlx_array_free(a);
  mlx_array_free(r);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(SolveFindsTheKnownSolution);
  RUN(DeterminantsOfAKnownMatrix);
  RUN(NormTakesANullAxisListForAll);
  RUN(SvdReturnsAVectorOfResults);
  RUN(ASingularMatrixFailsItsEvaluation);
  mlx_stream_free(s);
  return 0;
}
