// vmap (MLX's semantics): trace the function on placeholder inputs without the mapped axis,
// then rebuild each node that depends on a mapped input from its batched inputs. The rules
// for braid's primitives are one table here, keyed by primitive type. A few primitives with
// no batched form (see loop_rule) are applied to each slice of the batch in turn and the
// results stacked. A primitive with no entry falls back to its own vmap, which throws
// "[Name] vmap is not implemented." unless it has one (custom functions do).
#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>
#include <typeindex>
#include <unordered_map>

#include "braid/ops.h"
#include "braid/transforms.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/fft.h"
#include "primitives/primitives.h"
#include "transforms/tape.h"

namespace braid {

namespace {

using detail::make_pooled;

// A node rebuilt from batched inputs: the new node and its mapped axis.
using Mapped = std::pair<array, int>;
// (the traced node, its inputs, their mapped axes, -1 for an unmapped input)
using Rule = Mapped (*)(const array& node, const std::vector<array>& in, const std::vector<int>& axes);

int batch_size(const std::vector<array>& in, const std::vector<int>& axes) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (axes[i] >= 0) return in[i].shape(axes[i]);
  }
  return 1;
}

array to_front(const array& x, int axis, const Stream& s) { return axis <= 0 ? x : moveaxis(x, axis, 0, s); }

// Every mapped input with its axis first and as many unit axes after it as make it the rank of
// the widest input; unmapped inputs as they are (broadcasting lines them up from the right).
std::vector<array> align(const std::vector<array>& in, const std::vector<int>& axes, const Stream& s) {
  int rank = 0;
  for (size_t i = 0; i < in.size(); ++i)
    rank = std::max(rank, static_cast<int>(in[i].ndim()) - (axes[i] >= 0));
  std::vector<array> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (axes[i] < 0) {
      out.push_back(in[i]);
      continue;
    }
    array x = to_front(in[i], axes[i], s);
    const int missing = rank - (static_cast<int>(x.ndim()) - 1);
    if (missing > 0) {
      std::vector<int> ones(missing);
      for (int k = 0; k < missing; ++k) ones[k] = k + 1;
      x = expand_dims(x, ones, s);
    }
    out.push_back(x);
  }
  return out;
}

}  // namespace

// divmod's outputs, as any element-wise op's: the node over the aligned inputs.
std::pair<std::vector<array>, std::vector<int>> DivMod::vmap(const std::vector<array>& inputs,
                                                             const std::vector<int>& axes) {
  std::vector<array> x = align(inputs, axes, stream());
  return {divmod(x[0], x[1], stream()), {0, 0}};
}

namespace {

Shape batched(int b, const Shape& shape) {
  Shape r{b};
  r.insert(r.end(), shape.begin(), shape.end());
  return r;
}

std::vector<int> shifted(const std::vector<int>& axes) {
  std::vector<int> r(axes);
  for (auto& a : r) ++a;
  return r;
}

// Same shape in and out, element by element: the node's (immutable) primitive over the
// batched input.
Mapped same_shape(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  return {array(in[0].shape(), node.dtype(), node.primitive_ptr(), {in[0]}), axes[0]};
}

Mapped elementwise(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  std::vector<array> x = align(in, axes, s);
  Shape shape = x[0].shape();
  for (size_t i = 1; i < x.size(); ++i) shape = detail::broadcast_shapes(shape, x[i].shape(), "vmap");
  return {array(std::move(shape), node.dtype(), node.primitive_ptr(), std::move(x)), 0};
}

// As the pair it fuses maps: op(x) keeps x's layout, then multiply aligns both operands.
Mapped scaled_unary_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const ScaledUnary&>(node.primitive());
  const Stream& s = p.stream();
  array u(in[1].shape(), in[1].dtype(), make_pooled<Unary>(s, p.op()), {in[1]});
  std::vector<array> x = align({in[0], std::move(u)}, axes, s);
  Shape shape = detail::broadcast_shapes(x[0].shape(), x[1].shape(), "vmap");
  return {array(std::move(shape), node.dtype(), make_pooled<Binary>(s, Binary::Op::multiply), std::move(x)),
          0};
}

Mapped reduce(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Reduce&>(node.primitive());
  const Stream& s = p.stream();
  array x = to_front(in[0], axes[0], s);
  std::vector<int> ax = shifted(p.axes());
  Shape shape = x.shape();
  for (int a : ax) shape[a] = 1;
  return {array(std::move(shape), node.dtype(), make_pooled<Reduce>(s, p.op(), ax), {x}), 0};
}

