// Derivatives of the conversion, creation and data-movement primitives: each is linear, so
// its vjp is the adjoint data movement (a slice's is a slice update into zeros, and so on)
// and its jvp the same movement of the tangent.
#include <algorithm>
#include <numeric>
#include <optional>

#include "memory/object_pool.h"
#include "primitives/grad_utils.h"
#include "primitives/shape.h"

namespace braid {

using detail::make_pooled;
using detail::unbroadcast;

namespace {

// The tangent of input `i` among the given ones, or zeros of the primal's shape and dtype.
array tangent_or_zeros(int i, const std::vector<array>& primals, const std::vector<array>& tangents,
                       const std::vector<int>& argnums, const Stream& s) {
  for (size_t k = 0; k < argnums.size(); ++k) {
    if (argnums[k] == i) return tangents[k];
  }
  return zeros_like(primals[i], s);
}

}  // namespace

std::vector<array> AsType::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>&, const std::vector<array>&) {
  return {astype(cotangents[0], primals[0].dtype(), stream())};
}
std::vector<array> AsType::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                               const std::vector<int>&, const std::vector<array>& outputs) {
  return {astype(tangents[0], outputs[0].dtype(), stream())};
}

std::vector<array> Full::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                             const std::vector<int>&, const std::vector<array>&) {
  const array& v = primals[0];
  return {astype(unbroadcast(cotangents[0], v.shape(), stream()), v.dtype(), stream())};
}
std::vector<array> Full::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                             const std::vector<int>&, const std::vector<array>& outputs) {
  return {full(outputs[0].shape(), tangents[0], outputs[0].dtype(), stream())};
}

std::vector<array> Broadcast::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                  const std::vector<int>&, const std::vector<array>&) {
  return {unbroadcast(cotangents[0], primals[0].shape(), stream())};
}
std::vector<array> Broadcast::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                  const std::vector<int>&, const std::vector<array>& outputs) {
  return {broadcast_to(tangents[0], outputs[0].shape(), stream())};
}

std::vector<array> Reshape::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                const std::vector<int>&, const std::vector<array>&) {
  return {reshape(cotangents[0], primals[0].shape(), stream())};
}
std::vector<array> Reshape::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                const std::vector<int>&, const std::vector<array>& outputs) {
  return {reshape(tangents[0], outputs[0].shape(), stream())};
}

std::vector<array> Transpose::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                                  const std::vector<int>&, const std::vector<array>&) {
  std::vector<int> inverse(axes_.size());
  for (size_t i = 0; i < axes_.size(); ++i) inverse[axes_[i]] = static_cast<int>(i);
  return {transpose(cotangents[0], inverse, stream())};
}
std::vector<array> Transpose::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                  const std::vector<int>&, const std::vector<array>&) {
  return {transpose(tangents[0], axes_, stream())};
}

std::vector<array> Squeeze::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                const std::vector<int>&, const std::vector<array>&) {
  return {reshape(cotangents[0], primals[0].shape(), stream())};
}
std::vector<array> Squeeze::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                const std::vector<int>&, const std::vector<array>& outputs) {
  return {reshape(tangents[0], outputs[0].shape(), stream())};
}

std::vector<array> ExpandDims::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                   const std::vector<int>&, const std::vector<array>&) {
  return {reshape(cotangents[0], primals[0].shape(), stream())};
}
std::vector<array> ExpandDims::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                   const std::vector<int>&, const std::vector<array>& outputs) {
  return {reshape(tangents[0], outputs[0].shape(), stream())};
}

std::vector<array> Slice::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                              const std::vector<int>&, const std::vector<array>&) {
  const array& a = primals[0];
  return {array(a.shape(), a.dtype(), make_pooled<SliceUpdate>(stream(), start_, strides_),
                {zeros_like(a, stream()), cotangents[0]})};
}
std::vector<array> Slice::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                              const std::vector<int>&, const std::vector<array>& outputs) {
  const array& out = outputs[0];
  return {array(out.shape(), out.dtype(), make_pooled<Slice>(stream(), start_, strides_), {tangents[0]})};
}

