// The packed layouts of the factorizations, and their eval_gpu: the ops build these primitives
// on CPU streams only (as MLX), so reaching a GPU evaluation is a bug worth a clear message.
#include "primitives/factorizations.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "braid/ops.h"

namespace braid {

namespace {
int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}
}  // namespace

void PackedLayout::add(Shape shape) {
  offsets.push_back(size);
  size += count(shape);
  shapes.push_back(std::move(shape));
}

array PackedLayout::unpack(const array& packed, size_t i, const Stream& s) const {
  const int nd = static_cast<int>(packed.ndim());
  Shape start(nd, 0);
  Shape stop = packed.shape();
  start[nd - 1] = static_cast<int32_t>(offsets[i]);
  stop[nd - 1] = static_cast<int32_t>(offsets[i] + count(shapes[i]));
  Shape out(packed.shape().begin(), packed.shape().end() - 1);
  out.insert(out.end(), shapes[i].begin(), shapes[i].end());
  return reshape(slice(packed, std::move(start), std::move(stop), s), std::move(out), s);
}

array PackedLayout::pack(const std::vector<array>& parts, const Stream& s) const {
  std::vector<array> flat;
  for (size_t i = 0; i < parts.size(); ++i) {
    const array& p = parts[i];
    Shape shape(p.shape().begin(), p.shape().end() - static_cast<std::ptrdiff_t>(shapes[i].size()));
    shape.push_back(static_cast<int32_t>(count(shapes[i])));
    flat.push_back(reshape(p, std::move(shape), s));
  }
  return concatenate(std::move(flat), -1, s);
}

PackedLayout qr_layout(int m, int n) {
  const int k = std::min(m, n);
  PackedLayout l;
  l.add({m, k});
  l.add({k, n});
  return l;
}

PackedLayout svd_layout(int m, int n) {
  PackedLayout l;
  l.add({m, m});
  l.add({std::min(m, n)});
  l.add({n, n});
  return l;
}

PackedLayout eig_layout(int n) {
  PackedLayout l;
  l.add({n});
  l.add({n, n});
  return l;
}

PackedLayout lu_layout(int m, int n, int words_per_element) {
  PackedLayout l;
  l.add({m * n * words_per_element});
  l.add({std::min(m, n)});
  l.add({m});
  return l;
}

#define BRAID_CPU_ONLY(P)                                                      \
  void P::eval_gpu(const std::vector<array>&, array&) {                        \
    throw std::runtime_error(std::string("[") + name() +                       \
                             "] This primitive has no GPU kernel; the linalg " \
                             "ops build it on a CPU stream.");                 \
  }

BRAID_FACTORIZATION_PRIMITIVES(BRAID_CPU_ONLY)

#undef BRAID_CPU_ONLY

}  // namespace braid
