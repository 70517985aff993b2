// GatherMM and SegmentedMM on the GPU. The indices stay on the device: a kernel reads them and
// writes one pointer per product for A, B and the output, and one cuBLASLt call in
// pointer-array batch mode runs every product, reading the gathered matrices in place (no
// gathered copy of the weights, no host synchronization). Where cuBLASLt has no
// pointer-array algorithm for a problem, and for SegmentedMM, whose products differ in K, a
// tiled kernel runs the products from the same description.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "backend/common/matmul.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/kernel_utils.cuh"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {
namespace {

constexpr int kTile = 16;
constexpr int kPointerBlock = 256;
constexpr unsigned kMaxGridYZ = 65535;

// Element strides of a matrix's rows and columns.
struct MatrixStrides {
  int64_t row, col;
};

MatrixStrides strides_of(const common::MatrixLayout& l) {
  return l.trans ? MatrixStrides{1, l.ld} : MatrixStrides{l.ld, 1};
}

// Product z of a gather: its matrices from the pointer arrays, over all of K.
template <typename T>
struct PointerBatch {
  const void* const* a;
  const void* const* b;
  void* const* d;
  int64_t k;
  __device__ void get(int64_t z, const T*& pa, const T*& pb, T*& pd, int64_t& k0, int64_t& k1) const {
    pa = static_cast<const T*>(a[z]);
    pb = static_cast<const T*>(b[z]);
    pd = static_cast<T*>(d[z]);
    k0 = 0;
    k1 = k;
  }
};

// Product z of a segmented product: the one A and B over segment z of K.
template <typename T>
struct SegmentBatch {
  const T* a;
  const T* b;
  T* d;
  const uint32_t* segments;  // row-contiguous [count, 2]
  int64_t k, mn;
  __device__ void get(int64_t z, const T*& pa, const T*& pb, T*& pd, int64_t& k0, int64_t& k1) const {
    const common::Segment s = common::clamp_segment(segments[2 * z], segments[2 * z + 1], k);
    pa = a;
    pb = b;
    pd = d + z * mn;
    k0 = s.start;
    k1 = s.start + s.size;
  }
};

// out_z = A_z[:, k0:k1] B_z[k0:k1, :] for each product z: one kTile x kTile output tile per
// block and step (grid strides over tiles and products), accumulated in float (double for
// float64) through shared-memory tiles of A and B.
template <typename T, typename Batch>
__global__ void tiled_gemm(Batch batch, int64_t count, int64_t m, int64_t n, MatrixStrides sa,
                           MatrixStrides sb) {
  using Acc = compute_t<T>;
  __shared__ Acc tile_a[kTile][kTile + 1];
  __shared__ Acc tile_b[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
  for (int64_t z = blockIdx.z; z < count; z += gridDim.z) {
    const T* pa;
    const T* pb;
    T* pd;
    int64_t k0, k1;
    batch.get(z, pa, pb, pd, k0, k1);
    for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
      for (int64_t tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
        const int64_t row = tm * kTile + ty, col = tn * kTile + tx;
        Acc acc = Acc(0);
        for (int64_t kk = k0; kk < k1; kk += kTile) {
          const int64_t ka = kk + tx, kb = kk + ty;
          tile_a[ty][tx] = row < m && ka < k1 ? to_compute(pa[row * sa.row + ka * sa.col]) : Acc(0);
          tile_b[ty][tx] = kb < k1 && col < n ? to_compute(pb[kb * sb.row + col * sb.col]) : Acc(0);
          __syncthreads();
#pragma unroll
          for (int i = 0; i < kTile; ++i) acc += tile_a[ty][i] * tile_b[i][tx];
          __syncthreads();
        }
        if (row < m && col < n) pd[row * n + col] = from_compute<T>(acc);
      }
    }
  }
}

template <typename T, typename Batch>
void launch_tiled(const Batch& batch, int64_t count, int64_t m, int64_t n, MatrixStrides sa, MatrixStrides sb,
                  cudaStream_t stream) {
  const int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_n, INT32_MAX)),
                  static_cast<unsigned>(std::min<int64_t>(tiles_m, kMaxGridYZ)),
                  static_cast<unsigned>(std::min<int64_t>(count, kMaxGridYZ)));
  tiled_gemm<T><<<grid, dim3(kTile, kTile), 0, stream>>>(batch, count, m, n, sa, sb);
  check_launch("tiled_gemm");
}

