// The CPU's matrix products through OpenBLAS: sgemm for float32 and the 16-bit floats (in a
// float32 staging buffer), dgemm for float64 and cgemm for complex64. BLAS is pinned to one
// thread (one pool only, DESIGN.md section 3); the pool supplies the parallelism: products run
// in parallel, and a few large ones are cut into blocks of rows, one GEMM call each. Every
// primitive here is a list of products handed to run_gemms.
#include <cblas.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/gemm.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace cpu {

// CBLAS takes every size and leading dimension as int. m, n and k are shape dimensions
// (int32, so they always fit); a leading dimension is a stride, which may not, and then the
// operand is copied (blas_layout says no). Both are declared by the tests, which check them.

int blas_int(int64_t value, const char* what, const char* op) {
  if (value < 0 || value > std::numeric_limits<int>::max()) {
    throw std::invalid_argument("[" + std::string(op) + "] The " + std::string(what) + " " +
                                std::to_string(value) + " does not fit in BLAS's int.");
  }
  return static_cast<int>(value);
}

int blas_int(int64_t value, const char* what) { return blas_int(value, what, "matmul"); }

void pin_blas_to_one_thread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

bool blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool& trans, int64_t& ld) {
  common::MatrixLayout l;
  if (!common::matrix_layout(rows, cols, sr, sc, l)) return false;
  trans = l.trans;
  ld = l.ld;
  return ld <= std::numeric_limits<int>::max();
}

Dtype gemm_type(Dtype out) {
  switch (out.val()) {
    case Dtype::Val::float64:
    case Dtype::Val::complex64: return out;
    case Dtype::Val::bool_:
    case Dtype::Val::uint8:
    case Dtype::Val::uint16:
    case Dtype::Val::uint32:
    case Dtype::Val::uint64:
    case Dtype::Val::int8:
    case Dtype::Val::int16:
    case Dtype::Val::int32:
    case Dtype::Val::int64:
    case Dtype::Val::float16:
    case Dtype::Val::float32:
    case Dtype::Val::bfloat16: return float32;
  }
  return float32;
}

GemmOperand gemm_operand(const array& in, Dtype type) {
  GemmOperand op;
  const int nd = static_cast<int>(in.ndim());
  const Shape batch(in.shape().begin(), in.shape().end() - 2);
  const int64_t rows = in.shape()[nd - 2], cols = in.shape()[nd - 1];
  if (in.dtype() == type &&
      blas_layout(rows, cols, in.strides()[nd - 2], in.strides()[nd - 1], op.layout.trans, op.layout.ld)) {
    op.data = in.desc()->data_ptr;
    op.batch_offsets =
        common::row_major_offsets(batch, Strides(in.strides().begin(), in.strides().end() - 2));
    return op;
  }
  // Broadcast batch dimensions are squeezed, so a shared matrix is copied once and read by
  // every batch through a zero stride.
  Shape compact = in.shape();
  for (int i = 0; i < nd - 2; ++i) {
    if (in.strides()[i] == 0) compact[i] = 1;
  }
  array copy(compact, type, nullptr, {});
  detail::alloc_contiguous(copy);
  if (copy.size() > 0) {
    copy_region(in.desc()->data_ptr, in.dtype(), in.strides(), copy.desc()->data_ptr, type, copy.strides(),
                compact);
  }
  Strides batch_strides(copy.strides().begin(), copy.strides().end() - 2);
  for (int i = 0; i < nd - 2; ++i) {
    if (compact[i] == 1) batch_strides[i] = 0;
  }
  op.data = copy.desc()->data_ptr;
  op.layout = {false, std::max<int64_t>(1, cols)};
  op.batch_offsets = common::row_major_offsets(batch, batch_strides);
  op.owned.emplace(std::move(copy));
  return op;
}

GemmResult::GemmResult(array& out, const array* c) : out_(out), type_(gemm_type(out.dtype())) {
  detail::alloc_contiguous(out);
  if (type_ == out.dtype()) {
    data_ = out.desc()->data_ptr;
  } else {
    staging_.emplace(out.shape(), type_, nullptr, std::vector<array>{});
    detail::alloc_contiguous(*staging_);
    data_ = staging_->desc()->data_ptr;
  }
  if (c != nullptr && out.size() > 0) {
    copy_region(c->desc()->data_ptr, c->dtype(), common::broadcast_strides(*c, out.shape()), data_, type_,
                out.strides(), out.shape());
  }
}

