# braid.nn: Module, the layers, activations, losses and initializers against NumPy formulas.
import math
import os

import numpy as np
import pytest

import braid.core as mx
import braid.nn as nn
from braid.utils import tree_flatten, tree_map, tree_reduce

RNG = np.random.default_rng(1234)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def npy(a):
    return np.array(a)


def close(actual, expected, atol=1e-5, rtol=1e-5):
    np.testing.assert_allclose(npy(actual), expected, atol=atol, rtol=rtol)


# --- Module ------------------------------------------------------------------------------------


def test_module_children_leaves_and_training_mode():
    m = nn.Sequential(
        nn.Sequential(nn.Linear(2, 10), nn.relu),
        nn.Sequential(nn.Linear(10, 10), nn.ReLU()),
        nn.Linear(10, 1),
        mx.sigmoid,
    )
    children = m.children()
    assert isinstance(children, dict) and len(children) == 1
    assert len(children["layers"]) == 4 and children["layers"][3] == {}
    assert len(tree_flatten(children, is_leaf=nn.Module.is_module)) == 3

    leaves = tree_flatten(m.leaf_modules(), is_leaf=nn.Module.is_module)
    assert [k for k, _ in leaves] == [
        "layers.0.layers.0",
        "layers.1.layers.0",
        "layers.1.layers.1",
        "layers.2",
    ]
    assert leaves[0][1] is m.layers[0].layers[0]
    assert leaves[3][1] is m.layers[2]

    m.eval()
    assert all(not mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    names = [k for k, _ in m.named_modules()]
    assert names[0] == "" and "layers.1.layers.1" in names and len(names) == 7


def test_module_attributes_switch_between_entries_and_plain_attributes():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.val = None
            self.val = mx.array(1.0)

    model = Model()
    assert "val" in model and model.val.item() == 1.0
    model.val = None
    assert model.val is None and "val" not in model
    model.val = mx.array([3])
    assert model.val.item() == 3

    lin = nn.Linear(4, 4)
    del lin.weight
    assert not hasattr(lin, "weight")
    with pytest.raises(AttributeError):
        lin.nothing_here


def test_module_state_is_the_module_itself():
    m = nn.Linear(3, 1)
    m.state["hello"] = "world"
    assert m.state["hello"] == "world" and m.state is m


def test_parameters_of_nested_dicts_and_lists():
    class DictModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = {"w1": mx.zeros((2, 2)), "w2": mx.ones((2, 2))}
            self.items = [mx.zeros((3,)), 7]
            self._private = mx.ones((1,))

    params = tree_flatten(DictModule().parameters(), destination={})
    assert set(params) == {"weights.w1", "weights.w2", "items.0"}
    close(params["weights.w2"], np.ones((2, 2)))


def test_freeze_and_unfreeze_select_trainable_parameters():
    m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    assert len(tree_flatten(m.trainable_parameters())) == 4
    m.freeze()
    assert tree_flatten(m.trainable_parameters()) == []
    assert len(tree_flatten(m.parameters())) == 4
    m.unfreeze(keys="bias")
    keys = [k for k, _ in tree_flatten(m.trainable_parameters())]
    assert keys == ["layers.0.bias", "layers.1.bias"]
    m.unfreeze()
    m.freeze(keys=["bias"])
    keys = [k for k, _ in tree_flatten(m.trainable_parameters())]
    assert keys == ["layers.0.weight", "layers.1.weight"]
    m.unfreeze()
    m.freeze(recurse=False)
    assert len(tree_flatten(m.trainable_parameters())) == 4
    with pytest.raises(KeyError):
        m.layers[0].freeze(keys="nope", strict=True)
    assert m.freeze().unfreeze() is m


def test_update_replaces_and_validates():
    m = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    new_w = mx.ones((3, 3))
    m.update({"layers": [{}, {"weight": new_w}]})
    assert m.layers[1].weight is new_w
    with pytest.raises(ValueError):
        m.update({"layers": [{"value": 0}]})
    with pytest.raises(ValueError):
        m.update({"layers": ["hello"]})
    with pytest.raises(ValueError):
        m.update({"layers": [{"weight": "hi"}]})
    m.update({"layers": [{"value": 0}]}, strict=False)
    params = m.parameters()
    assert not m.update(params).eval().training


def test_frozen_entries_of_nested_dicts_stay_out_of_training():
    class DictParams(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = {"w1": mx.ones((2,)), "w2": mx.ones((2,))}

        def __call__(self, x):
            return (self.weights["w1"] * x + self.weights["w2"]).sum()

    m = DictParams()
    m.freeze(keys="weights.w1")
    assert m.trainable_parameters() == {"weights": {"w1": {}, "w2": m.weights["w2"]}}
    _, grads = nn.value_and_grad(m, m)(mx.array([2.0, 3.0]))
    m.update(tree_map(lambda g: -g, grads))
    close(m.weights["w1"], [1.0, 1.0])
    close(m.weights["w2"], [-1.0, -1.0])


def test_update_modules_replaces_and_validates():
    m = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    with pytest.raises(ValueError):
        m.update_modules({"values": [0, 1]})
    with pytest.raises(ValueError):
        m.update_modules({"layers": [0, 1]})

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.test = mx.array(1.0)
            self.list = [mx.array(1.0), mx.array(2.0)]

    h = Holder()
    with pytest.raises(ValueError):
        h.update_modules({"test": "hi"})
    with pytest.raises(ValueError):
        h.update_modules({"list": ["hi"]})

    m.update_modules({"layers": [{}, nn.Linear(3, 4)]})
    assert m.layers[1].weight.shape == (4, 3)

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.stuff = [nn.Linear(2, 2), 0, nn.Linear(2, 2)]
            self.more_stuff = {"hi": nn.Linear(2, 2), "bye": 0}

    mixed = Mixed()
    mixed.update_modules(mixed.leaf_modules())


def test_updates_leave_no_reference_cycles():
    import gc
    import weakref

    gc.disable()
    try:
        model = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
        model.update(model.parameters())
        model.update_modules(model.leaf_modules())
        model.freeze().unfreeze().eval()
        ref = weakref.ref(model)
        del model
        assert ref() is None
    finally:
        gc.enable()


def test_apply_and_set_dtype():
    layer = nn.Linear(4, 8)

    def dtypes():
        return {v.dtype for _, v in tree_flatten(layer.parameters())}

    layer.set_dtype(mx.bfloat16)
    assert dtypes() == {mx.bfloat16}
    layer.set_dtype(mx.float32, lambda x: False)
    assert dtypes() == {mx.bfloat16}
    layer.set_dtype(mx.int32, lambda x: True)
    assert dtypes() == {mx.int32}
    layer.set_dtype(mx.int64, predicate=None)
    assert dtypes() == {mx.int64}
    layer.set_dtype(mx.float16)
    assert dtypes() == {mx.int64}
    layer.apply(lambda x: x.astype(mx.float32) * 0)
    close(layer.weight, np.zeros((8, 4)))


@pytest.mark.parametrize("ext", [".npz", ".safetensors"])
def test_save_and_load_weights(tmp_path, ext):
    def make():
        return nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))

    m = make()
    path = os.path.join(tmp_path, "model" + ext)
    m.save_weights(path)
    loaded = make().load_weights(path)
    equal = tree_map(mx.array_equal, m.parameters(), loaded.parameters())
    assert all(v for _, v in tree_flatten(equal))
    with pytest.raises(ValueError):
        m.save_weights(os.path.join(tmp_path, "model.txt"))


