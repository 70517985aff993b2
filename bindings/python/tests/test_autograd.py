# grad, value_and_grad, vjp, jvp, custom_function, checkpoint and eval over Python functions,
# checked against derivatives computed by hand with NumPy.
import numpy as np
import pytest

import braid.core as mx


def total(x):
    """The sum of a 1-d array, with the operators alone."""
    return x @ mx.array(np.ones(x.shape[0], np.float32))


def test_vjp_of_products():
    out, vjps = mx.vjp(lambda x, y: x * y, [mx.array(4.0), mx.array(2.0)], [mx.array(3.0)])
    assert isinstance(out, list) and isinstance(vjps, list)
    assert out[0].item() == 8.0
    assert [v.item() for v in vjps] == [6.0, 12.0]

    _, vjps = mx.vjp(
        lambda x, y, z: (x * y, y * z),
        [mx.array(2.0), mx.array(4.0), mx.array(6.0)],
        [mx.array(1.0), mx.array(3.0)],
    )
    assert [v.item() for v in vjps] == [4.0, 2.0 + 18.0, 12.0]


def test_jvp_of_products():
    out, jvps = mx.jvp(lambda x: 2 * x, [mx.array(1.0)], [mx.array(2.0)])
    assert out[0].item() == 2.0 and jvps[0].item() == 4.0
    _, jvps = mx.jvp(
        lambda x, y, z: (x * y, y * z),
        [mx.array(2.0), mx.array(4.0), mx.array(6.0)],
        [mx.array(1.0), mx.array(3.0), mx.array(1.0)],
    )
    assert [j.item() for j in jvps] == [4.0 + 6.0, 4.0 + 18.0]


def test_vjp_and_jvp_take_tuples_and_check_counts():
    _, vjps = mx.vjp(lambda x: [x * x], (mx.array(3.0),), (mx.array(1.0),))
    assert vjps[0].item() == 6.0
    with pytest.raises(ValueError):
        mx.vjp(lambda x, y: (x, y), [mx.array(1.0), mx.array(1.0)], [mx.array(1.0)])
    with pytest.raises(ValueError):
        mx.jvp(lambda x: x, [mx.array(1.0)], [mx.array([1.0, 2.0])])
    with pytest.raises(ValueError):
        mx.vjp(lambda x: "not an array", [mx.array(1.0)], [mx.array(1.0)])


def test_grad_matches_numpy_derivative():
    rng = np.random.default_rng(0)
    xv = rng.standard_normal(5).astype(np.float32)
    f = lambda x: total(x * x * x)
    g = mx.grad(f)(mx.array(xv))
    np.testing.assert_allclose(np.array(g), 3 * xv * xv, rtol=1e-5)
    value, g = mx.value_and_grad(f)(mx.array(xv))
    np.testing.assert_allclose(value.item(), np.sum(xv**3), rtol=1e-5)
    np.testing.assert_allclose(np.array(g), 3 * xv * xv, rtol=1e-5)


def test_higher_order_gradients():
    f = lambda x: x * x * x
    x = mx.array(0.5)
    assert mx.grad(f)(x).item() == pytest.approx(0.75)
    assert mx.grad(mx.grad(f))(x).item() == pytest.approx(3.0)
    assert mx.grad(mx.grad(mx.grad(f)))(x).item() == pytest.approx(6.0)
    assert mx.grad(mx.grad(mx.grad(mx.grad(f))))(x).item() == 0.0


def test_argnums_select_and_sort():
    f = lambda x, y: x * y
    x, y = mx.array(2.0), mx.array(3.0)
    assert mx.grad(f, argnums=0)(x, y).item() == 3.0
    assert mx.grad(f, argnums=1)(x, y).item() == 2.0
    grads = mx.grad(f, argnums=(1, 0))(x, y)
    assert isinstance(grads, tuple)
    assert [g.item() for g in grads] == [3.0, 2.0]  # in argument order, as MLX sorts them
    value, grads = mx.value_and_grad(f, [0, 1])(x, y)
    assert value.item() == 6.0 and len(grads) == 2


def test_non_array_arguments_pass_through_when_not_differentiated():
    f = lambda x, greeting, scale=1: x * scale if greeting == "hello" else x
    value, g = mx.value_and_grad(f)(mx.array(2.0), "hello", scale=3)
    assert value.item() == 6.0 and g.item() == 3.0
    assert mx.grad(f)(mx.array(2.0), "hello").item() == 1.0


