// MLX's mlx.nn layers in C++: the same names, argument order, defaults, parameter names and
// shapes, and initialization (drawn from braid::random's process-wide key sequence in MLX's
// order, so after random::seed(s) a single-threaded program gets MLX's initial weights).
//
// Python's `int or tuple` arguments take an nn::Sizes (an int, or one int per spatial axis).
// Layers of one input override operator()(x); the others add their own call operators.
// Bad arguments throw std::invalid_argument("[Layer] ...") in the constructor or when the
// call builds its graph. Threads: as stated in nn/module.h (BatchNorm in training mode writes
// its running statistics and needs exclusive use; every other forward call here is const in
// effect and may run on many threads at once).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "braid/array.h"
#include "braid/nn/module.h"

namespace braid::nn {

/// An int for every spatial axis, or one int per axis (MLX's `int or tuple` arguments).
class Sizes {
 public:
  /// No value: the layer's default (a pooling stride of kernel_size).
  Sizes() = default;
  Sizes(int value) : values_{value}, scalar_(true) {}  // NOLINT(google-explicit-constructor)
  Sizes(std::initializer_list<int> values) : values_(values) {}
  Sizes(std::vector<int> values) : values_(std::move(values)) {}  // NOLINT(google-explicit-constructor)
  /// One value per axis of `n`; throws "[layer] 'what' must be an integer or a tuple
  /// containing n integers" for a list of another length.
  std::vector<int> expand(int n, const std::string& layer, const std::string& what) const;
  bool empty() const { return values_.empty(); }

 private:
  std::vector<int> values_;
  bool scalar_ = false;
};

/// A function of one array (an activation).
using UnaryFunction = std::function<array(const array&)>;

// ---- linear (linear.cpp) ----

/// Returns its input.
class Identity : public Module {
 public:
  Identity() = default;
  std::string name() const override { return "Identity"; }
  array operator()(const array& x) override { return x; }
};

/// How a layer's weight is packed by braid::quantize (MLX's quantized layers' settings).
struct Quantization {
  int group_size;
  int bits;
  std::string mode;
};

/// Shared by Linear and Embedding: a "weight" that to_quantized packs in place (MLX's
/// to_quantized, which returns a quantized layer instead). Packed, "weight" holds
/// braid::quantize's words, with "scales" and (affine mode) "biases", all frozen as in MLX's
/// quantized layers (unfreeze leaves every parameter of the layer frozen, as theirs).
/// group_size and bits default to the mode's (affine: 64 and 4). In place, so that every
/// holder of the layer (a parent's member, a Sequential) calls the quantized form.
class QuantizableWeight : public Module {
 public:
  /// Packs the weight. A second call, or settings the weight cannot take, throw
  /// std::invalid_argument and change nothing.
  QuantizableWeight& to_quantized(std::optional<int> group_size = std::nullopt,
                                  std::optional<int> bits = std::nullopt, const std::string& mode = "affine");
  /// The settings of to_quantized, or nothing for a plain weight.
  const std::optional<Quantization>& quantization() const { return quantization_; }

 protected:
  QuantizableWeight() = default;
  /// Settings given ahead of the weight (the quantized layers', which then pack_weight).
  explicit QuantizableWeight(Quantization settings) : quantization_(std::move(settings)) {}
  /// Registers `weight` packed with `settings` (replacing the arrays there), freezes the
  /// packed arrays and records the settings.
  void pack_weight(const array& weight, const Quantization& settings);
  bool keeps_frozen(const std::string&) const override { return quantization_.has_value(); }
  /// x dequantize(weight)^T by quantized_matmul (packed weight).
  array packed_product(const array& x) const;
  /// Rows x of the packed weight, dequantized.
  array packed_rows(const array& x) const;

