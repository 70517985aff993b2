#!/usr/bin/env python3
"""The generator's contract: every overload in braid's headers is generated, named by a rule, or
refused with a message; a new op with mappable types needs nothing; anything else fails.

    test_generator.py BRAID_INCLUDE_DIR
"""
import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("generate", os.path.join(HERE, "..", "generate.py"))
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)

BRAID_INCLUDE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "include")


def ops_header():
    with open(os.path.join(BRAID_INCLUDE, "braid", "ops.h"), encoding="utf-8") as f:
        return f.read()


def generate_ops(text):
    """The ops family with `text` in place of ops.h (its other headers as they are)."""
    family = generate.FAMILIES[0]
    decls = generate.parse_header(text)
    for header in family.headers[1:]:
        with open(os.path.join(BRAID_INCLUDE, header), encoding="utf-8") as f:
            decls += generate.parse_header(f.read())
    return generate.generate_family(family, decls)


def with_declaration(decl):
    """ops.h with one more declaration inside namespace braid."""
    text = ops_header()
    end = text.rindex("}  // namespace braid")
    return text[:end] + decl + "\n" + text[end:]


class GeneratorTest(unittest.TestCase):
    def test_every_overload_of_braids_headers_is_accounted_for(self):
        for family in generate.FAMILIES:
            functions, stats = generate.generate_family(family, generate.read_family(family, BRAID_INCLUDE))
            self.assertGreater(len(functions), 0)
            self.assertEqual(len({f.c_name for f in functions}), len(functions))

    def test_a_new_op_with_mappable_types_is_generated_without_a_rule(self):
        functions, _ = generate_ops(with_declaration(
            "array frobnicate(const array& a, const std::vector<int>& axes, std::optional<float> scale, "
            "StreamOrDevice s = {});"))
        f = next(f for f in functions if f.c_name == "mlx_frobnicate")
        self.assertEqual(f.decl, "int mlx_frobnicate(mlx_array* res, const mlx_array a, const int* axes, "
                                 "size_t axes_num, mlx_optional_float scale, const mlx_stream s)")

    def test_a_new_overload_without_a_naming_rule_fails(self):
        with self.assertRaisesRegex(generate.GeneratorError, "new overload of sum"):
            generate_ops(with_declaration("array sum(const array& a, int axis, int extra, StreamOrDevice s = {});"))

    def test_a_second_overload_of_a_single_op_needs_a_rule(self):
        with self.assertRaisesRegex(generate.GeneratorError, "abs has 2 overloads and no naming rule"):
            generate_ops(with_declaration("array abs(const array& a, int k, StreamOrDevice s = {});"))

    def test_a_type_without_a_c_mapping_fails(self):
        with self.assertRaisesRegex(generate.GeneratorError, "no C mapping"):
            generate_ops(with_declaration("array strange(const std::map<int, int>& m, StreamOrDevice s = {});"))

    def test_a_rule_for_a_removed_overload_fails(self):
        text = ops_header().replace("array squeeze(const array& a, int axis, StreamOrDevice s = {});", "")
        with self.assertRaisesRegex(generate.GeneratorError, "naming rule of squeeze lists"):
            generate_ops(text)

    def test_einsum_joins_the_ops_with_mlx_cs_signature_and_einsum_path_has_no_c_form(self):
        functions, stats = generate_ops(ops_header())
        f = next(f for f in functions if f.c_name == "mlx_einsum")
        self.assertEqual(f.decl, "int mlx_einsum(mlx_array* res, const char* subscripts, "
                                 "const mlx_vector_array operands, const mlx_stream s)")
        self.assertFalse(any(f.c_name == "mlx_einsum_path" for f in functions))
        self.assertEqual(stats["no_c_form"], 1)

    def test_a_function_without_c_form_that_is_gone_fails(self):
        family = generate.FAMILIES[0]
        with self.assertRaisesRegex(generate.GeneratorError, "einsum_path is listed as having no C form"):
            generate.generate_family(family, generate.parse_header(ops_header()))

    def test_the_script_writes_headers_and_sources(self):
        with tempfile.TemporaryDirectory() as out:
            sys_argv = sys.argv
            sys.argv = ["generate.py", "--braid-include", BRAID_INCLUDE, "--out", out]
            try:
                self.assertEqual(generate.main(), 0)
            finally:
                sys.argv = sys_argv
            for path in ["include/braid/c/ops.h", "include/braid/c/random.h", "src/ops.cpp", "src/random.cpp"]:
                self.assertTrue(os.path.getsize(os.path.join(out, path)) > 1000, path)


if __name__ == "__main__":
    unittest.main(verbosity=2)
