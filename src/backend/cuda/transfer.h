#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace braid::cuda {
/// Largest host buffer copied by write_small_async.
constexpr size_t kSmallWrite = 64;
/// Copies n <= kSmallWrite bytes from host `src` to device `dst` in stream order; `src` may be
/// reused as soon as this returns (the bytes are captured as a kernel argument).
void write_small_async(void* dst, const void* src, size_t n, cudaStream_t stream);
}  // namespace braid::cuda