 private:
  std::optional<Quantization> quantization_;
};

/// y = x W^T + b with weight [output_dims, input_dims] and bias [output_dims], both drawn from
/// U(-k, k), k = 1 / sqrt(input_dims). Quantized (to_quantized, nn::quantize), it computes
/// x dequantize(weight)^T (+ b) by quantized_matmul and is named "QuantizedLinear".
class Linear : public QuantizableWeight {
 public:
  Linear(int input_dims, int output_dims, bool bias = true);
  std::string name() const override { return quantization() ? "QuantizedLinear" : "Linear"; }
  array operator()(const array& x) override;
  /// MLX's Linear.to_quantized, in place (QuantizableWeight).
  Linear& to_quantized(std::optional<int> group_size = std::nullopt, std::optional<int> bits = std::nullopt,
                       const std::string& mode = "affine") {
    QuantizableWeight::to_quantized(group_size, bits, mode);
    return *this;
  }
};

/// y_i = x1^T W_i x2 + b_i with weight [output_dims, input2_dims, input1_dims] and bias
/// [output_dims], drawn from U(-k, k), k = 1 / sqrt(input1_dims).
class Bilinear : public Module {
 public:
  Bilinear(int input1_dims, int input2_dims, int output_dims, bool bias = true);
  std::string name() const override { return "Bilinear"; }
  array operator()(const array& x1, const array& x2);
};

/// A lookup table: integer x gives weight[x], weight [num_embeddings, dims] drawn from
/// N(0, 1 / dims). Quantized (to_quantized, nn::quantize), the rows looked up are dequantized
/// and as_linear goes through quantized_matmul; it is named "QuantizedEmbedding".
class Embedding : public QuantizableWeight {
 public:
  Embedding(int num_embeddings, int dims);
  std::string name() const override { return quantization() ? "QuantizedEmbedding" : "Embedding"; }
  array operator()(const array& x) override;
  /// x @ weight^T: the table used as an output projection (tied weights).
  array as_linear(const array& x) const;
  /// MLX's Embedding.to_quantized, in place (QuantizableWeight).
  Embedding& to_quantized(std::optional<int> group_size = std::nullopt,
                          std::optional<int> bits = std::nullopt, const std::string& mode = "affine") {
    QuantizableWeight::to_quantized(group_size, bits, mode);
    return *this;
  }
};

// ---- convolution (convolution.cpp) ----
// Channels last, as MLX: input [N, spatial..., C_in], weight [C_out, kernel..., C_in / groups]
// drawn from U(-k, k), k = 1 / sqrt(C_in * prod(kernel)), bias [C_out] of zeros.

/// 1-d convolution over [N, L, C_in].
class Conv1d : public Module {
 public:
  Conv1d(int in_channels, int out_channels, int kernel_size, int stride = 1, int padding = 0,
         int dilation = 1, int groups = 1, bool bias = true);
  std::string name() const override { return "Conv1d"; }
  array operator()(const array& x) override;

 private:
  int stride_, padding_, dilation_, groups_;
};

/// 2-d convolution over [N, H, W, C_in].
class Conv2d : public Module {
 public:
  Conv2d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride = 1, Sizes padding = 0,
         Sizes dilation = 1, int groups = 1, bool bias = true);
  std::string name() const override { return "Conv2d"; }
  array operator()(const array& x) override;

 private:
  std::vector<int> stride_, padding_, dilation_;
  int groups_;
};

/// 3-d convolution over [N, D, H, W, C_in] (no groups, as MLX's Conv3d).
class Conv3d : public Module {
 public:
  Conv3d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride = 1, Sizes padding = 0,
         Sizes dilation = 1, bool bias = true);
  std::string name() const override { return "Conv3d"; }
  array operator()(const array& x) override;

 private:
  std::vector<int> stride_, padding_, dilation_;
};

/// Transposed 1-d convolution; weight [C_out, kernel, C_in].
class ConvTranspose1d : public Module {
 public:
  ConvTranspose1d(int in_channels, int out_channels, int kernel_size, int stride = 1, int padding = 0,
                  int dilation = 1, int output_padding = 0, bool bias = true);
  std::string name() const override { return "ConvTranspose1d"; }
  array operator()(const array& x) override;

 private:
  int stride_, padding_, dilation_, output_padding_;
};

