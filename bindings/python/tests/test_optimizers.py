# braid.optimizers: each optimizer's updates against a NumPy implementation of its formula,
# the schedules, clip_grad_norm, MultiOptimizer and an MLP trained with AdamW.
import math

import numpy as np
import pytest

import braid.core as mx
import braid.nn as nn
import braid.optimizers as optim
from braid.utils import tree_flatten, tree_map

STEPS = 3


def make_problem(seed):
    """A parameter tree and STEPS gradient trees (NumPy float32)."""
    rng = np.random.default_rng(seed)
    params = {"w": rng.standard_normal((3, 4)).astype(np.float32),
              "layers": [rng.standard_normal((5,)).astype(np.float32)]}
    grads = [tree_map(lambda p: rng.standard_normal(p.shape).astype(np.float32), params) for _ in range(STEPS)]
    return params, grads


def run_braid(optimizer, params, grads):
    current = tree_map(mx.array, params)
    for g in grads:
        current = optimizer.apply_gradients(tree_map(mx.array, g), current)
        mx.eval(current)
    return tree_map(np.array, current)


def run_numpy(update, params, grads):
    """``update(w, g, state, t)`` -> new w, with t counted from 1."""
    flat = [np.array(v, dtype=np.float64) for _, v in tree_flatten(params)]
    states = [{} for _ in flat]
    for t, g in enumerate(grads, start=1):
        flat_g = [np.array(v, dtype=np.float64) for _, v in tree_flatten(g)]
        flat = [update(w, gi, s, t) for w, gi, s in zip(flat, flat_g, states)]
    return flat


def check(optimizer, update, seed=0, atol=1e-5):
    params, grads = make_problem(seed)
    got = [v for _, v in tree_flatten(run_braid(optimizer, params, grads))]
    want = run_numpy(update, params, grads)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=atol, rtol=1e-4)


@pytest.mark.parametrize("momentum,weight_decay,dampening,nesterov", [
    (0.0, 0.0, 0.0, False), (0.9, 0.0, 0.0, False), (0.9, 0.1, 0.3, False), (0.8, 0.01, 0.0, True),
])
def test_sgd_matches_numpy(momentum, weight_decay, dampening, nesterov):
    lr = 0.1

    def update(w, g, s, t):
        g = g + weight_decay * w
        if momentum <= 0:
            return w - lr * g
        v = momentum * s.get("v", 0) + ((1 - dampening) if dampening > 0 else 1) * g
        s["v"] = v
        return w - lr * (g + momentum * v if nesterov else v)

    check(optim.SGD(lr, momentum=momentum, weight_decay=weight_decay, dampening=dampening, nesterov=nesterov), update)


def test_sgd_rejects_invalid_nesterov():
    with pytest.raises(ValueError):
        optim.SGD(0.1, nesterov=True)
    with pytest.raises(ValueError):
        optim.SGD(0.1, momentum=0.9, dampening=0.1, nesterov=True)


def test_rmsprop_matches_numpy():
    def update(w, g, s, t):
        s["v"] = 0.9 * s.get("v", 0) + 0.1 * g**2
        return w - 0.01 * g / (np.sqrt(s["v"]) + 1e-8)

    check(optim.RMSprop(learning_rate=0.01, alpha=0.9), update)
    with pytest.raises(ValueError):
        optim.RMSprop(0.1, alpha=-1)


def test_adagrad_matches_numpy():
    def update(w, g, s, t):
        s["v"] = s.get("v", 0) + g**2
        return w - 0.1 * g / (np.sqrt(s["v"]) + 1e-8)

    check(optim.Adagrad(0.1), update)


def test_adadelta_matches_numpy():
    rho, eps = 0.9, 1e-6

    def update(w, g, s, t):
        v = rho * s.get("v", 0) + (1 - rho) * g**2
        d = np.sqrt(s.get("u", 0) + eps) / np.sqrt(v + eps) * g
        s["u"] = rho * s.get("u", 0) + (1 - rho) * d**2
        s["v"] = v
        return w - 0.5 * d

    check(optim.AdaDelta(0.5), update)


