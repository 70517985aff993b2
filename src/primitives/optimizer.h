// The optimizers' fused element-wise updates. Adam's step written with ops is about fourteen
// passes over every parameter (each product, sum, square root and quotient its own kernel);
// these primitives do it in three: the two moments, then the parameter. Each computes exactly
// what the ops would: every intermediate is rounded to the dtype as the op producing it would
// round it, in the same order, so a fused step equals the unfused one bit for bit.
#pragma once

#include "primitives/primitive_base.h"

namespace braid {

/// One fused optimizer update; the inputs and the formula depend on the kind (T is the
/// dtype of every input, round(x) rounds to T, and the coefficients a, b, eps are T's values):
///   moment:        (x, g)                   -> round(round(a x) + round(b g))
///   moment_square: (x, g)                   -> round(round(a x) + round(b round(g g)))
///   adam:          (p, m, v, s[, c][, d])   -> round(p' - round(round(s m) / round(q + eps)))
///                  with p' = round(p d) when d is given, else p; q = round(round(sqrt(v)) c)
///                  when c is given, else round(sqrt(v)); s, c and d are 0-d arrays.
/// Every input has the output's shape (except the 0-d ones) and its floating dtype.
class OptimizerUpdate : public UnaryPrimitive {
 public:
  enum class Kind { moment, moment_square, adam };
  OptimizerUpdate(Stream s, Kind kind, double a, double b, double eps, bool has_c, bool has_d)
      : UnaryPrimitive(std::move(s)), kind_(kind), a_(a), b_(b), eps_(eps), has_c_(has_c), has_d_(has_d) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "OptimizerUpdate"; }
  Kind kind() const { return kind_; }
  double a() const { return a_; }
  double b() const { return b_; }
  double eps() const { return eps_; }
  bool has_c() const { return has_c_; }
  bool has_d() const { return has_d_; }

 private:
  Kind kind_;
  double a_, b_, eps_;
  bool has_c_, has_d_;
};

#define BRAID_OPTIMIZER_PRIMITIVES(X) X(OptimizerUpdate)

}  // namespace braid
