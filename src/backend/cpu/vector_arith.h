// float32 add, subtract, multiply, divide, maximum and minimum over contiguous runs in AVX2,
// for CPUs that have it (vector_arith_avx2.cpp): the element-wise loops use them for float32
// runs whose inputs are contiguous or a broadcast scalar, the scatter for its sums. Each element
// is rounded once, whatever the vector width, and maximum and minimum keep the scalar functors'
// NaNs and ties, so the results are the scalar loops' bits; the gain is half the instructions
// of the SSE2 loops the compiler writes for the baseline x86-64, and for maximum and minimum,
// whose NaN tests the compiler leaves scalar, eight lanes at a time (relu's maximum(x, 0)).
#pragma once

#include <cstdint>

namespace braid::ew {
struct Add;
struct Subtract;
struct Multiply;
struct Divide;
struct Maximum;
struct Minimum;
}  // namespace braid::ew

namespace braid::cpu {

enum class ArithOp { add, subtract, multiply, divide, maximum, minimum };

/// Which operands are runs: both (out[i] = x[i] op y[i]), or one, the other read once as a
/// scalar (x[0] op y[i], or x[i] op y[0]).
enum class Operands { runs, x_scalar, y_scalar };

/// out[i] for i in [0, n); out may be x or y.
using ArithFn = void (*)(const float* x, const float* y, float* out, int64_t n);

/// The AVX2 kernel for `op` and `operands`, or nullptr without AVX2 (or with
/// BRAID_SCALAR_MATH=1). Thread-safe.
ArithFn vector_arith(ArithOp op, Operands operands);

/// The ArithOp computing element-wise functor Op, for the functors that have one.
template <typename Op>
struct ArithOpOf {
  static constexpr bool kHas = false;
};
#define BRAID_ARITH_OP(Functor, op_)               \
  template <>                                      \
  struct ArithOpOf<ew::Functor> {                  \
    static constexpr bool kHas = true;             \
    static constexpr ArithOp kOp = ArithOp::op_;   \
  };
BRAID_ARITH_OP(Add, add)
BRAID_ARITH_OP(Subtract, subtract)
BRAID_ARITH_OP(Multiply, multiply)
BRAID_ARITH_OP(Divide, divide)
BRAID_ARITH_OP(Maximum, maximum)
BRAID_ARITH_OP(Minimum, minimum)
#undef BRAID_ARITH_OP

namespace avx2 {
/// The kernels of vector_arith_avx2.cpp (compiled with -mavx2), or nullptr where they are not
/// compiled. Call only where the CPU has AVX2.
ArithFn arith_kernel(ArithOp op, Operands operands);
}  // namespace avx2

}  // namespace braid::cpu
