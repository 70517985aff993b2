// The Hadamard transform on the GPU. A row that fits in shared memory is transformed by one
// block: loaded once, log2(p) butterfly stages between barriers, then the m x m mix on the
// way out. Longer rows go through a float (double) scratch copy in global memory, one launch
// per butterfly stage, then the mix. Arithmetic is in float (double for float64) and the
// output is rounded once.
#include <cstdint>

#include "backend/common/hadamard.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;
constexpr size_t kSharedBytes = 48 * 1024;  // available to every block without opting in

// Position of butterfly pair t (of n / 2 in a row) at stage h: block l of p, pair u in it.
__device__ __forceinline__ int64_t pair_position(int64_t t, int64_t p, int64_t h) {
  const int64_t half = p / 2;
  const int64_t l = t / half, u = t - l * half;
  return l * p + (u / h) * 2 * h + (u % h);
}

// y[j * p + i] = scale * sum_l H[j][l] * buf[l * p + i] for i in [i0, p), stepping by `step`.
template <typename T, typename A>
__device__ __forceinline__ void mix_out(const A* buf, T* dst, int64_t p, int m,
                                        const common::HadamardMatrix& hm, A scale, int64_t i0, int64_t step) {
  for (int64_t i = i0; i < p; i += step) {
    for (int j = 0; j < m; ++j) {
      A acc = 0;
      for (int l = 0; l < m; ++l) acc += static_cast<A>(hm.h[j * m + l]) * buf[l * p + i];
      dst[j * p + i] = from_compute<T>(acc * scale);
    }
  }
}

// One block per row (grid-stride over rows); the row lives in dynamic shared memory.
template <typename T, typename A>
__global__ void hadamard_shared(const T* in, T* out, int64_t rows, int64_t n, int64_t p, int m,
                                common::HadamardMatrix hm, A scale) {
  extern __shared__ __align__(16) unsigned char smem[];
  A* buf = reinterpret_cast<A*>(smem);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) buf[i] = static_cast<A>(to_compute(in[r * n + i]));
    __syncthreads();
    for (int64_t h = 1; h < p; h <<= 1) {
      for (int64_t t = threadIdx.x; t < n / 2; t += blockDim.x) {
        const int64_t j = pair_position(t, p, h);
        const A a = buf[j], b = buf[j + h];
        buf[j] = a + b;
        buf[j + h] = a - b;
      }
      __syncthreads();
    }
    mix_out(buf, out + r * n, p, m, hm, scale, threadIdx.x, blockDim.x);
    __syncthreads();  // the next row overwrites buf
  }
}

template <typename T, typename A>
__global__ void load_rows(const T* in, A* buf, int64_t total) {
  for (int64_t i = thread_index(); i < total; i += thread_count()) buf[i] = static_cast<A>(to_compute(in[i]));
}

// One butterfly stage over every row: rows * n / 2 pairs.
template <typename A>
__global__ void butterfly_stage(A* buf, int64_t rows, int64_t n, int64_t p, int64_t h) {
  const int64_t pairs = n / 2;
  for (int64_t t = thread_index(); t < rows * pairs; t += thread_count()) {
    const int64_t r = t / pairs;
    const int64_t j = r * n + pair_position(t - r * pairs, p, h);
    const A a = buf[j], b = buf[j + h];
    buf[j] = a + b;
    buf[j + h] = a - b;
  }
}

// The mix for every row: thread per (row, i) with i < p.
template <typename T, typename A>
__global__ void mix_rows(const A* buf, T* out, int64_t rows, int64_t n, int64_t p, int m,
                         common::HadamardMatrix hm, A scale) {
  for (int64_t t = thread_index(); t < rows * p; t += thread_count()) {
    const int64_t r = t / p;
    mix_out(buf + r * n, out + r * n, p, m, hm, scale, t - r * p, p);
  }
}

template <typename T, typename A>
void launch(const T* in, T* out, int64_t rows, int64_t n, const common::HadamardPlan& plan, A scale,
            const Stream& s) {
  const cudaStream_t stream = stream_of(s);
  const common::HadamardMatrix hm = common::hadamard_matrix(plan.m);
  const size_t row_bytes = static_cast<size_t>(n) * sizeof(A);
  if (row_bytes <= kSharedBytes) {
    const unsigned grid = static_cast<unsigned>(min64(rows, INT32_MAX));
    hadamard_shared<T, A>
        <<<grid, kBlock, row_bytes, stream>>>(in, out, rows, n, plan.pow2, plan.m, hm, scale);
    check_launch("hadamard_transform");
    return;
  }
  A* buf = static_cast<A*>(scratch(s, static_cast<size_t>(rows) * row_bytes));
  load_rows<T, A><<<grid_for(rows * n, kBlock), kBlock, 0, stream>>>(in, buf, rows * n);
  for (int64_t h = 1; h < plan.pow2; h <<= 1) {
    butterfly_stage<A><<<grid_for(rows * (n / 2), kBlock), kBlock, 0, stream>>>(buf, rows, n, plan.pow2, h);
  }
  mix_rows<T, A><<<grid_for(rows * plan.pow2, kBlock), kBlock, 0, stream>>>(buf, out, rows, n, plan.pow2,
                                                                            plan.m, hm, scale);
  check_launch("hadamard_transform");
}

}  // namespace
}  // namespace cuda

void Hadamard::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  const int64_t n = out.shape(-1);
  const int64_t rows = static_cast<int64_t>(out.size()) / (n > 0 ? n : 1);
  // A strided input is first copied into the output, which is then transformed in place
  // (each row is read whole before any of it is written).
  const void* src = nullptr;
  if (in.flags().row_contiguous) {
    cuda::alloc_output(out);
    src = in.desc()->data_ptr;
  } else {
    cuda::copy_to_contiguous(in, out, stream());
    src = out.desc()->data_ptr;
  }
  if (out.size() == 0) return;
  const common::HadamardPlan plan = common::hadamard_plan(n);
  cuda::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      cuda::launch<T, double>(static_cast<const T*>(src), static_cast<T*>(out.desc()->data_ptr), rows, n,
                              plan, static_cast<double>(scale_), stream());
    } else if constexpr (cuda::is_half_v<T> || std::is_same_v<T, float>) {
      cuda::launch<T, float>(static_cast<const T*>(src), static_cast<T*>(out.desc()->data_ptr), rows, n, plan,
                             scale_, stream());
    } else {
      throw std::invalid_argument("[hadamard_transform] Unsupported dtype " + dtype_name(out.dtype()) + ".");
    }
  });
}

}  // namespace braid
