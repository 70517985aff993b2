# The array API entry points (result_type, can_cast, isdtype, __array_namespace__,
# __array_namespace_info__, asarray), mx.from_dlpack's in-place import, print options, and the
# conversions MLX refuses: a Python int that overflows the array's integer dtype, ragged lists.
import gc
import math
import threading

import numpy as np
import pytest

import braid.core as mx

NUMPY_DLPACK_1 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
NUMPY_DLPACK_BOOL = np.lib.NumpyVersion(np.__version__) >= "1.25.0"


def test_result_type_promotes_arrays_and_dtypes():
    assert mx.result_type(mx.int8, mx.int16) == mx.int16
    assert mx.result_type(mx.float32, mx.float64) == mx.float64
    assert mx.result_type(mx.array([1], dtype=mx.int8), mx.int16, mx.int32) == mx.int32
    assert mx.result_type(mx.array(1.0), mx.array(1, dtype=mx.int32)) == mx.float32
    assert mx.result_type(mx.uint8, mx.int8) == mx.int16
    assert mx.result_type(mx.bfloat16, mx.float16) == mx.float32
    assert mx.result_type(mx.bool_) == mx.bool_
    with pytest.raises(ValueError):
        mx.result_type()
    with pytest.raises(ValueError):
        mx.result_type(mx.int8, 3)


def test_can_cast_follows_promotion():
    assert mx.can_cast(mx.int8, mx.int16)
    assert not mx.can_cast(mx.int16, mx.int8)
    assert mx.can_cast(mx.float32, mx.float64)
    assert not mx.can_cast(mx.float64, mx.float32)
    assert mx.can_cast(mx.uint8, mx.int16)
    assert not mx.can_cast(mx.uint16, mx.int16)
    assert mx.can_cast(mx.array([1, 2, 3], dtype=mx.int8), mx.int32)
    assert mx.can_cast(mx.bool_, mx.float16)
    assert not mx.can_cast(mx.complex64, mx.float32)
    # Every dtype casts to itself.
    for d in (mx.bool_, mx.uint64, mx.int64, mx.bfloat16, mx.float64, mx.complex64):
        assert mx.can_cast(d, d)


def test_isdtype_kinds():
    assert mx.isdtype(mx.int32, mx.int32)
    assert not mx.isdtype(mx.int32, mx.int16)
    assert mx.isdtype(mx.int32, "signed integer")
    assert mx.isdtype(mx.uint8, "unsigned integer")
    assert not mx.isdtype(mx.uint8, "signed integer")
    assert mx.isdtype(mx.int16, "integral")
    assert mx.isdtype(mx.float32, "real floating")
    assert mx.isdtype(mx.bfloat16, "real floating")
    assert mx.isdtype(mx.complex64, "complex floating")
    assert not mx.isdtype(mx.complex64, "real floating")
    assert mx.isdtype(mx.bool_, "bool")
    assert not mx.isdtype(mx.bool_, "numeric")
    assert mx.isdtype(mx.float32, "numeric") and mx.isdtype(mx.uint64, "numeric")
    assert mx.isdtype(mx.float32, ("integral", "real floating"))
    assert mx.isdtype(mx.int8, (mx.int8, mx.int16))
    assert not mx.isdtype(mx.int32, ("bool", "real floating"))
    with pytest.raises(ValueError):
        mx.isdtype(mx.int32, "not a kind")
    with pytest.raises(ValueError):
        mx.isdtype(mx.int32, ("bool", "not a kind"))
    with pytest.raises(ValueError):
        mx.isdtype(mx.int32, 3)


def test_array_namespace_is_the_module():
    xp = mx.array(1.0).__array_namespace__()
    assert xp is mx
    for name in ("array", "add", "asarray", "result_type", "can_cast", "isdtype", "vecdot", "from_dlpack"):
        assert hasattr(xp, name), name
    assert mx.array(1.0).__array_namespace__(api_version="2023.12") is mx
    with pytest.raises(ValueError):
        mx.array(1.0).__array_namespace__(api_version="1999.01")


