// The oneDNN path of Convolution::eval_cpu: conv_dnnl.cpp when the build found oneDNN,
// no_dnnl/conv_dnnl.cpp (always declines) otherwise.
#pragma once

#include "backend/common/conv.h"
#include "braid/array.h"

namespace braid::cpu {

/// Computes the convolution `g` of `in` by `wt` into `out` (allocated, non-empty) with oneDNN
/// and returns true, or returns false having written nothing when oneDNN does not take the
/// case (input dilation, dtypes it has no fast kernel for on this CPU, geometry only its
/// reference kernel runs): the caller then runs im2col. Thread-safe.
bool dnnl_convolve(const array& in, const array& wt, array& out, const common::ConvGeometry& g);

}  // namespace braid::cpu