Mapped arg_reduce(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const ArgReduce&>(node.primitive());
  const Stream& s = p.stream();
  array x = to_front(in[0], axes[0], s);
  Shape shape = x.shape();
  shape[p.axis() + 1] = 1;
  return {array(std::move(shape), node.dtype(), make_pooled<ArgReduce>(s, p.op(), p.axis() + 1), {x}), 0};
}

Mapped scan(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Scan&>(node.primitive());
  const Stream& s = p.stream();
  array x = to_front(in[0], axes[0], s);
  return {array(x.shape(), node.dtype(),
                make_pooled<Scan>(s, p.op(), p.axis() + 1, p.reverse(), p.inclusive()), {x}),
          0};
}

Mapped softmax_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  array x = to_front(in[0], axes[0], s);  // the softmax axis stays last
  return {array(x.shape(), node.dtype(), node.primitive_ptr(), {x}), 0};
}

Mapped broadcast_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  const int b = batch_size(in, axes);
  array x = to_front(in[0], axes[0], s);
  const int missing = static_cast<int>(node.ndim()) - (static_cast<int>(x.ndim()) - 1);
  for (int k = 0; k < missing; ++k) x = expand_dims(x, 1, s);
  return {broadcast_to(x, batched(b, node.shape()), s), 0};
}

Mapped reshape_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  return {reshape(to_front(in[0], axes[0], s), batched(batch_size(in, axes), node.shape()), s), 0};
}

Mapped transpose_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Transpose&>(node.primitive());
  std::vector<int> perm{0};
  for (int a : p.axes()) perm.push_back(a + 1);
  return {transpose(to_front(in[0], axes[0], p.stream()), perm, p.stream()), 0};
}

Mapped squeeze_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Squeeze&>(node.primitive());
  return {squeeze(to_front(in[0], axes[0], p.stream()), shifted(p.axes()), p.stream()), 0};
}

Mapped expand_dims_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const ExpandDims&>(node.primitive());
  return {expand_dims(to_front(in[0], axes[0], p.stream()), shifted(p.axes()), p.stream()), 0};
}

Mapped slice_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Slice&>(node.primitive());
  const Stream& s = p.stream();
  Shape start{0}, strides{1};
  start.insert(start.end(), p.start().begin(), p.start().end());
  strides.insert(strides.end(), p.strides().begin(), p.strides().end());
  return {array(batched(batch_size(in, axes), node.shape()), node.dtype(),
                make_pooled<Slice>(s, std::move(start), std::move(strides)), {to_front(in[0], axes[0], s)}),
          0};
}

Mapped concatenate_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Concatenate&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  std::vector<array> parts;
  for (size_t i = 0; i < in.size(); ++i) {
    parts.push_back(axes[i] >= 0 ? to_front(in[i], axes[i], s)
                                 : broadcast_to(expand_dims(in[i], 0, s), batched(b, in[i].shape()), s));
  }
  return {astype(concatenate(std::move(parts), p.axis() + 1, s), node.dtype(), s), 0};
}

Mapped matmul_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  std::vector<array> x = align(in, axes, s);
  return {matmul(x[0], x[1], s), 0};
}

Mapped addmm_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const AddMM&>(node.primitive());
  const Stream& s = p.stream();
  std::vector<array> x = align(in, axes, s);
  return {addmm(x[2], x[0], x[1], p.alpha(), p.beta(), s), 0};
}

Mapped astype_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  return {astype(in[0], node.dtype(), node.primitive().stream()), axes[0]};
}

Mapped sort_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  array x = to_front(in[0], axes[0], s);
  const Primitive& prim = node.primitive();
  if (auto* p = dynamic_cast<const Sort*>(&prim)) return {sort(x, p->axis() + 1, s), 0};
  if (auto* p = dynamic_cast<const ArgSort*>(&prim)) return {argsort(x, p->axis() + 1, s), 0};
  if (auto* p = dynamic_cast<const Partition*>(&prim)) return {partition(x, p->kth(), p->axis() + 1, s), 0};
  const auto& q = static_cast<const ArgPartition&>(prim);
  return {argpartition(x, q.kth(), q.axis() + 1, s), 0};
}

Mapped full_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  array v = to_front(in[0], axes[0], s);
  const int missing = static_cast<int>(node.ndim()) - (static_cast<int>(v.ndim()) - 1);
  for (int k = 0; k < missing; ++k) v = expand_dims(v, 1, s);
  return {full(batched(batch_size(in, axes), node.shape()), v, node.dtype(), s), 0};
}