def adam_update(lr, b1, b2, eps, bias_correction, weight_decay=0.0):
    def update(w, g, s, t):
        w = w * (1 - lr * weight_decay)
        s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0) + (1 - b2) * g**2
        m, v = s["m"], s["v"]
        if bias_correction:
            return w - (lr / (1 - b1**t)) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
        return w - lr * m / (np.sqrt(v) + eps)

    return update


@pytest.mark.parametrize("bias_correction", [False, True])
def test_adam_matches_numpy(bias_correction):
    check(optim.Adam(0.01, bias_correction=bias_correction), adam_update(0.01, 0.9, 0.999, 1e-8, bias_correction))
    check(optim.Adam(0.05, betas=[0.8, 0.99], eps=1e-6), adam_update(0.05, 0.8, 0.99, 1e-6, False))


def test_adam_keeps_half_parameters_half():
    params = {"w": mx.ones((3,), dtype=mx.float16)}
    grads = {"w": mx.full((3,), 0.5, dtype=mx.float16)}
    for bias_correction in (False, True):
        out = optim.Adam(1e-2, bias_correction=bias_correction).apply_gradients(grads, params)
        assert out["w"].dtype == mx.float16


def test_adamw_matches_numpy():
    check(optim.AdamW(0.01), adam_update(0.01, 0.9, 0.999, 1e-8, False, weight_decay=0.01))
    check(optim.AdamW(0.01, weight_decay=0.1, bias_correction=True),
          adam_update(0.01, 0.9, 0.999, 1e-8, True, weight_decay=0.1))


def test_adamax_matches_numpy():
    def update(w, g, s, t):
        s["m"] = 0.9 * s.get("m", 0) + 0.1 * g
        s["v"] = np.maximum(0.999 * s.get("v", 0), np.abs(g))
        return w - 0.02 * s["m"] / (s["v"] + 1e-8)

    check(optim.Adamax(0.02), update)
    with pytest.raises(ValueError):
        optim.Adamax(0.1, eps=-1)


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_lion_matches_numpy(weight_decay):
    lr = 0.01

    def update(w, g, s, t):
        m = s.get("m", 0)
        c = 0.9 * m + 0.1 * g
        s["m"] = 0.99 * m + 0.01 * g
        return w * (1 - lr * weight_decay) - lr * np.sign(c)

    check(optim.Lion(lr, weight_decay=weight_decay), update)


def adafactor_update(lr=None, eps=(1e-30, 1e-3), clip=1.0, decay=-0.8, beta_1=None, weight_decay=0.0,
                     scale_parameter=True, relative_step=True, warmup_init=False):
    def rms(x):
        return np.sqrt(np.mean(x**2))

    def update(w, g, s, t):
        if relative_step:
            step_size = min(1e-6 * t if warmup_init else 1e-2, 1 / np.sqrt(t))
        else:
            step_size = lr
        alpha = step_size * (max(eps[1], rms(w)) if scale_parameter else 1.0)
        beta_2 = 1 - t**decay
        u = g**2 + eps[0]
        if g.ndim >= 2:
            s["row"] = beta_2 * s.get("row", 0) + (1 - beta_2) * u.mean(-1)
            s["col"] = beta_2 * s.get("col", 0) + (1 - beta_2) * u.mean(-2)
            r = s["row"] / s["row"].mean(-1, keepdims=True)
            approx = np.outer(1 / np.sqrt(r), 1 / np.sqrt(s["col"]))
            u = approx * g
        else:
            s["sq"] = beta_2 * s.get("sq", 0) + (1 - beta_2) * u
            u = g / np.sqrt(s["sq"])
        u = u / max(1.0, rms(u) / clip)
        u = alpha * u
        if beta_1 is not None:
            s["avg"] = beta_1 * s.get("avg", 0) + (1 - beta_1) * u
            u = s["avg"]
        if weight_decay != 0:
            w = w - w * weight_decay * alpha
        return w - u

    return update


