// The fused updates behind Adam and AdamW (primitives/optimizer.h): three nodes per parameter
// instead of about fourteen, computing exactly what the unfused ops compute.
#pragma once

#include <atomic>
#include <optional>

#include "braid/array.h"

namespace braid::optimizers::detail {

/// On by default; the tests turn it off to compare the fused path with the ops it replaces.
std::atomic<bool>& fusion_enabled();

/// Whether the parameter, its gradient and the two moments can take the fused path: one
/// floating dtype and one shape.
bool fusable(const array& parameter, const array& gradient, const array& m, const array& v);

/// a x + b g (square: a x + b g^2), rounded as the ops would round it, in x's dtype.
array fused_moment(const array& x, const array& g, double a, double b, bool square);

/// p' - s m / (q + eps) with p' = p d (d given) and q = sqrt(v) c (c given); s, c and d are
/// 0-d arrays of p's dtype.
array fused_adam_step(const array& p, const array& m, const array& v, const array& s,
                      const std::optional<array>& c, const std::optional<array>& d, double eps);

}  // namespace braid::optimizers::detail