def test_array_namespace_info():
    info = mx.__array_namespace_info__()
    assert info.default_device() == mx.default_device()
    assert info.default_dtypes() == {
        "real floating": mx.float32, "complex floating": mx.complex64, "integral": mx.int32, "indexing": mx.int32}
    assert info.dtypes(device=mx.Device(mx.cpu), kind="real floating") == {"float32": mx.float32, "float64": mx.float64}
    assert info.dtypes(kind=("bool", "complex floating")) == {"bool": mx.bool_, "complex64": mx.complex64}
    assert info.dtypes(kind="signed integer") == {"int8": mx.int8, "int16": mx.int16, "int32": mx.int32, "int64": mx.int64}
    assert len(info.dtypes()) == 12
    with pytest.raises(ValueError):
        info.dtypes(kind="invalid")
    caps = info.capabilities()
    assert caps["boolean indexing"] is False and caps["data-dependent shapes"] is False
    assert mx.Device(mx.cpu) in info.devices()
    if mx.is_available(mx.gpu):
        # float64 runs on braid's GPU too (MLX's Metal backend has none).
        assert info.dtypes(device=mx.Device(mx.gpu), kind="real floating") == {"float32": mx.float32, "float64": mx.float64}


def test_asarray_forms():
    assert mx.asarray([1, 2, 3]).tolist() == [1, 2, 3]
    assert mx.asarray(((1, 2), (3, 4))).tolist() == [[1, 2], [3, 4]]
    assert mx.asarray([(1, 2), (3, 4)]).tolist() == [[1, 2], [3, 4]]
    assert mx.asarray(42).item() == 42
    assert mx.asarray(3.14).item() == pytest.approx(3.14, rel=1e-6)
    assert mx.asarray(True).item() is True
    assert mx.asarray(1 + 2j).item() == 1 + 2j
    assert mx.asarray([1, 2, 3], dtype=mx.float32).dtype == mx.float32
    x = mx.array([1, 2, 3])
    assert mx.asarray(x) is x
    assert mx.asarray(x, copy=True).tolist() == [1, 2, 3]
    assert mx.asarray(x, dtype=mx.float32, copy=True).dtype == mx.float32
    assert mx.asarray(x, dtype=mx.float32).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        mx.asarray(x, copy=False)
    with pytest.raises(ValueError):
        mx.asarray(x, dtype=mx.float32, copy=False)
    with pytest.raises(ValueError):
        mx.asarray([1, 2], copy=False)


def test_asarray_of_numpy_shares_memory_unless_copied():
    src = np.arange(4, dtype=np.float32)
    shared = mx.asarray(src)
    no_copy = mx.asarray(src, copy=False)
    copied = mx.asarray(src, copy=True)
    src += 10
    assert shared.tolist() == [10, 11, 12, 13]
    assert no_copy.tolist() == [10, 11, 12, 13]
    assert copied.tolist() == [0, 1, 2, 3]
    # float64 converts to float32, which is a copy.
    d = np.arange(3, dtype=np.float64)
    assert mx.asarray(d).dtype == mx.float32
    with pytest.raises(ValueError):
        mx.asarray(d, copy=False)
    assert mx.asarray(d, dtype=mx.float64).dtype == mx.float64
    # What DLPack cannot describe is still converted when a copy is allowed.
    rev = np.arange(5, dtype=np.int32)[::-1]
    assert mx.asarray(rev).tolist() == [4, 3, 2, 1, 0]
    assert mx.asarray(np.broadcast_to(np.int32(7), (3,))).tolist() == [7, 7, 7]
    with pytest.raises(ValueError):
        mx.asarray(rev, copy=False)


