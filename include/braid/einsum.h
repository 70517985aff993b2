// Einstein summation with MLX's mlx/einsum.h signatures and NumPy's semantics: implicit and
// explicit output ("->"), "..." broadcasting, repeated letters within an operand (diagonals),
// letters summed out, size-1 dimensions broadcast, any number of operands. Operands are
// contracted pairwise in the order of a greedy path (opt_einsum's, as MLX and NumPy choose it),
// each pair through matmul when it sums a letter, so einsum is a composition of ops:
// differentiable, vectorizable and on every device.
//
// Both functions validate the subscripts against the operands and throw
// std::invalid_argument("[einsum] ...") / ("[einsum_path] ...") before any node exists. Like
// the ops, both are thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid {

/// The contraction order einsum takes: one entry per step naming the positions it combines in
/// the list of operands still to combine (each step's result joins that list at its end), and
/// a readable description (FLOP counts and scaling, naive against the path, then each step).
std::pair<std::vector<std::vector<int>>, std::string> einsum_path(const std::string& subscripts,
                                                                  const std::vector<array>& operands);

/// The Einstein summation of `operands` described by `subscripts` (e.g. "ij,jk->ik"), in the
/// operands' promoted dtype (a sum over integers widens as sum does). Letters are a-z and A-Z.
array einsum(const std::string& subscripts, const std::vector<array>& operands, StreamOrDevice s = {});

}  // namespace braid
