# braid.nn.layers.distributed: the tensor-parallel linear layers, shard_linear, shard_inplace,
# sum_gradients and FullyShardedModule. braid's own group has one process, so the sharded paths
# run N simulated processes: one thread per rank, each with a stand-in group, and stand-in
# collectives that wait for every rank (a barrier with a timeout) and combine what they sent.
# Results are checked against the unsharded layers and NumPy.
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import braid.core as mx
import braid.nn as nn
from braid.nn.layers import distributed as dist
from braid.utils import tree_flatten

TIMEOUT = 60  # seconds for any one wait
SEED = 20250614
print(f"test_nn_distributed seed {SEED}")
RNG = np.random.default_rng(SEED)


def randn(*shape):
    return mx.array(RNG.standard_normal(shape).astype(np.float32))


def close(actual, expected, atol=1e-5, rtol=1e-4):
    np.testing.assert_allclose(np.array(actual), np.array(expected), atol=atol, rtol=rtol)


# --- Simulated processes --------------------------------------------------------------------


class _World:
    """What the simulated processes share: a slot per rank and a barrier."""

    def __init__(self, size):
        self.size = size
        self._slots = [None] * size
        self._barrier = threading.Barrier(size, timeout=TIMEOUT)

    def exchange(self, rank, x):
        """Every rank's ``x`` (as NumPy, in rank order), once all ranks have sent theirs."""
        self._slots[rank] = np.array(x)
        self._barrier.wait()
        values = list(self._slots)
        self._barrier.wait()  # no rank overwrites its slot before every rank has read
        return values

    def abort(self):
        self._barrier.abort()


class _Rank:
    """A stand-in mx.distributed.Group: rank ``rank`` of ``world``."""

    def __init__(self, world, rank):
        self.world = world
        self._rank = rank

    def size(self):
        return self.world.size

    def rank(self):
        return self._rank


def run_ranks(size, fn):
    """``[fn(group of rank r) for r in range(size)]``, each rank on its own thread."""
    world = _World(size)

    def run(rank):
        try:
            return fn(_Rank(world, rank))
        except BaseException:
            world.abort()  # the other ranks stop waiting for this one
            raise

    with ThreadPoolExecutor(max_workers=size) as pool:
        futures = [pool.submit(run, r) for r in range(size)]
        return [f.result(timeout=TIMEOUT) for f in futures]


def _sum_scatter_rows(values, group):
    total = np.sum(values, axis=0)
    rows = total.shape[0] // group.size()
    return total[group.rank() * rows : (group.rank() + 1) * rows]


@pytest.fixture
def collectives(monkeypatch):
    """mx.distributed's all_sum, all_gather and sum_scatter, which on a _Rank combine over its
    world (other groups get the real ones). Returns the names of the calls made on _Ranks."""
    calls = []

    def stand_in(name, combine):
        real = getattr(mx.distributed, name)

        def collective(x, *, group=None, stream=None):
            if not isinstance(group, _Rank):
                return real(x, group=group, stream=stream)
            calls.append(name)
            result = mx.array(combine(group.world.exchange(group.rank(), x), group))
            if result.shape != x.shape:
                return result
            # The value of the combination; the gradient of x passes through unchanged, as the
            # vjp of MLX's all_sum does.
            return x + mx.stop_gradient(result - x)

        monkeypatch.setattr(mx.distributed, name, collective)

    stand_in("all_sum", lambda values, group: np.sum(values, axis=0))
    stand_in("all_gather", lambda values, group: np.concatenate(values, axis=0))
    stand_in("sum_scatter", _sum_scatter_rows)
    return calls


def lone_rank(size, rank):
    """A stand-in group for code that does not communicate (sharding, constructors)."""
    return _Rank(_World(size), rank)


def rows(a, size, rank):
    step = a.shape[0] // size
    return a[rank * step : (rank + 1) * step]


def columns(a, size, rank):
    step = a.shape[-1] // size
    return a[..., rank * step : (rank + 1) * step]


