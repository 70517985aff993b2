// Derivatives of gather, scatter and the sorts. Index inputs are integers: no gradient.
#include <stdexcept>

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

}  // namespace

std::vector<array> Gather::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& a = primals[0];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      std::vector<array> idx = index_inputs(primals, 1, primals.size() - 1);
      out.push_back(scatter_add(zeros_like(a, s), idx, cotangents[0], axes_, s));
    } else {
      out.push_back(zeros_like(primals[arg], s));
    }
  }
  return out;
}

std::vector<array> Gather::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>& argnums, const std::vector<array>& outputs) {
  if (argnums[0] != 0) return {zeros_like(outputs[0], stream())};
  return {gather(tangents[0], index_inputs(primals, 1, primals.size() - 1), axes_, slice_sizes_, stream())};
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
    if (!is_src && !is_upd) {
      out.push_back(zeros_like(primals[arg], s));
      continue;
    }
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
      case ReduceType::Prod: throw std::invalid_argument("[ScatterProd] vjp is not implemented.");
    }
  }
  return out;
}

std::vector<array> Scatter::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const size_t n_idx = primals.size() - 2;
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
    case ReduceType::Prod: break;
  }
  throw std::invalid_argument(std::string("[") + name() + "] jvp is not implemented.");
}

std::vector<array> Sort::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                             const std::vector<int>&, const std::vector<array>&) {
  const Stream& s = stream();
  const array& x = primals[0];
  return {scatter_add_axis(zeros_like(x, s), argsort(x, axis_, s), cotangents[0], axis_, s)};
}
std::vector<array> Sort::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                             const std::vector<int>&, const std::vector<array>&) {
  return {take_along_axis(tangents[0], argsort(primals[0], axis_, stream()), axis_, stream())};
}

std::vector<array> Partition::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                  const std::vector<int>&, const std::vector<array>&) {
  const Stream& s = stream();
  const array& x = primals[0];
  return {scatter_add_axis(zeros_like(x, s), argpartition(x, kth_, axis_, s), cotangents[0], axis_, s)};
}
std::vector<array> Partition::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                  const std::vector<int>&, const std::vector<array>&) {
  return {take_along_axis(tangents[0], argpartition(primals[0], kth_, axis_, stream()), axis_, stream())};
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
