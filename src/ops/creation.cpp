// zeros, ones, full, arange.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "braid/ops.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::throw_invalid;

array full(Shape shape, array vals, Dtype dtype, StreamOrDevice s) {
  detail::checked_size(shape, dtype, "full");
  Shape b = detail::broadcast_shapes(vals.shape(), shape, "full");
  if (b != shape) {
    throw_invalid("full", "Values of shape " + detail::shape_str(vals.shape()) +
                              " cannot be broadcast to shape " + detail::shape_str(shape) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "full");
  return array(std::move(shape), dtype, std::make_shared<Full>(std::move(st)), {std::move(vals)});
}

array full(Shape shape, array vals, StreamOrDevice s) {
  Dtype d = vals.dtype();
  return full(std::move(shape), std::move(vals), d, std::move(s));
}

array zeros(const Shape& shape, Dtype dtype, StreamOrDevice s) {
  return full(shape, array(false, dtype), dtype, std::move(s));
}
array zeros(const Shape& shape, StreamOrDevice s) { return zeros(shape, float32, std::move(s)); }
array ones(const Shape& shape, Dtype dtype, StreamOrDevice s) {
  return full(shape, array(true, dtype), dtype, std::move(s));
}
array ones(const Shape& shape, StreamOrDevice s) { return ones(shape, float32, std::move(s)); }

array arange(double start, double stop, double step, Dtype dtype, StreamOrDevice s) {
  if (dtype == bool_) throw_invalid("arange", "Cannot make an array of type bool.");
  if (std::isnan(start) || std::isnan(stop) || std::isnan(step)) {
    throw_invalid("arange", "Cannot compute length: start, stop and step must not be NaN.");
  }
  if (std::isinf(start) || std::isinf(stop)) {
    throw_invalid("arange", "Cannot compute length: start and stop must be finite.");
  }
  if (step == 0) throw_invalid("arange", "Cannot compute length: step must be non-zero.");
  double len = std::ceil((stop - start) / step);
  // An infinite step that points from start towards stop gives just [start].
  if (std::isinf(step) && (step > 0 ? start < stop : start > stop)) len = 1;
  if (len > static_cast<double>(std::numeric_limits<int32_t>::max())) {
    throw_invalid("arange", "Maximum size exceeded.");
  }
  int32_t n = len > 0 ? static_cast<int32_t>(len) : 0;
  Stream st = detail::op_stream(std::move(s), "arange");
  return array(Shape{n}, dtype, std::make_shared<Arange>(std::move(st), start, step), {});
}
array arange(double start, double stop, double step, StreamOrDevice s) {
  return arange(start, stop, step, float32, std::move(s));
}
array arange(double start, double stop, Dtype dtype, StreamOrDevice s) {
  return arange(start, stop, 1.0, dtype, std::move(s));
}
array arange(double start, double stop, StreamOrDevice s) {
  return arange(start, stop, 1.0, float32, std::move(s));
}
array arange(double stop, Dtype dtype, StreamOrDevice s) {
  return arange(0.0, stop, 1.0, dtype, std::move(s));
}
array arange(double stop, StreamOrDevice s) { return arange(0.0, stop, 1.0, float32, std::move(s)); }
array arange(int start, int stop, int step, StreamOrDevice s) {
  return arange(static_cast<double>(start), static_cast<double>(stop), static_cast<double>(step), int32,
                std::move(s));
}
array arange(int start, int stop, StreamOrDevice s) { return arange(start, stop, 1, std::move(s)); }
array arange(int stop, StreamOrDevice s) { return arange(0, stop, 1, std::move(s)); }

}  // namespace braid

namespace braid {

namespace {

// While a shapeless compiled function is traced, a *_like array must take its shape from `a` on
// every replay, not the traced one: an element-wise select of `vals` over `a` (its condition
// always true) follows a's shape, where a fill of fixed shape would not.
array like_following_shape(const array& a, const array& vals, Dtype dtype, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "full_like");
  return where(array(true), astype(vals, dtype, st), astype(a, dtype, st), st);
}

}  // namespace

