// Softmax::eval_gpu over the last axis, in float whatever the storage type. Each element is
// read from device memory once and written once when its row fits on chip:
//  - rows of up to 1024 elements: a warp per row (a group of lanes for short rows, several
//    rows per warp), the row held in registers;
//  - longer rows that fit in shared memory: a block per row, the row cached in shared memory;
//  - longer rows still (or very few long rows): fixed chunks of each row, one block each,
//    compute a running (max, sum) pair; a second kernel combines a row's pairs and writes.
// A non-row-contiguous input is first copied into the output, which is then normalized in place.
#include <mutex>
#include <stdexcept>

#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kWarp = 32;
constexpr int64_t kWarpRowMax = 1024;
constexpr int64_t kMinChunk = 8192;   // elements per block in the chunked path
constexpr int64_t kFewRowsWidth = 1 << 16;

struct MaxF {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumF {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// A row's running maximum m and sum s of exp(x - m). -inf elements add nothing (so a row
// with some -inf gives 0 there); NaN makes s NaN.
__device__ __forceinline__ void add_element(float& m, float& s, float x) {
  if (x > m) {
    s = s * expf(m - x) + 1.0f;
    m = x;
  } else if (x != -INFINITY) {
    s += expf(x - m);
  }
}

__device__ __forceinline__ void combine_stats(float& m, float& s, float m2, float s2) {
  if (m2 > m) {
    s = s * expf(m - m2) + s2;
    m = m2;
  } else if (m2 != -INFINITY) {
    s += s2 * expf(m2 - m);
  }
}

// Reduces over the G lanes of each aligned group of a warp (G a power of two up to 32).
template <int G, typename F>
__device__ __forceinline__ float group_allreduce(float v, F f) {
#pragma unroll
  for (int m = G / 2; m > 0; m >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}

// Registers: a group of G lanes per row (several rows per warp when rows are short), and R rows
// per group at once so that more loads are in flight; lane `sub` of a group holds the N-element
// vectors sub, sub + G, ... (VPL of them).
template <typename T, int N, int VPL, int G>
__global__ void softmax_warp(const T* src, T* dst, int64_t rows, int64_t width) {
  constexpr int R = VPL * N <= 8 ? 2 : 1;
  constexpr int kGroups = kWarp / G;
  constexpr int64_t kRowsPerWarp = kGroups * R;
  const int lane = threadIdx.x % kWarp, group = lane / G, sub = lane % G;
  const int64_t warps = thread_count() / kWarp;
  for (int64_t first = thread_index() / kWarp * kRowsPerWarp; first < rows; first += warps * kRowsPerWarp) {
    float v[R][VPL][N];
    float m[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = first + r * kGroups + group;
      m[r] = -INFINITY;
#pragma unroll
      for (int j = 0; j < VPL; ++j) {
        const int64_t col = (static_cast<int64_t>(j) * G + sub) * N;
        if (row < rows && col < width) {
          const Vec<T, N> in = *reinterpret_cast<const Vec<T, N>*>(src + row * width + col);
#pragma unroll
          for (int k = 0; k < N; ++k) {
            v[r][j][k] = to_compute(in.v[k]);
            m[r] = fmaxf(m[r], v[r][j][k]);
          }
        }
      }
    }
    float s[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      m[r] = group_allreduce<G>(m[r], MaxF{});
      const int64_t row = first + r * kGroups + group;
      s[r] = 0.0f;
#pragma unroll
      for (int j = 0; j < VPL; ++j) {
        const int64_t col = (static_cast<int64_t>(j) * G + sub) * N;
        if (row < rows && col < width) {
#pragma unroll
          for (int k = 0; k < N; ++k) {
            v[r][j][k] = expf(v[r][j][k] - m[r]);
            s[r] += v[r][j][k];
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float scale = 1.0f / group_allreduce<G>(s[r], SumF{});
      const int64_t row = first + r * kGroups + group;
#pragma unroll
      for (int j = 0; j < VPL; ++j) {
        const int64_t col = (static_cast<int64_t>(j) * G + sub) * N;
        if (row < rows && col < width) {
          Vec<T, N> out;
#pragma unroll
          for (int k = 0; k < N; ++k) out.v[k] = from_compute<T>(v[r][j][k] * scale);
          *reinterpret_cast<Vec<T, N>*>(dst + row * width + col) = out;
        }
      }
    }
  }
}

// All threads get the block's (max, sum) pair, combined in the same order. `red` holds kWarp
// pairs; the trailing barrier lets the next call reuse it.
__device__ __forceinline__ void block_stats(float& m, float& s, float2* red) {
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    combine_stats(m, s, m2, s2);
  }
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
  if (lane == 0) red[warp] = make_float2(m, s);
  __syncthreads();
  m = red[0].x;
  s = red[0].y;
  for (int i = 1; i < warps; ++i) combine_stats(m, s, red[i].x, red[i].y);
  __syncthreads();
}

// This thread's running (max, sum) over vectors x[begin, end), kUnroll loads in flight; each
// vector is also handed to keep(i, vector).
template <typename T, int N, typename Keep>
__device__ __forceinline__ void row_stats(const Vec<T, N>* x, int64_t begin, int64_t end, float& m, float& s,
                                          Keep&& keep) {
  const int64_t nt = blockDim.x;
  for (int64_t i0 = begin + threadIdx.x; i0 < end; i0 += nt * kUnroll) {
    Vec<T, N> in[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i0 + u * nt < end) in[u] = x[i0 + u * nt];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i0 + u * nt < end) {
        keep(i0 + u * nt, in[u]);
#pragma unroll
        for (int k = 0; k < N; ++k) add_element(m, s, to_compute(in[u].v[k]));
      }
    }
  }
}

// Every thread gets the block's result, combined in the same order. `red` holds kWarp floats;
// the trailing barrier lets the next call reuse it.
template <typename F>
__device__ __forceinline__ float block_allreduce(float v, float* red, F f) {
  v = group_allreduce<kWarp>(v, f);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float r = red[0];
  for (int i = 1; i < warps; ++i) r = f(r, red[i]);
  __syncthreads();
  return r;
}

// Shared memory: one pass reads the row into the cache (kUnroll loads in flight per thread)
// and finds its maximum; then the sum and the output come from the cache, with independent
// exponentials. Each thread reads back only the vectors it cached itself, so the cache needs
// no barrier; the reductions have their own.
template <typename T, int N>
__global__ void softmax_block(const T* src, T* dst, int64_t rows, int64_t width) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ float red[kWarp];
  Vec<T, N>* cache = reinterpret_cast<Vec<T, N>*>(smem_raw);
  const int64_t nvec = width / N, nt = blockDim.x;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const Vec<T, N>* x = reinterpret_cast<const Vec<T, N>*>(src + row * width);
    Vec<T, N>* y = reinterpret_cast<Vec<T, N>*>(dst + row * width);
    float m = -INFINITY;
    for (int64_t i0 = threadIdx.x; i0 < nvec; i0 += nt * kUnroll) {
      Vec<T, N> in[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (i0 + u * nt < nvec) in[u] = x[i0 + u * nt];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (i0 + u * nt < nvec) {
          cache[i0 + u * nt] = in[u];
#pragma unroll
          for (int k = 0; k < N; ++k) m = fmaxf(m, to_compute(in[u].v[k]));
        }
      }
    }
    m = block_allreduce(m, red, MaxF{});
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < nvec; i += nt) {
      const Vec<T, N> in = cache[i];
#pragma unroll
      for (int k = 0; k < N; ++k) s += expf(to_compute(in.v[k]) - m);
    }
    const float scale = 1.0f / block_allreduce(s, red, SumF{});
    for (int64_t i = threadIdx.x; i < nvec; i += nt) {
      const Vec<T, N> in = cache[i];
      Vec<T, N> out;
#pragma unroll
      for (int k = 0; k < N; ++k) out.v[k] = from_compute<T>(expf(to_compute(in.v[k]) - m) * scale);
      y[i] = out;
    }
  }
}

