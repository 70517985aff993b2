// Derivatives of the factorizations, built from ops (the inverses and solves they need are
// linalg's own, on the primitive's CPU stream). Real inputs only.
//
// Symmetric inputs (cholesky, eigh, eigvalsh) are differentiated as functions of a symmetric
// matrix, as JAX and PyTorch do: a tangent is symmetrized before use and a cotangent comes back
// symmetric, whichever triangle the kernel reads. The SVD's and QR's rules hold where the
// results are differentiable: distinct nonzero singular values (eigenvalues), a full-rank r.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "braid/linalg.h"
#include "braid/ops.h"
#include "primitives/factorizations.h"
#include "primitives/grad_utils.h"

namespace braid {

namespace {

using detail::mT;
using detail::scalar_like;

array sym(const array& a, const Stream& s) { return multiply(scalar_like(0.5, a), add(a, mT(a, s), s), s); }

array eye_like(int n, const array& like, const Stream& s) { return eye(n, n, 0, like.dtype(), s); }

// The diagonal matrices of the vectors d [..., k].
array diag_matrix(const array& d, const Stream& s) {
  return multiply(expand_dims(d, -1, s), eye_like(d.shape(-1), d, s), s);
}

// The diagonals [..., k] of the matrices m [..., k, k].
array diag_of(const array& m, const Stream& s) { return diagonal(m, 0, -2, -1, s); }

// F with F[i, j] = 1 / (v[j] - v[i]) off the diagonal and 0 on it, for the vectors v [..., k].
array gap_inverses(const array& v, const Stream& s) {
  const int k = v.shape(-1);
  const array id = eye_like(k, v, s);
  const array gaps = subtract(expand_dims(v, -2, s), expand_dims(v, -1, s), s);
  return divide(subtract(scalar_like(1.0, id), id, s), add(gaps, id, s), s);
}

// Columns [begin, end) of the matrices m [..., r, c].
array columns(const array& m, int begin, int end, const Stream& s) {
  Shape start(m.ndim(), 0);
  Shape stop = m.shape();
  start[m.ndim() - 1] = begin;
  stop[m.ndim() - 1] = end;
  return slice(m, std::move(start), std::move(stop), s);
}

array lower_or_upper(const array& m, bool upper, const Stream& s) {
  return upper ? triu(m, 0, s) : tril(m, 0, s);
}

void require_real(const array& a, const char* op) {
  if (a.dtype() == complex64) {
    throw std::invalid_argument(std::string("[") + op +
                                "] Derivatives of complex64 inputs are not supported.");
  }
}

// The one cotangent of a single-input primitive for each requested argnum (always input 0).
std::vector<array> for_argnums(const std::vector<int>& argnums, const array& grad) {
  return std::vector<array>(argnums.size(), grad);
}

}  // namespace

// ---- inverse: d(A^-1) = -A^-1 dA A^-1 (a triangular inverse reads one triangle of dA) ----

std::vector<array> Inverse::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                                const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array yt = mT(outputs[0], s);
  array g = negative(matmul(matmul(yt, cotangents[0], s), yt, s), s);
  if (tri_) g = lower_or_upper(g, upper_, s);
  return for_argnums(argnums, g);
}

std::vector<array> Inverse::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& y = outputs[0];
  const array t = tri_ ? lower_or_upper(tangents[0], upper_, s) : tangents[0];
  return {negative(matmul(matmul(y, t, s), y, s), s)};
}

// ---- cholesky: A = L L^T, dL = L phi(L^-1 dA L^-T) with phi the lower triangle, half diagonal ----

namespace {
array phi(const array& x, const Stream& s) {
  const array half_diag = multiply(x, multiply(scalar_like(0.5, x), eye_like(x.shape(-1), x, s), s), s);
  return subtract(tril(x, 0, s), half_diag, s);
}
}  // namespace

std::vector<array> Cholesky::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                                 const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array l = upper_ ? mT(outputs[0], s) : outputs[0];
  const array gl = upper_ ? mT(cotangents[0], s) : cotangents[0];
  const array l_inv = linalg::tri_inv(l, false, s);
  const array p = phi(matmul(mT(l, s), gl, s), s);
  return for_argnums(argnums, sym(matmul(matmul(mT(l_inv, s), p, s), l_inv, s), s));
}

