// The matrix products. matmul, addmm, gather_mm and segmented_mm build GEMM primitives;
// tensordot, inner, outer and kron compose from reshapes, matmul and multiply, as MLX does;
// block_masked_mm composes too: it expands the block masks and applies them to the operands
// and the result around one matmul.
#include <algorithm>
#include <numeric>
#include <sstream>

#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

namespace {

// The shapes of a product after NumPy's vector rule ([K] is [1, K] on the left and [K, 1] on
// the right, and the added dimension leaves the result): a [..., M, K], b [..., K, N].
struct ProductShapes {
  Shape a, b, batch;
  bool a_vector = false, b_vector = false;
  int32_t m() const { return a[a.size() - 2]; }
  int32_t k() const { return a.back(); }
  int32_t n() const { return b.back(); }
  Shape out() const {
    Shape s = batch;
    s.push_back(m());
    s.push_back(n());
    return s;
  }
  Shape result() const {
    Shape s = batch;
    if (!a_vector) s.push_back(m());
    if (!b_vector) s.push_back(n());
    return s;
  }
};

ProductShapes product_shapes(const char* op, const array& a, const array& b) {
  if (a.ndim() == 0 || b.ndim() == 0) {
    throw_invalid(op, "Got 0 dimension input. Inputs must have at least one dimension.");
  }
  ProductShapes p;
  p.a_vector = a.ndim() == 1;
  p.b_vector = b.ndim() == 1;
  p.a = p.a_vector ? Shape{1, a.shape()[0]} : a.shape();
  p.b = p.b_vector ? Shape{b.shape()[0], 1} : b.shape();
  if (p.a.back() != p.b[p.b.size() - 2]) {
    throw_invalid(op, "Last dimension of first input with shape " + shape_str(p.a) +
                          " must match second to last dimension of second input with shape " +
                          shape_str(p.b) + ".");
  }
  p.batch =
      detail::broadcast_shapes(Shape(p.a.begin(), p.a.end() - 2), Shape(p.b.begin(), p.b.end() - 2), op);
  return p;
}

void check_real_floating(const char* op, const std::string& inputs, Dtype t) {
  if (issubdtype(t, Dtype::Category::floating)) return;
  std::ostringstream msg;
  msg << "Only real floating point types are supported but " << inputs << " were provided which results in "
      << t << ", which is not a real floating point type.";
  throw_invalid(op, msg.str());
}

std::string dtype_list(std::initializer_list<Dtype> dtypes) {
  std::ostringstream s;
  size_t i = 0;
  for (Dtype d : dtypes) {
    s << (i == 0 ? "" : (i + 1 == dtypes.size() ? " and " : ", ")) << d;
    ++i;
  }
  return s.str();
}

// `x` converted to t (before broadcasting, so a shared operand converts once) as [..., R, C],
// with the product's batch dimensions.
array product_operand(const array& x, const Shape& matrix_shape, const Shape& batch, Dtype t,
                      const Stream& st) {
  Shape full = batch;
  full.push_back(matrix_shape[matrix_shape.size() - 2]);
  full.push_back(matrix_shape.back());
  return broadcast_to(reshape(astype(x, t, st), matrix_shape, st), full, st);
}

// The shape of an index array (given, or one index per matrix of x); integer dtypes only.
Shape index_shape(const char* op, const std::optional<array>& indices, const Shape& x_shape) {
  if (!indices) return Shape(x_shape.begin(), x_shape.end() - 2);
  if (!issubdtype(indices->dtype(), Dtype::Category::integer)) {
    throw_invalid(op, "Got indices with invalid dtype. Indices must be integral.");
  }
  return indices->shape();
}

// The indices as uint32 (MLX's gather indices), or every matrix of x in turn, broadcast.
array index_array(const std::optional<array>& indices, const Shape& x_shape, const Shape& batch,
                  const Stream& st) {
  if (indices) return broadcast_to(astype(*indices, uint32, st), batch, st);
  const Shape own(x_shape.begin(), x_shape.end() - 2);
  const int64_t total = std::accumulate(own.begin(), own.end(), int64_t{1}, std::multiplies<int64_t>());
  return broadcast_to(reshape(arange(0.0, static_cast<double>(total), uint32, st), own, st), batch, st);
}

}  // namespace

