# Matrix products of braid.core (matmul, addmm, inner, outer, tensordot, kron, the masked,
# gathered and segmented products, hadamard_transform), checked against NumPy.
import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(3)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def close(out, expected, rtol=1e-5, atol=1e-5):
    out_np = np.array(out)
    assert out_np.shape == expected.shape
    np.testing.assert_allclose(out_np, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize(
    "sa, sb",
    [((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((1, 3, 4), (5, 4, 2)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)),
     ((0, 4), (4, 3)), ((3, 0), (0, 2))],
)
def test_matmul_follows_numpy(sa, sb):
    x, y = randn(*sa), randn(*sb)
    close(mx.matmul(mx.array(x), mx.array(y)), np.matmul(x, y))


def test_matmul_dtypes_and_errors():
    x, y = randn(4, 8), randn(8, 3)
    out = mx.matmul(mx.array(x.astype(np.float16)), mx.array(y.astype(np.float16)))
    assert out.dtype == mx.float16
    close(out, (x.astype(np.float16) @ y.astype(np.float16)).astype(np.float16), rtol=1e-2, atol=1e-2)
    with pytest.raises(ValueError):
        mx.matmul(mx.array(x), mx.array(x))
    with pytest.raises(ValueError):
        mx.matmul(mx.array(np.ones((2, 2), np.int32)), mx.array(np.ones((2, 2), np.int32)))
    with pytest.raises(TypeError):
        mx.matmul(a=mx.array(x), b=mx.array(y))


def test_addmm_scales_both_terms():
    c, a, b = randn(3, 5), randn(3, 4), randn(4, 5)
    close(mx.addmm(mx.array(c), mx.array(a), mx.array(b)), c + a @ b)
    close(mx.addmm(mx.array(c), mx.array(a), mx.array(b), alpha=0.5, beta=2.0), 2.0 * c + 0.5 * (a @ b))
    c1 = randn(5)
    close(mx.addmm(mx.array(c1), mx.array(a), mx.array(b), 2.0, -1.0), -c1 + 2.0 * (a @ b))


def test_inner_and_outer():
    a, b = randn(2, 3, 4), randn(5, 4)
    close(mx.inner(mx.array(a), mx.array(b)), np.inner(a, b))
    v, w = randn(4), randn(4)
    close(mx.inner(mx.array(v), mx.array(w)), np.inner(v, w))
    u = randn(3)
    close(mx.outer(mx.array(v), mx.array(u)), np.outer(v, u))
    m = randn(2, 3)
    close(mx.outer(mx.array(m), mx.array(v)), np.outer(m, v))
    iv = np.array([1, 2, 3], np.int32)
    out = mx.outer(mx.array(iv), mx.array(iv))
    assert out.dtype == mx.int32
    np.testing.assert_array_equal(np.array(out), np.outer(iv, iv))


def test_tensordot_count_and_axis_lists():
    a, b = randn(3, 4, 5), randn(4, 5, 6)
    close(mx.tensordot(mx.array(a), mx.array(b)), np.tensordot(a, b), rtol=1e-4)
    c = randn(5, 2)
    close(mx.tensordot(mx.array(a), mx.array(c), axes=1), np.tensordot(a, c, axes=1), rtol=1e-4)
    e = randn(2, 2)
    close(mx.tensordot(mx.array(a), mx.array(e), axes=0), np.tensordot(a, e, axes=0), rtol=1e-4)
    d = randn(5, 3)
    close(mx.tensordot(mx.array(a), mx.array(d), axes=[[2, 0], [0, 1]]), np.tensordot(a, d, axes=[[2, 0], [0, 1]]),
          rtol=1e-4)
    close(mx.tensordot(mx.array(a), mx.array(c), ([2], [0])), np.tensordot(a, c, ([2], [0])), rtol=1e-4)
    close(mx.tensordot(mx.array(a), mx.array(c), axes=(2, 0)), np.tensordot(a, c, axes=(2, 0)), rtol=1e-4)
    with pytest.raises(ValueError):
        mx.tensordot(mx.array(a), mx.array(c), axes=[[0], [1], [2]])


def test_kron_any_dtype():
    a = np.array([[1, 2], [3, 4]], np.int32)
    b = np.array([[0, 5], [6, 7]], np.int32)
    out = mx.kron(mx.array(a), mx.array(b))
    np.testing.assert_array_equal(np.array(out), np.kron(a, b))
    x, y = randn(2, 3), randn(3, 1, 2)
    close(mx.kron(a=mx.array(x), b=mx.array(y)), np.kron(x, y))


def block_expand(mask, bs, rows, cols):
    return np.repeat(np.repeat(mask, bs, axis=-2), bs, axis=-1)[..., :rows, :cols]


def test_block_masked_mm_masks_blocks():
    bs = 32
    M, K, N = 64, 96, 40
    a, b = randn(M, K), randn(K, N)
    mo = rng.random((2, 2)) > 0.3
    ml = rng.random((2, 3)) > 0.3
    mr = rng.random((3, 2)) > 0.3
    ref = (a * block_expand(ml, bs, M, K)) @ (b * block_expand(mr, bs, K, N))
    ref = ref * block_expand(mo, bs, M, N)
    out = mx.block_masked_mm(mx.array(a), mx.array(b), bs, mx.array(mo), mx.array(ml), mx.array(mr))
    close(out, ref, rtol=1e-4, atol=1e-4)
    close(mx.block_masked_mm(mx.array(a), mx.array(b), block_size=32), a @ b, rtol=1e-4, atol=1e-4)
    out = mx.block_masked_mm(mx.array(a), mx.array(b), 32, mask_out=mx.array(mo))
    close(out, (a @ b) * block_expand(mo, bs, M, N), rtol=1e-4, atol=1e-4)


def test_gather_mm_indexes_batches():
    a, b = randn(3, 2, 4), randn(5, 4, 3)
    lhs = np.array([0, 2, 2], np.uint32)
    rhs = np.array([4, 1, 0], np.uint32)
    close(mx.gather_mm(mx.array(a), mx.array(b), mx.array(lhs), mx.array(rhs)), a[lhs] @ b[rhs])
    close(mx.gather_mm(mx.array(a), mx.array(b[:3]), rhs_indices=mx.array(np.array([2, 0, 1], np.int32))),
          a @ b[[2, 0, 1]])
    close(mx.gather_mm(mx.array(a), mx.array(b), lhs_indices=None, rhs_indices=mx.array(rhs), sorted_indices=True),
          a @ b[rhs])


def test_segmented_mm_per_segment():
    a, b = randn(2, 6), randn(6, 3)
    segments = np.array([[0, 2], [2, 6], [3, 3]], np.uint32)
    ref = np.stack([a[:, s:e] @ b[s:e] for s, e in segments])
    close(mx.segmented_mm(mx.array(a), mx.array(b), mx.array(segments)), ref)
    close(mx.segmented_mm(mx.array(a), mx.array(b), segments=mx.array(segments)), ref)


def sylvester(n):
    h = np.array([[1.0]], np.float32)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


@pytest.mark.parametrize("n", [1, 2, 8, 64])
def test_hadamard_transform_default_scale(n):
    x = randn(3, n)
    close(mx.hadamard_transform(mx.array(x)), x @ sylvester(n).T / np.sqrt(n), rtol=1e-4, atol=1e-5)
    close(mx.hadamard_transform(mx.array(x), scale=2.0), 2.0 * (x @ sylvester(n).T), rtol=1e-4, atol=1e-4)


def test_hadamard_transform_rejects_bad_sizes():
    with pytest.raises(ValueError):
        mx.hadamard_transform(mx.array(randn(2, 6)))
