# Creation functions of braid.core against NumPy: zeros/ones/full and their _like forms,
# arange (MLX's dtype inference), linspace, eye, identity, tri, tril, triu, meshgrid, windows.
import numpy as np
import pytest

import braid.core as mx


def check(out, expected, dtype=None, rtol=1e-6, atol=1e-6):
    assert isinstance(out, mx.array)
    if dtype is not None:
        assert out.dtype == dtype
    got = np.array(out)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def test_zeros_and_ones():
    check(mx.zeros((2, 3)), np.zeros((2, 3)), mx.float32)
    check(mx.zeros(4), np.zeros(4), mx.float32)
    check(mx.zeros([2, 0]), np.zeros((2, 0)))
    check(mx.zeros(()), np.zeros(()))
    check(mx.ones((3,), mx.int8), np.ones(3), mx.int8)
    check(mx.ones((2, 2), dtype=mx.bool_), np.ones((2, 2)), mx.bool_)
    check(mx.ones(2, None), np.ones(2), mx.float32)  # None means the default float32
    with pytest.raises(ValueError):
        mx.zeros((-1, 2))
    with pytest.raises(TypeError):
        mx.zeros((2,), mx.float32, mx.cpu)  # stream is keyword-only
    for shape in (2**31, (3, 2**31), -(2**31) - 1, 2**70):  # a dimension is a 32-bit int
        with pytest.raises(ValueError, match="Shape dimension .* is outside the supported range"):
            mx.zeros(shape)
    x = mx.zeros((2,))
    for fn in (lambda: mx.reshape(x, (2**31,)), lambda: mx.broadcast_to(x, (2**70, 2))):
        with pytest.raises(ValueError, match="Shape dimension .* is outside the supported range"):
            fn()
    check(mx.zeros((2,), stream=mx.cpu), np.zeros(2))


def test_full():
    check(mx.full((2, 3), 7), np.full((2, 3), 7), mx.int32)
    check(mx.full((2, 3), 2.5), np.full((2, 3), 2.5), mx.float32)
    check(mx.full(3, True), np.full(3, True), mx.bool_)
    check(mx.full((2, 2), 3, mx.float16), np.full((2, 2), 3), mx.float16)
    check(mx.full((2, 2), 1.9, dtype=mx.int32), np.full((2, 2), 1), mx.int32)
    row = mx.array([1, 2, 3])
    check(mx.full((2, 3), row), np.broadcast_to([1, 2, 3], (2, 3)), mx.int32)
    check(mx.full((2, 3), row, mx.float32), np.broadcast_to([1, 2, 3], (2, 3)), mx.float32)
    check(mx.full((2, 3), [[1], [2]]), np.broadcast_to([[1], [2]], (2, 3)))
    with pytest.raises(ValueError):
        mx.full((2, 3), mx.array([1, 2]))


def test_like_forms():
    a = mx.array([[1, 2], [3, 4]], mx.int16)
    check(mx.zeros_like(a), np.zeros((2, 2)), mx.int16)
    check(mx.ones_like(a), np.ones((2, 2)), mx.int16)
    check(mx.zeros_like(np.ones((3,), np.float32)), np.zeros(3), mx.float32)
    check(mx.full_like(a, 5), np.full((2, 2), 5), mx.int16)
    check(mx.full_like(a, 2.5, mx.float32), np.full((2, 2), 2.5), mx.float32)
    check(mx.full_like(a, mx.array([7, 8])), np.array([[7, 8], [7, 8]]), mx.int16)
    with pytest.raises(TypeError):
        mx.zeros_like(a=a)  # a is positional-only


