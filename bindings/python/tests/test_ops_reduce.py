# Reductions, scans and softmax of braid.core against NumPy, as functions and array methods:
# axis None / int / negative / list, keepdims, output dtypes, empty inputs and errors.
import numpy as np
import pytest

import braid.core as mx

RNG = np.random.default_rng(11)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32)


def check(out, expected, rtol=1e-5, atol=1e-5):
    assert isinstance(out, mx.array)
    got = np.array(out)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def logsumexp_ref(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


REDUCTIONS = [
    ("sum", np.sum),
    ("prod", np.prod),
    ("min", np.min),
    ("max", np.max),
    ("mean", np.mean),
    ("median", np.median),
    ("logsumexp", logsumexp_ref),
    ("all", np.all),
    ("any", np.any),
]
METHODS = {"sum", "prod", "min", "max", "mean", "logsumexp", "all", "any"}
AXES = [None, 0, 1, -1, [0, 2], (1, 2), [-1, 0], [0, 1, 2]]


@pytest.mark.parametrize("name,ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_match_numpy(name, ref):
    x = X if name not in ("all", "any") else (np.abs(X) > 0.5)
    a = mx.array(x)
    fn = getattr(mx, name)
    for axis in AXES:
        np_axis = tuple(axis) if isinstance(axis, list) else axis
        for keepdims in (False, True):
            expected = ref(x, axis=np_axis, keepdims=keepdims)
            check(fn(a, axis, keepdims), expected)
            check(fn(a, axis=axis, keepdims=keepdims), expected)
            if name in METHODS:
                check(getattr(a, name)(axis, keepdims), expected)
                check(getattr(a, name)(axis=axis, keepdims=keepdims), expected)
    check(fn(a), ref(x))
    if name in METHODS:
        check(getattr(a, name)(), ref(x))


def test_reduction_output_dtypes():
    assert mx.sum(mx.array([True, True])).dtype == mx.int32
    assert mx.sum(mx.array([True, True])).item() == 2
    assert mx.sum(mx.array([1, 2], mx.int8)).dtype == mx.int32
    assert mx.sum(mx.array([1, 2], mx.uint8)).dtype == mx.uint32
    assert mx.sum(mx.array([1, 2], mx.int64)).dtype == mx.int64
    assert mx.sum(mx.array([1, 2], mx.float16)).dtype == mx.float16
    assert mx.prod(mx.array([3, 4], mx.int16)).dtype == mx.int32
    assert mx.max(mx.array([3, 4], mx.int16)).dtype == mx.int16
    assert mx.mean(mx.array([1, 2])).dtype == mx.float32
    assert mx.mean(mx.array([1, 2])).item() == 1.5
    assert mx.mean(mx.array([1, 2], mx.float16)).dtype == mx.float16
    assert mx.var(mx.array([1, 2])).dtype == mx.float32
    assert mx.all(mx.array([1, 2])).dtype == mx.bool_
    assert mx.any(mx.array([0.0, 0.0])).item() is False


def test_reductions_of_integers_match_numpy():
    x = RNG.integers(-50, 50, size=(4, 6)).astype(np.int32)
    a = mx.array(x)
    np.testing.assert_array_equal(np.array(mx.sum(a, axis=1)), x.sum(axis=1))
    np.testing.assert_array_equal(np.array(a.max(0)), x.max(0))
    np.testing.assert_array_equal(np.array(a.min(-1, keepdims=True)), x.min(-1, keepdims=True))


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std_with_ddof(name):
    ref = getattr(np, name)
    a = mx.array(X)
    for axis in [None, 0, -1, [0, 2]]:
        np_axis = tuple(axis) if isinstance(axis, list) else axis
        for ddof in (0, 1):
            for keepdims in (False, True):
                expected = ref(X, axis=np_axis, ddof=ddof, keepdims=keepdims)
                check(getattr(mx, name)(a, axis, keepdims, ddof), expected)
                check(getattr(mx, name)(a, axis=axis, keepdims=keepdims, ddof=ddof), expected)
                check(getattr(a, name)(axis, keepdims, ddof), expected)
                check(getattr(a, name)(axis=axis, ddof=ddof, keepdims=keepdims), expected)


def test_var_and_std_of_complex_are_real():
    z = (RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))).astype(np.complex64)
    a = mx.array(z)
    for name in ("var", "std"):
        ref = getattr(np, name)
        for axis, ddof in [(None, 0), (1, 0), (0, 1)]:
            out = getattr(mx, name)(a, axis=axis, ddof=ddof)
            assert out.dtype == mx.float32
            check(out, ref(z, axis=axis, ddof=ddof))


