// Arange as MLX computes it: start and start + step are first converted to the output type,
// and their difference in that type is the step (so an integer arange of a fractional step
// moves by whole numbers, as NumPy's).
#include "backend/common/saturate.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {

namespace {

// out[i] = start + i * step (out allocated here).
void fill_arange(array& out, double start, double step) {
  detail::alloc_contiguous(out);
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    const auto n = static_cast<int64_t>(out.size());
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Saturating conversions (MLX's results where conversion saturates: arange(2**40,
      // 2**40 + 3) in int32 is three times INT32_MAX), then wrapping steps.
      const T first = common::saturating_cast<T>(start);
      // One element needs no step (which may be infinite).
      const T next = n > 1 ? common::saturating_cast<T>(start + step) : first;
      // Wrapping unsigned arithmetic: the product of a signed step is exact mod 2^64.
      const uint64_t s = static_cast<uint64_t>(first), d = static_cast<uint64_t>(next) - s;
      detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] = static_cast<T>(s + static_cast<uint64_t>(i) * d);
      });
    } else {
      const T first = cpu::convert<T>(start);
      const T next = n > 1 ? cpu::convert<T>(start + step) : first;
      using C = cpu::compute_t<T>;
      const C s = static_cast<C>(first), d = static_cast<C>(next) - s;
      detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          dst[i] = static_cast<T>(s + static_cast<C>(static_cast<double>(i)) * d);
      });
    }
  });
}

}  // namespace

void Arange::eval_cpu(const std::vector<array>& inputs, array& out) { fill_arange(out, start_, step_); }

void NumberOfElements::eval_cpu(const std::vector<array>& inputs, array& out) {
  fill_arange(out, value(inputs[0].shape()), 0.0);
}

}  // namespace braid
