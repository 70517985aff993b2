// Views on the GPU: the same layouts over the input's buffer as on the CPU (no data moves).
// Only a Reshape or View of a non-row-contiguous input and a non-contiguous Contiguous copy.
#include <stdexcept>

#include "backend/common/region.h"
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
  cuda::copy_strided(in.desc()->data_ptr, in.dtype(), in.shape(), in.strides(), out.desc()->data_ptr,
                     out.dtype(), cuda::stream_of(stream()));
}

void Squeeze::eval_gpu(const std::vector<array>& inputs, array& out) {
  detail::squeeze_view(inputs[0], out, axes_);
}

void ExpandDims::eval_gpu(const std::vector<array>& inputs, array& out) {
  detail::expand_dims_view(inputs[0], out, axes_);
}

void Slice::eval_gpu(const std::vector<array>& inputs, array& out) {
  const common::Region r = common::slice_region(inputs[0].strides(), start_, strides_);
  detail::strided_view(inputs[0], out, r.strides, out.size() == 0 ? 0 : r.offset);
}

void AsStrided::eval_gpu(const std::vector<array>& inputs, array& out) {
  // The op flattens its input: a 1-d or row-contiguous array, always viewable.
  if (!detail::as_strided_view(inputs[0], out, strides_, offset_)) {
    throw std::runtime_error("[AsStrided] The input must be 1-d or row-contiguous.");
  }
}

void Diagonal::eval_gpu(const std::vector<array>& inputs, array& out) {
  detail::diagonal_view(inputs[0], out, offset_, axis1_, axis2_);
}

void Copy::eval_gpu(const std::vector<array>& inputs, array& out) { detail::share_buffer(out, inputs[0]); }

void Depends::eval_gpu(const std::vector<array>& inputs, array& out) { detail::share_buffer(out, inputs[0]); }

void Contiguous::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (in.flags().row_contiguous || (allow_col_major_ && in.flags().col_contiguous)) {
    detail::share_buffer(out, in);
  } else {
    cuda::copy_to_contiguous(in, out, stream());
  }
}

void View::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (in.flags().row_contiguous && reinterpret_cast<uintptr_t>(in.desc()->data_ptr) % out.itemsize() == 0) {
    const Strides st = detail::row_major_strides(out.shape());
    detail::copy_shared_buffer(out, in, st, detail::flags_for(out.shape(), st, out.size()), out.size());
    return;
  }
  // out's fresh buffer holds exactly in's bytes: gather them there in row-major order.
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  cuda::copy_strided(in.desc()->data_ptr, in.dtype(), in.shape(), in.strides(), out.desc()->data_ptr,
                     in.dtype(), cuda::stream_of(stream()));
}

}  // namespace braid
