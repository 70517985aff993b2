# braid.core.fft against numpy.fft: the one-, two- and n-dimensional transforms with sizes and
# axes, the real transforms, the shifts, the errors, gradients and vmap.
import itertools

import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(17)


def crandn(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(out, expected, tol=1e-4):
    out_np = np.array(out)
    assert out_np.shape == expected.shape
    scale = max(1.0, float(np.sqrt(np.mean(np.abs(expected) ** 2)))) if expected.size else 1.0
    np.testing.assert_allclose(out_np, expected, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 16, 97, 100, 1009, 4096])
def test_one_dimensional_transforms_match_numpy(n):
    a = crandn(3, n)
    r = randn(3, n)
    close(mx.fft.fft(mx.array(a)), np.fft.fft(a))
    close(mx.fft.ifft(mx.array(a)), np.fft.ifft(a))
    close(mx.fft.rfft(mx.array(r)), np.fft.rfft(r))
    h = np.fft.rfft(r)
    close(mx.fft.irfft(mx.array(h), n=n), np.fft.irfft(h, n=n))
    assert mx.fft.fft(mx.array(a)).dtype == mx.complex64
    assert mx.fft.irfft(mx.array(h), n=n).dtype == mx.float32


def test_sizes_and_axes_keywords():
    a = crandn(10, 12)
    for n in [5, 12, 20]:
        close(mx.fft.fft(mx.array(a), n=n), np.fft.fft(a, n=n))
        close(mx.fft.ifft(mx.array(a), n=n, axis=0), np.fft.ifft(a, n=n, axis=0))
        close(mx.fft.rfft(mx.array(a.real), n, 0), np.fft.rfft(a.real, n, 0))
        close(mx.fft.irfft(mx.array(a), n=n, axis=-1), np.fft.irfft(a, n=n, axis=-1))
    close(mx.fft.irfft(mx.array(a)), np.fft.irfft(a))
    close(mx.fft.fft(a=mx.array(a), n=4, axis=1, stream=mx.cpu), np.fft.fft(a, n=4, axis=1))


def test_multi_axis_transforms_match_numpy():
    a = crandn(8, 8, 8)
    r = a.real.copy()
    for op, axes, s in itertools.product(
        ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"],
        [None, (1, 2), (2, 1), (0, 2)],
        [None, (10, 5), (5, 10)],
    ):
        if axes is None and s is not None:
            continue
        x = a
        if op in ("rfft2", "rfftn"):
            x = r
        elif op in ("irfft2", "irfftn"):
            x = np.ascontiguousarray(getattr(np.fft, op[1:])(r, s=s, axes=axes))
        got = getattr(mx.fft, op)(mx.array(x), s=s, axes=axes)
        close(got, getattr(np.fft, op)(x, s=s, axes=axes))


def test_two_dimensional_defaults_and_none_axes():
    a = crandn(3, 4, 5)
    close(mx.fft.fft2(mx.array(a)), np.fft.fft2(a))
    close(mx.fft.fft2(mx.array(a), axes=None), np.fft.fftn(a))
    close(mx.fft.rfft2(mx.array(a.real), s=(4, 6)), np.fft.rfft2(a.real, s=(4, 6)))
    close(mx.fft.ifftn(mx.array(a)), np.fft.ifftn(a))


def test_views_and_dtypes():
    a = crandn(4, 8)
    m = mx.array(a)
    close(mx.fft.fft(m[:, ::2]), np.fft.fft(a[:, ::2]))
    close(mx.fft.fft(m[::2]), np.fft.fft(a[::2]))
    close(mx.fft.fft(mx.transpose(m)), np.fft.fft(a.T))
    b = np.broadcast_to(np.reshape(a.T, (8, 4, 1)), (8, 4, 16))
    close(mx.fft.fft(mx.broadcast_to(mx.reshape(mx.transpose(m), (8, 4, 1)), (8, 4, 16))), np.fft.fft(b))
    ints = np.arange(10, dtype=np.int32)
    close(mx.fft.fft(mx.array(ints)), np.fft.fft(ints))
    close(mx.fft.rfft(mx.array(a)), np.fft.rfft(a.real))  # a complex input loses its imaginary part


