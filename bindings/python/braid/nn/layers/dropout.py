"""Dropout, Dropout2d and Dropout3d, as mlx.nn's: identity in evaluation mode."""

import braid.core as mx
from braid.nn.layers.base import Module


class _DropoutBase(Module):
    def __init__(self, p: float):
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self):
        return f"p={1 - self._p_1}"

    def _drop(self, x, mask_shape):
        mask = mx.random.bernoulli(self._p_1, mask_shape)
        # Scaling after the mask keeps the input's dtype (bfloat16 stays bfloat16).
        return (mask * x) * (1 / self._p_1)


class Dropout(_DropoutBase):
    """Zeroes each element with probability ``p`` (default 0.5) in training mode and scales
    the others by ``1 / (1 - p)``."""

    def __init__(self, p: float = 0.5):
        super().__init__(p)

    def __call__(self, x):
        if self._p_1 == 1 or not self.training:
            return x
        return self._drop(x, x.shape)


class Dropout2d(_DropoutBase):
    """Zeroes whole channels of inputs ``[N, H, W, C]`` or ``[H, W, C]`` with probability
    ``p`` in training mode and scales the others by ``1 / (1 - p)``."""

    def __init__(self, p: float = 0.5):
        super().__init__(p)

    def __call__(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(
                f"Received input with {x.ndim} dimensions. Expected 3 or 4 dimensions."
            )
        if self._p_1 == 1 or not self.training:
            return x
        mask_shape = list(x.shape)
        mask_shape[-2] = mask_shape[-3] = 1
        return self._drop(x, mask_shape)


class Dropout3d(_DropoutBase):
    """Zeroes whole channels of inputs ``[N, D, H, W, C]`` or ``[D, H, W, C]`` with
    probability ``p`` in training mode and scales the others by ``1 / (1 - p)``."""

    def __init__(self, p: float = 0.5):
        super().__init__(p)

    def __call__(self, x):
        if x.ndim not in (4, 5):
            raise ValueError(
                f"Received input with {x.ndim} dimensions. Expected 4 or 5 dimensions."
            )
        if self._p_1 == 1 or not self.training:
            return x
        mask_shape = list(x.shape)
        mask_shape[-2] = mask_shape[-3] = mask_shape[-4] = 1
        return self._drop(x, mask_shape)
