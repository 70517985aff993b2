import pickle

import numpy as np
import pytest

import braid.core as mx


def test_scalars_take_mlx_default_dtypes():
    assert mx.array(True).dtype == mx.bool_
    assert mx.array(3).dtype == mx.int32
    assert mx.array(2**40).dtype == mx.int64
    assert mx.array(1.5).dtype == mx.float32
    assert mx.array(1 + 2j).dtype == mx.complex64
    assert mx.array(3, mx.float16).dtype == mx.float16
    assert mx.array(2.5).item() == 2.5


def test_nested_lists():
    a = mx.array([[1, 2, 3], [4, 5, 6]])
    assert a.shape == (2, 3)
    assert a.dtype == mx.int32
    assert a.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert mx.array([1, 2.5]).dtype == mx.float32
    assert mx.array([True, False]).dtype == mx.bool_
    assert mx.array([True, 2]).dtype == mx.int32
    assert mx.array([]).shape == (0,)
    assert mx.array([[], []]).shape == (2, 0)
    with pytest.raises(ValueError):
        mx.array([[1, 2], [3]])


def test_uint64_takes_every_uint64_python_int():
    a = mx.array([2**64 - 1, 2**63, 5, -1], mx.uint64)
    assert a.tolist() == [2**64 - 1, 2**63, 5, 2**64 - 1]  # a negative int wraps, as astype
    assert mx.array(2**64 - 1, mx.uint64).item() == 2**64 - 1
    for too_big in ([2**64], 2**64):
        with pytest.raises(ValueError):
            mx.array(too_big, mx.uint64)
    with pytest.raises(ValueError):
        mx.array([2**63])  # no dtype: int64 at most, as MLX


def test_list_of_arrays_stacks():
    a = mx.array([mx.array([1, 2]), mx.array([3, 4])])
    assert a.shape == (2, 2)
    assert a.tolist() == [[1, 2], [3, 4]]


def test_numpy_round_trip_every_dtype():
    for np_dtype, mx_dtype in [
        (np.bool_, mx.bool_),
        (np.uint8, mx.uint8),
        (np.uint16, mx.uint16),
        (np.uint32, mx.uint32),
        (np.uint64, mx.uint64),
        (np.int8, mx.int8),
        (np.int16, mx.int16),
        (np.int32, mx.int32),
        (np.int64, mx.int64),
        (np.float16, mx.float16),
        (np.float32, mx.float32),
        (np.complex64, mx.complex64),
    ]:
        x = (np.arange(12).reshape(3, 4) % 5).astype(np_dtype)
        a = mx.array(x)
        assert a.dtype == mx_dtype
        assert a.shape == (3, 4)
        back = np.array(a)
        assert back.dtype == x.dtype
        np.testing.assert_array_equal(back, x)


def test_numpy_float64_becomes_float32_unless_asked():
    x = np.linspace(0, 1, 5)
    assert mx.array(x).dtype == mx.float32
    assert mx.array(x, mx.float64).dtype == mx.float64
    np.testing.assert_allclose(np.array(mx.array(x, dtype=mx.float64)), x)


def test_non_contiguous_numpy_inputs():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in [x.T, x[::2, 1::2], x[:, ::-1]]:
        np.testing.assert_array_equal(np.array(mx.array(view)), view)


def test_transposed_array_to_numpy():
    a = mx.array(np.arange(6).reshape(2, 3)).T
    np.testing.assert_array_equal(np.array(a), np.arange(6).reshape(2, 3).T)


def test_properties():
    a = mx.array(np.zeros((2, 3, 4), np.float16))
    assert a.ndim == 3 and a.size == 24 and a.itemsize == 2 and a.nbytes == 48
    assert a.T.shape == (4, 3, 2)
    assert len(a) == 2
    assert [r.shape for r in a] == [(3, 4), (3, 4)]


def test_scalar_rules_of_binary_ops():
    a = mx.array([1, 2], mx.int8)
    assert (a + 1).dtype == mx.int8
    assert (1 + a).dtype == mx.int8
    assert (a + 1.5).dtype == mx.float32
    h = mx.array([1, 2], mx.float16)
    assert (h * 2.0).dtype == mx.float16
    assert (2 ** h).dtype == mx.float16
    b = mx.array([True, False])
    assert (b + 1).dtype == mx.int32


