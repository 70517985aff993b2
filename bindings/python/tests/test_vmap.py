# vmap over Python functions: axes as ints, None, tuples and trees, checked against NumPy loops.
import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(0)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_unary_over_each_axis():
    xv = rand(2, 4)
    x = mx.array(xv)
    f = lambda a: a * a + 1
    np.testing.assert_allclose(np.array(mx.vmap(f)(x)), xv * xv + 1)
    np.testing.assert_allclose(np.array(mx.vmap(f, in_axes=1, out_axes=1)(x)), xv * xv + 1)
    np.testing.assert_allclose(np.array(mx.vmap(f, in_axes=1)(x)), (xv * xv + 1).T)
    np.testing.assert_allclose(np.array(mx.vmap(f, in_axes=-1, out_axes=-1)(x)), xv * xv + 1)


def test_binary_with_axes_per_argument():
    xv, yv = rand(2, 4), rand(4, 2)
    x, y = mx.array(xv), mx.array(yv)
    out = mx.vmap(lambda a, b: a * b, in_axes=(0, 1))(x, y)
    np.testing.assert_allclose(np.array(out), xv * yv.T)
    out = mx.vmap(lambda a, b: a * b, in_axes=(0, 1), out_axes=1)(x, y)
    np.testing.assert_allclose(np.array(out), (xv * yv.T).T)
    out = mx.vmap(lambda a, b: a - b, in_axes=(0, None))(x, mx.array(yv[:, 0]))
    np.testing.assert_allclose(np.array(out), xv - yv[:, 0])
    out = mx.vmap(lambda a, b: a - b, (0, None))(x, mx.array(yv[:, 0]))  # in_axes positionally
    np.testing.assert_allclose(np.array(out), xv - yv[:, 0])


def test_matmul_against_a_loop():
    av, bv = rand(3, 2, 4), rand(4, 5)
    out = mx.vmap(lambda a, b: a @ b, in_axes=(0, None))(mx.array(av), mx.array(bv))
    np.testing.assert_allclose(np.array(out), np.stack([a @ bv for a in av]), rtol=1e-5, atol=1e-6)
    out = mx.vmap(lambda a, b: a @ b, in_axes=(1, None), out_axes=(1,))(mx.array(av), mx.array(bv))
    expected = np.stack([av[:, i] @ bv for i in range(av.shape[1])], axis=1)
    np.testing.assert_allclose(np.array(out), expected, rtol=1e-5, atol=1e-6)


def test_trees_of_inputs_and_outputs():
    def my_fun(tree):
        return (tree["a"] + tree["b"][0]) * tree["b"][1]

    tv = {"a": rand(2, 4), "b": (rand(2, 4), rand(2, 4))}
    tree = {"a": mx.array(tv["a"]), "b": (mx.array(tv["b"][0]), mx.array(tv["b"][1]))}
    expected = (tv["a"] + tv["b"][0]) * tv["b"][1]
    for in_axes in (0, {"a": 0, "b": 0}, {"a": 0, "b": (0, 0)}):
        np.testing.assert_allclose(np.array(mx.vmap(my_fun, in_axes=in_axes)(tree)), expected)
    with pytest.raises(ValueError):
        mx.vmap(my_fun, in_axes={"a": 0, "b": ((0, 0), 0)}, out_axes=0)(tree)

    tree_t = {"a": tree["a"], "b": (mx.array(tv["b"][0].T), mx.array(tv["b"][1].T))}
    out = mx.vmap(my_fun, in_axes={"a": 0, "b": (1, 1)})(tree_t)
    np.testing.assert_allclose(np.array(out), expected)

    def two(x, y):
        return {"a": x + y, "b": x * y}

    xv, yv = rand(2, 4), rand(2, 4)
    out = mx.vmap(two, in_axes=0, out_axes={"a": 1, "b": 0})(mx.array(xv), mx.array(yv))
    np.testing.assert_allclose(np.array(out["a"]), (xv + yv).T)
    np.testing.assert_allclose(np.array(out["b"]), xv * yv)
    for bad in ((0, 1), {"a": 0, "c": 1}, [0, 0]):
        with pytest.raises(ValueError):
            mx.vmap(two, in_axes=0, out_axes=bad)(mx.array(xv), mx.array(yv))


