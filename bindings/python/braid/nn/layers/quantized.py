"""Quantized Linear and Embedding layers and nn.quantize, as mlx.nn's.

The weights are packed by braid.core.quantize ("affine" keeps scales and biases per group of
``group_size`` values along the last axis; the float modes keep scales only).
"""

import math
from typing import Callable, Optional, Union

import braid.core as mx
from braid.nn.layers.base import Module
from braid.utils import tree_map_with_path

# Each mode's default (group_size, bits), as braid.core.quantize applies them.
_MODE_DEFAULTS = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}


def _defaults_for_mode(mode, group_size, bits):
    if mode not in _MODE_DEFAULTS:
        raise ValueError(
            f"Unsupported quantization mode '{mode}'; expected one of {list(_MODE_DEFAULTS)}."
        )
    default_group_size, default_bits = _MODE_DEFAULTS[mode]
    return group_size or default_group_size, bits or default_bits


def _quantize_weight(weight, group_size, bits, mode):
    """(packed weight, scales, biases or None)."""
    weight_q, scales, *biases = mx.quantize(weight, group_size, bits, mode=mode)
    return weight_q, scales, (biases[0] if biases else None)


def _quantized_product(module, x):
    """``x @ dequantize(weight).T`` with ``module``'s weight, scales, biases, group size, bits
    and mode."""
    return mx.quantized_matmul(
        x,
        module["weight"],
        scales=module["scales"],
        biases=module.get("biases"),
        transpose=True,
        group_size=module.group_size,
        bits=module.bits,
        mode=module.mode,
    )


def _linear_repr(module, in_dims, out_dims):
    """The repr fields of a quantized linear layer."""
    return (
        f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in module}, "
        f"group_size={module.group_size}, bits={module.bits}, mode={module.mode}"
    )


def quantize(
    model: Module,
    group_size: Optional[int] = None,
    bits: Optional[int] = None,
    *,
    mode: str = "affine",
    class_predicate: Optional[Callable[[str, Module], Union[bool, dict]]] = None,
):
    """Replaces, in place, the leaf modules of ``model`` selected by
    ``class_predicate(path, module)`` with their ``to_quantized(...)`` forms.

    The predicate returns True (quantize with ``group_size``, ``bits`` and ``mode``), a dict
    of ``to_quantized`` arguments, or False. By default every leaf with a ``to_quantized``
    method (Linear, Embedding) is quantized.
    """
    class_predicate = class_predicate or (lambda _, m: hasattr(m, "to_quantized"))

    def maybe_quantize(path, module):
        choice = class_predicate(path, module)
        if not choice:
            return module
        if not hasattr(module, "to_quantized"):
            raise ValueError(f"Unable to quantize model of type {type(module)}")
        if isinstance(choice, bool):
            return module.to_quantized(group_size=group_size, bits=bits, mode=mode)
        if isinstance(choice, dict):
            return module.to_quantized(**choice)
        raise ValueError(
            "``class_predicate`` must return a bool or a dict of parameters to pass to "
            "``to_quantized``"
        )

    leaves = tree_map_with_path(maybe_quantize, model.leaf_modules(), is_leaf=Module.is_module)
    model.update_modules(leaves)