/// Transposed 2-d convolution; weight [C_out, kH, kW, C_in].
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride = 1, Sizes padding = 0,
                  Sizes dilation = 1, Sizes output_padding = 0, bool bias = true);
  std::string name() const override { return "ConvTranspose2d"; }
  array operator()(const array& x) override;

 private:
  std::vector<int> stride_, padding_, dilation_, output_padding_;
};

/// Transposed 3-d convolution; weight [C_out, kD, kH, kW, C_in].
class ConvTranspose3d : public Module {
 public:
  ConvTranspose3d(int in_channels, int out_channels, Sizes kernel_size, Sizes stride = 1, Sizes padding = 0,
                  Sizes dilation = 1, Sizes output_padding = 0, bool bias = true);
  std::string name() const override { return "ConvTranspose3d"; }
  array operator()(const array& x) override;

 private:
  std::vector<int> stride_, padding_, dilation_, output_padding_;
};

// ---- normalization (normalization.cpp) ----
// Affine layers hold weight (ones) and bias (zeros) of [dims].

/// Normalizes over the last axis (fast::layer_norm); with `affine`, weight and (with `bias`)
/// a bias.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int dims, float eps = 1e-5f, bool affine = true, bool bias = true);
  std::string name() const override { return "LayerNorm"; }
  array operator()(const array& x) override;

 private:
  float eps_;
};

/// x / sqrt(mean(x^2) + eps) * weight over the last axis (fast::rms_norm).
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int dims, float eps = 1e-5f);
  std::string name() const override { return "RMSNorm"; }
  array operator()(const array& x) override;

 private:
  float eps_;
};

/// Normalizes [N, ..., dims] over the spatial axes and each of num_groups groups of features:
/// MLX's grouping (feature f in group f % num_groups) or, with pytorch_compatible, PyTorch's
/// (consecutive features). Parameters in MLX's order: bias, then weight.
class GroupNorm : public Module {
 public:
  GroupNorm(int num_groups, int dims, float eps = 1e-5f, bool affine = true, bool pytorch_compatible = false);
  std::string name() const override { return "GroupNorm"; }
  array operator()(const array& x) override;

 private:
  int num_groups_, dims_;
  float eps_;
  bool pytorch_compatible_;
};

/// Batch normalization of [N, C], [N, L, C] or [N, H, W, C] over every axis but the last. In
/// training mode it normalizes by the batch statistics and, with track_running_stats, updates
/// running_mean and running_var (momentum-weighted; frozen, so never trained); in eval mode
/// it uses them. A training-mode call writes the module: it needs exclusive use.
class BatchNorm : public Module {
 public:
  explicit BatchNorm(int num_features, float eps = 1e-5f, float momentum = 0.1f, bool affine = true,
                     bool track_running_stats = true);
  std::string name() const override { return "BatchNorm"; }
  array operator()(const array& x) override;
  /// Module::unfreeze, then freezes the running statistics again (MLX's override). A parent's
  /// unfreeze does not come through here (Module::unfreeze is not virtual).
  BatchNorm& unfreeze(bool recurse = true, const std::vector<std::string>& keys = {}, bool strict = false);

 private:
  int num_features_;
  float eps_, momentum_;
  bool track_running_stats_;
};

/// Normalizes [N, ..., C] over the spatial axes of each sample and channel; weight and bias
/// only with `affine` (default false).
class InstanceNorm : public Module {
 public:
  explicit InstanceNorm(int dims, float eps = 1e-5f, bool affine = false);
  std::string name() const override { return "InstanceNorm"; }
  array operator()(const array& x) override;

 private:
  float eps_;
};

// ---- dropout (dropout.cpp) ----
// In training mode elements (or channels) are zeroed with probability p, the rest scaled by
// 1 / (1 - p), with masks from random::bernoulli; in eval mode, or for p = 0, the identity.

/// Element-wise dropout; p in [0, 1).
class Dropout : public Module {
 public:
  explicit Dropout(float p = 0.5f);
  std::string name() const override { return "Dropout"; }
  array operator()(const array& x) override;