def test_arange_forms_and_dtype_inference():
    check(mx.arange(5), np.arange(5), mx.int32)
    check(mx.arange(2, 9), np.arange(2, 9), mx.int32)
    check(mx.arange(2, 9, 3), np.arange(2, 9, 3), mx.int32)
    check(mx.arange(10, 0, -3), np.arange(10, 0, -3), mx.int32)
    check(mx.arange(0.5, 3), np.arange(0.5, 3), mx.float32)
    check(mx.arange(0, 2, 0.25), np.arange(0, 2, 0.25), mx.float32)
    check(mx.arange(3.0), np.arange(3.0), mx.float32)
    check(mx.arange(5, dtype=mx.float16), np.arange(5), mx.float16)
    check(mx.arange(0, 10, 2, mx.int64), np.arange(0, 10, 2), mx.int64)
    check(mx.arange(stop=4), np.arange(4), mx.int32)
    check(mx.arange(start=1, stop=4), np.arange(1, 4), mx.int32)
    check(mx.arange(6, step=2), np.arange(0, 6, 2), mx.int32)
    check(mx.arange(5, 2), np.zeros(0), mx.int32)
    check(mx.arange(0, 5, stream=mx.cpu), np.arange(5))
    with pytest.raises(TypeError):
        mx.arange("5")
    check(mx.arange(2**31 - 3, 2**31 - 1), np.arange(2**31 - 3, 2**31 - 1), mx.int32)
    with pytest.raises(TypeError):
        mx.arange(0, mx.array(5))
    with pytest.raises(ValueError):
        mx.arange(0, 5, 0)
    with pytest.raises(ValueError):
        mx.arange(0, float("inf"))


def test_arange_of_ints_is_int32_converted_saturating():
    # As MLX: ints give int32 whatever their size. start and start + step are converted to
    # int32 saturating (past its range: its limits), then the steps wrap.
    imax, imin = 2**31 - 1, -(2**31)
    assert mx.arange(2**40, 2**40 + 3).tolist() == [imax] * 3
    assert mx.arange(2**40, 2**40 + 3).dtype == mx.int32
    assert mx.arange(2**32, 2**32 + 4).shape == (4,)
    assert mx.arange(-(2**40), -(2**40) + 5).tolist() == [imin] * 5
    assert mx.arange(imax - 1, imax + 3).tolist() == [imax - 1, imax, imin, imin + 1]
    assert mx.arange(0, 5, 2**31).tolist() == [0]
    assert mx.arange(0, 100, 2**32).tolist() == [0]
    check(mx.arange(2**40, 2**40 + 2, 1.0), np.arange(2**40, 2**40 + 2, dtype=np.float32), mx.float32)
    check(mx.arange(2**40, 2**40 + 3, dtype=mx.int64), np.arange(2**40, 2**40 + 3), mx.int64)
    with pytest.raises(ValueError):
        mx.arange(2**40)  # 2^40 elements
    with pytest.raises(ValueError):
        mx.arange(0, 2**31, 1)
    # Beyond int64 no overload matches, as in MLX.
    with pytest.raises(TypeError):
        mx.arange(0, 2**64)
    with pytest.raises(TypeError):
        mx.arange(2**63, 2**63 + 2)


def test_linspace():
    check(mx.linspace(0, 1, 5), np.linspace(0, 1, 5), mx.float32)
    check(mx.linspace(-2.5, 7), np.linspace(-2.5, 7), mx.float32, rtol=1e-5)
    check(mx.linspace(0, 10, num=4, dtype=mx.int32), np.linspace(0, 10, 4).astype(np.int32), mx.int32)
    check(mx.linspace(0, 1, 1), np.linspace(0, 1, 1))
    check(mx.linspace(0, 1, 0), np.linspace(0, 1, 0))
    check(mx.linspace(1, 0, 3, None), np.linspace(1, 0, 3), mx.float32)
    with pytest.raises(ValueError):
        mx.linspace(0, 1, -1)


