# mx.compile traces a Python function once per signature and replays the recorded graph
# (mlx.core's semantics; MLX's python/tests/test_compile.py checks the same behaviours).
import io
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest

import braid.core as mx


def counted(fun):
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        return fun(*args, **kwargs)

    return wrapper, calls


def test_results_equal_the_uncompiled_function():
    def f(x, y):
        return mx.exp(x) * y + mx.sum(x), x - y

    x = mx.array([0.5, -1.0, 2.0])
    y = mx.array([3.0, 4.0, 5.0])
    got = mx.compile(f)(x, y)
    want = f(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        assert mx.allclose(g, w).item()


def test_the_function_runs_once_per_signature():
    f, calls = counted(lambda x, y: x * y + 1)
    c = mx.compile(f)
    for i in range(5):
        out = c(mx.array([1.0, 2.0]) * i, mx.array([3.0, 4.0]))
        assert out.tolist() == [3.0 * i + 1, 8.0 * i + 1]
    assert calls[0] == 1


def test_new_shape_dtype_or_argument_count_traces_again():
    f, calls = counted(lambda *xs: sum(xs[1:], xs[0]) * 2)
    c = mx.compile(f)
    c(mx.array([1.0, 2.0]))
    c(mx.array([1.0, 2.0, 3.0]))
    assert calls[0] == 2
    assert c(mx.array([1, 2])).dtype == mx.int32
    assert calls[0] == 3
    assert c(mx.array([1.0]), mx.array([2.0])).tolist() == [6.0]
    assert calls[0] == 4
    c(mx.array([5.0, 6.0]))
    assert calls[0] == 4


def test_a_changed_constant_traces_again():
    f, calls = counted(lambda x, scale, name=None: x * scale if name == "mul" else x + scale)
    c = mx.compile(f)
    x = mx.array([1.0, 2.0])
    assert c(x, 2.0, name="mul").tolist() == [2.0, 4.0]
    assert c(x, 3.0, name="mul").tolist() == [3.0, 6.0]
    assert c(x, 3.0, name="add").tolist() == [4.0, 5.0]
    assert c(x, 3.0, name="add").tolist() == [4.0, 5.0]
    assert calls[0] == 3
    assert c(x, 3).tolist() == [4.0, 5.0]  # an int is another constant than a float
    assert calls[0] == 4


def test_trees_of_arguments_and_outputs():
    def f(d, pair):
        return {"sum": d["a"] + pair[0], "list": [pair[1] * 2, d["b"]]}

    c = mx.compile(f)
    d = {"a": mx.array(1.0), "b": mx.array(2.0)}
    out = c(d, (mx.array(3.0), mx.array(4.0)))
    assert out["sum"].item() == 4.0
    assert [a.item() for a in out["list"]] == [8.0, 2.0]


def test_other_argument_types_raise_value_error():
    c = mx.compile(lambda x, obj: x)
    with pytest.raises(ValueError, match="Function arguments must be trees of arrays or constants"):
        c(mx.array(1.0), object())


def test_captured_arrays_are_constants():
    w = mx.array([10.0, 20.0])
    c = mx.compile(lambda x: x + w)
    assert c(mx.array([1.0, 2.0])).tolist() == [11.0, 22.0]
    assert c(mx.array([3.0, 4.0])).tolist() == [13.0, 24.0]


def test_eval_or_item_inside_a_compiled_function_raises_value_error():
    msg = "Attempting to eval an array during function transformations like compile or vmap is not allowed"

    def evaluates(x):
        y = x * 2
        mx.eval(y)
        return y

    def reads(x):
        return x * (x.sum().item())

    for fun in [evaluates, reads]:
        with pytest.raises(ValueError, match=msg):
            mx.compile(fun)(mx.array([1.0, 2.0]))


def test_random_state_captured_gives_fresh_numbers_each_call():
    state = [mx.random.state]

    @partial(mx.compile, inputs=state, outputs=state)
    def draw(x):
        return x + mx.random.uniform(shape=(4,))

    x = mx.zeros((4,))
    mx.random.seed(7)
    a, b = draw(x), draw(x)
    assert not mx.array_equal(a, b).item()
    # The same numbers as the uncompiled function after the same seed.
    mx.random.seed(7)
    want_a = x + mx.random.uniform(shape=(4,))
    want_b = x + mx.random.uniform(shape=(4,))
    assert mx.allclose(a, want_a).item() and mx.allclose(b, want_b).item()


def test_random_state_not_captured_repeats_the_traced_numbers():
    c = mx.compile(lambda x: x + mx.random.uniform(shape=(3,)))
    x = mx.zeros((3,))
    assert mx.array_equal(c(x), c(x)).item()


def test_captured_list_state_is_read_and_written_back():
    state = [mx.array(0.0)]

    @partial(mx.compile, inputs=state, outputs=state)
    def step(x):
        state[0] = state[0] + x
        return state[0] * 2

    f_calls = []
    for i in range(1, 4):
        f_calls.append(step(mx.array(float(i))).item())
    assert f_calls == [2.0, 6.0, 12.0]
    assert state[0].item() == 6.0


def test_grad_of_a_compiled_function_and_compiled_grad():
    def f(x):
        return mx.sum(mx.sin(x) * x)

    x = mx.array([0.1, 0.7, -1.3])
    want = mx.grad(f)(x)
    assert mx.allclose(mx.grad(mx.compile(f))(x), want).item()
    assert mx.allclose(mx.compile(mx.grad(f))(x), want).item()
    assert mx.allclose(mx.compile(mx.grad(f))(x * 2), mx.grad(f)(x * 2)).item()


def test_vmap_of_a_compiled_function():
    def f(x):
        return x * x + 1

    x = mx.arange(6, dtype=mx.float32).reshape(2, 3)
    assert mx.array_equal(mx.vmap(mx.compile(f))(x), f(x)).item()


def test_shapeless_replays_one_trace_on_other_shapes():
    # MLX's test_shapeless_compile: the function is not traced again for a new shape, so a
    # changed capture is not seen; a new dtype or rank traces again.
    y = 1

    def fun(x):
        return x + y

    f, calls = counted(fun)
    c = mx.compile(f, shapeless=True)
    assert c(mx.array([1, 2])).tolist() == [2, 3]
    y = 2
    assert c(mx.array([1, 2, 3])).tolist() == [2, 3, 4]
    assert calls[0] == 1
    assert c(mx.array([1.0, 2.0, 3.0])).tolist() == [3.0, 4.0, 5.0]
    assert c(mx.array([[1, 2, 3]])).tolist() == [[3, 4, 5]]
    assert calls[0] == 3


def test_shapeless_with_reductions_and_a_mean():
    # MLX's test_shapeless_compile_with_reduction and its compiled mean of 2, 4 and 7 ones.
    z = 1

    @partial(mx.compile, shapeless=True)
    def fun(x, y):
        return x + y.sum(0, keepdims=True) + z

    x = mx.ones((2, 2), mx.int32)
    assert mx.array_equal(fun(x, x), mx.full((2, 2), 4)).item()
    z = 2
    x = mx.ones((3, 3), mx.int32)
    assert mx.array_equal(fun(x, x), mx.full((3, 3), 5)).item()

    def row_scaled(x):
        return x * x.sum(-1, keepdims=True)

    c = mx.compile(row_scaled, shapeless=True)
    mx.eval(c(mx.array([[1, 2], [3, 4], [5, 6]])))
    x2 = mx.array([[1, 2]])
    assert mx.array_equal(c(x2), row_scaled(x2)).item()

    cmean = mx.compile(lambda x: mx.mean(x, keepdims=True), shapeless=True)
    for n in [2, 4, 7]:
        assert mx.allclose(cmean(mx.ones(n)), mx.ones(1)).item()
    cvar = mx.compile(lambda x: mx.var(x, axis=-1, ddof=1), shapeless=True)
    for n in [3, 6]:
        x = mx.arange(2 * n, dtype=mx.float32).reshape(2, n)
        assert mx.allclose(cvar(x), mx.var(x, axis=-1, ddof=1)).item()


def test_shapeless_traces_again_where_a_shape_cannot_be_followed():
    # A slice cannot follow a new shape (MLX raises); braid traces those shapes again and every
    # result is the function's. The reshape to (-1) follows them.
    def fun(x):
        return x.reshape(-1), x[:, 1:]

    f, calls = counted(fun)
    c = mx.compile(f, shapeless=True)
    for n in [2, 3, 2]:
        x = mx.arange(3 * n).reshape(n, 3)
        flat, tail = c(x)
        assert flat.tolist() == list(range(3 * n))
        assert tail.tolist() == x[:, 1:].tolist()
    assert calls[0] == 2


def test_shapeless_reshape_keeps_the_shape_asked_for():
    # MLX's test: (x.shape[0] * x.shape[1], -1) is (6, -1) from the first call on.
    f, calls = counted(lambda x: x.reshape(x.shape[0] * x.shape[1], -1))
    c = mx.compile(f, shapeless=True)
    assert c(mx.zeros((2, 3, 4))).shape == (6, 4)
    assert c(mx.zeros((2, 3, 8))).shape == (6, 8)
    with pytest.raises(ValueError):
        c(mx.zeros((5, 5, 5)))
    assert calls[0] == 1


def test_shapeless_keeps_following_braids_own_reshapes():
    # flatten and a matrix-vector product reshape to their traced sizes inside: traced again.
    c = mx.compile(lambda x: (mx.flatten(x), x @ mx.ones((3,))), shapeless=True)
    for n in [2, 4]:
        flat, mv = c(mx.ones((n, 3)))
        assert flat.shape == (3 * n,) and mv.shape == (n,)
    # A reshape to the input's own shape still follows the -1.
    r = mx.compile(lambda x: x.reshape(-1, 4), shapeless=True)
    assert r(mx.zeros((3, 4))).shape == (3, 4)
    assert r(mx.zeros((2, 8))).shape == (4, 4)


def test_compiled_stop_gradient_of_a_captured_tracer_still_stops_it():
    def loss(w):
        f = mx.compile(lambda x: mx.stop_gradient(x * w) + x * w)
        return f(mx.array(1.0))

    assert mx.grad(loss)(mx.array(2.0)).item() == 1.0


def test_disable_compile_calls_the_function_each_time():
    f, calls = counted(lambda x: x + 1)
    c = mx.compile(f)
    mx.disable_compile()
    try:
        c(mx.array(1.0))
        c(mx.array(1.0))
        assert calls[0] == 2
    finally:
        mx.enable_compile()
    c(mx.array(1.0))
    c(mx.array(1.0))
    assert calls[0] == 3


def test_calls_from_eight_threads_equal_sequential_results():
    f, calls = counted(lambda x, y: mx.matmul(x, y) + mx.exp(-x))
    c = mx.compile(f)
    inputs = [(mx.random.normal((8, 8), key=mx.random.key(i)), mx.random.normal((8, 8), key=mx.random.key(100 + i)))
              for i in range(32)]
    want = [f(x, y) for x, y in inputs]
    calls[0] = 0
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda xy: c(*xy), inputs))
    for g, w in zip(got, want):
        assert mx.allclose(g, w).item()
    # Traced once per worker thread at most: each thread's default stream is its own, and the
    # replay runs on the caller's stream.
    assert 1 <= calls[0] <= 8


