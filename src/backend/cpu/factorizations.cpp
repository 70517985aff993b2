// The CPU bodies of the linalg factorizations: LAPACK (through LAPACKE, row-major) once per
// matrix, the matrices of a batch spread over the worker pool with LAPACK's BLAS pinned to one
// thread (DESIGN.md section 3). A matrix LAPACK cannot factor fails the node with
// std::runtime_error("[linalg::op] ..."), which eval rethrows to the caller.
#include <complex>
// LAPACKE's complex types as std::complex (the layout of Fortran's COMPLEX).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/convert.h"
#include "backend/cpu/gemm.h"
#include "graph/node.h"
#include "primitives/factorizations.h"
#include "runtime/pool.h"

namespace braid {

namespace {

using cfloat = std::complex<float>;

// --- Typed LAPACKE calls --------------------------------------------------------------------
// One overload per element type, so the kernels below are written once.

constexpr int kRow = LAPACK_ROW_MAJOR;

lapack_int getrf(int m, int n, float* a, lapack_int* ipiv) { return LAPACKE_sgetrf(kRow, m, n, a, n, ipiv); }
lapack_int getrf(int m, int n, double* a, lapack_int* ipiv) { return LAPACKE_dgetrf(kRow, m, n, a, n, ipiv); }
lapack_int getri(int n, float* a, const lapack_int* ipiv) { return LAPACKE_sgetri(kRow, n, a, n, ipiv); }
lapack_int getri(int n, double* a, const lapack_int* ipiv) { return LAPACKE_dgetri(kRow, n, a, n, ipiv); }
lapack_int trtri(char uplo, int n, float* a) { return LAPACKE_strtri(kRow, uplo, 'N', n, a, n); }
lapack_int trtri(char uplo, int n, double* a) { return LAPACKE_dtrtri(kRow, uplo, 'N', n, a, n); }
lapack_int potrf(char uplo, int n, float* a) { return LAPACKE_spotrf(kRow, uplo, n, a, n); }
lapack_int potrf(char uplo, int n, double* a) { return LAPACKE_dpotrf(kRow, uplo, n, a, n); }
lapack_int geqrf(int m, int n, float* a, float* tau) { return LAPACKE_sgeqrf(kRow, m, n, a, n, tau); }
lapack_int geqrf(int m, int n, double* a, double* tau) { return LAPACKE_dgeqrf(kRow, m, n, a, n, tau); }
// Q [m, k] from geqrf's reflectors, in the first k columns of `a` (leading dimension lda).
lapack_int orgqr(int m, int k, float* a, int lda, const float* tau) {
  return LAPACKE_sorgqr(kRow, m, k, k, a, lda, tau);
}
lapack_int orgqr(int m, int k, double* a, int lda, const double* tau) {
  return LAPACKE_dorgqr(kRow, m, k, k, a, lda, tau);
}
lapack_int gesv(int n, int r, float* a, lapack_int* ipiv, float* b) {
  return LAPACKE_sgesv(kRow, n, r, a, n, ipiv, b, r);
}
lapack_int gesv(int n, int r, double* a, lapack_int* ipiv, double* b) {
  return LAPACKE_dgesv(kRow, n, r, a, n, ipiv, b, r);
}
lapack_int trtrs(char uplo, int n, int r, const float* a, float* b) {
  return LAPACKE_strtrs(kRow, uplo, 'N', 'N', n, r, a, n, b, r);
}
lapack_int trtrs(char uplo, int n, int r, const double* a, double* b) {
  return LAPACKE_dtrtrs(kRow, uplo, 'N', 'N', n, r, a, n, b, r);
}
lapack_int gesv(int n, int r, cfloat* a, lapack_int* ipiv, cfloat* b) {
  return LAPACKE_cgesv(kRow, n, r, a, n, ipiv, b, r);
}
lapack_int trtrs(char uplo, int n, int r, const cfloat* a, cfloat* b) {
  return LAPACKE_ctrtrs(kRow, uplo, 'N', 'N', n, r, a, n, b, r);
}
// jobz 'A' (u [m, m] and vt [n, n]) or 'N' (values only; u and vt may be null).
lapack_int gesdd(char jobz, int m, int n, float* a, float* s, float* u, float* vt) {
  return LAPACKE_sgesdd(kRow, jobz, m, n, a, n, s, u, std::max(m, 1), vt, std::max(n, 1));
}
lapack_int gesdd(char jobz, int m, int n, double* a, double* s, double* u, double* vt) {
  return LAPACKE_dgesdd(kRow, jobz, m, n, a, n, s, u, std::max(m, 1), vt, std::max(n, 1));
}
lapack_int gesdd(char jobz, int m, int n, cfloat* a, float* s, cfloat* u, cfloat* vt) {
  return LAPACKE_cgesdd(kRow, jobz, m, n, a, n, s, u, std::max(m, 1), vt, std::max(n, 1));
}
lapack_int heevd(char jobz, char uplo, int n, float* a, float* w) {
  return LAPACKE_ssyevd(kRow, jobz, uplo, n, a, n, w);
}
lapack_int heevd(char jobz, char uplo, int n, double* a, double* w) {
  return LAPACKE_dsyevd(kRow, jobz, uplo, n, a, n, w);
}
lapack_int heevd(char jobz, char uplo, int n, cfloat* a, float* w) {
  return LAPACKE_cheevd(kRow, jobz, uplo, n, a, n, w);
}

// The real type of an element type (the singular values' and Hermitian eigenvalues').
template <typename T>
struct RealOf {
  using type = T;
};
template <>
struct RealOf<cfloat> {
  using type = float;
};
template <typename T>
using real_t = typename RealOf<T>::type;

// --- Shared plumbing ------------------------------------------------------------------------

// Matrices per pool task: enough that a task holds about 2^16 multiply-adds, at least one.
int64_t matrix_grain(int64_t m, int64_t n) {
  const int64_t work = std::max<int64_t>(1, m * n * std::min(m, n));
  return std::max<int64_t>(1, (int64_t{1} << 16) / work);
}

// Runs body(i, scratch) for each matrix i of `count`, across the pool. Each task owns its
// scratch, so LAPACK never shares a buffer between threads.
template <typename Scratch, typename Body>
void for_each_matrix(int64_t count, int64_t grain, Body&& body) {
  cpu::pin_blas_to_one_thread();
  detail::parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    Scratch scratch;
    for (int64_t i = begin; i < end; ++i) body(i, scratch);
  });
}

