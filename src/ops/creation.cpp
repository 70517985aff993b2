// zeros, ones, full, arange.
#include <cmath>
#include <limits>

#include "braid/ops.h"
#include "graph/node.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::throw_invalid;

array full(Shape shape, array vals, Dtype dtype, StreamOrDevice s) {
  detail::checked_size(shape, dtype, "full");
  Shape b = detail::broadcast_shapes(vals.shape(), shape, "full");
  if (b != shape) {
    throw_invalid("full", "Values of shape " + detail::shape_str(vals.shape()) +
                              " cannot be broadcast to shape " + detail::shape_str(shape) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "full");
  return array(std::move(shape), dtype, std::make_shared<Full>(std::move(st)), {std::move(vals)});
}

array full(Shape shape, array vals, StreamOrDevice s) {
  Dtype d = vals.dtype();
  return full(std::move(shape), std::move(vals), d, std::move(s));
}

array zeros(const Shape& shape, Dtype dtype, StreamOrDevice s) {
  return full(shape, array(false, dtype), dtype, std::move(s));
}
array zeros(const Shape& shape, StreamOrDevice s) { return zeros(shape, float32, std::move(s)); }
array ones(const Shape& shape, Dtype dtype, StreamOrDevice s) {
  return full(shape, array(true, dtype), dtype, std::move(s));
}
array ones(const Shape& shape, StreamOrDevice s) { return ones(shape, float32, std::move(s)); }

array arange(double start, double stop, double step, Dtype dtype, StreamOrDevice s) {
  if (dtype == bool_) throw_invalid("arange", "Cannot make an array of type bool.");
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    throw_invalid("arange", "Cannot compute length (start, stop and step must be finite, step non-zero).");
  }
  double len = std::ceil((stop - start) / step);
  if (len > static_cast<double>(std::numeric_limits<int32_t>::max())) {
    throw_invalid("arange", "Maximum size exceeded.");
  }
  int32_t n = len > 0 ? static_cast<int32_t>(len) : 0;
  Stream st = detail::op_stream(std::move(s), "arange");
  return array(Shape{n}, dtype, std::make_shared<Arange>(std::move(st), start, step), {});
}
array arange(double start, double stop, double step, StreamOrDevice s) {
  return arange(start, stop, step, float32, std::move(s));
}
array arange(double start, double stop, Dtype dtype, StreamOrDevice s) {
  return arange(start, stop, 1.0, dtype, std::move(s));
}
array arange(double start, double stop, StreamOrDevice s) { return arange(start, stop, 1.0, float32, std::move(s)); }
array arange(double stop, Dtype dtype, StreamOrDevice s) { return arange(0.0, stop, 1.0, dtype, std::move(s)); }
array arange(double stop, StreamOrDevice s) { return arange(0.0, stop, 1.0, float32, std::move(s)); }
array arange(int start, int stop, int step, StreamOrDevice s) {
  return arange(static_cast<double>(start), static_cast<double>(stop), static_cast<double>(step), int32, std::move(s));
}
array arange(int start, int stop, StreamOrDevice s) { return arange(start, stop, 1, std::move(s)); }
array arange(int stop, StreamOrDevice s) { return arange(0, stop, 1, std::move(s)); }

}  // namespace braid
