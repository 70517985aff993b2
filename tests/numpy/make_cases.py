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
                    if 0 in [s[i] for i in axes] and op == "max":
                        continue  # max of nothing is an error
                    with np.errstate(all="ignore"):
                        exp = fn(as_f64(a), axis=axes, keepdims=keep)
                    out = out_rule(dt)
                    if out in INTS:
                        exp = wrap(fn(a.astype(np.int64), axis=axes, keepdims=keep), out)
                    params = "axes=" + ",".join(map(str, axes)) + (";keepdims=1" if keep else ";keepdims=0")
                    w.add(op, params, [dt], [a], out, exp)


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
    sum_rule = lambda dt: "int32" if dt in ("bool", "uint8") else dt
    reduce_cases(w, "sum", np.sum, ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"], sum_rule)
    reduce_cases(w, "max", np.max, ["uint8", "int32", "int64", "float16", "float32", "float64"], same)
    w.finish()
    print(f"make_cases: {len(w.lines)} cases in {outdir}")


if __name__ == "__main__":
    main()
