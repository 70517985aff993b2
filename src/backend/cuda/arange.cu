// Arange: out[i] = start + step * i, computed in double and converted as the CPU does.
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;

template <typename T>
__global__ void arange_kernel(T* __restrict__ out, int64_t n, double start, double step) {
  const int64_t stride = thread_count();
  for (int64_t i = thread_index(); i < n; i += stride) {
    // Rounded multiply then add, never a fused multiply-add: the CPU rounds the product first.
    const double v = __dadd_rn(start, __dmul_rn(step, static_cast<double>(i)));
    out[i] = from_compute<T>(static_cast<compute_t<T>>(v));
  }
}

}  // namespace
}  // namespace cuda

void Arange::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  const int64_t n = static_cast<int64_t>(out.size());
  if (n == 0) return;
  const cudaStream_t s = cuda::stream_of(stream());
  cuda::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::arange_kernel<T><<<cuda::grid_for(n, cuda::kBlock), cuda::kBlock, 0, s>>>(
        static_cast<T*>(out.desc()->data_ptr), n, start_, step_);
    cuda::check_launch("Arange");
  });
}

}  // namespace braid