def test_adafactor_matches_numpy():
    check(optim.Adafactor(), adafactor_update(), atol=1e-5)
    check(optim.Adafactor(learning_rate=0.05, relative_step=False, beta_1=0.9, weight_decay=0.1),
          adafactor_update(lr=0.05, relative_step=False, beta_1=0.9, weight_decay=0.1), atol=1e-5)
    check(optim.Adafactor(warmup_init=True, scale_parameter=False, clip_threshold=0.5),
          adafactor_update(warmup_init=True, scale_parameter=False, clip=0.5), atol=1e-6)


def muon_update(lr, mu=0.95, wd=0.01, nesterov=True, steps=5):
    """One Muon step in float64: above one axis the update is orthogonalized as a
    ``[shape[0], -1]`` matrix and lr scaled by the parameter's own last two axes (MLX's rule)."""

    def orthogonalize(x):
        a, b, c = 3.4445, -4.7750, 2.0315
        tall = x.shape[0] > x.shape[1]
        if tall:
            x = x.T
        x = x / (np.linalg.norm(x) + 1e-7)
        for _ in range(steps):
            gram = x @ x.T
            x = a * x + (b * gram + c * gram @ gram) @ x
        return x.T if tall else x

    def update(w, g, s, t):
        g = g + wd * w
        s["v"] = mu * s.get("v", 0) + (1 - mu) * g
        u = g * (1 - mu) + s["v"] * mu if nesterov else s["v"]
        scale = lr
        if u.ndim >= 2:
            shape = u.shape
            u = orthogonalize(u.reshape(shape[0], -1)).reshape(shape)
            scale = lr * max(1, shape[-2] / shape[-1]) ** 0.5
        return w - scale * u

    return update


def test_muon_matches_numpy():
    check(optim.Muon(0.02), muon_update(0.02), atol=1e-4)
    check(optim.Muon(0.05, momentum=0.9, weight_decay=0.0, nesterov=False, ns_steps=3),
          muon_update(0.05, mu=0.9, wd=0.0, nesterov=False, steps=3), atol=1e-4)


@pytest.mark.parametrize("shape", [(3, 2), (2, 6, 2), (8, 1, 1, 2), (4, 3, 1, 5), ()])
def test_muon_flattens_parameters_above_two_axes_and_scales_by_their_last_two(shape):
    rng = np.random.default_rng(7)
    params = {"w": rng.standard_normal(shape).astype(np.float32)}
    grads = [{"w": rng.standard_normal(shape).astype(np.float32)} for _ in range(STEPS)]
    got = run_braid(optim.Muon(0.05), params, grads)["w"]
    want = run_numpy(muon_update(0.05), params, grads)[0]
    assert got.shape == shape
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)


def test_muon_agrees_with_the_cpp_optimizer():
    # Optimizers.MuonGivesThePythonModulesNumbers in tests/test_optimizers.cpp checks
    # braid::optimizers::Muon against the same numbers on the same problem.
    i = np.arange(12)
    w = mx.array(np.float32(0.5 - 0.1 * i).reshape(4, 3, 1))
    opt = optim.Muon(0.05, momentum=0.9, weight_decay=0.1, nesterov=True, ns_steps=5)
    for t in (1, 2):
        g = mx.array(np.float32(0.7 * np.sin(1.3 * i + t) + 0.1 * t - 0.05).reshape(4, 3, 1))
        w = opt.apply_gradients({"w": g}, {"w": w})["w"]
    want = [0.361359604, 0.363284262, 0.311751893, 0.212407722, 0.0866715304, -0.155399341,
            -0.172099802, -0.103136544, -0.282874375, -0.431190432, -0.605691017, -0.593170259]
    np.testing.assert_allclose(np.array(w).ravel(), want, atol=2e-5, rtol=0)


