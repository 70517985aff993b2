// Constants beside an array as MLX's Python layer types them: a Python scalar is "weak" and
// takes the array's dtype, where braid's array(2.0) would be float32 and promote float16 inputs.
#pragma once

#include "braid/array.h"
#include "braid/dtype.h"
#include "braid/random.h"

namespace braid::nn::detail {

/// A Python float next to `x`: x's dtype when x is floating, float32 otherwise.
inline array weak_float(double v, const array& x) {
  return array(v, issubdtype(x.dtype(), floating) ? x.dtype() : float32);
}

/// A Python int next to `x`: x's dtype (int32 beside bool).
inline array weak_int(int v, const array& x) { return array(v, x.dtype() == bool_ ? int32 : x.dtype()); }

/// MLX's mx.random.uniform(-scale, scale, shape) of the layers' initializers: float32 bounds
/// from a double scale, drawn from the process-wide key sequence.
inline array uniform_init(double scale, const Shape& shape) {
  const float k = static_cast<float>(scale);
  return random::uniform(array(-k), array(k), shape);
}

}  // namespace braid::nn::detail
