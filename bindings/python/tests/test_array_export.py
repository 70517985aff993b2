# The array's zero-copy exports: the buffer protocol (memoryview(a), np.asarray(a),
# np.array(a, copy=False)) and DLPack (np.from_dlpack(a), a.__dlpack__()). Round trips for every
# dtype, strided and broadcast arrays, lifetimes (the export outlives the array object), the
# DLPack capsule read field by field, and exports from a thread pool.
import ctypes
import gc
import hashlib
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import braid.core as mx

TIMEOUT = 120  # seconds for any one wait
SEED = 20250114
print(f"test_array_export seed {SEED}")

NUMPY_DTYPES = [
    (mx.bool_, np.bool_),
    (mx.uint8, np.uint8),
    (mx.uint16, np.uint16),
    (mx.uint32, np.uint32),
    (mx.uint64, np.uint64),
    (mx.int8, np.int8),
    (mx.int16, np.int16),
    (mx.int32, np.int32),
    (mx.int64, np.int64),
    (mx.float16, np.float16),
    (mx.float32, np.float32),
    (mx.float64, np.float64),
    (mx.complex64, np.complex64),
]
# The struct-module formats MLX exports (NumPy's own memoryviews say "l"/"L" for 64-bit ints).
FORMATS = {mx.int64: "q", mx.uint64: "Q"}


def sample(np_dtype, rng, shape=(3, 4)):
    x = rng.uniform(low=0, high=100, size=shape).astype(np_dtype)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        x.flat[0], x.flat[1] = info.min, info.max
    elif np.issubdtype(np_dtype, np.floating):
        info = np.finfo(np_dtype)
        x.flat[0], x.flat[1] = info.min, info.max
    elif np_dtype == np.complex64:
        x = x + 1j * rng.uniform(size=shape).astype(np.float32)
    return x.astype(np_dtype)


# --- The buffer protocol -----------------------------------------------------------------------


@pytest.mark.parametrize("mx_dtype,np_dtype", NUMPY_DTYPES, ids=[str(d) for d, _ in NUMPY_DTYPES])
def test_memoryview_matches_numpy_for_every_dtype(mx_dtype, np_dtype):
    rng = np.random.default_rng(SEED)
    x = sample(np_dtype, rng)
    a = mx.array(x, dtype=mx_dtype)
    for f in (lambda v: v, lambda v: v.T):
        mv, mv_np = memoryview(f(a)), memoryview(f(x))
        assert mv.shape == mv_np.shape
        assert mv.strides == mv_np.strides
        assert mv.itemsize == mv_np.itemsize
        assert mv.format == FORMATS.get(mx_dtype, mv_np.format)
        assert not mv.readonly
        back = np.array(mv, copy=False)
        assert back.dtype == np.dtype(np_dtype)
        np.testing.assert_array_equal(back, f(x))


def test_bfloat16_exports_two_byte_items_that_numpy_refuses():
    values = np.array([[1.5, -2.0, 0.25, 3.0], [0.0, 8.0, -0.5, 1.0], [2.0, 4.0, 6.0, 7.0]], np.float32)
    a = mx.array(values).astype(mx.bfloat16)
    mv = memoryview(a)
    assert mv.format == "B" and mv.itemsize == 2
    assert mv.shape == (3, 4) and mv.strides == (8, 2)
    # The values are exact in bfloat16: its bits are the upper half of float32's.
    expected = (values.view(np.uint32) >> 16).astype(np.uint16)
    assert bytes(mv) == expected.tobytes()
    with pytest.raises(RuntimeError, match="Item size 2 for PEP 3118 buffer format string"):
        np.array(a)


