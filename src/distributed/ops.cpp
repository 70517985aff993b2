// The collectives and point-to-point ops of braid::distributed. On a singleton group, the only
// kind a build without a backend has, they are MLX's: the collectives return their input and build
// no node (no stream is resolved), send and recv refuse.
#include <stdexcept>
#include <string>

#include "braid/distributed.h"

namespace braid::distributed {

namespace {

Group resolve(const std::optional<Group>& group) { return group.has_value() ? *group : init(); }

// A group of more than one process needs a backend, which this build does not have.
[[noreturn]] void no_backend(const char* op) {
  throw std::runtime_error(std::string("[") + op + "] braid has no distributed communication backend.");
}

array collective(const char* op, const array& x, const std::optional<Group>& group) {
  if (resolve(group).size() == 1) return x;
  no_backend(op);
}

// send and recv: MLX's errors for a singleton group and for a peer rank outside the group.
[[noreturn]] void point_to_point(const char* op, const char* singleton_error, const char* peer_name, int peer,
                                 const std::optional<Group>& group) {
  const Group g = resolve(group);
  if (g.size() == 1) throw std::invalid_argument(std::string("[") + op + "] " + singleton_error);
  if (peer < 0 || peer >= g.size()) {
    throw std::invalid_argument(std::string("[") + op + "] Invalid " + peer_name + "=" + std::to_string(peer) +
                                " for a group of size " + std::to_string(g.size()));
  }
  no_backend(op);
}

}  // namespace

array all_sum(const array& x, std::optional<Group> group, StreamOrDevice) { return collective("all_sum", x, group); }

array all_gather(const array& x, std::optional<Group> group, StreamOrDevice) {
  return collective("all_gather", x, group);
}

array all_max(const array& x, std::optional<Group> group, StreamOrDevice) { return collective("all_max", x, group); }

array all_min(const array& x, std::optional<Group> group, StreamOrDevice) { return collective("all_min", x, group); }

array sum_scatter(const array& x, std::optional<Group> group, StreamOrDevice) {
  return collective("sum_scatter", x, group);
}

array send(const array&, int dst, std::optional<Group> group, StreamOrDevice) {
  point_to_point("send", "Cannot send to a singleton group", "destination", dst, group);
}

array recv(Shape, Dtype, int src, std::optional<Group> group, StreamOrDevice) {
  point_to_point("recv", "Cannot recv from a singleton group", "source", src, group);
}

array recv_like(const array& x, int src, std::optional<Group> group, StreamOrDevice s) {
  return recv(x.shape(), x.dtype(), src, std::move(group), s);
}

}  // namespace braid::distributed
