// What the CPU kernels that call OpenBLAS share (defined in matmul.cpp). BLAS runs on one
// thread; the worker pool supplies the parallelism (DESIGN.md section 3).
#pragma once

#include <cstdint>

namespace braid::cpu {

/// Rows below which one sgemm call loses its efficiency, and multiply-adds that pay for
/// waking a worker: how kernels cut products into pool tasks.
constexpr int64_t kMinBlasRows = 32;
constexpr int64_t kMinBlasTaskWork = 1 << 18;

/// Makes OpenBLAS single-threaded (once per process).
void pin_blas_to_one_thread();

/// `value` as BLAS's int; throws std::invalid_argument("[op] The <what> ... does not fit in
/// BLAS's int.") when it does not fit (the two-argument form names matmul).
int blas_int(int64_t value, const char* what, const char* op);
int blas_int(int64_t value, const char* what);

/// Whether a [rows, cols] matrix with element strides (sr, sc) goes to BLAS as it is
/// (row-major, or column-major as `trans`), with leading dimension `ld`.
bool blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool& trans, int64_t& ld);

}  // namespace braid::cpu