def test_bad_uses_raise_mlx_errors():
    with pytest.raises(ValueError):
        mx.grad(lambda x: "hello")(mx.array(2.0))
    with pytest.raises(ValueError):
        mx.grad(lambda x: x, argnums=2)(mx.array(2.0))
    with pytest.raises(ValueError):
        mx.grad(lambda x: x, argnums=-2)
    with pytest.raises(ValueError):
        mx.grad(lambda x: x)("hello")
    with pytest.raises(ValueError):
        mx.grad(lambda x: x * 1)(mx.array([1.0, 2.0]))  # not a scalar
    with pytest.raises(TypeError):
        mx.value_and_grad(lambda x: x, (None, None))
    with pytest.raises(TypeError):
        mx.grad(lambda x: x, argnums="x")
    with pytest.raises(ValueError):
        mx.value_and_grad(lambda x: x, tuple())
    with pytest.raises(ValueError):
        mx.grad(lambda x: x, argnums=(0, 0))
    with pytest.raises(ValueError):
        mx.value_and_grad(lambda p: p["x"] * p["y"])({"x": 0.5, "y": mx.array(2.0)})


def test_gradients_keep_the_structure_of_their_argument():
    f = lambda p: p["x"] * p["y"]
    value, g = mx.value_and_grad(f)({"x": mx.array(0.5), "y": mx.array(2.0)})
    assert value.item() == 1.0
    assert isinstance(g, dict) and g["x"].item() == 2.0 and g["y"].item() == 0.5

    f = lambda p, b: p[0]["foo"][2] * p[0]["foo"][2] * b
    value, g = mx.value_and_grad(f)([{"foo": [[], [], mx.array(2.0)]}], mx.array(0.5))
    assert value.item() == 2.0
    assert g[0]["foo"][:2] == [[], []]
    assert g[0]["foo"][2].item() == 2.0

    g = mx.grad(lambda t: t[0] * t[1])((mx.array(3.0), mx.array(4.0)))
    assert isinstance(g, tuple) and [v.item() for v in g] == [4.0, 3.0]


def test_auxiliary_outputs_are_returned_not_differentiated():
    def fun(x, y):
        loss = total(x * y)
        return loss, {"loss": loss, "foo": y * y + x * x, "bar": [1, 2, 3, y]}

    xv = np.array([1.0, 2.0], np.float32)
    yv = np.array([3.0, 5.0], np.float32)
    (loss, aux), g = mx.value_and_grad(fun)(mx.array(xv), mx.array(yv))
    assert loss.item() == pytest.approx(np.sum(xv * yv))
    assert aux["loss"].item() == loss.item()
    np.testing.assert_allclose(np.array(aux["foo"]), yv * yv + xv * xv)
    assert aux["bar"][:3] == [1, 2, 3]
    np.testing.assert_allclose(np.array(g), yv)
    with pytest.raises(ValueError):
        mx.grad(fun)(mx.array(xv), mx.array(yv))
    with pytest.raises(ValueError):
        mx.value_and_grad(lambda x: ())(mx.array(1.0))
    with pytest.raises(ValueError):
        mx.value_and_grad(lambda x: ("loss", x))(mx.array(1.0))


def test_keyword_arguments_by_argnames():
    f = lambda x, y: x * y
    a, b = mx.array(0.5), mx.array(2.0)
    dfdx = mx.grad(f)
    assert dfdx(a, b).item() == 2.0
    assert dfdx(a, y=b).item() == 2.0
    with pytest.raises(ValueError):
        dfdx(x=a, y=b)

    dfdy = mx.grad(f, argnums=[], argnames=["y"])
    with pytest.raises(ValueError):
        dfdy(a, b)
    grads = dfdy(a, y=b)
    assert isinstance(grads, tuple) and grads[0] is None
    assert grads[1]["y"].item() == 0.5
    assert len(dfdy(x=a, y=b)[1]) == 1

    grads = mx.grad(f, argnums=[0], argnames="y")(a, y=b)
    assert grads[0].item() == 2.0 and grads[1]["y"].item() == 0.5

    fun = lambda x, y, z: x * y * z
    grads = mx.grad(fun, argnums=[0, 1], argnames=["z"])(a, b, z=mx.array(4.0))
    assert [g.item() for g in grads[0]] == [8.0, 2.0]
    assert grads[1]["z"].item() == 1.0

    grads = mx.grad(f, argnames=["y"])(a, y=b)
    assert grads[0] is None and grads[1]["y"].item() == 0.5


