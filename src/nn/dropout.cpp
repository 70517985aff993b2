// Dropout layers (MLX's dropout.py): masks from random::bernoulli with the probability of
// keeping, survivors scaled by its reciprocal in the input's dtype.
#include <stdexcept>
#include <string>

#include "braid/nn/layers.h"
#include "braid/ops.h"
#include "braid/random.h"

namespace braid::nn {

namespace {

float keep_probability(const std::string& layer, float p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw std::invalid_argument("[" + layer + "] The dropout probability " + std::to_string(p) +
                                " is not in [0, 1)");
  }
  return 1.0f - p;
}

// x * mask / p_1 with a mask of `mask_shape` (broadcast over x).
array drop(const array& x, float p_1, const Shape& mask_shape) {
  array mask = random::bernoulli(array(p_1), mask_shape);
  return multiply(multiply(mask, x), array(1.0f / p_1, x.dtype()));
}

// x's shape with the `count` axes before the channels set to 1.
Shape channel_mask_shape(const array& x, int count) {
  Shape shape = x.shape();
  for (int i = 2; i <= count + 1; ++i) shape[shape.size() - i] = 1;
  return shape;
}

}  // namespace

Dropout::Dropout(float p) : p_1_(keep_probability("Dropout", p)) {}

array Dropout::operator()(const array& x) {
  if (p_1_ == 1.0f || !training()) return x;
  return drop(x, p_1_, x.shape());
}

Dropout2d::Dropout2d(float p) : p_1_(keep_probability("Dropout2d", p)) {}

array Dropout2d::operator()(const array& x) {
  if (x.ndim() != 3 && x.ndim() != 4) {
    fail("Received input with " + std::to_string(x.ndim()) + " dimensions. Expected 3 or 4 dimensions.");
  }
  if (p_1_ == 1.0f || !training()) return x;
  return drop(x, p_1_, channel_mask_shape(x, 2));
}

Dropout3d::Dropout3d(float p) : p_1_(keep_probability("Dropout3d", p)) {}

array Dropout3d::operator()(const array& x) {
  if (x.ndim() != 4 && x.ndim() != 5) {
    fail("Received input with " + std::to_string(x.ndim()) + " dimensions. Expected 4 or 5 dimensions.");
  }
  if (p_1_ == 1.0f || !training()) return x;
  return drop(x, p_1_, channel_mask_shape(x, 3));
}

}  // namespace braid::nn
