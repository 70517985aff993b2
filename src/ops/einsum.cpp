// einsum as a composition of ops. Each operand first loses its repeated letters (diagonal) and
// the letters nothing else needs (sum); then the path's steps contract operands pairwise. A
// pair that sums a letter is one matmul over [batch..., M, K] x [batch..., K, N] (letters of
// both kept, letters of one kept, letters summed), so large contractions run as GEMMs; a
// pair that sums nothing, or has no GEMM for its dtype (integers, bool), is a broadcast
// multiply (and sum).
#include "braid/einsum.h"

#include <bit>
#include <limits>

#include "braid/ops.h"
#include "ops/einsum_plan.h"
#include "ops/utils.h"

namespace braid {

using detail::letter_index;
using detail::LetterSet;

namespace {

// An operand during the contraction: its value and a letter per dimension.
struct Term {
  array value;
  std::string letters;
};

bool has(LetterSet s, char c) { return s >> letter_index(c) & 1; }

// The letters of `t` that are in `s`, in t's order.
std::string letters_in(const Term& t, LetterSet s) {
  std::string out;
  for (char c : t.letters) {
    if (has(s, c)) out += c;
  }
  return out;
}

int32_t size_of(const Term& t, char c) { return t.value.shape()[static_cast<int>(t.letters.find(c))]; }

int64_t product(const Term& t, const std::string& letters) {
  int64_t n = 1;
  for (char c : letters) n *= size_of(t, c);
  return n;
}

// Repeated letters become one dimension: "iij" -> "ji" through diagonal(0, 1).
void take_diagonals(Term& t, const Stream& st) {
  for (;;) {
    size_t p = 0, q = std::string::npos;
    for (; p < t.letters.size() && q == std::string::npos; ++p) q = t.letters.find(t.letters[p], p + 1);
    if (q == std::string::npos) return;
    const char c = t.letters[--p];
    t.value = diagonal(t.value, 0, static_cast<int>(p), static_cast<int>(q), st);
    t.letters.erase(q, 1);
    t.letters.erase(p, 1);
    t.letters += c;
  }
}

void sum_out(Term& t, LetterSet drop, const Stream& st) {
  std::vector<int> axes;
  std::string kept;
  for (size_t i = 0; i < t.letters.size(); ++i) {
    if (has(drop, t.letters[i])) {
      axes.push_back(static_cast<int>(i));
    } else {
      kept += t.letters[i];
    }
  }
  if (axes.empty()) return;
  t.value = sum(t.value, axes, false, st);
  t.letters = kept;
}

void permute(Term& t, const std::string& order, const Stream& st) {
  if (order == t.letters) return;
  std::vector<int> axes;
  for (char c : order) axes.push_back(static_cast<int>(t.letters.find(c)));
  t.value = transpose(t.value, axes, st);
  t.letters = order;
}

// a [batch, a_only, summed] and b [batch, summed, b_only] as one (batched) matrix product.
Term matmul_pair(Term a, Term b, const std::string& batch, const std::string& summed,
                 const std::string& a_only, const std::string& b_only, const Stream& st) {
  permute(a, batch + a_only + summed, st);
  permute(b, batch + summed + b_only, st);
  const int nb = static_cast<int>(batch.size());
  const auto m = static_cast<int32_t>(product(a, a_only)), k = static_cast<int32_t>(product(a, summed));
  const auto n = static_cast<int32_t>(product(b, b_only));
  Shape a_shape(a.value.shape().begin(), a.value.shape().begin() + nb);
  Shape b_shape(b.value.shape().begin(), b.value.shape().begin() + nb);
  a_shape.push_back(m);
  a_shape.push_back(k);
  b_shape.push_back(k);
  b_shape.push_back(n);
  array r = matmul(reshape(a.value, a_shape, st), reshape(b.value, b_shape, st), st);
  Shape out(r.shape().begin(), r.shape().begin() + nb);
  for (char c : a_only) out.push_back(size_of(a, c));
  for (char c : b_only) out.push_back(size_of(b, c));
  return {reshape(r, out, st), batch + a_only + b_only};
}

// The same product by broadcasting: [batch, a_only, 1.., summed] * [batch, 1.., b_only, summed].
Term multiply_pair(Term a, Term b, const std::string& batch, const std::string& summed,
                   const std::string& a_only, const std::string& b_only, const Stream& st) {
  permute(a, batch + a_only + summed, st);
  permute(b, batch + b_only + summed, st);
  auto unit_axes = [](size_t from, size_t count) {
    std::vector<int> axes(count);
    for (size_t i = 0; i < count; ++i) axes[i] = static_cast<int>(from + i);
    return axes;
  };
  array x = a.value, y = b.value;
  if (!b_only.empty()) x = expand_dims(x, unit_axes(batch.size() + a_only.size(), b_only.size()), st);
  if (!a_only.empty()) y = expand_dims(y, unit_axes(batch.size(), a_only.size()), st);
  array r = multiply(x, y, st);
  if (!summed.empty()) r = sum(r, unit_axes(r.ndim() - summed.size(), summed.size()), false, st);
  return {r, batch + a_only + b_only};
}

// a and b contracted into one term holding the letters of `keep` that they have.
Term contract_pair(Term a, Term b, LetterSet keep, const Stream& st) {
  const LetterSet sa = detail::letter_set(a.letters), sb = detail::letter_set(b.letters);
  LetterSet summed = sa & sb & ~keep;
  // A summed letter of size 1 on one side only broadcasts: sum each side over it on its own.
  LetterSet broadcast = 0;
  for (char c : letters_in(a, summed)) {
    if (size_of(a, c) != size_of(b, c)) broadcast |= LetterSet{1} << letter_index(c);
  }
  sum_out(a, (sa & ~sb & ~keep) | broadcast, st);
  sum_out(b, (sb & ~sa & ~keep) | broadcast, st);
  summed &= ~broadcast;

  const std::string batch = letters_in(a, sa & sb & keep), sum_letters = letters_in(a, summed);
  const std::string a_only = letters_in(a, sa & ~sb), b_only = letters_in(b, sb & ~sa);
  constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
  const bool gemm = summed != 0 && issubdtype(a.value.dtype(), Dtype::Category::inexact) &&
                    product(a, a_only) <= kMaxDim && product(a, sum_letters) <= kMaxDim &&
                    product(b, b_only) <= kMaxDim;
  return gemm ? matmul_pair(std::move(a), std::move(b), batch, sum_letters, a_only, b_only, st)
              : multiply_pair(std::move(a), std::move(b), batch, sum_letters, a_only, b_only, st);
}

}  // namespace

std::pair<std::vector<std::vector<int>>, std::string> einsum_path(const std::string& subscripts,
                                                                  const std::vector<array>& operands) {
  const detail::EinsumSpec spec = detail::parse_einsum(subscripts, operands, "einsum_path");
  const detail::EinsumPath path = detail::einsum_greedy_path(spec);
  std::vector<std::vector<int>> positions;
  for (const auto& step : path.steps) positions.push_back(step.positions);
  return {std::move(positions), detail::describe_einsum_path(spec, path)};
}

array einsum(const std::string& subscripts, const std::vector<array>& operands, StreamOrDevice s) {
  const detail::EinsumSpec spec = detail::parse_einsum(subscripts, operands, "einsum");
  const detail::EinsumPath path = detail::einsum_greedy_path(spec);
  const Stream st = detail::op_stream(std::move(s), "einsum");
  Dtype dtype = operands[0].dtype();
  for (const array& a : operands) dtype = promote_types(dtype, a.dtype());

  const LetterSet output = detail::letter_set(spec.output);
  std::vector<Term> live;
  for (size_t i = 0; i < operands.size(); ++i) {
    live.push_back({astype(operands[i], dtype, st), spec.inputs[i]});
  }
  for (size_t i = 0; i < live.size(); ++i) {
    take_diagonals(live[i], st);
    LetterSet elsewhere = output;
    for (size_t j = 0; j < live.size(); ++j) {
      if (j != i) elsewhere |= detail::letter_set(spec.inputs[j]);
    }
    sum_out(live[i], ~elsewhere, st);
  }

  for (const auto& step : path.steps) {
    std::vector<Term> group;
    for (auto p = step.positions.rbegin(); p != step.positions.rend(); ++p) {
      group.insert(group.begin(), std::move(live[*p]));
      live.erase(live.begin() + *p);
    }
    // A step of more than two operands (the greedy search's fallback) still goes pair by pair,
    // which never holds more than multiplying them all at once would.
    Term acc = std::move(group[0]);
    for (size_t g = 1; g < group.size(); ++g) {
      LetterSet keep = output;
      for (const Term& t : live) keep |= detail::letter_set(t.letters);
      for (size_t h = g + 1; h < group.size(); ++h) keep |= detail::letter_set(group[h].letters);
      acc = contract_pair(std::move(acc), std::move(group[g]), keep, st);
    }
    live.push_back(std::move(acc));
  }

  Term& result = live.front();
  sum_out(result, ~output, st);
  permute(result, spec.output, st);
  return result.value;
}

}  // namespace braid
