// Affine quantization on the GPU: a thread per group for quantize, a thread per element for
// dequantize, and for quantized_matmul with few rows (and gather_qmm's transposed products)
// a warp per output column that reads its packed weight row once per eight rows of x.
#include <cstdint>
#include <vector>

#include "backend/common/quantized.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kMaxRows = 8;  // rows of x a warp of qmv accumulates at once

// Device pointers to row-contiguous copies of `inputs` (the inputs themselves when they
// already are), the copies carved out of one scratch buffer of `s`.
std::vector<const void*> contiguous(const std::vector<array>& inputs, const Stream& s) {
  ScratchPlan plan;
  std::vector<size_t> at(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].flags().row_contiguous) at[i] = plan.reserve(inputs[i].nbytes());
  }
  plan.fetch(s);
  std::vector<const void*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const array& in = inputs[i];
    if (in.flags().row_contiguous) {
      ptrs.push_back(in.desc()->data_ptr);
      continue;
    }
    char* dst = plan.at<char>(at[i]);
    copy_strided(in.desc()->data_ptr, in.dtype(), in.shape(), in.strides(), dst, in.dtype(), stream_of(s));
    ptrs.push_back(dst);
  }
  return ptrs;
}

// Calls fn(TypeTag<T>{}) for the dtypes quantization takes (the ops reject the others).
template <typename F>
void for_float_types(Dtype d, const char* op, F&& fn) {
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_half_v<T> || std::is_same_v<T, float>) {
      fn(tag);
    } else {
      throw std::invalid_argument(std::string("[") + op + "] Unsupported dtype " + dtype_name(d) + ".");
    }
  });
}

template <typename T>
__global__ void quantize_groups(const T* __restrict__ w, void* __restrict__ out, int64_t groups, int group, int bits,
                                int part) {
  const int64_t words_per_group = static_cast<int64_t>(group) * bits / 32;
  for (int64_t g = thread_index(); g < groups; g += thread_count()) {
    const T* x = w + g * group;
    float lo = to_compute(x[0]), hi = lo;
    for (int i = 1; i < group; ++i) {
      const float v = to_compute(x[i]);
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
    }
    const common::AffineParams p = common::affine_params(lo, hi, bits);
    if (part == 1) {
      static_cast<T*>(out)[g] = from_compute<T>(p.scale);
    } else if (part == 2) {
      static_cast<T*>(out)[g] = from_compute<T>(p.bias);
    } else {
      uint32_t* words = static_cast<uint32_t*>(out) + g * words_per_group;
      for (int64_t k = 0; k < words_per_group; ++k) words[k] = 0;
      for (int i = 0; i < group; ++i) common::pack_into(words, i, common::affine_quantize(to_compute(x[i]), p, bits), bits);
    }
  }
}

// One thread per output element (k values per row, `words` packed words per row).
template <typename T>
__global__ void dequantize_elements(const uint32_t* __restrict__ w, const T* __restrict__ scales,
                                    const T* __restrict__ biases, T* __restrict__ out, int64_t n, int64_t k,
                                    int64_t words, int group, int bits) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const int64_t r = i / k, j = i - r * k;
    const int64_t g = r * (k / group) + j / group;
    const float q = static_cast<float>(common::unpack(w + r * words, j, bits));
    out[i] = from_compute<T>(to_compute(scales[g]) * q + to_compute(biases[g]));
  }
}

// Where operand batches come from: product b reads x batch lhs[b] and w batch rhs[b] (both
// clamped to the last batch); without index arrays there is one product of batch 0 and 0.
struct BatchIndices {
  const uint32_t* lhs = nullptr;
  const uint32_t* rhs = nullptr;
  int64_t x_batches = 1, w_batches = 1;
  __device__ __forceinline__ int64_t x_of(int64_t b) const { return lhs ? min64(lhs[b], x_batches - 1) : 0; }
  __device__ __forceinline__ int64_t w_of(int64_t b) const { return rhs ? min64(rhs[b], w_batches - 1) : 0; }
};

// Sums each of the first `chunk` rows' partial dot products over the warp; lane 0 writes row
// r's sum to out[r * n].
template <typename T>
__device__ __forceinline__ void store_warp_sums(const float (&acc)[kMaxRows], int chunk, int lane, T* out, int64_t n) {
#pragma unroll
  for (int r = 0; r < kMaxRows; ++r) {
    if (r >= chunk) break;
    float v = acc[r];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    if (lane == 0) out[r * n] = from_compute<T>(v);
  }
}