def test_optimizer_state_step_and_learning_rate():
    opt = optim.SGD(learning_rate=0.1, momentum=0.9)
    model = nn.Linear(2, 2)
    opt.init(model.trainable_parameters())
    assert set(opt.state.keys()) == {"step", "learning_rate", "weight", "bias"}
    assert opt.state["weight"]["v"].shape == (2, 2)
    assert opt.step.dtype == mx.uint64 and opt.step.item() == 0
    assert np.isclose(opt.learning_rate.item(), 0.1)
    opt.learning_rate = 0.5
    assert np.isclose(opt.learning_rate.item(), 0.5)

    grads = tree_map(mx.ones_like, model.trainable_parameters())
    w = np.array(model.weight)
    opt.update(model, grads)
    assert opt.step.item() == 1
    np.testing.assert_allclose(np.array(model.weight), w - 0.5, atol=1e-6)

    # Setting the state back (e.g. after loading) re-creates missing entries lazily.
    saved = opt.state
    fresh = optim.SGD(learning_rate=0.5, momentum=0.9)
    fresh.state = saved
    fresh.update(model, grads)
    assert fresh.step.item() == 2


def test_every_optimizer_keeps_shapes():
    params = {"first": [mx.zeros((10,)), mx.zeros((1,))], "second": mx.zeros((1,)), "m": mx.zeros((3, 4))}
    grads = tree_map(mx.ones_like, params)
    for cls in ALL_OPTIMIZERS:
        update = cls(0.1).apply_gradients(grads, params)
        mx.eval(update)
        shapes = tree_map(lambda x, y: x.shape == y.shape, params, update)
        assert all(v for _, v in tree_flatten(shapes)), cls.__name__


ALL_OPTIMIZERS = (optim.SGD, optim.RMSprop, optim.Adagrad, optim.AdaDelta, optim.Adam, optim.AdamW,
                  optim.Adamax, optim.Lion, optim.Adafactor, optim.Muon)


@pytest.mark.parametrize("cls", ALL_OPTIMIZERS, ids=lambda c: c.__name__)
def test_updates_keep_the_parameter_dtype(cls):
    params = {"w": mx.ones((5, 5), mx.float16), "b": mx.ones((5,), mx.bfloat16)}
    update = cls(0.1).apply_gradients(tree_map(mx.ones_like, params), params)
    assert update["w"].dtype == mx.float16 and update["b"].dtype == mx.bfloat16


@pytest.mark.parametrize("cls", ALL_OPTIMIZERS, ids=lambda c: c.__name__)
def test_a_lone_array_is_a_parameter_tree(cls):
    opt = cls(0.1)
    x = mx.zeros((4, 3))
    for _ in range(2):
        x = opt.apply_gradients(mx.ones_like(x), x)
    assert x.shape == (4, 3) and opt.state["step"].item() == 2


def test_update_accepts_plain_dicts_as_the_model():
    opt = optim.Adam(learning_rate=optim.linear_schedule(0.0, 1.0, 10))
    for _ in range(4):
        opt.update({}, {})
    assert np.isclose(opt.learning_rate.item(), 0.3)


