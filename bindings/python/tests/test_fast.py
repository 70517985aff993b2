# braid.core.fast (rms_norm, layer_norm, rope, scaled_dot_product_attention), checked against
# the NumPy formulas.
import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(13)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(out, expected, tol=1e-5):
    out_np = np.array(out.astype(mx.float32))
    assert out_np.shape == expected.shape
    np.testing.assert_allclose(out_np, expected, rtol=tol, atol=tol)


def test_rms_norm_with_and_without_weight():
    x, w = randn(2, 3, 16), randn(16)
    eps = 1e-5
    norm = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    close(mx.fast.rms_norm(mx.array(x), mx.array(w), eps), norm * w)
    close(mx.fast.rms_norm(mx.array(x), None, eps), norm)
    close(mx.fast.rms_norm(x=mx.array(x), weight=mx.array(w), eps=eps, stream=mx.cpu), norm * w)
    out = mx.fast.rms_norm(mx.array(x.astype(np.float16)), mx.array(w.astype(np.float16)), eps)
    assert out.dtype == mx.float16
    close(out, norm * w, tol=1e-2)
    with pytest.raises(ValueError):
        mx.fast.rms_norm(mx.array(x), mx.array(randn(8)), eps)
    with pytest.raises(TypeError):
        mx.fast.rms_norm(mx.array(x), mx.array(w), eps, mx.cpu)


def test_fused_rms_silu_is_silu_of_the_norm():
    x, w = randn(2, 31), randn(31)
    eps = 1e-3
    h = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    silu = lambda v: v / (1 + np.exp(-v))
    close(mx.fast.fused_rms_silu(mx.array(x), mx.array(w), eps), silu(h * w))
    close(mx.fast.fused_rms_silu(mx.array(x), None, eps), silu(h))
    with pytest.raises(ValueError):
        mx.fast.fused_rms_silu(mx.array(x), mx.array(randn(8)), eps)


def test_layer_norm_weight_and_bias_optional():
    x, w, b = randn(4, 32), randn(32), randn(32)
    eps = 1e-5
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    norm = (x - mean) / np.sqrt(var + eps)
    close(mx.fast.layer_norm(mx.array(x), mx.array(w), mx.array(b), eps), norm * w + b, tol=1e-4)
    close(mx.fast.layer_norm(mx.array(x), None, None, eps), norm, tol=1e-4)
    close(mx.fast.layer_norm(mx.array(x), mx.array(w), None, eps), norm * w, tol=1e-4)
    close(mx.fast.layer_norm(mx.array(x), None, mx.array(b), eps=eps), norm + b, tol=1e-4)


def rope_ref(x, dims, traditional, base, scale, offset, freqs=None):
    T = x.shape[-2]
    offsets = np.asarray(offset, np.float32).reshape(-1)
    # Positions per batch entry: [B or 1, T].
    pos = (offsets[:, None] + np.arange(T, dtype=np.float32)[None, :]) * scale
    if freqs is None:
        inv = base ** (-np.arange(0, dims, 2, dtype=np.float32) / dims)
    else:
        inv = 1.0 / np.asarray(freqs, np.float32)
    theta = pos[..., None] * inv  # [B or 1, T, dims / 2]
    shape = (theta.shape[0],) + (1,) * (x.ndim - 3) + theta.shape[1:]
    cos, sin = np.cos(theta).reshape(shape), np.sin(theta).reshape(shape)
    out = x.copy()
    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2] = x1 * cos - x2 * sin
        out[..., 1:dims:2] = x1 * sin + x2 * cos
    else:
        half = dims // 2
        x1, x2 = x[..., :half], x[..., half:dims]
        out[..., :half] = x1 * cos - x2 * sin
        out[..., half:dims] = x1 * sin + x2 * cos
    return out


@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize("dims", [8, 6])
def test_rope_base_scale_and_int_offset(traditional, dims):
    x = randn(2, 3, 5, 8)
    out = mx.fast.rope(mx.array(x), dims, traditional=traditional, base=10000.0, scale=0.5, offset=3)
    close(out, rope_ref(x, dims, traditional, 10000.0, 0.5, 3), tol=1e-4)


def test_rope_array_offsets_and_freqs():
    x = randn(2, 4, 8)
    out = mx.fast.rope(mx.array(x), 8, traditional=False, base=500.0, scale=1.0, offset=mx.array(2))
    close(out, rope_ref(x, 8, False, 500.0, 1.0, 2), tol=1e-4)
    offsets = np.array([1, 7], np.int32)
    out = mx.fast.rope(mx.array(x), 8, traditional=True, base=500.0, scale=1.0, offset=mx.array(offsets))
    close(out, rope_ref(x, 8, True, 500.0, 1.0, offsets), tol=1e-4)
    freqs = np.array([1.0, 3.0, 9.0, 27.0], np.float32)
    out = mx.fast.rope(mx.array(x), 8, traditional=False, base=None, scale=1.0, offset=0, freqs=mx.array(freqs))
    close(out, rope_ref(x, 8, False, None, 1.0, 0, freqs), tol=1e-4)
    with pytest.raises(ValueError):
        mx.fast.rope(mx.array(x), 8, traditional=False, base=2.0, scale=1.0, offset=0, freqs=mx.array(freqs))
    with pytest.raises(TypeError):
        mx.fast.rope(mx.array(x), 8, False, 500.0, 1.0, 0)