// Calls fn(TypeTag<T>{}) for the real floating dtypes (the ops reject the others).
template <typename F>
void for_real_floats(Dtype d, const char* op, F&& fn) {
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      fn(tag);
    } else {
      throw std::invalid_argument(std::string("[") + op + "] Unsupported dtype " + dtype_name(d) + ".");
    }
  });
}

// The matrices a gather picks from: `count` of them, `stride` elements apart.
struct GatherSource {
  const char* data;
  int64_t stride_bytes;
  int64_t count;
};

GatherSource gather_source(const array& x, const GemmOperand& op) {
  const Shape batch(x.shape().begin(), x.shape().end() - 2);
  const common::Layout<1> l(batch, {op.batch_strides});  // at most one dimension (a dense plan)
  int64_t count = 1;
  for (int32_t d : batch) count *= d;
  return {op.data, (l.ndim() == 0 ? 0 : l.strides[0][0]) * static_cast<int64_t>(x.itemsize()), count};
}

// Pointer z = begin + i for the i-th position of the index layout.
__global__ void gather_pointers(Strided<2> layout, const uint32_t* lhs, const uint32_t* rhs, int64_t base_l,
                                int64_t base_r, int64_t begin, int64_t count, GatherSource a, GatherSource b,
                                char* d, int64_t d_stride_bytes, const void** pa, const void** pb,
                                void** pd) {
  for (int64_t i = thread_index(); i < count; i += thread_count()) {
    int64_t off[2];
    offsets_of<int64_t>(layout, i, off);
    const int64_t z = begin + i;
    pa[z] = a.data + common::clamp_matrix_index(lhs[base_l + off[0]], a.count) * a.stride_bytes;
    pb[z] = b.data + common::clamp_matrix_index(rhs[base_r + off[1]], b.count) * b.stride_bytes;
    pd[z] = d + z * d_stride_bytes;
  }
}

}  // namespace
}  // namespace cuda