def test_logcumsumexp_of_complex_is_the_log_of_the_running_sum():
    z = (RNG.uniform(-1, 1, size=(4, 6)) + 1j * RNG.uniform(-0.5, 0.5, size=(4, 6))).astype(np.complex64)
    for axis in (0, 1):
        out = mx.logcumsumexp(mx.array(z), axis=axis)
        assert out.dtype == mx.complex64
        np.testing.assert_allclose(np.exp(np.array(out)), np.cumsum(np.exp(z), axis=axis), rtol=1e-5, atol=1e-5)
    back = mx.logcumsumexp(mx.array(z), axis=1, reverse=True)
    want = np.cumsum(np.exp(z)[:, ::-1], axis=1)[:, ::-1]
    np.testing.assert_allclose(np.exp(np.array(back)), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_argmin_argmax(name):
    ref = getattr(np, name)
    a = mx.array(X)
    for axis in [0, 1, 2, -1, -3]:
        out = getattr(mx, name)(a, axis)
        assert out.dtype == mx.uint32
        np.testing.assert_array_equal(np.array(out), ref(X, axis=axis))
        np.testing.assert_array_equal(np.array(getattr(a, name)(axis=axis, keepdims=True)),
                                      ref(X, axis=axis, keepdims=True))
    assert getattr(mx, name)(a).item() == ref(X)
    assert getattr(a, name)().shape == ()
    assert getattr(mx, name)(a, keepdims=True).shape == (1, 1, 1)
    # The first of equal values wins.
    assert getattr(mx, name)(mx.array([2, 2, 2])).item() == 0
    with pytest.raises(TypeError):
        getattr(mx, name)(a, [0, 1])  # one axis only


SCANS = [
    ("cumsum", np.cumsum),
    ("cumprod", np.cumprod),
    ("cummax", np.maximum.accumulate),
    ("cummin", np.minimum.accumulate),
    ("logcumsumexp", np.logaddexp.accumulate),
]


def scan_ref(ref, x, axis, reverse, inclusive, identity):
    if axis is None:
        x, axis = x.reshape(-1), 0
    if reverse:
        x = np.flip(x, axis)
    out = ref(x, axis=axis)
    if not inclusive:
        pad = np.full_like(np.take(out, [0], axis=axis), identity)
        out = np.concatenate([pad, np.delete(out, -1, axis=axis)], axis=axis)
    if reverse:
        out = np.flip(out, axis)
    return out


@pytest.mark.parametrize("name,ref", SCANS, ids=[s[0] for s in SCANS])
def test_scans_match_numpy(name, ref):
    x = RNG.uniform(0.5, 1.5, size=(3, 4)).astype(np.float32)
    identity = {"cumsum": 0, "cumprod": 1, "cummax": -np.inf, "cummin": np.inf, "logcumsumexp": -np.inf}[name]
    a = mx.array(x)
    fn = getattr(mx, name)
    for axis in [None, 0, 1, -1]:
        for reverse in (False, True):
            for inclusive in (True, False):
                if not inclusive and name in ("cummax", "cummin"):
                    continue  # the exclusive start of a max/min scan is a dtype bound, not NumPy's
                expected = scan_ref(ref, x, axis, reverse, inclusive, identity)
                check(fn(a, axis, reverse=reverse, inclusive=inclusive), expected)
                check(getattr(a, name)(axis, reverse=reverse, inclusive=inclusive), expected)
    check(fn(a), ref(x.reshape(-1)))
    with pytest.raises(TypeError):
        fn(a, 0, True)  # reverse is keyword-only


def test_scan_dtypes():
    assert mx.cumsum(mx.array([True, True, False])).dtype == mx.int32
    assert mx.cumsum(mx.array([True, True, False])).tolist() == [1, 2, 2]
    assert mx.cumsum(mx.array([1, 2], mx.int8)).dtype == mx.int8
    assert mx.cumprod(mx.array([[2, 3], [4, 5]]), axis=1).tolist() == [[2, 6], [4, 20]]


def test_softmax():
    a = mx.array(X)

    def ref(x, axis):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    check(mx.softmax(a), ref(X, None))
    check(mx.softmax(a, -1), ref(X, -1))
    check(mx.softmax(a, axis=0), ref(X, 0))
    check(mx.softmax(a, axis=[0, 2]), ref(X, (0, 2)))
    check(mx.softmax(a, -1, precise=True), ref(X, -1))
    h = mx.softmax(mx.array(X, mx.float16), axis=-1, precise=True)
    assert h.dtype == mx.float16
    check(h, ref(X, -1), rtol=1e-2, atol=1e-3)
    assert mx.softmax(mx.array([1, 2])).dtype == mx.float32
    with pytest.raises(TypeError):
        mx.softmax(a, -1, True)  # precise is keyword-only


def test_empty_inputs():
    e = mx.zeros((0, 3))
    assert mx.sum(e).item() == 0.0
    check(mx.sum(e, axis=0), np.zeros(3))
    assert mx.sum(e, axis=1).shape == (0,)
    assert mx.prod(e).item() == 1.0
    assert mx.all(e).item() is True
    assert mx.any(e).item() is False
    assert mx.cumsum(e, axis=1).shape == (0, 3)
    with pytest.raises(ValueError):
        mx.max(e)
    with pytest.raises(ValueError):
        mx.argmax(e)


def test_zero_dimensional_and_empty_axis_lists():
    s = mx.array(3.0)
    assert mx.sum(s).item() == 3.0
    assert mx.max(s, keepdims=True).shape == ()
    a = mx.array([[1, 2], [3, 4]])
    assert mx.sum(a, axis=[]).tolist() == [[1, 2], [3, 4]]


def test_numpy_integers_as_axes():
    a = mx.array(X)
    check(mx.sum(a, axis=np.int64(1)), X.sum(axis=1))
    check(a.max(axis=[np.int32(0), -1]), X.max(axis=(0, 2)))
    np.testing.assert_array_equal(np.array(mx.argmax(a, np.int64(2))), np.argmax(X, axis=2))


def test_errors():
    a = mx.array(X)
    with pytest.raises(IndexError):  # MLX's std::out_of_range for a reduction's axis
        mx.sum(a, axis=3)
    with pytest.raises(IndexError):
        mx.mean(a, axis=-4)
    with pytest.raises(ValueError):
        mx.sum(a, axis=[0, 0])
    with pytest.raises(ValueError):
        mx.argmax(a, 3)
    with pytest.raises(ValueError):
        mx.cumsum(a, 5)
    with pytest.raises(TypeError):
        mx.sum(a, axis="x")
    with pytest.raises(TypeError):
        mx.sum(a, axis=[0, 1.0])
    with pytest.raises(TypeError):
        mx.sum(a, None, False, mx.cpu)  # stream is keyword-only
    with pytest.raises(TypeError):
        mx.sum(a=a)  # a is positional-only


def test_number_of_elements():
    a = mx.zeros((2, 3, 4))
    n = mx.number_of_elements(a)
    assert n.shape == () and n.dtype == mx.int32 and n.item() == 24
    assert mx.number_of_elements(a, [0, 2]).item() == 8
    inv = mx.number_of_elements(a, axes=[1], inverted=True, dtype=mx.float32)
    assert inv.dtype == mx.float32
    assert abs(inv.item() - 1 / 3) < 1e-7


def test_stream_keyword():
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    check(mx.sum(a, 0, stream=mx.cpu), [4.0, 6.0])
    check(a.mean(axis=1, stream=mx.default_stream(mx.cpu)), [1.5, 3.5])
    check(a.cumsum(stream=mx.cpu), [1.0, 3.0, 6.0, 10.0])
