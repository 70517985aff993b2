// Quantization ops in MLX's modes (affine, mxfp4, mxfp8, nvfp4): validate, then build
// Quantize / Dequantize / QuantizedMatmul / GatherQMM nodes. Products with many rows
// dequantize once and use the ordinary matmul (BLAS / cuBLASLt); few rows read the packed
// weights directly. qqmm is a composition: both operands go through their format (quantize
// and dequantize) and meet in one float32 matmul. The float8 conversions are element-wise
// (Unary rows to_fp8 and from_fp8).
#include <limits>
#include <string>

#include "braid/ops.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/elementwise_utils.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

namespace {

// Rows of x up to which quantized_matmul reads the packed weights directly.
constexpr int64_t kDirectRows = 8;

const char* mode_name(QuantizationMode m) {
  switch (m) {
    case QuantizationMode::affine: return "affine";
    case QuantizationMode::mxfp4: return "mxfp4";
    case QuantizationMode::mxfp8: return "mxfp8";
    case QuantizationMode::nvfp4: return "nvfp4";
  }
  return "";
}

QuantizationMode parse_mode(const std::string& mode, const char* op) {
  for (QuantizationMode m : {QuantizationMode::affine, QuantizationMode::mxfp4, QuantizationMode::mxfp8,
                             QuantizationMode::nvfp4}) {
    if (mode == mode_name(m)) return m;
  }
  throw_invalid(op, "Invalid quantization mode '" + mode + "'. The supported modes are 'affine', 'mxfp4', 'mxfp8' and 'nvfp4'.");
}

struct Params {
  QuantizationMode mode;
  int group;
  int bits;
};

// The mode, group size and bits of a call: MLX's defaults per mode (affine 64 and 4; mxfp4
// 32 and 4; mxfp8 32 and 8; nvfp4 16 and 4), the fp modes accepting only their own.
Params quant_params(const std::string& mode_str, std::optional<int> group_size, std::optional<int> bits,
                    const char* op) {
  const QuantizationMode mode = parse_mode(mode_str, op);
  const bool affine = mode == QuantizationMode::affine;
  const int g = group_size.value_or(affine ? 64 : common::fp_group_size(mode));
  const int b = bits.value_or(affine ? 4 : common::fp_bits(mode));
  if (affine) {
    if (g != 32 && g != 64 && g != 128) {
      throw_invalid(op, "The requested group size " + std::to_string(g) + " is not supported. The supported group sizes are 32, 64 and 128.");
    }
    if (b != 1 && b != 2 && b != 3 && b != 4 && b != 5 && b != 6 && b != 8) {
      throw_invalid(op, "The requested number of bits " + std::to_string(b) + " is not supported. The supported bits are 1, 2, 3, 4, 5, 6 and 8.");
    }
    return {mode, g, b};
  }
  if (g != common::fp_group_size(mode)) {
    throw_invalid(op, std::string(mode_name(mode)) + " quantization requires group size " +
                          std::to_string(common::fp_group_size(mode)) + " but got " + std::to_string(g) + ".");
  }
  if (b != common::fp_bits(mode)) {
    throw_invalid(op, std::string(mode_name(mode)) + " quantization requires bits to be " +
                          std::to_string(common::fp_bits(mode)) + " but got " + std::to_string(b) + ".");
  }
  return {mode, g, b};
}

// A global scale checked against the mode: nvfp4 only, float32, one element (as a scalar).
std::optional<array> checked_global_scale(const std::optional<array>& scale, QuantizationMode mode, const char* op,
                                          const char* what = "Global scale") {
  if (!scale) return std::nullopt;
  if (mode != QuantizationMode::nvfp4) {
    throw_invalid(op, std::string(what) + " is only supported for the 'nvfp4' quantization mode (got '" + mode_name(mode) + "').");
  }
  if (scale->dtype() != float32) throw_invalid(op, std::string(what) + " must be float32 (got " + dtype_name(scale->dtype()) + ").");
  if (scale->size() != 1) throw_invalid(op, std::string(what) + " must have one element (got shape " + shape_str(scale->shape()) + ").");
  return scale;
}

// The last two axes of `a` swapped (a view).
array swap_last_two(const array& a, const Stream& st) {
  std::vector<int> axes(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) axes[i] = static_cast<int>(i);
  std::swap(axes[a.ndim() - 1], axes[a.ndim() - 2]);
  return transpose(a, axes, st);
}

bool quantizable(Dtype d) { return d == float32 || d == float16 || d == bfloat16; }

// Checks a packed matrix against its scales (and affine's biases) and returns the unpacked
// last dimension.
int32_t check_packed(const array& w, const array& scales, const std::optional<array>& biases, const Params& q,
                     const char* op) {
  if (w.dtype() != uint32) throw_invalid(op, "The weight matrix should be uint32 but received " + dtype_name(w.dtype()) + ".");
  const bool affine = q.mode == QuantizationMode::affine;
  if (affine && !biases) throw_invalid(op, "Biases must be provided for affine quantization.");
  if (!affine && biases) throw_invalid(op, std::string("Biases must be null for quantization mode '") + mode_name(q.mode) + "'.");
  if (w.ndim() < 2) throw_invalid(op, "The weight matrix must have at least 2 dimensions (got " + shape_str(w.shape()) + ").");
  if (affine) {
    if (!quantizable(scales.dtype())) throw_invalid(op, "Scales must be float32, float16 or bfloat16.");
    if (scales.shape() != biases->shape()) {
      throw_invalid(op, "Scales and biases must have the same shape (got " + shape_str(scales.shape()) + " and " + shape_str(biases->shape()) + ").");
    }
  } else if (scales.dtype() != uint8) {
    throw_invalid(op, std::string("Scales must be uint8 for quantization mode '") + mode_name(q.mode) + "' (got " +
                          dtype_name(scales.dtype()) + ").");
  }
  const int64_t k = static_cast<int64_t>(w.shape(-1)) * 32 / q.bits;
  Shape expect = w.shape();
  expect.back() = static_cast<int32_t>(k / q.group);
  if (scales.shape() != expect || k % q.group != 0) {
    throw_invalid(op, std::string(affine ? "Shape of scales and biases " : "Shape of scales ") + shape_str(scales.shape()) +
                          " does not match the weights " + shape_str(w.shape()) + " with group size " +
                          std::to_string(q.group) + " and " + std::to_string(q.bits) + " bits (expected " +
                          shape_str(expect) + ").");
  }
  return static_cast<int32_t>(k);
}

}  // namespace

