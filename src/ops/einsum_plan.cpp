// einsum's planning: subscripts parsed and checked against the operands' shapes, and the greedy
// contraction path. Sizes and FLOP counts are doubles: exact up to 2^53, far beyond any array,
// and they never overflow where opt_einsum's Python integers would not.
#include "ops/einsum_plan.h"

#include <algorithm>
#include <bit>
#include <iomanip>
#include <sstream>

#include "ops/utils.h"

namespace braid::detail {

int letter_index(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

LetterSet letter_set(const std::string& letters) {
  LetterSet s = 0;
  for (char c : letters) s |= LetterSet{1} << letter_index(c);
  return s;
}

namespace {

char letter_of(int index) { return static_cast<char>(index < 26 ? 'a' + index : 'A' + (index - 26)); }

// A subscript's letters on either side of its "..." (if it has one).
struct Term {
  std::string before, after;
  bool ellipsis = false;
  size_t letters() const { return before.size() + after.size(); }
};

Term split_term(const std::string& term, const char* op) {
  Term t;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0) {
        throw_invalid(op, "Subscript '" + term + "' has a '.' outside an ellipsis ('...').");
      }
      if (t.ellipsis) throw_invalid(op, "Only one ellipsis per subscript is allowed, got '" + term + "'.");
      t.ellipsis = true;
      i += 2;
    } else if (letter_index(c) < 0) {
      throw_invalid(op, std::string("Subscripts must be letters (a-z, A-Z), got '") + c + "'.");
    } else {
      (t.ellipsis ? t.after : t.before) += c;
    }
  }
  return t;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == ',') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;  // an empty part is a 0-d operand: ",i->i" has two
}

// NumPy's implicit output: the ellipsis's letters, then the letters written once, in ASCII
// order (upper case first).
std::string implicit_output(const std::vector<Term>& terms, std::string* written) {
  std::array<int, 128> count{};
  bool ellipsis = false;
  for (const Term& t : terms) {
    ellipsis = ellipsis || t.ellipsis;
    for (char c : t.before + t.after) ++count[static_cast<unsigned char>(c)];
  }
  std::string once;
  for (int c = 0; c < 128; ++c) {
    if (count[c] == 1) once += static_cast<char>(c);
  }
  *written = (ellipsis ? "..." : "") + once;
  return once;
}

// Each letter's size; a letter repeated in one operand must have one size there, and sizes
// across operands broadcast (1 against anything).
void letter_sizes(EinsumSpec& spec, const std::vector<array>& operands, const char* op) {
  std::array<int64_t, kLetterCount> seen;
  spec.size.fill(-1);
  for (size_t i = 0; i < operands.size(); ++i) {
    seen.fill(-1);
    const std::string& in = spec.inputs[i];
    for (size_t j = 0; j < in.size(); ++j) {
      const int k = letter_index(in[j]);
      const int64_t d = operands[i].shape()[j];
      if (seen[k] >= 0 && seen[k] != d) {
        throw_invalid(op, "Dimensions of repeated index '" + std::string(1, in[j]) + "' in operand " +
                              std::to_string(i) + " differ (" + std::to_string(seen[k]) +
                              " != " + std::to_string(d) + ").");
      }
      seen[k] = d;
      int64_t& size = spec.size[k];
      if (size < 0 || size == 1) {
        size = d;
      } else if (d != size && d != 1) {
        throw_invalid(op, "Cannot broadcast dimension " + std::to_string(j) + " of operand " +
                              std::to_string(i) + " with shape " + shape_str(operands[i].shape()) +
                              " (index '" + std::string(1, in[j]) + "') to size " + std::to_string(size) +
                              ".");
      }
    }
  }
}

}  // namespace