def test_captured_arrays_are_constants():
    a = mx.array(5.0)
    assert mx.grad(lambda x: a + x)(a).item() == 1.0
    assert mx.grad(lambda x: a + a)(a).item() == 0.0
    assert mx.grad(lambda x: x + x)(a).item() == 2.0
    assert mx.grad(mx.grad(lambda x: a * x))(a).item() == 0.0


def test_python_exceptions_reach_the_caller_unchanged():
    class Boom(Exception):
        pass

    err = Boom("from inside")

    def fail(x):
        raise err

    for transform in (mx.grad(fail), mx.value_and_grad(fail), mx.vmap(fail), mx.checkpoint(fail)):
        with pytest.raises(Boom) as info:
            transform(mx.array([1.0]))
        assert info.value is err
    with pytest.raises(Boom):
        mx.vjp(fail, [mx.array(1.0)], [mx.array(1.0)])
    with pytest.raises(Boom):
        mx.jvp(fail, [mx.array(1.0)], [mx.array(1.0)])
    with pytest.raises(KeyError):
        mx.grad(lambda p: p["missing"])({"x": mx.array(1.0)})


@pytest.mark.parametrize("dtype", [mx.float16, mx.bfloat16, mx.float32])
def test_gradient_dtype_follows_the_input(dtype):
    assert mx.grad(lambda x: x)(mx.array(1.0, dtype)).dtype == dtype
    assert mx.grad(lambda x, y: x * y)(mx.array(1.0, dtype), mx.array(2.0, dtype)).dtype == dtype


def test_evaluation_inside_the_traced_function():
    y = mx.array([2.0, 2.0])

    def func(x):
        x = x + y
        (x < 1).tolist()
        mx.eval(x)
        return x * x

    _, vjps = mx.vjp(func, (mx.array([1.0]),), (mx.array([1.0, 1.0]),))
    assert vjps[0].item() == 12.0


def test_state_updated_inside_grad_is_usable():
    state = [mx.array(np.zeros(2, np.float32))]

    def fn(y, x):
        x = y * x
        state[0] = state[0] + x
        return total(x)

    mx.grad(fn)(mx.array([1.0]), mx.array(np.ones(2, np.float32)))
    mx.eval(state)
    np.testing.assert_array_equal(np.array(state[0]), np.ones(2))


def test_custom_function_replaces_each_transform():
    calls = []

    @mx.custom_function
    def f(x, y):
        return x * y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        x, y = primals
        calls.append("vjp")
        np.testing.assert_array_equal(np.array(output), np.array(x * y))
        return cotangent * 10, cotangent * 100

    @f.jvp
    def f_jvp(primals, tangents):
        calls.append("jvp")
        dx, dy = tangents
        return dx * 7 + dy * 70

    @f.vmap
    def f_vmap(inputs, axes):
        calls.append(("vmap", axes))
        x, y = inputs
        return x * y + 1000, axes[0]

    x, y = mx.array(2.0), mx.array(3.0)
    assert f(x, y).item() == 6.0
    assert [g.item() for g in mx.grad(f, argnums=(0, 1))(x, y)] == [10.0, 100.0]
    _, jvps = mx.jvp(f, [x, y], [mx.array(1.0), mx.array(1.0)])
    assert jvps[0].item() == 77.0
    out = mx.vmap(f, in_axes=(0, None))(mx.array([1.0, 2.0]), y)
    np.testing.assert_array_equal(np.array(out), [1003.0, 1006.0])
    assert calls == ["vjp", "jvp", ("vmap", (0, None))]


