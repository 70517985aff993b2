// Arange as the CPU computes it: start and start + step converted to the output type, their
// difference in that type is the step (integers in wrapping 64-bit arithmetic).
#include "backend/common/saturate.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;

template <typename T>
__global__ void arange_int(T* __restrict__ out, int64_t n, uint64_t start, uint64_t step) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    out[i] = static_cast<T>(start + static_cast<uint64_t>(i) * step);
  }
}

template <typename T, typename C>
__global__ void arange_float(T* __restrict__ out, int64_t n, C start, C step) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    out[i] = from_compute<T>(start + static_cast<C>(static_cast<double>(i)) * step);
  }
}

}  // namespace
}  // namespace cuda

namespace {

// out[i] = start + i * step (out allocated here), as Arange computes it.
void fill_arange(array& out, double start, double step, const Stream& stream) {
  cuda::alloc_output(out);
  const int64_t n = static_cast<int64_t>(out.size());
  if (n == 0) return;
  const cudaStream_t s = cuda::stream_of(stream);
  const unsigned grid = cuda::grid_for(n, cuda::kBlock);
  // One element needs no step (which may be infinite).
  const double second = n > 1 ? start + step : start;
  cuda::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_same_v<T, bool>) {
        throw std::invalid_argument("[arange] Cannot make an array of type bool.");
      } else {
        // Saturating conversions, as the CPU's (backend/common/saturate.h).
        const auto first = static_cast<uint64_t>(common::saturating_cast<T>(start));
        const auto next = static_cast<uint64_t>(common::saturating_cast<T>(second));
        cuda::arange_int<T>
            <<<grid, cuda::kBlock, 0, s>>>(static_cast<T*>(out.desc()->data_ptr), n, first, next - first);
      }
    } else if constexpr (cuda::is_complex_v<T>) {
      const float first = static_cast<float>(start), next = static_cast<float>(second);
      cuda::arange_float<T, float>
          <<<grid, cuda::kBlock, 0, s>>>(static_cast<T*>(out.desc()->data_ptr), n, first, next - first);
    } else {
      using C = cuda::compute_t<T>;
      // Rounded to T first (16-bit floats through float, as the CPU's conversion).
      C first = static_cast<C>(start), next = static_cast<C>(second);
      if constexpr (cuda::is_half_v<T>) {
        first = static_cast<float>(T(first));
        next = static_cast<float>(T(next));
      }
      cuda::arange_float<T, C>
          <<<grid, cuda::kBlock, 0, s>>>(static_cast<T*>(out.desc()->data_ptr), n, first, next - first);
    }
    cuda::check_launch("Arange");
  });
}

}  // namespace

void Arange::eval_gpu(const std::vector<array>& inputs, array& out) { fill_arange(out, start_, step_, stream()); }

void NumberOfElements::eval_gpu(const std::vector<array>& inputs, array& out) {
  fill_arange(out, value(inputs[0].shape()), 0.0, stream());
}

}  // namespace braid
