"""Transforms of functions of a Module's parameters: value_and_grad and checkpoint, and the
gradient averaging of data-parallel training, average_gradients, as mlx.nn's."""

from functools import wraps
from typing import Any, Callable, Optional

import braid.core as mx
from braid.nn.layers.base import Module
from braid.utils import tree_flatten, tree_map, tree_unflatten


def value_and_grad(model: Module, fn: Callable):
    """``fn`` made to return ``(fn(*args, **kwargs), gradients)``, the gradients taken with
    respect to ``model.trainable_parameters()`` (a tree of the same structure)."""

    def call_with(params, *args, **kwargs):
        model.update(params)
        return fn(*args, **kwargs)

    value_grad_fn = mx.value_and_grad(call_with)

    @wraps(fn)
    def wrapped(*args, **kwargs):
        return value_grad_fn(model.trainable_parameters(), *args, **kwargs)

    return wrapped


def checkpoint(module: Module, fn: Optional[Callable] = None):
    """``fn`` (default: ``module`` itself) made to keep only its inputs and outputs for the
    backward pass and recompute the rest, with the module's trainable parameters as inputs
    too."""
    if fn is None:
        # The module, not its bound __call__: a later patch of __call__ is still used.
        fn = module

    def call_with(params, *args, **kwargs):
        module.update(params)
        return fn(*args, **kwargs)

    checkpointed = mx.checkpoint(call_with)

    @wraps(fn)
    def wrapped(*args, **kwargs):
        return checkpointed(module.trainable_parameters(), *args, **kwargs)

    return wrapped


def _all_sum_mean(x, group, communication_type, stream):
    # The mean over the group of x, communicated as communication_type when given.
    dtype = x.dtype
    if communication_type is not None:
        x = x.astype(communication_type)
    total = mx.distributed.all_sum(x, group=group, stream=stream)
    return total.astype(dtype) / group.size()


def average_gradients(
    gradients: Any,
    group: Optional[mx.distributed.Group] = None,
    all_reduce_size: int = 32 * 1024**2,
    communication_type: Optional[mx.Dtype] = None,
    communication_stream: Optional[mx.Stream] = None,
):
    """The mean of ``gradients`` (a tree of arrays, the same structure on every process) over
    the processes of ``group`` (default: ``mx.distributed.init()``), as mlx.nn's.

    Small arrays are concatenated into one all-reduce until their size in bytes reaches
    ``all_reduce_size`` (at most 0: one all-reduce per array); ``communication_type`` casts them
    for the communication, ``communication_stream`` runs it. On a group of one process (always
    the case in braid, which has no communication backend) ``gradients`` is returned as is."""
    group = group or mx.distributed.init()
    if group.size() == 1:
        return gradients

    def mean(x):
        return _all_sum_mean(x, group, communication_type, communication_stream)

    if all_reduce_size <= 0:
        return tree_map(mean, gradients)
    flat = tree_flatten(gradients)
    if not flat:
        return gradients
    dtypes = {g.dtype for _, g in flat}
    if len(dtypes) > 1:
        # Arrays of different dtypes cannot share one buffer.
        return average_gradients(gradients, group, 0, communication_type, communication_stream)
    itemsize = (communication_type or flat[0][1].dtype).size

    # Buckets of consecutive arrays, each closed once it holds all_reduce_size bytes or more.
    buckets, bucket, nbytes = [], [], 0
    for i, (_, g) in enumerate(flat):
        bucket.append(i)
        nbytes += g.size * itemsize
        if nbytes >= all_reduce_size:
            buckets.append(bucket)
            bucket, nbytes = [], 0
    if bucket:
        buckets.append(bucket)

    averaged = []
    for bucket in buckets:
        sizes = [flat[i][1].size for i in bucket]
        offsets = [sum(sizes[: k + 1]) for k in range(len(sizes) - 1)]
        joined = mean(mx.concatenate([flat[i][1].reshape(-1) for i in bucket]))
        for i, part in zip(bucket, mx.split(joined, offsets)):
            key, g = flat[i]
            averaged.append((key, part.reshape(g.shape)))
    return tree_unflatten(averaged)