std::vector<array> quantize(const array& w, std::optional<int> group_size, std::optional<int> bits,
                            const std::string& mode, const std::optional<array>& global_scale, StreamOrDevice s) {
  const Params q = quant_params(mode, group_size, bits, "quantize");
  const std::optional<array> gs = checked_global_scale(global_scale, q.mode, "quantize");
  const int g = q.group, b = q.bits;
  if (!quantizable(w.dtype())) throw_invalid("quantize", "Only float32, float16 and bfloat16 weights can be quantized (got " + dtype_name(w.dtype()) + ").");
  if (w.ndim() < 2) throw_invalid("quantize", "The matrix to be quantized must have at least 2 dimensions (got " + shape_str(w.shape()) + ").");
  if (w.shape(-1) % g != 0) {
    throw_invalid("quantize", "The last dimension of the matrix " + shape_str(w.shape()) +
                                  " must be divisible by the group size " + std::to_string(g) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "quantize");
  Shape packed = w.shape(), params = w.shape();
  packed.back() = static_cast<int32_t>(static_cast<int64_t>(w.shape(-1)) * b / 32);
  params.back() = w.shape(-1) / g;
  using Part = Quantize::Part;
  std::vector<array> inputs{w};
  if (gs) inputs.push_back(reshape(*gs, {}, st));
  auto part = [&](Part p, const Shape& shape, Dtype dt) {
    return array(shape, dt, detail::make_pooled<Quantize>(st, g, b, q.mode, p), inputs);
  };
  if (q.mode != QuantizationMode::affine) return {part(Part::packed, packed, uint32), part(Part::scales, params, uint8)};
  return {part(Part::packed, packed, uint32), part(Part::scales, params, w.dtype()), part(Part::biases, params, w.dtype())};
}

array dequantize(const array& w, const array& scales, const std::optional<array>& biases, std::optional<int> group_size,
                 std::optional<int> bits, const std::string& mode, const std::optional<array>& global_scale,
                 std::optional<Dtype> dtype, StreamOrDevice s) {
  const Params q = quant_params(mode, group_size, bits, "dequantize");
  const std::optional<array> gs = checked_global_scale(global_scale, q.mode, "dequantize");
  const int32_t k = check_packed(w, scales, biases, q, "dequantize");
  const bool affine = q.mode == QuantizationMode::affine;
  // The fp modes dequantize to bfloat16 unless asked otherwise, as in MLX.
  const Dtype out = dtype.value_or(affine ? promote_types(scales.dtype(), biases->dtype()) : bfloat16);
  if (!quantizable(out)) throw_invalid("dequantize", "The output dtype must be float32, float16 or bfloat16.");
  Stream st = detail::op_stream(std::move(s), "dequantize");
  Shape shape = w.shape();
  shape.back() = k;
  std::vector<array> inputs{w};
  if (affine) {
    inputs.push_back(astype(scales, out, st));
    inputs.push_back(astype(*biases, out, st));
  } else {
    inputs.push_back(scales);
    if (gs) inputs.push_back(reshape(*gs, {}, st));
  }
  return array(shape, out, detail::make_pooled<Dequantize>(st, q.group, q.bits, q.mode), std::move(inputs));
}

array quantized_matmul(array x, array w, array scales, std::optional<array> biases, bool transpose,
                       std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
                       StreamOrDevice s) {
  const Params q = quant_params(mode, group_size, bits, "quantized_matmul");
  const int32_t k_w = check_packed(w, scales, biases, q, "quantized_matmul");
  const bool affine = q.mode == QuantizationMode::affine;
  if (x.ndim() < 1) throw_invalid("quantized_matmul", "x must have at least one dimension.");
  if (!quantizable(x.dtype()) && is_floating_point(x.dtype())) {
    throw_invalid("quantized_matmul", "x must be float32, float16 or bfloat16 (got " + dtype_name(x.dtype()) + ").");
  }
  if (!is_floating_point(x.dtype())) throw_invalid("quantized_matmul", "x must be a real floating array (got " + dtype_name(x.dtype()) + ").");
  // Rows of w are outputs (transpose) or inputs (not transposed).
  const int32_t w_in = transpose ? k_w : w.shape(-2);
  const int32_t w_out = transpose ? w.shape(-2) : k_w;
  if (x.shape(-1) != w_in) {
    throw_invalid("quantized_matmul", "The shapes of the weight and scales are incompatible with the input: x has " +
                                          std::to_string(x.shape(-1)) + " features but the weights expect " + std::to_string(w_in) + ".");
  }
  // Affine products take the promoted dtype of x and the scales; the fp modes x's.
  const Dtype t = affine ? promote_types(x.dtype(), scales.dtype()) : x.dtype();
  Stream st = detail::op_stream(std::move(s), "quantized_matmul");
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < x.ndim(); ++i) rows *= x.shape()[i];
  if (!transpose || w.ndim() != 2 || rows > kDirectRows) {
    array wd = dequantize(w, scales, biases, q.group, q.bits, mode, std::nullopt, t, st);
    return matmul(astype(x, t, st), transpose ? swap_last_two(wd, st) : wd, st);
  }
  Shape out_shape = x.shape();
  out_shape.back() = w_out;
  array x2 = reshape(astype(x, t, st), {static_cast<int32_t>(rows), x.shape(-1)}, st);
  std::vector<array> inputs{x2, w};
  if (affine) {
    inputs.push_back(astype(scales, t, st));
    inputs.push_back(astype(*biases, t, st));
  } else {
    inputs.push_back(scales);
  }
  array out({static_cast<int32_t>(rows), w_out}, t, detail::make_pooled<QuantizedMatmul>(st, q.group, q.bits, q.mode),
            std::move(inputs));
  return reshape(out, out_shape, st);
}

