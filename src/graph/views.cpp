// Layout-only results shared by every backend: views over the input's buffer, no data moved.
#include "graph/node.h"

namespace braid::detail {

void broadcast_view(const array& in, array& out) {
  Strides st(out.ndim(), 0);
  const size_t diff = out.ndim() - in.ndim();
  for (size_t i = 0; i < in.ndim(); ++i) {
    if (in.shape()[i] != 1) st[i + diff] = in.strides()[i];
  }
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, in.data_size()), in.data_size());
}

void transpose_view(const array& in, array& out, const std::vector<int>& axes) {
  Strides st(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) st[i] = in.strides()[axes[i]];
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, in.data_size()), in.data_size());
}

bool reshape_view(const array& in, array& out) {
  if (!in.flags().row_contiguous) return false;
  Strides st = row_major_strides(out.shape());
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, in.data_size()), in.data_size());
  return true;
}

}  // namespace braid::detail
