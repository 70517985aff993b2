// braid.core.fast: normalizations, rotary embeddings and attention with mlx.core.fast's
// signatures (MLX's custom-kernel builders, metal_kernel and cuda_kernel, have no braid
// counterpart).
#include "braid/fast.h"

#include "ops_args.h"

namespace braid::python {

BRAID_PYTHON_INIT(kInitFunctions) {
  auto f = m.def_submodule("fast", "braid.core.fast: normalizations, rotary embeddings and attention.");
  f.def(
      "rms_norm",
      [](py::object x, py::object weight, float eps, StreamOrDevice s) {
        return fast::rms_norm(arg_array(x, "rms_norm", "x"), arg_optional_array(weight, "rms_norm", "weight"),
                              eps, s);
      },
      "x"_a, "weight"_a.none(true), "eps"_a, py::kw_only(), "stream"_a = py::none(),
      "x * rsqrt(mean(x^2) + eps) * weight over the last axis (no scaling when weight is None).");
  f.def(
      "fused_rms_silu",
      [](py::object x, py::object weight, float eps, StreamOrDevice s) {
        return fast::fused_rms_silu(arg_array(x, "fused_rms_silu", "x"),
                                    arg_optional_array(weight, "fused_rms_silu", "weight"), eps, s);
      },
      "x"_a, "weight"_a.none(true), "eps"_a, py::kw_only(), "stream"_a = py::none(),
      "h * sigmoid(h) for h = rms_norm(x, weight, eps).");
  f.def(
      "layer_norm",
      [](py::object x, py::object weight, py::object bias, float eps, StreamOrDevice s) {
        return fast::layer_norm(arg_array(x, "layer_norm", "x"),
                                arg_optional_array(weight, "layer_norm", "weight"),
                                arg_optional_array(bias, "layer_norm", "bias"), eps, s);
      },
      "x"_a, "weight"_a.none(true), "bias"_a.none(true), "eps"_a, py::kw_only(), "stream"_a = py::none(),
      "(x - mean) * rsqrt(var + eps) * weight + bias over the last axis (weight and bias may be None).");
  f.def(
      "rope",
      [](py::object a, int dims, bool traditional, std::optional<float> base, float scale, py::object offset,
         py::object freqs, StreamOrDevice s) {
        auto x = arg_array(a, "rope", "a");
        auto freq = arg_optional_array(freqs, "rope", "freqs");
        if (is_int_like(offset))
          return fast::rope(x, dims, traditional, base, scale, offset.cast<int>(), freq, s);
        return fast::rope(x, dims, traditional, base, scale, arg_array(offset, "rope", "offset"), freq, s);
      },
      "a"_a, "dims"_a, py::kw_only(), "traditional"_a, "base"_a.none(true), "scale"_a, "offset"_a,
      "freqs"_a = py::none(), "stream"_a = py::none(),
      "Rotary position embedding of the first `dims` features of a [B, ..., T, D]; exactly one of base and "
      "freqs.");
  f.def(
      "scaled_dot_product_attention",
      [](py::object q, py::object k, py::object v, float scale, py::object mask, py::object sinks,
         StreamOrDevice s) {
        constexpr const char* fn = "scaled_dot_product_attention";
        auto queries = arg_array(q, fn, "q");
        auto keys = arg_array(k, fn, "k");
        auto values = arg_array(v, fn, "v");
        auto sink_logits = arg_optional_array(sinks, fn, "sinks");
        if (mask.is_none())
          return fast::scaled_dot_product_attention(queries, keys, values, scale, "", {}, sink_logits, s);
        if (PyUnicode_Check(mask.ptr())) {
          auto mode = mask.cast<std::string>();
          if (mode != "causal") {
            throw std::invalid_argument("[scaled_dot_product_attention] invalid mask option '" + mode +
                                        "'. Must be 'causal', or an array.");
          }
          return fast::scaled_dot_product_attention(queries, keys, values, scale, mode, {}, sink_logits, s);
        }
        return fast::scaled_dot_product_attention(queries, keys, values, scale, "",
                                                  arg_array(mask, fn, "mask"), sink_logits, s);
      },
      "q"_a, "k"_a, "v"_a, py::kw_only(), "scale"_a, "mask"_a = py::none(), "sinks"_a = py::none(),
      "stream"_a = py::none(),
      "softmax(scale * q @ k.T + mask) @ v over heads [B, N, T, D], with grouped-query heads, a 'causal' or "
      "array "
      "mask and optional sinks.");
}

}  // namespace braid::python