 private:
  float p_1_;  // the probability of keeping an element
};

/// Drops whole channels of [N, H, W, C] or [H, W, C].
class Dropout2d : public Module {
 public:
  explicit Dropout2d(float p = 0.5f);
  std::string name() const override { return "Dropout2d"; }
  array operator()(const array& x) override;

 private:
  float p_1_;
};

/// Drops whole channels of [N, D, H, W, C] or [D, H, W, C].
class Dropout3d : public Module {
 public:
  explicit Dropout3d(float p = 0.5f);
  std::string name() const override { return "Dropout3d"; }
  array operator()(const array& x) override;

 private:
  float p_1_;
};

// ---- positional encodings (positional_encoding.cpp) ----

/// Rotary positional encoding of the first `dims` features (fast::rope).
class RoPE : public Module {
 public:
  explicit RoPE(int dims, bool traditional = false, float base = 10000.0f, float scale = 1.0f);
  std::string name() const override { return "RoPE"; }
  array operator()(const array& x) override { return (*this)(x, 0); }
  array operator()(const array& x, int offset);

 private:
  int dims_;
  bool traditional_;
  float base_, scale_;
};

/// Sinusoidal embeddings of x (x[..., None] times dims / 2 frequencies from min_freq to
/// max_freq, geometrically spaced): [sin, cos] (or [cos, sin]) times `scale` (default
/// sqrt(2 / dims)). Holds no parameters.
class SinusoidalPositionalEncoding : public Module {
 public:
  explicit SinusoidalPositionalEncoding(int dims, float min_freq = 0.0001f, float max_freq = 1.0f,
                                        std::optional<float> scale = std::nullopt, bool cos_first = false,
                                        bool full_turns = false);
  std::string name() const override { return "SinusoidalPositionalEncoding"; }
  array operator()(const array& x) override;

 private:
  array sigmas_;  // a constant, not a parameter
  float scale_;
  bool cos_first_;
};

/// Attention with linear biases: adds -slope_h * |i - j| to the attention scores
/// [B, H, T_q, T_k] of head h, slopes (2^8)^(-h / H) for h = 1..H, plus `mask` if given.
/// Holds no parameters. MLX keeps the last bias matrix in a class-wide cache; braid builds it
/// in each call (a few lazy ops), so calls from many threads share nothing.
class ALiBi : public Module {
 public:
  ALiBi() = default;
  std::string name() const override { return "ALiBi"; }
  array operator()(const array& attention_scores) override { return (*this)(attention_scores, 0); }
  array operator()(const array& attention_scores, int offset,
                   const std::optional<array>& mask = std::nullopt);
  /// -|i - j| * slope_h of shape [1, H, q_sequence_length - offset, k_sequence_length], for
  /// queries at positions offset .. q_sequence_length - 1.
  static array create_alibi_matrix(int q_sequence_length, int k_sequence_length, int num_heads, int offset,
                                   Dtype dtype = float32);
  /// The slopes [H, 1, 1] (float32).
  static array create_alibi_slope(int num_heads);
};

// ---- upsampling (upsample.cpp) ----

/// Spatial upsampling of [N, spatial..., C] by `scale_factor` per spatial axis (one value for
/// every axis, or one each): mode "nearest", "linear" (bi-, trilinear, ...) or "cubic"
/// (a = -0.75), the last two with or without align_corners. `antialias` widens the linear and
/// cubic kernels by the reduction factor when downsampling, as PyTorch's antialias=True (the
/// cubic kernel then takes a = -0.5, also when upsampling); nearest ignores it. Holds no
/// parameters.
class Upsample : public Module {
 public:
  explicit Upsample(float scale_factor, const std::string& mode = "nearest", bool align_corners = false,
                    bool antialias = false);
  explicit Upsample(std::vector<float> scale_factor, const std::string& mode = "nearest",
                    bool align_corners = false, bool antialias = false);
  std::string name() const override { return "Upsample"; }
  array operator()(const array& x) override;