namespace {

// The product of `shape`'s dimensions [0, end), checked to fit one dimension.
int32_t batch_count(const Shape& shape, size_t end, const char* op) {
  int64_t n = 1;
  for (size_t i = 0; i < end; ++i) n *= shape[i];
  if (n > std::numeric_limits<int32_t>::max()) throw_invalid(op, "Too many batches (" + std::to_string(n) + ").");
  return static_cast<int32_t>(n);
}

// `indices` (integers) as uint32 batch numbers below `count`: negative ones wrap once, the
// rest are clamped into range.
array batch_indices(const array& indices, int32_t count, const Stream& st) {
  array i = astype(indices, int64, st);
  i = where(less(i, array(int64_t{0}), st), add(i, array(static_cast<int64_t>(count)), st), i, st);
  i = minimum(maximum(i, array(int64_t{0}), st), array(static_cast<int64_t>(count) - 1), st);
  return astype(i, uint32, st);
}

}  // namespace

array gather_qmm(const array& x, const array& w, const array& scales, const std::optional<array>& biases,
                 std::optional<array> lhs_indices, std::optional<array> rhs_indices, bool transpose,
                 std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
                 bool sorted_indices, StreamOrDevice s) {
  (void)sorted_indices;  // a scheduling hint in MLX; every order is handled alike here
  if (!lhs_indices && !rhs_indices) {
    return quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode, std::move(s));
  }
  const char* op = "gather_qmm";
  const Params q = quant_params(mode, group_size, bits, op);
  const int32_t k_w = check_packed(w, scales, biases, q, op);
  const bool affine = q.mode == QuantizationMode::affine;
  if (x.ndim() < 2) {
    throw_invalid(op, "Non-quantized input must have at least two dimensions but got input with shape " +
                          shape_str(x.shape()) + ".");
  }
  const Dtype t = affine ? promote_types(x.dtype(), scales.dtype()) : x.dtype();
  if (!quantizable(t)) {
    throw_invalid(op, "Only float32, float16 and bfloat16 products are supported (x is " + dtype_name(x.dtype()) +
                          ", scales " + dtype_name(scales.dtype()) + ").");
  }
  const int32_t w_in = transpose ? k_w : w.shape(-2);
  const int32_t w_out = transpose ? w.shape(-2) : k_w;
  if (x.shape(-1) != w_in) {
    throw_invalid(op, "Last dimension of first input with shape " + shape_str(x.shape()) +
                          " does not match the expanded quantized matrix with " + std::to_string(w_in) + " inputs.");
  }
  for (const auto* idx : {&lhs_indices, &rhs_indices}) {
    if (*idx && !issubdtype((*idx)->dtype(), integer)) {
      throw_invalid(op, std::string(idx == &lhs_indices ? "lhs" : "rhs") + "_indices must be integral (got " +
                            dtype_name((*idx)->dtype()) + ").");
    }
  }
  const Shape x_batch(x.shape().begin(), x.shape().end() - 2);
  const Shape w_batch(w.shape().begin(), w.shape().end() - 2);
  const int32_t bx = batch_count(x.shape(), x.ndim() - 2, op);
  const int32_t bw = batch_count(w.shape(), w.ndim() - 2, op);
  const Shape batch = detail::broadcast_shapes(lhs_indices ? lhs_indices->shape() : x_batch,
                                               rhs_indices ? rhs_indices->shape() : w_batch, op);
  const int32_t nb = batch_count(batch, batch.size(), op);
  Shape out_shape = batch;
  out_shape.push_back(x.shape(-2));
  out_shape.push_back(w_out);
  detail::checked_size(out_shape, t, op);
  Stream st = detail::op_stream(std::move(s), op);

  auto flat_indices = [&](const std::optional<array>& given, int32_t count, const Shape& own_batch) {
    array i = given ? batch_indices(*given, count, st)
                    : reshape(arange(0.0, static_cast<double>(count), 1.0, uint32, st), own_batch, st);
    return reshape(broadcast_to(i, batch, st), {nb}, st);
  };
  array lhs = flat_indices(lhs_indices, bx, x_batch);
  array rhs = flat_indices(rhs_indices, bw, w_batch);
  const int32_t m = x.shape(-2), k = x.shape(-1);
  array x3 = reshape(astype(x, t, st), {bx, m, k}, st);
  array w3 = reshape(w, {bw, w.shape(-2), w.shape(-1)}, st);
  const Shape params{bw, scales.shape(-2), scales.shape(-1)};
  std::vector<array> inputs{x3, w3};
  if (affine) {
    inputs.push_back(reshape(astype(scales, t, st), params, st));
    inputs.push_back(reshape(astype(*biases, t, st), params, st));
  } else {
    inputs.push_back(reshape(scales, params, st));
  }
  inputs.push_back(lhs);
  inputs.push_back(rhs);
  array out({nb, m, w_out}, t, detail::make_pooled<GatherQMM>(st, q.group, q.bits, q.mode, transpose), std::move(inputs));
  return reshape(out, out_shape, st);
}

