#!/usr/bin/env python3
"""Generates the op families of braid's C API (mlx-c's interface) from braid's C++ headers.

    generate.py --braid-include DIR --out DIR [--summary]

Reads DIR/braid/ops.h (with einsum.h, which joins the ops family as mlx-c's ops.h has
mlx_einsum), random.h, fast.h, fft.h and linalg.h and writes, under the output directory,
include/braid/c/{ops,random,fast,fft,linalg}.h (the C declarations) and
src/{ops,random,fast,fft,linalg}.cpp (their definitions). The build runs it whenever a header or this script changes,
so the C API cannot fall behind the C++ one.

Every overload of every public function in those headers is accounted for:
  * a function with one overload becomes mlx_<prefix><name>;
  * the overloads of an overloaded function are named by VARIANTS below (mlx-c's names:
    mlx_sum_axes, mlx_sum_axis, mlx_sum) or covered by another overload (None);
  * templates (scalar conveniences) and operators have no C form, nor do the functions a
    family's `no_c_form` names (each with the reason);
  * a signature the type rules cannot map needs an entry in HANDWRITTEN.
Anything else (a new overload without a rule, a rule for an overload that no longer exists, a
type without a mapping) stops the build with a message saying what to add. Standard library only.
"""

import argparse
import os
import re
import sys
from dataclasses import dataclass, field


class GeneratorError(Exception):
    pass


# --- Families ----------------------------------------------------------------------------------

