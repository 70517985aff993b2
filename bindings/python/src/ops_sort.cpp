// Sorting and selection ops of braid.core with mlx.core's signatures: axis defaults to -1 and
// None works on the flattened array.
#include "ops_args.h"

namespace braid::python {

namespace {

using AlongAxis = array (*)(const array&, int, StreamOrDevice);
using Flattened = array (*)(const array&, StreamOrDevice);
using KAlongAxis = array (*)(const array&, int, int, StreamOrDevice);
using KFlattened = array (*)(const array&, int, StreamOrDevice);

void def_sort(py::module_& m, const char* name, AlongAxis along, Flattened flat, const char* doc) {
  m.def(
      name,
      [along, flat, name](py::object a, std::optional<int> axis, StreamOrDevice s) {
        auto x = arg_array(a, name, "a");
        return axis ? along(x, *axis, s) : flat(x, s);
      },
      "a"_a, py::pos_only(), "axis"_a = -1, py::kw_only(), "stream"_a = py::none(), doc);
}

/// partition, argpartition and topk: an int (kth or k) before the axis.
void def_select(py::module_& m, const char* name, const char* int_name, KAlongAxis along, KFlattened flat,
                const char* doc) {
  m.def(
      name,
      [along, flat, name](py::object a, int k, std::optional<int> axis, StreamOrDevice s) {
        auto x = arg_array(a, name, "a");
        return axis ? along(x, k, *axis, s) : flat(x, k, s);
      },
      "a"_a, py::pos_only(), py::arg(int_name), "axis"_a = -1, py::kw_only(), "stream"_a = py::none(), doc);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  def_sort(m, "sort", &sort, &sort,
           "A sorted copy along `axis` (NaNs last; of the flattened array when None).");
  def_sort(m, "argsort", &argsort, &argsort, "uint32 indices that sort along `axis` (flattened when None).");
  def_select(
      m, "partition", "kth", &partition, &partition,
      "A copy with element kth in its sorted place, nothing larger before it and nothing smaller after.");
  def_select(m, "argpartition", "kth", &argpartition, &argpartition,
             "uint32 indices that partition along `axis`.");
  def_select(m, "topk", "k", &topk, &topk, "The k largest elements along `axis`, in no particular order.");
}

}  // namespace braid::python
