// The fused optimizer updates as lazy nodes on the default stream.
#include "optimizers/fused.h"

#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid::optimizers::detail {

namespace {

// The kernels read full-size operands as row-contiguous buffers: an operand that is already
// computed that way is used as it is, anything else goes through contiguous() (which shares
// the buffer when the computed layout turns out to be row-contiguous).
array dense(const array& a, const Stream& s) {
  if (a.ndim() == 0 || (a.is_available() && a.flags().row_contiguous)) return a;
  return contiguous(a, false, s);
}

}  // namespace

std::atomic<bool>& fusion_enabled() {
  static std::atomic<bool> enabled{true};
  return enabled;
}

bool fusable(const array& parameter, const array& gradient, const array& m, const array& v) {
  if (!fusion_enabled().load(std::memory_order_relaxed)) return false;
  const Dtype t = parameter.dtype();
  if (!issubdtype(t, floating)) return false;
  for (const array* a : {&gradient, &m, &v}) {
    if (a->dtype() != t || a->shape() != parameter.shape()) return false;
  }
  return true;
}

array fused_moment(const array& x, const array& g, double a, double b, bool square) {
  const Stream st = braid::detail::op_stream({}, "OptimizerUpdate");
  const auto kind = square ? OptimizerUpdate::Kind::moment_square : OptimizerUpdate::Kind::moment;
  return array(x.shape(), x.dtype(),
               braid::detail::make_pooled<OptimizerUpdate>(st, kind, a, b, 0.0, false, false),
               {dense(x, st), dense(g, st)});
}

array fused_adam_step(const array& p, const array& m, const array& v, const array& s,
                      const std::optional<array>& c, const std::optional<array>& d, double eps) {
  const Stream st = braid::detail::op_stream({}, "OptimizerUpdate");
  std::vector<array> inputs{dense(p, st), dense(m, st), dense(v, st), s};
  if (c) inputs.push_back(*c);
  if (d) inputs.push_back(*d);
  return array(p.shape(), p.dtype(),
               braid::detail::make_pooled<OptimizerUpdate>(st, OptimizerUpdate::Kind::adam, 0.0, 0.0, eps,
                                                           c.has_value(), d.has_value()),
               std::move(inputs));
}

}  // namespace braid::optimizers::detail