# For each overloaded function: its overloads by C++ parameter types (const, & and the trailing
# StreamOrDevice dropped), each with mlx-c's suffix ("" for none) or None when another overload
# covers it in C.
OPS_VARIANTS = {
    "zeros": {"Shape,Dtype": "", "Shape": None},
    "ones": {"Shape,Dtype": "", "Shape": None},
    "full": {"Shape,array,Dtype": "", "Shape,array": None},
    "arange": {
        "double,double,double,Dtype": "",
        "double,double,double": None,
        "double,double,Dtype": None,
        "double,double": None,
        "double,Dtype": None,
        "double": None,
        "int,int,int": None,
        "int,int": None,
        "int": None,
    },
    "linspace": {"double,double,int,Dtype": "", "double,double,int,bool,Dtype": "endpoint"},
    "flip": {"array,std::vector<int>": "axes", "array,int": "axis", "array": ""},
    "full_like": {"array,array,Dtype": "", "array,array": None},
    "eye": {"int,int,int,Dtype": "", "int,Dtype": None, "int,int": None, "int,int,int": None, "int": None},
    "identity": {"int,Dtype": "", "int": None},
    "tri": {"int,int,int,Dtype": "", "int,Dtype": None},
    "transpose": {"array,std::vector<int>": "axes", "array,std::initializer_list<int>": None, "array": ""},
    "squeeze": {"array,std::vector<int>": "axes", "array,int": "axis", "array": ""},
    "expand_dims": {"array,std::vector<int>": "axes", "array,int": ""},
    "flatten": {"array,int,int": "", "array": None},
    "repeat": {"array,int,int": "axis", "array,int": ""},
    "pad": {
        "array,std::vector<int>,Shape,Shape,array,std::string": "",
        "array,std::vector<std::pair<int,int>>,array,std::string": None,
        "array,std::pair<int,int>,array,std::string": None,
        "array,int,array,std::string": "symmetric",
    },
    "roll": {
        "array,int": None,
        "array,Shape": "",
        "array,int,int": None,
        "array,int,std::vector<int>": None,
        "array,Shape,int": "axis",
        "array,Shape,std::vector<int>": "axes",
    },
    "trace": {"array,int,int,int,Dtype": "", "array,int,int,int": None, "array": None},
    "atleast_1d": {"array": "", "std::vector<array>": None},
    "atleast_2d": {"array": "", "std::vector<array>": None},
    "atleast_3d": {"array": "", "std::vector<array>": None},
    "slice": {
        "array,Shape,Shape,Shape": "",
        "array,std::initializer_list<int>,Shape,Shape": None,
        "array,Shape,Shape": None,
        "array,array,std::vector<int>,Shape": "dynamic",
    },
    "slice_update": {
        "array,array,Shape,Shape,Shape": "",
        "array,array,Shape,Shape": None,
        "array,array,array,std::vector<int>": "dynamic",
    },
    "slice_update_add": {"array,array,Shape,Shape,Shape": "", "array,array,Shape,Shape": None},
    "slice_update_prod": {"array,array,Shape,Shape,Shape": "", "array,array,Shape,Shape": None},
    "slice_update_max": {"array,array,Shape,Shape,Shape": "", "array,array,Shape,Shape": None},
    "slice_update_min": {"array,array,Shape,Shape,Shape": "", "array,array,Shape,Shape": None},
    "split": {"array,int,int": "", "array,int": None, "array,Shape,int": "sections", "array,Shape": None},
    "concatenate": {"std::vector<array>,int": "axis", "std::vector<array>": ""},
    "stack": {"std::vector<array>,int": "axis", "std::vector<array>": ""},
    "round": {"array,int": "", "array": None},
    "array_equal": {"array,array,bool": "", "array,array": None},
    "median": {"array,bool": None, "array": None, "array,std::vector<int>,bool": "", "array,int,bool": None},
    "argmin": {"array,bool": "", "array": None, "array,int,bool": "axis"},
    "argmax": {"array,bool": "", "array": None, "array,int,bool": "axis"},
    "take": {"array,array,int": "axis", "array,int,int": None, "array,array": "", "array,int": None},
    "gather": {"array,std::vector<array>,std::vector<int>,Shape": "", "array,array,int,Shape": "single"},
    "sort": {"array": "", "array,int": "axis"},
    "argsort": {"array": "", "array,int": "axis"},
    "partition": {"array,int": "", "array,int,int": "axis"},
    "argpartition": {"array,int": "", "array,int,int": "axis"},
    "topk": {"array,int": "", "array,int,int": "axis"},
    "tensordot": {"array,array,int": "axis", "array,array,std::vector<int>,std::vector<int>": ""},
    "softmax": {"array,std::vector<int>,bool": "axes", "array,int,bool": "axis", "array,bool": ""},
    "conv_general": {
        "array,array,std::vector<int>,std::vector<int>,std::vector<int>,std::vector<int>,std::vector<int>,int,bool": "",
        "array,array,std::vector<int>,std::vector<int>,std::vector<int>,std::vector<int>,int,bool": None,
    },
}
# The reductions: over axes, one axis, everything (with keepdims), everything.
for _name in ["all", "any", "sum", "prod", "max", "min", "mean", "logsumexp"]:
    OPS_VARIANTS[_name] = {"array,bool": "", "array": None, "array,std::vector<int>,bool": "axes", "array,int,bool": "axis"}
for _name in ["var", "std"]:
    OPS_VARIANTS[_name] = {
        "array,bool,int": "",
        "array": None,
        "array,std::vector<int>,bool,int": "axes",
        "array,int,bool,int": "axis",
    }
# The scans: along an axis (mlx-c has no flattened form).
for _name in ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]:
    OPS_VARIANTS[_name] = {"array,bool,bool": None, "array,int,bool,bool": ""}
# The scatters: over several index arrays, or one along an axis.
for _name in ["scatter", "scatter_add", "scatter_prod", "scatter_max", "scatter_min"]:
    OPS_VARIANTS[_name] = {"array,std::vector<array>,array,std::vector<int>": "", "array,array,array,int": "single"}

