// The AVX2 kernels of vector_arith.h. This file alone is compiled with -mavx2 (see
// CMakeLists.txt); vector_arith() hands them out only after checking the CPU. Nothing here
// calls an inline function of a header: a copy compiled with -mavx2 could be the one the
// linker keeps for every file, and then run on a CPU without AVX2.
#include "backend/cpu/vector_arith.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

namespace braid::cpu::avx2 {
namespace {

template <ArithOp Op>
inline __m256 apply8(__m256 x, __m256 y) {
  if constexpr (Op == ArithOp::add) {
    return _mm256_add_ps(x, y);
  } else if constexpr (Op == ArithOp::subtract) {
    return _mm256_sub_ps(x, y);
  } else if constexpr (Op == ArithOp::multiply) {
    return _mm256_mul_ps(x, y);
  } else if constexpr (Op == ArithOp::divide) {
    return _mm256_div_ps(x, y);
  } else {
    // ew::Maximum and ew::Minimum: a NaN x, else a NaN y, else y if it is larger (smaller),
    // else x. vmaxps(y, x) is `y > x ? y : x`, which gives x on ties and on any NaN; only a
    // NaN y beside a number x still has to be put in.
    const __m256 r = Op == ArithOp::maximum ? _mm256_max_ps(y, x) : _mm256_min_ps(y, x);
    const __m256 y_only_nan =
        _mm256_and_ps(_mm256_cmp_ps(y, y, _CMP_UNORD_Q), _mm256_cmp_ps(x, x, _CMP_ORD_Q));
    return _mm256_blendv_ps(r, y, y_only_nan);
  }
}

template <ArithOp Op>
inline float apply1(float x, float y) {
  if constexpr (Op == ArithOp::add) {
    return x + y;
  } else if constexpr (Op == ArithOp::subtract) {
    return x - y;
  } else if constexpr (Op == ArithOp::multiply) {
    return x * y;
  } else if constexpr (Op == ArithOp::divide) {
    return x / y;
  } else {
    // ew::Maximum and ew::Minimum, restated here (see the first lines of this file).
    if (x != x) return x;
    if (y != y) return y;
    return Op == ArithOp::maximum ? (x < y ? y : x) : (y < x ? y : x);
  }
}

template <ArithOp Op, Operands kOperands>
void arith(const float* x, const float* y, float* out, int64_t n) {
  constexpr bool kXRun = kOperands != Operands::x_scalar, kYRun = kOperands != Operands::y_scalar;
  // A scalar side is in every lane of xs or ys.
  const __m256 xs = kXRun ? _mm256_setzero_ps() : _mm256_set1_ps(x[0]);
  const __m256 ys = kYRun ? _mm256_setzero_ps() : _mm256_set1_ps(y[0]);
  int64_t i = 0;
  // Four vectors per step: loads, the operation and stores of different vectors overlap.
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 32; k += 8) {
      const __m256 a = kXRun ? _mm256_loadu_ps(x + i + k) : xs;
      const __m256 b = kYRun ? _mm256_loadu_ps(y + i + k) : ys;
      _mm256_storeu_ps(out + i + k, apply8<Op>(a, b));
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 a = kXRun ? _mm256_loadu_ps(x + i) : xs;
    const __m256 b = kYRun ? _mm256_loadu_ps(y + i) : ys;
    _mm256_storeu_ps(out + i, apply8<Op>(a, b));
  }
  for (; i < n; ++i) out[i] = apply1<Op>(kXRun ? x[i] : x[0], kYRun ? y[i] : y[0]);
}

template <ArithOp Op>
ArithFn for_operands(Operands operands) {
  switch (operands) {
    case Operands::runs: return &arith<Op, Operands::runs>;
    case Operands::x_scalar: return &arith<Op, Operands::x_scalar>;
    case Operands::y_scalar: return &arith<Op, Operands::y_scalar>;
  }
  return nullptr;
}

}  // namespace

ArithFn arith_kernel(ArithOp op, Operands operands) {
  switch (op) {
    case ArithOp::add: return for_operands<ArithOp::add>(operands);
    case ArithOp::subtract: return for_operands<ArithOp::subtract>(operands);
    case ArithOp::multiply: return for_operands<ArithOp::multiply>(operands);
    case ArithOp::divide: return for_operands<ArithOp::divide>(operands);
    case ArithOp::maximum: return for_operands<ArithOp::maximum>(operands);
    case ArithOp::minimum: return for_operands<ArithOp::minimum>(operands);
  }
  return nullptr;
}

}  // namespace braid::cpu::avx2

#else

namespace braid::cpu::avx2 {
ArithFn arith_kernel(ArithOp, Operands) { return nullptr; }
}  // namespace braid::cpu::avx2

#endif
