// The CPU's GEMM machinery, shared by every matrix-product primitive: operands as BLAS reads
// them, the result buffer BLAS writes, and one runner that issues a list of products across
// the worker pool (BLAS itself pinned to one thread, DESIGN.md section 3).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "backend/common/matmul.h"
#include "braid/array.h"

namespace braid::cpu {

/// Rows below which one GEMM call loses its efficiency, and multiply-adds that pay for waking
/// a worker (about 50 us of one core's work): how kernels cut products into pool tasks. With
/// 2^18, a training step of a 64-128-10 MLP at batch 128 split its two 1M multiply-add
/// products four ways and took 226-339 us on the 2-core EPYC against 192-195 us on one
/// thread; with 2^20 it takes 201-206 us.
constexpr int64_t kMinBlasRows = 32;
constexpr int64_t kMinBlasTaskWork = 1 << 20;

/// Makes OpenBLAS single-threaded (once per process).
void pin_blas_to_one_thread();

/// `value` as BLAS's int; throws std::invalid_argument("[op] The <what> ... does not fit in
/// BLAS's int.") when it does not fit (the two-argument form names matmul).
int blas_int(int64_t value, const char* what, const char* op);
int blas_int(int64_t value, const char* what);

/// common::matrix_layout, further limited to leading dimensions that fit BLAS's int.
bool blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool& trans, int64_t& ld);

/// The element type BLAS computes an output dtype in: float32 for the 16-bit floats and
/// float32, float64 (dgemm) and complex64 (cgemm) as they are.
Dtype gemm_type(Dtype out);

/// An operand's matrices as BLAS reads them, in the GEMM type: the input itself when its
/// layout allows, else a row-contiguous converted copy (broadcast batch dimensions squeezed,
/// so a shared matrix is copied once). Matrix i of the batch (row-major over the batch
/// dimensions) starts at data + batch_offsets[i] elements.
struct GemmOperand {
  const void* data = nullptr;
  common::MatrixLayout layout;
  std::vector<int64_t> batch_offsets;
  std::optional<array> owned;  // keeps a copy alive
  /// Element offset of row r (trans: column r) of the stored matrix's leading index.
  int64_t major_offset(int64_t r) const { return layout.trans ? r : r * layout.ld; }
  /// Element offset of column c (trans: row c).
  int64_t minor_offset(int64_t c) const { return layout.trans ? c * layout.ld : c; }
};
GemmOperand gemm_operand(const array& in, Dtype type);

/// Where one product of a list finds its matrices (element offsets from the operands' data
/// and from the result) and its inner dimension.
struct GemmTask {
  int64_t a = 0, b = 0, c = 0, k = 0;
};

/// The buffer BLAS writes for `out` (allocated here): out's own when its dtype is the GEMM
/// type, else a staging buffer that finish() converts into out. With `c`, it starts as c
/// (broadcast to out's shape and converted), for products that accumulate into it.
class GemmResult {
 public:
  GemmResult(array& out, const array* c);
  void* data() const { return data_; }
  Dtype type() const { return type_; }
  void finish();

 private:
  array& out_;
  Dtype type_;
  void* data_ = nullptr;
  std::optional<array> staging_;
};

/// Runs `count` products C_t = alpha op(A_t) op(B_t) + beta C_t, [m, k_t] x [k_t, n] into the
/// row-major [m, n] result at result.data() + task(t).c, across the pool; rows are cut into
/// blocks when few products cannot keep the workers busy (k_hint sizes that decision). A task
/// with k_t == 0 scales its C by beta. BLAS sizes that do not fit int throw "[op] ...".
void run_gemms(const GemmResult& result, const GemmOperand& a, const GemmOperand& b, int64_t count, int64_t m,
               int64_t n, int64_t k_hint, double alpha, double beta,
               const std::function<GemmTask(int64_t)>& task);

}  // namespace braid::cpu
