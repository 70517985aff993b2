# Shape and data movement ops of braid.core, checked against NumPy.
import numpy as np
import pytest

import braid.core as mx


def arange(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def check(out, expected):
    out_np = np.array(out)
    assert out_np.shape == expected.shape
    np.testing.assert_array_equal(out_np, expected)


def test_reshape_takes_tuples_lists_and_minus_one():
    x = arange(2, 3, 4)
    a = mx.array(x)
    check(mx.reshape(a, (4, 6)), x.reshape(4, 6))
    check(mx.reshape(a, [6, -1]), x.reshape(6, -1))
    check(mx.reshape(a, shape=(24,)), x.reshape(24))
    check(mx.reshape(mx.array(np.zeros((0, 3))), (3, 0)), np.zeros((3, 0), np.float32))
    with pytest.raises(ValueError):
        mx.reshape(a, (5, 5))
    with pytest.raises(TypeError):
        mx.reshape(a=a, shape=(24,))


def test_reshape_method_takes_a_tuple_or_separate_ints():
    x = arange(2, 6)
    a = mx.array(x)
    check(a.reshape(3, 4), x.reshape(3, 4))
    check(a.reshape((4, 3)), x.reshape(4, 3))
    check(a.reshape([12]), x.reshape(12))
    check(a.reshape(-1, 2, stream=mx.cpu), x.reshape(-1, 2))


def test_ops_take_a_stream_keyword():
    a = mx.array(arange(2, 3))
    assert mx.transpose(a, stream=mx.cpu).shape == (3, 2)
    assert mx.flatten(a, stream=mx.Device(mx.cpu)).shape == (6,)
    with pytest.raises(TypeError):
        mx.flatten(a, 0, -1, mx.cpu)


def test_flatten_clamps_axes_and_accepts_negative_ones():
    x = arange(2, 3, 4, 5)
    a = mx.array(x)
    check(mx.flatten(a), x.reshape(-1))
    check(mx.flatten(a, 1, 2), x.reshape(2, 12, 5))
    check(mx.flatten(a, start_axis=-2), x.reshape(2, 3, 20))
    check(mx.flatten(a, end_axis=-3), x.reshape(6, 4, 5))
    check(a.flatten(1), x.reshape(2, 60))
    assert mx.flatten(mx.array(3.0)).shape == (1,)


def test_unflatten_splits_an_axis():
    x = arange(2, 12)
    a = mx.array(x)
    check(mx.unflatten(a, 1, (3, 4)), x.reshape(2, 3, 4))
    check(mx.unflatten(a, -1, [2, -1]), x.reshape(2, 2, 6))
    with pytest.raises(ValueError):
        mx.unflatten(a, 1, (5, 5))


def test_squeeze_all_one_or_several_axes():
    x = arange(1, 3, 1, 4)
    a = mx.array(x)
    check(mx.squeeze(a), x.squeeze())
    check(mx.squeeze(a, 0), x.squeeze(0))
    check(mx.squeeze(a, axis=(0, -2)), x.squeeze((0, 2)))
    check(a.squeeze(2), x.squeeze(2))
    check(a.squeeze(), x.squeeze())
    with pytest.raises(ValueError):
        mx.squeeze(a, 1)


def test_expand_dims_int_and_tuple():
    x = arange(3, 4)
    a = mx.array(x)
    check(mx.expand_dims(a, 0), np.expand_dims(x, 0))
    check(mx.expand_dims(a, -1), np.expand_dims(x, -1))
    check(mx.expand_dims(a, (0, 2)), np.expand_dims(x, (0, 2)))
    check(mx.expand_dims(a, axis=(-1, 0)), np.expand_dims(x, (-1, 0)))


def test_transpose_and_permute_dims():
    x = arange(2, 3, 4)
    a = mx.array(x)
    check(mx.transpose(a), x.T)
    check(mx.transpose(a, (1, 0, 2)), x.transpose(1, 0, 2))
    check(mx.transpose(a, axes=[-1, 0, 1]), x.transpose(2, 0, 1))
    check(mx.permute_dims(a, (2, 1, 0)), x.transpose(2, 1, 0))
    check(a.transpose(), x.T)
    check(a.transpose(0, 2, 1), x.transpose(0, 2, 1))
    check(a.transpose((2, 0, 1)), x.transpose(2, 0, 1))
    check(a.T, x.T)
    with pytest.raises(ValueError):
        mx.transpose(a, (0, 1))


def test_swapaxes_and_moveaxis():
    x = arange(2, 3, 4)
    a = mx.array(x)
    check(mx.swapaxes(a, 0, 2), np.swapaxes(x, 0, 2))
    check(a.swapaxes(-1, 1), np.swapaxes(x, -1, 1))
    check(mx.moveaxis(a, 0, -1), np.moveaxis(x, 0, -1))
    check(a.moveaxis(source=2, destination=0), np.moveaxis(x, 2, 0))
    with pytest.raises(ValueError):
        mx.swapaxes(a, 0, 3)


def test_broadcast_to_arrays_and_shapes():
    x = arange(3, 1)
    check(mx.broadcast_to(mx.array(x), (2, 3, 4)), np.broadcast_to(x, (2, 3, 4)))
    check(mx.broadcast_to(2.5, [2, 2]), np.full((2, 2), 2.5, np.float32))
    with pytest.raises(ValueError):
        mx.broadcast_to(mx.array(x), (2, 2))
    y = arange(1, 4)
    outs = mx.broadcast_arrays(mx.array(x), mx.array(y))
    assert len(outs) == 2
    for out, ref in zip(outs, np.broadcast_arrays(x, y)):
        check(out, ref)
    assert mx.broadcast_shapes((1,), (3, 1)) == (3, 1)
    assert mx.broadcast_shapes((6, 7), (5, 6, 1), (7,)) == (5, 6, 7)
    assert mx.broadcast_shapes([5, 1, 4], (1, 3, 1)) == (5, 3, 4)
    assert mx.broadcast_shapes((0, 1), (4,)) == (0, 4)
    with pytest.raises(ValueError):
        mx.broadcast_shapes((3,), (4,))
    with pytest.raises(ValueError):
        mx.broadcast_shapes()


def test_concatenate_promotes_and_flattens_without_axis():
    x = arange(2, 3)
    y = arange(2, 2, dtype=np.int32)
    a, b = mx.array(x), mx.array(y)
    out = mx.concatenate([a, b], axis=1)
    assert out.dtype == mx.float32
    check(out, np.concatenate([x, y], axis=1).astype(np.float32))
    check(mx.concatenate((a, a)), np.concatenate([x, x]))
    check(mx.concatenate([a, a], axis=-1), np.concatenate([x, x], axis=-1))
    check(mx.concatenate([a, b], axis=None), np.concatenate([x.ravel(), y.ravel()]).astype(np.float32))
    check(mx.concat([a, mx.array(np.zeros((0, 3), np.float32))]), x)
    with pytest.raises(ValueError):
        mx.concatenate([a, b], axis=0)


def test_stack_along_new_axes():
    x, y = arange(2, 3), arange(2, 3) + 10
    a, b = mx.array(x), mx.array(y)
    check(mx.stack([a, b]), np.stack([x, y]))
    check(mx.stack([a, b], axis=1), np.stack([x, y], axis=1))
    check(mx.stack((a, b), axis=-1), np.stack([x, y], axis=-1))
    with pytest.raises(ValueError):
        mx.stack([a, mx.array(arange(3, 2))])


def test_split_sections_and_indices():
    x = arange(6, 4)
    a = mx.array(x)
    for out, ref in zip(mx.split(a, 3), np.split(x, 3)):
        check(out, ref)
    outs = mx.split(a, [1, 4], axis=0)
    assert isinstance(outs, list) and len(outs) == 3
    for out, ref in zip(outs, np.split(x, [1, 4])):
        check(out, ref)
    for out, ref in zip(a.split(2, axis=-1), np.split(x, 2, axis=-1)):
        check(out, ref)
    for out, ref in zip(a.split([2, 2, 5]), np.split(x, [2, 2, 5])):
        check(out, ref)
    with pytest.raises(ValueError):
        mx.split(a, 4)


def test_tile_and_repeat():
    x = arange(2, 3)
    a = mx.array(x)
    check(mx.tile(a, 2), np.tile(x, 2))
    check(mx.tile(a, (2, 1, 2)), np.tile(x, (2, 1, 2)))
    check(mx.tile(a, [3]), np.tile(x, [3]))
    check(mx.repeat(a, 2), np.repeat(x, 2))
    check(mx.repeat(a, 3, axis=1), np.repeat(x, 3, axis=1))
    check(mx.repeat(a, repeats=2, axis=-2), np.repeat(x, 2, axis=-2))


@pytest.mark.parametrize(
    "pad_width",
    [1, (2,), (1, 2), [(0, 1), (2, 0)], ((1, 1), (0, 3)), [(1, 2)]],
)
def test_pad_width_forms(pad_width):
    x = arange(2, 3)
    a = mx.array(x)
    width = pad_width[0] if isinstance(pad_width, tuple) and len(pad_width) == 1 else pad_width
    check(mx.pad(a, pad_width), np.pad(x, width))
    check(mx.pad(a, pad_width, constant_values=-2.5), np.pad(x, width, constant_values=-2.5))
    check(mx.pad(a, pad_width, mode="edge"), np.pad(x, width, mode="edge"))


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_mirror_modes_match_numpy(mode):
    x = arange(3, 4)
    for width in [1, (2, 3), [(0, 2), (3, 1)], ((5, 7), (9, 0))]:  # longer than an axis: repeated
        check(mx.pad(mx.array(x), width, mode=mode), np.pad(x, width, mode=mode))
    one = np.array([7.0], np.float32)
    check(mx.pad(mx.array(one), 3, mode=mode), np.pad(one, 3, mode=mode))
    with pytest.raises(ValueError):
        mx.pad(mx.zeros((0,)), 1, mode=mode)


def test_pad_keeps_dtype_and_takes_array_values():
    x = arange(3, dtype=np.int32)
    out = mx.pad(mx.array(x), 2, constant_values=7)
    assert out.dtype == mx.int32
    check(out, np.pad(x, 2, constant_values=7))
    check(mx.pad(mx.array(x), (1, 0), "constant", mx.array(4)), np.pad(x, (1, 0), constant_values=4))
    with pytest.raises(TypeError):
        mx.pad(mx.array(x), "wide")


def test_roll_flattened_one_axis_and_several():
    x = arange(3, 4)
    a = mx.array(x)
    check(mx.roll(a, 2), np.roll(x, 2))
    check(mx.roll(a, -5), np.roll(x, -5))
    check(mx.roll(a, 1, axis=0), np.roll(x, 1, axis=0))
    check(mx.roll(a, 1, axis=(0, 1)), np.roll(x, 1, axis=(0, 1)))
    check(mx.roll(a, (1, -2), axis=(1, 0)), np.roll(x, (1, -2), axis=(1, 0)))
    check(mx.roll(a, (2, 3)), np.roll(x, 5))


def test_diagonal_diag_and_trace():
    x = arange(3, 4, 5)
    a = mx.array(x)
    check(mx.diagonal(a), np.diagonal(x))
    check(mx.diagonal(a, 1, 1, 2), np.diagonal(x, 1, 1, 2))
    check(mx.diagonal(a, offset=-1, axis1=2, axis2=0), np.diagonal(x, -1, 2, 0))
    check(a.diagonal(2, axis1=-1, axis2=-2), np.diagonal(x, 2, -1, -2))
    m = arange(4, 4)
    check(mx.diag(mx.array(m)), np.diag(m))
    check(mx.diag(mx.array(m), k=-1), np.diag(m, -1))
    v = np.array([1.0, 2.0, 3.0], np.float32)
    check(mx.diag(mx.array(v), 1), np.diag(v, 1))
    check(mx.array(v).diag(k=-2), np.diag(v, -2))
    assert mx.trace(mx.array(m)).item() == np.trace(m)
    assert mx.trace(mx.array(m), offset=1).item() == np.trace(m, 1)
    check(mx.trace(a, 0, 1, 2), np.trace(x, 0, 1, 2))
    out = mx.trace(mx.array(m.astype(np.int32)), dtype=mx.float32)
    assert out.dtype == mx.float32 and out.item() == np.trace(m)


def test_as_strided_views_row_contiguous_values():
    x = arange(12)
    a = mx.array(x)
    check(mx.as_strided(a), x)
    check(mx.as_strided(a, (3, 4)), x.reshape(3, 4))
    ref = np.lib.stride_tricks.as_strided(x[2:], shape=(3, 3), strides=(x.itemsize * 3, x.itemsize))
    check(mx.as_strided(a, (3, 3), (3, 1), 2), ref)
    check(mx.as_strided(a, shape=(4, 2), strides=(2, 1)), x[:8].reshape(4, 2))
    # A transposed input is read as its row-contiguous values.
    t = arange(3, 4)
    check(mx.as_strided(mx.transpose(mx.array(t)), (12,)), t.T.ravel())


def test_contiguous_copy_and_view():
    x = arange(3, 4)
    t = mx.transpose(mx.array(x))
    check(mx.contiguous(t), x.T)
    check(mx.contiguous(t, allow_col_major=True), x.T)
    check(mx.copy(mx.array(x)), x)
    f = np.array([1.0, -2.5, 3.25], np.float32)
    check(mx.view(mx.array(f), mx.int32), f.view(np.int32))
    check(mx.array(f).view(mx.uint8), f.view(np.uint8))
    check(mx.view(mx.array(f.view(np.uint8)), mx.float32), f)
    check(mx.view(1.5, mx.int32), np.array(1.5, np.float32).view(np.int32))


def test_atleast_nd_returns_an_array_or_a_list():
    s, v, m = mx.array(2.0), mx.array(arange(3)), mx.array(arange(2, 3))
    assert mx.atleast_1d(s).shape == (1,)
    assert mx.atleast_2d(v).shape == np.atleast_2d(arange(3)).shape
    assert mx.atleast_3d(m).shape == np.atleast_3d(arange(2, 3)).shape
    assert mx.atleast_3d(v).shape == np.atleast_3d(arange(3)).shape
    outs = mx.atleast_2d(s, v, m)
    assert isinstance(outs, list)
    assert [o.shape for o in outs] == [r.shape for r in np.atleast_2d(np.float32(2), arange(3), arange(2, 3))]
    assert mx.atleast_1d(s, stream=mx.cpu).shape == (1,)


def test_ops_accept_numpy_and_lists_for_arrays():
    check(mx.reshape([1, 2, 3, 4], (2, 2)), np.array([[1, 2], [3, 4]], np.int32))
    check(mx.transpose(arange(2, 3)), arange(2, 3).T)
    with pytest.raises(TypeError):
        mx.reshape("abc", (1,))


def test_numpy_integers_count_as_ints():
    x = arange(2, 6)
    a = mx.array(x)
    check(mx.reshape(a, (np.int64(3), 4)), x.reshape(3, 4))
    check(a.reshape(np.int32(4), 3), x.reshape(4, 3))
    check(mx.transpose(a, (np.int64(1), 0)), x.T)
    check(mx.pad(a, (np.int64(1), 2)), np.pad(x, (1, 2)))
    for out, ref in zip(mx.split(a, np.int64(3), axis=1), np.split(x, 3, axis=1)):
        check(out, ref)
    check(mx.squeeze(mx.array(arange(1, 3)), np.int64(0)), arange(3))


def test_conj_method():
    z = np.array([1 + 2j, -3j], np.complex64)
    check(mx.array(z).conj(), np.conj(z))
    check(mx.array(arange(3)).conj(stream=mx.cpu), arange(3))


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), [1, -1], ()])
def test_flip_matches_numpy(axis):
    x = arange(2, 3, 4)
    expected = np.flip(x, axis=tuple(axis) if isinstance(axis, list) else axis)
    check(mx.flip(mx.array(x), axis), expected)
    check(mx.flip(mx.array(x), axis=axis), expected)