array matmul(const array& a_in, const array& b_in, StreamOrDevice s) {
  const ProductShapes p = product_shapes("matmul", a_in, b_in);
  const Dtype t = promote_types(a_in.dtype(), b_in.dtype());
  if (!issubdtype(t, Dtype::Category::inexact)) {
    std::ostringstream msg;
    msg << "Only inexact types are supported but " << dtype_list({a_in.dtype(), b_in.dtype()})
        << " were provided which results in " << t << ", which is not a floating point type.";
    throw_invalid("matmul", msg.str());
  }
  const Shape out_shape = p.out();
  detail::checked_size(out_shape, t, "matmul");
  Stream st = detail::op_stream(std::move(s), "matmul");
  array a = product_operand(a_in, p.a, p.batch, t, st);
  array b = product_operand(b_in, p.b, p.batch, t, st);
  array out(out_shape, t, detail::make_pooled<Matmul>(st), {a, b});
  return p.a_vector || p.b_vector ? reshape(out, p.result(), st) : out;
}

array addmm(array c, array a, array b, const float& alpha, const float& beta, StreamOrDevice s) {
  if (a.ndim() == 0 || b.ndim() == 0) {
    throw_invalid("addmm", "Got 0 dimension input. Inputs must have at least one dimension.");
  }
  const Dtype t = promote_types(promote_types(a.dtype(), b.dtype()), c.dtype());
  if (t == complex64) {
    // No complex AddMM kernel, as in MLX: the product and the sum as two ops.
    Stream st = detail::op_stream(std::move(s), "addmm");
    return add(multiply(matmul(a, b, st), array(alpha), st), multiply(array(beta), c, st), st);
  }
  const ProductShapes p = product_shapes("addmm", a, b);
  check_real_floating("addmm", dtype_list({c.dtype(), a.dtype(), b.dtype()}), t);
  const Shape result = p.result();
  if (detail::broadcast_shapes(c.shape(), result, "addmm") != result) {
    throw_invalid("addmm", "input c must broadcast to the output shape");
  }
  const Shape out_shape = p.out();
  detail::checked_size(out_shape, t, "addmm");
  Stream st = detail::op_stream(std::move(s), "addmm");
  array cb = broadcast_to(astype(c, t, st), result, st);
  if (p.k() == 0) {
    // Nothing to sum: beta c (BLAS's rule: beta == 0 ignores c, NaNs included).
    return beta == 0.0f ? zeros(result, t, st) : multiply(array(beta, t), cb, st);
  }
  // c as the output's [..., M, N]: the vector rule's dimensions put back (views).
  std::vector<int> inserted;
  if (p.a_vector) inserted.push_back(static_cast<int>(out_shape.size()) - 2);
  if (p.b_vector) inserted.push_back(static_cast<int>(out_shape.size()) - 1);
  if (!inserted.empty()) cb = expand_dims(cb, inserted, st);
  array out(out_shape, t, detail::make_pooled<AddMM>(st, alpha, beta),
            {product_operand(a, p.a, p.batch, t, st), product_operand(b, p.b, p.batch, t, st), cb});
  return inserted.empty() ? out : reshape(out, result, st);
}

array tensordot(const array& a, const array& b, const int axis, StreamOrDevice s) {
  if (axis < 0) throw_invalid("tensordot", "axis must be greater or equal to 0.");
  if (axis > static_cast<int>(std::min(a.ndim(), b.ndim()))) {
    throw_invalid("tensordot", "axis must be less than the number of dimensions of a and b.");
  }
  std::vector<int> axes_a, axes_b;
  for (int i = 0; i < axis; ++i) {
    axes_a.push_back(i - axis);
    axes_b.push_back(i);
  }
  return tensordot(a, b, axes_a, axes_b, std::move(s));
}

