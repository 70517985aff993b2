// Gather, GatherAxis, Scatter and MaskedScatter on the GPU. Index arrays (any integer dtype
// and layout) are first converted to contiguous int64 in the stream's scratch (int32 and int64
// ones of a row gather or of take_along_axis are read in place). Gathers move bytes (one
// kernel per element size): a row gather whose slices are contiguous and 16-byte aligned
// copies each row with 16-byte vectors, a block per row; take_along_axis reads each output's
// element directly. Scatters copy the input into the output and combine the updates with
// atomics (native adds and integer max/min, compare-and-swap loops otherwise). Offsets are
// 64-bit throughout.
#include <cub/cub.cuh>

#include "backend/cuda/indexing_common.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kBlock = 256;

template <size_t N>
struct alignas(N) Bytes {
  unsigned char b[N];
};

template <typename E, typename Idx>
__global__ void gather_strided(const E* __restrict__ src, E* __restrict__ dst, IndexAxes ax, Strided<1> slice,
                               int64_t S, int64_t total) {
  for (int64_t e = thread_index(); e < total; e += thread_count()) {
    const int64_t i = e / S;
    int64_t off[1];
    offsets_of<Idx>(slice, static_cast<Idx>(e - i * S), off);
    dst[e] = src[gather_base(ax, i) + off[0]];
  }
}

// Contiguous slices of `row_vecs` 16-byte vectors: blocks take rows in grid strides. With
// `direct` set (one indexed axis whose indices are contiguous int32 or int64) the indices are
// read where they are, with no conversion pass.
template <typename I>
__global__ void gather_rows(const char* __restrict__ src, uint4* __restrict__ dst, IndexAxes ax,
                            const I* __restrict__ direct, int64_t rows, int64_t row_vecs, int64_t elem_size) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const int64_t base =
        direct ? common::gather_start(static_cast<int64_t>(direct[i]), ax.dim[0], ax.slice[0]) * ax.stride[0]
               : gather_base(ax, i);
    const uint4* s = reinterpret_cast<const uint4*>(src + base * elem_size);
    uint4* d = dst + i * row_vecs;
    for (int64_t v = threadIdx.x; v < row_vecs; v += blockDim.x) d[v] = s[v];
  }
}

// take_along_axis: output e reads a at the output's other coordinates (offset 0 of the
// layout) and at start(idx[e]) along the axis (offset 1 of the layout is idx's).
template <typename E, typename I, typename Idx>
__global__ void gather_axis(const E* __restrict__ src, E* __restrict__ dst, const I* __restrict__ idx,
                            Strided<2> layout, int64_t dim, int64_t step, int64_t total) {
  for (int64_t e = thread_index(); e < total; e += thread_count()) {
    int64_t off[2];
    offsets_of<Idx>(layout, static_cast<Idx>(e), off);
    dst[e] = src[off[0] + common::gather_start(static_cast<int64_t>(idx[off[1]]), dim, 1) * step];
  }
}

template <typename T>
struct Combine {
  Scatter::ReduceType op;
  __device__ T operator()(T o, T u) const {
    using C = compute_t<T>;
    const C x = to_compute(o), y = to_compute(u);
    switch (op) {
      case Scatter::ReduceType::None: return u;
      case Scatter::ReduceType::Sum:
        if constexpr (std::is_same_v<T, bool>)
          return x || y;
        else
          return from_compute<T>(static_cast<C>(x + y));
      case Scatter::ReduceType::Prod:
        if constexpr (std::is_same_v<T, bool>)
          return x && y;
        else
          return from_compute<T>(static_cast<C>(x * y));
      case Scatter::ReduceType::Max:
        if constexpr (std::is_floating_point_v<C>) {
          if (isnan(y)) return u;
        }
        return x < y ? u : o;
      case Scatter::ReduceType::Min:
        if constexpr (std::is_floating_point_v<C>) {
          if (isnan(y)) return u;
        }
        return y < x ? u : o;
    }
    return u;
  }
};

