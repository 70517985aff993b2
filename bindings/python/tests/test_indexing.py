# Indexing of braid.core.array against NumPy: a[idx], a[idx] = v and a.at[idx].add(v) and its
# kin, over index tuples drawn at random (ints, slices with any start/stop/step, None, Ellipsis,
# bool scalars, integer arrays of 0-2 dimensions as braid arrays, lists or NumPy arrays), plus
# MLX's own cases and errors.
from itertools import permutations

import numpy as np
import pytest

import braid.core as mx

SEED = 20240611
SHAPES = [(7,), (4, 5), (3, 4, 5), (2, 3, 2, 4), (0, 3), (3, 0, 2), ()]
INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]


def as_mx(idx):
    """The braid form of a NumPy-side index: NumPy arrays become braid arrays unless marked."""
    if isinstance(idx, tuple):
        return tuple(as_mx(i) for i in idx)
    if isinstance(idx, ArrayIndex):
        return idx.braid()
    return idx


def as_np(idx):
    if isinstance(idx, tuple):
        return tuple(as_np(i) for i in idx)
    if isinstance(idx, ArrayIndex):
        return idx.values
    return idx


class ArrayIndex:
    """An integer index array and how it is handed to braid: as an array, a list or NumPy."""

    def __init__(self, values, form):
        self.values = values
        self.form = form

    def braid(self):
        if self.form == "list" and self.values.ndim > 0:
            return self.values.tolist()
        if self.form == "numpy":
            return self.values
        return mx.array(self.values)

    def __repr__(self):
        return f"{self.form}({self.values.tolist()}, {self.values.dtype})"


def random_slice(rng, n):
    def bound():
        return None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))

    step = [None, 1, 1, 2, 3, -1, -1, -2, -3][rng.integers(0, 9)]
    return slice(bound(), bound(), step)


def random_array(rng, n, bshape, allow_unsigned=True):
    shape = list(bshape[rng.integers(0, len(bshape) + 1):])
    shape = [1 if rng.random() < 0.25 else d for d in shape]
    dtype = INDEX_DTYPES[rng.integers(0, len(INDEX_DTYPES))]
    unsigned = np.issubdtype(dtype, np.unsignedinteger)
    if unsigned and not allow_unsigned:
        dtype = np.int32
        unsigned = False
    low = 0 if unsigned else -n
    high = n if dtype != np.int8 else min(n, 127)
    values = rng.integers(low, high, size=shape).astype(dtype)
    form = ["array", "array", "list", "numpy"][rng.integers(0, 4)]
    return ArrayIndex(values, form)


def random_index(rng, shape, arrays=True, extras=True):
    """A NumPy-side index for an array of `shape` (a tuple, or sometimes a bare entry)."""
    ndim = len(shape)
    k = int(rng.integers(0, ndim + 1))
    ellipsis = ndim > 0 and rng.random() < 0.3
    split = int(rng.integers(0, k + 1)) if ellipsis else k
    axes = list(range(split)) + list(range(ndim - (k - split), ndim))
    bshape = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3)))
    entries = []
    for ax in axes:
        n = shape[ax]
        kinds = ["int", "slice", "slice"] + (["array", "array"] if arrays else [])
        kind = kinds[rng.integers(0, len(kinds))] if n > 0 else "slice"
        if kind == "int":
            entries.append(int(rng.integers(-n, n)))
        elif kind == "slice":
            entries.append(random_slice(rng, n))
        else:
            entries.append(random_array(rng, n, bshape))
    if ellipsis:
        entries.insert(split, Ellipsis)
    if extras:
        for _ in range(rng.integers(0, 3)):
            extra = [None, None, True, False][rng.integers(0, 4)] if arrays else None
            entries.insert(int(rng.integers(0, len(entries) + 1)), extra)
    if len(entries) == 1 and rng.random() < 0.5:
        return entries[0]
    return tuple(entries)


