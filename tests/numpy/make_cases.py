#!/usr/bin/python3
"""Writes the NumPy reference cases braid's test suite checks every op against.

Usage: make_cases.py OUTDIR

For every op row below, and every dtype and shape set the row lists, it draws inputs with a
fixed seed, computes the expected output with NumPy in float64 (or the op's exact integer
arithmetic), and writes OUTDIR/<id>.in<k>.npy, OUTDIR/<id>.out.npy and one manifest line:

    id <TAB> op <TAB> params <TAB> input dtypes (comma-separated braid names) <TAB> output dtype

bfloat16 has no NumPy type: its inputs are stored as float32 values already rounded to
bfloat16, and the runner casts them. The C++ side (tests/test_numpy_reference.cpp) maps each
op name to a braid call, runs it on every device and in several layouts, and compares.
"""
import itertools
import os
import sys

import numpy as np

RNG = np.random.default_rng(20261201)

INTS = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
NUMERIC = INTS + FLOATS
ALL = ["bool"] + NUMERIC
NP_STORAGE = {"bool": np.bool_, "bfloat16": np.float32, "complex64": np.complex64}


def storage(dt):
    return NP_STORAGE[dt] if dt in NP_STORAGE else getattr(np, dt)


def round_bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    s16 = np.uint64(16)
    rounded = ((bits + np.uint64(0x7FFF) + ((bits >> s16) & np.uint64(1))) >> s16) << s16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, out)


def draw(shape, dt, lo=-4.0, hi=4.0, special=True, positive=False):
    """Random values exactly representable in `dt`, with NaN/Inf/-0.0 sprinkled into floats."""
    n = int(np.prod(shape, dtype=np.int64))
    if dt == "bool":
        return (RNG.integers(0, 2, size=shape) == 1)
    if dt in INTS:
        info = np.iinfo(getattr(np, dt))
        a, b = (0, 20) if dt.startswith("u") else (-20, 21)
        if positive:
            a = 1
        return RNG.integers(a, b, size=shape).astype(getattr(np, dt))
    v = RNG.uniform(0.1 if positive else lo, hi, size=shape)
    if special and n >= 8 and not positive:
        flat = v.reshape(-1)
        flat[0], flat[1], flat[2], flat[3] = np.nan, np.inf, -np.inf, -0.0
    if dt == "bfloat16":
        return round_bf16(v.astype(np.float32))
    return v.astype(getattr(np, dt))


class Writer:
    def __init__(self, outdir):
        self.outdir = outdir
        self.lines = []
        self.count = {}

    def add(self, op, params, in_dtypes, inputs, out_dtype, expected):
        k = self.count.get(op, 0)
        self.count[op] = k + 1
        cid = f"{op}.{k}"
        for i, (dt, x) in enumerate(zip(in_dtypes, inputs)):
            np.save(os.path.join(self.outdir, f"{cid}.in{i}.npy"), np.asarray(x, dtype=storage(dt)))
        exp = np.asarray(expected)
        if out_dtype == "bfloat16":
            exp = exp.astype(np.float64)
        np.save(os.path.join(self.outdir, f"{cid}.out.npy"), exp)
        self.lines.append("\t".join([cid, op, params, ",".join(in_dtypes), out_dtype]))

    def finish(self):
        with open(os.path.join(self.outdir, "manifest.tsv"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


# ---- MLX's dtype rules, for the expected output dtype ----

ORDER = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "float16", "float32", "float64", "bfloat16", "complex64"]


def promote(a, b):
    if a == b:
        return a
    if "complex64" in (a, b):
        return "complex64"
    if "float64" in (a, b):
        return "float64"
    fa, fb = a in FLOATS, b in FLOATS
    if fa and fb:
        return "float32"  # float16 with bfloat16 or float32; bfloat16 with float32
    if fa:
        return a
    if fb:
        return b
    if a == "bool":
        return b
    if b == "bool":
        return a
    ua, ub = a.startswith("u"), b.startswith("u")
    wa, wb = np.dtype(a).itemsize, np.dtype(b).itemsize
    if ua == ub:
        return a if wa >= wb else b
    u, s = (a, b) if ua else (b, a)
    wu, ws = np.dtype(u).itemsize, np.dtype(s).itemsize
    if wu == 8:
        return "float32"
    if ws > wu:
        return s
    return {1: "int16", 2: "int32", 4: "int64"}[wu]


def inexact(dt):
    """MLX's at-least-float: bool and integers become float32."""
    return dt if dt in FLOATS or dt == "complex64" else "float32"


def as_f64(x):
    return np.asarray(x).astype(np.float64)


def wrap(values, dt):
    """Exact integer results wrapped to `dt` (as C++ arithmetic on the type does)."""
    if dt == "bool":
        return np.asarray(values).astype(bool)
    if dt in INTS:
        return np.asarray(values).astype(np.int64).astype(getattr(np, dt)) if not dt == "uint64" else \
            np.asarray(values).astype(np.uint64)
    return values


# ---- shape sets ----

UNARY_SHAPES = [(), (7,), (3, 5), (2, 3, 4), (0, 3), (64, 33)]
BINARY_SHAPES = [((), ()), ((5,), ()), ((), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 4)),
                 ((0, 3), (3,)), ((33, 64), (33, 64))]