template <typename T>
__device__ __forceinline__ void combine_at(T* p, T u, Scatter::ReduceType op) {
  using R = Scatter::ReduceType;
  if (op == R::None) {
    *p = u;
    return;
  }
  if (op == R::Sum) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
                  std::is_same_v<T, uint32_t> || std::is_same_v<T, __half> ||
                  std::is_same_v<T, __nv_bfloat16>) {
      atomicAdd(p, u);
      return;
    } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(u));
      return;
    } else if constexpr (is_complex_v<T>) {
      atomicAdd(&p->re, u.re);
      atomicAdd(&p->im, u.im);
      return;
    }
  }
  if (op == R::Max || op == R::Min) {
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>) {
      op == R::Max ? atomicMax(p, u) : atomicMin(p, u);
      return;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      auto* q = reinterpret_cast<long long*>(p);
      op == R::Max ? atomicMax(q, static_cast<long long>(u)) : atomicMin(q, static_cast<long long>(u));
      return;
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      auto* q = reinterpret_cast<unsigned long long*>(p);
      const auto v = static_cast<unsigned long long>(u);
      op == R::Max ? atomicMax(q, v) : atomicMin(q, v);
      return;
    }
  }
  atomic_update(p, [&](T o) { return Combine<T>{op}(o, u); });
}

template <typename T, typename Idx>
__global__ void scatter_kernel(T* __restrict__ out, const T* __restrict__ upd, IndexAxes ax, Strided<2> slice,
                               int64_t S, int64_t total, Scatter::ReduceType op) {
  for (int64_t e = thread_index(); e < total; e += thread_count()) {
    const int64_t i = e / S;
    const int64_t base = scatter_base(ax, i);
    if (base < 0) continue;
    int64_t off[2];
    offsets_of<Idx>(slice, static_cast<Idx>(e - i * S), off);
    combine_at(out + base + off[0], upd[i * S + off[1]], op);
  }
}

template <typename E>
__global__ void masked_fill(E* __restrict__ out, const int64_t* __restrict__ flags,
                            const int64_t* __restrict__ pos, const E* __restrict__ src, int64_t n,
                            int64_t src_n) {
  for (int64_t i = thread_index(); i < n; i += thread_count()) {
    if (flags[i] != 0 && pos[i] < src_n) out[i] = src[pos[i]];
  }
}

// Fills the per-axis part of IndexAxes; the index pointers come later.
IndexAxes index_axes(const std::vector<int>& axes, const Shape& shape, const Shape& slice,
                     const Strides& strides, const char* op) {
  if (axes.size() > static_cast<size_t>(kMaxIndexAxes)) {
    throw std::invalid_argument(std::string("[") + op + "] At most " + std::to_string(kMaxIndexAxes) +
                                " indexed axes are supported on the GPU.");
  }
  IndexAxes ax;
  ax.n = static_cast<int>(axes.size());
  for (size_t k = 0; k < axes.size(); ++k) {
    ax.dim[k] = shape[axes[k]];
    ax.slice[k] = slice[axes[k]];
    ax.stride[k] = strides[axes[k]];
  }
  return ax;
}