def sources(rng, shape, dtype=np.float32):
    """The same values as a contiguous braid array and as a transposed (strided) one."""
    values = (rng.integers(-50, 50, size=shape) if shape else np.array(rng.integers(-50, 50))).astype(dtype)
    contiguous = mx.array(values)
    rev = tuple(reversed(range(len(shape))))
    strided = mx.array(np.ascontiguousarray(values.transpose(rev))).T if shape else contiguous
    return values, [contiguous, strided]


def numpy_result(values, idx):
    """values[idx] in NumPy, or None where NumPy cannot broadcast the index arrays together."""
    try:
        return values[as_np(idx)]
    except IndexError as e:
        assert "shape mismatch" in str(e)
        return None


def assert_same(got, expected, context):
    assert tuple(got.shape) == expected.shape, f"{context}: shape {got.shape} != {expected.shape}"
    np.testing.assert_array_equal(np.array(got), expected, err_msg=str(context))


# ---- reading ----------------------------------------------------------------------------


def test_getitem_matches_numpy_on_random_indices():
    rng = np.random.default_rng(SEED)
    print("seed", SEED)
    count = 0
    for shape in SHAPES:
        values, arrays = sources(rng, shape)
        for _ in range(120):
            idx = random_index(rng, shape)
            expected = numpy_result(values, idx)
            for a in arrays:
                if expected is None:
                    with pytest.raises(ValueError):
                        a[as_mx(idx)]
                    continue
                assert_same(a[as_mx(idx)], expected, (shape, idx))
                count += 1
    assert count > 1000


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int16, np.int64, np.float16, np.complex64])
def test_getitem_keeps_every_dtype(dtype):
    rng = np.random.default_rng(SEED + 1)
    values = rng.integers(0, 3, size=(3, 4, 5)).astype(dtype)
    a = mx.array(values)
    for _ in range(30):
        idx = random_index(rng, values.shape)
        if numpy_result(values, idx) is None:
            continue
        got = a[as_mx(idx)]
        assert got.dtype == a.dtype
        assert_same(got, values[as_np(idx)], idx)


def test_getitem_of_a_sliced_view_indexes_the_view():
    values = np.arange(16 * 8).reshape(16, 8)
    a = mx.array(values)[::2, :]
    idx = np.arange(8)[::2]
    assert_same(a[mx.arange(8)[::2] if hasattr(mx, "arange") else mx.array(idx), mx.array(idx)],
                values[::2][idx, idx], "strided")
    assert_same(a[::-3, 1::3][[0, 2], None], values[::2][::-3, 1::3][[0, 2], None], "view of view")