[[noreturn]] void fail(const char* op, const std::string& what, int64_t index, int64_t count) {
  std::string where = count > 1 ? " (matrix " + std::to_string(index) + " of the batch)" : "";
  throw std::runtime_error(std::string("[") + op + "] " + what + where + ".");
}

// LAPACKE's negative results: an argument it rejected (a bug here) or an allocation failure.
void check_arguments(lapack_int info, const char* op) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR) throw std::bad_alloc();
  if (info < 0) {
    throw std::runtime_error(std::string("[") + op + "] LAPACK rejected argument " + std::to_string(-info) +
                             ".");
  }
}

int64_t matrix_count(const array& a) {
  const int64_t rows = a.shape(-2), cols = a.shape(-1);
  return rows * cols == 0 ? 0 : static_cast<int64_t>(a.size()) / (rows * cols);
}

// The number of matrices of a batch shape followed by two matrix axes (even when they are
// empty, unlike matrix_count).
int64_t batch_count(const array& a) {
  int64_t b = 1;
  for (size_t i = 0; i + 2 < a.ndim(); ++i) b *= a.shape()[i];
  return b;
}

template <typename T>
const T* data_of(const array& a) {
  return static_cast<const T*>(a.desc()->data_ptr);
}
template <typename T>
T* data_of(array& a) {
  return static_cast<T*>(a.desc()->data_ptr);
}

// Zeroes the triangle of the row-major n x n matrix `a` that a lower (upper) result leaves.
template <typename T>
void zero_other_triangle(T* a, int64_t n, bool upper) {
  for (int64_t r = 0; r < n; ++r) {
    if (upper) {
      std::fill(a + r * n, a + r * n + r, T(0));
    } else {
      std::fill(a + r * n + r + 1, a + (r + 1) * n, T(0));
    }
  }
}

