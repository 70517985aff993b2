# mx.export_function, mx.exporter and mx.import_function (mlx.core's semantics; MLX's
# python/tests/test_export_import.py checks the same behaviours), and imported functions
# called from a thread pool.
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

import braid.core as mx


@pytest.fixture
def path(tmp_path):
    return os.path.join(str(tmp_path), "fn.mlxfn")


def test_argument_forms(path):
    def no_inputs():
        return mx.zeros((3, 3))

    mx.export_function(path, no_inputs)
    (out,) = mx.import_function(path)()
    assert mx.array_equal(out, no_inputs())

    def fun(x):
        return mx.abs(mx.sin(x))

    x = mx.array([1.0, 2.0, 3.0, 4.0, 5.0])
    want = fun(x)
    for example in ([x], (x,)):
        mx.export_function(path, fun, example)
        imported = mx.import_function(path)
        assert mx.allclose(imported(example)[0], want)
        assert mx.allclose(imported(x)[0], want)

    for as_list in (lambda y: [fun(y)], lambda y: (fun(y),)):
        mx.export_function(path, as_list, x)
        (out,) = mx.import_function(path)(x)
        assert mx.allclose(out, want)


def test_bad_arguments_and_outputs_are_value_errors(path):
    def fun(x):
        return mx.abs(x)

    with pytest.raises(ValueError):
        mx.export_function(path, fun, "hi")
    with pytest.raises(ValueError):
        mx.export_function(path, fun, mx.array(1.0), "hi")
    with pytest.raises(ValueError):
        mx.export_function(path, lambda x: mx.abs(x[0][0]), [[mx.array(1.0)]])
    with pytest.raises(ValueError):
        mx.export_function(path, lambda: (mx.zeros((3, 3)), 1))
    with pytest.raises(ValueError):
        mx.export_function(path, lambda: (mx.zeros((3, 3)), [mx.zeros((3, 3))]))

    mx.export_function(path, lambda x, y: x + y, mx.array(1.0), mx.array(1.0))
    imported = mx.import_function(path)
    with pytest.raises(ValueError):
        imported(mx.array(1.0), 1.0)
    with pytest.raises(ValueError):
        imported(mx.array(1.0), mx.array(1.0), mx.array(1.0))
    with pytest.raises(ValueError):
        imported(mx.array(1.0), [mx.array(1.0)])
    assert imported(mx.array(2.0), mx.array(3.0))[0].item() == 5.0


def test_random_draws_replay(path):
    mx.random.seed(5)

    def fun():
        return mx.random.uniform(shape=(3,))

    mx.export_function(path, fun)
    (out,) = mx.import_function(path)()
    mx.random.seed(5)
    assert mx.array_equal(out, fun())


def test_keyword_arguments(path):
    def fun(x, z=None):
        out = x
        if z is not None:
            out += z
        return out

    x = mx.array([1, 2, 3])
    y = mx.array([1, 1, 0])
    z = mx.array([2, 2, 2])
    want = mx.array([3, 4, 5])

    mx.export_function(path, fun, (x,), {"z": z})
    imported = mx.import_function(path)
    with pytest.raises(ValueError):
        imported(x, z)
    with pytest.raises(ValueError):
        imported(x, y=z)
    with pytest.raises(ValueError):
        imported((x,), {"y": z})
    assert mx.array_equal(imported(x, z=z)[0], want)
    assert mx.array_equal(imported((x,), {"z": z})[0], want)

    mx.export_function(path, fun, x, z=z)
    imported = mx.import_function(path)
    assert mx.array_equal(imported(x, z=z)[0], want)
    assert mx.array_equal(imported((x,), {"z": z})[0], want)

    mx.export_function(path, fun, x=x, z=z)
    imported = mx.import_function(path)
    with pytest.raises(ValueError):
        imported(x, z=z)
    assert mx.array_equal(imported(x=x, z=z)[0], want)
    assert mx.array_equal(imported({"x": x, "z": z})[0], want)


def test_exporter_keeps_one_trace_per_signature(path):
    def fun(x, y, z=None):
        out = x + y
        if z is not None:
            out += z
        return out

    with mx.exporter(path, fun) as exporter:
        exporter(mx.array([1, 2, 3]), mx.array([1, 1, 1]))
        exporter(mx.array([1, 2, 3]), mx.array([1, 1, 1]), z=mx.array([2]))
    with pytest.raises(RuntimeError):
        exporter(mx.array([1, 2, 3, 4]), mx.array([1, 1, 1, 1]))

    imported = mx.import_function(path)
    assert mx.array_equal(imported(mx.array([1, 2, 3]), mx.array([1, 1, 1]))[0], mx.array([2, 3, 4]))
    out = imported(mx.array([1, 2, 3]), mx.array([1, 1, 1]), z=mx.array([2]))[0]
    assert mx.array_equal(out, mx.array([4, 5, 6]))
    with pytest.raises(ValueError):
        imported(mx.array([1, 2, 3, 4]), mx.array([1, 1, 1, 1]))


def test_a_captured_array_is_stored_once(path):
    constant = mx.zeros((16, 2048))
    mx.eval(constant)

    def fun(*args):
        return constant + sum(args)

    with mx.exporter(path, fun) as exporter:
        for i in range(5):
            exporter(*[mx.array(1)] * i)
    assert os.path.getsize(path) < constant.nbytes + 8192
    imported = mx.import_function(path)
    assert mx.array_equal(imported(mx.array(1), mx.array(2))[0], constant + 3)