def linear_like(reference):
    """A new nn.Linear holding ``reference``'s parameters."""
    out_dims, in_dims = reference.weight.shape
    layer = nn.Linear(in_dims, out_dims, bias="bias" in reference)
    layer.update(reference.parameters())
    return layer


# --- Names ------------------------------------------------------------------------------------


def test_names_are_exported_as_mlx_exports_them():
    for name in [
        "AllToShardedLinear",
        "ShardedToAllLinear",
        "QuantizedAllToShardedLinear",
        "QuantizedShardedToAllLinear",
        "FullyShardedModule",
        "fully_shard",
    ]:
        assert getattr(nn, name) is getattr(dist, name)
        assert getattr(nn.layers, name) is getattr(dist, name)
    for name in ["shard_linear", "shard_inplace", "sum_gradients"]:
        assert callable(getattr(nn.layers.distributed, name))
        assert not hasattr(nn, name)


# --- One process: braid's own group -------------------------------------------------------------


@pytest.mark.parametrize("sharding", ["all-to-sharded", "sharded-to-all"])
def test_on_the_one_process_group_a_sharded_layer_is_the_layer(sharding):
    lin = nn.Linear(64, 32)
    x = randn(3, 64)
    kinds = {
        "all-to-sharded": (nn.AllToShardedLinear, nn.QuantizedAllToShardedLinear),
        "sharded-to-all": (nn.ShardedToAllLinear, nn.QuantizedShardedToAllLinear),
    }
    sharded = dist.shard_linear(lin, sharding)
    assert type(sharded) is kinds[sharding][0]
    assert sharded.group.size() == 1
    close(sharded.weight, lin.weight, atol=0, rtol=0)
    close(sharded(x), lin(x))

    qlin = lin.to_quantized(group_size=32, bits=8)
    qsharded = dist.shard_linear(qlin, sharding)
    assert type(qsharded) is kinds[sharding][1]
    close(qsharded(x), qlin(x))


@pytest.mark.parametrize("bits", [3, 5, 6, 8])
def test_quantized_layers_recover_the_input_size_for_any_bit_width(bits):
    # 128 inputs pack into 128 * bits / 32 words, which 32 // bits does not divide back for
    # 3, 5 and 6 bits.
    qlin = nn.Linear(128, 8).to_quantized(group_size=64, bits=bits)
    x = randn(2, 128)
    for sharding in ["all-to-sharded", "sharded-to-all"]:
        sharded = dist.shard_linear(qlin, sharding)
        assert sharded._extra_repr().startswith("input_dims=128, output_dims=8,")
        close(sharded(x), qlin(x), atol=0, rtol=0)


def test_a_fully_sharded_module_on_one_process_computes_and_differentiates_the_module():
    reference = nn.Linear(4, 6)
    wrapped = nn.FullyShardedModule(linear_like(reference))
    x = randn(3, 4)

    def loss(m, v):
        return (m(v) ** 2).sum()

    close(wrapped(x), reference(x), atol=0, rtol=0)
    _, grads = nn.value_and_grad(wrapped, loss)(wrapped, x)
    _, expected = nn.value_and_grad(reference, loss)(reference, x)
    close(grads["module"]["weight"], expected["weight"])
    close(grads["module"]["bias"], expected["bias"])


def test_sum_gradients_on_one_process_is_the_plain_identity():
    group = mx.distributed.init()
    identity = dist.sum_gradients(group)
    x = randn(4)
    assert identity(x) is x
    assert not isinstance(identity, mx.custom_function)


def test_fully_shard_on_one_process_returns_the_module():
    model = nn.Linear(4, 4)
    assert nn.fully_shard(model) is model
    assert nn.fully_shard(model, group=mx.distributed.init(), compute_dtype=mx.float16) is model