// Calls f.template operator()<T>() with T the LAPACK element type of a float32, float64 or
// complex64 dtype (the ops cast every input to one of these).
template <typename F>
void dispatch_lapack(Dtype d, F&& f) {
  switch (d.val()) {
    case Dtype::Val::float32: f.template operator()<float>(); return;
    case Dtype::Val::float64: f.template operator()<double>(); return;
    case Dtype::Val::complex64: f.template operator()<cfloat>(); return;
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
    case Dtype::Val::bfloat16: break;
  }
  throw std::runtime_error("[linalg] LAPACK takes float32, float64 or complex64, not " + dtype_name(d) + ".");
}

// --- Kernels --------------------------------------------------------------------------------

template <typename T>
void inverse(const array& in, array& out, bool tri, bool upper) {
  if constexpr (std::is_same_v<T, cfloat>) {
    throw std::runtime_error("[linalg::inv] complex64 is not supported.");
  } else {
    const char* op = tri ? "linalg::tri_inv" : "linalg::inv";
    const int n = in.shape(-1);
    const int64_t count = matrix_count(in), nn = int64_t{n} * n;
    const T* src = data_of<T>(in);
    T* dst = data_of<T>(out);
    for_each_matrix<std::vector<lapack_int>>(count, matrix_grain(n, n), [&](int64_t i, auto& ipiv) {
      T* a = dst + i * nn;
      std::copy(src + i * nn, src + (i + 1) * nn, a);
      if (tri) {
        const lapack_int info = trtri(upper ? 'U' : 'L', n, a);
        check_arguments(info, op);
        if (info > 0) fail(op, "The matrix is singular", i, count);
        zero_other_triangle(a, n, upper);
        return;
      }
      ipiv.resize(static_cast<size_t>(n));
      lapack_int info = getrf(n, n, a, ipiv.data());
      check_arguments(info, op);
      if (info > 0) fail(op, "The matrix is singular", i, count);
      info = getri(n, a, ipiv.data());
      check_arguments(info, op);
      if (info > 0) fail(op, "The matrix is singular", i, count);
    });
  }
}

template <typename T>
void cholesky(const array& in, array& out, bool upper) {
  if constexpr (std::is_same_v<T, cfloat>) {
    throw std::runtime_error("[linalg::cholesky] complex64 is not supported.");
  } else {
    const char* op = "linalg::cholesky";
    const int n = in.shape(-1);
    const int64_t count = matrix_count(in), nn = int64_t{n} * n;
    const T* src = data_of<T>(in);
    T* dst = data_of<T>(out);
    for_each_matrix<int>(count, matrix_grain(n, n), [&](int64_t i, int&) {
      T* a = dst + i * nn;
      std::copy(src + i * nn, src + (i + 1) * nn, a);
      const lapack_int info = potrf(upper ? 'U' : 'L', n, a);
      check_arguments(info, op);
      if (info > 0) fail(op, "The matrix is not positive definite", i, count);
      zero_other_triangle(a, n, upper);
    });
  }
}

template <typename T>
void qr(const array& in, array& out) {
  if constexpr (std::is_same_v<T, cfloat>) {
    throw std::runtime_error("[linalg::qr] complex64 is not supported.");
  } else {
    const char* op = "linalg::qr";
    const int m = in.shape(-2), n = in.shape(-1), k = std::min(m, n);
    const int64_t count = matrix_count(in), mn = int64_t{m} * n;
    const PackedLayout layout = qr_layout(m, n);
    const T* src = data_of<T>(in);
    T* dst = data_of<T>(out);
    struct Scratch {
      std::vector<T> a, tau;
    };
    for_each_matrix<Scratch>(count, matrix_grain(m, n), [&](int64_t i, Scratch& sc) {
      sc.a.assign(src + i * mn, src + (i + 1) * mn);
      sc.tau.resize(static_cast<size_t>(k));
      T* q = dst + i * layout.size + layout.offsets[0];
      T* r = dst + i * layout.size + layout.offsets[1];
      check_arguments(geqrf(m, n, sc.a.data(), sc.tau.data()), op);
      for (int row = 0; row < k; ++row) {
        for (int col = 0; col < n; ++col)
          r[int64_t{row} * n + col] = col >= row ? sc.a[int64_t{row} * n + col] : T(0);
      }
      check_arguments(orgqr(m, k, sc.a.data(), n, sc.tau.data()), op);
      for (int row = 0; row < m; ++row) std::copy_n(sc.a.data() + int64_t{row} * n, k, q + int64_t{row} * k);
    });
  }
}

