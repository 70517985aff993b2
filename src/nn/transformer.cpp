// Multi-head attention and the transformer layers (MLX's transformer.py).
#include <cfloat>
#include <cmath>
#include <stdexcept>

#include "braid/fast.h"
#include "braid/nn/activations.h"
#include "braid/nn/layers.h"
#include "braid/ops.h"

namespace braid::nn {

namespace {

UnaryFunction or_relu(UnaryFunction activation) {
  return activation ? std::move(activation) : UnaryFunction([](const array& x) { return nn::relu(x); });
}

// MLX's finfo(dtype).min.
array lowest_finite(Dtype dtype) {
  switch (dtype) {
    case Dtype::Val::float16: return array(-65504.0f, float16);
    case Dtype::Val::bfloat16: return array(-FLT_MAX, bfloat16);
    case Dtype::Val::float64: return array(-DBL_MAX, float64);
    case Dtype::Val::float32: return array(-FLT_MAX, float32);
    default:
      throw std::invalid_argument(
          "[MultiHeadAttention] create_additive_causal_mask takes a floating dtype, not " +
          dtype_name(dtype) + ".");
  }
}

// [B, L, heads * d] -> [B, heads, L, d].
array split_heads(const array& x, int num_heads) {
  return transpose(unflatten(x, -1, {num_heads, -1}), {0, 2, 1, 3});
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(int dims, int num_heads, std::optional<int> query_input_dims,
                                       std::optional<int> key_input_dims, std::optional<int> value_input_dims,
                                       std::optional<int> value_dims, std::optional<int> value_output_dims,
                                       bool bias)
    : num_heads_(num_heads) {
  if (num_heads <= 0 || dims % num_heads != 0) {
    fail("The input feature dimensions should be divisible by the number of heads (" + std::to_string(dims) +
         " % " + std::to_string(num_heads) + ") != 0");
  }
  const int q_in = query_input_dims.value_or(dims);
  const int k_in = key_input_dims.value_or(dims);
  const int v_in = value_input_dims.value_or(k_in);
  const int v_dims = value_dims.value_or(dims);
  const int v_out = value_output_dims.value_or(dims);
  query_proj_ = register_module("query_proj", std::make_shared<Linear>(q_in, dims, bias));
  key_proj_ = register_module("key_proj", std::make_shared<Linear>(k_in, dims, bias));
  value_proj_ = register_module("value_proj", std::make_shared<Linear>(v_in, v_dims, bias));
  out_proj_ = register_module("out_proj", std::make_shared<Linear>(v_dims, v_out, bias));
}

array MultiHeadAttention::operator()(const array& queries, const array& keys, const array& values,
                                     const std::optional<array>& mask) {
  for (const array* x : {&queries, &keys, &values}) {
    if (x->ndim() != 3) fail("Expected inputs [batch, length, features].");
  }
  array q = split_heads((*query_proj_)(queries), num_heads_);
  array k = split_heads((*key_proj_)(keys), num_heads_);
  array v = split_heads((*value_proj_)(values), num_heads_);
  const float scale = static_cast<float>(std::sqrt(1.0 / q.shape(-1)));
  array out = fast::scaled_dot_product_attention(q, k, v, scale, mask ? "array" : "", mask);
  return (*out_proj_)(flatten(transpose(out, {0, 2, 1, 3}), -2, -1));
}

array MultiHeadAttention::create_additive_causal_mask(int N, Dtype dtype) {
  array lowest = lowest_finite(dtype);
  array indices = arange(N);
  array mask = less(expand_dims(indices, 1), expand_dims(indices, 0));
  return multiply(astype(mask, dtype), lowest);
}

TransformerEncoderLayer::TransformerEncoderLayer(int dims, int num_heads, std::optional<int> mlp_dims,
                                                 float dropout, UnaryFunction activation, bool norm_first)
    : activation_(or_relu(std::move(activation))), norm_first_(norm_first) {
  const int hidden = mlp_dims.value_or(dims * 4);
  attention_ = register_module("attention", std::make_shared<MultiHeadAttention>(dims, num_heads));
  ln1_ = register_module("ln1", std::make_shared<LayerNorm>(dims));
  ln2_ = register_module("ln2", std::make_shared<LayerNorm>(dims));
  linear1_ = register_module("linear1", std::make_shared<Linear>(dims, hidden));
  linear2_ = register_module("linear2", std::make_shared<Linear>(hidden, dims));
  dropout1_ = register_module("dropout1", std::make_shared<Dropout>(dropout));
  dropout2_ = register_module("dropout2", std::make_shared<Dropout>(dropout));
}

array TransformerEncoderLayer::operator()(const array& x_in, const std::optional<array>& mask) {
  array x = x_in;
  if (norm_first_) {
    array y = (*ln1_)(x);
    y = (*dropout1_)((*attention_)(y, y, y, mask));
    x = add(x, y);
    y = (*linear1_)((*ln2_)(x));
    y = (*linear2_)((*dropout2_)(activation_(y)));
    return add(x, y);
  }
  array y = (*dropout1_)((*attention_)(x, x, x, mask));
  x = (*ln1_)(add(x, y));
  y = (*linear2_)((*dropout2_)(activation_((*linear1_)(x))));
  return (*ln2_)(add(x, y));
}

TransformerEncoder::TransformerEncoder(int num_layers, int dims, int num_heads, std::optional<int> mlp_dims,
                                       float dropout, UnaryFunction activation, bool norm_first,
                                       bool checkpoint)
    : checkpoint_(checkpoint) {
  if (num_layers < 0) fail("num_layers must be non-negative.");
  std::vector<std::shared_ptr<TransformerEncoderLayer>> layers;
  for (int i = 0; i < num_layers; ++i) {
    layers.push_back(std::make_shared<TransformerEncoderLayer>(dims, num_heads, mlp_dims, dropout, activation,
                                                               norm_first));
  }
  layers_ = register_modules("layers", std::move(layers));
  ln_ = register_module("ln", std::make_shared<LayerNorm>(dims));
}

array TransformerEncoder::operator()(const array& x_in, const std::optional<array>& mask) {
  array x = x_in;
  for (auto& layer : layers_) {
    if (!checkpoint_) {
      x = (*layer)(x, mask);
      continue;
    }
    // The mask is an input too (as in MLX), so that nothing traced is captured as a constant.
    std::vector<array> inputs = {x};
    if (mask) inputs.push_back(*mask);
    auto call = [layer](const std::vector<array>& in) {
      return std::vector<array>{(*layer)(in[0], in.size() > 1 ? std::optional<array>(in[1]) : std::nullopt)};
    };
    x = checkpoint(*layer, call)(inputs)[0];
  }
  return (*ln_)(x);
}

TransformerDecoderLayer::TransformerDecoderLayer(int dims, int num_heads, std::optional<int> mlp_dims,
                                                 float dropout, UnaryFunction activation, bool norm_first)
    : activation_(or_relu(std::move(activation))), norm_first_(norm_first) {
  const int hidden = mlp_dims.value_or(dims * 4);
  self_attention_ = register_module("self_attention", std::make_shared<MultiHeadAttention>(dims, num_heads));
  cross_attention_ =
      register_module("cross_attention", std::make_shared<MultiHeadAttention>(dims, num_heads));
  ln1_ = register_module("ln1", std::make_shared<LayerNorm>(dims));
  ln2_ = register_module("ln2", std::make_shared<LayerNorm>(dims));
  ln3_ = register_module("ln3", std::make_shared<LayerNorm>(dims));
  linear1_ = register_module("linear1", std::make_shared<Linear>(dims, hidden));
  linear2_ = register_module("linear2", std::make_shared<Linear>(hidden, dims));
  dropout1_ = register_module("dropout1", std::make_shared<Dropout>(dropout));
  dropout2_ = register_module("dropout2", std::make_shared<Dropout>(dropout));
  dropout3_ = register_module("dropout3", std::make_shared<Dropout>(dropout));
}

array TransformerDecoderLayer::operator()(const array& x_in, const array& memory,
                                          const std::optional<array>& x_mask,
                                          const std::optional<array>& memory_mask) {
  array x = x_in;
  if (norm_first_) {
    array y = (*ln1_)(x);
    x = add(x, (*dropout1_)((*self_attention_)(y, y, y, x_mask)));
    y = (*ln2_)(x);
    x = add(x, (*dropout2_)((*cross_attention_)(y, memory, memory, memory_mask)));
    y = (*linear1_)((*ln3_)(x));
    y = (*linear2_)((*dropout3_)(activation_(y)));
    return add(x, y);
  }
  // Post-norm: the cross-attention queries are the normalized residual stream (MLX's fix of
  // ml-explore/mlx#3382; earlier releases passed the self-attention output).
  x = (*ln1_)(add(x, (*dropout1_)((*self_attention_)(x, x, x, x_mask))));
  x = (*ln2_)(add(x, (*dropout2_)((*cross_attention_)(x, memory, memory, memory_mask))));
  array y = (*linear2_)((*dropout3_)(activation_((*linear1_)(x))));
  return (*ln3_)(add(x, y));
}

TransformerDecoder::TransformerDecoder(int num_layers, int dims, int num_heads, std::optional<int> mlp_dims,
                                       float dropout, UnaryFunction activation, bool norm_first,
                                       bool checkpoint)
    : checkpoint_(checkpoint) {
  if (num_layers < 0) fail("num_layers must be non-negative.");
  std::vector<std::shared_ptr<TransformerDecoderLayer>> layers;
  for (int i = 0; i < num_layers; ++i) {
    layers.push_back(std::make_shared<TransformerDecoderLayer>(dims, num_heads, mlp_dims, dropout, activation,
                                                               norm_first));
  }
  layers_ = register_modules("layers", std::move(layers));
  ln_ = register_module("ln", std::make_shared<LayerNorm>(dims));
}

array TransformerDecoder::operator()(const array& x_in, const array& memory,
                                     const std::optional<array>& x_mask,
                                     const std::optional<array>& memory_mask) {
  array x = x_in;
  for (auto& layer : layers_) {
    if (!checkpoint_) {
      x = (*layer)(x, memory, x_mask, memory_mask);
      continue;
    }
    // memory and the masks are inputs, so that gradients reach the encoder through memory.
    std::vector<array> inputs = {x, memory};
    if (x_mask) inputs.push_back(*x_mask);
    if (memory_mask) inputs.push_back(*memory_mask);
    const bool has_x_mask = x_mask.has_value(), has_memory_mask = memory_mask.has_value();
    auto call = [layer, has_x_mask, has_memory_mask](const std::vector<array>& in) {
      size_t next = 2;
      std::optional<array> x_mask_in, memory_mask_in;
      if (has_x_mask) x_mask_in = in[next++];
      if (has_memory_mask) memory_mask_in = in[next++];
      return std::vector<array>{(*layer)(in[0], in[1], x_mask_in, memory_mask_in)};
    };
    x = checkpoint(*layer, call)(inputs)[0];
  }
  return (*ln_)(x);
}

Transformer::Transformer(int dims, int num_heads, int num_encoder_layers, int num_decoder_layers,
                         std::optional<int> mlp_dims, float dropout, UnaryFunction activation,
                         std::shared_ptr<TransformerEncoder> custom_encoder,
                         std::shared_ptr<TransformerDecoder> custom_decoder, bool norm_first,
                         bool checkpoint) {
  encoder_ = register_module("encoder", custom_encoder ? std::move(custom_encoder)
                                                       : std::make_shared<TransformerEncoder>(
                                                             num_encoder_layers, dims, num_heads, mlp_dims,
                                                             dropout, activation, norm_first, checkpoint));
  decoder_ = register_module("decoder", custom_decoder ? std::move(custom_decoder)
                                                       : std::make_shared<TransformerDecoder>(
                                                             num_decoder_layers, dims, num_heads, mlp_dims,
                                                             dropout, activation, norm_first, checkpoint));
}

array Transformer::operator()(const array& src, const array& tgt, const std::optional<array>& src_mask,
                              const std::optional<array>& tgt_mask, const std::optional<array>& memory_mask) {
  array memory = (*encoder_)(src, src_mask);
  return (*decoder_)(tgt, memory, tgt_mask, memory_mask);
}

}  // namespace braid::nn