# --- How parameters are split -------------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 4])
def test_all_to_sharded_keeps_this_ranks_rows_and_sharded_to_all_its_columns(size):
    lin = nn.Linear(8, 16)
    for rank in range(size):
        group = lone_rank(size, rank)
        a = nn.AllToShardedLinear.from_linear(lin, group=group)
        close(a.weight, rows(np.array(lin.weight), size, rank), atol=0, rtol=0)
        close(a.bias, rows(np.array(lin.bias), size, rank), atol=0, rtol=0)
        s = nn.ShardedToAllLinear.from_linear(lin, group=group)
        close(s.weight, columns(np.array(lin.weight), size, rank), atol=0, rtol=0)
        close(s.bias, lin.bias, atol=0, rtol=0)
        assert a.group is group and s.group is group
    # The source layer is left as it was.
    assert lin.weight.shape == (16, 8)


def test_segments_give_each_rank_its_piece_of_every_segment():
    # A fused QKV weight: three blocks of 8 rows, each split between two ranks.
    qkv = nn.Linear(4, 24)
    w = np.array(qkv.weight)
    expected = {
        0: np.concatenate([w[0:4], w[8:12], w[16:20]]),
        1: np.concatenate([w[4:8], w[12:16], w[20:24]]),
    }
    for rank in (0, 1):
        group = lone_rank(2, rank)
        by_count = dist.shard_linear(qkv, "all-to-sharded", segments=3, group=group)
        by_indices = dist.shard_linear(qkv, "all-to-sharded", segments=[8, 16], group=group)
        close(by_count.weight, expected[rank], atol=0, rtol=0)
        close(by_indices.weight, expected[rank], atol=0, rtol=0)


def test_fractional_segments_split_at_fractions_of_the_axis():
    lin = nn.Linear(16, 2, bias=False)
    w = np.array(lin.weight)
    # Segments [0, 4), [4, 8), [8, 16) of the input axis, each halved.
    group = lone_rank(2, 1)
    s = dist.shard_linear(lin, "sharded-to-all", segments=[0.25, 0.5], group=group)
    close(s.weight, np.concatenate([w[:, 2:4], w[:, 6:8], w[:, 12:16]], axis=1), atol=0, rtol=0)


def test_quantized_layers_split_the_packed_weight_with_its_scales_and_biases():
    qlin = nn.Linear(128, 64).to_quantized(group_size=32, bits=4)
    for rank in (0, 1):
        group = lone_rank(2, rank)
        a = dist.shard_linear(qlin, "all-to-sharded", group=group)
        s = dist.shard_linear(qlin, "sharded-to-all", group=group)
        for name in ["weight", "scales", "biases"]:
            full = np.array(qlin[name])
            close(a[name], rows(full, 2, rank), atol=0, rtol=0)
            close(s[name], columns(full, 2, rank), atol=0, rtol=0)
        close(a.bias, rows(np.array(qlin.bias), 2, rank), atol=0, rtol=0)
        close(s.bias, qlin.bias, atol=0, rtol=0)
        assert (a.group_size, a.bits, a.mode) == (32, 4, "affine")
        assert (s.group_size, s.bits, s.mode) == (32, 4, "affine")


@pytest.mark.parametrize("mode", ["mxfp4", "nvfp4", "mxfp8"])
def test_quantized_layers_keep_the_mode_of_the_layer(mode):
    qlin = nn.Linear(64, 32).to_quantized(mode=mode)
    x = randn(2, 64)
    group = lone_rank(2, 0)
    a = dist.shard_linear(qlin, "all-to-sharded", group=group)
    assert (a.mode, a.group_size, a.bits) == (mode, qlin.group_size, qlin.bits)
    assert "biases" not in a and a.get("biases") is None
    # This rank's output features are those of the unsharded quantized layer.
    close(a(x), np.array(qlin(x))[:, :16], atol=1e-5)


