// The element-wise op tables: every unary and binary op of the Unary and Binary primitives,
// listed once. Each row generates the primitive's Op enumerator and name(), and drives the
// kernel dispatch of both backends, which instantiate the op's functor (the struct of the same
// name in backend/common/elementwise_ops.h) only for the input dtypes the row accepts.
//
// Row: X(op, Name, accepts). `op` is the enumerator, `Name` the printable name and functor,
// `accepts` the dtype class of the kernel's input (the op casts its inputs to one dtype of
// that class before building the node; see ew::DtypeClass).
#pragma once

#include <cstdint>

#include "braid/dtype.h"

// clang-format off
#define BRAID_UNARY_OPS(X)                  \
  X(abs, Abs, all)                          \
  X(sign, Sign, all)                        \
  X(negative, Negative, numeric)            \
  X(square, Square, all)                    \
  X(floor, Floor, floating)                 \
  X(ceil, Ceil, floating)                   \
  X(round, Round, inexact)                  \
  X(sin, Sin, inexact)                      \
  X(cos, Cos, inexact)                      \
  X(tan, Tan, inexact)                      \
  X(arcsin, ArcSin, inexact)                \
  X(arccos, ArcCos, inexact)                \
  X(arctan, ArcTan, inexact)                \
  X(sinh, Sinh, inexact)                    \
  X(cosh, Cosh, inexact)                    \
  X(tanh, Tanh, inexact)                    \
  X(arcsinh, ArcSinh, inexact)              \
  X(arccosh, ArcCosh, inexact)              \
  X(arctanh, ArcTanh, inexact)              \
  X(exp, Exp, inexact)                      \
  X(expm1, Expm1, inexact)                  \
  X(log, Log, inexact)                      \
  X(log2, Log2, inexact)                    \
  X(log10, Log10, inexact)                  \
  X(log1p, Log1p, inexact)                  \
  X(sqrt, Sqrt, inexact)                    \
  X(rsqrt, Rsqrt, inexact)                  \
  X(reciprocal, Reciprocal, inexact)        \
  X(sigmoid, Sigmoid, inexact)              \
  X(erf, Erf, floating)                     \
  X(erfinv, ErfInv, floating)               \
  X(isnan, IsNaN, inexact)                  \
  X(isinf, IsInf, inexact)                  \
  X(isfinite, IsFinite, inexact)            \
  X(isposinf, IsPosInf, inexact)            \
  X(isneginf, IsNegInf, inexact)            \
  X(real, Real, complex)                    \
  X(imag, Imag, complex)                    \
  X(conjugate, Conjugate, complex)          \
  X(logical_not, LogicalNot, boolean)       \
  X(bitwise_invert, BitwiseInvert, ints)    \
  X(to_fp8, ToFp8, floating)                \
  X(from_fp8, FromFp8, ints)

#define BRAID_BINARY_OPS(X)                 \
  X(add, Add, all)                          \
  X(subtract, Subtract, all)                \
  X(multiply, Multiply, all)                \
  X(divide, Divide, inexact)                \
  X(floor_divide, FloorDivide, real)        \
  X(remainder, Remainder, all)              \
  X(power, Power, all)                      \
  X(maximum, Maximum, all)                  \
  X(minimum, Minimum, all)                  \
  X(logaddexp, LogAddExp, inexact)          \
  X(arctan2, ArcTan2, floating)             \
  X(equal, Equal, all)                      \
  X(not_equal, NotEqual, all)               \
  X(less, Less, all)                        \
  X(less_equal, LessEqual, all)             \
  X(greater, Greater, all)                  \
  X(greater_equal, GreaterEqual, all)       \
  X(logical_and, LogicalAnd, boolean)       \
  X(logical_or, LogicalOr, boolean)         \
  X(bitwise_and, BitwiseAnd, integer)       \
  X(bitwise_or, BitwiseOr, integer)         \
  X(bitwise_xor, BitwiseXor, integer)       \
  X(left_shift, LeftShift, ints)            \
  X(right_shift, RightShift, ints)
// clang-format on

namespace braid::ew {

/// Kinds of element type, combined into the dtype classes below.
enum Kind : uint8_t { kBool = 1, kInt = 2, kFloat = 4, kComplex = 8 };

/// The input dtypes an op's kernel takes. ints: the integer dtypes without bool; integer:
/// with bool; floating: the real floats (float16, bfloat16, float32, float64); inexact: those
/// and complex64; real: everything but complex64; numeric: everything but bool.
struct DtypeClass {
  static constexpr uint8_t all = kBool | kInt | kFloat | kComplex;
  static constexpr uint8_t numeric = kInt | kFloat | kComplex;
  static constexpr uint8_t integer = kBool | kInt;
  static constexpr uint8_t real = kBool | kInt | kFloat;
  static constexpr uint8_t ints = kInt;
  static constexpr uint8_t floating = kFloat;
  static constexpr uint8_t inexact = kFloat | kComplex;
  static constexpr uint8_t complex = kComplex;
  static constexpr uint8_t boolean = kBool;
};

/// The kind of a dtype.
constexpr Kind kind_of(Dtype d) {
  switch (d.val()) {
    case Dtype::Val::bool_: return kBool;
    case Dtype::Val::uint8:
    case Dtype::Val::uint16:
    case Dtype::Val::uint32:
    case Dtype::Val::uint64:
    case Dtype::Val::int8:
    case Dtype::Val::int16:
    case Dtype::Val::int32:
    case Dtype::Val::int64: return kInt;
    case Dtype::Val::float16:
    case Dtype::Val::float32:
    case Dtype::Val::float64:
    case Dtype::Val::bfloat16: return kFloat;
    case Dtype::Val::complex64: return kComplex;
  }
  return kBool;
}

/// Whether a kernel of dtype class `cls` takes inputs of dtype `d`.
constexpr bool accepts(uint8_t cls, Dtype d) { return (cls & kind_of(d)) != 0; }

}  // namespace braid::ew
