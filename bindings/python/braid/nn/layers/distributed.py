"""Layers and helpers that split a model across the processes of a distributed group, as
mlx.nn.layers.distributed: the tensor-parallel linear layers, ``shard_linear`` and
``shard_inplace``, ``sum_gradients``, and ``FullyShardedModule``/``fully_shard``.

Tensor parallelism pairs two layers around one collective: an AllToShardedLinear holds this
rank's rows of the weight (its slice of the output features, computed from the full input), a
ShardedToAllLinear holds this rank's columns (its slice of the input features) and sums the
partial products over the group. Slices are taken by rank order, segment by segment.

braid has only the one-process group (``mx.distributed.init()``: rank 0, size 1), on which
every layer here computes what the unsharded layer computes. The layers take any object with
``size()`` and ``rank()`` as ``group`` and call ``mx.distributed``'s collectives with it, so a
stand-in group with stand-in collectives exercises the sharded paths.
"""

import math
from functools import lru_cache
from typing import Callable, Optional, Union

import braid.core as mx
from braid.nn.layers.base import Module
from braid.nn.layers.linear import Linear
from braid.nn.layers.quantized import _linear_repr, _quantized_product, _quantize_weight
from braid.utils import tree_flatten, tree_map_with_path, tree_unflatten


@lru_cache
def sum_gradients(group):
    """The identity whose gradient is summed over ``group`` (``mx.distributed.all_sum`` of the
    cotangent), as mlx.nn's; the plain identity on a group of one process. One function is
    kept per group."""
    if group.size() == 1:
        return lambda x: x

    @mx.custom_function
    def identity(x):
        return x

    @identity.vjp
    def identity(x, cotangent, output):
        return mx.distributed.all_sum(cotangent, group=group)

    return identity


# --- Splitting parameters by rank ------------------------------------------------------------


def _split(weight, segments, axis):
    """mx.split along ``axis`` into ``segments``: a count, split indices, or fractions of the
    axis length (as MLX's, a list of floats is read as fractions)."""
    if isinstance(segments, int) or isinstance(segments[0], int):
        return mx.split(weight, segments, axis=axis)
    length = weight.shape[axis]
    return mx.split(weight, [int(f * length) for f in segments], axis=axis)


def _parse_spec(spec):
    """(axis, segments) from a sharding predicate's answer: an axis, or (axis, segments)."""
    if isinstance(spec, int):
        return spec, 1
    if isinstance(spec, tuple):
        return spec
    raise ValueError("The sharding function should return int or tuple[int, list]")


def _shard(parameters, sharding_predicate, group=None):
    """``parameters`` with every array the predicate names replaced by this rank's part.

    ``sharding_predicate(path, array)`` answers None (keep the array whole), an axis, or
    ``(axis, segments)``: the axis is cut into ``segments`` first and each segment into
    ``group.size()`` equal pieces; this rank keeps its piece of every segment, concatenated.
    """
    group = group or mx.distributed.init()
    size, rank = group.size(), group.rank()

    def shard_one(path, value):
        if not isinstance(value, mx.array):
            return value
        spec = sharding_predicate(path, value)
        if spec is None:
            return value
        axis, segments = _parse_spec(spec)
        pieces = [_split(segment, size, axis)[rank] for segment in _split(value, segments, axis)]
        # A copy, so that the full array can be freed once every layer is sharded.
        return mx.contiguous(mx.concatenate(pieces, axis=axis))

    return tree_map_with_path(shard_one, parameters)


def _all_to_sharded(segments):
    # Rows of a weight (the output features; the first of the last two axes) and the last axis
    # of its bias (also for a stacked bias, one row per expert).
    def predicate(path, weight):
        if path.endswith("bias"):
            return -1, segments
        return max(weight.ndim - 2, 0), segments

    return predicate


def _sharded_to_all(segments):
    # Columns of a weight (the input features); the bias is added once, after the sum.
    def predicate(path, weight):
        if path.endswith("bias"):
            return None
        return -1, segments

    return predicate


def _check_sharding(sharding):
    if sharding not in ("all-to-sharded", "sharded-to-all"):
        raise ValueError(
            f"Sharding type {sharding=} not supported, "
            "choose one of 'all-to-sharded' or 'sharded-to-all'"
        )