def test_from_dlpack_reads_in_place_with_strides():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    views = [x.T, x[:, ::2], x[1:, 1:], x[:, 1:2]]
    if NUMPY_DLPACK_1:  # NumPy before 2 cannot export a read-only (broadcast) array
        views.append(np.broadcast_to(x[1], (5, 4)))
    for view in views:
        y = mx.from_dlpack(view)
        assert y.tolist() == view.tolist()
        assert memoryview(y).strides == view.strides
        assert memoryview(y).c_contiguous == view.flags.c_contiguous
        assert np.array_equal(np.array(mx.sum(y, axis=0)), view.sum(axis=0))
    with pytest.raises(ValueError):
        mx.from_dlpack(np.arange(5, dtype=np.float32)[::-1])
    y = mx.from_dlpack(x, copy=False)
    x[0, 0] = 100
    assert y[0, 0].item() == 100
    z = mx.from_dlpack(x, copy=True)
    x[0, 0] = -1
    assert z[0, 0].item() == 100
    with pytest.raises(ValueError):
        mx.from_dlpack([1, 2, 3])


def test_from_dlpack_dtypes():
    mapping = [(np.bool_, mx.bool_), (np.uint8, mx.uint8), (np.uint16, mx.uint16), (np.uint32, mx.uint32),
               (np.uint64, mx.uint64), (np.int8, mx.int8), (np.int16, mx.int16), (np.int32, mx.int32),
               (np.int64, mx.int64), (np.float16, mx.float16), (np.float32, mx.float32),
               (np.float64, mx.float32), (np.complex64, mx.complex64), (np.complex128, mx.complex64)]
    for np_dtype, dtype in mapping:
        if np_dtype is np.bool_ and not NUMPY_DLPACK_BOOL:
            continue  # NumPy exports bool through DLPack from 1.25 on
        src = (np.arange(6).reshape(2, 3) % 2).astype(np_dtype)
        y = mx.from_dlpack(src.T)
        assert y.dtype == dtype, np_dtype
        assert np.array_equal(np.array(y), src.T.astype(np.array(y).dtype)), np_dtype
    c = (np.arange(6) + 1j * np.arange(6, 12)).astype(np.complex128).reshape(2, 3)[:, ::2]
    assert np.array(mx.from_dlpack(c)).tolist() == c.astype(np.complex64).tolist()


def test_from_dlpack_keeps_the_source_alive_and_works_from_threads():
    src = np.arange(1000, dtype=np.float32)
    y = mx.from_dlpack(src)
    del src
    gc.collect()
    assert mx.sum(y).item() == sum(range(1000))
    results = []

    def worker(k):
        a = mx.from_dlpack(np.full((64,), k, dtype=np.float32))
        results.append(mx.sum(mx.multiply(a, 2)).item())

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [128.0 * k for k in range(8)]
    if mx.is_available(mx.gpu):
        g = mx.from_dlpack(np.arange(8, dtype=np.float32).reshape(2, 4).T)
        assert mx.sum(g, axis=1, stream=mx.gpu).tolist() == [4, 6, 8, 10]


def test_an_imported_tensor_is_never_written():
    src = np.arange(8, dtype=np.float32)
    out = mx.negative(mx.from_dlpack(src.copy()))  # the only reference: a donation candidate
    mx.eval(out)
    src2 = np.arange(8, dtype=np.float32)
    out2 = mx.exp(mx.from_dlpack(src2))
    mx.eval(out2)
    assert src2.tolist() == list(range(8))
    assert out.tolist() == [-v for v in range(8)]


def test_print_options():
    x = mx.array([1.123456789], dtype=mx.float32)
    assert str(x) == "array([1.12346], dtype=float32)"
    try:
        with mx.printoptions(precision=4):
            assert str(x) == "array([1.1235], dtype=float32)"
            assert mx.get_printoptions().precision == 4
        assert str(x) == "array([1.12346], dtype=float32)"
        mx.set_printoptions(precision=2)
        assert str(x) == "array([1.12], dtype=float32)"
        assert str(mx.sin(x)) == "array([0.90], dtype=float32)"
        assert str(mx.array([1 + 2j])) == "array([1.00+2.00j], dtype=complex64)"
        assert str(mx.array([3])) == "array([3], dtype=int32)"
        assert mx.PrintOptions(precision=3).precision == 3
    finally:
        mx.set_printoptions()
    assert mx.get_printoptions().precision == -1
    assert str(x) == "array([1.12346], dtype=float32)"