def test_numpy_reads_the_buffer_in_place_without___array__(monkeypatch):
    a = mx.arange(6, dtype=mx.float32).reshape(2, 3) * 2
    monkeypatch.setattr(mx.array, "__array__", None)  # NumPy would fail if it tried this route
    view = np.asarray(a)
    assert isinstance(view.base, memoryview)
    assert not view.flags.owndata and view.flags.writeable
    np.testing.assert_array_equal(view, np.arange(6, dtype=np.float32).reshape(2, 3) * 2)
    assert np.shares_memory(view, np.array(a, copy=False))
    copied = np.array(a)
    assert copied.flags.owndata and not np.shares_memory(copied, view)
    # As in MLX, the view is writable and writes reach the array's buffer.
    view[0, 0] = 42
    assert a.tolist()[0][0] == 42


def test_broadcast_and_strided_arrays_export_their_strides():
    # Views share their base's memory on the CPU (a GPU array is copied to the host).
    with mx.stream(mx.cpu):
        ones = mx.ones((2, 2))
        b = mx.broadcast_to(ones, (5, 2, 2))
        mv = memoryview(b)
        assert mv.strides == (0, 8, 4) and mv.shape == (5, 2, 2)
        b_np = np.array(b, copy=False)
        assert b_np.strides == (0, 8, 4)
        np.testing.assert_array_equal(b_np, np.ones((5, 2, 2), np.float32))
        assert np.shares_memory(b_np, np.asarray(ones))

        x = np.arange(48, dtype=np.int32).reshape(6, 8)
        a = mx.array(x)
        view = np.asarray(a[::2, 1::3])
        assert view.strides == x[::2, 1::3].strides
        assert np.shares_memory(view, np.asarray(a))
        for index in [np.s_[::2, 1::3], np.s_[:, ::-1], np.s_[::-2, 2:], np.s_[1:4, 5]]:
            np.testing.assert_array_equal(np.asarray(a[index]), x[index])
            assert memoryview(a[index]).tolist() == x[index].tolist()


def test_consumers_without_strides_get_contiguous_arrays_only():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.array(x)
    assert hashlib.sha256(a).digest() == hashlib.sha256(x.tobytes()).digest()
    with pytest.raises(BufferError, match="not C-contiguous"):
        hashlib.sha256(a.T)
    # bytes() asks for strides and gathers the elements in C order itself.
    assert bytes(a.T) == x.T.tobytes()
    assert memoryview(a.T).f_contiguous and not memoryview(a.T).c_contiguous


def test_scalars_and_empty_arrays():
    s = mx.array(2.5)
    mv = memoryview(s)
    assert mv.ndim == 0 and mv.shape == () and mv.tolist() == 2.5
    assert np.asarray(s).shape == () and np.asarray(s) == 2.5
    e = mx.zeros((0, 3), mx.int16)
    mv = memoryview(e)
    assert mv.shape == (0, 3) and mv.nbytes == 0 and mv.tolist() == []
    assert np.asarray(e).shape == (0, 3)


def test_lazy_arrays_are_evaluated_on_export():
    a = mx.arange(6) * 3 + 1
    assert memoryview(a).tolist() == [1, 4, 7, 10, 13, 16]
    b = mx.exp(mx.zeros((2, 2)))
    np.testing.assert_array_equal(np.from_dlpack(b), np.ones((2, 2), np.float32))


def test_memoryview_keeps_the_array_alive():
    a = mx.arange(3)
    ref = weakref.ref(a)
    mv = memoryview(a)
    assert mv.obj is a
    del a
    gc.collect()
    assert ref() is not None
    del mv
    gc.collect()
    assert ref() is None


def test_exports_outlive_the_array_and_in_place_updates():
    a = mx.arange(1 << 16, dtype=mx.float32) + 1
    mv = memoryview(a)
    view = np.asarray(a)
    from_dlpack = np.from_dlpack(a)
    expected = np.arange(1 << 16, dtype=np.float32) + 1
    a += 1  # the object now holds a new array; the exports keep the old one
    np.testing.assert_array_equal(np.array(a), expected + 1)
    del a
    gc.collect()
    # Memory freed too early would be handed to these new arrays and overwritten.
    churn = [mx.arange(1 << 16, dtype=mx.float32) * 0 - 7 for _ in range(8)]
    mx.eval(churn)
    np.testing.assert_array_equal(np.array(mv, copy=False), expected)
    np.testing.assert_array_equal(view, expected)
    np.testing.assert_array_equal(from_dlpack, expected)


