// Helpers the primitives' derivatives share.
#pragma once

#include <vector>

#include "braid/array.h"
#include "braid/ops.h"

namespace braid::detail {

/// `g` summed down to `shape`, which broadcasts to g's shape (the adjoint of broadcasting).
array unbroadcast(const array& g, const Shape& shape, const Stream& s);

/// A scalar of `like`'s dtype, so that it never promotes the expression it enters.
inline array scalar_like(double v, const array& like) { return array(v, like.dtype()); }

/// zeros_like for each input in `argnums`: the derivative of an integer-valued primitive.
std::vector<array> zero_grads(const std::vector<array>& primals, const std::vector<int>& argnums,
                              const Stream& s);

}  // namespace braid::detail
