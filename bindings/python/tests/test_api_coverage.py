# Every op declared in braid's C++ header include/braid/ops.h is a function of braid.core.
import os
import re

import braid.core as mx

OPS_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "include", "braid", "ops.h")

_DECLARATION = re.compile(
    r"^\s*(?:inline\s+)?(?:array|std::vector<array>)\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def declared_ops():
    with open(OPS_H) as f:
        source = re.sub(r"//[^\n]*", "", f.read())
    return set(_DECLARATION.findall(source))


def test_the_header_parses_to_the_ops():
    names = declared_ops()
    # A sample from each part of the header, so a parsing slip shows here.
    for name in ["zeros", "full", "meshgrid", "abs", "divmod", "sum", "argmax", "cumsum", "take",
                 "sort", "matmul", "conv2d", "quantize", "softmax"]:
        assert name in names
    assert not any(n.startswith("operator") for n in names)


def test_every_declared_op_is_bound():
    missing = sorted(n for n in declared_ops() if not hasattr(mx, n))
    assert not missing, f"ops of include/braid/ops.h missing from braid.core: {missing}"


def test_every_random_fast_fft_and_linalg_function_is_bound():
    for header, module in [("random.h", mx.random), ("fast.h", mx.fast), ("fft.h", mx.fft), ("linalg.h", mx.linalg)]:
        with open(os.path.join(os.path.dirname(OPS_H), header)) as f:
            source = re.sub(r"//[^\n]*", "", f.read())
        # Free functions start at the first column (members are indented).
        names = set(re.findall(
            r"^(?:inline\s+)?(?:array|void|std::vector<array>|std::pair<array, array>)\s+([A-Za-z_]\w*)\s*\(",
            source, re.MULTILINE))
        assert names, header
        missing = sorted(n for n in names if not hasattr(module, n))
        assert not missing, f"functions of include/braid/{header} missing from {module.__name__}: {missing}"


def test_every_einsum_function_is_bound():
    with open(os.path.join(os.path.dirname(OPS_H), "einsum.h")) as f:
        source = re.sub(r"//[^\n]*", "", f.read())
    names = set(re.findall(r"^(?:array|std::pair<.*?>)\s+([A-Za-z_]\w*)\s*\(", source, re.MULTILINE))
    assert names == {"einsum", "einsum_path"}
    assert all(hasattr(mx, n) for n in names)
