// The element-wise kernels of Unary, Binary and Select without their output allocation, for
// callers that own the output's memory: the primitives' eval_cpu (after allocating) and the
// fused element-wise node of compile (Compiled), which runs them tile by tile.
#pragma once

#include "primitives/elementwise.h"

namespace braid::cpu {

// `out` has its buffer: row-contiguous, out.size() elements of the op's output dtype. The
// inputs are read through their strides, broadcast to out's shape. Splits across the pool
// when out is large (a tile of up to kElementwiseGrain elements runs on the calling thread).
void unary_into(Unary::Op op, const array& in, array& out);
void binary_into(Binary::Op op, const array& a, const array& b, array& out);
void select_into(const array& condition, const array& x, const array& y, array& out);

}  // namespace braid::cpu
