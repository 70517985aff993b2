// The random ops: bits is the one RandomBits node; every distribution composes ops over it
// exactly as MLX does (same sub-ops, same dtypes, same order of key draws), so a key gives
// MLX's numbers up to the last bit of the element-wise functions.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "braid/ops.h"
#include "braid/random.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid::random {

using detail::shape_str;
using detail::throw_invalid;

namespace {

// NumPy broadcasting of a and b, or nothing when they do not broadcast.
std::optional<Shape> try_broadcast(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int32_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Throws unless `from` broadcast with `shape` is `shape` itself (MLX's check in uniform and
// randint).
void check_broadcasts_to(const Shape& from, const Shape& shape, const char* op) {
  const std::optional<Shape> out = try_broadcast(shape, from);
  if (!out || *out != shape) {
    throw_invalid(op, "Cannot generate random values of shape " + shape_str(shape) +
                          " from broadcasted shape " + (out ? shape_str(*out) : shape_str(from)) + ".");
  }
}

// The largest value below 1 of a 16-bit float, from its bit pattern (1.0's minus one).
float below_one_16(Dtype dtype) {
  if (dtype == float16) return float16_t::to_float(0x3BFF);
  const uint32_t bits = 0x3F7Fu << 16;  // bfloat16: the top half of a float32
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

int valid_axis(int axis, int ndim) {
  const int ax = axis < 0 ? axis + ndim : axis;
  if (ax < 0 || ax >= ndim) {
    throw_invalid("categorical", "Invalid axis " + std::to_string(axis) + " for logits with " +
                                     std::to_string(ndim) + " dimensions.");
  }
  return ax;
}

array categorical_impl(const array& logits, int axis, const Shape& shape, const std::optional<array>& key,
                       const Stream& st) {
  Shape gumbel_shape = shape;
  const int offset = axis + static_cast<int>(shape.size()) - static_cast<int>(logits.ndim()) + 1;
  gumbel_shape.insert(gumbel_shape.begin() + offset, logits.shape(axis));
  const array g = gumbel(gumbel_shape, float32, key, st);
  return argmax(add(g, logits, st), offset, false, st);
}

}  // namespace

array bits(const Shape& shape, int width, const std::optional<array>& key_, StreamOrDevice s) {
  // As MLX, the key is drawn first: an invalid call still advances the sequence.
  const array key = key_ ? *key_ : KeySequence::default_().next();
  if (key.dtype() != uint32) {
    throw_invalid("bits", "Expected key type uint32 but received " + dtype_name(key.dtype()) + ".");
  }
  if (key.shape() != Shape{2})
    throw_invalid("bits", "Expected key shape (2) but received " + shape_str(key.shape()) + ".");
  if (width != 1 && width != 2 && width != 4) {
    throw_invalid("bits", "Bit width must be in {1, 2, 4} but got " + std::to_string(width) + ".");
  }
  const Dtype dtype = width == 4 ? uint32 : width == 2 ? uint16 : uint8;
  detail::checked_size(shape, dtype, "bits");
  Stream st = detail::op_stream(std::move(s), "bits");
  return array(shape, dtype, detail::make_pooled<RandomBits>(st, shape, width), {key});
}

std::pair<array, array> split(const array& key, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "split");
  std::vector<array> halves = braid::split(random::split(key, 2, st), 2, st);
  return {reshape(halves[0], {2}, st), reshape(halves[1], {2}, st)};
}

array split(const array& key, int num, StreamOrDevice s) { return bits({num, 2}, 4, key, std::move(s)); }

array uniform(const array& low, const array& high, const Shape& shape, Dtype dtype,
              const std::optional<array>& key, StreamOrDevice s) {
  if (!issubdtype(dtype, floating)) {
    throw_invalid("uniform", "Can only generate uniform numbers with real floating point type.");
  }
  // Samples lie in [0, upper] with upper the largest value below 1 of the dtype, so that the
  // result stays below `high`. MLX has no float64 case.
  float upper;
  if (dtype == float32) {
    upper = std::nextafter(1.0f, 0.0f);
  } else if (dtype == float16 || dtype == bfloat16) {
    upper = below_one_16(dtype);
  } else {
    throw_invalid("uniform", "Unsupported type " + dtype_name(dtype) + ".");
  }
  check_broadcasts_to(detail::broadcast_shapes(low.shape(), high.shape(), "uniform"), shape, "uniform");
  Stream st = detail::op_stream(std::move(s), "uniform");
  array out = bits(shape, 4, key, st);  // first: a bad key throws before any other node exists
  const array lo = astype(low, dtype, st);
  const array range = subtract(astype(high, dtype, st), lo, st);
  out = divide(out, array(static_cast<float>(std::numeric_limits<uint32_t>::max()), float32), st);
  out = astype(minimum(out, array(upper, float32), st), dtype, st);
  return add(multiply(range, out, st), lo, st);
}

array uniform(const Shape& shape, Dtype dtype, const std::optional<array>& key, StreamOrDevice s) {
  return uniform(array(0.0, dtype), array(1.0, dtype), shape, dtype, key, std::move(s));
}

array normal(const Shape& shape, Dtype dtype, const std::optional<array>& loc,
             const std::optional<array>& scale, const std::optional<array>& key, StreamOrDevice s) {
  const array low(std::nextafter(-1.0f, 0.0f), float32);
  const array high(1.0f, float32);
  if (dtype == complex64) {
    // Real and imaginary parts are erfinv of uniforms: each of variance 1/2 (no sqrt(2)).
    Stream st = detail::op_stream(std::move(s), "normal");
    Shape pairs = shape;
    pairs.push_back(2);
    array samples = erfinv(uniform(low, high, pairs, float32, key, st), st);
    samples = squeeze(view(samples, complex64, st), -1, st);
    if (scale) samples = multiply(*scale, samples, st);
    if (loc) samples = add(*loc, samples, st);
    return samples;
  }
  if (!issubdtype(dtype, floating)) {
    throw_invalid("normal", "Can only generate uniform numbers with floating point type.");
  }
  Stream st = detail::op_stream(std::move(s), "normal");
  array samples = uniform(low, high, shape, float32, key, st);
  array applied_scale(std::sqrt(2.0), dtype);
  if (scale) applied_scale = multiply(applied_scale, astype(*scale, dtype, st), st);
  samples = astype(erfinv(samples, st), dtype, st);
  samples = multiply(applied_scale, samples, st);
  if (loc) samples = add(astype(*loc, dtype, st), samples, st);
  return samples;
}

array multivariate_normal(const array& mean, const array& cov, const Shape& shape, Dtype dtype,
                          const std::optional<array>& key, StreamOrDevice s) {
  const char* op = "multivariate_normal";
  if (dtype != float32) throw_invalid(op, "dtype must be float32.");
  if (mean.ndim() < 1) throw_invalid(op, "mean must have at least one dimension.");
  if (cov.ndim() < 2) throw_invalid(op, "cov must have at least two dimensions.");
  const int32_t n = mean.shape(-1);
  if (cov.shape(-1) != cov.shape(-2)) throw_invalid(op, "last two dimensions of cov must be equal.");
  if (n != cov.shape(-1)) throw_invalid(op, "mean and cov must have compatible shapes.");
  const Shape mean_batch(mean.shape().begin(), mean.shape().end() - 1);
  const Shape cov_batch(cov.shape().begin(), cov.shape().end() - 2);
  Shape out_shape = detail::broadcast_shapes(detail::broadcast_shapes(cov_batch, mean_batch, op), shape, op);
  out_shape.push_back(n);
  Stream st = detail::op_stream(std::move(s), op);

  // The square root of the covariance, U sqrt(S) V^T, on the CPU (MLX's SVD runs there too).
  const Stream cpu = st.device == Device::cpu ? st : default_stream(Device::cpu);
  const array covariance = astype(cov, float32, cpu);
  const array factor =
      array(covariance.shape(), float32, detail::make_pooled<SvdSquareRoot>(cpu), {covariance});

  const array standard = normal(out_shape, dtype, 0.0f, 1.0f, key, st);
  const array scaled = squeeze(matmul(expand_dims(standard, -2, st), astype(factor, dtype, st), st), -2, st);
  return add(mean, scaled, st);
}

array randint(const array& low, const array& high, const Shape& shape, Dtype dtype,
              const std::optional<array>& key, StreamOrDevice s) {
  if (issubdtype(dtype, inexact)) throw_invalid("randint", "randint only accepts integer dtypes and bool.");
  check_broadcasts_to(detail::broadcast_shapes(low.shape(), high.shape(), "randint"), shape, "randint");
  Stream st = detail::op_stream(std::move(s), "randint");
  // MLX's current sampler, exact at any magnitude: random bits reduced modulo the width of the
  // interval, all in uint64. The width high - low is taken in int64 and its bit pattern read
  // as uint64, which is right even where it exceeds int64's range ([int64 min, int64 max)).
  const array lo = astype(low, int64, st);
  const array width = astype(subtract(astype(high, int64, st), lo, st), uint64, st);
  // An empty interval (high <= low, compared in the output's own exact domain, so a uint64
  // interval straddling 2^63 stays ordered and float bounds compare after truncation) gives
  // `low`: its width becomes 1 and every draw's remainder 0.
  const Dtype domain = issubdtype(dtype, unsignedinteger) ? uint64 : int64;
  const array empty = less_equal(astype(high, domain, st), astype(low, domain, st), st);
  const array safe_width = where(empty, array(uint64_t{1}, uint64), width, st);
  array raw = array(uint64_t{0}, uint64);
  if (dtype == int64 || dtype == uint64) {
    // 64 bits of entropy from two 32-bit draws: from the halves of a split explicit key, or
    // from the next two keys of the global sequence (low word first).
    array low_bits = array(uint32_t{0}, uint32), high_bits = array(uint32_t{0}, uint32);
    if (key) {
      auto [k1, k2] = split(*key, st);
      low_bits = bits(shape, 4, k1, st);
      high_bits = bits(shape, 4, k2, st);
    } else {
      low_bits = bits(shape, 4, std::nullopt, st);
      high_bits = bits(shape, 4, std::nullopt, st);
    }
    raw = bitwise_or(left_shift(astype(high_bits, uint64, st), array(uint64_t{32}, uint64), st),
                     astype(low_bits, uint64, st), st);
  } else {
    // Every other integer type spans at most 2^32 values: one 32-bit draw covers it.
    raw = astype(bits(shape, 4, key, st), uint64, st);
  }
  // Added in uint64 (wrapping, defined), then read back as the requested type.
  return astype(add(astype(lo, uint64, st), remainder(raw, safe_width, st), st), dtype, st);
}

array bernoulli(const array& p, const Shape& shape, const std::optional<array>& key, StreamOrDevice s) {
  if (!issubdtype(p.dtype(), floating)) {
    throw_invalid("bernoulli", "bernoulli probability `p` must be a float type.");
  }
  const std::optional<Shape> out = try_broadcast(p.shape(), shape);
  if (!out || *out != shape)
    throw_invalid("bernoulli", "shape of `p` is incompatible with argument `shape`.");
  Stream st = detail::op_stream(std::move(s), "bernoulli");
  // p on the scale [0, the float above UINT32_MAX]: p >= 1 is always true, p <= 0 never.
  const array upper(std::nextafter(static_cast<float>(std::numeric_limits<uint32_t>::max()), FLT_MAX),
                    float32);
  return less(bits(shape, key, st), multiply(p, upper, st), st);
}

array bernoulli(const array& p, const std::optional<array>& key, StreamOrDevice s) {
  return bernoulli(p, p.shape(), key, std::move(s));
}

array bernoulli(const std::optional<array>& key, StreamOrDevice s) {
  return bernoulli(array(0.5f), key, std::move(s));
}

array truncated_normal(const array& lower, const array& upper, const Shape& shape, Dtype dtype,
                       const std::optional<array>& key, StreamOrDevice s) {
  // JAX's method: a uniform between the normal CDFs of the bounds, mapped back through erfinv.
  const char* op = "trunc_normal";  // MLX's name in its messages
  if (!issubdtype(dtype, floating)) throw_invalid(op, "trunc_normal only accepts floating point dtypes.");
  check_broadcasts_to(detail::broadcast_shapes(lower.shape(), upper.shape(), op), shape, op);
  Stream st = detail::op_stream(std::move(s), op);
  const array sqrt2(std::sqrt(2.0), dtype);
  const array lower_t = astype(lower, dtype, st);
  const array upper_t = astype(upper, dtype, st);
  const array a = erf(divide(lower_t, sqrt2, st), st);
  const array b = erf(divide(upper_t, sqrt2, st), st);
  const array u = uniform(a, b, shape, dtype, key, st);
  const array out = multiply(sqrt2, erfinv(u, st), st);
  return maximum(minimum(upper_t, out, st), lower_t, st);
}

array truncated_normal(const array& lower, const array& upper, Dtype dtype, const std::optional<array>& key,
                       StreamOrDevice s) {
  const Shape shape = detail::broadcast_shapes(lower.shape(), upper.shape(), "trunc_normal");
  return truncated_normal(lower, upper, shape, dtype, key, std::move(s));
}

array gumbel(const Shape& shape, Dtype dtype, const std::optional<array>& key, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "gumbel");
  return negative(log(negative(log(uniform(shape, dtype, key, st), st), st), st), st);
}

array categorical(const array& logits, int axis, const Shape& shape, const std::optional<array>& key,
                  StreamOrDevice s) {
  axis = valid_axis(axis, static_cast<int>(logits.ndim()));
  Shape reduced = logits.shape();
  reduced.erase(reduced.begin() + axis);
  const std::optional<Shape> out = try_broadcast(shape, reduced);
  if (!out || *out != shape) {
    throw_invalid("categorical", "Requested shape " + shape_str(shape) +
                                     " is not broadcast compatible with reduced logits shape" +
                                     shape_str(reduced) + ".");
  }
  return categorical_impl(logits, axis, shape, key, detail::op_stream(std::move(s), "categorical"));
}

array categorical(const array& logits_, int axis, int num_samples, const std::optional<array>& key,
                  StreamOrDevice s) {
  axis = valid_axis(axis, static_cast<int>(logits_.ndim()));
  if (num_samples < 0) throw_invalid("categorical", "num_samples must be non-negative.");
  Stream st = detail::op_stream(std::move(s), "categorical");
  const array logits = expand_dims(logits_, -1, st);
  Shape shape = logits.shape();
  shape.erase(shape.begin() + axis);
  shape.back() = num_samples;
  return categorical_impl(logits, axis, shape, key, st);
}

array categorical(const array& logits, int axis, const std::optional<array>& key, StreamOrDevice s) {
  axis = valid_axis(axis, static_cast<int>(logits.ndim()));
  Shape shape = logits.shape();
  shape.erase(shape.begin() + axis);
  return categorical_impl(logits, axis, shape, key, detail::op_stream(std::move(s), "categorical"));
}

array laplace(const Shape& shape, Dtype dtype, const float loc, const float scale,
              const std::optional<array>& key, StreamOrDevice s) {
  if (!issubdtype(dtype, floating)) {
    throw_invalid("laplace", "Can only generate uniform numbers with real floating point type.");
  }
  Stream st = detail::op_stream(std::move(s), "laplace");
  const array low(std::nextafter(-1.0f, 0.0f), float32);
  const array high(1.0f, float32);
  array samples = uniform(low, high, shape, float32, key, st);
  // The inverse CDF: sign(u) * log1p(-|u|).
  samples = multiply(sign(samples, st), log1p(multiply(array(-1.0f, dtype), abs(samples, st), st), st), st);
  samples = astype(samples, dtype, st);
  if (scale != 1.0) samples = multiply(array(scale, dtype), samples, st);
  if (loc != 0.0) samples = add(array(loc, dtype), samples, st);
  return samples;
}

array permutation(const array& x, int axis, const std::optional<array>& key, StreamOrDevice s) {
  const int ax = detail::normalize_axis(axis, static_cast<int>(x.ndim()), "permutation");
  Stream st = detail::op_stream(std::move(s), "permutation");
  return take(x, permutation(x.shape(ax), key, st), ax, st);
}

array permutation(int x, const std::optional<array>& key, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "permutation");
  return argsort(bits({x}, key, st), st);
}

}  // namespace braid::random
