// Copies into or out of regions on the GPU: Concatenate, Pad, SliceUpdate, and the dynamic
// slices, whose start is computed on the device (no host round trip) and added to one side
// of the copy.
#include <stdexcept>

#include "backend/common/region.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "graph/node.h"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kMaxStartAxes = 32;

struct StartAxes {
  int n = 0;
  int64_t dim[kMaxStartAxes];
  int64_t box[kMaxStartAxes];
  int64_t stride[kMaxStartAxes];
};

// *offset = sum over axes of clamp(start (negatives from the end), 0, dim - box) * stride.
__global__ void dynamic_offset(const int64_t* starts, int64_t starts_stride, StartAxes axes,
                               int64_t* offset) {
  int64_t off = 0;
  for (int i = 0; i < axes.n; ++i) {
    int64_t s = starts[i * starts_stride];
    if (s < 0) s += axes.dim[i];
    s = s < 0 ? 0 : s;
    s = s > axes.dim[i] - axes.box[i] ? axes.dim[i] - axes.box[i] : s;
    off += s * axes.stride[i];
  }
  *offset = off;
}

// Enqueues the element offset of a dynamic box into the stream's scratch; returns its address.
const int64_t* box_offset(const array& starts, const std::vector<int>& axes, const Shape& shape,
                          const Shape& box, const Strides& strides, const Stream& s) {
  if (axes.size() > kMaxStartAxes) throw std::invalid_argument("[slice] Too many start axes for the GPU.");
  StartAxes a;
  a.n = static_cast<int>(axes.size());
  for (int i = 0; i < a.n; ++i) {
    a.dim[i] = shape[axes[i]];
    a.box[i] = box[axes[i]];
    a.stride[i] = strides[axes[i]];
  }
  auto* off = static_cast<int64_t*>(scratch(s, sizeof(int64_t)));
  dynamic_offset<<<1, 1, 0, stream_of(s)>>>(static_cast<const int64_t*>(starts.desc()->data_ptr),
                                            starts.ndim() == 0 ? 0 : starts.strides()[0], a, off);
  check_launch("slice");
  return off;
}

}  // namespace
}  // namespace cuda

void DynamicSlice::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const int64_t* off = cuda::box_offset(inputs[1], axes_, in.shape(), out.shape(), in.strides(), stream());
  cuda::copy_region(in.desc()->data_ptr, in.dtype(), in.strides(), out.desc()->data_ptr, out.dtype(),
                    out.strides(), out.shape(), cuda::stream_of(stream()), {off, nullptr});
}

void DynamicSliceUpdate::eval_gpu(const std::vector<array>& inputs, array& out) {
  if (!cuda::donate(inputs, 0, out)) cuda::copy_to_contiguous(inputs[0], out, stream());
  const array& upd = inputs[1];
  if (out.size() == 0 || upd.size() == 0) return;
  const int64_t* off = cuda::box_offset(inputs[2], axes_, out.shape(), upd.shape(), out.strides(), stream());
  cuda::copy_into(upd, out, common::Region{0, out.strides()}, upd.shape(), cuda::stream_of(stream()),
                  {nullptr, off});
}

void SliceUpdate::eval_gpu(const std::vector<array>& inputs, array& out) {
  if (!cuda::donate(inputs, 0, out)) cuda::copy_to_contiguous(inputs[0], out, stream());
  if (inputs[1].size() == 0) return;  // the op broadcast the update to the slice's shape
  cuda::copy_into(inputs[1], out, common::slice_region(out.strides(), start_, strides_), inputs[1].shape(),
                  cuda::stream_of(stream()));
}

void Concatenate::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  const cudaStream_t s = cuda::stream_of(stream());
  int64_t at = 0;
  for (const array& in : inputs) {
    if (in.size() > 0) cuda::copy_into(in, out, common::axis_region(out.strides(), axis_, at), in.shape(), s);
    at += in.shape()[axis_];
  }
}

void Pad::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::copy_to_contiguous(inputs[1], out, stream());  // the pad value everywhere
  if (inputs[0].size() == 0) return;
  cuda::copy_into(inputs[0], out, common::box_region(out.strides(), low_), inputs[0].shape(),
                  cuda::stream_of(stream()));
}

}  // namespace braid
