# Convolutions of braid.core (conv1d/2d/3d, conv_general, the transposed forms and convolve),
# checked against reference convolutions written here with NumPy.
import itertools

import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(11)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def as_list(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def ref_conv(x, w, stride=1, pad_lo=0, pad_hi=None, kdil=1, idil=1, groups=1, flip=False):
    """Correlation of x [N, *spatial, C_in] with w [C_out, *kernel, C_in / groups] (MLX's layouts)."""
    nd = x.ndim - 2
    stride, kdil, idil = as_list(stride, nd), as_list(kdil, nd), as_list(idil, nd)
    pad_lo = as_list(pad_lo, nd)
    pad_hi = pad_lo if pad_hi is None else as_list(pad_hi, nd)
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    if flip:
        w = w[(slice(None),) + (slice(None, None, -1),) * nd]
    # Input dilation: zeros between the input elements.
    shape = [x.shape[0]] + [(s - 1) * d + 1 for s, d in zip(x.shape[1:-1], idil)] + [x.shape[-1]]
    xd = np.zeros(shape)
    xd[(slice(None),) + tuple(slice(None, None, d) for d in idil) + (slice(None),)] = x
    # Padding; negative padding crops.
    for ax, (lo, hi) in enumerate(zip(pad_lo, pad_hi), start=1):
        widths = [(0, 0)] * xd.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, widths)
        n = xd.shape[ax]
        xd = np.take(xd, np.arange(max(-lo, 0), n - max(-hi, 0)), axis=ax)
    kernel = w.shape[1:-1]
    out_sp = [(xd.shape[1 + i] - kdil[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    c_out, cg = w.shape[0], w.shape[-1]
    og = c_out // groups
    out = np.zeros([x.shape[0]] + out_sp + [c_out])
    for k in itertools.product(*[range(n) for n in kernel]):
        window = xd[(slice(None),) + tuple(
            slice(k[i] * kdil[i], k[i] * kdil[i] + (out_sp[i] - 1) * stride[i] + 1, stride[i]) for i in range(nd)
        ) + (slice(None),)]
        for g in range(groups):
            xs = window[..., g * cg:(g + 1) * cg]
            ws = w[(slice(g * og, (g + 1) * og),) + k + (slice(None),)]
            out[..., g * og:(g + 1) * og] += np.tensordot(xs, ws, axes=([-1], [-1]))
    return out.astype(np.float32)


def ref_conv_transpose(x, w, stride=1, padding=0, dilation=1, output_padding=0, groups=1):
    """Scatter form: y[i * stride + j * dilation - padding] += x[i] * w[j] per channel group."""
    nd = x.ndim - 2
    stride, padding = as_list(stride, nd), as_list(padding, nd)
    dilation, output_padding = as_list(dilation, nd), as_list(output_padding, nd)
    kernel = w.shape[1:-1]
    spatial = x.shape[1:-1]
    full = [(spatial[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 + output_padding[i] for i in range(nd)]
    c_out, cg = w.shape[0], w.shape[-1]
    og = c_out // groups
    buf = np.zeros([x.shape[0]] + full + [c_out])
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for i in itertools.product(*[range(n) for n in spatial]):
        for j in itertools.product(*[range(n) for n in kernel]):
            pos = tuple(i[d] * stride[d] + j[d] * dilation[d] for d in range(nd))
            for g in range(groups):
                xs = x64[(slice(None),) + i + (slice(g * cg, (g + 1) * cg),)]
                ws = w64[(slice(g * og, (g + 1) * og),) + j + (slice(None),)]
                buf[(slice(None),) + pos + (slice(g * og, (g + 1) * og),)] += xs @ ws.T
    out_len = [(spatial[d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel[d] - 1) + 1 + output_padding[d]
               for d in range(nd)]
    crop = tuple(slice(padding[d], padding[d] + out_len[d]) for d in range(nd))
    return buf[(slice(None),) + crop + (slice(None),)].astype(np.float32)


def close(out, expected, tol=1e-4):
    out_np = np.array(out)
    assert out_np.shape == expected.shape
    np.testing.assert_allclose(out_np, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1), (3, 0, 1, 2), (1, 1, 1, 4)],
)
def test_conv1d(stride, padding, dilation, groups):
    x, w = randn(2, 11, 4), randn(6 if groups != 4 else 8, 3, 4 // groups)
    out = mx.conv1d(mx.array(x), mx.array(w), stride, padding, dilation, groups)
    close(out, ref_conv(x, w, stride, padding, kdil=dilation, groups=groups))
    out = mx.conv1d(mx.array(x), mx.array(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    close(out, ref_conv(x, w, stride, padding, kdil=dilation, groups=groups))


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [(1, 0, 1, 1), ((2, 1), (1, 0), 1, 1), (1, (2, 1), (2, 1), 1), (2, 1, 1, 2)],
)
def test_conv2d(stride, padding, dilation, groups):
    x, w = randn(2, 8, 7, 4), randn(6, 3, 2, 4 // groups)
    out = mx.conv2d(mx.array(x), mx.array(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    close(out, ref_conv(x, w, stride, padding, kdil=dilation, groups=groups))


def test_conv3d():
    x, w = randn(1, 5, 6, 4, 3), randn(2, 2, 3, 2, 3)
    close(mx.conv3d(mx.array(x), mx.array(w)), ref_conv(x, w))
    out = mx.conv3d(mx.array(x), mx.array(w), stride=(1, 2, 1), padding=1, dilation=(2, 1, 1))
    close(out, ref_conv(x, w, (1, 2, 1), 1, kdil=(2, 1, 1)))


def test_conv_general_padding_dilations_and_flip():
    x, w = randn(2, 7, 6, 3), randn(4, 3, 2, 3)
    close(mx.conv_general(mx.array(x), mx.array(w)), ref_conv(x, w))
    out = mx.conv_general(mx.array(x), mx.array(w), stride=[2, 1], padding=([1, 0], [2, 3]), kernel_dilation=[1, 2],
                          input_dilation=2, flip=True)
    close(out, ref_conv(x, w, (2, 1), (1, 0), (2, 3), kdil=(1, 2), idil=2, flip=True))
    out = mx.conv_general(mx.array(x), mx.array(w), 1, [1, 2], 1, [2, 1])
    close(out, ref_conv(x, w, 1, (1, 2), idil=(2, 1)))
    x1, w1 = randn(1, 9, 4), randn(2, 3, 2)
    out = mx.conv_general(mx.array(x1), mx.array(w1), groups=2, padding=([-1], [2]))
    close(out, ref_conv(x1, w1, 1, -1, 2, groups=2))


@pytest.mark.parametrize(
    "stride, padding, dilation, output_padding, groups",
    [(1, 0, 1, 0, 1), (2, 1, 1, 1, 1), (3, 2, 2, 0, 1), (2, 0, 1, 0, 2)],
)
def test_conv_transpose1d(stride, padding, dilation, output_padding, groups):
    x, w = randn(2, 5, 4), randn(6, 3, 4 // groups)
    out = mx.conv_transpose1d(mx.array(x), mx.array(w), stride, padding, dilation, output_padding, groups)
    close(out, ref_conv_transpose(x, w, stride, padding, dilation, output_padding, groups))


def test_conv_transpose2d_and_3d():
    x, w = randn(1, 4, 3, 2), randn(3, 3, 2, 2)
    close(mx.conv_transpose2d(mx.array(x), mx.array(w)), ref_conv_transpose(x, w))
    out = mx.conv_transpose2d(mx.array(x), mx.array(w), stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                              output_padding=(1, 0))
    close(out, ref_conv_transpose(x, w, (2, 1), (1, 0), (1, 2), (1, 0)))
    x3, w3 = randn(1, 3, 2, 3, 2), randn(2, 2, 2, 2, 2)
    out = mx.conv_transpose3d(mx.array(x3), mx.array(w3), stride=2, padding=(0, 1, 0), output_padding=(1, 0, 0))
    close(out, ref_conv_transpose(x3, w3, 2, (0, 1, 0), 1, (1, 0, 0)))


def test_conv_dtype_and_errors():
    x, w = randn(1, 8, 4), randn(2, 3, 4)
    out = mx.conv1d(mx.array(x.astype(np.float16)), mx.array(w.astype(np.float16)))
    assert out.dtype == mx.float16
    close(out, ref_conv(x.astype(np.float16), w.astype(np.float16)), tol=2e-2)
    with pytest.raises(ValueError):
        mx.conv1d(mx.array(x), mx.array(randn(2, 3, 3)))
    with pytest.raises(TypeError):
        mx.conv2d(mx.array(randn(1, 4, 4, 1)), mx.array(randn(1, 2, 2, 1)), stride=(1, 1, 1))
    with pytest.raises(TypeError):
        mx.conv1d(input=mx.array(x), weight=mx.array(w))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, k", [(10, 3), (9, 4), (4, 7), (5, 5), (1, 1)])
def test_convolve_matches_numpy(mode, n, k):
    a, v = randn(n), randn(k)
    close(mx.convolve(mx.array(a), mx.array(v), mode), np.convolve(a, v, mode))


def test_convolve_rejects_bad_input():
    with pytest.raises(ValueError):
        mx.convolve(mx.array(randn(2, 3)), mx.array(randn(3)))
    with pytest.raises(ValueError):
        mx.convolve(mx.array(randn(3)), mx.array(randn(3)), mode="middle")
