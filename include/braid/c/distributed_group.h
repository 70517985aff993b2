/* braid's C API: distributed groups (mlx-c's mlx/c/distributed_group.h).
 *
 * braid has no communication backend: mlx_distributed_is_available is false and
 * mlx_distributed_init gives the singleton group (rank 0, size 1), or fails when `strict`, as
 * MLX does when no backend can start.
 *
 * Thread safety: every function may be called from any thread; a group is immutable. */
#ifndef BRAID_C_DISTRIBUTED_GROUP_H
#define BRAID_C_DISTRIBUTED_GROUP_H

#include <stdbool.h>

#include "braid/c/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A group of processes that can communicate. */
typedef struct mlx_distributed_group_ {
  void* ctx;
} mlx_distributed_group;

/** A new empty handle (where an op takes a group: init's group). */
mlx_distributed_group mlx_distributed_group_new(void);
int mlx_distributed_group_free(mlx_distributed_group group);
/** Sets `res` to the group of the backend `bk` ("any", "mpi", "ring", "nccl", "jaccl"; NULL:
 * "any"): the singleton group, or, when `strict`, an error. */
int mlx_distributed_init(mlx_distributed_group* res, bool strict, const char* bk /* may be null */);
/** This process's rank in the group (0 on error, after reporting it). */
int mlx_distributed_group_rank(mlx_distributed_group group);
/** The number of processes in the group (0 on error, after reporting it). */
int mlx_distributed_group_size(mlx_distributed_group group);
/** The subgroup of the processes passing the same `color`, ranked by `key` (negative: by the
 * current rank). The singleton group cannot be split: an error. */
int mlx_distributed_group_split(mlx_distributed_group* res, mlx_distributed_group group, int color, int key);
/** Whether the backend `bk` (NULL: any backend) is available: false in braid. */
bool mlx_distributed_is_available(const char* bk /* may be null */);

#ifdef __cplusplus
}
#endif

#endif