# --- DLPack ------------------------------------------------------------------------------------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

kDLCPU, kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 1, 0, 1, 2, 4, 5, 6
DLPACK_CODES = {
    mx.bool_: (kDLBool, 8),
    mx.uint8: (kDLUInt, 8),
    mx.uint16: (kDLUInt, 16),
    mx.uint32: (kDLUInt, 32),
    mx.uint64: (kDLUInt, 64),
    mx.int8: (kDLInt, 8),
    mx.int16: (kDLInt, 16),
    mx.int32: (kDLInt, 32),
    mx.int64: (kDLInt, 64),
    mx.float16: (kDLFloat, 16),
    mx.bfloat16: (kDLBfloat, 16),
    mx.float32: (kDLFloat, 32),
    mx.float64: (kDLFloat, 64),
    mx.complex64: (kDLComplex, 64),
}


def read_capsule(capsule):
    """The capsule's name and its managed tensor, read through ctypes as a consumer would."""
    name = _capsule_name(capsule).decode()
    kind = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    return name, kind.from_address(_capsule_pointer(capsule, name.encode()))


def tensor_fields(t):
    n = t.ndim
    return (t.device.device_type, t.device.device_id), (t.dtype.code, t.dtype.bits, t.dtype.lanes), \
        tuple(t.shape[i] for i in range(n)), tuple(t.strides[i] for i in range(n)), t.byte_offset


def buffer_address(a):
    """Where the buffer of a C-contiguous array starts."""
    return ctypes.addressof(ctypes.c_char.from_buffer(a))


def test_dlpack_device_is_the_host():
    assert mx.ones((2,)).__dlpack_device__() == (kDLCPU, 0)


@pytest.mark.parametrize("mx_dtype", list(DLPACK_CODES), ids=[str(d) for d in DLPACK_CODES])
def test_dlpack_capsule_describes_every_dtype(mx_dtype):
    base = mx.arange(12).reshape(3, 4).astype(mx_dtype)
    a = base.T
    capsule = a.__dlpack__()
    name, managed = read_capsule(capsule)
    assert name == "dltensor"
    device, dtype, shape, strides, offset = tensor_fields(managed.dl_tensor)
    assert device == (kDLCPU, 0)
    assert dtype == DLPACK_CODES[mx_dtype] + (1,)
    assert shape == (4, 3) and strides == (1, 4) and offset == 0
    assert managed.dl_tensor.data == buffer_address(base)
    # The bytes at `data`, read in the capsule's layout, are the array's.
    raw = ctypes.string_at(managed.dl_tensor.data, a.nbytes)
    as_uint = np.frombuffer(raw, dtype=np.dtype(f"u{a.itemsize}")).reshape(3, 4).T
    same_size = {1: mx.uint8, 2: mx.uint16, 4: mx.uint32, 8: mx.uint64}[a.itemsize]
    np.testing.assert_array_equal(as_uint, np.asarray(mx.view(a, same_size)))


@pytest.mark.parametrize("mx_dtype,np_dtype", [d for d in NUMPY_DTYPES if d[0] != mx.bool_],
                         ids=[str(d) for d, _ in NUMPY_DTYPES if d != mx.bool_])
@pytest.mark.usefixtures("on_cpu")
def test_from_dlpack_round_trips_in_place(mx_dtype, np_dtype):
    rng = np.random.default_rng(SEED + 1)
    x = sample(np_dtype, rng, (4, 5))
    a = mx.array(x, dtype=mx_dtype)
    for f in (lambda v: v, lambda v: v.T, lambda v: v[::2, 1:]):
        got = np.from_dlpack(f(a))
        assert got.dtype == np.dtype(np_dtype)
        assert got.strides == f(x).strides
        np.testing.assert_array_equal(got, f(x))
        assert np.shares_memory(got, np.asarray(a))
        back = mx.array(got, dtype=mx_dtype)
        assert back.dtype == mx_dtype and mx.array_equal(back, f(a)).item()


