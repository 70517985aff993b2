"""Normalization layers: LayerNorm, RMSNorm, GroupNorm, InstanceNorm and BatchNorm, as
mlx.nn's (features on the last axis)."""

from typing import Tuple

import braid.core as mx
from braid.nn.layers.base import Module


class InstanceNorm(Module):
    r"""Normalizes each sample and feature over the spatial axes (all but the first and
    last): :math:`(x - E[x]) / \sqrt{Var[x] + \epsilon}`, then :math:`\gamma x + \beta` when
    ``affine`` (default False)."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = False):
        super().__init__()
        if affine:
            self.weight = mx.ones((dims,))
            self.bias = mx.zeros((dims,))
        self.dims = dims
        self.eps = eps

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        axes = tuple(range(1, x.ndim - 1))
        mean = mx.mean(x, axis=axes, keepdims=True)
        var = mx.var(x, axis=axes, keepdims=True)
        x = (x - mean) * mx.rsqrt(var + self.eps)
        return (self.weight * x + self.bias) if "weight" in self else x


class LayerNorm(Module):
    r"""Normalizes over the last axis: :math:`(x - E[x]) / \sqrt{Var[x] + \epsilon}`, then
    scales by ``weight`` (``affine``) and shifts by ``bias`` (``affine`` and ``bias``)."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = True, bias: bool = True):
        super().__init__()
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        weight = self["weight"] if "weight" in self else None
        bias = self["bias"] if "bias" in self else None
        return mx.fast.layer_norm(x, weight, bias, self.eps)


class RMSNorm(Module):
    r"""Root-mean-square normalization over the last axis:
    :math:`x / \sqrt{E[x^2] + \epsilon} \cdot \gamma`."""

    def __init__(self, dims: int, eps: float = 1e-5):
        super().__init__()
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x):
        return mx.fast.rms_norm(x, self["weight"], self.eps)


class GroupNorm(Module):
    r"""Normalizes each sample over its spatial axes and each of ``num_groups`` groups of
    features. Features are grouped as ``[..., dims // num_groups, num_groups]`` (strided), or
    as PyTorch does (contiguous groups) with ``pytorch_compatible``."""

    def __init__(
        self,
        num_groups: int,
        dims: int,
        eps: float = 1e-5,
        affine: bool = True,
        pytorch_compatible: bool = False,
    ):
        super().__init__()
        if affine:
            self.bias = mx.zeros((dims,))
            self.weight = mx.ones((dims,))
        self.num_groups = num_groups
        self.dims = dims
        self.eps = eps
        self.pytorch_compatible = pytorch_compatible

    def _extra_repr(self):
        return (
            f"{self.num_groups}, {self.dims}, eps={self.eps}, "
            f"affine={'weight' in self}, pytorch_compatible={self.pytorch_compatible}"
        )

    def _pytorch_compatible_group_norm(self, x):
        groups = self.num_groups
        batch, *rest, dims = x.shape
        group_size = dims // groups
        x = x.reshape(batch, -1, groups, group_size)
        x = x.transpose(0, 2, 1, 3).reshape(batch, groups, -1)
        x = mx.fast.layer_norm(x, None, None, self.eps)
        x = x.reshape(batch, groups, -1, group_size)
        return x.transpose(0, 2, 1, 3).reshape(batch, *rest, dims)

    def _group_norm(self, x):
        batch, *rest, dims = x.shape
        x = x.reshape(batch, -1, self.num_groups)
        mean = mx.mean(x, axis=1, keepdims=True)
        var = mx.var(x, axis=1, keepdims=True)
        x = (x - mean) * mx.rsqrt(var + self.eps)
        return x.reshape(batch, *rest, dims)

    def __call__(self, x):
        if self.pytorch_compatible:
            x = self._pytorch_compatible_group_norm(x)
        else:
            x = self._group_norm(x)
        return (self.weight * x + self.bias) if "weight" in self else x


class BatchNorm(Module):
    r"""Batch normalization of inputs ``[N, C]``, ``[N, L, C]`` or ``[N, H, W, C]`` over all
    axes but the last.

    In training mode it normalizes with the batch statistics and, with
    ``track_running_stats``, updates ``running_mean`` and ``running_var`` (frozen
    parameters) by ``momentum``; in evaluation mode it uses the running statistics.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = mx.ones((num_features,))
            self.bias = mx.zeros((num_features,))
        if self.track_running_stats:
            self.running_mean = mx.zeros((num_features,))
            self.running_var = mx.ones((num_features,))
            self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def unfreeze(self, *args, **kwargs):
        """Unfreezes as :meth:`Module.unfreeze`; the running statistics stay frozen."""
        super().unfreeze(*args, **kwargs)
        if self.track_running_stats:
            self.freeze(keys=["running_mean", "running_var"], recurse=False)
        return self

    def _extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={'weight' in self}, track_running_stats={self.track_running_stats}"
        )

    def _calc_stats(self, x: mx.array) -> Tuple[mx.array, mx.array]:
        axes = tuple(range(0, x.ndim - 1))
        return mx.mean(x, axis=axes), mx.var(x, axis=axes)

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim < 2 or x.ndim > 4:
            raise ValueError(
                f"Expected input tensor to have 2, 3 or 4 dimensions, but got {x.ndim}"
            )
        mean, var = self._calc_stats(x)
        if self.training and self.track_running_stats:
            mu = self.momentum
            self.running_mean = (1 - mu) * self.running_mean + mu * mean
            self.running_var = (1 - mu) * self.running_var + mu * var
        elif self.track_running_stats:
            mean = self.running_mean
            var = self.running_var
        x = (x - mean) * mx.rsqrt(var + self.eps)
        return (self.weight * x + self.bias) if "weight" in self else x
