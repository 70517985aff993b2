"""Max and average pooling over 1, 2 or 3 spatial axes (inputs ``[N, *spatial, C]``), as
mlx.nn's MaxPool1d/2d/3d and AvgPool1d/2d/3d."""

from typing import Optional, Tuple, Union

import braid.core as mx
from braid.nn.layers.base import Module


def _as_list(value, n, message):
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(message)
        return list(value)
    if not isinstance(value, int):
        raise ValueError(message)
    return [value] * n


def _sliding_windows(x, window, strides):
    """A strided view ``[N, *out_spatial, *window, C]`` of ``x`` ``[N, *spatial, C]``."""
    if x.ndim < 3:
        raise ValueError(
            "To extract sliding windows at least 1 spatial dimension (3 total) is needed but "
            f"the input only has {x.ndim} dimensions."
        )
    spatial = x.shape[1:-1]
    if not len(spatial) == len(window) == len(strides):
        raise ValueError(
            "To extract sliding windows the window shapes and strides must have the same "
            f"number of spatial dimensions as the signal but the signal has {len(spatial)} "
            f"dims and the window shape has {len(window)} and strides have {len(strides)}."
        )
    # Element strides of the row-major input.
    elem_strides = [1] * x.ndim
    for i in range(x.ndim - 2, -1, -1):
        elem_strides[i] = elem_strides[i + 1] * x.shape[i + 1]
    out_spatial = [(n - w) // s + 1 for n, w, s in zip(spatial, window, strides)]
    shape = [x.shape[0], *out_spatial, *window, x.shape[-1]]
    spatial_strides = elem_strides[1:-1]
    view_strides = [
        elem_strides[0],
        *(e * s for e, s in zip(spatial_strides, strides)),
        *spatial_strides,
        1,
    ]
    return mx.as_strided(x, shape, view_strides)


class _Pool(Module):
    def __init__(self, reduce_fn, pad_value, kernel_size, stride, padding):
        super().__init__()
        self._pooling_function = reduce_fn
        self._padding_value = pad_value
        self._kernel_size = kernel_size
        self._stride = stride
        self._padding = padding
        n = len(kernel_size)
        self._axes = tuple(range(-n - 1, -1))

    def _extra_repr(self):
        padding = tuple(p[0] for p in self._padding)
        return (
            f"kernel_size={tuple(self._kernel_size)}, stride={tuple(self._stride)}, "
            f"padding={padding}"
        )

    def _pad_value(self, dtype):
        value = self._padding_value
        if value == -float("inf") and not mx.issubdtype(dtype, mx.inexact):
            # Integer inputs cannot hold -inf: their smallest value pads as well.
            return mx.iinfo(dtype).min if dtype != mx.bool_ else False
        return value

    def __call__(self, x):
        if any(p[0] > 0 for p in self._padding):
            x = mx.pad(
                x,
                [(0, 0)] + self._padding + [(0, 0)],
                constant_values=self._pad_value(x.dtype),
            )
        x = _sliding_windows(x, self._kernel_size, self._stride)
        return self._pooling_function(x, self._axes)


class _PoolNd(_Pool):
    _ndim = 0

    def __init__(self, reduce_fn, pad_value, kernel_size, stride, padding):
        n = self._ndim
        name = type(self).__name__
        count = "1 integer" if n == 1 else f"{n} integers"
        message = "[{}] '{}' must be an integer or a tuple containing " + count
        kernel_size = _as_list(kernel_size, n, message.format(name, "kernel_size"))
        if stride is None:
            stride = kernel_size
        else:
            stride = _as_list(stride, n, message.format(name, "stride"))
        padding = _as_list(padding, n, message.format(name, "padding"))
        super().__init__(reduce_fn, pad_value, kernel_size, stride, [(p, p) for p in padding])


class _Pool1d(_PoolNd):
    _ndim = 1


class _Pool2d(_PoolNd):
    _ndim = 2


class _Pool3d(_PoolNd):
    _ndim = 3


class MaxPool1d(_Pool1d):
    """Maximum over windows of ``kernel_size`` moved by ``stride`` (default: the kernel
    size) along the one spatial axis; ``padding`` pads both ends with -inf."""

    def __init__(
        self,
        kernel_size: Union[int, Tuple[int]],
        stride: Optional[Union[int, Tuple[int]]] = None,
        padding: Union[int, Tuple[int]] = 0,
    ):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool1d(_Pool1d):
    """Mean over windows of ``kernel_size`` moved by ``stride`` (default: the kernel size)
    along the one spatial axis; ``padding`` pads both ends with zeros."""

    def __init__(
        self,
        kernel_size: Union[int, Tuple[int]],
        stride: Optional[Union[int, Tuple[int]]] = None,
        padding: Union[int, Tuple[int]] = 0,
    ):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)


class MaxPool2d(_Pool2d):
    """2-d max pooling; sizes are ints or pairs (height, width), padding is -inf."""

    def __init__(
        self,
        kernel_size: Union[int, Tuple[int, int]],
        stride: Optional[Union[int, Tuple[int, int]]] = None,
        padding: Optional[Union[int, Tuple[int, int]]] = 0,
    ):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool2d(_Pool2d):
    """2-d average pooling; sizes are ints or pairs (height, width), padding is zeros."""

    def __init__(
        self,
        kernel_size: Union[int, Tuple[int, int]],
        stride: Optional[Union[int, Tuple[int, int]]] = None,
        padding: Optional[Union[int, Tuple[int, int]]] = 0,
    ):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)


class MaxPool3d(_Pool3d):
    """3-d max pooling; sizes are ints or triples (depth, height, width), padding is -inf."""

    def __init__(
        self,
        kernel_size: Union[int, Tuple[int, int, int]],
        stride: Optional[Union[int, Tuple[int, int, int]]] = None,
        padding: Optional[Union[int, Tuple[int, int, int]]] = 0,
    ):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool3d(_Pool3d):
    """3-d average pooling; sizes are ints or triples (depth, height, width), padding is
    zeros."""

    def __init__(
        self,
        kernel_size: Union[int, Tuple[int, int, int]],
        stride: Optional[Union[int, Tuple[int, int, int]]] = None,
        padding: Optional[Union[int, Tuple[int, int, int]]] = 0,
    ):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)
