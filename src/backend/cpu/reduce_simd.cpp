// Picks reduce_simd.h's AVX2 loops for this CPU. BRAID_SCALAR_MATH=1 turns them off, as it
// does vector_math.h's kernels.
#include "backend/cpu/reduce_simd.h"

#include <cstdlib>
#include <cstring>

namespace braid::cpu::simd {

const Kernels* kernels() {
  static const Kernels* const chosen = []() -> const Kernels* {
#if defined(__x86_64__)
    const char* off = std::getenv("BRAID_SCALAR_MATH");
    if (off != nullptr && std::strcmp(off, "1") == 0) return nullptr;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? avx2::kernels() : nullptr;
#else
    return nullptr;
#endif
  }();
  return chosen;
}

}  // namespace braid::cpu::simd
