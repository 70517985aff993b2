# Quantization ops of braid.core: quantize/dequantize round trips within the error each format
# allows, the quantized products against products of the dequantized weights (NumPy), their
# derivatives with respect to affine scales and biases, and the float8 conversions.
import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(5)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def f32(a):
    return np.array(a.astype(mx.float32))


@pytest.mark.parametrize("bits", [1, 2, 3, 4, 5, 6, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
def test_affine_round_trip_within_one_step(bits, group_size):
    w = randn(8, 256)
    w_q, scales, biases = mx.quantize(mx.array(w), group_size, bits)
    assert w_q.dtype == mx.uint32 and w_q.shape == (8, 256 * bits // 32)
    assert scales.shape == biases.shape == (8, 256 // group_size)
    assert scales.dtype == mx.float32
    out = mx.dequantize(w_q, scales, biases, group_size, bits)
    assert out.dtype == mx.float32
    # The grid has one step of `scale` per code; aligning it so that zero is exact can put a
    # group's edge up to one step away.
    err = np.abs(np.array(out) - w).reshape(8, -1, group_size).max(axis=-1)
    assert np.all(err <= np.abs(np.array(scales)) * 1.001 + 1e-6)
    # The codes cover the group: the error is far below the group's range.
    assert err.max() < (w.max() - w.min())


def test_one_bit_reads_back_each_groups_extremes():
    rng_bits = np.random.default_rng(5).random((16, 256)) > 0.5
    for lo, hi in ((-0.5, 0.5), (0.1, 0.9)):
        w = np.where(rng_bits, hi, lo).astype(np.float32)
        for gs in (32, 64, 128):
            w_q, scales, biases = mx.quantize(mx.array(w), group_size=gs, bits=1)
            np.testing.assert_allclose(np.array(scales), hi - lo, rtol=1e-6)
            np.testing.assert_allclose(np.array(biases), lo, rtol=1e-6)
            np.testing.assert_allclose(np.array(mx.dequantize(w_q, scales, biases, gs, 1)), w, atol=1e-6)
            x = randn(4, 256)
            y = mx.quantized_matmul(mx.array(x), w_q, scales, biases, True, gs, 1)
            np.testing.assert_allclose(np.array(y), x @ w.T, rtol=1e-4, atol=1e-4)
    w_q, scales, biases = mx.quantize(mx.zeros((8, 128)), 64, 1)
    assert np.all(np.array(mx.dequantize(w_q, scales, biases, 64, 1)) == 0)


def test_quantize_defaults_and_keywords():
    w = randn(4, 128)
    parts = mx.quantize(mx.array(w))
    assert isinstance(parts, tuple) and len(parts) == 3
    assert parts[0].shape == (4, 128 * 4 // 32) and parts[1].shape == (4, 128 // 64)
    keyed = mx.quantize(mx.array(w), group_size=64, bits=4, mode="affine")
    for a, b in zip(parts, keyed):
        np.testing.assert_array_equal(np.array(a), np.array(b))
    out = mx.dequantize(parts[0], scales=parts[1], biases=parts[2])
    np.testing.assert_allclose(np.array(out), np.array(mx.dequantize(*parts, 64, 4)))
    assert mx.dequantize(*parts, dtype=mx.float16).dtype == mx.float16
    half = mx.quantize(mx.array(w.astype(np.float16)))
    assert half[1].dtype == mx.float16
    assert mx.dequantize(*half).dtype == mx.float16


def test_quantize_rejects_bad_arguments():
    with pytest.raises(ValueError):
        mx.quantize(mx.array(randn(4, 100)))
    with pytest.raises(ValueError):
        mx.quantize(mx.array(randn(128)))
    with pytest.raises(ValueError):
        mx.quantize(mx.array(randn(4, 128)), bits=7)
    with pytest.raises(ValueError):
        mx.quantize(mx.array(randn(4, 128)), group_size=48)


# Largest error relative to the group's largest magnitude: E2M1 codes (0.5 .. 6) step by up to a
# third of the top code, E4M3 codes by an eighth (plus saturation at the format's maximum).
@pytest.mark.parametrize("mode, group, bound", [("mxfp4", 32, 0.25), ("nvfp4", 16, 0.25), ("mxfp8", 32, 0.125)])
def test_fp_modes_round_trip(mode, group, bound):
    w = randn(8, 128)
    parts = mx.quantize(mx.array(w), mode=mode)
    assert len(parts) == 2
    w_q, scales = parts
    assert w_q.dtype == mx.uint32 and scales.dtype == mx.uint8
    assert scales.shape == (8, 128 // group)
    out = mx.dequantize(w_q, scales, mode=mode)
    assert out.dtype == mx.bfloat16
    err = np.abs(f32(out) - w).reshape(8, -1, group).max(axis=-1)
    top = np.abs(w).reshape(8, -1, group).max(axis=-1)
    assert np.all(err <= bound * top + 1e-6)
    out = mx.dequantize(w_q, scales, None, None, None, mode, None, mx.float32)
    assert out.dtype == mx.float32


def test_nvfp4_global_scale():
    w = randn(4, 64) * 50
    gs = mx.array(np.array([np.abs(w).max()], np.float32))
    w_q, scales = mx.quantize(mx.array(w), mode="nvfp4", global_scale=gs)
    out = mx.dequantize(w_q, scales, mode="nvfp4", global_scale=gs, dtype=mx.float32)
    err = np.abs(np.array(out) - w).reshape(4, -1, 16).max(axis=-1)
    top = np.abs(w).reshape(4, -1, 16).max(axis=-1)
    assert np.all(err <= 0.25 * top + 1e-5)


@pytest.mark.parametrize("shape_x", [(1, 128), (5, 128), (2, 3, 128)])
def test_quantized_matmul_equals_dequantized_product(shape_x):
    x, w = randn(*shape_x), randn(48, 128)
    w_q, scales, biases = mx.quantize(mx.array(w))
    w_dq = np.array(mx.dequantize(w_q, scales, biases))
    out = mx.quantized_matmul(mx.array(x), w_q, scales, biases)
    np.testing.assert_allclose(np.array(out), x @ w_dq.T, rtol=1e-4, atol=1e-4)
    out = mx.quantized_matmul(mx.array(x), w_q, scales=scales, biases=biases, transpose=True, group_size=64, bits=4)
    np.testing.assert_allclose(np.array(out), x @ w_dq.T, rtol=1e-4, atol=1e-4)


def test_quantized_matmul_without_transpose_and_other_bits():
    x, w = randn(3, 64), randn(64, 96)
    w_q, scales, biases = mx.quantize(mx.array(w), 32, 8)
    w_dq = np.array(mx.dequantize(w_q, scales, biases, 32, 8))
    out = mx.quantized_matmul(mx.array(x), w_q, scales, biases, False, 32, 8)
    np.testing.assert_allclose(np.array(out), x @ w_dq, rtol=1e-4, atol=1e-4)
    w_q, scales = mx.quantize(mx.array(randn(32, 64)), mode="mxfp4")
    w_dq = f32(mx.dequantize(w_q, scales, mode="mxfp4"))
    out = mx.quantized_matmul(mx.array(x), w_q, scales, mode="mxfp4")
    np.testing.assert_allclose(np.array(out), x @ w_dq.T, rtol=1e-3, atol=1e-3)


def test_gather_qmm_indexes_quantized_batches():
    x, w = randn(3, 2, 64), randn(4, 16, 64)
    w_q, scales, biases = mx.quantize(mx.array(w))
    w_dq = np.array(mx.dequantize(w_q, scales, biases))
    lhs = np.array([2, 0, 1, 1], np.uint32)
    rhs = np.array([3, 3, 0, 2], np.uint32)
    out = mx.gather_qmm(mx.array(x), w_q, scales, biases, mx.array(lhs), mx.array(rhs))
    ref = x[lhs] @ np.swapaxes(w_dq[rhs], -1, -2)
    np.testing.assert_allclose(np.array(out), ref, rtol=1e-4, atol=1e-4)
    out = mx.gather_qmm(mx.array(x[0]), w_q, scales, biases, rhs_indices=mx.array(rhs), sorted_indices=False)
    np.testing.assert_allclose(np.array(out), x[0] @ np.swapaxes(w_dq[rhs], -1, -2), rtol=1e-4, atol=1e-4)


def group_sums(a, group):
    return a.reshape(*a.shape[:-1], -1, group).sum(axis=-1)


@pytest.mark.parametrize("rows", [2, 24])
def test_quantized_matmul_differentiates_affine_scales_and_biases(rows):
    # out = x @ W^T with W = scales * q + biases per group: dW = c^T x, and each group's
    # scale gets sum(dW * q), its bias sum(dW). Two rows read the packed weights, 24 the
    # dequantized ones.
    x, c = randn(rows, 128), randn(rows, 16)
    w_q, scales, biases = mx.quantize(mx.array(randn(16, 128)), 32, 4)
    q = np.array(mx.dequantize(w_q, mx.ones_like(scales), mx.zeros_like(biases), 32, 4))
    (_,), (ds, db) = mx.vjp(
        lambda s, b: [mx.quantized_matmul(mx.array(x), w_q, s, b, group_size=32, bits=4)],
        [scales, biases],
        [mx.array(c)],
    )
    dw = c.T @ x
    np.testing.assert_allclose(np.array(ds), group_sums(dw * q, 32), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(np.array(db), group_sums(dw, 32), rtol=1e-4, atol=1e-3)
    # The product is linear in the scales and biases: its tangent is the product of their tangents.
    ts, tb = randn(*scales.shape), randn(*biases.shape)
    _, (t,) = mx.jvp(
        lambda s, b: [mx.quantized_matmul(mx.array(x), w_q, s, b, group_size=32, bits=4)],
        [scales, biases],
        [mx.array(ts), mx.array(tb)],
    )
    tw = np.repeat(ts, 32, axis=-1) * q + np.repeat(tb, 32, axis=-1)
    np.testing.assert_allclose(np.array(t), x @ tw.T, rtol=1e-4, atol=1e-3)


def test_dequantize_differentiates_affine_scales_and_biases():
    w_q, scales, biases = mx.quantize(mx.array(randn(4, 64)), 32, 8)
    q = np.array(mx.dequantize(w_q, mx.ones_like(scales), mx.zeros_like(biases), 32, 8))
    c = randn(4, 64)
    (_,), (ds, db) = mx.vjp(lambda s, b: [mx.dequantize(w_q, s, b, 32, 8)], [scales, biases], [mx.array(c)])
    np.testing.assert_allclose(np.array(ds), group_sums(c * q, 32), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.array(db), group_sums(c, 32), rtol=1e-5, atol=1e-5)


def test_gather_qmm_scale_gradients_sum_over_the_selected_experts():
    x = mx.array(randn(6, 1, 64))
    w_q, scales, biases = mx.quantize(mx.array(randn(3, 16, 64)), 32, 4)
    rhs = mx.array(np.array([0, 0, 0, 2, 2, 2], np.uint32))
    cot = [mx.array(randn(6, 1, 16))]

    def reference(s, b):
        w = mx.dequantize(w_q, s, b, 32, 4)[rhs]
        return [x @ mx.swapaxes(w, -1, -2)]

    def gathered(s, b):
        return [mx.gather_qmm(x, w_q, s, b, rhs_indices=rhs, group_size=32, bits=4, sorted_indices=True)]

    (_,), (ds_ref, db_ref) = mx.vjp(reference, [scales, biases], cot)
    (_,), (ds, db) = mx.vjp(gathered, [scales, biases], cot)
    np.testing.assert_allclose(np.array(ds), np.array(ds_ref), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.array(db), np.array(db_ref), rtol=1e-4, atol=1e-4)
    # Expert 1 is never selected.
    assert not np.any(np.array(ds)[1]) and not np.any(np.array(db)[1])


def test_quantized_products_have_no_gradient_wrt_packed_weights_or_fp_scales():
    x = mx.array(randn(2, 64))
    w_q, scales, biases = mx.quantize(mx.array(randn(8, 64)))
    with pytest.raises(RuntimeError, match="quantized weights"):
        mx.grad(lambda w: mx.quantized_matmul(x, w, scales, biases).sum())(w_q)
    w_q, scales = mx.quantize(mx.array(randn(8, 64)), mode="mxfp4")
    with pytest.raises(ValueError, match="mxfp4"):
        mx.grad(lambda s: mx.quantized_matmul(x, w_q, s, mode="mxfp4").sum())(scales)


def test_qqmm_multiplies_quantized_operands():
    x, w = randn(4, 64), randn(8, 64)
    x_dq = f32(mx.dequantize(*mx.quantize(mx.array(x), mode="nvfp4"), mode="nvfp4"))
    w_dq = f32(mx.dequantize(*mx.quantize(mx.array(w), mode="nvfp4"), mode="nvfp4"))
    out = mx.qqmm(mx.array(x), mx.array(w))
    assert out.dtype == mx.float32
    np.testing.assert_allclose(np.array(out), x_dq @ w_dq.T, rtol=2e-2, atol=2e-2)
    w_q, scales = mx.quantize(mx.array(w), mode="nvfp4")
    out_q = mx.qqmm(mx.array(x), w_q, scales)
    np.testing.assert_allclose(np.array(out_q), np.array(out), rtol=1e-5, atol=1e-5)


def test_fp8_conversions():
    exact = np.array([0.0, 0.5, 1.0, -2.0, 448.0, -448.0, 0.015625, 3.5], np.float32)
    codes = mx.to_fp8(mx.array(exact))
    assert codes.dtype == mx.uint8
    back = mx.from_fp8(codes)
    assert back.dtype == mx.bfloat16
    np.testing.assert_array_equal(f32(back), exact)
    np.testing.assert_array_equal(np.array(mx.from_fp8(codes, dtype=mx.float32)), exact)
    # Magnitudes past the format's largest value saturate.
    np.testing.assert_array_equal(np.array(mx.from_fp8(mx.to_fp8(mx.array([1000.0, -1e9])), mx.float32)),
                                  np.array([448.0, -448.0], np.float32))
