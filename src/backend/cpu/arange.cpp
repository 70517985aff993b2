#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"

namespace braid {

void Arange::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    for (size_t i = 0; i < out.size(); ++i) {
      dst[i] = static_cast<T>(static_cast<cpu::compute_t<T>>(start_ + step_ * static_cast<double>(i)));
    }
  });
}

}  // namespace braid