def test_python_ints_do_not_wrap_into_an_integer_dtype():
    y = mx.array(2000000000, dtype=mx.int32)
    with pytest.raises(ValueError, match="overflow"):
        y + 3000000000
    with pytest.raises(ValueError):
        mx.add(y, 3000000000)
    with pytest.raises(ValueError):
        mx.array([1], mx.uint8) + 256
    with pytest.raises(ValueError):
        mx.array([1], mx.uint32) * -1
    with pytest.raises(ValueError):
        mx.array([1], mx.int64) + 2**64
    assert (mx.array([1], mx.uint8) + 254).tolist() == [255]
    assert (mx.array([1], mx.uint64) + (2**64 - 2)).tolist() == [2**64 - 1]
    assert (mx.array([1], mx.int64) + 2**40).tolist() == [2**40 + 1]
    # 64-bit dtypes take any 64-bit int, a negative one wrapping into uint64 (as MLX).
    assert (mx.array([2], mx.uint64) + (-1)).tolist() == [1]
    # Two Python ints promote as their own arrays would; floats take any value.
    assert mx.add(1, 3000000000).dtype == mx.int64
    assert (mx.array([1], mx.int8) + 1e10).dtype == mx.float32


def test_ragged_lists_report_mlx_message():
    x = mx.array([1.0])
    for bad in ([x, 1.0], [1.0, x], [[1, 2], [3]]):
        with pytest.raises(ValueError) as e:
            mx.array(bad)
        assert str(e.value) == "Initialization encountered non-uniform length."


def test_devices_and_streams():
    assert mx.device_count(mx.cpu) == 1
    assert mx.device_count(mx.gpu) == (1 if mx.is_available(mx.gpu) else 0)
    info = mx.device_info(mx.Device(mx.cpu))
    assert set(info) == {"device_name", "architecture", "memory_size", "total_memory",
                         "max_recommended_working_set_size"}
    assert isinstance(info["device_name"], str) and info["memory_size"] > 2**28
    assert mx.device_info() == mx.device_info(mx.default_device())
    if not mx.is_available(mx.gpu):
        with pytest.raises(ValueError):
            mx.device_info(mx.Device(mx.gpu))

    handle = mx.new_thread_local_stream(mx.cpu)
    assert isinstance(handle, mx.ThreadLocalStream) and isinstance(handle, mx.Stream)
    assert handle.device == mx.cpu
    results = []

    def worker():
        a = mx.add(mx.array(1.0), mx.array(2.0), stream=handle)
        results.append(a.item())
        before = mx.default_stream(mx.cpu)
        mx.clear_streams()
        results.append(mx.default_stream(mx.cpu) != before)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(3.0) == 4 and results.count(True) == 4
    s = mx.new_thread_unsafe_stream(mx.cpu)
    assert mx.add(mx.array(1), mx.array(1), stream=s).item() == 2