def test_mlx_indexing_cases():
    assert mx.array([1])[...].shape == (1,)
    a_np = np.arange(64, dtype=np.float32)
    assert_same(mx.array(a_np)[2:50:4], a_np[2:50:4], "2:50:4")
    a_np = np.arange(64, dtype=np.int32).reshape(8, 8)
    a = mx.array(a_np)
    idx_np = np.array([0, 1, 2, 7, 5], dtype=np.uint32)
    idx = mx.array(idx_np)
    cases = [
        (idx, idx_np), (5, 5), (-1, -1), ((), ()), (None, None), ((slice(None), None), (slice(None), None)),
        ((slice(2, 4), slice(5, None)), (slice(2, 4), slice(5, None))), ((slice(None), slice(0, 5)),) * 2,
        ((slice(None), slice(None, None, 2)),) * 2, ((slice(-2, None), slice(None, -1)),) * 2,
        (slice(8, 3), slice(8, 3)), (slice(7, 10), slice(7, 10)), ((0, slice(None, 5)),) * 2,
        ((slice(None), -1),) * 2, ((idx, 0), (idx_np, 0)), ((idx, slice(None, 5)), (idx_np, slice(None, 5))),
        ((slice(None), idx), (slice(None), idx_np)),
    ]
    for got_idx, np_idx in cases:
        assert_same(a[got_idx], a_np[np_idx], np_idx)
    assert a[0, 0].item() == 0 and a[0, 0].ndim == 0

    a_np = np.arange(16).reshape(4, 4)
    for i, j in [([0, 1, 2, 3], [0, 1, 2, 3]), ([0, 1, 2, 3], [1, 0, 3, 3]), ([[0, 1]], [[0], [1], [3]])]:
        assert_same(mx.array(a_np)[mx.array(i), mx.array(j)], a_np[np.array(i), np.array(j)], (i, j))

    a_np = np.arange(64).reshape(2, 4, 2, 4)
    a = mx.array(a_np)
    arr = np.array
    cases = [
        (0, arr([0, 1, 2])), (slice(0, 1), arr([0, 1, 2])),
        (slice(0, 1), arr([0, 1, 2]), slice(None), slice(0, 4, 2)),
        (slice(0, 1), arr([0, 1, 2]), slice(None), arr([1, 2, 0])),
        (slice(0, 1), arr([0, 1, 2]), 1, arr([1, 2, 0])),
        (slice(0, 1), arr([0, 1, 2]), arr([1, 0, 0]), slice(0, 1)),
        (slice(0, 1), arr([[0], [1], [2]]), arr([[1, 0, 0]]), slice(0, 1)),
        (slice(0, 2), arr([[0], [1], [2]]), slice(0, 2), arr([[1, 0, 0]])),
    ]
    cases += list(permutations([slice(None), slice(None), 0, arr([1, 0])]))
    cases += list(permutations([slice(None), slice(None), 0, arr([1, 0]), None, None]))
    cases += list(permutations([0, arr([1, 0]), None, Ellipsis, slice(None)]))
    for c in cases:
        got = a[tuple(mx.array(i) if isinstance(i, np.ndarray) else i for i in c)]
        assert_same(got, a_np[c], c)

    a_np = np.arange(10).reshape(5, 2)
    assert_same(mx.array(a_np)[2:-1, 0], a_np[2:-1, 0], "2:-1, 0")


def test_negative_steps_match_numpy():
    a_np = np.arange(20)
    a = mx.array(a_np)
    for s in [slice(None, None, -1), slice(-3, 3, -1), slice(25, -50, -1), slice(None, None, -3),
              slice(-3, 3, -3), slice(25, -50, -3), slice(0, 20, -3), slice(-21, None, -1), slice(None, -21, -1)]:
        assert_same(a[s], a_np[s], s)
    a_np = np.arange(3 * 6 * 4).reshape(3, 6, 4)
    a = mx.array(a_np)
    for idx in [(Ellipsis, slice(None, None, -1)), (slice(None), slice(None, None, -1), slice(None)),
                (slice(None, None, -1), Ellipsis), (slice(None, None, -1), slice(1, 5, 2), slice(None, None, -2)),
                (slice(None, None, -1), slice(None, None, -2), slice(1, 5, 2)),
                (slice(None, None, -1), slice(None, None, -3), slice(None, None, -2))]:
        assert_same(a[idx], a_np[idx], idx)


def test_huge_slice_bounds_clamp():
    # Bounds within the 32-bit range of dimensions clamp as in NumPy; steps may be any int.
    a_np = np.arange(10)
    a = mx.array(a_np)
    for s in [slice(-2**31, 2**31 - 1), slice(2**31 - 1, None, -1), slice(None, -2**31, -2),
              slice(3, 2**31 - 1, 4), slice(None, None, 2**62), slice(None, None, -2**62), slice(3, None, 2**40)]:
        assert_same(a[s], a_np[s], s)
    # Beyond it, MLX's ValueError.
    for s in [slice(-2**40, 2**40), slice(2**62, None, -1), slice(None, -2**62, -2), slice(-2**70, 2**70, 3)]:
        with pytest.raises(ValueError):
            a[s]


