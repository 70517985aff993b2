#!/usr/bin/env python3
"""Writes the Rust crate's generated sources from braid's C headers (<braid/c.h> and the
headers it includes, the generated ops.h, random.h, fast.h, fft.h and linalg.h among them):

  sys.rs     extern "C" declarations of every function, the handle structs (#[repr(C)], with
             their `ctx` pointers as mlx-c defines them), the optional structs, the io vtable,
             and the enums as integer aliases with one constant per value (a C value Rust does
             not know can then never be undefined behaviour)
  ops.rs, random.rs, fast.rs, fft.rs, linalg.rs
             safe wrappers of the op families: `name(args) -> Result<..>` on the calling
             thread's default stream and `name_device(args, &Stream)`, with the C comments

build.rs runs it into OUT_DIR on every build whose headers changed, so the crate cannot fall
behind the C API. Standard library only. By hand:
  python3 generate.py --include /usr/local/include --out /tmp/braid-rs [--summary]
"""
import argparse
import os
import re
import sys

RUST_KEYWORDS = {
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final",
    "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
}

PRIMITIVES = {
    "void": "::std::os::raw::c_void",
    "char": "::std::os::raw::c_char",
    "int": "::std::os::raw::c_int",
    "unsigned": "::std::os::raw::c_uint",
    "bool": "bool",
    "float": "f32",
    "double": "f64",
    "size_t": "usize",
    "uintptr_t": "usize",
    "int8_t": "i8",
    "int16_t": "i16",
    "int32_t": "i32",
    "int64_t": "i64",
    "uint8_t": "u8",
    "uint16_t": "u16",
    "uint32_t": "u32",
    "uint64_t": "u64",
}


# ---- reading the headers -----------------------------------------------------------------------

