// Select, StopGradient and ScaledUnary on the CPU. Select only moves elements, so it runs on unsigned
// carriers of the element's size (four instantiations for fourteen dtypes).
#include <cstdint>
#include <stdexcept>

#include "backend/cpu/elementwise_into.h"
#include "backend/cpu/elementwise_loops.h"
#include "primitives/primitives.h"

namespace braid {
namespace {

template <typename T>
void select_loop(const array& c, const array& x, const array& y, array& out) {
  const bool* pc = static_cast<const bool*>(c.desc()->data_ptr);
  const T* px = static_cast<const T*>(x.desc()->data_ptr);
  const T* py = static_cast<const T*>(y.desc()->data_ptr);
  T* dst = static_cast<T*>(out.desc()->data_ptr);
  const int64_t n = static_cast<int64_t>(out.size());
  if (cpu::flat_readable(c, out) && cpu::flat_readable(x, out) && cpu::flat_readable(y, out)) {
    detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) dst[i] = pc[i] ? px[i] : py[i];
    });
    return;
  }
  cpu::StridedLayout<3> layout(out.shape(), {cpu::broadcast_strides(c, out.shape()),
                                             cpu::broadcast_strides(x, out.shape()),
                                             cpu::broadcast_strides(y, out.shape())});
  const int64_t sc = layout.inner_stride(0), sx = layout.inner_stride(1), sy = layout.inner_stride(2);
  detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
    int64_t o = s;
    layout.for_each_run(s, e, [&](const std::array<int64_t, 3>& off, int64_t len) {
      const bool* xc = pc + off[0];
      const T* xx = px + off[1];
      const T* xy = py + off[2];
      for (int64_t i = 0; i < len; ++i) dst[o + i] = xc[i * sc] ? xx[i * sx] : xy[i * sy];
      o += len;
    });
  });
}

}  // namespace

void cpu::select_into(const array& condition, const array& x, const array& y, array& out) {
  switch (out.itemsize()) {
    case 1: select_loop<uint8_t>(condition, x, y, out); break;
    case 2: select_loop<uint16_t>(condition, x, y, out); break;
    case 4: select_loop<uint32_t>(condition, x, y, out); break;
    case 8: select_loop<uint64_t>(condition, x, y, out); break;
    default: throw std::logic_error("[where] unexpected element size.");
  }
}

void Select::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() > 0) cpu::select_into(inputs[0], inputs[1], inputs[2], out);
}

void StopGradient::eval_cpu(const std::vector<array>& inputs, array& out) { detail::share_buffer(out, inputs[0]); }

// op(x) into out by Unary's loop (float32 runs through vector_math.h as there), then g * out
// in place by Binary's: the same two computations as the unfused pair, element by element.
void ScaledUnary::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& g = inputs[0];
  const array& x = inputs[1];
  // Only x's buffer may be taken over: g is read after out is first written.
  if (!detail::donate_host(inputs, 1, out)) detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  auto run = [&](auto op) {
    cpu::dispatch_class<ew::DtypeClass::inexact>(x.dtype(), name(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      cpu::unary_loop<T>(x, out, op);
      cpu::binary_loop<T>(g, out, out, ew::Multiply{});
    });
  };
  ew::with_scaled_unary_functor(op_, run);
}

}  // namespace braid