def test_large_arrays_gather_and_scatter_as_numpy():
    rng = np.random.default_rng(SEED + 6)
    values = rng.random((600, 300)).astype(np.float32)
    a = mx.array(values)
    rows = rng.integers(-600, 600, size=(200, 3))
    cols = rng.integers(0, 300, size=(3,))
    assert_same(a[rows, 7:290:3], values[rows, 7:290:3], "rows, strided slice")
    assert_same(a[rows, cols], values[rows, cols], "rows, cols")
    assert_same(a.T[::-1][cols], values.T[::-1][cols], "reversed transposed view")
    update = rng.random((600, 95)).astype(np.float32)
    b = a[...]
    b[:, 5:290:3] = mx.array(update)
    expected = values.copy()
    expected[:, 5:290:3] = update
    assert_same(b, expected, "strided slice update")
    expected = values.copy()
    np.add.at(expected, (rows[:, 0], slice(10, None)), 1.0)
    np.testing.assert_allclose(np.array(a.at[mx.array(rows[:, 0]), 10:].add(1.0)), expected, rtol=1e-6)


def test_bfloat16_arrays_index_and_update():
    values = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = mx.array(values).astype(mx.bfloat16)
    got = a[mx.array([3, 0]), ::-2]
    assert got.dtype == mx.bfloat16
    assert_same(got.astype(mx.float32), values[[3, 0], ::-2], "bfloat16 get")
    a[1:3, mx.array([0, 5])] = 2.5
    expected = values.copy()
    expected[1:3, [0, 5]] = 2.5
    assert a.dtype == mx.bfloat16
    assert_same(a.astype(mx.float32), expected, "bfloat16 set")


def test_numpy_scalars_index_as_python_scalars():
    a_np = np.arange(12).reshape(3, 4)
    a = mx.array(a_np)
    assert_same(a[np.int64(1), np.int32(-1)], a_np[1, -1], "numpy ints")
    assert_same(a[np.uint8(2)], a_np[2], "numpy uint8")
    assert_same(a[np.bool_(True)], a_np[np.bool_(True)], "numpy bool")
    assert_same(a[mx.array(True)], a_np[np.array(True)], "0-d bool array")
    assert_same(a[mx.array(1)], a_np[np.array(1)], "0-d int array")


def test_boolean_scalars_add_an_axis_as_in_numpy():
    a_np = np.arange(24).reshape(2, 3, 4)
    a = mx.array(a_np)
    for idx in [True, False, (0, slice(None), True), (slice(None), True, 0), (Ellipsis, True),
                (True, [0, 1]), (False, 1), (None, True, None)]:
        assert_same(a[idx], a_np[idx], idx)


def test_indexing_errors():
    a = mx.array(np.arange(12).reshape(3, 4))
    with pytest.raises(IndexError):
        a[3]
    with pytest.raises(IndexError):
        a[0, -5]
    # Beyond the 32-bit range of dimensions: ValueError, as MLX (IndexError within it).
    for big in (2**32, -2**31 - 1, 2**70):
        with pytest.raises(ValueError):
            a[big]
        with pytest.raises(ValueError):
            a[:big]
        with pytest.raises(ValueError):
            a[big:]
    assert a[:2**31 - 1].shape == (3, 4) and a[-2**31:].shape == (3, 4)
    with pytest.raises(ValueError):
        a[0, 0, 0]
    with pytest.raises(ValueError):
        a[..., 0, ...]
    with pytest.raises(ValueError):
        a[1.5]
    with pytest.raises(ValueError):
        a["a"]
    with pytest.raises(ValueError):
        a[mx.array([0.0, 1.0])]
    with pytest.raises(ValueError):
        a[mx.array([True, False, True])]
    with pytest.raises(ValueError):
        a[[True, False, True]]
    with pytest.raises(ValueError):
        a[1.0:2]
    with pytest.raises(ValueError):
        a[::0]
    with pytest.raises(ValueError):
        a[mx.array([0, 1]), mx.array([0, 1, 2])]
    with pytest.raises(ValueError):
        mx.array(3)[0]
    with pytest.raises(ValueError):
        mx.array(3)[:]
    with pytest.raises(IndexError):
        mx.array(np.zeros((0, 3)))[[0]]
    scalar = mx.array(3)
    assert scalar[...].item() == 3 and scalar[()].item() == 3 and scalar[None].shape == (1,)


