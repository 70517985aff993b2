// Quantization ops of braid.core with mlx.core's signatures: quantize (a tuple of the packed
// words, scales and, for "affine", biases), dequantize, the quantized products and the float8
// conversions. group_size and bits default to None: the mode's own defaults (64 and 4 for
// "affine").
#include "ops_args.h"

namespace braid::python {

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def(
      "quantize",
      [](py::object w, std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
         py::object global_scale, StreamOrDevice s) {
        auto parts = quantize(arg_array(w, "quantize", "w"), group_size, bits, mode,
                              arg_optional_array(global_scale, "quantize", "global_scale"), s);
        py::tuple out(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) out[i] = py::cast(parts[i]);
        return out;
      },
      "w"_a, py::pos_only(), "group_size"_a = py::none(), "bits"_a = py::none(), "mode"_a = "affine",
      py::kw_only(), "global_scale"_a = py::none(), "stream"_a = py::none(),
      "Quantizes w along its last axis in groups: (w_q, scales, biases) for 'affine', (w_q, scales) "
      "otherwise.");
  m.def(
      "dequantize",
      [](py::object w, py::object scales, py::object biases, std::optional<int> group_size,
         std::optional<int> bits, const std::string& mode, py::object global_scale,
         std::optional<Dtype> dtype, StreamOrDevice s) {
        constexpr const char* fn = "dequantize";
        return dequantize(arg_array(w, fn, "w"), arg_array(scales, fn, "scales"),
                          arg_optional_array(biases, fn, "biases"), group_size, bits, mode,
                          arg_optional_array(global_scale, fn, "global_scale"), dtype, s);
      },
      "w"_a, py::pos_only(), "scales"_a, "biases"_a = py::none(), "group_size"_a = py::none(),
      "bits"_a = py::none(), "mode"_a = "affine", "global_scale"_a = py::none(), "dtype"_a = py::none(),
      py::kw_only(), "stream"_a = py::none(),
      "The values of quantized w: scales * w_q + biases ('affine') or the element codes times their scales.");
  m.def(
      "quantized_matmul",
      [](py::object x, py::object w, py::object scales, py::object biases, bool transpose,
         std::optional<int> group_size, std::optional<int> bits, const std::string& mode, StreamOrDevice s) {
        constexpr const char* fn = "quantized_matmul";
        return quantized_matmul(arg_array(x, fn, "x"), arg_array(w, fn, "w"), arg_array(scales, fn, "scales"),
                                arg_optional_array(biases, fn, "biases"), transpose, group_size, bits, mode,
                                s);
      },
      "x"_a, "w"_a, py::pos_only(), "scales"_a, "biases"_a = py::none(), "transpose"_a = true,
      "group_size"_a = py::none(), "bits"_a = py::none(), "mode"_a = "affine", py::kw_only(),
      "stream"_a = py::none(),
      "x @ dequantize(w).T (transpose) or x @ dequantize(w), without materializing the dequantized w.");
  m.def(
      "gather_qmm",
      [](py::object x, py::object w, py::object scales, py::object biases, py::object lhs_indices,
         py::object rhs_indices, bool transpose, std::optional<int> group_size, std::optional<int> bits,
         const std::string& mode, bool sorted_indices, StreamOrDevice s) {
        constexpr const char* fn = "gather_qmm";
        return gather_qmm(arg_array(x, fn, "x"), arg_array(w, fn, "w"), arg_array(scales, fn, "scales"),
                          arg_optional_array(biases, fn, "biases"),
                          arg_optional_array(lhs_indices, fn, "lhs_indices"),
                          arg_optional_array(rhs_indices, fn, "rhs_indices"), transpose, group_size, bits,
                          mode, sorted_indices, s);
      },
      "x"_a, "w"_a, py::pos_only(), "scales"_a, "biases"_a = py::none(), "lhs_indices"_a = py::none(),
      "rhs_indices"_a = py::none(), "transpose"_a = true, "group_size"_a = py::none(), "bits"_a = py::none(),
      "mode"_a = "affine", py::kw_only(), "sorted_indices"_a = false, "stream"_a = py::none(),
      "quantized_matmul of x[lhs_indices] with w[rhs_indices] (flat indices over the batch axes).");
  m.def(
      "qqmm",
      [](py::object x, py::object w, py::object scales, std::optional<int> group_size,
         std::optional<int> bits, const std::string& mode, py::object global_scale_x,
         py::object global_scale_w, StreamOrDevice s) {
        constexpr const char* fn = "qqmm";
        return qqmm(arg_array(x, fn, "x"), arg_array(w, fn, "w"), arg_optional_array(scales, fn, "scales"),
                    group_size, bits, mode, arg_optional_array(global_scale_x, fn, "global_scale_x"),
                    arg_optional_array(global_scale_w, fn, "global_scale_w"), s);
      },
      "x"_a, "w"_a, py::pos_only(), "scales"_a = py::none(), "group_size"_a = py::none(),
      "bits"_a = py::none(), "mode"_a = "nvfp4", "global_scale_x"_a = py::none(),
      "global_scale_w"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "x @ w.T with both operands quantized ('nvfp4' or 'mxfp8'); w may come quantized.");
  m.def(
      "to_fp8", [](py::object x, StreamOrDevice s) { return to_fp8(arg_array(x, "to_fp8", "x"), s); }, "x"_a,
      py::pos_only(), py::kw_only(), "stream"_a = py::none(),
      "float8 e4m3 codes (uint8) of a floating array.");
  m.def(
      "from_fp8",
      [](py::object x, Dtype dtype, StreamOrDevice s) {
        return from_fp8(arg_array(x, "from_fp8", "x"), dtype, s);
      },
      "x"_a, py::pos_only(), "dtype"_a = bfloat16, py::kw_only(), "stream"_a = py::none(),
      "The values of float8 e4m3 codes (uint8) as `dtype`.");
}

}  // namespace braid::python
