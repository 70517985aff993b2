// braid::distributed: MLX's mlx/distributed/distributed.h and ops.h, with MLX's names, signatures
// and semantics, for a single process.
//
// braid has no communication backend yet (no MPI, ring, NCCL or JACCL), so is_available() is
// false and init() returns the singleton group (rank 0, size 1), as MLX does when no backend can
// be initialized: programs written for MLX's distributed API run unchanged on one process. On a
// singleton group the collectives return their input (all_sum, all_max, all_min, all_gather,
// sum_scatter), while send and recv throw std::invalid_argument, as in MLX.
//
// Thread safety: every function may be called from any thread at any time; a Group is an
// immutable value that may be copied and shared between threads.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid::distributed {

namespace detail {
class GroupImpl;
}  // namespace detail

/// Whether a communication backend is available: always false in braid (no backend is built).
bool is_available();
/// Whether the backend `bk` ("any", "mpi", "ring", "nccl", "jaccl") is available: always false;
/// an unknown name is false too, as in MLX.
bool is_available(const std::string& bk);

/// A group of processes that can communicate; in braid, the singleton group of this process.
struct Group {
  Group(std::shared_ptr<detail::GroupImpl> group) : group_(std::move(group)) {}

  /// This process's rank in the group (0 for the singleton group).
  int rank() const;
  /// The number of processes in the group (1 for the singleton group).
  int size() const;
  /// The subgroup of the processes that pass the same `color`, ranked by `key` (a negative key:
  /// by the current rank). The singleton group cannot be split: std::runtime_error, as in MLX.
  Group split(int color, int key = -1) const;

  const std::shared_ptr<detail::GroupImpl>& raw_group() const { return group_; }

 private:
  std::shared_ptr<detail::GroupImpl> group_;
};

/// The group of every process launched together, from the backend `bk` ("any" tries each one).
/// With no backend: the singleton group, or, when `strict`, std::runtime_error ("[distributed]
/// Couldn't initialize any backend" for "any"). An unknown `bk` is std::invalid_argument.
Group init(bool strict = false, const std::string& bk = "any");

// The collectives. `group` defaults to init()'s group; on a singleton group they build no node.

/// The element-wise sum of `x` over the group's processes (a singleton group: `x` itself).
array all_sum(const array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// The concatenation along axis 0 of every process's `x` (a singleton group: `x` itself).
array all_gather(const array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// The element-wise maximum of `x` over the group's processes (a singleton group: `x` itself).
array all_max(const array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// The element-wise minimum of `x` over the group's processes (a singleton group: `x` itself).
array all_min(const array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// This process's shard (axis 0 split by group size) of all_sum(x) (a singleton group: `x`).
array sum_scatter(const array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});

/// Sends `x` to the process of rank `dst`; the result is `x`, and evaluating it sends.
/// std::invalid_argument on a singleton group or for a `dst` outside the group.
array send(const array& x, int dst, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// The array of `shape` and `dtype` that the process of rank `src` sends.
/// std::invalid_argument on a singleton group or for a `src` outside the group.
array recv(Shape shape, Dtype dtype, int src, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// recv(x.shape(), x.dtype(), src, group, s).
array recv_like(const array& x, int src, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});

}  // namespace braid::distributed
