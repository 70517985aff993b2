# braid.core.linalg against numpy.linalg: norms and the cross product on the default device,
# the factorizations on the CPU (compared by value where the result is unique, by
# reconstruction where LAPACK chooses signs), mlx.core.linalg's keyword names, errors, and
# gradients through the factorizations.
import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(29)
cpu = mx.cpu


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def well_conditioned(*shape, dtype=np.float32):
    n = shape[-1]
    return (randn(*shape, dtype=dtype) + n * np.eye(n, dtype=dtype)).astype(dtype)


def spd(*shape, dtype=np.float32):
    x = randn(*shape, dtype=dtype)
    n = shape[-1]
    return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=dtype)).astype(dtype)


def close(out, expected, tol=1e-5):
    out_np = np.array(out)
    assert out_np.shape == np.shape(expected), (out_np.shape, np.shape(expected))
    np.testing.assert_allclose(out_np, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3, -1, -3, 0.5, np.inf, -np.inf])
def test_vector_norms_match_numpy(ord):
    x = randn(3, 5)
    x[1, 2] = 0
    for axis in [0, 1, -1]:
        for keepdims in [False, True]:
            out = mx.linalg.norm(mx.array(x), ord=ord, axis=axis, keepdims=keepdims)
            with np.errstate(divide="ignore"):  # negative orders of the zero
                want = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
            close(out, want)
    with np.errstate(divide="ignore"):
        want = np.linalg.norm(x[0], ord)
    close(mx.linalg.norm(mx.array(x[0]), ord), want)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms_match_numpy(ord):
    x = randn(2, 3, 4)
    for axis in [(1, 2), (2, 1), (0, 2), (-1, 0)]:
        for keepdims in [False, True]:
            out = mx.linalg.norm(mx.array(x), ord, axis, keepdims)
            close(out, np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims), tol=1e-4)
    close(mx.linalg.norm(mx.array(x[0]), ord), np.linalg.norm(x[0], ord), tol=1e-4)


def test_norm_defaults_and_dtypes():
    a = mx.arange(9) - 4
    assert mx.linalg.norm(a).dtype == mx.float32
    close(mx.linalg.norm(a), np.linalg.norm(np.arange(9) - 4))
    b = a.reshape((3, 3))
    close(mx.linalg.norm(b), np.linalg.norm(np.arange(9.0).reshape(3, 3) - 4))
    assert mx.linalg.norm(b, keepdims=True).shape == (1,)  # MLX flattens first
    close(mx.linalg.norm(b, float("inf")), 9.0)
    close(mx.linalg.norm(mx.array([3 + 4j, 0j])), 5.0)
    assert mx.linalg.norm(mx.array([3 + 4j])).dtype == mx.float32
    with pytest.raises(ValueError, match=r"\[linalg::norm\] Invalid ord 3"):
        mx.linalg.norm(b, 3)
    with pytest.raises(ValueError, match="only supported for matrices"):
        mx.linalg.norm(a, "fro")
    with pytest.raises(ValueError, match="too many axes"):
        mx.linalg.norm(mx.zeros((2, 2, 2)), axis=[0, 1, 2])
    with pytest.raises(TypeError):
        mx.linalg.norm(a, ord=[1])