def test_custom_function_trees_keywords_and_missing_tangents():
    @mx.custom_function
    def g(x, scale=1.0):
        return {"a": x * x * scale, "b": [x]}

    @g.vjp
    def g_vjp(primal, cotangents, outputs, scale=1.0):
        assert isinstance(cotangents, dict) and isinstance(outputs["b"], list)
        return cotangents["a"] * primal * 2 * scale + cotangents["b"][0]

    @g.jvp
    def g_jvp(primals, tangents):
        return {"a": tangents * 0 + 5, "b": [tangents]}

    x = mx.array(3.0)
    assert mx.grad(lambda x: g(x, scale=2.0)["a"])(x).item() == 12.0
    assert mx.grad(lambda x: g(x)["b"][0])(x).item() == 1.0
    _, jvps = mx.jvp(lambda x: g(x)["a"], [x], [mx.array(1.0)])
    assert jvps[0].item() == 5.0

    @mx.custom_function
    def h(x, y):
        return x * y

    @h.jvp
    def h_jvp(primals, tangents):
        assert tangents[1] is None  # y is a constant of the jvp below
        return tangents[0] * 3

    y = mx.array(4.0)
    _, jvps = mx.jvp(lambda x: h(x, y), [mx.array(2.0)], [mx.array(1.0)])
    assert jvps[0].item() == 3.0


def test_custom_function_without_transforms_is_the_function():
    f = mx.custom_function(lambda x: x * 3)
    assert f(mx.array(2.0)).item() == 6.0
    assert mx.grad(f)(mx.array(2.0)).item() == 3.0


def test_custom_function_derives_what_it_is_not_given():
    @mx.custom_function
    def f(x):
        return x * x

    @f.vjp
    def f_vjp(x, cot, out):
        return cot * 100

    _, jvps = mx.jvp(f, [mx.array(3.0)], [mx.array(1.0)])
    assert jvps[0].item() == 6.0
    np.testing.assert_array_equal(np.array(mx.vmap(f)(mx.array([1.0, 2.0]))), [1.0, 4.0])
    assert mx.grad(f)(mx.array(3.0)).item() == 100.0


def test_checkpoint_gives_the_same_values_and_gradients():
    rng = np.random.default_rng(1)
    w = mx.array(rng.standard_normal((4, 4)).astype(np.float32))

    def layer(x, scale=1.0):
        h = x @ w
        return h * h * scale, "aux"

    layer_cp = mx.checkpoint(layer)
    x = mx.array(rng.standard_normal(4).astype(np.float32))
    out, aux = layer_cp(x, scale=2.0)
    assert aux == "aux"
    np.testing.assert_allclose(np.array(out), np.array(layer(x, scale=2.0)[0]), rtol=1e-6)
    g_plain = mx.grad(lambda x: total(layer(x)[0]))(x)
    g_cp = mx.grad(lambda x: total(layer_cp(x)[0]))(x)
    np.testing.assert_allclose(np.array(g_cp), np.array(g_plain), rtol=1e-5)


def test_eval_takes_trees_and_ignores_other_leaves():
    a = mx.array(2.0) * 3
    b = mx.array([1.0]) + 1
    assert mx.eval({"a": [a, 1, "s"]}, None, (b,)) is None
    mx.eval()
    assert a.item() == 6.0 and b.tolist() == [2.0]
    c = b * 4
    assert mx.async_eval([c], {"k": c + 1}) is None
    assert c.tolist() == [8.0]


def test_undifferentiated_arguments_pass_as_they_are_and_callers_containers_stay_untouched():
    class Model(dict):
        def __call__(self, x):
            return x * self["w"]

    model = Model(w=mx.array(3.0))
    params = {"w": mx.array(2.0)}
    seen = []

    def loss(params, model, x):
        seen.append(model)
        model.update(params)  # as mlx.nn.value_and_grad does
        return model(x)

    value, g = mx.value_and_grad(loss)(params, model, mx.array(5.0))
    assert seen == [model] and seen[0] is model
    assert value.item() == 10.0 and g["w"].item() == 5.0
    assert isinstance(g, dict) and not isinstance(g, Model)

    items = [mx.array(1.0), (mx.array(2.0),)]
    other = [mx.array(4.0), "tag"]
    first, second = items[0], other[0]

    def f(xs, o):
        assert xs is not items and xs[0] is not first  # a new list around a traced array
        assert o is other
        return xs[0] * xs[1][0] * o[0]

    g = mx.grad(f)(items, other)
    assert g[0].item() == 8.0 and g[1][0].item() == 4.0
    assert items[0] is first and other[0] is second and other[1] == "tag"