def test_numpy_takes_bool_through_dlpack_from_1_25():
    a = mx.array([True, False, True])
    if np.lib.NumpyVersion(np.__version__) >= "1.25.0":
        np.testing.assert_array_equal(np.from_dlpack(a), [True, False, True])
    else:  # NumPy 1.24 (Debian 12) knows no kDLBool; the capsule says bool all the same
        with pytest.raises((RuntimeError, BufferError, TypeError)):
            np.from_dlpack(a)
        _, managed = read_capsule(a.__dlpack__())
        assert tensor_fields(managed.dl_tensor)[1] == (kDLBool, 8, 1)


def test_broadcast_arrays_export_zero_strides_through_dlpack():
    b = mx.broadcast_to(mx.arange(3, dtype=mx.float32), (4, 3))
    got = np.from_dlpack(b)
    assert got.strides == (0, 4)
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(3, dtype=np.float32), (4, 3)))


def test_versioned_capsule_for_consumers_of_dlpack_1():
    a = mx.arange(6, dtype=mx.int32).reshape(2, 3)
    capsule = a.__dlpack__(max_version=(1, 2))
    name, managed = read_capsule(capsule)
    assert name == "dltensor_versioned"
    assert (managed.version.major, managed.version.minor) == (1, 0)
    assert managed.flags == 0  # writable, not a copy
    assert tensor_fields(managed.dl_tensor) == ((kDLCPU, 0), (kDLInt, 32, 1), (2, 3), (3, 1), 0)
    assert managed.dl_tensor.data == buffer_address(a)
    assert ctypes.string_at(managed.dl_tensor.data, a.nbytes) == np.arange(6, dtype=np.int32).tobytes()
    # A consumer that only knows the unversioned capsule keeps getting it.
    assert read_capsule(a.__dlpack__(max_version=(0, 8)))[0] == "dltensor"


def test_copy_true_exports_a_c_order_copy():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    base = mx.array(x)
    a = base.T
    name, managed = read_capsule(capsule := a.__dlpack__(copy=True, max_version=(1, 0)))
    assert name == "dltensor_versioned" and managed.flags == 2  # DLPACK_FLAG_BITMASK_IS_COPIED
    device, dtype, shape, strides, _ = tensor_fields(managed.dl_tensor)
    assert shape == (4, 3) and strides == (3, 1)
    assert managed.dl_tensor.data != buffer_address(base)
    assert ctypes.string_at(managed.dl_tensor.data, a.nbytes) == x.T.tobytes()
    del capsule
    _, plain = read_capsule(capsule := a.__dlpack__(copy=True))
    assert ctypes.string_at(plain.dl_tensor.data, a.nbytes) == x.T.tobytes()


def test_dlpack_arguments_are_checked():
    a = mx.ones((2,))
    with pytest.raises(ValueError, match="stream"):
        a.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0))
    assert read_capsule(a.__dlpack__(dl_device=(1, 0), copy=False))[0] == "dltensor"
    with pytest.raises(ValueError, match="max_version"):
        a.__dlpack__(max_version=1)
    with pytest.raises(TypeError):
        a.__dlpack__(None)  # the arguments are keyword-only


def test_an_unconsumed_capsule_holds_the_buffer_until_dropped():
    gc.collect()
    a = mx.arange(1 << 20, dtype=mx.float32)
    capsule = a.__dlpack__()
    del a
    gc.collect()
    _, managed = read_capsule(capsule)
    tail = ctypes.string_at(managed.dl_tensor.data + 4 * ((1 << 20) - 2), 8)
    assert tail == np.array([(1 << 20) - 2, (1 << 20) - 1], np.float32).tobytes()
    with_capsule = mx.get_active_memory()
    del capsule
    gc.collect()
    assert with_capsule - mx.get_active_memory() >= 4 << 20


