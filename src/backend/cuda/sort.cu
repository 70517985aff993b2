// Sort, ArgSort, Partition, ArgPartition on the GPU with CUB's radix sorts. Each element is
// first encoded as an unsigned key whose order is the element order (sort_keys.cuh), laid
// out with the sort axis last. Rows of up to a few thousand elements are sorted a block per
// row (sort_block.cu); otherwise one row goes through DeviceRadixSort, a few long rows
// through one DeviceRadixSort each, many rows through DeviceSegmentedSort; all are stable.
// Sorted values are decoded back from the keys. A partition selects the kth key of each row
// with a radix select (a block per row) and places the others around it; very long rows that
// are few are fully sorted.
#include <mutex>

#include <cub/cub.cuh>

#include "backend/cuda/sort_keys.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;
constexpr int64_t kFewRows = 16;
constexpr int64_t kLongRow = int64_t{1} << 17;

template <typename T, typename Idx>
__global__ void encode_keys(const T* __restrict__ src, key_t<T>* __restrict__ keys, Strided<1> layout,
                            int64_t n) {
  for (int64_t e = thread_index(); e < n; e += thread_count()) {
    int64_t off[1];
    offsets_of<Idx>(layout, static_cast<Idx>(e), off);
    keys[e] = encode(src[off[0]]);
  }
}

template <typename T>
__global__ void decode_keys(const key_t<T>* __restrict__ keys, T* __restrict__ dst, int64_t n) {
  for (int64_t e = thread_index(); e < n; e += thread_count()) dst[e] = decode<T>(keys[e]);
}

__global__ void row_positions(uint32_t* __restrict__ dst, int64_t n, int64_t row) {
  for (int64_t e = thread_index(); e < n; e += thread_count()) dst[e] = static_cast<uint32_t>(e % row);
}

__global__ void row_offsets(int64_t* __restrict__ dst, int64_t rows, int64_t row) {
  for (int64_t r = thread_index(); r <= rows; r += thread_count()) dst[r] = r * row;
}

// Partition of contiguous rows, a block per row: an MSD radix select finds the kth key (one
// histogram pass per key byte over the keys that share the prefix found so far, until one key
// alone has it), then one pass writes the smaller keys, the equal ones and the larger ones
// into place. Elements are
// read as dtype `in_form` (encoded keys as key_form) and written decoded as `out_form`. Warps
// combine their atomic updates (a warp's lanes with one digit or one class add once), so
// skewed keys (many floats share their top byte) do not serialize on one counter. With
// `staged`, the block first copies its row's keys into dynamic shared memory (n keys), so
// the passes read the row from the SM instead of from L2 or memory, and the row is read
// from memory once; once at most kCandidates keys share the prefix found, the later passes
// read only those.
constexpr int kSelectBlock = 512;
constexpr int kStagedBlock = 1024;  // staged rows of at least kStagedWide keys
constexpr int64_t kStagedWide = 16384;
constexpr int64_t kStagedMin = 2048;   // shorter rows are read where they are
constexpr int64_t kCandidates = 4096;  // room for the keys that share a prefix

