// The LAPACK-backed primitives of braid::linalg (CPU only, as MLX's: the ops refuse GPU
// streams, and eval_gpu says so if one is reached anyway).
//
// A node has one output, so a factorization with several results writes them into one packed
// array: its input's batch axes, then one axis holding each result's elements in turn
// (PackedLayout). The ops slice and reshape the results out of it; gradients flow back through
// those views into the packed cotangent, which the primitive's vjp unpacks the same way.
// Every primitive here works on the last two axes of input 0 and batches over the others.
#pragma once

#include <cstdint>
#include <vector>

#include "braid/array.h"
#include "primitives/primitive_base.h"

namespace braid {

/// Where each result of a packed factorization lies: element offsets along the packed axis and
/// each result's trailing shape (after the batch axes).
struct PackedLayout {
  std::vector<int64_t> offsets;
  std::vector<Shape> shapes;
  int64_t size = 0;  // of the packed axis

  void add(Shape shape);
  /// Result i of `packed` ([batch..., size]): its slice of the packed axis, reshaped to the
  /// batch axes followed by shapes[i].
  array unpack(const array& packed, size_t i, const Stream& s) const;
  /// The inverse: parts ([batch..., shapes[i]...], one per result) as one packed array.
  array pack(const std::vector<array>& parts, const Stream& s) const;
};

/// The results of a QR factorization of [m, n]: q [m, k], r [k, n] (k = min(m, n)).
PackedLayout qr_layout(int m, int n);
/// The results of an SVD of [m, n]: u [m, m], s [k], vt [n, n].
PackedLayout svd_layout(int m, int n);
/// The results of an eigendecomposition of [n, n]: eigenvalues [n], eigenvectors [n, n].
PackedLayout eig_layout(int n);
/// The results of an LU factorization of [m, n] in uint32 words: the factors' bytes [m * n *
/// words_per_element], pivots [k], row permutation [m].
PackedLayout lu_layout(int m, int n, int words_per_element);

/// The inverse of each square matrix (tri: of its lower or upper triangle, the other triangle
/// of the result zero). Input and output float32 or float64.
class Inverse : public UnaryPrimitive {
 public:
  Inverse(Stream s, bool tri, bool upper) : UnaryPrimitive(std::move(s)), tri_(tri), upper_(upper) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Inverse"; }
  bool tri() const { return tri_; }
  bool upper() const { return upper_; }

 private:
  bool tri_;
  bool upper_;
};

/// The Cholesky factor (lower, or upper when `upper`) of each symmetric positive-definite
/// matrix, read from that triangle; the other triangle of the result is zero.
class Cholesky : public UnaryPrimitive {
 public:
  Cholesky(Stream s, bool upper) : UnaryPrimitive(std::move(s)), upper_(upper) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Cholesky"; }
  bool upper() const { return upper_; }

 private:
  bool upper_;
};

/// The reduced QR factorization, packed as qr_layout, in the input's dtype.
class QRF : public UnaryPrimitive {
 public:
  explicit QRF(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "QRF"; }
};

/// The SVD: packed as svd_layout when compute_uv (complex64 inputs: s stored as complex with a
/// zero imaginary part), otherwise the singular values alone (real). Descending values.
class SVD : public UnaryPrimitive {
 public:
  SVD(Stream s, bool compute_uv) : UnaryPrimitive(std::move(s)), compute_uv_(compute_uv) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "SVD"; }
  bool compute_uv() const { return compute_uv_; }

 private:
  bool compute_uv_;
};

/// The symmetric (Hermitian) eigendecomposition from the lower ('L') or upper ('U') triangle:
/// packed as eig_layout when compute_vectors (complex64: eigenvalues stored as complex),
/// otherwise the eigenvalues alone (real). Ascending values.
class Eigh : public UnaryPrimitive {
 public:
  Eigh(Stream s, char uplo, bool compute_vectors)
      : UnaryPrimitive(std::move(s)), uplo_(uplo), compute_vectors_(compute_vectors) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Eigh"; }
  char uplo() const { return uplo_; }
  bool compute_vectors() const { return compute_vectors_; }

 private:
  char uplo_;
  bool compute_vectors_;
};

/// The general eigendecomposition, complex64: packed as eig_layout when compute_vectors,
/// otherwise the eigenvalues alone. Not differentiable (as in MLX).
class Eig : public UnaryPrimitive {
 public:
  Eig(Stream s, bool compute_vectors) : UnaryPrimitive(std::move(s)), compute_vectors_(compute_vectors) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Eig"; }
  bool compute_vectors() const { return compute_vectors_; }

 private:
  bool compute_vectors_;
};

/// The LU factorization with partial pivoting, uint32 words packed as lu_layout (the factors'
/// bytes in the input's dtype, then 0-based pivots and the row permutation). Not
/// differentiable (as in MLX).
class LUF : public UnaryPrimitive {
 public:
  explicit LUF(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "LUF"; }
};

/// x with a x = b: inputs a [..., n, n] and b [..., n, r] with the same batch axes and dtype
/// (float32 or float64).
class Solve : public UnaryPrimitive {
 public:
  explicit Solve(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Solve"; }
};

/// Solve for a lower (upper) triangular a, read from that triangle.
class SolveTriangular : public UnaryPrimitive {
 public:
  SolveTriangular(Stream s, bool upper) : UnaryPrimitive(std::move(s)), upper_(upper) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "SolveTriangular"; }
  bool upper() const { return upper_; }

 private:
  bool upper_;
};

/// Every primitive of this family. They have no GPU kernels: their eval_gpu (defined with the
/// family, not by a backend) throws, so the no_gpu stub leaves them out.
#define BRAID_FACTORIZATION_PRIMITIVES(X) \
  X(Inverse) X(Cholesky) X(QRF) X(SVD) X(Eigh) X(Eig) X(LUF) X(Solve) X(SolveTriangular)

}  // namespace braid