// Chunked rows, first kernel: stats[row * chunks + c] = (max, sum) of chunk c of the row.
template <typename T, int N>
__global__ void softmax_chunk_stats(const T* src, float2* stats, int64_t rows, int64_t width, int64_t chunk,
                                    int64_t chunks) {
  __shared__ float2 red[kWarp];
  for (int64_t task = blockIdx.x; task < rows * chunks; task += gridDim.x) {
    const int64_t row = task / chunks, c = task - row * chunks;
    const int64_t begin = c * chunk, end = min64(width, begin + chunk);
    const Vec<T, N>* x = reinterpret_cast<const Vec<T, N>*>(src + row * width + begin);
    float m = -INFINITY, s = 0.0f;
    row_stats(x, 0, (end - begin) / N, m, s, [](int64_t, const Vec<T, N>&) {});
    block_stats(m, s, red);
    if (threadIdx.x == 0) stats[task] = make_float2(m, s);
  }
}

// Chunked rows, second kernel: every thread combines the row's pairs (in chunk order), then
// the block writes its chunk.
template <typename T, int N>
__global__ void softmax_chunk_write(const T* src, T* dst, const float2* stats, int64_t rows, int64_t width,
                                    int64_t chunk, int64_t chunks) {
  for (int64_t task = blockIdx.x; task < rows * chunks; task += gridDim.x) {
    const int64_t row = task / chunks, c = task - row * chunks;
    float m = -INFINITY, s = 0.0f;
    for (int64_t i = 0; i < chunks; ++i) {
      const float2 p = stats[row * chunks + i];
      combine_stats(m, s, p.x, p.y);
    }
    const float scale = 1.0f / s;
    const int64_t begin = c * chunk, end = min64(width, begin + chunk);
    const Vec<T, N>* x = reinterpret_cast<const Vec<T, N>*>(src + row * width + begin);
    Vec<T, N>* y = reinterpret_cast<Vec<T, N>*>(dst + row * width + begin);
#pragma unroll 4
    for (int64_t i = threadIdx.x; i < (end - begin) / N; i += blockDim.x) {
      const Vec<T, N> in = x[i];
      Vec<T, N> out;
#pragma unroll
      for (int k = 0; k < N; ++k) out.v[k] = from_compute<T>(expf(to_compute(in.v[k]) - m) * scale);
      y[i] = out;
    }
  }
}

