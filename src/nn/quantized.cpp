// Quantized layers (MLX's quantized.py): QuantizedLinear and QuantizedEmbedding over
// braid::quantize's packed layout.
#include <cmath>
#include <stdexcept>

#include "braid/nn/layers.h"
#include "braid/ops.h"
#include "braid/random.h"
#include "nn/scalars.h"

namespace braid::nn {

namespace {

// The mode's default group size and bits (MLX's table).
std::pair<int, int> mode_defaults(const std::string& layer, const std::string& mode) {
  if (mode == "affine") return {64, 4};
  if (mode == "mxfp4") return {32, 4};
  if (mode == "nvfp4") return {16, 4};
  if (mode == "mxfp8") return {32, 8};
  throw std::invalid_argument("[" + layer + "] Unsupported quantization mode '" + mode +
                              "'; expected affine, mxfp4, nvfp4 or mxfp8.");
}

}  // namespace

QuantizedWeights::QuantizedWeights(const std::string& layer, std::optional<int> group_size,
                                   std::optional<int> bits, const std::string& mode)
    : mode_(mode) {
  const auto [g, b] = mode_defaults(layer, mode);
  group_size_ = group_size.value_or(g);
  bits_ = bits.value_or(b);
}

void QuantizedWeights::set_weight(const array& weight) {
  const std::vector<array> q = quantize(weight, group_size_, bits_, mode_);
  register_parameter("weight", q[0]);
  register_parameter("scales", q[1]);
  if (q.size() > 2) register_parameter("biases", q[2]);
}

array QuantizedWeights::quantized_product(const array& x) const {
  if (!has_param("biases")) {
    return quantized_matmul(x, param("weight"), param("scales"), std::nullopt, true, group_size_, bits_,
                            mode_);
  }
  return quantized_matmul(x, param("weight"), param("scales"), param("biases"), true, group_size_, bits_,
                          mode_);
}

QuantizedLinear::QuantizedLinear(int input_dims, int output_dims, bool bias, std::optional<int> group_size,
                                 std::optional<int> bits, const std::string& mode)
    : QuantizedWeights("QuantizedLinear", group_size, bits, mode) {
  if (input_dims <= 0 || output_dims <= 0) fail("input_dims and output_dims must be positive.");
  set_weight(detail::uniform_init(std::sqrt(1.0 / input_dims), {output_dims, input_dims}));
  if (bias) register_parameter("bias", zeros({output_dims}));
  freeze();
}

std::shared_ptr<QuantizedLinear> QuantizedLinear::from_linear(const Linear& linear,
                                                              std::optional<int> group_size,
                                                              std::optional<int> bits,
                                                              const std::string& mode) {
  const Tree p = linear.parameters();
  const array& weight = p.at("weight").leaf();
  // As MLX: a layer is built (drawing its own weight), then given the linear's.
  auto layer =
      std::make_shared<QuantizedLinear>(weight.shape(1), weight.shape(0), false, group_size, bits, mode);
  layer->set_weight(weight);
  if (p.contains("bias")) layer->register_parameter("bias", p.at("bias").leaf());
  return layer;
}

array QuantizedLinear::operator()(const array& x) {
  array y = quantized_product(x);
  return has_param("bias") ? add(y, param("bias")) : y;
}

QuantizedEmbedding::QuantizedEmbedding(int num_embeddings, int dims, std::optional<int> group_size,
                                       std::optional<int> bits, const std::string& mode)
    : QuantizedWeights("QuantizedEmbedding", group_size, bits, mode) {
  if (num_embeddings <= 0 || dims <= 0) fail("num_embeddings and dims must be positive.");
  const float scale = static_cast<float>(std::sqrt(1.0 / dims));
  set_weight(random::normal({num_embeddings, dims}, 0.0f, scale));
  freeze();
}

std::shared_ptr<QuantizedEmbedding> QuantizedEmbedding::from_embedding(const Embedding& embedding,
                                                                       std::optional<int> group_size,
                                                                       std::optional<int> bits,
                                                                       const std::string& mode) {
  const array weight = embedding.parameters().at("weight").leaf();
  auto layer = std::make_shared<QuantizedEmbedding>(weight.shape(0), weight.shape(1), group_size, bits, mode);
  layer->set_weight(weight);
  return layer;
}

array QuantizedEmbedding::operator()(const array& x) {
  if (!issubdtype(x.dtype(), integer)) fail("Expected integer indices; got " + dtype_name(x.dtype()) + ".");
  const array w = take(param("weight"), x, 0), scales = take(param("scales"), x, 0);
  if (!has_param("biases")) return dequantize(w, scales, std::nullopt, group_size(), bits(), mode());
  return dequantize(w, scales, take(param("biases"), x, 0), group_size(), bits(), mode());
}

}  // namespace braid::nn