def test_shard_inplace_shards_every_parameter_the_predicate_names():
    model = nn.Sequential(nn.Linear(4, 6), nn.Linear(6, 4))
    w0, b0 = np.array(model.layers[0].weight), np.array(model.layers[0].bias)
    w1, b1 = np.array(model.layers[1].weight), np.array(model.layers[1].bias)
    seen = []

    def predicate(path, weight):
        seen.append(path)
        return 0 if path.startswith("layers.0") else (-1 if path.endswith("weight") else None)

    dist.shard_inplace(model, predicate, group=lone_rank(2, 1))
    assert sorted(seen) == [
        "layers.0.bias",
        "layers.0.weight",
        "layers.1.bias",
        "layers.1.weight",
    ]
    close(model.layers[0].weight, w0[3:6], atol=0, rtol=0)
    close(model.layers[0].bias, b0[3:6], atol=0, rtol=0)
    close(model.layers[1].weight, w1[:, 3:6], atol=0, rtol=0)
    close(model.layers[1].bias, b1, atol=0, rtol=0)

    lin = nn.Linear(3, 6)
    w = np.array(lin.weight)
    dist.shard_inplace(lin, "all-to-sharded", segments=3, group=lone_rank(2, 0))
    close(lin.weight, w[[0, 2, 4]], atol=0, rtol=0)


# --- Errors and reprs ---------------------------------------------------------------------------


def test_an_unknown_sharding_is_a_value_error():
    lin = nn.Linear(4, 4)
    with pytest.raises(ValueError, match="Sharding type sharding='rows' not supported"):
        dist.shard_linear(lin, "rows")
    with pytest.raises(ValueError, match="choose one of 'all-to-sharded' or 'sharded-to-all'"):
        dist.shard_inplace(lin, "columns")


def test_a_predicate_answering_neither_int_nor_tuple_is_a_value_error():
    with pytest.raises(ValueError, match=r"should return int or tuple\[int, list\]"):
        dist.shard_inplace(nn.Linear(4, 4), lambda path, w: [0, 2], group=lone_rank(2, 0))


def test_sizes_that_do_not_divide_by_the_group_are_value_errors():
    group = lone_rank(4, 0)
    with pytest.raises(ValueError, match="Cannot shard the output of size 6 across 4 devices"):
        nn.AllToShardedLinear(8, 6, group=group)
    with pytest.raises(ValueError, match="Cannot shard the output of size 6 across 4 devices"):
        nn.QuantizedAllToShardedLinear(64, 6, group=group)
    with pytest.raises(ValueError, match="The input of size 6 cannot be sharded across 4"):
        nn.ShardedToAllLinear(6, 8, group=group)
    with pytest.raises(ValueError, match="The input of size 6 cannot be sharded across 4"):
        nn.QuantizedShardedToAllLinear(6, 8, group=group)


def test_layers_report_their_unsharded_sizes():
    group = lone_rank(2, 1)
    a = nn.AllToShardedLinear(8, 16, group=group)
    s = nn.ShardedToAllLinear(8, 16, bias=False, group=group)
    assert a.weight.shape == (8, 8) and a.bias.shape == (8,)
    assert s.weight.shape == (16, 4) and "bias" not in s
    assert repr(a) == "AllToShardedLinear(input_dims=8, output_dims=16, bias=True)"
    assert repr(s) == "ShardedToAllLinear(input_dims=8, output_dims=16, bias=False)"
    qa = nn.QuantizedAllToShardedLinear(128, 64, group_size=32, bits=8, group=group)
    qs = nn.QuantizedShardedToAllLinear(128, 64, bias=False, group=group)
    assert qa.weight.shape == (32, 32) and qa.bias.shape == (32,)
    assert qs.weight.shape == (64, 8) and qs.scales.shape == (64, 1)
    assert qa._extra_repr() == (
        "input_dims=128, output_dims=64, bias=True, group_size=32, bits=8, mode=affine"
    )
    assert qs._extra_repr() == (
        "input_dims=128, output_dims=64, bias=False, group_size=64, bits=4, mode=affine"
    )


def test_quantized_layers_keep_their_own_parameters_frozen():
    group = lone_rank(2, 0)
    q = nn.QuantizedAllToShardedLinear(64, 8, group=group)
    assert tree_flatten(q.trainable_parameters()) == []
    q.unfreeze()
    assert tree_flatten(q.trainable_parameters()) == []
    s = nn.QuantizedShardedToAllLinear(128, 8, group=group)
    s.unfreeze(recurse=False)
    assert tree_flatten(s.trainable_parameters()) == []


