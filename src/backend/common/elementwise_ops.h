// The math of every Unary and Binary op (primitives/elementwise_ops.h), written once and
// compiled by g++ for the CPU kernels and by nvcc for the CUDA kernels. A functor takes compute
// types: bool, the integers, float (also for float16 and bfloat16), double, and the backend's
// complex type (std::complex<float> on the CPU, cuda::complex64 on the GPU), whose parts are
// read only through ComplexParts so that one definition serves both. Integer arithmetic wraps
// (computed unsigned: no signed overflow), and integer division by zero gives 0 instead of
// trapping.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#if !defined(__CUDACC__)
#include <complex>
#endif

#if defined(__CUDACC__)
#define BRAID_HD __host__ __device__ __forceinline__
#else
#define BRAID_HD inline
#endif

namespace braid::ew {

/// How to read and build a complex compute type; each backend specializes it for its own.
template <typename Z>
struct ComplexParts {
  static constexpr bool value = false;
};

#if !defined(__CUDACC__)
template <>
struct ComplexParts<std::complex<float>> {
  static constexpr bool value = true;
  static float re(const std::complex<float>& z) { return z.real(); }
  static float im(const std::complex<float>& z) { return z.imag(); }
  static std::complex<float> make(float r, float i) { return {r, i}; }
};
#endif

template <typename C>
inline constexpr bool is_complex_v = ComplexParts<C>::value;
template <typename C>
inline constexpr bool is_bool_v = std::is_same_v<C, bool>;
template <typename C>
inline constexpr bool is_int_v = std::is_integral_v<C> && !is_bool_v<C>;
template <typename C>
inline constexpr bool is_signed_int_v = is_int_v<C> && std::is_signed_v<C>;
template <typename C>
inline constexpr bool is_real_v = std::is_floating_point_v<C>;

// ---- real math: one name for float and double (global C functions work on both compilers) ----
namespace m {
#define BRAID_EW_REAL1(name, fn)                             \
  BRAID_HD float name(float x) { return ::fn##f(x); }       \
  BRAID_HD double name(double x) { return ::fn(x); }
#define BRAID_EW_REAL2(name, fn)                                      \
  BRAID_HD float name(float x, float y) { return ::fn##f(x, y); }    \
  BRAID_HD double name(double x, double y) { return ::fn(x, y); }
BRAID_EW_REAL1(sin, sin)
BRAID_EW_REAL1(cos, cos)
BRAID_EW_REAL1(tan, tan)
BRAID_EW_REAL1(asin, asin)
BRAID_EW_REAL1(acos, acos)
BRAID_EW_REAL1(atan, atan)
BRAID_EW_REAL1(sinh, sinh)
BRAID_EW_REAL1(cosh, cosh)
BRAID_EW_REAL1(tanh, tanh)
BRAID_EW_REAL1(asinh, asinh)
BRAID_EW_REAL1(acosh, acosh)
BRAID_EW_REAL1(atanh, atanh)
BRAID_EW_REAL1(exp, exp)
BRAID_EW_REAL1(expm1, expm1)
BRAID_EW_REAL1(log, log)
BRAID_EW_REAL1(log2, log2)
BRAID_EW_REAL1(log10, log10)
BRAID_EW_REAL1(log1p, log1p)
BRAID_EW_REAL1(sqrt, sqrt)
BRAID_EW_REAL1(floor, floor)
BRAID_EW_REAL1(ceil, ceil)
BRAID_EW_REAL1(rint, rint)
BRAID_EW_REAL1(trunc, trunc)
BRAID_EW_REAL1(erf, erf)
BRAID_EW_REAL1(fabs, fabs)
BRAID_EW_REAL2(atan2, atan2)
BRAID_EW_REAL2(pow, pow)
BRAID_EW_REAL2(fmod, fmod)
BRAID_EW_REAL2(hypot, hypot)
#undef BRAID_EW_REAL1
#undef BRAID_EW_REAL2

/// The largest finite value: beyond it lies infinity (comparisons with NaN are false).
template <typename F>
BRAID_HD F max_finite() {
  if constexpr (std::is_same_v<F, float>) {
    return 3.40282347e+38f;
  } else {
    return 1.7976931348623157e+308;
  }
}

#if !defined(__CUDA_ARCH__)
/// Inverse error function on the host: an initial estimate (Winitzki's closed form, within
/// about 2e-3) refined by Newton steps on erf.
inline double erfinv_host(double x) {
  if (!(x >= -1 && x <= 1)) return std::nan("");
  if (x == 1 || x == -1) return x * HUGE_VAL;
  constexpr double kA = 0.147;
  constexpr double kPi = 3.14159265358979323846;
  const double l = std::log((1 - x) * (1 + x));
  const double t = 2 / (kPi * kA) + l / 2;
  double y = std::copysign(std::sqrt(std::sqrt(t * t - l / kA) - t), x);
  const double slope = 2 / std::sqrt(kPi);
  for (int i = 0; i < 3; ++i) {
    const double d = slope * std::exp(-y * y);
    if (d == 0) break;
    y -= (std::erf(y) - x) / d;
  }
  return y;
}
#endif

BRAID_HD float erfinv(float x) {
#if defined(__CUDA_ARCH__)
  return ::erfinvf(x);
#else
  return static_cast<float>(erfinv_host(x));
#endif
}
BRAID_HD double erfinv(double x) {
#if defined(__CUDA_ARCH__)
  return ::erfinv(x);
#else
  return erfinv_host(x);
#endif
}
}  // namespace m

// ---- complex math over ComplexParts (the same formulas on both backends) ----
template <typename Z>
BRAID_HD float re(const Z& z) {
  return ComplexParts<Z>::re(z);
}
template <typename Z>
BRAID_HD float im(const Z& z) {
  return ComplexParts<Z>::im(z);
}
template <typename Z>
BRAID_HD Z cx(float r, float i) {
  return ComplexParts<Z>::make(r, i);
}
// i * z and -i * z.
template <typename Z>
BRAID_HD Z times_i(Z z) {
  return cx<Z>(-im(z), re(z));
}
template <typename Z>
BRAID_HD Z times_minus_i(Z z) {
  return cx<Z>(im(z), -re(z));
}
template <typename Z>
BRAID_HD float cabs(Z z) {
  return m::hypot(re(z), im(z));
}
template <typename Z>
BRAID_HD Z cexp(Z z) {
  const float e = m::exp(re(z));
  if (im(z) == 0) return cx<Z>(e, im(z));  // exact for reals, and no inf * 0
  // exp(-inf + i y) for an infinite or NaN y is 0 (C99's cexp, NumPy), not 0 * NaN.
  if (e == 0 && !(im(z) - im(z) == 0)) return cx<Z>(0.0f, 0.0f);
  return cx<Z>(e * m::cos(im(z)), e * m::sin(im(z)));
}
template <typename Z>
BRAID_HD Z clog(Z z) {
  return cx<Z>(m::log(cabs(z)), m::atan2(im(z), re(z)));
}
// log(1 + z) without the cancellation of forming 1 + z: log|1 + z| = log1p(r) / 2 with
// r = x (2 + x) + y^2 near z = 0 (r underflowing to 0 leaves x, the first-order term).
template <typename Z>
BRAID_HD Z clog1p(Z z) {
  const float x = re(z), y = im(z);
  const float theta = m::atan2(y, x + 1.0f);
  if (cabs(z) < 0.5f) {
    const float r = x * (2.0f + x) + y * y;
    if (r == 0) return cx<Z>(x, theta);
    return cx<Z>(0.5f * m::log1p(r), theta);
  }
  return cx<Z>(m::log(m::hypot(x + 1.0f, y)), theta);
}
template <typename Z>
BRAID_HD Z csqrt(Z z) {
  const float x = re(z), y = im(z);
  if (x == 0 && y == 0) return cx<Z>(0.0f, y);
  const float t = m::sqrt((m::fabs(x) + cabs(z)) * 0.5f);
  if (x >= 0) return cx<Z>(t, y / (2 * t));
  return cx<Z>(m::fabs(y) / (2 * t), y < 0 ? -t : t);
}
template <typename Z>
BRAID_HD Z csin(Z z) {
  return cx<Z>(m::sin(re(z)) * m::cosh(im(z)), m::cos(re(z)) * m::sinh(im(z)));
}
template <typename Z>
BRAID_HD Z ccos(Z z) {
  return cx<Z>(m::cos(re(z)) * m::cosh(im(z)), -m::sin(re(z)) * m::sinh(im(z)));
}
template <typename Z>
BRAID_HD Z csinh(Z z) {
  return cx<Z>(m::sinh(re(z)) * m::cos(im(z)), m::cosh(re(z)) * m::sin(im(z)));
}
template <typename Z>
BRAID_HD Z ccosh(Z z) {
  return cx<Z>(m::cosh(re(z)) * m::cos(im(z)), m::sinh(re(z)) * m::sin(im(z)));
}
// tan(x + iy) = (sin 2x + i sinh 2y) / (cos 2x + cosh 2y); for large |y| it tends to +-i.
template <typename Z>
BRAID_HD Z ctan(Z z) {
  const float x2 = 2 * re(z), y2 = 2 * im(z);
  if (m::fabs(y2) > 40) return cx<Z>(4 * m::sin(x2) * m::exp(-m::fabs(y2)), y2 > 0 ? 1.0f : -1.0f);
  const float d = m::cos(x2) + m::cosh(y2);
  return cx<Z>(m::sin(x2) / d, m::sinh(y2) / d);
}
// tanh(z) = -i tan(iz).
template <typename Z>
BRAID_HD Z ctanh(Z z) {
  return times_minus_i(ctan(times_i(z)));
}
// asinh(z) = log(z + sqrt(z^2 + 1)), taken on the right half-plane (asinh is odd) to avoid
// cancellation.
template <typename Z>
BRAID_HD Z casinh(Z z) {
  const bool flip = re(z) < 0;
  const Z w = flip ? -z : z;
  const Z r = clog(w + csqrt(w * w + cx<Z>(1.0f, 0.0f)));
  return flip ? -r : r;
}
// asin(z) = -i asinh(iz).
template <typename Z>
BRAID_HD Z casin(Z z) {
  return times_minus_i(casinh(times_i(z)));
}
template <typename Z>
BRAID_HD Z cacos(Z z) {
  const Z a = casin(z);
  return cx<Z>(1.57079632679489662f - re(a), -im(a));
}
template <typename Z>
BRAID_HD Z cacosh(Z z) {
  const Z one = cx<Z>(1.0f, 0.0f);
  return clog(z + csqrt(z + one) * csqrt(z - one));
}
template <typename Z>
BRAID_HD Z catanh(Z z) {
  const Z one = cx<Z>(1.0f, 0.0f);
  const Z d = clog(one + z) - clog(one - z);
  return cx<Z>(0.5f * re(d), 0.5f * im(d));
}
// atan(z) = -i atanh(iz).
template <typename Z>
BRAID_HD Z catan(Z z) {
  return times_minus_i(catanh(times_i(z)));
}
template <typename Z>
BRAID_HD Z cscale(Z z, float s) {
  return cx<Z>(re(z) * s, im(z) * s);
}
template <typename Z>
BRAID_HD Z cpow(Z a, Z b) {
  if (re(a) == 0 && im(a) == 0) {
    if (re(b) == 0 && im(b) == 0) return cx<Z>(1.0f, 0.0f);
    return cx<Z>(0.0f, 0.0f);
  }
  return cexp(b * clog(a));
}

// ---- shared pieces of the functors ----
template <typename C>
BRAID_HD bool is_nan(C x) {
  if constexpr (is_complex_v<C>) {
    return re(x) != re(x) || im(x) != im(x);
  } else if constexpr (is_real_v<C>) {
    return x != x;
  } else {
    return false;
  }
}
// Lexicographic order for complex (real part, then imaginary), as MLX orders them.
template <typename C>
BRAID_HD bool lt(C x, C y) {
  if constexpr (is_complex_v<C>) {
    return re(x) < re(y) || (re(x) == re(y) && im(x) < im(y));
  } else {
    return x < y;
  }
}
template <typename C>
BRAID_HD bool eq(C x, C y) {
  if constexpr (is_complex_v<C>) {
    return re(x) == re(y) && im(x) == im(y);
  } else {
    return x == y;
  }
}
// Integers computed in an unsigned type at least as wide as int: wraps, never overflows.
template <typename C>
using wide_unsigned_t = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
template <typename C>
BRAID_HD C add_(C x, C y) {
  if constexpr (is_int_v<C>) {
    using U = wide_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return static_cast<C>(x + y);
  }
}
template <typename C>
BRAID_HD C sub_(C x, C y) {
  if constexpr (is_int_v<C>) {
    using U = wide_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(x) - static_cast<U>(y));
  } else {
    return static_cast<C>(x - y);
  }
}
template <typename C>
BRAID_HD C mul_(C x, C y) {
  if constexpr (is_int_v<C>) {
    using U = wide_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(x) * static_cast<U>(y));
  } else {
    return static_cast<C>(x * y);
  }
}
template <typename C>
BRAID_HD C neg_(C x) {
  if constexpr (is_int_v<C>) {
    return sub_(C(0), x);
  } else {
    return -x;
  }
}
template <typename C>
BRAID_HD C one_() {
  if constexpr (is_complex_v<C>) {
    return cx<C>(1.0f, 0.0f);
  } else {
    return C(1);
  }
}

// ---- unary functors ----
struct Abs {
  template <typename C>
  BRAID_HD auto operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return cabs(x);
    } else if constexpr (is_real_v<C>) {
      return m::fabs(x);
    } else if constexpr (is_signed_int_v<C>) {
      return x < 0 ? neg_(x) : x;
    } else {
      return x;
    }
  }
};
// -1, 0 or 1 (0 for NaN); x / |x| for complex.
struct Sign {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      const float a = cabs(x);
      return a == 0 ? cx<C>(0.0f, 0.0f) : cx<C>(re(x) / a, im(x) / a);
    } else if constexpr (is_bool_v<C> || std::is_unsigned_v<C>) {
      return static_cast<C>(x != 0);
    } else {
      return static_cast<C>((x > C(0)) - (x < C(0)));
    }
  }
};
struct Negative {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return neg_(x);
  }
};
struct Square {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return mul_(x, x);
  }
};
struct Floor {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return m::floor(x);
  }
};
struct Ceil {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return m::ceil(x);
  }
};
// Half to even (the default rounding mode); complex rounds each part.
struct Round {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return cx<C>(m::rint(re(x)), m::rint(im(x)));
    } else {
      return m::rint(x);
    }
  }
};