def binary_cases(w, op, fn, dtypes, out_rule, nonzero_rhs=False):
    for dt in dtypes:
        for sa, sb in BINARY_SHAPES:
            a = draw(sa, dt)
            b = draw(sb, dt, positive=nonzero_rhs)
            out = out_rule(dt)
            with np.errstate(all="ignore"):
                if dt in INTS or dt == "bool":
                    exp = fn(a.astype(np.int64) if dt != "uint64" else a, b.astype(np.int64) if dt != "uint64" else b)
                    exp = wrap(exp, out) if out in INTS or out == "bool" else as_f64(exp)
                else:
                    exp = fn(as_f64(a), as_f64(b))
            w.add(op, "", [dt, dt], [a, b], out, exp)


def unary_cases(w, op, fn, dtypes, out_rule, positive=False):
    for dt in dtypes:
        for s in UNARY_SHAPES:
            a = draw(s, dt, positive=positive)
            out = out_rule(dt)
            with np.errstate(all="ignore"):
                if out in INTS:
                    exp = wrap(fn(a.astype(np.int64)), out)
                else:
                    exp = fn(as_f64(a))
            w.add(op, "", [dt], [a], out, exp)


def reduce_cases(w, op, fn, dtypes, out_rule):
    shapes = [(5,), (3, 4), (2, 3, 4), (0, 4), (40, 70)]
    for dt in dtypes:
        for s in shapes:
            a = draw(s, dt, special=False)
            nd = len(s)
            axes_sets = [()] + [tuple(c) for r in range(1, nd + 1) for c in itertools.combinations(range(nd), r)]
            for axes in axes_sets:
                for keep in (False, True):
                    if not axes:
                        continue
                    if 0 in s and op in ("max", "min", "logsumexp", "median"):
                        continue  # MLX rejects these over any empty input (median: any empty axis)
                    with np.errstate(all="ignore"):
                        exp = fn(as_f64(a), axis=axes, keepdims=keep)
                    out = out_rule(dt)
                    if out in INTS:
                        exp = wrap(fn(a.astype(np.int64), axis=axes, keepdims=keep), out)
                    params = "axes=" + ",".join(map(str, axes)) + (";keepdims=1" if keep else ";keepdims=0")
                    w.add(op, params, [dt], [a], out, exp)


# ---- the rest of the element-wise, reduction, scan, shape and sorting families ----

def erf64(x):
    import math
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def trunc_div(a, b):
    return np.where(b == 0, 0, np.trunc(np.divide(a, np.where(b == 0, 1, b))))