def test_linspace_without_its_endpoint():
    for num in (0, 1, 2, 5, 50):
        check(mx.linspace(0, 10, num, endpoint=False), np.linspace(0, 10, num, endpoint=False), mx.float32)
    check(mx.linspace(-2.7, -0.7, 7, endpoint=False), np.linspace(-2.7, -0.7, 7, endpoint=False), rtol=1e-5)
    check(mx.linspace(0, 10, 5, False), np.linspace(0, 10, 5, False))  # NumPy's positional order
    check(mx.linspace(0, 10, 5, False, mx.int32), np.linspace(0, 10, 5, False).astype(np.int32), mx.int32)
    check(mx.linspace(0, 10, 5, mx.int32), np.linspace(0, 10, 5).astype(np.int32), mx.int32)  # braid's older order
    with pytest.raises(TypeError):
        mx.linspace(0, 1, 5, "no")


def test_empty_eye_and_zero_repeats():
    assert mx.eye(0).shape == (0, 0) and mx.eye(0, 3).shape == (0, 3)
    with pytest.raises(ValueError):
        mx.eye(-1)
    x = mx.zeros((3, 2))
    assert mx.repeat(x, 0, axis=0).shape == (0, 2)
    assert mx.repeat(x, 0, axis=1).shape == (3, 0)
    assert mx.repeat(x, 0).shape == (0,)


def test_eye_identity_tri():
    check(mx.eye(3), np.eye(3), mx.float32)
    check(mx.eye(3, 4), np.eye(3, 4))
    check(mx.eye(4, 3, 1), np.eye(4, 3, 1))
    check(mx.eye(4, k=-2, dtype=mx.int32), np.eye(4, k=-2), mx.int32)
    check(mx.eye(3, None, 0, None), np.eye(3), mx.float32)
    check(mx.identity(3), np.identity(3), mx.float32)
    check(mx.identity(2, mx.bool_), np.identity(2), mx.bool_)
    check(mx.tri(3), np.tri(3), mx.float32)
    check(mx.tri(3, 5, 1), np.tri(3, 5, 1))
    check(mx.tri(4, m=2, k=-1, dtype=mx.int8), np.tri(4, 2, -1), mx.int8)


def test_tril_triu():
    x = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    for k in (-1, 0, 2):
        check(mx.tril(mx.array(x), k), np.tril(x, k))
        check(mx.triu(mx.array(x), k=k), np.triu(x, k))
    check(mx.tril(x=mx.array(x)), np.tril(x))  # x is a keyword argument in MLX
    with pytest.raises(ValueError):
        mx.tril(mx.array([1.0, 2.0]))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    a = np.array([1, 2, 3], np.int32)
    b = np.array([4.0, 5.0], np.float32)
    c = np.array([6, 7, 8, 9], np.int32)
    out = mx.meshgrid(mx.array(a), mx.array(b), mx.array(c), sparse=sparse, indexing=indexing)
    expected = np.meshgrid(a, b, c, sparse=sparse, indexing=indexing)
    assert isinstance(out, list) and len(out) == 3
    for got, ref in zip(out, expected):
        check(got, ref)
    assert out[0].dtype == mx.int32 and out[1].dtype == mx.float32


def test_meshgrid_errors():
    with pytest.raises(ValueError):
        mx.meshgrid(mx.array([1, 2]), indexing="yx")


@pytest.mark.parametrize("name", ["hanning", "hamming", "bartlett", "blackman"])
def test_windows_match_numpy(name):
    ref = getattr(np, name)
    for M in (0, 1, 2, 7, 16):
        check(getattr(mx, name)(M), ref(M), mx.float32, rtol=1e-5, atol=1e-6)
    check(getattr(mx, name)(5, stream=mx.cpu), ref(5), rtol=1e-5, atol=1e-6)


def test_constants_and_numpy_aliases():
    assert mx.pi == np.pi and mx.e == np.e and mx.newaxis is None
    assert mx.euler_gamma == pytest.approx(0.5772156649015329)
    for name in ("inf", "Inf", "Infinity", "infty", "PINF"):
        assert getattr(mx, name) == float("inf")
    assert mx.NINF == float("-inf")
    assert np.isnan(mx.nan) and np.isnan(mx.NAN) and np.isnan(mx.NaN)
    assert mx.PZERO == 0.0 and np.signbit(mx.NZERO) and not np.signbit(mx.PZERO)