def shard_inplace(
    module: Module,
    sharding: Union[str, Callable],
    *,
    segments: Union[int, list] = 1,
    group: Optional[mx.distributed.Group] = None,
):
    """Replaces ``module``'s parameters with this rank's shards of them, as mlx.nn's.

    ``sharding`` is "all-to-sharded" (rows of weights and biases), "sharded-to-all" (columns
    of weights, biases whole), each with ``segments``, or a callable ``(path, array)`` that
    answers None, an axis or ``(axis, segments)``; e.g. 3 segments for a fused QKV weight.
    ``segments`` is a count, split indices or fractions. The module's code is unchanged: it
    must do any communication itself. ``group`` defaults to ``mx.distributed.init()``.
    """
    if isinstance(sharding, str):
        _check_sharding(sharding)
        if sharding == "all-to-sharded":
            sharding = _all_to_sharded(segments)
        else:
            sharding = _sharded_to_all(segments)
    module.update(_shard(module.parameters(), sharding, group))


def shard_linear(
    module: Module,
    sharding: str,
    *,
    segments: Union[int, list] = 1,
    group: Optional[mx.distributed.Group] = None,
):
    """A new sharded layer made from ``module`` (left unchanged), as mlx.nn's: an
    :class:`AllToShardedLinear` or :class:`ShardedToAllLinear` from a :class:`Linear`, their
    quantized forms from anything else (a :class:`QuantizedLinear`). ``sharding`` is
    "all-to-sharded" or "sharded-to-all"; ``segments`` and ``group`` as in
    :func:`shard_inplace`."""
    _check_sharding(sharding)
    if isinstance(module, Linear):
        cls = AllToShardedLinear if sharding == "all-to-sharded" else ShardedToAllLinear
        return cls.from_linear(module, segments=segments, group=group)
    if sharding == "all-to-sharded":
        cls = QuantizedAllToShardedLinear
    else:
        cls = QuantizedShardedToAllLinear
    return cls.from_quantized_linear(module, segments=segments, group=group)


# --- Tensor-parallel linear layers ------------------------------------------------------------


def _local_outputs(output_dims, size):
    if output_dims % size != 0:
        raise ValueError(f"Cannot shard the output of size {output_dims} across {size} devices.")
    return output_dims // size


def _local_inputs(input_dims, size):
    if input_dims % size != 0:
        raise ValueError(f"The input of size {input_dims} cannot be sharded across {size} devices.")
    return input_dims // size


def _uniform(scale, shape):
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


class _Sharded(Module):
    """What the sharded linear layers share. A subclass shards the output features
    (``_shards_outputs``: this rank's rows of the weight and of the bias) or the input
    features (its columns of the weight; the bias whole)."""

    _shards_outputs: bool

    def _local_shape(self, input_dims, output_dims):
        """This rank's weight shape [outputs, inputs]."""
        if self._shards_outputs:
            return _local_outputs(output_dims, self.group.size()), input_dims
        return output_dims, _local_inputs(input_dims, self.group.size())

    def _full_dims(self, in_dims, out_dims):
        """The unsharded (input_dims, output_dims) of a local weight's."""
        if self._shards_outputs:
            return in_dims, out_dims * self.group.size()
        return in_dims * self.group.size(), out_dims

    @classmethod
    def _predicate(cls, segments):
        return _all_to_sharded(segments) if cls._shards_outputs else _sharded_to_all(segments)

    def _with_bias(self, x):
        return x + self["bias"] if "bias" in self else x


class _ShardedLinear(_Sharded):
    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group: Optional[mx.distributed.Group] = None,
    ):
        super().__init__()
        self.group = group or mx.distributed.init()
        local_outputs, local_inputs = self._local_shape(input_dims, output_dims)
        scale = math.sqrt(1.0 / input_dims)
        self.weight = _uniform(scale, (local_outputs, local_inputs))
        if bias:
            self.bias = _uniform(scale, (local_outputs,))

    def _extra_repr(self) -> str:
        in_dims, out_dims = self._full_dims(self.weight.shape[1], self.weight.shape[0])
        return f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}"

    @classmethod
    def from_linear(
        cls,
        linear_layer: Module,
        *,
        segments: Union[int, list] = 1,
        group: Optional[mx.distributed.Group] = None,
    ):
        """This rank's part of ``linear_layer`` (rows of the weight and bias, or columns of the
        weight and the whole bias), taken per segment."""
        group = group or mx.distributed.init()
        output_dims, input_dims = linear_layer.weight.shape
        layer = cls(input_dims, output_dims, hasattr(linear_layer, "bias"), group)
        layer.update(_shard(linear_layer.parameters(), cls._predicate(segments), group))
        return layer