def test_writes_into_differentiated_containers_reach_the_caller():
    # As MLX: what the function stores into the lists and dicts it is given shows in the
    # caller's, while the slots it leaves alone keep the caller's own arrays.
    model = [mx.array(0.0), mx.array(1.0)]
    first = model[0]
    mx.grad(lambda m: m.__setitem__(1, mx.array(2.0)) or m[0])(model)
    assert model[0] is first and model[1].item() == 2.0

    state = {"w": mx.ones(3), "inner": {"y": mx.array(1.0)}, "old": mx.array(0.0), "log": []}

    def f(d):
        d["inner"]["y"] = mx.array(5.0)
        d["added"] = 3
        del d["old"]
        d["log"].append("step")
        return (d["w"] * 2).sum()

    value, g = mx.value_and_grad(f)(state)
    assert value.item() == 6.0
    np.testing.assert_array_equal(np.array(g["w"]), [2, 2, 2])
    assert g["inner"]["y"].item() == 0.0 and g["old"].item() == 0.0  # the tree as called
    assert state["inner"]["y"].item() == 5.0 and state["added"] == 3
    assert "old" not in state and state["log"] == ["step"]

    # Moving the given arrays around puts the caller's arrays back, never the traced ones.
    a, b = mx.array(1.0), mx.array(2.0)
    params = [a, b]
    seen = []

    def shuffle(p):
        seen.extend(p)
        first = p.pop(0)
        p.append([first, 7])
        return first * p[0]

    mx.grad(shuffle)(params)
    assert params[0] is b and params[1][0] is a and params[1][1] == 7 and len(params) == 2
    assert not any(x is y for x in seen for y in [params[0], params[1][0]])

    # A function that writes nothing leaves the caller's containers alone, keys it never saw
    # included.
    shared = {"w": mx.array(3.0)}

    def reads_only(p):
        shared["other"] = 1  # another writer of the caller's dict, during the call
        return p["w"] * 2

    mx.grad(reads_only)(shared)
    assert shared["other"] == 1 and set(shared) == {"w", "other"}


def test_compile_returns_a_function_with_the_same_outputs():
    from functools import partial

    def f(x, y):
        return mx.exp(x) * y + 1

    x = mx.array([0.5, -1.0, 2.0])
    y = mx.array([3.0, 4.0, 5.0])
    compiled = mx.compile(f)
    assert compiled(x, y).tolist() == f(x, y).tolist()
    shapeless = partial(mx.compile, shapeless=True)(f)
    assert shapeless(x, y).tolist() == f(x, y).tolist()

    @mx.compile
    def g(a):
        return a * 2

    assert g(x).tolist() == (x * 2).tolist()
    mx.disable_compile()
    mx.enable_compile()
    with pytest.raises(TypeError):
        mx.compile(3)


def test_tuple_subclasses_keep_their_class():
    from typing import NamedTuple

    class State(NamedTuple):
        a: mx.array
        b: mx.array

    class Pair(tuple):
        pass

    seen = []

    def loss(s):
        seen.append(type(s))
        return (s.a + 10).sum() + (s.b * 10).sum()

    grads = mx.grad(loss)(State(mx.array([1.0, 2.0]), mx.array([3.0, 4.0])))
    assert seen == [State] and isinstance(grads, State)
    assert grads.a.tolist() == [1.0, 1.0] and grads.b.tolist() == [10.0, 10.0]
    grads = mx.grad(lambda p: (p[0] * p[1]).sum())(Pair([mx.array([2.0]), mx.array([5.0])]))
    assert type(grads) is Pair and grads[0].item() == 5.0 and grads[1].item() == 2.0
    grads = mx.grad(lambda t: t[0].sum())((mx.array([1.0]), mx.array([2.0])))
    assert type(grads) is tuple


@pytest.mark.parametrize("transform", [mx.grad, mx.value_and_grad, mx.custom_function, mx.checkpoint, mx.vmap])
def test_transformed_functions_in_reference_cycles_are_collected(transform):
    import gc

    def cycle():
        d = {}

        def f(x):
            return d["x"]

        d["f"] = transform(f)  # f reaches its own transform through d
        d["x"] = mx.array([0] * 10000)

    gc.collect()
    before = mx.get_active_memory()
    for _ in range(5):
        cycle()
        gc.collect()
    assert mx.get_active_memory() == before


