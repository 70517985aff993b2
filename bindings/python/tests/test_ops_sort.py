# Sorting and selection ops of braid.core (axis -1 by default, None flattens), checked against
# NumPy.
import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(7)


def check(out, expected):
    out_np = np.array(out)
    assert out_np.shape == expected.shape
    np.testing.assert_array_equal(out_np, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16])
def test_sort_last_axis_by_default(dtype):
    x = (rng.standard_normal((3, 5, 4)) * 10).astype(dtype)
    a = mx.array(x)
    check(mx.sort(a), np.sort(x))
    check(mx.sort(a, axis=0), np.sort(x, axis=0))
    check(mx.sort(a, 1), np.sort(x, axis=1))
    check(mx.sort(a, axis=None), np.sort(x, axis=None))


def test_sort_puts_nan_last_and_handles_empty():
    x = np.array([3.0, np.nan, -1.0, 2.0], np.float32)
    check(mx.sort(mx.array(x)), np.sort(x))
    e = np.zeros((0, 3), np.float32)
    assert mx.sort(mx.array(e)).shape == (0, 3)


def test_argsort_is_stable_and_uint32():
    x = np.array([[3, 1, 2, 1, 3], [0, 0, 5, -1, 0]], np.int32)
    out = mx.argsort(mx.array(x))
    assert out.dtype == mx.uint32
    check(out, np.argsort(x, kind="stable").astype(np.uint32))
    check(mx.argsort(mx.array(x), axis=0), np.argsort(x, axis=0, kind="stable").astype(np.uint32))
    check(mx.argsort(mx.array(x), axis=None), np.argsort(x, axis=None, kind="stable").astype(np.uint32))


@pytest.mark.parametrize("kth", [0, 3, -1, 7])
def test_partition_places_kth(kth):
    x = rng.permutation(64).astype(np.float32).reshape(8, 8)
    out = np.array(mx.partition(mx.array(x), kth))
    ref = np.sort(x, axis=-1)
    k = kth % 8
    np.testing.assert_array_equal(out[:, k], ref[:, k])
    assert np.all(out[:, :k] <= out[:, k : k + 1])
    assert np.all(out[:, k + 1 :] >= out[:, k : k + 1])
    np.testing.assert_array_equal(np.sort(out, axis=-1), ref)


def test_partition_over_axis_and_flattened():
    x = rng.permutation(24).astype(np.int32).reshape(4, 6)
    out = np.array(mx.partition(mx.array(x), 2, axis=0))
    np.testing.assert_array_equal(out[2], np.sort(x, axis=0)[2])
    flat = np.array(mx.partition(mx.array(x), kth=10, axis=None))
    assert flat.shape == (24,) and flat[10] == 10


def test_argpartition_indices_partition():
    x = rng.permutation(40).astype(np.float32).reshape(4, 10)
    idx = mx.argpartition(mx.array(x), 4)
    assert idx.dtype == mx.uint32
    vals = np.take_along_axis(x, np.array(idx).astype(np.int64), axis=-1)
    np.testing.assert_array_equal(vals[:, 4], np.sort(x, axis=-1)[:, 4])
    assert np.all(vals[:, :4] <= vals[:, 4:5])
    flat = np.array(mx.argpartition(mx.array(x), 5, axis=None)).astype(np.int64)
    assert x.ravel()[flat][5] == np.sort(x, axis=None)[5]


def test_topk_gives_the_k_largest():
    x = rng.standard_normal((5, 9)).astype(np.float32)
    a = mx.array(x)
    out = np.sort(np.array(mx.topk(a, 3)), axis=-1)
    np.testing.assert_array_equal(out, np.sort(x, axis=-1)[:, -3:])
    out = np.sort(np.array(mx.topk(a, k=2, axis=0)), axis=0)
    np.testing.assert_array_equal(out, np.sort(x, axis=0)[-2:])
    out = np.sort(np.array(mx.topk(a, 4, axis=None)))
    np.testing.assert_array_equal(out, np.sort(x, axis=None)[-4:])
    check(mx.sort(mx.topk(a, 9)), np.sort(x))
    with pytest.raises(ValueError):
        mx.topk(a, 10)


def test_sort_accepts_numpy_input_and_stream():
    x = np.array([3, 1, 2], np.int32)
    check(mx.sort(x, stream=mx.cpu), np.sort(x))
    with pytest.raises(TypeError):
        mx.sort(mx.array(x), 0, mx.cpu)