array tensordot(const array& a, const array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b, StreamOrDevice s) {
  if (axes_a.size() != axes_b.size()) throw_invalid("tensordot", "axes must have the same size.");
  const int na = static_cast<int>(a.ndim()), nb = static_cast<int>(b.ndim());
  std::vector<int> ca, cb;
  int64_t csize = 1;
  for (size_t i = 0; i < axes_a.size(); ++i) {
    ca.push_back(detail::normalize_axis(axes_a[i], na, "tensordot"));
    cb.push_back(detail::normalize_axis(axes_b[i], nb, "tensordot"));
    if (a.shape()[ca.back()] != b.shape()[cb.back()]) {
      throw_invalid("tensordot", "a and b must have the same shape on the contracted axes.");
    }
    csize *= a.shape()[ca.back()];
  }
  std::vector<bool> contracted_a(na, false), contracted_b(nb, false);
  for (int x : ca) contracted_a[x] = true;
  for (int x : cb) contracted_b[x] = true;
  if (std::count(contracted_a.begin(), contracted_a.end(), true) != static_cast<long>(ca.size()) ||
      std::count(contracted_b.begin(), contracted_b.end(), true) != static_cast<long>(cb.size())) {
    throw_invalid("tensordot", "Repeated axis in the contracted axes.");
  }
  // a's free axes then its contracted ones; b's contracted axes then its free ones.
  std::vector<int> perm_a, perm_b = cb;
  Shape result;
  int64_t free_a = 1, free_b = 1;
  for (int i = 0; i < na; ++i) {
    if (contracted_a[i]) continue;
    perm_a.push_back(i);
    free_a *= a.shape()[i];
    result.push_back(a.shape()[i]);
  }
  perm_a.insert(perm_a.end(), ca.begin(), ca.end());
  for (int i = 0; i < nb; ++i) {
    if (contracted_b[i]) continue;
    perm_b.push_back(i);
    free_b *= b.shape()[i];
    result.push_back(b.shape()[i]);
  }
  Stream st = detail::op_stream(std::move(s), "tensordot");
  const auto dim = [](int64_t n) { return static_cast<int32_t>(n); };  // each a product of one input's dims
  array x = reshape(transpose(a, perm_a, st), {dim(free_a), dim(csize)}, st);
  array y = reshape(transpose(b, perm_b, st), {dim(csize), dim(free_b)}, st);
  return reshape(matmul(x, y, st), result, st);
}

array outer(const array& a, const array& b, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "outer");
  return multiply(reshape(a, {static_cast<int32_t>(a.size()), 1}, st), flatten(b, st), st);
}

array inner(const array& a, const array& b, StreamOrDevice s) {
  const bool scalar = a.ndim() == 0 || b.ndim() == 0;
  if (!scalar && a.shape().back() != b.shape().back()) {
    throw_invalid("inner", "a and b must have the same last dimension.");
  }
  Stream st = detail::op_stream(std::move(s), "inner");
  if (scalar) return multiply(a, b, st);
  return tensordot(a, b, std::vector<int>{-1}, std::vector<int>{-1}, st);
}

array kron(const array& a, const array& b, StreamOrDevice s) {
  if (a.size() == 0 || b.size() == 0) throw_invalid("kron", "Input arrays cannot be empty.");
  // a's axis i and b's axis i become neighbours (a's outer), multiplied, then merged.
  const int nd = static_cast<int>(std::max(a.ndim(), b.ndim()));
  Shape a_shape(2 * nd, 1), b_shape(2 * nd, 1), out_shape(nd, 1);
  for (int i = nd - 1, j = static_cast<int>(a.ndim()) - 1; j >= 0; --i, --j) {
    a_shape[2 * i] = a.shape()[j];
    out_shape[i] *= a.shape()[j];
  }
  for (int i = nd - 1, j = static_cast<int>(b.ndim()) - 1; j >= 0; --i, --j) {
    b_shape[2 * i + 1] = b.shape()[j];
    out_shape[i] *= b.shape()[j];
  }
  detail::checked_size(out_shape, promote_types(a.dtype(), b.dtype()), "kron");
  Stream st = detail::op_stream(std::move(s), "kron");
  return reshape(multiply(reshape(a, a_shape, st), reshape(b, b_shape, st), st), out_shape, st);
}