void GemmResult::finish() {
  if (!staging_ || out_.size() == 0) return;
  const char* src = static_cast<const char*>(data_);
  char* dst = static_cast<char*>(out_.desc()->data_ptr);
  const size_t src_item = size_of(type_), dst_item = out_.itemsize();
  detail::parallel_for(static_cast<int64_t>(out_.size()), kElementwiseGrain, [&](int64_t b, int64_t e) {
    detail::convert_contiguous(src + b * src_item, type_, dst + b * dst_item, out_.dtype(),
                               static_cast<size_t>(e - b));
  });
}

}  // namespace cpu

namespace {


CBLAS_TRANSPOSE blas_trans(const common::MatrixLayout& l) { return l.trans ? CblasTrans : CblasNoTrans; }

// One BLAS call: C[rows, n] = alpha op(A) op(B) + beta C, row-major with ldc = n.
struct GemmCall {
  int rows, n, k, lda, ldb;
  const void* a;
  const void* b;
  void* c;
};

template <typename T>
void blas_gemm(const GemmCall& g, const common::MatrixLayout& la, const common::MatrixLayout& lb,
               double alpha, double beta) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, blas_trans(la), blas_trans(lb), g.rows, g.n, g.k, static_cast<float>(alpha),
                static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb,
                static_cast<float>(beta), static_cast<float*>(g.c), g.n);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, blas_trans(la), blas_trans(lb), g.rows, g.n, g.k, alpha,
                static_cast<const double*>(g.a), g.lda, static_cast<const double*>(g.b), g.ldb, beta,
                static_cast<double*>(g.c), g.n);
  } else {
    const std::complex<float> al(static_cast<float>(alpha)), be(static_cast<float>(beta));
    cblas_cgemm(CblasRowMajor, blas_trans(la), blas_trans(lb), g.rows, g.n, g.k, &al, g.a, g.lda, g.b, g.ldb,
                &be, g.c, g.n);
  }
}

// C = beta C for a product with nothing to sum (BLAS wants k >= 1 for its leading dimensions).
template <typename T>
void scale_result(T* c, int64_t count, double beta) {
  if (beta == 0) {
    std::fill(c, c + count, T(0));
  } else {
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_same_v<T, complex64_t>) {
        c[i] = complex64_t(c[i] * static_cast<float>(beta));
      } else {
        c[i] = c[i] * static_cast<T>(beta);
      }
    }
  }
}

template <typename T>
void run_typed(const cpu::GemmResult& result, const cpu::GemmOperand& a, const cpu::GemmOperand& b,
               int64_t count, int64_t m, int64_t n, int64_t k_hint, double alpha, double beta,
               const std::function<cpu::GemmTask(int64_t)>& task) {
  const int blas_n = cpu::blas_int(n, "column count");
  cpu::blas_int(m, "row count");
  const int lda = cpu::blas_int(a.layout.ld, "leading dimension");
  const int ldb = cpu::blas_int(b.layout.ld, "leading dimension");
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  T* pc = static_cast<T*>(result.data());

  // Cut rows only when the products alone cannot keep the workers busy.
  const int64_t work = m * n * std::max<int64_t>(1, k_hint);
  const int64_t workers = detail::WorkerPool::instance().num_workers();
  int64_t row_blocks = 1;
  if (count < 2 * workers) {
    const int64_t wanted = (2 * workers + count - 1) / count;
    row_blocks = std::max<int64_t>(1, std::min({wanted, m / cpu::kMinBlasRows, work / cpu::kMinBlasTaskWork}));
  }
  const int64_t block_rows = (m + row_blocks - 1) / row_blocks;
  row_blocks = (m + block_rows - 1) / block_rows;
  const int64_t grain = std::max<int64_t>(1, cpu::kMinBlasTaskWork / std::max<int64_t>(1, work / row_blocks));

  detail::parallel_for(count * row_blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const cpu::GemmTask t = task(i / row_blocks);
      const int64_t m0 = (i % row_blocks) * block_rows;
      const int64_t rows = std::min(block_rows, m - m0);
      T* c = pc + t.c + m0 * n;
      if (t.k == 0) {
        scale_result(c, rows * n, beta);
        continue;
      }
      const GemmCall call{static_cast<int>(rows),
                          blas_n,
                          cpu::blas_int(t.k, "inner dimension"),
                          lda,
                          ldb,
                          pa + t.a + a.major_offset(m0),
                          pb + t.b,
                          c};
      blas_gemm<T>(call, a.layout, b.layout, alpha, beta);
    }
  });
}

}  // namespace

