"""Activation functions of braid.nn and their Module forms, as mlx.nn's."""

import math
from typing import Any

import braid.core as mx
from braid.nn.layers.base import Module


def sigmoid(x):
    r"""The logistic sigmoid :math:`1 / (1 + e^{-x})`."""
    return mx.sigmoid(x)


def relu(x):
    r"""The rectified linear unit :math:`\max(x, 0)`."""
    return mx.maximum(x, 0)


def relu2(x):
    r"""The squared rectified linear unit :math:`\max(x, 0)^2`."""
    return mx.square(mx.maximum(x, 0))


def relu6(x):
    r""":math:`\min(\max(x, 0), 6)`."""
    return mx.minimum(mx.maximum(x, 0), 6.0)


def leaky_relu(x, negative_slope=0.01):
    r""":math:`\max(\text{negative\_slope} \cdot x, x)`."""
    return mx.maximum(negative_slope * x, x)


def log_softmax(x, axis=-1):
    r""":math:`x - \log \sum_j e^{x_j}` along ``axis``."""
    return x - mx.logsumexp(x, axis=axis, keepdims=True)


def elu(x, alpha=1.0):
    r""":math:`x` where :math:`x > 0`, :math:`\alpha (e^x - 1)` elsewhere."""
    return mx.where(x > 0, x, alpha * (mx.exp(x) - 1))


def softmax(x, axis=-1):
    r""":math:`e^{x_i} / \sum_j e^{x_j}` along ``axis``."""
    return mx.softmax(x, axis=axis)


def softplus(x):
    r""":math:`\log(1 + e^x)`, computed stably."""
    return mx.logaddexp(x, 0)


def softsign(x):
    r""":math:`x / (1 + |x|)`."""
    return mx.divide(x, 1 + mx.abs(x))


def softshrink(x, lambd: float = 0.5):
    r""":math:`x - \lambda \operatorname{sign}(x)` where :math:`|x| > \lambda`, 0 elsewhere."""
    return mx.where(mx.abs(x) > lambd, x - mx.sign(x) * lambd, 0)


def celu(x, alpha=1.0):
    r""":math:`\max(0, x) + \alpha (e^{\min(x, 0) / \alpha} - 1)`."""
    return mx.maximum(x, 0.0) + alpha * (mx.exp(mx.minimum(x, 0.0) / alpha) - 1)


def silu(x):
    r"""The sigmoid linear unit (swish) :math:`x \sigma(x)`."""
    return x * mx.sigmoid(x)


def log_sigmoid(x):
    r""":math:`\log \sigma(x) = -\log(1 + e^{-x})`."""
    return -softplus(-x)


def gelu(x) -> mx.array:
    r"""The Gaussian error linear unit :math:`x \Phi(x)` (:math:`\Phi` the normal CDF)."""
    return x * (1 + mx.erf(x / math.sqrt(2))) / 2