template <typename U, int kThreads>
__global__ void __launch_bounds__(kThreads)
    select_partition(const void* __restrict__ src, Dtype::Val in_form, void* __restrict__ vout,
                     Dtype::Val out_form, uint32_t* __restrict__ pout, int64_t rows, int64_t n, int64_t kth,
                     bool staged) {
  extern __shared__ __align__(16) unsigned char staged_bytes[];
  U* const cached = reinterpret_cast<U*>(staged_bytes);
  U* const candidates = cached + n;  // min(n, kCandidates) keys after the row
  __shared__ unsigned int hist[256];
  __shared__ U prefix_s;
  __shared__ int64_t k_s, less_s, equal_s;
  __shared__ unsigned int counts[3];  // placed so far: smaller, equal, larger
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x % 32;
  const unsigned below_lane = (1u << lane) - 1;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t row = r * n;
    if (staged) {
      dispatch_device(in_form, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (sizeof(T) <= sizeof(U)) {
          const T* __restrict__ from = static_cast<const T*>(src) + row;
#pragma unroll 8
          for (int64_t i = threadIdx.x; i < n; i += kThreads) cached[i] = encode(from[i]);
        }
      });
      __syncthreads();
    }
    auto key_at = [&](int64_t i) { return staged ? cached[i] : load_key<U>(src, row + i, in_form); };
    U prefix = 0, mask = 0;
    int64_t k = kth, less = 0;
    // The keys a pass reads: the row, or (staged, once few enough share the prefix) those.
    int64_t len = n;
    bool from_candidates = false;
    for (int pass = static_cast<int>(sizeof(U)) - 1; pass >= 0; --pass) {
      const int shift = pass * 8;
      for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
      __syncthreads();
      // Every thread takes the same number of steps, so whole warps meet at __match_any_sync.
      for (int64_t i0 = 0; i0 < len; i0 += kThreads) {
        const int64_t i = i0 + threadIdx.x;
        unsigned digit = 256;  // not counted
        if (i < len) {
          const U key = from_candidates ? candidates[i] : key_at(i);
          if ((key & mask) == prefix) digit = static_cast<unsigned>((key >> shift) & 0xFF);
        }
        const unsigned peers = __match_any_sync(kAll, digit);
        if (digit < 256 && lane == __ffs(peers) - 1) atomicAdd(&hist[digit], static_cast<unsigned>(__popc(peers)));
      }
      __syncthreads();
      // The digit of the kth key: lane l of warp 0 sums bins 8l..8l+7, a scan across the lanes
      // finds the lane holding it, and that lane its bin.
      if (threadIdx.x < 32) {
        unsigned bins[8];
        int64_t own = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) own += bins[j] = hist[lane * 8 + j];
        int64_t through = own;
#pragma unroll
        for (int step = 1; step < 32; step <<= 1) {
          const int64_t v = __shfl_up_sync(kAll, through, step);
          if (lane >= step) through += v;
        }
        int64_t below = through - own;
        if (below <= k && k < through) {
          int j = 0;
          for (; j < 7 && below + bins[j] <= k; ++j) below += bins[j];
          prefix_s = static_cast<U>(prefix | (static_cast<U>(lane * 8 + j) << shift));
          k_s = k - below;
          less_s = less + below;
          equal_s = bins[j];
          counts[0] = counts[1] = counts[2] = 0;
        }
      }
      __syncthreads();
      prefix = prefix_s;
      k = k_s;
      less = less_s;
      mask = static_cast<U>(mask | (static_cast<U>(0xFF) << shift));
      const int64_t sharing = equal_s;
      __syncthreads();  // hist is reset by the next pass only after every thread read the shared results
      if (sharing == 1) break;  // one key has the prefix: it is the kth, the lower bytes need no pass
      if (staged && !from_candidates && pass > 0 && sharing <= kCandidates) {
        // The keys that share the prefix, gathered for the remaining passes.
        for (int64_t i0 = 0; i0 < n; i0 += kThreads) {
          const int64_t i = i0 + threadIdx.x;
          U key = 0;
          const bool keep = i < n && ((key = cached[i]) & mask) == prefix;
          const unsigned members = __ballot_sync(kAll, keep);
          if (members == 0) continue;
          const int leader = __ffs(members) - 1;
          unsigned base = 0;
          if (lane == leader) base = atomicAdd(&counts[0], static_cast<unsigned>(__popc(members)));
          base = __shfl_sync(kAll, base, leader);
          if (keep) candidates[base + __popc(members & below_lane)] = key;
        }
        __syncthreads();
        len = sharing;
        from_candidates = true;
      }
    }
    // Keys whose masked bytes equal the prefix: the kth and those equal to it.
    const int64_t equal = equal_s;
    const int64_t start[3] = {0, less, less + equal};
    for (int64_t i0 = 0; i0 < n; i0 += kThreads) {
      const int64_t i = i0 + threadIdx.x;
      U key = 0;
      int cls = 3;  // past the row's end
      if (i < n) {
        key = key_at(i);
        const U masked = static_cast<U>(key & mask);
        cls = masked < prefix ? 0 : (masked == prefix ? 1 : 2);
      }
      int64_t dst = 0;
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        const unsigned members = __ballot_sync(kAll, cls == c);
        if (members == 0) continue;
        const int leader = __ffs(members) - 1;
        unsigned base = 0;
        if (lane == leader) base = atomicAdd(&counts[c], static_cast<unsigned>(__popc(members)));
        base = __shfl_sync(kAll, base, leader);
        if (cls == c) dst = start[c] + base + __popc(members & below_lane);
      }
      if (cls < 3) {
        if (vout) store_decoded<U>(vout, row + dst, key, out_form);
        if (pout) pout[row + dst] = static_cast<uint32_t>(i);
      }
    }
    __syncthreads();
  }
}

// Rows the select handles better than a sort: enough rows to fill the GPU, or rows short
// enough for one block.
bool use_select(int64_t rows, int64_t n) { return rows >= 64 || n <= (int64_t{1} << 20); }

// Lets the staged select use all the shared memory a block may have (set once per kernel).
template <typename U, int kThreads>
void allow_staged_smem() {
  static std::once_flag once;
  std::call_once(once, [] {
    check(cudaFuncSetAttribute(select_partition<U, kThreads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(device_props().sharedMemPerBlockOptin) - 2048),
          "partition");
  });
}

