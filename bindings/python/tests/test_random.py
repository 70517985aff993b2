# braid.core.random: keys, the global sequence, each distribution's shape, dtype, range and
# rough moments (NumPy statistics on the samples), and mlx.core.random's argument names.
import math

import numpy as np
import pytest

import braid.core as mx


def np_(a):
    return np.array(a)


def test_seed_restarts_the_global_sequence():
    mx.random.seed(3)
    a, b = mx.random.uniform(), mx.random.uniform()
    mx.random.seed(3)
    assert mx.random.uniform().item() == a.item()
    assert mx.random.uniform().item() == b.item()
    assert a.item() != b.item()


def test_keys_and_split():
    k0 = mx.random.key(0)
    assert k0.dtype == mx.uint32 and k0.shape == (2,)
    assert np_(k0).tolist() == np_(mx.random.key(0)).tolist()
    assert np_(mx.random.key(1)).tolist() != np_(k0).tolist()
    assert np_(mx.random.key(2**40 + 5)).tolist() == [2**40 >> 32, 5]
    k1, k2 = mx.random.split(k0)
    assert np_(k1).tolist() != np_(k2).tolist()
    r1, r2 = mx.random.split(k0)
    assert np_(r1).tolist() == np_(k1).tolist() and np_(r2).tolist() == np_(k2).tolist()
    keys = mx.random.split(k0, 10)
    assert keys.shape == (10, 2)
    assert len({tuple(k) for k in np_(keys).tolist()}) == 10
    assert mx.random.split(key=k0, num=3, stream=mx.cpu).shape == (3, 2)


def test_bits_widths():
    k = mx.random.key(0)
    for width, dtype in ((4, mx.uint32), (2, mx.uint16), (1, mx.uint8)):
        b = mx.random.bits((3, 5), width, key=k)
        assert b.dtype == dtype and b.shape == (3, 5)
    assert np_(mx.random.bits([4], key=k)).tolist() == np_(mx.random.bits([4], key=k)).tolist()
    assert mx.random.bits().shape == ()


def test_uniform():
    k = mx.random.key(0)
    a = mx.random.uniform(key=k)
    assert a.shape == () and a.dtype == mx.float32
    assert mx.random.uniform(key=k).item() == a.item()
    assert mx.random.uniform(shape=(2, 3)).shape == (2, 3)
    v = np_(mx.random.uniform(shape=(1000,), low=-1, high=5, key=k))
    assert v.min() >= -1 and v.max() < 5 and v.std() > 1
    v = np_(mx.random.uniform(low=mx.array(-1), high=5, shape=(1000,)))
    assert v.min() >= -1 and v.max() < 5
    low = mx.array(np.array([[0.0], [10.0]], np.float32))
    v = np_(mx.random.uniform(low, low + 1, (2, 500)))
    assert v[0].max() < 1 and v[1].min() >= 10
    assert mx.random.uniform(low=-0.1, high=0.1, shape=(1,), dtype=mx.bfloat16).dtype == mx.bfloat16
    assert mx.random.uniform(dtype=None).dtype == mx.float32
    with pytest.raises(ValueError):
        mx.random.uniform(dtype=mx.int32)


@pytest.mark.parametrize("sampler", [mx.random.normal, mx.random.laplace])
def test_normal_and_laplace(sampler):
    k = mx.random.key(0)
    a = sampler(key=k)
    assert a.shape == () and a.dtype == mx.float32
    assert sampler(key=k).item() == a.item()
    assert sampler(shape=(2, 3)).shape == (2, 3)
    for t in (mx.float16, mx.bfloat16):
        assert sampler(dtype=t).dtype == t
    a = sampler(shape=(3, 2), loc=1.0, scale=2.0, key=k)
    b = sampler(shape=(3, 2), key=k) * 2.0 + 1.0
    np.testing.assert_allclose(np_(a), np_(b), rtol=1e-5)
    assert sampler(dtype=None).dtype == mx.float32
    for hp in (mx.float16, mx.bfloat16):
        v = np_(sampler(shape=(10000,), loc=0, scale=1, dtype=hp).astype(mx.float32))
        assert np.all(np.isfinite(v))
    v = np_(sampler(shape=(20000,), loc=3.0, key=mx.random.key(1)))
    assert abs(v.mean() - 3.0) < 0.05


def test_normal_takes_array_moments_and_complex():
    k = mx.random.key(4)
    loc = mx.array(np.array([0.0, 100.0], np.float32))
    v = np_(mx.random.normal((1000, 2), loc=loc, scale=mx.array(0.5), key=k))
    assert abs(v[:, 1].mean() - 100) < 0.1 and abs(v[:, 0].std() - 0.5) < 0.05
    c = mx.random.normal((5000,), dtype=mx.complex64, key=k)
    assert c.dtype == mx.complex64
    assert abs(np_(c).real.var() - 0.5) < 0.05