RANDOM_VARIANTS = {
    "bits": {"Shape,int,std::optional<array>": "", "Shape,std::optional<array>": None},
    "split": {"array": "", "array,int": "num"},
    "uniform": {
        "array,array,Shape,Dtype,std::optional<array>": "",
        "Shape,Dtype,std::optional<array>": None,
        "Shape,std::optional<array>": None,
    },
    "normal": {
        "Shape,Dtype,std::optional<array>,std::optional<array>,std::optional<array>": "broadcast",
        "Shape,Dtype,float,float,std::optional<array>": "",
        "Shape,float,float,std::optional<array>": None,
        "Shape,Dtype,std::optional<array>": None,
        "Shape,std::optional<array>": None,
    },
    "bernoulli": {
        "array,Shape,std::optional<array>": "",
        "array,std::optional<array>": None,
        "std::optional<array>": None,
    },
    "truncated_normal": {
        "array,array,Shape,Dtype,std::optional<array>": "",
        "array,array,Dtype,std::optional<array>": None,
    },
    "categorical": {
        "array,int,Shape,std::optional<array>": "shape",
        "array,int,int,std::optional<array>": "num_samples",
        "array,int,std::optional<array>": "",
    },
    "laplace": {
        "Shape,Dtype,float,float,std::optional<array>": "",
        "Shape,float,float,std::optional<array>": None,
        "Shape,Dtype,std::optional<array>": None,
        "Shape,std::optional<array>": None,
    },
    "permutation": {"array,int,std::optional<array>": "", "int,std::optional<array>": "arange"},
}

FAST_VARIANTS = {
    # mlx-c's mlx_fast_rope takes an integer offset, mlx_fast_rope_dynamic an array.
    "rope": {
        "array,int,bool,std::optional<float>,float,int,std::optional<array>": "",
        "array,int,bool,std::optional<float>,float,array,std::optional<array>": "dynamic",
    },
}

# Functions that mlx-c does not have either, by name, with the reason.
OPS_NO_C_FORM = {"einsum_path": "mlx-c has no einsum_path (its pair of path and text has no C type there)"}
# mlx-c's fft family: each transform takes its sizes, axes and `norm` explicitly
# (mlx_fft_fft(res, a, n, axis, norm, s)), generated from the C++ form with all three. The form
# of mlx-c's fft.h from before `norm` (Backward) is there too, as mlx_fft_<name>_default_norm,
# and FFT_FORM_MACROS lets source written for either form call mlx_fft_<name> by its number of
# arguments. The overloads that default the sizes or axes (and the shifts over every axis) are
# covered by those.
FFT_VARIANTS = {}
FFT_ONE_AXIS = ["fft", "ifft", "rfft", "irfft"]
FFT_AXES = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
for _name in FFT_ONE_AXIS:
    FFT_VARIANTS[_name] = {
        "array,int,int,FFTNorm": "",
        "array,int,int": "default_norm",
        "array,int": None,
        "array,int,FFTNorm": None,
    }
for _name in FFT_AXES:
    FFT_VARIANTS[_name] = {
        "array,Shape,std::vector<int>,FFTNorm": "",
        "array,Shape,std::vector<int>": "default_norm",
        "array,std::vector<int>": None,
        "array,std::vector<int>,FFTNorm": None,
    }
    if _name.endswith("n"):
        FFT_VARIANTS[_name].update({"array": None, "array,FFTNorm": None})
for _name in ["fftshift", "ifftshift"]:
    FFT_VARIANTS[_name] = {"array,std::vector<int>": "", "array": None}
