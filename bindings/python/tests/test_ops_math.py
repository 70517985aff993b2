# Element-wise ops of braid.core against NumPy: unary math, binary arithmetic with MLX's
# Python-scalar rules, comparisons, logic, bitwise ops, where/clip/isclose and their methods.
import math

import numpy as np
import pytest

import braid.core as mx

RNG = np.random.default_rng(7)


def check(out, expected, rtol=1e-5, atol=1e-6):
    assert isinstance(out, mx.array)
    got = np.array(out)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


# name, NumPy reference, input values (float32) inside the function's domain
UNARY = [
    ("abs", np.abs, np.linspace(-3, 3, 12)),
    ("sign", np.sign, np.array([-2.0, -0.0, 0.0, 1.5, 7.0])),
    ("negative", np.negative, np.linspace(-3, 3, 12)),
    ("square", np.square, np.linspace(-3, 3, 12)),
    ("floor", np.floor, np.linspace(-3.5, 3.5, 15)),
    ("ceil", np.ceil, np.linspace(-3.5, 3.5, 15)),
    ("sin", np.sin, np.linspace(-3, 3, 12)),
    ("cos", np.cos, np.linspace(-3, 3, 12)),
    ("tan", np.tan, np.linspace(-1.2, 1.2, 12)),
    ("arcsin", np.arcsin, np.linspace(-0.99, 0.99, 12)),
    ("arccos", np.arccos, np.linspace(-0.99, 0.99, 12)),
    ("arctan", np.arctan, np.linspace(-5, 5, 12)),
    ("sinh", np.sinh, np.linspace(-3, 3, 12)),
    ("cosh", np.cosh, np.linspace(-3, 3, 12)),
    ("tanh", np.tanh, np.linspace(-3, 3, 12)),
    ("arcsinh", np.arcsinh, np.linspace(-3, 3, 12)),
    ("arccosh", np.arccosh, np.linspace(1.0, 4, 12)),
    ("arctanh", np.arctanh, np.linspace(-0.9, 0.9, 12)),
    ("degrees", np.degrees, np.linspace(-3, 3, 12)),
    ("radians", np.radians, np.linspace(-180, 180, 12)),
    ("exp", np.exp, np.linspace(-3, 3, 12)),
    ("expm1", np.expm1, np.array([-1e-6, 1e-7, 0.0, 0.5, 2.0])),
    ("log", np.log, np.linspace(0.1, 9, 12)),
    ("log2", np.log2, np.linspace(0.1, 9, 12)),
    ("log10", np.log10, np.linspace(0.1, 9, 12)),
    ("log1p", np.log1p, np.array([1e-7, -1e-6, 0.5, 3.0])),
    ("sqrt", np.sqrt, np.linspace(0, 9, 12)),
    ("rsqrt", lambda x: 1 / np.sqrt(x), np.linspace(0.1, 9, 12)),
    ("reciprocal", np.reciprocal, np.linspace(0.5, 9, 12)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), np.linspace(-8, 8, 12)),
    ("erf", np.vectorize(math.erf), np.linspace(-2, 2, 12)),
]

UNARY_METHODS = ["abs", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "log2", "log10", "sin", "cos",
                 "log1p"]


@pytest.mark.parametrize("name,ref,values", UNARY, ids=[u[0] for u in UNARY])
def test_unary_functions_match_numpy(name, ref, values):
    x = values.astype(np.float32).reshape(-1)
    fn = getattr(mx, name)
    check(fn(mx.array(x)), ref(x.astype(np.float64)), rtol=2e-5, atol=2e-6)
    # Any array-like and Python scalars are accepted.
    check(fn(x.tolist()), ref(x.astype(np.float64)), rtol=2e-5, atol=2e-6)
    check(fn(float(x[1])), ref(np.float64(x[1])), rtol=2e-5, atol=2e-6)
    if name in UNARY_METHODS:
        check(getattr(mx.array(x), name)(), ref(x.astype(np.float64)), rtol=2e-5, atol=2e-6)


