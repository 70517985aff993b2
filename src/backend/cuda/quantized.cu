// Quantization on the GPU (every mode, the mode a template parameter of each kernel): a
// thread per group for quantize, a thread per element for dequantize, and for
// quantized_matmul with few rows the affine gemv of quantized_gemv.cu where it applies; the
// other few-row products (other modes, 3, 5 and 6 bits, unaligned operands, gather_qmm's
// transposed products) take a warp per output column that reads its packed weight row once
// per eight rows of x.
#include <cstdint>
#include <vector>

#include "backend/common/quantized.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/quantized_gemv.h"
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

// Where a packed matrix's group parameters come from: affine's scales and biases (of type
// T), or a fp mode's uint8 scale codes, times the nvfp4 global scale / (448 * 6) when
// `global_scale` (device memory, one float) is given.
template <typename T, QuantizationMode M>
struct Groups {
  const void* scales = nullptr;
  const T* biases = nullptr;
  const float* global_scale = nullptr;

  __device__ __forceinline__ void at(int64_t g, float& mul, float& add) const {
    if constexpr (M == QuantizationMode::affine) {
      mul = to_compute(static_cast<const T*>(scales)[g]);
      add = to_compute(biases[g]);
    } else {
      mul = common::scale_value(M, static_cast<const uint8_t*>(scales)[g]);
      if (global_scale) mul *= *global_scale / common::kNvfp4GlobalRange;
      add = 0.0f;
    }
  }
  __device__ __forceinline__ Groups skip(int64_t groups) const {
    Groups r = *this;
    if constexpr (M == QuantizationMode::affine) {
      r.scales = static_cast<const T*>(scales) + groups;
      r.biases = biases + groups;
    } else {
      r.scales = static_cast<const uint8_t*>(scales) + groups;
    }
    return r;
  }
};

// A thread per group: its packed words, or its scale (affine: or bias).
template <typename T, QuantizationMode M>
__global__ void quantize_groups(const T* __restrict__ w, void* __restrict__ out, int64_t groups, int group, int bits,
                                Quantize::Part part, const float* global_scale) {
  const int64_t words_per_group = static_cast<int64_t>(group) * bits / 32;
  const float global = global_scale ? *global_scale : 0.0f;
  for (int64_t g = thread_index(); g < groups; g += thread_count()) {
    const T* x = w + g * group;
    float lo = to_compute(x[0]), hi = lo, amax = fabsf(lo);
    for (int i = 1; i < group; ++i) {
      const float v = to_compute(x[i]);
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
      amax = fmaxf(amax, fabsf(v));
    }
    common::AffineParams p{};
    common::FpGroup fp{};
    if constexpr (M == QuantizationMode::affine) {
      p = common::affine_params(lo, hi, bits);
    } else {
      fp = common::fp_group(M, amax, global);
    }
    switch (part) {
      case Quantize::Part::scales:
        if constexpr (M == QuantizationMode::affine) {
          static_cast<T*>(out)[g] = from_compute<T>(p.scale);
        } else {
          static_cast<uint8_t*>(out)[g] = static_cast<uint8_t>(fp.scale_code);
        }
        break;
      case Quantize::Part::biases: static_cast<T*>(out)[g] = from_compute<T>(p.bias); break;
      case Quantize::Part::packed: {
        uint32_t* words = static_cast<uint32_t*>(out) + g * words_per_group;
        for (int64_t k = 0; k < words_per_group; ++k) words[k] = 0;
        for (int i = 0; i < group; ++i) {
          const float v = to_compute(x[i]);
          uint32_t q;
          if constexpr (M == QuantizationMode::affine) {
            q = common::affine_quantize(v, p, bits);
          } else {
            q = common::fp_quantize(M, v, fp);
          }
          common::pack_into(words, i, q, bits);
        }
        break;
      }
    }
  }
}

