// Rows of up to a few thousand elements sorted by one block each, in registers and shared
// memory: CUB's block radix sort (stable) over the encoded keys, the row read in a blocked
// arrangement (thread t holds elements [t * items, (t + 1) * items), the order stability
// refers to) and the result written striped, so that a warp's stores are contiguous.
// Elements are encoded as they are read and decoded as they are written, so a contiguous row
// goes from the input to the output in one pass. Keys of up to 4 bytes sort as 32-bit keys
// over their low bits; the padding past the row's end is the largest key and, placed after
// every element, stays behind them.
#include <cub/block/block_radix_sort.cuh>

#include "backend/cuda/sort_keys.cuh"

namespace braid::cuda {
namespace {

template <typename K, int Threads, int Items, bool Pairs>
__global__ void __launch_bounds__(Threads)
    sort_row_per_block(const void* __restrict__ src, Dtype::Val in_form, void* __restrict__ dst,
                       Dtype::Val out_form, uint32_t* __restrict__ positions, int64_t rows, int n, int bits) {
  using BlockSort =
      cub::BlockRadixSort<K, Threads, Items, std::conditional_t<Pairs, uint32_t, cub::NullType>>;
  __shared__ typename BlockSort::TempStorage temp;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t row = r * n;
    K keys[Items];
    uint32_t pos[Items];
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      const int i = static_cast<int>(threadIdx.x) * Items + j;
      keys[j] = i < n ? load_key<K>(src, row + i, in_form) : ~K{0};
      pos[j] = static_cast<uint32_t>(i);
    }
    if constexpr (Pairs) {
      BlockSort(temp).SortBlockedToStriped(keys, pos, 0, bits);
    } else {
      BlockSort(temp).SortBlockedToStriped(keys, 0, bits);
    }
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      const int i = j * Threads + static_cast<int>(threadIdx.x);
      if (i < n) {
        if (dst) store_decoded<K>(dst, row + i, keys[j], out_form);
        if constexpr (Pairs) positions[row + i] = pos[j];
      }
    }
    __syncthreads();  // the next row reuses the shared storage
  }
}

template <typename K, int Threads, int Items>
void launch(const void* src, Dtype::Val in_form, void* dst, Dtype::Val out_form, uint32_t* positions,
            int64_t rows, int64_t n, int bits, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, INT32_MAX));
  if (positions) {
    sort_row_per_block<K, Threads, Items, true><<<grid, Threads, 0, stream>>>(
        src, in_form, dst, out_form, positions, rows, static_cast<int>(n), bits);
  } else {
    sort_row_per_block<K, Threads, Items, false><<<grid, Threads, 0, stream>>>(
        src, in_form, dst, out_form, positions, rows, static_cast<int>(n), bits);
  }
  check_launch("sort");
}

// Size classes: the smallest tile that holds the row, 4 or 8 keys a thread.
template <typename K>
void launch_for(const void* src, Dtype::Val in_form, void* dst, Dtype::Val out_form, uint32_t* positions,
                int64_t rows, int64_t n, int bits, cudaStream_t stream) {
  if (n <= 128) {
    launch<K, 32, 4>(src, in_form, dst, out_form, positions, rows, n, bits, stream);
  } else if (n <= 512) {
    launch<K, 128, 4>(src, in_form, dst, out_form, positions, rows, n, bits, stream);
  } else if (n <= 1024) {
    launch<K, 256, 4>(src, in_form, dst, out_form, positions, rows, n, bits, stream);
  } else if (n <= 2048) {
    launch<K, 256, 8>(src, in_form, dst, out_form, positions, rows, n, bits, stream);
  } else {
    launch<K, 512, 8>(src, in_form, dst, out_form, positions, rows, n, bits, stream);
  }
}

}  // namespace

void block_sort_rows(const void* src, Dtype::Val in_form, void* dst, Dtype::Val out_form, uint32_t* positions,
                     size_t key_bytes, int64_t rows, int64_t n, cudaStream_t stream) {
  const int bits = static_cast<int>(key_bytes * 8);
  if (key_bytes <= 4) {
    launch_for<uint32_t>(src, in_form, dst, out_form, positions, rows, n, bits, stream);
  } else {
    launch_for<uint64_t>(src, in_form, dst, out_form, positions, rows, n, bits, stream);
  }
}

}  // namespace braid::cuda
