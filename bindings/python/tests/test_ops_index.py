# Indexing ops of braid.core as functions (slice, take, gather, scatter, ...), checked against
# NumPy.
import numpy as np
import pytest

import braid.core as mx


def arange(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def check(out, expected):
    out_np = np.array(out)
    assert out_np.shape == expected.shape
    np.testing.assert_array_equal(out_np, expected)


def test_dynamic_slice_at_array_positions():
    x = arange(2, 3)
    a = mx.array(x)
    check(mx.slice(a, mx.array(1), (0,), (1, 2)), x[1:2, 0:2])
    check(mx.slice(a, start_indices=mx.array(1), axes=(1,), slice_size=(2, 1)), x[:, 1:2])
    check(mx.slice(a, mx.array([1, 1]), [0, 1], [1, 2]), x[1:2, 1:3])
    # A start past the end is clamped so that the slice fits.
    check(mx.slice(a, mx.array(5), (1,), (2, 2)), x[:, 1:3])


def test_dynamic_slice_update():
    x = np.zeros((3, 3), np.float32)
    out = mx.slice_update(mx.array(x), mx.array(np.ones((1, 2), np.float32)), mx.array([1, 1]), (0, 1))
    ref = x.copy()
    ref[1:2, 1:3] = 1
    check(out, ref)
    out = mx.slice_update(mx.array(x), mx.array(np.full((3, 1), 2, np.float32)), mx.array(2), axes=[1])
    ref = x.copy()
    ref[:, 2:3] = 2
    check(out, ref)


def test_take_int_and_array_indices():
    x = arange(3, 4)
    a = mx.array(x)
    check(mx.take(a, 5), np.take(x, 5))
    check(mx.take(a, 2, axis=1), np.take(x, 2, axis=1))
    check(mx.take(a, -2, axis=0), np.take(x, -2, axis=0))
    idx = np.array([[0, 2], [1, -1]], np.int32)
    check(mx.take(a, mx.array(idx)), np.take(x, idx))
    check(mx.take(a, mx.array(idx), axis=1), np.take(x, idx, axis=1))
    check(mx.take(a, [2, 0], axis=0), np.take(x, [2, 0], axis=0))
    check(mx.take(a, mx.array(np.array([1, 0], np.uint8)), axis=-1), np.take(x, [1, 0], axis=-1))
    assert mx.take(a, mx.array(np.zeros((0,), np.int32)), axis=0).shape == (0, 4)
    with pytest.raises(ValueError):
        mx.take(a, mx.array([0.5]))


def test_take_along_axis():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    a = mx.array(x)
    idx = np.argsort(x, axis=1).astype(np.int32)
    check(mx.take_along_axis(a, mx.array(idx), axis=1), np.take_along_axis(x, idx, axis=1))
    idx0 = np.array([[2, 0, 1, 0]], np.int32)
    check(mx.take_along_axis(a, mx.array(idx0), axis=0), np.take_along_axis(x, idx0, axis=0))
    flat = np.array([11, 0, 5], np.int32)
    check(mx.take_along_axis(a, mx.array(flat), axis=None), np.take_along_axis(x.ravel(), flat, axis=0))
    check(mx.take_along_axis(a, mx.array(flat)), np.take_along_axis(x.ravel(), flat, axis=0))


def test_put_along_axis():
    x = arange(3, 4)
    idx = np.array([[1], [3], [0]], np.int32)
    vals = np.array([[10], [20], [30]], np.float32)
    ref = x.copy()
    np.put_along_axis(ref, idx, vals, axis=1)
    check(mx.put_along_axis(mx.array(x), mx.array(idx), mx.array(vals), axis=1), ref)
    ref = x.copy()
    np.put_along_axis(ref, idx, -1.0, axis=1)
    check(mx.put_along_axis(mx.array(x), mx.array(idx), -1.0, axis=1), ref)
    flat = np.array([0, 7], np.int32)
    ref = x.copy().ravel()
    ref[flat] = 5
    check(mx.put_along_axis(mx.array(x), mx.array(flat), mx.array(np.array([5, 5], np.float32)), axis=None),
          ref.reshape(3, 4))


def test_scatter_add_axis_accumulates_duplicates():
    x = np.zeros((2, 4), np.float32)
    idx = np.array([[0, 0, 3], [1, 1, 1]], np.int32)
    vals = np.ones((2, 3), np.float32)
    ref = x.copy()
    for i in range(2):
        np.add.at(ref[i], idx[i], vals[i])
    check(mx.scatter_add_axis(mx.array(x), mx.array(idx), mx.array(vals), 1), ref)


def test_gather_slices_at_index_arrays():
    x = arange(4, 5)
    a = mx.array(x)
    idx = np.array([3, 0, 2], np.int32)
    out = mx.gather(a, mx.array(idx), 0, (1, 5))
    check(out, x[idx][:, None, :])
    i0, i1 = np.array([0, 3], np.int32), np.array([4, 1], np.int32)
    out = mx.gather(a, [mx.array(i0), mx.array(i1)], [0, 1], [1, 1])
    check(out, x[i0, i1][:, None, None])
    out = mx.gather(a, indices=[1, 2], axes=(0,), slice_sizes=(1, 2))
    check(out, x[[1, 2], :2][:, None, :])


def test_scatter_family():
    x = arange(4, 3)
    idx = np.array([0, 2, 0], np.int32)
    upd = (np.arange(9, dtype=np.float32) + 1).reshape(3, 1, 3)

    ref = x.copy()
    ref[[2]] = upd[1]
    out = np.array(mx.scatter(mx.array(x), mx.array(idx[1:2]), mx.array(upd[1:2]), 0))
    np.testing.assert_array_equal(out, ref)

    for op, ufunc in [
        (mx.scatter_add, np.add),
        (mx.scatter_prod, np.multiply),
        (mx.scatter_max, np.maximum),
        (mx.scatter_min, np.minimum),
    ]:
        ref = x.copy()
        ufunc.at(ref, idx, upd[:, 0, :])
        check(op(mx.array(x), mx.array(idx), mx.array(upd), axes=[0]), ref)

    i0, i1 = np.array([1, 3], np.int32), np.array([2, 0], np.int32)
    ref = x.copy()
    np.add.at(ref, (i0, i1), np.array([100, 200], np.float32))
    upd2 = mx.array(np.array([100, 200], np.float32).reshape(2, 1, 1))
    out = mx.scatter_add(mx.array(x), [mx.array(i0), mx.array(i1)], upd2, [0, 1])
    check(out, ref)


def test_masked_scatter_fills_true_positions_in_order():
    x = arange(2, 3)
    mask = np.array([[True, False, True], [False, True, False]])
    src = np.array([10, 20, 30, 40], np.float32)
    ref = x.copy()
    ref[mask] = src[: mask.sum()]
    check(mx.masked_scatter(mx.array(x), mx.array(mask), mx.array(src)), ref)
    # A mask over the leading axes selects whole rows.
    row_mask = np.array([False, True])
    ref = x.copy()
    ref[row_mask] = src[:3]
    check(mx.masked_scatter(mx.array(x), mx.array(row_mask), mx.array(src)), ref)


def test_depends_takes_arrays_or_lists():
    a = mx.array([1.0, 2.0, 3.0])
    b, c = mx.exp(a), mx.log(a)
    (out,) = mx.depends([b], [c])
    assert mx.array_equal(out, b).item()
    out = mx.depends(b, c)
    assert isinstance(out, mx.array) and mx.array_equal(out, b).item()
    out = mx.depends([b, c], a)
    assert len(out) == 2 and mx.array_equal(out[1], c).item()