def test_unary_float_functions_promote_integers_and_keep_half_precision():
    assert mx.exp(mx.array([1, 2])).dtype == mx.float32
    assert mx.sqrt(mx.array([True])).dtype == mx.float32
    assert mx.sin(mx.array([1.0], mx.float16)).dtype == mx.float16
    assert mx.sin(mx.array([1.0], mx.bfloat16)).dtype == mx.bfloat16
    # Dtype-keeping ops keep integers.
    assert mx.abs(mx.array([-3], mx.int8)).dtype == mx.int8
    assert mx.square(mx.array([3], mx.uint16)).dtype == mx.uint16
    assert mx.floor(mx.array([3, -2])).tolist() == [3, -2]


def test_unary_on_empty_and_scalar_shapes():
    assert mx.exp(mx.zeros((0, 3))).shape == (0, 3)
    assert mx.abs(mx.array(-2.5)).shape == ()
    assert mx.abs(mx.array(-2.5)).item() == 2.5


def test_erfinv_inverts_erf():
    x = np.linspace(-0.95, 0.95, 21).astype(np.float32)
    check(mx.erf(mx.erfinv(mx.array(x))), x, rtol=1e-4, atol=1e-5)
    assert mx.erfinv(mx.array(0.0)).item() == 0.0


def test_predicates():
    x = np.array([1.0, np.nan, np.inf, -np.inf, -0.5], np.float32)
    a = mx.array(x)
    for name, ref in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                      ("isposinf", np.isposinf), ("isneginf", np.isneginf)]:
        out = getattr(mx, name)(a)
        assert out.dtype == mx.bool_
        np.testing.assert_array_equal(np.array(out), ref(x))
    assert not mx.isnan(mx.array([1, 2])).any().item()
    assert mx.isfinite(mx.array([1, 2], mx.int32)).all().item()


def test_nan_to_num():
    x = np.array([np.nan, np.inf, -np.inf, 2.0], np.float32)
    check(mx.nan_to_num(mx.array(x)), np.nan_to_num(x))
    check(mx.nan_to_num(mx.array(x), nan=-1.0, posinf=10.0, neginf=-10.0),
          np.nan_to_num(x, nan=-1.0, posinf=10.0, neginf=-10.0))
    check(mx.nan_to_num(mx.array(x), 5.0), np.nan_to_num(x, nan=5.0))
    h = mx.nan_to_num(mx.array(x, mx.float16))
    assert h.dtype == mx.float16
    assert np.array(h)[1] == np.finfo(np.float16).max
    assert mx.nan_to_num(mx.array([1, 2])).tolist() == [1, 2]


def test_round_with_decimals():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.2345, 123.456, -7.75], np.float32)
    check(mx.round(mx.array(x)), np.round(x))
    check(mx.round(mx.array(x), 2), np.round(x, 2), rtol=1e-6)
    check(mx.round(mx.array(x), decimals=-1), np.round(x, -1))
    check(mx.array(x).round(1), np.round(x, 1), rtol=1e-6)
    check(mx.array(x).round(decimals=2), np.round(x, 2), rtol=1e-6)
    assert mx.round(mx.array([1, 2], mx.int32)).dtype == mx.int32


def test_complex_parts_and_conjugate():
    z = np.array([1 + 2j, -3 - 0.5j, 4j], np.complex64)
    a = mx.array(z)
    check(mx.real(a), z.real)
    check(mx.imag(a), z.imag)
    assert mx.real(a).dtype == mx.float32
    check(mx.conjugate(a), np.conj(z))
    check(mx.conj(a), np.conj(z))
    check(a.conj(), np.conj(z))
    check(mx.abs(a), np.abs(z))
    r = mx.array([1.0, -2.0])
    check(mx.real(r), [1.0, -2.0])
    check(mx.imag(r), [0.0, 0.0])
    check(mx.conjugate(r), [1.0, -2.0])


def test_stop_gradient_is_the_identity():
    a = mx.array([1.0, 2.0])
    check(mx.stop_gradient(a), [1.0, 2.0])