class QuantizedEmbedding(Module):
    """:class:`Embedding` with a quantized weight (frozen). Build one from an Embedding with
    :meth:`from_embedding`."""

    def __init__(
        self,
        num_embeddings: int,
        dims: int,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / dims)
        weight = mx.random.normal(shape=(num_embeddings, dims), scale=scale)
        self.weight, self.scales, self.biases = _quantize_weight(
            weight, self.group_size, self.bits, mode
        )
        self.num_embeddings = num_embeddings
        self.dims = dims
        self.freeze()

    def __call__(self, x):
        biases = self.get("biases")
        return mx.dequantize(
            self["weight"][x],
            scales=self["scales"][x],
            biases=None if biases is None else biases[x],
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    def as_linear(self, x):
        """``x @ dequantize(weight).T``: the embedding as the output projection."""
        return _quantized_product(self, x)

    def _extra_repr(self):
        return (
            f"{self.num_embeddings}, {self.dims}, group_size={self.group_size}, "
            f"bits={self.bits}, mode={self.mode}"
        )

    @classmethod
    def from_embedding(
        cls,
        embedding_layer: Module,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
    ):
        """The quantized form of ``embedding_layer``."""
        num_embeddings, dims = embedding_layer.weight.shape
        layer = cls(num_embeddings, dims, group_size, bits, mode=mode)
        layer.weight, layer.scales, layer.biases = _quantize_weight(
            embedding_layer.weight, layer.group_size, layer.bits, mode
        )
        return layer


class QuantizedLinear(Module):
    """:class:`Linear` with a quantized weight. Its parameters start frozen. Build one from a
    Linear with :meth:`from_linear`."""

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        self.weight, self.scales, self.biases = _quantize_weight(
            weight, self.group_size, self.bits, mode
        )
        if bias:
            self.bias = mx.zeros((output_dims,))
        self.freeze()

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape
        return _linear_repr(self, in_dims * 32 // self.bits, out_dims)

    def __call__(self, x):
        x = _quantized_product(self, x)
        if "bias" in self:
            x = x + self["bias"]
        return x

    @classmethod
    def from_linear(
        cls,
        linear_layer: Module,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
    ):
        """The quantized form of ``linear_layer``."""
        output_dims, input_dims = linear_layer.weight.shape
        layer = cls(input_dims, output_dims, False, group_size, bits, mode=mode)
        layer.weight, layer.scales, layer.biases = _quantize_weight(
            linear_layer.weight, layer.group_size, layer.bits, mode
        )
        if "bias" in linear_layer:
            layer.bias = linear_layer.bias
        return layer


class QQLinear(Module):
    """A linear map (no bias) computed by :func:`braid.core.qqmm`, which quantizes the input
    as well as the weight ("nvfp4" or "mxfp8").

    In training mode the weight is kept in floating point (quantized on the fly, so it has
    gradients); in evaluation mode it is stored quantized with its ``scales``. ``train()``
    and ``eval()`` switch between the two. Build one from a Linear with :meth:`from_linear`.
    """

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "nvfp4",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        self.weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        self._quantized = False

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape
        if self._quantized:
            in_dims = in_dims * 32 // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, group_size={self.group_size}, "
            f"bits={self.bits}, mode={self.mode}"
        )

    def quantize(self):
        """Stores the weight quantized (evaluation form); a no-op when it already is."""
        if not self._quantized:
            self.weight, self.scales = mx.quantize(
                self.weight, self.group_size, self.bits, mode=self.mode
            )
            self._quantized = True

    def dequantize(self):
        """Stores the weight in floating point (training form); a no-op when it already is."""
        if self._quantized:
            self.weight = mx.dequantize(
                self.weight,
                scales=self.scales,
                group_size=self.group_size,
                bits=self.bits,
                mode=self.mode,
            )
            del self.scales
            self._quantized = False

    def _set_training_mode(self, mode: bool):
        super()._set_training_mode(mode)
        if mode:
            self.dequantize()
        else:
            self.quantize()

    def __call__(self, x):
        return mx.qqmm(
            x,
            self["weight"],
            scales=self.get("scales"),
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    @classmethod
    def from_linear(
        cls,
        linear_layer: Module,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "nvfp4",
    ):
        """A QQLinear with ``linear_layer``'s weight, in the same mode (training or not).
        Linear layers with a bias are not supported (NotImplementedError)."""
        output_dims, input_dims = linear_layer.weight.shape
        if linear_layer.get("bias") is not None:
            raise NotImplementedError("QQLinear does not support bias yet.")
        layer = cls(input_dims, output_dims, group_size, bits, mode=mode)
        layer.weight = linear_layer.weight
        layer.train(linear_layer.training)
        return layer
