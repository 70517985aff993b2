// The planning half of einsum, which sees only shapes: parsing and validating the subscripts,
// and choosing the greedy contraction path (with its description for einsum_path).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "braid/array.h"

namespace braid::detail {

/// A set of subscript letters: bit k for letter k ('a'..'z' are 0..25, 'A'..'Z' 26..51).
using LetterSet = uint64_t;
inline constexpr int kLetterCount = 52;

/// The letter's bit number, or -1 for anything else.
int letter_index(char c);
LetterSet letter_set(const std::string& letters);

/// Subscripts checked against the operands, every "..." replaced by letters of its own.
struct EinsumSpec {
  std::vector<std::string> inputs;           // one per operand, a letter per dimension
  std::string output;                        // no letter twice
  std::array<int64_t, kLetterCount> size{};  // each letter's size, size-1 dimensions broadcast
  std::string equation;                      // as written, spaces removed, with "->output" when implicit
};

/// Parses `subscripts` for `operands`; errors throw std::invalid_argument("[op] ...").
EinsumSpec parse_einsum(const std::string& subscripts, const std::vector<array>& operands, const char* op);

/// One step of a path: the positions it combines in the list of operands still to combine
/// (ascending); its result, with the letters `result` (a set), joins the list at its end.
struct EinsumStep {
  std::vector<int> positions;
  LetterSet result = 0;
};

struct EinsumPath {
  std::vector<EinsumStep> steps;
  double naive_cost = 0, optimized_cost = 0;     // FLOPs as opt_einsum counts them
  int naive_scaling = 0, optimized_scaling = 0;  // letters in the largest single contraction
};

/// The path MLX's einsum_path gives: all operands in one step for one or two of them, else
/// opt_einsum's greedy choice (the pair removing the most elements, then the cheapest; outer
/// products only when nothing else is left; nothing larger than the largest operand or output,
/// nothing costing more than the naive sum), falling back to one step for what remains.
EinsumPath einsum_greedy_path(const EinsumSpec& spec);

/// einsum_path's description of a path.
std::string describe_einsum_path(const EinsumSpec& spec, const EinsumPath& path);

}  // namespace braid::detail