def test_compile_rejects_what_is_not_callable():
    with pytest.raises(TypeError):
        mx.compile(3)


def test_repeated_subexpressions_and_equal_constants_are_computed_once():
    def fun(x):
        y = x + 1
        z = x + 1
        return y + z

    def count_nodes(outputs):
        buf = io.StringIO()
        mx.export_to_dot(buf, outputs)
        return len([line for line in buf.getvalue().split() if "label" in line])

    x = mx.array(1.0)
    cfun = mx.compile(fun)
    n_compiled = count_nodes(cfun(x))
    mx.disable_compile()
    try:
        n_uncompiled = count_nodes(cfun(x))
    finally:
        mx.enable_compile()
    assert n_compiled < n_uncompiled
    assert cfun(x).item() == 4.0


def test_a_function_that_also_captures_an_unevaluated_input_raises():
    x = mx.array([1, 2, 3]) + 2

    def fn(a):
        return a + (x + 1)

    with pytest.raises(ValueError, match="uncaptured inputs"):
        mx.compile(fn)(x)
    # Evaluated, the captured array is a constant like any other.
    mx.eval(x)
    assert mx.array_equal(mx.compile(fn)(x), mx.array([7, 9, 11])).item()


def test_inside_vmap_a_compiled_function_may_capture_its_own_argument():
    def outer(x):
        x = mx.abs(x)

        @mx.compile
        def inner(z):
            return -mx.exp(x)

        return inner(x)

    x = mx.array([[1.0, -2.0], [2.0, -3.0]])
    assert mx.allclose(mx.vmap(outer)(x), -mx.exp(mx.abs(x))).item()


