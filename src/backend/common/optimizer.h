// The per-element math of OptimizerUpdate (primitives/optimizer.h), compiled by g++ for the CPU
// and by nvcc for CUDA. A is the compute type (float for the 16-bit floats, else the dtype);
// `Ar` supplies the arithmetic without contraction (no fused multiply-add: the ops it replaces
// round after every product) and `round` rounds an A to the dtype and back.
#pragma once

#if defined(__CUDACC__)
#define BRAID_OPT_HD __host__ __device__ __forceinline__
#else
#define BRAID_OPT_HD inline
#endif

namespace braid::common {

/// round(round(a x) + round(b g)): an exponential moving average, as b1 * m + (1 - b1) * g.
template <typename Ar, typename A, typename R>
BRAID_OPT_HD A moment_update(A a, A b, A x, A g, R round) {
  return round(Ar::add(round(Ar::mul(a, x)), round(Ar::mul(b, g))));
}

/// round(round(a x) + round(b round(g g))): as b2 * v + (1 - b2) * square(g).
template <typename Ar, typename A, typename R>
BRAID_OPT_HD A moment_square_update(A a, A b, A x, A g, R round) {
  return round(Ar::add(round(Ar::mul(a, x)), round(Ar::mul(b, round(Ar::mul(g, g))))));
}

/// Adam's parameter step: p' - s m / (q + eps), with p' = p d (when has_d: AdamW's decay) and
/// q = sqrt(v) c (when has_c: the bias correction), each operation rounded as its op would.
template <typename Ar, typename A, typename R>
BRAID_OPT_HD A adam_update(A p, A m, A v, A s, A c, A d, A eps, bool has_c, bool has_d, R round) {
  const A p1 = has_d ? round(Ar::mul(p, d)) : p;
  A q = round(Ar::sqrt(v));
  if (has_c) q = round(Ar::mul(q, c));
  return round(Ar::sub(p1, round(Ar::div(round(Ar::mul(s, m)), round(Ar::add(q, eps))))));
}

}  // namespace braid::common
