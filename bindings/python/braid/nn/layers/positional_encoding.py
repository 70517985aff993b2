"""Positional encodings: RoPE, SinusoidalPositionalEncoding and ALiBi, as mlx.nn's."""

import math
from typing import Optional

import braid.core as mx
from braid.nn.layers.base import Module


class RoPE(Module):
    """Rotary positional encoding of the first ``dims`` features (the rest pass through).

    The default rotates pairs ``(i, i + dims/2)``; ``traditional`` rotates consecutive pairs.
    Position ``p`` (from ``offset``) turns pair ``i`` by ``scale * p * base^(-2i/dims)``.
    """

    def __init__(
        self, dims: int, traditional: bool = False, base: float = 10000, scale: float = 1.0
    ):
        super().__init__()
        self.dims = dims
        self.traditional = traditional
        self.base = base
        self.scale = scale

    def _extra_repr(self):
        return f"{self.dims}, traditional={self.traditional}"

    def __call__(self, x, offset: int = 0):
        return mx.fast.rope(
            x,
            self.dims,
            traditional=self.traditional,
            base=self.base,
            scale=self.scale,
            offset=offset,
        )


class SinusoidalPositionalEncoding(Module):
    """Sinusoidal embeddings of positions: ``dims // 2`` frequencies spaced geometrically
    from ``max_freq`` down to ``min_freq``, giving ``[sin, cos]`` (``[cos, sin]`` with
    ``cos_first``) times ``scale`` (default ``sqrt(2 / dims)``); ``full_turns`` multiplies
    the frequencies by 2 pi."""

    def __init__(
        self,
        dims: int,
        min_freq: float = 0.0001,
        max_freq: float = 1,
        scale: Optional[float] = None,
        cos_first: bool = False,
        full_turns: bool = False,
    ):
        super().__init__()
        half = dims // 2
        # Fraction from 1 (first frequency, max_freq) to 0 (last, min_freq).
        fraction = 1 - mx.arange(0, half) / (half - 1)
        log_min = math.log(min_freq)
        log_max = math.log(max_freq)
        sigmas = mx.exp(fraction * (log_max - log_min) + log_min)
        if full_turns:
            sigmas = sigmas * (2 * math.pi)
        # A leading underscore keeps the frequencies out of the parameters.
        self._sigmas = sigmas
        self.scale = scale or (2 / dims) ** 0.5
        self.cos_first = cos_first

    def __call__(self, x):
        angles = x[..., None] * self._sigmas
        parts = [mx.sin(angles), mx.cos(angles)]
        if self.cos_first:
            parts.reverse()
        y = mx.concatenate(parts, axis=-1)
        if self.scale != 1:
            y = y * self.scale
        return y


class ALiBi(Module):
    """Attention with linear biases: adds ``-slope_h * |i - j|`` to the attention scores
    ``[B, H, T_q, T_k]`` of head ``h`` (slopes ``2^(-8h/H)``), plus ``mask`` if given."""

    # (key, mask) in one attribute: threads calling at once see a matching pair.
    _alibi_cache = (None, None)

    @classmethod
    def create_alibi_matrix(
        cls,
        q_sequence_length: int,
        k_sequence_length: int,
        num_heads: int,
        offset: int,
        dtype=mx.float32,
    ):
        key = (q_sequence_length, k_sequence_length, num_heads, offset, dtype)
        cached_key, cached_mask = cls._alibi_cache
        if key == cached_key:
            return cached_mask
        queries = mx.arange(offset, q_sequence_length)
        keys = mx.arange(0, k_sequence_length)
        distance = -mx.abs(queries[:, None] - keys[None, :])
        distance = mx.expand_dims(distance, axis=(0, 1))
        mask = (distance * ALiBi.create_alibi_slope(num_heads=num_heads)).astype(dtype)
        cls._alibi_cache = (key, mask)
        return mask

    @staticmethod
    def create_alibi_slope(num_heads):
        """The slopes ``[H, 1, 1]``: ``(2^8)^(-h/H)`` for ``h = 1..H``."""
        base = (2**8) ** (1 / num_heads)
        slopes = mx.power(base, -mx.arange(1, num_heads + 1))
        return mx.expand_dims(slopes, axis=(-1, -2))

    def __call__(self, attention_scores, offset=0, mask=None):
        bias = ALiBi.create_alibi_matrix(
            q_sequence_length=attention_scores.shape[-2] + offset,
            k_sequence_length=attention_scores.shape[-1],
            num_heads=attention_scores.shape[1],
            offset=offset,
            dtype=attention_scores.dtype,
        )
        if mask is not None:
            bias = bias + mask
        return attention_scores + bias