def test_int_and_string_constants_are_keyed_by_value_not_hash():
    f, calls = counted(lambda x, k: x * k)
    c = mx.compile(f)
    x = mx.array([1.0])
    # CPython hashes -1 and -2 alike.
    assert c(x, -1).item() == -1.0
    assert c(x, -2).item() == -2.0
    d = mx.compile(lambda x, table: x + table[-1])
    assert d(x, {-1: 1.0}).item() == 2.0
    assert d(x, {-2: 1.0, -1: 5.0}).item() == 6.0


def test_captured_state_is_restored_when_the_swap_fails():
    w1 = mx.array([1.0])
    state = [[w1], (mx.array([2.0]),)]
    c = mx.compile(lambda x: x + state[0][0], inputs=state)
    with pytest.raises(ValueError):
        c(mx.array([1.0]))
    assert state[0][0] is w1 or mx.array_equal(state[0][0], w1).item()
    state[0][0].item()  # still a real array


def test_nested_compiled_functions_share_the_captured_random_state():
    rs = [mx.random.state]

    @partial(mx.compile, inputs=rs, outputs=rs)
    def inner(x):
        return x + mx.random.uniform(shape=x.shape)

    @partial(mx.compile, inputs=rs, outputs=rs)
    def outer(x):
        return inner(x), inner(x)

    a, b = outer(mx.zeros((4,)))
    assert not mx.array_equal(a, b).item()
    c, d = outer(mx.zeros((4,)))
    assert not mx.array_equal(a, c).item()


