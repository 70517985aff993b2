// softmax (the matrix products are in ops/matmul.cpp).
#include <numeric>

#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

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

}  // namespace braid