def test_outputs_that_do_not_depend_on_the_mapped_inputs_repeat():
    a, b = mx.array(rand(2, 3, 4)), mx.array(rand(4, 3))
    const = lambda a, b: mx.array(2)
    np.testing.assert_array_equal(np.array(mx.vmap(const, in_axes=(0, None))(a, b)), [2, 2])
    np.testing.assert_array_equal(np.array(mx.vmap(const, in_axes=(None, 0))(a, b)), [2] * 4)
    np.testing.assert_array_equal(np.array(mx.vmap(const, in_axes=(1, 1))(a, b)), [2] * 3)
    out = mx.vmap(lambda a, b: b, in_axes=(0, None), out_axes=1)(a, b)
    assert out.shape == (4, 2, 3)
    np.testing.assert_array_equal(np.array(out), np.repeat(np.array(b)[:, None], 2, axis=1))
    with pytest.raises(ValueError):
        mx.vmap(const, in_axes=(None, None))(a, b)
    with pytest.raises(ValueError):
        mx.vmap(const, in_axes=(0, 0))(a, b)  # sizes 2 and 4


def test_out_axes_none_keeps_an_unmapped_output_and_rejects_a_mapped_one():
    x, c = mx.array(rand(3, 2)), mx.array(rand(5))
    out, same = mx.vmap(lambda x, c: (x * 2, c + 1), in_axes=(0, None), out_axes=(0, None))(x, c)
    assert out.shape == (3, 2) and same.shape == (5,)
    with pytest.raises(ValueError):
        mx.vmap(lambda x: x * 2, out_axes=None)(x)


def test_invalid_inputs_and_axes():
    with pytest.raises(ValueError):
        mx.vmap(lambda x: x)(mx.array(1.0))  # a scalar has no axis to map
    with pytest.raises(ValueError):
        mx.vmap(lambda x: x)("hello")
    with pytest.raises(ValueError):
        mx.vmap(lambda x: x, in_axes="hello")(mx.array([0, 1]))
    with pytest.raises(ValueError):
        mx.vmap(lambda x: x, in_axes=2)(mx.array([0, 1]))
    with pytest.raises(ValueError):
        mx.vmap(lambda x: x, out_axes="hello")(mx.array([0, 1]))
    with pytest.raises(ValueError):
        mx.vmap(lambda x: x, out_axes=2)(mx.array([0, 1]))
    with pytest.raises(ValueError):
        mx.vmap(lambda x, y: x + y)(mx.array(rand(10, 1)), mx.array(rand(1, 1, 1, 5)))
    with pytest.raises(ValueError):
        mx.vmap(lambda x, y: x + y, in_axes=(0, 1))(mx.array(rand(10, 1)), mx.array(rand(10, 5)))
    with pytest.raises(ValueError):
        mx.vmap(lambda x, y: x, in_axes=(0,))(mx.array(rand(2)), mx.array(rand(2)))


def test_one_element_tuple_axes_for_a_single_array():
    xv = rand(5, 3, 2)
    out = mx.vmap(lambda x: x @ mx.array(np.ones(2, np.float32)), in_axes=(1,))(mx.array(xv))
    np.testing.assert_allclose(np.array(out), xv.sum(axis=2).T, rtol=1e-5)
    out = mx.vmap(lambda x: x * 1, in_axes=(None,))
    with pytest.raises(ValueError):
        out(mx.array(xv))


def test_nested_vmap_and_vmap_of_grad():
    xv = rand(2, 3, 4)
    out = mx.vmap(mx.vmap(lambda x: x * x))(mx.array(xv))
    np.testing.assert_allclose(np.array(out), xv * xv)

    wv = rand(3)
    loss = lambda w, x: (x @ w) * (x @ w)
    xs = rand(4, 3)
    per_example = mx.vmap(mx.grad(loss), in_axes=(None, 0))(mx.array(wv), mx.array(xs))
    expected = np.stack([2 * (x @ wv) * x for x in xs])
    np.testing.assert_allclose(np.array(per_example), expected, rtol=1e-5, atol=1e-6)


def test_dtypes_and_empty_batches():
    for dtype in (mx.int32, mx.float16, mx.bool_):
        x = mx.array(np.arange(6).reshape(2, 3) % 2, dtype)
        out = mx.vmap(lambda a: a == a)(x)
        assert out.dtype == mx.bool_ and out.shape == (2, 3)
    out = mx.vmap(lambda a: a * 2)(mx.array(np.zeros((0, 3), np.float32)))
    assert out.shape == (0, 3)


def test_custom_vmap_rule_is_used():
    @mx.custom_function
    def f(x, y):
        return x + y

    @f.vmap
    def f_vmap(inputs, axes):
        x, y = inputs
        assert axes == (0, None)
        return (x + y) * 10, 0

    out = mx.vmap(f, in_axes=(0, None))(mx.array([1.0, 2.0]), mx.array(1.0))
    np.testing.assert_array_equal(np.array(out), [20.0, 30.0])