// Ops of the inexact dtypes: `real` on float and double, `cplx` on the complex type.
#define BRAID_EW_INEXACT(Name, real, cplx)        \
  struct Name {                                   \
    template <typename C>                         \
    BRAID_HD C operator()(C x) const {            \
      if constexpr (is_complex_v<C>) {            \
        return cplx;                              \
      } else {                                    \
        return real;                              \
      }                                           \
    }                                             \
  };
BRAID_EW_INEXACT(Sin, m::sin(x), csin(x))
BRAID_EW_INEXACT(Cos, m::cos(x), ccos(x))
BRAID_EW_INEXACT(Tan, m::tan(x), ctan(x))
BRAID_EW_INEXACT(ArcSin, m::asin(x), casin(x))
BRAID_EW_INEXACT(ArcCos, m::acos(x), cacos(x))
BRAID_EW_INEXACT(ArcTan, m::atan(x), catan(x))
BRAID_EW_INEXACT(Sinh, m::sinh(x), csinh(x))
BRAID_EW_INEXACT(Cosh, m::cosh(x), ccosh(x))
BRAID_EW_INEXACT(Tanh, m::tanh(x), ctanh(x))
BRAID_EW_INEXACT(ArcSinh, m::asinh(x), casinh(x))
BRAID_EW_INEXACT(ArcCosh, m::acosh(x), cacosh(x))
BRAID_EW_INEXACT(ArcTanh, m::atanh(x), catanh(x))
BRAID_EW_INEXACT(Exp, m::exp(x), cexp(x))
BRAID_EW_INEXACT(Expm1, m::expm1(x), cexp(x) - one_<C>())
BRAID_EW_INEXACT(Log, m::log(x), clog(x))
BRAID_EW_INEXACT(Log2, m::log2(x), cscale(clog(x), 1.44269504088896341f))
BRAID_EW_INEXACT(Log10, m::log10(x), cscale(clog(x), 0.434294481903251828f))
BRAID_EW_INEXACT(Log1p, m::log1p(x), clog1p(x))
BRAID_EW_INEXACT(Sqrt, m::sqrt(x), csqrt(x))
BRAID_EW_INEXACT(Rsqrt, C(1) / m::sqrt(x), one_<C>() / csqrt(x))
BRAID_EW_INEXACT(Reciprocal, C(1) / x, one_<C>() / x)
// 1 / (1 + e^-x), written so that no exp overflows for reals.
BRAID_EW_INEXACT(Sigmoid, x >= 0 ? C(1) / (C(1) + m::exp(-x)) : m::exp(x) / (C(1) + m::exp(x)),
                 one_<C>() / (one_<C>() + cexp(-x)))