# ---- assignment -------------------------------------------------------------------------


def value_for(rng, shape, expected_shape, duplicates):
    """A value (NumPy form, braid form) broadcastable to expected_shape."""
    if duplicates or rng.random() < 0.2:
        v = int(rng.integers(-9, 10))
        return v, v
    vshape = list(expected_shape)
    if vshape and rng.random() < 0.3:
        vshape = vshape[rng.integers(0, len(vshape) + 1):]
    vshape = [1 if rng.random() < 0.2 else d for d in vshape]
    if rng.random() < 0.2:
        vshape = [1] + vshape
    v = rng.integers(-9, 10, size=vshape).astype(np.float32)
    form = rng.integers(0, 3) if v.size else 0  # an empty list forgets its trailing dimensions
    return v, (mx.array(v) if form == 0 else v if form == 1 else v.tolist())


def result_shaped(v, shape):
    """v broadcast to `shape` after NumPy's assignment drops its extra leading length-1 axes."""
    v = np.asarray(v)
    while v.ndim > len(shape) and v.shape[0] == 1:
        v = v[0]
    return np.broadcast_to(v, shape)


def has_duplicates(shape, np_idx):
    ids = np.arange(int(np.prod(shape))).reshape(shape)[np_idx]
    return np.unique(ids).size != ids.size


def test_setitem_matches_numpy_on_random_indices():
    rng = np.random.default_rng(SEED + 2)
    print("seed", SEED + 2)
    for shape in SHAPES:
        values, arrays = sources(rng, shape)
        for _ in range(80):
            idx = random_index(rng, shape)
            if numpy_result(values, idx) is None:
                continue
            np_idx = as_np(idx)
            expected_shape = values[np_idx].shape
            v_np, v_mx = value_for(rng, shape, expected_shape, has_duplicates(shape, np_idx))
            expected = values.copy()
            try:
                expected[np_idx] = v_np
            except (TypeError, ValueError):  # NumPy's boolean-only index takes values of at most 1
                # dimension (NumPy 1 raises TypeError, NumPy 2 ValueError)
                continue
            for a in arrays:
                b = a[...]  # a new Python object on the same array
                b[as_mx(idx)] = v_mx
                assert b.dtype == mx.float32
                assert_same(b, expected, (shape, idx, np.shape(v_np)))


def test_setitem_replaces_the_objects_array_only():
    a = mx.array([1, 2, 3])
    alias = a
    view = a[:]
    a[0] = 7
    assert alias.tolist() == [7, 2, 3] and a.tolist() == [7, 2, 3]
    assert view.tolist() == [1, 2, 3]


def test_setitem_casts_values_to_the_arrays_dtype():
    for dtype, value in [(mx.int8, 3), (mx.float16, 1.5), (mx.bool_, 1), (mx.int32, 2.7), (mx.uint8, 200),
                         (mx.bfloat16, 2.5), (mx.complex64, 1 + 2j)]:
        a = mx.array([0, 0, 0], dtype)
        a[1] = value
        a[mx.array([2])] = mx.array([value])
        assert a.dtype == dtype
        expected = np.array([0, value, value]).astype(np.complex64 if dtype == mx.complex64 else np.float64)
        if dtype == mx.int32:
            expected = np.array([0, 2, 2])
        if dtype == mx.bool_:
            expected = np.array([0, 1, 1])
        np.testing.assert_allclose(np.array(a.astype(mx.complex64 if dtype == mx.complex64 else mx.float32)),
                                   expected, rtol=1e-2)


