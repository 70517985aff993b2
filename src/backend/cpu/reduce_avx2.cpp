// The AVX2 float32 loops of reduce_simd.h. This file alone is compiled with -mavx2 (see
// CMakeLists.txt); reduce_simd.h calls into it only after checking the CPU. Each loop keeps
// the lane layout and order of operations of the loop it replaces, so results are bit for bit
// the same (eight lanes hold what two SSE2 vectors did, a NaN or the order of -0 and +0 decide
// as before), in half the instructions or fewer.
// Nothing here calls an inline function of a header: a copy compiled with -mavx2 could be the
// one the linker keeps for every file, and then run on a CPU without AVX2.
#include "backend/cpu/reduce_simd.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

namespace braid::cpu::simd::avx2 {
namespace {

// How far ahead of its loads a loop over a contiguous run asks for memory, in floats (16 KiB).
// The loops below add lanes in a fixed order, so each vector add waits for the last: the
// out-of-order window then holds few loads, and the hardware prefetcher alone leaves memory
// idle. Asking early brings the lines in while the adds wait (on the 2-core EPYC, a row sum
// of 4096 x 4096 float32 on two threads: 0.72-0.78 ms without, 0.60-0.68 with). A prefetch
// is a hint: past the end of the run it reads nothing and cannot fault, and the address is
// formed as an integer, so no pointer leaves its array.
constexpr int64_t kPrefetchAhead = 4096;

inline void prefetch(const float* p, int64_t i) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) +
                                             static_cast<uintptr_t>(i + kPrefetchAhead) * sizeof(float)),
               _MM_HINT_T0);
}

// sticky() of reduce_simd.h, for this file's tails.
template <bool kMax>
inline float sticky1(float s, float x) {
  if (x != x) return x;
  if (s != s) return s;
  return kMax ? (x > s ? x : s) : (x < s ? x : s);
}

// max(x, s) or min(x, s): s when either is NaN.
template <bool kMax>
inline __m256 extreme8(__m256 s, __m256 x) {
  return kMax ? _mm256_max_ps(x, s) : _mm256_min_ps(x, s);
}

// sticky_v on eight lanes: a NaN x is put back into extreme8's result.
template <bool kMax>
inline __m256 sticky8(__m256 s, __m256 x) {
  return _mm256_blendv_ps(extreme8<kMax>(s, x), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// Sixteen lanes in two vectors, as extreme<float>'s four SSE2 vectors. Without a NaN in the
// input, sticky8 is extreme8 (the blend keeps every lane), so the first pass takes only the
// max or min and watches for NaNs; a run that has one is done again with sticky8. The chain
// from one load of a lane to the next is then one instruction instead of two.
template <bool kMax>
float extreme_f32(const float* p, int64_t n, float init) {
  float acc = init;
  const int64_t body = n / 16 * 16;
  if (body > 0) {
    __m256 a0 = _mm256_set1_ps(init), a1 = a0;
    __m256 nan = _mm256_setzero_ps();
    for (int64_t i = 0; i < body; i += 16) {
      prefetch(p, i);
      const __m256 x0 = _mm256_loadu_ps(p + i), x1 = _mm256_loadu_ps(p + i + 8);
      a0 = extreme8<kMax>(a0, x0);
      a1 = extreme8<kMax>(a1, x1);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(x0, x1, _CMP_UNORD_Q));
    }
    if (!_mm256_testz_ps(nan, nan)) {
      a0 = a1 = _mm256_set1_ps(init);
      for (int64_t i = 0; i < body; i += 16) {
        a0 = sticky8<kMax>(a0, _mm256_loadu_ps(p + i));
        a1 = sticky8<kMax>(a1, _mm256_loadu_ps(p + i + 8));
      }
    }
    alignas(32) float lanes[16];
    _mm256_store_ps(lanes, a0);
    _mm256_store_ps(lanes + 8, a1);
    for (float x : lanes) acc = sticky1<kMax>(acc, x);
  }
  for (int64_t i = body; i < n; ++i) acc = sticky1<kMax>(acc, p[i]);
  return acc;
}

template <bool kMax>
void extreme_rows_f32(float* stage, const float* p, int64_t stride, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r += kRowTile) {
    const float* q = p + r * stride;
    const int64_t tile = rows - r < kRowTile ? rows - r : kRowTile;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
      __m256 s0 = _mm256_loadu_ps(stage + j), s1 = _mm256_loadu_ps(stage + j + 8);
      for (int64_t t = 0; t < tile; ++t) {
        s0 = sticky8<kMax>(s0, _mm256_loadu_ps(q + t * stride + j));
        s1 = sticky8<kMax>(s1, _mm256_loadu_ps(q + t * stride + j + 8));
      }
      _mm256_storeu_ps(stage + j, s0);
      _mm256_storeu_ps(stage + j + 8, s1);
    }
    for (; j < n; ++j) {
      float s = stage[j];
      for (int64_t t = 0; t < tile; ++t) s = sticky1<kMax>(s, q[t * stride + j]);
      stage[j] = s;
    }
  }
}

// lane_sum<float>: lanes 0-7 and 8-15 of a block are two vectors.
double sum_f32(const float* p, int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) {
    const int64_t e = n - b < kSumBlock ? n : b + kSumBlock;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    int64_t i = b;
    for (; i + kSumLanes <= e; i += kSumLanes) {
      prefetch(p, i);
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + i));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + i + 8));
    }
    double block = 0;
    for (; i < e; ++i) block += p[i];
    alignas(32) float lanes[kSumLanes];
    _mm256_store_ps(lanes, a0);
    _mm256_store_ps(lanes + 8, a1);
    for (float x : lanes) block += x;
    total += block;
  }
  return total;
}

void sum_rows_f32(float* stage, const float* p, int64_t stride, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r += kRowTile) {
    const float* q = p + r * stride;
    const int64_t tile = rows - r < kRowTile ? rows - r : kRowTile;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
      __m256 s0 = _mm256_loadu_ps(stage + j), s1 = _mm256_loadu_ps(stage + j + 8);
      for (int64_t t = 0; t < tile; ++t) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(q + t * stride + j));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(q + t * stride + j + 8));
      }
      _mm256_storeu_ps(stage + j, s0);
      _mm256_storeu_ps(stage + j + 8, s1);
    }
    for (; j < n; ++j) {
      float s = stage[j];
      for (int64_t t = 0; t < tile; ++t) s += q[t * stride + j];
      stage[j] = s;
    }
  }
}

}  // namespace

const Kernels* kernels() {
  static const Kernels k = {{&extreme_f32<false>, &extreme_f32<true>},
                            {&extreme_rows_f32<false>, &extreme_rows_f32<true>},
                            &sum_f32,
                            &sum_rows_f32};
  return &k;
}

}  // namespace braid::cpu::simd::avx2

#else

namespace braid::cpu::simd::avx2 {
const Kernels* kernels() { return nullptr; }
}  // namespace braid::cpu::simd::avx2

#endif
