// Derivatives of the quantized products with respect to x (as MLX): the product is linear in
// x, its adjoint the product of the cotangent with the same weights untransposed. The packed
// weights, scales and biases have no gradient (MLX has none either); the indices of
// gather_qmm are integers and get zeros.
#include <stdexcept>
#include <string>

#include "primitives/grad_utils.h"
#include "primitives/quantized.h"

namespace braid {

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

[[noreturn]] void no_weight_gradient(const char* name, const char* transform) {
  throw std::invalid_argument(
      std::string("[") + name + "] " + transform +
      " with respect to the quantized matrix, its scales or biases is not implemented.");
}

std::optional<array> biases_of(const std::vector<array>& primals, QuantizationMode mode) {
  if (mode == QuantizationMode::affine) return primals[3];
  return std::nullopt;
}

}  // namespace

// inputs x [R, K], w [N, K packed], scales (, biases); out = x @ dequantize(w).T.
std::vector<array> QuantizedMatmul::vjp(const std::vector<array>& primals,
                                        const std::vector<array>& cotangents, const std::vector<int>& argnums,
                                        const std::vector<array>&) {
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg != 0) no_weight_gradient(name(), "vjp");
    out.push_back(quantized_matmul(cotangents[0], primals[1], primals[2], biases_of(primals, mode_), false,
                                   group_size_, bits_, mode_string(mode_), stream()));
  }
  return out;
}

std::vector<array> QuantizedMatmul::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                        const std::vector<int>& argnums, const std::vector<array>&) {
  for (int arg : argnums) {
    if (arg != 0) no_weight_gradient(name(), "jvp");
  }
  return {quantized_matmul(tangents[0], primals[1], primals[2], biases_of(primals, mode_), true, group_size_,
                           bits_, mode_string(mode_), stream())};
}

// inputs x [Bx, M, K], w [Bw, ...], scales (, biases), lhs, rhs (uint32 [B], in range);
// out[b] = x[lhs[b]] @ w[rhs[b]] (dequantized, transposed or not). x's cotangent: each
// product's cotangent times its weights the other way round, summed into x[lhs[b]].
std::vector<array> GatherQMM::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                  const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const size_t first_index = mode_ == QuantizationMode::affine ? 4 : 3;
  const array& x = primals[0];
  const array &lhs = primals[first_index], &rhs = primals[first_index + 1];
  std::vector<array> out;
  for (int arg : argnums) {
    if (static_cast<size_t>(arg) >= first_index) {
      out.push_back(zeros_like(primals[arg], s));
      continue;
    }
    if (arg != 0) no_weight_gradient(name(), "vjp");
    array g = gather_qmm(cotangents[0], primals[1], primals[2], biases_of(primals, mode_), std::nullopt, rhs,
                         !transpose_, group_size_, bits_, mode_string(mode_), false, s);
    g = expand_dims(g, 1, s);  // [B, 1, M, K]: one slice of x per index
    out.push_back(scatter_add(zeros_like(x, s), {lhs}, g, {0}, s));
  }
  return out;
}

std::vector<array> GatherQMM::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                  const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const size_t first_index = mode_ == QuantizationMode::affine ? 4 : 3;
  std::optional<array> t;
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (static_cast<size_t>(argnums[i]) >= first_index) continue;
    if (argnums[i] != 0) no_weight_gradient(name(), "jvp");
    t = tangents[i];
  }
  if (!t) return {zeros_like(outputs[0], stream())};
  return {gather_qmm(*t, primals[1], primals[2], biases_of(primals, mode_), primals[first_index],
                     primals[first_index + 1], transpose_, group_size_, bits_, mode_string(mode_), false,
                     stream())};
}

}  // namespace braid
