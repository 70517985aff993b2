// Derivatives of gather, scatter and the sorts. Index inputs are integers: no gradient.
#include <stdexcept>
#include <string>

#include "primitives/grad_utils.h"
#include "primitives/indexing.h"

namespace braid {

namespace {

std::vector<array> index_inputs(const std::vector<array>& primals, size_t first, size_t count) {
  return std::vector<array>(primals.begin() + first, primals.begin() + first + count);
}

// The slice of each update: its trailing a.ndim() dimensions.
Shape update_slice(const array& updates, size_t ndim) {
  return Shape(updates.shape().end() - ndim, updates.shape().end());
}

// What a scatter product multiplies into a: p, the product of every update at each position
// (1 where none lands), and for each update, the product of the others at its position
// (exact with zeros: from the product of the non-zero ones and the count of zeros).
struct ProdParts {
  array p;
  array others;
};

ProdParts scatter_prod_parts(const array& a, const std::vector<array>& idx, const array& upd,
                             const std::vector<int>& axes, const Stream& s) {
  const Shape slice = update_slice(upd, a.ndim());
  auto at_updates = [&](const array& x) { return reshape(gather(x, idx, axes, slice, s), upd.shape(), s); };
  const array zero = zeros_like(upd, s), one = ones_like(upd, s);
  const array is_zero = equal(upd, zero, s);
  array p = scatter_prod(ones_like(a, s), idx, upd, axes, s);
  array nonzero_p = at_updates(scatter_prod(ones_like(a, s), idx, where(is_zero, one, upd, s), axes, s));
  array zeros_at = at_updates(scatter_add(zeros_like(a, s), idx, astype(is_zero, a.dtype(), s), axes, s));
  const array none = zeros_like(zeros_at, s), just_one = ones_like(zeros_at, s);
  // A non-zero update: the others' product is p / u when no update there is zero, else 0. A
  // zero update: the product of the non-zero others when it is the only zero, else 0.
  array others =
      where(is_zero, where(equal(zeros_at, just_one, s), nonzero_p, zero, s),
            where(equal(zeros_at, none, s), divide(nonzero_p, where(is_zero, one, upd, s), s), zero, s), s);
  return {p, others};
}

// As MLX: indices have no gradient, and a vjp asked for one (the indices are an input of
// the transform, or were computed from one) is an error, not silently zero.
[[noreturn]] void throw_index_vjp(const char* primitive) {
  throw std::invalid_argument(std::string("[") + primitive +
                              "] Cannot calculate the VJP with respect to the indices; apply "
                              "stop_gradient to indices computed from differentiated inputs.");
}

// The same for a jvp: an index with a tangent (an input of the transform, or computed from
// one) is an error, as MLX's, not a tangent silently dropped.
void check_no_index_jvp(const char* primitive, const std::vector<int>& argnums, size_t first_index,
                        size_t end_index) {
  for (int arg : argnums) {
    if (static_cast<size_t>(arg) >= first_index && static_cast<size_t>(arg) < end_index) {
      throw std::invalid_argument(std::string("[") + primitive +
                                  "] Cannot calculate the JVP with respect to the indices; apply "
                                  "stop_gradient to indices computed from differentiated inputs.");
    }
  }
}

}  // namespace

std::vector<array> Gather::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& a = primals[0];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg != 0) throw_index_vjp(name());
    std::vector<array> idx = index_inputs(primals, 1, primals.size() - 1);
    out.push_back(scatter_add(zeros_like(a, s), idx, cotangents[0], axes_, s));
  }
  return out;
}

std::vector<array> Gather::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  check_no_index_jvp(name(), argnums, 1, primals.size());
  return {gather(tangents[0], index_inputs(primals, 1, primals.size() - 1), axes_, slice_sizes_, stream())};
}

std::vector<array> GatherAxis::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                   const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg != 0) throw_index_vjp(name());
    out.push_back(scatter_add_axis(zeros_like(primals[0], s), primals[1], cotangents[0], axis_, s));
  }
  return out;
}

