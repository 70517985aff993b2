// braid::fast as compositions of ops: MLX's fallback formulas, which its fused kernels match.
// Normalization statistics run in float32 for half inputs (as MLX's kernels accumulate) and in
// float64 for float64 ones, where MLX would round them to float32.
#include "braid/fast.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "braid/ops.h"

namespace braid::fast {

namespace {

std::string shape_string(const Shape& shape) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << (shape.size() == 1 ? ",)" : ")");
  return out.str();
}

[[noreturn]] void fail(const std::string& op, const std::string& what) {
  throw std::invalid_argument("[" + op + "] " + what);
}

// A 1-d weight or bias of x's last dimension.
void check_feature_array(const std::string& op, const char* what, const array& x, const array& a) {
  if (a.ndim() != 1) {
    fail(op,
         std::string(what) + " must have 1 dimension but has " + std::to_string(a.ndim()) + " dimensions.");
  }
  if (a.shape(0) != x.shape(-1)) {
    fail(op, std::string(what) + " must have the same size as the last dimension of x (" +
                 std::to_string(x.shape(-1)) + ") but has " + std::to_string(a.shape(0)) + " elements.");
  }
}

// The dtype the statistics are computed in: float32, or float64 when the result is float64.
Dtype accumulation_type(Dtype out_type) { return out_type == float64 ? float64 : float32; }

// The score of a key that a bool mask (or the causal mask) hides: -inf, as MLX's newest (its
// test_fully_masked), so a query that may see no key gives NaN, as an additive -inf row does.
array masked_score(Dtype dtype) { return array(-std::numeric_limits<double>::infinity(), dtype); }

}  // namespace

array rms_norm(const array& x, const std::optional<array>& weight, float eps, StreamOrDevice s) {
  if (x.ndim() == 0)
    fail("rms_norm", "Input must have at least 1 dimension but got input with 0 dimensions.");
  if (weight) check_feature_array("rms_norm", "weight", x, *weight);
  const Dtype out_type = weight ? promote_types(x.dtype(), weight->dtype()) : x.dtype();
  if (!issubdtype(out_type, floating))
    fail("rms_norm", "Received unsupported type " + dtype_name(out_type) + ".");
  const Dtype acc = accumulation_type(out_type);
  array xf = astype(x, acc, s);
  array n = rsqrt(add(mean(square(xf, s), -1, true, s), array(eps, acc), s), s);
  array y = astype(multiply(xf, n, s), out_type, s);
  return weight ? multiply(y, astype(*weight, out_type, s), s) : y;
}

array fused_rms_silu(const array& x, const std::optional<array>& weight, float eps, StreamOrDevice s) {
  const array h = rms_norm(x, weight, eps, s);
  return multiply(h, sigmoid(h, s), s);
}

array layer_norm(const array& x, const std::optional<array>& weight, const std::optional<array>& bias,
                 float eps, StreamOrDevice s) {
  if (x.ndim() == 0)
    fail("layer_norm", "Input must have at least 1 dimension but got input with 0 dimensions.");
  if (weight) check_feature_array("layer_norm", "weight", x, *weight);
  if (bias) check_feature_array("layer_norm", "bias", x, *bias);
  // As MLX: a bias without a weight takes no part in the result's dtype.
  Dtype out_type = x.dtype();
  if (weight) {
    out_type = promote_types(out_type, weight->dtype());
    if (bias) out_type = promote_types(out_type, bias->dtype());
  }
  if (!issubdtype(out_type, floating))
    fail("layer_norm", "Received unsupported type " + dtype_name(out_type) + ".");
  const Dtype acc = accumulation_type(out_type);
  array xf = astype(x, acc, s);
  array centered = subtract(xf, mean(xf, -1, true, s), s);
  array variance = mean(square(centered, s), -1, true, s);
  array y = astype(multiply(centered, rsqrt(add(variance, array(eps, acc), s), s), s), out_type, s);
  if (weight) y = multiply(y, astype(*weight, out_type, s), s);
  if (bias) y = add(y, astype(*bias, out_type, s), s);
  return y;
}