namespace {

// A block mask [..., ceil(rows/bs), ceil(cols/bs)] expanded to one value per element [..., rows, cols].
array expand_block_mask(const array& mask, int block, int32_t rows, int32_t cols, const Stream& st) {
  const size_t nd = mask.ndim();
  const int32_t tr = mask.shape()[nd - 2], tc = mask.shape()[nd - 1];
  Shape split(mask.shape().begin(), mask.shape().end() - 2);
  Shape spread = split, merged = split;
  for (int32_t d : {tr, 1, tc, 1}) split.push_back(d);
  for (int32_t d : {tr, block, tc, block}) spread.push_back(d);
  merged.push_back(tr * block);
  merged.push_back(tc * block);
  array full = reshape(broadcast_to(reshape(mask, split, st), spread, st), merged, st);
  Shape start(nd, 0), stop = merged;
  stop[nd - 2] = rows;
  stop[nd - 1] = cols;
  return slice(full, start, stop, st);
}

// A bool block mask zeroes its false blocks (NaNs included); another mask scales.
array apply_block_mask(const array& x, const array& mask, int block, const Stream& st) {
  const size_t nd = x.ndim();
  const array m = expand_block_mask(mask, block, x.shape()[nd - 2], x.shape()[nd - 1], st);
  if (mask.dtype() == bool_) return where(m, x, array(0, x.dtype()), st);
  return multiply(x, m, st);
}

}  // namespace

array block_masked_mm(array a, array b, int block_size, std::optional<array> mask_out,
                      std::optional<array> mask_lhs, std::optional<array> mask_rhs, StreamOrDevice s) {
  if (!mask_out && !mask_lhs && !mask_rhs) return matmul(a, b, std::move(s));
  if (block_size != 32 && block_size != 64) {
    throw_invalid("block_masked_mm", "Only block_sizes 32, 64 are supported. Got block size " +
                                         std::to_string(block_size) + ".");
  }
  const ProductShapes p = product_shapes("block_masked_mm", a, b);
  const Dtype t = promote_types(a.dtype(), b.dtype());
  check_real_floating("block_masked_mm", dtype_list({a.dtype(), b.dtype()}), t);
  detail::checked_size(p.out(), t, "block_masked_mm");
  Stream st = detail::op_stream(std::move(s), "block_masked_mm");
  const auto tiles = [&](int32_t n) { return (n + block_size - 1) / block_size; };
  const int32_t tm = tiles(p.m()), tn = tiles(p.n()), tk = tiles(p.k());
  // A mask as [..., y, x] with the product's batch dims; float masks take the output dtype.
  const auto mask_shaped = [&](array mask, int32_t y, int32_t x, Dtype dt) {
    Shape shape = p.batch;
    shape.push_back(y);
    shape.push_back(x);
    return broadcast_to(astype(mask, dt, st), shape, st);
  };
  array lhs = product_operand(a, p.a, p.batch, t, st);
  array rhs = product_operand(b, p.b, p.batch, t, st);
  std::optional<array> out_mask;
  if (mask_out) {
    array m = *mask_out;
    std::vector<int> inserted;
    if (p.a_vector) inserted.push_back(-2);
    if (p.b_vector) inserted.push_back(-1);
    if (!inserted.empty()) m = expand_dims(m, inserted, st);
    out_mask = mask_shaped(m, tm, tn, m.dtype() == bool_ ? bool_ : t);
  }
  if (mask_lhs || mask_rhs) {
    array ml = mask_lhs.value_or(array({true}));
    array mr = mask_rhs.value_or(array({true}));
    const Dtype mt = ml.dtype() == bool_ && mr.dtype() == bool_ ? bool_ : t;
    if (p.a_vector) ml = expand_dims(ml, -2, st);
    if (p.b_vector) mr = expand_dims(mr, -1, st);
    lhs = apply_block_mask(lhs, mask_shaped(ml, tm, tk, mt), block_size, st);
    rhs = apply_block_mask(rhs, mask_shaped(mr, tk, tn, mt), block_size, st);
  }
  array out = matmul(lhs, rhs, st);
  if (out_mask) out = apply_block_mask(out, *out_mask, block_size, st);
  return p.a_vector || p.b_vector ? reshape(out, p.result(), st) : out;
}

