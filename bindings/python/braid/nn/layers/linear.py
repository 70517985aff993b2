"""Identity, Linear and Bilinear layers, as mlx.nn's."""

import math
from typing import Any

import braid.core as mx
from braid.nn.layers.base import Module
from braid.nn.layers.quantized import QuantizedLinear


class Identity(Module):
    """Returns its input; takes and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def __call__(self, x: mx.array) -> mx.array:
        return x


class Linear(Module):
    r""":math:`y = x W^\top + b` with ``weight`` of shape ``[output_dims, input_dims]`` and
    ``bias`` of shape ``[output_dims]`` (none when ``bias=False``), both drawn from
    :math:`\mathcal{U}(-k, k)` with :math:`k = 1 / \sqrt{\text{input\_dims}}`."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input_dims)
        self.weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        if bias:
            self.bias = mx.random.uniform(low=-scale, high=scale, shape=(output_dims,))

    def _extra_repr(self) -> str:
        return (
            f"input_dims={self.weight.shape[1]}, output_dims={self.weight.shape[0]}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x: mx.array) -> mx.array:
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    def to_quantized(self, group_size: int = None, bits: int = None, mode: str = "affine"):
        """A :class:`QuantizedLinear` approximating this layer."""
        return QuantizedLinear.from_linear(self, group_size, bits, mode=mode)


class Bilinear(Module):
    r""":math:`y_i = x_1^\top W_i x_2 + b_i` with ``weight`` of shape
    ``[output_dims, input2_dims, input1_dims]`` and ``bias`` of shape ``[output_dims]``,
    drawn from :math:`\mathcal{U}(-k, k)` with :math:`k = 1 / \sqrt{\text{input1\_dims}}`."""

    def __init__(
        self, input1_dims: int, input2_dims: int, output_dims: int, bias: bool = True
    ) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input1_dims)
        self.weight = mx.random.uniform(
            low=-scale, high=scale, shape=(output_dims, input2_dims, input1_dims)
        )
        if bias:
            self.bias = mx.random.uniform(low=-scale, high=scale, shape=(output_dims,))

    def _extra_repr(self) -> str:
        out, in2, in1 = self.weight.shape
        return (
            f"input1_dims={in1}, input2_dims={in2}, output_dims={out}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x1: mx.array, x2: mx.array) -> mx.array:
        out, in2, in1 = self.weight.shape
        batch_shape = x1.shape[:-1]
        x1 = x1.reshape(-1, in1)
        x2 = x2.reshape(-1, 1, in2)
        # x1 W_i for all i at once: [N, out * in2], then contracted with x2.
        y = x1 @ self.weight.reshape(out * in2, in1).T
        y = y.reshape(-1, out, in2).swapaxes(-2, -1)
        y = (x2 @ y).squeeze(1)
        y = y.reshape(*batch_shape, out)
        if "bias" in self:
            y = y + self.bias
        return y