std::vector<array> Cholesky::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                 const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array l = upper_ ? mT(outputs[0], s) : outputs[0];
  const array l_inv = linalg::tri_inv(l, false, s);
  const array x = matmul(matmul(l_inv, sym(tangents[0], s), s), mT(l_inv, s), s);
  const array dl = matmul(l, phi(x, s), s);
  return {upper_ ? mT(dl, s) : dl};
}

// ---- QR: A = Q R. For a wide A = [X Y] (m < n), X = Q R1 and R2 = Q^T Y. ----

namespace {

// The square part X = Q R1 (R1 [k, k] invertible): C = Q^T dX R1^-1, Q^T dQ = omega (the
// antisymmetric part built from C's strict lower triangle), dR1 = (C - omega) R1.
std::pair<array, array> qr_square_jvp(const array& q, const array& r1, const array& dx, const Stream& s) {
  const array r1_inv = linalg::tri_inv(r1, true, s);
  const array c = matmul(matmul(mT(q, s), dx, s), r1_inv, s);
  const array low = tril(c, -1, s);
  const array c_minus_omega = add(subtract(c, low, s), mT(low, s), s);
  const array dq = subtract(matmul(dx, r1_inv, s), matmul(q, c_minus_omega, s), s);
  return {dq, matmul(c_minus_omega, r1, s)};
}

// Its adjoint: gX = (gQ + Q E) R1^-T with B = gR1 R1^T - Q^T gQ and E = triu(B) + tril(B^T, -1).
array qr_square_vjp(const array& q, const array& r1, const array& gq, const array& gr1, const Stream& s) {
  const array b = subtract(matmul(gr1, mT(r1, s), s), matmul(mT(q, s), gq, s), s);
  const array e = add(triu(b, 0, s), tril(mT(b, s), -1, s), s);
  const array r1_inv = linalg::tri_inv(r1, true, s);
  return matmul(add(gq, matmul(q, e, s), s), mT(r1_inv, s), s);
}

}  // namespace

std::vector<array> QRF::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                            const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& a = primals[0];
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  const PackedLayout layout = qr_layout(m, n);
  const array q = layout.unpack(outputs[0], 0, s), r = layout.unpack(outputs[0], 1, s);
  array gq = layout.unpack(cotangents[0], 0, s);
  const array gr = layout.unpack(cotangents[0], 1, s);
  if (n == k) return for_argnums(argnums, qr_square_vjp(q, r, gq, gr, s));
  const array y = columns(a, k, n, s), gr2 = columns(gr, k, n, s);
  gq = add(gq, matmul(y, mT(gr2, s), s), s);
  const array gx = qr_square_vjp(q, columns(r, 0, k, s), gq, columns(gr, 0, k, s), s);
  return for_argnums(argnums, concatenate({gx, matmul(q, gr2, s)}, -1, s));
}

std::vector<array> QRF::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                            const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& a = primals[0];
  const array& da = tangents[0];
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  const PackedLayout layout = qr_layout(m, n);
  const array q = layout.unpack(outputs[0], 0, s), r = layout.unpack(outputs[0], 1, s);
  if (n == k) {
    auto [dq, dr] = qr_square_jvp(q, r, da, s);
    return {layout.pack({dq, dr}, s)};
  }
  auto [dq, dr1] = qr_square_jvp(q, columns(r, 0, k, s), columns(da, 0, k, s), s);
  const array dr2 =
      add(matmul(mT(dq, s), columns(a, k, n, s), s), matmul(mT(q, s), columns(da, k, n, s), s), s);
  return {layout.pack({dq, concatenate({dr1, dr2}, -1, s)}, s)};
}

// ---- SVD: A = U S V^T. The rules act on the first k = min(m, n) columns of U and V; the rest
// (a basis of the complement, which LAPACK picks) turn with them: dU_rest = -U_k dU_k^T U_rest.

namespace {

struct ThinSvd {
  array uk, s, vk;                      // [..., m, k], [..., k], [..., n, k]
  std::optional<array> u_rest, v_rest;  // [..., m, m - k], [..., n, n - k] when not empty
};

ThinSvd thin_svd(const array& u, const array& sv, const array& vt, const Stream& s) {
  const int m = u.shape(-1), n = vt.shape(-1), k = sv.shape(-1);
  const array v = mT(vt, s);
  ThinSvd t{columns(u, 0, k, s), sv, columns(v, 0, k, s), std::nullopt, std::nullopt};
  if (m > k) t.u_rest = columns(u, k, m, s);
  if (n > k) t.v_rest = columns(v, k, n, s);
  return t;
}

// x with each column j divided by s[j].
array divide_columns(const array& x, const array& sv, const Stream& s) {
  return divide(x, expand_dims(sv, -2, s), s);
}

// (I - b b^T) x for b with orthonormal columns.
array project_out(const array& b, const array& x, const Stream& s) {
  return subtract(x, matmul(b, matmul(mT(b, s), x, s), s), s);
}

}  // namespace