// The select of `rows` rows of n keys (see select_partition), its row staged in shared
// memory when it fits.
template <typename U>
void launch_select(const void* src, Dtype::Val in_form, void* values, Dtype::Val out_form, uint32_t* places,
                   int64_t rows, int64_t n, int64_t kth, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, INT32_MAX));
  // The row, then room for the keys that share a prefix (never more than the row).
  const size_t bytes = static_cast<size_t>(n + std::min(n, kCandidates)) * sizeof(U);
  const bool staged = n >= kStagedMin && bytes + 2048 <= device_props().sharedMemPerBlockOptin;
  if (staged && n >= kStagedWide) {
    allow_staged_smem<U, kStagedBlock>();
    select_partition<U, kStagedBlock>
        <<<grid, kStagedBlock, bytes, stream>>>(src, in_form, values, out_form, places, rows, n, kth, true);
  } else {
    if (staged && bytes > 48 * 1024) allow_staged_smem<U, kSelectBlock>();
    select_partition<U, kSelectBlock><<<grid, kSelectBlock, staged ? bytes : 0, stream>>>(
        src, in_form, values, out_form, places, rows, n, kth, staged);
  }
  check_launch("partition");
}

enum class Strategy { one_row, row_by_row, segmented };

Strategy strategy_for(int64_t rows, int64_t n) {
  if (rows == 1) return Strategy::one_row;
  if (rows <= kFewRows && n >= kLongRow) return Strategy::row_by_row;
  return Strategy::segmented;
}

// One CUB call (or the size query when temp is null): keys (and positions when vin is set)
// of `rows` rows of `n`.
template <typename U>
void cub_sort(void* temp, size_t& bytes, bool pairs, const U* kin, U* kout, const uint32_t* vin,
              uint32_t* vout, const int64_t* offsets, int64_t rows, int64_t n, cudaStream_t stream) {
  const Strategy how = strategy_for(rows, n);
  if (how == Strategy::segmented) {
    if (pairs) {
      check(cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, kin, kout, vin, vout, rows * n, rows,
                                                      offsets, offsets + 1, stream),
            "sort");
    } else {
      check(cub::DeviceSegmentedSort::StableSortKeys(temp, bytes, kin, kout, rows * n, rows, offsets,
                                                     offsets + 1, stream),
            "sort");
    }
    return;
  }
  const int64_t calls = temp ? (how == Strategy::one_row ? 1 : rows) : 1;
  for (int64_t r = 0; r < calls; ++r) {
    const int64_t o = r * n;
    if (pairs) {
      check(cub::DeviceRadixSort::SortPairs(temp, bytes, kin + o, kout + o, vin + o, vout + o, n, 0,
                                            static_cast<int>(sizeof(U) * 8), stream),
            "sort");
    } else {
      check(cub::DeviceRadixSort::SortKeys(temp, bytes, kin + o, kout + o, n, 0,
                                           static_cast<int>(sizeof(U) * 8), stream),
            "sort");
    }
  }
}