// One thread per output element (k values per row, `words` packed words per row).
template <typename T, QuantizationMode M>
__global__ void dequantize_elements(const uint32_t* __restrict__ w, Groups<T, M> params, T* __restrict__ out,
                                    int64_t n, int64_t k, int64_t words, int group, int bits) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    const int64_t r = i / k, j = i - r * k;
    float mul, add;
    params.at(r * (k / group) + j / group, mul, add);
    const float v = common::element_value(M, common::unpack(w + r * words, j, bits));
    out[i] = from_compute<T>(mul * v + add);
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
// out[b, r, col] = sum_k x[r, k] * (mul * value(q[col, k]) + add), x and w of product b's
// batches.
template <typename T, QuantizationMode M>
__global__ void qmv(const T* __restrict__ x, const uint32_t* __restrict__ w, Groups<T, M> params, T* __restrict__ out,
                    BatchIndices idx, int64_t batches, int64_t rows, int64_t n, int64_t k, int64_t words, int group,
                    int bits) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int64_t groups = k / group;
  for (int64_t t = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; t < batches * n; t += warps) {
    const int64_t b = t / n, col = t - b * n;
    const int64_t w_row = idx.w_of(b) * n + col;
    const uint32_t* row = w + w_row * words;
    const Groups<T, M> p = params.skip(w_row * groups);
    const T* xb = x + idx.x_of(b) * rows * k;
    T* ob = out + b * rows * n;
    for (int64_t r0 = 0; r0 < rows; r0 += kMaxRows) {
      const int chunk = static_cast<int>(min64(kMaxRows, rows - r0));
      float acc[kMaxRows] = {};
      for (int64_t j = lane; j < k; j += 32) {
        float mul, add;
        p.at(j / group, mul, add);
        const float wv = mul * common::element_value(M, common::unpack(row, j, bits)) + add;
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
// applies the group's multiplier and offset once per word, and reads the word's x values in
// a run.
template <typename T, int Bits, QuantizationMode M>
__global__ void qmv_words(const T* __restrict__ x, const uint32_t* __restrict__ w, Groups<T, M> params,
                          T* __restrict__ out, BatchIndices idx, int64_t batches, int64_t rows, int64_t n, int64_t k,
                          int64_t words, int group) {
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
    const Groups<T, M> p = params.skip(w_row * groups);
    const T* xb = x + idx.x_of(b) * rows * k;
    T* ob = out + b * rows * n;
    for (int64_t r0 = 0; r0 < rows; r0 += kMaxRows) {
      const int chunk = static_cast<int>(min64(kMaxRows, rows - r0));
      float acc[kMaxRows] = {};
      for (int64_t wi = lane; wi < words; wi += 32) {
        const uint32_t packed = row[wi];
        float mul, add;
        p.at(wi / words_per_group, mul, add);
        float q[kPer];
#pragma unroll
        for (int e = 0; e < kPer; ++e) q[e] = common::element_value(M, (packed >> (e * Bits)) & kMask);
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
            acc[r] += mul * dot + add * sum;
          }
        }
      }
      store_warp_sums(acc, chunk, lane, ob + r0 * n + col, n);
    }
  }
}

// out[b] = x[lhs b] @ dequantize(w[rhs b]).T for b in [0, batches): qmv_words where the width
// divides 32, the general qmv otherwise.
template <typename T, QuantizationMode M>
void launch_qmv(const T* x, const uint32_t* w, Groups<T, M> params, T* out, BatchIndices idx, int64_t batches,
                int64_t rows, int64_t n, int64_t k, int64_t words, int group, int bits, cudaStream_t stream) {
  const unsigned grid = grid_for(batches * n * 32, kBlock);
  switch (bits) {
    case 2:
      qmv_words<T, 2, M><<<grid, kBlock, 0, stream>>>(x, w, params, out, idx, batches, rows, n, k, words, group);
      return;
    case 4:
      qmv_words<T, 4, M><<<grid, kBlock, 0, stream>>>(x, w, params, out, idx, batches, rows, n, k, words, group);
      return;
    case 8:
      qmv_words<T, 8, M><<<grid, kBlock, 0, stream>>>(x, w, params, out, idx, batches, rows, n, k, words, group);
      return;
    default:
      qmv<T, M><<<grid, kBlock, 0, stream>>>(x, w, params, out, idx, batches, rows, n, k, words, group, bits);
      return;
  }
}

// gather_qmm without the transpose: a thread per output element out[b, r, col] =
// sum_k x[r, k] * (mul[k, col / group] * value(q[k, col]) + add), w of product b being [K, N].
template <typename T, QuantizationMode M>
__global__ void qmm_untransposed(const T* __restrict__ x, const uint32_t* __restrict__ w, Groups<T, M> params,
                                 T* __restrict__ out, BatchIndices idx, int64_t batches, int64_t rows, int64_t n,
                                 int64_t k, int64_t words, int group, int bits) {
  const int64_t groups = n / group;
  for (int64_t t = thread_index(); t < batches * rows * n; t += thread_count()) {
    const int64_t b = t / (rows * n), rc = t - b * rows * n, r = rc / n, col = rc - r * n;
    const int64_t wb = idx.w_of(b);
    const T* xr = x + (idx.x_of(b) * rows + r) * k;
    const uint32_t* wm = w + wb * k * words;
    const Groups<T, M> p = params.skip(wb * k * groups + col / group);
    float acc = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      float mul, add;
      p.at(kk * groups, mul, add);
      const float v = common::element_value(M, common::unpack(wm + kk * words, col, bits));
      acc += to_compute(xr[kk]) * (mul * v + add);
    }
    out[t] = from_compute<T>(acc);
  }
}

