"""ConvTranspose1d, ConvTranspose2d and ConvTranspose3d layers (channels last), as mlx.nn's."""

import math
from typing import Union

import braid.core as mx
from braid.nn.layers.base import Module


def _tuple(value, n):
    return (value,) * n if isinstance(value, int) else tuple(value)


class _ConvTransposeNd(Module):
    """Shared set-up: ``weight`` [C_out, *kernel, C_in] drawn from U(-k, k) with
    k = 1 / sqrt(C_in * prod(kernel)), a zero ``bias`` [C_out]."""

    def _init_conv(self, ndim, in_channels, out_channels, kernel_size, stride, padding,
                   dilation, output_padding, bias):
        kernel_size = _tuple(kernel_size, ndim)
        scale = math.sqrt(1 / (in_channels * math.prod(kernel_size)))
        self.weight = mx.random.uniform(
            low=-scale, high=scale, shape=(out_channels, *kernel_size, in_channels)
        )
        if bias:
            self.bias = mx.zeros((out_channels,))
        if ndim > 1:
            stride, padding, output_padding = (
                _tuple(v, ndim) for v in (stride, padding, output_padding)
            )
        self.padding = padding
        self.stride = stride
        self.dilation = dilation
        self.output_padding = output_padding

    def _extra_repr(self):
        kernel = self.weight.shape[1:-1]
        kernel = kernel[0] if len(kernel) == 1 else kernel
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, kernel_size={kernel}, "
            f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
            f"output_padding={self.output_padding}, bias={'bias' in self}"
        )

    def _apply(self, conv, x):
        y = conv(x, self.weight, self.stride, self.padding, self.dilation, self.output_padding)
        return y + self.bias if "bias" in self else y


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over inputs ``[N, L, C_in]``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        output_padding: int = 0,
        bias: bool = True,
    ):
        super().__init__()
        self._init_conv(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                        output_padding, bias)

    def __call__(self, x):
        return self._apply(mx.conv_transpose1d, x)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over inputs ``[N, H, W, C_in]``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        output_padding: Union[int, tuple] = 0,
        bias: bool = True,
    ):
        super().__init__()
        self._init_conv(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                        output_padding, bias)

    def __call__(self, x):
        return self._apply(mx.conv_transpose2d, x)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution over inputs ``[N, D, H, W, C_in]``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        output_padding: Union[int, tuple] = 0,
        bias: bool = True,
    ):
        super().__init__()
        self._init_conv(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                        output_padding, bias)

    def __call__(self, x):
        return self._apply(mx.conv_transpose3d, x)
