// braid.core's constants, as mlx.core's: pi, e, euler_gamma, inf, nan and newaxis (None).
#include <cmath>
#include <limits>
#include <numbers>

#include "python.h"

namespace braid::python {

BRAID_PYTHON_INIT(kInitDtype) {
  m.attr("pi") = std::numbers::pi;
  m.attr("e") = std::numbers::e;
  m.attr("euler_gamma") = std::numbers::egamma;
  m.attr("inf") = std::numeric_limits<double>::infinity();
  m.attr("nan") = std::numeric_limits<double>::quiet_NaN();
  m.attr("newaxis") = py::none();
}

}  // namespace braid::python