def test_async_eval_inside_a_transformation_raises_as_in_mlx():
    def fun(x):
        y = x + 1.0
        mx.async_eval(y)
        return mx.exp(y)

    with pytest.raises(ValueError, match="Not allowed inside a graph transformation"):
        mx.grad(fun)(mx.array(1.0))
    with pytest.raises(ValueError, match="Not allowed inside a graph transformation"):
        mx.vmap(fun)(mx.ones((2, 2)))


def test_gather_mm_refuses_gradients_through_indices_computed_from_the_input():
    w = mx.arange(24.0).reshape(3, 4, 2)

    def routed(x, stop):
        idx = mx.argsort(x.sum(axis=(1, 2))).astype(mx.uint32)
        if stop:
            idx = mx.stop_gradient(idx)
        return mx.gather_mm(x, w, rhs_indices=idx).sum()

    x = mx.arange(8.0).reshape(2, 1, 4)
    with pytest.raises(ValueError, match=r"\[GatherMM\] Cannot calculate VJP with respect to indices"):
        mx.grad(lambda x: routed(x, False))(x)
    g = mx.grad(lambda x: routed(x, True))(x)
    want = np.broadcast_to(np.asarray(w)[[0, 1]].sum(-1)[:, None, :], (2, 1, 4))
    np.testing.assert_array_equal(np.asarray(g), want)


