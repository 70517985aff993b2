// braid.core's memory functions (mlx.core's names): the caching allocator's counters and
// limits. All are thread-safe; sizes are bytes.
#include "python.h"

namespace braid::python {

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def("get_active_memory", &get_active_memory, "Bytes held by live arrays' buffers (the cache not counted).");
  m.def("get_peak_memory", &get_peak_memory,
        "The largest active memory seen since the start or the last reset_peak_memory().");
  m.def("reset_peak_memory", &reset_peak_memory, "Resets the peak memory to the active memory.");
  m.def("get_cache_memory", &get_cache_memory, "Bytes kept in the allocator's cache for reuse.");
  m.def("set_memory_limit", &set_memory_limit, "limit"_a,
        "Sets the guideline for active memory above which the cache is trimmed and new work waits "
        "for queued work; returns the previous limit.");
  m.def("get_memory_limit", &get_memory_limit, "The memory limit in bytes.");
  m.def("set_cache_limit", &set_cache_limit, "limit"_a,
        "Sets the most bytes the cache keeps (0 disables caching); returns the previous limit.");
  m.def(
      "clear_cache",
      [] {
        py::gil_scoped_release release;
        clear_cache();
      },
      "Returns every cached buffer to the system.");
}

}  // namespace braid::python