# --- Simulated processes: forward -----------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 4])
def test_a_sharded_pair_computes_the_unsharded_block(collectives, size):
    up, down = nn.Linear(16, 32), nn.Linear(32, 8)
    x = randn(3, 16)
    expected = down(nn.relu(up(x)))

    def rank_output(group):
        a = dist.shard_linear(up, "all-to-sharded", group=group)
        s = dist.shard_linear(down, "sharded-to-all", group=group)
        hidden = a(x)
        return np.array(hidden), np.array(s(nn.relu(hidden)))

    results = run_ranks(size, rank_output)
    # The hidden layer is sharded: the ranks' slices side by side are the full one.
    close(np.concatenate([h for h, _ in results], axis=1), up(x))
    for _, y in results:
        close(y, expected)
    assert collectives == ["all_sum"] * size


@pytest.mark.parametrize("size", [2, 4])
def test_a_sharded_quantized_pair_computes_the_unsharded_quantized_block(collectives, size):
    up = nn.Linear(128, 256).to_quantized(group_size=32, bits=4)
    down = nn.Linear(256, 64).to_quantized(group_size=32, bits=4)
    x = randn(2, 128)
    expected = down(up(x))

    def rank_output(group):
        a = dist.shard_linear(up, "all-to-sharded", group=group)
        s = dist.shard_linear(down, "sharded-to-all", group=group)
        assert isinstance(a, nn.QuantizedAllToShardedLinear)
        assert isinstance(s, nn.QuantizedShardedToAllLinear)
        return np.array(s(a(x)))

    for y in run_ranks(size, rank_output):
        close(y, expected, atol=1e-4)


def test_fused_qkv_weights_sharded_by_segment_give_each_rank_its_heads(collectives):
    # Rank r's q, k and v are the r-th half of each of the unsharded layer's three outputs.
    qkv = nn.Linear(8, 3 * 4)
    x = randn(5, 8)
    q, k, v = np.split(np.array(qkv(x)), 3, axis=-1)

    def rank_output(group):
        layer = dist.shard_linear(qkv, "all-to-sharded", segments=3, group=group)
        return np.split(np.array(layer(x)), 3, axis=-1)

    for rank, (q_r, k_r, v_r) in enumerate(run_ranks(2, rank_output)):
        close(q_r, columns(q, 2, rank))
        close(k_r, columns(k, 2, rank))
        close(v_r, columns(v, 2, rank))


def test_shard_inplace_makes_a_convolution_stack_tensor_parallel(collectives):
    # Even layers keep their output channels (axis 0), odd layers their input channels (last
    # axis, bias whole) and sum their outputs over the group, as MLX's test_shard_predicate.
    class Conv(nn.Module):
        def __init__(self, in_channels, out_channels, aggregate=False, group=None):
            super().__init__()
            self.aggregate = aggregate
            self.group = group
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3)

        def __call__(self, x):
            x = self.conv(x)
            if self.aggregate:
                x = mx.distributed.all_sum(x, group=self.group)
            return x

    def predicate(path, weight):
        even = int(path.split(".")[1]) % 2 == 0
        if even:
            return 0
        return -1 if not path.endswith("bias") else None

    channels = [(3, 8), (8, 8), (8, 8), (8, 3)]
    model = nn.Sequential(*[Conv(i, o) for i, o in channels])
    x = randn(2, 12, 12, 3)
    expected = model(x)

    def rank_output(group):
        sharded = nn.Sequential(
            *[Conv(i, o, aggregate=n % 2 == 1, group=group) for n, (i, o) in enumerate(channels)]
        )
        sharded.update(model.parameters())
        dist.shard_inplace(sharded, predicate, group=group)
        assert sharded.layers[0].conv.weight.shape == (4, 3, 3, 3)
        assert sharded.layers[1].conv.weight.shape == (8, 3, 3, 4)
        return np.array(sharded(x))

    for y in run_ranks(2, rank_output):
        close(y, expected, atol=1e-4)