 private:
  std::vector<float> scale_factor_;  // one value: every spatial axis
  bool per_axis_;
  std::string mode_;
  bool align_corners_;
  bool antialias_;
};

// ---- attention and transformers (transformer.cpp) ----

/// Multi-head attention: projections query_proj, key_proj, value_proj, out_proj (Linear,
/// without bias by default), then fast::scaled_dot_product_attention with scale
/// 1 / sqrt(head dims). Inputs [B, L, dims]; `mask` is additive (or bool) and broadcastable
/// to [B, num_heads, L_q, L_kv].
class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(int dims, int num_heads, std::optional<int> query_input_dims = std::nullopt,
                     std::optional<int> key_input_dims = std::nullopt,
                     std::optional<int> value_input_dims = std::nullopt,
                     std::optional<int> value_dims = std::nullopt,
                     std::optional<int> value_output_dims = std::nullopt, bool bias = false);
  std::string name() const override { return "MultiHeadAttention"; }
  array operator()(const array& queries, const array& keys, const array& values,
                   const std::optional<array>& mask = std::nullopt);
  /// [N, N] of `dtype`: 0 where key j <= query i, the dtype's lowest finite value elsewhere.
  static array create_additive_causal_mask(int N, Dtype dtype = float32);

 private:
  int num_heads_;
  std::shared_ptr<Linear> query_proj_, key_proj_, value_proj_, out_proj_;
};

/// Self-attention and MLP block (children attention, ln1, ln2, linear1, linear2, dropout1,
/// dropout2); mlp_dims defaults to 4 * dims; an empty activation is relu (MLX's default).
class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(int dims, int num_heads, std::optional<int> mlp_dims = std::nullopt,
                          float dropout = 0.0f, UnaryFunction activation = {}, bool norm_first = true);
  std::string name() const override { return "TransformerEncoderLayer"; }
  array operator()(const array& x) override { return (*this)(x, std::nullopt); }
  array operator()(const array& x, const std::optional<array>& mask);

 private:
  std::shared_ptr<MultiHeadAttention> attention_;
  std::shared_ptr<LayerNorm> ln1_, ln2_;
  std::shared_ptr<Linear> linear1_, linear2_;
  std::shared_ptr<Dropout> dropout1_, dropout2_;
  UnaryFunction activation_;
  bool norm_first_;
};

/// num_layers encoder layers ("layers.i"), then a LayerNorm ("ln"). With `checkpoint`, each
/// layer runs under nn::checkpoint: its intermediates are computed again in the backward pass
/// instead of kept (less memory, more compute; the same gradients, unless dropout draws new
/// masks in the recomputation).
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(int num_layers, int dims, int num_heads, std::optional<int> mlp_dims = std::nullopt,
                     float dropout = 0.0f, UnaryFunction activation = {}, bool norm_first = true,
                     bool checkpoint = false);
  std::string name() const override { return "TransformerEncoder"; }
  array operator()(const array& x) override { return (*this)(x, std::nullopt); }
  virtual array operator()(const array& x, const std::optional<array>& mask);

 private:
  std::vector<std::shared_ptr<TransformerEncoderLayer>> layers_;
  std::shared_ptr<LayerNorm> ln_;
  bool checkpoint_;
};

/// Self-attention, cross-attention over `memory` and MLP block (children self_attention,
/// cross_attention, ln1, ln2, ln3, linear1, linear2, dropout1, dropout2, dropout3).
class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer(int dims, int num_heads, std::optional<int> mlp_dims = std::nullopt,
                          float dropout = 0.0f, UnaryFunction activation = {}, bool norm_first = true);
  std::string name() const override { return "TransformerDecoderLayer"; }
  array operator()(const array& x, const array& memory, const std::optional<array>& x_mask,
                   const std::optional<array>& memory_mask);

 private:
  std::shared_ptr<MultiHeadAttention> self_attention_, cross_attention_;
  std::shared_ptr<LayerNorm> ln1_, ln2_, ln3_;
  std::shared_ptr<Linear> linear1_, linear2_;
  std::shared_ptr<Dropout> dropout1_, dropout2_, dropout3_;
  UnaryFunction activation_;
  bool norm_first_;
};

