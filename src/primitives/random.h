// Random bits (threefry2x32, see src/backend/common/threefry.h) and the covariance factor of
// multivariate_normal.
#pragma once

#include <vector>

#include "braid/array.h"
#include "primitives/primitive_base.h"

namespace braid {

/// Random bits of each key of input 0 (uint32 [..., 2]; the op passes one key of shape {2}):
/// out is uint32, uint16 or uint8 (width 4, 2 or 1) and each key fills out.size() / num_keys
/// consecutive elements in MLX's layout. Integer-valued: zero cotangents and tangents.
class RandomBits : public UnaryPrimitive {
 public:
  RandomBits(Stream s, Shape shape, int width)
      : UnaryPrimitive(std::move(s)), shape_(std::move(shape)), width_(width) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "RandomBits"; }
  const Shape& shape() const { return shape_; }
  int width() const { return width_; }

 private:
  Shape shape_;
  int width_;
};

/// U sqrt(S) V^T of every matrix [..., n, n] of a float32 input, from its singular value
/// decomposition U S V^T (computed in double by one-sided Jacobi), as float32. For a symmetric
/// positive semi-definite matrix this is its unique symmetric square root. CPU only: the op
/// always builds it on a CPU stream.
class SvdSquareRoot : public UnaryPrimitive {
 public:
  explicit SvdSquareRoot(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "SvdSquareRoot"; }
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_RANDOM_PRIMITIVES(X) X(RandomBits) X(SvdSquareRoot)

}  // namespace braid