def test_operators_against_numpy():
    x = np.array([[1.0, -2.0, 3.5], [4.0, 5.0, -6.25]], np.float32)
    y = np.array([[2.0, 3.0, -1.0], [0.5, 2.0, 4.0]], np.float32)
    a, b = mx.array(x), mx.array(y)
    np.testing.assert_allclose(np.array(a + b), x + y)
    np.testing.assert_allclose(np.array(a - b), x - y)
    np.testing.assert_allclose(np.array(a * b), x * y)
    np.testing.assert_allclose(np.array(a / b), x / y, rtol=1e-6)
    np.testing.assert_allclose(np.array(a // b), x // y)
    np.testing.assert_allclose(np.array(a % b), np.mod(x, y), rtol=1e-6)
    np.testing.assert_allclose(np.array(abs(a)), abs(x))
    np.testing.assert_allclose(np.array(-a), -x)
    np.testing.assert_allclose(np.array(a @ b.T), x @ y.T, rtol=1e-6)
    np.testing.assert_array_equal(np.array(a < b), x < y)
    np.testing.assert_array_equal(np.array(a == a), np.ones_like(x, bool))
    i = mx.array([12, 10, 7])
    j = mx.array([10, 6, 1])
    assert (i & j).tolist() == [8, 2, 1]
    assert (i | j).tolist() == [14, 14, 7]
    assert (i ^ j).tolist() == [6, 12, 6]
    assert (i << 1).tolist() == [24, 20, 14]
    assert (~mx.array([True, False])).tolist() == [False, True]


def test_inplace_operators_rebind_the_same_object():
    a = mx.array([1.0, 2.0])
    alias = a
    a += 1
    assert alias is a
    assert alias.tolist() == [2.0, 3.0]
    a /= 2
    assert alias is a and a.tolist() == [1.0, 1.5]
    # As in MLX, `/=` cannot turn an integer or boolean array into a floating one.
    for value in (mx.array([1]), mx.array([True])):
        with pytest.raises(ValueError):
            value /= 1
    i = mx.array([7, 8])
    i //= 2
    assert i.dtype == mx.int32 and i.tolist() == [3, 4]


def test_comparison_with_other_types_is_false():
    a = mx.array([1, 2])
    assert (a == None) is False  # noqa: E711
    assert (a != "x") is True


def test_scalar_conversions():
    assert int(mx.array(7)) == 7
    assert float(mx.array(2.5)) == 2.5
    assert bool(mx.array([1]))
    assert [0, 1, 2][mx.array(1)] == 1
    with pytest.raises(ValueError):
        mx.array([1, 2]).item()


def test_repr_in_mlx_style():
    assert repr(mx.array([1, 2, 3])) == "array([1, 2, 3], dtype=int32)"
    assert repr(mx.array(True)) == "array(True, dtype=bool)"
    assert str(mx.array(1.0)) == "array(1, dtype=float32)"
    assert str(mx.array([1] * 6)) == "array([1, 1, 1, 1, 1, 1], dtype=int32)"
    # More than six entries along an axis: the first and last three.
    assert str(mx.array([1] * 7)) == "array([1, 1, 1, ..., 1, 1, 1], dtype=int32)"
    # The rows of the outer axes one per line, under the opening bracket.
    assert str(mx.array([[1, 2]] * 3)) == "array([[1, 2],\n       [1, 2],\n       [1, 2]], dtype=int32)"
    assert str(mx.array([[[1, 2], [1, 2]], [[1, 2], [1, 2]]])) == (
        "array([[[1, 2],\n        [1, 2]],\n       [[1, 2],\n        [1, 2]]], dtype=int32)")
    rows = "       [1, 2],\n"
    assert str(mx.array([[1, 2]] * 7)) == (
        "array([[1, 2],\n" + rows * 2 + "       ...,\n" + rows * 2 + "       [1, 2]], dtype=int32)")
    assert str(mx.array([[True, False]] * 2)) == "array([[True, False],\n       [True, False]], dtype=bool)"
    assert str(mx.array([1.2], dtype=mx.float16)) == "array([1.2002], dtype=float16)"
    assert str(mx.array([1 + 1j])) == "array([1+1j], dtype=complex64)"


def test_astype_and_dtype_objects():
    a = mx.array([1.7, -2.2]).astype(mx.int32)
    assert a.dtype == mx.int32
    assert a.tolist() == [1, -2]
    assert mx.float32.size == 4
    assert mx.issubdtype(mx.float16, mx.floating)
    assert mx.issubdtype(mx.int8, mx.signedinteger)
    assert not mx.issubdtype(mx.uint8, mx.signedinteger)
    assert mx.finfo(mx.float16).max == 65504.0
    assert mx.iinfo(mx.int8).min == -128


@pytest.mark.parametrize("dtype, np_dtype", [(mx.float16, np.float16), (mx.float32, np.float32),
                                             (mx.float64, np.float64), (mx.complex64, np.complex64)])
def test_finfo_matches_numpy(dtype, np_dtype):
    f, ref = mx.finfo(dtype), np.finfo(np_dtype)
    assert f.min == float(ref.min) and f.max == float(ref.max) and f.eps == float(ref.eps)
    assert f.bits == ref.bits and f.smallest_normal == float(ref.smallest_normal)
    # complex64 reports its float32 component, as NumPy and MLX.
    assert f.dtype == (mx.float32 if dtype == mx.complex64 else dtype)


def test_finfo_of_bfloat16_and_of_non_floating_dtypes():
    f = mx.finfo(mx.bfloat16)
    assert f.bits == 16 and f.smallest_normal == 2.0**-126 and f.eps == 2.0**-7
    assert f.max == -f.min == (2 - 2.0**-7) * 2.0**127
    assert repr(mx.finfo(mx.float16)) == "finfo(min=-65504.0, max=65504.0, dtype=float16)"
    with pytest.raises(ValueError):
        mx.finfo(mx.int32)
    with pytest.raises(ValueError):
        mx.iinfo(mx.float32)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_numpy(dtype):
    i, ref = mx.iinfo(getattr(mx, dtype)), np.iinfo(getattr(np, dtype))
    assert (i.min, i.max, i.dtype) == (ref.min, ref.max, getattr(mx, dtype))


def test_pickle_and_copy():
    import copy

    a = mx.array([[1, 2], [3, 4]], mx.int16)
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == mx.int16 and b.tolist() == a.tolist()
    assert copy.deepcopy(a).tolist() == a.tolist()


ALL_DTYPES = [mx.bool_, mx.uint8, mx.uint16, mx.uint32, mx.uint64, mx.int8, mx.int16, mx.int32,
              mx.int64, mx.float16, mx.bfloat16, mx.float32, mx.float64, mx.complex64]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_pickle_round_trips_every_dtype(dtype):
    # bfloat16 included: its bits travel as uint16 (NumPy has no bfloat16), as in MLX.
    a = mx.array([[[1, 2], [3, 4]], [[5, 6], [7, 0]]], dtype=dtype)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        b = pickle.loads(pickle.dumps(a, protocol=protocol))
        assert isinstance(b, mx.array) and b.dtype == dtype and b.shape == a.shape
        assert mx.array_equal(a, b).item()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_copy_and_deepcopy_keep_every_dtype(dtype):
    import copy

    a = mx.array([[1, 0], [3, 4]], dtype=dtype)
    for b in [copy.copy(a), copy.deepcopy(a), copy.deepcopy({"w": [a]})["w"][0]]:
        assert b.dtype == dtype and mx.array_equal(a, b).item()


def test_pickle_keeps_bfloat16_bits_and_strided_layouts():
    x = mx.array([[1.5, -2.25, 3e38], [float("nan"), float("inf"), -0.0]], dtype=mx.bfloat16).T
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype == mx.bfloat16 and y.shape == (3, 2)
    np.testing.assert_array_equal(np.array(mx.view(y, mx.uint16)), np.array(mx.view(x, mx.uint16)))
    # A pickled tree of arrays (a model's parameters) comes back whole.
    params = {"w": mx.ones((2, 3), mx.bfloat16), "b": [mx.arange(3), mx.array(2.5, mx.float16)]}
    back = pickle.loads(pickle.dumps(params))
    assert back["w"].dtype == mx.bfloat16 and back["w"].tolist() == params["w"].tolist()
    assert back["b"][0].tolist() == [0, 1, 2] and back["b"][1].dtype == mx.float16


def test_errors_map_to_python_exceptions():
    with pytest.raises(ValueError):
        mx.array([1, 2, 3]) + mx.array([1, 2])
    with pytest.raises(ValueError):
        mx.array(object())


def test_devices_print_and_compare_as_in_mlx():
    cpu = mx.Device(mx.cpu)
    assert str(cpu) == repr(cpu) == "Device(cpu, 0)"
    assert str(mx.Device(mx.gpu, 1)) == "Device(gpu, 1)"
    # A device type equals the Device of that type and index 0, either way round.
    assert mx.cpu == cpu and cpu == mx.cpu
    assert mx.default_device().type == mx.Device(mx.default_device().type)
    assert mx.cpu != mx.Device(mx.gpu) and mx.cpu != mx.gpu and mx.cpu != "cpu"
    assert len({mx.cpu, mx.gpu, mx.cpu}) == 2
    assert str(mx.default_stream(mx.cpu)).startswith("Stream(cpu, ")


def test_operands_are_arrays_scalars_or_array_likes():
    # MLX: == and != with a list, tuple or other object are False and True; every other
    # operator raises ValueError for them.
    a = mx.array([1, 2, 3])
    assert (a == [1, 2, 3]) is False and (a == (1, 2, 3)) is False and (a == "abc") is False
    assert (a != [1, 2, 3]) is True and (a != object()) is True
    for op in (lambda: a < [1, 2, 3], lambda: a + (1, 2, 3), lambda: a // [1, 2, 3], lambda: a ** (1, 2, 3),
               lambda: a & [1, 2, 3], lambda: a < "hello", lambda: mx.array([1, 2.5]) * "hello",
               lambda: [1, 2, 3] - a):
        with pytest.raises(ValueError):
            op()
    b = mx.array([1, 2, 3])
    with pytest.raises(ValueError):
        b += [1, 1, 1]
    assert (a == np.array([1, 0, 3])).tolist() == [True, False, True]
    assert (a + np.int32(1)).tolist() == [2, 3, 4]


def test_scalar_conversions_format_and_bytes():
    assert complex(mx.array(1 + 2j)) == 1 + 2j and complex(mx.array(3.0)) == 3 + 0j
    assert f"{mx.array(0.35487):.1f}" == "0.4" and f"{mx.array(7):03d}" == "007"
    assert f"{mx.array([1, 2])}" == str(mx.array([1, 2]))
    with pytest.raises(TypeError):
        f"{mx.array([1.0, 2.0]):.1f}"
    with pytest.raises(TypeError):
        mx.arange(3).__index__()
    assert bytes(mx.arange(10).astype(mx.int16)) == np.arange(10, dtype=np.int16).tobytes()
    x = mx.array(b"Hello")
    assert x.dtype == mx.uint8 and x.tolist() == [72, 101, 108, 108, 111]


def test_objects_numpy_cannot_read_go_through_dlpack_or_raise_why():
    class DlpackOnly:  # NumPy refuses it (as torch's bfloat16 tensors), DLPack works
        def __array__(self, *args, **kwargs):
            raise TypeError("unsupported dtype")

        def __dlpack__(self, *args, **kwargs):
            return np.arange(3.0).__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    assert mx.array(DlpackOnly()).tolist() == [0.0, 1.0, 2.0]

    class Refuses:
        def __array__(self, *args, **kwargs):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        mx.array(Refuses())


def test_imports_after_torch():
    # The library's thread-local storage must not need the static TLS area that torch's
    # libraries may have used up.
    pytest.importorskip("torch")
    import subprocess
    import sys

    code = "import torch, braid.core as mx; print(mx.array(torch.ones(2)).tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1.0, 1.0]"


def test_torch_tensors_numpy_refuses():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    for view in (t, t.T, t[:, ::2], torch.zeros(0, 3, dtype=torch.bfloat16)):
        a = mx.array(view)
        assert a.dtype == mx.bfloat16 and a.tolist() == view.float().tolist()
    # A negative bit DLPack would lose: NumPy's error, not wrong values.
    with pytest.raises(RuntimeError):
        mx.array(torch._neg_view(torch.ones(3)))
