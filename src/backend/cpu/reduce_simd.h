// The reduction loops whose order of operations is fixed, so that a result never depends on
// the CPU or the thread count:
//  - the max/min family on float and double in SSE2: GCC does not vectorize a NaN-aware select
//    (it emits one scalar maxss per element), which leaves max and argmax compute-bound;
//  - the float sum of a contiguous run (lane_sum) and the column loops (extreme_rows,
//    sum_rows), which take a tile of rows per pass over their accumulators.
// Each helper has a plain loop for other types and for builds without SSE2. On CPUs with AVX2,
// the float32 loops take reduce_avx2.cpp's instead (kernels()), which give the same bits: same
// lanes, same order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace braid::cpu::simd {

template <typename T>
inline constexpr bool has_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// lane_sum's order: blocks of kSumBlock elements, kSumLanes float lanes in each.
inline constexpr int64_t kSumBlock = 2048;
inline constexpr int kSumLanes = 16;
/// The column loops take this many rows per pass over their accumulators.
inline constexpr int64_t kRowTile = 8;

/// The AVX2 loops for float32; index [kMax] picks max (1) or min (0).
struct Kernels {
  float (*extreme[2])(const float* p, int64_t n, float init);  // as extreme<float, kMax>
  // as extreme_rows<float, kMax>
  void (*extreme_rows[2])(float* stage, const float* p, int64_t stride, int64_t rows, int64_t n);
  double (*sum)(const float* p, int64_t n);  // as lane_sum<float>
  // as sum_rows<float>
  void (*sum_rows)(float* stage, const float* p, int64_t stride, int64_t rows, int64_t n);
};

/// This CPU's AVX2 loops, or null without AVX2 (or with BRAID_SCALAR_MATH=1). Thread-safe.
const Kernels* kernels();

namespace avx2 {
/// The loops of reduce_avx2.cpp (compiled with -mavx2), or null where they are not compiled.
/// Call only where the CPU has AVX2.
const Kernels* kernels();
}  // namespace avx2

// a NaN on either side wins (x when both are, as in sticky_v, so that a column's result does
// not depend on which of its columns a vector holds); otherwise the larger (kMax) or smaller.
template <typename T, bool kMax>
inline T sticky(T s, T x) {
  if (x != x) return x;
  if (s != s) return s;
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

/// extreme() through the AVX2 loop where this CPU has one for T.
template <typename T, bool kMax>
T extreme_dispatched(const T* p, int64_t n, T init) {
  if constexpr (std::is_same_v<T, float>) {
    if (const Kernels* k = kernels()) return k->extreme[kMax](p, n, init);
  }
  return extreme<T, kMax>(p, n, init);
}

/// stage[j] = sticky(stage[j], p[r * stride + j]) for the rows r in [0, rows), in order, and
/// j in [0, n). A tile of kRowTile rows is applied to a vector of columns before it is stored.
template <typename T, bool kMax>
void extreme_rows(T* stage, const T* p, int64_t stride, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r += kRowTile) {
    const T* q = p + r * stride;
    const int64_t tile = std::min(kRowTile, rows - r);
    int64_t j = 0;
#if defined(__SSE2__)
    if constexpr (has_v<T>) {
      using L = Lanes<T>;
      for (; j + L::N <= n; j += L::N) {
        typename L::V s = L::load(stage + j);
        for (int64_t t = 0; t < tile; ++t) s = sticky_v<T, kMax>(s, L::load(q + t * stride + j));
        L::store(stage + j, s);
      }
    }
#endif
    for (; j < n; ++j) {
      T s = stage[j];
      for (int64_t t = 0; t < tile; ++t) s = sticky<T, kMax>(s, q[t * stride + j]);
      stage[j] = s;
    }
  }
}

/// The sum of p[0, n) in a fixed order: in each block of kSumBlock elements, lane j of
/// kSumLanes adds the elements j, j + kSumLanes, ... in Real (float for float32 and the 16-bit
/// floats, double for double); the block's leftover elements and then its lanes in order are
/// added into a double; the blocks' doubles are added in order. Exact for integers up to 2^24
/// per lane and block.
template <typename Real, typename In>
double lane_sum(const In* p, int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) {
    const int64_t e = std::min(n, b + kSumBlock);
    Real lanes[kSumLanes] = {};
    int64_t i = b;
    for (; i + kSumLanes <= e; i += kSumLanes) {
      for (int j = 0; j < kSumLanes; ++j) lanes[j] += static_cast<Real>(p[i + j]);
    }
    double block = 0;
    for (; i < e; ++i) block += static_cast<Real>(p[i]);
    for (int j = 0; j < kSumLanes; ++j) block += lanes[j];
    total += block;
  }
  return total;
}

/// stage[j] += p[r * stride + j] in Real, for the rows r in [0, rows), in order, and j in
/// [0, n) (the AVX2 loop takes a tile of kRowTile rows per vector of columns: same order).
template <typename Real, typename In>
void sum_rows(Real* stage, const In* p, int64_t stride, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const In* q = p + r * stride;
    for (int64_t j = 0; j < n; ++j) stage[j] += static_cast<Real>(q[j]);
  }
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