@pytest.mark.parametrize("dtype", [mx.bfloat16, mx.float16])
@pytest.mark.parametrize("traditional", [False, True])
def test_rope_half_precision_rounds_once(dtype, traditional):
    # Computed in float32 and rounded to the input's dtype once, as MLX's kernels: the result
    # is the float32 rotation of the same values, rounded (rounding cos, sin and each product
    # to the input's dtype would add several roundings).
    x = mx.array(randn(2, 4, 64, 32)).astype(dtype)
    out = mx.fast.rope(x, 32, traditional=traditional, base=10000.0, scale=1.0, offset=5)
    assert out.dtype == dtype
    wide = mx.fast.rope(x.astype(mx.float32), 32, traditional=traditional, base=10000.0, scale=1.0, offset=5)
    assert mx.array_equal(out, wide.astype(dtype)).item()
    close(wide, rope_ref(np.array(x.astype(mx.float32)), 32, traditional, 10000.0, 1.0, 5), tol=1e-4)


def test_sdpa_fully_masked_rows_give_nan():
    # MLX's newest rule (its test_fully_masked): a key a bool mask hides scores -inf, so a query
    # that may see no key gives NaN, as a row under an additive -inf mask does; the other rows
    # are untouched.
    q, k, v = randn(1, 2, 3, 8), randn(1, 2, 5, 8), randn(1, 2, 5, 8)
    args = (mx.array(q), mx.array(k), mx.array(v))
    for mask in (mx.array(False), mx.array(-np.inf)):
        out = mx.fast.scaled_dot_product_attention(*args, scale=1.0, mask=mask)
        assert np.isnan(np.array(out)).all()
    rows = np.ones((3, 5), bool)
    rows[1] = False
    out = np.array(mx.fast.scaled_dot_product_attention(*args, scale=1.0, mask=mx.array(rows)))
    assert np.isnan(out[:, :, 1]).all()
    np.testing.assert_allclose(out[:, :, [0, 2]], sdpa_ref(q, k, v, 1.0)[:, :, [0, 2]], rtol=1e-4, atol=1e-4)
    # Causal with more queries than keys: query i sits at position i, so none is fully masked.
    q8 = randn(1, 2, 8, 8)
    out = np.array(mx.fast.scaled_dot_product_attention(mx.array(q8), args[1], args[2], scale=1.0, mask="causal"))
    assert np.isfinite(out).all()


def sdpa_ref(q, k, v, scale, mask=None, sinks=None):
    n_q, n_kv = q.shape[1], k.shape[1]
    k = np.repeat(k, n_q // n_kv, axis=1)
    v = np.repeat(v, n_q // n_kv, axis=1)
    scores = scale * (q @ np.swapaxes(k, -1, -2))
    if isinstance(mask, str):
        Lq, Lk = q.shape[2], k.shape[2]
        allowed = np.arange(Lk)[None, :] <= np.arange(Lq)[:, None] + (Lk - Lq)
        scores = np.where(allowed, scores, -np.inf)
    elif mask is not None and mask.dtype == np.bool_:
        scores = np.where(mask, scores, -np.inf)
    elif mask is not None:
        scores = scores + mask
    if sinks is not None:
        sink = np.broadcast_to(sinks.reshape(1, -1, 1, 1), scores.shape[:-1] + (1,))
        scores = np.concatenate([scores, sink], axis=-1)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p = p / p.sum(axis=-1, keepdims=True)
    if sinks is not None:
        p = p[..., :-1]
    return (p @ v).astype(np.float32)


@pytest.mark.parametrize("n_q, n_kv", [(4, 4), (4, 2), (4, 1)])
def test_sdpa_heads_and_grouped_queries(n_q, n_kv):
    q, k, v = randn(2, n_q, 5, 8), randn(2, n_kv, 7, 8), randn(2, n_kv, 7, 6)
    scale = 8 ** -0.5
    out = mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v), scale=scale)
    close(out, sdpa_ref(q, k, v, scale), tol=1e-4)


def test_sdpa_masks_and_sinks():
    q, k, v = randn(1, 2, 4, 8), randn(1, 2, 6, 8), randn(1, 2, 6, 8)
    scale = 0.3
    args = (mx.array(q), mx.array(k), mx.array(v))
    close(mx.fast.scaled_dot_product_attention(*args, scale=scale, mask="causal"), sdpa_ref(q, k, v, scale, "causal"),
          tol=1e-4)
    bool_mask = rng.random((4, 6)) > 0.3
    bool_mask[:, 0] = True
    close(mx.fast.scaled_dot_product_attention(*args, scale=scale, mask=mx.array(bool_mask)),
          sdpa_ref(q, k, v, scale, bool_mask), tol=1e-4)
    add_mask = randn(1, 2, 4, 6)
    close(mx.fast.scaled_dot_product_attention(*args, scale=scale, mask=mx.array(add_mask)),
          sdpa_ref(q, k, v, scale, add_mask), tol=1e-4)
    sinks = randn(2)
    close(mx.fast.scaled_dot_product_attention(*args, scale=scale, mask=None, sinks=mx.array(sinks)),
          sdpa_ref(q, k, v, scale, None, sinks), tol=1e-4)
    close(mx.fast.scaled_dot_product_attention(*args, scale=scale, mask="causal", sinks=mx.array(sinks)),
          sdpa_ref(q, k, v, scale, "causal", sinks), tol=1e-4)


def test_sdpa_argument_errors():
    q = mx.array(randn(1, 1, 2, 4))
    with pytest.raises(ValueError):
        mx.fast.scaled_dot_product_attention(q, q, q, scale=1.0, mask="future")
    with pytest.raises(TypeError):
        mx.fast.scaled_dot_product_attention(q, q, q, 1.0)
    with pytest.raises(ValueError):
        mx.fast.scaled_dot_product_attention(q, mx.array(randn(1, 1, 2, 3)), q, scale=1.0)