Mapped gather_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Gather&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  std::vector<array> idx(in.begin() + 1, in.end());
  std::vector<int> idx_axes(axes.begin() + 1, axes.end());
  const bool indices_mapped = std::any_of(idx_axes.begin(), idx_axes.end(), [](int a) { return a >= 0; });
  std::vector<int> gather_axes = shifted(p.axes());
  Shape slice{b};
  slice.insert(slice.end(), p.slice_sizes().begin(), p.slice_sizes().end());
  if (axes[0] >= 0 && !indices_mapped) {
    // Gather the whole batch axis at each index: it lands after the index dimensions.
    Shape shape = node.shape();
    const int idx_ndim = static_cast<int>(node.ndim() - p.slice_sizes().size());
    shape.insert(shape.begin() + idx_ndim, b);
    std::vector<array> inputs{to_front(in[0], axes[0], s)};
    inputs.insert(inputs.end(), idx.begin(), idx.end());
    return {
        array(std::move(shape), node.dtype(), make_pooled<Gather>(s, gather_axes, slice), std::move(inputs)),
        idx_ndim};
  }
  // Mapped indices, all of one shape [B, ...] after aligning.
  idx = align(idx, idx_axes, s);
  Shape idx_shape = idx[0].shape();
  for (const auto& i : idx) idx_shape = detail::broadcast_shapes(idx_shape, i.shape(), "vmap");
  if (idx_shape.empty() || idx_shape[0] != b) idx_shape.insert(idx_shape.begin(), b);
  for (auto& i : idx) i = broadcast_to(i, idx_shape, s);
  if (axes[0] < 0) {
    Shape shape = idx_shape;
    shape.insert(shape.end(), p.slice_sizes().begin(), p.slice_sizes().end());
    std::vector<array> inputs{in[0]};
    inputs.insert(inputs.end(), idx.begin(), idx.end());
    return {array(std::move(shape), node.dtype(), node.primitive_ptr(), std::move(inputs)), 0};
  }
  // Both mapped: index the source's batch axis too, with each element's own batch position.
  Shape along(idx_shape.size(), 1);
  along[0] = b;
  std::vector<array> inputs{to_front(in[0], axes[0], s),
                            broadcast_to(reshape(arange(0, b, s), along, s), idx_shape, s)};
  inputs.insert(inputs.end(), idx.begin(), idx.end());
  gather_axes.insert(gather_axes.begin(), 0);
  slice[0] = 1;
  Shape shape = idx_shape;
  shape.insert(shape.end(), slice.begin(), slice.end());
  array out(std::move(shape), node.dtype(), make_pooled<Gather>(s, gather_axes, slice), std::move(inputs));
  return {squeeze(out, static_cast<int>(idx_shape.size()), s), 0};
}

// An input with the batch axis first: moved there, or (unmapped) broadcast along a new one.
array batch_first(const array& x, int axis, int b, const Stream& s) {
  if (axis >= 0) return to_front(x, axis, s);
  return broadcast_to(expand_dims(x, 0, s), batched(b, x.shape()), s);
}

// Source and indices have one rank: each gets the batch axis first (a unit one when unmapped,
// which take_along_axis broadcasts).
Mapped gather_axis_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const GatherAxis&>(node.primitive());
  const Stream& s = p.stream();
  auto first = [&](size_t i) { return axes[i] >= 0 ? to_front(in[i], axes[i], s) : expand_dims(in[i], 0, s); };
  return {take_along_axis(first(0), first(1), p.axis() + 1, s), 0};
}

// 0, 1, ..., b - 1 along the first of `shape`'s axes (shape[0] == b), broadcast over the rest.
array batch_positions(int b, const Shape& shape, const Stream& s) {
  Shape along(shape.size(), 1);
  along[0] = b;
  return broadcast_to(reshape(arange(0, b, s), along, s), shape, s);
}

// The fallback: the node's primitive applied to each slice of the batch (the slices have the
// traced shapes, so each result has the node's shape), stacked along a new first axis.
Mapped loop_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  const int b = batch_size(in, axes);
  if (b == 0) return {zeros(batched(0, node.shape()), node.dtype(), s), 0};
  std::vector<array> results;
  for (int k = 0; k < b; ++k) {
    std::vector<array> one;
    for (size_t i = 0; i < in.size(); ++i)
      one.push_back(axes[i] < 0 ? in[i] : contiguous(take(in[i], k, axes[i], s), false, s));
    results.push_back(array(node.shape(), node.dtype(), node.primitive_ptr(), std::move(one)));
  }
  return {stack(results, 0, s), 0};
}

// The number of matrices in x (the product of its axes but the last two), leaving out a mapped
// axis.
int64_t matrix_count(const array& x, int mapped_axis) {
  Shape shape = x.shape();
  if (mapped_axis >= 0) shape.erase(shape.begin() + mapped_axis);
  int64_t n = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) n *= shape[i];
  return n;
}

