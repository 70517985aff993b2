/* The distributed family (mlx-c's mlx/c/distributed_group.h and distributed.h) with no
 * communication backend: the singleton group, strict init failing, collectives that give back
 * their input, send and recv failing, and an empty group handle meaning init's group. */
#include "check.h"

static mlx_stream s;

static void NoBackendIsAvailable(void) {
  CHECK(!mlx_distributed_is_available(NULL));
  CHECK(!mlx_distributed_is_available("any"));
  CHECK(!mlx_distributed_is_available("mpi"));
  CHECK(!mlx_distributed_is_available("no-such-backend"));
}

static void InitGivesTheSingletonGroup(void) {
  mlx_distributed_group g = mlx_distributed_group_new();
  CHECK_OK(mlx_distributed_init(&g, false, NULL));
  CHECK(mlx_distributed_group_rank(g) == 0);
  CHECK(mlx_distributed_group_size(g) == 1);
  CHECK_OK(mlx_distributed_init(&g, false, "ring"));
  CHECK(mlx_distributed_group_size(g) == 1);
  mlx_distributed_group_free(g);
}

static void StrictInitAndBadBackendsFail(void) {
  mlx_distributed_group g = mlx_distributed_group_new();
  CHECK_FAILS(mlx_distributed_init(&g, true, NULL), "Couldn't initialize any backend");
  CHECK_FAILS(mlx_distributed_init(&g, true, "nccl"), "Cannot initialize nccl");
  CHECK_FAILS(mlx_distributed_init(&g, false, "gloo"), "The only valid values for backend");
  CHECK(g.ctx == NULL);
}

static void TheSingletonGroupCannotBeSplit(void) {
  mlx_distributed_group g = mlx_distributed_group_new(), sub = mlx_distributed_group_new();
  CHECK_OK(mlx_distributed_init(&g, false, NULL));
  CHECK_FAILS(mlx_distributed_group_split(&sub, g, 0, -1), "Cannot split the distributed group further");
  mlx_distributed_group_free(g);
}

static void CollectivesGiveBackTheirInput(void) {
  float data[] = {1, -2, 3, 4};
  int shape[] = {2, 2};
  mlx_array x = mlx_array_new_data(data, shape, 2, MLX_FLOAT32), r = mlx_array_new();
  mlx_distributed_group none = mlx_distributed_group_new(), g = mlx_distributed_group_new();
  CHECK_OK(mlx_distributed_init(&g, false, NULL));
  int (*ops[])(mlx_array*, const mlx_array, const mlx_distributed_group, const mlx_stream) = {
      mlx_distributed_all_sum, mlx_distributed_all_max, mlx_distributed_all_min, mlx_distributed_all_gather,
      mlx_distributed_sum_scatter};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    for (int with_group = 0; with_group < 2; ++with_group) {
      CHECK_OK(ops[i](&r, x, with_group ? g : none, s));
      float out[4];
      read_floats(r, out, 4);
      CHECK(out[0] == 1 && out[1] == -2 && out[2] == 3 && out[3] == 4);
      CHECK(mlx_array_ndim(r) == 2 && mlx_array_shape(r)[0] == 2);
    }
  }
  mlx_array_free(x);
  mlx_array_free(r);
  mlx_distributed_group_free(g);
}

static void SendAndRecvFailOnASingletonGroup(void) {
  int shape[] = {3};
  mlx_array x = mlx_array_new_float(1.0f), r = mlx_array_new();
  mlx_distributed_group none = mlx_distributed_group_new();
  CHECK_FAILS(mlx_distributed_send(&r, x, 0, none, s), "Cannot send to a singleton group");
  CHECK_FAILS(mlx_distributed_recv(&r, shape, 1, MLX_FLOAT32, 0, none, s), "Cannot recv from a singleton group");
  CHECK_FAILS(mlx_distributed_recv_like(&r, x, 0, none, s), "Cannot recv from a singleton group");
  mlx_array_free(x);
  mlx_array_free(r);
}

int main(void) {
  test_setup(60);
  s = mlx_default_cpu_stream_new();
  RUN(NoBackendIsAvailable);
  RUN(InitGivesTheSingletonGroup);
  RUN(StrictInitAndBadBackendsFail);
  RUN(TheSingletonGroupCannotBeSplit);
  RUN(CollectivesGiveBackTheirInput);
  RUN(SendAndRecvFailOnASingletonGroup);
  mlx_stream_free(s);
  return 0;
}