// A warp per (product b, output column col), over rows in chunks of kMaxRows:
// out[b, r, col] = sum_k x[r, k] * (s * q[col, k] + bias), x and w of product b's batches.
template <typename T>
__global__ void qmv(const T* __restrict__ x, const uint32_t* __restrict__ w, const T* __restrict__ scales,
                    const T* __restrict__ biases, T* __restrict__ out, BatchIndices idx, int64_t batches, int64_t rows,
                    int64_t n, int64_t k, int64_t words, int group, int bits) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int64_t groups = k / group;
  for (int64_t t = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; t < batches * n; t += warps) {
    const int64_t b = t / n, col = t - b * n;
    const int64_t w_row = idx.w_of(b) * n + col;
    const uint32_t* row = w + w_row * words;
    const T* s = scales + w_row * groups;
    const T* bias = biases + w_row * groups;
    const T* xb = x + idx.x_of(b) * rows * k;
    T* ob = out + b * rows * n;
    for (int64_t r0 = 0; r0 < rows; r0 += kMaxRows) {
      const int chunk = static_cast<int>(min64(kMaxRows, rows - r0));
      float acc[kMaxRows] = {};
      for (int64_t j = lane; j < k; j += 32) {
        const int64_t g = j / group;
        const float wv = to_compute(s[g]) * static_cast<float>(common::unpack(row, j, bits)) + to_compute(bias[g]);
#pragma unroll
        for (int r = 0; r < kMaxRows; ++r) {
          if (r < chunk) acc[r] += to_compute(xb[(r0 + r) * k + j]) * wv;
        }
      }
      store_warp_sums(acc, chunk, lane, ob + r0 * n + col, n);
    }
  }
}

// qmv for widths that divide 32 (2, 4, 8 bits), where a word's values share one group: each
// lane takes whole words (consecutive lanes, consecutive words: the warp's loads coalesce),
// applies the group's scale and bias once per word, and reads the word's x values in a run.
template <typename T, int Bits>
__global__ void qmv_words(const T* __restrict__ x, const uint32_t* __restrict__ w, const T* __restrict__ scales,
                          const T* __restrict__ biases, T* __restrict__ out, BatchIndices idx, int64_t batches,
                          int64_t rows, int64_t n, int64_t k, int64_t words, int group) {
  constexpr int kPer = 32 / Bits;
  constexpr uint32_t kMask = (1u << Bits) - 1u;
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int64_t groups = k / group;
  const int words_per_group = group / kPer;
  for (int64_t t = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; t < batches * n; t += warps) {
    const int64_t b = t / n, col = t - b * n;
    const int64_t w_row = idx.w_of(b) * n + col;
    const uint32_t* row = w + w_row * words;
    const T* s = scales + w_row * groups;
    const T* bias = biases + w_row * groups;
    const T* xb = x + idx.x_of(b) * rows * k;
    T* ob = out + b * rows * n;
    for (int64_t r0 = 0; r0 < rows; r0 += kMaxRows) {
      const int chunk = static_cast<int>(min64(kMaxRows, rows - r0));
      float acc[kMaxRows] = {};
      for (int64_t wi = lane; wi < words; wi += 32) {
        const uint32_t packed = row[wi];
        const int g = static_cast<int>(wi / words_per_group);
        const float sc = to_compute(s[g]), bi = to_compute(bias[g]);
        float q[kPer];
#pragma unroll
        for (int e = 0; e < kPer; ++e) q[e] = static_cast<float>((packed >> (e * Bits)) & kMask);
#pragma unroll
        for (int r = 0; r < kMaxRows; ++r) {
          if (r < chunk) {
            const T* xr = xb + (r0 + r) * k + wi * kPer;
            float dot = 0.0f, sum = 0.0f;
#pragma unroll
            for (int e = 0; e < kPer; ++e) {
              const float xv = to_compute(xr[e]);
              dot += xv * q[e];
              sum += xv;
            }
            acc[r] += sc * dot + bi * sum;
          }
        }
      }
      store_warp_sums(acc, chunk, lane, ob + r0 * n + col, n);
    }
  }
}

// out[b] = x[lhs b] @ dequantize(w[rhs b]).T for b in [0, batches): qmv_words where the width
// divides 32, the general qmv otherwise.
template <typename T>
void launch_qmv(const T* x, const uint32_t* w, const T* scales, const T* biases, T* out, BatchIndices idx,
                int64_t batches, int64_t rows, int64_t n, int64_t k, int64_t words, int group, int bits,
                cudaStream_t stream) {
  const unsigned grid = grid_for(batches * n * 32, kBlock);
  switch (bits) {
    case 2:
      qmv_words<T, 2><<<grid, kBlock, 0, stream>>>(x, w, scales, biases, out, idx, batches, rows, n, k, words, group);
      return;
    case 4:
      qmv_words<T, 4><<<grid, kBlock, 0, stream>>>(x, w, scales, biases, out, idx, batches, rows, n, k, words, group);
      return;
    case 8:
      qmv_words<T, 8><<<grid, kBlock, 0, stream>>>(x, w, scales, biases, out, idx, batches, rows, n, k, words, group);
      return;
    default:
      qmv<T><<<grid, kBlock, 0, stream>>>(x, w, scales, biases, out, idx, batches, rows, n, k, words, group, bits);
      return;
  }
}