EinsumSpec parse_einsum(const std::string& subscripts, const std::vector<array>& operands, const char* op) {
  if (operands.empty()) throw_invalid(op, "At least one operand is required.");
  std::string eq;
  for (char c : subscripts) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  const std::string rhs = arrow == std::string::npos ? "" : eq.substr(arrow + 2);
  if ((lhs + rhs).find_first_of("->") != std::string::npos) {
    throw_invalid(op, "Subscripts may contain one '->' and no other '-' or '>', got '" + subscripts + "'.");
  }
  const std::vector<std::string> written = split_commas(lhs);
  if (written.size() != operands.size()) {
    throw_invalid(op, "Number of operands, " + std::to_string(operands.size()) +
                          ", does not match number of input subscripts, " + std::to_string(written.size()) +
                          ".");
  }

  // Each operand's ellipsis covers the dimensions its letters leave; all of them align on the
  // right, as broadcasting does, and take letters the subscripts do not use.
  std::vector<Term> terms;
  std::vector<size_t> ellipsis_dims;
  size_t longest = 0;
  for (size_t i = 0; i < written.size(); ++i) {
    terms.push_back(split_term(written[i], op));
    const Term& t = terms.back();
    const size_t nd = operands[i].ndim();
    if (t.ellipsis ? t.letters() > nd : t.letters() != nd) {
      throw_invalid(op, "Operand " + std::to_string(i) + " with shape " + shape_str(operands[i].shape()) +
                            " has " + std::to_string(nd) + " dimensions, which subscript '" + written[i] +
                            "' cannot name.");
    }
    ellipsis_dims.push_back(t.ellipsis ? nd - t.letters() : 0);
    longest = std::max(longest, ellipsis_dims.back());
  }
  LetterSet used = 0;
  for (char c : eq) {
    if (letter_index(c) >= 0) used |= LetterSet{1} << letter_index(c);
  }
  std::string spare;
  for (int k = 0; k < kLetterCount; ++k) {
    if (!(used >> k & 1)) spare += letter_of(k);
  }
  if (spare.size() < longest) {
    throw_invalid(op, "The ellipsis spans " + std::to_string(longest) + " dimensions but only " +
                          std::to_string(spare.size()) + " letters are left to name them.");
  }
  const std::string ellipsis = spare.substr(0, longest);

  EinsumSpec spec;
  for (size_t i = 0; i < terms.size(); ++i) {
    spec.inputs.push_back(terms[i].before + ellipsis.substr(longest - ellipsis_dims[i]) + terms[i].after);
  }
  std::string written_output = rhs;
  if (arrow == std::string::npos) {
    spec.output = ellipsis + implicit_output(terms, &written_output);
  } else {
    const Term out = split_term(rhs, op);
    spec.output = out.before + (out.ellipsis ? ellipsis : "") + out.after;
  }
  spec.equation = lhs + "->" + written_output;

  LetterSet inputs = 0;
  for (const std::string& in : spec.inputs) inputs |= letter_set(in);
  for (size_t i = 0; i < spec.output.size(); ++i) {
    const char c = spec.output[i];
    if (spec.output.find(c) != i) throw_invalid(op, std::string("Repeated index '") + c + "' in the output.");
    if (!(inputs >> letter_index(c) & 1)) {
      throw_invalid(op, std::string("Output index '") + c + "' does not appear in any input subscript.");
    }
  }
  letter_sizes(spec, operands, op);
  return spec;
}

namespace {

using Sizes = std::array<int64_t, kLetterCount>;

double set_size(LetterSet s, const Sizes& size) {
  double n = 1;
  for (int k = 0; k < kLetterCount; ++k) {
    if (s >> k & 1) n *= static_cast<double>(size[k]);
  }
  return n;
}

double term_size(const std::string& letters, const Sizes& size) {
  double n = 1;
  for (char c : letters) n *= static_cast<double>(size[letter_index(c)]);
  return n;
}

// opt_einsum's FLOP count: one multiply per extra term, one add if anything is summed.
double flop_count(LetterSet letters, bool sums, size_t terms, const Sizes& size) {
  const double ops = static_cast<double>(std::max<size_t>(1, terms - 1)) + (sums ? 1 : 0);
  return set_size(letters, size) * ops;
}

LetterSet union_of(const std::vector<LetterSet>& sets) {
  LetterSet u = 0;
  for (LetterSet s : sets) u |= s;
  return u;
}

// A pair the greedy search may contract next, sorted by (-removed, cost).
struct Candidate {
  double removed, cost;
  int x, y;
  LetterSet result;
};

}  // namespace

