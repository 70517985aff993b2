// braid.core: the module's entry point. Each source file registers its bindings (python.h).
#include <algorithm>
#include <mutex>

#include "python.h"

namespace braid::python {

namespace {
std::vector<std::pair<int, InitFn>>& registry() {
  static std::vector<std::pair<int, InitFn>> fns;
  return fns;
}
}  // namespace

Registrar::Registrar(int order, InitFn fn) { registry().emplace_back(order, fn); }

void run_registered(py::module_& m) {
  auto fns = registry();
  std::stable_sort(fns.begin(), fns.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, fn] : fns) fn(m);
}

py::class_<array> array_class(py::module_& m) { return py::reinterpret_borrow<py::class_<array>>(m.attr("array")); }

}  // namespace braid::python

PYBIND11_MODULE(core, m) {
  m.doc() = "braid's arrays, ops, transforms, random numbers, io and streams (mlx.core's names).";
  m.attr("__version__") = braid::version();
  braid::python::run_registered(m);
}