# name, NumPy reference
BINARY = [
    ("add", np.add),
    ("subtract", np.subtract),
    ("multiply", np.multiply),
    ("divide", np.divide),
    ("floor_divide", np.floor_divide),
    ("remainder", np.remainder),
    ("power", np.power),
    ("maximum", np.maximum),
    ("minimum", np.minimum),
    ("logaddexp", np.logaddexp),
    ("arctan2", np.arctan2),
]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_functions_broadcast_like_numpy(name, ref):
    x = RNG.uniform(-3, 3, size=(3, 1, 4)).astype(np.float32)
    y = RNG.uniform(0.5, 3, size=(5, 1)).astype(np.float32)
    if name == "power":
        x = np.abs(x) + 0.1
    fn = getattr(mx, name)
    check(fn(mx.array(x), mx.array(y)), ref(x, y), rtol=1e-5, atol=1e-5)
    check(fn(mx.array(x), 2.0), ref(x, np.float32(2.0)), rtol=1e-5, atol=1e-5)
    check(fn(2.0, mx.array(y)), ref(np.float32(2.0), y), rtol=1e-5, atol=1e-5)
    check(fn(x.tolist(), y), ref(x, y), rtol=1e-5, atol=1e-5)


def test_complex_logaddexp_is_the_log_of_the_sum_of_exps():
    # MLX's definition: the lexicographically larger operand factored out; exp of the result
    # is exp(a) + exp(b) whatever branch of the log that picks.
    a = (RNG.uniform(-3, 3, size=6) + 1j * RNG.uniform(-3, 3, size=6)).astype(np.complex64)
    b = (RNG.uniform(-3, 3, size=6) + 1j * RNG.uniform(-3, 3, size=6)).astype(np.complex64)
    out = mx.logaddexp(mx.array(a), mx.array(b))
    assert out.dtype == mx.complex64
    np.testing.assert_allclose(np.exp(np.array(out)), np.exp(a) + np.exp(b), rtol=1e-4, atol=1e-5)
    hi = np.where((a.real > b.real) | ((a.real == b.real) & (a.imag > b.imag)), a, b)
    lo = np.where(hi == a, b, a)
    np.testing.assert_allclose(np.array(out), hi + np.log1p(np.exp(lo - hi)), rtol=1e-5, atol=1e-5)
    inf = mx.logaddexp(mx.array([complex(-np.inf, 0)]), mx.array([1 + 2j]))
    assert inf.tolist() == [1 + 2j]
    # Equal real parts order by the imaginary part; a far smaller operand still counts (the
    # log1p of a tiny exp is not lost to 1 + tiny).
    tie = mx.logaddexp(mx.array([1 - 1j]), mx.array([1 + 2j])).item()
    np.testing.assert_allclose(np.exp(tie), np.exp(1 - 1j) + np.exp(1 + 2j), rtol=1e-5)
    assert abs(tie.imag - 2) < np.pi / 2
    tiny = mx.logaddexp(mx.array([0j]), mx.array([-20 + 0j])).item()
    np.testing.assert_allclose(tiny.real, np.logaddexp(0.0, -20.0), rtol=1e-5)
    assert mx.log1p(mx.array([1e-8 + 0j])).item().real == pytest.approx(1e-8, rel=1e-6)
    np.testing.assert_allclose(np.array(mx.log1p(mx.array(a))), np.log1p(a.astype(np.complex128)), rtol=1e-5, atol=1e-6)


def test_python_scalars_are_weak():
    i8 = mx.array([1, 2], mx.int8)
    f16 = mx.array([1, 2], mx.float16)
    assert mx.add(i8, 1).dtype == mx.int8
    assert mx.add(1, i8).dtype == mx.int8
    assert mx.add(i8, 1.5).dtype == mx.float32
    assert mx.multiply(f16, 2.0).dtype == mx.float16
    assert mx.subtract(3, f16).dtype == mx.float16
    assert mx.maximum(mx.array([1], mx.uint8), 3).dtype == mx.uint8
    assert mx.add(1, 2).dtype == mx.int32
    assert mx.add(1, 2.5).dtype == mx.float32
    assert mx.add(1, 2.5).item() == 3.5
    # An array-array op promotes as NumPy would.
    assert mx.add(i8, mx.array([1], mx.int32)).dtype == mx.int32
    assert mx.divide(mx.array([1, 2]), 2).dtype == mx.float32


