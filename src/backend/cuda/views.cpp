// Broadcast, Transpose and Reshape on the GPU: the same views over the input's buffer as on
// the CPU (no data moves); only a Reshape of a non-row-contiguous input copies.
#include "backend/cpu/dispatch.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/cuda_utils.h"
#include "graph/node.h"
#include "primitives/primitives.h"

namespace braid {

void Broadcast::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  Strides st = cpu::broadcast_strides(in, out.shape());
  detail::copy_shared_buffer(out, in, st, detail::flags_for(out.shape(), st, in.data_size()), in.data_size());
}

void Transpose::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  Strides st(axes_.size());
  for (size_t i = 0; i < axes_.size(); ++i) st[i] = in.strides()[axes_[i]];
  detail::copy_shared_buffer(out, in, st, detail::flags_for(out.shape(), st, in.data_size()), in.data_size());
}

void Reshape::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (in.flags().row_contiguous) {
    Strides st = detail::row_major_strides(out.shape());
    detail::copy_shared_buffer(out, in, st, detail::flags_for(out.shape(), st, in.data_size()), in.data_size());
    return;
  }
  // The input's elements in row-major order are exactly the reshaped output's.
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  cuda::copy_strided(in.desc()->data_ptr, in.dtype(), in.shape(), in.strides(), out.desc()->data_ptr, out.dtype(),
                     cuda::stream_of(stream()));
}

}  // namespace braid
