"""Upsample: nearest, linear and cubic interpolation over the spatial axes of
``[N, *spatial, C]`` inputs, as mlx.nn.Upsample.

Interpolation is separable, so it is done one spatial axis at a time. With ``antialias``
the linear and cubic modes widen their kernels by the reduction factor when downsampling (so
every input sample contributes), as PyTorch's ``F.interpolate(..., antialias=True)``.
"""

from typing import Literal, Tuple, Union

import braid.core as mx
from braid.nn.layers.base import Module


def _source_positions(n, scale, align_corners):
    """The (float) input coordinates sampled by the ``int(scale * n)`` outputs."""
    m = int(scale * n)
    out = mx.arange(m, dtype=mx.float32)
    if align_corners:
        return out * ((n - 1) / (m - 1)) if m > 1 else out * 0
    step = 1 / scale
    start = ((m - 1) * step - n + 1) / 2
    return out * step - start


def _broadcast_along(weights, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return weights.reshape(shape)


def _nearest_axis(x, axis, scale):
    n = x.shape[axis]
    m = int(scale * n)
    positions = mx.arange(m, dtype=mx.float32)
    if m > n:
        positions = mx.round((positions + 0.5) * (n / m) - 0.5)
    else:
        positions = positions * (n / m)
    return mx.take(x, positions.astype(mx.uint32), axis=axis)


def upsample_nearest(x: mx.array, scale_factor: Tuple):
    dims = x.ndim - 2
    if dims != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    if all(float(s).is_integer() for s in scale_factor):
        # Whole factors: repeat each element by broadcasting.
        shape = list(x.shape)
        expanded = [shape[0]]
        target = [shape[0]]
        for d in range(dims):
            expanded += [shape[1 + d], 1]
            target += [shape[1 + d], int(scale_factor[d])]
        expanded.append(shape[-1])
        target.append(shape[-1])
        x = mx.broadcast_to(x.reshape(expanded), target)
        out_shape = [shape[0]] + [shape[1 + d] * int(scale_factor[d]) for d in range(dims)]
        return x.reshape(out_shape + [shape[-1]])
    for d, s in enumerate(scale_factor):
        x = _nearest_axis(x, 1 + d, s)
    return x


def _linear_axis(x, axis, scale, align_corners):
    n = x.shape[axis]
    positions = mx.clip(_source_positions(n, scale, align_corners), 0, n - 1)
    left = mx.floor(positions)
    right = mx.ceil(positions)
    w_right = _broadcast_along(positions - left, axis, x.ndim)
    x_left = mx.take(x, left.astype(mx.uint32), axis=axis)
    x_right = mx.take(x, right.astype(mx.uint32), axis=axis)
    return x_left * (1 - w_right) + x_right * w_right


def _cubic_weight(distance, near):
    """Keys' cubic convolution kernel with a = -0.75 (distance in [0, 1] or [1, 2])."""
    a = -0.75
    if near:
        return ((a + 2.0) * distance - (a + 3.0)) * distance * distance + 1
    return (((distance - 5) * distance + 8) * distance - 4) * a


def _cubic_axis(x, axis, scale, align_corners):
    n = x.shape[axis]
    positions = _source_positions(n, scale, align_corners)
    base = mx.floor(positions)
    out = None
    for offset, near in ((-1, False), (0, True), (1, True), (2, False)):
        grid = base + offset
        weight = _cubic_weight(mx.abs(positions - grid), near)
        index = mx.clip(grid, 0, n - 1).astype(mx.uint32)
        term = mx.take(x, index, axis=axis) * _broadcast_along(weight, axis, x.ndim)
        out = term if out is None else out + term
    return out


def _antialias_filter(distance, mode):
    """The triangle (linear) or Keys' cubic kernel with a = -0.5 (cubic), at |distance|."""
    d = mx.abs(distance)
    if mode == "linear":
        return mx.maximum(1 - d, 0)
    a = -0.5
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = (((d - 5) * d + 8) * d - 4) * a
    return mx.where(d < 1, near, mx.where(d < 2, far, 0))


def _antialias_axis(x, axis, scale, align_corners, mode):
    """Output i is the normalized sum of the inputs j the kernel, centred at
    ``ratio * (i + 0.5)`` and widened by ``ratio`` = input step per output step when that is
    above 1, reaches; taps outside the input are left out (not clamped)."""
    n = x.shape[axis]
    m = int(scale * n)
    if align_corners:
        ratio = (n - 1) / (m - 1) if m > 1 else 0.0
    else:
        ratio = 1 / scale
    support = (1.0 if mode == "linear" else 2.0) * max(ratio, 1.0)
    inverse = 1 / ratio if ratio >= 1 else 1.0
    center = (mx.arange(m, dtype=mx.float32) + 0.5) * ratio
    first = mx.maximum(mx.floor(center - support + 0.5), 0)[:, None]
    last = mx.minimum(mx.floor(center + support + 0.5), n)[:, None]
    j = mx.arange(n, dtype=mx.float32)[None, :]
    weights = _antialias_filter((j - center[:, None] + 0.5) * inverse, mode)
    weights = mx.where((j >= first) & (j < last), weights, 0)
    total = weights.sum(axis=1, keepdims=True)
    weights = weights / mx.where(total == 0, 1, total)  # [m, n]
    moved = mx.moveaxis(x, axis, -1)
    out = (moved @ weights.T).astype(x.dtype)
    return mx.moveaxis(out, -1, axis)


def upsample_linear(
    x: mx.array, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False
):
    if x.ndim - 2 != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    for d, s in enumerate(scale_factor):
        if antialias and s < 1:
            # Upsampling with a triangle kernel is plain linear interpolation.
            x = _antialias_axis(x, 1 + d, s, align_corners, "linear")
        else:
            x = _linear_axis(x, 1 + d, s, align_corners)
    return x


def upsample_cubic(
    x: mx.array, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False
):
    if x.ndim - 2 != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    for d, s in enumerate(scale_factor):
        if antialias:
            x = _antialias_axis(x, 1 + d, s, align_corners, "cubic")
        else:
            x = _cubic_axis(x, 1 + d, s, align_corners)
    return x


class Upsample(Module):
    """Upsamples the spatial axes (all but the first and last) by ``scale_factor`` (one
    number, or one per spatial axis) with ``mode`` "nearest", "linear" (bi-, trilinear,
    ...) or "cubic". ``align_corners`` makes the corner samples of input and output
    coincide in the linear and cubic modes. ``antialias`` widens the linear and cubic
    kernels when downsampling, as PyTorch's ``antialias=True`` (the cubic kernel then uses
    Keys' a = -0.5, also when upsampling); the nearest mode ignores it."""

    def __init__(
        self,
        scale_factor: Union[float, Tuple],
        mode: Literal["nearest", "linear", "cubic"] = "nearest",
        align_corners: bool = False,
        antialias: bool = False,
    ):
        super().__init__()
        if mode not in ("nearest", "linear", "cubic"):
            raise ValueError(f"[Upsample] Got unsupported upsampling algorithm: {mode}")
        if isinstance(scale_factor, (list, tuple)):
            self.scale_factor = tuple(map(float, scale_factor))
        else:
            self.scale_factor = float(scale_factor)
        self.mode = mode
        self.align_corners = align_corners
        self.antialias = antialias

    def _extra_repr(self) -> str:
        return (
            f"scale_factor={self.scale_factor}, mode={self.mode!r}, "
            f"align_corners={self.align_corners}"
        )

    def __call__(self, x: mx.array) -> mx.array:
        dims = x.ndim - 2
        if dims <= 0:
            raise ValueError(
                "[Upsample] The input should have at least 1 spatial dimension which means "
                f"it should be at least 3D but {x.ndim}D was provided"
            )
        scale_factor = self.scale_factor
        if isinstance(scale_factor, tuple):
            if len(scale_factor) != dims:
                raise ValueError(
                    "[Upsample] One scale per spatial dimension is required but "
                    f"scale_factor={scale_factor} and the number of spatial dimensions "
                    f"were {dims}"
                )
        else:
            scale_factor = (scale_factor,) * dims
        if self.mode == "nearest":
            return upsample_nearest(x, scale_factor)
        if self.mode == "linear":
            return upsample_linear(x, scale_factor, self.align_corners, self.antialias)
        return upsample_cubic(x, scale_factor, self.align_corners, self.antialias)