def test_load_weights_from_a_list_checks_names_shapes_and_types():
    m = nn.Linear(2, 2)
    weights = [("weight", mx.ones((2, 2)))]
    with pytest.raises(ValueError):
        m.load_weights(weights)
    m.load_weights(weights, strict=False)
    assert mx.array_equal(m.weight, weights[0][1])
    with pytest.raises(ValueError):
        m.load_weights([("weihgt", mx.ones((2, 2)))])
    m.load_weights([("weihgt", mx.ones((2, 2)))], strict=False)
    with pytest.raises(ValueError):
        m.load_weights([("weight", mx.ones((2, 2))), ("bias", mx.ones((2,))), ("b2", mx.ones((2,)))])
    with pytest.raises(ValueError):
        m.load_weights([("weight", mx.ones((2, 2))), ("bias", mx.ones((2, 1)))])
    with pytest.raises(ValueError):
        m.load_weights([("weight", mx.ones((2, 2))), ("bias", 3)])
    m.load_weights([], strict=False)


def test_repr_lists_children():
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    text = repr(m)
    assert text.startswith("Sequential(") and "(layers.0): Linear(input_dims=2, output_dims=3, bias=True)" in text
    assert str(nn.InstanceNorm(3)) == "InstanceNorm(3, eps=1e-05, affine=False)"


def test_grad_of_a_module_argument():
    model = nn.Linear(3, 2)
    x = mx.array(randn(4, 3))

    def loss_fn(model):
        return model(x).sum()

    grads = mx.grad(loss_fn)(model)
    close(grads["weight"], np.tile(npy(x).sum(axis=0), (2, 1)), atol=1e-5)
    close(grads["bias"], np.full((2,), 4.0))


def test_value_and_grad_differentiates_trainable_parameters():
    model = nn.Linear(3, 2)
    model.freeze(keys="bias")
    x_np, y_np = randn(5, 3), randn(5, 2)
    x, y = mx.array(x_np), mx.array(y_np)

    def loss_fn(x, y):
        return nn.losses.mse_loss(model(x), y)

    loss, grads = nn.value_and_grad(model, loss_fn)(x, y)
    w, b = npy(model.weight), npy(model.bias)
    residual = x_np @ w.T + b - y_np
    assert np.isclose(loss.item(), np.mean(residual**2), rtol=1e-5)
    assert set(grads) == {"weight"}
    close(grads["weight"], 2 * residual.T @ x_np / residual.size, atol=1e-5)


def test_checkpoint_gives_the_same_gradients():
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    x = mx.array(randn(3, 4))
    checkpointed = nn.checkpoint(model)

    def plain_loss(x, scale=1.0):
        return (model(x) ** 2).sum() * scale

    def checkpointed_loss(x, scale=1.0):
        return (checkpointed(x) ** 2).sum() * scale

    v1, g1 = nn.value_and_grad(model, plain_loss)(x, scale=2.0)
    v2, g2 = nn.value_and_grad(model, checkpointed_loss)(x, scale=2.0)
    assert np.isclose(v1.item(), v2.item(), rtol=1e-6)
    for (k1, a), (k2, b) in zip(tree_flatten(g1), tree_flatten(g2)):
        assert k1 == k2
        close(a, npy(b), atol=1e-6)


# --- Layers ---------------------------------------------------------------------------------


def test_identity_and_sequential():
    x = mx.array(randn(4, 2))
    assert mx.array_equal(nn.Identity(1, k=2)(x), x)
    m = nn.Sequential(nn.Linear(2, 10), nn.ReLU(), nn.Linear(10, 1))
    y = m(x)
    assert y.shape == (4, 1)
    params = m.parameters()
    assert len(params["layers"]) == 3 and params["layers"][1] == {}
    m.layers[1] = nn.relu
    assert mx.array_equal(m(x), y)


def test_linear_matches_numpy():
    layer = nn.Linear(input_dims=4, output_dims=8)
    assert layer.weight.shape == (8, 4) and layer.bias.shape == (8,)
    bound = 1 / math.sqrt(4)
    assert np.abs(npy(layer.weight)).max() <= bound
    x = randn(3, 5, 4)
    close(layer(mx.array(x)), x @ npy(layer.weight).T + npy(layer.bias), atol=1e-5)
    no_bias = nn.Linear(4, 2, bias=False)
    assert "bias" not in no_bias.parameters()
    close(no_bias(mx.array(x)), x @ npy(no_bias.weight).T, atol=1e-5)


def test_bilinear_matches_numpy():
    layer = nn.Bilinear(input1_dims=2, input2_dims=4, output_dims=6)
    x1, x2 = randn(3, 5, 2), randn(3, 5, 4)
    w = npy(layer.weight)  # [out, in2, in1]
    expected = np.einsum("...i,oji,...j->...o", x1, w, x2) + npy(layer.bias)
    close(layer(mx.array(x1), mx.array(x2)), expected, atol=1e-5)


def test_embedding_lookup_and_as_linear():
    emb = nn.Embedding(10, 4)
    idx = np.array([[1, 3], [9, 0]])
    close(emb(mx.array(idx)), npy(emb.weight)[idx])
    x = randn(2, 4)
    close(emb.as_linear(mx.array(x)), x @ npy(emb.weight).T, atol=1e-5)


