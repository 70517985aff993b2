# The allocator's counters and limits as braid.core exposes them (mlx.core's names).
import gc

import numpy as np
import pytest

import braid.core as mx

MB = 1 << 20


def big(n_bytes):
    """An evaluated float32 array of about n_bytes."""
    a = mx.array(np.ones(n_bytes // 4, np.float32)) * 2
    mx.eval(a)
    return a


def test_active_memory_follows_live_arrays():
    gc.collect()
    before = mx.get_active_memory()
    a = big(8 * MB)
    assert mx.get_active_memory() >= before + 8 * MB
    del a
    gc.collect()
    assert mx.get_active_memory() < before + 8 * MB


def test_peak_memory_and_its_reset():
    a = big(4 * MB)
    assert mx.get_peak_memory() >= mx.get_active_memory()
    del a
    gc.collect()
    mx.reset_peak_memory()
    assert mx.get_peak_memory() == 0  # as MLX, until memory is next allocated
    b = big(6 * MB)
    assert mx.get_peak_memory() >= 6 * MB
    del b


def test_cache_limit_and_clear_cache():
    previous = mx.set_cache_limit(64 * MB)
    try:
        assert mx.set_cache_limit(64 * MB) == 64 * MB
        a = big(2 * MB)
        del a
        gc.collect()
        assert mx.get_cache_memory() >= 0
        mx.clear_cache()
        assert mx.get_cache_memory() == 0
        mx.set_cache_limit(0)
        c = big(2 * MB)
        del c
        gc.collect()
        assert mx.get_cache_memory() == 0
    finally:
        mx.set_cache_limit(previous)


def test_memory_limit_round_trip():
    previous = mx.get_memory_limit()
    assert previous > 0
    try:
        assert mx.set_memory_limit(previous // 2) == previous
        assert mx.get_memory_limit() == previous // 2
    finally:
        assert mx.set_memory_limit(limit=previous) == previous // 2
    assert mx.get_memory_limit() == previous


def test_wired_limit_is_kept_and_returned():
    previous = mx.set_wired_limit(1 << 30)
    assert isinstance(previous, int)
    assert mx.set_wired_limit(previous) == 1 << 30


def test_counters_are_ints():
    for f in (mx.get_active_memory, mx.get_peak_memory, mx.get_cache_memory, mx.get_memory_limit):
        assert isinstance(f(), int)
    assert mx.reset_peak_memory() is None and mx.clear_cache() is None


def test_metal_names_are_deprecated_aliases():
    assert mx.metal.is_available() is False
    with pytest.warns(DeprecationWarning):
        assert mx.metal.get_active_memory() == mx.get_active_memory()
    with pytest.warns(DeprecationWarning):
        previous = mx.metal.set_cache_limit(limit=32 * MB)
    assert mx.set_cache_limit(previous) == 32 * MB
    for name in ("get_peak_memory", "reset_peak_memory", "get_cache_memory", "set_memory_limit", "clear_cache"):
        assert callable(getattr(mx.metal, name))


def test_array_buffer_size_counts_each_buffer_once():
    a = mx.arange(1000, dtype=mx.float32)
    view = a[10:20]
    lazy = a + 1
    with pytest.raises(ValueError):
        mx.get_array_buffer_size({"lazy": lazy})
    mx.eval(view)
    a_size = mx.get_array_buffer_size(a)
    assert a.nbytes <= a_size < 2 * a.nbytes
    assert mx.get_array_buffer_size() == 0
    assert mx.get_array_buffer_size(view) == a_size
    assert mx.get_array_buffer_size({"a": a, "nested": (a, None, "text", 3)}) == a_size
    assert mx.get_array_buffer_size(mx.array([])) == 0
    b = mx.arange(3000, dtype=mx.float32)
    mx.eval(b)
    assert mx.get_array_buffer_size(a, [b]) == a_size + mx.get_array_buffer_size(b)
    small = mx.array([5.0, 6.0])
    assert mx.get_array_buffer_size(small) == small.nbytes


def test_array_buffer_size_waits_for_a_scheduled_array():
    a = mx.arange(4096, dtype=mx.float32) * 2
    mx.async_eval(a)
    assert mx.get_array_buffer_size(a) >= a.nbytes
    assert a.tolist()[:3] == [0.0, 2.0, 4.0]