def test_mlx_setitem_cases():
    a = mx.array(0)
    a[None] = 1
    assert a.item() == 1
    a = mx.array([1, 2, 3])
    steps = [(0, 2, [2, 2, 3]), (-1, 2, [2, 2, 2]), (0, mx.array([[[1]]]), [1, 2, 2]), (slice(None), 0, [0, 0, 0]),
             (None, 1, [1, 1, 1]), (slice(0, 1), 2, [2, 1, 1]), (slice(0, 2), 3, [3, 3, 1]),
             (slice(0, 3), 4, [4, 4, 4]), (slice(0, 1), mx.array(0), [0, 4, 4]),
             (slice(0, 1), mx.array([1]), [1, 4, 4]), (slice(0, 2), mx.array([2, 2]), [2, 2, 4]),
             (slice(None), mx.array([[[[1, 1, 1]]]]), [1, 1, 1])]
    for idx, value, expected in steps:
        a[idx] = value
        assert a.tolist() == expected, (idx, value)
    with pytest.raises(ValueError):
        a[0:1] = mx.array([2, 3])

    def check(arr_np, update_np, *idx_np):
        arr = mx.array(arr_np)
        idx_mx = tuple(mx.array(i) if isinstance(i, np.ndarray) else i for i in idx_np)
        key_np, key_mx = (idx_np, idx_mx) if len(idx_np) > 1 else (idx_np[0], idx_mx[0])
        arr_np[key_np] = update_np
        arr[key_mx] = mx.array(update_np)
        assert_same(arr, arr_np.astype(np.float32), idx_np)

    z, arr, ar = np.zeros, np.array, np.arange
    check(z((3, 3)), 1, 0)
    check(z((3, 3)), 1, -1)
    check(z((3, 3)), 1, slice(0, 2))
    check(z((3, 3)), arr([[0, 1, 2], [3, 4, 5]]), slice(0, 2))
    with pytest.raises(ValueError):
        b = mx.array(0)
        b[0] = mx.array(1)
    check(z((3, 3)), 1, arr([0, 1, 2]))
    check(z((3, 3)), arr(3), arr([0, 1, 2]))
    check(z((3, 3)), arr([3]), arr([0, 1, 2]))
    check(z((3, 3)), arr([3]), arr([0, 1]))
    check(z((3, 2)), arr([[3, 3], [4, 4]]), arr([0, 1]))
    check(z((3, 2)), arr([[3, 3], [4, 4], [5, 5]]), arr([0, 0, 1]) * 0 + arr([0, 1, 2]))
    b = mx.array(0)
    for value in [1, mx.array(2), mx.array([[[3]]])]:
        b[None, None] = value
    b[()] = 4
    assert b.item() == 4
    a_np = z((2, 3, 4, 5))
    check(a_np, 1, arr([0, 0]), slice(0, 2), slice(0, 3), 4)
    check(a_np, ar(10).reshape(2, 5), arr([0, 0]), arr([0, 1]), arr([2, 3]))
    check(a_np, arr([[3], [4]]), arr([0, 0]), arr([0, 1]), arr([2, 3]))
    check(a_np, ar(5), arr([0, 0]), arr([0, 1]), arr([2, 3]))
    check(z(5), ar(2), None, None, arr([2, 3]))
    check(z((4, 3, 4)), ar(3), arr([2, 3]), slice(0, 3), arr([2, 3]))
    for value in [ar(2), ar(3)]:
        with pytest.raises(ValueError):
            b = mx.array(z((4, 3, 4)))
            b[mx.array([2, 3]), None, mx.array([2, 3])] = mx.array(value)
    check(z((4, 3, 4)), 1, arr([2, 3]), None, arr([2, 1]))
    check(z((4, 3, 4)), ar(4), arr([2, 3]), None, arr([2, 1]))
    check(z((4, 3, 4)), ar(8).reshape(2, 1, 4), arr([2, 3]), None, arr([2, 1]))
    check(z((4, 4)), 1, slice(0, 2), slice(0, 2))
    check(z((4, 4)), ar(2), slice(0, 2), slice(0, 2))
    check(z((4, 4)), ar(2).reshape(2, 1), slice(0, 2), slice(0, 2))
    check(z((4, 4)), ar(4).reshape(2, 2), slice(0, 2), slice(0, 2))
    for bad in [(Ellipsis, Ellipsis), (0, Ellipsis, 0, Ellipsis, 0)]:
        with pytest.raises(ValueError):
            b = mx.array(z((2,) * 5))
            b[bad] = 1
    with pytest.raises(ValueError):
        b = mx.array(z((2, 2)))
        b[0, 0, 0] = 1
    with pytest.raises(ValueError):
        b = mx.array(z((5, 4, 3)))
        b[:, 0] = mx.array(np.ones((5, 1, 3)))
    check(z((2, 2, 2, 2)), 1, None, Ellipsis, None)
    check(z((2, 2, 2, 2)), 1, arr([0, 1]), Ellipsis, arr([0, 1]))
    check(z((2, 2, 2, 2)), ar(8).reshape(2, 2, 2), arr([0, 1]), Ellipsis, arr([0, 1]))
    b = mx.array(np.zeros((5, 5), np.int32))
    b[2:-2, 2:-2] = 4
    assert b[2, 2].item() == 4
    check(z((5, 4, 4)), ar(24).reshape(4, 2, 3), slice(0, 4), arr([1, 3]), slice(None, -1))
    check(z((5, 4, 4)), ar(16).reshape(4, 2, 2), slice(0, 4), arr([1, 3]), slice(0, 4, 2))
    check(z((1, 10, 4)), ar(8).reshape(1, 2, 4), slice(None), arr([1, 3]))
    check(z((3, 4, 5, 3)), ar(72).reshape(2, 4, 3, 3), arr([2, 1]), slice(None), slice(None, None, 2), slice(None))
    check(z((3, 4, 5, 3)), ar(72).reshape(2, 4, 3, 3), arr([2, 1]), slice(None), slice(None, None, 2))
    check(z((5, 4, 3)), np.ones((5, 3)), slice(None), 0)
    check(z((5, 4, 3)), np.ones((5, 1, 3)), slice(None), slice(0, 1))


