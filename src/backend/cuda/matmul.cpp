// Matmul::eval_gpu through cuBLASLt. Row-major C = A B is computed as the column-major
// product C^T = B^T A^T, so row-major operands need no transpose and column-major ones (a
// transposed view) pass as transposed. Any other operand layout is copied to row-major first,
// with broadcast batch dimensions squeezed so a shared operand is copied once. Batches use
// cuBLASLt's strided batch (stride 0 for a broadcast operand); batch dimensions that do not
// collapse to one stride become a loop of calls. Algorithms come from cuBLASLt's heuristic,
// cached per problem. float32 is exact (no TF32) unless BRAID_ALLOW_TF32=1 is set; the 16-bit
// floats accumulate in float.
#include <cublasLt.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/copy.h"
#include "backend/cuda/cuda_utils.h"
#include "backend/cuda/gemm.h"
#include "primitives/primitives.h"

namespace braid {
namespace {

// How one operand's matrices are stored: row-major (trans = false) or column-major (trans =
// true), with leading dimension `ld`, at `data` plus a batch offset.
struct Operand {
  const char* data = nullptr;
  bool trans = false;
  int64_t ld = 1;
  Strides batch_strides;  // one per batch dimension of the output, in elements
};

// Whether a [rows, cols] matrix with element strides (sr, sc) is row- or column-major.
bool lt_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool& trans, int64_t& ld) {
  if ((sc == 1 || cols == 1) && (rows == 1 || sr >= cols)) {
    trans = false;
    ld = std::max<int64_t>(1, rows == 1 ? cols : sr);
    return true;
  }
  if ((sr == 1 || rows == 1) && (cols == 1 || sc >= rows)) {
    trans = true;
    ld = std::max<int64_t>(1, cols == 1 ? rows : sc);
    return true;
  }
  return false;
}

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The operand as it stands, or (when its matrices are neither row- nor column-major) the
// shape of the row-major copy it needs, returned in `copy_shape`.
bool needs_copy(const array& in, Shape& copy_shape) {
  const int nd = static_cast<int>(in.ndim());
  bool trans;
  int64_t ld;
  if (lt_layout(in.shape()[nd - 2], in.shape()[nd - 1], in.strides()[nd - 2], in.strides()[nd - 1], trans, ld)) {
    return false;
  }
  copy_shape = in.shape();
  for (int i = 0; i < nd - 2; ++i) {
    if (in.strides()[i] == 0) copy_shape[i] = 1;
  }
  return true;
}

size_t copy_bytes(const Shape& shape, const array& in) {
  size_t n = 1;
  for (int32_t d : shape) n *= static_cast<size_t>(d);
  return n * in.itemsize();
}

Operand prepare(const array& in, bool copy, const Shape& copy_shape, char* buffer, cudaStream_t stream) {
  Operand op;
  const int nd = static_cast<int>(in.ndim());
  if (!copy) {
    lt_layout(in.shape()[nd - 2], in.shape()[nd - 1], in.strides()[nd - 2], in.strides()[nd - 1], op.trans, op.ld);
    op.data = static_cast<const char*>(in.desc()->data_ptr);
    op.batch_strides = Strides(in.strides().begin(), in.strides().end() - 2);
    return op;
  }
  cuda::copy_strided(in.desc()->data_ptr, in.dtype(), copy_shape, in.strides(), buffer, in.dtype(), stream);
  op.data = buffer;
  op.trans = false;
  op.ld = std::max<int64_t>(1, in.shape()[nd - 1]);
  int64_t stride = static_cast<int64_t>(in.shape()[nd - 2]) * in.shape()[nd - 1];
  op.batch_strides = Strides(nd - 2, 0);
  for (int i = nd - 3; i >= 0; --i) {
    if (copy_shape[i] != 1) op.batch_strides[i] = stride;
    stride *= copy_shape[i];
  }
  return op;
}

// A batch dimension: its size and the element strides of A, B and the output along it.
struct BatchDim {
  int64_t n;
  std::array<int64_t, 3> stride;
};

std::vector<BatchDim> collapse_batch(const Shape& out_shape, const Operand& a, const Operand& b,
                                     const Strides& out_strides) {
  std::vector<BatchDim> dims;
  for (size_t i = 0; i + 2 < out_shape.size(); ++i) {
    const int64_t n = out_shape[i];
    if (n == 1) continue;
    const std::array<int64_t, 3> s = {a.batch_strides[i], b.batch_strides[i], out_strides[i]};
    if (!dims.empty()) {
      BatchDim& prev = dims.back();
      bool merge = true;
      for (int k = 0; k < 3; ++k) merge = merge && prev.stride[k] == s[k] * n;
      if (merge) {
        prev.n *= n;
        prev.stride = s;
        continue;
      }
    }
    dims.push_back({n, s});
  }
  return dims;
}

cudaDataType_t lt_type(Dtype d) {
  if (d == float16) return CUDA_R_16F;
  if (d == bfloat16) return CUDA_R_16BF;
  return CUDA_R_32F;
}

// The largest power of two (up to 256) dividing the address and the byte strides.
uint32_t alignment(const void* p, int64_t ld, int64_t batch_stride, size_t itemsize) {
  const uint64_t bits = reinterpret_cast<uintptr_t>(p) | static_cast<uint64_t>(ld) * itemsize |
                        static_cast<uint64_t>(batch_stride) * itemsize;
  uint32_t a = 256;
  while (a > 1 && bits % a != 0) a /= 2;
  return a;
}

bool tf32_allowed() {
  const char* v = std::getenv("BRAID_ALLOW_TF32");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// One cuBLASLt product: D[N x M] (column-major) = op(B) op(A), `batch` times.
struct Problem {
  cudaDataType_t type;
  cublasComputeType_t compute;
  int64_t m, n, k;
  bool trans_a, trans_b;
  int64_t lda, ldb, ldd;
  int64_t batch, stride_a, stride_b, stride_d;
  uint32_t align_a, align_b, align_d;
  size_t workspace;

  std::array<int64_t, 18> key() const {
    return {static_cast<int64_t>(type), static_cast<int64_t>(compute), m, n, k, trans_a, trans_b, lda, ldb, ldd,
            batch, stride_a, stride_b, stride_d, align_a, align_b, align_d, static_cast<int64_t>(workspace)};
  }
};

// Descriptors released on every path.
struct MatmulDesc {
  cublasLtMatmulDesc_t desc = nullptr;
  ~MatmulDesc() {
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};
struct LayoutDesc {
  cublasLtMatrixLayout_t desc = nullptr;
  ~LayoutDesc() {
    if (desc) cublasLtMatrixLayoutDestroy(desc);
  }
};
struct PreferenceDesc {
  cublasLtMatmulPreference_t desc = nullptr;
  ~PreferenceDesc() {
    if (desc) cublasLtMatmulPreferenceDestroy(desc);
  }
};

void make_layout(LayoutDesc& l, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                 int64_t stride) {
  cuda::check(cublasLtMatrixLayoutCreate(&l.desc, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
              "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const int32_t count = cuda::checked_int32(batch, "matmul", "batch count");
    cuda::check(cublasLtMatrixLayoutSetAttribute(l.desc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                "cublasLtMatrixLayoutSetAttribute");
    cuda::check(cublasLtMatrixLayoutSetAttribute(l.desc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                 sizeof(stride)),
                "cublasLtMatrixLayoutSetAttribute");
  }
}

class AlgoCache {
 public:
  static AlgoCache& instance() {
    static AlgoCache* cache = new AlgoCache();  // deliberately leaked: no destruction at exit
    return *cache;
  }
  bool find(const std::array<int64_t, 18>& key, cublasLtMatmulAlgo_t& algo) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = algos_.find(key);
    if (it == algos_.end()) return false;
    algo = it->second;
    return true;
  }
  void insert(const std::array<int64_t, 18>& key, const cublasLtMatmulAlgo_t& algo) {
    std::lock_guard<std::mutex> lock(mu_);
    algos_.emplace(key, algo);
  }

 private:
  std::mutex mu_;
  std::map<std::array<int64_t, 18>, cublasLtMatmulAlgo_t> algos_;  // guarded by mu_
};

// D = op(B) op(A) in cuBLASLt's column-major terms: "A" is our B, "B" is our A.
void run_lt(const Problem& p, const void* a, const void* b, void* d, void* workspace, cudaStream_t stream,
            const char* op_name) {
  MatmulDesc op;
  cuda::check(cublasLtMatmulDescCreate(&op.desc, p.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  cuda::check(cublasLtMatmulDescSetAttribute(op.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
              "cublasLtMatmulDescSetAttribute");
  cuda::check(cublasLtMatmulDescSetAttribute(op.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
              "cublasLtMatmulDescSetAttribute");
  LayoutDesc la, lb, ld;
  // Our B is [K, N]: stored row-major it is the column-major [N, K]; column-major, [K, N].
  make_layout(la, p.type, p.trans_b ? p.k : p.n, p.trans_b ? p.n : p.k, p.ldb, p.batch, p.stride_b);
  // Our A is [M, K]: row-major it is the column-major [K, M]; column-major, [M, K].
  make_layout(lb, p.type, p.trans_a ? p.m : p.k, p.trans_a ? p.k : p.m, p.lda, p.batch, p.stride_a);
  make_layout(ld, p.type, p.n, p.m, p.ldd, p.batch, p.stride_d);

  cublasLtMatmulAlgo_t algo;
  const auto key = p.key();
  if (!AlgoCache::instance().find(key, algo)) {
    PreferenceDesc pref;
    cuda::check(cublasLtMatmulPreferenceCreate(&pref.desc), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = p.workspace;
    cuda::check(cublasLtMatmulPreferenceSetAttribute(pref.desc, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                     sizeof(ws)),
                "cublasLtMatmulPreferenceSetAttribute");
    // cuBLASLt's "A" is our B and its "B" is our A.
    const std::array<std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t>, 4> aligns = {
        {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.align_b},
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.align_a},
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.align_d},
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.align_d}}};
    for (const auto& [attr, value] : aligns) {
      cuda::check(cublasLtMatmulPreferenceSetAttribute(pref.desc, attr, &value, sizeof(value)),
                  "cublasLtMatmulPreferenceSetAttribute");
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cuda::check(cublasLtMatmulAlgoGetHeuristic(cuda::lt_handle(), op.desc, la.desc, lb.desc, ld.desc, ld.desc,
                                               pref.desc, 1, &result, &found),
                "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) {
      throw std::runtime_error("[" + std::string(op_name) + "] cuBLASLt has no algorithm for a " +
                               std::to_string(p.m) + "x" +
                               std::to_string(p.k) + " by " + std::to_string(p.k) + "x" + std::to_string(p.n) +
                               " product.");
    }
    algo = result.algo;
    AlgoCache::instance().insert(key, algo);
  }
  const float alpha = 1.0f, beta = 0.0f;
  cuda::check(cublasLtMatmul(cuda::lt_handle(), op.desc, &alpha, b, la.desc, a, lb.desc, &beta, d, ld.desc, d,
                             ld.desc, &algo, workspace, p.workspace, stream),
              "cublasLtMatmul");
}

}  // namespace

void cuda::warm_up_matmul() noexcept {
  constexpr int64_t kN = 256;
  constexpr size_t kMatrix = kN * kN * sizeof(float);
  constexpr size_t kWorkspace = size_t{32} << 20;  // as lt_workspace's
  struct DeviceBuffer {
    void* ptr = nullptr;
    ~DeviceBuffer() {
      if (ptr) cudaFree(ptr);
    }
  };
  struct TempStream {
    cudaStream_t stream = nullptr;
    ~TempStream() {
      if (stream) {
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
      }
    }
  };
  try {
    DeviceBuffer operands, workspace;
    TempStream s;  // destroyed (after its work) before the buffers are freed
    check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaMalloc(&operands.ptr, 6 * kMatrix), "cudaMalloc");
    check(cudaMalloc(&workspace.ptr, kWorkspace), "cudaMalloc");
    check(cudaMemsetAsync(operands.ptr, 0, 6 * kMatrix, s.stream), "cudaMemsetAsync");
    char* base = static_cast<char*>(operands.ptr);
    const std::array<std::pair<cudaDataType_t, cublasComputeType_t>, 4> kinds = {
        {{CUDA_R_32F, CUBLAS_COMPUTE_32F},
         {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
         {CUDA_R_16F, CUBLAS_COMPUTE_32F},
         {CUDA_R_16BF, CUBLAS_COMPUTE_32F}}};
    for (const auto& [type, compute] : kinds) {
      try {
        for (const bool trans : {false, true}) {
          for (const int64_t batch : {1, 2}) {
            Problem p{};
            p.type = type;
            p.compute = compute;
            p.m = p.n = p.k = p.lda = p.ldb = p.ldd = kN;
            p.trans_a = p.trans_b = trans;
            p.batch = batch;
            p.stride_a = p.stride_b = p.stride_d = kN * kN;
            p.align_a = p.align_b = p.align_d = 256;
            p.workspace = kWorkspace;
            run_lt(p, base, base + 2 * kMatrix, base + 4 * kMatrix, workspace.ptr, s.stream, "Matmul");
          }
        }
      } catch (...) {
        // A type this device cannot multiply: the real product reports it.
      }
    }
  } catch (...) {
    // No memory for the warm-up: cuBLASLt initializes at the first product instead.
  }
}

void cuda::gemm(Dtype dtype, int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b, void* d,
                int64_t ldd, int64_t batch_stride_d, int64_t batch, const Stream& s, const char* op) {
  const size_t item = size_of(dtype);
  Problem p{};
  p.type = lt_type(dtype);
  p.compute = dtype == float32 && tf32_allowed() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = a.trans;
  p.trans_b = b.trans;
  p.lda = a.ld;
  p.ldb = b.ld;
  p.ldd = ldd;
  p.batch = batch;
  p.stride_a = a.batch_stride;
  p.stride_b = b.batch_stride;
  p.stride_d = batch_stride_d;
  p.align_a = alignment(a.data, p.lda, batch > 1 ? p.stride_a : 0, item);
  p.align_b = alignment(b.data, p.ldb, batch > 1 ? p.stride_b : 0, item);
  p.align_d = alignment(d, p.ldd, batch > 1 ? p.stride_d : 0, item);
  void* workspace = lt_workspace(s, &p.workspace);
  run_lt(p, a.data, b.data, d, workspace, stream_of(s), op);
}

void Matmul::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t stream = cuda::stream_of(this->stream());
  const array& a = inputs[0];
  const array& b = inputs[1];
  const int nd = static_cast<int>(out.ndim());
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  if (k == 0) {
    cuda::check(cudaMemsetAsync(out.desc()->data_ptr, 0, out.nbytes(), stream), "[Matmul] cudaMemsetAsync");
    return;
  }

  Shape shape_a, shape_b;
  const bool copy_a = needs_copy(a, shape_a), copy_b = needs_copy(b, shape_b);
  const size_t bytes_a = copy_a ? round_up(copy_bytes(shape_a, a)) : 0;
  const size_t bytes_b = copy_b ? round_up(copy_bytes(shape_b, b)) : 0;
  char* tmp = bytes_a + bytes_b > 0 ? static_cast<char*>(cuda::scratch(this->stream(), bytes_a + bytes_b)) : nullptr;
  const Operand pa = prepare(a, copy_a, shape_a, tmp, stream);
  const Operand pb = prepare(b, copy_b, shape_b, copy_b ? tmp + bytes_a : nullptr, stream);

  // The innermost collapsed batch dimension goes to cuBLASLt; any others are looped here.
  const std::vector<BatchDim> dims = collapse_batch(out.shape(), pa, pb, out.strides());
  const BatchDim inner = dims.empty() ? BatchDim{1, {0, 0, m * n}} : dims.back();
  const int outer_dims = std::max(0, static_cast<int>(dims.size()) - 1);
  std::vector<int64_t> idx(static_cast<size_t>(outer_dims), 0);
  std::array<int64_t, 3> base{};
  const int64_t item = static_cast<int64_t>(out.itemsize());
  char* d = static_cast<char*>(out.desc()->data_ptr);
  constexpr int64_t kMaxBatch = INT32_MAX;
  while (true) {
    for (int64_t b0 = 0; b0 < inner.n; b0 += kMaxBatch) {
      const cuda::GemmOperand ga{pa.data + (base[0] + b0 * inner.stride[0]) * item, pa.trans, pa.ld, inner.stride[0]};
      const cuda::GemmOperand gb{pb.data + (base[1] + b0 * inner.stride[1]) * item, pb.trans, pb.ld, inner.stride[1]};
      cuda::gemm(out.dtype(), m, n, k, ga, gb, d + (base[2] + b0 * inner.stride[2]) * item, n, inner.stride[2],
                 std::min(kMaxBatch, inner.n - b0), this->stream(), "Matmul");
    }
    int i = outer_dims - 1;
    for (; i >= 0; --i) {
      for (int s = 0; s < 3; ++s) base[s] += dims[i].stride[s];
      if (++idx[i] < dims[i].n) break;
      for (int s = 0; s < 3; ++s) base[s] -= dims[i].stride[s] * dims[i].n;
      idx[i] = 0;
    }
    if (i < 0) break;
  }
}

}  // namespace braid
