"""MultiHeadAttention and the Transformer encoder/decoder stacks, as mlx.nn's."""

import math
from typing import Any, Callable, Optional

import braid.core as mx
from braid.nn.layers.activations import relu
from braid.nn.layers.base import Module
from braid.nn.layers.dropout import Dropout
from braid.nn.layers.linear import Linear
from braid.nn.layers.normalization import LayerNorm
from braid.nn.utils import checkpoint


class MultiHeadAttention(Module):
    """Scaled dot-product attention over ``num_heads`` heads with projected queries, keys,
    values and output (no biases unless ``bias``).

    ``mask``, if given, is added to the scores and broadcasts with
    ``[batch, heads, queries, keys]`` (use -inf or a large negative value to block).
    """

    def __init__(
        self,
        dims: int,
        num_heads: int,
        query_input_dims: Optional[int] = None,
        key_input_dims: Optional[int] = None,
        value_input_dims: Optional[int] = None,
        value_dims: Optional[int] = None,
        value_output_dims: Optional[int] = None,
        bias: bool = False,
    ):
        super().__init__()
        if dims % num_heads != 0:
            raise ValueError(
                "The input feature dimensions should be divisible by the "
                f"number of heads ({dims} % {num_heads}) != 0"
            )
        query_input_dims = query_input_dims or dims
        key_input_dims = key_input_dims or dims
        value_input_dims = value_input_dims or key_input_dims
        value_dims = value_dims or dims
        value_output_dims = value_output_dims or dims

        self.num_heads = num_heads
        self.query_proj = Linear(query_input_dims, dims, bias=bias)
        self.key_proj = Linear(key_input_dims, dims, bias=bias)
        self.value_proj = Linear(value_input_dims, value_dims, bias=bias)
        self.out_proj = Linear(value_dims, value_output_dims, bias=bias)

    def __call__(self, queries, keys, values, mask=None):
        heads = self.num_heads

        def split_heads(x):
            return mx.unflatten(x, -1, (heads, -1)).transpose(0, 2, 1, 3)

        queries = split_heads(self.query_proj(queries))
        keys = split_heads(self.key_proj(keys))
        values = split_heads(self.value_proj(values))
        scale = math.sqrt(1 / queries.shape[-1])
        out = mx.fast.scaled_dot_product_attention(queries, keys, values, scale=scale, mask=mask)
        out = out.transpose(0, 2, 1, 3).flatten(-2, -1)
        return self.out_proj(out)

    @staticmethod
    def create_additive_causal_mask(N: int, dtype: mx.Dtype = mx.float32):
        """``[N, N]``: 0 on and below the diagonal, the dtype's lowest value above it."""
        positions = mx.arange(N)
        future = positions[:, None] < positions[None]
        return future.astype(dtype) * mx.finfo(dtype).min


class TransformerEncoderLayer(Module):
    """Self-attention and an MLP (``mlp_dims``, default ``4 * dims``), each with a residual
    connection and LayerNorm before (``norm_first``) or after."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout2(self.activation(self.linear1(x))))

    def __call__(self, x, mask):
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.attention(y, y, y, mask))
            return x + self._mlp(self.ln2(x))
        x = self.ln1(x + self.dropout1(self.attention(x, x, x, mask)))
        return self.ln2(x + self._mlp(x))


class TransformerEncoder(Module):
    """``num_layers`` :class:`TransformerEncoderLayer` and a final LayerNorm; ``checkpoint``
    recomputes each layer's activations in the backward pass instead of keeping them."""

    def __init__(
        self,
        num_layers: int,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation=relu,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        self.layers = [
            TransformerEncoderLayer(dims, num_heads, mlp_dims, dropout, activation, norm_first)
            for _ in range(num_layers)
        ]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x, mask):
        for layer in self.layers:
            layer = checkpoint(layer) if self.checkpoint else layer
            x = layer(x, mask)
        return self.ln(x)


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over ``memory`` and an MLP, each with a residual
    connection and LayerNorm before (``norm_first``) or after."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.self_attention = MultiHeadAttention(dims, num_heads)
        self.cross_attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.ln3 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout3(self.activation(self.linear1(x))))

    def __call__(self, x, memory, x_mask, memory_mask):
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.self_attention(y, y, y, x_mask))
            y = self.ln2(x)
            x = x + self.dropout2(self.cross_attention(y, memory, memory, memory_mask))
            return x + self._mlp(self.ln3(x))
        x = self.ln1(x + self.dropout1(self.self_attention(x, x, x, x_mask)))
        x = self.ln2(x + self.dropout2(self.cross_attention(x, memory, memory, memory_mask)))
        return self.ln3(x + self._mlp(x))


class TransformerDecoder(Module):
    """``num_layers`` :class:`TransformerDecoderLayer` and a final LayerNorm."""

    def __init__(
        self,
        num_layers: int,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation=relu,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        self.layers = [
            TransformerDecoderLayer(dims, num_heads, mlp_dims, dropout, activation, norm_first)
            for _ in range(num_layers)
        ]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x, memory, x_mask, memory_mask):
        for layer in self.layers:
            layer = checkpoint(layer) if self.checkpoint else layer
            x = layer(x, memory, x_mask, memory_mask)
        return self.ln(x)


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need": an encoder over
    ``src`` and a decoder over ``tgt`` attending to the encoder's output.

    ``custom_encoder`` and ``custom_decoder`` replace the standard stacks.
    """

    def __init__(
        self,
        dims: int = 512,
        num_heads: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        custom_encoder: Optional[Any] = None,
        custom_decoder: Optional[Any] = None,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        if custom_encoder is None:
            custom_encoder = TransformerEncoder(
                num_encoder_layers, dims, num_heads, mlp_dims, dropout, activation, norm_first,
                checkpoint,
            )
        if custom_decoder is None:
            custom_decoder = TransformerDecoder(
                num_decoder_layers, dims, num_heads, mlp_dims, dropout, activation, norm_first,
                checkpoint,
            )
        self.encoder = custom_encoder
        self.decoder = custom_decoder

    def __call__(self, src, tgt, src_mask, tgt_mask, memory_mask):
        memory = self.encoder(src, src_mask)
        return self.decoder(tgt, memory, tgt_mask, memory_mask)