def test_a_consumed_capsule_belongs_to_the_consumer():
    gc.collect()
    a = mx.arange(1 << 20, dtype=mx.float32) * 0 + 5
    got = np.from_dlpack(a)
    del a
    gc.collect()
    assert got[123] == 5.0 and got[-1] == 5.0
    with_numpy = mx.get_active_memory()
    del got
    gc.collect()
    assert with_numpy - mx.get_active_memory() >= 4 << 20


# --- mx.array as a DLPack consumer (MLX's) and __mlx_array__ ----------------------------------


@pytest.mark.parametrize("mx_dtype,np_dtype", [d for d in NUMPY_DTYPES if d[0] != mx.bool_],
                         ids=[str(d) for d, _ in NUMPY_DTYPES if d != mx.bool_])
def test_array_consumes_a_dlpack_capsule(mx_dtype, np_dtype):
    x = sample(np_dtype, np.random.default_rng(SEED + 2), (3, 4))
    capsule = x.__dlpack__()
    a = mx.array(capsule)
    want = mx.array(x)  # the same dtype defaults as NumPy input (float64 becomes float32)
    assert a.dtype == want.dtype and a.shape == (3, 4)
    assert mx.array_equal(a, want).item()
    x[...] = 0  # a copy, as mx.array makes of every input
    assert mx.array_equal(a, want).item()
    assert _capsule_name(capsule) == b"used_dltensor"
    with pytest.raises(ValueError, match="already used"):
        mx.array(capsule)


def test_array_consumes_versioned_capsules_of_every_braid_dtype():
    for dtype in (mx.bool_, mx.bfloat16, mx.float16, mx.int64, mx.complex64):
        a = (mx.arange(12).reshape(3, 4) % 3).astype(dtype)
        capsule = a.__dlpack__(max_version=(1, 0))
        b = mx.array(capsule)
        assert b.dtype == dtype and mx.array_equal(a, b).item()
        assert _capsule_name(capsule) == b"used_dltensor_versioned"
    c = mx.array(np.array([1.5, -2.25]).__dlpack__(), dtype=mx.int32)
    assert c.dtype == mx.int32 and c.tolist() == [1, -2]
    z = mx.array(np.array([[1 + 2j, 3 - 4j]], np.complex128).__dlpack__())
    assert z.dtype == mx.complex64 and z.tolist() == [[1 + 2j, 3 - 4j]]


@pytest.mark.usefixtures("on_cpu")
def test_array_of_a_dlpack_producer_and_its_release():
    class Producer:  # DLPack only: no buffer protocol, no __array__
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, **kwargs):
            return self.x.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.array(Producer(x))
    np.testing.assert_array_equal(np.asarray(a), x)
    b = mx.array(Producer(mx.arange(5)), dtype=mx.float16)
    assert b.dtype == mx.float16 and b.tolist() == [0, 1, 2, 3, 4]
    # Consuming a capsule releases its tensor at once, though the capsule object lives on.
    refs = sys.getrefcount(x)
    capsule = x.__dlpack__()
    assert sys.getrefcount(x) == refs + 1  # NumPy's tensor holds the array
    mx.array(capsule)
    assert sys.getrefcount(x) == refs
    gc.collect()
    src = mx.arange(1 << 20, dtype=mx.float32) + 1
    capsule = src.__dlpack__()
    del src
    gc.collect()
    before = mx.get_active_memory()
    copy = mx.array(capsule)
    assert copy[-1].item() == float(1 << 20)
    assert mx.get_active_memory() - before < 1 << 20  # the copy replaced the source
    del copy
    gc.collect()
    assert before - mx.get_active_memory() >= 4 << 20


def test_array_rejects_a_strided_capsule_and_leaves_it_unused():
    view = np.arange(16, dtype=np.float32).reshape(4, 4)[::2, :]
    capsule = view.__dlpack__()
    with pytest.raises(ValueError, match="row-contiguous"):
        mx.array(capsule)
    assert _capsule_name(capsule) == b"dltensor"
    np.testing.assert_array_equal(np.asarray(mx.from_dlpack(view)), view)  # which reads strides
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    with pytest.raises(ValueError, match="not a DLPack tensor"):
        mx.array(new_capsule(8, b"other", None))


