// Activation functions as compositions of braid's ops, in MLX's formulas (nn/activations.h).
#include "braid/nn/activations.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "braid/ops.h"
#include "nn/scalars.h"

namespace braid::nn {

using detail::weak_float;
using detail::weak_int;

array sigmoid(const array& x) { return braid::sigmoid(x); }

array relu(const array& x) { return maximum(x, weak_int(0, x)); }

array relu2(const array& x) { return square(relu(x)); }

array leaky_relu(const array& x, float negative_slope) {
  return maximum(weak_float(negative_slope, x) * x, x);
}

array log_softmax(const array& x, int axis) { return x - logsumexp(x, axis, /*keepdims=*/true); }

array elu(const array& x, float alpha) {
  return where(x > weak_int(0, x), x, weak_float(alpha, x) * (exp(x) - weak_int(1, x)));
}

array relu6(const array& x) { return minimum(maximum(x, weak_int(0, x)), weak_float(6.0, x)); }

array softmax(const array& x, int axis) { return braid::softmax(x, axis); }

array softplus(const array& x) { return logaddexp(x, weak_int(0, x)); }

array softsign(const array& x) { return divide(x, weak_int(1, x) + abs(x)); }

array softshrink(const array& x, float lambd) {
  const array l = weak_float(lambd, x);
  return where(abs(x) > l, x - sign(x) * l, weak_int(0, x));
}

array celu(const array& x, float alpha) {
  const array a = weak_float(alpha, x);
  return maximum(x, weak_float(0.0, x)) + a * (exp(minimum(x, weak_float(0.0, x)) / a) - weak_int(1, x));
}

array silu(const array& x) { return x * braid::sigmoid(x); }

array log_sigmoid(const array& x) { return -softplus(-x); }

array gelu(const array& x) {
  return x * (weak_int(1, x) + erf(x / weak_float(std::sqrt(2.0), x))) / weak_int(2, x);
}

array gelu_approx(const array& x) {
  const array inner =
      weak_float(std::sqrt(2.0 / std::numbers::pi), x) * (x + weak_float(0.044715, x) * (x * square(x)));
  return weak_float(0.5, x) * x * (weak_int(1, x) + braid::tanh(inner));
}

array gelu_fast_approx(const array& x) { return x * braid::sigmoid(weak_float(1.702, x) * x); }

array glu(const array& x, int axis) {
  const int ndim = static_cast<int>(x.ndim());
  if (axis < -ndim || axis >= ndim) {
    throw std::invalid_argument("[glu] Axis " + std::to_string(axis) + " is out of range for an array of " +
                                std::to_string(ndim) + " dimensions.");
  }
  const int dim = x.shape(axis < 0 ? axis + ndim : axis);
  if (dim % 2 != 0) {
    throw std::invalid_argument("[glu] Axis " + std::to_string(axis) + " has odd size " +
                                std::to_string(dim) + "; it must split into two equal halves.");
  }
  auto halves = split(x, 2, axis);
  return halves[0] * braid::sigmoid(halves[1]);
}

array step(const array& x, float threshold) {
  return where(x > weak_float(threshold, x), array(1, int32), array(0, int32));
}

array selu(const array& x) { return elu(x, 1.67326f) * weak_float(1.0507, x); }

array prelu(const array& x, const array& alpha) {
  return maximum(weak_int(0, x), x) + alpha * minimum(weak_int(0, x), x);
}

array mish(const array& x) { return x * braid::tanh(softplus(x)); }

array hardswish(const array& x) {
  const array clipped = minimum(maximum(x + weak_int(3, x), weak_int(0, x)), weak_int(6, x));
  return x * clipped / weak_int(6, x);
}

array hard_tanh(const array& x, float min_val, float max_val) {
  return minimum(maximum(x, weak_float(min_val, x)), weak_float(max_val, x));
}

array hard_shrink(const array& x, float lambd) {
  return where(abs(x) > weak_float(lambd, x), x, weak_int(0, x));
}

array softmin(const array& x, int axis) { return braid::softmax(-x, axis); }

array tanh(const array& x) { return braid::tanh(x); }

GELU::GELU(const std::string& approx) {
  if (approx == "none") {
    approx_ = Approx::none;
  } else if (approx == "precise" || approx == "tanh") {
    approx_ = Approx::precise;
  } else if (approx == "fast") {
    approx_ = Approx::fast;
  } else {
    fail("The approximation should be in ['none', 'precise', 'tanh', 'fast'] but '" + approx +
         "' was given.");
  }
}

array GELU::operator()(const array& x) {
  switch (approx_) {
    case Approx::none: return gelu(x);
    case Approx::precise: return gelu_approx(x);
    case Approx::fast: return gelu_fast_approx(x);
  }
  return gelu(x);  // unreachable: the switch covers every Approx
}

PReLU::PReLU(int num_parameters, float init) {
  if (num_parameters < 1)
    fail("num_parameters must be at least 1, got " + std::to_string(num_parameters) + ".");
  register_parameter("weight", full({num_parameters}, init));
}

}  // namespace braid::nn
