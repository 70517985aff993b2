"""Helpers over Python trees: nested lists, tuples and dicts whose leaves are usually arrays.

The functions mirror mlx.utils: the same names, arguments and key format ("a.b.0"), so code
written for MLX's trees (model parameters, gradients, optimizer state) runs unchanged.
"""

from collections import defaultdict
from itertools import zip_longest
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

__all__ = [
    "tree_map",
    "tree_map_with_path",
    "tree_flatten",
    "tree_unflatten",
    "tree_reduce",
    "tree_merge",
    "broadcast_shapes",
]


def _same_kind(tree: Any, children) -> Any:
    """A list or tuple of ``tree``'s own type holding ``children`` (a NamedTuple takes them as
    its fields)."""
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        return type(tree)(*children)
    return type(tree)(children)


def tree_map(fn: Callable, tree: Any, *rest: Any, is_leaf: Optional[Callable] = None) -> Any:
    """A tree of the same structure as ``tree`` with ``fn`` applied to each leaf.

    Each tree in ``rest`` must contain ``tree``'s structure (it may be larger); its nodes at
    the leaves of ``tree`` are passed to ``fn`` as extra positional arguments. ``is_leaf``
    marks further nodes as leaves (lists, tuples and dicts are descended into otherwise).
    """
    if is_leaf is not None and is_leaf(tree):
        return fn(tree, *rest)
    if isinstance(tree, (list, tuple)):
        children = (
            tree_map(fn, child, *(r[i] for r in rest), is_leaf=is_leaf)
            for i, child in enumerate(tree)
        )
        return _same_kind(tree, children)
    if isinstance(tree, dict):
        return {
            k: tree_map(fn, child, *(r[k] for r in rest), is_leaf=is_leaf)
            for k, child in tree.items()
        }
    return fn(tree, *rest)


def tree_map_with_path(
    fn: Callable,
    tree: Any,
    *rest: Any,
    is_leaf: Optional[Callable] = None,
    path: Optional[Any] = None,
) -> Any:
    """Like :func:`tree_map`, with the leaf's dotted path ("layers.0.weight") passed to ``fn``
    first. ``path`` is the prefix of every path (None at the root)."""
    if is_leaf is not None and is_leaf(tree):
        return fn(path, tree, *rest)
    prefix = f"{path}." if path else ""
    if isinstance(tree, (list, tuple)):
        children = (
            tree_map_with_path(
                fn, child, *(r[i] for r in rest), is_leaf=is_leaf, path=f"{prefix}{i}"
            )
            for i, child in enumerate(tree)
        )
        return _same_kind(tree, children)
    if isinstance(tree, dict):
        return {
            k: tree_map_with_path(
                fn, child, *(r[k] for r in rest), is_leaf=is_leaf, path=f"{prefix}{k}"
            )
            for k, child in tree.items()
        }
    return fn(path, tree, *rest)


def tree_flatten(
    tree: Any,
    prefix: str = "",
    is_leaf: Optional[Callable] = None,
    destination: Optional[Union[List[Tuple[str, Any]], Dict[str, Any]]] = None,
) -> Union[List[Tuple[str, Any]], Dict[str, Any]]:
    """The leaves of ``tree`` as ``(dotted key, leaf)`` pairs in depth-first order.

    ``prefix`` starts every key; its first character is dropped (``".hello"`` gives keys
    ``"hello.0..."``). ``destination`` collects the pairs: a list (the default, a new one) or a
    dict of key to leaf; it is returned.
    """
    if destination is None:
        destination = []
    if isinstance(destination, list):
        add = destination.extend
    elif isinstance(destination, dict):
        add = destination.update
    else:
        raise ValueError("Destination should be either a list or a dictionary or None")

    # An explicit stack instead of recursion: user trees may be deep.
    stack = [(prefix, tree)]
    while stack:
        key, node = stack.pop()
        if is_leaf is not None and is_leaf(node):
            add([(key[1:], node)])
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{key}.{i}", child) for i, child in reversed(list(enumerate(node))))
        elif isinstance(node, dict):
            stack.extend((f"{key}.{k}", child) for k, child in reversed(list(node.items())))
        else:
            add([(key[1:], node)])
    return destination


def tree_unflatten(tree: Union[List[Tuple[str, Any]], Dict[str, Any]]) -> Any:
    """The tree whose :func:`tree_flatten` is ``tree`` (pairs or a dict of dotted keys).

    A level whose keys are all integers becomes a list (missing indices become empty dicts),
    any other level a dict.
    """
    items = list(tree.items()) if isinstance(tree, dict) else list(tree)
    if len(items) == 1 and items[0][0] == "":
        return items[0][1]

    children = defaultdict(list)
    for key, value in items:
        head, _, tail = key.partition(".")
        children[head].append((tail, value))

    try:
        indices = sorted((int(k), k) for k in children)
    except ValueError:
        return {k: tree_unflatten(v) for k, v in children.items()}
    out = []
    for i, k in indices:
        out.extend({} for _ in range(i - len(out)))
        out.append(tree_unflatten(children[k]))
    return out


def tree_reduce(
    fn: Callable, tree: Any, initializer: Any = None, is_leaf: Optional[Callable] = None
):
    """Folds ``fn(accumulator, leaf)`` over the leaves of ``tree`` in depth-first order.

    Without ``initializer`` the first leaf starts the accumulation.
    """
    if is_leaf is not None and is_leaf(tree):
        return tree if initializer is None else fn(initializer, tree)
    if isinstance(tree, (list, tuple)):
        children = tree
    elif isinstance(tree, dict):
        children = tree.values()
    else:
        return tree if initializer is None else fn(initializer, tree)
    accumulator = initializer
    for child in children:
        accumulator = tree_reduce(fn, child, accumulator, is_leaf)
    return accumulator


def tree_merge(tree_a: Any, tree_b: Any, merge_fn: Optional[Callable] = None) -> Any:
    """One tree holding the nodes of both (a deep ``dict.update``).

    Empty containers and None count as absent. Where both trees have a leaf at the same
    place, ``merge_fn(a, b)`` gives the result; without it that is a ValueError.
    """
    if isinstance(tree_a, (dict, list, tuple)) and len(tree_a) == 0:
        tree_a = None
    if isinstance(tree_b, (dict, list, tuple)) and len(tree_b) == 0:
        tree_b = None
    if tree_a is None:
        return tree_b
    if tree_b is None:
        return tree_a

    if isinstance(tree_a, (list, tuple)) and isinstance(tree_b, (list, tuple)):
        return _same_kind(tree_a, [tree_merge(a, b, merge_fn) for a, b in zip_longest(tree_a, tree_b)])
    if isinstance(tree_a, dict) and isinstance(tree_b, dict):
        keys = list(tree_a.keys()) + [k for k in tree_b.keys() if k not in tree_a]
        return {k: tree_merge(tree_a.get(k), tree_b.get(k), merge_fn) for k in keys}
    if merge_fn is None:
        raise ValueError(
            "Trees contain elements at the same locations but no merge function was provided"
        )
    return merge_fn(tree_a, tree_b)


def broadcast_shapes(*shapes) -> Tuple[int, ...]:
    """The shape that ``shapes`` (sequences of ints) broadcast to, by NumPy's rules: aligned at
    the last axis, each size equal to the others or 1. A ValueError when they do not
    broadcast or none is given."""
    if not shapes:
        raise ValueError("[broadcast_shapes] No input shapes provided.")
    ndim = max(len(s) for s in shapes)
    out = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis and s[axis] != 1}
        if len(sizes) > 1:
            raise ValueError(
                f"[broadcast_shapes] Shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast."
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)
