# load, save, savez, savez_compressed, save_safetensors and save_gguf: round trips of every
# dtype, MLX's rules for the file extension, paths as str and pathlib.Path, file objects, and
# files written and read by NumPy.
import io
import os
import pathlib

import numpy as np
import pytest

import braid.core as mx

NUMPY_DTYPES = [
    np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64,
    np.float16, np.float32, np.complex64,
]


def sample(dtype, shape=(2, 3)):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_npy_round_trip_and_numpy_interop(tmp_path, dtype):
    v = sample(dtype)
    mx.save(str(tmp_path / "a.npy"), mx.array(v))
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), v)
    np.save(tmp_path / "b.npy", v)
    out = mx.load(str(tmp_path / "b.npy"))
    assert isinstance(out, mx.array)
    np.testing.assert_array_equal(np.array(out), v)


def test_npy_bfloat16_scalars_and_empty(tmp_path):
    a = mx.array([1.5, -2.0], mx.bfloat16)
    mx.save(str(tmp_path / "bf"), a)
    out = mx.load(str(tmp_path / "bf.npy"))
    assert out.dtype == mx.bfloat16 and out.tolist() == [1.5, -2.0]
    mx.save(str(tmp_path / "s"), mx.array(7))
    assert mx.load(str(tmp_path / "s.npy")).item() == 7
    mx.save(str(tmp_path / "e"), mx.array(np.zeros((0, 3), np.float32)))
    assert mx.load(str(tmp_path / "e.npy")).shape == (0, 3)
    np.save(tmp_path / "f.npy", np.asfortranarray(sample(np.float32, (3, 4))))
    np.testing.assert_array_equal(np.array(mx.load(str(tmp_path / "f.npy"))), sample(np.float32, (3, 4)))


def test_extensions_are_added_as_mlx_does(tmp_path):
    a = mx.array([1, 2])
    mx.save(str(tmp_path / "a"), a)
    mx.save(str(tmp_path / "b.npy"), a)
    mx.savez(str(tmp_path / "c"), a)
    mx.savez_compressed(str(tmp_path / "d.npz"), a)
    mx.save_safetensors(str(tmp_path / "e"), {"a": a})
    mx.save_gguf(str(tmp_path / "f"), {"a": a})
    mx.save_safetensors(str(tmp_path / "g.safetensors"), {"a": a})
    assert sorted(os.listdir(tmp_path)) == [
        "a.npy", "b.npy", "c.npz", "d.npz", "e.safetensors", "f.gguf", "g.safetensors",
    ]