def test_schedulers_match_numpy():
    steps = np.arange(0, 30)

    def values(schedule):
        return np.array([schedule(mx.array(int(s))).item() for s in steps])

    np.testing.assert_allclose(values(optim.exponential_decay(0.1, 0.9)), 0.1 * 0.9**steps, rtol=1e-5)
    np.testing.assert_allclose(values(optim.step_decay(0.1, 0.9, 10)), 0.1 * 0.9 ** (steps // 10), rtol=1e-5)
    cos = 1e-3 + 0.5 * (1 + np.cos(np.pi * np.minimum(steps, 20) / 20)) * (0.1 - 1e-3)
    np.testing.assert_allclose(values(optim.cosine_decay(0.1, 20, end=1e-3)), cos, rtol=1e-5, atol=1e-7)
    lin = np.minimum(steps, 10) * (0.1 - 0.0) / 10
    np.testing.assert_allclose(values(optim.linear_schedule(0, 0.1, 10)), lin, rtol=1e-5, atol=1e-7)
    joined = optim.join_schedules([optim.linear_schedule(0, 0.1, 10), optim.cosine_decay(0.1, 20)], [10])
    expected = np.where(steps < 10, lin, 0.5 * (1 + np.cos(np.pi * np.minimum(steps - 10, 20) / 20)) * 0.1)
    np.testing.assert_allclose(values(joined), expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError):
        optim.linear_schedule(0, 1, 0)
    with pytest.raises(ValueError):
        optim.join_schedules([], [])
    with pytest.raises(ValueError):
        optim.join_schedules([optim.exponential_decay(1, 0.5)], [3])


def test_scheduled_learning_rate_advances_with_the_steps():
    opt = optim.SGD(learning_rate=optim.exponential_decay(0.1, 0.5))
    assert np.isclose(opt.learning_rate.item(), 0.1)
    params = {"w": mx.zeros((2,))}
    grads = {"w": mx.ones((2,))}
    for _ in range(3):
        params = opt.apply_gradients(grads, params)
    # Steps 0, 1 and 2 used 0.1, 0.05 and 0.025.
    np.testing.assert_allclose(np.array(params["w"]), -0.175, rtol=1e-5)
    assert np.isclose(opt.learning_rate.item(), 0.025)


def test_clip_grad_norm_matches_numpy():
    grads = {"w1": mx.array([[1.0, 2.0], [3.0, 4.0]]), "w2": [mx.array([5.0])]}
    norm = math.sqrt(1 + 4 + 9 + 16 + 25)
    clipped, total = optim.clip_grad_norm(grads, max_norm=2.0)
    assert np.isclose(total.item(), norm)
    scale = 2.0 / (norm + 1e-6)
    np.testing.assert_allclose(np.array(clipped["w1"]), np.array([[1, 2], [3, 4]]) * scale, rtol=1e-5)
    np.testing.assert_allclose(np.array(clipped["w2"][0]), [5 * scale], rtol=1e-5)
    unclipped, _ = optim.clip_grad_norm(grads, max_norm=100.0)
    np.testing.assert_allclose(np.array(unclipped["w1"]), np.array(grads["w1"]))


def test_multi_optimizer_dispatches_by_path():
    params = {"w": mx.ones((2,)), "b": mx.ones((2,))}
    grads = {"w": mx.ones((2,)), "b": mx.ones((2,))}
    opt = optim.MultiOptimizer([optim.SGD(0.1), optim.SGD(1.0)], [lambda name, g: name == "b"])
    out = opt.apply_gradients(grads, params)
    np.testing.assert_allclose(np.array(out["b"]), 0.9, rtol=1e-6)
    np.testing.assert_allclose(np.array(out["w"]), 0.0, atol=1e-6)
    assert len(opt.state["states"]) == 2
    opt.learning_rate = 0.2
    assert np.isclose(opt.learning_rate.item(), 0.2)
    with pytest.raises(ValueError):
        optim.MultiOptimizer([optim.SGD(0.1)], [lambda n, g: True])
    with pytest.raises(ValueError):
        opt.state = {"states": []}


def test_mlp_trained_with_adamw_learns_a_nonlinear_boundary():
    mx.random.seed(7)
    rng = np.random.default_rng(7)
    x_np = rng.uniform(-1, 1, size=(512, 2)).astype(np.float32)
    # Two classes separated by a circle: not linearly separable.
    y_np = (np.sum(x_np**2, axis=1) < 0.5).astype(np.int32)
    x, y = mx.array(x_np), mx.array(y_np)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 32), nn.Linear(32, 32), nn.Linear(32, 2)]

        def __call__(self, x):
            for layer in self.layers[:-1]:
                x = nn.relu(layer(x))
            return self.layers[-1](x)

    model = MLP()
    optimizer = optim.AdamW(learning_rate=0.02)

    def loss_fn(x, y):
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    first_loss = None
    for step in range(150):
        batch = rng.choice(512, size=128, replace=False)
        loss, grads = loss_and_grad(x[mx.array(batch)], y[mx.array(batch)])
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        first_loss = first_loss if first_loss is not None else loss.item()

    accuracy = mx.mean(mx.argmax(model(x), axis=1) == y).item()
    assert accuracy >= 0.95, accuracy
    assert loss_fn(x, y).item() < first_loss / 3