def test_mlx_array_protocol_comes_first():
    class Wrapped:
        def __init__(self, a):
            self.a = a

        def __mlx_array__(self):
            return self.a

        def __dlpack__(self, **kwargs):
            raise AssertionError("__dlpack__ must not be called")

    w = Wrapped(mx.array([1, 2, 3], mx.int32))
    a = mx.array(w)
    assert a.dtype == mx.int32 and a.tolist() == [1, 2, 3]
    assert mx.array(w, dtype=mx.float32).tolist() == [1.0, 2.0, 3.0]
    assert mx.add(w, 1).tolist() == [2, 3, 4]  # ops take such objects too

    class Wrong:
        def __mlx_array__(self):
            return [1, 2]

    with pytest.raises(ValueError, match="__mlx_array__ must return an array"):
        mx.array(Wrong())


# --- Errors and threads ------------------------------------------------------------------------


def test_an_evaluation_error_reaches_the_exporter(tmp_path):
    path = str(tmp_path / "w.safetensors")
    mx.save_safetensors(path, {"w": mx.arange(1 << 12, dtype=mx.float32)})
    w = mx.load(path)["w"]  # read when evaluated
    with open(path, "r+b") as f:
        f.truncate(64)
    with pytest.raises(RuntimeError):
        memoryview(w)
    with pytest.raises(RuntimeError):
        np.asarray(w)
    with pytest.raises(RuntimeError):
        np.from_dlpack(w)


@pytest.mark.parametrize("n_threads", [1, 2, 4, 8])
def test_workers_export_arrays_built_anywhere(n_threads):
    rng = np.random.default_rng(SEED + 2)
    x = rng.standard_normal((64, 48)).astype(np.float32)
    shared = mx.array(x) * 2 + 1  # built here, evaluated by whichever export comes first
    expected_shared = x * 2 + 1

    def export(k):
        own = mx.arange(k, k + 96, dtype=mx.float32).reshape(8, 12).T * 0.5
        expected_own = np.arange(k, k + 96, dtype=np.float32).reshape(8, 12).T * 0.5
        results = [
            np.array(memoryview(shared), copy=False),
            np.asarray(shared.T).T,
            np.from_dlpack(shared),
        ]
        for got in results:
            np.testing.assert_array_equal(got, expected_shared)
        np.testing.assert_array_equal(np.asarray(own), expected_own)
        np.testing.assert_array_equal(np.from_dlpack(own), expected_own)
        assert bytes(memoryview(own)) == expected_own.tobytes()
        return k

    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        futures = [pool.submit(export, k) for k in range(32)]
        assert [f.result(timeout=TIMEOUT) for f in futures] == list(range(32))


def test_export_evaluates_without_the_gil():
    # As test_threads.py's eval test: a Python thread keeps counting while memoryview(y)
    # waits for the evaluation of y.
    rng = np.random.default_rng(SEED + 3)
    with mx.stream(mx.cpu):
        a = mx.array(rng.standard_normal((1500, 1500)).astype(np.float32) / 40)
        mx.eval(a)
    count = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=counter, daemon=True)
    t.start()
    try:
        before = count[0]
        time.sleep(0.2)
        rate = (count[0] - before) / 0.2
        during, elapsed = 0, 0.0
        while elapsed < 0.5:
            with mx.stream(mx.cpu):
                y = (a @ a) @ a
            before = count[0]
            t0 = time.perf_counter()
            memoryview(y)
            elapsed += time.perf_counter() - t0
            during += count[0] - before
    finally:
        stop.set()
        t.join(TIMEOUT)
    print(f"exports took {elapsed:.3f}s; the counter advanced {during} times (free rate {rate:.0f}/s)")
    assert during > 0.1 * rate * elapsed