// Gathered products (GatherMM, GatherQMM): inputs [left, right..., lhs indices, rhs indices],
// the indices numbering each side's matrices (its operands' last two axes) over their leading
// axes. A batch joins each side's leading axes, so element k's indices move past the k
// earlier elements' matrices: k * count + index when that side is mapped, the index as it is
// when it is not. One product over B times the pairs, unflattened after.
Mapped gathered_product_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  const int b = batch_size(in, axes);
  if (b == 0) return {zeros(batched(0, node.shape()), node.dtype(), s), 0};
  const size_t n = in.size();
  const bool left_mapped = axes[0] >= 0;
  const bool right_mapped = std::any_of(axes.begin() + 1, axes.end() - 2, [](int a) { return a >= 0; });
  auto flat_operand = [&](size_t i, bool side_mapped) {
    const array x = side_mapped ? batch_first(in[i], axes[i], b, s) : in[i];
    const int64_t count = matrix_count(x, -1);
    return reshape(x, {static_cast<int32_t>(count), x.shape(-2), x.shape(-1)}, s);
  };
  std::vector<array> inputs{flat_operand(0, left_mapped)};
  for (size_t i = 1; i + 2 < n; ++i) inputs.push_back(flat_operand(i, right_mapped));
  int64_t pairs = 0;
  for (size_t i = n - 2; i < n; ++i) {
    const bool side_mapped = i == n - 2 ? left_mapped : right_mapped;
    const int64_t count = matrix_count(in[i == n - 2 ? 0 : 1], axes[i == n - 2 ? 0 : 1]);
    array idx = astype(batch_first(in[i], axes[i], b, s), uint32, s);
    if (side_mapped && count > 0) {
      // Clamped first, as the kernels clamp an index past the end: it must not reach the
      // next element's matrices.
      idx = minimum(idx, array(static_cast<uint32_t>(count - 1)), s);
      array offsets = astype(batch_positions(b, idx.shape(), s), uint32, s);
      idx = add(idx, multiply(offsets, array(static_cast<uint32_t>(count)), s), s);
    }
    pairs = static_cast<int64_t>(idx.size());
    inputs.push_back(reshape(idx, {static_cast<int32_t>(pairs)}, s));
  }
  const Shape flat_out{static_cast<int32_t>(pairs), node.shape(-2), node.shape(-1)};
  array out(flat_out, node.dtype(), node.primitive_ptr(), std::move(inputs));
  return {reshape(out, batched(b, node.shape()), s), 0};
}

// The batched inputs: the update slices gain the batch axis, and a first index array (each
// element's batch position) picks it.
Mapped scatter_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Scatter&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  Shape upd_shape = in.back().shape();
  if (axes.back() >= 0) upd_shape.erase(upd_shape.begin() + axes.back());
  const Shape idx_shape = batched(b, Shape(upd_shape.begin(), upd_shape.end() - node.ndim()));
  std::vector<array> inputs{batch_first(in[0], axes[0], b, s), batch_positions(b, idx_shape, s)};
  for (size_t i = 1; i + 1 < in.size(); ++i)
    inputs.push_back(broadcast_to(batch_first(in[i], axes[i], b, s), idx_shape, s));
  array upd = batch_first(in.back(), axes.back(), b, s);
  inputs.push_back(expand_dims(upd, static_cast<int>(idx_shape.size()), s));
  std::vector<int> scatter_axes = shifted(p.axes());
  scatter_axes.insert(scatter_axes.begin(), 0);
  return {array(batched(b, node.shape()), node.dtype(),
                make_pooled<Scatter>(s, p.reduce_type(), scatter_axes), std::move(inputs)),
          0};
}

Mapped slice_update_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const SliceUpdate&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  Shape start{0}, strides{1};
  start.insert(start.end(), p.start().begin(), p.start().end());
  strides.insert(strides.end(), p.strides().begin(), p.strides().end());
  array src = batch_first(in[0], axes[0], b, s);
  return {array(src.shape(), node.dtype(), make_pooled<SliceUpdate>(s, std::move(start), std::move(strides)),
                {src, batch_first(in[1], axes[1], b, s)}),
          0};
}

// Column i of the batched starts [B] or [B, n] of a dynamic slice.
array start_column(const array& starts, size_t i, const Stream& s) {
  return starts.ndim() == 1 ? starts : take(starts, static_cast<int>(i), 1, s);
}

