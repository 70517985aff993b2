// braid::linalg's norms and cross product: compositions of ops (MLX's formulas), so they run on
// every device and differentiate like any graph. The singular-value norms (2, -2, "nuc") take
// their SVD on the CPU, the rest on the given stream.
#include <limits>
#include <numeric>
#include <sstream>
#include <string>

#include "braid/linalg.h"
#include "braid/ops.h"
#include "ops/utils.h"

namespace braid::linalg {

using detail::throw_invalid;

namespace {

constexpr const char* kNorm = "linalg::norm";
constexpr double kInf = std::numeric_limits<double>::infinity();

// The dtype a norm is computed and returned in: the input's floating dtype (float32 for
// integers and bool), real for complex inputs.
Dtype norm_dtype(Dtype d) {
  if (d == complex64) return float32;
  return issubdtype(d, inexact) ? d : promote_types(d, float32);
}

// Axes of a norm made non-negative, in the order given; an axis out of range or given twice is
// an error.
std::vector<int> norm_axes(const array& a, const std::optional<std::vector<int>>& axis) {
  const int nd = static_cast<int>(a.ndim());
  std::vector<int> ax;
  if (!axis) {
    ax.resize(static_cast<size_t>(nd));
    std::iota(ax.begin(), ax.end(), 0);
    return ax;
  }
  for (int x : *axis) ax.push_back(detail::normalize_axis(x, nd, kNorm));
  for (size_t i = 0; i < ax.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (ax[i] == ax[j]) throw_invalid(kNorm, "Received duplicate axes.");
    }
  }
  return ax;
}

array l2_norm(const array& a, const std::vector<int>& axes, bool keepdims, const Stream& s) {
  if (a.dtype() == complex64) {
    const array m = abs(a, s);
    return sqrt(sum(multiply(m, m, s), axes, keepdims, s), s);
  }
  return sqrt(sum(square(a, s), axes, keepdims, s), s);
}

array vector_norm(const array& a, double ord, const std::vector<int>& axes, bool keepdims, const Stream& s) {
  const Dtype dtype = norm_dtype(a.dtype());
  if (ord == 0.0) return astype(sum(not_equal(a, array(0), s), axes, keepdims, s), dtype, s);
  if (ord == 1.0) return astype(sum(abs(a, s), axes, keepdims, s), dtype, s);
  if (ord == 2.0) return l2_norm(a, axes, keepdims, s);
  if (ord == kInf) return astype(max(abs(a, s), axes, keepdims, s), dtype, s);
  if (ord == -kInf) return astype(min(abs(a, s), axes, keepdims, s), dtype, s);
  const array powered = power(astype(abs(a, s), dtype, s), array(ord, dtype), s);
  return power(sum(powered, axes, keepdims, s), array(1.0 / ord, dtype), s);
}

// The singular values of the matrices on axes (row, col) of `a`, as [..., k], computed on the
// CPU (LAPACK's SVD has no GPU kernel) in float32 or float64.
array singular_values(const array& a, int row, int col, const Stream& s) {
  const array m = row > col ? moveaxis(moveaxis(a, row, -1, s), col, -1, s)
                            : moveaxis(moveaxis(a, col, -1, s), row, -2, s);
  const Dtype t = a.dtype() == float64 ? float64 : a.dtype() == complex64 ? complex64 : float32;
  const Stream cpu = s.device.type == Device::cpu ? s : default_stream(Device::cpu);
  return svd(astype(m, t, cpu), false, cpu).at(0);
}

// A result over the matrix axes (row, col) with those axes back as unit axes when keepdims.
array keep_matrix_axes(const array& x, int row, int col, bool keepdims, const Stream& s) {
  if (!keepdims) return x;
  return expand_dims(x, {std::min(row, col), std::max(row, col)}, s);
}

array matrix_norm(const array& a, double ord, const std::vector<int>& axes, bool keepdims, const Stream& s) {
  const Dtype dtype = norm_dtype(a.dtype());
  int row = axes[0], col = axes[1];
  if (ord == 1.0 || ord == -1.0) {
    // The largest (smallest) column sum: sum over rows, then reduce the columns.
    const array sums = sum(abs(a, s), row, keepdims, s);
    if (!keepdims && col > row) --col;
    return astype(ord > 0 ? max(sums, col, keepdims, s) : min(sums, col, keepdims, s), dtype, s);
  }
  if (ord == kInf || ord == -kInf) {
    const array sums = sum(abs(a, s), col, keepdims, s);
    if (!keepdims && row > col) --row;
    return astype(ord > 0 ? max(sums, row, keepdims, s) : min(sums, row, keepdims, s), dtype, s);
  }
  if (ord == 2.0 || ord == -2.0) {
    const array sv = singular_values(a, row, col, s);
    const array r = ord > 0 ? max(sv, -1, false, s) : min(sv, -1, false, s);
    return astype(keep_matrix_axes(r, row, col, keepdims, s), dtype, s);
  }
  std::ostringstream msg;
  msg << "Invalid ord " << ord << " for matrix norm.";
  throw_invalid(kNorm, msg.str());
}

array matrix_norm(const array& a, const std::string& ord, const std::vector<int>& axes, bool keepdims,
                  const Stream& s) {
  if (ord == "f" || ord == "fro") return l2_norm(a, axes, keepdims, s);
  if (ord == "nuc") {
    const array total = sum(singular_values(a, axes[0], axes[1], s), -1, false, s);
    return astype(keep_matrix_axes(total, axes[0], axes[1], keepdims, s), norm_dtype(a.dtype()), s);
  }
  throw_invalid(kNorm, "Invalid ord value '" + ord + "' for matrix norm.");
}

}  // namespace

