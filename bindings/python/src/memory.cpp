// braid.core's memory functions (mlx.core's names): the caching allocator's counters and
// limits. All are thread-safe; sizes are bytes.
#include <string>

#include "python.h"

namespace braid::python {

namespace {
/// mlx.core.metal's deprecated memory functions: the same function, with a DeprecationWarning.
void def_deprecated(py::module_& metal, const char* name, py::object fn) {
  const std::string message = std::string("mx.metal.") + name +
                              " is deprecated and will be removed in a future version. Use mx." + name +
                              " instead.";
  metal.def(name, [fn, message](const py::args& args, const py::kwargs& kwargs) {
    if (PyErr_WarnEx(PyExc_DeprecationWarning, message.c_str(), 1) < 0) throw py::error_already_set();
    return fn(*args, **kwargs);
  });
}
}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def("get_active_memory", &get_active_memory,
        "Bytes held by live arrays' buffers (the cache not counted).");
  m.def("get_peak_memory", &get_peak_memory,
        "The largest active memory seen since the start or the last reset_peak_memory().");
  m.def("reset_peak_memory", &reset_peak_memory,
        "Sets the peak memory to 0 (it reads 0 until memory is next allocated).");
  m.def("get_cache_memory", &get_cache_memory, "Bytes kept in the allocator's cache for reuse.");
  m.def("set_memory_limit", &set_memory_limit, "limit"_a,
        "Sets the guideline for active memory above which the cache is trimmed and new work waits "
        "for queued work; returns the previous limit.");
  m.def("get_memory_limit", &get_memory_limit, "The memory limit in bytes.");
  m.def("set_cache_limit", &set_cache_limit, "limit"_a,
        "Sets the most bytes the cache keeps (0 disables caching); returns the previous limit.");
  m.def("set_wired_limit", &set_wired_limit, "limit"_a,
        "MLX's limit on wired (resident) memory; braid wires no memory, so the value is only kept. "
        "Returns the previous limit.");
  m.def(
      "get_array_buffer_size",
      [](const py::args& trees) {
        std::vector<array> arrays;
        for (const py::handle tree : trees) {
          std::vector<array> leaves = tree_flatten_arrays(tree, /*strict=*/false);
          arrays.insert(arrays.end(), leaves.begin(), leaves.end());
        }
        return get_array_buffer_size(arrays);
      },
      "Bytes of the distinct buffers behind the arrays in the arguments (arrays or trees of "
      "arrays; other leaves are ignored), each buffer once, at its allocator size. The arrays "
      "must be evaluated (ValueError otherwise).");
  m.def(
      "clear_cache",
      [] {
        py::gil_scoped_release release;
        clear_cache();
      },
      "Returns every cached buffer to the system.");

  // mlx.core.metal still offers the memory functions under their old names. braid has no Metal
  // backend, so metal.is_available() is False.
  auto metal =
      m.def_submodule("metal", "mlx.core.metal's names: is_available and the deprecated memory functions.");
  metal.def(
      "is_available", [] { return false; }, "False: braid has no Metal backend.");
  def_deprecated(metal, "get_active_memory", m.attr("get_active_memory"));
  def_deprecated(metal, "get_peak_memory", m.attr("get_peak_memory"));
  def_deprecated(metal, "reset_peak_memory", m.attr("reset_peak_memory"));
  def_deprecated(metal, "get_cache_memory", m.attr("get_cache_memory"));
  def_deprecated(metal, "set_memory_limit", m.attr("set_memory_limit"));
  def_deprecated(metal, "set_cache_limit", m.attr("set_cache_limit"));
  def_deprecated(metal, "clear_cache", m.attr("clear_cache"));
}

}  // namespace braid::python