LINALG_VARIANTS = {
    # mlx-c: mlx_linalg_norm (a numeric ord), mlx_linalg_norm_matrix (a string ord),
    # mlx_linalg_norm_l2 (none); the single-axis overloads are C++ conveniences.
    "norm": {
        "array,double,std::optional<std::vector<int>>,bool": "",
        "array,double,int,bool": None,
        "array,std::string,std::optional<std::vector<int>>,bool": "matrix",
        "array,std::string,int,bool": None,
        "array,std::optional<std::vector<int>>,bool": "l2",
        "array,int,bool": None,
    },
    "svd": {"array,bool": "", "array": None},
}
FFT_NO_C_FORM = {}
FFT_PROLOGUE = """/* The normalization of a transform (MLX's fft::FFTNorm): Backward scales the inverse by 1/n,
 * Ortho both directions by 1/sqrt(n), Forward the forward transform by 1/n. */
typedef enum mlx_fft_norm_ { MLX_FFT_NORM_BACKWARD, MLX_FFT_NORM_ORTHO, MLX_FFT_NORM_FORWARD } mlx_fft_norm;
"""
FFT_SOURCE_PROLOGUE = """#include <cstring>
#include <type_traits>

namespace {
// The C caller may pass any int: its bytes are read as an integer first (loading an enum
// object outside the enum's values is undefined in C++), then checked.
fft::FFTNorm fft_norm_arg(const mlx_fft_norm& norm) {
  std::underlying_type_t<mlx_fft_norm> raw;
  std::memcpy(&raw, &norm, sizeof raw);
  switch (raw) {
    case MLX_FFT_NORM_BACKWARD:
      return fft::FFTNorm::Backward;
    case MLX_FFT_NORM_ORTHO:
      return fft::FFTNorm::Ortho;
    case MLX_FFT_NORM_FORWARD:
      return fft::FFTNorm::Forward;
    default:
      break;
  }
  throw std::invalid_argument("[fft] norm must be MLX_FFT_NORM_BACKWARD, MLX_FFT_NORM_ORTHO or MLX_FFT_NORM_FORWARD.");
}
}  // namespace

"""


def fft_form_macros():
    """Each transform's name as a macro choosing, by its number of arguments, the form with
    `norm` (the function of that name) or the one from before it (_default_norm)."""
    lines = [
        "/* Source written for mlx-c's fft.h from before `norm` calls each transform with one argument",
        " * fewer; these macros send such calls to the _default_norm form. A call with `norm`, and the",
        " * name used without arguments (its address), reach the function itself. Define",
        " * BRAID_C_NO_FFT_FORM_MACROS before including this header to leave them out. */",
        "#ifndef BRAID_C_NO_FFT_FORM_MACROS",
        "#define BRAID_C_FFT_FORM6_(a1, a2, a3, a4, a5, a6, name, ...) name",
        "#define BRAID_C_FFT_FORM8_(a1, a2, a3, a4, a5, a6, a7, a8, name, ...) name",
    ]
    for name in FFT_ONE_AXIS:
        f = "mlx_fft_" + name
        lines.append(f"#define {f}(...) BRAID_C_FFT_FORM6_(__VA_ARGS__, {f}, {f}_default_norm, ~)(__VA_ARGS__)")
    for name in FFT_AXES:
        f = "mlx_fft_" + name
        lines.append(f"#define {f}(...) BRAID_C_FFT_FORM8_(__VA_ARGS__, {f}, {f}_default_norm, ~)(__VA_ARGS__)")
    lines.append("#endif")
    return "\n".join(lines) + "\n\n"


# Overloads whose signature the type rules cannot map, with their C declaration and C++ body:
# {("name", "types"): ("int mlx_x(...)", "body using the C parameters")}. None needed so far.
HANDWRITTEN = {}


@dataclass
class Family:
    headers: tuple  # under the braid include directory
    namespace: str  # of the functions
    c_prefix: str  # after "mlx_"
    out_name: str  # ops -> include/braid/c/ops.h and src/ops.cpp
    variants: dict
    title: str
    no_c_form: dict = field(default_factory=dict)
    prologue: str = ""  # header text before the functions (types of the family's own)
    epilogue: str = ""  # header text after them
    source_prologue: str = ""  # source text before the functions (helpers of its own)

    @property
    def header(self):
        """The headers as messages and notices name them."""
        return " and ".join(self.headers)