array norm(const array& a, const std::optional<std::vector<int>>& axis, bool keepdims, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), kNorm);
  if (!axis) return l2_norm(flatten(a, st), {0}, keepdims, st);
  if (axis->size() > 2) throw_invalid(kNorm, "Received too many axes for norm.");
  return l2_norm(a, norm_axes(a, axis), keepdims, st);
}

array norm(const array& a, const double ord, const std::optional<std::vector<int>>& axis, bool keepdims,
           StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), kNorm);
  const std::vector<int> ax = norm_axes(a, axis);
  if (ax.size() == 1) return vector_norm(a, ord, ax, keepdims, st);
  if (ax.size() == 2) return matrix_norm(a, ord, ax, keepdims, st);
  throw_invalid(kNorm, ax.empty() ? "Received no axes for norm." : "Received too many axes for norm.");
}

array norm(const array& a, const std::string& ord, const std::optional<std::vector<int>>& axis, bool keepdims,
           StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), kNorm);
  const std::vector<int> ax = norm_axes(a, axis);
  if (ax.size() != 2) {
    throw_invalid(kNorm, "Norm '" + ord + "' only supported for matrices, but received " +
                             std::to_string(ax.size()) + " axis/axes.");
  }
  return matrix_norm(a, ord, ax, keepdims, st);
}

array cross(const array& a, const array& b, int axis, StreamOrDevice s) {
  const char* op = "linalg::cross";
  auto check = [&](const array& x) {
    const int nd = static_cast<int>(x.ndim());
    if (axis >= nd || axis < -nd) {
      throw_invalid(op, "axis " + std::to_string(axis) + " invalid for array with " + std::to_string(nd) +
                            " dimensions.");
    }
    const int size = x.shape(axis);
    if (size != 2 && size != 3) throw_invalid(op, "The specified axis must have size 2 or 3.");
  };
  check(a);
  check(b);
  Stream st = detail::op_stream(std::move(s), op);
  const bool a2 = a.shape(axis) == 2, b2 = b.shape(axis) == 2;
  const Dtype t = promote_types(a.dtype(), b.dtype());
  // As MLX: a negative axis counts from each input's end, a non-negative one indexes each.
  Shape ashape = a.shape(), bshape = b.shape();
  ashape[axis < 0 ? axis + a.ndim() : axis] = 3;
  bshape[axis < 0 ? axis + b.ndim() : axis] = 3;
  Shape out_shape = detail::broadcast_shapes(ashape, bshape, op);
  const int ax = axis < 0 ? axis + static_cast<int>(out_shape.size()) : axis;
  out_shape[ax] = a2 ? 2 : 3;
  const array x = broadcast_to(astype(a, t, st), out_shape, st);
  out_shape[ax] = b2 ? 2 : 3;
  const array y = broadcast_to(astype(b, t, st), out_shape, st);
  auto part = [&](const array& v, int i) {
    Shape start(v.ndim(), 0);
    Shape stop = v.shape();
    start[ax] = i;
    stop[ax] = i + 1;
    return slice(v, std::move(start), std::move(stop), st);
  };
  auto mul = [&](const array& p, const array& q) { return multiply(p, q, st); };
  std::vector<array> out;
  if (a2 && b2) {
    const array z = zeros_like(part(x, 0), st);
    out = {z, z};
  } else if (b2) {  // y2 = 0
    out = {negative(mul(part(x, 2), part(y, 1)), st), mul(part(x, 2), part(y, 0))};
  } else if (a2) {  // x2 = 0
    out = {mul(part(x, 1), part(y, 2)), negative(mul(part(x, 0), part(y, 2)), st)};
  } else {
    out = {subtract(mul(part(x, 1), part(y, 2)), mul(part(x, 2), part(y, 1)), st),
           subtract(mul(part(x, 2), part(y, 0)), mul(part(x, 0), part(y, 2)), st)};
  }
  out.push_back(subtract(mul(part(x, 0), part(y, 1)), mul(part(x, 1), part(y, 0)), st));
  return concatenate(std::move(out), ax, st);
}

}  // namespace braid::linalg