def test_composed_ops():
    a = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = mx.array([1.0, 0.0, -1.0])
    assert mx.vecdot(a, b).tolist() == [-2.0, -2.0]
    assert mx.vecdot(a, a, axis=0).tolist() == [17.0, 29.0, 45.0]
    c = mx.array([1 + 2j, 3 - 1j])
    assert mx.vecdot(c, c).item() == pytest.approx(15 + 0j)  # conj(c) . c = |c|^2
    assert mx.trunc(mx.array([-1.7, -0.2, 0.0, 0.5, 2.9])).tolist() == [-1.0, -0.0, 0.0, 0.0, 2.0]
    assert mx.trunc(mx.array([3, -4])).tolist() == [3, -4]
    assert mx.positive(mx.array([-1, 2])).tolist() == [-1, 2]
    assert mx.logical_xor(mx.array([True, True, False]), mx.array([True, False, False])).tolist() == [False, True, False]
    assert mx.logical_xor(mx.array([0, 2]), 1).tolist() == [True, False]
    x = mx.array([[0, 1, 2], [3, 0, 0]])
    assert mx.count_nonzero(x).item() == 3 and mx.count_nonzero(x).dtype == mx.int32
    assert mx.count_nonzero(x, axis=0).tolist() == [1, 1, 1]
    assert mx.count_nonzero(x, axis=1, keepdims=True).tolist() == [[2], [1]]
    lo, hi = mx.minmax(x)
    assert lo.item() == 0 and hi.item() == 3
    lo, hi = mx.minmax(x, axis=1)
    assert lo.tolist() == [0, 0] and hi.tolist() == [2, 3]
    v = np.array([1, 4, 9, 16, 25], dtype=np.int32)
    for n in range(0, 6):
        assert mx.diff(mx.array(v), n=n).tolist() == np.diff(v, n=n).tolist()
    m = np.arange(12, dtype=np.float32).reshape(3, 4) ** 2
    assert np.array_equal(np.array(mx.diff(mx.array(m), axis=0)), np.diff(m, axis=0))
    assert mx.diff(mx.array([True, False, False, True])).tolist() == [True, False, True]
    with pytest.raises(ValueError):
        mx.diff(mx.array(v), n=-1)
    with pytest.raises(ValueError):
        mx.diff(mx.array(v), axis=2)


def test_searchsorted():
    a = mx.array([1, 2, 2, 4])
    assert mx.searchsorted(a, mx.array([0, 2, 3, 5])).tolist() == [0, 1, 3, 4]
    assert mx.searchsorted(a, mx.array([0, 2, 3, 5]), side="right").tolist() == [0, 3, 3, 4]
    assert mx.searchsorted(a, mx.array([0, 2, 3, 5])).dtype == mx.uint32
    rng = np.random.default_rng(0)
    seq = np.sort(rng.integers(0, 50, 200)).astype(np.float32)
    seq[-3:] = np.nan  # NaNs sort last, as in NumPy
    vals = rng.integers(-5, 55, (7, 9)).astype(np.float32)
    vals[0, 0] = np.nan
    for side in ("left", "right"):
        got = mx.searchsorted(mx.array(seq), mx.array(vals), side=side)
        assert got.shape == (7, 9)
        assert np.array(got).tolist() == np.searchsorted(seq, vals, side=side).tolist(), side
        if mx.is_available(mx.gpu):
            g = mx.searchsorted(mx.array(seq), mx.array(vals), side=side, stream=mx.gpu)
            assert np.array(g).tolist() == np.searchsorted(seq, vals, side=side).tolist(), side
    assert mx.searchsorted(a, mx.array(3)).item() == 3
    assert mx.searchsorted(mx.array([], dtype=mx.int32), mx.array([1, 2])).tolist() == [0, 0]
    with pytest.raises(ValueError):
        mx.searchsorted(mx.array([[1, 2]]), mx.array([1]))
    with pytest.raises(ValueError):
        mx.searchsorted(a, mx.array([1]), side="middle")


def test_imports_are_read_only_and_keep_what_was_asked():
    src = np.arange(6, dtype=np.float32)
    y = mx.from_dlpack(src)
    view = memoryview(y)
    assert view.readonly
    assert not np.frombuffer(y, dtype=np.float32).flags.writeable
    assert not np.asarray(y).flags.writeable
    assert not memoryview(mx.array([1.0])).readonly  # braid's own memory stays writable
    # Size-1 axes may carry any stride, negative ones included.
    one = np.arange(5, dtype=np.int32)[::-1][:1]
    assert mx.from_dlpack(one).tolist() == [4]
    # float64 stays float64 when asked for, with every bit.
    d = np.array([0.1, 1 / 3], dtype=np.float64)
    kept = mx.asarray(d, dtype=mx.float64)
    assert kept.dtype == mx.float64 and np.array(kept).tolist() == d.tolist()
    b = mx.array([0.1, 1 / 3], dtype=mx.float64)
    c = mx.asarray(b, copy=True)
    assert c.dtype == mx.float64 and np.array(c).tolist() == np.array(b).tolist()
    with pytest.raises(ValueError):
        mx.trunc(mx.array([1 + 1j]))


