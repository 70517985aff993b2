// mlx.core's compile, disable_compile and enable_compile. braid has no graph compiler (no
// kernel fusion of traced graphs): compile returns the function itself, which computes the same
// outputs, so MLX code decorated with @mx.compile (or partial(mx.compile, shapeless=True)) runs
// unchanged, without the fusion's speed-up. docs/porting-from-mlx.md says so.
#include "python.h"

namespace braid::python {

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def(
      "compile",
      [](py::object fun, py::object /*inputs*/, py::object /*outputs*/, bool /*shapeless*/) {
        if (!PyCallable_Check(fun.ptr())) throw py::type_error("[compile] Expected a callable.");
        return fun;
      },
      "fun"_a, "inputs"_a = py::none(), "outputs"_a = py::none(), "shapeless"_a = false,
      "Returns `fun` itself: braid does not fuse traced graphs yet, so compiling changes nothing but "
      "what MLX's compile would speed up.");
  m.def(
      "disable_compile", [] {}, "Has no effect: compile never transforms functions in braid.");
  m.def(
      "enable_compile", [] {}, "Has no effect: compile never transforms functions in braid.");
}

}  // namespace braid::python
