// The distributed group and collectives (mlx-c's distributed_group.h and distributed.h) over
// braid::distributed: the singleton group of a build with no communication backend.
#include "braid/c/distributed.h"

#include "handles.h"

using namespace braid::capi;
namespace dist = braid::distributed;

namespace {

// An empty group handle means init's group, as mlx-c's "may be null".
std::optional<dist::Group> group_arg(mlx_distributed_group g) {
  if (g.ctx == nullptr) return std::nullopt;
  return get(g);
}

using Collective = braid::array (*)(const braid::array&, std::optional<dist::Group>, braid::StreamOrDevice);

int collective(Collective fn, mlx_array* res, mlx_array x, mlx_distributed_group group, mlx_stream s) {
  return guard([&] { set(out(res), fn(get(x), group_arg(group), stream_arg(s))); });
}

}  // namespace

extern "C" mlx_distributed_group mlx_distributed_group_new(void) { return mlx_distributed_group{nullptr}; }
extern "C" int mlx_distributed_group_free(mlx_distributed_group group) {
  release(group);
  return 0;
}
extern "C" int mlx_distributed_init(mlx_distributed_group* res, bool strict, const char* bk) {
  return guard([&] { set(out(res), dist::init(strict, bk == nullptr ? "any" : bk)); });
}
extern "C" int mlx_distributed_group_rank(mlx_distributed_group group) {
  return guard_value(0, [&] { return get(group).rank(); });
}
extern "C" int mlx_distributed_group_size(mlx_distributed_group group) {
  return guard_value(0, [&] { return get(group).size(); });
}
extern "C" int mlx_distributed_group_split(mlx_distributed_group* res, mlx_distributed_group group, int color,
                                           int key) {
  return guard([&] { set(out(res), get(group).split(color, key)); });
}
extern "C" bool mlx_distributed_is_available(const char* bk) {
  return guard_value(false, [&] { return bk == nullptr ? dist::is_available() : dist::is_available(bk); });
}

extern "C" int mlx_distributed_all_gather(mlx_array* res, const mlx_array x, const mlx_distributed_group group,
                                          const mlx_stream S) {
  return collective(&dist::all_gather, res, x, group, S);
}
extern "C" int mlx_distributed_all_max(mlx_array* res, const mlx_array x, const mlx_distributed_group group,
                                       const mlx_stream s) {
  return collective(&dist::all_max, res, x, group, s);
}
extern "C" int mlx_distributed_all_min(mlx_array* res, const mlx_array x, const mlx_distributed_group group,
                                       const mlx_stream s) {
  return collective(&dist::all_min, res, x, group, s);
}
extern "C" int mlx_distributed_all_sum(mlx_array* res, const mlx_array x, const mlx_distributed_group group,
                                       const mlx_stream s) {
  return collective(&dist::all_sum, res, x, group, s);
}
extern "C" int mlx_distributed_sum_scatter(mlx_array* res, const mlx_array x, const mlx_distributed_group group,
                                           const mlx_stream s) {
  return collective(&dist::sum_scatter, res, x, group, s);
}
extern "C" int mlx_distributed_recv(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, int src,
                                    const mlx_distributed_group group, const mlx_stream s) {
  return guard([&] {
    set(out(res), dist::recv(sequence_arg<braid::Shape>(shape, shape_num), to_dtype(dtype), src, group_arg(group),
                             stream_arg(s)));
  });
}
extern "C" int mlx_distributed_recv_like(mlx_array* res, const mlx_array x, int src,
                                         const mlx_distributed_group group, const mlx_stream s) {
  return guard([&] { set(out(res), dist::recv_like(get(x), src, group_arg(group), stream_arg(s))); });
}
extern "C" int mlx_distributed_send(mlx_array* res, const mlx_array x, int dst, const mlx_distributed_group group,
                                    const mlx_stream s) {
  return guard([&] { set(out(res), dist::send(get(x), dst, group_arg(group), stream_arg(s))); });
}