def test_pathlib_paths(tmp_path):
    a = mx.array([1.0, 2.0])
    mx.save(tmp_path / "p", a)
    mx.savez(tmp_path / "q", x=a)
    mx.save_safetensors(tmp_path / "r", {"x": a})
    mx.save_gguf(tmp_path / "s", {"x": a})
    assert mx.load(tmp_path / "p.npy").tolist() == [1.0, 2.0]
    assert mx.load(tmp_path / "q.npz")["x"].tolist() == [1.0, 2.0]
    assert mx.load(tmp_path / "r.safetensors")["x"].tolist() == [1.0, 2.0]
    assert mx.load(tmp_path / "s.gguf")["x"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("savez", [mx.savez, mx.savez_compressed])
def test_savez_names_and_numpy_interop(tmp_path, savez):
    x, y = sample(np.float32), sample(np.int32, (4,))
    savez(str(tmp_path / "z"), mx.array(x), mx.array(y), w=mx.array([True, False]))
    with np.load(tmp_path / "z.npz") as f:
        assert sorted(f.files) == ["arr_0", "arr_1", "w"]
        np.testing.assert_array_equal(f["arr_0"], x)
        np.testing.assert_array_equal(f["arr_1"], y)
    np.savez_compressed(tmp_path / "n.npz", first=x, second=y)
    loaded = mx.load(str(tmp_path / "n.npz"))
    assert isinstance(loaded, dict) and sorted(loaded) == ["first", "second"]
    np.testing.assert_array_equal(np.array(loaded["first"]), x)
    with pytest.raises(ValueError):
        savez(str(tmp_path / "bad"), mx.array(x), arr_0=mx.array(y))


@pytest.mark.parametrize("dtype", [mx.bool_, mx.uint8, mx.int32, mx.int64, mx.float16, mx.bfloat16, mx.float32])
def test_safetensors_round_trip_with_metadata(tmp_path, dtype):
    arrays = {"w": mx.array(sample(np.float32), dtype), "b": mx.array([1, 0, 1], dtype)}
    mx.save_safetensors(str(tmp_path / "m.safetensors"), arrays, metadata={"format": "mlx", "k": "v"})
    loaded = mx.load(str(tmp_path / "m.safetensors"))
    assert sorted(loaded) == ["b", "w"]
    for k in arrays:
        assert loaded[k].dtype == dtype
        np.testing.assert_array_equal(np.array(loaded[k].astype(mx.float32)), np.array(arrays[k].astype(mx.float32)))
    loaded, meta = mx.load(str(tmp_path / "m.safetensors"), return_metadata=True)
    assert meta == {"format": "mlx", "k": "v"}
    with pytest.raises(ValueError):
        mx.save_safetensors(str(tmp_path / "x"), arrays, metadata={"k": 1})


def test_gguf_round_trip_with_metadata(tmp_path):
    arrays = {"w": mx.array(sample(np.float32)), "i": mx.array([1, 2, 3], mx.int32), "h": mx.array([1.0], mx.float16)}
    meta = {"name": "model", "tags": ["a", "b"], "version": mx.array(3), "sizes": mx.array([1, 2], mx.int32)}
    mx.save_gguf(str(tmp_path / "m.gguf"), arrays, meta)
    loaded, lmeta = mx.load(str(tmp_path / "m.gguf"), return_metadata=True)
    for k, v in arrays.items():
        assert loaded[k].dtype == v.dtype
        np.testing.assert_array_equal(np.array(loaded[k]), np.array(v))
    assert lmeta["name"] == "model" and lmeta["tags"] == ["a", "b"]
    assert lmeta["version"].item() == 3 and lmeta["sizes"].tolist() == [1, 2]
    assert sorted(mx.load(str(tmp_path / "m.gguf"))) == ["h", "i", "w"]


def test_file_objects(tmp_path):
    v = sample(np.float32)
    buf = io.BytesIO()
    mx.save(buf, mx.array(v))
    buf.seek(0)
    np.testing.assert_array_equal(np.load(buf), v)
    buf.seek(0)
    np.testing.assert_array_equal(np.array(mx.load(buf, format="npy")), v)

    buf = io.BytesIO()
    mx.savez(buf, a=mx.array(v))
    buf.seek(0)
    np.testing.assert_array_equal(np.array(mx.load(buf, "npz")["a"]), v)

    buf = io.BytesIO()
    mx.save_safetensors(buf, {"a": mx.array(v)}, {"m": "1"})
    buf.seek(0)
    arrays, meta = mx.load(buf, format="safetensors", return_metadata=True)
    np.testing.assert_array_equal(np.array(arrays["a"]), v)
    assert meta == {"m": "1"}

    with open(tmp_path / "f.safetensors", "wb") as f:
        mx.save_safetensors(f, {"a": mx.array(v)})
    with open(tmp_path / "f.safetensors", "rb") as f:
        loaded = mx.load(f)  # the format from the file's name
    np.testing.assert_array_equal(np.array(loaded["a"]), v)  # read before the file closed

    with pytest.raises(ValueError):
        mx.save_gguf(io.BytesIO(), {"a": mx.array(v)})
    with pytest.raises(ValueError):
        mx.load(io.BytesIO(b"\x00"), format="gguf")


def test_load_errors(tmp_path):
    mx.save(str(tmp_path / "a"), mx.array([1]))
    with pytest.raises(ValueError):
        mx.load(str(tmp_path / "a.npy"), return_metadata=True)
    with pytest.raises(ValueError):
        mx.load(str(tmp_path / "a.npy"), format="npz", return_metadata=True)
    with pytest.raises(ValueError):
        mx.load(str(tmp_path / "a.npy"), format="csv")
    with pytest.raises(ValueError):
        mx.load(str(tmp_path / "noextension"))
    with pytest.raises(ValueError):
        mx.load(io.BytesIO(b"abc"))  # no name to take the format from
    with pytest.raises(ValueError):
        mx.load(3)
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises((ValueError, RuntimeError)):
        mx.load(str(tmp_path / "bad.npy"))
    with pytest.raises(TypeError):
        mx.load(str(tmp_path / "a.npy"), "npy", False, mx.cpu)  # stream is keyword-only
    assert mx.load(str(tmp_path / "a.npy"), stream=mx.cpu).tolist() == [1]