def elementwise_cases(w):
    same = lambda dt: dt
    to_bool = lambda dt: "bool"
    # Unary functions MLX computes in floating point (integers become float32).
    for name, fn, positive in [("sin", np.sin, False), ("cos", np.cos, False), ("tan", np.tan, False),
                               ("arctan", np.arctan, False), ("sinh", np.sinh, False), ("cosh", np.cosh, False),
                               ("arcsinh", np.arcsinh, False), ("expm1", np.expm1, False),
                               ("log2", np.log2, True), ("log10", np.log10, True), ("log1p", np.log1p, True),
                               ("rsqrt", lambda x: 1 / np.sqrt(x), True), ("reciprocal", np.reciprocal, True),
                               ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), False), ("erf", erf64, False),
                               ("degrees", np.degrees, False), ("radians", np.radians, False)]:
        unary_cases(w, name, fn, FLOATS, same, positive=positive)
        unary_cases(w, name, fn, ["int32"], inexact, positive=positive)
    for name, fn in [("arcsin", np.arcsin), ("arccos", np.arccos), ("arctanh", np.arctanh)]:
        unary_cases(w, name, fn, ["float32", "float64"], same)  # NaN outside the domain, as NumPy
    unary_cases(w, "arccosh", np.arccosh, ["float32", "float64"], same, positive=True)
    # MLX's sign is (x > 0) - (x < 0): 0 for NaN, where NumPy gives NaN.
    mlx_sign = lambda x: np.where(np.isnan(x), 0.0, np.sign(x))
    for name, fn in [("abs", np.abs), ("square", np.square), ("sign", mlx_sign)]:
        unary_cases(w, name, fn, NUMERIC, same)
    for name, fn in [("floor", np.floor), ("ceil", np.ceil), ("round", np.round)]:
        unary_cases(w, name, fn, FLOATS, same)
    for name, fn in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                     ("isposinf", np.isposinf), ("isneginf", np.isneginf)]:
        unary_cases(w, name, fn, FLOATS, to_bool)
    unary_cases(w, "logical_not", np.logical_not, ["bool"], to_bool)
    unary_cases(w, "bitwise_invert", np.invert, INTS, same)
    # Binary.
    binary_cases(w, "not_equal", np.not_equal, ALL, to_bool)
    binary_cases(w, "less_equal", np.less_equal, ALL, to_bool)
    binary_cases(w, "greater_equal", np.greater_equal, ALL, to_bool)
    binary_cases(w, "logaddexp", np.logaddexp, FLOATS, same)
    binary_cases(w, "arctan2", np.arctan2, FLOATS, same)
    binary_cases(w, "power", np.power, ["float32", "float64"], same, nonzero_rhs=True)
    binary_cases(w, "remainder", np.remainder, ["float32", "float64"], same, nonzero_rhs=True)
    binary_cases(w, "remainder", np.remainder, ["int8", "int32", "int64", "uint8", "uint32"], same, nonzero_rhs=True)
    # MLX's float floor_divide is floor(a / b) (inf stays inf; NumPy's divmod-based one gives NaN).
    binary_cases(w, "floor_divide", lambda a, b: np.floor(a / b), ["float32", "float64"], same, nonzero_rhs=True)
    binary_cases(w, "floor_divide", trunc_div, ["int8", "int32", "int64", "uint8", "uint32"], same, nonzero_rhs=True)
    binary_cases(w, "logical_and", np.logical_and, ["bool"], to_bool)
    binary_cases(w, "logical_or", np.logical_or, ["bool"], to_bool)
    for name, fn in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)]:
        binary_cases(w, name, fn, ["bool"] + INTS, same)


def reduction_cases(w):
    same = lambda dt: dt
    to_bool = lambda dt: "bool"
    # Reductions.
    reduce_cases(w, "min", np.min, ["uint8", "int32", "int64", "float16", "float32", "float64"], same)
    reduce_cases(w, "prod", np.prod, ["float32", "float64"], same)
    reduce_cases(w, "sum", np.sum, ["int8", "uint16", "uint32"],
                 lambda dt: {"int8": "int32", "uint16": "uint32"}.get(dt, dt))
    reduce_cases(w, "mean", np.mean, ["float16", "float32", "float64"], same)
    reduce_cases(w, "mean", np.mean, ["int32"], lambda dt: "float32")
    reduce_cases(w, "all", np.all, ["bool", "int32", "float32"], to_bool)
    reduce_cases(w, "any", np.any, ["bool", "int32", "float32"], to_bool)
    reduce_cases(w, "var", np.var, ["float32", "float64"], same)
    reduce_cases(w, "std", np.std, ["float32", "float64"], same)
    # np.median with NaN-free inputs (MLX sorts NaNs last instead of propagating them).
    reduce_cases(w, "median", np.median, ["uint8", "int32", "float16", "bfloat16", "float32", "float64"], inexact)
    reduce_cases(w, "logsumexp", lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
                 ["float32", "float64"], same)
    # Arg reductions over one axis (uint32 indices; ties resolve to the first).
    for dt in ["uint8", "int32", "float32", "float64"]:
        for s in [(7,), (3, 5), (2, 3, 4), (40, 70)]:
            a = draw(s, dt, special=False)
            for axis in range(len(s)):
                for name, fn in [("argmax", np.argmax), ("argmin", np.argmin)]:
                    w.add(name, f"axis={axis}", [dt], [a], "uint32", fn(a, axis=axis).astype(np.uint32))