std::vector<array> SliceUpdate::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  const array& upd = primals[1];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      out.emplace_back(c.shape(), c.dtype(), make_pooled<SliceUpdate>(s, start_, strides_),
                       std::vector<array>{c, zeros_like(upd, s)});
    } else {
      out.emplace_back(upd.shape(), c.dtype(), make_pooled<Slice>(s, start_, strides_),
                       std::vector<array>{c});
    }
  }
  return out;
}
std::vector<array> SliceUpdate::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  array src = tangent_or_zeros(0, primals, tangents, argnums, s);
  array upd = tangent_or_zeros(1, primals, tangents, argnums, s);
  return {array(outputs[0].shape(), outputs[0].dtype(), make_pooled<SliceUpdate>(s, start_, strides_),
                {astype(src, outputs[0].dtype(), s), astype(upd, outputs[0].dtype(), s)})};
}

std::vector<array> DynamicSlice::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                     const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& a = primals[0];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      out.emplace_back(a.shape(), a.dtype(), make_pooled<DynamicSliceUpdate>(s, axes_),
                       std::vector<array>{zeros_like(a, s), cotangents[0], primals[1]});
    } else {
      out.push_back(zeros_like(primals[arg], s));  // positions are integers
    }
  }
  return out;
}
std::vector<array> DynamicSlice::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                     const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& out = outputs[0];
  array t = tangent_or_zeros(0, primals, tangents, argnums, s);
  return {array(out.shape(), out.dtype(), make_pooled<DynamicSlice>(s, axes_), {t, primals[1]})};
}

std::vector<array> DynamicSliceUpdate::vjp(const std::vector<array>& primals,
                                           const std::vector<array>& cotangents,
                                           const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  const array& upd = primals[1];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      out.emplace_back(c.shape(), c.dtype(), make_pooled<DynamicSliceUpdate>(s, axes_),
                       std::vector<array>{c, zeros_like(upd, s), primals[2]});
    } else if (arg == 1) {
      out.emplace_back(upd.shape(), c.dtype(), make_pooled<DynamicSlice>(s, axes_),
                       std::vector<array>{c, primals[2]});
    } else {
      out.push_back(zeros_like(primals[arg], s));
    }
  }
  return out;
}
std::vector<array> DynamicSliceUpdate::jvp(const std::vector<array>& primals,
                                           const std::vector<array>& tangents,
                                           const std::vector<int>& argnums,
                                           const std::vector<array>& outputs) {
  const Stream& s = stream();
  array src = tangent_or_zeros(0, primals, tangents, argnums, s);
  array upd = tangent_or_zeros(1, primals, tangents, argnums, s);
  return {array(outputs[0].shape(), outputs[0].dtype(), make_pooled<DynamicSliceUpdate>(s, axes_),
                {src, upd, primals[2]})};
}

std::vector<array> Concatenate::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  std::vector<int32_t> offsets(primals.size() + 1, 0);
  for (size_t i = 0; i < primals.size(); ++i) offsets[i + 1] = offsets[i] + primals[i].shape()[axis_];
  std::vector<array> out;
  for (int arg : argnums) {
    const array& p = primals[arg];
    Shape start(p.ndim(), 0);
    start[axis_] = offsets[arg];
    array piece(p.shape(), c.dtype(), make_pooled<Slice>(s, std::move(start), Shape(p.ndim(), 1)), {c});
    out.push_back(astype(piece, p.dtype(), s));
  }
  return out;
}
std::vector<array> Concatenate::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  std::vector<array> parts;
  for (size_t i = 0; i < primals.size(); ++i) {
    parts.push_back(
        astype(tangent_or_zeros(static_cast<int>(i), primals, tangents, argnums, s), outputs[0].dtype(), s));
  }
  return {
      array(outputs[0].shape(), outputs[0].dtype(), make_pooled<Concatenate>(s, axis_), std::move(parts))};
}

std::vector<array> Pad::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                            const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  const array& a = primals[0];
  array inner(a.shape(), c.dtype(), make_pooled<Slice>(s, low_, Shape(a.ndim(), 1)), {c});
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      out.push_back(inner);
    } else {  // the pad value fills every element outside the input
      array v = subtract(sum(c, s), sum(inner, s), s);
      out.push_back(astype(reshape(v, primals[1].shape(), s), primals[1].dtype(), s));
    }
  }
  return out;
}
std::vector<array> Pad::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                            const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  array a = tangent_or_zeros(0, primals, tangents, argnums, s);
  array v = tangent_or_zeros(1, primals, tangents, argnums, s);
  return {
      array(outputs[0].shape(), outputs[0].dtype(), make_pooled<Pad>(s, low_), {a, astype(v, a.dtype(), s)})};
}