def conv_nd_reference(x, w, stride, padding, dilation, groups):
    """Direct N-d convolution: x [N, *S, C_in], w [C_out, *K, C_in/groups]."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0)] + [(p, p) for p in padding] + [(0, 0)])
    n, *spatial, c_in = x.shape
    c_out, *kernel, c_per = w.shape
    out_sp = [(s - d * (k - 1) - 1) // st + 1 for s, k, st, d in zip(spatial, kernel, stride, dilation)]
    out = np.zeros([n, *out_sp, c_out], dtype=np.float64)
    per_group_out = c_out // groups
    for pos in np.ndindex(*out_sp):
        for kpos in np.ndindex(*kernel):
            src = tuple(p * st + k * d for p, k, st, d in zip(pos, kpos, stride, dilation))
            patch = x[(slice(None),) + src]  # [N, C_in]
            for g in range(groups):
                xs = patch[:, g * c_per:(g + 1) * c_per]
                ws = w[(slice(g * per_group_out, (g + 1) * per_group_out),) + kpos]
                out[(slice(None),) + pos + (slice(g * per_group_out, (g + 1) * per_group_out),)] += xs @ ws.T
    assert nd == len(kernel)
    return out


def test_conv1d_matches_numpy():
    x = randn(2, 12, 4)
    for kwargs in [{}, {"stride": 2}, {"padding": 2}, {"dilation": 2}, {"groups": 2}]:
        c = nn.Conv1d(4, 6, 3, **kwargs)
        assert c.weight.shape == (6, 3, 4 // kwargs.get("groups", 1))
        expected = conv_nd_reference(
            x, npy(c.weight), [kwargs.get("stride", 1)], [kwargs.get("padding", 0)],
            [kwargs.get("dilation", 1)], kwargs.get("groups", 1),
        )
        close(c(mx.array(x)), expected + npy(c.bias), atol=1e-4)
    assert "bias" not in nn.Conv1d(4, 6, 3, bias=False).parameters()
    with pytest.raises(ValueError):
        nn.Conv1d(3, 6, 3, groups=2)


def test_conv2d_and_conv3d_match_numpy():
    x = randn(2, 7, 6, 4)
    c = nn.Conv2d(4, 8, (3, 2), stride=(2, 1), padding=1, groups=2)
    expected = conv_nd_reference(x, npy(c.weight), (2, 1), (1, 1), (1, 1), 2)
    close(c(mx.array(x)), expected + npy(c.bias), atol=1e-4)

    x3 = randn(1, 4, 5, 3, 2)
    c3 = nn.Conv3d(2, 3, 2, padding=(1, 0, 0))
    c3.bias = mx.array(randn(3))
    expected = conv_nd_reference(x3, npy(c3.weight), (1, 1, 1), (1, 0, 0), (1, 1, 1), 1)
    close(c3(mx.array(x3)), expected + npy(c3.bias), atol=1e-4)


def conv_transpose_reference(x, w, stride, padding, dilation, output_padding):
    """Scatter form: every input position adds w * x to a window of the output."""
    n, *spatial, c_in = x.shape
    c_out, *kernel, _ = w.shape
    full = [(s - 1) * st + d * (k - 1) + 1 + op for s, st, d, k, op in zip(spatial, stride, dilation, kernel, output_padding)]
    out = np.zeros([n, *full, c_out], dtype=np.float64)
    for pos in np.ndindex(*spatial):
        for kpos in np.ndindex(*kernel):
            dst = tuple(p * st + k * d for p, k, st, d in zip(pos, kpos, stride, dilation))
            out[(slice(None),) + dst] += x[(slice(None),) + pos] @ w[(slice(None),) + kpos].T
    crop = tuple(slice(p, f - p) for p, f in zip(padding, full))
    return out[(slice(None),) + crop]


def test_conv_transpose_matches_numpy():
    x = randn(2, 5, 3)
    c = nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1)
    c.bias = mx.array(randn(4))
    expected = conv_transpose_reference(x, npy(c.weight), [2], [1], [1], [0])
    close(c(mx.array(x)), expected + npy(c.bias), atol=1e-4)

    x2 = randn(1, 4, 3, 2)
    c2 = nn.ConvTranspose2d(2, 3, (2, 3), stride=(2, 1), dilation=1)
    expected = conv_transpose_reference(x2, npy(c2.weight), (2, 1), (0, 0), (1, 1), (0, 0))
    close(c2(mx.array(x2)), expected + npy(c2.bias), atol=1e-4)

    c3 = nn.ConvTranspose3d(2, 2, 2)
    assert c3(mx.array(randn(1, 3, 3, 3, 2))).shape == (1, 4, 4, 4, 2)


def test_layer_norm_and_rms_norm_match_numpy():
    x = randn(3, 4, 8)
    ln = nn.LayerNorm(8)
    ln.weight = mx.array(randn(8))
    ln.bias = mx.array(randn(8))
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    normed = (x - mean) / np.sqrt(var + 1e-5)
    close(ln(mx.array(x)), normed * npy(ln.weight) + npy(ln.bias), atol=1e-4)
    close(nn.LayerNorm(8, affine=False)(mx.array(x)), normed, atol=1e-4)
    assert set(nn.LayerNorm(8, bias=False).parameters()) == {"weight"}

    rms = nn.RMSNorm(8, eps=1e-6)
    rms.weight = mx.array(randn(8))
    expected = x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * npy(rms.weight)
    close(rms(mx.array(x)), expected, atol=1e-4)


def test_group_norm_matches_numpy_in_both_groupings():
    x = randn(2, 3, 5, 8)
    for pytorch_compatible in (False, True):
        g = nn.GroupNorm(2, 8, pytorch_compatible=pytorch_compatible)
        g.weight = mx.array(randn(8))
        g.bias = mx.array(randn(8))
        if pytorch_compatible:
            groups = x.reshape(2, -1, 2, 4).transpose(0, 2, 1, 3).reshape(2, 2, -1)
        else:
            groups = x.reshape(2, -1, 2).transpose(0, 2, 1)
        normed = (groups - groups.mean(-1, keepdims=True)) / np.sqrt(groups.var(-1, keepdims=True) + 1e-5)
        if pytorch_compatible:
            normed = normed.reshape(2, 2, -1, 4).transpose(0, 2, 1, 3).reshape(x.shape)
        else:
            normed = normed.transpose(0, 2, 1).reshape(x.shape)
        close(g(mx.array(x)), normed * npy(g.weight) + npy(g.bias), atol=1e-4)


def test_instance_norm_matches_numpy():
    x = randn(2, 4, 3, 5)
    inorm = nn.InstanceNorm(dims=5, affine=True)
    inorm.weight = mx.array(randn(5))
    axes = (1, 2)
    normed = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
    close(inorm(mx.array(x)), normed * npy(inorm.weight), atol=1e-4)
    close(nn.InstanceNorm(5)(mx.array(x)), normed, atol=1e-4)


def test_batch_norm_training_statistics_and_eval():
    bn = nn.BatchNorm(num_features=4)
    bn.weight = mx.array(randn(4))
    x = randn(6, 3, 4)
    mean, var = x.mean((0, 1)), x.var((0, 1))
    y = bn(mx.array(x))
    close(y, (x - mean) / np.sqrt(var + 1e-5) * npy(bn.weight), atol=1e-4)
    close(bn.running_mean, 0.1 * mean, atol=1e-5)
    close(bn.running_var, 0.9 + 0.1 * var, atol=1e-5)

    bn.eval()
    running_mean, running_var = npy(bn.running_mean), npy(bn.running_var)
    y = bn(mx.array(x))
    close(y, (x - running_mean) / np.sqrt(running_var + 1e-5) * npy(bn.weight), atol=1e-4)
    close(bn.running_mean, running_mean)

    assert {"running_mean", "running_var", "weight", "bias"} <= set(bn.parameters())
    bn.unfreeze()
    assert set(bn.trainable_parameters()) == {"weight", "bias"}
    with pytest.raises(ValueError):
        bn(mx.array(randn(2, 2, 2, 2, 4)))
    no_stats = nn.BatchNorm(4, affine=False, track_running_stats=False)
    assert no_stats.parameters() == {}
    close(no_stats(mx.array(x)), (x - mean) / np.sqrt(var + 1e-5), atol=1e-4)


@pytest.mark.parametrize("dtype", [mx.float32, mx.float16, mx.bfloat16])
def test_dropout_zeroes_or_scales_and_keeps_dtype(dtype):
    x = mx.ones((64, 32), dtype=dtype)
    y = nn.Dropout(0.25)(x)
    assert y.dtype == dtype and y.shape == x.shape
    values = npy(y.astype(mx.float32))
    assert np.all((values == 0) | np.isclose(values, 1 / 0.75, rtol=1e-2))
    kept = (npy(y.astype(mx.float32)) != 0).mean()
    assert 0.6 < kept < 0.9

    d = nn.Dropout(0.5)
    d.eval()
    assert mx.array_equal(d(x), x)
    assert mx.array_equal(nn.Dropout(0.0)(x), x)
    with pytest.raises(ValueError):
        nn.Dropout(1.0)


def test_dropout2d_and_3d_drop_whole_channels():
    x = mx.ones((4, 5, 6, 16))
    y = npy(nn.Dropout2d(0.5)(x))
    per_channel = y.reshape(4, 30, 16)
    assert np.all(per_channel.min(axis=1) == per_channel.max(axis=1))
    assert set(np.unique(y)) <= {0.0, 2.0}
    y3 = npy(nn.Dropout3d(0.5)(mx.ones((2, 3, 4, 5, 8))))
    per_channel = y3.reshape(2, 60, 8)
    assert np.all(per_channel.min(axis=1) == per_channel.max(axis=1))
    assert nn.Dropout2d(0.5)(mx.ones((3, 4, 5), dtype=mx.bfloat16)).dtype == mx.bfloat16
    with pytest.raises(ValueError):
        nn.Dropout2d()(mx.ones((2, 3)))
    with pytest.raises(ValueError):
        nn.Dropout3d()(mx.ones((2, 3, 4)))


# --- Activations ------------------------------------------------------------------------------

X_ACT = np.linspace(-4, 4, 41).astype(np.float32)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softplus(x):
    return np.logaddexp(x, 0)


def np_erf(x):
    return np.vectorize(math.erf)(x)


def np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * (np.exp(x) - 1))


ACTIVATIONS = [
    ("relu", lambda x: np.maximum(x, 0), nn.ReLU),
    ("relu2", lambda x: np.maximum(x, 0) ** 2, nn.ReLU2),
    ("relu6", lambda x: np.clip(x, 0, 6), nn.ReLU6),
    ("leaky_relu", lambda x: np.where(x > 0, x, 0.01 * x), nn.LeakyReLU),
    ("elu", np_elu, nn.ELU),
    ("celu", lambda x: np.maximum(x, 0) + np.minimum(0, np.exp(x) - 1), nn.CELU),
    ("selu", lambda x: 1.0507 * np_elu(x, 1.67326), nn.SELU),
    ("gelu", lambda x: 0.5 * x * (1 + np_erf(x / np.sqrt(2))), nn.GELU),
    ("gelu_approx", lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))), None),
    ("gelu_fast_approx", lambda x: x * np_sigmoid(1.702 * x), None),
    ("silu", lambda x: x * np_sigmoid(x), nn.SiLU),
    ("sigmoid", np_sigmoid, nn.Sigmoid),
    ("tanh", np.tanh, nn.Tanh),
    ("softplus", np_softplus, nn.Softplus),
    ("softsign", lambda x: x / (1 + np.abs(x)), nn.Softsign),
    ("softshrink", lambda x: np.where(np.abs(x) > 0.5, x - np.sign(x) * 0.5, 0), nn.Softshrink),
    ("hard_tanh", lambda x: np.clip(x, -1, 1), nn.HardTanh),
    ("hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6, nn.Hardswish),
    ("hard_shrink", lambda x: np.where(np.abs(x) > 0.5, x, 0), nn.HardShrink),
    ("mish", lambda x: x * np.tanh(np_softplus(x)), nn.Mish),
    ("log_sigmoid", lambda x: -np_softplus(-x), nn.LogSigmoid),
    ("step", lambda x: (x > 0).astype(np.float32), nn.Step),
    ("softmax", lambda x: np.exp(x) / np.exp(x).sum(), nn.Softmax),
    ("softmin", lambda x: np.exp(-x) / np.exp(-x).sum(), nn.Softmin),
    ("log_softmax", lambda x: x - np.log(np.exp(x).sum()), nn.LogSoftmax),
]


@pytest.mark.parametrize("name,reference,cls", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_numpy(name, reference, cls):
    x = mx.array(X_ACT)
    expected = reference(X_ACT.astype(np.float64))
    y = getattr(nn, name)(x)
    assert y.shape == x.shape
    close(y, expected, atol=1e-5, rtol=1e-4)
    if cls is not None:
        close(cls()(x), expected, atol=1e-5, rtol=1e-4)


def test_activation_parameters():
    x = mx.array(X_ACT)
    xs = X_ACT.astype(np.float64)
    close(nn.LeakyReLU(negative_slope=0.1)(x), np.where(xs > 0, xs, 0.1 * xs), atol=1e-6)
    close(nn.ELU(alpha=1.1)(x), np_elu(xs, 1.1), atol=1e-5)
    close(nn.CELU(alpha=1.1)(x), np.maximum(xs, 0) + 1.1 * (np.exp(np.minimum(xs, 0) / 1.1) - 1), atol=1e-5)
    close(nn.Softshrink(lambd=0.7)(x), np.where(np.abs(xs) > 0.7, xs - np.sign(xs) * 0.7, 0), atol=1e-6)
    close(nn.hard_shrink(x, lambd=0.1), np.where(np.abs(xs) > 0.1, xs, 0), atol=1e-6)
    close(nn.hard_tanh(x, min_val=-2, max_val=3), np.clip(xs, -2, 3), atol=1e-6)
    close(nn.Step(threshold=1.0)(x), (xs > 1).astype(np.float32))
    close(nn.GELU(approx="precise")(x), nn.gelu_approx(x))
    close(nn.GELU(approx="tanh")(x), nn.gelu_approx(x))
    close(nn.GELU(approx="fast")(x), nn.gelu_fast_approx(x))
    with pytest.raises(ValueError):
        nn.GELU(approx="bad")
    assert float(mx.max(mx.abs(nn.gelu(x) - nn.gelu_approx(x))).item()) < 0.0005
    assert float(mx.max(mx.abs(nn.gelu(x) - nn.gelu_fast_approx(x))).item()) < 0.025

    prelu = nn.PReLU(num_parameters=1, init=0.25)
    close(prelu(x), np.maximum(xs, 0) + 0.25 * np.minimum(xs, 0), atol=1e-6)
    assert prelu.weight.shape == (1,)

    m = randn(2, 3, 4)
    a, b = m[..., :2], m[..., 2:]
    close(nn.glu(mx.array(m)), a * np_sigmoid(b), atol=1e-6)
    close(nn.GLU(axis=0)(mx.array(randn(4, 3))).shape, (2, 3))
    close(nn.log_softmax(mx.array(m), axis=1), m - np.log(np.exp(m).sum(1, keepdims=True)), atol=1e-5)
    assert nn.relu(mx.array([1, -2])).dtype == mx.int32
    assert nn.activations.sigmoid is nn.sigmoid


# --- Attention and positional encodings -------------------------------------------------------


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_multi_head_attention_matches_numpy():
    attn = nn.MultiHeadAttention(8, 2, bias=True)
    q, k, v = randn(2, 3, 8), randn(2, 5, 8), randn(2, 5, 8)
    mask = np.where(RNG.random((3, 5)) < 0.3, -1e9, 0).astype(np.float32)

    def proj(layer, x):
        return x @ npy(layer.weight).T + npy(layer.bias)

    def heads(x):
        b, t, _ = x.shape
        return x.reshape(b, t, 2, 4).transpose(0, 2, 1, 3)

    qh, kh, vh = heads(proj(attn.query_proj, q)), heads(proj(attn.key_proj, k)), heads(proj(attn.value_proj, v))
    scores = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(4) + mask
    out = (np_softmax(scores) @ vh).transpose(0, 2, 1, 3).reshape(2, 3, 8)
    expected = proj(attn.out_proj, out)
    close(attn(mx.array(q), mx.array(k), mx.array(v), mx.array(mask)), expected, atol=1e-4)
    with pytest.raises(ValueError):
        nn.MultiHeadAttention(10, 3)


def test_additive_causal_mask():
    for dtype in (mx.float32, mx.float16, mx.bfloat16):
        mask = nn.MultiHeadAttention.create_additive_causal_mask(4, dtype)
        assert mask.dtype == dtype
        values = npy(mask.astype(mx.float32))
        assert not np.isnan(values).any()
        assert np.all(values[np.tril_indices(4)] == 0) and np.all(values[np.triu_indices(4, 1)] < -1e3)


def test_transformer_stacks_compose_their_layers():
    x = mx.array(randn(2, 4, 8))
    mask = nn.MultiHeadAttention.create_additive_causal_mask(4)
    for norm_first in (True, False):
        enc = nn.TransformerEncoder(2, 8, 2, mlp_dims=16, norm_first=norm_first)
        manual = x
        for layer in enc.layers:
            manual = layer(manual, mask)
        close(enc(x, mask), enc.ln(manual), atol=1e-5)

        layer = enc.layers[0]
        if norm_first:
            y = layer.ln1(x)
            h = x + layer.attention(y, y, y, mask)
            expected = h + layer.linear2(nn.relu(layer.linear1(layer.ln2(h))))
        else:
            h = layer.ln1(x + layer.attention(x, x, x, mask))
            expected = layer.ln2(h + layer.linear2(nn.relu(layer.linear1(h))))
        close(layer(x, mask), expected, atol=1e-5)

        dec = nn.TransformerDecoder(1, 8, 2, norm_first=norm_first)
        assert dec(x, x, mask, None).shape == (2, 4, 8)

    t = nn.Transformer(dims=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, mlp_dims=16)
    assert t(x, x, None, mask, None).shape == (2, 4, 8)
    ckpt = nn.TransformerEncoder(1, 8, 2, checkpoint=True)
    plain_out = nn.TransformerEncoder.__call__(ckpt, x, mask)
    close(ckpt(x, mask), plain_out, atol=1e-5)


def rope_reference(x, dims, traditional, base, scale, offset):
    *_, t, d = x.shape
    pos = (np.arange(t) + offset)[:, None] * scale
    freqs = base ** (-np.arange(0, dims, 2) / dims)
    theta = pos * freqs
    cos, sin = np.cos(theta), np.sin(theta)
    out = x.astype(np.float64).copy()
    if traditional:
        a, b = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2] = a * cos - b * sin
        out[..., 1:dims:2] = a * sin + b * cos
    else:
        half = dims // 2
        a, b = x[..., :half], x[..., half:dims]
        out[..., :half] = a * cos - b * sin
        out[..., half:dims] = a * sin + b * cos
    return out


@pytest.mark.parametrize("traditional", [False, True])
def test_rope_matches_numpy(traditional):
    x = randn(1, 2, 5, 8)
    rope = nn.RoPE(6, traditional=traditional, base=500, scale=0.5)
    close(rope(mx.array(x), offset=3), rope_reference(x, 6, traditional, 500, 0.5, 3), atol=1e-4)
    assert nn.RoPE(8)(mx.array(x).astype(mx.float16)).dtype == mx.float16


def test_sinusoidal_positional_encoding_matches_numpy():
    pe = nn.SinusoidalPositionalEncoding(16, min_freq=0.01)
    x = np.arange(10, dtype=np.float32)
    freqs = np.exp(np.linspace(0, np.log(0.01), 8))
    angles = x[:, None] * freqs
    expected = np.concatenate([np.sin(angles), np.cos(angles)], -1) * np.sqrt(2 / 16)
    close(pe(mx.array(x)), expected, atol=1e-5)
    assert "_sigmas" not in pe.parameters()
    cos_first = nn.SinusoidalPositionalEncoding(16, min_freq=0.01, cos_first=True, scale=1.0, full_turns=True)
    angles = x[:, None] * freqs * 2 * np.pi
    close(cos_first(mx.array(x)), np.concatenate([np.cos(angles), np.sin(angles)], -1), atol=1e-4)


def test_alibi_matches_numpy():
    scores = randn(1, 4, 3, 6)
    slopes = (2.0**8) ** (-np.arange(1, 5) / 4)
    q = np.arange(2, 5)[:, None]
    k = np.arange(6)[None, :]
    bias = -np.abs(q - k)[None, None] * slopes[None, :, None, None]
    close(nn.ALiBi()(mx.array(scores), offset=2), scores + bias, atol=1e-5)
    assert nn.ALiBi()(mx.array(scores).astype(mx.float16)).dtype == mx.float16


# --- Pooling and upsampling -------------------------------------------------------------------


def pool_reference(x, kernel, stride, padding, op):
    nd = len(kernel)
    pad_value = -np.inf if op == "max" else 0.0
    x = np.pad(x.astype(np.float64), [(0, 0)] + [(p, p) for p in padding] + [(0, 0)], constant_values=pad_value)
    n, *spatial, c = x.shape
    out_sp = [(s - k) // st + 1 for s, k, st in zip(spatial, kernel, stride)]
    out = np.zeros([n, *out_sp, c])
    for pos in np.ndindex(*out_sp):
        window = x[(slice(None),) + tuple(slice(p * st, p * st + k) for p, st, k in zip(pos, stride, kernel))]
        axes = tuple(range(1, nd + 1))
        out[(slice(None),) + pos] = window.max(axes) if op == "max" else window.mean(axes)
    return out


POOL_CASES = [
    (nn.MaxPool1d, "max", (2, 9, 3), dict(kernel_size=2, stride=1, padding=0)),
    (nn.MaxPool1d, "max", (2, 9, 3), dict(kernel_size=3, stride=2, padding=1)),
    (nn.AvgPool1d, "avg", (2, 9, 3), dict(kernel_size=2, padding=1)),
    (nn.MaxPool2d, "max", (2, 6, 7, 2), dict(kernel_size=(2, 4), stride=(3, 1), padding=(1, 2))),
    (nn.AvgPool2d, "avg", (2, 6, 7, 2), dict(kernel_size=3, stride=2, padding=1)),
    (nn.AvgPool2d, "avg", (1, 4, 4, 2), dict(kernel_size=2)),
    (nn.MaxPool3d, "max", (1, 4, 5, 3, 2), dict(kernel_size=2, stride=(1, 2, 1), padding=1)),
    (nn.AvgPool3d, "avg", (1, 4, 5, 3, 2), dict(kernel_size=(1, 2, 1))),
]


@pytest.mark.parametrize("cls,op,shape,kwargs", POOL_CASES)
def test_pooling_matches_numpy(cls, op, shape, kwargs):
    x = randn(*shape)
    nd = len(shape) - 2

    def as_tuple(v):
        return (v,) * nd if isinstance(v, int) else tuple(v)

    kernel = as_tuple(kwargs["kernel_size"])
    stride = as_tuple(kwargs.get("stride", kwargs["kernel_size"]))
    padding = as_tuple(kwargs.get("padding", 0))
    close(cls(**kwargs)(mx.array(x)), pool_reference(x, kernel, stride, padding, op), atol=1e-5)


def test_pooling_integer_inputs_and_repr():
    x = np.arange(24, dtype=np.int32).reshape(2, 4, 3)
    y = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)(mx.array(x))
    assert y.dtype == mx.int32
    close(y, pool_reference(x, (3,), (2,), (1,), "max"))
    assert str(nn.MaxPool1d(kernel_size=3, padding=2)) == "MaxPool1d(kernel_size=(3,), stride=(3,), padding=(2,))"
    assert str(nn.AvgPool2d(kernel_size=(1, 2), stride=2, padding=(1, 2))) == (
        "AvgPool2d(kernel_size=(1, 2), stride=(2, 2), padding=(1, 2))"
    )
    with pytest.raises(ValueError):
        nn.MaxPool2d(kernel_size=(1, 2, 3))
    with pytest.raises(ValueError):
        nn.AvgPool1d(kernel_size=2)(mx.ones((4, 3)))


def interp_weights(n, m, align_corners, mode):
    """[m, n] matrix mapping n input samples to m outputs along one axis."""
    scale = m / n
    if align_corners:
        pos = np.arange(m) * ((n - 1) / (m - 1))
    else:
        pos = (np.arange(m) + 0.5) / scale - 0.5
    w = np.zeros((m, n))
    if mode == "linear":
        pos = np.clip(pos, 0, n - 1)
        lo = np.floor(pos).astype(int)
        hi = np.ceil(pos).astype(int)
        frac = pos - lo
        for i in range(m):
            w[i, lo[i]] += 1 - frac[i]
            w[i, hi[i]] += frac[i]
    else:  # cubic, a = -0.75, border samples repeated
        a = -0.75
        for i in range(m):
            base = math.floor(pos[i])
            for j in range(base - 1, base + 3):
                d = abs(pos[i] - j)
                if d <= 1:
                    k = ((a + 2) * d - (a + 3)) * d * d + 1
                else:
                    k = ((d - 5) * d + 8) * d * a - 4 * a
                w[i, min(max(j, 0), n - 1)] += k
    return w


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_upsample_interpolation_matches_numpy(mode, align_corners):
    x = randn(2, 3, 4, 2)
    up = nn.Upsample(scale_factor=(2, 1.5), mode=mode, align_corners=align_corners)
    wh = interp_weights(3, 6, align_corners, mode)
    ww = interp_weights(4, 6, align_corners, mode)
    expected = np.einsum("ih,jw,nhwc->nijc", wh, ww, x)
    close(up(mx.array(x)), expected, atol=1e-4)


def test_upsample_antialias_widens_the_kernel_when_downsampling():
    x = randn(1, 8, 1)
    # Halving with the triangle kernel widened to 2 inputs a side: interior outputs weigh
    # their four nearest inputs 1/8, 3/8, 3/8, 1/8; the first loses its tap before 0.
    y = np.array(nn.Upsample(0.5, mode="linear", antialias=True)(mx.array(x)))[0, :, 0]
    v = x[0, :, 0]
    want = [(3 * v[0] + 3 * v[1] + v[2]) / 7]
    want += [(v[2 * i - 1] + 3 * v[2 * i] + 3 * v[2 * i + 1] + v[2 * i + 2]) / 8 for i in (1, 2)]
    want += [(v[5] + 3 * v[6] + 3 * v[7]) / 7]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    # Upsampling with the triangle kernel is plain linear interpolation.
    x = randn(1, 4, 4, 3)
    for scale in (2.0, 3.0):
        aa = nn.Upsample(scale, mode="linear", antialias=True)(mx.array(x))
        close(aa, nn.Upsample(scale, mode="linear")(mx.array(x)), atol=1e-6)
    torch = pytest.importorskip("torch")
    x = randn(2, 16, 8, 3).astype(np.float32)
    xt = torch.from_numpy(x.transpose(0, 3, 1, 2).copy())
    for mode, tmode in (("linear", "bilinear"), ("cubic", "bicubic")):
        for scale in ((0.5, 0.25), (2.0, 2.0)):
            got = nn.Upsample(scale, mode=mode, antialias=True)(mx.array(x))
            want = torch.nn.functional.interpolate(xt, scale_factor=scale, mode=tmode, antialias=True)
            close(got, want.permute(0, 2, 3, 1).numpy(), atol=1e-5)


def test_upsample_nearest_matches_numpy():
    x = np.arange(2 * 3 * 2 * 1).reshape(2, 3, 2, 1).astype(np.int32)
    y = nn.Upsample(scale_factor=2)(mx.array(x))
    assert y.dtype == mx.int32
    close(y, x.repeat(2, axis=1).repeat(2, axis=2))
    y = nn.Upsample(scale_factor=(1, 3))(mx.array(x))
    close(y, x.repeat(3, axis=2))
    # Fractional factor: output i takes input round((i + 0.5) * n / m - 0.5).
    y = nn.Upsample(scale_factor=1.5)(mx.array(x[:, :, :1]))
    idx = np.round((np.arange(4) + 0.5) * 3 / 4 - 0.5).astype(int)
    close(y[:, :, :1], x[:, idx, :1])
    assert str(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest', align_corners=False)"
    with pytest.raises(ValueError):
        nn.Upsample(2, mode="area")
    with pytest.raises(ValueError):
        nn.Upsample((2, 2))(mx.ones((1, 4, 1)))


# --- Recurrent layers --------------------------------------------------------------------------


def test_rnn_matches_numpy():
    layer = nn.RNN(3, 5)
    x = randn(2, 4, 3)
    wxh, whh, b = npy(layer.Wxh), npy(layer.Whh), npy(layer.bias)
    h = np.zeros((2, 5))
    outs = []
    for t in range(4):
        h = np.tanh(x[:, t] @ wxh.T + b + h @ whh.T)
        outs.append(h)
    close(layer(mx.array(x)), np.stack(outs, 1), atol=1e-5)
    relu_rnn = nn.RNN(3, 5, bias=False, nonlinearity=nn.relu)
    assert relu_rnn(mx.array(x[0])).shape == (4, 5)
    with pytest.raises(ValueError):
        nn.RNN(3, 5, nonlinearity="tanh")


def test_gru_matches_numpy():
    layer = nn.GRU(3, 4)
    x = randn(2, 5, 3)
    h0 = randn(2, 4)
    wx, wh, b, bhn = npy(layer.Wx), npy(layer.Wh), npy(layer.b), npy(layer.bhn)
    h = h0
    outs = []
    for t in range(5):
        xp = x[:, t] @ wx.T + b
        hp = h @ wh.T
        r = np_sigmoid(xp[:, :4] + hp[:, :4])
        z = np_sigmoid(xp[:, 4:8] + hp[:, 4:8])
        n = np.tanh(xp[:, 8:] + r * (hp[:, 8:] + bhn))
        h = (1 - z) * n + z * h
        outs.append(h)
    close(layer(mx.array(x), hidden=mx.array(h0)), np.stack(outs, 1), atol=1e-5)
    assert layer(mx.array(x[0])).shape == (5, 4)


def test_lstm_matches_numpy():
    layer = nn.LSTM(3, 4)
    x = randn(2, 5, 3)
    wx, wh, b = npy(layer.Wx), npy(layer.Wh), npy(layer.bias)
    h = np.zeros((2, 4))
    c = np.zeros((2, 4))
    hs, cs = [], []
    for t in range(5):
        g = x[:, t] @ wx.T + b + h @ wh.T
        i, f, gg, o = np_sigmoid(g[:, :4]), np_sigmoid(g[:, 4:8]), np.tanh(g[:, 8:12]), np_sigmoid(g[:, 12:])
        c = f * c + i * gg
        h = o * np.tanh(c)
        hs.append(h)
        cs.append(c)
    h_out, c_out = layer(mx.array(x))
    close(h_out, np.stack(hs, 1), atol=1e-5)
    close(c_out, np.stack(cs, 1), atol=1e-5)
    h_out, c_out = layer(mx.array(x[0]), hidden=mx.array(hs[-1][0]), cell=mx.array(cs[-1][0]))
    assert h_out.shape == (5, 4) and c_out.shape == (5, 4)


# --- Quantized layers ----------------------------------------------------------------------


def test_quantize_replaces_linear_and_embedding():
    m = nn.Sequential(nn.Embedding(5, 64), nn.ReLU(), nn.Linear(64, 64))
    nn.quantize(m)
    assert isinstance(m.layers[0], nn.QuantizedEmbedding)
    assert isinstance(m.layers[1], nn.ReLU)
    assert isinstance(m.layers[2], nn.QuantizedLinear)

    m = nn.Sequential(nn.Embedding(5, 64), nn.ReLU(), nn.Linear(64, 64))
    nn.quantize(m, class_predicate=lambda _, mod: isinstance(mod, nn.Linear))
    assert isinstance(m.layers[0], nn.Embedding)
    assert isinstance(m.layers[2], nn.QuantizedLinear)
    nn.quantize(m, class_predicate=lambda path, mod: {"group_size": 32, "bits": 8} if path == "layers.0" else False)
    assert m.layers[0].bits == 8 and m.layers[0].group_size == 32
    with pytest.raises(ValueError):
        nn.quantize(m, class_predicate=lambda _, mod: isinstance(mod, nn.ReLU))


def test_quantized_linear_approximates_linear():
    lin = nn.Linear(128, 16)
    qlin = lin.to_quantized(group_size=32, bits=8)
    assert isinstance(qlin, nn.QuantizedLinear) and qlin.bits == 8
    x = mx.array(randn(3, 128))
    close(qlin(x), npy(lin(x)), atol=0.05, rtol=0.05)
    # The quantized weight is frozen; the float bias taken from the Linear is not.
    assert [k for k, _ in tree_flatten(qlin.trainable_parameters())] == ["bias"]
    qlin.unfreeze(keys=["scales"])
    size = tree_reduce(lambda acc, p: acc + p.size, qlin.trainable_parameters(), 0)
    assert size > 0
    assert "input_dims=128" in repr(qlin)


def test_quantized_embedding_approximates_embedding():
    emb = nn.Embedding(32, 128)
    qemb = nn.QuantizedEmbedding.from_embedding(emb, bits=8)
    idx = mx.array([2, 6, 9, 3, 0, 3])
    err = np.abs(npy(emb(idx)) - npy(qemb(idx))).max()
    assert err < float(mx.max(qemb.scales).item())
    x = mx.array(randn(2, 128))
    close(qemb.as_linear(x), npy(emb.as_linear(x)), atol=0.1, rtol=0.05)


def test_qqlinear_quantizes_its_weight_in_eval_mode():
    lin = nn.Linear(64, 8, bias=False)
    q = nn.QQLinear.from_linear(lin)
    x = mx.array(randn(4, 64))
    assert q.training and set(q.keys()) == {"weight"}
    y_train = npy(q(x))
    q.eval()
    assert set(q.keys()) == {"weight", "scales"} and q.weight.dtype == mx.uint32
    close(q(x), y_train, atol=1e-5)
    # Both operands go through nvfp4 (4-bit floats, scales per 16 values).
    x_dq = npy(mx.dequantize(*mx.quantize(x, mode="nvfp4"), mode="nvfp4").astype(mx.float32))
    w_dq = npy(mx.dequantize(*mx.quantize(lin.weight, mode="nvfp4"), mode="nvfp4").astype(mx.float32))
    close(y_train, x_dq @ w_dq.T, atol=1e-2, rtol=1e-2)
    q.train()
    assert set(q.keys()) == {"weight"} and q.weight.shape == (8, 64)
    assert repr(q) == "QQLinear(input_dims=64, output_dims=8, group_size=16, bits=4, mode=nvfp4)"
    with pytest.raises(NotImplementedError):
        nn.QQLinear.from_linear(nn.Linear(64, 8))


# --- Losses ---------------------------------------------------------------------------------


def reduce_np(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_cross_entropy_matches_numpy(reduction):
    logits = randn(4, 5)
    targets = np.array([0, 3, 4, 1])
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -log_probs[np.arange(4), targets]
    out = nn.losses.cross_entropy(mx.array(logits), mx.array(targets), reduction=reduction)
    close(out, reduce_np(expected, reduction), atol=1e-5)

    probs = np_softmax(randn(4, 5))
    expected = -(probs * log_probs).sum(-1)
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(probs), reduction=reduction),
          reduce_np(expected, reduction), atol=1e-5)


def test_cross_entropy_options():
    logits = randn(3, 4)
    targets = np.array([1, 0, 3])
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -log_probs[np.arange(3), targets]
    weights = np.array([1.0, 2.0, 0.5], dtype=np.float32)
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(targets), weights=mx.array(weights)), nll * weights, atol=1e-5)
    smoothing = 0.3
    expected = (1 - smoothing) * nll - smoothing * log_probs.mean(-1)
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(targets), label_smoothing=smoothing), expected, atol=1e-5)
    # Classes along axis 0.
    close(nn.losses.cross_entropy(mx.array(logits.T), mx.array(targets), axis=0), nll, atol=1e-5)
    with pytest.raises(ValueError):
        nn.losses.cross_entropy(mx.array(logits), mx.array(targets), label_smoothing=1.0)
    with pytest.raises(ValueError):
        nn.losses.cross_entropy(mx.array(logits), mx.array(np.array([1, 2])))
    with pytest.raises(ValueError):
        nn.losses.cross_entropy(mx.array(logits), mx.array(targets), weights=mx.ones((2,)))
    with pytest.raises(ValueError):
        nn.losses.cross_entropy(mx.array(logits), mx.array(targets), reduction="avg")


def test_binary_cross_entropy_matches_numpy():
    logits = randn(6)
    targets = (RNG.random(6) > 0.5).astype(np.float32)
    p = np_sigmoid(logits.astype(np.float64))
    expected = -(targets * np.log(p) + (1 - targets) * np.log(1 - p))
    close(nn.losses.binary_cross_entropy(mx.array(logits), mx.array(targets)), expected.mean(), atol=1e-5)
    close(nn.losses.binary_cross_entropy(mx.array(p.astype(np.float32)), mx.array(targets), with_logits=False,
                                         reduction="none"), expected, atol=1e-4)
    w = RNG.random(6).astype(np.float32)
    close(nn.losses.binary_cross_entropy(mx.array(logits), mx.array(targets), weights=mx.array(w), reduction="sum"),
          (expected * w).sum(), atol=1e-4)
    clipped = nn.losses.binary_cross_entropy(mx.array([0.0, 1.0]), mx.array([1.0, 0.0]), with_logits=False,
                                             reduction="none")
    close(clipped, [100.0, 100.0])
    with pytest.raises(ValueError):
        nn.losses.binary_cross_entropy(mx.array(logits), mx.array(targets[:3]))


def test_regression_losses_match_numpy():
    p, t = randn(4, 3), randn(4, 3)
    d = p - t
    L = nn.losses
    P, T = mx.array(p), mx.array(t)
    close(L.l1_loss(P, T), np.abs(d).mean(), atol=1e-6)
    close(L.mse_loss(P, T, reduction="sum"), (d**2).sum(), atol=1e-5)
    close(L.smooth_l1_loss(P, T, beta=0.5, reduction="none"),
          np.where(np.abs(d) < 0.5, 0.5 * d**2 / 0.5, np.abs(d) - 0.25), atol=1e-6)
    close(L.huber_loss(P, T, delta=0.7),
          np.where(np.abs(d) <= 0.7, 0.5 * d**2, 0.7 * (np.abs(d) - 0.35)), atol=1e-6)
    close(L.log_cosh_loss(P, T), np.log(np.cosh(d)), atol=1e-5)
    close(L.hinge_loss(P, mx.array(np.sign(t))), np.maximum(1 - p * np.sign(t), 0), atol=1e-6)
    var = RNG.random((4, 3)).astype(np.float32) + 0.1
    expected = 0.5 * (np.log(var) + d**2 / var)
    close(L.gaussian_nll_loss(P, T, mx.array(var)), expected.mean(), atol=1e-5)
    close(L.gaussian_nll_loss(P, T, mx.array(var), full=True, reduction="sum"),
          (expected + 0.5 * np.log(2 * np.pi)).sum(), atol=1e-4)
    for fn in (L.l1_loss, L.mse_loss, L.smooth_l1_loss):
        with pytest.raises(ValueError):
            fn(P, mx.array(t[:2]))


def test_distribution_and_ranking_losses_match_numpy():
    L = nn.losses
    logp = np.log(np_softmax(randn(3, 4)))
    logq = np.log(np_softmax(randn(3, 4)))
    close(L.kl_div_loss(mx.array(logp), mx.array(logq)), (np.exp(logq) * (logq - logp)).sum(-1), atol=1e-5)
    targets = np.array([2, 0, 3])
    close(L.nll_loss(mx.array(logp), mx.array(targets), reduction="mean"), -logp[np.arange(3), targets].mean(),
          atol=1e-6)

    a, pos, neg = randn(5, 4), randn(5, 4), randn(5, 4)
    dp = np.sqrt(((a - pos) ** 2).sum(-1) + 1e-6)
    dn = np.sqrt(((a - neg) ** 2).sum(-1) + 1e-6)
    close(L.triplet_loss(mx.array(a), mx.array(pos), mx.array(neg), margin=0.5), np.maximum(dp - dn + 0.5, 0), atol=1e-5)

    x1, x2 = randn(3, 6), randn(3, 6)
    cos = (x1 * x2).sum(1) / (np.linalg.norm(x1, axis=1) * np.linalg.norm(x2, axis=1))
    close(L.cosine_similarity_loss(mx.array(x1), mx.array(x2)), cos, atol=1e-5)

    i1, i2 = randn(4), randn(4)
    y = np.array([1, -1, 1, -1], dtype=np.float32)
    close(L.margin_ranking_loss(mx.array(i1), mx.array(i2), mx.array(y), margin=0.2),
          np.maximum(0, -y * (i1 - i2) + 0.2), atol=1e-6)
    with pytest.raises(ValueError):
        L.margin_ranking_loss(mx.array(i1), mx.array(i2[:2]), mx.array(y))


# --- Initializers -----------------------------------------------------------------------------


def test_initializers():
    a = mx.zeros((200, 100))
    close(nn.init.constant(0.5)(a), np.full((200, 100), 0.5))
    assert nn.init.constant(1, dtype=mx.float16)(a).dtype == mx.float16
    close(nn.init.identity()(mx.zeros((3, 3))), np.eye(3))
    with pytest.raises(ValueError):
        nn.init.identity()(mx.zeros((2, 3)))

    n = npy(nn.init.normal(mean=1.0, std=2.0)(a))
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    u = npy(nn.init.uniform(low=-2, high=1)(a))
    assert u.min() >= -2 and u.max() <= 1 and abs(u.mean() + 0.5) < 0.05

    fan_in, fan_out = 100, 200
    g = npy(nn.init.glorot_normal()(a))
    assert abs(g.std() - np.sqrt(2 / (fan_in + fan_out))) < 0.005
    g = npy(nn.init.glorot_uniform()(a, gain=2.0))
    limit = 2.0 * np.sqrt(6 / (fan_in + fan_out))
    assert np.abs(g).max() <= limit and np.abs(g).max() > 0.9 * limit
    h = npy(nn.init.he_normal()(a, mode="fan_out", gain=3.0))
    assert abs(h.std() - 3.0 / np.sqrt(fan_out)) < 0.01
    h = npy(nn.init.he_uniform(mx.float32)(a))
    assert np.abs(h).max() <= np.sqrt(3 / fan_in)
    conv = npy(nn.init.he_normal()(mx.zeros((64, 3, 3, 16))))
    assert abs(conv.std() - 1 / np.sqrt(16 * 9)) < 0.01
    with pytest.raises(ValueError):
        nn.init.he_normal()(a, mode="fan_avg")
    with pytest.raises(ValueError):
        nn.init.glorot_normal()(mx.zeros((5,)))

    s = npy(nn.init.sparse(sparsity=0.25)(mx.zeros((8, 6))))
    assert np.all((s == 0).sum(axis=0) == 2)  # ceil(0.25 * 8) in every column
    s = npy(nn.init.sparse(0.5, mean=1.0, std=0.0)(mx.zeros((5, 7))))
    assert np.all((s == 0).sum(axis=0) == 3)


@pytest.mark.parametrize("shape", [(4, 4), (6, 4), (3, 7)])
def test_orthogonal_initializer_gives_orthonormal_rows_or_columns(shape):
    q = npy(nn.init.orthogonal()(mx.zeros(shape)))
    assert q.shape == shape and q.dtype == np.float32
    rows, cols = shape
    # The smaller side is orthonormal: Q^T Q = I for tall matrices, Q Q^T = I for wide ones.
    gram = q.T @ q if rows >= cols else q @ q.T
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-5)


def test_orthogonal_initializer_scales_by_gain_and_casts_to_dtype():
    q = nn.init.orthogonal(gain=2.5, dtype=mx.float16)(mx.zeros((5, 5)))
    assert q.dtype == mx.float16
    q = npy(q.astype(mx.float32))
    np.testing.assert_allclose(q.T @ q, 2.5**2 * np.eye(5), atol=2e-2)


def test_orthogonal_initializer_draws_from_the_global_key():
    mx.random.seed(7)
    a = npy(nn.init.orthogonal()(mx.zeros((3, 3))))
    mx.random.seed(7)
    b = npy(nn.init.orthogonal()(mx.zeros((3, 3))))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, npy(nn.init.orthogonal()(mx.zeros((3, 3)))))


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
def test_orthogonal_initializer_rejects_inputs_that_are_not_2d(shape):
    # MLX's message names the number of dimensions.
    with pytest.raises(ValueError, match=f"{len(shape)}D array"):
        nn.init.orthogonal()(mx.zeros(shape))