def scan_cases(w):
    # Scans along one axis, forward and reversed, inclusive and exclusive.
    scans = [("cumsum", np.add, 0), ("cumprod", np.multiply, 1), ("cummax", np.maximum, None),
             ("cummin", np.minimum, None), ("logcumsumexp", np.logaddexp, -np.inf)]
    for name, ufunc, ident in scans:
        dts = ["float32", "float64"] + (["int32"] if name in ("cumsum", "cummax", "cummin") else [])
        for dt in dts:
            for s in [(9,), (3, 5), (2, 3, 40)]:
                a = draw(s, dt, special=False, lo=-1.0, hi=1.0)
                for axis in range(len(s)):
                    for reverse in (0, 1):
                        for inclusive in (1, 0):
                            if ident is None and not inclusive:
                                continue
                            x = as_f64(a) if dt != "int32" else a.astype(np.int64)
                            x = np.flip(x, axis) if reverse else x
                            r = ufunc.accumulate(x, axis=axis)
                            if not inclusive:
                                r = np.concatenate([np.full_like(np.take(r, [0], axis=axis), ident), np.delete(r, -1, axis=axis)], axis=axis)
                            r = np.flip(r, axis) if reverse else r
                            exp = wrap(r, dt) if dt == "int32" else r
                            w.add(name, f"axis={axis};reverse={reverse};inclusive={inclusive}", [dt], [a], dt, exp)


def shape_cases(w):
    # Shape and data movement.
    for dt in ["bool", "uint16", "int32", "float16", "bfloat16", "float64"]:
        a = draw((3, 4), dt)
        b = draw((2, 4), dt)
        w.add("concatenate", "axis=0", [dt, dt], [a, b], dt, np.concatenate([a, b], axis=0))
        c = draw((3, 5), dt)
        w.add("concatenate", "axis=1", [dt, dt], [a, c], dt, np.concatenate([a, c], axis=1))
        w.add("stack", "axis=1", [dt, dt], [a, a], dt, np.stack([a, a], axis=1))
        w.add("tile", "reps=2,3", [dt], [a], dt, np.tile(a, (2, 3)))
        w.add("repeat", "repeats=3;axis=1", [dt], [a], dt, np.repeat(a, 3, axis=1))
        w.add("roll", "shift=2;axis=1", [dt], [a], dt, np.roll(a, 2, axis=1))
        w.add("pad", "low=1,2;high=2,0", [dt], [a], dt, np.pad(a, ((1, 2), (2, 0))))
        w.add("slice", "start=0,1;stop=3,4;strides=2,2", [dt], [a], dt, a[0:3:2, 1:4:2])
        w.add("tril", "k=0", [dt], [a], dt, np.tril(a))
        w.add("triu", "k=1", [dt], [a], dt, np.triu(a, 1))
        w.add("diagonal", "offset=1", [dt], [a], dt, np.diagonal(a, 1))


def sort_cases(w):
    # Sorting along the last axis (NaNs last, as NumPy).
    for dt in ["uint8", "int32", "int64", "float16", "float32", "float64"]:
        for s in [(9,), (4, 17), (2, 3, 300)]:
            a = draw(s, dt)
            w.add("sort", "axis=-1", [dt], [a], dt, np.sort(as_f64(a) if dt in FLOATS else a, axis=-1))
            if dt in INTS and (s[-1] < 256 or dt != "uint8"):
                # Distinct keys per row: the permutation is then unique.
                rows = [RNG.permutation(s[-1]) for _ in range(int(np.prod(s[:-1])))]
                u = np.stack(rows).reshape(s).astype(getattr(np, dt))
                w.add("argsort", "axis=-1", [dt], [u], "uint32", np.argsort(u, axis=-1, kind="stable").astype(np.uint32))


