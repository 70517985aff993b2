// The cuDNN path of Convolution::eval_gpu: conv_dnn.cpp when the build found cuDNN,
// no_cudnn/conv_dnn.cpp (always declines) otherwise.
#pragma once

#include <vector>

#include "backend/common/conv.h"
#include "braid/array.h"

namespace braid::cuda {

/// Enqueues the convolution `g` of `in` by `wt` into `out` (allocated) through cuDNN and
/// returns true, or returns false with nothing enqueued when cuDNN does not take the case
/// (input dilation, asymmetric or negative padding, non-contiguous operands, sizes past
/// cuDNN's 32-bit limits, no algorithm): the caller then runs its own path.
bool dnn_convolve(const array& in, const array& wt, array& out, const common::ConvGeometry& g,
                  const std::vector<int>& pad_hi, const Stream& s);

}  // namespace braid::cuda
