# braid.core.distributed with no communication backend, as mlx.core.distributed behaves when none
# can start: the singleton group, collectives that return their input, send/recv that raise, and
# nn.average_gradients (the identity on one process; its bucketing checked with a stand-in group).
import pytest

import braid.core as mx
import braid.nn as nn


def test_no_backend_is_available():
    assert mx.distributed.is_available() is False
    for backend in ["any", "mpi", "ring", "nccl", "jaccl", "no-such-backend"]:
        assert mx.distributed.is_available(backend) is False
        assert mx.distributed.is_available(backend=backend) is False


@pytest.mark.parametrize("backend", ["any", "mpi", "ring", "nccl", "jaccl"])
def test_init_returns_the_singleton_group(backend):
    group = mx.distributed.init(backend=backend)
    assert isinstance(group, mx.distributed.Group)
    assert group.rank() == 0
    assert group.size() == 1
    assert mx.distributed.init(False, backend).size() == 1


def test_strict_init_raises_runtime_error():
    with pytest.raises(RuntimeError, match="Couldn't initialize any backend"):
        mx.distributed.init(strict=True)
    with pytest.raises(RuntimeError, match="Cannot initialize MPI"):
        mx.distributed.init(strict=True, backend="mpi")
    with pytest.raises(RuntimeError, match="Cannot initialize ring distributed backend"):
        mx.distributed.init(strict=True, backend="ring")


def test_unknown_backend_raises_value_error():
    with pytest.raises(ValueError, match="The only valid values for backend"):
        mx.distributed.init(backend="gloo")


def test_singleton_group_cannot_be_split():
    group = mx.distributed.init()
    with pytest.raises(RuntimeError, match="Cannot split the distributed group further"):
        group.split(0)
    with pytest.raises(RuntimeError):
        group.split(color=1, key=2)


def test_group_has_no_public_constructor():
    with pytest.raises(TypeError):
        mx.distributed.Group()


@pytest.mark.parametrize("name", ["all_sum", "all_max", "all_min", "all_gather", "sum_scatter"])
def test_collectives_return_their_input(name):
    op = getattr(mx.distributed, name)
    x = mx.array([[1.0, -2.0, 3.0], [4.0, 5.0, 6.0]])
    assert op(x).tolist() == x.tolist()
    out = op(x, group=mx.distributed.init(), stream=mx.cpu)
    assert out.shape == (2, 3) and out.dtype == mx.float32
    # A Python scalar or list is taken as an array, as in MLX.
    assert op(3).item() == 3
    assert op([1, 2, 3]).tolist() == [1, 2, 3]


def test_collectives_take_group_and_stream_only_by_keyword():
    x = mx.ones((2,))
    with pytest.raises(TypeError):
        mx.distributed.all_sum(x, mx.distributed.init())


def test_send_and_recv_raise_value_error_on_a_singleton_group():
    x = mx.ones((3,))
    with pytest.raises(ValueError, match="Cannot send to a singleton group"):
        mx.distributed.send(x, 0)
    with pytest.raises(ValueError, match="Cannot recv from a singleton group"):
        mx.distributed.recv((3,), mx.float32, 0)
    with pytest.raises(ValueError, match="Cannot recv from a singleton group"):
        mx.distributed.recv_like(x, 0, group=mx.distributed.init())


def test_average_gradients_returns_the_gradients_on_one_process():
    grads = {"w": mx.ones((2, 3)), "b": [mx.zeros((3,)), mx.array(2.0)]}
    assert nn.average_gradients(grads) is grads
    assert nn.average_gradients(grads, group=mx.distributed.init(), all_reduce_size=0) is grads
    assert nn.average_gradients(grads, communication_type=mx.float16) is grads


class _TwoProcesses:
    # A stand-in for a group of two identical processes: all_sum doubles, so the mean is the input.
    def size(self):
        return 2

    def rank(self):
        return 0


@pytest.mark.parametrize("all_reduce_size", [0, 1, 32, 32 * 1024**2])
def test_average_gradients_buckets_and_splits_back(monkeypatch, all_reduce_size):
    calls = []

    def all_sum(x, group=None, stream=None):
        calls.append(x.size)
        return x * 2

    monkeypatch.setattr(mx.distributed, "all_sum", all_sum)
    grads = {"a": mx.arange(6.0).reshape(2, 3), "b": [mx.arange(4.0), mx.array([7.0])]}
    out = nn.average_gradients(grads, group=_TwoProcesses(), all_reduce_size=all_reduce_size)
    assert out["a"].tolist() == grads["a"].tolist()
    assert out["b"][0].tolist() == grads["b"][0].tolist()
    assert out["b"][1].tolist() == [7.0]
    assert sum(calls) == 11
    if all_reduce_size == 0 or all_reduce_size == 1:
        assert len(calls) == 3
    elif all_reduce_size == 32:
        assert calls == [10, 1]
    else:
        assert calls == [11]
