// MLX's optimizers are written in Python, where a Python number next to an array takes the
// array's dtype (a float next to an integer array becomes float32). braid's C++ scalars keep
// their own dtype, so the optimizers build these operands explicitly: the state then keeps the
// parameter's dtype, and the arithmetic rounds where MLX's does.
#pragma once

#include "braid/array.h"
#include "braid/dtype.h"

namespace braid::optimizers::detail {

/// A Python float beside `other`: of other's dtype when it is a float, float32 otherwise.
inline array py_float(double value, const array& other) {
  Dtype dtype = issubdtype(other.dtype(), floating) ? other.dtype() : float32;
  return array(value, dtype);
}

/// A Python int beside `other`: of other's dtype.
inline array py_int(int64_t value, const array& other) { return array(value, other.dtype()); }

}  // namespace braid::optimizers::detail
