// Derivatives of the affine dequantization and the quantized products. With W = scales * q +
// biases per group of q, the unpacked integers (dequantizing w with unit scales and zero
// biases), the products x @ W^T and x @ W are linear in x, in the scales and in the biases:
// with dW the cotangent of W, a group's scale gets sum(dW * q) and its bias sum(dW), and a
// tangent of the scales and biases is the product with them in the weights' place. As in MLX,
// the packed weights and the fp modes' scales have none; the indices of gather_qmm get zeros.
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "primitives/grad_utils.h"
#include "primitives/quantized.h"

namespace braid {

using detail::mT;

namespace {

std::string mode_string(QuantizationMode m) {
  switch (m) {
    case QuantizationMode::affine: return "affine";
    case QuantizationMode::mxfp4: return "mxfp4";
    case QuantizationMode::mxfp8: return "mxfp8";
    case QuantizationMode::nvfp4: return "nvfp4";
  }
  return "";
}

// MLX's errors: a RuntimeError for the packed weights, a ValueError for the fp modes' scales.
[[noreturn]] void no_packed_gradient(const char* name, const char* transform) {
  throw std::runtime_error(std::string("[") + name + "::" + transform +
                           "] no gradient wrt the quantized weights.");
}

void require_affine(QuantizationMode mode, const char* name, const char* transform) {
  if (mode == QuantizationMode::affine) return;
  std::ostringstream msg;
  msg << "[" << name << "::" << transform << "] no gradient wrt scales in " << mode_string(mode)
      << " quantization.";
  throw std::invalid_argument(msg.str());
}

std::optional<array> biases_of(const std::vector<array>& primals, QuantizationMode mode) {
  if (mode == QuantizationMode::affine) return primals[3];
  return std::nullopt;
}

// a [..., C] summed over each group of its last axis: [..., C / group].
array group_sums(const array& a, int group, const Stream& s) {
  Shape shape = a.shape();
  shape.back() /= group;
  shape.push_back(group);
  return sum(reshape(a, shape, s), -1, false, s);
}

// The cotangent of an affine w's biases or scales from dW, the cotangent of the dequantized
// weights (unpacked w's shape, the scales' dtype).
array scale_or_bias_cotangent(bool biases, const array& dw, const array& w, const array& scales, int group,
                              int bits, const Stream& s) {
  if (biases) return group_sums(dw, group, s);
  array q = dequantize(w, ones_like(scales, s), zeros_like(scales, s), group, bits, "affine", std::nullopt,
                       scales.dtype(), s);
  return group_sums(multiply(dw, q, s), group, s);
}

// The tangents of an affine w's scales and biases (inputs 2 and 3), zeros for the one not
// given; nullopt if neither is among argnums or the mode has no biases.
std::optional<std::pair<array, array>> scale_bias_tangents(QuantizationMode mode,
                                                           const std::vector<array>& primals,
                                                           const std::vector<array>& tangents,
                                                           const std::vector<int>& argnums, const Stream& s) {
  if (mode != QuantizationMode::affine) return std::nullopt;
  bool any = false;
  for (int arg : argnums) any = any || arg == 2 || arg == 3;
  if (!any) return std::nullopt;
  return std::make_pair(detail::tangent_of(2, primals, tangents, argnums, s),
                        detail::tangent_of(3, primals, tangents, argnums, s));
}

array add_or_set(const std::optional<array>& total, const array& t, const Stream& s) {
  return total ? add(*total, t, s) : t;
}

}  // namespace

// inputs w (packed), scales and biases (affine, in the output dtype) or the fp modes' scale
// codes (and nvfp4's global scale).
std::vector<array> Dequantize::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                   const std::vector<int>& argnums, const std::vector<array>&) {
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) no_packed_gradient(name(), "vjp");
    require_affine(mode_, name(), "vjp");
    out.push_back(scale_or_bias_cotangent(arg == 2, cotangents[0], primals[0], primals[1], group_size_, bits_,
                                          stream()));
  }
  return out;
}

std::vector<array> Dequantize::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                   const std::vector<int>& argnums, const std::vector<array>& outputs) {
  for (int arg : argnums) {
    if (arg == 0) no_packed_gradient(name(), "jvp");
    require_affine(mode_, name(), "jvp");
  }
  const Stream& s = stream();
  return {dequantize(primals[0], detail::tangent_of(1, primals, tangents, argnums, s),
                     detail::tangent_of(2, primals, tangents, argnums, s), group_size_, bits_, "affine",
                     std::nullopt, outputs[0].dtype(), s)};
}