std::vector<array> GatherAxis::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                   const std::vector<int>& argnums, const std::vector<array>&) {
  check_no_index_jvp(name(), argnums, 1, primals.size());
  return {take_along_axis(tangents[0], primals[1], axis_, stream())};
}

std::vector<array> Scatter::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& a = primals[0];
  const array& upd = primals.back();
  const array& c = cotangents[0];
  const size_t n_idx = primals.size() - 2;
  std::vector<array> idx = index_inputs(primals, 1, n_idx);
  const Shape slice = update_slice(upd, a.ndim());
  std::vector<array> out;
  for (int arg : argnums) {
    const bool is_src = arg == 0, is_upd = static_cast<size_t>(arg) == primals.size() - 1;
    if (!is_src && !is_upd) throw_index_vjp(name());
    switch (reduce_) {
      case ReduceType::None:
        out.push_back(is_src ? scatter(c, idx, zeros_like(upd, s), axes_, s)
                             : reshape(gather(c, idx, axes_, slice, s), upd.shape(), s));
        break;
      case ReduceType::Sum:
        out.push_back(is_src ? c : reshape(gather(c, idx, axes_, slice, s), upd.shape(), s));
        break;
      case ReduceType::Max:
      case ReduceType::Min: {
        // Whichever of the source and the updates the result took (ties: both), as MLX.
        const array& y = outputs[0];
        if (is_src) {
          out.push_back(multiply(c, equal(y, a, s), s));
        } else {
          array taken = equal(reshape(gather(y, idx, axes_, slice, s), upd.shape(), s), upd, s);
          out.push_back(multiply(reshape(gather(c, idx, axes_, slice, s), upd.shape(), s), taken, s));
        }
        break;
      }
      case ReduceType::Prod: {
        // y = a * (product of the updates at each position): d/da is that product, d/du the
        // source times the other updates at u's position (conjugated when complex).
        ProdParts parts = scatter_prod_parts(a, idx, upd, axes_, s);
        if (is_src) {
          out.push_back(multiply(c, detail::conj_if_complex(parts.p, s), s));
        } else {
          array ca = reshape(gather(multiply(c, detail::conj_if_complex(a, s), s), idx, axes_, slice, s),
                             upd.shape(), s);
          out.push_back(multiply(ca, detail::conj_if_complex(parts.others, s), s));
        }
        break;
      }
    }
  }
  return out;
}

std::vector<array> Scatter::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const size_t n_idx = primals.size() - 2;
  check_no_index_jvp(name(), argnums, 1, primals.size() - 1);
  array ta = zeros_like(primals[0], s);
  array tu = zeros_like(primals.back(), s);
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 0) ta = tangents[i];
    if (static_cast<size_t>(argnums[i]) == primals.size() - 1) tu = tangents[i];
  }
  std::vector<array> idx = index_inputs(primals, 1, n_idx);
  switch (reduce_) {
    case ReduceType::None: return {scatter(ta, idx, tu, axes_, s)};
    case ReduceType::Sum: return {scatter_add(ta, idx, tu, axes_, s)};
    case ReduceType::Max:
    case ReduceType::Min: {
      // The tangent of whichever the result took (ties: the sum of both, as the vjp).
      const array& a = primals[0];
      const array& upd = primals.back();
      const array& y = outputs[0];
      const Shape slice = update_slice(upd, a.ndim());
      array taken = equal(reshape(gather(y, idx, axes_, slice, s), upd.shape(), s), upd, s);
      array from_updates = scatter_add(zeros_like(a, s), idx, multiply(tu, taken, s), axes_, s);
      return {add(multiply(ta, equal(y, a, s), s), from_updates, s)};
    }
    case ReduceType::Prod: {
      const array& a = primals[0];
      const array& upd = primals.back();
      const Shape slice = update_slice(upd, a.ndim());
      ProdParts parts = scatter_prod_parts(a, idx, upd, axes_, s);
      array a_at = reshape(gather(a, idx, axes_, slice, s), upd.shape(), s);
      array from_updates =
          scatter_add(zeros_like(a, s), idx, multiply(multiply(tu, parts.others, s), a_at, s), axes_, s);
      return {add(multiply(ta, parts.p, s), from_updates, s)};
    }
  }
  throw std::invalid_argument(std::string("[") + name() + "] jvp is not implemented.");
}