# --- Simulated processes: gradients ---------------------------------------------------------------


def test_sum_gradients_sums_the_gradient_of_its_input_over_the_group(collectives):
    x = randn(5)
    weights = [randn(5) for _ in range(3)]

    def rank_gradient(group):
        identity = dist.sum_gradients(group)
        assert dist.sum_gradients(group) is identity  # one function per group
        assert isinstance(identity, mx.custom_function)
        close(identity(x), x, atol=0, rtol=0)
        w = weights[group.rank()]
        return np.array(mx.grad(lambda v: (identity(v) * w).sum())(x))

    for g in run_ranks(3, rank_gradient):
        close(g, sum(np.array(w) for w in weights))
    assert collectives == ["all_sum"] * 3


def test_gradients_of_a_sharded_model_are_slices_of_the_unsharded_gradients(collectives):
    # MLX's test_shard_linear backward check, with the input's gradient as well.
    layers = [nn.Linear(16, 16) for _ in range(4)]
    model = nn.Sequential(*layers)
    x, y = randn(4, 16), randn(4, 16)

    def loss(m, x, y):
        return (m(x) * y).sum()

    expected_loss, expected = nn.value_and_grad(model, loss)(model, x, y)
    expected_dx = mx.grad(lambda v: loss(model, v, y))(x)

    def rank_gradients(group):
        sharded = nn.Sequential(
            *[
                dist.shard_linear(layer, kind, group=group)
                for layer, kind in zip(layers, ["all-to-sharded", "sharded-to-all"] * 2)
            ]
        )
        value, grads = nn.value_and_grad(sharded, loss)(sharded, x, y)
        dx = mx.grad(lambda v: loss(sharded, v, y))(x)
        return value.item(), grads, np.array(dx)

    for rank, (value, grads, dx) in enumerate(run_ranks(2, rank_gradients)):
        assert value == pytest.approx(expected_loss.item(), rel=1e-5, abs=1e-4)
        close(dx, expected_dx)
        for n in (0, 2):  # all-to-sharded: rows of the weight and of the bias
            got, full = grads["layers"][n], expected["layers"][n]
            close(got["weight"], rows(np.array(full["weight"]), 2, rank))
            close(got["bias"], rows(np.array(full["bias"]), 2, rank))
        for n in (1, 3):  # sharded-to-all: columns of the weight, the whole bias
            got, full = grads["layers"][n], expected["layers"][n]
            close(got["weight"], columns(np.array(full["weight"]), 2, rank))
            close(got["bias"], full["bias"])


# --- Simulated processes: FullyShardedModule ------------------------------------------------------


def test_a_fully_sharded_module_holds_row_shards_and_computes_the_module(collectives):
    reference = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
    x = randn(3, 4)
    expected = reference(x)
    full = dict(tree_flatten(reference.parameters()))

    def rank_run(group):
        first, last = linear_like(reference.layers[0]), linear_like(reference.layers[2])
        model = nn.Sequential(first, nn.ReLU(), last)
        wrapped = nn.fully_shard(model, group=group)
        assert isinstance(wrapped, nn.FullyShardedModule) and wrapped.module is model
        assert wrapped._extra_repr() == "num_sharded_params=4"
        for path, shard in tree_flatten(wrapped.parameters()):
            expected_shard = rows(np.array(full[path.removeprefix("module.")]), 2, group.rank())
            close(shard, expected_shard, atol=0, rtol=0)
        out = np.array(wrapped(x))
        # The call puts the shards back.
        shapes = {p: v.shape for p, v in tree_flatten(model.parameters())}
        return out, shapes

    for out, shapes in run_ranks(2, rank_run):
        close(out, expected)
        assert shapes == {
            "layers.0.weight": (4, 4),
            "layers.0.bias": (4,),
            "layers.2.weight": (3, 8),
            "layers.2.bias": (3,),
        }
    assert collectives == ["all_gather"] * 2