FAMILIES = [
    Family(("braid/ops.h", "braid/einsum.h"), "braid", "", "ops", OPS_VARIANTS,
           "every op of braid/ops.h and braid/einsum.h (mlx-c's mlx/c/ops.h)", OPS_NO_C_FORM),
    Family(("braid/random.h",), "braid::random", "random_", "random", RANDOM_VARIANTS,
           "random numbers, braid/random.h (mlx-c's mlx/c/random.h)"),
    Family(("braid/fast.h",), "braid::fast", "fast_", "fast", FAST_VARIANTS,
           "norms, rotary embeddings and attention, braid/fast.h (mlx-c's mlx/c/fast.h, without custom kernels)"),
    Family(("braid/fft.h",), "braid::fft", "fft_", "fft", FFT_VARIANTS,
           "discrete Fourier transforms, braid/fft.h (mlx-c's mlx/c/fft.h)", FFT_NO_C_FORM,
           prologue=FFT_PROLOGUE, epilogue=fft_form_macros(), source_prologue=FFT_SOURCE_PROLOGUE),
    Family(("braid/linalg.h",), "braid::linalg", "linalg_", "linalg", LINALG_VARIANTS,
           "linear algebra, braid/linalg.h (mlx-c's mlx/c/linalg.h)"),
]


# --- Parsing the C++ header --------------------------------------------------------------------


@dataclass
class Param:
    type: str  # normalized: no const, no &, no spaces inside templates
    name: str
    default: str


@dataclass
class Decl:
    name: str
    ret: str
    params: list
    doc: list
    kind: str  # function, template or operator
    namespace: str

    def signature(self):
        return ",".join(p.type for p in self.params if p.type != "StreamOrDevice")

    def pretty(self):
        return f"{self.ret} {self.namespace}::{self.name}({', '.join(p.type + ' ' + p.name for p in self.params)})"


def normalize_type(t):
    t = re.sub(r"\bconst\b", " ", t).replace("&", " ")
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\s*([<>,:*])\s*", r"\1", t)


def split_top_level(text, sep):
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "(<{[":
            depth += 1
        elif c in ")>}]":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def parse_param(text):
    pieces = split_top_level(text, "=")
    decl = pieces[0]
    default = "=".join(pieces[1:]).strip()
    m = re.match(r"^(.*?)(\w+)\s*$", decl.strip(), re.S)
    if not m or not m.group(1).strip():
        raise GeneratorError(f"cannot parse the parameter '{text.strip()}'")
    return Param(normalize_type(m.group(1)), m.group(2), default)


def parse_function(stmt, doc, namespace):
    s = re.sub(r"\s+", " ", stmt).strip()
    if s.startswith("template"):
        name = re.search(r"(\w+|operator\S+)\s*\(", s)
        return Decl(name.group(1) if name else "?", "", [], doc, "template", namespace)
    s = re.sub(r"^((inline|static|constexpr|\[\[nodiscard\]\])\s+)+", "", s)
    if re.search(r"\boperator\b", s):
        return Decl(re.search(r"operator\s*\S+?(?=\()", s).group(0), "", [], doc, "operator", namespace)
    m = re.match(r"^(.*?)\b(\w+)\s*\((.*)\)\s*(const)?$", s, re.S)
    if not m:
        raise GeneratorError(f"cannot parse the declaration '{s}'")
    params = [parse_param(p) for p in split_top_level(m.group(3), ",")]
    return Decl(m.group(2), normalize_type(m.group(1)), params, doc, "function", namespace)


