// softmax and the Hadamard transform (the matrix products are in ops/matmul.cpp).
#include <cmath>
#include <numeric>
#include <string>

#include "backend/common/hadamard.h"

#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::throw_invalid;

array softmax(const array& a, const std::vector<int>& axes, bool precise, StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  std::vector<int> ax = detail::normalize_axes(axes, nd, "softmax");
  Stream st = detail::op_stream(std::move(s), "softmax");
  const Dtype t = is_floating_point(a.dtype()) ? a.dtype() : float32;
  array in = astype(a, t, st);
  if (in.size() == 0) return in;  // nothing to normalize (and max would refuse an empty axis)
  if (ax.size() == 1 && ax[0] == nd - 1) {
    // The kernel computes in float32 whatever `precise` says.
    return array(in.shape(), t, detail::make_pooled<Softmax>(st, precise), {in});
  }
  // Other axes: compose from ops, in float32 for 16-bit inputs when asked to be precise.
  if (precise && t != float32) in = astype(in, float32, st);
  array ex = exp(subtract(in, max(in, ax, true, st), st), st);
  return astype(divide(ex, sum(ex, ax, true, st), st), t, st);
}

array softmax(const array& a, int axis, bool precise, StreamOrDevice s) {
  return softmax(a, std::vector<int>{axis}, precise, std::move(s));
}

array softmax(const array& a, bool precise, StreamOrDevice s) {
  std::vector<int> axes(a.ndim());
  std::iota(axes.begin(), axes.end(), 0);
  return softmax(a, axes, precise, std::move(s));
}

array hadamard_transform(const array& a, std::optional<float> scale, StreamOrDevice s) {
  if (a.size() == 0) throw_invalid("hadamard_transform", "Does not support empty arrays.");
  const int64_t n = a.ndim() > 0 ? a.shape(-1) : 1;
  // MLX checks the size when the kernel runs; here it is checked before any node exists.
  if (common::hadamard_plan(n).m == 0) {
    throw_invalid("hadamard_transform", "Only supports n = m*2^k where m in (1, 12, 20, 28) and k <= 26 (got n = " +
                                            std::to_string(n) + ").");
  }
  const float sc = scale ? *scale : 1.0f / std::sqrt(static_cast<float>(n));
  const Dtype t = is_floating_point(a.dtype()) && a.dtype() != complex64 ? a.dtype() : float32;
  Stream st = detail::op_stream(std::move(s), "hadamard_transform");
  // Nothing to transform: as MLX, only the scale applies (multiply's promotion included).
  if (n == 1) return sc == 1.0f ? a : multiply(a, array(sc, t), st);
  return array(a.shape(), t, detail::make_pooled<Hadamard>(st, sc), {astype(a, t, st)});
}

}  // namespace braid
