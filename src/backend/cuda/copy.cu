// Copies and conversions: AsType, Full, and the copy behind Reshape. A contiguous source goes
// through cudaMemcpyAsync (same dtype) or a 16-byte vectorized conversion loop; a broadcast
// scalar through a vectorized fill; anything else through a strided gather.
#include "backend/common/layout.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;

template <typename S, typename D, int N>
__global__ void convert_flat(const S* __restrict__ src, D* __restrict__ dst, int64_t n) {
  const int64_t nvec = n / N;
  flat_vectors(
      nvec, [&](int64_t v) { return reinterpret_cast<const Vec<S, N>*>(src)[v]; },
      [&](int64_t v, const Vec<S, N>& in) {
        Vec<D, N> out;
#pragma unroll
        for (int j = 0; j < N; ++j) out.v[j] = convert<D>(in.v[j]);
        reinterpret_cast<Vec<D, N>*>(dst)[v] = out;
      });
  for (int64_t i = nvec * N + thread_index(); i < n; i += thread_count()) dst[i] = convert<D>(src[i]);
}

template <typename S, typename D, int N>
__global__ void fill_flat(const S* __restrict__ src, D* __restrict__ dst, int64_t n) {
  const D value = convert<D>(src[0]);
  Vec<D, N> out;
#pragma unroll
  for (int j = 0; j < N; ++j) out.v[j] = value;
  const int64_t nvec = n / N;
  const int64_t step = thread_count();
  for (int64_t v = thread_index(); v < nvec; v += step) reinterpret_cast<Vec<D, N>*>(dst)[v] = out;
  for (int64_t i = nvec * N + thread_index(); i < n; i += step) dst[i] = value;
}

template <typename S, typename D, typename Idx>
__global__ void convert_strided(const S* __restrict__ src, D* __restrict__ dst, Strided<1> layout, int64_t n) {
  const int64_t step = thread_count();
  for (int64_t i = thread_index(); i < n; i += step) {
    int64_t off[1];
    offsets_of<Idx>(layout, static_cast<Idx>(i), off);
    dst[i] = convert<D>(src[off[0]]);
  }
}

template <typename S, typename D>
void copy_typed(const S* src, D* dst, const HostLayout<1>& layout, int64_t n, cudaStream_t stream) {
  constexpr int N = vec_width_v<S, D>;
  // After collapsing, a contiguous source is one dimension of stride 1, and a broadcast value
  // one of stride 0 (or none at all).
  const bool contiguous = layout.ndim() == 1 && layout.strides[0][0] == 1;
  const bool single_value = layout.ndim() == 0 || (layout.ndim() == 1 && layout.strides[0][0] == 0);
  if (contiguous) {
    if constexpr (std::is_same_v<S, D>) {
      check(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * sizeof(S), cudaMemcpyDeviceToDevice, stream),
            "copy");
    } else if (is_aligned(src, N * sizeof(S)) && is_aligned(dst, N * sizeof(D))) {
      convert_flat<S, D, N><<<flat_grid(n, N, kBlock), kBlock, 0, stream>>>(src, dst, n);
      check_launch("copy");
    } else {
      convert_flat<S, D, 1><<<flat_grid(n, 1, kBlock), kBlock, 0, stream>>>(src, dst, n);
      check_launch("copy");
    }
    return;
  }
  if (single_value) {
    if (is_aligned(dst, N * sizeof(D))) {
      fill_flat<S, D, N><<<grid_for(n / N + 1, kBlock), kBlock, 0, stream>>>(src, dst, n);
    } else {
      fill_flat<S, D, 1><<<grid_for(n, kBlock), kBlock, 0, stream>>>(src, dst, n);
    }
    check_launch("copy");
    return;
  }
  for_each_launch(layout, [&](const std::array<int64_t, 1>& base, const Strided<1>& inner, int64_t begin,
                              int64_t count) {
    const unsigned grid = grid_for(count, kBlock);
    if (count <= INT32_MAX) {
      convert_strided<S, D, uint32_t><<<grid, kBlock, 0, stream>>>(src + base[0], dst + begin, inner, count);
    } else {
      convert_strided<S, D, uint64_t><<<grid, kBlock, 0, stream>>>(src + base[0], dst + begin, inner, count);
    }
    check_launch("copy");
  });
}

}  // namespace

void copy_strided(const void* src, Dtype src_dtype, const Shape& shape, const Strides& strides, void* dst,
                  Dtype dst_dtype, cudaStream_t stream) {
  HostLayout<1> layout(shape, {strides});
  const int64_t n = layout.count();
  for (int32_t d : shape) {
    if (d == 0) return;
  }
  dispatch_dtype(src_dtype, [&](auto st) {
    using S = typename decltype(st)::type;
    dispatch_dtype(dst_dtype, [&](auto dt) {
      using D = typename decltype(dt)::type;
      copy_typed(static_cast<const S*>(src), static_cast<D*>(dst), layout, n, stream);
    });
  });
}

void copy_to_contiguous(const array& in, array& out, const Stream& s) {
  alloc_output(out);
  if (out.size() == 0) return;
  copy_strided(in.desc()->data_ptr, in.dtype(), out.shape(), common::broadcast_strides(in, out.shape()),
               out.desc()->data_ptr, out.dtype(), stream_of(s));
}

}  // namespace cuda

void AsType::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::copy_to_contiguous(inputs[0], out, stream());
}

void Full::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::copy_to_contiguous(inputs[0], out, stream());
}

}  // namespace braid
