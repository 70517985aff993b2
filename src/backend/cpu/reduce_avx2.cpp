// The AVX2 float32 max/min loops of reduce_simd.h. This file alone is compiled with -mavx2
// (see CMakeLists.txt); reduce_simd.h calls into it only after checking the CPU. Each loop
// keeps the lane layout and order of operations of the SSE2 loop it replaces, so results are
// bit for bit the same (eight lanes hold what two SSE2 vectors did, a NaN or the order of -0
// and +0 decide as before), in half the instructions: the select is one blend.
#include "backend/cpu/reduce_simd.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

namespace braid::cpu::simd::avx2 {
namespace {

// sticky_v on eight lanes: max/min keeps s when either is NaN; a NaN x is put back.
template <bool kMax>
inline __m256 sticky8(__m256 s, __m256 x) {
  const __m256 m = kMax ? _mm256_max_ps(x, s) : _mm256_min_ps(x, s);
  return _mm256_blendv_ps(m, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

template <bool kMax>
float extreme_f32(const float* p, int64_t n, float init) {
  float acc = init;
  int64_t i = 0;
  if (n >= 16) {
    __m256 a0 = _mm256_set1_ps(init), a1 = a0;
    for (; i + 16 <= n; i += 16) {
      a0 = sticky8<kMax>(a0, _mm256_loadu_ps(p + i));
      a1 = sticky8<kMax>(a1, _mm256_loadu_ps(p + i + 8));
    }
    alignas(32) float lanes[16];
    _mm256_store_ps(lanes, a0);
    _mm256_store_ps(lanes + 8, a1);
    for (float x : lanes) acc = sticky<float, kMax>(acc, x);
  }
  for (; i < n; ++i) acc = sticky<float, kMax>(acc, p[i]);
  return acc;
}

template <bool kMax>
void extreme_row_f32(float* stage, const float* p, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(stage + j, sticky8<kMax>(_mm256_loadu_ps(stage + j), _mm256_loadu_ps(p + j)));
  for (; j < n; ++j) stage[j] = sticky<float, kMax>(stage[j], p[j]);
}

}  // namespace

const Kernels* kernels() {
  static const Kernels k = {{&extreme_f32<false>, &extreme_f32<true>},
                            {&extreme_row_f32<false>, &extreme_row_f32<true>}};
  return &k;
}

}  // namespace braid::cpu::simd::avx2

#else

namespace braid::cpu::simd::avx2 {
const Kernels* kernels() { return nullptr; }
}  // namespace braid::cpu::simd::avx2

#endif