def test_round_trips():
    x = randn(5, 33)
    close(mx.fft.irfft(mx.fft.rfft(mx.array(x)), n=33), x)
    close(mx.fft.irfftn(mx.fft.rfftn(mx.array(x)), s=(5, 33), axes=(0, 1)), x)
    c = crandn(8193)
    close(mx.fft.ifft(mx.fft.fft(mx.array(c))), c)


@pytest.mark.parametrize("shape", [(100,), (4, 6), (5, 7), (8, 8)])
def test_shifts_match_numpy(shape):
    r = randn(*shape)
    close(mx.fft.fftshift(mx.array(r)), np.fft.fftshift(r))
    close(mx.fft.ifftshift(mx.array(r)), np.fft.ifftshift(r))
    for axes in [[0], [-1], (0,)]:
        if len(shape) == 1 and axes == [-1]:
            continue
        close(mx.fft.fftshift(mx.array(r), axes=axes), np.fft.fftshift(r, axes=axes))
        close(mx.fft.ifftshift(mx.array(r), axes=axes), np.fft.ifftshift(r, axes=axes))
    close(mx.fft.ifftshift(mx.array(r), axes=0), np.fft.ifftshift(r, axes=0))
    c = crandn(*shape)
    close(mx.fft.fftshift(mx.array(c)), np.fft.fftshift(c))


def test_errors_are_value_errors():
    x = mx.array(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError):
        mx.fft.irfftn(mx.array(3.0))
    with pytest.raises(ValueError):
        mx.fft.fftshift(x, axes=[2])
    with pytest.raises(ValueError):
        mx.fft.fftshift(x, axes=[-3])
    with pytest.raises(ValueError):
        mx.fft.fftn(x, s=(4, 4))  # sizes without axes, as MLX
    with pytest.raises(ValueError):
        mx.fft.fft(x, axis=2)
    with pytest.raises(ValueError):
        mx.fft.fft2(x, axes=(0, 0))
    with pytest.raises(ValueError):
        mx.fft.fft(x, n=0)
    empty = mx.array([])
    assert mx.array_equal(mx.fft.fftshift(empty), empty)


def test_gradients_of_real_losses():
    # L = sum(Re(fft(x)) * w): dL/dx = Re(conj(F)^T w) = N * Re(ifft(w)).
    x = randn(8)
    w = randn(8)
    g = mx.grad(lambda v: mx.sum(mx.real(mx.fft.fft(v)) * mx.array(w)))(mx.array(x))
    close(g, 8 * np.real(np.fft.ifft(w)))
    # irfft is linear: the gradient is the same for any x; compare with finite differences.
    h = crandn(5)
    wr = randn(8)

    def loss(v):
        return mx.sum(mx.fft.irfft(v) * mx.array(wr))

    g = np.array(mx.grad(loss)(mx.array(h)))
    fd = np.zeros(5, np.complex128)
    for i in range(5):
        for d in (1, 1j):
            e = np.zeros(5, np.complex64)
            e[i] = d
            fd[i] += d * (loss(mx.array(h + e)).item() - loss(mx.array(h - e)).item()) / 2
    np.testing.assert_allclose(g, fd, atol=1e-5)


def test_vmap_matches_per_slice():
    a = crandn(3, 4, 5)
    got = mx.vmap(lambda v: mx.fft.fft(v, axis=0), in_axes=1)(mx.array(a))
    want = np.stack([np.fft.fft(a[:, k], axis=0) for k in range(4)])
    close(got, want)
    got = mx.vmap(lambda v: mx.fft.rfft2(v))(mx.array(a.real))
    close(got, np.fft.rfft2(a.real))
