# braid.utils: the tree helpers over nested lists, tuples and dicts, as mlx.utils.
import numpy as np
import pytest

import braid.core as mx
from braid.utils import (
    tree_flatten,
    tree_map,
    tree_map_with_path,
    tree_merge,
    tree_reduce,
    tree_unflatten,
)


def test_tree_map_keeps_structure_and_container_types():
    tree = {"a": [1, 2, (3, 4)], "b": {"c": 5}}
    out = tree_map(lambda x: x * 10, tree)
    assert out == {"a": [10, 20, (30, 40)], "b": {"c": 50}}
    assert isinstance(out["a"][2], tuple)


def test_tree_map_passes_the_leaves_of_extra_trees():
    a = {"x": [1, 2], "y": 3}
    b = {"x": [10, 20], "y": 30, "unused": 99}
    assert tree_map(lambda u, v: u + v, a, b) == {"x": [11, 22], "y": 33}


def test_tree_map_is_leaf_stops_descent():
    tree = {"a": [1, 2], "b": [3]}
    out = tree_map(len, tree, is_leaf=lambda n: isinstance(n, list))
    assert out == {"a": 2, "b": 1}


def test_tree_map_over_arrays_matches_numpy():
    params = {"w": mx.array([[1.0, 2.0]]), "layers": [mx.array([3.0]), mx.array([4.0, 5.0])]}
    out = tree_map(lambda x: x * x, params)
    np.testing.assert_allclose(np.array(out["w"]), np.array([[1.0, 4.0]]))
    np.testing.assert_allclose(np.array(out["layers"][1]), np.array([16.0, 25.0]))


def test_tree_map_with_path_gives_dotted_paths():
    tree = {"model": [{"w": 0, "b": 1}, {"w": 0, "b": 1}]}
    seen = []
    tree_map_with_path(lambda path, _: seen.append(path), tree)
    assert seen == ["model.0.w", "model.0.b", "model.1.w", "model.1.b"]
    prefixed = tree_map_with_path(lambda path, x: path, {"a": 1}, path="root")
    assert prefixed == {"a": "root.a"}


def test_tree_map_with_path_extra_trees_and_is_leaf():
    a = {"p": [1, 2]}
    b = {"p": [10, 20]}
    out = tree_map_with_path(lambda path, u, v: (path, u + v), a, b)
    assert out == {"p": [("p.0", 11), ("p.1", 22)]}
    out = tree_map_with_path(lambda path, x: path, a, is_leaf=lambda n: isinstance(n, list))
    assert out == {"p": "p"}


def test_tree_flatten_keys_and_order():
    tree = {"a": [1, {"b": 2}], "c": (3,)}
    assert tree_flatten(tree) == [("a.0", 1), ("a.1.b", 2), ("c.0", 3)]
    assert tree_flatten([[[0]]]) == [("0.0.0", 0)]
    assert tree_flatten(5) == [("", 5)]


def test_tree_flatten_prefix_drops_its_first_character():
    assert tree_flatten([[[0]]], ".hello") == [("hello.0.0.0", 0)]
    assert tree_flatten([[[0]]], prefix=".hello") == [("hello.0.0.0", 0)]


def test_tree_flatten_is_leaf_and_destination():
    tree = {"a": [1, 2], "b": {"c": 3}}
    assert tree_flatten(tree, is_leaf=lambda n: isinstance(n, list)) == [("a", [1, 2]), ("b.c", 3)]
    flat = tree_flatten(tree, destination={})
    assert flat == {"a.0": 1, "a.1": 2, "b.c": 3}
    existing = [("z", 0)]
    assert tree_flatten({"q": 1}, destination=existing) is existing
    assert existing == [("z", 0), ("q", 1)]
    with pytest.raises(ValueError):
        tree_flatten(tree, destination=())


def test_tree_flatten_of_empty_containers_is_empty():
    assert tree_flatten({}) == []
    assert tree_flatten({"a": [], "b": {}}) == []


def test_tree_unflatten_rebuilds_lists_and_dicts():
    assert tree_unflatten([("hello.world", 42)]) == {"hello": {"world": 42}}
    assert tree_unflatten({"hello.world": 42}) == {"hello": {"world": 42}}
    assert tree_unflatten([("0", 1), ("1", 2)]) == [1, 2]
    assert tree_unflatten([("", 7)]) == 7


