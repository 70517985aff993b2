// GGML's block-quantized tensor types that map onto MLX's affine quantized layout (group size
// 32): each block's values are scale * q + bias, so the weights pack into uint32 words and the
// scales and biases become float16 arrays, exactly as MLX's load_gguf maps them.
#pragma once

#include <cstdint>

#include "braid/array.h"

namespace braid::gguf {

struct QuantType {
  uint32_t type;        // GGML's type number
  int bits;             // bits per packed weight
  int32_t block_items;  // weights per block
  int32_t block_bytes;  // bytes per block in the file
};

/// Q4_0, Q4_1, Q4_K or Q8_0; null for any other type.
const QuantType* quant_type(uint32_t type);

struct Quantized {
  array weights;  // uint32 [..., last * bits / 32]
  array scales;   // float16 [..., last / 32]
  array biases;   // float16 [..., last / 32]
};

/// Unpacks the blocks of a tensor of `shape` (last dimension a multiple of block_items; the
/// caller checked that `blocks` holds size / block_items blocks) into host arrays.
Quantized unpack(const QuantType& q, const Shape& shape, const uint8_t* blocks);

}  // namespace braid::gguf
