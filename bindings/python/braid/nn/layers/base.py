"""The Module base class of braid.nn, as mlx.nn.Module.

A Module is a dict: its arrays, sub-modules and the lists and dicts holding them are dict
entries (reachable as attributes too), everything else is a plain attribute. That makes a
model a Python tree which braid.core's transforms (grad, value_and_grad, eval) take directly.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any, Callable, List, Optional, Tuple, Union

import braid.core as mx
from braid.utils import tree_flatten, tree_unflatten


def _is_empty_placeholder(value) -> bool:
    return isinstance(value, dict) and len(value) == 0


class Module(dict):
    """Base class of the layers of braid.nn and of user models.

    Arrays assigned to a Module (directly or inside lists and dicts) are its parameters;
    :meth:`parameters` collects them as a tree. Parameters are trainable unless frozen with
    :meth:`freeze`; :func:`braid.nn.value_and_grad` differentiates the trainable ones.
    """

    __call__: Callable

    def __init__(self):
        self._no_grad = set()
        self._training = True

    @property
    def training(self):
        """True in training mode (see :meth:`train`)."""
        return self._training

    @property
    def state(self):
        """The module itself: every member, parameters included. Changes to it change the
        module (unlike :meth:`parameters`, which builds a new tree)."""
        return self

    def _extra_repr(self) -> str:
        return ""

    def __repr__(self):
        children = tree_flatten(self.children(), is_leaf=self.is_module)
        text = f"{type(self).__name__}({self._extra_repr()}"
        for key, child in children:
            text += "\n" + textwrap.indent(f"({key}): {child!r}", prefix="  ")
        if children:
            text += "\n"
        return text + ")"

    def __getattr__(self, key: str):
        if key in self:
            return self[key]
        raise AttributeError(f"{type(self)!r} has no attribute {key!r}")

    def __setattr__(self, key: str, value: Any):
        if isinstance(value, (mx.array, dict, list, tuple)):
            # A plain attribute of the same name would hide the entry from attribute access.
            if key in self.__dict__:
                object.__delattr__(self, key)
            self[key] = value
        else:
            object.__setattr__(self, key, value)
            self.pop(key, None)

    def __delattr__(self, key: str):
        if key in self:
            del self[key]
        else:
            object.__delattr__(self, key)

    # --- Weights on disk ------------------------------------------------------------------

    def load_weights(
        self,
        file_or_weights: Union[str, List[Tuple[str, mx.array]]],
        strict: bool = True,
    ) -> Module:
        """Sets the parameters from a ``.npz`` or ``.safetensors`` file or a list of
        ``(dotted name, array)`` pairs.

        With ``strict`` the names must be exactly the model's parameters and the shapes must
        match (ValueError otherwise); without it only the given names are set.
        """
        weights = file_or_weights
        if isinstance(weights, (str, os.PathLike)):
            weights = list(mx.load(os.fspath(weights)).items())

        if strict:
            new_weights = dict(weights)
            current = tree_flatten(self.parameters(), destination={})
            extras = new_weights.keys() - current.keys()
            if extras:
                names = ",\n".join(sorted(extras))
                raise ValueError(f"Received {len(extras)} parameters not in model: \n{names}.")
            missing = current.keys() - new_weights.keys()
            if missing:
                names = ",\n".join(sorted(missing))
                raise ValueError(f"Missing {len(missing)} parameters: \n{names}.")
            for name, value in current.items():
                new_value = new_weights[name]
                if not isinstance(new_value, mx.array):
                    raise ValueError(
                        f"Expected mx.array but received {type(new_value)} for parameter {name}"
                    )
                if new_value.shape != value.shape:
                    raise ValueError(
                        f"Expected shape {value.shape} but received shape {new_value.shape} "
                        f"for parameter {name}"
                    )

        if len(weights) != 0:
            self.update(tree_unflatten(weights), strict=False)
        return self

    def save_weights(self, file: str):
        """Saves the parameters: ``.npz`` files with :func:`braid.core.savez`, ``.safetensors``
        files with :func:`braid.core.save_safetensors`."""
        file = os.fspath(file)
        params = tree_flatten(self.parameters(), destination={})
        if file.endswith(".npz"):
            mx.savez(file, **params)
        elif file.endswith(".safetensors"):
            mx.save_safetensors(file, params)
        else:
            raise ValueError(
                f"Unsupported file extension for {file}. Use '.npz' or '.safetensors'."
            )

    # --- Filters and traversal -----------------------------------------------------------

    @staticmethod
    def is_module(value):
        return isinstance(value, Module)

    @staticmethod
    def valid_child_filter(module, key, value):
        return isinstance(value, (dict, list))

    @staticmethod
    def valid_parameter_filter(module, key, value):
        return isinstance(value, (dict, list, mx.array)) and not key.startswith("_")

    @staticmethod
    def trainable_parameter_filter(module, key, value):
        return Module.valid_parameter_filter(module, key, value) and key not in module._no_grad

    def filter_and_map(
        self,
        filter_fn: Callable[[Module, str, Any], bool],
        map_fn: Optional[Callable] = None,
        is_leaf_fn: Optional[Callable[[Module, str, Any], bool]] = None,
    ):
        """The members selected by ``filter_fn(module, key, value)``, recursively, as a tree
        of dicts and lists, with ``map_fn`` applied to the leaves (``is_leaf_fn`` decides
        what a leaf is; by default anything but modules, dicts and lists).

        Inside a member's lists and dicts the key given to ``filter_fn`` is the dotted path
        from the owning module ("weights.w1"); entries it rejects become empty dicts.
        """
        map_fn = map_fn or (lambda x: x)
        is_leaf_fn = is_leaf_fn or (lambda m, k, v: not isinstance(v, (Module, dict, list)))
        return {
            k: _unwrap(self, k, v, filter_fn, map_fn, is_leaf_fn)
            for k, v in self.items()
            if filter_fn(self, k, v)
        }

    def parameters(self):
        """Every array member, recursively, as a tree of dicts and lists."""
        return self.filter_and_map(self.valid_parameter_filter)

    def trainable_parameters(self):
        """The array members that are not frozen, recursively."""
        return self.filter_and_map(self.trainable_parameter_filter)

    def children(self):
        """The direct sub-modules (inside their lists and dicts)."""
        return self.filter_and_map(
            self.valid_child_filter, is_leaf_fn=lambda m, k, v: isinstance(v, Module)
        )

    def leaf_modules(self):
        """The sub-modules that contain no modules themselves."""

        def is_leaf_module(m, k, v):
            return isinstance(v, Module) and len(tree_flatten(v.children())) == 0

        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=is_leaf_module)

    # --- Updates ---------------------------------------------------------------------------

    def update(self, parameters: dict, strict: bool = True) -> Module:
        """Replaces parameters with the arrays of ``parameters``, a complete or partial tree
        shaped like :meth:`parameters`.

        With ``strict`` every name must be a member holding an array (or a container of
        them) and every new value an array; otherwise ValueError.
        """
        _update_parameters(self, parameters, strict)
        return self

    def apply(
        self,
        map_fn: Callable[[mx.array], mx.array],
        filter_fn: Optional[Callable[[Module, str, Any], bool]] = None,
    ) -> Module:
        """Replaces each parameter selected by ``filter_fn`` (default: all of them) with
        ``map_fn(parameter)``; e.g. ``model.apply(lambda x: x.astype(mx.float16))``."""
        filter_fn = filter_fn or Module.valid_parameter_filter
        self.update(self.filter_and_map(filter_fn, map_fn))
        return self

    def update_modules(self, modules: dict, strict: bool = True) -> Module:
        """Replaces sub-modules with the modules of ``modules``, a complete or partial tree
        shaped like :meth:`children` (empty dicts leave a place unchanged).

        With ``strict`` every name must exist and every replaced place must hold a module.
        """
        _update_modules(self, modules, strict)
        return self

    def apply_to_modules(self, apply_fn: Callable[[str, Module], Any]) -> Module:
        """Calls ``apply_fn(dotted name, module)`` on this module ("") and every sub-module."""
        stack = [("", self)]
        while stack:
            prefix, module = stack.pop()
            apply_fn(prefix, module)
            prefix = "." + prefix if prefix else ""
            stack.extend(tree_flatten(module.children(), prefix=prefix, is_leaf=self.is_module))
        return self

    def modules(self):
        """This module and all its sub-modules, in a list."""
        found = []
        self.apply_to_modules(lambda k, m: found.append(m))
        return found

    def named_modules(self):
        """``(dotted name, module)`` for this module ("") and all its sub-modules."""
        found = []
        self.apply_to_modules(lambda k, m: found.append((k, m)))
        return found

    # --- Freezing and modes ------------------------------------------------------------------

    def _validate_keys(self, keys, strict):
        keys = keys if isinstance(keys, list) else [keys]
        if strict:
            for key in keys:
                if key not in self:
                    raise KeyError(f"Module doesn't contain member {key}.")
        return keys

    def freeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> Module:
        """Excludes parameters from :meth:`trainable_parameters` (and so from gradients):
        all of them, or the names in ``keys``; in sub-modules too when ``recurse``. With
        ``strict`` a key that is not a member is a KeyError."""

        def freeze_one(_, module):
            local_keys = keys
            if local_keys is None:
                own = module.filter_and_map(
                    lambda m, k, v: not isinstance(v, Module) and m.valid_parameter_filter(m, k, v)
                )
                local_keys = [k for k, _ in tree_flatten(own)]
            module._no_grad.update(module._validate_keys(local_keys, strict))

        if recurse:
            self.apply_to_modules(freeze_one)
        else:
            freeze_one("", self)
        return self

    def unfreeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> Module:
        """Makes frozen parameters trainable again: all, or the names in ``keys``."""

        def unfreeze_one(_, module):
            if keys is None:
                module._no_grad.clear()
            else:
                module._no_grad.difference_update(module._validate_keys(keys, strict))

        if recurse:
            self.apply_to_modules(unfreeze_one)
        else:
            unfreeze_one("", self)
        return self

    def train(self, mode: bool = True) -> Module:
        """Sets training mode (``mode=True``) or evaluation mode on every module; layers such
        as Dropout and BatchNorm act differently in each."""

        def set_mode(_, module):
            module._set_training_mode(mode)

        self.apply_to_modules(set_mode)
        return self

    def _set_training_mode(self, mode: bool):
        """Switches this module alone; layers that change form with the mode extend it."""
        self._training = mode

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def set_dtype(
        self,
        dtype: mx.Dtype,
        predicate: Optional[Callable[[mx.Dtype], bool]] = lambda x: mx.issubdtype(x, mx.floating),
    ):
        """Casts the parameters whose dtype satisfies ``predicate`` (default: the floating
        ones; None: all) to ``dtype``."""
        if predicate is None:
            predicate = lambda _: True  # noqa: E731
        self.apply(lambda x: x.astype(dtype) if predicate(x.dtype) else x)


# The recursive helpers below are module-level functions: nested closures that call each other
# form reference cycles, which would keep a module alive until the garbage collector runs.


def _invalid_type(value):
    return ValueError(f"Received invalid type: {type(value).__name__}.")


def _assign_parameter(dst, key, new_value, strict):
    current = dst[key]
    if isinstance(current, mx.array):
        if _is_empty_placeholder(new_value):
            # A filtered-out entry of parameters()/trainable_parameters(): no change.
            return
        if strict and not isinstance(new_value, mx.array):
            raise _invalid_type(new_value)
        dst[key] = new_value
    elif isinstance(current, Module):
        current.update(new_value, strict=strict)
    else:
        _update_parameters(current, new_value, strict)


def _update_parameters(dst, params, strict):
    if isinstance(params, dict):
        for key in params:
            if key in dst:
                _assign_parameter(dst, key, params[key], strict)
            elif strict:
                raise ValueError(f'Module does not have parameter named "{key}".')
    elif isinstance(params, list):
        for i in range(len(params)):
            _assign_parameter(dst, i, params[i], strict)
    elif strict:
        raise _invalid_type(params)


def _assign_module(dst, key, new_value, strict):
    current = dst[key]
    if isinstance(current, Module) and isinstance(new_value, Module):
        dst[key] = new_value
    elif isinstance(current, (dict, list)):
        _update_modules(current, new_value, strict)
    elif strict and not _is_empty_placeholder(new_value):
        raise _invalid_type(new_value)


def _update_modules(dst, mods, strict):
    if isinstance(mods, dict):
        for key in mods:
            if key in dst:
                _assign_module(dst, key, mods[key], strict)
            elif strict:
                raise ValueError(f'Module does not have sub-module named "{key}".')
    elif isinstance(mods, list):
        for i in range(len(mods)):
            _assign_module(dst, i, mods[i], strict)
    elif strict:
        raise _invalid_type(mods)


def _unwrap(model, value_key, value, filter_fn, map_fn, is_leaf_fn):
    if is_leaf_fn(model, value_key, value):
        return map_fn(value)
    if isinstance(value, Module):
        return {
            k: _unwrap(value, k, v, filter_fn, map_fn, is_leaf_fn)
            for k, v in value.items()
            if filter_fn(value, k, v)
        }
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = f"{value_key}.{k}"
            out[k] = (
                _unwrap(model, key, v, filter_fn, map_fn, is_leaf_fn)
                if filter_fn(model, key, v)
                else {}
            )
        return out
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            key = f"{value_key}.{i}"
            out.append(
                _unwrap(model, key, v, filter_fn, map_fn, is_leaf_fn)
                if filter_fn(model, key, v)
                else {}
            )
        return out
    raise RuntimeError("Unexpected leaf found while traversing the module")
