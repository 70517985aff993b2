// Layout-only results shared by every backend: views over the input's buffer, no data moved.
#include <cstdlib>

#include "graph/node.h"

namespace braid::detail {

size_t layout_span(const Shape& shape, const Strides& strides) {
  uint64_t span = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return 0;
    span += static_cast<uint64_t>(shape[i] - 1) * static_cast<uint64_t>(std::llabs(strides[i]));
  }
  return static_cast<size_t>(span);
}

void strided_view(const array& in, array& out, const Strides& strides, int64_t offset) {
  const size_t span = layout_span(out.shape(), strides);
  copy_shared_buffer(out, in, strides, flags_for(out.shape(), strides, span), span, offset);
}

bool as_strided_view(const array& in, array& out, const Strides& strides, int64_t offset) {
  // Positions count the input's elements in row-major order: a 1-d input of stride s (a view
  // of another buffer) scales them by s.
  int64_t scale = 1;
  if (!in.flags().row_contiguous) {
    if (in.ndim() != 1) return false;
    scale = in.strides()[0];
  }
  Strides st(strides.size());
  for (size_t i = 0; i < strides.size(); ++i) st[i] = strides[i] * scale;
  strided_view(in, out, st, out.size() == 0 ? 0 : offset * scale);
  return true;
}

void broadcast_view(const array& in, array& out) {
  Strides st(out.ndim(), 0);
  const size_t diff = out.ndim() - in.ndim();
  for (size_t i = 0; i < in.ndim(); ++i) {
    if (in.shape()[i] != 1) st[i + diff] = in.strides()[i];
  }
  const size_t data_size = out.size() == 0 ? 0 : in.data_size();  // an empty result reads nothing
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, data_size), data_size);
}

void transpose_view(const array& in, array& out, const std::vector<int>& axes) {
  Strides st(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) st[i] = in.strides()[axes[i]];
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, in.data_size()), in.data_size());
}

namespace {

// The strides that read `in`'s elements in row-major order as an array of `shape`, when a view
// can: each run of output axes must cover a run of input axes (unit axes aside) that is itself
// laid out row-major, as NumPy's reshape without copy requires. False when a copy is needed.
bool strides_for_reshape(const array& in, const Shape& shape, Strides& out) {
  Shape old_shape;
  Strides old_strides;
  for (size_t i = 0; i < in.ndim(); ++i) {
    if (in.shape()[i] != 1) {
      old_shape.push_back(in.shape()[i]);
      old_strides.push_back(in.strides()[i]);
    }
  }
  out.assign(shape.size(), 0);
  size_t oi = 0, ni = 0;
  while (ni < shape.size() && oi < old_shape.size()) {
    // The smallest runs [ni, nj) and [oi, oj) with equal products.
    size_t nj = ni + 1, oj = oi + 1;
    int64_t np = shape[ni], op = old_shape[oi];
    while (np != op) {
      if (np < op) {
        if (nj == shape.size()) return false;
        np *= shape[nj++];
      } else {
        if (oj == old_shape.size()) return false;
        op *= old_shape[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k) {
      if (old_strides[k] != old_strides[k + 1] * old_shape[k + 1]) return false;
    }
    out[nj - 1] = old_strides[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) out[k - 1] = out[k] * shape[k];
    ni = nj;
    oi = oj;
  }
  // Trailing unit axes of the output: any stride reads them; continue the layout.
  for (; ni < shape.size(); ++ni) out[ni] = ni > 0 ? out[ni - 1] : 1;
  return oi == old_shape.size();
}

}  // namespace

bool reshape_view(const array& in, array& out) {
  // Row-major inputs always have a view; a strided one (a transpose, a slice, a broadcast)
  // where its axes allow one.
  Strides st;
  if (in.flags().row_contiguous) {
    st = row_major_strides(out.shape());
  } else if (in.size() == 0 || !strides_for_reshape(in, out.shape(), st)) {
    return false;
  }
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, in.data_size()), in.data_size());
  return true;
}

void squeeze_view(const array& in, array& out, const std::vector<int>& axes) {
  Strides st;
  size_t next = 0;  // axes are sorted
  for (size_t i = 0; i < in.ndim(); ++i) {
    if (next < axes.size() && static_cast<size_t>(axes[next]) == i) {
      ++next;
    } else {
      st.push_back(in.strides()[i]);
    }
  }
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, in.data_size()), in.data_size());
}

void expand_dims_view(const array& in, array& out, const std::vector<int>& axes) {
  Strides st(out.ndim(), 0);
  size_t next = 0, src = 0;  // axes are sorted and index the output
  for (size_t i = 0; i < out.ndim(); ++i) {
    if (next < axes.size() && static_cast<size_t>(axes[next]) == i) {
      ++next;
      // A new unit axis: any stride works; the next inner extent keeps the layout contiguous.
      st[i] = src < in.ndim() ? in.strides()[src] * std::max<int32_t>(in.shape()[src], 1) : 1;
    } else {
      st[i] = in.strides()[src++];
    }
  }
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, in.data_size()), in.data_size());
}

void diagonal_view(const array& in, array& out, int offset, int axis1, int axis2) {
  Strides st;
  for (size_t i = 0; i < in.ndim(); ++i) {
    if (static_cast<int>(i) != axis1 && static_cast<int>(i) != axis2) st.push_back(in.strides()[i]);
  }
  st.push_back(in.strides()[axis1] + in.strides()[axis2]);
  const int64_t first = out.size() == 0 ? 0
                        : offset >= 0   ? static_cast<int64_t>(offset) * in.strides()[axis2]
                                        : -static_cast<int64_t>(offset) * in.strides()[axis1];
  strided_view(in, out, st, first);
}

}  // namespace braid::detail