def test_integer_arithmetic():
    a = np.array([7, 8, 9, 10, 255], np.int32)
    b = np.array([2, 3, 4, 7, 16], np.int32)
    x, y = mx.array(a), mx.array(b)
    np.testing.assert_array_equal(np.array(mx.floor_divide(x, y)), a // b)
    np.testing.assert_array_equal(np.array(mx.remainder(x, y)), a % b)
    np.testing.assert_array_equal(np.array(mx.power(x, 2)), a**2)
    assert mx.power(x, 2).dtype == mx.int32
    # remainder takes the divisor's sign, as Python's %.
    np.testing.assert_array_equal(np.array(mx.remainder(mx.array([-7, 7]), mx.array([3, -3]))),
                                  np.remainder([-7, 7], [3, -3]))
    check(mx.floor_divide(mx.array([-7.0, 7.0]), 2.0), [-4.0, 3.0])


def test_divmod_returns_quotient_and_remainder():
    x = np.array([-7.5, 3.0, 10.0], np.float32)
    q, r = mx.divmod(mx.array(x), 2.0)
    check(q, np.floor_divide(x, 2.0))
    check(r, np.remainder(x, 2.0))
    q, r = mx.divmod(17, mx.array([5, 3]))
    assert q.tolist() == [3, 5] and r.tolist() == [2, 2]
    with pytest.raises(ValueError):
        mx.divmod(mx.array([1 + 1j]), mx.array([1 + 0j]))


COMPARISONS = [
    ("equal", np.equal),
    ("not_equal", np.not_equal),
    ("less", np.less),
    ("less_equal", np.less_equal),
    ("greater", np.greater),
    ("greater_equal", np.greater_equal),
]


@pytest.mark.parametrize("name,ref", COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons_give_bool(name, ref):
    x = np.array([[1, 2, 3], [3, 2, 1]], np.int32)
    y = np.array([2, 2, 2], np.int32)
    out = getattr(mx, name)(mx.array(x), mx.array(y))
    assert out.dtype == mx.bool_
    np.testing.assert_array_equal(np.array(out), ref(x, y))
    np.testing.assert_array_equal(np.array(getattr(mx, name)(2, mx.array(x))), ref(2, x))
    np.testing.assert_array_equal(np.array(getattr(mx, name)(mx.array(x), 2.5)), ref(x, 2.5))


def test_isclose_allclose_array_equal():
    a = np.array([1.0, 1.0 + 1e-7, np.nan, np.inf, 2.0], np.float32)
    b = np.array([1.0, 1.0, np.nan, np.inf, 2.1], np.float32)
    np.testing.assert_array_equal(np.array(mx.isclose(mx.array(a), mx.array(b))), np.isclose(a, b))
    np.testing.assert_array_equal(np.array(mx.isclose(mx.array(a), mx.array(b), equal_nan=True)),
                                  np.isclose(a, b, equal_nan=True))
    np.testing.assert_array_equal(np.array(mx.isclose(mx.array(a), mx.array(b), 0.1, 0.0)),
                                  np.isclose(a, b, rtol=0.1, atol=0.0))
    assert mx.allclose(mx.array([1.0, 2.0]), mx.array([1.0, 2.0 + 1e-7])).item()
    assert not mx.allclose(mx.array([1.0, np.nan]), mx.array([1.0, np.nan])).item()
    assert mx.allclose(mx.array([1.0, np.nan]), mx.array([1.0, np.nan]), equal_nan=True).item()
    assert mx.allclose(mx.array([[1.0], [1.0]]), mx.array([1.0, 1.0, 1.0])).item()  # broadcasts
    eq = mx.array_equal(mx.array([1, 2]), mx.array([1.0, 2.0]))
    assert eq.shape == () and eq.dtype == mx.bool_ and eq.item()
    assert not mx.array_equal(mx.array([1, 2]), mx.array([[1, 2]])).item()
    assert not mx.array_equal(mx.array([np.nan]), mx.array([np.nan])).item()
    assert mx.array_equal(mx.array([np.nan]), mx.array([np.nan]), equal_nan=True).item()
    with pytest.raises(TypeError):
        mx.array_equal(mx.array([1]), mx.array([1]), True)  # equal_nan is keyword-only


def test_logical_ops():
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    np.testing.assert_array_equal(np.array(mx.logical_and(mx.array(a), mx.array(b))), a & b)
    np.testing.assert_array_equal(np.array(mx.logical_or(mx.array(a), mx.array(b))), a | b)
    np.testing.assert_array_equal(np.array(mx.logical_not(mx.array(a))), ~a)
    # Other dtypes are read as truth values.
    np.testing.assert_array_equal(np.array(mx.logical_and(mx.array([0, 2, 3]), 1.0)), [False, True, True])
    assert mx.logical_not(mx.array([0.0, 2.0])).dtype == mx.bool_


def test_bitwise_ops():
    a = np.array([0b1100, 0b1010, 255, 7], np.int32)
    b = np.array([0b1010, 0b0110, 15, 1], np.int32)
    x, y = mx.array(a), mx.array(b)
    for name, ref in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                      ("bitwise_xor", np.bitwise_xor), ("left_shift", np.left_shift),
                      ("right_shift", np.right_shift)]:
        out = getattr(mx, name)(x, y)
        assert out.dtype == mx.int32
        np.testing.assert_array_equal(np.array(out), ref(a, b))
    np.testing.assert_array_equal(np.array(mx.bitwise_invert(x)), np.invert(a))
    np.testing.assert_array_equal(np.array(mx.right_shift(mx.array([-8]), 1)), [-4])  # arithmetic
    u8 = mx.bitwise_and(mx.array([0xF0], mx.uint8), 0x3C)
    assert u8.dtype == mx.uint8 and u8.tolist() == [0x30]
    assert mx.bitwise_invert(mx.array([True, False])).tolist() == [False, True]
    with pytest.raises(ValueError):
        mx.bitwise_and(mx.array([1.0]), mx.array([1.0]))
    with pytest.raises(ValueError):
        mx.bitwise_invert(mx.array([1.5]))


def test_where():
    cond = np.array([[True, False, True]])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(mx.where(mx.array(cond), mx.array(x), -1.0), np.where(cond, x, -1.0))
    check(mx.where(mx.array(cond), 1.0, mx.array(x)), np.where(cond, 1.0, x))
    out = mx.where(mx.array([True, False]), 1, 2)
    assert out.dtype == mx.int32 and out.tolist() == [1, 2]
    assert mx.where(mx.array([True]), mx.array([1], mx.int8), 5).dtype == mx.int8
    check(mx.where(mx.array([1, 0]), mx.array([1.0, 2.0]), mx.array([3.0, 4.0])), [1.0, 4.0])


def test_clip():
    x = np.linspace(-3, 3, 7).astype(np.float32)
    check(mx.clip(mx.array(x), -1, 2), np.clip(x, -1, 2))
    check(mx.clip(mx.array(x), None, 0.5), np.clip(x, None, 0.5))
    check(mx.clip(mx.array(x), a_min=0.0, a_max=None), np.clip(x, 0.0, None))
    lo = np.array([-2.0, 0.0, 1.0], np.float32)[:, None]
    check(mx.clip(mx.array(x), mx.array(lo), 2.5), np.clip(x, lo, 2.5))
    assert mx.clip(mx.array([1, 5, 9], mx.int8), 2, 6).dtype == mx.int8
    with pytest.raises(ValueError):
        mx.clip(mx.array(x), None, None)
    with pytest.raises(TypeError):
        mx.clip(mx.array(x), 0.0)  # both bounds are required (either may be None)


def test_astype_function():
    out = mx.astype(mx.array([1.7, -2.2]), mx.int32)
    assert out.dtype == mx.int32 and out.tolist() == [1, -2]


def test_keyword_rules_and_stream_argument():
    a = mx.array([1.0, -2.0])
    check(mx.abs(a, stream=mx.cpu), [1.0, 2.0])
    check(mx.add(a, 1, stream=mx.default_stream(mx.cpu)), [2.0, -1.0])
    check(a.exp(stream=mx.cpu), np.exp([1.0, -2.0]))
    with pytest.raises(TypeError):
        mx.abs(a, mx.cpu)  # stream is keyword-only
    with pytest.raises(TypeError):
        mx.abs(a=a)  # a is positional-only
    with pytest.raises(TypeError):
        mx.add(a=a, b=a)
    with pytest.raises(TypeError):
        a.abs(mx.cpu)


def test_errors():
    with pytest.raises(ValueError):
        mx.add(mx.zeros((2, 3)), mx.zeros((4,)))  # shapes do not broadcast
    with pytest.raises(ValueError):
        mx.negative(mx.array([True]))
    with pytest.raises(ValueError):
        mx.floor(mx.array([1j]))
    with pytest.raises(ValueError):
        mx.abs(mx.array([1.0]), stream="cpu")
    with pytest.raises(ValueError):
        mx.exp("not an array")