Strides row_major(const Shape& shape) {
  Strides st(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * shape[i + 1];
  return st;
}

template <typename T>
void encode_launch(const T* src, key_t<T>* keys, const HostLayout<1>& layout, cudaStream_t stream) {
  for_each_launch(
      layout, [&](const std::array<int64_t, 1>& base, const Strided<1>& inner, int64_t begin, int64_t count) {
        const unsigned grid = grid_for(count, kBlock);
        if (count <= INT32_MAX) {
          encode_keys<T, uint32_t><<<grid, kBlock, 0, stream>>>(src + base[0], keys + begin, inner, count);
        } else {
          encode_keys<T, uint64_t><<<grid, kBlock, 0, stream>>>(src + base[0], keys + begin, inner, count);
        }
        check_launch("sort");
      });
}

// Sorts `in` along `axis` into `out`: values, or (positions) uint32 positions. With kth >= 0
// a partition at kth is enough.
void sort_rows(const array& in, array& out, int axis, bool positions, int64_t kth, const Stream& s) {
  alloc_output(out);
  if (out.size() == 0) return;
  cudaStream_t stream = stream_of(s);
  const common::AxisRows ar = common::axis_rows(in.shape(), axis);
  const int64_t n = ar.n, rows = ar.rows, total = n * rows;
  Shape pshape = ar.others;
  pshape.push_back(static_cast<int32_t>(n));
  Strides pstrides = ar.others_of(in.strides(), axis);
  pstrides.push_back(in.strides()[axis]);
  const HostLayout<1> layout(pshape, {pstrides});
  const bool axis_last = axis == static_cast<int>(in.ndim()) - 1;
  // How `out` sees a row-major buffer of pshape (the axis moved last).
  const Strides prm = row_major(pshape);
  Strides view(in.ndim(), 0);
  for (int d = 0, j = 0; d < static_cast<int>(in.ndim()); ++d) view[d] = d == axis ? prm.back() : prm[j++];

  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using U = key_t<T>;
    const bool block = kth < 0 && n >= kBlockSortMin && n <= kBlockSortMax;
    if (block || (kth >= 0 && use_select(rows, n))) {
      // One kernel from rows to results: rows read in place when they are contiguous (else
      // encoded into contiguous rows first), results written in place when the axis is last
      // (else into scratch, then copied into out's layout).
      const bool in_place = axis_last && in.flags().row_contiguous;
      ScratchPlan plan;
      const size_t keys_off = in_place ? 0 : plan.reserve(total * sizeof(U));
      const size_t res_off = axis_last ? 0 : plan.reserve(total * (positions ? sizeof(uint32_t) : sizeof(T)));
      plan.fetch(s);
      const void* src = in.desc()->data_ptr;
      Dtype::Val form = in.dtype().val();
      if (!in_place) {
        encode_launch(static_cast<const T*>(src), plan.at<U>(keys_off), layout, stream);
        src = plan.at<U>(keys_off);
        form = key_form(sizeof(U));
      }
      void* res = axis_last ? out.desc()->data_ptr : plan.at<void>(res_off);
      void* values = positions ? nullptr : res;
      uint32_t* places = positions ? static_cast<uint32_t*>(res) : nullptr;
      if (block) {
        block_sort_rows(src, form, values, in.dtype().val(), places, sizeof(U), rows, n, stream);
      } else {
        launch_select<U>(src, form, values, in.dtype().val(), places, rows, n, kth, stream);
      }
      if (!axis_last) copy_strided(res, out.dtype(), out.shape(), view, out.desc()->data_ptr, out.dtype(), stream);
      return;
    }
    size_t cub_bytes = 0;
    cub_sort<U>(nullptr, cub_bytes, positions, nullptr, nullptr, nullptr, nullptr, nullptr, rows, n, stream);
    ScratchPlan plan;
    const size_t kin_off = plan.reserve(total * sizeof(U));
    const size_t kout_off = plan.reserve(total * sizeof(U));
    const size_t vin_off = positions ? plan.reserve(total * sizeof(uint32_t)) : 0;
    const size_t vout_off = positions && !axis_last ? plan.reserve(total * sizeof(uint32_t)) : 0;
    const size_t vals_off = !positions && !axis_last ? plan.reserve(total * sizeof(T)) : 0;
    const size_t offsets_off = plan.reserve((rows + 1) * sizeof(int64_t));
    const size_t cub_off = plan.reserve(cub_bytes);
    plan.fetch(s);
    U* kin = plan.at<U>(kin_off);
    U* kout = plan.at<U>(kout_off);
    int64_t* offsets = plan.at<int64_t>(offsets_off);
    encode_launch(static_cast<const T*>(in.desc()->data_ptr), kin, layout, stream);
    uint32_t* vout =
        positions ? (axis_last ? static_cast<uint32_t*>(out.desc()->data_ptr) : plan.at<uint32_t>(vout_off))
                  : nullptr;
    row_offsets<<<grid_for(rows + 1, kBlock), kBlock, 0, stream>>>(offsets, rows, n);
    check_launch("sort");
    uint32_t* vin = nullptr;
    if (positions) {
      vin = plan.at<uint32_t>(vin_off);
      row_positions<<<grid_for(total, kBlock), kBlock, 0, stream>>>(vin, total, n);
      check_launch("sort");
    }
    cub_sort<U>(plan.at<void>(cub_off), cub_bytes, positions, kin, kout, vin, vout, offsets, rows, n, stream);
    if (positions) {
      if (!axis_last) copy_strided(vout, uint32, out.shape(), view, out.desc()->data_ptr, uint32, stream);
      return;
    }
    T* dst = axis_last ? static_cast<T*>(out.desc()->data_ptr) : plan.at<T>(vals_off);
    decode_keys<T><<<grid_for(total, kBlock), kBlock, 0, stream>>>(kout, dst, total);
    check_launch("sort");
    if (!axis_last)
      copy_strided(dst, in.dtype(), out.shape(), view, out.desc()->data_ptr, out.dtype(), stream);
  });
}

}  // namespace
}  // namespace cuda

void Sort::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::sort_rows(inputs[0], out, axis_, false, -1, stream());
}

void ArgSort::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::sort_rows(inputs[0], out, axis_, true, -1, stream());
}

void Partition::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::sort_rows(inputs[0], out, axis_, false, kth_, stream());
}

void ArgPartition::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::sort_rows(inputs[0], out, axis_, true, kth_, stream());
}

}  // namespace braid
