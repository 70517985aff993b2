// Broadcast, Transpose and Reshape on the GPU: the same views over the input's buffer as on
// the CPU (no data moves); only a Reshape of a non-row-contiguous input copies.
#include "backend/cuda/copy.h"
#include "backend/cuda/cuda_utils.h"
#include "graph/node.h"
#include "primitives/primitives.h"

namespace braid {

void Broadcast::eval_gpu(const std::vector<array>& inputs, array& out) {
  detail::broadcast_view(inputs[0], out);
}

void Transpose::eval_gpu(const std::vector<array>& inputs, array& out) {
  detail::transpose_view(inputs[0], out, axes_);
}

void Reshape::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (detail::reshape_view(in, out)) return;
  // The input's elements in row-major order are exactly the reshaped output's.
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  cuda::copy_strided(in.desc()->data_ptr, in.dtype(), in.shape(), in.strides(), out.desc()->data_ptr, out.dtype(),
                     cuda::stream_of(stream()));
}

}  // namespace braid
