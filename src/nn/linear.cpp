// Identity, Linear, Bilinear and Embedding (MLX's linear.py and embedding.py), and nn::Sizes.
#include <cmath>
#include <stdexcept>

#include "braid/nn/layers.h"
#include "braid/ops.h"
#include "braid/random.h"
#include "nn/scalars.h"

namespace braid::nn {

using detail::uniform_init;

std::vector<int> Sizes::expand(int n, const std::string& layer, const std::string& what) const {
  if (scalar_) return std::vector<int>(n, values_[0]);
  if (static_cast<int>(values_.size()) != n) {
    throw std::invalid_argument("[" + layer + "] '" + what + "' must be an integer or a tuple containing " +
                                std::to_string(n) + (n == 1 ? " integer" : " integers") + ".");
  }
  return values_;
}

Linear::Linear(int input_dims, int output_dims, bool bias) {
  if (input_dims <= 0 || output_dims < 0) {
    fail("input_dims must be positive and output_dims non-negative; got " + std::to_string(input_dims) +
         " and " + std::to_string(output_dims) + ".");
  }
  const double scale = std::sqrt(1.0 / input_dims);
  register_parameter("weight", uniform_init(scale, {output_dims, input_dims}));
  if (bias) register_parameter("bias", uniform_init(scale, {output_dims}));
}

array Linear::operator()(const array& x) {
  if (quantization()) {
    const int64_t features = int64_t{param("scales").shape(-1)} * quantization()->group_size;
    if (x.ndim() == 0 || x.shape(-1) != features) {
      fail("Expected inputs with " + std::to_string(features) + " features in the last axis.");
    }
    const array y = packed_product(x);
    return has_param("bias") ? add(y, param("bias")) : y;
  }
  const array weight = param("weight");
  if (x.ndim() == 0 || x.shape(-1) != weight.shape(1)) {
    fail("Expected inputs with " + std::to_string(weight.shape(1)) + " features in the last axis.");
  }
  if (has_param("bias")) return addmm(param("bias"), x, transpose(weight));
  return matmul(x, transpose(weight));
}

Bilinear::Bilinear(int input1_dims, int input2_dims, int output_dims, bool bias) {
  if (input1_dims <= 0 || input2_dims <= 0 || output_dims < 0) {
    fail("The input dimensions must be positive and output_dims non-negative.");
  }
  const double scale = std::sqrt(1.0 / input1_dims);
  register_parameter("weight", uniform_init(scale, {output_dims, input2_dims, input1_dims}));
  if (bias) register_parameter("bias", uniform_init(scale, {output_dims}));
}

array Bilinear::operator()(const array& x1, const array& x2) {
  const array weight = param("weight");
  const int out = weight.shape(0), in2 = weight.shape(1), in1 = weight.shape(2);
  if (x1.ndim() == 0 || x1.shape(-1) != in1 || x2.ndim() == 0 || x2.shape(-1) != in2) {
    fail("Expected inputs with " + std::to_string(in1) + " and " + std::to_string(in2) +
         " features in their last axes.");
  }
  if (x1.size() / in1 != x2.size() / in2) fail("The two inputs must have the same number of rows.");
  Shape out_shape(x1.shape().begin(), x1.shape().end() - 1);
  out_shape.push_back(out);
  // (x1 W^T) regrouped per output, then contracted with x2: y[r, o] = x2[r] . (W[o] x1[r]).
  array y = matmul(reshape(x1, {-1, in1}), transpose(reshape(weight, {out * in2, in1})));
  y = swapaxes(reshape(y, {-1, out, in2}), -2, -1);
  y = squeeze(matmul(reshape(x2, {-1, 1, in2}), y), 1);
  y = reshape(y, out_shape);
  return has_param("bias") ? add(y, param("bias")) : y;
}

Embedding::Embedding(int num_embeddings, int dims) {
  if (num_embeddings < 0 || dims <= 0) fail("num_embeddings must be non-negative and dims positive.");
  const float scale = static_cast<float>(std::sqrt(1.0 / dims));
  register_parameter("weight", random::normal({num_embeddings, dims}, 0.0f, scale));
}

array Embedding::operator()(const array& x) {
  if (!issubdtype(x.dtype(), integer)) fail("Expected integer indices, got " + dtype_name(x.dtype()) + ".");
  return quantization() ? packed_rows(x) : take(param("weight"), x, 0);
}

array Embedding::as_linear(const array& x) const {
  return quantization() ? packed_product(x) : matmul(x, transpose(param("weight")));
}

}  // namespace braid::nn
