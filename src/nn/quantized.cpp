// Quantized layers (MLX's quantized.py): QuantizedLinear and QuantizedEmbedding over
// braid::quantize's packed layout.
#include <cmath>
#include <set>
#include <stdexcept>

#include "braid/nn/layers.h"
#include "braid/ops.h"
#include "braid/random.h"
#include "nn/scalars.h"

namespace braid::nn {

namespace {

// The settings with the mode's default group size and bits (MLX's table).
Quantization settings(const std::string& layer, std::optional<int> group_size, std::optional<int> bits,
                      const std::string& mode) {
  std::pair<int, int> defaults;
  if (mode == "affine") {
    defaults = {64, 4};
  } else if (mode == "mxfp4") {
    defaults = {32, 4};
  } else if (mode == "nvfp4") {
    defaults = {16, 4};
  } else if (mode == "mxfp8") {
    defaults = {32, 8};
  } else {
    throw std::invalid_argument("[" + layer + "] Unsupported quantization mode '" + mode +
                                "'; expected affine, mxfp4, nvfp4 or mxfp8.");
  }
  return {group_size.value_or(defaults.first), bits.value_or(defaults.second), mode};
}

std::vector<array> pack(const array& weight, const Quantization& q) {
  return quantize(weight, q.group_size, q.bits, q.mode);
}

// The packed arrays of `weight` under their parameter names (no "biases" in the fp modes).
std::vector<std::pair<std::string, array>> packed_parameters(const array& weight, const Quantization& q) {
  const std::vector<array> packed = pack(weight, q);
  std::vector<std::pair<std::string, array>> named{{"weight", packed[0]}, {"scales", packed[1]}};
  if (packed.size() > 2) named.emplace_back("biases", packed[2]);
  return named;
}

const std::vector<std::string> kPacked = {"weight", "scales", "biases"};

}  // namespace

QuantizedWeights::QuantizedWeights(const std::string& layer, std::optional<int> group_size,
                                   std::optional<int> bits, const std::string& mode)
    : QuantizableWeight(settings(layer, group_size, bits, mode)) {}

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
  if (linear.quantization()) throw std::invalid_argument("[QuantizedLinear] The layer is quantized already.");
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
  array y = packed_product(x);
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
  if (embedding.quantization())
    throw std::invalid_argument("[QuantizedEmbedding] The layer is quantized already.");
  const array weight = embedding.parameters().at("weight").leaf();
  auto layer = std::make_shared<QuantizedEmbedding>(weight.shape(0), weight.shape(1), group_size, bits, mode);
  layer->set_weight(weight);
  return layer;
}

array QuantizedEmbedding::operator()(const array& x) {
  if (!issubdtype(x.dtype(), integer)) fail("Expected integer indices; got " + dtype_name(x.dtype()) + ".");
  return packed_rows(x);
}

// ---- Linear and Embedding quantized in place ----

QuantizableWeight& QuantizableWeight::to_quantized(std::optional<int> group_size, std::optional<int> bits,
                                                   const std::string& mode) {
  if (quantization_) fail("The layer is quantized already.");
  pack_weight(param("weight"), settings(name(), group_size, bits, mode));
  return *this;
}

void QuantizableWeight::pack_weight(const array& weight, const Quantization& settings) {
  // Packed first: settings the weight cannot take throw before any change.
  for (auto& [key, value] : packed_parameters(weight, settings)) register_parameter(key, value);
  freeze(false, kPacked);
  quantization_ = settings;
}

array QuantizableWeight::packed_product(const array& x) const {
  const Quantization& q = *quantization_;
  std::optional<array> biases;
  if (has_param("biases")) biases = param("biases");
  return quantized_matmul(x, param("weight"), param("scales"), biases, true, q.group_size, q.bits, q.mode);
}

array QuantizableWeight::packed_rows(const array& x) const {
  const Quantization& q = *quantization_;
  std::optional<array> biases;
  if (has_param("biases")) biases = take(param("biases"), x, 0);
  return dequantize(take(param("weight"), x, 0), take(param("scales"), x, 0), biases, q.group_size, q.bits,
                    q.mode);
}

void quantize(Module& model, std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
              const std::function<bool(const std::string&, const Module&)>& class_predicate) {
  std::vector<QuantizableWeight*> chosen;
  std::set<const Module*> seen;  // a layer held in two places (any of them chosen) changes once
  for (auto& [path, module] : model.named_modules()) {
    if (!module->children().empty()) continue;  // leaves only, as MLX
    auto* layer = dynamic_cast<QuantizableWeight*>(module);
    const bool plain = layer && !layer->quantization();
    if (class_predicate ? !class_predicate(path, *module) : !plain) continue;
    if (!plain) {
      throw std::invalid_argument("[quantize] Unable to quantize model of type " + module->name() + " at '" +
                                  path + "'.");
    }
    if (seen.insert(module).second) chosen.push_back(layer);
  }
  // Every weight is packed once first (lazily: only the checks run), so settings one of them
  // cannot take throw before any layer changes.
  for (QuantizableWeight* layer : chosen) {
    pack(layer->parameters().at("weight").leaf(), settings("quantize", group_size, bits, mode));
  }
  for (QuantizableWeight* layer : chosen) layer->to_quantized(group_size, bits, mode);
}

}  // namespace braid::nn