// gather_qmm without the transpose: a thread per output element out[b, r, col] =
// sum_k x[r, k] * (s[k, col / group] * q[k, col] + bias), w of product b being [K, N].
template <typename T>
__global__ void qmm_untransposed(const T* __restrict__ x, const uint32_t* __restrict__ w, const T* __restrict__ scales,
                                 const T* __restrict__ biases, T* __restrict__ out, BatchIndices idx, int64_t batches,
                                 int64_t rows, int64_t n, int64_t k, int64_t words, int group, int bits) {
  const int64_t groups = n / group;
  for (int64_t t = thread_index(); t < batches * rows * n; t += thread_count()) {
    const int64_t b = t / (rows * n), rc = t - b * rows * n, r = rc / n, col = rc - r * n;
    const int64_t wb = idx.w_of(b);
    const T* xr = x + (idx.x_of(b) * rows + r) * k;
    const uint32_t* wm = w + wb * k * words;
    const T* s = scales + wb * k * groups + col / group;
    const T* bias = biases + wb * k * groups + col / group;
    float acc = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float q = static_cast<float>(common::unpack(wm + kk * words, col, bits));
      acc += to_compute(xr[kk]) * (to_compute(s[kk * groups]) * q + to_compute(bias[kk * groups]));
    }
    out[t] = from_compute<T>(acc);
  }
}

}  // namespace
}  // namespace cuda

void AffineQuantize::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const auto ptrs = cuda::contiguous({inputs[0]}, stream());
  const int64_t groups = static_cast<int64_t>(inputs[0].size()) / group_size_;
  const int part = part_ == Part::packed ? 0 : (part_ == Part::scales ? 1 : 2);
  cuda::for_float_types(inputs[0].dtype(), "quantize", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::quantize_groups<T><<<cuda::grid_for(groups, cuda::kBlock), cuda::kBlock, 0, cuda::stream_of(stream())>>>(
        static_cast<const T*>(ptrs[0]), out.desc()->data_ptr, groups, group_size_, bits_, part);
    cuda::check_launch("quantize");
  });
}

void AffineDequantize::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const auto ptrs = cuda::contiguous(inputs, stream());
  const int64_t k = out.shape(-1), n = static_cast<int64_t>(out.size());
  cuda::for_float_types(out.dtype(), "dequantize", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::dequantize_elements<T><<<cuda::grid_for(n, cuda::kBlock), cuda::kBlock, 0, cuda::stream_of(stream())>>>(
        static_cast<const uint32_t*>(ptrs[0]), static_cast<const T*>(ptrs[1]), static_cast<const T*>(ptrs[2]),
        static_cast<T*>(out.desc()->data_ptr), n, k, inputs[0].shape(-1), group_size_, bits_);
    cuda::check_launch("dequantize");
  });
}

void QuantizedMatmul::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const auto ptrs = cuda::contiguous(inputs, stream());
  const int64_t rows = inputs[0].shape(0), k = inputs[0].shape(1), n = inputs[1].shape(0), words = inputs[1].shape(1);
  cuda::for_float_types(out.dtype(), "quantized_matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::launch_qmv<T>(static_cast<const T*>(ptrs[0]), static_cast<const uint32_t*>(ptrs[1]),
                        static_cast<const T*>(ptrs[2]), static_cast<const T*>(ptrs[3]),
                        static_cast<T*>(out.desc()->data_ptr), cuda::BatchIndices{}, 1, rows, n, k, words,
                        group_size_, bits_, cuda::stream_of(stream()));
    cuda::check_launch("quantized_matmul");
  });
}

void GatherQMM::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const auto ptrs = cuda::contiguous(inputs, stream());
  const int64_t batches = out.shape(0), rows = out.shape(1), n = out.shape(2), k = inputs[0].shape(2);
  const int64_t words = inputs[1].shape(2);
  cuda::BatchIndices idx;
  idx.lhs = static_cast<const uint32_t*>(ptrs[4]);
  idx.rhs = static_cast<const uint32_t*>(ptrs[5]);
  idx.x_batches = inputs[0].shape(0);
  idx.w_batches = inputs[1].shape(0);
  cuda::for_float_types(out.dtype(), "gather_qmm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* x = static_cast<const T*>(ptrs[0]);
    const auto* w = static_cast<const uint32_t*>(ptrs[1]);
    const auto* scales = static_cast<const T*>(ptrs[2]);
    const auto* biases = static_cast<const T*>(ptrs[3]);
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    const cudaStream_t cs = cuda::stream_of(stream());
    if (transpose_) {
      cuda::launch_qmv<T>(x, w, scales, biases, dst, idx, batches, rows, n, k, words, group_size_, bits_, cs);
    } else {
      cuda::qmm_untransposed<T><<<cuda::grid_for(batches * rows * n, cuda::kBlock), cuda::kBlock, 0, cs>>>(
          x, w, scales, biases, dst, idx, batches, rows, n, k, words, group_size_, bits_);
    }
    cuda::check_launch("gather_qmm");
  });
}

}  // namespace braid