def test_a_fully_sharded_module_averages_gradients_into_its_shards(collectives):
    reference = nn.Linear(6, 4)
    xs = [randn(5, 6) for _ in range(2)]  # each rank trains on its own batch

    def loss(m, x):
        return (m(x) ** 2).sum()

    full_grads = [nn.value_and_grad(reference, loss)(reference, x)[1] for x in xs]

    def rank_gradients(group):
        wrapped = nn.fully_shard(linear_like(reference), group=group)
        value, grads = nn.value_and_grad(wrapped, loss)(wrapped, xs[group.rank()])
        return value.item(), grads

    for rank, (value, grads) in enumerate(run_ranks(2, rank_gradients)):
        assert value == pytest.approx(loss(reference, xs[rank]).item(), rel=1e-5)
        for name in ("weight", "bias"):
            mean = (np.array(full_grads[0][name]) + np.array(full_grads[1][name])) / 2
            close(grads["module"][name], rows(mean, 2, rank))
    assert sorted(set(collectives)) == ["all_gather", "sum_scatter"]


def test_a_fully_sharded_module_computes_in_compute_dtype_and_keeps_shard_dtypes(collectives):
    reference = nn.Linear(8, 4)
    x = randn(2, 8)

    def rank_run(group):
        wrapped = nn.fully_shard(linear_like(reference), group=group, compute_dtype=mx.float16)
        out = wrapped(x.astype(mx.float16))
        _, grads = nn.value_and_grad(wrapped, lambda m, v: m(v).astype(mx.float32).sum())(
            wrapped, x.astype(mx.float16)
        )
        return out.dtype, np.array(out.astype(mx.float32)), grads["module"]["weight"].dtype

    for out_dtype, out, grad_dtype in run_ranks(2, rank_run):
        assert out_dtype == mx.float16 and grad_dtype == mx.float32
        close(out, reference(x), atol=1e-2, rtol=1e-2)


def test_a_fully_sharded_module_leaves_inner_fully_sharded_modules_alone():
    group = lone_rank(2, 0)
    inner = nn.fully_shard(nn.Linear(4, 4), group=group)
    outer = nn.fully_shard(nn.Sequential(inner, nn.Linear(4, 2)), group=group)
    assert outer._paths == ["layers.1.weight", "layers.1.bias"]
    assert inner.module.weight.shape == (2, 4)  # sharded once, by the inner module
    assert nn.fully_shard(outer, group=group) is outer
    # Nothing of its own to shard: the module is returned as is.
    only_inner = nn.Sequential(inner)
    assert nn.fully_shard(only_inner, group=group) is only_inner


def test_parameters_that_cannot_be_row_sharded_are_value_errors():
    group = lone_rank(2, 0)
    with pytest.raises(ValueError, match="axis 0 must be divisible by 2"):
        nn.FullyShardedModule(nn.Linear(4, 3), group=group)
    scalar = nn.Module()
    scalar.temperature = mx.array(1.0)
    with pytest.raises(ValueError, match="'temperature' because it is a scalar"):
        nn.FullyShardedModule(scalar, group=group)


def test_all_to_sharded_splits_a_stacked_bias_along_its_last_axis():
    from braid.nn.layers.distributed import shard_inplace

    class Experts(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = mx.arange(4 * 6 * 3, dtype=mx.float32).reshape(4, 6, 3)
            self.bias = mx.arange(4 * 6, dtype=mx.float32).reshape(4, 6)

    m = Experts()
    full_w, full_b = m.weight, m.bias
    shard_inplace(m, "all-to-sharded", group=_Rank(_World(2), 1))
    assert m.weight.shape == (4, 3, 3) and m.bias.shape == (4, 3)
    assert mx.array_equal(m.weight, full_w[:, 3:, :]).item()
    assert mx.array_equal(m.bias, full_b[:, 3:]).item()