Strides row_major(const Shape& shape) {
  Strides st(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * shape[i + 1];
  return st;
}

template <int K>
Strided<K> checked_layout(const HostLayout<K>& l, const char* op) {
  if (l.ndim() > kMaxDims) {
    throw std::invalid_argument(std::string("[") + op + "] Slices with more than " +
                                std::to_string(kMaxDims) +
                                " non-mergeable dimensions are not supported on the GPU.");
  }
  return device_layout(l);
}

template <size_t N, typename I>
void launch_gather_axis(const char* src, char* dst, const I* idx, const HostLayout<2>& layout, int64_t dim,
                        int64_t step, cudaStream_t stream) {
  using E = Bytes<N>;
  for_each_launch(layout, [&](const std::array<int64_t, 2>& base, const Strided<2>& inner, int64_t begin,
                              int64_t count) {
    const E* s = reinterpret_cast<const E*>(src) + base[0];
    E* d = reinterpret_cast<E*>(dst) + begin;
    const unsigned grid = grid_for(count, kBlock);
    if (count <= INT32_MAX) {
      gather_axis<E, I, uint32_t><<<grid, kBlock, 0, stream>>>(s, d, idx + base[1], inner, dim, step, count);
    } else {
      gather_axis<E, I, uint64_t><<<grid, kBlock, 0, stream>>>(s, d, idx + base[1], inner, dim, step, count);
    }
    check_launch("take_along_axis");
  });
}

template <size_t N>
void launch_gather(const char* src, char* dst, const IndexAxes& ax, const Strided<1>& slice, int64_t S,
                   int64_t total, cudaStream_t stream) {
  using E = Bytes<N>;
  const unsigned grid = grid_for(total, kBlock);
  if (total <= INT32_MAX) {
    gather_strided<E, uint32_t><<<grid, kBlock, 0, stream>>>(reinterpret_cast<const E*>(src),
                                                             reinterpret_cast<E*>(dst), ax, slice, S, total);
  } else {
    gather_strided<E, uint64_t><<<grid, kBlock, 0, stream>>>(reinterpret_cast<const E*>(src),
                                                             reinterpret_cast<E*>(dst), ax, slice, S, total);
  }
  check_launch("gather");
}

}  // namespace
}  // namespace cuda

void Gather::eval_gpu(const std::vector<array>& inputs, array& out) {
  using namespace cuda;
  const array& a = inputs[0];
  alloc_output(out);
  if (out.size() == 0) return;
  cudaStream_t stream = stream_of(this->stream());
  IndexAxes ax = index_axes(axes_, a.shape(), slice_sizes_, a.strides(), "Gather");
  const HostLayout<1> slice_layout(slice_sizes_, {a.strides()});
  const Strided<1> slice = checked_layout(slice_layout, "Gather");
  int64_t S = 1;
  for (int32_t n : slice_sizes_) S *= n;
  const int64_t N = static_cast<int64_t>(out.size()) / S;
  const char* src = static_cast<const char*>(a.desc()->data_ptr);
  char* dst = static_cast<char*>(out.desc()->data_ptr);
  const int64_t size = static_cast<int64_t>(a.itemsize());
  const bool contiguous =
      slice_layout.ndim() == 0 || (slice_layout.ndim() == 1 && slice_layout.strides[0][0] == 1);
  bool aligned = contiguous && (S * size) % 16 == 0 && is_aligned(src, 16);
  for (int k = 0; k < ax.n && aligned; ++k) aligned = (ax.stride[k] * size) % 16 == 0;
  const array* direct = nullptr;
  if (aligned && axes_.size() == 1) {
    const array& idx = inputs[1];
    const bool dense = idx.flags().row_contiguous && idx.data_size() == idx.size();
    if (dense && (idx.dtype() == int32 || idx.dtype() == int64)) direct = &idx;
  }
  if (!direct) {
    ScratchPlan plan;
    std::vector<size_t> offs;
    for (size_t k = 0; k < axes_.size(); ++k) {
      offs.push_back(plan.reserve(static_cast<size_t>(N) * sizeof(int64_t)));
    }
    plan.fetch(this->stream());
    load_indices(inputs, 1, axes_.size(), plan, offs, stream);
    for (size_t k = 0; k < axes_.size(); ++k) ax.idx[k] = plan.at<int64_t>(offs[k]);
  }
  if (aligned) {
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(N, INT32_MAX));
    const int64_t row_vecs = S * size / 16;
    const int block =
        static_cast<int>(std::min<int64_t>(kBlock, std::max<int64_t>(32, (row_vecs + 31) / 32 * 32)));
    uint4* d = reinterpret_cast<uint4*>(dst);
    if (direct && direct->dtype() == int32) {
      const auto* di = static_cast<const int32_t*>(direct->desc()->data_ptr);
      gather_rows<int32_t><<<grid, block, 0, stream>>>(src, d, ax, di, N, row_vecs, size);
    } else {
      const int64_t* di = direct ? static_cast<const int64_t*>(direct->desc()->data_ptr) : nullptr;
      gather_rows<int64_t><<<grid, block, 0, stream>>>(src, d, ax, di, N, row_vecs, size);
    }
    check_launch("gather");
    return;
  }
  switch (size) {
    case 1: launch_gather<1>(src, dst, ax, slice, S, N * S, stream); break;
    case 2: launch_gather<2>(src, dst, ax, slice, S, N * S, stream); break;
    case 4: launch_gather<4>(src, dst, ax, slice, S, N * S, stream); break;
    default: launch_gather<8>(src, dst, ax, slice, S, N * S, stream); break;
  }
}