def linalg_cases(w):
    # Matrix products: float64 in double (dgemm), float32 in float; broadcasting, vectors, empty.
    # Values in [-1, 1] keep float32's accumulated rounding within the suite's tolerance.
    for dt in ["float32", "float64"]:
        for sa, sb in [((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)),
                       ((2, 1, 3, 5), (4, 5, 2)), ((0, 3), (3, 2)), ((3, 0), (0, 2)), ((17, 33), (33, 9))]:
            a, b = draw(sa, dt, lo=-1.0, hi=1.0, special=False), draw(sb, dt, lo=-1.0, hi=1.0, special=False)
            w.add("matmul", "", [dt, dt], [a, b], dt, np.matmul(as_f64(a), as_f64(b)))
    for dt in FLOATS:
        for sa, sb in [((2, 3, 4), (5, 4)), ((4,), (4,)), ((3, 4), (4,)), ((0, 4), (2, 4))]:
            a, b = draw(sa, dt, lo=-1.0, hi=1.0, special=False), draw(sb, dt, lo=-1.0, hi=1.0, special=False)
            w.add("inner", "", [dt, dt], [a, b], dt, np.inner(as_f64(a), as_f64(b)))
        a, b, c = draw((3, 4, 5), dt, lo=-1.0, hi=1.0, special=False), draw((4, 5, 2), dt, lo=-1.0, hi=1.0, special=False), draw((5, 6, 3), dt, lo=-1.0, hi=1.0, special=False)
        w.add("tensordot", "axis=2", [dt, dt], [a, b], dt, np.tensordot(as_f64(a), as_f64(b), axes=2))
        w.add("tensordot", "axis=1", [dt, dt], [b, c[:2].copy()], dt, np.tensordot(as_f64(b), as_f64(c[:2]), axes=1))
        w.add("tensordot", "axis=0", [dt, dt], [a[0, :2], b[0, 0]], dt, np.tensordot(as_f64(a[0, :2]), as_f64(b[0, 0]), axes=0))
        w.add("tensordot", "axes_a=2,0;axes_b=0,2", [dt, dt], [a, c], dt,
              np.tensordot(as_f64(a), as_f64(c), axes=([2, 0], [0, 2])))
    for dt in ["int32", "float16", "float32", "float64"]:
        for sa, sb in [((2, 3), (4,)), ((5,), (3, 2)), ((), (3,)), ((0,), (3,))]:
            a, b = draw(sa, dt, lo=-1.0, hi=1.0, special=False), draw(sb, dt, lo=-1.0, hi=1.0, special=False)
            exp = np.outer(a.astype(np.int64), b.astype(np.int64)) if dt == "int32" else np.outer(as_f64(a), as_f64(b))
            w.add("outer", "", [dt, dt], [a, b], dt, wrap(exp, dt))
        for sa, sb in [((2, 3), (2, 2)), ((2,), (3, 1, 2)), ((2, 1, 2), (3,))]:
            a, b = draw(sa, dt, lo=-1.0, hi=1.0, special=False), draw(sb, dt, lo=-1.0, hi=1.0, special=False)
            exp = np.kron(a.astype(np.int64), b.astype(np.int64)) if dt == "int32" else np.kron(as_f64(a), as_f64(b))
            w.add("kron", "", [dt, dt], [a, b], dt, wrap(exp, dt))


def npz_archives(outdir):
    """numpy.savez and savez_compressed archives for braid's load_npz (test_io_npz.cpp rebuilds
    the same arrays from these formulas)."""
    arrays = {
        "ramp": np.arange(12, dtype=np.float32).reshape(3, 4) / 4,
        "ints": (np.arange(10, dtype=np.int64) - 5) ** 3,
        "flags": np.arange(7) % 3 == 0,
        "halves": np.arange(6, dtype=np.float16) - 2.5,
        "fortran": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
        "empty": np.zeros((0, 3), dtype=np.uint8),
        "scalar": np.array(7.25, dtype=np.float64),
    }
    np.savez(os.path.join(outdir, "numpy_savez.npz"), **arrays)
    np.savez_compressed(os.path.join(outdir, "numpy_savez_compressed.npz"), **arrays)


