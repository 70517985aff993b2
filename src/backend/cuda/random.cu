// Random bits on the GPU: a thread per counter pair (grid-stride), the same layout as the CPU
// (src/backend/common/threefry.h). The covariance factor of multivariate_normal is CPU only.
#include <cstdint>
#include <stdexcept>

#include "backend/common/threefry.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;

// Word `j` of a key's output, little-endian. `whole_words`: every key's output is a multiple of
// 4 bytes, so each word is whole and 4-byte aligned (the buffer itself is).
__device__ __forceinline__ void store_word(unsigned char* key_out, int64_t j, uint32_t value, int64_t bytes,
                                           bool whole_words) {
  if (whole_words) {
    reinterpret_cast<uint32_t*>(key_out)[j] = value;
    return;
  }
  const int64_t n = min64(4, bytes - 4 * j);
  for (int64_t i = 0; i < n; ++i) key_out[4 * j + i] = static_cast<unsigned char>(value >> (8 * i));
}

__global__ void random_bits(const uint32_t* __restrict__ keys, unsigned char* __restrict__ out,
                            int64_t num_keys, common::BitsLayout layout) {
  const int64_t pairs = layout.pairs();
  const int64_t total = num_keys * pairs;
  const bool whole_words = layout.bytes % 4 == 0;
  for (int64_t t = thread_index(); t < total; t += thread_count()) {
    const int64_t key_index = t / pairs;
    const common::Words2 key{keys[2 * key_index], keys[2 * key_index + 1]};
    const common::BitsPair bp = common::bits_pair(key, layout, t - key_index * pairs);
    unsigned char* key_out = out + key_index * layout.bytes;
    store_word(key_out, bp.first_word, bp.hash.first, layout.bytes, whole_words);
    if (bp.second_word >= 0) store_word(key_out, bp.second_word, bp.hash.second, layout.bytes, whole_words);
  }
}

}  // namespace
}  // namespace cuda

void RandomBits::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const array& keys = inputs[0];
  const cudaStream_t s = cuda::stream_of(stream());
  const void* k = keys.desc()->data_ptr;
  if (!keys.flags().row_contiguous) {
    void* packed = cuda::scratch(stream(), keys.nbytes());
    cuda::copy_strided(k, uint32, keys.shape(), keys.strides(), packed, uint32, s);
    k = packed;
  }
  const int64_t num_keys = static_cast<int64_t>(keys.size() / 2);
  const common::BitsLayout layout(static_cast<int64_t>(out.nbytes()) / num_keys);
  const int64_t total = num_keys * layout.pairs();
  cuda::random_bits<<<cuda::grid_for(total, cuda::kBlock), cuda::kBlock, 0, s>>>(
      static_cast<const uint32_t*>(k), static_cast<unsigned char*>(out.desc()->data_ptr), num_keys, layout);
  cuda::check_launch("RandomBits");
}

void SvdSquareRoot::eval_gpu(const std::vector<array>&, array&) {
  // multivariate_normal always builds this node on a CPU stream.
  throw std::runtime_error("[multivariate_normal] The covariance factor is computed on the CPU only.");
}

}  // namespace braid
