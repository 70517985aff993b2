// Views (Squeeze, ExpandDims, Slice, AsStrided, Diagonal, Copy, View, Depends) and the copies
// that write pieces into a strided region of their output (Concatenate, SliceUpdate, Pad),
// all through copy_region.
#include <algorithm>

#include "backend/common/region.h"
#include "backend/cpu/convert.h"
#include "graph/node.h"
#include "primitives/primitives.h"

namespace braid {
namespace {

// Start positions of a dynamic slice or update: input `starts` (int64, one per axis in
// `axes`), negatives counted from the end, clamped so a box of `box` stays inside `shape`.
Shape dynamic_starts(const array& starts, const std::vector<int>& axes, const Shape& shape,
                     const Shape& box) {
  Shape start(shape.size(), 0);
  const auto* p = static_cast<const int64_t*>(starts.desc()->data_ptr);
  const int64_t step = starts.ndim() == 0 ? 0 : starts.strides()[0];
  for (size_t i = 0; i < axes.size(); ++i) {
    const int ax = axes[i];
    int64_t s = p[static_cast<int64_t>(i) * step];
    if (s < 0) s += shape[ax];
    s = std::clamp<int64_t>(s, 0, shape[ax] - box[ax]);
    start[ax] = static_cast<int32_t>(s);
  }
  return start;
}

}  // namespace

void Squeeze::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::squeeze_view(inputs[0], out, axes_);
}

void ExpandDims::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::expand_dims_view(inputs[0], out, axes_);
}

void Slice::eval_cpu(const std::vector<array>& inputs, array& out) {
  const common::Region r = common::slice_region(inputs[0].strides(), start_, strides_);
  detail::strided_view(inputs[0], out, r.strides, out.size() == 0 ? 0 : r.offset);
}

void DynamicSlice::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  const Shape start = dynamic_starts(inputs[1], axes_, in.shape(), out.shape());
  const common::Region r = common::box_region(in.strides(), start);
  detail::strided_view(in, out, r.strides, out.size() == 0 ? 0 : r.offset);
}

void SliceUpdate::eval_cpu(const std::vector<array>& inputs, array& out) {
  if (!detail::donate_host(inputs, 0, out)) cpu::copy_to_contiguous(inputs[0], out);
  if (inputs[1].size() == 0) return;  // the op broadcast the update to the slice's shape
  cpu::copy_into(inputs[1], out, common::slice_region(out.strides(), start_, strides_), inputs[1].shape());
}

void DynamicSliceUpdate::eval_cpu(const std::vector<array>& inputs, array& out) {
  if (!detail::donate_host(inputs, 0, out)) cpu::copy_to_contiguous(inputs[0], out);
  if (out.size() == 0 || inputs[1].size() == 0) return;
  const Shape start = dynamic_starts(inputs[2], axes_, out.shape(), inputs[1].shape());
  cpu::copy_into(inputs[1], out, common::box_region(out.strides(), start), inputs[1].shape());
}

void Concatenate::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  int64_t at = 0;
  for (const array& in : inputs) {
    if (in.size() > 0) cpu::copy_into(in, out, common::axis_region(out.strides(), axis_, at), in.shape());
    at += in.shape()[axis_];
  }
}

void Pad::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::copy_to_contiguous(inputs[1], out);  // the pad value everywhere
  if (inputs[0].size() == 0) return;
  cpu::copy_into(inputs[0], out, common::box_region(out.strides(), low_), inputs[0].shape());
}

void AsStrided::eval_cpu(const std::vector<array>& inputs, array& out) {
  if (!detail::as_strided_view(inputs[0], out, strides_, offset_)) {
    detail::as_strided_view(cpu::row_contiguous(inputs[0]), out, strides_, offset_);
  }
}

void Diagonal::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::diagonal_view(inputs[0], out, offset_, axis1_, axis2_);
}

void Copy::eval_cpu(const std::vector<array>& inputs, array& out) { detail::share_buffer(out, inputs[0]); }

void Depends::eval_cpu(const std::vector<array>& inputs, array& out) { detail::share_buffer(out, inputs[0]); }

void Contiguous::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (in.flags().row_contiguous || (allow_col_major_ && in.flags().col_contiguous)) {
    detail::share_buffer(out, in);
  } else {
    cpu::copy_to_contiguous(in, out);
  }
}

void View::eval_cpu(const std::vector<array>& inputs, array& out) {
  array in = cpu::row_contiguous(inputs[0]);
  if (reinterpret_cast<uintptr_t>(in.desc()->data_ptr) % out.itemsize() != 0) {
    in = cpu::contiguous_copy(in);  // fresh buffers are aligned for any dtype
  }
  const Strides st = detail::row_major_strides(out.shape());
  detail::copy_shared_buffer(out, in, st, detail::flags_for(out.shape(), st, out.size()), out.size());
}

}  // namespace braid
