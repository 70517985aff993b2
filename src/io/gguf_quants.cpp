// Block layouts (ggml's ggml-common.h), little-endian:
//   Q4_0: f16 d, 16 bytes of nibbles: value = d * (q - 8)
//   Q4_1: f16 d, f16 m, 16 bytes of nibbles: value = d * q + m
//   Q8_0: f16 d, 32 int8: value = d * q
//   Q4_K: f16 d, f16 dmin, 12 bytes of eight 6-bit (scale, min) pairs, 128 bytes of nibbles;
//         sub-block j of 32 values: value = d * sc_j * q - dmin * m_j
// In Q4_0 and Q4_1 byte i holds value i (low nibble) and value i + 16 (high nibble); in Q4_K
// each 32 bytes hold two sub-blocks, the first in the low nibbles.
#include "io/gguf_quants.h"

#include <cstring>

#include "io/common.h"

namespace braid::gguf {

namespace {

constexpr QuantType kTypes[] = {
    {2, 4, 32, 18},     // Q4_0
    {3, 4, 32, 20},     // Q4_1
    {8, 8, 32, 34},     // Q8_0
    {12, 4, 256, 144},  // Q4_K
};
constexpr int64_t kGroup = 32;

float16_t half_at(const uint8_t* p) {
  float16_t h;
  std::memcpy(&h.bits, p, 2);
  return h;
}

// Packs 32 4-bit values (`q[i]` in 0..15) into 16 bytes, value i at nibble i (LSB first).
void pack4(const uint8_t* q, uint8_t* dst) {
  for (int i = 0; i < 16; ++i) dst[i] = static_cast<uint8_t>(q[2 * i] | (q[2 * i + 1] << 4));
}

// The scale and min of Q4_K sub-block j from its 12 packed bytes.
void q4k_scale_min(const uint8_t* s, int j, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

}  // namespace

const QuantType* quant_type(uint32_t type) {
  for (const auto& q : kTypes) {
    if (q.type == type) return &q;
  }
  return nullptr;
}

Quantized unpack(const QuantType& q, const Shape& shape, const uint8_t* blocks) {
  Shape wshape = shape, gshape = shape;
  wshape.back() = static_cast<int32_t>(static_cast<int64_t>(shape.back()) * q.bits / 32);
  gshape.back() = static_cast<int32_t>(shape.back() / kGroup);
  void *wp = nullptr, *sp = nullptr, *bp = nullptr;
  Quantized out{io_detail::new_host_array(wshape, uint32, &wp),
                io_detail::new_host_array(gshape, float16, &sp),
                io_detail::new_host_array(gshape, float16, &bp)};
  auto* w = static_cast<uint8_t*>(wp);  // groups of 32 weights: 16 bytes (4 bits) or 32 (8 bits)
  auto* scales = static_cast<float16_t*>(sp);
  auto* biases = static_cast<float16_t*>(bp);
  const int64_t groups = static_cast<int64_t>(out.scales.size());
  const int64_t group_bytes = kGroup * q.bits / 8;
  uint8_t nibbles[32];
  if (q.block_items == kGroup) {
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* b = blocks + g * q.block_bytes;
      uint8_t* dst = w + g * group_bytes;
      const float16_t d = half_at(b);
      scales[g] = d;
      if (q.type == 8) {  // Q8_0: int8 q as q + 128, unsigned
        biases[g] = float16_t(-128.0f * static_cast<float>(d));
        for (int i = 0; i < 32; ++i) dst[i] = static_cast<uint8_t>(b[2 + i] ^ 0x80);
        continue;
      }
      const uint8_t* qs = b + (q.type == 3 ? 4 : 2);
      biases[g] = q.type == 3 ? half_at(b + 2) : float16_t(-8.0f * static_cast<float>(d));
      for (int i = 0; i < 16; ++i) {
        nibbles[i] = qs[i] & 0xF;
        nibbles[i + 16] = qs[i] >> 4;
      }
      pack4(nibbles, dst);
    }
    return out;
  }
  // Q4_K: 8 groups per block.
  for (int64_t blk = 0; blk < groups / 8; ++blk) {
    const uint8_t* b = blocks + blk * q.block_bytes;
    const float d = half_at(b), dmin = half_at(b + 2);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      q4k_scale_min(b + 4, j, &sc, &m);
      scales[blk * 8 + j] = float16_t(sc * d);
      biases[blk * 8 + j] = float16_t(-(m * dmin));
    }
    const uint8_t* qs = b + 16;
    for (int pair = 0; pair < 4; ++pair) {
      const uint8_t* chunk = qs + pair * 32;
      for (int i = 0; i < 32; ++i) nibbles[i] = chunk[i] & 0xF;
      pack4(nibbles, w + (blk * 8 + 2 * pair) * group_bytes);
      for (int i = 0; i < 32; ++i) nibbles[i] = chunk[i] >> 4;
      pack4(nibbles, w + (blk * 8 + 2 * pair + 1) * group_bytes);
    }
  }
  return out;
}

}  // namespace braid::gguf