// The identity in the row-major n x n matrix at `a`.
template <typename T>
void set_identity(T* a, int64_t n) {
  std::fill(a, a + n * n, T(0));
  for (int64_t d = 0; d < n; ++d) a[d * n + d] = T(1);
}

template <typename T>
void svd(const array& in, array& out, bool compute_uv) {
  using R = real_t<T>;
  const char* op = "linalg::svd";
  const int m = in.shape(-2), n = in.shape(-1), k = std::min(m, n);
  const int64_t mn = int64_t{m} * n;
  const PackedLayout layout = svd_layout(m, n);
  const int64_t count = batch_count(in);
  const T* src = data_of<T>(in);
  T* packed = data_of<T>(out);
  R* values = reinterpret_cast<R*>(packed);  // the real singular values alone, when !compute_uv
  struct Scratch {
    std::vector<T> a;
    std::vector<R> s;
  };
  for_each_matrix<Scratch>(count, matrix_grain(m, n), [&](int64_t i, Scratch& sc) {
    T* base = packed + i * layout.size;
    T* u = compute_uv ? base + layout.offsets[0] : nullptr;
    T* vt = compute_uv ? base + layout.offsets[2] : nullptr;
    if (k == 0) {  // nothing to decompose: no values, identity bases
      if (compute_uv) {
        set_identity(u, m);
        set_identity(vt, n);
      }
      return;
    }
    sc.a.assign(src + i * mn, src + (i + 1) * mn);
    sc.s.resize(static_cast<size_t>(k));
    const lapack_int info = gesdd(compute_uv ? 'A' : 'N', m, n, sc.a.data(), sc.s.data(), u, vt);
    check_arguments(info, op);
    if (info > 0) fail(op, "The SVD did not converge", i, count);
    if (!compute_uv) {
      std::copy(sc.s.begin(), sc.s.end(), values + i * k);
      return;
    }
    for (int j = 0; j < k; ++j) base[layout.offsets[1] + j] = T(sc.s[j]);
  });
}

template <typename T>
void eigh(const array& in, array& out, char uplo, bool vectors) {
  using R = real_t<T>;
  const char* op = vectors ? "linalg::eigh" : "linalg::eigvalsh";
  const int n = in.shape(-1);
  const int64_t nn = int64_t{n} * n;
  const int64_t count = matrix_count(in);
  const T* src = data_of<T>(in);
  T* packed = data_of<T>(out);
  R* values = reinterpret_cast<R*>(packed);  // the real eigenvalues alone, when !vectors
  struct Scratch {
    std::vector<T> a;
    std::vector<R> w;
  };
  for_each_matrix<Scratch>(count, matrix_grain(n, n), [&](int64_t i, Scratch& sc) {
    sc.a.assign(src + i * nn, src + (i + 1) * nn);
    sc.w.resize(static_cast<size_t>(n));
    const lapack_int info = heevd(vectors ? 'V' : 'N', uplo, n, sc.a.data(), sc.w.data());
    check_arguments(info, op);
    if (info > 0) fail(op, "The eigenvalue algorithm did not converge", i, count);
    if (!vectors) {
      std::copy(sc.w.begin(), sc.w.end(), values + i * n);
      return;
    }
    T* base = packed + i * (n + nn);
    for (int j = 0; j < n; ++j) base[j] = T(sc.w[j]);
    std::copy(sc.a.begin(), sc.a.end(), base + n);
  });
}

