# braid.core.fft against numpy.fft: the one-, two- and n-dimensional transforms with sizes and
# axes, the real transforms, every norm, the shifts, the sample frequencies, the errors, gradients
# and vmap.
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


NORMS = ["backward", "ortho", "forward"]
MULTI_AXIS_OPS = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]


@pytest.mark.parametrize("norm", NORMS)
def test_every_norm_matches_numpy(norm):
    a = crandn(6, 10)
    r = a.real.copy()
    for n in [None, 7, 16]:
        close(mx.fft.fft(mx.array(a), n=n, norm=norm), np.fft.fft(a, n=n, norm=norm))
        close(mx.fft.ifft(mx.array(a), n=n, axis=0, norm=norm), np.fft.ifft(a, n=n, axis=0, norm=norm))
        close(mx.fft.rfft(mx.array(r), n=n, norm=norm), np.fft.rfft(r, n=n, norm=norm))
        close(mx.fft.irfft(mx.array(a), n=n, norm=norm), np.fft.irfft(a, n=n, norm=norm))
    for op, axes, s in itertools.product(MULTI_AXIS_OPS, [None, (0, 1), (1, 0)], [None, (4, 8), (5, 7)]):
        if axes is None and s is not None:
            continue
        x = r if op in ("rfft2", "rfftn") else a
        got = getattr(mx.fft, op)(mx.array(x), s=s, axes=axes, norm=norm)
        close(got, getattr(np.fft, op)(x, s=s, axes=axes, norm=norm))


def test_norm_is_the_argument_after_the_axes():
    a = crandn(4, 6)
    close(mx.fft.fft(mx.array(a), None, 0, "ortho"), np.fft.fft(a, axis=0, norm="ortho"))
    close(mx.fft.irfft(mx.array(a), 9, -1, "forward"), np.fft.irfft(a, 9, -1, norm="forward"))
    close(mx.fft.fftn(mx.array(a), None, None, "forward"), np.fft.fftn(a, norm="forward"))
    got = mx.fft.ifft2(mx.array(a), (4, 6), (0, 1), "ortho", mx.cpu)
    close(got, np.fft.ifft2(a, (4, 6), (0, 1), "ortho"))
    got = mx.fft.rfft(a=mx.array(a.real), norm="ortho", stream=mx.cpu)
    close(got, np.fft.rfft(a.real, norm="ortho"))
    # The default is NumPy's "backward".
    close(mx.fft.ifft(mx.array(a)), np.fft.ifft(a, norm="backward"))


@pytest.mark.parametrize("norm", NORMS)
def test_each_norms_inverse_undoes_its_transform(norm):
    x = randn(5, 9)
    c = crandn(4, 12)
    close(mx.fft.irfft(mx.fft.rfft(mx.array(x), norm=norm), n=9, norm=norm), x)
    close(mx.fft.ifftn(mx.fft.fftn(mx.array(c), norm=norm), norm=norm), c)


def test_a_norm_other_than_numpys_is_a_value_error_and_a_non_string_a_type_error():
    x = mx.array(crandn(4, 4))
    for op in ["fft", "ifft", "rfft", "irfft"] + MULTI_AXIS_OPS:
        with pytest.raises(ValueError):
            getattr(mx.fft, op)(x, norm="unitary")
        with pytest.raises(ValueError):
            getattr(mx.fft, op)(x, norm="Ortho")
    with pytest.raises(TypeError):
        mx.fft.fft(x, norm=1)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 100])
@pytest.mark.parametrize("d", [1.0, 0.1, -2.5, 3])
def test_sample_frequencies_match_numpy(n, d):
    f = mx.fft.fftfreq(n, d)
    assert f.dtype == mx.float32
    np.testing.assert_allclose(np.array(f), np.fft.fftfreq(n, d), rtol=1e-6, atol=1e-7)
    f = mx.fft.rfftfreq(n, d=d)
    assert f.dtype == mx.float32
    np.testing.assert_allclose(np.array(f), np.fft.rfftfreq(n, d), rtol=1e-6, atol=1e-7)
    f = mx.fft.fftfreq(n=n, stream=mx.cpu)
    np.testing.assert_allclose(np.array(f), np.fft.fftfreq(n), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.array(mx.fft.rfftfreq(n)), np.fft.rfftfreq(n), rtol=1e-6, atol=1e-7)


def test_sample_frequency_errors():
    for f in (mx.fft.fftfreq, mx.fft.rfftfreq):
        with pytest.raises(ValueError):
            f(0)
        with pytest.raises(ValueError):
            f(-3)
        with pytest.raises(ValueError):
            f(4, 0.0)
        with pytest.raises(TypeError):
            f(4.0)


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


def test_gradients_scale_with_the_norm():
    # L = sum(Re(fft(x)) * w): dL/dx = N * Re(ifft(w)), times fft's factor for the norm.
    x = randn(8)
    w = randn(8)
    for norm, factor in [("backward", 1.0), ("ortho", 1 / np.sqrt(8)), ("forward", 1 / 8)]:
        g = mx.grad(lambda v: mx.sum(mx.real(mx.fft.fft(v, norm=norm)) * mx.array(w)))(mx.array(x))
        close(g, factor * 8 * np.real(np.fft.ifft(w)))


def test_vmap_matches_per_slice():
    a = crandn(3, 4, 5)
    got = mx.vmap(lambda v: mx.fft.fft(v, axis=0), in_axes=1)(mx.array(a))
    want = np.stack([np.fft.fft(a[:, k], axis=0) for k in range(4)])
    close(got, want)
    got = mx.vmap(lambda v: mx.fft.rfft2(v))(mx.array(a.real))
    close(got, np.fft.rfft2(a.real))