void GatherMM::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t stream = cuda::stream_of(this->stream());
  const array& a = inputs[0];
  const array& b = inputs[1];
  const array& lhs = inputs[2];
  const array& rhs = inputs[3];
  const int nd = static_cast<int>(out.ndim());
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[a.ndim() - 1];
  if (k == 0) {
    cuda::check(cudaMemsetAsync(out.desc()->data_ptr, 0, out.nbytes(), stream), "[GatherMM] cudaMemsetAsync");
    return;
  }
  const int64_t count = static_cast<int64_t>(out.size()) / (m * n);

  const cuda::OperandPlan plan_a = cuda::plan_operand(a, true), plan_b = cuda::plan_operand(b, true);
  cuda::ScratchPlan scratch;
  const size_t at_a = scratch.reserve(plan_a.bytes), at_b = scratch.reserve(plan_b.bytes);
  const size_t at_ptrs = scratch.reserve(3 * static_cast<size_t>(count) * sizeof(void*));
  scratch.fetch(this->stream());
  const cuda::GemmOperand pa = cuda::prepare_operand(a, plan_a, scratch.at<char>(at_a), stream);
  const cuda::GemmOperand pb = cuda::prepare_operand(b, plan_b, scratch.at<char>(at_b), stream);
  const cuda::GatherSource src_a = cuda::gather_source(a, pa), src_b = cuda::gather_source(b, pb);
  const void** ptr_a = scratch.at<const void*>(at_ptrs);
  const void** ptr_b = ptr_a + count;
  void** ptr_d = scratch.at<void*>(at_ptrs) + 2 * count;

  const size_t item = out.itemsize();
  char* d = static_cast<char*>(out.desc()->data_ptr);
  const Shape batch(out.shape().begin(), out.shape().end() - 2);
  const cuda::HostLayout<2> layout(batch, {lhs.strides(), rhs.strides()});
  const auto* lhs_data = static_cast<const uint32_t*>(lhs.desc()->data_ptr);
  const auto* rhs_data = static_cast<const uint32_t*>(rhs.desc()->data_ptr);
  cuda::for_each_launch(layout, [&](const std::array<int64_t, 2>& base, const cuda::Strided<2>& inner,
                                    int64_t begin, int64_t n_items) {
    cuda::gather_pointers<<<cuda::grid_for(n_items, cuda::kPointerBlock), cuda::kPointerBlock, 0, stream>>>(
        inner, lhs_data, rhs_data, base[0], base[1], begin, n_items, src_a, src_b, d,
        m * n * static_cast<int64_t>(item), ptr_a, ptr_b, ptr_d);
    cuda::check_launch("gather_pointers");
  });

  void* workspace = nullptr;
  cuda::LtProblem p = cuda::lt_problem(out.dtype(), m, n, k, pa.layout, pb.layout, this->stream(), &workspace);
  p.pointer_array = true;
  p.align_a = cuda::alignment(src_a.data, p.a.ld, src_a.stride_bytes / static_cast<int64_t>(item), item);
  p.align_b = cuda::alignment(src_b.data, p.b.ld, src_b.stride_bytes / static_cast<int64_t>(item), item);
  p.align_d = cuda::alignment(d, n, m * n, item);
  constexpr int64_t kMaxBatch = INT32_MAX;
  bool ran = true;
  for (int64_t z0 = 0; z0 < count && ran; z0 += kMaxBatch) {
    p.batch = std::min(kMaxBatch, count - z0);
    ran = cuda::run_lt(p, ptr_a + z0, ptr_b + z0, ptr_d + z0, 1.0, 0.0, workspace, stream);
  }
  if (ran) return;
  // No pointer-array algorithm (it is the same for every chunk, so none ran): the tiled kernel.
  cuda::for_real_floats(out.dtype(), "gather_mm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::launch_tiled<T>(cuda::PointerBatch<T>{ptr_a, ptr_b, ptr_d, k}, count, m, n,
                          cuda::strides_of(pa.layout), cuda::strides_of(pb.layout), stream);
  });
}

void SegmentedMM::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t stream = cuda::stream_of(this->stream());
  const array& a = inputs[0];
  const array& b = inputs[1];
  const array& segments = inputs[2];
  const int64_t m = a.shape()[0], n = b.shape()[1], k = a.shape()[1];
  const int64_t count = static_cast<int64_t>(out.size()) / (m * n);
  if (k == 0) {
    cuda::check(cudaMemsetAsync(out.desc()->data_ptr, 0, out.nbytes(), stream),
                "[SegmentedMM] cudaMemsetAsync");
    return;
  }
  const cuda::OperandPlan plan_a = cuda::plan_operand(a), plan_b = cuda::plan_operand(b);
  cuda::ScratchPlan scratch;
  const size_t at_a = scratch.reserve(plan_a.bytes), at_b = scratch.reserve(plan_b.bytes);
  const bool copy_segments = !segments.flags().row_contiguous;
  const size_t at_s = scratch.reserve(copy_segments ? segments.nbytes() : 0);
  scratch.fetch(this->stream());
  const cuda::GemmOperand pa = cuda::prepare_operand(a, plan_a, scratch.at<char>(at_a), stream);
  const cuda::GemmOperand pb = cuda::prepare_operand(b, plan_b, scratch.at<char>(at_b), stream);
  const uint32_t* seg = static_cast<const uint32_t*>(segments.desc()->data_ptr);
  if (copy_segments) {
    uint32_t* dst = scratch.at<uint32_t>(at_s);
    cuda::copy_strided(seg, uint32, segments.shape(), segments.strides(), dst, uint32, stream);
    seg = dst;
  }
  cuda::for_real_floats(out.dtype(), "segmented_mm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const cuda::SegmentBatch<T> batch{reinterpret_cast<const T*>(pa.data),
                                      reinterpret_cast<const T*>(pb.data),
                                      static_cast<T*>(out.desc()->data_ptr),
                                      seg,
                                      k,
                                      m * n};
    cuda::launch_tiled<T>(batch, count, m, n, cuda::strides_of(pa.layout), cuda::strides_of(pb.layout),
                          stream);
  });
}

}  // namespace braid
