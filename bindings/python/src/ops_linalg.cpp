// Matrix products of braid.core with mlx.core's signatures: matmul and addmm, inner, outer,
// tensordot and kron, einsum and einsum_path, the masked, gathered and segmented products, and
// the Hadamard transform.
#include "ops_args.h"

namespace braid::python {

namespace {

using Binary = array (*)(const array&, const array&, StreamOrDevice);

void def_product(py::module_& m, const char* name, Binary op, const char* doc) {
  m.def(
      name,
      [op, name](py::object a, py::object b, StreamOrDevice s) {
        return op(arg_array(a, name, "a"), arg_array(b, name, "b"), s);
      },
      "a"_a, "b"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(), doc);
}

/// tensordot's axes: a count, or two lists (or two ints) of paired axes.
array tensordot_axes(const array& a, const array& b, py::handle axes, StreamOrDevice s) {
  constexpr const char* kExpected = "an int or a list of two lists of ints";
  if (is_int_like(axes)) return tensordot(a, b, axes.cast<int>(), s);
  if (!is_list_or_tuple(axes)) throw_arg_type("tensordot", "axes", kExpected, axes);
  auto seq = py::reinterpret_borrow<py::sequence>(axes);
  if (seq.size() != 2) throw std::invalid_argument("[tensordot] axes must be a list of two lists.");
  return tensordot(a, b, arg_int_or_ints(seq[0], 0, "tensordot", "axes"),
                   arg_int_or_ints(seq[1], 0, "tensordot", "axes"), s);
}

/// einsum's operands: every positional argument after the subscripts, array-like.
std::vector<array> einsum_operands(const py::args& operands, const char* fn) {
  std::vector<array> out;
  out.reserve(operands.size());
  for (auto item : operands) out.push_back(arg_array(item, fn, "operands"));
  return out;
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  def_product(m, "matmul", &matmul,
              "Matrix product with NumPy's rules (1-d operands promoted, batch axes broadcast).");
  def_product(m, "inner", &inner, "Sum of products over the last axes of a and b.");
  def_product(m, "outer", &outer, "The outer product of the flattened a and b.");
  m.def(
      "kron",
      [](py::object a, py::object b, StreamOrDevice s) {
        return kron(arg_array(a, "kron", "a"), arg_array(b, "kron", "b"), s);
      },
      "a"_a, "b"_a, py::kw_only(), "stream"_a = py::none(), "The Kronecker product of a and b.");
  m.def(
      "addmm",
      [](py::object c, py::object a, py::object b, float alpha, float beta, StreamOrDevice s) {
        return addmm(arg_array(c, "addmm", "c"), arg_array(a, "addmm", "a"), arg_array(b, "addmm", "b"),
                     alpha, beta, s);
      },
      "c"_a, "a"_a, "b"_a, py::pos_only(), "alpha"_a = 1.0f, "beta"_a = 1.0f, py::kw_only(),
      "stream"_a = py::none(), "alpha * (a @ b) + beta * c.");
  m.def(
      "tensordot",
      [](py::object a, py::object b, py::object axes, StreamOrDevice s) {
        return tensordot_axes(arg_array(a, "tensordot", "a"), arg_array(b, "tensordot", "b"), axes, s);
      },
      "a"_a, "b"_a, py::pos_only(), "axes"_a = 2, py::kw_only(), "stream"_a = py::none(),
      "Sum of products over the last `axes` axes of a and the first of b, or over two lists of paired axes.");
  m.def(
      "einsum",
      [](const std::string& subscripts, const py::args& operands, py::object stream) {
        return einsum(subscripts, einsum_operands(operands, "einsum"), to_stream_or_device(stream));
      },
      "subscripts"_a, "stream"_a = py::none(),
      "The Einstein summation of the operands that `subscripts` describes (NumPy's rules), contracted "
      "pairwise in the order einsum_path gives.");
  m.def(
      "einsum_path",
      [](const std::string& subscripts, const py::args& operands) {
        auto [path, description] = einsum_path(subscripts, einsum_operands(operands, "einsum_path"));
        py::list steps;
        for (const auto& step : path) {
          py::tuple t(step.size());
          for (size_t i = 0; i < step.size(); ++i) t[i] = py::int_(step[i]);
          steps.append(t);
        }
        return py::make_tuple(steps, description);
      },
      "subscripts"_a,
      "The contraction order einsum takes (a list of tuples of positions in the operands left to "
      "combine, each result joining them at the end) and a description of its cost.");
  m.def(
      "block_masked_mm",
      [](py::object a, py::object b, int block_size, py::object mask_out, py::object mask_lhs,
         py::object mask_rhs, StreamOrDevice s) {
        constexpr const char* fn = "block_masked_mm";
        return block_masked_mm(arg_array(a, fn, "a"), arg_array(b, fn, "b"), block_size,
                               arg_optional_array(mask_out, fn, "mask_out"),
                               arg_optional_array(mask_lhs, fn, "mask_lhs"),
                               arg_optional_array(mask_rhs, fn, "mask_rhs"), s);
      },
      "a"_a, "b"_a, py::pos_only(), "block_size"_a = 64, "mask_out"_a = py::none(), "mask_lhs"_a = py::none(),
      "mask_rhs"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "a @ b with block_size x block_size blocks of a, b and the result masked (bool) or scaled (float).");
  m.def(
      "gather_mm",
      [](py::object a, py::object b, py::object lhs_indices, py::object rhs_indices, bool sorted_indices,
         StreamOrDevice s) {
        constexpr const char* fn = "gather_mm";
        return gather_mm(arg_array(a, fn, "a"), arg_array(b, fn, "b"),
                         arg_optional_array(lhs_indices, fn, "lhs_indices"),
                         arg_optional_array(rhs_indices, fn, "rhs_indices"), sorted_indices, s);
      },
      "a"_a, "b"_a, py::pos_only(), "lhs_indices"_a = py::none(), "rhs_indices"_a = py::none(), py::kw_only(),
      "sorted_indices"_a = false, "stream"_a = py::none(),
      "a[lhs_indices] @ b[rhs_indices], the indices counting the matrices of each operand's batch axes.");
  m.def(
      "segmented_mm",
      [](py::object a, py::object b, py::object segments, StreamOrDevice s) {
        return segmented_mm(arg_array(a, "segmented_mm", "a"), arg_array(b, "segmented_mm", "b"),
                            arg_array(segments, "segmented_mm", "segments"), s);
      },
      "a"_a, "b"_a, py::pos_only(), "segments"_a, py::kw_only(), "stream"_a = py::none(),
      "a[:, start:end] @ b[start:end, :] for every (start, end) pair of `segments`.");
  m.def(
      "hadamard_transform",
      [](py::object a, std::optional<float> scale, StreamOrDevice s) {
        return hadamard_transform(arg_array(a, "hadamard_transform", "a"), scale, s);
      },
      "a"_a, py::pos_only(), "scale"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "The Walsh-Hadamard transform along the last axis, times `scale` (default 1/sqrt(n)).");
}

}  // namespace braid::python
