// Picks vector_math.h's and vector_arith.h's kernels for this CPU: the AVX2 ones where the CPU
// has AVX2 (and FMA, for libmvec's), none otherwise. BRAID_SCALAR_MATH=1 turns them off (to
// compare against the scalar path).
#include <cstdlib>
#include <cstring>

#include "backend/cpu/vector_arith.h"
#include "backend/cpu/vector_math.h"

namespace braid::cpu {
namespace {

bool scalar_math_forced() {
  const char* off = std::getenv("BRAID_SCALAR_MATH");
  return off != nullptr && std::strcmp(off, "1") == 0;
}

bool use_avx2(bool with_fma) {
#if defined(__x86_64__)
  if (scalar_math_forced()) return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && (!with_fma || __builtin_cpu_supports("fma"));
#else
  return false;
#endif
}

}  // namespace

VectorFn vector_math(VectorOp op) {
  static const bool avx2 = use_avx2(true);
  return avx2 ? avx2::kernel(op) : nullptr;
}

ArithFn vector_arith(ArithOp op, Operands operands) {
  static const bool avx2 = use_avx2(false);
  return avx2 ? avx2::arith_kernel(op, operands) : nullptr;
}

}  // namespace braid::cpu