// Shared starts slice every batch element alike; a batch of starts is a gather of one slice
// per element (gather wraps and clamps its starts as the dynamic slice does).
Mapped dynamic_slice_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const DynamicSlice&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  if (axes[1] < 0) {
    return {array(batched(b, node.shape()), node.dtype(), make_pooled<DynamicSlice>(s, shifted(p.axes())),
                  {to_front(in[0], axes[0], s), in[1]}),
            0};
  }
  array starts = to_front(in[1], axes[1], s);
  std::vector<array> idx;
  std::vector<int> gather_axes;
  Shape slice = node.shape();
  array a = in[0];
  const int shift = axes[0] >= 0;
  if (shift) {
    a = to_front(in[0], axes[0], s);
    idx.push_back(arange(0, b, s));
    gather_axes.push_back(0);
    slice.insert(slice.begin(), 1);
  }
  for (size_t i = 0; i < p.axes().size(); ++i) {
    idx.push_back(start_column(starts, i, s));
    gather_axes.push_back(p.axes()[i] + shift);
  }
  array out = gather(a, idx, gather_axes, slice, s);
  return {shift ? squeeze(out, 1, s) : out, 0};
}

// Shared starts update every batch element alike; a batch of starts is a scatter of one box
// per element at the starts clamped as the primitive clamps them (a scatter would drop them).
Mapped dynamic_slice_update_rule(const array& node, const std::vector<array>& in,
                                 const std::vector<int>& axes) {
  const auto& p = static_cast<const DynamicSliceUpdate&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  array src = batch_first(in[0], axes[0], b, s);
  array upd = batch_first(in[1], axes[1], b, s);
  if (axes[2] < 0) {
    return {array(src.shape(), node.dtype(), make_pooled<DynamicSliceUpdate>(s, shifted(p.axes())),
                  {src, upd, in[2]}),
            0};
  }
  array starts = astype(to_front(in[2], axes[2], s), int64, s);
  std::vector<array> idx{arange(0, b, s)};
  std::vector<int> scatter_axes{0};
  for (size_t i = 0; i < p.axes().size(); ++i) {
    const int ax = p.axes()[i];
    const auto dim = static_cast<int64_t>(node.shape()[ax]);
    const auto box = static_cast<int64_t>(upd.shape()[ax + 1]);
    array st = start_column(starts, i, s);
    st = where(less(st, array(int64_t{0}), s), add(st, array(dim), s), st, s);
    st = minimum(maximum(st, array(int64_t{0}), s), array(dim - box), s);
    idx.push_back(st);
    scatter_axes.push_back(ax + 1);
  }
  return {scatter(src, idx, expand_dims(upd, 1, s), scatter_axes, s), 0};
}

// A shared pad value pads the batch at once; a batch of them fills each element with its own
// and places the input inside.
Mapped pad_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Pad&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  Shape low{0};
  low.insert(low.end(), p.low().begin(), p.low().end());
  array x = batch_first(in[0], axes[0], b, s);
  Shape shape = batched(b, node.shape());
  if (axes[1] < 0) {
    return {array(std::move(shape), node.dtype(), make_pooled<Pad>(s, std::move(low)), {x, in[1]}), 0};
  }
  Shape along(shape.size(), 1);
  along[0] = b;
  array filled =
      broadcast_to(astype(reshape(to_front(in[1], axes[1], s), along, s), node.dtype(), s), shape, s);
  Shape strides(shape.size(), 1);
  return {array(shape, node.dtype(), make_pooled<SliceUpdate>(s, std::move(low), std::move(strides)),
                {filled, x}),
          0};
}

// A batch of keys [B, 2]: each fills its own block of the output (RandomBits' layout).
Mapped random_bits_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const RandomBits&>(node.primitive());
  const Stream& s = p.stream();
  array key = to_front(in[0], axes[0], s);
  if (key.ndim() != 2) return loop_rule(node, in, axes);
  Shape shape = batched(key.shape(0), node.shape());
  return {array(shape, node.dtype(), make_pooled<RandomBits>(s, shape, p.width()), {key}), 0};
}

