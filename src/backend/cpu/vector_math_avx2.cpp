// The AVX2 kernels of vector_math.h. This file alone is compiled with -mavx2 -mfma (see
// CMakeLists.txt); vector_math.cpp calls into it only after checking the CPU.
#include "backend/cpu/vector_math.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <dlfcn.h>
#include <immintrin.h>

#include <cstring>

namespace braid::cpu::avx2 {
namespace {

// libmvec's AVX2 variants (x86_64 vector ABI: "d" = AVX2, 8 float lanes), looked up at run
// time: the library is optional, and a libc older than 2.35 lacks tanhf, erff, expm1f and
// log1pf (those ops then stay scalar).
using Lanes = __m256 (*)(__m256);

constexpr int kOps = 8;
constexpr const char* kSymbols[kOps] = {"_ZGVdN8v_expf", "_ZGVdN8v_expm1f", "_ZGVdN8v_logf", "_ZGVdN8v_log1pf",
                                        "_ZGVdN8v_sinf", "_ZGVdN8v_cosf",   "_ZGVdN8v_tanhf", "_ZGVdN8v_erff"};

struct Table {
  Lanes fn[kOps] = {};
  Table() {
    void* lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);  // kept open for the process
    if (lib == nullptr) return;
    for (int i = 0; i < kOps; ++i) fn[i] = reinterpret_cast<Lanes>(dlsym(lib, kSymbols[i]));
  }
};

const Table& table() {
  static const Table t;
  return t;
}

template <int Op>
void apply(const float* in, float* out, int64_t n) {
  const Lanes f = table().fn[Op];
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(in + i)));
  if (i < n) {
    const size_t rest = static_cast<size_t>(n - i);
    alignas(32) float tail[8] = {};
    std::memcpy(tail, in + i, rest * sizeof(float));
    _mm256_store_ps(tail, f(_mm256_load_ps(tail)));
    std::memcpy(out + i, tail, rest * sizeof(float));
  }
}

template <int Op>
VectorFn if_present() {
  return table().fn[Op] != nullptr ? &apply<Op> : nullptr;
}

}  // namespace

VectorFn kernel(VectorOp op) {
  switch (op) {
    case VectorOp::exp: return if_present<0>();
    case VectorOp::expm1: return if_present<1>();
    case VectorOp::log: return if_present<2>();
    case VectorOp::log1p: return if_present<3>();
    case VectorOp::sin: return if_present<4>();
    case VectorOp::cos: return if_present<5>();
    case VectorOp::tanh: return if_present<6>();
    case VectorOp::erf: return if_present<7>();
  }
  return nullptr;
}

}  // namespace braid::cpu::avx2

#else

namespace braid::cpu::avx2 {
VectorFn kernel(VectorOp) { return nullptr; }
}  // namespace braid::cpu::avx2

#endif