namespace {

// x rotated by the angles of `positions` ([T] or [B, 1, T]) times `inv_freqs` ([dims / 2]),
// computed in float32 (float64 for float64 inputs) and rounded to x's dtype once, as MLX's
// kernels do: half-precision inputs would otherwise round cos, sin and each product.
array rotate(const array& x4, int dims, bool traditional, const array& positions, const array& inv_freqs,
             const StreamOrDevice& s) {
  const int B = x4.shape(0), N = x4.shape(1), T = x4.shape(2), D = x4.shape(3);
  const int half = dims / 2;
  const Dtype out_type = x4.dtype();
  const Dtype ct = out_type == float64 ? float64 : float32;
  array theta = multiply(expand_dims(positions, -1, s), inv_freqs, s);
  array coss = astype(cos(theta, s), ct, s);
  array sins = astype(sin(theta, s), ct, s);
  auto part = [&](const Shape& start, const Shape& stop, const Shape& step) {
    return astype(slice(x4, start, stop, step, s), ct, s);
  };
  std::vector<array> parts;
  if (traditional) {
    array x1 = part({0, 0, 0, 0}, {B, N, T, dims}, {1, 1, 1, 2});
    array x2 = part({0, 0, 0, 1}, {B, N, T, dims}, {1, 1, 1, 2});
    array r1 = subtract(multiply(x1, coss, s), multiply(x2, sins, s), s);
    array r2 = add(multiply(x1, sins, s), multiply(x2, coss, s), s);
    parts.push_back(astype(reshape(stack({r1, r2}, -1, s), {B, N, T, dims}, s), out_type, s));
  } else {
    array x1 = part({0, 0, 0, 0}, {B, N, T, half}, {1, 1, 1, 1});
    array x2 = part({0, 0, 0, half}, {B, N, T, dims}, {1, 1, 1, 1});
    parts.push_back(astype(subtract(multiply(x1, coss, s), multiply(x2, sins, s), s), out_type, s));
    parts.push_back(astype(add(multiply(x1, sins, s), multiply(x2, coss, s), s), out_type, s));
  }
  if (dims < D) parts.push_back(slice(x4, {0, 0, 0, dims}, {B, N, T, D}, s));
  return parts.size() == 1 ? parts[0] : concatenate(parts, -1, s);
}

}  // namespace

array rope(const array& x, int dims, bool traditional, std::optional<float> base, float scale,
           const array& offset, const std::optional<array>& freqs, StreamOrDevice s) {
  if (freqs && base) fail("rope", "Only one of base or freqs can have a value.");
  if (!freqs && !base) fail("rope", "Neither base nor freqs has a value.");
  if (x.ndim() < 3) {
    fail("rope", "Input must have at least 3 dimensions but got input with " + std::to_string(x.ndim()) +
                     " dimensions.");
  }
  if (!issubdtype(x.dtype(), floating))
    fail("rope", "Input must be a floating type but got " + dtype_name(x.dtype()) + ".");
  if (offset.ndim() > 1) {
    fail("rope",
         "offset must have at most one dimension but has shape " + shape_string(offset.shape()) + ".");
  }
  if (offset.size() != 1 && static_cast<int64_t>(offset.size()) != x.shape(0)) {
    fail("rope", "offset must be a scalar or vector with " + std::to_string(x.shape(0)) +
                     " elements but has shape " + shape_string(offset.shape()) + ".");
  }
  if (!issubdtype(offset.dtype(), integer)) {
    fail("rope", "offset must be an integer but got type " + dtype_name(offset.dtype()) + ".");
  }
  if (dims <= 0) fail("rope", "dims must be positive but got " + std::to_string(dims) + ".");
  if (dims % 2 != 0) fail("rope", "dims must be even but got " + std::to_string(dims) + ".");
  if (dims > x.shape(-1)) {
    fail("rope", "dims must not exceed the input's last dimension (" + std::to_string(x.shape(-1)) +
                     ") but got " + std::to_string(dims) + ".");
  }
  const int half = dims / 2;
  if (freqs && (freqs->ndim() != 1 || freqs->shape(0) != half)) {
    fail("rope", "freqs must be one dimensional with size " + std::to_string(half) + " but got shape " +
                     shape_string(freqs->shape()) + ".");
  }

  // Work on [B, N, T, D]: a 3-d input gains a unit head axis, a deeper one merges its middle axes.
  array x4 = x;
  if (x.ndim() == 3) {
    x4 = expand_dims(x, 1, s);
  } else if (x.ndim() > 4) {
    x4 = flatten(x, 1, static_cast<int>(x.ndim()) - 3, s);
  }
  array positions_offset = astype(offset, int32, s);
  if (offset.size() > 1) positions_offset = reshape(positions_offset, {-1, 1, 1}, s);
  array positions =
      multiply(add(arange(0.0, x4.shape(2), 1.0, float32, s), positions_offset, s), array(scale, float32), s);
  array inv_freqs = freqs ? reciprocal(astype(*freqs, float32, s), s)
                          : exp(multiply(arange(0.0, -half, -1.0, float32, s),
                                         array(static_cast<float>(std::log(*base) / half), float32), s),
                                s);
  return reshape(rotate(x4, dims, traditional, positions, inv_freqs, s), x.shape(), s);
}

array rope(const array& x, int dims, bool traditional, std::optional<float> base, float scale, int offset,
           const std::optional<array>& freqs, StreamOrDevice s) {
  return rope(x, dims, traditional, base, scale, array(offset, int32), freqs, s);
}

