// Helpers the primitives' derivatives share.
#pragma once

#include <vector>

#include "braid/array.h"
#include "braid/ops.h"

namespace braid::detail {

/// `g` summed down to `shape`, which broadcasts to g's shape (the adjoint of broadcasting).
array unbroadcast(const array& g, const Shape& shape, const Stream& s);

/// A scalar of `like`'s dtype, so that it never promotes the expression it enters.
inline array scalar_like(double v, const array& like) { return array(v, like.dtype()); }

/// The matrices of `a` transposed (its last two axes swapped).
inline array mT(const array& a, const Stream& s) { return swapaxes(a, -1, -2, s); }

/// The conjugate of a complex64 derivative, `d` itself for any other dtype (no node added). A
/// vjp multiplies its cotangent by the conjugated derivative: MLX's (PyTorch's) convention,
/// where the gradient of a real loss of z = x + iy is dL/dx + i dL/dy.
inline array conj_if_complex(const array& d, const Stream& s) {
  return d.dtype() == complex64 ? conjugate(d, s) : d;
}

/// The products g [batch..., R, C] summed into the matrices of an operand of `shape`
/// [..., R, C] that `indices` (uint32, the batch shape) picked: the adjoint of the gather.
array sum_into_matrices(const array& g, const array& indices, const Shape& shape, const Stream& s);

/// zeros_like for each input in `argnums`: the derivative of an integer-valued primitive.
std::vector<array> zero_grads(const std::vector<array>& primals, const std::vector<int>& argnums,
                              const Stream& s);

/// The tangent of input `i` among the given ones (argnums), or zeros of that primal.
inline array tangent_of(int i, const std::vector<array>& primals, const std::vector<array>& tangents,
                        const std::vector<int>& argnums, const Stream& s) {
  for (size_t k = 0; k < argnums.size(); ++k) {
    if (argnums[k] == i) return tangents[k];
  }
  return zeros_like(primals[i], s);
}

}  // namespace braid::detail
