"""Embedding, a lookup table of vectors, as mlx.nn.Embedding."""

import math

import braid.core as mx
from braid.nn.layers.base import Module
from braid.nn.layers.quantized import QuantizedEmbedding


class Embedding(Module):
    """Maps integer tokens to vectors: ``weight`` of shape ``[num_embeddings, dims]`` drawn
    from a normal distribution with standard deviation ``1 / sqrt(dims)``."""

    def __init__(self, num_embeddings: int, dims: int):
        super().__init__()
        scale = math.sqrt(1 / dims)
        self.weight = mx.random.normal(shape=(num_embeddings, dims), scale=scale)

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"

    def __call__(self, x):
        return self.weight[x]

    def as_linear(self, x):
        """``x @ weight.T``: the embedding used as the output projection (tied weights)."""
        return x @ self.weight.T

    def to_quantized(self, group_size: int = None, bits: int = None, mode: str = "affine"):
        """A :class:`QuantizedEmbedding` approximating this layer."""
        return QuantizedEmbedding.from_embedding(self, group_size, bits, mode=mode)