array qqmm(array x, array w, const std::optional<array> w_scales, std::optional<int> group_size,
           std::optional<int> bits, const std::string& mode, const std::optional<array> global_scale_x,
           const std::optional<array> global_scale_w, StreamOrDevice s) {
  const char* op = "qqmm";
  const QuantizationMode m = parse_mode(mode, op);
  if (m != QuantizationMode::nvfp4 && m != QuantizationMode::mxfp8) {
    throw_invalid(op, "Only 'nvfp4' and 'mxfp8' quantization modes are supported but '" + mode + "' was provided.");
  }
  const Params q = quant_params(mode, group_size, bits, op);
  if (x.ndim() > 2 || w.ndim() > 2) {
    throw_invalid(op, "Only 2D inputs are supported but x.ndim() == " + std::to_string(x.ndim()) + " and w.ndim() == " +
                          std::to_string(w.ndim()) + ".");
  }
  if (x.ndim() < 1 || w.ndim() < 2) {
    throw_invalid(op, "x must have one or two dimensions and w two (got " + shape_str(x.shape()) + " and " +
                          shape_str(w.shape()) + ").");
  }
  if (!quantizable(x.dtype())) {
    throw_invalid(op, "Only real floating types except float64 are supported but first argument dtype == " +
                          dtype_name(x.dtype()) + ".");
  }
  if (global_scale_x.has_value() != global_scale_w.has_value()) {
    throw_invalid(op, "Either both or neither of global_scale_x and global_scale_w must be provided.");
  }
  const std::optional<array> gsx = checked_global_scale(global_scale_x, q.mode, op, "global_scale_x");
  const std::optional<array> gsw = checked_global_scale(global_scale_w, q.mode, op, "global_scale_w");
  const bool w_quantized = w.dtype() == uint32;
  int32_t k_w = w.shape(-1);
  if (w_quantized) {
    if (!w_scales) throw_invalid(op, "Scales must be provided if second argument is quantized.");
    k_w = check_packed(w, *w_scales, std::nullopt, q, op);
  } else {
    if (!quantizable(w.dtype())) {
      throw_invalid(op, "Only real floating types except float64 are supported but second argument dtype == " +
                            dtype_name(w.dtype()) + ".");
    }
    if (w_scales) throw_invalid(op, "Scales must not be provided when the second argument is not quantized.");
  }
  if (x.shape(-1) != k_w) {
    throw_invalid(op, "Last dimension of first input with shape " + shape_str(x.shape()) +
                          " must match the inputs of the second, " + std::to_string(k_w) + ".");
  }
  if (k_w % q.group != 0) {
    throw_invalid(op, "The inner dimension " + std::to_string(k_w) + " must be divisible by the group size " +
                          std::to_string(q.group) + ".");
  }
  Stream st = detail::op_stream(std::move(s), op);
  // Each operand through its format, then one float32 product (what a block-scaled GEMM
  // computes: exact products of the decoded values, accumulated in float32).
  auto through_format = [&](const array& a, const std::optional<array>& gs) {
    std::vector<array> parts = quantize(a, q.group, q.bits, mode, gs, st);
    return dequantize(parts[0], parts[1], std::nullopt, q.group, q.bits, mode, gs, float32, st);
  };
  const array x2 = x.ndim() == 1 ? reshape(x, {1, x.shape(0)}, st) : x;
  const array xd = through_format(x2, gsx);
  const array wd = w_quantized ? dequantize(w, *w_scales, std::nullopt, q.group, q.bits, mode, gsw, float32, st)
                               : through_format(w, gsw);
  Shape out_shape = x.shape();
  out_shape.back() = w.shape(-2);
  return reshape(astype(matmul(xd, swap_last_two(wd, st), st), x.dtype(), st), out_shape, st);
}

array to_fp8(array x, StreamOrDevice s) {
  if (!is_floating_point(x.dtype()) || x.dtype() == complex64) {
    throw_invalid("to_fp8", "Only real floating types are supported but x.dtype() == " + dtype_name(x.dtype()) + ".");
  }
  const Stream st = detail::op_stream(std::move(s), "to_fp8");
  return detail::unary_node(x, Unary::Op::to_fp8, x.dtype(), uint8, "to_fp8", st);
}

array from_fp8(array x, Dtype dtype, StreamOrDevice s) {
  if (x.dtype() != uint8) {
    throw_invalid("from_fp8", "Input must have type uint8 but x.dtype() == " + dtype_name(x.dtype()) + ".");
  }
  if (!is_floating_point(dtype) || dtype == complex64) {
    throw_invalid("from_fp8", "Only real floating types are supported but dtype == " + dtype_name(dtype) + ".");
  }
  const Stream st = detail::op_stream(std::move(s), "from_fp8");
  // Decoded as float32, which holds every code exactly, as do the other float dtypes.
  return astype(detail::unary_node(x, Unary::Op::from_fp8, uint8, float32, "from_fp8", st), dtype, st);
}

}  // namespace braid