def read_headers(include_dir):
    """The text of braid/c.h's headers, in include order, each once."""
    seen, ordered = set(), []

    def visit(rel):
        if rel in seen:
            return
        seen.add(rel)
        path = os.path.join(include_dir, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for inc in re.findall(r'#include\s+"(braid/[^"]+)"', text):
            visit(inc)
        ordered.append((rel, text))

    visit("braid/c.h")
    return ordered


def preprocess(text):
    """Comments out, conditionals resolved as a C compiler without __cplusplus, __GNUC__ or the
    half-float macros sees them (only header guards are ever true), preprocessor lines out."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    defined, stack, out = set(), [], []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].split()
            word = directive[0] if directive else ""
            active = all(stack)
            if word == "ifdef":
                stack.append(directive[1] in defined)
            elif word == "ifndef":
                stack.append(directive[1] not in defined)
            elif word == "if":
                stack.append(False)  # only `#if defined(__GNUC__)` appears: an attribute
            elif word == "else":
                stack[-1] = not stack[-1]
            elif word == "endif":
                stack.pop()
            elif word == "define" and active:
                defined.add(directive[1])
            continue
        if all(stack):
            out.append(line)
    return "\n".join(out)


def statements(text):
    """Top-level declarations, split at ';' outside braces and parentheses."""
    depth, current, result = 0, [], []
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == ";" and depth == 0:
            result.append(" ".join("".join(current).split()))
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        raise SystemExit("generate.py: trailing text without ';': " + "".join(current).strip()[:80])
    return [s for s in result if s]


def split_top(text, sep):
    depth, current, result = 0, [], []
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == sep and depth == 0:
            result.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        result.append("".join(current).strip())
    return result


# ---- C types to Rust types ---------------------------------------------------------------------

class Types:
    def __init__(self):
        self.known = dict(PRIMITIVES)  # C name -> Rust name

    def rust(self, ctype):
        """`const char**` -> `*mut *const c_char`; a base type alone -> its Rust name."""
        tokens = re.findall(r"\w+|\*", ctype)
        base_const, base, stars = False, [], []
        for tok in tokens:
            if tok == "const":
                if stars:
                    stars[-1] = True  # `T* const`: the pointer itself, which Rust does not mark
                else:
                    base_const = True
            elif tok == "*":
                stars.append(False)
            elif tok == "struct":
                continue
            else:
                base.append(tok)
        name = " ".join(base)
        if name not in self.known:
            raise KeyError(name)
        result, pointee_const = self.known[name], base_const
        for star_const in stars:
            result = ("*const " if pointee_const else "*mut ") + result
            pointee_const = star_const
        return result

    def param(self, text, index):
        """(name, Rust type) of a parameter or field; unnamed ones get argN."""
        fn = re.match(r"^(.*?)\(\s*\*\s*(\w*)\s*\)\s*\((.*)\)$", text)
        if fn:
            ret, name, args = fn.groups()
            return (name or "arg%d" % index), self.fn_pointer(ret, args)
        words = re.findall(r"\w+|\*", text)
        name = None
        if len(words) >= 2 and words[-1] not in self.known and words[-1] not in ("const", "*"):
            name = words[-1]
            text = text[: text.rfind(name)]
        return (name or "arg%d" % index), self.rust(text)

    def params(self, text):
        text = text.strip()
        if text in ("", "void"):
            return []
        return [self.param(p, i) for i, p in enumerate(split_top(text, ","))]

    def ret(self, ctype):
        ctype = ctype.strip()
        return "" if ctype == "void" else " -> " + self.rust(ctype)

    def fn_pointer(self, ret, args):
        types = ", ".join(t for _, t in self.params(args))
        return 'Option<unsafe extern "C" fn(%s)%s>' % (types, self.ret(ret))


def field_name(name):
    return name + "_" if name in RUST_KEYWORDS else name


def write_sys(headers, out):
    types = Types()
    lines = [
        "// Generated by bindings/rust/generate.py from <braid/c.h>; do not edit.",
        "",
    ]
    functions = []
    for rel, text in headers:
        lines.append("// ---- %s ----" % rel)
        for stmt in statements(preprocess(text)):
            if stmt.startswith("extern \"C\"") or stmt.startswith("static "):
                continue
            m = re.match(r"^typedef (?:float _Complex|_Complex float) (\w+)$", stmt)
            if m:
                lines += ["/// C's `float _Complex`: real part, then imaginary part.",
                          "#[repr(C)]", "#[derive(Debug, Copy, Clone, PartialEq)]",
                          "pub struct %s {" % m.group(1), "    pub re: f32,", "    pub im: f32,", "}"]
                types.known[m.group(1)] = m.group(1)
                continue
            m = re.match(r"^typedef struct \w* ?\{(.*)\} (\w+)$", stmt)
            if m:
                body, name = m.groups()
                types.known[name] = name
                fields = [types.param(f, i) for i, f in enumerate(split_top(body, ";"))]
                lines += ["#[repr(C)]", "#[derive(Debug, Copy, Clone)]", "pub struct %s {" % name]
                lines += ["    pub %s: %s," % (field_name(n), t) for n, t in fields]
                lines.append("}")
                continue
            m = re.match(r"^typedef enum \w* ?\{(.*)\} (\w+)$", stmt)
            if m:
                body, name = m.groups()
                types.known[name] = name
                lines.append("pub type %s = ::std::os::raw::c_int;" % name)
                value = 0
                for item in split_top(body, ","):
                    if "=" in item:
                        item, value = item.split("=")[0].strip(), int(item.split("=")[1], 0)
                    lines.append("pub const %s: %s = %d;" % (item.strip(), name, value))
                    value += 1
                continue
            m = re.match(r"^typedef (.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", stmt)
            if m:
                ret, name, args = m.groups()
                lines.append("pub type %s = %s;" % (name, types.fn_pointer(ret, args)))
                types.known[name] = name
                continue
            m = re.match(r"^(.*?)\b(\w+)\s*\((.*)\)$", stmt)
            if not m or stmt.startswith("typedef"):
                raise SystemExit("generate.py: cannot read declaration in %s: %s" % (rel, stmt[:100]))
            ret, name, args = m.groups()
            variadic = args.rstrip().endswith("...")
            if variadic:
                args = args.rstrip()[:-3].rstrip().rstrip(",")
            try:
                params = ["%s: %s" % (field_name(n), t) for n, t in types.params(args)]
            except KeyError as unknown:
                raise SystemExit("generate.py: unknown C type %s in %s" % (unknown, stmt))
            params = ", ".join(params + (["..."] if variadic else []))
            functions.append("    pub fn %s(%s)%s;" % (name, params, types.ret(ret)))
    lines += ["", 'extern "C" {'] + functions + ["}", ""]
    with open(os.path.join(out, "sys.rs"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return len(functions)


# ---- safe wrappers of the op families ----------------------------------------------------------

SAFE_SCALARS = {
    "int": ("i32", "{0}"),
    "bool": ("bool", "{0}"),
    "float": ("f32", "{0}"),
    "double": ("f64", "{0}"),
    "size_t": ("usize", "{0}"),
    "uint64_t": ("u64", "{0}"),
    "mlx_dtype": ("Dtype", "{0}.to_raw()"),
    "mlx_fft_norm": ("crate::FftNorm", "{0}.to_raw()"),
    "mlx_optional_int": ("Option<i32>", "crate::array::optional_int({0})"),
    "mlx_optional_float": ("Option<f32>", "crate::array::optional_float({0})"),
    "mlx_optional_dtype": ("Option<Dtype>", "crate::array::optional_dtype({0})"),
}


def c_params(args):
    """[(ctype, name, may_be_null)] of a generated op's parameters."""
    result = []
    for p in split_top(" ".join(args.split()), ","):
        nullable = "may be null" in p
        p = re.sub(r"/\*.*?\*/", "", p).strip()
        ctype, name = p.rsplit(" ", 1)
        if name.startswith("*"):
            ctype, name = ctype + "*", name[1:]
        result.append((ctype.replace("const ", "").replace(" *", "*").strip(), name, nullable))
    return result


def safe_wrapper(cname, prefix, doc, args):
    """The Rust text of one op's two functions, or None with the reason it has none."""
    params = c_params(args)
    outputs, inputs, setup, call, has_stream = [], [], [], [], False
    for i, (ctype, name, nullable) in enumerate(params):
        rname = field_name(name.lower())
        if ctype in ("mlx_array*", "mlx_vector_array*") and i == len(outputs):
            outputs.append((ctype, rname))
            call.append("&mut %s.raw" % rname)
        elif ctype == "mlx_array":
            if nullable:
                inputs.append("%s: Option<&Array>" % rname)
                call.append("crate::array::raw_or_empty(%s)" % rname)
            else:
                inputs.append("%s: &Array" % rname)
                call.append("%s.raw" % rname)
        elif ctype == "mlx_vector_array":
            inputs.append("%s: &[Array]" % rname)
            setup.append("let %s = crate::array::VectorArray::from_arrays(%s)?;" % (rname, rname))
            call.append("%s.raw" % rname)
        elif ctype in ("int*", "int64_t*") and i + 1 < len(params) and params[i + 1][1] == name + "_num":
            elem = "i32" if ctype == "int*" else "i64"
            if nullable:  # None is the C null (e.g. "every axis"), unlike an empty list
                inputs.append("%s: Option<&[%s]>" % (rname, elem))
                call.append("%s.map_or(std::ptr::null(), |v| v.as_ptr())" % rname)
            else:
                inputs.append("%s: &[%s]" % (rname, elem))
                call.append("%s.as_ptr()" % rname)
        elif ctype == "size_t" and name.endswith("_num") and i > 0 and params[i - 1][1] + "_num" == name:
            previous = field_name(params[i - 1][1].lower())
            call.append("%s.map_or(0, |v| v.len())" % previous if params[i - 1][2] else "%s.len()" % previous)
        elif ctype == "char*":
            inputs.append("%s: &str" % rname)
            setup.append("let %s = crate::error::c_string(%s)?;" % (rname, rname))
            call.append("%s.as_ptr()" % rname)
        elif ctype == "mlx_stream" and i == len(params) - 1:
            has_stream = True
            call.append("stream.raw")
        elif ctype in SAFE_SCALARS:
            rtype, conv = SAFE_SCALARS[ctype]
            inputs.append("%s: %s" % (rname, rtype))
            call.append(conv.format(rname))
        else:
            return None, "parameter %s of type %s" % (name, ctype)
    base = cname[len(prefix):]
    fname = base + "_" if base in RUST_KEYWORDS else base
    device_name = base + "_device"
    made, results = [], []
    for ctype, rname in outputs:
        kind = "Array" if ctype == "mlx_array*" else "crate::array::VectorArray"
        made.append("let mut %s = %s::new_empty();" % (rname, kind))
        results.append(rname if ctype == "mlx_array*" else "%s.to_vec()?" % rname)
    types = ["Array" if c == "mlx_array*" else "Vec<Array>" for c, _ in outputs]
    ret = "()" if not types else types[0] if len(types) == 1 else "(%s)" % ", ".join(types)
    value = "()" if not results else results[0] if len(results) == 1 else "(%s)" % ", ".join(results)
    docs = ["/// " + line for line in doc] or ["/// The C API's `%s`." % cname]
    body = ["    crate::error::init();"] + ["    " + s for s in setup + made]
    body.append("    crate::error::check(unsafe { sys::%s(%s) })?;" % (cname, ", ".join(call)))
    if len(outputs) == 1 and outputs[0][0] == "mlx_vector_array*":
        body.append("    %s.to_vec()" % outputs[0][1])
    else:
        body.append("    Ok(%s)" % value)
    text = []
    if has_stream:
        names = [p.split(":")[0] for p in inputs]
        text += docs + ["///", "/// On the calling thread's default stream; see [`%s`]." % device_name,
                        "pub fn %s(%s) -> Result<%s> {" % (fname, ", ".join(inputs), ret),
                        "    %s(%s)" % (device_name, ", ".join(names + ["&Stream::thread_default()"])),
                        "}", ""]
        text += docs + ["///", "/// On `stream`.",
                        "pub fn %s(%s) -> Result<%s> {" % (device_name, ", ".join(inputs + ["stream: &Stream"]), ret)]
    else:
        text += docs + ["pub fn %s(%s) -> Result<%s> {" % (fname, ", ".join(inputs), ret)]
    text += body + ["}", ""]
    return "\n".join(text), None


def write_family(include_dir, header, prefix, out_name, out, skipped):
    with open(os.path.join(include_dir, "braid", "c", header), encoding="utf-8") as f:
        text = f.read()
    pieces = [
        "// Generated by bindings/rust/generate.py from braid/c/%s; do not edit." % header,
        "#[allow(unused_imports)]",
        "use crate::{sys, Array, Dtype, Result, Stream};",
        "",
    ]
    count = 0
    pattern = re.compile(r"(?:/\*\*((?:(?!\*/).)*)\*/\s*)?^int (mlx_\w+)\(([^;]*)\);", re.S | re.M)
    for doc, cname, args in pattern.findall(text):
        lines = [re.sub(r"^\s*\*\s?", "", l).rstrip() for l in doc.strip().splitlines()] if doc else []
        lines = [l for l in lines if l != "*" and l != ""] or []
        rust, why = safe_wrapper(cname, prefix, lines, args)
        if rust is None:
            skipped.append("%s (%s)" % (cname, why))
            continue
        pieces.append(rust)
        count += 1
    with open(os.path.join(out, out_name), "w", encoding="utf-8") as f:
        f.write("\n".join(pieces))
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--include", required=True, help="directory holding braid/c.h and braid/c/")
    parser.add_argument("--out", required=True, help="directory to write the .rs files into")
    parser.add_argument("--summary", action="store_true", help="print what was generated")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    declared = write_sys(read_headers(args.include), args.out)
    skipped = []
    counts = [write_family(args.include, h, p, o, args.out, skipped)
              for h, p, o in (("ops.h", "mlx_", "ops.rs"), ("random.h", "mlx_random_", "random.rs"),
                              ("fast.h", "mlx_fast_", "fast.rs"), ("fft.h", "mlx_fft_", "fft.rs"),
                              ("linalg.h", "mlx_linalg_", "linalg.rs"))]
    if args.summary:
        print("generate.py: %d C functions declared; safe wrappers: %d ops, %d random, %d fast, %d fft, %d linalg"
              % (declared, *counts))
    for s in skipped:
        print("generate.py: no safe wrapper for " + s, file=sys.stderr)


if __name__ == "__main__":
    main()
