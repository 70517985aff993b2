// astype, reshape, transpose, broadcast_to.
#include <algorithm>

#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

array astype(array a, Dtype dtype, StreamOrDevice s) {
  if (a.dtype() == dtype) return a;
  Stream st = detail::op_stream(std::move(s), "astype");
  Shape shape = a.shape();
  return array(std::move(shape), dtype, detail::make_pooled<AsType>(std::move(st)), {std::move(a)});
}

array reshape(const array& a, Shape shape, StreamOrDevice s) {
  int infer = -1;
  size_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw_invalid("reshape", "Can only infer one dimension.");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw_invalid("reshape", "Invalid dimension " + std::to_string(shape[i]) + " in shape " + shape_str(shape) + ".");
    } else {
      known *= static_cast<size_t>(shape[i]);
    }
  }
  if (infer >= 0) {
    if (known == 0 || a.size() % known != 0) {
      throw_invalid("reshape", "Cannot infer the shape of an array of size " + std::to_string(a.size()) +
                                   " into shape " + shape_str(shape) + ".");
    }
    shape[infer] = static_cast<int32_t>(a.size() / known);
    known = a.size();
  }
  if (known != a.size()) {
    throw_invalid("reshape", "Cannot reshape array of size " + std::to_string(a.size()) + " into shape " +
                                 shape_str(shape) + ".");
  }
  if (shape == a.shape()) return a;
  Stream st = detail::op_stream(std::move(s), "reshape");
  return array(std::move(shape), a.dtype(), detail::make_pooled<Reshape>(std::move(st)), {a});
}

array transpose(const array& a, std::vector<int> axes, StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  if (static_cast<int>(axes.size()) != nd) {
    throw_invalid("transpose", "Received " + std::to_string(axes.size()) + " axes for an array with " +
                                   std::to_string(nd) + " dimensions.");
  }
  for (auto& ax : axes) ax = detail::normalize_axis(ax, nd, "transpose");
  std::vector<int> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw_invalid("transpose", "Repeated axes in the permutation.");
  }
  Shape shape(nd);
  for (int i = 0; i < nd; ++i) shape[i] = a.shape()[axes[i]];
  Stream st = detail::op_stream(std::move(s), "transpose");
  return array(std::move(shape), a.dtype(), detail::make_pooled<Transpose>(std::move(st), std::move(axes)), {a});
}

array transpose(const array& a, StreamOrDevice s) {
  std::vector<int> axes(a.ndim());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int>(axes.size() - 1 - i);
  return transpose(a, std::move(axes), std::move(s));
}

array broadcast_to(const array& a, const Shape& shape, StreamOrDevice s) {
  if (a.shape() == shape) return a;
  detail::checked_size(shape, a.dtype(), "broadcast_to");
  bool ok = shape.size() >= a.ndim();
  if (ok) {
    Shape b = detail::broadcast_shapes(a.shape(), shape, "broadcast_to");
    ok = b == shape;
  }
  if (!ok) {
    throw_invalid("broadcast_to", "Unable to broadcast shape " + shape_str(a.shape()) + " to shape " +
                                      shape_str(shape) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "broadcast_to");
  return array(shape, a.dtype(), detail::make_pooled<Broadcast>(std::move(st)), {a});
}

}  // namespace braid