std::vector<array> SVD::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                            const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& a = primals[0];
  require_real(a, "linalg::svd");
  if (!compute_uv_) {
    const std::vector<array> usv = linalg::svd(a, true, s);
    const ThinSvd t = thin_svd(usv[0], usv[1], usv[2], s);
    return for_argnums(argnums, matmul(multiply(t.uk, expand_dims(cotangents[0], -2, s), s), mT(t.vk, s), s));
  }
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  const PackedLayout layout = svd_layout(m, n);
  const ThinSvd t = thin_svd(layout.unpack(outputs[0], 0, s), layout.unpack(outputs[0], 1, s),
                             layout.unpack(outputs[0], 2, s), s);
  const array gu = layout.unpack(cotangents[0], 0, s), gs = layout.unpack(cotangents[0], 1, s);
  const array gv = mT(layout.unpack(cotangents[0], 2, s), s);
  array guk = columns(gu, 0, k, s), gvk = columns(gv, 0, k, s);
  if (t.u_rest) guk = subtract(guk, matmul(*t.u_rest, matmul(mT(columns(gu, k, m, s), s), t.uk, s), s), s);
  if (t.v_rest) gvk = subtract(gvk, matmul(*t.v_rest, matmul(mT(columns(gv, k, n, s), s), t.vk, s), s), s);
  const array f = gap_inverses(square(t.s, s), s);
  const array ut_gu = matmul(mT(t.uk, s), guk, s), vt_gv = matmul(mT(t.vk, s), gvk, s);
  const array j = multiply(f, subtract(ut_gu, mT(ut_gu, s), s), s);
  const array kk = multiply(f, subtract(vt_gv, mT(vt_gv, s), s), s);
  array inner = add(diag_matrix(gs, s), multiply(j, expand_dims(t.s, -2, s), s), s);
  inner = add(inner, multiply(expand_dims(t.s, -1, s), kk, s), s);
  array g = matmul(matmul(t.uk, inner, s), mT(t.vk, s), s);
  if (m > k) g = add(g, matmul(project_out(t.uk, divide_columns(guk, t.s, s), s), mT(t.vk, s), s), s);
  if (n > k) g = add(g, matmul(t.uk, mT(project_out(t.vk, divide_columns(gvk, t.s, s), s), s), s), s);
  return for_argnums(argnums, g);
}

std::vector<array> SVD::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                            const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& a = primals[0];
  const array& da = tangents[0];
  require_real(a, "linalg::svd");
  if (!compute_uv_) {
    const std::vector<array> usv = linalg::svd(a, true, s);
    const ThinSvd t = thin_svd(usv[0], usv[1], usv[2], s);
    return {diag_of(matmul(matmul(mT(t.uk, s), da, s), t.vk, s), s)};
  }
  const int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  const PackedLayout layout = svd_layout(m, n);
  const ThinSvd t = thin_svd(layout.unpack(outputs[0], 0, s), layout.unpack(outputs[0], 1, s),
                             layout.unpack(outputs[0], 2, s), s);
  const array dp = matmul(matmul(mT(t.uk, s), da, s), t.vk, s);
  const array f = gap_inverses(square(t.s, s), s);
  const array dp_s = multiply(dp, expand_dims(t.s, -2, s), s);  // dP S
  const array s_dp = multiply(expand_dims(t.s, -1, s), dp, s);  // S dP
  array duk = matmul(t.uk, multiply(f, add(dp_s, mT(dp_s, s), s), s), s);
  array dvk = matmul(t.vk, multiply(f, add(s_dp, mT(s_dp, s), s), s), s);
  if (m > k) duk = add(duk, project_out(t.uk, divide_columns(matmul(da, t.vk, s), t.s, s), s), s);
  if (n > k) dvk = add(dvk, project_out(t.vk, divide_columns(matmul(mT(da, s), t.uk, s), t.s, s), s), s);
  const array du =
      m > k ? concatenate({duk, negative(matmul(t.uk, matmul(mT(duk, s), *t.u_rest, s), s), s)}, -1, s) : duk;
  const array dv =
      n > k ? concatenate({dvk, negative(matmul(t.vk, matmul(mT(dvk, s), *t.v_rest, s), s), s)}, -1, s) : dvk;
  return {layout.pack({du, diag_of(dp, s), mT(dv, s)}, s)};
}