def test_shapeless(path):
    def fun(*args):
        return sum(args)

    with mx.exporter(path, fun, shapeless=True) as exporter:
        exporter(mx.array(1))
        exporter(mx.array(1), mx.array(2))
        exporter(mx.array(1), mx.array(2), mx.array(3))

    f2 = mx.import_function(path)
    assert f2(mx.array(1))[0].item() == 1
    assert f2(mx.array(1), mx.array(1))[0].item() == 2
    assert f2(mx.array(1), mx.array(1), mx.array(1))[0].item() == 3
    with pytest.raises(ValueError):
        f2(mx.array(10), mx.array([5, 10, 20]))

    mx.export_function(path, lambda x: mx.exp(x) * 2, mx.array([1.0, 2.0]), shapeless=True)
    out = mx.import_function(path)(mx.array([0.0, 1.0, 2.0, 3.0]))[0]
    assert out.shape == (4,)
    assert mx.allclose(out, mx.exp(mx.array([0.0, 1.0, 2.0, 3.0])) * 2)


def test_an_nn_model(path):
    nn = pytest.importorskip("braid.nn")
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    mx.eval(model.parameters())
    x = mx.random.normal((3, 8))
    mx.export_function(path, model, x)
    assert mx.allclose(mx.import_function(path)(x)[0], model(x), atol=1e-6)


def test_workers_share_one_imported_function(path):
    mx.export_function(path, lambda x: (x * x).sum(), mx.zeros((64,)))
    imported = mx.import_function(path)

    def work(i):
        return imported(mx.full((64,), float(i)))[0].item()

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(work, range(32)))
    assert got == [64.0 * i * i for i in range(32)]


def test_damaged_files_raise(path):
    mx.export_function(path, lambda x: mx.sort(x) * 2, mx.array([3.0, 1.0, 2.0]))
    with open(path, "rb") as f:
        good = f.read()
    for n in range(0, len(good), max(1, len(good) // 50)):
        with open(path, "wb") as f:
            f.write(good[:n])
        with pytest.raises(RuntimeError):
            mx.import_function(path)
    with pytest.raises(RuntimeError):
        mx.import_function(path + ".missing")


def test_a_callback_receives_the_trace():
    def fn(x, y):
        return mx.log(mx.abs(x - y)).astype(mx.int32)

    records = []
    mx.export_function(records.append, fn, mx.array(1.0), y=mx.array(1.0))
    types = [r["type"] for r in records]
    assert types == ["inputs", "keyword_inputs", "outputs", "constants"] + ["primitive"] * 4
    inputs = records[0]["inputs"]
    assert [(shape, dtype) for _, shape, dtype in inputs] == [([], mx.float32)] * 2
    assert records[1]["keywords"] == [("y", inputs[1][0])]
    assert records[3]["constants"] == []
    prims = records[4:]
    assert [p["name"] for p in prims] == ["Subtract", "Abs", "Log", "AsType"]
    assert [p["arguments"] for p in prims] == [[], [], [2], [mx.int32]]
    assert prims[0]["inputs"] == inputs
    for before, after in zip(prims, prims[1:]):
        assert after["inputs"] == before["outputs"]
    assert prims[-1]["outputs"] == records[2]["outputs"]
    assert records[2]["outputs"][0][2] == mx.int32


def test_an_exporter_with_a_callback():
    w = mx.arange(6.0).reshape(2, 3)
    mx.eval(w)
    records = []

    def fun(x):
        return mx.sum(x * w, axis=1, keepdims=True)

    with mx.exporter(records.append, fun) as ex:
        ex(mx.ones((2, 3)))
        ex(mx.ones((1, 3)))
        with pytest.raises(ValueError):
            ex(mx.zeros((1, 3)))  # a signature already traced
    constants = [r["constants"] for r in records if r["type"] == "constants"]
    assert [len(c) for c in constants] == [1, 0]
    name, value = constants[0][0]
    assert isinstance(name, str) and mx.array_equal(value, w)
    sums = [r for r in records if r["type"] == "primitive" and r["name"] == "Sum"]
    assert len(sums) == 2 and sums[0]["arguments"][1] == [1]


def test_a_failing_callback_raises_and_the_exporter_stays_usable():
    calls = []

    def callback(record):
        if not calls:
            calls.append(record)
            raise KeyError("first record")
        calls.append(record)

    ex = mx.exporter(callback, lambda x: mx.exp(x))
    with pytest.raises(KeyError):
        ex(mx.array(1.0))
    ex(mx.array(1.0))  # the failed trace was not kept
    assert [r["type"] for r in calls[1:]][-1] == "primitive"
    with pytest.raises(ValueError):
        mx.export_function(42, lambda x: x, mx.array(1.0))


def test_metadata_goes_with_the_file(path):
    def fun(x):
        return mx.abs(x)

    x = mx.array([1.0, -2.0, 3.0])
    metadata = {"name": "model", "params": "7000000000"}
    mx.export_function(path, fun, x, metadata=metadata)
    imported = mx.import_function(path)
    assert isinstance(imported(x), tuple)
    assert mx.array_equal(imported(x)[0], fun(x))
    imported, got = mx.import_function(path, return_metadata=True)
    assert got == metadata
    assert mx.array_equal(imported(x)[0], fun(x))

    mx.export_function(path, fun, x)
    assert mx.import_function(path, return_metadata=True)[1] == {}

    with mx.exporter(path, fun, metadata=metadata) as ex:
        ex(mx.array([1.0]))
        ex(mx.array([1.0, 2.0]))
    assert mx.import_function(path, return_metadata=True)[1] == metadata

    with pytest.raises(TypeError):
        mx.export_function(path, fun, x, metadata={"n": 1})
    with pytest.raises(ValueError):
        mx.export_function(lambda r: None, fun, x, metadata=metadata)