// The groups of a product's scales at ptrs[at] (and for affine, biases at ptrs[at + 1]).
template <typename T, QuantizationMode M>
Groups<T, M> groups_at(const std::vector<const void*>& ptrs, size_t at) {
  Groups<T, M> g;
  g.scales = ptrs[at];
  if constexpr (M == QuantizationMode::affine) g.biases = static_cast<const T*>(ptrs[at + 1]);
  return g;
}

}  // namespace
}  // namespace cuda

void Quantize::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const auto ptrs = cuda::contiguous(inputs, stream());
  const float* global_scale = inputs.size() > 1 ? static_cast<const float*>(ptrs[1]) : nullptr;
  const int64_t groups = static_cast<int64_t>(inputs[0].size()) / group_size_;
  cuda::for_float_types(inputs[0].dtype(), "quantize", [&](auto tag) {
    using T = typename decltype(tag)::type;
    common::dispatch_mode(mode_, [&](auto mode_tag) {
      constexpr QuantizationMode M = decltype(mode_tag)::value;
      cuda::quantize_groups<T, M><<<cuda::grid_for(groups, cuda::kBlock), cuda::kBlock, 0, cuda::stream_of(stream())>>>(
          static_cast<const T*>(ptrs[0]), out.desc()->data_ptr, groups, group_size_, bits_, part_, global_scale);
    });
    cuda::check_launch("quantize");
  });
}

void Dequantize::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const auto ptrs = cuda::contiguous(inputs, stream());
  const int64_t k = out.shape(-1), n = static_cast<int64_t>(out.size());
  cuda::for_float_types(out.dtype(), "dequantize", [&](auto tag) {
    using T = typename decltype(tag)::type;
    common::dispatch_mode(mode_, [&](auto mode_tag) {
      constexpr QuantizationMode M = decltype(mode_tag)::value;
      cuda::Groups<T, M> params = cuda::groups_at<T, M>(ptrs, 1);
      if constexpr (M != QuantizationMode::affine) {
        if (ptrs.size() > 2) params.global_scale = static_cast<const float*>(ptrs[2]);
      }
      cuda::dequantize_elements<T, M><<<cuda::grid_for(n, cuda::kBlock), cuda::kBlock, 0, cuda::stream_of(stream())>>>(
          static_cast<const uint32_t*>(ptrs[0]), params, static_cast<T*>(out.desc()->data_ptr), n, k,
          inputs[0].shape(-1), group_size_, bits_);
    });
    cuda::check_launch("dequantize");
  });
}

void QuantizedMatmul::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const auto ptrs = cuda::contiguous(inputs, stream());
  const int64_t rows = inputs[0].shape(0), k = inputs[0].shape(1), n = inputs[1].shape(0), words = inputs[1].shape(1);
  if (mode_ == QuantizationMode::affine &&
      cuda::affine_gemv(out.dtype(), ptrs[0], static_cast<const uint32_t*>(ptrs[1]), ptrs[2], ptrs[3],
                        out.desc()->data_ptr, rows, n, k, group_size_, bits_, cuda::stream_of(stream()))) {
    return;
  }
  cuda::for_float_types(out.dtype(), "quantized_matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    common::dispatch_mode(mode_, [&](auto mode_tag) {
      constexpr QuantizationMode M = decltype(mode_tag)::value;
      cuda::launch_qmv<T, M>(static_cast<const T*>(ptrs[0]), static_cast<const uint32_t*>(ptrs[1]),
                             cuda::groups_at<T, M>(ptrs, 2), static_cast<T*>(out.desc()->data_ptr),
                             cuda::BatchIndices{}, 1, rows, n, k, words, group_size_, bits_, cuda::stream_of(stream()));
    });
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
  idx.lhs = static_cast<const uint32_t*>(ptrs[ptrs.size() - 2]);
  idx.rhs = static_cast<const uint32_t*>(ptrs[ptrs.size() - 1]);
  idx.x_batches = inputs[0].shape(0);
  idx.w_batches = inputs[1].shape(0);
  cuda::for_float_types(out.dtype(), "gather_qmm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    common::dispatch_mode(mode_, [&](auto mode_tag) {
      constexpr QuantizationMode M = decltype(mode_tag)::value;
      const auto* x = static_cast<const T*>(ptrs[0]);
      const auto* w = static_cast<const uint32_t*>(ptrs[1]);
      const cuda::Groups<T, M> params = cuda::groups_at<T, M>(ptrs, 2);
      T* dst = static_cast<T*>(out.desc()->data_ptr);
      const cudaStream_t cs = cuda::stream_of(stream());
      if (transpose_) {
        cuda::launch_qmv<T, M>(x, w, params, dst, idx, batches, rows, n, k, words, group_size_, bits_, cs);
      } else {
        cuda::qmm_untransposed<T, M><<<cuda::grid_for(batches * rows * n, cuda::kBlock), cuda::kBlock, 0, cs>>>(
            x, w, params, dst, idx, batches, rows, n, k, words, group_size_, bits_);
      }
    });
    cuda::check_launch("gather_qmm");
  });
}

}  // namespace braid
