// A double converted to an integer type, saturating: values past the type's range give its
// limits and NaN gives 0 (C++'s plain conversion is undefined there). Host code of both
// backends: arange converts its start and second value this way, as MLX's arange does on
// hardware whose conversion saturates.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

namespace braid::common {

template <typename T>
inline T saturating_cast(double v) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (std::isnan(v)) return T{0};
  // The limits as doubles: the minimum is exact; the maximum may round up to the next power of
  // two, which is then itself out of range.
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace braid::common
