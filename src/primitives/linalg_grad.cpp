// Derivatives of the matrix products, softmax and the Hadamard transform.
#include <numeric>
#include <vector>

#include "backend/common/hadamard.h"
#include "primitives/grad_utils.h"
#include "primitives/linalg.h"
#include "primitives/shape.h"

namespace braid {

using detail::mT;
using detail::scalar_like;

// Indices past the last matrix are clamped, as the products' kernels read them.
array detail::sum_into_matrices(const array& g, const array& indices, const Shape& shape, const Stream& s) {
  const int32_t count =
      std::accumulate(shape.begin(), shape.end() - 2, int32_t{1}, std::multiplies<int32_t>());
  const int32_t rows = shape[shape.size() - 2], cols = shape.back();
  array idx = minimum(reshape(indices, {-1}, s), array(static_cast<uint32_t>(count - 1)), s);
  array upd = reshape(g, {static_cast<int32_t>(idx.size()), 1, rows, cols}, s);
  array acc = scatter_add(zeros({count, rows, cols}, g.dtype(), s), {idx}, upd, {0}, s);
  return reshape(acc, shape, s);
}

namespace {

// The operand a vjp multiplies by: conjugated when complex (MLX's convention).
array adj(const array& a, const Stream& s) { return detail::conj_if_complex(a, s); }

// Whether `b` is its input with the last two axes swapped (a Transpose node), as the weight
// of a linear layer is (x @ W^T).
bool is_swapped_matrix(const array& b) {
  if (!b.primitive_ptr() || b.ndim() < 2) return false;
  const auto* t = dynamic_cast<const Transpose*>(&b.primitive());
  if (t == nullptr) return false;
  const std::vector<int>& axes = t->axes();
  const int n = static_cast<int>(axes.size());
  for (int i = 0; i < n - 2; ++i) {
    if (axes[i] != i) return false;
  }
  return axes[n - 2] == n - 1 && axes[n - 1] == n - 2;
}

// The cotangent of the right operand b of a @ b, a^T c. When b swaps the axes of its input,
// that input's cotangent is this one swapped back: computed as (c^T a)^T, it is then
// row-contiguous, and an optimizer reading it needs no transposing copy.
array right_operand_grad(const array& a, const array& b, const array& c, const Stream& s) {
  if (is_swapped_matrix(b)) return mT(matmul(mT(c, s), a, s), s);
  return matmul(mT(a, s), c, s);
}

}  // namespace

std::vector<array> Matmul::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  std::vector<array> out;
  for (int arg : argnums) {
    out.push_back(arg == 0 ? matmul(c, mT(adj(primals[1], s), s), s)
                           : right_operand_grad(adj(primals[0], s), primals[1], c, s));
  }
  return out;
}

std::vector<array> Matmul::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  std::optional<array> total;
  for (size_t i = 0; i < argnums.size(); ++i) {
    array t = argnums[i] == 0 ? matmul(tangents[i], primals[1], s) : matmul(primals[0], tangents[i], s);
    total = total ? add(*total, t, s) : t;
  }
  return {*total};
}

std::vector<array> AddMM::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                              const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 2) {
      out.push_back(detail::unbroadcast(multiply(scalar_like(beta_, c), c, s), primals[2].shape(), s));
      continue;
    }
    array g = arg == 0 ? matmul(c, mT(adj(primals[1], s), s), s)
                       : right_operand_grad(adj(primals[0], s), primals[1], c, s);
    out.push_back(alpha_ == 1.0f ? g : multiply(scalar_like(alpha_, g), g, s));
  }
  return out;
}

std::vector<array> AddMM::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                              const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  std::optional<array> product;
  std::optional<array> shift;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const array& t = tangents[i];
    if (argnums[i] == 2) {
      shift = multiply(scalar_like(beta_, t), t, s);
      continue;
    }
    array p = argnums[i] == 0 ? matmul(t, primals[1], s) : matmul(primals[0], t, s);
    product = product ? add(*product, p, s) : p;
  }
  array total = zeros_like(outputs[0], s);
  if (product) total = alpha_ == 1.0f ? *product : multiply(scalar_like(alpha_, *product), *product, s);
  if (shift) total = add(total, *shift, s);
  return {total};
}

std::vector<array> Softmax::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                                const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& y = outputs[0];
  const array& c = cotangents[0];
  return {multiply(y, subtract(c, sum(multiply(c, y, s), -1, true, s), s), s)};
}

std::vector<array> Softmax::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& y = outputs[0];
  const array& t = tangents[0];
  return {multiply(y, subtract(t, sum(multiply(t, y, s), -1, true, s), s), s)};
}

// out[i] = a[lhs[i]] @ b[rhs[i]]: each operand's cotangent is the product of the cotangent
// with the other operand's picked matrices, summed into the matrices it was picked from (as
// MLX). Indices that depend on the differentiated inputs (an argsort of them, say) have no
// gradient: MLX's error, which stop_gradient on the indices avoids.
std::vector<array> GatherMM::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                 const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array &a = primals[0], &b = primals[1], &lhs = primals[2], &rhs = primals[3];
  const array& c = cotangents[0];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      out.push_back(
          detail::sum_into_matrices(gather_mm(c, mT(b, s), std::nullopt, rhs, false, s), lhs, a.shape(), s));
    } else if (arg == 1) {
      out.push_back(
          detail::sum_into_matrices(gather_mm(mT(a, s), c, lhs, std::nullopt, false, s), rhs, b.shape(), s));
    } else {
      throw std::invalid_argument("[GatherMM] Cannot calculate VJP with respect to indices.");
    }
  }
  return out;
}

std::vector<array> GatherMM::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                 const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array &lhs = primals[2], &rhs = primals[3];
  std::optional<array> total;
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] > 1) continue;
    array t = argnums[i] == 0 ? gather_mm(tangents[i], primals[1], lhs, rhs, false, s)
                              : gather_mm(primals[0], tangents[i], lhs, rhs, false, s);
    total = total ? add(*total, t, s) : t;
  }
  return {total ? *total : zeros_like(outputs[0], s)};
}

// The transform is linear: its vjp multiplies by the transposed matrix, H_m^T (x) H_p (H_p is
// symmetric). When H_m is symmetric too (m = 1, 12) that is the transform itself; otherwise
// (Sloane's m = 20, 28) the blocks go through H_p and then H_m^T mixes them.
std::vector<array> Hadamard::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                                 const std::vector<int>&, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  const common::HadamardPlan plan = common::hadamard_plan(c.shape(-1));
  const common::HadamardMatrix h = common::hadamard_matrix(plan.m);
  const int m = plan.m;
  std::vector<float> ht(static_cast<size_t>(m) * m);
  bool symmetric = true;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      ht[i * m + j] = h.h[j * m + i];
      symmetric = symmetric && h.h[i * m + j] == h.h[j * m + i];
    }
  }
  if (symmetric) return {hadamard_transform(c, scale_, s)};
  const auto p = static_cast<int32_t>(plan.pow2);
  Shape blocks(c.shape().begin(), c.shape().end() - 1);
  blocks.push_back(m);
  blocks.push_back(p);
  array z = reshape(c, blocks, s);
  z = p > 1 ? hadamard_transform(z, scale_, s) : multiply(z, scalar_like(scale_, z), s);
  array mixed = matmul(astype(array(ht.begin(), {m, m}, float32), c.dtype(), s), z, s);
  return {reshape(mixed, c.shape(), s)};
}

std::vector<array> Hadamard::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                 const std::vector<int>&, const std::vector<array>&) {
  return {hadamard_transform(tangents[0], scale_, stream())};
}

}  // namespace braid