def test_setitem_with_a_boolean_mask():
    rng = np.random.default_rng(SEED + 3)
    values = rng.integers(-9, 9, size=(4, 3, 2)).astype(np.float32)
    for mask_shape in [(4,), (4, 3), (4, 3, 2)]:
        mask = rng.random(mask_shape) < 0.5
        rest = values.shape[len(mask_shape):]
        count = int(mask.sum())
        for v in [5, np.arange(int(np.prod(rest)), dtype=np.float32).reshape(rest),
                  np.arange(count * int(np.prod(rest)), dtype=np.float32).reshape((count,) + rest)]:
            for form in [mx.array, lambda m: m, lambda m: m.tolist()]:
                expected = values.copy()
                expected[mask] = v
                a = mx.array(values)
                a[form(mask)] = mx.array(v) if isinstance(v, np.ndarray) else v
                assert_same(a, expected, (mask_shape, np.shape(v)))
    with pytest.raises(ValueError):
        a = mx.array(values)
        a[mx.array([True, False])] = 1


# ---- a.at[idx] ---------------------------------------------------------------------------

AT_OPS = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("maximum", np.maximum),
          ("minimum", np.minimum), ("divide", np.divide)]


@pytest.mark.parametrize("name,ufunc", AT_OPS)
def test_at_matches_numpy_ufunc_at(name, ufunc):
    rng = np.random.default_rng(SEED + 4)
    print("seed", SEED + 4)
    for shape in SHAPES:
        values, arrays = sources(rng, shape)
        values = np.where(values == 0, 1, values) if name == "divide" else values
        arrays = [mx.array(values)]
        for _ in range(25):
            idx = random_index(rng, shape)
            if numpy_result(values, idx) is None:
                continue
            np_idx = as_np(idx)
            v_np, v_mx = value_for(rng, shape, values[np_idx].shape, False)
            if name == "divide":
                v_np = np.where(np.asarray(v_np) == 0, 2, v_np).astype(np.float32)
                v_mx = mx.array(v_np)
            expected = values.copy()
            ufunc.at(expected, np_idx, result_shaped(v_np, values[np_idx].shape))
            for a in arrays:
                got = getattr(a.at[as_mx(idx)], name)(v_mx)
                assert tuple(got.shape) == expected.shape and got.dtype == mx.float32
                np.testing.assert_allclose(np.array(got), expected, rtol=1e-5, err_msg=str((shape, idx)))
                assert_same(a, values, "unchanged")