// inputs x [R, K], w [N, K packed], scales (, biases); out = x @ dequantize(w).T, so the
// dequantized weights' cotangent is c^T x [N, K].
std::vector<array> QuantizedMatmul::vjp(const std::vector<array>& primals,
                                        const std::vector<array>& cotangents, const std::vector<int>& argnums,
                                        const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  std::optional<array> dw;
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      out.push_back(quantized_matmul(c, primals[1], primals[2], biases_of(primals, mode_), false, group_size_,
                                     bits_, mode_string(mode_), s));
      continue;
    }
    if (arg == 1) no_packed_gradient(name(), "vjp");
    require_affine(mode_, name(), "vjp");
    if (!dw) dw = matmul(mT(c, s), primals[0], s);
    out.push_back(scale_or_bias_cotangent(arg == 3, *dw, primals[1], primals[2], group_size_, bits_, s));
  }
  return out;
}

// A tangent of the scales and biases is the product with them as the weights' parameters.
std::vector<array> QuantizedMatmul::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                        const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  std::optional<array> total;
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 1) no_packed_gradient(name(), "jvp");
    if (argnums[i] != 0) {
      require_affine(mode_, name(), "jvp");  // the scales and biases: below
      continue;
    }
    total = add_or_set(total,
                       quantized_matmul(tangents[i], primals[1], primals[2], biases_of(primals, mode_), true,
                                        group_size_, bits_, mode_string(mode_), s),
                       s);
  }
  if (auto sb = scale_bias_tangents(mode_, primals, tangents, argnums, s)) {
    total = add_or_set(total,
                       quantized_matmul(primals[0], primals[1], sb->first, sb->second, true, group_size_,
                                        bits_, "affine", s),
                       s);
  }
  return {*total};
}

// inputs x [Bx, M, K], w [Bw, ...], scales (, biases), lhs, rhs (uint32 [B], in range);
// out[b] = x[lhs[b]] @ w[rhs[b]] (dequantized, transposed or not). x's cotangent: each
// product's cotangent times its weights the other way round, summed into x[lhs[b]]; the
// dequantized weights' cotangent: each product's x^T c (or c^T x), summed into w[rhs[b]].
std::vector<array> GatherQMM::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                  const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const size_t first_index = mode_ == QuantizationMode::affine ? 4 : 3;
  const array &x = primals[0], &w = primals[1], &c = cotangents[0];
  const array &lhs = primals[first_index], &rhs = primals[first_index + 1];
  std::optional<array> dw;
  std::vector<array> out;
  for (int arg : argnums) {
    if (static_cast<size_t>(arg) >= first_index) {
      // Indices that depend on the differentiated inputs: MLX's error (stop_gradient avoids it).
      throw std::runtime_error("[GatherQMM::vjp] cannot compute the gradient wrt the indices.");
    }
    if (arg == 0) {
      array g = gather_qmm(c, w, primals[2], biases_of(primals, mode_), std::nullopt, rhs, !transpose_,
                           group_size_, bits_, mode_string(mode_), false, s);
      out.push_back(detail::sum_into_matrices(g, lhs, x.shape(), s));
      continue;
    }
    if (arg == 1) no_packed_gradient(name(), "vjp");
    require_affine(mode_, name(), "vjp");
    if (!dw) {
      array products = transpose_ ? gather_mm(mT(c, s), x, std::nullopt, lhs, false, s)
                                  : gather_mm(mT(x, s), c, lhs, std::nullopt, false, s);
      Shape unpacked = w.shape();
      unpacked.back() = primals[2].shape(-1) * group_size_;
      dw = detail::sum_into_matrices(products, rhs, unpacked, s);
    }
    out.push_back(scale_or_bias_cotangent(arg == 3, *dw, w, primals[2], group_size_, bits_, s));
  }
  return out;
}

std::vector<array> GatherQMM::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                  const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const size_t first_index = mode_ == QuantizationMode::affine ? 4 : 3;
  const array &lhs = primals[first_index], &rhs = primals[first_index + 1];
  std::optional<array> total;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const int arg = argnums[i];
    if (static_cast<size_t>(arg) >= first_index) continue;
    if (arg == 1) no_packed_gradient(name(), "jvp");
    if (arg != 0) {
      require_affine(mode_, name(), "jvp");  // the scales and biases: below
      continue;
    }
    total = add_or_set(total,
                       gather_qmm(tangents[i], primals[1], primals[2], biases_of(primals, mode_), lhs, rhs,
                                  transpose_, group_size_, bits_, mode_string(mode_), false, s),
                       s);
  }
  if (auto sb = scale_bias_tangents(mode_, primals, tangents, argnums, s)) {
    total = add_or_set(total,
                       gather_qmm(primals[0], primals[1], sb->first, sb->second, lhs, rhs, transpose_,
                                  group_size_, bits_, "affine", false, s),
                       s);
  }
  return {total ? *total : zeros_like(outputs[0], s)};
}

}  // namespace braid
