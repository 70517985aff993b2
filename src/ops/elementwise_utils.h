// Helpers of the element-wise ops (src/ops/elementwise*.cpp).
#pragma once

#include <cstdint>

#include "braid/array.h"
#include "braid/stream.h"
#include "primitives/elementwise.h"

namespace braid::detail {

/// MLX's at_least_float: inexact dtypes stay, bool and integers become float32.
Dtype at_least_float(Dtype d);
/// Throws "[name] Not supported ..." unless a kernel of dtype class `cls` takes `d`.
void check_accepts(uint8_t cls, Dtype d, const char* name);
/// One Unary node on `a` cast to `in`, producing `out`.
array unary_node(const array& a, Unary::Op op, Dtype in, Dtype out, const char* name, const Stream& st);
/// One Binary node on `a` and `b` cast to `in` and broadcast together, producing `out`.
array binary_node(const array& a, const array& b, Binary::Op op, Dtype in, Dtype out, const char* name,
                  const Stream& st);

}  // namespace braid::detail
