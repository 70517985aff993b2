// braid.core's constants, as mlx.core's: pi, e, euler_gamma, inf, nan and newaxis (None), and
// NumPy's older aliases that mlx.core also has (Inf, Infinity, infty, PINF, NINF, NAN, NaN, PZERO, NZERO).
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
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (const char* name : {"Inf", "Infinity", "infty", "PINF"}) m.attr(name) = kInf;
  m.attr("NINF") = -kInf;
  for (const char* name : {"NAN", "NaN"}) m.attr(name) = std::numeric_limits<double>::quiet_NaN();
  m.attr("PZERO") = 0.0;
  m.attr("NZERO") = -0.0;
}

}  // namespace braid::python
