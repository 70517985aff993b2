"""Initializers of braid.nn, as mlx.nn.init: each function returns an initializer that takes
an array and returns a new array of its shape."""

import math
from typing import Callable, Literal

import braid.core as mx


def constant(value: float, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Fills with ``value``."""

    def initializer(a: mx.array) -> mx.array:
        return mx.full(a.shape, value, dtype=dtype)

    return initializer


def normal(
    mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32
) -> Callable[[mx.array], mx.array]:
    """Samples of the normal distribution N(``mean``, ``std``^2)."""

    def initializer(a: mx.array) -> mx.array:
        return mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)

    return initializer


def uniform(
    low: float = 0.0, high: float = 1.0, dtype: mx.Dtype = mx.float32
) -> Callable[[mx.array], mx.array]:
    """Samples of the uniform distribution U(``low``, ``high``)."""

    def initializer(a: mx.array) -> mx.array:
        return mx.random.uniform(low, high, a.shape, dtype=dtype)

    return initializer


def identity(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """The identity matrix (the input must be square)."""

    def initializer(arr: mx.array) -> mx.array:
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"The input array must be a square matrix but got shape {arr.shape}.")
        return mx.eye(n=arr.shape[0], dtype=dtype)

    return initializer


def _calculate_fan_in_fan_out(x):
    """(fan_in, fan_out) of a weight ``[out, *receptive field, in]``."""
    if x.ndim < 2:
        raise ValueError(
            "Glorot / He initialization requires at least 2 dimensional input"
            f" but input with {x.ndim} dimensions."
        )
    receptive_field = math.prod(x.shape[1:-1]) if x.ndim > 2 else 1
    return x.shape[-1] * receptive_field, x.shape[0] * receptive_field


def _fan(a, mode):
    fan_in, fan_out = _calculate_fan_in_fan_out(a)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise ValueError(f"Invalid mode: {mode}. Valid modes are: fan_in, fan_out")


def glorot_normal(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, float], mx.array]:
    r"""Normal samples with :math:`\sigma = \text{gain} \sqrt{2 / (\text{fan\_in} +
    \text{fan\_out})}`; the initializer takes ``(array, gain=1.0)``."""

    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _calculate_fan_in_fan_out(a)
        std = gain * math.sqrt(2.0 / (fan_in + fan_out))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def glorot_uniform(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, float], mx.array]:
    r"""Uniform samples in :math:`[-l, l]`, :math:`l = \text{gain} \sqrt{6 /
    (\text{fan\_in} + \text{fan\_out})}`; the initializer takes ``(array, gain=1.0)``."""

    def initializer(a: mx.array, gain: float = 1.0) -> mx.array:
        fan_in, fan_out = _calculate_fan_in_fan_out(a)
        limit = gain * math.sqrt(6.0 / (fan_in + fan_out))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def he_normal(
    dtype: mx.Dtype = mx.float32,
) -> Callable[[mx.array, Literal["fan_in", "fan_out"], float], mx.array]:
    r"""Normal samples with :math:`\sigma = \text{gain} / \sqrt{\text{fan}}`; the
    initializer takes ``(array, mode="fan_in" or "fan_out", gain=1.0)``."""

    def initializer(
        a: mx.array, mode: Literal["fan_in", "fan_out"] = "fan_in", gain: float = 1.0
    ) -> mx.array:
        std = gain / math.sqrt(_fan(a, mode))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def he_uniform(
    dtype: mx.Dtype = mx.float32,
) -> Callable[[mx.array, Literal["fan_in", "fan_out"], float], mx.array]:
    r"""Uniform samples in :math:`[-l, l]`, :math:`l = \text{gain} \sqrt{3 / \text{fan}}`;
    the initializer takes ``(array, mode="fan_in" or "fan_out", gain=1.0)``."""

    def initializer(
        a: mx.array, mode: Literal["fan_in", "fan_out"] = "fan_in", gain: float = 1.0
    ) -> mx.array:
        limit = gain * math.sqrt(3.0 / _fan(a, mode))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def sparse(
    sparsity: float,
    mean: float = 0.0,
    std: float = 1.0,
    dtype: mx.Dtype = mx.float32,
) -> Callable[[mx.array], mx.array]:
    """Normal samples N(``mean``, ``std``^2) with ``ceil(sparsity * rows)`` random entries
    of each column set to zero (2-d inputs only)."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError("Only tensors with 2 dimensions are supported")
        rows, cols = a.shape
        num_zeros = int(math.ceil(sparsity * rows))
        order = mx.argsort(mx.random.uniform(shape=a.shape), axis=0)
        values = mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)
        # Rank of each entry within its column under a random order: the lowest ranks are zeroed.
        ranks = mx.argsort(order, axis=0)
        return mx.where(ranks < num_zeros, mx.zeros_like(values), values)

    return initializer


def orthogonal(gain: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """A (semi-)orthogonal matrix of the input's 2-d shape, scaled by ``gain``: the first rows
    and columns of the Q of a square normal matrix's QR, its columns' signs set by diag(R)."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError(
                f"Orthogonal initialization requires a 2D array but got a {a.ndim}D array."
            )
        rows, cols = a.shape
        n = max(rows, cols)
        # QR runs on the CPU stream, as MLX's; the sign fix makes Q uniform (Haar) over the group.
        q, r = mx.linalg.qr(mx.random.normal(shape=(n, n)), stream=mx.cpu)
        q = q * mx.sign(mx.diag(r))
        return (q[:rows, :cols] * gain).astype(dtype)

    return initializer