array gather_mm(array a, array b, std::optional<array> lhs_indices, std::optional<array> rhs_indices,
                bool sorted_indices, StreamOrDevice s) {
  if (!lhs_indices && !rhs_indices) return matmul(a, b, std::move(s));
  if (a.ndim() == 0 || b.ndim() == 0) {
    throw_invalid("gather_mm", "Got 0 dimension input. Inputs must have at least one dimension.");
  }
  const Shape a_shape = a.ndim() == 1 ? Shape{1, a.shape()[0]} : a.shape();
  const Shape b_shape = b.ndim() == 1 ? Shape{b.shape()[0], 1} : b.shape();
  if (a_shape.back() != b_shape[b_shape.size() - 2]) {
    throw_invalid("gather_mm", "Last dimension of first input with shape " + shape_str(a_shape) +
                                   " must match second to last dimension of second input with shape " +
                                   shape_str(b_shape) + ".");
  }
  const Dtype t = promote_types(a.dtype(), b.dtype());
  check_real_floating("gather_mm", dtype_list({a.dtype(), b.dtype()}), t);
  const Shape batch = detail::broadcast_shapes(index_shape("gather_mm", lhs_indices, a_shape),
                                               index_shape("gather_mm", rhs_indices, b_shape), "gather_mm");
  Shape out_shape = batch;
  out_shape.push_back(a_shape[a_shape.size() - 2]);
  out_shape.push_back(b_shape.back());
  detail::checked_size(out_shape, t, "gather_mm");
  Stream st = detail::op_stream(std::move(s), "gather_mm");
  array out(out_shape, t,
            detail::make_pooled<GatherMM>(st, sorted_indices && !rhs_indices, sorted_indices && !lhs_indices),
            {reshape(astype(a, t, st), a_shape, st), reshape(astype(b, t, st), b_shape, st),
             index_array(lhs_indices, a_shape, batch, st), index_array(rhs_indices, b_shape, batch, st)});
  if (a.ndim() > 1 && b.ndim() > 1) return out;
  Shape result = batch;
  if (a.ndim() > 1) result.push_back(a_shape[a_shape.size() - 2]);
  if (b.ndim() > 1) result.push_back(b_shape.back());
  return reshape(out, result, st);
}

array segmented_mm(array a, array b, array segments, StreamOrDevice s) {
  if (a.ndim() != 2 || b.ndim() != 2) throw_invalid("segmented_mm", "Batched matmul not supported");
  if (segments.ndim() < 1 || segments.shape().back() != 2) {
    throw_invalid("segmented_mm", "The segments should have shape (..., 2) but " +
                                      shape_str(segments.shape()) + " was provided.");
  }
  const Dtype t = promote_types(a.dtype(), b.dtype());
  check_real_floating("segmented_mm", dtype_list({a.dtype(), b.dtype()}), t);
  if (!issubdtype(segments.dtype(), Dtype::Category::integer)) {
    throw_invalid("segmented_mm", "Got segments with invalid dtype. Segments must be integral.");
  }
  if (a.shape()[1] != b.shape()[0]) {
    throw_invalid("segmented_mm", "Last dimension of first input with shape " + shape_str(a.shape()) +
                                      " must match second to last dimension of second input with shape " +
                                      shape_str(b.shape()) + ".");
  }
  Shape out_shape(segments.shape().begin(), segments.shape().end() - 1);
  out_shape.push_back(a.shape()[0]);
  out_shape.push_back(b.shape()[1]);
  detail::checked_size(out_shape, t, "segmented_mm");
  Stream st = detail::op_stream(std::move(s), "segmented_mm");
  return array(out_shape, t, detail::make_pooled<SegmentedMM>(st),
               {astype(a, t, st), astype(b, t, st), astype(segments, uint32, st)});
}

}  // namespace braid
