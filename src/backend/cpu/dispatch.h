// Dtype dispatch and strided iteration shared by the CPU kernels.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "braid/array.h"

namespace braid::cpu {

template <typename T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}) with T the C++ type of `d`.
template <typename F>
void dispatch_dtype(Dtype d, F&& f) {
  switch (d.val) {
    case Dtype::Val::bool_: f(TypeTag<bool>{}); break;
    case Dtype::Val::uint8: f(TypeTag<uint8_t>{}); break;
    case Dtype::Val::int32: f(TypeTag<int32_t>{}); break;
    case Dtype::Val::int64: f(TypeTag<int64_t>{}); break;
    case Dtype::Val::float16: f(TypeTag<float16_t>{}); break;
    case Dtype::Val::bfloat16: f(TypeTag<bfloat16_t>{}); break;
    case Dtype::Val::float32: f(TypeTag<float>{}); break;
  }
}

/// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise.
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>, float, T>;

/// Element strides of `in` as seen from an output of `out_shape` (NumPy broadcasting:
/// missing or size-1 dimensions get stride 0).
Strides broadcast_strides(const array& in, const Shape& out_shape);

/// A layout of K operands over one logical shape, with mergeable dimensions collapsed.
template <int K>
struct StridedLayout {
  Shape shape;
  std::array<Strides, K> strides;

  StridedLayout(Shape s, std::array<Strides, K> st) : shape(std::move(s)), strides(std::move(st)) {
    collapse();
  }

  /// Calls fn(offsets, n) for each run of `n` elements along the innermost dimension
  /// covering the flat (row-major) range [begin, end); offsets are per operand, in elements.
  template <typename F>
  void for_each_run(int64_t begin, int64_t end, F&& fn) const {
    const int nd = static_cast<int>(shape.size());
    if (nd == 0) {
      if (begin < end) fn(std::array<int64_t, K>{}, int64_t{1});
      return;
    }
    std::vector<int64_t> idx(nd, 0);
    int64_t rem = begin;
    for (int i = nd - 1; i >= 0; --i) {
      idx[i] = rem % shape[i];
      rem /= shape[i];
    }
    std::array<int64_t, K> off{};
    for (int k = 0; k < K; ++k) {
      for (int i = 0; i < nd; ++i) off[k] += idx[i] * strides[k][i];
    }
    const int64_t inner = shape[nd - 1];
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = std::min(inner - idx[nd - 1], end - pos);
      fn(off, n);
      pos += n;
      for (int k = 0; k < K; ++k) off[k] += n * strides[k][nd - 1];
      idx[nd - 1] += n;
      for (int i = nd - 1; i > 0 && idx[i] == shape[i]; --i) {
        idx[i] = 0;
        ++idx[i - 1];
        for (int k = 0; k < K; ++k) off[k] += strides[k][i - 1] - shape[i] * strides[k][i];
      }
    }
  }

  int64_t inner_stride(int k) const { return shape.empty() ? 0 : strides[k].back(); }

 private:
  void collapse() {
    Shape s;
    std::array<Strides, K> st;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 1) continue;  // size-1 dims never move the offset
      bool merge = !s.empty();
      for (int k = 0; k < K && merge; ++k) merge = st[k].back() == strides[k][i] * shape[i];
      if (merge) {
        s.back() *= shape[i];
        for (int k = 0; k < K; ++k) st[k].back() = strides[k][i];
      } else {
        s.push_back(shape[i]);
        for (int k = 0; k < K; ++k) st[k].push_back(strides[k][i]);
      }
    }
    if (s.empty() && !shape.empty()) {
      s.push_back(1);
      for (int k = 0; k < K; ++k) st[k].push_back(0);
    }
    shape = std::move(s);
    strides = std::move(st);
  }
};

/// Elements per parallel chunk for simple element-wise loops.
constexpr int64_t kElementwiseGrain = 1 << 16;

}  // namespace braid::cpu