def test_mlx_array_at_cases():
    a = mx.array(1)
    assert a.at[None].add(1).item() == 2
    a = mx.array([0, 1, 2]).at[1].add(2)
    assert a.tolist() == [0, 3, 2]
    a = a.at[mx.array([0, 0, 0, 0])].add(1)
    assert a.tolist() == [4, 3, 2]
    a = mx.array(np.zeros((10, 10), np.float32)).at[0].add(mx.array(np.arange(10)))
    assert a[0].tolist() == list(range(10))

    rng = np.random.default_rng(SEED + 5)
    a_np = rng.random((10, 5, 2)).astype(np.float32)
    a = mx.array(a_np)
    idx = mx.array([0, 4])
    update = mx.array(np.ones((2, 5), np.float32))
    a[idx, :, 0] = 0
    a = a.at[idx, :, 0].add(update)
    assert a[idx, :, 0].tolist() == update.tolist()
    a = a.at[idx, :, 0].subtract(update)
    assert a[idx, :, 0].tolist() == (update * 0).tolist()
    a = a.at[idx, :, 0].add(2 * update).at[idx, :, 0].multiply(2 * update)
    assert a[idx, :, 0].tolist() == (4 * update).tolist()
    a = a.at[idx, :, 0].divide(3 * update)
    np.testing.assert_allclose(np.array(a[idx, :, 0]), np.full((2, 5), 4 / 3), rtol=1e-6)
    other = mx.array(np.arange(10, dtype=np.float32).reshape(2, 5))
    a[idx, :, 0] = 5
    np.testing.assert_array_equal(np.array(a.at[idx, :, 0].maximum(other)[idx, :, 0]),
                                  np.maximum(5, np.arange(10).reshape(2, 5)))
    np.testing.assert_array_equal(np.array(a.at[idx, :, 0].minimum(other)[idx, :, 0]),
                                  np.minimum(5, np.arange(10).reshape(2, 5)))


def test_at_accumulates_repeated_indices_on_integers():
    a = mx.array([1, 2, 3], mx.int32)
    idx = mx.array([0, 0, 2, 0])
    assert a.at[idx].add(1).tolist() == [4, 2, 4]
    assert a.at[idx].subtract(2).tolist() == [-5, 2, 1]
    assert a.at[idx].multiply(2).tolist() == [8, 2, 6]
    assert a.at[idx].maximum(mx.array([5, 0, 1, 7])).tolist() == [7, 2, 3]
    assert a.at[idx].minimum(mx.array([5, 0, 1, 7])).tolist() == [0, 2, 1]
    assert a.at[idx].add(1).dtype == mx.int32


def test_at_errors():
    a = mx.array([1.0, 2.0])
    with pytest.raises(ValueError):
        a.at.add(1)
    with pytest.raises(ValueError):
        a.at[0:1].add(mx.array([1.0, 2.0]))
    with pytest.raises(ValueError):
        a.at[0, 0].add(1)
    assert isinstance(a.at, mx.ArrayAt) and mx.ArrayAt(a)[0].add(1).tolist() == [2.0, 2.0]
