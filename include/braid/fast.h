// braid::fast: MLX's mlx/fast.h functions (normalizations, rotary embeddings, attention),
// with MLX's signatures. Each is a composition of braid ops (MLX's fallback formulas), so it is
// differentiable and vectorizable like any other graph; none has a fused kernel yet.
//
// Every function validates its arguments and throws std::invalid_argument("[name] ...") before
// any node exists. Like the ops, every function is thread-safe.
#pragma once

#include <optional>
#include <string>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid::fast {

/// x * rsqrt(mean(x^2, -1) + eps) * weight over the last axis. The mean and the scaling run in
/// float32 (float64 for float64 inputs), then the result is cast to promote(x, weight) and
/// multiplied by the weight ([x.shape(-1)]).
array rms_norm(const array& x, const std::optional<array>& weight, float eps, StreamOrDevice s = {});

/// h * sigmoid(h) for h = rms_norm(x, weight, eps): the normalization followed by SiLU, with
/// rms_norm's checks and dtypes.
array fused_rms_silu(const array& x, const std::optional<array>& weight, float eps, StreamOrDevice s = {});

/// (x - mean) * rsqrt(var + eps) * weight + bias over the last axis, the statistics in float32
/// (float64 for float64 inputs); weight and bias are optional 1-d arrays of x.shape(-1).
array layer_norm(const array& x, const std::optional<array>& weight, const std::optional<array>& bias,
                 float eps, StreamOrDevice s = {});

/// Rotary position embedding of the first `dims` features of x ([B, ..., T, D], ndim >= 3):
/// position t + offset (times `scale`) rotates feature pair i by the angle position *
/// base^(-2i/dims), or position / freqs[i] when `freqs` ([dims / 2]) is given instead of
/// `base` (exactly one of them). `traditional` pairs consecutive features (0, 1), (2, 3), ...;
/// otherwise feature i pairs with i + dims / 2. Angles in float32, rotation in x's dtype.
array rope(const array& x, int dims, bool traditional, std::optional<float> base, float scale, int offset,
           const std::optional<array>& freqs = std::nullopt, StreamOrDevice s = {});
/// As above with an integer offset array: a scalar, or one offset per batch entry ([B]).
array rope(const array& x, int dims, bool traditional, std::optional<float> base, float scale,
           const array& offset, const std::optional<array>& freqs = std::nullopt, StreamOrDevice s = {});

/// softmax(scale * queries @ keys^T + mask) @ values for queries [B, N_q, L_q, D], keys
/// [B, N_kv, L_kv, D] and values [B, N_kv, L_kv, D_v]; N_q must be a multiple of N_kv (grouped
/// query attention: each key/value head serves N_q / N_kv query heads). mask_mode "" uses
/// `mask_arr` when given, "causal" masks key j > query i + L_kv - L_q, "array" takes
/// `mask_arr`: a bool mask (false: not attended) or an additive one, broadcastable to
/// [B, N_q, L_q, L_kv]. `sinks` ([N_q]) adds one logit per head to every softmax and drops it.
/// The result has the promoted dtype of the inputs; the softmax is computed precisely.
array scaled_dot_product_attention(const array& queries, const array& keys, const array& values,
                                   const float scale, const std::string& mask_mode = "",
                                   std::optional<array> mask_arr = {}, const std::optional<array>& sinks = {},
                                   StreamOrDevice s = {});

}  // namespace braid::fast