class AllToShardedLinear(_ShardedLinear):
    """A :class:`Linear` of which each process of ``group`` computes its slice of the output
    features from the full input (the output stays sharded), as mlx.nn's. The gradient of the
    input is summed over the group (:func:`sum_gradients`).

    ``weight`` is ``[output_dims / size, input_dims]``, ``bias`` ``[output_dims / size]``;
    ``output_dims`` must divide by the group size (ValueError). ``group`` defaults to
    ``mx.distributed.init()``. Build one from a Linear with :meth:`from_linear`.
    """

    _shards_outputs = True

    def __call__(self, x: mx.array) -> mx.array:
        x = sum_gradients(self.group)(x)
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T


class ShardedToAllLinear(_ShardedLinear):
    """A :class:`Linear` whose input features are split over the processes of ``group``: each
    multiplies its slice by its columns of the weight, the products are summed over the group
    (``mx.distributed.all_sum``) and the bias is added, so every process gets the full output,
    as mlx.nn's.

    ``weight`` is ``[output_dims, input_dims / size]``, ``bias`` ``[output_dims]``;
    ``input_dims`` must divide by the group size (ValueError). Build one from a Linear with
    :meth:`from_linear`.
    """

    _shards_outputs = False

    def __call__(self, x: mx.array) -> mx.array:
        return self._with_bias(mx.distributed.all_sum(x @ self["weight"].T, group=self.group))