def test_cross_matches_numpy():
    a, b = randn(4, 3), randn(4, 3)
    close(mx.linalg.cross(mx.array(a), mx.array(b)), np.cross(a, b))
    close(mx.linalg.cross(mx.array(a.T), mx.array(b.T), axis=0), np.cross(a.T, b.T, axis=0))
    close(mx.linalg.cross(mx.array(a), mx.array(b[0])), np.cross(a, b[0]))
    a2 = randn(4, 2)
    # NumPy 2 drops 2-element vectors; their missing third component is zero.
    pad = np.concatenate([a2, np.zeros((4, 1), np.float32)], axis=1)
    close(mx.linalg.cross(mx.array(a2), mx.array(b)), np.cross(pad, b))
    with pytest.raises(ValueError):
        mx.linalg.cross(mx.zeros((4,)), mx.zeros((4,)))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_qr_matches_numpy(shape):
    x = randn(*shape, dtype=np.float64)
    q, r = mx.linalg.qr(mx.array(x, dtype=mx.float64), stream=cpu)
    nq, nr = np.linalg.qr(x)  # both LAPACK's geqrf: the same signs
    close(q, nq, tol=1e-10)
    close(r, nr, tol=1e-10)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_svd_matches_numpy(shape):
    x = randn(*shape)
    u, s, vt = mx.linalg.svd(mx.array(x), stream=cpu)
    close(s, np.linalg.svd(x, compute_uv=False), tol=1e-4)
    k = min(shape[-2:])
    rebuilt = (np.array(u)[..., :k] * np.array(s)[..., None, :]) @ np.array(vt)[..., :k, :]
    np.testing.assert_allclose(rebuilt, x, atol=1e-4)
    only = mx.linalg.svd(mx.array(x), compute_uv=False, stream=cpu)
    assert isinstance(only, mx.array)
    close(only, np.linalg.svd(x, compute_uv=False), tol=1e-4)


def test_inverses_match_numpy():
    x = well_conditioned(3, 4, 4)
    close(mx.linalg.inv(mx.array(x), stream=cpu), np.linalg.inv(x), tol=1e-4)
    for upper in [False, True]:
        tri = np.triu(x) if upper else np.tril(x)
        close(mx.linalg.tri_inv(mx.array(x), upper=upper, stream=cpu), np.linalg.inv(tri), tol=1e-4)
    close(mx.linalg.tri_inv(mx.array(x), True, stream=cpu), np.linalg.inv(np.triu(x)), tol=1e-4)
    with pytest.raises(RuntimeError, match=r"\[linalg::inv\] The matrix is singular"):
        mx.eval(mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]]), stream=cpu))


def test_cholesky_and_its_inverse_match_numpy():
    a = spd(2, 4, 4, dtype=np.float64)
    ma = mx.array(a, dtype=mx.float64)
    lower = np.linalg.cholesky(a)
    close(mx.linalg.cholesky(ma, stream=cpu), lower, tol=1e-10)
    close(mx.linalg.cholesky(ma, upper=True, stream=cpu), np.swapaxes(lower, -1, -2), tol=1e-10)
    close(mx.linalg.cholesky_inv(mx.array(lower, dtype=mx.float64), stream=cpu), np.linalg.inv(a), tol=1e-10)
    with pytest.raises(RuntimeError, match="not positive definite"):
        mx.eval(mx.linalg.cholesky(mx.array([[1.0, 2.0], [2.0, 1.0]]), stream=cpu))


def test_pinv_matches_numpy():
    for shape in [(4, 4), (5, 3), (2, 3, 5)]:
        x = randn(*shape, dtype=np.float64)
        close(mx.linalg.pinv(mx.array(x, dtype=mx.float64), stream=cpu), np.linalg.pinv(x), tol=1e-10)


def test_lu_reconstructs_and_lu_factor_matches_lapack():
    for shape in [(4, 4), (5, 3), (3, 5), (2, 4, 4)]:
        x = randn(*shape)
        p, l, u = mx.linalg.lu(mx.array(x), stream=cpu)
        assert p.dtype == mx.uint32
        rebuilt = np.take_along_axis(np.array(l), np.array(p)[..., None].astype(np.int64), axis=-2) @ np.array(u)
        np.testing.assert_allclose(rebuilt, x, atol=1e-5)
    lu, pivots = mx.linalg.lu_factor(mx.array([[1.0, 2.0], [3.0, 4.0]]), stream=cpu)
    assert pivots.tolist() == [1, 1]
    close(lu, [[3.0, 4.0], [1 / 3, 2 / 3]])


