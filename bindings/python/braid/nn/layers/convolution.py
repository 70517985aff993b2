"""Conv1d, Conv2d and Conv3d layers (channels last), as mlx.nn's."""

import math
from typing import Union

import braid.core as mx
from braid.nn.layers.base import Module


def _tuple(value, n):
    return (value,) * n if isinstance(value, int) else tuple(value)


class _ConvNd(Module):
    """Shared set-up: ``weight`` [C_out, *kernel, C_in / groups] drawn from U(-k, k) with
    k = 1 / sqrt(C_in * prod(kernel)), a zero ``bias`` [C_out]."""

    def _init_conv(self, ndim, in_channels, out_channels, kernel_size, stride, padding,
                   dilation, groups, bias):
        if in_channels % groups != 0:
            raise ValueError(
                f"The number of input channels ({in_channels}) must be "
                f"divisible by the number of groups ({groups})"
            )
        kernel_size = _tuple(kernel_size, ndim)
        scale = math.sqrt(1 / (in_channels * math.prod(kernel_size)))
        self.weight = mx.random.uniform(
            low=-scale, high=scale, shape=(out_channels, *kernel_size, in_channels // groups)
        )
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding if ndim == 1 else _tuple(padding, ndim)
        self.stride = stride if ndim == 1 else _tuple(stride, ndim)
        self.dilation = dilation
        self.groups = groups

    def _extra_repr(self):
        kernel = self.weight.shape[1:-1]
        kernel = kernel[0] if len(kernel) == 1 else kernel
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={kernel}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, groups={self.groups}, bias={'bias' in self}"
        )

    def _add_bias(self, y):
        return y + self.bias if "bias" in self else y


class Conv1d(_ConvNd):
    """1-d convolution over inputs ``[N, L, C_in]``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        super().__init__()
        self._init_conv(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                        groups, bias)

    def __call__(self, x):
        y = mx.conv1d(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        return self._add_bias(y)


class Conv2d(_ConvNd):
    """2-d convolution over inputs ``[N, H, W, C_in]``; sizes are ints or pairs."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        super().__init__()
        self._init_conv(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                        groups, bias)

    def __call__(self, x):
        y = mx.conv2d(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        return self._add_bias(y)


class Conv3d(_ConvNd):
    """3-d convolution over inputs ``[N, D, H, W, C_in]``; sizes are ints or triples."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        bias: bool = True,
    ):
        super().__init__()
        self._init_conv(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                        1, bias)

    def __call__(self, x):
        y = mx.conv3d(x, self.weight, self.stride, self.padding, self.dilation)
        return self._add_bias(y)