#undef BRAID_EW_INEXACT

struct Erf {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return m::erf(x);
  }
};
struct ErfInv {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return m::erfinv(x);
  }
};
struct IsNaN {
  template <typename C>
  BRAID_HD bool operator()(C x) const {
    return is_nan(x);
  }
};
struct IsInf {
  template <typename C>
  BRAID_HD bool operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return m::fabs(re(x)) > m::max_finite<float>() || m::fabs(im(x)) > m::max_finite<float>();
    } else {
      return m::fabs(x) > m::max_finite<C>();
    }
  }
};
struct IsFinite {
  template <typename C>
  BRAID_HD bool operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return m::fabs(re(x)) <= m::max_finite<float>() && m::fabs(im(x)) <= m::max_finite<float>();
    } else {
      return m::fabs(x) <= m::max_finite<C>();
    }
  }
};
// Equal to +inf (for complex: to +inf + 0i, as comparing with an infinite scalar does).
struct IsPosInf {
  template <typename C>
  BRAID_HD bool operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return re(x) > m::max_finite<float>() && im(x) == 0;
    } else {
      return x > m::max_finite<C>();
    }
  }
};
struct IsNegInf {
  template <typename C>
  BRAID_HD bool operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return re(x) < -m::max_finite<float>() && im(x) == 0;
    } else {
      return x < -m::max_finite<C>();
    }
  }
};
struct Real {
  template <typename C>
  BRAID_HD float operator()(C x) const {
    return re(x);
  }
};
struct Imag {
  template <typename C>
  BRAID_HD float operator()(C x) const {
    return im(x);
  }
};
struct Conjugate {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return cx<C>(re(x), -im(x));
  }
};
struct LogicalNot {
  template <typename C>
  BRAID_HD bool operator()(C x) const {
    return !x;
  }
};
struct BitwiseInvert {
  template <typename C>
  BRAID_HD C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

// ---- float8 e4m3, MLX's "fn" variant: 1 sign, 4 exponent (bias 7) and 3 mantissa bits; no
// infinities; S.1111.111 is NaN, so the largest finite value is 448 (S.1111.110) ----
BRAID_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
BRAID_HD float float_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// The e4m3 code of x (taken as float32, as MLX does for float64), rounded to nearest even.
/// Magnitudes from 448 up (which would round to 448 or past it), infinities and NaN saturate
/// to +-448 by their sign bit, as MLX's CPU backend does.
struct ToFp8 {
  template <typename C>
  BRAID_HD uint8_t operator()(C x) const {
    const uint32_t bits = float_bits(static_cast<float>(x));
    const uint32_t sign = (bits >> 24) & 0x80u;
    const uint32_t mag = bits & 0x7FFFFFFFu;
    if (mag >= 0x43E00000u) return static_cast<uint8_t>(sign | 0x7Eu);  // 448.0f
    if (mag < 0x3C800000u) {
      // Below 2^-6, the smallest normal: a multiple of 2^-9 (8 of them reach 2^-6 itself,
      // whose code 0x08 follows on). Scaling by 2^9 is exact; rint rounds half to even.
      const float units = ::rintf(float_from_bits(mag) * 512.0f);
      return static_cast<uint8_t>(sign | static_cast<uint32_t>(units));
    }
    // Normal: rebias the exponent (127 -> 7) and round the 23 mantissa bits to 3, half to
    // even; a carry out of the mantissa moves on into the exponent.
    const uint32_t exponent = (mag >> 23) - 120u;
    const uint32_t kept = (mag >> 20) & 7u;
    const uint32_t rest = mag & 0xFFFFFu;
    const uint32_t up = rest > 0x80000u || (rest == 0x80000u && (kept & 1u)) ? 1u : 0u;
    return static_cast<uint8_t>(sign | ((exponent << 3) + kept + up));
  }
};
/// The value of an e4m3 code (the low 8 bits of x) as float32, exactly.
struct FromFp8 {
  template <typename C>
  BRAID_HD float operator()(C x) const {
    const uint32_t code = static_cast<uint32_t>(x) & 0xFFu;
    const uint32_t exponent = (code >> 3) & 15u, mantissa = code & 7u;
    if (exponent == 15u && mantissa == 7u) return float_from_bits(((code & 0x80u) << 24) | 0x7FC00000u);
    const float v = exponent == 0 ? ::ldexpf(static_cast<float>(mantissa), -9)
                                  : ::ldexpf(static_cast<float>(8u + mantissa), static_cast<int>(exponent) - 10);
    return code & 0x80u ? -v : v;
  }
};

// ---- binary functors ----
struct Add {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return add_(x, y);
  }
};
// bool - bool is their exclusive or (the integer difference converted to bool).
struct Subtract {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return sub_(x, y);
  }
};
struct Multiply {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return mul_(x, y);
  }
};
struct Divide {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return x / y;
  }
};
// Floats floor their true division, computed in C (float16 and bfloat16 inputs, whose
// quotient MLX rounds before the floor, are composed by the op instead);
// integers truncate toward zero, as MLX's integer floor_divide does, and division by zero
// gives 0.
struct FloorDivide {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    if constexpr (is_real_v<C>) {
      return m::floor(C(x / y));
    } else {
      if (y == C(0)) return C(0);
      if constexpr (is_bool_v<C>) {
        return x;
      } else {
        if constexpr (is_signed_int_v<C>) {
          if (y == C(-1)) return neg_(x);
        }
        return static_cast<C>(x / y);
      }
    }
  }
};
// A nonzero result takes the divisor's sign (Python's %); complex applies it to each part.
struct Remainder {
  template <typename F>
  BRAID_HD static F real_rem(F x, F y) {
    F r = m::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
  template <typename F>
  BRAID_HD static F part_rem(F x, F y) {
    F r = x - y * m::trunc(x / y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    if constexpr (is_complex_v<C>) {
      return cx<C>(part_rem(re(x), re(y)), part_rem(im(x), im(y)));
    } else if constexpr (is_real_v<C>) {
      return real_rem(x, y);
    } else if constexpr (is_bool_v<C>) {
      return false;
    } else {
      if (y == C(0)) return C(0);
      if constexpr (is_signed_int_v<C>) {
        if (y == C(-1)) return C(0);
        C r = static_cast<C>(x % y);
        if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
        return r;
      } else {
        return static_cast<C>(x % y);
      }
    }
  }
};
// Integer powers stay integers (by squaring, wrapping); a negative integer exponent gives 0.
struct Power {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    if constexpr (is_complex_v<C>) {
      return cpow(x, y);
    } else if constexpr (is_real_v<C>) {
      return m::pow(x, y);
    } else if constexpr (is_bool_v<C>) {
      return x || !y;
    } else {
      // A negative integer exponent gives 0 for every base, as MLX's kernels define it.
      if constexpr (is_signed_int_v<C>) {
        if (y < 0) return C(0);
      }
      C r = C(1), b = x;
      for (std::make_unsigned_t<C> e = static_cast<std::make_unsigned_t<C>>(y); e != 0; e >>= 1) {
        if (e & 1) r = mul_(r, b);
        b = mul_(b, b);
      }
      return r;
    }
  }
};
// NaN wins.
struct Maximum {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return lt(x, y) ? y : x;
  }
};
struct Minimum {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return lt(y, x) ? y : x;
  }
};
// log(e^x + e^y) = max + log1p(e^(min - max)); infinities of the same sign give themselves.
// Complex: the larger in MLX's (lexicographic) order is factored out; with an infinite real
// part it is the result, as for reals.
struct LogAddExp {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    if constexpr (is_complex_v<C>) {
      const bool x_hi = lt(y, x);
      const C hi = x_hi ? x : y, lo = x_hi ? y : x;
      if (m::fabs(re(hi)) > m::max_finite<float>() || m::fabs(re(lo)) > m::max_finite<float>()) return hi;
      return hi + clog1p(cexp(lo - hi));
    } else {
      const C hi = x > y ? x : y, lo = x > y ? y : x;
      if (m::fabs(hi) > m::max_finite<C>()) return hi;
      return hi + m::log1p(m::exp(lo - hi));
    }
  }
};
struct ArcTan2 {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return m::atan2(x, y);
  }
};
struct Equal {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    return eq(x, y);
  }
};
struct NotEqual {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    return !eq(x, y);
  }
};
struct Less {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    return lt(x, y);
  }
};
struct LessEqual {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    if constexpr (is_complex_v<C>) {
      return lt(x, y) || eq(x, y);
    } else {
      return x <= y;
    }
  }
};
struct Greater {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    return lt(y, x);
  }
};
struct GreaterEqual {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    if constexpr (is_complex_v<C>) {
      return lt(y, x) || eq(x, y);
    } else {
      return x >= y;
    }
  }
};
struct LogicalAnd {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    return x && y;
  }
};
struct LogicalOr {
  template <typename C>
  BRAID_HD bool operator()(C x, C y) const {
    return x || y;
  }
};
struct BitwiseAnd {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return static_cast<C>(x & y);
  }
};
struct BitwiseOr {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return static_cast<C>(x | y);
  }
};
struct BitwiseXor {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    return static_cast<C>(x ^ y);
  }
};
// Shifts by a negative amount or by the bit width or more give what shifting one bit at a
// time would: 0, or -1 for a negative value shifted right.
struct LeftShift {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    if constexpr (is_signed_int_v<C>) {
      if (y < 0) return C(0);
    }
    if (static_cast<uint64_t>(y) >= sizeof(C) * 8) return C(0);
    return static_cast<C>(static_cast<wide_unsigned_t<C>>(x) << y);
  }
};
struct RightShift {
  template <typename C>
  BRAID_HD C operator()(C x, C y) const {
    bool too_far = false;
    if constexpr (is_signed_int_v<C>) too_far = y < 0;
    too_far = too_far || static_cast<uint64_t>(y) >= sizeof(C) * 8;
    if (too_far) {
      if constexpr (is_signed_int_v<C>) return x < 0 ? C(-1) : C(0);
      return C(0);
    }
    return static_cast<C>(x >> y);
  }
};

/// Calls run(f) with the functor of the op whose value ScaledUnary multiplies by its cotangent:
/// cos, cosh or sinh (the derivatives of sin, sinh and cosh). `UnaryOp` is Unary::Op; both
/// backends' ScaledUnary bodies dispatch through here.
template <typename UnaryOp, typename Run>
void with_scaled_unary_functor(UnaryOp op, Run&& run) {
  if (op == UnaryOp::cos) {
    run(Cos{});
  } else if (op == UnaryOp::cosh) {
    run(Cosh{});
  } else if (op == UnaryOp::sinh) {
    run(Sinh{});
  } else {
    throw std::logic_error("[ScaledUnary] unsupported op.");
  }
}

}  // namespace braid::ew