EinsumPath einsum_greedy_path(const EinsumSpec& spec) {
  const Sizes& size = spec.size;
  const LetterSet out = letter_set(spec.output);
  std::vector<LetterSet> live;
  for (const std::string& in : spec.inputs) live.push_back(letter_set(in));

  EinsumPath path;
  const LetterSet all = union_of(live);
  path.naive_cost = flop_count(all, (all & ~out) != 0, live.size(), size);
  path.naive_scaling = std::popcount(all);
  auto everything_at_once = [&] {
    EinsumStep step{{}, out};
    for (size_t i = 0; i < live.size(); ++i) step.positions.push_back(static_cast<int>(i));
    path.steps.push_back(std::move(step));
  };
  if (live.size() <= 2) {
    everything_at_once();
    path.optimized_cost = path.naive_cost;
    path.optimized_scaling = path.naive_scaling;
    return path;
  }

  double memory_limit = term_size(spec.output, size);
  for (const std::string& in : spec.inputs) memory_limit = std::max(memory_limit, term_size(in, size));
  std::vector<Candidate> candidates;
  auto consider = [&](int x, int y) {
    const LetterSet joined = live[x] | live[y];
    LetterSet needed = out;
    for (size_t i = 0; i < live.size(); ++i) {
      if (static_cast<int>(i) != x && static_cast<int>(i) != y) needed |= live[i];
    }
    const LetterSet result = joined & needed;
    const double result_size = set_size(result, size);
    if (result_size > memory_limit) return;
    const double cost = flop_count(joined, (joined & ~result) != 0, 2, size);
    if (path.optimized_cost + cost > path.naive_cost) return;
    const double removed = set_size(live[x], size) + set_size(live[y], size) - result_size;
    candidates.push_back({removed, cost, x, y, result});
  };
  auto consider_all = [&](bool outer_products) {
    for (int x = 0; x < static_cast<int>(live.size()); ++x) {
      for (int y = x + 1; y < static_cast<int>(live.size()); ++y) {
        if (outer_products || (live[x] & live[y])) consider(x, y);
      }
    }
  };

  consider_all(false);
  while (live.size() > 1) {
    if (candidates.empty()) consider_all(true);
    if (candidates.empty()) {
      const LetterSet rest = union_of(live);
      path.optimized_cost += flop_count(rest, (rest & ~out) != 0, live.size(), size);
      path.optimized_scaling = std::max(path.optimized_scaling, std::popcount(rest));
      everything_at_once();
      break;
    }
    // The first of the best, so that ties go as in opt_einsum.
    const Candidate best =
        *std::min_element(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
          return a.removed > b.removed || (a.removed == b.removed && a.cost < b.cost);
        });
    path.steps.push_back({{best.x, best.y}, best.result});
    path.optimized_cost += best.cost;
    path.optimized_scaling = std::max(path.optimized_scaling, std::popcount(live[best.x] | live[best.y]));

    // The pair leaves the list and its result joins the end; candidates made of other terms
    // stay (with their costs as first computed, as opt_einsum keeps them) and are renumbered.
    live.erase(live.begin() + best.y);
    live.erase(live.begin() + best.x);
    live.push_back(best.result);
    std::vector<Candidate> kept;
    for (Candidate c : candidates) {
      if (c.x == best.x || c.x == best.y || c.y == best.x || c.y == best.y) continue;
      c.x -= (c.x > best.x) + (c.x > best.y);
      c.y -= (c.y > best.x) + (c.y > best.y);
      kept.push_back(c);
    }
    candidates = std::move(kept);
    const int newest = static_cast<int>(live.size()) - 1;
    for (int x = 0; x < newest; ++x) {
      if (live[x] & live[newest]) consider(x, newest);
    }
  }
  return path;
}

namespace {

std::string join(const std::vector<std::string>& terms) {
  std::string s;
  for (size_t i = 0; i < terms.size(); ++i) s += (i ? "," : "") + terms[i];
  return s;
}

std::string count_str(double n) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(0) << n;
  return s.str();
}

}  // namespace

std::string describe_einsum_path(const EinsumSpec& spec, const EinsumPath& path) {
  // Replays the path on the subscripts: each step's terms, and what is left after it.
  std::vector<std::string> live = spec.inputs;
  std::ostringstream steps;
  double largest = 0;
  for (size_t n = 0; n < path.steps.size(); ++n) {
    const EinsumStep& step = path.steps[n];
    std::vector<std::string> terms;
    LetterSet joined = 0;
    for (int p : step.positions) {
      terms.push_back(live[p]);
      joined |= letter_set(live[p]);
    }
    std::string result = spec.output;
    if (n + 1 < path.steps.size()) {
      result.clear();
      for (const std::string& t : terms) {
        for (char c : t) {
          if ((step.result >> letter_index(c) & 1) && result.find(c) == std::string::npos) result += c;
        }
      }
    }
    largest = std::max(largest, set_size(step.result, spec.size));
    for (auto p = step.positions.rbegin(); p != step.positions.rend(); ++p) live.erase(live.begin() + *p);
    live.push_back(result);
    steps << "\n"
          << std::setw(4) << std::popcount(joined) << "    " << std::setw(24) << join(terms) + "->" + result
          << " " << std::setw(40) << join(live) + "->" + spec.output;
  }
  const double speedup = path.optimized_cost > 0 ? path.naive_cost / path.optimized_cost : 1.0;
  std::ostringstream s;
  s << "  Complete contraction:  " << spec.equation << "\n"
    << "         Naive scaling:  " << path.naive_scaling << "\n"
    << "     Optimized scaling:  " << path.optimized_scaling << "\n"
    << "      Naive FLOP count:  " << count_str(path.naive_cost) << "\n"
    << "  Optimized FLOP count:  " << count_str(path.optimized_cost) << "\n"
    << "   Theoretical speedup:  " << std::fixed << std::setprecision(3) << speedup << "\n"
    << "  Largest intermediate:  " << count_str(largest) << " elements\n"
    << std::string(74, '-') << "\n"
    << "scaling " << std::setw(24) << "current"
    << " " << std::setw(40) << "remaining"
    << "\n"
    << std::string(74, '-') << steps.str() << "\n";
  return s.str();
}

}  // namespace braid::detail