array scaled_dot_product_attention(const array& queries, const array& keys, const array& values,
                                   const float scale, const std::string& mask_mode,
                                   std::optional<array> mask_arr, const std::optional<array>& sinks,
                                   StreamOrDevice s) {
  const std::string op = "scaled_dot_product_attention";
  for (const array* t : {&queries, &keys, &values}) {
    if (t->ndim() != 4) fail(op, "input with shape " + shape_string(t->shape()) + " expected to be rank 4");
  }
  if (mask_mode != "" && mask_mode != "causal" && mask_mode != "array") {
    fail(op, "Invalid mask_mode " + mask_mode + ". mask_mode must be 'causal', 'array' or ''.");
  }
  const bool causal = mask_mode == "causal";
  if (causal && mask_arr)
    fail(op, "Invalid mask_arr for mask_mode 'causal'. No array mask should be passed.");
  if (mask_arr && mask_arr->ndim() > 4) {
    fail(op, "the mask with shape " + shape_string(mask_arr->shape()) + " expected to have at most rank 4.");
  }
  for (const array* t : {&keys, &values}) {
    if (t->shape(0) != queries.shape(0)) {
      fail(op, "mismatching batch dimension for input with shape " + shape_string(t->shape()) + ".");
    }
  }
  if (queries.shape(-1) != keys.shape(-1)) {
    fail(op, "query, keys expected to have matching last dimension; found query shape " +
                 shape_string(queries.shape()) + " for keys shape " + shape_string(keys.shape()) + ".");
  }
  if (keys.shape(-2) != values.shape(-2)) {
    fail(op, "keys, values expected to have the same sequence length; found keys shape " +
                 shape_string(keys.shape()) + " for values shape " + shape_string(values.shape()) + ".");
  }
  const int n_q_heads = queries.shape(1), n_kv_heads = keys.shape(1);
  if (values.shape(1) != n_kv_heads) {
    fail(op, "keys, values expected to have matching n_kv_heads; found keys with n_heads " +
                 std::to_string(n_kv_heads) + " for values with n_heads " + std::to_string(values.shape(1)) +
                 ".");
  }
  if (n_kv_heads == 0 || n_q_heads % n_kv_heads != 0) {
    fail(op, "n_heads must be a multiple of n_kv_heads, found n_heads " + std::to_string(n_q_heads) +
                 " for n_kv_heads " + std::to_string(n_kv_heads) + ".");
  }
  const Dtype type = promote_types(promote_types(queries.dtype(), keys.dtype()), values.dtype());
  if (!issubdtype(type, floating)) fail(op, "Received unsupported type " + dtype_name(type) + ".");
  const int q_len = queries.shape(2), kv_len = keys.shape(2);
  std::optional<array> mask;
  if (mask_arr) {
    if (promote_types(mask_arr->dtype(), type) != type) {
      fail(op, "Mask type must promote to output type " + dtype_name(type) + ".");
    }
    Shape mask_shape{queries.shape(0), n_q_heads, q_len, kv_len};
    try {
      mask = broadcast_to(mask_arr->dtype() == bool_ ? *mask_arr : astype(*mask_arr, type, s), mask_shape, s);
    } catch (const std::invalid_argument&) {
      fail(op, "the mask with shape " + shape_string(mask_arr->shape()) + " does not broadcast to " +
                   shape_string(mask_shape) + ".");
    }
  }
  if (sinks) {
    if (promote_types(sinks->dtype(), type) != type) {
      fail(op, "Type of sinks must promote to output type " + dtype_name(type) + ".");
    }
    if (sinks->ndim() != 1 || sinks->shape(0) != n_q_heads) {
      fail(op, "Received invalid shape for sinks " + shape_string(sinks->shape()) + ".");
    }
  }

  // Grouped heads: queries [B, N_kv, R, L_q, D] meet keys and values [B, N_kv, 1, L_kv, D].
  const int repeats = n_q_heads / n_kv_heads;
  array q = multiply(array(scale, type), astype(queries, type, s), s);
  array k = astype(keys, type, s);
  array v = astype(values, type, s);
  if (repeats > 1) {
    q = unflatten(q, 1, {n_kv_heads, repeats}, s);
    k = expand_dims(k, 2, s);
    v = expand_dims(v, 2, s);
  }
  array scores = matmul(q, swapaxes(k, -1, -2, s), s);
  if (causal) {
    // Query i sits at position i + max(0, L_kv - L_q), as in MLX: with more queries than keys
    // the first query sees the first key.
    const int q_offset = std::max(0, kv_len - q_len);
    array q_idx = expand_dims(arange(q_offset, q_offset + q_len, s), 1, s);
    array k_idx = expand_dims(arange(0, kv_len, s), 0, s);
    mask = greater_equal(q_idx, k_idx, s);
  } else if (mask && repeats > 1) {
    mask = unflatten(*mask, -3, {n_kv_heads, repeats}, s);
  }
  if (mask) {
    scores = mask->dtype() == bool_ ? where(*mask, scores, masked_score(type), s) : add(scores, *mask, s);
  }
  if (sinks) {
    array sink = expand_dims(astype(*sinks, type, s), {0, 2, 3}, s);  // [1, N_q, 1, 1]
    if (repeats > 1) sink = unflatten(sink, 1, {n_kv_heads, repeats}, s);
    Shape column = scores.shape();
    column.back() = 1;
    scores = concatenate({broadcast_to(sink, column, s), scores}, -1, s);
  }
  scores = softmax(scores, std::vector<int>{-1}, true, s);
  if (sinks) {
    Shape start(scores.ndim(), 0);
    start.back() = 1;
    scores = slice(scores, start, scores.shape(), s);
  }
  array out = matmul(scores, v, s);
  return repeats > 1 ? flatten(out, 1, 2, s) : out;
}

}  // namespace braid::fast