def test_gradients_with_respect_to_indices_raise():
    x = mx.array([1.0, 2.0, 3.0, 4.0])
    idx = mx.array([1, 3])
    updates = mx.array([5.0, 6.0])
    cases = [
        (lambda x, i: mx.take(x, i), [x, idx], [mx.ones((2,))]),
        (lambda x, i: mx.take_along_axis(x, i, axis=0), [x[:, None], idx[:, None]], [mx.ones((2, 1))]),
        (lambda x, i, u: x.at[i].add(u), [x, idx, updates], [mx.ones((4,))]),
        (lambda x, i, u: mx.put_along_axis(x, i, u, axis=0), [x[:, None], idx[:, None], updates[:, None]],
         [mx.ones((4, 1))]),
    ]
    for fun, primals, cotangents in cases:
        with pytest.raises(ValueError, match="stop_gradient"):
            mx.vjp(fun, primals, cotangents)

    def smallest_two(w, stop):
        order = mx.argsort(w)[:2]
        return mx.take(w, mx.stop_gradient(order) if stop else order).sum()

    w = mx.array([4.0, 3.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="stop_gradient"):
        mx.grad(lambda w: smallest_two(w, False))(w)
    assert mx.grad(lambda w: smallest_two(w, True))(w).tolist() == [0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_slice_and_index_extremum_updates_give_ties_to_both(op):
    def fun(src, updates):
        return getattr(src.at[1:3], op)(updates)

    src = mx.array([1.0, 2.0, 3.0, 4.0])
    cotan = mx.array([4.0, 5.0, 6.0, 7.0])
    losing = mx.array([[1.0, 2.0]]) if op == "maximum" else mx.array([[5.0, 6.0]])
    winning = mx.array([[5.0, 6.0]]) if op == "maximum" else mx.array([[1.0, 1.0]])
    _, (gs, gu) = mx.vjp(fun, [src, losing], [cotan])
    assert gs.tolist() == [4.0, 5.0, 6.0, 7.0] and gu.tolist() == [[0.0, 0.0]]
    _, (gs, gu) = mx.vjp(fun, [src, winning], [cotan])
    assert gs.tolist() == [4.0, 0.0, 0.0, 7.0] and gu.tolist() == [[5.0, 6.0]]
    # A tie: the cotangent reaches both the source and the update, as through a scatter.
    _, (gs, gu) = mx.vjp(lambda s, u: getattr(s.at[1], op)(u), [src, mx.array([[2.0]])], [cotan])
    assert gs.tolist() == [4.0, 5.0, 6.0, 7.0] and gu.reshape(-1).tolist() == [5.0]
    assert getattr(src.at[1:3], op)(winning).tolist() == (
        [1.0, 5.0, 6.0, 4.0] if op == "maximum" else [1.0, 1.0, 1.0, 4.0]
    )


@pytest.mark.parametrize(
    "op",
    [
        lambda b: mx.sort(b),
        lambda b: mx.topk(b, 3),
        lambda b: mx.partition(b, 2),
        lambda b: mx.cummax(b),
        lambda b: mx.cummin(b),
        lambda b: mx.masked_scatter(mx.zeros_like(b), b > 2, b * b),
    ],
)
def test_second_order_gradients_through_index_based_rules(op):
    # The rules of sort, partition, the running max/min and masked_scatter gather with indices
    # computed from their input; differentiating them again must not ask for those indices'
    # gradient. Checked against central differences of the first derivative.
    x = mx.array([3.0, 1.0, 2.5, 5.0, 4.0])

    def f(b):
        y = op(b)
        return (y * y * mx.arange(1, y.size + 1, dtype=mx.float32)).sum()

    g = mx.grad(f)
    h = mx.grad(lambda a: (g(a) * mx.array([1.0, -1.0, 2.0, 0.5, 1.5])).sum())(x)
    eps = 1e-2
    w = np.array([1.0, -1.0, 2.0, 0.5, 1.5])
    expected = []
    for i in range(5):
        d = np.zeros(5, dtype=np.float32)
        d[i] = eps
        up = (np.array(g(x + mx.array(d))) * w).sum()
        down = (np.array(g(x - mx.array(d))) * w).sum()
        expected.append((up - down) / (2 * eps))
    # Central differences in float32 of values up to a few thousand: about 1e-4 relative error.
    assert np.allclose(np.array(h), expected, rtol=1e-4, atol=1e-2)


def test_checkpoint_with_integer_inputs():
    idx = mx.array([1, 3])
    f = mx.checkpoint(lambda b, i: (mx.take(b, i) ** 2).sum())
    g = mx.grad(lambda a: f(a, idx))(mx.array([1.0, 2.0, 3.0, 4.0]))
    assert g.tolist() == [0.0, 4.0, 0.0, 8.0]


def test_jvp_with_respect_to_indices_raises():
    x = mx.array([1.0, 2.0, 3.0])
    i = mx.array([0, 2])
    gathers = [
        lambda x, i: mx.take(x, i),
        lambda x, i: mx.take_along_axis(x, i, 0),
        lambda x, i: x[i],
        lambda x, i: x.at[i].add(mx.array([5.0, 6.0])),
    ]
    for f in gathers:
        with pytest.raises(ValueError, match="indices"):
            mx.jvp(f, [x, i], [mx.ones(3), mx.ones(2, dtype=mx.int32)])
    # With respect to the values alone, as before.
    _, (t,) = mx.jvp(lambda x: mx.take(x, i), [x], [mx.array([1.0, 2.0, 3.0])])
    assert t.tolist() == [1.0, 3.0]
    _, (t,) = mx.jvp(lambda u: x.at[i].add(u), [mx.array([5.0, 6.0])], [mx.array([1.0, 2.0])])
    assert t.tolist() == [1.0, 0.0, 2.0]


def test_complex_gradients_follow_mlx_convention():
    # MLX's convention (PyTorch's): the gradient of a real loss of z = x + iy is
    # dL/dx + i dL/dy, so a vjp multiplies by the conjugated derivative.
    x = mx.array([0.0 + 1j, 1.0 + 0.0j, 0.5 + 0.5j])
    assert mx.allclose(mx.grad(lambda x: (2.0 * mx.real(x)).sum())(x), 2 * mx.ones_like(x))
    assert mx.allclose(mx.grad(lambda x: (2.0 * mx.imag(x)).sum())(x), 2j * mx.ones_like(x))
    z = mx.array([0.5 + 1j, -1 + 0.25j])
    c = mx.array([1 - 1j, 0.5 + 2j])
    _, (g,) = mx.vjp(mx.exp, [z], [c])
    assert mx.allclose(g, c * mx.conj(mx.exp(z)))
    # A real input times a complex constant: the real part of conj(2+4j) * (2+3j).
    _, (g,) = mx.vjp(lambda a: a * mx.array(2 + 4j), [mx.array(3.0)], [mx.array(2 + 3j)])
    assert g.dtype == mx.float32 and g.item() == 16.0
