// MLX's affine quantization, computed the same way by both backends (the functions compile
// for the host and, under nvcc, for the device).
//
// Weights are quantized along their last axis in groups of `group_size` elements. A group
// with extremes lo and hi gets a scale and bias such that the extreme of larger magnitude
// (the "edge") is represented exactly: scale = +-max((hi - lo) / (2^bits - 1), 1e-7) with the
// sign chosen so that q = 0 lands on the edge... then the scale is adjusted to edge / q0 and
// the bias is the edge (0 when the edge rounds to q0 = 0). Each element becomes
// q = clamp(round((w - bias) / scale), 0, 2^bits - 1) and reads back as scale * q + bias.
//
// Packing: the q values of a row form a little-endian bit stream, `bits` bits each, stored
// in uint32 words (K * bits / 32 words per row of K). For 2, 4 and 8 bits a value never
// straddles two words; for 3, 5 and 6 bits it may.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define BRAID_HD __host__ __device__
#else
#define BRAID_HD
#endif

namespace braid::common {

struct AffineParams {
  float scale;
  float bias;
};

/// The scale and bias of a group with minimum `lo` and maximum `hi`.
BRAID_HD inline AffineParams affine_params(float lo, float hi, int bits) {
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
BRAID_HD inline uint32_t affine_quantize(float w, AffineParams p, int bits) {
  const float n_bins = static_cast<float>((1 << bits) - 1);
  const float q = rintf((w - p.bias) / p.scale);
  return static_cast<uint32_t>(fminf(fmaxf(q, 0.0f), n_bins));
}

/// Element `j` of a packed row.
BRAID_HD inline uint32_t unpack(const uint32_t* row, int64_t j, int bits) {
  const int64_t bit = j * bits;
  const int64_t word = bit >> 5;
  const int shift = static_cast<int>(bit & 31);
  uint64_t v = row[word] >> shift;
  if (shift + bits > 32) v |= static_cast<uint64_t>(row[word + 1]) << (32 - shift);
  return static_cast<uint32_t>(v & ((1u << bits) - 1u));
}

/// ORs the value q into element `j` of a zeroed packed row (one writer per word).
BRAID_HD inline void pack_into(uint32_t* row, int64_t j, uint32_t q, int bits) {
  const int64_t bit = j * bits;
  const int64_t word = bit >> 5;
  const int shift = static_cast<int>(bit & 31);
  row[word] |= q << shift;
  if (shift + bits > 32) row[word + 1] |= q >> (32 - shift);
}

}  // namespace braid::common