array zeros_like(const array& a, StreamOrDevice s) {
  if (detail::in_dynamic_tracing())
    return like_following_shape(a, array(0, a.dtype()), a.dtype(), std::move(s));
  return zeros(a.shape(), a.dtype(), std::move(s));
}

array ones_like(const array& a, StreamOrDevice s) {
  if (detail::in_dynamic_tracing())
    return like_following_shape(a, array(1, a.dtype()), a.dtype(), std::move(s));
  return ones(a.shape(), a.dtype(), std::move(s));
}

array full_like(const array& a, array vals, Dtype dtype, StreamOrDevice s) {
  Shape shape = detail::broadcast_shapes(a.shape(), vals.shape(), "full_like");
  if (detail::in_dynamic_tracing() && shape == a.shape())
    return like_following_shape(a, vals, dtype, std::move(s));
  return full(std::move(shape), std::move(vals), dtype, std::move(s));
}

array full_like(const array& a, array vals, StreamOrDevice s) {
  return full_like(a, std::move(vals), a.dtype(), std::move(s));
}

array linspace(double start, double stop, int num, bool endpoint, Dtype dtype, StreamOrDevice s) {
  if (endpoint) return linspace(start, stop, num, dtype, std::move(s));
  if (num < 0) {
    throw_invalid("linspace", "number of samples, " + std::to_string(num) + ", must be non-negative.");
  }
  Stream st = detail::op_stream(std::move(s), "linspace");
  const Dtype c = dtype == float64 ? float64 : float32;
  const double step = num > 0 ? (stop - start) / num : 0.0;
  array steps = multiply(arange(0.0, static_cast<double>(num), 1.0, c, st), array(step, c), st);
  return astype(add(steps, array(start, c), st), dtype, st);
}

array linspace(double start, double stop, int num, Dtype dtype, StreamOrDevice s) {
  if (num < 0) {
    throw_invalid("linspace", "number of samples, " + std::to_string(num) + ", must be non-negative.");
  }
  Stream st = detail::op_stream(std::move(s), "linspace");
  const Dtype c = dtype == float64 ? float64 : float32;
  if (num == 1) return astype(array({start}, c), dtype, st);
  array t = divide(arange(0.0, static_cast<double>(num), 1.0, c, st), array(num - 1, c), st);
  array t_bar = subtract(array(1, c), t, st);
  return astype(add(multiply(t_bar, array(start, c), st), multiply(t, array(stop, c), st), st), dtype, st);
}

namespace {

// (j <= i + k) over an n x m grid, as bool; computed in int64 so no k overflows.
array lower_mask(int n, int m, int64_t k, const Stream& st) {
  array rows = reshape(arange(0.0, std::max(n, 0), 1.0, int64, st), {std::max(n, 0), 1}, st);
  array cols = arange(0.0, std::max(m, 0), 1.0, int64, st);
  return less(cols, add(rows, array(k + 1), st), st);
}

}  // namespace

array eye(int n, int m, int k, Dtype dtype, StreamOrDevice s) {
  if (n < 0 || m < 0) throw_invalid("eye", "N and M must be non-negative integers.");
  detail::checked_size({n, m}, dtype, "eye");
  Stream st = detail::op_stream(std::move(s), "eye");
  array rows = reshape(arange(0.0, n, 1.0, int64, st), {n, 1}, st);
  array cols = arange(0.0, m, 1.0, int64, st);
  return astype(equal(add(rows, array(int64_t{k}), st), cols, st), dtype, st);
}
array eye(int n, Dtype dtype, StreamOrDevice s) { return eye(n, n, 0, dtype, std::move(s)); }
array eye(int n, int m, StreamOrDevice s) { return eye(n, m, 0, float32, std::move(s)); }
array eye(int n, int m, int k, StreamOrDevice s) { return eye(n, m, k, float32, std::move(s)); }
array eye(int n, StreamOrDevice s) { return eye(n, n, 0, float32, std::move(s)); }