def test_multivariate_normal():
    k = mx.random.key(0)
    mean, cov = mx.array([0.0, 0.0]), mx.array([[1.0, 0.0], [0.0, 1.0]])
    a = mx.random.multivariate_normal(mean, cov, key=k, stream=mx.cpu)
    assert a.shape == (2,) and a.dtype == mx.float32
    for t in (mx.int32, mx.float16):
        with pytest.raises(ValueError):
            mx.random.multivariate_normal(mean, cov, dtype=t, key=k, stream=mx.cpu)
    with pytest.raises(ValueError):
        mx.random.multivariate_normal(mx.array(np.zeros(3, np.float32)), cov, key=k, stream=mx.cpu)
    m = mx.array([[0.0, 7.0], [1.0, 2.0], [3.0, 4.0]])
    assert mx.random.multivariate_normal(m, cov, shape=(4, 3), stream=mx.cpu).shape == (4, 3, 2)

    n = 50000
    mean_v = np.array([4.0, 7.0], np.float32)
    cov_v = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
    data = np_(mx.random.multivariate_normal(mx.array(mean_v), mx.array(cov_v), shape=(n,), key=k, stream=mx.cpu))
    tol = 10 * 4 / math.sqrt(n)
    np.testing.assert_allclose(data.mean(axis=0), mean_v, atol=tol)
    np.testing.assert_allclose(np.cov(data.T), cov_v, atol=tol)


def test_randint():
    a = mx.random.randint(0, 1, [])
    assert a.shape == () and a.dtype == mx.int32 and a.item() == 0
    k = mx.random.key(0)
    a = mx.random.randint(mx.array(3), mx.array(15), (88,), key=k)
    assert a.shape == (88,) and a.dtype == mx.int32
    assert np_(a).tolist() == np_(mx.random.randint(3, 15, (88,), key=k)).tolist()
    v = np_(mx.random.randint(-10, 10, [1000, 10]))
    assert v.min() >= -10 and v.max() < 10 and len(set(v.ravel().tolist())) == 20
    assert set(np_(mx.random.randint(10, -10, [100])).tolist()) == {10}
    assert mx.random.randint(0, 5, dtype=mx.int64).dtype == mx.int64
    assert mx.random.randint(0, 1, dtype=None).dtype == mx.int32
    low = mx.array(np.zeros((3, 1), np.int32))
    high = mx.array(np.array([[12, 13, 14, 15]], np.int32))
    assert mx.random.randint(low, high, (3, 4)).shape == (3, 4)


def test_randint_is_exact_at_any_magnitude():
    # MLX's integer sampler: low + bits mod (high - low), in uint64.
    k = mx.random.key(3)
    bits = np_(mx.random.bits((500,), key=k)).astype(np.uint64)
    got = np_(mx.random.randint(-7, 29, (500,), key=k))
    np.testing.assert_array_equal(got, (-7 + (bits % 36).astype(np.int64)).astype(np.int32))
    base = 2**40
    wide = np_(mx.random.randint(base, base + 1024, (10_000,), dtype=mx.int64, key=k))
    assert len(set(wide.tolist())) == 1024 and wide.min() == base and wide.max() == base + 1023
    full = np_(mx.random.randint(-(2**63), 2**63 - 1, (5000,), dtype=mx.int64, key=k)).tolist()
    assert len(set(full)) > 4990 and min(full) < 0 < max(full)
    u64 = lambda v: mx.array([v], mx.uint64)
    straddle = np_(mx.random.randint(u64(2**62), u64(2**64 - 1), (5000,), dtype=mx.uint64, key=k))
    assert straddle.min() >= 2**62 and int(straddle.max()) > 2**63 and len(set(straddle.tolist())) > 4990
    inverted = mx.random.randint(u64(2**63 + 2**40), u64(2**62), (100,), dtype=mx.uint64, key=k)
    assert set(inverted.tolist()) == {2**63 + 2**40}
    assert set(mx.random.randint(0.5, 0.9, (100,), key=k).tolist()) == {0}