// x [N, S..., C], w [O, K..., C / G], out [N, S'..., O]. A mapped input joins the batch N; a
// mapped weight joins the output channels (inside each group); both mapped make each batch
// element its own groups.
Mapped convolution_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Convolution&>(node.primitive());
  const Stream& s = p.stream();
  const int b = batch_size(in, axes);
  const Shape& out = node.shape();
  const int nd = static_cast<int>(out.size());
  const int o = out.back(), g = p.groups();
  auto conv = [&](const array& x, const array& w, int groups, Shape shape) {
    return array(std::move(shape), node.dtype(),
                 make_pooled<Convolution>(s, p.stride(), p.padding_lo(), p.padding_hi(), p.kernel_dilation(),
                                          p.input_dilation(), groups, p.flip()),
                 {x, w});
  };
  if (axes[1] < 0) {
    array x = to_front(in[0], axes[0], s);
    Shape xs(x.shape().begin() + 1, x.shape().end());
    xs[0] *= b;
    Shape ys = out;
    ys[0] *= b;
    return {reshape(conv(reshape(x, xs, s), in[1], g, ys), batched(b, out), s), 0};
  }
  array w = to_front(in[1], axes[1], s);  // [B, O, K..., C / G]
  Shape ws(w.shape().begin() + 1, w.shape().end());
  ws[0] *= b;
  Shape ys = out;
  ys.back() *= b;
  Shape split(out.begin(), out.end() - 1);
  if (axes[0] < 0) {
    // Output channels ordered (group, batch, channel of the group).
    Shape wsplit = w.shape();
    wsplit[1] = o / g;
    wsplit.insert(wsplit.begin() + 1, g);
    array wg = reshape(moveaxis(reshape(w, wsplit, s), 1, 0, s), ws, s);
    split.insert(split.end(), {g, b, o / g});
    array y = moveaxis(reshape(conv(in[0], wg, g, ys), split, s), nd, 0, s);
    return {reshape(y, batched(b, out), s), 0};
  }
  array x = moveaxis(to_front(in[0], axes[0], s), 0, -2, s);  // [N, S..., B, C]
  Shape xs(x.shape().begin(), x.shape().end() - 1);
  xs.back() *= x.shape(-1);
  split.insert(split.end(), {b, o});
  array y = reshape(conv(reshape(x, xs, s), reshape(w, ws, s), g * b, ys), split, s);
  return {moveaxis(y, nd - 1, 0, s), 0};
}

Mapped diagonal_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const Diagonal&>(node.primitive());
  const Stream& s = p.stream();
  return {array(batched(batch_size(in, axes), node.shape()), node.dtype(),
                make_pooled<Diagonal>(s, p.offset(), p.axis1() + 1, p.axis2() + 1),
                {to_front(in[0], axes[0], s)}),
          0};
}

Mapped view_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  return {view(to_front(in[0], axes[0], s), node.dtype(), s), 0};
}

// The transform's axes move past the batch axis, which goes first.
Mapped fft_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const FFT&>(node.primitive());
  const Stream& s = p.stream();
  return {array(batched(batch_size(in, axes), node.shape()), node.dtype(),
                make_pooled<FFT>(s, shifted(p.axes()), p.inverse(), p.real()), {to_front(in[0], axes[0], s)}),
          0};
}

// Input 0 batched; the dependencies come along as they are.
Mapped depends_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  std::vector<array> inputs(in);
  inputs[0] = batch_first(in[0], axes[0], batch_size(in, axes), s);
  Shape shape = inputs[0].shape();
  return {array(std::move(shape), node.dtype(), node.primitive_ptr(), std::move(inputs)), 0};
}

// A count over axes of the unbatched input: the same count over the batched input's axes
// (shifted past the batch axis), one value for every batch entry.
Mapped number_of_elements_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const auto& p = static_cast<const NumberOfElements&>(node.primitive());
  std::vector<int> shifted = p.axes();
  if (axes[0] >= 0) {
    for (int& ax : shifted) ax += ax >= axes[0];
  }
  return {array(Shape{}, node.dtype(), make_pooled<NumberOfElements>(p.stream(), std::move(shifted), p.inverted()),
                {in[0]}),
          -1};
}

// A factorization of the last two axes of input 0: the batch axis goes first and the node's
// output gains it.
Mapped matrix_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  return {array(batched(batch_size(in, axes), node.shape()), node.dtype(), node.primitive_ptr(),
                {to_front(in[0], axes[0], s)}),
          0};
}

// A solve of a [..., n, n] and b [..., n, r] with one batch: both get the batch axis first.
Mapped solve_rule(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  const Stream& s = node.primitive().stream();
  const int b = batch_size(in, axes);
  return {array(batched(b, node.shape()), node.dtype(), node.primitive_ptr(),
                {batch_first(in[0], axes[0], b, s), batch_first(in[1], axes[1], b, s)}),
          0};
}

