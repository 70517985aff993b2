// The affine gemv: a warp computes kRowsPerWarp outputs (rows of w) for up to XRows rows of
// x. Each lane takes 16-byte chunks of the packed rows (lane, lane + 32, ...: the warp's loads
// coalesce) and issues the loads of several chunks of every row, with their scales and
// biases, before using any. A group's share of x.w is scale * (x.q) + bias * sum(x), the sums
// of x shared by the warp's rows, accumulated in float32.
//
// A field q becomes a float without a conversion instruction. For float16 x its bits, masked
// in place at bit p, read as the denormal q * 2^(p - 149), and x is pre-scaled by 2^(64 - p)
// once for all the rows: the product is x * q * 2^-85, exact, and the scale takes the 2^85
// back. bfloat16 and float32 x could overflow under that pre-scale; for them the field is
// or-ed into the mantissa of 2^23 (at bit p: 2^23 + q * 2^p) and one fma makes q.
#include "backend/cuda/quantized_gemv.h"

#include <cstring>
#include <type_traits>

#include "backend/cuda/kernel_utils.cuh"

namespace braid::cuda {
namespace {

constexpr int kWarps = 4;        // warps per block
constexpr int kRowsPerWarp = 4;  // outputs of a warp, sharing each load of x
constexpr int kPreScale = 64;    // the denormal path's products carry 2^(kPreScale - 149)

// 2^e as a float, e in [-126, 127].
__device__ __forceinline__ float pow2(int e) { return __int_as_float((127 + e) << 23); }

// Value j of a word of Bits-bit fields is read from the word itself at bit j * Bits while the
// field ends below bit 23, else from the word's upper half (at bit j * Bits - 16): a field
// always lies within a float's mantissa.
template <int Bits>
__device__ __forceinline__ bool from_upper_half(int j) {
  return j * Bits + Bits > 23;
}
template <int Bits>
__device__ __forceinline__ int field_shift(int j) {
  return from_upper_half<Bits>(j) ? j * Bits - 16 : j * Bits;
}

// The P values at p as floats (p 16-byte aligned, or 8 when P values take 8 bytes).
template <typename T, int P>
__device__ __forceinline__ void load_floats(const T* p, float (&v)[P]) {
  constexpr int kBytes = P * static_cast<int>(sizeof(T));
  static_assert(kBytes % 16 == 0 || kBytes == 8, "x is read 8 or 16 bytes at a time");
  if constexpr (kBytes % 16 == 0) {
    constexpr int kPer = 16 / static_cast<int>(sizeof(T));
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i) {
      const uint4 u = __ldg(reinterpret_cast<const uint4*>(p) + i);
      T e[kPer];
      memcpy(e, &u, 16);
#pragma unroll
      for (int j = 0; j < kPer; ++j) v[i * kPer + j] = to_compute(e[j]);
    }
  } else {
    const uint2 u = __ldg(reinterpret_cast<const uint2*>(p));
    T e[P];
    memcpy(e, &u, 8);
#pragma unroll
    for (int j = 0; j < P; ++j) v[j] = to_compute(e[j]);
  }
}

__device__ __forceinline__ uint32_t word_of(const uint4& v, int i) {
  return i == 0 ? v.x : (i == 1 ? v.y : (i == 2 ? v.z : v.w));
}

// out[r, j] for x rows [blockIdx.y * XRows, + XRows) and the warp's kRowsPerWarp rows j of w.
template <typename T, int Bits, int XRows>
__global__ void __launch_bounds__(kWarps * 32)
    affine_gemv_kernel(const T* __restrict__ x, const uint4* __restrict__ w, const T* __restrict__ scales,
                       const T* __restrict__ biases, T* __restrict__ out, int64_t m, int64_t n, int64_t k,
                       int group_shift) {
  constexpr int P = 32 / Bits;                  // values per word
  constexpr int kChunkValues = 4 * P;           // values per 16-byte chunk
  constexpr int kSegments = Bits == 2 ? 2 : 1;  // a 2-bit chunk (64 values) may span two groups of 32
  constexpr int kSegmentWords = 4 / kSegments;
  constexpr int R = kRowsPerWarp;
  constexpr int U = (XRows == 1 ? 4 : 2) / kSegments;  // chunks per row loaded ahead
  constexpr bool kDenormal = std::is_same_v<T, __half>;
  constexpr uint32_t kMask = (1u << Bits) - 1u;

  const int lane = threadIdx.x & 31;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32) * R;
  if (row0 >= n) return;
  const int64_t x0 = static_cast<int64_t>(blockIdx.y) * XRows;
  const int xrows = static_cast<int>(min64(XRows, m - x0));
  x += x0 * k;
  out += x0 * n;
  const int64_t chunks = k / kChunkValues, groups = k >> group_shift;
  int64_t wrow[R];
#pragma unroll
  for (int r = 0; r < R; ++r) wrow[r] = min64(row0 + r, n - 1);  // rows past n repeat the last, unstored