// The general eigenproblem: eigenvalues and right eigenvectors as complex64. A real input's
// conjugate pairs come from LAPACK as (re, im) column pairs, unpacked here.
template <typename T>
void eig(const array& in, array& out, bool vectors) {
  const char* op = vectors ? "linalg::eig" : "linalg::eigvals";
  const int n = in.shape(-1);
  const int64_t nn = int64_t{n} * n;
  const int64_t count = matrix_count(in);
  const T* src = data_of<T>(in);
  cfloat* dst = reinterpret_cast<cfloat*>(out.desc()->data_ptr);
  const int64_t stride = vectors ? n + nn : n;
  const char jobvr = vectors ? 'V' : 'N';
  const int ldvr = std::max(n, 1);
  if constexpr (std::is_same_v<T, cfloat>) {
    struct Scratch {
      std::vector<cfloat> a, w, vr;
    };
    for_each_matrix<Scratch>(count, matrix_grain(n, n), [&](int64_t i, Scratch& sc) {
      sc.a.assign(src + i * nn, src + (i + 1) * nn);
      sc.w.resize(static_cast<size_t>(n));
      sc.vr.resize(vectors ? static_cast<size_t>(nn) : 0);
      const lapack_int info = LAPACKE_cgeev(kRow, 'N', jobvr, n, sc.a.data(), n, sc.w.data(), nullptr, 1,
                                            vectors ? sc.vr.data() : nullptr, ldvr);
      check_arguments(info, op);
      if (info > 0) fail(op, "The eigenvalue algorithm did not converge", i, count);
      std::copy(sc.w.begin(), sc.w.end(), dst + i * stride);
      if (vectors) std::copy(sc.vr.begin(), sc.vr.end(), dst + i * stride + n);
    });
  } else {
    struct Scratch {
      std::vector<T> a, wr, wi, vr;
    };
    for_each_matrix<Scratch>(count, matrix_grain(n, n), [&](int64_t i, Scratch& sc) {
      sc.a.assign(src + i * nn, src + (i + 1) * nn);
      sc.wr.resize(static_cast<size_t>(n));
      sc.wi.resize(static_cast<size_t>(n));
      sc.vr.resize(vectors ? static_cast<size_t>(nn) : 0);
      T* vr = vectors ? sc.vr.data() : nullptr;
      lapack_int info;
      if constexpr (std::is_same_v<T, float>) {
        info = LAPACKE_sgeev(kRow, 'N', jobvr, n, sc.a.data(), n, sc.wr.data(), sc.wi.data(), nullptr, 1, vr,
                             ldvr);
      } else {
        info = LAPACKE_dgeev(kRow, 'N', jobvr, n, sc.a.data(), n, sc.wr.data(), sc.wi.data(), nullptr, 1, vr,
                             ldvr);
      }
      check_arguments(info, op);
      if (info > 0) fail(op, "The eigenvalue algorithm did not converge", i, count);
      cfloat* w = dst + i * stride;
      for (int j = 0; j < n; ++j) w[j] = cfloat(static_cast<float>(sc.wr[j]), static_cast<float>(sc.wi[j]));
      if (!vectors) return;
      cfloat* v = w + n;
      for (int j = 0; j < n; ++j) {
        if (sc.wi[j] == T(0) || j + 1 == n) {
          for (int r = 0; r < n; ++r)
            v[int64_t{r} * n + j] = cfloat(static_cast<float>(sc.vr[int64_t{r} * n + j]), 0.0f);
          continue;
        }
        // Columns j and j + 1 hold the real and imaginary parts of the pair's first vector.
        for (int r = 0; r < n; ++r) {
          const float re = static_cast<float>(sc.vr[int64_t{r} * n + j]);
          const float im = static_cast<float>(sc.vr[int64_t{r} * n + j + 1]);
          v[int64_t{r} * n + j] = cfloat(re, im);
          v[int64_t{r} * n + j + 1] = cfloat(re, -im);
        }
        ++j;
      }
    });
  }
}