const std::unordered_map<std::type_index, Rule>& rules() {
  static const std::unordered_map<std::type_index, Rule> table = {
      {typeid(Unary), &same_shape},     {typeid(StopGradient), &same_shape},
      {typeid(Copy), &same_shape},      {typeid(Contiguous), &same_shape},
      {typeid(Binary), &elementwise},   {typeid(Select), &elementwise},
      {typeid(AsType), &astype_rule},   {typeid(Reduce), &reduce},
      {typeid(ArgReduce), &arg_reduce}, {typeid(Scan), &scan},
      {typeid(Softmax), &softmax_rule}, {typeid(Broadcast), &broadcast_rule},
      {typeid(Reshape), &reshape_rule}, {typeid(Transpose), &transpose_rule},
      {typeid(Squeeze), &squeeze_rule}, {typeid(ExpandDims), &expand_dims_rule},
      {typeid(Slice), &slice_rule},     {typeid(Concatenate), &concatenate_rule},
      {typeid(Matmul), &matmul_rule},   {typeid(AddMM), &addmm_rule},
      {typeid(Sort), &sort_rule},       {typeid(ArgSort), &sort_rule},
      {typeid(Partition), &sort_rule},  {typeid(ArgPartition), &sort_rule},
      {typeid(Full), &full_rule},       {typeid(Gather), &gather_rule},
      {typeid(GatherAxis), &gather_axis_rule}, {typeid(Scatter), &scatter_rule}, {typeid(SliceUpdate), &slice_update_rule},
      {typeid(DynamicSlice), &dynamic_slice_rule}, {typeid(DynamicSliceUpdate), &dynamic_slice_update_rule},
      {typeid(Pad), &pad_rule}, {typeid(RandomBits), &random_bits_rule},
      {typeid(Convolution), &convolution_rule}, {typeid(Diagonal), &diagonal_rule},
      {typeid(View), &view_rule}, {typeid(Depends), &depends_rule},
      {typeid(NumberOfElements), &number_of_elements_rule},
      {typeid(ScaledUnary), &scaled_unary_rule}, {typeid(FFT), &fft_rule},
      // Along the last axis (or the last two): the batch axis goes first.
      {typeid(Hadamard), &softmax_rule}, {typeid(SvdSquareRoot), &softmax_rule},
      {typeid(Inverse), &matrix_rule}, {typeid(Cholesky), &matrix_rule}, {typeid(QRF), &matrix_rule},
      {typeid(SVD), &matrix_rule}, {typeid(Eigh), &matrix_rule}, {typeid(Eig), &matrix_rule},
      {typeid(LUF), &matrix_rule}, {typeid(Solve), &solve_rule}, {typeid(SolveTriangular), &solve_rule},
      // No batched form: one slice at a time (loop_rule).
      {typeid(GatherMM), &gathered_product_rule}, {typeid(GatherQMM), &gathered_product_rule},
      {typeid(SegmentedMM), &loop_rule},
      {typeid(MaskedScatter), &loop_rule}, {typeid(AsStrided), &loop_rule},
      {typeid(Quantize), &loop_rule}, {typeid(Dequantize), &loop_rule},
      {typeid(QuantizedMatmul), &loop_rule},
  };
  return table;
}

Mapped map_node(const array& node, const std::vector<array>& in, const std::vector<int>& axes) {
  Primitive& prim = node.primitive();
  auto it = rules().find(typeid(prim));
  if (it != rules().end()) return it->second(node, in, axes);
  auto [outs, out_axes] = prim.vmap(in, axes);
  return {outs[0], out_axes[0]};
}