// int32 and int64 indices are read where they are, others converted to contiguous int64 first.
void GatherAxis::eval_gpu(const std::vector<array>& inputs, array& out) {
  using namespace cuda;
  const array &a = inputs[0], &idx = inputs[1];
  alloc_output(out);
  if (out.size() == 0) return;
  cudaStream_t stream = stream_of(this->stream());
  Strides others = a.strides();
  const int64_t step = others[axis_], dim = a.shape()[axis_];
  others[axis_] = 0;
  const void* ip = idx.desc()->data_ptr;
  Strides idx_strides = idx.strides();
  const bool direct = idx.dtype() == int32 || idx.dtype() == int64;
  if (!direct) {
    int64_t* converted = static_cast<int64_t*>(scratch(this->stream(), idx.size() * sizeof(int64_t)));
    copy_strided(ip, idx.dtype(), idx.shape(), idx.strides(), converted, int64, stream);
    ip = converted;
    idx_strides = row_major(idx.shape());
  }
  const HostLayout<2> layout(out.shape(), {others, idx_strides});
  const char* src = static_cast<const char*>(a.desc()->data_ptr);
  char* dst = static_cast<char*>(out.desc()->data_ptr);
  auto launch = [&](auto* ix) {
    switch (a.itemsize()) {
      case 1: launch_gather_axis<1>(src, dst, ix, layout, dim, step, stream); break;
      case 2: launch_gather_axis<2>(src, dst, ix, layout, dim, step, stream); break;
      case 4: launch_gather_axis<4>(src, dst, ix, layout, dim, step, stream); break;
      default: launch_gather_axis<8>(src, dst, ix, layout, dim, step, stream); break;
    }
  };
  if (idx.dtype() == int32) {
    launch(static_cast<const int32_t*>(ip));
  } else {
    launch(static_cast<const int64_t*>(ip));
  }
}