array identity(int n, Dtype dtype, StreamOrDevice s) { return eye(n, n, 0, dtype, std::move(s)); }
array identity(int n, StreamOrDevice s) { return eye(n, n, 0, float32, std::move(s)); }

array tri(int n, int m, int k, Dtype type, StreamOrDevice s) {
  detail::checked_size({std::max(n, 0), std::max(m, 0)}, type, "tri");
  Stream st = detail::op_stream(std::move(s), "tri");
  return astype(lower_mask(n, m, k, st), type, st);
}
array tri(int n, Dtype type, StreamOrDevice s) { return tri(n, n, 0, type, std::move(s)); }

array tril(array x, int k, StreamOrDevice s) {
  if (x.ndim() < 2) throw_invalid("tril", "array must have at least 2 dimensions.");
  Stream st = detail::op_stream(std::move(s), "tril");
  array mask = lower_mask(x.shape(-2), x.shape(-1), k, st);
  return where(mask, x, array(0, x.dtype()), st);
}

array triu(array x, int k, StreamOrDevice s) {
  if (x.ndim() < 2) throw_invalid("triu", "array must have at least 2 dimensions.");
  Stream st = detail::op_stream(std::move(s), "triu");
  array mask = lower_mask(x.shape(-2), x.shape(-1), int64_t{k} - 1, st);
  return where(mask, array(0, x.dtype()), x, st);
}

std::vector<array> meshgrid(const std::vector<array>& arrays, bool sparse, const std::string& indexing,
                            StreamOrDevice s) {
  if (indexing != "xy" && indexing != "ij") {
    throw_invalid("meshgrid", "Invalid indexing value. Valid values are 'xy' and 'ij'.");
  }
  Stream st = detail::op_stream(std::move(s), "meshgrid");
  const size_t nd = arrays.size();
  std::vector<array> out;
  out.reserve(nd);
  for (size_t i = 0; i < nd; ++i) {
    Shape shape(nd, 1);
    // Cartesian indexing puts the first array along axis 1 and the second along axis 0.
    size_t at = i;
    if (indexing == "xy" && nd > 1 && i < 2) at = 1 - i;
    shape[at] = static_cast<int32_t>(arrays[i].size());
    out.push_back(reshape(arrays[i], std::move(shape), st));
  }
  if (!sparse) out = broadcast_arrays(out, st);
  return out;
}

namespace {

// A window of M points, w(x) for x = n / (M - 1), computed in double on the host (the values
// are known when the op is called) and placed on the op's stream.
array window(int M, const char* op, StreamOrDevice s, double (*w)(double)) {
  Stream st = detail::op_stream(std::move(s), op);
  if (M < 1) return zeros({0}, float32, st);
  std::vector<float> v(static_cast<size_t>(M), 1.0f);
  if (M > 1) {
    for (int n = 0; n < M; ++n) v[n] = static_cast<float>(w(static_cast<double>(n) / (M - 1)));
  }
  return copy(array(v.begin(), Shape{M}, float32), st);
}

constexpr double kTwoPi = 6.283185307179586476925286766559;

}  // namespace

array hanning(int M, StreamOrDevice s) {
  return window(M, "hanning", std::move(s), [](double x) { return 0.5 - 0.5 * std::cos(kTwoPi * x); });
}

array hamming(int M, StreamOrDevice s) {
  return window(M, "hamming", std::move(s), [](double x) { return 0.54 - 0.46 * std::cos(kTwoPi * x); });
}

array bartlett(int M, StreamOrDevice s) {
  return window(M, "bartlett", std::move(s), [](double x) { return 1.0 - std::abs(2.0 * x - 1.0); });
}

array blackman(int M, StreamOrDevice s) {
  return window(M, "blackman", std::move(s),
                [](double x) { return 0.42 - 0.5 * std::cos(kTwoPi * x) + 0.08 * std::cos(2 * kTwoPi * x); });
}

}  // namespace braid