def test_bernoulli():
    a = mx.random.bernoulli()
    assert a.shape == () and a.dtype == mx.bool_
    assert mx.random.bernoulli(mx.array(0.5), [5]).shape == (5,)
    assert np_(mx.random.bernoulli(mx.array([2.0, -2.0]))).tolist() == [True, False]
    p = mx.array([0.1, 0.2, 0.3])
    assert mx.random.bernoulli(p, [4, 3]).shape == (4, 3)
    with pytest.raises(ValueError):
        mx.random.bernoulli(p, [2])
    with pytest.raises(ValueError):
        mx.random.bernoulli(0, [2])  # an integer probability
    freq = np_(mx.random.bernoulli(0.25, (20000,), key=mx.random.key(2))).mean()
    assert abs(freq - 0.25) < 0.02


def test_truncated_normal():
    a = mx.random.truncated_normal(-2.0, 2.0)
    assert a.size == 1 and a.dtype == mx.float32
    a = mx.random.truncated_normal(mx.array([]), mx.array([]))
    assert a.size == 0 and a.dtype == mx.float32
    lower = mx.array(np.array([[-2.0, 0.0]], np.float32))
    upper = mx.array(np.array([[0.0], [1.0], [2.0]], np.float32))
    a = mx.random.truncated_normal(lower, upper)
    assert a.shape == (3, 2)
    lv, uv, av = np_(lower), np_(upper), np_(a)
    assert np.all(lv <= av) and np.all(av <= uv)
    assert np.all(np_(mx.random.truncated_normal(2.0, -2.0)) == 2.0)
    a = mx.random.truncated_normal(-1.0, 1.0, shape=(500,), dtype=mx.float16)
    assert a.shape == (500,) and a.dtype == mx.float16


def test_gumbel():
    k = mx.random.key(0)
    a = mx.random.gumbel(key=k)
    assert a.shape == () and a.dtype == mx.float32
    v = np_(mx.random.gumbel((20000,), key=k))
    assert abs(v.mean() - 0.5772) < 0.05
    assert mx.random.gumbel((2,), dtype=mx.float16).dtype == mx.float16


def test_categorical():
    logits = mx.array(np.array([[0.0, 100.0, 0.0], [100.0, 0.0, 0.0]], np.float32))
    out = mx.random.categorical(logits)
    assert out.dtype == mx.uint32 and np_(out).tolist() == [1, 0]
    assert mx.random.categorical(logits, axis=0).shape == (3,)
    assert mx.random.categorical(logits, num_samples=5).shape == (2, 5)
    assert mx.random.categorical(logits, shape=(4, 2)).shape == (4, 2)
    with pytest.raises(ValueError):
        mx.random.categorical(logits, shape=(4, 2), num_samples=5)
    uniform_logits = mx.array(np.zeros(4, np.float32))
    counts = np.bincount(np_(mx.random.categorical(uniform_logits, num_samples=8000)), minlength=4)
    assert np.all(np.abs(counts / 8000 - 0.25) < 0.03)


def test_permutation():
    p = np_(mx.random.permutation(10))
    assert sorted(p.tolist()) == list(range(10))
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    y = np_(mx.random.permutation(mx.array(x), axis=1, key=mx.random.key(3)))
    assert sorted(y[0].tolist()) == x[0].tolist()
    assert [sorted(r) for r in y.tolist()] == x.tolist()
    y0 = np_(mx.random.permutation(mx.array(x), key=mx.random.key(3)))
    assert sorted(y0.tolist()) == x.tolist()
    with pytest.raises(TypeError):
        mx.random.permutation("ten")


def test_keyword_names_as_mlx():
    k = mx.random.key(1)
    mx.random.uniform(low=0, high=1, shape=[2], dtype=mx.float32, key=k, stream=mx.cpu)
    mx.random.normal(shape=[2], dtype=mx.float32, loc=0.0, scale=1.0, key=k, stream=mx.cpu)
    mx.random.randint(low=0, high=3, shape=[2], dtype=mx.int32, key=k, stream=mx.cpu)
    mx.random.bernoulli(p=0.5, shape=[2], key=k, stream=mx.cpu)
    mx.random.truncated_normal(lower=-1, upper=1, shape=[2], dtype=mx.float32, key=k, stream=mx.cpu)
    mx.random.gumbel(shape=[2], dtype=mx.float32, key=k, stream=mx.cpu)
    mx.random.categorical(logits=mx.array([0.0, 1.0]), axis=-1, shape=None, num_samples=None, key=k, stream=mx.cpu)
    mx.random.laplace(shape=[2], dtype=mx.float32, loc=0.0, scale=1.0, key=k, stream=mx.cpu)
    mx.random.permutation(x=3, axis=0, key=k, stream=mx.cpu)
    mx.random.bits(shape=[2], width=4, key=k, stream=mx.cpu)
    mx.random.seed(seed=0)
    mx.random.key(seed=0)