class _QuantizedSharded(_Sharded):
    """What the two quantized layers share besides :class:`_Sharded`: a frozen weight
    quantized by ``mx.quantize`` (``weight``, ``scales`` and, in "affine" mode, ``biases``)
    and its product with the input."""

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group_size: int = 64,
        bits: int = 4,
        mode: str = "affine",
        group: Optional[mx.distributed.Group] = None,
    ):
        super().__init__()
        self.group_size = group_size
        self.bits = bits
        self.mode = mode
        self.group = group or mx.distributed.init()
        local_outputs, local_inputs = self._local_shape(input_dims, output_dims)
        weight = _uniform(math.sqrt(1.0 / input_dims), (local_outputs, local_inputs))
        self.weight, self.scales, self.biases = _quantize_weight(weight, group_size, bits, mode)
        if bias:
            self.bias = mx.zeros((local_outputs,))
        self.freeze()

    def unfreeze(self, *args, **kwargs):
        """Unfreezes the sub-modules as asked; this layer's own parameters stay frozen."""
        super().unfreeze(*args, **kwargs)
        self.freeze(recurse=False)

    def _extra_repr(self) -> str:
        out_dims, packed_inputs = self.weight.shape
        return _linear_repr(self, *self._full_dims(packed_inputs * 32 // self.bits, out_dims))

    @classmethod
    def from_quantized_linear(
        cls,
        quantized_linear_layer: Module,
        *,
        segments: Union[int, list] = 1,
        group: Optional[mx.distributed.Group] = None,
    ):
        """This rank's part of ``quantized_linear_layer`` (rows or columns, taken per
        segment), with its group size, bits and mode."""
        group = group or mx.distributed.init()
        layer = quantized_linear_layer
        output_dims, packed_inputs = layer.weight.shape
        sharded = cls(
            packed_inputs * 32 // layer.bits,
            output_dims,
            hasattr(layer, "bias"),
            group_size=layer.group_size,
            bits=layer.bits,
            mode=getattr(layer, "mode", "affine"),
            group=group,
        )
        sharded.update(_shard(layer.parameters(), cls._predicate(segments), group))
        return sharded


class QuantizedAllToShardedLinear(_QuantizedSharded):
    """:class:`AllToShardedLinear` with a quantized weight (frozen, as in
    :class:`QuantizedLinear`), as mlx.nn's: this rank's rows of the packed weight, of its
    ``scales`` and ``biases`` and of ``bias``. ``group_size``, ``bits`` and ``mode`` are
    :func:`braid.core.quantize`'s. Build one with :meth:`from_quantized_linear`.
    """

    _shards_outputs = True

    def __call__(self, x: mx.array) -> mx.array:
        return self._with_bias(_quantized_product(self, sum_gradients(self.group)(x)))


class QuantizedShardedToAllLinear(_QuantizedSharded):
    """:class:`ShardedToAllLinear` with a quantized weight (frozen), as mlx.nn's: this rank's
    columns of the packed weight and of its ``scales`` and ``biases`` (so the input slice must
    hold whole quantization groups), and the whole ``bias``. Build one with
    :meth:`from_quantized_linear`.
    """

    _shards_outputs = False

    def __call__(self, x: mx.array) -> mx.array:
        return self._with_bias(mx.distributed.all_sum(_quantized_product(self, x), group=self.group))


# --- Fully sharded modules ----------------------------------------------------------------------


def _own_parameter(module, key, value):
    # A FullyShardedModule inside gathers its own parameters; the outer one leaves them alone.
    if isinstance(value, FullyShardedModule):
        return False
    return Module.valid_parameter_filter(module, key, value)


def _gather_function(group, full_shapes, compute_dtype):
    """``gather(shards)``: the full arrays from every rank's shards (one all_gather for all of
    them), optionally cast to ``compute_dtype``. Its gradient is the mean over the group of
    the full gradients, this rank's rows of it (one sum_scatter), in each shard's dtype."""
    size = group.size()
    shard_shapes = [(shape[0] // size,) + tuple(shape[1:]) for shape in full_shapes]
    shard_sizes = [math.prod(shape) for shape in shard_shapes]
    offsets = [sum(shard_sizes[: i + 1]) for i in range(len(shard_sizes) - 1)]

    def cast(x, dtype):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @mx.custom_function
    def gather(shards):
        # Row r of the gathered [size, total] array is rank r's shards, flattened side by side.
        row = mx.concatenate([cast(s.reshape(1, -1), compute_dtype) for s in shards], axis=1)
        table = mx.distributed.all_gather(row, group=group)
        parts = mx.split(table, offsets, axis=1)
        return [part.reshape(shape) for part, shape in zip(parts, full_shapes)]

    @gather.vjp
    def gather(shards, cotangents, outputs):
        table = mx.concatenate([c.reshape(size, -1) for c in cotangents], axis=1)
        row = mx.distributed.sum_scatter(table, group=group) / size
        parts = mx.split(row, offsets, axis=1)
        return [
            cast(part.reshape(shape), shard.dtype)
            for part, shape, shard in zip(parts, shard_shapes, shards)
        ]

    return gather


class FullyShardedModule(Module):
    """Wraps ``module`` so that each process of ``group`` keeps only its shard of every
    parameter (rows along axis 0, which must divide by the group size; ValueError, as for a
    scalar parameter), as mlx.nn's. A call gathers the full parameters (``all_gather``, cast
    to ``compute_dtype`` when given), runs the module and puts the shards back; the gradient of
    each shard is the group's mean gradient for its rows (``sum_scatter``), so each process
    stores and updates only its shards. Parameters of FullyShardedModules inside are left to
    them. Wrap a module with :func:`fully_shard`.
    """

    def __init__(
        self,
        module: Module,
        group: Optional[mx.distributed.Group] = None,
        compute_dtype: Optional[mx.Dtype] = None,
    ):
        super().__init__()
        group = group or mx.distributed.init()
        size = group.size()
        own = module.filter_and_map(_own_parameter)
        flat = tree_flatten(own)
        for path, value in flat:
            if value.ndim == 0:
                raise ValueError(f"Cannot shard parameter '{path}' because it is a scalar.")
            if value.shape[0] % size != 0:
                raise ValueError(
                    f"Cannot shard parameter '{path}' with shape {value.shape} across {size} "
                    f"devices: axis 0 must be divisible by {size}."
                )
        # Plain attributes (not dict entries), so they are neither parameters nor children.
        object.__setattr__(self, "_paths", [path for path, _ in flat])
        module.update(_shard(own, lambda path, value: 0, group))
        self.module = module
        self._gather = _gather_function(group, [v.shape for _, v in flat], compute_dtype)

    def _extra_repr(self) -> str:
        return f"num_sharded_params={len(self._paths)}"

    def _call_gathered(self, fn, *args, **kwargs):
        shards = self.module.filter_and_map(_own_parameter)
        fulls = self._gather([value for _, value in tree_flatten(shards)])
        self.module.update(tree_unflatten(list(zip(self._paths, fulls))))
        try:
            return fn(*args, **kwargs)
        finally:
            self.module.update(shards)

    def __call__(self, *args, **kwargs):
        return self._call_gathered(self.module, *args, **kwargs)

    def as_linear(self, *args, **kwargs):
        """The wrapped module's ``as_linear`` (an embedding as output projection), gathered."""
        return self._call_gathered(self.module.as_linear, *args, **kwargs)


def fully_shard(
    module: Module,
    *,
    group: Optional[mx.distributed.Group] = None,
    compute_dtype: Optional[mx.Dtype] = None,
) -> Module:
    """``module`` wrapped in a :class:`FullyShardedModule`, as mlx.nn's; ``module`` itself on a
    group of one process (always the case in braid's own group), when it already is one, or
    when it has no parameters of its own to shard."""
    group = group or mx.distributed.init()
    if group.size() == 1 or isinstance(module, FullyShardedModule):
        return module
    wrapped = FullyShardedModule(module, group=group, compute_dtype=compute_dtype)
    return wrapped if wrapped._paths else module