def test_flip_of_scalars_empty_and_strided_arrays():
    check(mx.flip(mx.array(3.0)), np.array(3.0, np.float32))
    check(mx.flip(mx.zeros((0, 3))), np.zeros((0, 3), np.float32))
    x = arange(4, 5)
    check(mx.flip(mx.array(x).T, 0), np.flip(x.T, 0))
    check(mx.flip([1, 2, 3]), np.array([3, 2, 1]))
    assert mx.flip(mx.array([1, 2], mx.int16)).dtype == mx.int16
    with pytest.raises(ValueError):
        mx.flip(mx.array(x), 2)
    with pytest.raises(ValueError):
        mx.flip(mx.array(x), axis=(0, -3))
    with pytest.raises(ValueError):  # a repeated axis, as NumPy
        mx.flip(mx.array(x), axis=(0, -2))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_unstack_is_the_inverse_of_stack(axis):
    x = arange(2, 3, 4)
    parts = mx.unstack(mx.array(x), axis=axis)
    assert isinstance(parts, list) and len(parts) == x.shape[axis]
    for part, expected in zip(parts, np.moveaxis(x, axis, 0)):
        check(part, expected)
    check(mx.stack(parts, axis=axis), x)


def test_unstack_edge_cases():
    assert mx.unstack(mx.zeros((0, 3))) == []
    check(mx.unstack(mx.array([1, 2]))[1], np.array(2))
    with pytest.raises(ValueError):
        mx.unstack(mx.array(1.0))
    with pytest.raises(ValueError):
        mx.unstack(mx.zeros((2, 3)), axis=2)
    with pytest.raises(TypeError):
        mx.unstack(mx.zeros((2, 3)), 1)  # axis is keyword-only, as in MLX
