// Matmul::eval_cpu through OpenBLAS's sgemm. BLAS is pinned to one thread (one pool only,
// DESIGN.md section 3); the pool supplies the parallelism: batches run in parallel, and a few
// large products are cut into blocks of rows, one sgemm each.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "backend/cpu/blas.h"
#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace cpu {

// CBLAS takes every size and leading dimension as int. m, n and k are shape dimensions
// (int32, so they always fit); a leading dimension is a stride, which may not, and then the
// operand is copied (blas_layout says no). The tests check both (backend/cpu/blas.h).

int blas_int(int64_t value, const char* what, const char* op) {
  if (value < 0 || value > std::numeric_limits<int>::max()) {
    throw std::invalid_argument("[" + std::string(op) + "] The " + std::string(what) + " " + std::to_string(value) +
                                " does not fit in BLAS's int.");
  }
  return static_cast<int>(value);
}

int blas_int(int64_t value, const char* what) { return blas_int(value, what, "matmul"); }

void pin_blas_to_one_thread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

// Whether a [rows, cols] matrix with strides (sr, sc) goes to BLAS as it is, and how.
bool blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool& trans, int64_t& ld) {
  constexpr int64_t kMaxLd = std::numeric_limits<int>::max();
  if ((sc == 1 || cols == 1) && (rows == 1 || sr >= cols)) {
    ld = std::max<int64_t>(1, rows == 1 ? cols : sr);
    trans = false;
    return ld <= kMaxLd;
  }
  if ((sr == 1 || rows == 1) && (cols == 1 || sc >= rows)) {
    ld = std::max<int64_t>(1, cols == 1 ? rows : sc);
    trans = true;
    return ld <= kMaxLd;
  }
  return false;
}

}  // namespace cpu

namespace {

using cpu::kMinBlasRows;
using cpu::kMinBlasTaskWork;

// A float32 operand as sgemm takes it: a matrix per batch at data + batch_offsets[b].
struct Operand {
  const float* data = nullptr;
  bool trans = false;
  int64_t ld = 1;
  std::vector<int64_t> batch_offsets;
  std::optional<array> owned;  // keeps a converted copy alive
};

// Element offsets of each batch matrix, walking the batch dims in row-major order.
std::vector<int64_t> batch_offsets(const Shape& shape, const Strides& strides) {
  const int nb = static_cast<int>(shape.size()) - 2;
  int64_t batches = 1;
  for (int i = 0; i < nb; ++i) batches *= shape[i];
  std::vector<int64_t> offsets(static_cast<size_t>(batches), 0);
  std::vector<int64_t> idx(static_cast<size_t>(std::max(nb, 0)), 0);
  int64_t off = 0;
  for (int64_t b = 0; b < batches; ++b) {
    offsets[b] = off;
    for (int i = nb - 1; i >= 0; --i) {
      off += strides[i];
      if (++idx[i] < shape[i]) break;
      off -= strides[i] * shape[i];
      idx[i] = 0;
    }
  }
  return offsets;
}

Operand prepare(const array& in) {
  Operand op;
  const int nd = static_cast<int>(in.ndim());
  const int64_t rows = in.shape()[nd - 2], cols = in.shape()[nd - 1];
  if (in.dtype() == float32 &&
      cpu::blas_layout(rows, cols, in.strides()[nd - 2], in.strides()[nd - 1], op.trans, op.ld)) {
    op.data = static_cast<const float*>(in.desc()->data_ptr);
    op.batch_offsets = batch_offsets(in.shape(), in.strides());
    return op;
  }
  // Copy into a row-contiguous float32 buffer. Broadcast batch dims are squeezed first, so a
  // shared operand is copied once and read by every batch through a zero stride.
  Shape compact = in.shape();
  for (int i = 0; i < nd - 2; ++i) {
    if (in.strides()[i] == 0) compact[i] = 1;
  }
  array view(compact, in.dtype(), nullptr, {});
  detail::copy_shared_buffer(view, in, in.strides(), detail::flags_for(compact, in.strides(), in.data_size()),
                             in.data_size());
  array copy(compact, float32, nullptr, {});
  cpu::copy_to_contiguous(view, copy);
  Strides strides = copy.strides();
  for (int i = 0; i < nd - 2; ++i) {
    if (compact[i] == 1) strides[i] = 0;
  }
  op.data = static_cast<const float*>(copy.desc()->data_ptr);
  op.trans = false;
  op.ld = std::max<int64_t>(1, cols);
  op.batch_offsets = batch_offsets(in.shape(), strides);
  op.owned.emplace(std::move(copy));
  return op;
}

}  // namespace

void Matmul::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array& a = inputs[0];
  const array& b = inputs[1];
  const int nd = static_cast<int>(out.ndim());
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  if (k == 0) {
    std::memset(out.desc()->data_ptr, 0, out.nbytes());
    return;
  }
  cpu::pin_blas_to_one_thread();
  const Operand pa = prepare(a);
  const Operand pb = prepare(b);
  const int blas_n = cpu::blas_int(n, "column count");
  const int blas_k = cpu::blas_int(k, "inner dimension");
  const int blas_lda = cpu::blas_int(pa.ld, "leading dimension");
  const int blas_ldb = cpu::blas_int(pb.ld, "leading dimension");
  cpu::blas_int(m, "row count");
  const int64_t batches = static_cast<int64_t>(out.size()) / (m * n);

  std::vector<float> staging;  // float32 result for 16-bit outputs
  float* c = nullptr;
  if (out.dtype() == float32) {
    c = static_cast<float*>(out.desc()->data_ptr);
  } else {
    staging.resize(out.size());
    c = staging.data();
  }

  // Cut rows only when batches alone cannot keep the workers busy.
  const int64_t workers = detail::WorkerPool::instance().num_workers();
  int64_t row_blocks = 1;
  if (batches < 2 * workers) {
    const int64_t wanted = (2 * workers + batches - 1) / batches;
    row_blocks = std::max<int64_t>(1, std::min({wanted, m / kMinBlasRows, m * n * k / kMinBlasTaskWork}));
  }
  const int64_t block_rows = (m + row_blocks - 1) / row_blocks;
  row_blocks = (m + block_rows - 1) / block_rows;
  const int64_t grain = std::max<int64_t>(1, kMinBlasTaskWork / std::max<int64_t>(1, block_rows * n * k));

  detail::parallel_for(batches * row_blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bt = task / row_blocks;
      const int64_t m0 = (task % row_blocks) * block_rows;
      const int blas_rows = static_cast<int>(std::min(block_rows, m - m0));  // <= m, checked
      const float* pa_rows = pa.data + pa.batch_offsets[bt] + (pa.trans ? m0 : m0 * pa.ld);
      cblas_sgemm(CblasRowMajor, pa.trans ? CblasTrans : CblasNoTrans, pb.trans ? CblasTrans : CblasNoTrans,
                  blas_rows, blas_n, blas_k, 1.0f, pa_rows, blas_lda, pb.data + pb.batch_offsets[bt], blas_ldb,
                  0.0f, c + bt * m * n + m0 * n, blas_n);
    }
  });

  if (!staging.empty()) {
    char* dst = static_cast<char*>(out.desc()->data_ptr);
    detail::parallel_for(static_cast<int64_t>(out.size()), cpu::kElementwiseGrain, [&](int64_t b, int64_t e) {
      detail::convert_contiguous(staging.data() + b, float32, dst + b * out.itemsize(), out.dtype(),
                                 static_cast<size_t>(e - b));
    });
  }
}

}  // namespace braid