std::vector<array> AsStrided::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                  const std::vector<int>&, const std::vector<array>& outputs) {
  // Each output element reads input element offset + sum_i idx_i * stride_i: scatter-add back.
  const Stream& s = stream();
  const array& a = primals[0];  // 1-d: the op flattens its input
  const Shape& shape = outputs[0].shape();
  const int nd = static_cast<int>(shape.size());
  array idx = array(offset_, int64);
  for (int i = 0; i < nd; ++i) {
    Shape along(nd, 1);
    along[i] = shape[i];
    array r =
        multiply(arange(0.0, static_cast<double>(shape[i]), 1.0, int64, s), array(strides_[i], int64), s);
    idx = add(idx, reshape(r, along, s), s);
  }
  idx = broadcast_to(idx, shape, s);
  Shape upd_shape = shape;
  upd_shape.push_back(1);
  return {scatter_add(zeros_like(a, s), idx, reshape(cotangents[0], upd_shape, s), 0, s)};
}
std::vector<array> AsStrided::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                  const std::vector<int>&, const std::vector<array>& outputs) {
  const array& out = outputs[0];
  return {
      array(out.shape(), out.dtype(), make_pooled<AsStrided>(stream(), strides_, offset_), {tangents[0]})};
}

std::vector<array> Diagonal::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                 const std::vector<int>&, const std::vector<array>&) {
  // Lay the diagonal's k values along axis1 (length n1) and multiply by the (n1, n2) band,
  // giving [rest..., n1, n2]; then move the two axes back into place.
  const Stream& s = stream();
  const array& a = primals[0];
  const array& c = cotangents[0];
  const int nd = static_cast<int>(a.ndim());
  const int n1 = a.shape()[axis1_], n2 = a.shape()[axis2_];
  const int k = c.shape(-1);
  const int row0 = std::max(-offset_, 0);
  std::vector<int> last{static_cast<int>(c.ndim()) - 1};
  array along =
      pad(c, last, Shape{row0}, Shape{std::max(n1 - k - row0, 0)}, array(0, c.dtype()), "constant", s);
  array full_grad = multiply(expand_dims(along, -1, s), eye(n1, n2, offset_, c.dtype(), s), s);
  std::vector<int> perm(nd);
  for (int i = 0, r = 0; i < nd; ++i) {
    perm[i] = i == axis1_ ? nd - 2 : i == axis2_ ? nd - 1 : r++;
  }
  return {transpose(full_grad, perm, s)};
}
std::vector<array> Diagonal::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                 const std::vector<int>&, const std::vector<array>&) {
  return {diagonal(tangents[0], offset_, axis1_, axis2_, stream())};
}

std::vector<array> Copy::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                             const std::vector<int>&, const std::vector<array>&) {
  return {cotangents[0]};
}
std::vector<array> Copy::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                             const std::vector<int>&, const std::vector<array>&) {
  return {tangents[0]};
}

std::vector<array> Contiguous::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                                   const std::vector<int>&, const std::vector<array>&) {
  return {cotangents[0]};
}
std::vector<array> Contiguous::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                   const std::vector<int>&, const std::vector<array>&) {
  return {tangents[0]};
}

std::vector<array> Depends::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                const std::vector<int>& argnums, const std::vector<array>&) {
  std::vector<array> out;
  for (int arg : argnums) out.push_back(arg == 0 ? cotangents[0] : zeros_like(primals[arg], stream()));
  return out;
}
std::vector<array> Depends::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                const std::vector<int>& argnums, const std::vector<array>&) {
  return {tangent_or_zeros(0, primals, tangents, argnums, stream())};
}

double NumberOfElements::count(const Shape& shape, const std::vector<int>& axes, bool inverted) {
  double n = 1;
  for (int ax : axes) n *= shape[ax];
  return inverted ? 1.0 / n : n;
}
bool NumberOfElements::is_equivalent(const Primitive& o) const {
  auto* p = dynamic_cast<const NumberOfElements*>(&o);
  return p && p->axes_ == axes_ && p->inverted_ == inverted_;
}
// A count depends on the input's shape only: no derivative flows through it.
std::vector<array> NumberOfElements::vjp(const std::vector<array>& primals, const std::vector<array>&,
                                         const std::vector<int>& argnums, const std::vector<array>&) {
  std::vector<array> out;
  for (int arg : argnums) out.push_back(zeros_like(primals[arg], stream()));
  return out;
}
std::vector<array> NumberOfElements::jvp(const std::vector<array>&, const std::vector<array>&,
                                         const std::vector<int>&, const std::vector<array>& outputs) {
  return {zeros_like(outputs[0], stream())};
}

}  // namespace braid
