// The CUDA backend's GEMM machinery (gemm.h) and the products that are one strided-batch
// cuBLASLt call per collapsed batch: Matmul and AddMM (beta C through cuBLASLt's C). Any
// operand layout that is neither row- nor column-major is copied to row-major first, with
// broadcast batch dimensions squeezed so a shared operand is copied once. Batch dimensions
// that do not collapse to one stride become a loop of calls. Algorithms come from cuBLASLt's
// heuristic, cached per problem.
#include <cuComplex.h>
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

#include "backend/common/layout.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/cuda_utils.h"
#include "backend/cuda/gemm.h"
#include "primitives/primitives.h"

namespace braid {
namespace cuda {

namespace {

size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Element, scale and compute types of a product in dtype d.
struct LtTypes {
  cudaDataType_t data, scale;
  cublasComputeType_t compute;
};

LtTypes lt_types(Dtype d, bool tf32) {
  const cublasComputeType_t f32 = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  switch (d.val()) {
    case Dtype::Val::float16: return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::Val::bfloat16: return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::Val::float32: return {CUDA_R_32F, CUDA_R_32F, f32};
    case Dtype::Val::float64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case Dtype::Val::complex64: return {CUDA_C_32F, CUDA_C_32F, f32};
    case Dtype::Val::bool_:
    case Dtype::Val::uint8:
    case Dtype::Val::uint16:
    case Dtype::Val::uint32:
    case Dtype::Val::uint64:
    case Dtype::Val::int8:
    case Dtype::Val::int16:
    case Dtype::Val::int32:
    case Dtype::Val::int64: break;
  }
  throw std::logic_error("[matmul] no cuBLASLt type for this dtype");
}

// alpha or beta in the scale type's storage.
struct Scale {
  alignas(16) unsigned char bytes[16] = {};
  Scale(double v, cudaDataType_t type) {
    if (type == CUDA_R_64F) {
      std::memcpy(bytes, &v, sizeof(v));
    } else if (type == CUDA_C_32F) {
      const cuComplex c = make_cuComplex(static_cast<float>(v), 0.0f);
      std::memcpy(bytes, &c, sizeof(c));
    } else {
      const float f = static_cast<float>(v);
      std::memcpy(bytes, &f, sizeof(f));
    }
  }
};

using ProblemKey = std::array<int64_t, 20>;

ProblemKey key_of(const LtProblem& p) {
  return {static_cast<int64_t>(p.dtype.val()),
          p.tf32,
          p.m,
          p.n,
          p.k,
          p.a.trans,
          p.b.trans,
          p.a.ld,
          p.b.ld,
          p.batch,
          p.stride_a,
          p.stride_b,
          p.stride_d,
          p.pointer_array,
          p.align_a,
          p.align_b,
          p.align_d,
          static_cast<int64_t>(p.workspace),
          p.ldd,
          0};
}

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

void set_layout(LayoutDesc& l, cublasLtMatrixLayoutAttribute_t attr, const void* value, size_t bytes) {
  check(cublasLtMatrixLayoutSetAttribute(l.desc, attr, value, bytes), "cublasLtMatrixLayoutSetAttribute");
}

// False when this cuBLASLt refuses pointer-array batches (the caller falls back).
bool make_layout(LayoutDesc& l, const LtProblem& p, cudaDataType_t type, int64_t rows, int64_t cols,
                 int64_t ld, int64_t stride) {
  check(
      cublasLtMatrixLayoutCreate(&l.desc, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
      "cublasLtMatrixLayoutCreate");
  if (p.batch > 1 || p.pointer_array) {
    const int32_t count = checked_int32(p.batch, "matmul", "batch count");
    set_layout(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
  }
  if (p.pointer_array) {
    const uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
    return cublasLtMatrixLayoutSetAttribute(l.desc, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof(mode)) ==
           CUBLAS_STATUS_SUCCESS;
  }
  if (p.batch > 1) set_layout(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
  return true;
}

class AlgoCache {
 public:
  static AlgoCache& instance() {
    static AlgoCache* cache = new AlgoCache();  // deliberately leaked: no destruction at exit
    return *cache;
  }
  // Whether the problem was seen; `algo` is empty (found == false) when it had none.
  bool find(const ProblemKey& key, bool& found, cublasLtMatmulAlgo_t& algo) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = algos_.find(key);
    if (it == algos_.end()) return false;
    found = it->second.first;
    algo = it->second.second;
    return true;
  }
  void insert(const ProblemKey& key, bool found, const cublasLtMatmulAlgo_t& algo) {
    std::lock_guard<std::mutex> lock(mu_);
    algos_.emplace(key, std::make_pair(found, algo));
  }

 private:
  std::mutex mu_;
  std::map<ProblemKey, std::pair<bool, cublasLtMatmulAlgo_t>> algos_;  // guarded by mu_
};

}  // namespace

bool tf32_allowed() {
  const char* v = std::getenv("BRAID_ALLOW_TF32");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

LtProblem lt_problem(Dtype dtype, int64_t m, int64_t n, int64_t k, const common::MatrixLayout& a,
                     const common::MatrixLayout& b, const Stream& s, void** workspace) {
  LtProblem p;
  p.dtype = dtype;
  p.tf32 = tf32_allowed();
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = a;
  p.b = b;
  *workspace = lt_workspace(s, &p.workspace);
  return p;
}

uint32_t alignment(const void* p, int64_t ld, int64_t batch_stride, size_t itemsize) {
  const uint64_t bits = reinterpret_cast<uintptr_t>(p) | static_cast<uint64_t>(ld) * itemsize |
                        static_cast<uint64_t>(batch_stride) * itemsize;
  uint32_t a = 256;
  while (a > 1 && bits % a != 0) a /= 2;
  return a;
}

OperandPlan plan_operand(const array& in, bool dense) {
  OperandPlan plan;
  const int nd = static_cast<int>(in.ndim());
  common::MatrixLayout l;
  const bool direct = common::matrix_layout(in.shape()[nd - 2], in.shape()[nd - 1], in.strides()[nd - 2],
                                            in.strides()[nd - 1], l);
  const common::Layout<1> batch(Shape(in.shape().begin(), in.shape().end() - 2),
                                {Strides(in.strides().begin(), in.strides().end() - 2)});
  if (direct && (!dense || batch.ndim() <= 1)) return plan;
  plan.copy = true;
  plan.copy_shape = in.shape();
  for (int i = 0; i < nd - 2 && !dense; ++i) {
    if (in.strides()[i] == 0) plan.copy_shape[i] = 1;
  }
  size_t n = 1;
  for (int32_t d : plan.copy_shape) n *= static_cast<size_t>(d);
  plan.bytes = round_up(n * in.itemsize());
  return plan;
}

GemmOperand prepare_operand(const array& in, const OperandPlan& plan, char* buffer, cudaStream_t stream) {
  GemmOperand op;
  const int nd = static_cast<int>(in.ndim());
  if (!plan.copy) {
    common::matrix_layout(in.shape()[nd - 2], in.shape()[nd - 1], in.strides()[nd - 2], in.strides()[nd - 1],
                          op.layout);
    op.data = static_cast<const char*>(in.desc()->data_ptr);
    op.batch_strides = Strides(in.strides().begin(), in.strides().end() - 2);
    return op;
  }
  if (in.size() > 0) {
    copy_strided(in.desc()->data_ptr, in.dtype(), plan.copy_shape, in.strides(), buffer, in.dtype(), stream);
  }
  op.data = buffer;
  op.layout = {false, std::max<int64_t>(1, in.shape()[nd - 1])};
  int64_t stride = static_cast<int64_t>(in.shape()[nd - 2]) * in.shape()[nd - 1];
  op.batch_strides = Strides(nd - 2, 0);
  for (int i = nd - 3; i >= 0; --i) {
    if (plan.copy_shape[i] != 1) op.batch_strides[i] = stride;
    stride *= plan.copy_shape[i];
  }
  return op;
}

// D = op(B) op(A) in cuBLASLt's column-major terms: its "A" is our B, its "B" is our A.
bool run_lt(const LtProblem& p, const void* a, const void* b, void* d, double alpha, double beta,
            void* workspace, cudaStream_t stream) {
  const LtTypes types = lt_types(p.dtype, p.tf32);
  MatmulDesc op;
  check(cublasLtMatmulDescCreate(&op.desc, types.compute, types.scale), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = p.b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = p.a.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(op.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
        "cublasLtMatmulDescSetAttribute");
  check(cublasLtMatmulDescSetAttribute(op.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
        "cublasLtMatmulDescSetAttribute");
  LayoutDesc la, lb, ld;
  // Our B is [K, N]: stored row-major it is the column-major [N, K]; column-major, [K, N].
  // Our A is [M, K]: row-major it is the column-major [K, M]; column-major, [M, K].
  const bool layouts =
      make_layout(la, p, types.data, p.b.trans ? p.k : p.n, p.b.trans ? p.n : p.k, p.b.ld, p.stride_b) &&
      make_layout(lb, p, types.data, p.a.trans ? p.m : p.k, p.a.trans ? p.k : p.m, p.a.ld, p.stride_a) &&
      make_layout(ld, p, types.data, p.n, p.m, p.ldd > 0 ? p.ldd : p.n, p.stride_d);
  if (!layouts) return false;

  cublasLtMatmulAlgo_t algo{};
  bool found = false;
  const ProblemKey key = key_of(p);
  if (!AlgoCache::instance().find(key, found, algo)) {
    PreferenceDesc pref;
    check(cublasLtMatmulPreferenceCreate(&pref.desc), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = p.workspace;
    check(cublasLtMatmulPreferenceSetAttribute(pref.desc, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                               sizeof(ws)),
          "cublasLtMatmulPreferenceSetAttribute");
    const std::array<std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t>, 4> aligns = {
        {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.align_b},
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.align_a},
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.align_d},
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.align_d}}};
    for (const auto& [attr, value] : aligns) {
      check(cublasLtMatmulPreferenceSetAttribute(pref.desc, attr, &value, sizeof(value)),
            "cublasLtMatmulPreferenceSetAttribute");
    }
    cublasLtMatmulHeuristicResult_t result{};
    int count = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        lt_handle(), op.desc, la.desc, lb.desc, ld.desc, ld.desc, pref.desc, 1, &result, &count);
    // NOT_SUPPORTED is how cuBLASLt says it has nothing for this problem; a pointer-array
    // problem it rejects in any way falls back as well.
    if (status != CUBLAS_STATUS_NOT_SUPPORTED && !p.pointer_array)
      check(status, "cublasLtMatmulAlgoGetHeuristic");
    found = status == CUBLAS_STATUS_SUCCESS && count > 0;
    if (found) algo = result.algo;
    AlgoCache::instance().insert(key, found, algo);
  }
  if (!found) return false;
  const Scale al(alpha, types.scale), be(beta, types.scale);
  check(cublasLtMatmul(lt_handle(), op.desc, al.bytes, b, la.desc, a, lb.desc, be.bytes, d, ld.desc, d,
                       ld.desc, &algo, workspace, p.workspace, stream),
        "cublasLtMatmul");
  return true;
}

}  // namespace cuda

namespace {

// A batch dimension: its size and the element strides of A, B and the output along it.
struct BatchDim {
  int64_t n;
  std::array<int64_t, 3> stride;
};

std::vector<BatchDim> collapse_batch(const Shape& out_shape, const cuda::GemmOperand& a,
                                     const cuda::GemmOperand& b, const Strides& out_strides) {
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

// out[..., M, N] = alpha a[..., M, K] b[..., K, N] + beta out, batch dims already broadcast;
// out is allocated (and holds C when beta != 0).
void batched_product(const Stream& s, const array& a, const array& b, array& out, double alpha, double beta) {
  const cudaStream_t stream = cuda::stream_of(s);
  const int nd = static_cast<int>(out.ndim());
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  if (k == 0 && beta == 0) {
    cuda::check(cudaMemsetAsync(out.desc()->data_ptr, 0, out.nbytes(), stream), "[Matmul] cudaMemsetAsync");
    return;
  }
  const cuda::OperandPlan plan_a = cuda::plan_operand(a), plan_b = cuda::plan_operand(b);
  char* tmp = plan_a.bytes + plan_b.bytes > 0
                  ? static_cast<char*>(cuda::scratch(s, plan_a.bytes + plan_b.bytes))
                  : nullptr;
  const cuda::GemmOperand pa = cuda::prepare_operand(a, plan_a, tmp, stream);
  const cuda::GemmOperand pb = cuda::prepare_operand(b, plan_b, tmp + plan_a.bytes, stream);

  const size_t item = out.itemsize();
  void* workspace = nullptr;
  cuda::LtProblem p = cuda::lt_problem(out.dtype(), m, n, k, pa.layout, pb.layout, s, &workspace);

  // The innermost collapsed batch dimension goes to cuBLASLt; any others are looped here.
  const std::vector<BatchDim> dims = collapse_batch(out.shape(), pa, pb, out.strides());
  const BatchDim inner = dims.empty() ? BatchDim{1, {0, 0, m * n}} : dims.back();
  const int outer_dims = std::max(0, static_cast<int>(dims.size()) - 1);
  std::vector<int64_t> idx(static_cast<size_t>(outer_dims), 0);
  std::array<int64_t, 3> base{};
  char* d = static_cast<char*>(out.desc()->data_ptr);
  constexpr int64_t kMaxBatch = INT32_MAX;
  while (true) {
    for (int64_t b0 = 0; b0 < inner.n; b0 += kMaxBatch) {
      p.batch = std::min(kMaxBatch, inner.n - b0);
      p.stride_a = inner.stride[0];
      p.stride_b = inner.stride[1];
      p.stride_d = inner.stride[2];
      const char* ptr_a = pa.data + (base[0] + b0 * inner.stride[0]) * static_cast<int64_t>(item);
      const char* ptr_b = pb.data + (base[1] + b0 * inner.stride[1]) * static_cast<int64_t>(item);
      char* ptr_d = d + (base[2] + b0 * inner.stride[2]) * static_cast<int64_t>(item);
      p.align_a = cuda::alignment(ptr_a, p.a.ld, p.batch > 1 ? p.stride_a : 0, item);
      p.align_b = cuda::alignment(ptr_b, p.b.ld, p.batch > 1 ? p.stride_b : 0, item);
      p.align_d = cuda::alignment(ptr_d, p.n, p.batch > 1 ? p.stride_d : 0, item);
      if (!cuda::run_lt(p, ptr_a, ptr_b, ptr_d, alpha, beta, workspace, stream)) {
        throw std::runtime_error("[Matmul] cuBLASLt has no algorithm for a " + std::to_string(m) + "x" +
                                 std::to_string(k) + " by " + std::to_string(k) + "x" + std::to_string(n) +
                                 " " + dtype_name(out.dtype()) + " product.");
      }
    }
    int i = outer_dims - 1;
    for (; i >= 0; --i) {
      for (int t = 0; t < 3; ++t) base[t] += dims[i].stride[t];
      if (++idx[i] < dims[i].n) break;
      for (int t = 0; t < 3; ++t) base[t] -= dims[i].stride[t] * dims[i].n;
      idx[i] = 0;
    }
    if (i < 0) break;
  }
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
    const std::array<std::pair<Dtype, bool>, 4> kinds = {
        {{float32, false}, {float32, true}, {float16, false}, {bfloat16, false}}};
    for (const auto& [dtype, tf32] : kinds) {
      try {
        for (const bool trans : {false, true}) {
          for (const int64_t batch : {1, 2}) {
            LtProblem p;
            p.dtype = dtype;
            p.tf32 = tf32;
            p.m = p.n = p.k = kN;
            p.a = p.b = {trans, kN};
            p.batch = batch;
            p.stride_a = p.stride_b = p.stride_d = kN * kN;
            p.workspace = kWorkspace;
            run_lt(p, base, base + 2 * kMatrix, base + 4 * kMatrix, 1.0, 0.0, workspace.ptr, s.stream);
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

void Matmul::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  batched_product(stream(), inputs[0], inputs[1], out, 1.0, 0.0);
}

void AddMM::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  // C goes into the output first; cuBLASLt then reads it as its C and writes D in place.
  if (beta_ != 0.0f) {
    cuda::copy_into(inputs[2], out, common::Region{0, out.strides()}, out.shape(), cuda::stream_of(stream()));
  }
  batched_product(stream(), inputs[0], inputs[1], out, alpha_, beta_);
}

}  // namespace braid