  float acc[R][XRows] = {};
  for (int64_t c0 = lane; c0 < chunks; c0 += 32 * U) {
    uint4 wv[U][R];
    T sc[U][R][kSegments], bi[U][R][kSegments];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = c0 + 32 * u;
      if (c >= chunks) break;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        wv[u][r] = __ldg(w + wrow[r] * chunks + c);
#pragma unroll
        for (int s = 0; s < kSegments; ++s) {
          const int64_t g = wrow[r] * groups + ((c * kChunkValues + s * kSegmentWords * P) >> group_shift);
          sc[u][r][s] = scales[g];
          bi[u][r][s] = biases[g];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = c0 + 32 * u;
      if (c >= chunks) break;
#pragma unroll
      for (int s = 0; s < kSegments; ++s) {
        float dot[R][XRows] = {}, xsum[XRows] = {};
#pragma unroll
        for (int sw = 0; sw < kSegmentWords; ++sw) {
          const int wi = s * kSegmentWords + sw;
          const int64_t at = c * kChunkValues + wi * P;
          float xv[XRows][P];
#pragma unroll
          for (int i = 0; i < XRows; ++i) {
            if (i < xrows) {
              load_floats<T, P>(x + i * k + at, xv[i]);
            } else {
#pragma unroll
              for (int j = 0; j < P; ++j) xv[i][j] = 0.0f;
            }
#pragma unroll
            for (int j = 0; j < P; ++j) xsum[i] += xv[i][j];
            if constexpr (kDenormal) {
#pragma unroll
              for (int j = 0; j < P; ++j) xv[i][j] *= pow2(kPreScale - field_shift<Bits>(j));
            }
          }
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const uint32_t word = word_of(wv[u][r], wi), upper = word >> 16;
            float q[P];
#pragma unroll
            for (int j = 0; j < P; ++j) {
              const int sh = field_shift<Bits>(j);
              const uint32_t field = (from_upper_half<Bits>(j) ? upper : word) & (kMask << sh);
              if constexpr (kDenormal) {
                q[j] = __uint_as_float(field);
              } else {
                q[j] = fmaf(__uint_as_float(field | 0x4B000000u), pow2(-sh), -pow2(23 - sh));
              }
            }
#pragma unroll
            for (int i = 0; i < XRows; ++i) {
#pragma unroll
              for (int j = 0; j < P; ++j) dot[r][i] = fmaf(xv[i][j], q[j], dot[r][i]);
            }
          }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
          float scale = to_compute(sc[u][r][s]);
          if constexpr (kDenormal) scale *= pow2(149 - kPreScale);
          const float bias = to_compute(bi[u][r][s]);
#pragma unroll
          for (int i = 0; i < XRows; ++i) acc[r][i] += scale * dot[r][i] + bias * xsum[i];
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int i = 0; i < XRows; ++i) {
      float v = acc[r][i];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == r * XRows + i && row0 + r < n && i < xrows) out[i * n + row0 + r] = from_compute<T>(v);
    }
  }
}

template <typename T, int Bits>
void launch(const void* x, const uint32_t* w, const void* scales, const void* biases, void* out, int64_t rows,
            int64_t n, int64_t k, int group_shift, cudaStream_t stream) {
  const auto blocks_x = static_cast<unsigned>((n + kWarps * kRowsPerWarp - 1) / (kWarps * kRowsPerWarp));
  const auto* xt = static_cast<const T*>(x);
  const auto* wv = reinterpret_cast<const uint4*>(w);
  const auto* st = static_cast<const T*>(scales);
  const auto* bt = static_cast<const T*>(biases);
  T* ot = static_cast<T*>(out);
  if (rows == 1) {
    affine_gemv_kernel<T, Bits, 1>
        <<<dim3(blocks_x, 1), kWarps * 32, 0, stream>>>(xt, wv, st, bt, ot, rows, n, k, group_shift);
  } else {
    const auto blocks_y = static_cast<unsigned>((rows + 3) / 4);
    affine_gemv_kernel<T, Bits, 4>
        <<<dim3(blocks_x, blocks_y), kWarps * 32, 0, stream>>>(xt, wv, st, bt, ot, rows, n, k, group_shift);
  }
}

template <typename T>
void launch_bits(int bits, const void* x, const uint32_t* w, const void* scales, const void* biases,
                 void* out, int64_t rows, int64_t n, int64_t k, int group_shift, cudaStream_t stream) {
  if (bits == 2) {
    launch<T, 2>(x, w, scales, biases, out, rows, n, k, group_shift, stream);
  } else if (bits == 4) {
    launch<T, 4>(x, w, scales, biases, out, rows, n, k, group_shift, stream);
  } else {
    launch<T, 8>(x, w, scales, biases, out, rows, n, k, group_shift, stream);
  }
}

}  // namespace

bool affine_gemv(Dtype dtype, const void* x, const uint32_t* w, const void* scales, const void* biases,
                 void* out, int64_t rows, int64_t n, int64_t k, int group, int bits, cudaStream_t stream) {
  if (rows < 1 || rows > kGemvMaxRows || n < 1) return false;
  if (bits != 2 && bits != 4 && bits != 8) return false;
  // Each group holds whole 32-value runs (segments never straddle groups); rows are whole chunks.
  if (group < 32 || (group & (group - 1)) != 0 || k % group != 0) return false;
  if ((k * bits / 32) % 4 != 0 || !is_aligned(x, 16) || !is_aligned(w, 16)) return false;
  int group_shift = 0;
  while ((1 << group_shift) < group) ++group_shift;
  if (dtype == float16) {
    launch_bits<__half>(bits, x, w, scales, biases, out, rows, n, k, group_shift, stream);
  } else if (dtype == bfloat16) {
    launch_bits<__nv_bfloat16>(bits, x, w, scales, biases, out, rows, n, k, group_shift, stream);
  } else if (dtype == float32) {
    launch_bits<float>(bits, x, w, scales, biases, out, rows, n, k, group_shift, stream);
  } else {
    return false;
  }
  check_launch("quantized_matmul");
  return true;
}

}  // namespace braid::cuda