def test_shapeless_like_arrays_follow_the_input_shape():
    # MLX's test_shapeless_compile_full_like: zeros_like, ones_like and full_like of an input
    # take each call's shape, not the traced one.
    traces = []

    def fun(x):
        traces.append(x.shape)
        return mx.zeros_like(x), mx.ones_like(x), mx.full_like(x, 7, dtype=mx.int32)

    c = mx.compile(fun, shapeless=True)
    for shape in [(1, 1, 32), (2, 2, 16), (3, 1, 5)]:
        z, o, f = c(mx.zeros(shape))
        assert z.shape == o.shape == f.shape == shape
        assert z.dtype == mx.float32 and f.dtype == mx.int32
        assert mx.all(z == 0).item() and mx.all(o == 1).item() and mx.all(f == 7).item()
    assert len(traces) == 1


def test_transformed_functions_keep_the_wrapped_functions_attributes():
    import inspect

    def inner(x: mx.array, y: str = "a"):
        """A useful function."""
        return x

    for transformed in [mx.compile(inner), mx.grad(inner), mx.vmap(inner)]:
        assert transformed.__name__ == "inner"
        assert transformed.__qualname__ == inner.__qualname__
        assert transformed.__doc__ == "A useful function."
        assert transformed.__wrapped__ is inner
        assert inspect.signature(transformed) == inspect.signature(inner)


@pytest.mark.usefixtures("on_cpu")  # fusion is the CPU's
def test_element_wise_steps_fuse_into_one_compiled_node():
    # MLX's test_shared_broadcast: the broadcast is read by the fused node and by the sum.
    def fun(x, y, z):
        yy = mx.broadcast_to(y, z.shape)
        return (x + yy * z), yy.sum()

    a, b, c = mx.random.normal((10, 10)), mx.array(0.1), mx.random.normal((10, 10))
    mx.eval(a, b, c)
    d = mx.compile(fun)(a, b, c)
    buf = io.StringIO()
    mx.export_to_dot(buf, a=a, b=b, c=c, d1=d[0], d2=d[1])
    assert "CompiledBroadcastMultiplyAdd" in buf.getvalue()
    want = fun(a, b, c)
    assert mx.array_equal(d[0], want[0]).item() and mx.allclose(d[1], want[1]).item()

    # A long chain over many tiles equals the unfused function bit for bit, from a pool too.
    def chain(x):
        y = x
        for _ in range(8):
            y = mx.where(y > 0, mx.sin(y) * 1.5 + 0.25, mx.exp(y) - x)
        return y

    cchain = mx.compile(chain)
    xs = [mx.random.normal((100_003 + i,)) for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda x: cchain(x), xs))
    for x, g in zip(xs, got):
        assert mx.array_equal(g, chain(x)).item()


def test_fused_functions_under_transforms_and_values_read_twice():
    # A compiled forward closing over a parameter that grad traces is differentiated through
    # its steps (they are not fused); vmap likewise.
    def loss(w):
        g = mx.compile(lambda y: mx.exp(y * w) + 1)
        return g(mx.ones(3)).sum()

    w = mx.array([0.5, 1.0, -1.0])
    assert mx.allclose(mx.grad(loss)(w), mx.exp(w)).item()
    per_row = mx.vmap(lambda v: mx.compile(lambda y: mx.exp(y * v + v))(mx.array(2.0)))(mx.array([0.0, 1.0]))
    assert mx.allclose(per_row, mx.array([1.0, 20.085537])).item()

    # e * e reads e twice in one fused op.
    def f(a, b):
        e = mx.exp(a)
        m = e * e
        return (mx.sin(b) + mx.cos(b)) * m

    a, b = mx.array([0.5, 1.0, 2.0]), mx.array([0.1, 0.2, 0.3])
    assert mx.array_equal(mx.compile(f)(a, b), f(a, b)).item()
