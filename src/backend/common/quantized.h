// MLX's quantization formats, computed the same way by both backends (the functions compile
// for the host and, under nvcc, for the device).
//
// Weights are quantized along their last axis in groups of `group_size` elements.
//
// "affine": a group with extremes lo and hi gets a scale and bias such that the extreme of
// larger magnitude (the "edge") is represented exactly: scale = +-max((hi - lo) / (2^bits -
// 1), 1e-7) with the sign chosen so that q = 0 lands on the edge... then the scale is
// adjusted to edge / q0 and the bias is the edge (0 when the edge rounds to q0 = 0). Each
// element becomes q = clamp(round((w - bias) / scale), 0, 2^bits - 1) and reads back as
// scale * q + bias. One bit (codes 0 and 1) keeps both extremes instead: scale =
// max(hi - lo, 1e-7) and bias = lo, so a group of two values reads back exactly.
//
// The floating-point modes (OCP microscaling and NVIDIA's NVFP4) have no bias; a group's
// elements are small floats times one shared scale, stored as a uint8 code per group:
//   mxfp4: E2M1 elements, groups of 32, E8M0 scale (a power of two);
//   mxfp8: E4M3 elements, groups of 32, E8M0 scale;
//   nvfp4: E2M1 elements, groups of 16, E4M3 scale, optionally over a tensor-wide float32
//          "global scale" gs: values are then element * scale * gs / (448 * 6).
// The scale of a group with largest magnitude amax is amax / (largest element: 6 or 448),
// times 448 * 6 / gs with a global scale, converted to the scale format: E8M0 rounds up to the
// next power of two (so the largest element never saturates; MLX's CUDA and Metal backends),
// E4M3 rounds to nearest even. Each element is then w * (that factor / scale) rounded to
// nearest even, saturating at the largest element.
//
// Packing: the codes of a row form a little-endian bit stream, `bits` bits each, stored in
// uint32 words (K * bits / 32 words per row of K). For 2, 4 and 8 bits a value never
// straddles two words; for 3, 5 and 6 bits it may. The fp modes' 4-bit codes are two a byte,
// low nibble first; their 8-bit codes one a byte: MLX's byte layout.
#pragma once

#include <cmath>
#include <cstdint>

#include "backend/common/elementwise_ops.h"

