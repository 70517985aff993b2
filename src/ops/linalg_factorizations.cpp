// braid::linalg's factorizations, inverses and solvers (the LAPACK primitives of
// primitives/factorizations.h, CPU only as in MLX) and the functions MLX composes from them:
// pinv, cholesky_inv and lu. Each validates as MLX does, then builds its node on the CPU
// stream it was given; a GPU stream is refused before any node exists.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "braid/linalg.h"
#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/factorizations.h"

namespace braid::linalg {

using detail::make_pooled;
using detail::throw_invalid;

namespace {

Stream cpu_stream(StreamOrDevice s, const char* op) {
  Stream st = detail::op_stream(std::move(s), op);
  if (st.device.type == Device::gpu) {
    throw_invalid(op, "This op is not yet supported on the GPU. Explicitly pass a CPU stream to run it.");
  }
  return st;
}

void check_float(Dtype dtype, const char* op) {
  if (dtype != float32 && dtype != float64) {
    throw_invalid(
        op, "Arrays must have type float32 or float64. Received array with type " + dtype_name(dtype) + ".");
  }
}

void check_float_or_complex(Dtype dtype, const char* op) {
  if (dtype != float32 && dtype != float64 && dtype != complex64) {
    throw_invalid(op, "Arrays must have type float32, float64 or complex64. Received array with type " +
                          dtype_name(dtype) + ".");
  }
}

void check_matrices(const array& a, const char* op) {
  if (a.ndim() < 2) {
    throw_invalid(op, "Arrays must have >= 2 dimensions. Received array with " + std::to_string(a.ndim()) +
                          " dimensions.");
  }
}

void check_square(const array& a, const char* op, const char* what) {
  if (a.shape(-1) != a.shape(-2)) throw_invalid(op, what);
}

// A packed result's last axis must fit a shape entry (int32).
void check_packed(int64_t size, const char* op) {
  if (size > std::numeric_limits<int32_t>::max()) {
    throw_invalid(op, "The matrices are too large: their results would need " + std::to_string(size) +
                          " elements per matrix.");
  }
}

Shape batch_of(const array& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

Shape with(Shape shape, std::initializer_list<int32_t> tail) {
  shape.insert(shape.end(), tail.begin(), tail.end());
  return shape;
}

// The real dtype of a float32, float64 or complex64 dtype.
Dtype real_dtype(Dtype d) { return d == complex64 ? float32 : d; }

// The real part of a packed complex result whose values are real (singular values,
// Hermitian eigenvalues); real results as they are.
array real_values(const array& x, const Stream& s) { return x.dtype() == complex64 ? real(x, s) : x; }

array inverse(const array& a, bool tri, bool upper, StreamOrDevice s, const char* op) {
  Stream st = cpu_stream(std::move(s), op);
  check_float(a.dtype(), op);
  check_matrices(a, op);
  check_square(a, op, "Inverses are only defined for square matrices.");
  return array(a.shape(), a.dtype(), make_pooled<Inverse>(st, tri, upper), {a});
}

// LUF's packed result split into the factors (in a's dtype), the pivots and the row
// permutation.
struct LUParts {
  array lu, pivots, rows;
};

LUParts lu_parts(const array& a, const Stream& st, const char* op) {
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  const int words = static_cast<int>(a.itemsize() / sizeof(uint32_t));
  check_packed(int64_t{m} * n * words + k + m, op);
  const PackedLayout layout = lu_layout(m, n, words);
  array packed(with(batch_of(a), {static_cast<int32_t>(layout.size)}), uint32, make_pooled<LUF>(st), {a});
  array lu = reshape(view(layout.unpack(packed, 0, st), a.dtype(), st), with(batch_of(a), {m, n}), st);
  return {lu, layout.unpack(packed, 1, st), layout.unpack(packed, 2, st)};
}

void validate_lu(const array& a, const char* op) {
  check_float(a.dtype(), op);
  check_matrices(a, op);
}

void validate_eig(const array& a, const char* op) {
  check_float_or_complex(a.dtype(), op);
  check_matrices(a, op);
  check_square(a, op, "Only defined for square matrices.");
}

char uplo_of(const std::string& uplo, const char* op) {
  if (uplo != "L" && uplo != "U") throw_invalid(op, "UPLO must be 'L' or 'U' (got '" + uplo + "').");
  return uplo[0];
}

// solve and solve_triangular: a [..., n, n] and b [n] or [..., n, nrhs] (batch axes broadcast),
// in promote(a, b). `triangle` is empty for a general a, else whether a is upper triangular.
array solve_impl(const array& a, const array& b, StreamOrDevice s, const char* op,
                 std::optional<bool> triangle) {
  Stream st = cpu_stream(std::move(s), op);
  if (a.ndim() < 2) {
    throw_invalid(op, "First input must have >= 2 dimensions. Received array with " +
                          std::to_string(a.ndim()) + " dimensions.");
  }
  if (b.ndim() < 1) {
    throw_invalid(op, "Second input must have >= 1 dimensions. Received array with " +
                          std::to_string(b.ndim()) + " dimensions.");
  }
  if (a.shape(-1) != a.shape(-2)) {
    throw_invalid(op, "First input must be a square matrix. Received array with shape " +
                          detail::shape_str(a.shape()) + ".");
  }
  const bool vector = b.ndim() == 1;
  if (a.shape(-1) != b.shape(vector ? -1 : -2)) {
    throw_invalid(op, "Last dimension of first input with shape " + detail::shape_str(a.shape()) +
                          " must match second to last dimension of second input with shape " +
                          detail::shape_str(b.shape()) + ".");
  }
  const Dtype t = promote_types(a.dtype(), b.dtype());
  if (t != float32 && t != float64 && t != complex64) {
    throw_invalid(op,
                  "Input arrays must promote to float32, float64 or complex64. Received arrays with type " +
                      dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()) + ".");
  }
  const int n = a.shape(-1);
  const array rhs = vector ? expand_dims(b, -1, st) : b;
  const Shape batch = detail::broadcast_shapes(batch_of(a), batch_of(rhs), op);
  const int r = rhs.shape(-1);
  const array lhs_b = broadcast_to(astype(a, t, st), with(batch, {n, n}), st);
  const array rhs_b = broadcast_to(astype(rhs, t, st), with(batch, {n, r}), st);
  std::shared_ptr<Primitive> prim;
  if (triangle) {
    prim = make_pooled<SolveTriangular>(st, *triangle);
  } else {
    prim = make_pooled<Solve>(st);
  }
  array x(with(batch, {n, r}), t, std::move(prim), {lhs_b, rhs_b});
  return vector ? squeeze(x, -1, st) : x;
}

}  // namespace

std::pair<array, array> qr(const array& a, StreamOrDevice s) {
  const char* op = "linalg::qr";
  Stream st = cpu_stream(std::move(s), op);
  check_float(a.dtype(), op);
  check_matrices(a, op);
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  check_packed(int64_t{m} * k + int64_t{k} * n, op);
  const PackedLayout layout = qr_layout(m, n);
  array packed(with(batch_of(a), {static_cast<int32_t>(layout.size)}), a.dtype(), make_pooled<QRF>(st), {a});
  return {layout.unpack(packed, 0, st), layout.unpack(packed, 1, st)};
}

std::vector<array> svd(const array& a, bool compute_uv, StreamOrDevice s) {
  const char* op = "linalg::svd";
  Stream st = cpu_stream(std::move(s), op);
  check_float_or_complex(a.dtype(), op);
  if (a.ndim() < 2) {
    throw_invalid(op, "Input array must have >= 2 dimensions. Received array with " +
                          std::to_string(a.ndim()) + " dimensions.");
  }
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  if (!compute_uv) {
    return {array(with(batch_of(a), {k}), real_dtype(a.dtype()), make_pooled<SVD>(st, false), {a})};
  }
  check_packed(int64_t{m} * m + k + int64_t{n} * n, op);
  const PackedLayout layout = svd_layout(m, n);
  array packed(with(batch_of(a), {static_cast<int32_t>(layout.size)}), a.dtype(), make_pooled<SVD>(st, true),
               {a});
  return {layout.unpack(packed, 0, st), real_values(layout.unpack(packed, 1, st), st),
          layout.unpack(packed, 2, st)};
}

array inv(const array& a, StreamOrDevice s) { return inverse(a, false, true, std::move(s), "linalg::inv"); }

array tri_inv(const array& a, bool upper, StreamOrDevice s) {
  return inverse(a, true, upper, std::move(s), "linalg::tri_inv");
}

array cholesky(const array& a, bool upper, StreamOrDevice s) {
  const char* op = "linalg::cholesky";
  Stream st = cpu_stream(std::move(s), op);
  check_float(a.dtype(), op);
  check_matrices(a, op);
  check_square(a, op, "Cholesky decomposition is only defined for square matrices.");
  return array(a.shape(), a.dtype(), make_pooled<Cholesky>(st, upper), {a});
}

array pinv(const array& a, StreamOrDevice s) {
  const char* op = "linalg::pinv";
  Stream st = cpu_stream(std::move(s), op);
  check_float(a.dtype(), op);
  check_matrices(a, op);
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  const std::vector<array> usv = svd(a, true, st);
  const int nd = static_cast<int>(a.ndim());
  // u [..., m, :k]^T and vt [..., :k, n]^T: pinv = v diag(1/s) u^T over the kept values.
  Shape start(nd, 0);
  Shape stop = with(batch_of(a), {m, k});
  const array ut = swapaxes(slice(usv[0], start, stop, st), -1, -2, st);
  stop = with(batch_of(a), {k, n});
  const array v = swapaxes(slice(usv[2], start, stop, st), -1, -2, st);
  const array sv = expand_dims(usv[1], -2, st);
  const double rcond = 10.0 * std::max(m, n) * finfo(a.dtype()).eps;
  const array cutoff = multiply(array(rcond, a.dtype()), max(sv, -1, true, st), st);
  const array inv_s = where(greater(sv, cutoff, st), reciprocal(sv, st), array(0.0, a.dtype()), st);
  return matmul(multiply(v, inv_s, st), ut, st);
}

array cholesky_inv(const array& a, bool upper, StreamOrDevice s) {
  const char* op = "linalg::cholesky_inv";
  Stream st = cpu_stream(std::move(s), op);
  check_float(a.dtype(), op);
  check_matrices(a, op);
  check_square(a, op, "Cholesky inverse is only defined for square matrices.");
  const array factor_inv = tri_inv(a, upper, st);
  const array factor_inv_t = swapaxes(factor_inv, -1, -2, st);
  return upper ? matmul(factor_inv, factor_inv_t, st) : matmul(factor_inv_t, factor_inv, st);
}

std::vector<array> lu(const array& a, StreamOrDevice s) {
  const char* op = "linalg::lu";
  Stream st = cpu_stream(std::move(s), op);
  validate_lu(a, op);
  const LUParts parts = lu_parts(a, st, op);
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  const int nd = static_cast<int>(a.ndim());
  array l = tril(parts.lu, -1, st);
  array u = triu(parts.lu, 0, st);
  if (n != k) {  // tall: l keeps k columns
    l = slice(l, Shape(nd, 0), with(batch_of(a), {m, k}), st);
  } else if (m != k) {  // wide: u keeps k rows
    u = slice(u, Shape(nd, 0), with(batch_of(a), {k, n}), st);
  }
  l = add(l, eye(m, k, 0, a.dtype(), st), st);
  return {parts.rows, l, u};
}

std::pair<array, array> lu_factor(const array& a, StreamOrDevice s) {
  const char* op = "linalg::lu_factor";
  Stream st = cpu_stream(std::move(s), op);
  validate_lu(a, op);
  LUParts parts = lu_parts(a, st, op);
  return {parts.lu, parts.pivots};
}

namespace {

// The factors of a determinant from the LU factorization of square matrices: the diagonal of U
// [..., n] and the permutation's sign [...] (-1 for an odd number of row swaps), in a's dtype.
std::pair<array, array> determinant_factors(const array& input, const char* op, const Stream& st) {
  // Integer and bool matrices are promoted to float32, as MLX's det and slogdet do; every
  // check comes before the cast's node.
  const Dtype t = is_integral(input.dtype()) ? float32 : input.dtype();
  check_float(t, op);
  check_matrices(input, op);
  check_square(input, op, "Determinants are only defined for square matrices.");
  const array a = t == input.dtype() ? input : astype(input, t, st);
  auto [lu, pivots] = lu_factor(a, st);
  const int n = a.shape(-1);
  array swaps = sum(astype(not_equal(pivots, arange(0.0, static_cast<double>(n), 1.0, uint32, st), st), int32, st),
                    -1, false, st);
  array odd = equal(remainder(swaps, array(2, int32), st), array(1, int32), st);
  array permutation_sign = where(odd, array(-1.0, a.dtype()), array(1.0, a.dtype()), st);
  return {diagonal(lu, 0, -2, -1, st), permutation_sign};
}

}  // namespace

// As NumPy: the product of U's diagonal with the permutation's sign (0 for a singular matrix).
array det(const array& a, StreamOrDevice s) {
  const char* op = "linalg::det";
  Stream st = cpu_stream(std::move(s), op);
  auto [d, permutation_sign] = determinant_factors(a, op, st);
  return multiply(prod(d, -1, false, st), permutation_sign, st);
}

// As NumPy: sign (-1, 0 or 1) and log |det| from U's diagonal, without the product's overflow;
// a singular matrix gives sign 0 and -inf.
std::pair<array, array> slogdet(const array& a, StreamOrDevice s) {
  const char* op = "linalg::slogdet";
  Stream st = cpu_stream(std::move(s), op);
  auto [d, permutation_sign] = determinant_factors(a, op, st);
  array sign_of_det = multiply(prod(sign(d, st), -1, false, st), permutation_sign, st);
  return {sign_of_det, sum(log(abs(d, st), st), -1, false, st)};
}

array solve(const array& a, const array& b, StreamOrDevice s) {
  return solve_impl(a, b, std::move(s), "linalg::solve", std::nullopt);
}

array solve_triangular(const array& a, const array& b, bool upper, StreamOrDevice s) {
  return solve_impl(a, b, std::move(s), "linalg::solve_triangular", upper);
}

std::pair<array, array> eig(const array& a, StreamOrDevice s) {
  const char* op = "linalg::eig";
  Stream st = cpu_stream(std::move(s), op);
  validate_eig(a, op);
  const int n = a.shape(-1);
  check_packed(int64_t{n} + int64_t{n} * n, op);
  const PackedLayout layout = eig_layout(n);
  array packed(with(batch_of(a), {static_cast<int32_t>(layout.size)}), complex64, make_pooled<Eig>(st, true),
               {a});
  return {layout.unpack(packed, 0, st), layout.unpack(packed, 1, st)};
}

array eigvals(const array& a, StreamOrDevice s) {
  const char* op = "linalg::eigvals";
  Stream st = cpu_stream(std::move(s), op);
  validate_eig(a, op);
  return array(with(batch_of(a), {a.shape(-1)}), complex64, make_pooled<Eig>(st, false), {a});
}

array eigvalsh(const array& a, std::string UPLO, StreamOrDevice s) {
  const char* op = "linalg::eigvalsh";
  Stream st = cpu_stream(std::move(s), op);
  validate_eig(a, op);
  const char uplo = uplo_of(UPLO, op);
  return array(with(batch_of(a), {a.shape(-1)}), real_dtype(a.dtype()), make_pooled<Eigh>(st, uplo, false),
               {a});
}

std::pair<array, array> eigh(const array& a, std::string UPLO, StreamOrDevice s) {
  const char* op = "linalg::eigh";
  Stream st = cpu_stream(std::move(s), op);
  validate_eig(a, op);
  const char uplo = uplo_of(UPLO, op);
  const int n = a.shape(-1);
  check_packed(int64_t{n} + int64_t{n} * n, op);
  const PackedLayout layout = eig_layout(n);
  array packed(with(batch_of(a), {static_cast<int32_t>(layout.size)}), a.dtype(),
               make_pooled<Eigh>(st, uplo, true), {a});
  return {real_values(layout.unpack(packed, 0, st), st), layout.unpack(packed, 1, st)};
}

}  // namespace braid::linalg