def test_numbers_print_when_numpy_was_imported_first():
    # A module loaded before braid.core with a private copy of the C++ runtime's symbols (NumPy
    # 2's wheels) made number formatting crash; braid/__init__.py makes the runtime global.
    import os
    import subprocess
    import sys

    code = ("import numpy\nimport braid.core as mx\n"
            "print(repr(mx.array([1.5, 2])))\n"
            "try:\n    mx.reshape(mx.array([1, 2]), (3,))\nexcept ValueError as e:\n    print(e)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["array([1.5, 2], dtype=float32)",
                                       "[reshape] Cannot reshape array of size 2 into shape (3,)."]


@pytest.mark.parametrize("dtype", [mx.int32, mx.float32, mx.uint8, mx.bool_])
def test_unique_matches_numpy_when_size_is_the_number_of_unique_values(dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, size=(4, 7)).astype(np.float32)
    a = mx.array(x).astype(dtype)
    ref = np.array(a)
    values, index, inverse, counts = np.unique(ref, return_index=True, return_inverse=True, return_counts=True)
    out = mx.unique(a, len(values), return_index=True, return_inverse=True, return_counts=True)
    assert len(out) == 4
    v, i, inv, c = out
    assert v.dtype == a.dtype and v.tolist() == values.tolist()
    assert i.dtype == mx.uint32 and i.tolist() == index.tolist()
    assert inv.shape == a.shape and inv.reshape(-1).tolist() == inverse.reshape(-1).tolist()
    assert c.tolist() == counts.tolist()
    assert mx.unique(a, len(values)).tolist() == values.tolist()


def test_unique_pads_with_fill_value_and_truncates():
    a = mx.array([3, 1, 3, 2, 1, 3])
    v, c = mx.unique(a, 5, return_counts=True)
    assert v.tolist() == [1, 2, 3, 0, 0] and c.tolist() == [2, 1, 3, 0, 0]
    assert mx.sum(c > 0).item() == 3
    assert mx.unique(a, 4, fill_value=-1).tolist() == [1, 2, 3, -1]
    assert mx.unique(a, 4, fill_value=mx.array(9)).tolist() == [1, 2, 3, 9]
    # Truncated: the smallest values stay; dropped elements point at the last slot.
    v, i, inv, c = mx.unique(a, 2, return_index=True, return_inverse=True, return_counts=True)
    assert v.tolist() == [1, 2] and i.tolist() == [1, 3] and c.tolist() == [2, 1]
    assert inv.tolist() == [1, 0, 1, 1, 0, 1]
    assert mx.unique(a, 0).shape == (0,)
    empty = mx.unique(mx.array([], dtype=mx.float32), 3, return_counts=True)
    assert empty[0].tolist() == [0.0, 0.0, 0.0] and empty[1].tolist() == [0, 0, 0]


def test_unique_counts_nans_as_one_value_and_keeps_the_first_index():
    a = mx.array([2.0, float("nan"), 1.0, float("nan"), 2.0])
    v, i, c = mx.unique(a, 3, return_index=True, return_counts=True)
    assert v[:2].tolist() == [1.0, 2.0] and math.isnan(v[2].item())
    assert i.tolist() == [2, 0, 1] and c.tolist() == [1, 2, 2]


def test_unique_is_lazy_and_checks_its_arguments():
    a = mx.array([1, 1, 2]) * 2
    out = mx.unique(a, 2)
    assert out.tolist() == [2, 4]
    with pytest.raises(ValueError):
        mx.unique(a, -1)
    with pytest.raises(ValueError):
        mx.unique(a, 2, fill_value=mx.array([1, 2]))
    with pytest.raises(TypeError):
        mx.unique(a)
