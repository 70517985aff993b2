"""Transforms of functions of a Module's parameters: value_and_grad and checkpoint, as
mlx.nn's."""

from functools import wraps
from typing import Callable, Optional

import braid.core as mx
from braid.nn.layers.base import Module


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