def test_det_and_slogdet_match_numpy():
    for shape in [(3, 3), (2, 4, 4), (5, 5)]:
        x = randn(*shape, dtype=np.float64)
        m = mx.array(x, dtype=mx.float64)
        close(mx.linalg.det(m, stream=cpu), np.linalg.det(x), tol=1e-10)
        sign, logabsdet = mx.linalg.slogdet(m, stream=cpu)
        want_sign, want_log = np.linalg.slogdet(x)
        close(sign, want_sign, tol=0)
        close(logabsdet, want_log, tol=1e-10)
    singular = mx.array([[1.0, 2.0], [2.0, 4.0]])
    assert mx.linalg.det(singular, stream=cpu).item() == 0.0
    sign, logabsdet = mx.linalg.slogdet(singular, stream=cpu)
    assert sign.item() == 0.0 and logabsdet.item() == -np.inf
    int_det = mx.linalg.det(mx.array([[1, 2], [3, 4]]), stream=cpu)  # promoted, as MLX's
    assert int_det.dtype == mx.float32
    close(int_det, -2.0)
    with pytest.raises(ValueError):
        mx.linalg.slogdet(mx.ones((2, 3)), stream=cpu)
    with pytest.raises(ValueError):
        mx.linalg.det(mx.eye(2), stream=mx.gpu)


def test_solvers_match_numpy():
    a, b = well_conditioned(2, 4, 4, dtype=np.float64), randn(2, 4, 3, dtype=np.float64)
    ma, mb = mx.array(a, dtype=mx.float64), mx.array(b, dtype=mx.float64)
    close(mx.linalg.solve(ma, mb, stream=cpu), np.linalg.solve(a, b), tol=1e-10)
    v = randn(4, dtype=np.float64)
    close(mx.linalg.solve(ma[0], mx.array(v, dtype=mx.float64), stream=cpu), np.linalg.solve(a[0], v), tol=1e-10)
    for upper in [False, True]:
        tri = np.triu(a) if upper else np.tril(a)
        out = mx.linalg.solve_triangular(ma, mb, upper=upper, stream=cpu)
        close(out, np.linalg.solve(tri, b), tol=1e-10)
    with pytest.raises(TypeError):
        mx.linalg.solve_triangular(ma, mb, True)  # upper is keyword-only, as in MLX


def test_complex_solve_matches_numpy_and_its_gradient_the_conjugate_rule():
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))).astype(np.complex64)
    a += 3 * np.eye(3, dtype=np.complex64)
    b = (rng.standard_normal((2, 3, 2)) + 1j * rng.standard_normal((2, 3, 2))).astype(np.complex64)
    out = mx.linalg.solve(mx.array(a), mx.array(b), stream=cpu)
    assert out.dtype == mx.complex64
    close(out, np.linalg.solve(a, b), tol=1e-4)
    for upper in [False, True]:
        tri = np.triu(a) if upper else np.tril(a)
        close(mx.linalg.solve_triangular(mx.array(a), mx.array(b), upper=upper, stream=cpu),
              np.linalg.solve(tri, b), tol=1e-4)
    # The cotangents follow matmul's rule: b's is solve(a^H, g), a's -(that) x^H.
    g = (rng.standard_normal((2, 3, 2)) + 1j * rng.standard_normal((2, 3, 2))).astype(np.complex64)
    _, (ga, gb) = mx.vjp(lambda a, b: mx.linalg.solve(a, b, stream=cpu), [mx.array(a), mx.array(b)], [mx.array(g)])
    x = np.linalg.solve(a, b)
    want_gb = np.linalg.solve(np.conj(np.swapaxes(a, -1, -2)), g)
    close(gb, want_gb, tol=1e-4)
    close(ga, -want_gb @ np.conj(np.swapaxes(x, -1, -2)), tol=1e-4)


