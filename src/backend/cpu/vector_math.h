// float32 transcendental functions over contiguous runs, eight lanes at a time, through
// glibc's vector math library (libmvec) when the CPU has AVX2 and FMA. The element-wise loops
// use them for contiguous float32 inputs; everything else (other dtypes, strided runs, CPUs
// without AVX2, a libc without the symbol) takes the scalar functor of elementwise_ops.h.
// libmvec's float functions are within 4 ulp (glibc's manual); the scalar ones within 1-2.
#pragma once

#include <cstdint>

#include "backend/common/elementwise_ops.h"

namespace braid::cpu {

/// out[i] = f(in[i]) for i in [0, n); in and out may be the same buffer.
using VectorFn = void (*)(const float* in, float* out, int64_t n);

enum class VectorOp { exp, expm1, log, log1p, sin, cos, tanh, erf };

/// The kernel for `op` on this machine, or nullptr where there is none.
VectorFn vector_math(VectorOp op);

/// The VectorOp computing element-wise functor Op, for the functors that have one.
template <typename Op>
struct VectorOpOf {
  static constexpr bool kHas = false;
};
#define BRAID_VECTOR_OP(Functor, op_)                   \
  template <>                                           \
  struct VectorOpOf<ew::Functor> {                      \
    static constexpr bool kHas = true;                  \
    static constexpr VectorOp kOp = VectorOp::op_;      \
  };
BRAID_VECTOR_OP(Exp, exp)
BRAID_VECTOR_OP(Expm1, expm1)
BRAID_VECTOR_OP(Log, log)
BRAID_VECTOR_OP(Log1p, log1p)
BRAID_VECTOR_OP(Sin, sin)
BRAID_VECTOR_OP(Cos, cos)
BRAID_VECTOR_OP(Tanh, tanh)
BRAID_VECTOR_OP(Erf, erf)
#undef BRAID_VECTOR_OP

namespace avx2 {
/// The AVX2 kernel for `op` (compiled with -mavx2 -mfma), or nullptr when libmvec is missing
/// or lacks it.
/// Call only where the CPU has AVX2 and FMA.
VectorFn kernel(VectorOp op);
}  // namespace avx2

}  // namespace braid::cpu
