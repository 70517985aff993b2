// braid::linalg: MLX's mlx/linalg.h (norms, factorizations, inverses, solvers, eigenvalues,
// the cross product) with MLX's names, signatures and defaults. Every function works on the
// last two axes and batches over the leading ones.
//
// norm and cross are compositions of ops and run on every device. The factorizations (qr, svd,
// inv, tri_inv, cholesky, cholesky_inv, pinv, eig, eigvals, eigh, eigvalsh, lu, lu_factor,
// det, slogdet, solve, solve_triangular) call LAPACK on the CPU and, as in MLX, throw
// std::invalid_argument("[linalg::name] This op is not yet supported on the GPU. ...") when
// given a GPU stream. A factorization that cannot complete (a singular matrix, a matrix that is
// not positive definite, no convergence) fails its evaluation with
// std::runtime_error("[linalg::name] ..."), which eval rethrows to the caller.
//
// Every function validates its arguments and throws std::invalid_argument("[linalg::name] ...")
// before any node exists. Like the ops, every function is thread-safe.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid::linalg {

/// The vector norm of order `ord` over one axis (0: count of nonzeros, +-inf: max/min of |x|,
/// others: sum(|x|^ord)^(1/ord)) or the matrix norm over two axes (+-1: max/min column sum,
/// +-inf: max/min row sum, +-2: largest/smallest singular value). Without `axis`, a must be
/// 1-d or 2-d. The result is at least float32 (complex inputs give a real norm).
array norm(const array& a, const double ord, const std::optional<std::vector<int>>& axis = std::nullopt,
           bool keepdims = false, StreamOrDevice s = {});
inline array norm(const array& a, const double ord, int axis, bool keepdims = false, StreamOrDevice s = {}) {
  return norm(a, ord, std::vector<int>{axis}, keepdims, s);
}
/// The matrix norm "fro" (or "f", Frobenius) or "nuc" (nuclear: the sum of the singular values)
/// over two axes (all of a's, which must then be two, when `axis` is not given).
array norm(const array& a, const std::string& ord, const std::optional<std::vector<int>>& axis = std::nullopt,
           bool keepdims = false, StreamOrDevice s = {});
inline array norm(const array& a, const std::string& ord, int axis, bool keepdims = false,
                  StreamOrDevice s = {}) {
  return norm(a, ord, std::vector<int>{axis}, keepdims, s);
}
/// The 2-norm over `axis` (one or two axes: the Frobenius norm for two), or of the flattened
/// array when `axis` is not given (keepdims then keeps one axis, as in MLX).
array norm(const array& a, const std::optional<std::vector<int>>& axis = std::nullopt, bool keepdims = false,
           StreamOrDevice s = {});
inline array norm(const array& a, int axis, bool keepdims = false, StreamOrDevice s = {}) {
  return norm(a, std::vector<int>{axis}, keepdims, s);
}

/// The reduced QR factorization a = q r of float32/float64 matrices [..., m, n]: q [..., m, k]
/// with orthonormal columns and r [..., k, n] upper triangular, k = min(m, n) (LAPACK's signs).
std::pair<array, array> qr(const array& a, StreamOrDevice s = {});

/// The singular value decomposition a = u diag(s) vt of matrices [..., m, n] (float32, float64
/// or complex64): {u [..., m, m], s [..., k] descending (real), vt [..., n, n]}, or {s} alone
/// when compute_uv is false.
std::vector<array> svd(const array& a, bool compute_uv, StreamOrDevice s /* = {} */);
inline std::vector<array> svd(const array& a, StreamOrDevice s = {}) { return svd(a, true, s); }

/// The inverse of each square float32/float64 matrix; a singular matrix fails the evaluation.
array inv(const array& a, StreamOrDevice s = {});

/// The inverse of each lower (upper) triangular matrix, reading only that triangle; the other
/// triangle of the result is zero. A zero on the diagonal fails the evaluation.
array tri_inv(const array& a, bool upper = false, StreamOrDevice s = {});

/// The Cholesky factor of each symmetric positive-definite matrix, reading one triangle: lower
/// l with l l^T = a, or upper u with u^T u = a. A matrix that is not positive definite fails
/// the evaluation.
array cholesky(const array& a, bool upper = false, StreamOrDevice s = {});

/// The Moore-Penrose pseudo-inverse [..., n, m] of matrices [..., m, n], from the SVD
/// (singular values below 10 max(m, n) eps times the largest are dropped).
array pinv(const array& a, StreamOrDevice s = {});

/// The inverse of l l^T (u^T u when `upper`) from its Cholesky factor.
array cholesky_inv(const array& a, bool upper = false, StreamOrDevice s = {});

/// The LU factorization with partial pivoting of matrices [..., m, n]: {p, l, u} with p the
/// uint32 row permutation [..., m] such that a = l[p, :] @ u, l [..., m, k] unit lower
/// triangular and u [..., k, n] upper triangular, k = min(m, n).
std::vector<array> lu(const array& a, StreamOrDevice s = {});

/// LAPACK's compact LU factorization: {lu [..., m, n] (l below the diagonal, u on and above it),
/// pivots [..., k] (uint32, 0-based: row i was swapped with row pivots[i], in order)}.
std::pair<array, array> lu_factor(const array& a, StreamOrDevice s = {});

/// The determinants of square matrices [..., n, n] (float32 or float64; integer and bool
/// matrices are promoted to float32, as MLX's), from their LU factorization: [...]. A singular
/// matrix gives 0.
array det(const array& a, StreamOrDevice s = {});

/// {sign, log |det|} of square matrices [..., n, n] (float32 or float64; integer and bool
/// matrices are promoted to float32), as NumPy's slogdet:
/// sign is -1, 0 or 1 (0 and -inf for a singular matrix), and det = sign * exp(logabsdet)
/// without the product's overflow or underflow.
std::pair<array, array> slogdet(const array& a, StreamOrDevice s = {});

/// x with a x = b for square a [..., n, n] and b [..., n, nrhs] (batch axes broadcast) or a
/// vector b [n]; computed in promote(a, b), which must be float32 or float64. A singular a
/// fails the evaluation.
array solve(const array& a, const array& b, StreamOrDevice s = {});

/// solve for a lower (upper) triangular a, reading only that triangle.
array solve_triangular(const array& a, const array& b, bool upper = false, StreamOrDevice s = {});

/// The cross product of vectors of 2 or 3 elements along `axis` (a missing third element is
/// zero); the result has 3 there. Batch axes broadcast; the dtype is promote(a, b).
array cross(const array& a, const array& b, int axis = -1, StreamOrDevice s = {});

/// The eigenvalues and right eigenvectors (unit-norm columns) of general square matrices
/// (float32, float64 or complex64), both complex64, in LAPACK's order.
std::pair<array, array> eig(const array& a, StreamOrDevice s = {});

/// The eigenvalues of general square matrices, complex64.
array eigvals(const array& a, StreamOrDevice s = {});

/// The eigenvalues, ascending and real, of symmetric (Hermitian) matrices, reading the lower
/// ("L") or upper ("U") triangle.
array eigvalsh(const array& a, std::string UPLO = "L", StreamOrDevice s = {});

/// The eigenvalues (ascending, real) and orthonormal eigenvectors (columns) of symmetric
/// (Hermitian) matrices, reading the lower ("L") or upper ("U") triangle.
std::pair<array, array> eigh(const array& a, std::string UPLO = "L", StreamOrDevice s = {});

}  // namespace braid::linalg
