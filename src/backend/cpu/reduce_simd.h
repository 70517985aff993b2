// SSE2 loops for the max/min family on float and double: GCC does not vectorize a NaN-aware
// select (it emits one scalar maxss per element), which leaves max and argmax compute-bound.
// Each helper has a plain loop for other types and for builds without SSE2. On CPUs with AVX2,
// the float32 extremes take reduce_avx2.cpp's loops instead (kernels()), which give the same
// bits: same lanes, same order.
#pragma once

#include <cstdint>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace braid::cpu::simd {

template <typename T>
inline constexpr bool has_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// The AVX2 loops for float32; index [kMax] picks max (1) or min (0).
struct Kernels {
  float (*extreme[2])(const float* p, int64_t n, float init);       // as extreme<float, kMax>
  void (*extreme_row[2])(float* stage, const float* p, int64_t n);  // as extreme_row<float, kMax>
};

/// This CPU's AVX2 loops, or null without AVX2 (or with BRAID_SCALAR_MATH=1). Thread-safe.
const Kernels* kernels();

namespace avx2 {
/// The loops of reduce_avx2.cpp (compiled with -mavx2), or null where they are not compiled.
/// Call only where the CPU has AVX2.
const Kernels* kernels();
}  // namespace avx2

// a NaN on either side wins; otherwise the larger (kMax) or smaller value.
template <typename T, bool kMax>
inline T sticky(T s, T x) {
  if (s != s || x != x) return s != s ? s : x;
  return kMax ? (x > s ? x : s) : (x < s ? x : s);
}

#if defined(__SSE2__)
template <typename T>
struct Lanes;

template <>
struct Lanes<float> {
  using V = __m128;
  static constexpr int N = 4;
  static V load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, V v) { _mm_storeu_ps(p, v); }
  static V set1(float x) { return _mm_set1_ps(x); }
  static V max(V a, V b) { return _mm_max_ps(a, b); }
  static V min(V a, V b) { return _mm_min_ps(a, b); }
  static V unord(V a) { return _mm_cmpunord_ps(a, a); }
  static V gt(V a, V b) { return _mm_cmpgt_ps(a, b); }
  static V lt(V a, V b) { return _mm_cmplt_ps(a, b); }
  static V eq(V a, V b) { return _mm_cmpeq_ps(a, b); }
  static V select(V mask, V a, V b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }
  static int any(V mask) { return _mm_movemask_ps(mask); }
};

template <>
struct Lanes<double> {
  using V = __m128d;
  static constexpr int N = 2;
  static V load(const double* p) { return _mm_loadu_pd(p); }
  static void store(double* p, V v) { _mm_storeu_pd(p, v); }
  static V set1(double x) { return _mm_set1_pd(x); }
  static V max(V a, V b) { return _mm_max_pd(a, b); }
  static V min(V a, V b) { return _mm_min_pd(a, b); }
  static V unord(V a) { return _mm_cmpunord_pd(a, a); }
  static V gt(V a, V b) { return _mm_cmpgt_pd(a, b); }
  static V lt(V a, V b) { return _mm_cmplt_pd(a, b); }
  static V eq(V a, V b) { return _mm_cmpeq_pd(a, b); }
  static V select(V mask, V a, V b) { return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b)); }
  static int any(V mask) { return _mm_movemask_pd(mask); }
};

// sticky() on vectors. maxps(x, s) returns s when either is NaN, so a NaN s stays; a NaN x
// is put back by the select.
template <typename T, bool kMax>
inline typename Lanes<T>::V sticky_v(typename Lanes<T>::V s, typename Lanes<T>::V x) {
  using L = Lanes<T>;
  return L::select(L::unord(x), x, kMax ? L::max(x, s) : L::min(x, s));
}
#endif

/// The NaN-wins extreme of init and p[0, n).
template <typename T, bool kMax>
T extreme(const T* p, int64_t n, T init) {
  T acc = init;
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (has_v<T>) {
    using L = Lanes<T>;
    constexpr int N = L::N;
    if (n >= 4 * N) {
      typename L::V a0 = L::set1(init), a1 = a0, a2 = a0, a3 = a0;
      for (; i + 4 * N <= n; i += 4 * N) {
        a0 = sticky_v<T, kMax>(a0, L::load(p + i));
        a1 = sticky_v<T, kMax>(a1, L::load(p + i + N));
        a2 = sticky_v<T, kMax>(a2, L::load(p + i + 2 * N));
        a3 = sticky_v<T, kMax>(a3, L::load(p + i + 3 * N));
      }
      T lanes[4 * N];
      L::store(lanes, a0);
      L::store(lanes + N, a1);
      L::store(lanes + 2 * N, a2);
      L::store(lanes + 3 * N, a3);
      for (T x : lanes) acc = sticky<T, kMax>(acc, x);
    }
  }
#endif
  for (; i < n; ++i) acc = sticky<T, kMax>(acc, p[i]);
  return acc;
}

/// stage[j] = sticky(stage[j], p[j]) for j in [0, n).
template <typename T, bool kMax>
void extreme_row(T* stage, const T* p, int64_t n) {
  int64_t j = 0;
#if defined(__SSE2__)
  if constexpr (has_v<T>) {
    using L = Lanes<T>;
    for (; j + L::N <= n; j += L::N)
      L::store(stage + j, sticky_v<T, kMax>(L::load(stage + j), L::load(p + j)));
  }
#endif
  for (; j < n; ++j) stage[j] = sticky<T, kMax>(stage[j], p[j]);
}

/// The first position of v in p[0, n), or n.
template <typename T>
int64_t find_first(const T* p, int64_t n, T v) {
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (has_v<T>) {
    using L = Lanes<T>;
    const typename L::V vv = L::set1(v);
    for (; i + 2 * L::N <= n; i += 2 * L::N) {
      if (L::any(L::eq(L::load(p + i), vv)) | L::any(L::eq(L::load(p + i + L::N), vv))) break;
    }
  }
#endif
  for (; i < n; ++i) {
    if (p[i] == v) return i;
  }
  return n;
}

/// One row of an arg reduction over columns: where p[j] is strictly better than best[j], it
/// becomes the best and idx[j] becomes r (a NaN is never better, and a NaN best stays).
template <typename T, typename C, bool kMax>
void arg_row(C* best, uint32_t* idx, const T* p, int64_t n, uint32_t r) {
  int64_t j = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float> && std::is_same_v<C, float>) {
    using L = Lanes<float>;
    const __m128i rv = _mm_set1_epi32(static_cast<int32_t>(r));
    for (; j + 4 <= n; j += 4) {
      const __m128 x = L::load(p + j), b = L::load(best + j);
      const __m128 take = kMax ? L::gt(x, b) : L::lt(x, b);
      L::store(best + j, L::select(take, x, b));
      const __m128i m = _mm_castps_si128(take);
      const __m128i old = _mm_loadu_si128(reinterpret_cast<const __m128i*>(idx + j));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(idx + j),
                       _mm_or_si128(_mm_and_si128(m, rv), _mm_andnot_si128(m, old)));
    }
  }
#endif
  for (; j < n; ++j) {
    const C x = static_cast<C>(p[j]);
    const bool take = kMax ? x > best[j] : x < best[j];
    best[j] = take ? x : best[j];
    idx[j] = take ? r : idx[j];
  }
}

}  // namespace braid::cpu::simd