template <typename T, int N, int VPL, int G>
void launch_warp(const T* src, T* dst, int64_t rows, int64_t width, cudaStream_t stream) {
  constexpr int64_t kRowsPerWarp = (kWarp / G) * (VPL * N <= 8 ? 2 : 1);
  constexpr int block = 128;
  const int64_t warps = (rows + kRowsPerWarp - 1) / kRowsPerWarp;
  softmax_warp<T, N, VPL, G><<<grid_for(warps * kWarp, block), block, 0, stream>>>(src, dst, rows, width);
  check_launch("Softmax");
}

// Rows of at most 32 vectors: one vector per lane, G = the vectors rounded up to a power of two.
template <typename T, int N, int G>
void launch_warp_groups(int64_t vectors, const T* src, T* dst, int64_t rows, int64_t width, cudaStream_t stream) {
  if constexpr (G < kWarp) {
    if (vectors > G) return launch_warp_groups<T, N, G * 2>(vectors, src, dst, rows, width, stream);
  }
  launch_warp<T, N, 1, G>(src, dst, rows, width, stream);
}

// Longer rows: whole warps, VPL = vectors per lane rounded up to a power of two.
template <typename T, int N, int VPL>
void launch_warp_vectors(int64_t per_lane, const T* src, T* dst, int64_t rows, int64_t width, cudaStream_t stream) {
  if constexpr (VPL * N < 32) {
    if (per_lane > VPL) return launch_warp_vectors<T, N, VPL * 2>(per_lane, src, dst, rows, width, stream);
  }
  launch_warp<T, N, VPL, kWarp>(src, dst, rows, width, stream);
}