std::vector<array> vmap_call(const std::function<std::vector<array>(const std::vector<array>&)>& fun,
                             const std::vector<array>& inputs, std::vector<int> in_axes,
                             std::vector<int> out_axes) {
  if (in_axes.empty()) in_axes.assign(inputs.size(), 0);
  if (in_axes.size() != inputs.size()) {
    std::ostringstream msg;
    msg << "[vmap] The number of in axes (" << in_axes.size() << ") must match the number of inputs ("
        << inputs.size() << ").";
    throw std::invalid_argument(msg.str());
  }
  int64_t size = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (in_axes[i] == -1) continue;
    if (inputs[i].ndim() == 0)
      throw std::invalid_argument("[vmap] Cannot vmap an input with zero dimensions.");
    if (in_axes[i] < 0 || in_axes[i] >= static_cast<int>(inputs[i].ndim())) {
      std::ostringstream msg;
      msg << "[vmap] Axis " << in_axes[i] << " invalid for input with " << inputs[i].ndim() << " dimensions.";
      throw std::invalid_argument(msg.str());
    }
    const int64_t n = inputs[i].shape(in_axes[i]);
    if (size >= 0 && n != size) {
      std::ostringstream msg;
      msg << "[vmap] Inconsistent axis sizes: " << n << " and " << size << ".";
      throw std::invalid_argument(msg.str());
    }
    size = n;
  }

  // Trace on placeholders: the inputs without their mapped axis, with no value.
  detail::TraceCall call(inputs);
  std::vector<array> traced, placeholders;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (in_axes[i] == -1) {
      traced.push_back(inputs[i]);
      continue;
    }
    Shape shape = inputs[i].shape();
    shape.erase(shape.begin() + in_axes[i]);
    array p(std::move(shape), inputs[i].dtype(), nullptr, {});
    p.desc()->trace = call.scope();  // before anyone else can see it
    traced.push_back(p);
    placeholders.push_back(p);
  }
  std::vector<array> outputs = fun(traced);
  if (out_axes.empty()) out_axes.assign(outputs.size(), 0);
  if (out_axes.size() != outputs.size()) {
    throw std::invalid_argument("[vmap] The number of out axes must match the number of outputs.");
  }

  detail::Tape tape =
      detail::build_tape(outputs, placeholders, *call.scope(), /*through_stop_gradient=*/true);
  std::vector<std::optional<Mapped>> mapped(tape.entries.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (in_axes[i] != -1) mapped[tape.entry_of(traced[i])] = Mapped{inputs[i], in_axes[i]};
  }
  std::vector<array> v_inputs;
  std::vector<int> v_axes;
  std::unordered_map<const void*, std::pair<std::vector<array>, std::vector<int>>> mapped_groups;
  for (size_t e = tape.num_primals; e < tape.entries.size(); ++e) {
    const detail::TapeEntry& entry = tape.entries[e];
    v_inputs.clear();
    v_axes.clear();
    for (const auto& in : entry.inputs()) {
      const int32_t t = tape.entry_of(in);
      v_inputs.push_back(t >= 0 ? mapped[t]->first : in);
      v_axes.push_back(t >= 0 ? mapped[t]->second : -1);
    }
    if (const auto& group = entry.node.desc()->siblings) {
      // A multi-output primitive is mapped once, for all its outputs.
      auto [it, fresh] = mapped_groups.try_emplace(group.get());
      if (fresh) it->second = entry.node.primitive().vmap(v_inputs, v_axes);
      const size_t k = entry.node.desc()->position;
      mapped[e] = Mapped{it->second.first.at(k), it->second.second.at(k)};
      continue;
    }
    mapped[e] = map_node(entry.node, v_inputs, v_axes);
  }

  std::vector<array> result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int32_t entry = tape.entry_of(outputs[i]);
    if (entry < 0) {
      result.push_back(outputs[i]);  // does not depend on a mapped input, as MLX
      continue;
    }
    auto [out, axis] = *mapped[entry];
    if (axis != out_axes[i]) {
      if (out_axes[i] < 0 || out_axes[i] >= static_cast<int>(out.ndim())) {
        std::ostringstream msg;
        msg << "[vmap] Axis " << out_axes[i] << " invalid for output with " << out.ndim() << " dimensions.";
        throw std::invalid_argument(msg.str());
      }
      out = moveaxis(out, axis, out_axes[i]);
    }
    result.push_back(out);
  }
  return result;
}

}  // namespace

std::function<std::vector<array>(const std::vector<array>&)> vmap(
    const std::function<std::vector<array>(const std::vector<array>&)>& fun, const std::vector<int>& in_axes,
    const std::vector<int>& out_axes) {
  auto all_negative = [](const std::vector<int>& axes) {
    return !axes.empty() && std::all_of(axes.begin(), axes.end(), [](int a) { return a < 0; });
  };
  if (all_negative(in_axes) != all_negative(out_axes)) {
    throw std::invalid_argument(
        "[vmap] Input (or output) axes must be specified if output (or input) axes are.");
  }
  return [fun, in_axes, out_axes](const std::vector<array>& inputs) {
    return vmap_call(fun, inputs, in_axes, out_axes);
  };
}

std::function<array(const array&)> vmap(const std::function<array(const array&)>& fun, int in_axis,
                                        int out_axis) {
  auto vfun = vmap([fun](const std::vector<array>& in) { return std::vector<array>{fun(in[0])}; }, {in_axis},
                   {out_axis});
  return [vfun](const array& a) { return vfun({a})[0]; };
}

std::function<array(const array&, const array&)> vmap(
    const std::function<array(const array&, const array&)>& fun, int in_axis_a, int in_axis_b, int out_axis) {
  auto vfun = vmap([fun](const std::vector<array>& in) { return std::vector<array>{fun(in[0], in[1])}; },
                   {in_axis_a, in_axis_b}, {out_axis});
  return [vfun](const array& a, const array& b) { return vfun({a, b})[0]; };
}

}  // namespace braid
