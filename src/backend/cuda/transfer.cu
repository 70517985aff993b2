// Small host-to-device writes without a staging copy: the bytes travel as a kernel argument.
#include <cstring>
#include <stdexcept>

#include "backend/cuda/cuda_utils.h"
#include "backend/cuda/transfer.h"

namespace braid::cuda {
namespace {

struct SmallBytes {
  unsigned char b[kSmallWrite];
};

__global__ void write_small_kernel(unsigned char* dst, SmallBytes bytes, int n) {
  int i = threadIdx.x;
  if (i < n) dst[i] = bytes.b[i];
}

}  // namespace

void write_small_async(void* dst, const void* src, size_t n, cudaStream_t stream) {
  if (n > kSmallWrite) throw std::invalid_argument("[cuda] write_small_async takes at most kSmallWrite bytes");
  SmallBytes bytes{};
  std::memcpy(bytes.b, src, n);
  write_small_kernel<<<1, kSmallWrite, 0, stream>>>(static_cast<unsigned char*>(dst), bytes, static_cast<int>(n));
  check(cudaGetLastError(), "write_small_kernel");
}

}  // namespace braid::cuda