// Lets softmax_block use all the shared memory a block may have (set once per kernel).
template <typename T, int N>
void allow_large_smem() {
  static std::once_flag once;
  std::call_once(once, [] {
    check(cudaFuncSetAttribute(softmax_block<T, N>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(device_props().sharedMemPerBlockOptin) - 1024),
          "Softmax");
  });
}

template <typename T, int N>
void softmax_typed(const T* src, T* dst, int64_t rows, int64_t width, const Stream& s) {
  const cudaStream_t stream = stream_of(s);
  const cudaDeviceProp& p = device_props();
  if (width <= kWarpRowMax) {
    const int64_t vectors = (width + N - 1) / N;
    if (vectors <= kWarp) return launch_warp_groups<T, N, 1>(vectors, src, dst, rows, width, stream);
    return launch_warp_vectors<T, N, 2>((vectors + kWarp - 1) / kWarp, src, dst, rows, width, stream);
  }
  const size_t smem = static_cast<size_t>(width) * sizeof(T);
  const int block = width >= 16384 ? 512 : 256;
  const bool few_rows = rows < p.multiProcessorCount && width >= kFewRowsWidth;
  if (!few_rows && smem + 1024 <= p.sharedMemPerBlockOptin) {
    if (smem > 48 * 1024) allow_large_smem<T, N>();
    const unsigned grid = static_cast<unsigned>(min64(rows, INT32_MAX));
    softmax_block<T, N><<<grid, block, smem, stream>>>(src, dst, rows, width);
    check_launch("Softmax");
    return;
  }
  const int64_t target = static_cast<int64_t>(p.multiProcessorCount) * (p.maxThreadsPerMultiProcessor / 256);
  int64_t chunks = std::max<int64_t>(1, std::min((target + rows - 1) / rows, (width + kMinChunk - 1) / kMinChunk));
  // A multiple of 16 elements keeps every chunk as aligned as its row.
  const int64_t chunk = ((width + chunks - 1) / chunks + 15) / 16 * 16;
  chunks = (width + chunk - 1) / chunk;
  float2* stats = static_cast<float2*>(scratch(s, static_cast<size_t>(rows * chunks) * sizeof(float2)));
  const unsigned grid = static_cast<unsigned>(min64(rows * chunks, INT32_MAX));
  softmax_chunk_stats<T, N><<<grid, 256, 0, stream>>>(src, stats, rows, width, chunk, chunks);
  check_launch("Softmax");
  softmax_chunk_write<T, N><<<grid, 256, 0, stream>>>(src, dst, stats, rows, width, chunk, chunks);
  check_launch("Softmax");
}

}  // namespace
}  // namespace cuda

void Softmax::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (!is_floating_point(in.dtype()) || in.dtype() != out.dtype()) {
    throw std::invalid_argument("[Softmax] Only floating point inputs are supported.");
  }
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t stream = cuda::stream_of(this->stream());
  const void* src = in.desc()->data_ptr;
  if (!in.flags().row_contiguous) {
    cuda::copy_strided(src, in.dtype(), in.shape(), in.strides(), out.desc()->data_ptr, out.dtype(), stream);
    src = out.desc()->data_ptr;
  }
  const int64_t width = out.shape().back();
  const int64_t rows = static_cast<int64_t>(out.size()) / width;
  cuda::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (cuda::is_float_v<T>) {
      constexpr int N = 16 / sizeof(T);
      const T* x = static_cast<const T*>(src);
      T* y = static_cast<T*>(out.desc()->data_ptr);
      // Vector access needs every row start 16-byte aligned.
      if (width % N == 0 && cuda::is_aligned(x, 16) && cuda::is_aligned(y, 16)) {
        cuda::softmax_typed<T, N>(x, y, rows, width, this->stream());
      } else {
        cuda::softmax_typed<T, 1>(x, y, rows, width, this->stream());
      }
    }
  });
}

}  // namespace braid
