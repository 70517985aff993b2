// matmul, softmax and the Hadamard transform.
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

using detail::shape_str;
using detail::throw_invalid;

array matmul(const array& a_in, const array& b_in, StreamOrDevice s) {
  if (a_in.ndim() == 0 || b_in.ndim() == 0) {
    throw_invalid("matmul", "Got 0 dimension input. Inputs must have at least one dimension.");
  }
  const Dtype t = promote_types(a_in.dtype(), b_in.dtype());
  if (!is_floating_point(t)) {
    std::ostringstream msg;
    msg << "Only real floating point types are supported but " << a_in.dtype() << " and " << b_in.dtype()
        << " were provided which results in " << t << ", which is not a real floating point type.";
    throw_invalid("matmul", msg.str());
  }
  // NumPy's rule for vectors: [K] is [1, K] on the left and [K, 1] on the right, and the
  // added dimension is removed from the result.
  Shape a_shape = a_in.shape();
  Shape b_shape = b_in.shape();
  if (a_in.ndim() == 1) a_shape = Shape{1, a_shape[0]};
  if (b_in.ndim() == 1) b_shape = Shape{b_shape[0], 1};
  const size_t an = a_shape.size(), bn = b_shape.size();
  if (a_shape[an - 1] != b_shape[bn - 2]) {
    throw_invalid("matmul", "Last dimension of first input with shape " + shape_str(a_shape) +
                                " must match second to last dimension of second input with shape " +
                                shape_str(b_shape) + ".");
  }
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2);
  const Shape b_batch(b_shape.begin(), b_shape.end() - 2);
  Shape batch = detail::broadcast_shapes(a_batch, b_batch, "matmul");
  const int32_t m = a_shape[an - 2], k = a_shape[an - 1], n = b_shape[bn - 1];

  Shape a_full = batch, b_full = batch, out_shape = batch;
  a_full.push_back(m);
  a_full.push_back(k);
  b_full.push_back(k);
  b_full.push_back(n);
  out_shape.push_back(m);
  out_shape.push_back(n);
  detail::checked_size(out_shape, t, "matmul");
  Stream st = detail::op_stream(std::move(s), "matmul");

  // Convert before broadcasting, so a broadcast operand is converted once, not per batch.
  array a = broadcast_to(reshape(astype(a_in, t, st), a_shape, st), a_full, st);
  array b = broadcast_to(reshape(astype(b_in, t, st), b_shape, st), b_full, st);
  array out(out_shape, t, detail::make_pooled<Matmul>(st), {a, b});
  if (a_in.ndim() == 1 || b_in.ndim() == 1) {
    Shape squeezed = batch;
    if (a_in.ndim() != 1) squeezed.push_back(m);
    if (b_in.ndim() != 1) squeezed.push_back(n);
    out = reshape(out, std::move(squeezed), st);
  }
  return out;
}

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