def test_tree_unflatten_sorts_indices_and_fills_gaps():
    out = tree_unflatten([("layers.2.w", 3), ("layers.0.w", 1)])
    assert out == {"layers": [{"w": 1}, {}, {"w": 3}]}
    out = tree_unflatten([("10", "b"), ("2", "a")])
    assert out[2] == "a" and out[10] == "b" and len(out) == 11


def test_flatten_unflatten_round_trip():
    tree = {"a": [1, {"b": 2, "c": [3, 4]}], "d": {"e": 5}}
    assert tree_unflatten(tree_flatten(tree)) == tree
    assert tree_unflatten(tree_flatten(tree, destination={})) == tree


def test_tree_reduce_with_and_without_initializer():
    tree = {"a": [1, 2, 3], "b": [4, 5]}
    assert tree_reduce(lambda acc, x: acc + x, tree, 0) == 15
    assert tree_reduce(lambda acc, x: acc + x, tree) == 15
    assert tree_reduce(lambda acc, x: acc * x, [2, (3, {"k": 4})], 1) == 24
    assert tree_reduce(lambda acc, x: acc + x, 5, 1) == 6
    assert tree_reduce(lambda acc, x: acc + x, [], 0) == 0


def test_tree_reduce_is_leaf():
    tree = {"a": [1, 2], "b": [3]}
    sizes = tree_reduce(lambda acc, x: acc + len(x), tree, 0, is_leaf=lambda n: isinstance(n, list))
    assert sizes == 3


def test_tree_reduce_over_arrays_matches_numpy():
    grads = {"w": mx.array([1.0, -2.0]), "b": [mx.array([3.0])]}
    total = tree_reduce(lambda acc, g: acc + mx.sum(mx.square(g)), grads, 0.0)
    assert np.isclose(total.item(), 1.0 + 4.0 + 9.0)


def test_tree_merge_combines_disjoint_trees():
    a = {"x": 1, "sub": {"p": 2}}
    b = {"y": 3, "sub": {"q": 4}}
    assert tree_merge(a, b) == {"x": 1, "y": 3, "sub": {"p": 2, "q": 4}}
    assert tree_merge([1, {}], [{}, 2]) == [1, 2]
    assert tree_merge({}, {"a": 1}) == {"a": 1}
    assert tree_merge([1, 2], [None, None, 3]) == [1, 2, 3]


def test_tree_merge_conflicts_need_a_merge_function():
    with pytest.raises(ValueError):
        tree_merge({"a": 1}, {"a": 2})
    assert tree_merge({"a": 1}, {"a": 2}, merge_fn=lambda u, v: u + v) == {"a": 3}


def test_named_tuples_keep_their_type():
    from typing import NamedTuple

    class Params(NamedTuple):
        m: mx.array
        b: mx.array

    p = Params(m=mx.array([0, 1]), b=mx.array(2))
    q = tree_map(lambda x: x + 1, p)
    assert isinstance(q, Params) and q.m.tolist() == [1, 2] and q.b.item() == 3
    r = tree_map_with_path(lambda path, x: path, p)
    assert r == Params(m="m", b="b") or r == Params(m="0", b="1")
    merged = tree_merge(Params(m=None, b=1), Params(m=2, b=None))
    assert isinstance(merged, Params) and merged == Params(m=2, b=1)


def test_broadcast_shapes():
    from braid.utils import broadcast_shapes

    assert broadcast_shapes((1, 2, 3), (3,)) == (1, 2, 3)
    assert broadcast_shapes((1, 1), (1, 8), (7, 1)) == (7, 8)
    assert broadcast_shapes((2, 3)) == (2, 3)
    assert broadcast_shapes((), ()) == () and broadcast_shapes((), (1,)) == (1,)
    assert broadcast_shapes((1, 0, 5), (3, 1, 5)) == (3, 0, 5)
    assert broadcast_shapes((5, 0), (0, 5, 0)) == (0, 5, 0)
    for bad in [((3, 4), (4, 3)), ((2, 3, 4), (2, 5, 4)), ()]:
        with pytest.raises(ValueError):
            broadcast_shapes(*bad)