/// num_layers decoder layers ("layers.i"), then a LayerNorm ("ln"); `checkpoint` as in
/// TransformerEncoder.
class TransformerDecoder : public Module {
 public:
  TransformerDecoder(int num_layers, int dims, int num_heads, std::optional<int> mlp_dims = std::nullopt,
                     float dropout = 0.0f, UnaryFunction activation = {}, bool norm_first = true,
                     bool checkpoint = false);
  std::string name() const override { return "TransformerDecoder"; }
  virtual array operator()(const array& x, const array& memory, const std::optional<array>& x_mask,
                           const std::optional<array>& memory_mask);

 private:
  std::vector<std::shared_ptr<TransformerDecoderLayer>> layers_;
  std::shared_ptr<LayerNorm> ln_;
  bool checkpoint_;
};

/// Encoder ("encoder") and decoder ("decoder"), or the given custom ones (subclasses that
/// override their call operators); `checkpoint` goes to the encoder and decoder built here.
class Transformer : public Module {
 public:
  Transformer(int dims = 512, int num_heads = 8, int num_encoder_layers = 6, int num_decoder_layers = 6,
              std::optional<int> mlp_dims = std::nullopt, float dropout = 0.0f, UnaryFunction activation = {},
              std::shared_ptr<TransformerEncoder> custom_encoder = nullptr,
              std::shared_ptr<TransformerDecoder> custom_decoder = nullptr, bool norm_first = true,
              bool checkpoint = false);
  std::string name() const override { return "Transformer"; }
  array operator()(const array& src, const array& tgt, const std::optional<array>& src_mask,
                   const std::optional<array>& tgt_mask, const std::optional<array>& memory_mask);

 private:
  std::shared_ptr<TransformerEncoder> encoder_;
  std::shared_ptr<TransformerDecoder> decoder_;
};

// ---- recurrent layers (recurrent.cpp) ----
// Sequences [N, L, input_size] or [L, input_size]; each layer returns the hidden state of
// every step, [..., L, hidden_size]. Weights drawn from U(-k, k), k = 1 / sqrt(hidden_size),
// in MLX's order. An optional initial state is [hidden_size] or [N, hidden_size] and
// broadcasts against the steps, as in MLX.

/// Elman recurrence h_{t+1} = f(x_t Wxh^T + h_t Whh^T + bias) with parameters Wxh
/// [hidden_size, input_size], Whh [hidden_size, hidden_size] and bias [hidden_size];
/// `nonlinearity` f defaults to tanh.
class RNN : public Module {
 public:
  RNN(int input_size, int hidden_size, bool bias = true, UnaryFunction nonlinearity = {});
  std::string name() const override { return "RNN"; }
  array operator()(const array& x) override { return (*this)(x, std::nullopt); }
  array operator()(const array& x, const std::optional<array>& hidden);

 private:
  int hidden_size_;
  UnaryFunction nonlinearity_;
};

/// Gated recurrent unit: reset and update gates r, z = sigmoid(x Wx_rz^T + b_rz + h Wh_rz^T),
/// candidate n = tanh(x Wx_n^T + b_n + r * (h Wh_n^T + bhn)), and h' = (1 - z) n + z h.
/// Parameters Wx [3 hidden, input], Wh [3 hidden, hidden], b [3 hidden], bhn [hidden].
class GRU : public Module {
 public:
  GRU(int input_size, int hidden_size, bool bias = true);
  std::string name() const override { return "GRU"; }
  array operator()(const array& x) override { return (*this)(x, std::nullopt); }
  array operator()(const array& x, const std::optional<array>& hidden);

 private:
  int hidden_size_;
};

