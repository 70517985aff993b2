// Picks vector_math.h's kernels for this CPU: the AVX2 ones where the CPU has AVX2 and FMA,
// none otherwise. BRAID_SCALAR_MATH=1 turns them off (to compare against the scalar path).
#include "backend/cpu/vector_math.h"

#include <cstdlib>
#include <cstring>

namespace braid::cpu {
namespace {

bool use_avx2() {
#if defined(__x86_64__)
  const char* off = std::getenv("BRAID_SCALAR_MATH");
  if (off != nullptr && std::strcmp(off, "1") == 0) return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace

VectorFn vector_math(VectorOp op) {
  static const bool avx2 = use_avx2();
  return avx2 ? avx2::kernel(op) : nullptr;
}

}  // namespace braid::cpu
