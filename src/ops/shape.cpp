// astype, reshape, transpose, broadcast_to.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

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
  constexpr uint64_t kMaxDim = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
  std::optional<size_t> infer;
  // The product of the given dimensions, in 64 bits without wrapping: `overflow` once it
  // passes any array's size (so it can match none, unless a zero dimension makes it 0).
  uint64_t known = 1;
  bool overflow = false, has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) throw_invalid("reshape", "Can only infer one dimension.");
      infer = i;
    } else if (shape[i] < 0) {
      throw_invalid("reshape", "Invalid dimension " + std::to_string(shape[i]) + " in shape " + shape_str(shape) + ".");
    } else if (shape[i] == 0) {
      has_zero = true;
    } else if (!overflow) {
      const auto d = static_cast<uint64_t>(shape[i]);
      if (known > std::numeric_limits<uint64_t>::max() / d) {
        overflow = true;
      } else {
        known *= d;
      }
    }
  }
  if (has_zero) {
    known = 0;
    overflow = false;
  }
  const uint64_t size = a.size();
  if (infer) {
    if (known == 0 || overflow || size % known != 0) {
      throw_invalid("reshape", "Cannot infer the shape of an array of size " + std::to_string(size) +
                                   " into shape " + shape_str(shape) + ".");
    }
    const uint64_t inferred = size / known;
    if (inferred > kMaxDim) {
      throw_invalid("reshape", "The inferred dimension " + std::to_string(inferred) + " of shape " +
                                   shape_str(shape) + " for an array of size " + std::to_string(size) +
                                   " exceeds the largest dimension, " + std::to_string(kMaxDim) + ".");
    }
    shape[*infer] = static_cast<int32_t>(inferred);
    known = size;
  }
  if (overflow || known != size) {
    throw_invalid("reshape", "Cannot reshape array of size " + std::to_string(size) + " into shape " +
                                 shape_str(shape) + ".");
  }
  if (shape == a.shape()) return a;
  Stream st = detail::op_stream(std::move(s), "reshape");
  return array(std::move(shape), a.dtype(), detail::make_pooled<Reshape>(std::move(st)), {a});
}

array transpose(const array& a, std::vector<int> axes, StreamOrDevice s) {
  if (axes.size() != a.ndim()) {
    throw_invalid("transpose", "Received " + std::to_string(axes.size()) + " axes for an array with " +
                                   std::to_string(a.ndim()) + " dimensions.");
  }
  if (a.ndim() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw_invalid("transpose", "Too many dimensions (" + std::to_string(a.ndim()) + ").");
  }
  const int nd = static_cast<int>(a.ndim());
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