/// Long short-term memory: x Wx^T + h Wh^T + bias split along its 4 hidden features into
/// i, f, g, o; gates i, f, o = sigmoid(.), candidate g = tanh(.), c' = f c + i g and
/// h' = o tanh(c'). Parameters Wx [4 hidden, input], Wh [4 hidden, hidden], bias [4 hidden].
/// The call returns the hidden and the cell states of every step; the one-array operator
/// returns the hidden states.
class LSTM : public Module {
 public:
  LSTM(int input_size, int hidden_size, bool bias = true);
  std::string name() const override { return "LSTM"; }
  array operator()(const array& x) override { return (*this)(x, std::nullopt, std::nullopt).first; }
  std::pair<array, array> operator()(const array& x, const std::optional<array>& hidden,
                                     const std::optional<array>& cell = std::nullopt);

 private:
  int hidden_size_;
};

// ---- quantized layers (quantized.cpp) ----
// Weights packed by braid::quantize along their last axis: "weight" (uint32 words), "scales"
// and, in the affine mode, "biases". group_size and bits default to the mode's (affine: 64
// and 4). The parameters start frozen, as MLX's. nn::quantize (below) quantizes a built
// model's Linear and Embedding layers in place instead of swapping them for these classes:
// braid's C++ layers call their children through typed members, which a swap would miss.

/// Shared by the quantized layers: a QuantizableWeight built quantized (its settings fixed
/// first, then its weight packed), with its group size, bits and mode.
class QuantizedWeights : public QuantizableWeight {
 public:
  int group_size() const { return quantization()->group_size; }
  int bits() const { return quantization()->bits; }
  const std::string& mode() const { return quantization()->mode; }

 protected:
  /// Throws std::invalid_argument("[layer] Unsupported quantization mode ...") for a mode
  /// other than affine, mxfp4, nvfp4 and mxfp8.
  QuantizedWeights(const std::string& layer, std::optional<int> group_size, std::optional<int> bits,
                   const std::string& mode);
  /// Quantizes `weight` into the packed arrays, replacing those there.
  void set_weight(const array& weight) { pack_weight(weight, *quantization()); }
};

/// MLX's nn.quantize: calls to_quantized(group_size, bits, mode) on every Linear and Embedding
/// of `model` (itself included) that is not quantized yet and that `class_predicate(path,
/// module)` accepts (by default, all; the path is the dotted name, "" for the model). A
/// module the predicate accepts that cannot be quantized (not a Linear or Embedding, or a
/// weight the settings do not fit) throws std::invalid_argument before any layer changes.
/// A layer held in several places is asked about at each of its paths and quantized (for all
/// of its holders, being quantized in place) when any of them is accepted.
void quantize(Module& model, std::optional<int> group_size = std::nullopt,
              std::optional<int> bits = std::nullopt, const std::string& mode = "affine",
              const std::function<bool(const std::string&, const Module&)>& class_predicate = {});

/// Linear with a quantized weight: y = x dequantize(weight)^T (+ bias).
class QuantizedLinear : public QuantizedWeights {
 public:
  QuantizedLinear(int input_dims, int output_dims, bool bias = true,
                  std::optional<int> group_size = std::nullopt, std::optional<int> bits = std::nullopt,
                  const std::string& mode = "affine");
  /// The quantized form of `linear` (its weight quantized, its bias kept).
  static std::shared_ptr<QuantizedLinear> from_linear(const Linear& linear,
                                                      std::optional<int> group_size = std::nullopt,
                                                      std::optional<int> bits = std::nullopt,
                                                      const std::string& mode = "affine");
  std::string name() const override { return "QuantizedLinear"; }
  array operator()(const array& x) override;
};

/// Embedding with a quantized table: rows of weight, scales and biases gathered, then
/// dequantized.
class QuantizedEmbedding : public QuantizedWeights {
 public:
  QuantizedEmbedding(int num_embeddings, int dims, std::optional<int> group_size = std::nullopt,
                     std::optional<int> bits = std::nullopt, const std::string& mode = "affine");
  /// The quantized form of `embedding`.
  static std::shared_ptr<QuantizedEmbedding> from_embedding(const Embedding& embedding,
                                                            std::optional<int> group_size = std::nullopt,
                                                            std::optional<int> bits = std::nullopt,
                                                            const std::string& mode = "affine");
  std::string name() const override { return "QuantizedEmbedding"; }
  array operator()(const array& x) override;
  /// x @ dequantize(weight)^T: the table used as an output projection.
  array as_linear(const array& x) const { return packed_product(x); }
};

