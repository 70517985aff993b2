// Device helpers shared by the CUDA indexing kernels: index arrays in scratch, the indexed
// axes as a kernel argument, and atomic read-modify-write for every element size.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/common/indexing.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"

namespace braid::cuda {

/// Indexed axes a kernel handles (more throw when the node runs).
constexpr int kMaxIndexAxes = 16;

/// Per indexed axis: the int64 indices (row-major over the index shape), the axis size, the
/// slice length along it and its element stride.
struct IndexAxes {
  int n = 0;
  const int64_t* idx[kMaxIndexAxes] = {};
  int64_t dim[kMaxIndexAxes] = {};
  int64_t slice[kMaxIndexAxes] = {};
  int64_t stride[kMaxIndexAxes] = {};
};

/// Converts each index array (inputs[first + k], broadcast views of one shape) to contiguous
/// int64 at its reserved scratch offset, on `stream`.
inline void load_indices(const std::vector<array>& inputs, size_t first, size_t count,
                         const ScratchPlan& plan, const std::vector<size_t>& offsets, cudaStream_t stream) {
  for (size_t k = 0; k < count; ++k) {
    const array& idx = inputs[first + k];
    if (idx.size() == 0) continue;
    copy_strided(idx.desc()->data_ptr, idx.dtype(), idx.shape(), idx.strides(), plan.at<int64_t>(offsets[k]),
                 int64, stream);
  }
}

__device__ __forceinline__ int64_t gather_base(const IndexAxes& ax, int64_t i) {
  int64_t off = 0;
  for (int k = 0; k < ax.n; ++k)
    off += common::gather_start(ax.idx[k][i], ax.dim[k], ax.slice[k]) * ax.stride[k];
  return off;
}

/// The element offset of update slice i, or -1 when it is dropped.
__device__ __forceinline__ int64_t scatter_base(const IndexAxes& ax, int64_t i) {
  int64_t off = 0;
  for (int k = 0; k < ax.n; ++k) {
    const int64_t start = common::scatter_start(ax.idx[k][i], ax.dim[k], ax.slice[k]);
    if (start < 0) return -1;
    off += start * ax.stride[k];
  }
  return off;
}

template <typename To, typename From>
__device__ __forceinline__ To bits_as(From f) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

/// *addr = f(*addr) atomically, for elements of 1, 2, 4 or 8 bytes (a compare-and-swap loop;
/// 1-byte elements swap the aligned 32-bit word that holds them).
template <typename T, typename F>
__device__ void atomic_update(T* addr, F f) {
  if constexpr (sizeof(T) == 8) {
    auto* p = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = *p, assumed;
    do {
      assumed = old;
      old = atomicCAS(p, assumed, bits_as<unsigned long long>(f(bits_as<T>(assumed))));
    } while (assumed != old);
  } else if constexpr (sizeof(T) == 4) {
    auto* p = reinterpret_cast<unsigned int*>(addr);
    unsigned int old = *p, assumed;
    do {
      assumed = old;
      old = atomicCAS(p, assumed, bits_as<unsigned int>(f(bits_as<T>(assumed))));
    } while (assumed != old);
  } else if constexpr (sizeof(T) == 2) {
    auto* p = reinterpret_cast<unsigned short int*>(addr);
    unsigned short int old = *p, assumed;
    do {
      assumed = old;
      old = atomicCAS(p, assumed, bits_as<unsigned short int>(f(bits_as<T>(assumed))));
    } while (assumed != old);
  } else {
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    auto* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(a & 3) * 8;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      const auto cur = bits_as<T>(static_cast<unsigned char>((assumed >> shift) & 0xFF));
      const auto nv = static_cast<unsigned int>(bits_as<unsigned char>(f(cur)));
      old = atomicCAS(word, assumed, (assumed & ~(0xFFu << shift)) | (nv << shift));
    } while (assumed != old);
  }
}

}  // namespace braid::cuda