def parse_header(text):
    """The declarations at namespace scope, with the `///` comment above each."""
    decls, namespaces, stmt, doc, pending_doc = [], [], [], [], []
    i, n, depth = 0, len(text), 0

    def emit(body):
        s = "".join(stmt).strip()
        if not s or re.match(r"^(using|class|struct|enum|typedef|friend)\b", s):
            return
        decls.append(parse_function(s, list(doc), "::".join(namespaces)))

    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            line = text[i:end]
            if line.startswith("///"):
                pending_doc.append(line[3:].strip())
            i = end
            continue
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        c = text[i]
        if c == "#" and (i == 0 or text[i - 1] == "\n"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == '"':
            end = i + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            stmt.append(text[i:end + 1])
            i = end + 1
            continue
        if not c.isspace() and not "".join(stmt).strip():
            doc, pending_doc = pending_doc, []
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "{" and depth == 0:
            head = "".join(stmt).strip()
            m = re.match(r"^namespace\s+([\w:]+)$", head)
            if m:
                namespaces.append(m.group(1))
            elif head.startswith("namespace"):
                namespaces.append("")
            else:  # a function, class or enum body
                level, j = 0, i
                while True:
                    if text[j] == "{":
                        level += 1
                    elif text[j] == "}":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                emit(head)
                i = j
            stmt = []
            i += 1
            continue
        elif c == "}" and depth == 0:
            namespaces.pop()
            stmt = []
            i += 1
            continue
        elif c == ";" and depth == 0:
            emit("".join(stmt))
            stmt = []
            i += 1
            continue
        stmt.append(c)
        i += 1
    return decls


def read_family(family, include_dir):
    """The declarations of all the family's headers."""
    decls = []
    for header in family.headers:
        with open(os.path.join(include_dir, header), encoding="utf-8") as f:
            decls += parse_header(f.read())
    return decls


# --- Type rules (mlx-c's mapping) --------------------------------------------------------------


@dataclass
class CArg:
    decl: list  # C parameter declarations
    call: str  # the C++ argument built from them


def map_param(p):
    n = p.name
    t = p.type
    if t == "array":
        return CArg([f"const mlx_array {n}"], f"get({n})")
    if t == "std::optional<array>":
        return CArg([f"const mlx_array {n} /* may be null */"], f"optional_arg({n})")
    if t == "std::vector<array>":
        return CArg([f"const mlx_vector_array {n}"], f"get({n})")
    if t in ("Shape", "std::vector<int>"):
        return CArg([f"const int* {n}", f"size_t {n}_num"], f"sequence_arg<{t}>({n}, {n}_num)")
    if t == "std::optional<std::vector<int>>":
        return CArg([f"const int* {n} /* may be null */", f"size_t {n}_num"],
                    f"optional_sequence_arg<std::vector<int>>({n}, {n}_num)")
    if t == "Strides":
        return CArg([f"const int64_t* {n}", f"size_t {n}_num"], f"sequence_arg<Strides>({n}, {n}_num)")
    if t in ("int", "float", "double", "bool", "size_t", "uint64_t"):
        return CArg([f"{t} {n}"], n)
    if t == "Dtype":
        return CArg([f"mlx_dtype {n}"], f"to_dtype({n})")
    if t in ("std::optional<int>", "std::optional<float>"):
        return CArg([f"mlx_optional_{t[14:-1]} {n}"], f"optional_arg({n})")
    if t == "std::optional<Dtype>":
        return CArg([f"mlx_optional_dtype {n}"], f"optional_arg({n})")
    if t == "std::string":
        return CArg([f"const char* {n}"], f"string_arg({n})")
    if t == "std::pair<int,int>":
        return CArg([f"int {n}_0", f"int {n}_1"], f"std::make_pair({n}_0, {n}_1)")
    if t == "std::tuple<int,int,int>":
        return CArg([f"int {n}_0", f"int {n}_1", f"int {n}_2"], f"std::make_tuple({n}_0, {n}_1, {n}_2)")
    if t == "StreamOrDevice":
        return CArg([f"const mlx_stream {n}"], f"stream_arg({n})")
    if t == "FFTNorm":
        return CArg([f"mlx_fft_norm {n}"], f"fft_norm_arg({n})")
    return None


def map_result(ret):
    """C result parameters and the statement storing the C++ result `r` into them."""
    if ret == "array":
        return ["mlx_array* res"], "set(out(res), {call});"
    if ret == "std::vector<array>":
        return ["mlx_vector_array* res"], "set(out(res), {call});"
    if ret == "std::pair<array,array>":
        return (["mlx_array* res_0", "mlx_array* res_1"],
                "auto r = {call};\n    set(out(res_0), std::move(r.first));\n    set(out(res_1), std::move(r.second));")
    if ret == "void":
        return [], "{call};"
    return None


@dataclass
class CFunction:
    c_name: str
    decl: str  # "int mlx_x(...)"
    body: str
    doc: list
    source: str


def make_function(family, d, variant):
    c_name = "mlx_" + family.c_prefix + d.name + ("_" + variant if variant else "")
    handwritten = HANDWRITTEN.get((d.name, d.signature()))
    if handwritten:
        return CFunction(c_name, handwritten[0], handwritten[1], d.doc, d.pretty())
    result = map_result(d.ret)
    args = [map_param(p) for p in d.params]
    unmapped = [p.type for p, a in zip(d.params, args) if a is None]
    if result is None or unmapped:
        what = f"the result type {d.ret}" if result is None else "the parameter type " + ", ".join(unmapped)
        raise GeneratorError(
            f"{family.header}: {d.pretty()} has {what}, which has no C mapping. Add the type to map_param/"
            f"map_result, name the overload None in the variants if another covers it, or give it a "
            f"HANDWRITTEN wrapper.")
    c_params = result[0] + [x for a in args for x in a.decl]
    call = f"{d.namespace}::{d.name}(" + ", ".join(a.call for a in args) + ")"
    decl = f"int {c_name}(" + (", ".join(c_params) if c_params else "void") + ")"
    body = "return guard([&] {\n    " + result[1].format(call=call) + "\n  });"
    return CFunction(c_name, decl, body, d.doc, d.pretty())


def generate_family(family, decls):
    """The family's C functions, and counts for the summary."""
    own = [d for d in decls if d.namespace == family.namespace]
    by_name = {}
    for d in own:
        if d.kind == "function":
            by_name.setdefault(d.name, []).append(d)
    functions, covered, stats = [], 0, {"templates": 0, "operators": 0, "no_c_form": 0}
    for d in own:
        if d.kind == "template":
            stats["templates"] += 1
        elif d.kind == "operator":
            stats["operators"] += 1
    for name in sorted(set(family.variants) - set(by_name)):
        raise GeneratorError(f"{family.header}: a naming rule exists for {name}, which is not declared any more.")
    for name in sorted(set(family.no_c_form) - set(by_name)):
        raise GeneratorError(f"{family.header}: {name} is listed as having no C form, but is not declared any more.")
    for name, overloads in by_name.items():
        if name in family.no_c_form:
            stats["no_c_form"] += len(overloads)
            continue
        doc = next((d.doc for d in overloads if d.doc), [])
        for d in overloads:
            d.doc = d.doc or doc
        if len(overloads) == 1 and name not in family.variants:
            functions.append(make_function(family, overloads[0], ""))
            continue
        rules = family.variants.get(name)
        if rules is None:
            listing = "\n  ".join(d.signature() for d in overloads)
            raise GeneratorError(
                f"{family.header}: {name} has {len(overloads)} overloads and no naming rule. Add "
                f"\"{name}\" to the variants with one entry per overload:\n  {listing}")
        signatures = [d.signature() for d in overloads]
        for sig in rules:
            if sig not in signatures:
                raise GeneratorError(f"{family.header}: the naming rule of {name} lists ({sig}), which no overload has.")
        for d in overloads:
            sig = d.signature()
            if sig not in rules:
                raise GeneratorError(
                    f"{family.header}: {d.pretty()} is a new overload of {name}. Add \"{sig}\" to its naming rule "
                    f"(a suffix, or None if another overload covers it in C).")
            if rules[sig] is None:
                covered += 1
            else:
                functions.append(make_function(family, d, rules[sig]))
    seen = {}
    for f in functions:
        if f.c_name in seen:
            raise GeneratorError(f"{f.c_name} would come from both {seen[f.c_name]} and {f.source}.")
        seen[f.c_name] = f.source
    stats["overloads"] = sum(len(v) for v in by_name.values())
    stats["covered"] = covered
    functions.sort(key=lambda f: f.c_name)
    return functions, stats


# --- Output ------------------------------------------------------------------------------------

NOTICE = "Generated by bindings/c/generate.py from {headers}; do not edit."


def notice(family):
    return NOTICE.format(headers=" and ".join("include/" + h for h in family.headers))


def c_doc(lines):
    text = " ".join(lines).replace("*/", "* /")
    if not text:
        return ""
    words, out, cur = text.split(), [], " *"
    for w in words:
        if len(cur) + 1 + len(w) > 100:
            out.append(cur)
            cur = " *"
        cur += " " + w
    out.append(cur)
    return "/**\n" + "\n".join(out) + "\n */\n"


def wrap(decl, width=100):
    """A long declaration with one parameter per line, as clang-format lays out mlx-c's."""
    if len(decl) <= width:
        return decl
    head, _, params = decl.partition("(")
    return head + "(\n    " + ",\n    ".join(p.strip() for p in split_top_level(params[:-1], ",")) + ")"


def write_header(family, functions):
    guard = f"BRAID_C_{family.out_name.upper()}_H"
    parts = [
        f"/* braid's C API: {family.title}.",
        f" * {notice(family)}",
        " *",
        " * Each function writes its result through its first argument(s) and returns 0, or reports the",
        " * error to the handler (braid/c/error.h) and returns non-zero. An array argument marked \"may be",
        " * null\" takes an empty handle for \"none\"; an empty stream handle means the calling thread's",
        " * default stream. Each comment is the C++ function's; C++ defaults do not apply in C.",
        " *",
        " * Thread safety: every function may be called from any thread at any time; graphs built on one",
        " * thread may be evaluated on any other. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdbool.h>",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "#include <stdio.h>  /* as mlx-c's headers: programs written for them may rely on it */",
        "",
        '#include "braid/c/array.h"',
        '#include "braid/c/optional.h"',
        '#include "braid/c/stream.h"',
        '#include "braid/c/vector.h"',
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
    ]
    text = "\n".join(parts) + "\n" + (family.prologue + "\n" if family.prologue else "")
    for f in functions:
        text += c_doc(f.doc) + wrap(f.decl) + ";\n\n"
    text += "#ifdef __cplusplus\n}\n#endif\n\n" + family.epilogue + "#endif\n"
    return text


def write_source(family, functions):
    text = (f"// {notice(family)}\n"
            f"// The C functions of {family.header}: each converts its arguments, calls braid and stores the\n"
            f"// result, inside the error boundary (handles.h).\n"
            f'#include "braid/c/{family.out_name}.h"\n\n'
            + "".join(f'#include "{h}"\n' for h in family.headers) + '#include "handles.h"\n\n'
            "using namespace braid;\nusing namespace braid::capi;\n\n" + family.source_prologue)
    for f in functions:
        text += f"// {f.source}\nextern \"C\" {wrap(f.decl, 90)} {{\n  {f.body}\n}}\n\n"
    return text


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--braid-include", required=True, help="the directory holding braid/ops.h")
    ap.add_argument("--out", required=True, help="the output directory")
    ap.add_argument("--summary", action="store_true", help="print what was generated")
    args = ap.parse_args()
    try:
        for family in FAMILIES:
            functions, stats = generate_family(family, read_family(family, args.braid_include))
            write(os.path.join(args.out, "include", "braid", "c", family.out_name + ".h"),
                             write_header(family, functions))
            write(os.path.join(args.out, "src", family.out_name + ".cpp"), write_source(family, functions))
            if args.summary:
                print(f"{family.header}: {len(functions)} C functions from {stats['overloads']} overloads "
                      f"({stats['covered']} covered by another overload); {stats['templates']} templates and "
                      f"{stats['operators']} operators have no C form"
                      + (f"; {stats['no_c_form']} overloads without a C form in mlx-c either" if stats["no_c_form"] else ""))
    except GeneratorError as e:
        print(f"generate.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