// ---- eigh: A = V diag(w) V^T; dw = diag(V^T dA V), dV = V (F o (V^T dA V)) ----

std::vector<array> Eigh::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                             const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& a = primals[0];
  require_real(a, compute_vectors_ ? "linalg::eigh" : "linalg::eigvalsh");
  if (!compute_vectors_) {
    const array v = linalg::eigh(a, std::string(1, uplo_), s).second;
    return for_argnums(argnums, matmul(multiply(v, expand_dims(cotangents[0], -2, s), s), mT(v, s), s));
  }
  const PackedLayout layout = eig_layout(a.shape(-1));
  const array w = layout.unpack(outputs[0], 0, s), v = layout.unpack(outputs[0], 1, s);
  const array gw = layout.unpack(cotangents[0], 0, s), gv = layout.unpack(cotangents[0], 1, s);
  const array inner = add(diag_matrix(gw, s), multiply(gap_inverses(w, s), matmul(mT(v, s), gv, s), s), s);
  return for_argnums(argnums, sym(matmul(matmul(v, inner, s), mT(v, s), s), s));
}

std::vector<array> Eigh::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                             const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& a = primals[0];
  require_real(a, compute_vectors_ ? "linalg::eigh" : "linalg::eigvalsh");
  const array da = sym(tangents[0], s);
  if (!compute_vectors_) {
    const array v = linalg::eigh(a, std::string(1, uplo_), s).second;
    return {diag_of(matmul(matmul(mT(v, s), da, s), v, s), s)};
  }
  const PackedLayout layout = eig_layout(a.shape(-1));
  const array w = layout.unpack(outputs[0], 0, s), v = layout.unpack(outputs[0], 1, s);
  const array q = matmul(matmul(mT(v, s), da, s), v, s);
  return {layout.pack({diag_of(q, s), matmul(v, multiply(gap_inverses(w, s), q, s), s)}, s)};
}

// ---- solve: X = A^-1 B; gB = A^-T g, gA = -gB X^T; dX = A^-1 (dB - dA X) ----

std::vector<array> Solve::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                              const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  // Conjugate transposes for complex matrices (MLX's convention, as matmul's vjp).
  const array gb = linalg::solve(mT(detail::conj_if_complex(primals[0], s), s), cotangents[0], s);
  std::vector<array> out;
  for (int arg : argnums) {
    out.push_back(arg == 0 ? negative(matmul(gb, mT(detail::conj_if_complex(outputs[0], s), s), s), s) : gb);
  }
  return out;
}

std::vector<array> Solve::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                              const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  std::optional<array> rhs;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const array t = argnums[i] == 0 ? negative(matmul(tangents[i], outputs[0], s), s) : tangents[i];
    rhs = rhs ? add(*rhs, t, s) : t;
  }
  return {linalg::solve(primals[0], *rhs, s)};
}

std::vector<array> SolveTriangular::vjp(const std::vector<array>& primals,
                                        const std::vector<array>& cotangents, const std::vector<int>& argnums,
                                        const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array gb =
      linalg::solve_triangular(mT(detail::conj_if_complex(primals[0], s), s), cotangents[0], !upper_, s);
  std::vector<array> out;
  for (int arg : argnums) {
    out.push_back(
        arg == 0 ? lower_or_upper(negative(matmul(gb, mT(detail::conj_if_complex(outputs[0], s), s), s), s),
                                  upper_, s)
                 : gb);
  }
  return out;
}

std::vector<array> SolveTriangular::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                        const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  std::optional<array> rhs;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const array t = argnums[i] == 0
                        ? negative(matmul(lower_or_upper(tangents[i], upper_, s), outputs[0], s), s)
                        : tangents[i];
    rhs = rhs ? add(*rhs, t, s) : t;
  }
  return {linalg::solve_triangular(primals[0], *rhs, upper_, s)};
}

}  // namespace braid