def gelu_approx(x):
    r"""The tanh approximation of :func:`gelu` (absolute error below 0.0005 on [-6, 6]):
    :math:`0.5 x (1 + \tanh(\sqrt{2/\pi} (x + 0.044715 x^3)))`."""
    return 0.5 * x * (1 + mx.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_fast_approx(x):
    r"""The sigmoid approximation of :func:`gelu` (absolute error below 0.015 on [-6, 6]):
    :math:`x \sigma(1.702 x)`."""
    return x * mx.sigmoid(1.702 * x)


def glu(x: mx.array, axis: int = -1) -> mx.array:
    r"""The gated linear unit: splits ``axis`` into halves :math:`a, b` and returns
    :math:`a \sigma(b)`."""
    a, b = mx.split(x, indices_or_sections=2, axis=axis)
    return a * mx.sigmoid(b)


def step(x: mx.array, threshold: float = 0.0):
    r"""The binary step: 1 where :math:`x > \text{threshold}`, 0 elsewhere."""
    return mx.where(x > threshold, 1, 0)


def selu(x):
    r"""The scaled exponential linear unit :math:`1.0507 \cdot \text{elu}(x, 1.67326)`."""
    return elu(x, 1.67326) * 1.0507


def prelu(x: mx.array, alpha: mx.array) -> mx.array:
    r"""The parametric ReLU :math:`\max(0, x) + \alpha \min(0, x)`."""
    return mx.maximum(0, x) + alpha * mx.minimum(0, x)


def mish(x: mx.array) -> mx.array:
    r""":math:`x \tanh(\text{softplus}(x))`."""
    return x * mx.tanh(softplus(x))


def hardswish(x):
    r""":math:`x \min(\max(x + 3, 0), 6) / 6`."""
    return x * mx.minimum(mx.maximum(x + 3, 0), 6) / 6


def hard_tanh(x, min_val=-1.0, max_val=1.0):
    r""":math:`x` clipped to :math:`[\text{min\_val}, \text{max\_val}]`."""
    return mx.minimum(mx.maximum(x, min_val), max_val)


def hard_shrink(x, lambd=0.5):
    r""":math:`x` where :math:`|x| > \lambda`, 0 elsewhere."""
    return mx.where(mx.abs(x) > lambd, x, 0)


def softmin(x, axis=-1):
    r""":math:`e^{-x_i} / \sum_j e^{-x_j}` along ``axis``."""
    return mx.softmax(-x, axis=axis)


def tanh(x):
    """The hyperbolic tangent."""
    return mx.tanh(x)


def _activation_module(fn):
    """Gives a parameterless Module class the call ``fn(x)``."""

    def decorate(cls):
        cls.__call__ = lambda self, x: fn(x)
        return cls

    return decorate


@_activation_module(sigmoid)
class Sigmoid(Module):
    """Applies :func:`sigmoid`."""


@_activation_module(mish)
class Mish(Module):
    """Applies :func:`mish`."""


@_activation_module(relu)
class ReLU(Module):
    """Applies :func:`relu`."""


@_activation_module(relu2)
class ReLU2(Module):
    """Applies :func:`relu2`."""


@_activation_module(relu6)
class ReLU6(Module):
    """Applies :func:`relu6`."""


@_activation_module(softmax)
class Softmax(Module):
    """Applies :func:`softmax` along the last axis."""


@_activation_module(softplus)
class Softplus(Module):
    """Applies :func:`softplus`."""


@_activation_module(softsign)
class Softsign(Module):
    """Applies :func:`softsign`."""


@_activation_module(silu)
class SiLU(Module):
    """Applies :func:`silu`."""


@_activation_module(log_softmax)
class LogSoftmax(Module):
    """Applies :func:`log_softmax` along the last axis."""


@_activation_module(log_sigmoid)
class LogSigmoid(Module):
    """Applies :func:`log_sigmoid`."""


@_activation_module(tanh)
class Tanh(Module):
    """Applies :func:`tanh`."""


@_activation_module(hardswish)
class Hardswish(Module):
    """Applies :func:`hardswish`."""


@_activation_module(selu)
class SELU(Module):
    """Applies :func:`selu`."""


@_activation_module(hard_tanh)
class HardTanh(Module):
    """Applies :func:`hard_tanh` with its default bounds."""


@_activation_module(hard_shrink)
class HardShrink(Module):
    """Applies :func:`hard_shrink` with ``lambd=0.5``."""


@_activation_module(softmin)
class Softmin(Module):
    """Applies :func:`softmin` along the last axis."""


class GLU(Module):
    """Applies :func:`glu` along ``axis`` (default -1)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def __call__(self, x) -> Any:
        return glu(x=x, axis=self.axis)


class LeakyReLU(Module):
    """Applies :func:`leaky_relu` with ``negative_slope`` (default 0.01)."""

    def __init__(self, negative_slope=1e-2):
        super().__init__()
        self._negative_slope = negative_slope

    def __call__(self, x):
        return leaky_relu(x, self._negative_slope)


class ELU(Module):
    """Applies :func:`elu` with ``alpha`` (default 1.0)."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return elu(x, self._alpha)


class CELU(Module):
    """Applies :func:`celu` with ``alpha`` (default 1.0)."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return celu(x, self._alpha)


class Softshrink(Module):
    """Applies :func:`softshrink` with ``lambd`` (default 0.5)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return softshrink(x, self.lambd)


class PReLU(Module):
    """Applies :func:`prelu` with a learned slope: ``num_parameters`` of them (default 1),
    starting at ``init`` (default 0.25)."""

    def __init__(self, num_parameters=1, init=0.25):
        super().__init__()
        self.weight = mx.full([num_parameters], init)

    def __call__(self, x: mx.array):
        return prelu(x, self.weight)


class GELU(Module):
    """Applies :func:`gelu`, or with ``approx`` 'precise' (alias 'tanh') :func:`gelu_approx`
    and with 'fast' :func:`gelu_fast_approx`."""

    def __init__(self, approx="none"):
        super().__init__()
        if approx == "none":
            self._act = gelu
        elif approx in ("precise", "tanh"):
            self._act = gelu_approx
        elif approx == "fast":
            self._act = gelu_fast_approx
        else:
            raise ValueError(
                "The approximation should be in ['none', 'precise', 'tanh', 'fast'] "
                f"but '{approx}' was given"
            )

    def __call__(self, x):
        return self._act(x)


class Step(Module):
    """Applies :func:`step` with ``threshold`` (default 0)."""

    def __init__(self, threshold: float = 0.0):
        super().__init__()
        self.threshold = threshold

    def __call__(self, x: mx.array):
        return step(x, self.threshold)