namespace braid::common {

/// MLX's quantization modes. Switches over a mode have no default case, so a backend that
/// does not handle one fails to compile.
enum class QuantizationMode { affine, mxfp4, mxfp8, nvfp4 };

template <QuantizationMode M>
struct ModeTag {
  static constexpr QuantizationMode value = M;
};

/// Calls fn(ModeTag<mode>{}), the mode as a compile-time constant.
template <typename F>
void dispatch_mode(QuantizationMode mode, F&& fn) {
  switch (mode) {
    case QuantizationMode::affine: fn(ModeTag<QuantizationMode::affine>{}); return;
    case QuantizationMode::mxfp4: fn(ModeTag<QuantizationMode::mxfp4>{}); return;
    case QuantizationMode::mxfp8: fn(ModeTag<QuantizationMode::mxfp8>{}); return;
    case QuantizationMode::nvfp4: fn(ModeTag<QuantizationMode::nvfp4>{}); return;
  }
}

/// The product of the two largest values of NVFP4's formats, 448 (E4M3) * 6 (E2M1).
constexpr float kNvfp4GlobalRange = 448.0f * 6.0f;

struct AffineParams {
  float scale;
  float bias;
};

/// The scale and bias of a group with minimum `lo` and maximum `hi`.
BRAID_HD AffineParams affine_params(float lo, float hi, int bits) {
  if (bits == 1) {
    AffineParams p;
    p.scale = fmaxf(hi - lo, 1e-7f);
    p.bias = lo;
    return p;
  }
  const float n_bins = static_cast<float>((1 << bits) - 1);
  const bool low_edge = fabsf(lo) > fabsf(hi);
  float scale = fmaxf((hi - lo) / n_bins, 1e-7f);
  scale = low_edge ? scale : -scale;
  const float edge = low_edge ? lo : hi;
  const float q0 = rintf(edge / scale);
  AffineParams p;
  p.scale = q0 != 0.0f ? edge / q0 : scale;
  p.bias = q0 == 0.0f ? 0.0f : edge;
  return p;
}

/// The quantized value of `w` under a group's parameters.
BRAID_HD uint32_t affine_quantize(float w, AffineParams p, int bits) {
  const float n_bins = static_cast<float>((1 << bits) - 1);
  const float q = rintf((w - p.bias) / p.scale);
  return static_cast<uint32_t>(fminf(fmaxf(q, 0.0f), n_bins));
}

/// The value of an E2M1 code (low 4 bits): sign, 2 exponent bits (bias 1), 1 mantissa bit.
BRAID_HD float e2m1_value(uint32_t code) {
  const uint32_t e = (code >> 1) & 3u, m = code & 1u;
  const float mag = e == 0 ? 0.5f * static_cast<float>(m)
                           : ::ldexpf(1.0f + 0.5f * static_cast<float>(m), static_cast<int>(e) - 1);
  return code & 8u ? -mag : mag;
}

/// The E2M1 code of x, rounded to nearest even and saturating at +-6 (NaN gives 6).
BRAID_HD uint32_t e2m1_code(float x) {
  if (x != x) return 7u;
  const uint32_t sign = (ew::float_bits(x) >> 28) & 8u;
  const float a = fabsf(x);
  // The midpoints between neighbours; a tie goes to the even code.
  const uint32_t mag = a <= 0.25f   ? 0u
                       : a < 0.75f  ? 1u
                       : a <= 1.25f ? 2u
                       : a < 1.75f  ? 3u
                       : a <= 2.5f  ? 4u
                       : a < 3.5f   ? 5u
                       : a <= 5.0f  ? 6u
                                    : 7u;
  return sign | mag;
}

/// The value of an E8M0 code: 2^(code - 127); 0xFF is NaN.
BRAID_HD float e8m0_value(uint32_t code) {
  code &= 0xFFu;
  if (code == 0xFFu) return ew::float_from_bits(0x7FC00000u);
  return code == 0 ? ew::float_from_bits(0x00400000u) : ew::float_from_bits(code << 23);
}

/// The smallest E8M0 value not below x >= 0 (0xFE, 2^127, for larger x; 0xFF for NaN or inf).
BRAID_HD uint32_t e8m0_code_up(float x) {
  if (!(x <= 3.402823466e38f)) return 0xFFu;
  const uint32_t bits = ew::float_bits(x) & 0x7FFFFFFFu;
  if (bits <= 0x00400000u) return 0u;  // up to 2^-127
  const uint32_t e = bits >> 23, mantissa = bits & 0x7FFFFFu;
  const uint32_t code = e == 0 ? 1u : (mantissa == 0 ? e : e + 1);
  return code > 0xFEu ? 0xFEu : code;
}

/// Bits per element, group size and largest element of a floating-point mode.
BRAID_HD int fp_bits(QuantizationMode m) { return m == QuantizationMode::mxfp8 ? 8 : 4; }
BRAID_HD int fp_group_size(QuantizationMode m) { return m == QuantizationMode::nvfp4 ? 16 : 32; }

/// The value of element code q under `mode` (q itself for affine, before scale and bias).
BRAID_HD float element_value(QuantizationMode mode, uint32_t q) {
  switch (mode) {
    case QuantizationMode::affine: return static_cast<float>(q);
    case QuantizationMode::mxfp4:
    case QuantizationMode::nvfp4: return e2m1_value(q);
    case QuantizationMode::mxfp8: return ew::FromFp8{}(q);
  }
  return 0.0f;
}

/// The value of a floating-point mode's scale code (affine has no scale codes: 0).
BRAID_HD float scale_value(QuantizationMode mode, uint32_t code) {
  switch (mode) {
    case QuantizationMode::affine: return 0.0f;
    case QuantizationMode::mxfp4:
    case QuantizationMode::mxfp8: return e8m0_value(code);
    case QuantizationMode::nvfp4: return ew::FromFp8{}(code);
  }
  return 0.0f;
}

/// A floating-point group: its scale code, the factor that takes an element to its code's
/// range, and the multiplier that takes a code's value back.
struct FpGroup {
  uint32_t scale_code;
  float encode;
  float decode;
};

/// The group of a fp mode whose largest magnitude is amax; `global_scale` <= 0 means none.
BRAID_HD FpGroup fp_group(QuantizationMode mode, float amax, float global_scale) {
  const bool global = global_scale > 0.0f;
  const float scale_enc = global ? kNvfp4GlobalRange / global_scale : 1.0f;
  const float s = amax / (mode == QuantizationMode::mxfp8 ? 448.0f : 6.0f) * scale_enc;
  FpGroup g;
  g.scale_code = mode == QuantizationMode::nvfp4 ? ew::ToFp8{}(s) : e8m0_code_up(s);
  const float sv = scale_value(mode, g.scale_code);
  g.encode = sv == 0.0f ? 0.0f : scale_enc / sv;
  g.decode = global ? sv * (global_scale / kNvfp4GlobalRange) : sv;
  return g;
}

/// The element code of w in a fp group.
BRAID_HD uint32_t fp_quantize(QuantizationMode mode, float w, const FpGroup& g) {
  const float v = w * g.encode;
  return mode == QuantizationMode::mxfp8 ? ew::ToFp8{}(v) : e2m1_code(v);
}

/// Element `j` of a packed row.
BRAID_HD uint32_t unpack(const uint32_t* row, int64_t j, int bits) {
  const int64_t bit = j * bits;
  const int64_t word = bit >> 5;
  const int shift = static_cast<int>(bit & 31);
  uint64_t v = row[word] >> shift;
  if (shift + bits > 32) v |= static_cast<uint64_t>(row[word + 1]) << (32 - shift);
  return static_cast<uint32_t>(v & ((1u << bits) - 1u));
}

/// ORs the value q into element `j` of a zeroed packed row (one writer per word).
BRAID_HD void pack_into(uint32_t* row, int64_t j, uint32_t q, int bits) {
  const int64_t bit = j * bits;
  const int64_t word = bit >> 5;
  const int shift = static_cast<int>(bit & 31);
  row[word] |= q << shift;
  if (shift + bits > 32) row[word + 1] |= q >> (32 - shift);
}

}  // namespace braid::common