namespace cpu {

void run_gemms(const GemmResult& result, const GemmOperand& a, const GemmOperand& b, int64_t count, int64_t m,
               int64_t n, int64_t k_hint, double alpha, double beta,
               const std::function<GemmTask(int64_t)>& task) {
  if (count == 0 || m == 0 || n == 0) return;
  cpu::pin_blas_to_one_thread();
  dispatch_dtype(result.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, complex64_t>) {
      run_typed<T>(result, a, b, count, m, n, k_hint, alpha, beta, task);
    } else {
      throw std::logic_error("[matmul] no GEMM for this dtype");
    }
  });
}

}  // namespace cpu

namespace {

// out[..., M, N] = alpha a[..., M, K] b[..., K, N] + beta out, batch dims already broadcast.
void batched_product(cpu::GemmResult& result, const array& a, const array& b, const array& out, double alpha,
                     double beta) {
  if (out.size() > 0) {
    const int nd = static_cast<int>(out.ndim());
    const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
    const cpu::GemmOperand pa = cpu::gemm_operand(a, result.type());
    const cpu::GemmOperand pb = cpu::gemm_operand(b, result.type());
    const int64_t batches = static_cast<int64_t>(out.size()) / (m * n);
    cpu::run_gemms(result, pa, pb, batches, m, n, k, alpha, beta, [&](int64_t t) {
      return cpu::GemmTask{pa.batch_offsets[t], pb.batch_offsets[t], t * m * n, k};
    });
  }
  result.finish();
}

// The uint32 elements of an index array, in row-major order.
std::vector<uint32_t> index_values(const array& idx) {
  const std::vector<int64_t> offsets = common::row_major_offsets(idx.shape(), idx.strides());
  const uint32_t* p = static_cast<const uint32_t*>(idx.desc()->data_ptr);
  std::vector<uint32_t> v(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) v[i] = p[offsets[i]];
  return v;
}

}  // namespace

void Matmul::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::GemmResult result(out, nullptr);
  batched_product(result, inputs[0], inputs[1], out, 1.0, 0.0);
}

void AddMM::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::GemmResult result(out, &inputs[2]);
  batched_product(result, inputs[0], inputs[1], out, alpha_, beta_);
}

void GatherMM::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::GemmResult result(out, nullptr);
  if (out.size() > 0) {
    const array& a = inputs[0];
    const array& b = inputs[1];
    const int nd = static_cast<int>(out.ndim());
    const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[a.ndim() - 1];
    const cpu::GemmOperand pa = cpu::gemm_operand(a, result.type());
    const cpu::GemmOperand pb = cpu::gemm_operand(b, result.type());
    const std::vector<uint32_t> lhs = index_values(inputs[2]);
    const std::vector<uint32_t> rhs = index_values(inputs[3]);
    const int64_t na = static_cast<int64_t>(pa.batch_offsets.size());
    const int64_t nb = static_cast<int64_t>(pb.batch_offsets.size());
    cpu::run_gemms(result, pa, pb, static_cast<int64_t>(lhs.size()), m, n, k, 1.0, 0.0, [&](int64_t t) {
      return cpu::GemmTask{pa.batch_offsets[common::clamp_matrix_index(lhs[t], na)],
                           pb.batch_offsets[common::clamp_matrix_index(rhs[t], nb)], t * m * n, k};
    });
  }
  result.finish();
}

void SegmentedMM::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::GemmResult result(out, nullptr);
  if (out.size() > 0) {
    const array& a = inputs[0];
    const array& b = inputs[1];
    const int64_t m = a.shape()[0], n = b.shape()[1], k = a.shape()[1];
    const cpu::GemmOperand pa = cpu::gemm_operand(a, result.type());
    const cpu::GemmOperand pb = cpu::gemm_operand(b, result.type());
    const std::vector<uint32_t> bounds = index_values(inputs[2]);
    const int64_t count = static_cast<int64_t>(bounds.size() / 2);
    cpu::run_gemms(result, pa, pb, count, m, n, k / std::max<int64_t>(1, count), 1.0, 0.0, [&](int64_t t) {
      const common::Segment s = common::clamp_segment(bounds[2 * t], bounds[2 * t + 1], k);
      return cpu::GemmTask{pa.minor_offset(s.start), pb.major_offset(s.start), t * m * n, s.size};
    });
  }
  result.finish();
}

}  // namespace braid
