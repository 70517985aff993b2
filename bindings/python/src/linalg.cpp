// braid.core.linalg: mlx.core.linalg's functions with its signatures and keyword names (norm,
// qr, svd, inv, tri_inv, cholesky, cholesky_inv, pinv, cross, eig, eigvals, eigh, eigvalsh,
// lu, lu_factor, det, slogdet, solve, solve_triangular). The factorizations run on the CPU; a
// GPU stream raises ValueError, as in MLX.
#include "braid/linalg.h"

#include "ops_args.h"

namespace braid::python {

namespace {

// norm's axis: None, an int or a sequence of ints.
std::optional<std::vector<int>> norm_axis(py::handle axis) {
  if (axis.is_none()) return std::nullopt;
  return arg_int_or_ints(axis, 0, "linalg.norm", "axis");
}

array norm(py::object a, py::object ord, py::object axis, bool keepdims, StreamOrDevice s) {
  const array x = arg_array(a, "linalg.norm", "a");
  const auto ax = norm_axis(axis);
  if (ord.is_none()) return linalg::norm(x, ax, keepdims, s);
  if (PyUnicode_Check(ord.ptr())) return linalg::norm(x, ord.cast<std::string>(), ax, keepdims, s);
  if (is_int_like(ord) || PyFloat_Check(ord.ptr()) || PyBool_Check(ord.ptr())) {
    return linalg::norm(x, ord.cast<double>(), ax, keepdims, s);
  }
  throw_arg_type("linalg.norm", "ord", "None, an int, a float or a str", ord);
}

py::tuple as_tuple(const std::vector<array>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::cast(v[i]);
  return t;
}

using Unary = array (*)(const array&, StreamOrDevice);
using WithFlag = array (*)(const array&, bool, StreamOrDevice);

void def_unary(py::module_& m, const char* name, Unary fn, const char* doc) {
  m.def(
      name, [fn, name](py::object a, StreamOrDevice s) { return fn(arg_array(a, name, "a"), s); }, "a"_a,
      py::kw_only(), "stream"_a = py::none(), doc);
}

void def_triangular(py::module_& m, const char* name, WithFlag fn, const char* doc) {
  m.def(
      name,
      [fn, name](py::object a, bool upper, StreamOrDevice s) {
        return fn(arg_array(a, name, "a"), upper, s);
      },
      "a"_a, "upper"_a = false, py::kw_only(), "stream"_a = py::none(), doc);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  auto l = m.def_submodule("linalg", "braid.core.linalg: linear algebra routines.");
  l.def("norm", &norm, "a"_a, py::pos_only(), "ord"_a = py::none(), "axis"_a = py::none(),
        "keepdims"_a = false, py::kw_only(), "stream"_a = py::none(),
        "Matrix or vector norm: the 2-norm (Frobenius for two axes) when ord is None; vector norms of any "
        "order over one axis; matrix norms 1, -1, inf, -inf, 2, -2, 'fro' and 'nuc' over two axes.");
  l.def(
      "qr",
      [](py::object a, StreamOrDevice s) {
        auto [q, r] = linalg::qr(arg_array(a, "linalg.qr", "a"), s);
        return py::make_tuple(q, r);
      },
      "a"_a, py::kw_only(), "stream"_a = py::none(),
      "The reduced QR factorization (Q [..., m, k], R [..., k, n], k = min(m, n)) of the last two axes.");
  l.def(
      "svd",
      [](py::object a, bool compute_uv, StreamOrDevice s) -> py::object {
        auto r = linalg::svd(arg_array(a, "linalg.svd", "a"), compute_uv, s);
        if (r.size() == 1) return py::cast(r[0]);
        return as_tuple(r);
      },
      "a"_a, "compute_uv"_a = true, py::kw_only(), "stream"_a = py::none(),
      "The singular value decomposition: (U, S, Vt) with A = U @ diag(S) @ Vt, or S alone when compute_uv "
      "is False.");
  def_unary(l, "inv", &linalg::inv, "The inverse of each square matrix of the last two axes.");
  def_triangular(l, "tri_inv", &linalg::tri_inv,
                 "The inverse of each lower (upper) triangular matrix of the last two axes.");
  def_triangular(l, "cholesky", &linalg::cholesky,
                 "The Cholesky factor L (L @ L.T = a), or U (U.T @ U = a) when upper, of symmetric "
                 "positive-definite matrices.");
  def_triangular(l, "cholesky_inv", &linalg::cholesky_inv,
                 "The inverse of A from its Cholesky factor (lower, or upper when upper).");
  def_unary(l, "pinv", &linalg::pinv, "The Moore-Penrose pseudo-inverse, from the SVD.");
  l.def(
      "cross",
      [](py::object a, py::object b, int axis, StreamOrDevice s) {
        return linalg::cross(arg_array(a, "linalg.cross", "a"), arg_array(b, "linalg.cross", "b"), axis, s);
      },
      "a"_a, "b"_a, "axis"_a = -1, py::kw_only(), "stream"_a = py::none(),
      "The cross product of vectors of size 2 or 3 along axis (a missing third component is zero).");
  def_unary(l, "eigvals", &linalg::eigvals, "The eigenvalues (complex64) of square matrices.");
  l.def(
      "eig",
      [](py::object a, StreamOrDevice s) {
        auto [w, v] = linalg::eig(arg_array(a, "linalg.eig", "a"), s);
        return py::make_tuple(w, v);
      },
      "a"_a, py::kw_only(), "stream"_a = py::none(),
      "The eigenvalues and right eigenvectors (columns), complex64, of square matrices.");
  l.def(
      "eigvalsh",
      [](py::object a, const std::string& uplo, StreamOrDevice s) {
        return linalg::eigvalsh(arg_array(a, "linalg.eigvalsh", "a"), uplo, s);
      },
      "a"_a, "UPLO"_a = "L", py::kw_only(), "stream"_a = py::none(),
      "The eigenvalues, ascending, of symmetric (Hermitian) matrices, from the UPLO triangle.");
  l.def(
      "eigh",
      [](py::object a, const std::string& uplo, StreamOrDevice s) {
        auto [w, v] = linalg::eigh(arg_array(a, "linalg.eigh", "a"), uplo, s);
        return py::make_tuple(w, v);
      },
      "a"_a, "UPLO"_a = "L", py::kw_only(), "stream"_a = py::none(),
      "The eigenvalues (ascending) and eigenvectors (columns) of symmetric (Hermitian) matrices.");
  l.def(
      "lu",
      [](py::object a, StreamOrDevice s) { return as_tuple(linalg::lu(arg_array(a, "linalg.lu", "a"), s)); },
      "a"_a, py::kw_only(), "stream"_a = py::none(),
      "The LU factorization (p, L, U) with partial pivoting: A = L[p, :] @ U.");
  l.def(
      "lu_factor",
      [](py::object a, StreamOrDevice s) {
        auto [lu, pivots] = linalg::lu_factor(arg_array(a, "linalg.lu_factor", "a"), s);
        return py::make_tuple(lu, pivots);
      },
      "a"_a, py::kw_only(), "stream"_a = py::none(),
      "The compact LU factorization (LU, pivots), as LAPACK's.");
  l.def(
      "det", [](py::object a, StreamOrDevice s) { return linalg::det(arg_array(a, "linalg.det", "a"), s); },
      "a"_a, py::kw_only(), "stream"_a = py::none(), "The determinant of each square matrix (0 when singular).");
  l.def(
      "slogdet",
      [](py::object a, StreamOrDevice s) {
        auto [sign, logabsdet] = linalg::slogdet(arg_array(a, "linalg.slogdet", "a"), s);
        return py::make_tuple(sign, logabsdet);
      },
      "a"_a, py::kw_only(), "stream"_a = py::none(),
      "(sign, log |det|) of each square matrix: det = sign * exp(logabsdet) without overflow.");
  l.def(
      "solve",
      [](py::object a, py::object b, StreamOrDevice s) {
        return linalg::solve(arg_array(a, "linalg.solve", "a"), arg_array(b, "linalg.solve", "b"), s);
      },
      "a"_a, "b"_a, py::kw_only(), "stream"_a = py::none(), "The solution X of A X = B.");
  l.def(
      "solve_triangular",
      [](py::object a, py::object b, bool upper, StreamOrDevice s) {
        return linalg::solve_triangular(arg_array(a, "linalg.solve_triangular", "a"),
                                        arg_array(b, "linalg.solve_triangular", "b"), upper, s);
      },
      "a"_a, "b"_a, py::kw_only(), "upper"_a = false, "stream"_a = py::none(),
      "The solution X of A X = B for a lower (upper) triangular A.");
}

}  // namespace braid::python