// ---- containers (containers.cpp) ----

/// Calls its layers in order, each on the previous one's output; the layers are children
/// "layers.0", "layers.1", ... A plain function (an activation) becomes a layer without
/// parameters, keeping MLX's numbering of the others.
class Sequential : public Module {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Module>> layers);
  explicit Sequential(std::initializer_list<std::shared_ptr<Module>> layers)
      : Sequential(std::vector<std::shared_ptr<Module>>(layers)) {}
  template <class... Layers>
  requires(sizeof...(Layers) > 0 &&
           ((std::is_convertible_v<Layers, std::shared_ptr<Module>> ||
             std::is_convertible_v<Layers, UnaryFunction>)&&...)) explicit Sequential(Layers&&... layers)
      : Sequential(std::vector<std::shared_ptr<Module>>{as_layer(std::forward<Layers>(layers))...}) {}
  std::string name() const override { return "Sequential"; }
  array operator()(const array& x) override;
  const std::vector<std::shared_ptr<Module>>& layers() const { return layers_; }

 private:
  static std::shared_ptr<Module> as_layer(std::shared_ptr<Module> layer) { return layer; }
  static std::shared_ptr<Module> as_layer(UnaryFunction fn);
  template <class L>
  requires(!std::is_convertible_v<L, std::shared_ptr<Module>> &&
           std::is_convertible_v<L, UnaryFunction>) static std::shared_ptr<Module> as_layer(L&& fn) {
    return as_layer(UnaryFunction(std::forward<L>(fn)));
  }
  std::vector<std::shared_ptr<Module>> layers_;
};

// ---- pooling (pooling.cpp) ----
// Windows slide over the spatial axes of [N, spatial..., C]; an empty stride means
// kernel_size (MLX's None); `padding` on both sides of each spatial axis (-inf for max
// pooling, 0 for average pooling, which counts the zeros).

/// Shared by the pooling layers: the window geometry and the reduction.
class Pool : public Module {
 public:
  array operator()(const array& x) override;

 protected:
  Pool(bool max, int spatial_dims, const Sizes& kernel_size, const Sizes& stride, const Sizes& padding);
  static std::string layer_name(bool max, int spatial_dims);

 private:
  bool max_;
  std::vector<int> kernel_size_, stride_, padding_;
};

/// Max (kMax) or average pooling over kDims spatial axes.
template <bool kMax, int kDims>
class PoolLayer : public Pool {
 public:
  explicit PoolLayer(Sizes kernel_size, Sizes stride = {}, Sizes padding = 0)
      : Pool(kMax, kDims, kernel_size, stride, padding) {}
  // A braced list of sizes is the kernel size (not a copy of another layer).
  explicit PoolLayer(std::initializer_list<int> kernel_size, Sizes stride = {}, Sizes padding = 0)
      : PoolLayer(Sizes(kernel_size), std::move(stride), std::move(padding)) {}
  std::string name() const override { return layer_name(kMax, kDims); }
};

/// Max over windows of [N, L, C].
using MaxPool1d = PoolLayer<true, 1>;
/// Mean over windows of [N, L, C].
using AvgPool1d = PoolLayer<false, 1>;
/// Max over windows of [N, H, W, C].
using MaxPool2d = PoolLayer<true, 2>;
/// Mean over windows of [N, H, W, C].
using AvgPool2d = PoolLayer<false, 2>;
/// Max over windows of [N, D, H, W, C].
using MaxPool3d = PoolLayer<true, 3>;
/// Mean over windows of [N, D, H, W, C].
using AvgPool3d = PoolLayer<false, 3>;

}  // namespace braid::nn