def complex_nan_cases(w):
    """complex64 max and min with NaN in either part: a complex is NaN when either part is, and
    a NaN wins (NumPy's rule and MLX's). One NaN per reduced group or row, so that every device
    agrees (which of two NaNs a parallel reduction keeps depends on its order)."""
    nan = np.nan

    def cplx(shape, nans):
        a = (RNG.uniform(-4, 4, size=shape) + 1j * RNG.uniform(-4, 4, size=shape)).astype(np.complex64)
        flat = a.reshape(-1)
        for i, z in nans:
            flat[i] = z
        return a

    reductions = [(cplx((2,), [(1, complex(nan, 4))]), [(0,)]),
                  (cplx((5,), [(3, complex(2, nan))]), [(0,)]),
                  (cplx((3, 5), [(7, complex(nan, -1))]), [(0,), (1,), (0, 1)]),
                  (cplx((40, 70), [(1234, complex(0.5, nan))]), [(0,), (1,), (0, 1)])]
    for a, axes_sets in reductions:
        for name, fn in [("max", np.max), ("min", np.min)]:
            for axes in axes_sets:
                params = "axes=" + ",".join(map(str, axes)) + ";keepdims=0"
                w.add(name, params, ["complex64"], [a], "complex64", fn(a, axis=axes))
    # Element-wise: NaN on either side (both: the first, as NumPy).
    a = cplx((3, 4), [(0, complex(nan, 4)), (5, complex(1, nan)), (9, complex(nan, nan))])
    b = cplx((3, 4), [(1, complex(nan, 2)), (5, complex(nan, 3)), (10, complex(2, nan))])
    for name, fn in [("maximum", np.maximum), ("minimum", np.minimum)]:
        w.add(name, "", ["complex64", "complex64"], [a, b], "complex64", fn(a, b))
    # Running extremes: a NaN sticks from where it appears.
    a = cplx((3, 6), [(2, complex(nan, 1)), (10, complex(-1, nan))])
    for name, ufunc in [("cummax", np.maximum), ("cummin", np.minimum)]:
        for reverse in (0, 1):
            x = np.flip(a, 1) if reverse else a
            r = ufunc.accumulate(x, axis=1)
            r = np.flip(r, 1) if reverse else r
            w.add(name, f"axis=1;reverse={reverse};inclusive=1", ["complex64"], [a], "complex64", r)


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    w = Writer(outdir)
    same = lambda dt: dt
    # Element-wise arithmetic: same-dtype inputs (promotion is checked by the unit tests).
    binary_cases(w, "add", np.add, ALL, same)
    binary_cases(w, "subtract", np.subtract, NUMERIC, same)
    binary_cases(w, "multiply", np.multiply, ALL, same)
    binary_cases(w, "divide", np.divide, FLOATS, same)
    binary_cases(w, "divide", np.divide, INTS, lambda dt: "float32", nonzero_rhs=True)
    binary_cases(w, "maximum", np.maximum, NUMERIC, same)
    binary_cases(w, "minimum", np.minimum, NUMERIC, same)
    binary_cases(w, "equal", np.equal, ALL, lambda dt: "bool")
    binary_cases(w, "less", np.less, ALL, lambda dt: "bool")
    binary_cases(w, "greater", np.greater, ALL, lambda dt: "bool")
    unary_cases(w, "negative", np.negative, NUMERIC, same)
    unary_cases(w, "exp", np.exp, FLOATS, same)
    unary_cases(w, "exp", np.exp, ["int32", "uint8"], inexact)
    unary_cases(w, "log", np.log, FLOATS, same)
    unary_cases(w, "sqrt", np.sqrt, FLOATS, same)
    unary_cases(w, "tanh", np.tanh, FLOATS + ["int16"], inexact)
    # MLX widens bool and small integers: signed (and bool) to int32, unsigned to uint32.
    sum_rule = lambda dt: {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
                           "uint16": "uint32"}.get(dt, dt)
    reduce_cases(w, "sum", np.sum, ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"], sum_rule)
    reduce_cases(w, "max", np.max, ["uint8", "int32", "int64", "float16", "float32", "float64"], same)
    elementwise_cases(w)
    reduction_cases(w)
    scan_cases(w)
    shape_cases(w)
    sort_cases(w)
    linalg_cases(w)
    complex_nan_cases(w)
    npz_archives(outdir)
    w.finish()
    print(f"make_cases: {len(w.lines)} cases in {outdir}")


if __name__ == "__main__":
    main()
