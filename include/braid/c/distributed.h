/* braid's C API: the distributed collectives (mlx-c's mlx/c/distributed.h).
 *
 * An empty group handle means init's group. On the singleton group, the only one braid has, the
 * collectives (all_gather, all_max, all_min, all_sum, sum_scatter) set `res` to `x`, and send,
 * recv and recv_like fail, as in MLX.
 *
 * Thread safety: every function may be called from any thread. */
#ifndef BRAID_C_DISTRIBUTED_H
#define BRAID_C_DISTRIBUTED_H

#include <stddef.h>

#include "braid/c/array.h"
#include "braid/c/distributed_group.h"
#include "braid/c/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

int mlx_distributed_all_gather(mlx_array* res, const mlx_array x,
                               const mlx_distributed_group group /* may be null */, const mlx_stream S);
int mlx_distributed_all_max(mlx_array* res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                            const mlx_stream s);
int mlx_distributed_all_min(mlx_array* res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                            const mlx_stream s);
int mlx_distributed_all_sum(mlx_array* res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                            const mlx_stream s);
int mlx_distributed_recv(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, int src,
                         const mlx_distributed_group group /* may be null */, const mlx_stream s);
int mlx_distributed_recv_like(mlx_array* res, const mlx_array x, int src,
                              const mlx_distributed_group group /* may be null */, const mlx_stream s);
int mlx_distributed_send(mlx_array* res, const mlx_array x, int dst,
                         const mlx_distributed_group group /* may be null */, const mlx_stream s);
int mlx_distributed_sum_scatter(mlx_array* res, const mlx_array x,
                                const mlx_distributed_group group /* may be null */, const mlx_stream s);

#ifdef __cplusplus
}
#endif

#endif