namespace {

// Where masked_scatter writes: the mask's true positions (row-major) whose rank among them is
// below src's size; and that rank, as the int32 src position each of them takes.
std::pair<array, array> masked_positions(const array& mask, int64_t src_size, const Stream& s) {
  array rank = reshape(cumsum(astype(reshape(mask, {-1}, s), int32, s), 0, false, false, s), mask.shape(), s);
  array written = logical_and(mask, less(rank, array(static_cast<int32_t>(src_size)), s), s);
  return {written, rank};
}

}  // namespace

// Linear in a and src: a's cotangent is the cotangent where a was kept, src's the cotangent
// at the position each of its elements went to (0 for elements past the mask's count).
std::vector<array> MaskedScatter::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                      const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array &mask = primals[1], &src = primals[2];
  const array& c = cotangents[0];
  // The positions depend on the mask only: stop_gradient keeps a derivative of this vjp from
  // asking the scatter below for a gradient of its indices.
  auto [written, rank] = masked_positions(stop_gradient(mask, s), static_cast<int64_t>(src.size()), s);
  const array zero = zeros_like(c, s);
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      out.push_back(where(written, zero, c, s));
    } else if (arg == 2) {
      array at = reshape(where(written, rank, zeros_like(rank, s), s), {-1}, s);
      array upd = reshape(where(written, c, zero, s), {static_cast<int32_t>(c.size()), 1}, s);
      out.push_back(scatter_add(zeros_like(src, s), at, upd, 0, s));
    } else {
      out.push_back(zeros_like(primals[arg], s));
    }
  }
  return out;
}

std::vector<array> MaskedScatter::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                      const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  return {masked_scatter(detail::tangent_of(0, primals, tangents, argnums, s), primals[1],
                         detail::tangent_of(2, primals, tangents, argnums, s), s)};
}

// The permutations below are indices: computed from stop_gradient(x), so that differentiating
// these rules again (second order) does not ask the gather or scatter for their gradient.
std::vector<array> Sort::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                             const std::vector<int>&, const std::vector<array>&) {
  const Stream& s = stream();
  const array& x = primals[0];
  return {
      scatter_add_axis(zeros_like(x, s), argsort(stop_gradient(x, s), axis_, s), cotangents[0], axis_, s)};
}
std::vector<array> Sort::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                             const std::vector<int>&, const std::vector<array>&) {
  const Stream& s = stream();
  return {take_along_axis(tangents[0], argsort(stop_gradient(primals[0], s), axis_, s), axis_, s)};
}

std::vector<array> Partition::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                  const std::vector<int>&, const std::vector<array>&) {
  const Stream& s = stream();
  const array& x = primals[0];
  return {scatter_add_axis(zeros_like(x, s), argpartition(stop_gradient(x, s), kth_, axis_, s), cotangents[0],
                           axis_, s)};
}
std::vector<array> Partition::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                  const std::vector<int>&, const std::vector<array>&) {
  const Stream& s = stream();
  return {take_along_axis(tangents[0], argpartition(stop_gradient(primals[0], s), kth_, axis_, s), axis_, s)};
}

std::vector<array> ArgSort::vjp(const std::vector<array>& primals, const std::vector<array>&,
                                const std::vector<int>& argnums, const std::vector<array>&) {
  return detail::zero_grads(primals, argnums, stream());
}
std::vector<array> ArgSort::jvp(const std::vector<array>&, const std::vector<array>&, const std::vector<int>&,
                                const std::vector<array>& outputs) {
  return {zeros_like(outputs[0], stream())};
}

std::vector<array> ArgPartition::vjp(const std::vector<array>& primals, const std::vector<array>&,
                                     const std::vector<int>& argnums, const std::vector<array>&) {
  return detail::zero_grads(primals, argnums, stream());
}
std::vector<array> ArgPartition::jvp(const std::vector<array>&, const std::vector<array>&,
                                     const std::vector<int>&, const std::vector<array>& outputs) {
  return {zeros_like(outputs[0], stream())};
}

}  // namespace braid
