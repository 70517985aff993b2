// braid.core.distributed: mlx.core.distributed's names, signatures and keyword names (Group,
// is_available, init, all_sum, all_gather, all_max, all_min, sum_scatter, send, recv,
// recv_like). braid has no communication backend: init returns the singleton group, on which
// the collectives return their input and send/recv raise ValueError, as in MLX.
#include "braid/distributed.h"

#include "ops_args.h"

namespace braid::python {

namespace {

using Group = distributed::Group;
using OptionalGroup = std::optional<Group>;
using Collective = array (*)(const array&, OptionalGroup, StreamOrDevice);

// all_sum and its kin: (x, *, group=None, stream=None), x any array-like value as in MLX.
void def_collective(py::module_& m, const char* name, Collective fn, const char* doc) {
  m.def(
      name,
      [fn, name](py::object x, OptionalGroup group, StreamOrDevice s) {
        return fn(arg_array(x, name, "x"), std::move(group), s);
      },
      "x"_a, py::kw_only(), "group"_a = py::none(), "stream"_a = py::none(), doc);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  auto d = m.def_submodule("distributed", "braid.core.distributed: communication operations, as mlx.core.distributed "
                                          "(one process: the singleton group).");

  py::class_<Group>(d, "Group", "A group of processes that can communicate; in braid, the singleton group.")
      .def("rank", &Group::rank, "This process's rank in the group.")
      .def("size", &Group::size, "The number of processes in the group.")
      .def("split", &Group::split, "color"_a, "key"_a = -1,
           "The subgroup of the processes that pass the same color, ranked by key (negative: the current "
           "rank). The singleton group cannot be split (RuntimeError).");

  d.def(
      "is_available", [](const std::string& backend) { return distributed::is_available(backend); },
      "backend"_a = "any",
      "Whether the communication backend ('any', 'mpi', 'ring', 'nccl', 'jaccl') is available: False in braid.");
  d.def("init", &distributed::init, "strict"_a = false, "backend"_a = "any",
        "The group of every launched process: the singleton group (rank 0, size 1), or, when strict, "
        "RuntimeError since no backend can start.");

  def_collective(d, "all_sum", &distributed::all_sum, "The sum of `x` over the group's processes.");
  def_collective(d, "all_max", &distributed::all_max, "The maximum of `x` over the group's processes.");
  def_collective(d, "all_min", &distributed::all_min, "The minimum of `x` over the group's processes.");
  def_collective(d, "all_gather", &distributed::all_gather,
                 "The concatenation along the first axis of every process's `x`.");
  def_collective(d, "sum_scatter", &distributed::sum_scatter,
                 "This process's shard (the first axis split by the group size) of the sum of `x` over the group.");

  d.def(
      "send",
      [](py::object x, int dst, OptionalGroup group, StreamOrDevice s) {
        return distributed::send(arg_array(x, "send", "x"), dst, std::move(group), s);
      },
      "x"_a, "dst"_a, py::kw_only(), "group"_a = py::none(), "stream"_a = py::none(),
      "Sends `x` to the process of rank `dst`; returns `x`, whose evaluation sends it.");
  d.def(
      "recv",
      [](py::handle shape, Dtype dtype, int src, OptionalGroup group, StreamOrDevice s) {
        return distributed::recv(arg_shape(shape, "recv", "shape"), dtype, src, std::move(group), s);
      },
      "shape"_a, "dtype"_a, "src"_a, py::kw_only(), "group"_a = py::none(), "stream"_a = py::none(),
      "The array of `shape` and `dtype` sent by the process of rank `src`.");
  d.def(
      "recv_like",
      [](py::object x, int src, OptionalGroup group, StreamOrDevice s) {
        return distributed::recv_like(arg_array(x, "recv_like", "x"), src, std::move(group), s);
      },
      "x"_a, "src"_a, py::kw_only(), "group"_a = py::none(), "stream"_a = py::none(),
      "recv(x.shape, x.dtype, src): an array like `x` from the process of rank `src`.");
}

}  // namespace braid::python