def test_symmetric_eigensolvers_match_numpy():
    a = spd(3, 5, 5, dtype=np.float64)
    ma = mx.array(a, dtype=mx.float64)
    for uplo in ["L", "U"]:
        close(mx.linalg.eigvalsh(ma, UPLO=uplo, stream=cpu), np.linalg.eigvalsh(a, UPLO=uplo), tol=1e-10)
        w, v = mx.linalg.eigh(ma, uplo, stream=cpu)
        close(w, np.linalg.eigvalsh(a), tol=1e-10)
        nv = np.array(v)
        np.testing.assert_allclose((nv * np.array(w)[..., None, :]) @ np.swapaxes(nv, -1, -2), a, atol=1e-10)
    h = np.array([[2, -1j], [1j, 2]], dtype=np.complex64)
    close(mx.linalg.eigvalsh(mx.array(h), stream=cpu), np.linalg.eigvalsh(h))
    with pytest.raises(ValueError, match="UPLO"):
        mx.linalg.eigh(ma, UPLO="X", stream=cpu)


def test_general_eigensolvers_match_numpy():
    x = randn(2, 4, 4)
    w = np.array(mx.linalg.eigvals(mx.array(x), stream=cpu))
    assert w.dtype == np.complex64
    want = np.linalg.eigvals(x)
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(want.astype(np.complex64)), atol=1e-4)
    vals, vecs = mx.linalg.eig(mx.array(x), stream=cpu)
    nvals, nvecs = np.array(vals), np.array(vecs)
    np.testing.assert_allclose(x.astype(np.complex64) @ nvecs, nvecs * nvals[..., None, :], atol=1e-4)
    close(mx.linalg.eigvals(mx.array([[1.0, -2.0], [-2.0, 1.0]]), stream=cpu), np.array([3 + 0j, -1 + 0j]))


def test_bad_input_and_gpu_streams_raise_value_error():
    with pytest.raises(ValueError, match=r"\[linalg::inv\] Arrays must have type float32 or float64"):
        mx.linalg.inv(mx.array([[1, 2], [3, 4]]), stream=cpu)
    with pytest.raises(ValueError, match=">= 2 dimensions"):
        mx.linalg.qr(mx.array([1.0, 2.0]), stream=cpu)
    with pytest.raises(ValueError, match="square"):
        mx.linalg.cholesky(mx.zeros((2, 3)), stream=cpu)
    if mx.is_available(mx.Device(mx.gpu)):
        with pytest.raises(ValueError, match="not yet supported on the GPU"):
            mx.linalg.svd(mx.eye(3), stream=mx.gpu)
        close(mx.linalg.norm(mx.eye(3), 2, stream=mx.gpu), 1.0)  # its SVD runs on the CPU


def test_gradients_flow_through_factorizations():
    a = mx.array(well_conditioned(3, 3, dtype=np.float64), dtype=mx.float64)
    na = np.array(a)
    # d/dA sum(inv(A)) = -inv(A)^T 1 inv(A)^T
    g = mx.grad(lambda x: mx.linalg.inv(x, stream=cpu).sum())(a)
    inv_t = np.linalg.inv(na).T
    close(g, -inv_t @ np.ones((3, 3)) @ inv_t, tol=1e-10)
    # d/dA of the sum of singular values of a square A is U V^T.
    g = mx.grad(lambda x: mx.linalg.svd(x, compute_uv=False, stream=cpu).sum())(a)
    u, _, vt = np.linalg.svd(na)
    close(g, u @ vt, tol=1e-10)
    # d/dB sum(solve(A, B)) = A^-T 1
    b = mx.array(randn(3, 2, dtype=np.float64), dtype=mx.float64)
    g = mx.grad(lambda y: mx.linalg.solve(a, y, stream=cpu).sum())(b)
    close(g, np.linalg.solve(na.T, np.ones((3, 2))), tol=1e-10)
    # The eigenvalues of a symmetric matrix: d w_i / dA = v_i v_i^T.
    s = mx.array(spd(3, 3, dtype=np.float64), dtype=mx.float64)
    g = mx.grad(lambda x: mx.linalg.eigvalsh(x, stream=cpu)[-1])(s)
    v = np.linalg.eigh(np.array(s))[1][:, -1]
    close(g, np.outer(v, v), tol=1e-10)