template <typename T>
void luf(const array& in, array& out) {
  if constexpr (std::is_same_v<T, cfloat>) {
    throw std::runtime_error("[linalg::lu] complex64 is not supported.");
  } else {
    const char* op = "linalg::lu";
    const int m = in.shape(-2), n = in.shape(-1), k = std::min(m, n);
    const int64_t mn = int64_t{m} * n;
    constexpr int words = sizeof(T) / sizeof(uint32_t);
    const PackedLayout layout = lu_layout(m, n, words);
    const int64_t count = batch_count(in);
    const T* src = data_of<T>(in);
    uint32_t* dst = data_of<uint32_t>(out);
    struct Scratch {
      std::vector<T> a;
      std::vector<lapack_int> ipiv;
    };
    for_each_matrix<Scratch>(count, matrix_grain(m, n), [&](int64_t i, Scratch& sc) {
      uint32_t* base = dst + i * layout.size;
      uint32_t* pivots = base + layout.offsets[1];
      uint32_t* rows = base + layout.offsets[2];
      for (int r = 0; r < m; ++r) rows[r] = static_cast<uint32_t>(r);
      if (k == 0) return;
      sc.a.assign(src + i * mn, src + (i + 1) * mn);
      sc.ipiv.resize(static_cast<size_t>(k));
      // A zero pivot (info > 0) is a valid factorization of a singular matrix.
      check_arguments(getrf(m, n, sc.a.data(), sc.ipiv.data()), op);
      std::memcpy(base + layout.offsets[0], sc.a.data(), static_cast<size_t>(mn) * sizeof(T));
      for (int j = 0; j < k; ++j) pivots[j] = static_cast<uint32_t>(sc.ipiv[j] - 1);
      // a = l[rows] @ u: undo the row swaps, last first.
      for (int j = k - 1; j >= 0; --j) std::swap(rows[j], rows[pivots[j]]);
    });
  }
}

// a x = b by LU (gesv), or for a triangular a (`triangle`: whether it is the upper one) by
// substitution (trtrs).
template <typename T>
void solve(const array& a_in, const array& b_in, array& out, std::optional<bool> triangle) {
  const char* op = triangle ? "linalg::solve_triangular" : "linalg::solve";
  const int n = a_in.shape(-1), r = b_in.shape(-1);
  const int64_t nn = int64_t{n} * n, nr = int64_t{n} * r;
  const int64_t count = nr == 0 ? 0 : static_cast<int64_t>(out.size()) / nr;
  const T* a_src = data_of<T>(a_in);
  const T* b_src = data_of<T>(b_in);
  T* x = data_of<T>(out);
  struct Scratch {
    std::vector<T> a;
    std::vector<lapack_int> ipiv;
  };
  for_each_matrix<Scratch>(count, matrix_grain(n, std::max(n, r)), [&](int64_t i, Scratch& sc) {
    T* xi = x + i * nr;
    std::copy(b_src + i * nr, b_src + (i + 1) * nr, xi);
    lapack_int info;
    if (triangle) {
      info = trtrs(*triangle ? 'U' : 'L', n, r, a_src + i * nn, xi);
    } else {
      sc.a.assign(a_src + i * nn, a_src + (i + 1) * nn);
      sc.ipiv.resize(static_cast<size_t>(n));
      info = gesv(n, r, sc.a.data(), sc.ipiv.data(), xi);
    }
    check_arguments(info, op);
    if (info > 0) fail(op, "The matrix is singular", i, count);
  });
}

}  // namespace

void Inverse::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  dispatch_lapack(in.dtype(), [&]<typename T>() { inverse<T>(in, out, tri_, upper_); });
}

void Cholesky::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  dispatch_lapack(in.dtype(), [&]<typename T>() { cholesky<T>(in, out, upper_); });
}

void QRF::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  dispatch_lapack(in.dtype(), [&]<typename T>() { qr<T>(in, out); });
}

void SVD::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  dispatch_lapack(in.dtype(), [&]<typename T>() { svd<T>(in, out, compute_uv_); });
}

void Eigh::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  dispatch_lapack(in.dtype(), [&]<typename T>() { eigh<T>(in, out, uplo_, compute_vectors_); });
}

void Eig::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  dispatch_lapack(in.dtype(), [&]<typename T>() { eig<T>(in, out, compute_vectors_); });
}

void LUF::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  dispatch_lapack(in.dtype(), [&]<typename T>() { luf<T>(in, out); });
}

void Solve::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array a = cpu::row_contiguous(inputs[0]);
  const array b = cpu::row_contiguous(inputs[1]);
  dispatch_lapack(a.dtype(), [&]<typename T>() { solve<T>(a, b, out, std::nullopt); });
}

void SolveTriangular::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array a = cpu::row_contiguous(inputs[0]);
  const array b = cpu::row_contiguous(inputs[1]);
  dispatch_lapack(a.dtype(), [&]<typename T>() { solve<T>(a, b, out, upper_); });
}

}  // namespace braid