void Scatter::eval_gpu(const std::vector<array>& inputs, array& out) {
  using namespace cuda;
  const array& a = inputs[0];
  const array& upd = inputs.back();
  if (!donate(inputs, 0, out)) copy_to_contiguous(a, out, this->stream());
  if (out.size() == 0 || upd.size() == 0) return;
  cudaStream_t stream = stream_of(this->stream());
  const size_t idx_nd = upd.ndim() - a.ndim();
  const Shape slice_shape(upd.shape().begin() + idx_nd, upd.shape().end());
  IndexAxes ax = index_axes(axes_, a.shape(), slice_shape, out.strides(), "Scatter");
  int64_t S = 1;
  for (int32_t n : slice_shape) S *= n;
  const int64_t total = static_cast<int64_t>(upd.size());
  const int64_t N = total / S;
  const HostLayout<2> layout(slice_shape, {out.strides(), row_major(slice_shape)});
  const Strided<2> slice = checked_layout(layout, "Scatter");
  ScratchPlan plan;
  std::vector<size_t> offs;
  for (size_t k = 0; k < axes_.size(); ++k)
    offs.push_back(plan.reserve(static_cast<size_t>(N) * sizeof(int64_t)));
  const bool copy_updates = !upd.flags().row_contiguous;
  const size_t upd_off = copy_updates ? plan.reserve(upd.nbytes()) : 0;
  plan.fetch(this->stream());
  load_indices(inputs, 1, axes_.size(), plan, offs, stream);
  for (size_t k = 0; k < axes_.size(); ++k) ax.idx[k] = plan.at<int64_t>(offs[k]);
  const void* upd_ptr = upd.desc()->data_ptr;
  if (copy_updates) {
    copy_strided(upd_ptr, upd.dtype(), upd.shape(), upd.strides(), plan.at<char>(upd_off), upd.dtype(),
                 stream);
    upd_ptr = plan.at<char>(upd_off);
  }
  const ReduceType op = reduce_;
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out.desc()->data_ptr);
    const T* u = static_cast<const T*>(upd_ptr);
    const unsigned grid = grid_for(total, kBlock);
    if (total <= INT32_MAX) {
      scatter_kernel<T, uint32_t><<<grid, kBlock, 0, stream>>>(o, u, ax, slice, S, total, op);
    } else {
      scatter_kernel<T, uint64_t><<<grid, kBlock, 0, stream>>>(o, u, ax, slice, S, total, op);
    }
    check_launch("scatter");
  });
}

void MaskedScatter::eval_gpu(const std::vector<array>& inputs, array& out) {
  using namespace cuda;
  const array& a = inputs[0];
  const array& mask = inputs[1];
  const array& src = inputs[2];
  if (!donate(inputs, 0, out)) copy_to_contiguous(a, out, this->stream());
  if (out.size() == 0 || src.size() == 0) return;
  cudaStream_t stream = stream_of(this->stream());
  const int64_t n = static_cast<int64_t>(out.size());
  size_t scan_bytes = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<const int64_t*>(nullptr),
                                      static_cast<int64_t*>(nullptr), n, stream),
        "masked_scatter scan");
  ScratchPlan plan;
  const size_t flags_off = plan.reserve(static_cast<size_t>(n) * sizeof(int64_t));
  const size_t pos_off = plan.reserve(static_cast<size_t>(n) * sizeof(int64_t));
  const size_t scan_off = plan.reserve(scan_bytes);
  const bool copy_src = !src.flags().row_contiguous;
  const size_t src_off = copy_src ? plan.reserve(src.nbytes()) : 0;
  plan.fetch(this->stream());
  int64_t* flags = plan.at<int64_t>(flags_off);
  int64_t* pos = plan.at<int64_t>(pos_off);
  copy_strided(mask.desc()->data_ptr, bool_, mask.shape(), mask.strides(), flags, int64, stream);
  check(cub::DeviceScan::ExclusiveSum(plan.at<void>(scan_off), scan_bytes, flags, pos, n, stream),
        "masked_scatter scan");
  const void* src_ptr = src.desc()->data_ptr;
  if (copy_src) {
    copy_strided(src_ptr, src.dtype(), src.shape(), src.strides(), plan.at<char>(src_off), src.dtype(),
                 stream);
    src_ptr = plan.at<char>(src_off);
  }
  const int64_t src_n = static_cast<int64_t>(src.size());
  const unsigned grid = grid_for(n, kBlock);
  auto launch = [&](auto tag) {
    using E = typename decltype(tag)::type;
    masked_fill<E><<<grid, kBlock, 0, stream>>>(static_cast<E*>(out.desc()->data_ptr), flags, pos,
                                                static_cast<const E*>(src_ptr), n, src_n);
  };
  switch (out.itemsize()) {
    case 1: launch(TypeTag<Bytes<1>>{}); break;
    case 2: launch(TypeTag<Bytes<2>>{}); break;
    case 4: launch(TypeTag<Bytes<4>>{}); break;
    default: launch(TypeTag<Bytes<8>>{}); break;
  }
  check_launch("masked_scatter");
}

}  // namespace braid
