# braid.core from a thread pool: streams made at import and used by workers, graphs built on one
# thread and evaluated on others, several models served at once, transforms and random draws on
# workers, and evaluation that lets other Python threads run (it releases the GIL). Every wait
# has a timeout, so a deadlock fails the test instead of hanging it.
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import braid.core as mx

TIMEOUT = 120  # seconds for any one wait
THREAD_COUNTS = [1, 2, 4, 8]
SEED = 20240611
print(f"test_threads seed {SEED}")

# Streams made once at import, as a server module would, and shared by every worker.
STREAMS = [mx.new_stream(mx.default_device()) for _ in range(4)]


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def run_all(n_threads, fn, items):
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        futures = [pool.submit(fn, *item) for item in items]
        return [f.result(timeout=TIMEOUT) for f in futures]


@pytest.mark.parametrize("n_threads", THREAD_COUNTS)
def test_workers_use_streams_made_at_import(n_threads):
    rng = np.random.default_rng(SEED)
    jobs = [(i, rand(rng, 16, 16), rand(rng, 16, 16)) for i in range(16)]

    def work(i, a, b):
        with mx.stream(STREAMS[i % len(STREAMS)]):
            y = (mx.array(a) @ mx.array(b)) + 1.0
        mx.eval(y)
        return np.array(y)

    for (i, a, b), got in zip(jobs, run_all(n_threads, work, jobs)):
        np.testing.assert_allclose(got, a @ b + 1.0, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n_threads", THREAD_COUNTS)
def test_graphs_built_on_the_main_thread_evaluate_on_workers(n_threads):
    rng = np.random.default_rng(SEED + 1)
    values = [rand(rng, 8, 8) for _ in range(12)]
    shared = mx.array(values[0]) * 2.0  # a node every graph depends on
    graphs = [(shared @ mx.array(v) - mx.array(v),) for v in values]

    def work(g):
        mx.eval(g)
        return np.array(g)

    for v, got in zip(values, run_all(n_threads, work, graphs)):
        np.testing.assert_allclose(got, (values[0] * 2.0) @ v - v, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n_threads", THREAD_COUNTS)
def test_a_pool_serves_several_models_as_sequential_calls_do(n_threads):
    rng = np.random.default_rng(SEED + 2)
    models = [[mx.array(rand(rng, 32, 32) / 6) for _ in range(4)] for _ in range(3)]
    requests = [(m, rand(rng, 4, 32)) for m in range(3) for _ in range(6)]

    def serve(m, x):
        h = mx.array(x)
        for w in models[m]:
            h = h @ w
        mx.eval(h)
        return np.array(h)

    sequential = [serve(m, x) for m, x in requests]
    for want, got in zip(sequential, run_all(n_threads, serve, requests)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n_threads", THREAD_COUNTS)
def test_grad_and_value_and_grad_on_workers(n_threads):
    rng = np.random.default_rng(SEED + 3)
    jobs = [(rand(rng, 6), rand(rng, 5, 6)) for _ in range(12)]
    ones = mx.array(np.ones(5, np.float32))

    def loss(w, x):
        r = x @ w
        return (r * r) @ ones

    value_and_grad = mx.value_and_grad(loss)
    grad = mx.grad(loss)

    def work(w, x):
        value, g = value_and_grad(mx.array(w), mx.array(x))
        g2 = grad(mx.array(w), mx.array(x))
        return value.item(), np.array(g), np.array(g2)

    for (w, x), (value, g, g2) in zip(jobs, run_all(n_threads, work, jobs)):
        r = x @ w
        assert value == pytest.approx(float(r @ r), rel=1e-4)
        np.testing.assert_allclose(g, 2 * x.T @ r, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(g, g2)


@pytest.mark.parametrize("n_threads", THREAD_COUNTS)
def test_workers_share_one_parameter_tree(n_threads):
    rng = np.random.default_rng(SEED + 5)
    wv, bv = rand(rng, 6, 3), rand(rng, 3)
    params = {"layers": [{"w": mx.array(wv), "b": mx.array(bv)}]}  # one tree for every thread
    ones = mx.array(np.ones(3, np.float32))
    xs = [rand(rng, 6) for _ in range(16)]

    def loss(p, x):
        layer = p["layers"][0]
        h = x @ layer["w"] + layer["b"]
        return (h * h) @ ones

    grad = mx.grad(loss)

    def work(x):
        g = grad(params, mx.array(x))
        return np.array(g["layers"][0]["w"]), np.array(g["layers"][0]["b"])

    for x, (gw, gb) in zip(xs, run_all(n_threads, work, [(x,) for x in xs])):
        h = x @ wv + bv
        np.testing.assert_allclose(gw, np.outer(x, 2 * h), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(gb, 2 * h, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.array(params["layers"][0]["w"]), wv)


@pytest.mark.parametrize("n_threads", THREAD_COUNTS)
def test_custom_functions_built_here_and_freed_on_workers(n_threads):
    @mx.custom_function
    def scaled(x):
        return x * 2.0

    @scaled.vjp
    def scaled_vjp(x, cotangent, output):
        return cotangent * 3.0

    # Each graph sits alone in a box the worker empties, so the worker drops its last reference.
    boxes = [([mx.grad(lambda x: scaled(x) * scaled(x))(mx.array(float(i)))],) for i in range(16)]

    def work(box):
        g = box.pop()
        mx.eval(g)
        out = g.item()
        del g
        return out

    results = run_all(n_threads, work, boxes)
    assert results == [2 * (2.0 * i) * 3.0 for i in range(16)]


@pytest.mark.parametrize("n_threads", THREAD_COUNTS)
def test_random_draws_on_workers(n_threads):
    def keyed():
        return np.array(mx.random.uniform(shape=(64,), key=mx.random.key(7))).tolist()

    first = keyed()
    assert all(run := [r == first for r in run_all(n_threads, keyed, [()] * 8)]), run

    def global_draws():
        return [tuple(np.array(mx.random.bits((4,))).tolist()) for _ in range(25)]

    draws = [d for per_thread in run_all(n_threads, global_draws, [()] * 8) for d in per_thread]
    assert len(set(draws)) == len(draws)  # no key of the global sequence drawn twice


def test_eval_releases_the_gil():
    # A Python thread counts while the main thread evaluates matmuls on the CPU. Holding the GIL,
    # eval would let it run only at the interpreter's switch points around the call (a few ms);
    # releasing it, the thread counts for a good part of the evaluation.
    rng = np.random.default_rng(SEED + 4)
    with mx.stream(mx.cpu):
        a = mx.array(rand(rng, 1500, 1500) / 40)
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
        time.sleep(0.2)  # sleeping releases the GIL: the counter's free-running rate
        rate = (count[0] - before) / 0.2
        during, elapsed = 0, 0.0
        while elapsed < 0.5:
            with mx.stream(mx.cpu):
                y = (a @ a) @ a
            before = count[0]
            t0 = time.perf_counter()
            mx.eval(y)
            elapsed += time.perf_counter() - t0
            during += count[0] - before
    finally:
        stop.set()
        t.join(TIMEOUT)
    print(f"eval took {elapsed:.3f}s; the counter advanced {during} times (free rate {rate:.0f}/s)")
    assert during > 0.1 * rate * elapsed


def test_synchronize_takes_a_stream_a_device_or_nothing():
    x = mx.exp(mx.ones((4,)), stream=mx.cpu)
    mx.async_eval(x)
    mx.synchronize(mx.cpu)
    mx.synchronize(mx.default_stream(mx.cpu))
    mx.synchronize()
    assert x.tolist() == [pytest.approx(2.718281828)] * 4


def test_synchronize_raises_an_async_failure_once():
    singular = mx.array([[1.0, 2.0], [2.0, 4.0]])
    s = mx.new_stream(mx.cpu)
    a = mx.linalg.inv(singular, stream=s)
    mx.async_eval(a)
    with pytest.raises(RuntimeError, match="singular"):
        mx.synchronize(s)
    mx.synchronize(s)  # reported once
    with pytest.raises(RuntimeError, match="singular"):
        a.tolist()  # the array keeps its error

    # Reported by eval first: synchronize has nothing more to say.
    b = mx.linalg.inv(singular, stream=s)
    mx.async_eval(b)
    with pytest.raises(RuntimeError):
        mx.eval(b)
    mx.synchronize(s)

    # MLX's own case: the default CPU stream, synchronized through its device.
    c = mx.linalg.inv(singular, stream=mx.cpu)
    mx.async_eval(c)
    with pytest.raises(RuntimeError):
        mx.synchronize(mx.cpu)
    mx.synchronize(mx.cpu)
