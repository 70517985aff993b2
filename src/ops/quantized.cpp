// Quantization ops (MLX's "affine" mode): validate, then build AffineQuantize /
// AffineDequantize / QuantizedMatmul / GatherQMM nodes. Products with many rows dequantize
// once and use the ordinary matmul (BLAS / cuBLASLt); few rows read the packed weights
// directly. The float8 conversions are element-wise (Unary rows to_fp8 and from_fp8).
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

void check_mode(const std::string& mode, const char* op) {
  if (mode != "affine") throw_invalid(op, "Only the \"affine\" mode is supported (got \"" + mode + "\").");
}

std::pair<int, int> group_and_bits(std::optional<int> group_size, std::optional<int> bits, const char* op) {
  const int g = group_size.value_or(64);
  const int b = bits.value_or(4);
  if (g != 32 && g != 64 && g != 128) {
    throw_invalid(op, "The requested group size " + std::to_string(g) + " is not supported. The supported group sizes are 32, 64 and 128.");
  }
  if (b != 2 && b != 3 && b != 4 && b != 5 && b != 6 && b != 8) {
    throw_invalid(op, "The requested number of bits " + std::to_string(b) + " is not supported. The supported bits are 2, 3, 4, 5, 6 and 8.");
  }
  return {g, b};
}

// The last two axes of `a` swapped (a view).
array swap_last_two(const array& a, const Stream& st) {
  std::vector<int> axes(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) axes[i] = static_cast<int>(i);
  std::swap(axes[a.ndim() - 1], axes[a.ndim() - 2]);
  return transpose(a, axes, st);
}

bool quantizable(Dtype d) { return d == float32 || d == float16 || d == bfloat16; }

// Checks a packed matrix against its scales/biases and returns the unpacked last dimension.
int32_t check_packed(const array& w, const array& scales, const std::optional<array>& biases, int group, int bits,
                     const char* op) {
  if (w.dtype() != uint32) throw_invalid(op, "The weight matrix should be uint32 but received " + dtype_name(w.dtype()) + ".");
  if (!biases) throw_invalid(op, "Biases must be provided for affine quantization.");
  if (w.ndim() < 2) throw_invalid(op, "The weight matrix must have at least 2 dimensions (got " + shape_str(w.shape()) + ").");
  if (!quantizable(scales.dtype())) throw_invalid(op, "Scales must be float32, float16 or bfloat16.");
  if (scales.shape() != biases->shape()) {
    throw_invalid(op, "Scales and biases must have the same shape (got " + shape_str(scales.shape()) + " and " + shape_str(biases->shape()) + ").");
  }
  const int64_t k = static_cast<int64_t>(w.shape(-1)) * 32 / bits;
  Shape expect = w.shape();
  expect.back() = static_cast<int32_t>(k / group);
  if (scales.shape() != expect || k % group != 0) {
    throw_invalid(op, "Shape of scales and biases " + shape_str(scales.shape()) + " does not match the weights " +
                          shape_str(w.shape()) + " with group size " + std::to_string(group) + " and " +
                          std::to_string(bits) + " bits (expected " + shape_str(expect) + ").");
  }
  return static_cast<int32_t>(k);
}

}  // namespace

std::vector<array> quantize(const array& w, std::optional<int> group_size, std::optional<int> bits,
                            const std::string& mode, const std::optional<array>& global_scale, StreamOrDevice s) {
  check_mode(mode, "quantize");
  if (global_scale) throw_invalid("quantize", "A global scale is only supported with mode \"nvfp4\".");
  auto [g, b] = group_and_bits(group_size, bits, "quantize");
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
  using Part = AffineQuantize::Part;
  return {array(packed, uint32, detail::make_pooled<AffineQuantize>(st, g, b, Part::packed), {w}),
          array(params, w.dtype(), detail::make_pooled<AffineQuantize>(st, g, b, Part::scales), {w}),
          array(params, w.dtype(), detail::make_pooled<AffineQuantize>(st, g, b, Part::biases), {w})};
}

array dequantize(const array& w, const array& scales, const std::optional<array>& biases, std::optional<int> group_size,
                 std::optional<int> bits, const std::string& mode, const std::optional<array>& global_scale,
                 std::optional<Dtype> dtype, StreamOrDevice s) {
  check_mode(mode, "dequantize");
  if (global_scale) throw_invalid("dequantize", "A global scale is only supported with mode \"nvfp4\".");
  auto [g, b] = group_and_bits(group_size, bits, "dequantize");
  const int32_t k = check_packed(w, scales, biases, g, b, "dequantize");
  const Dtype out = dtype.value_or(promote_types(scales.dtype(), biases->dtype()));
  if (!quantizable(out)) throw_invalid("dequantize", "The output dtype must be float32, float16 or bfloat16.");
  Stream st = detail::op_stream(std::move(s), "dequantize");
  Shape shape = w.shape();
  shape.back() = k;
  return array(shape, out, detail::make_pooled<AffineDequantize>(st, g, b),
               {w, astype(scales, out, st), astype(*biases, out, st)});
}

array quantized_matmul(array x, array w, array scales, std::optional<array> biases, bool transpose,
                       std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
                       StreamOrDevice s) {
  check_mode(mode, "quantized_matmul");
  auto [g, b] = group_and_bits(group_size, bits, "quantized_matmul");
  const int32_t k_w = check_packed(w, scales, biases, g, b, "quantized_matmul");
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
  const Dtype t = promote_types(x.dtype(), scales.dtype());
  Stream st = detail::op_stream(std::move(s), "quantized_matmul");
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < x.ndim(); ++i) rows *= x.shape()[i];
  if (!transpose || w.ndim() != 2 || rows > kDirectRows) {
    array wd = dequantize(w, scales, biases, g, b, "affine", std::nullopt, t, st);
    return matmul(astype(x, t, st), transpose ? swap_last_two(wd, st) : wd, st);
  }
  Shape out_shape = x.shape();
  out_shape.back() = w_out;
  array x2 = reshape(astype(x, t, st), {static_cast<int32_t>(rows), x.shape(-1)}, st);
  array out({static_cast<int32_t>(rows), w_out}, t, detail::make_pooled<QuantizedMatmul>(st, g, b),
            {x2, w, astype(scales, t, st), astype(*biases, t, st)});
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
  check_mode(mode, op);
  auto [g, b] = group_and_bits(group_size, bits, op);
  const int32_t k_w = check_packed(w, scales, biases, g, b, op);
  if (x.ndim() < 2) {
    throw_invalid(op, "Non-quantized input must have at least two dimensions but got input with shape " +
                          shape_str(x.shape()) + ".");
  }
  const Dtype t = promote_types(x.dtype(), scales.dtype());
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
  array s3 = reshape(astype(scales, t, st), params, st);
  array b3 = reshape(astype(*biases, t, st), params, st);
  array out({nb, m, w_out}, t, detail::make_pooled<GatherQMM>(st, g, b, transpose), {x3, w3, s3, b3, lhs, rhs});
  return reshape(out, out_shape, st);
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
