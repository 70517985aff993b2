// Dtype dispatch, conversions and strided iteration shared by the CPU kernels.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "backend/common/layout.h"
#include "braid/array.h"

namespace braid {

// complex64 orders lexicographically (real part, then imaginary part), as MLX's comparisons,
// maximum and sort do.
inline bool operator<(const std::complex<float>& a, const std::complex<float>& b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
inline bool operator>(const std::complex<float>& a, const std::complex<float>& b) { return b < a; }
inline bool operator<=(const std::complex<float>& a, const std::complex<float>& b) { return !(b < a); }
inline bool operator>=(const std::complex<float>& a, const std::complex<float>& b) { return !(a < b); }

}  // namespace braid

namespace braid::cpu {

template <typename T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}) with T the C++ element type of `d`.
template <typename F>
void dispatch_dtype(Dtype d, F&& f) {
  switch (d.val()) {
    case Dtype::Val::bool_: f(TypeTag<bool>{}); break;
    case Dtype::Val::uint8: f(TypeTag<uint8_t>{}); break;
    case Dtype::Val::uint16: f(TypeTag<uint16_t>{}); break;
    case Dtype::Val::uint32: f(TypeTag<uint32_t>{}); break;
    case Dtype::Val::uint64: f(TypeTag<uint64_t>{}); break;
    case Dtype::Val::int8: f(TypeTag<int8_t>{}); break;
    case Dtype::Val::int16: f(TypeTag<int16_t>{}); break;
    case Dtype::Val::int32: f(TypeTag<int32_t>{}); break;
    case Dtype::Val::int64: f(TypeTag<int64_t>{}); break;
    case Dtype::Val::float16: f(TypeTag<float16_t>{}); break;
    case Dtype::Val::float32: f(TypeTag<float>{}); break;
    case Dtype::Val::float64: f(TypeTag<double>{}); break;
    case Dtype::Val::bfloat16: f(TypeTag<bfloat16_t>{}); break;
    case Dtype::Val::complex64: f(TypeTag<complex64_t>{}); break;
  }
}

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;
template <typename T>
inline constexpr bool is_complex_v = std::is_same_v<T, complex64_t> || std::is_same_v<T, std::complex<float>>;

/// The type arithmetic on T is done in: float for the 16-bit floats, std::complex<float> for
/// complex64, T otherwise.
template <typename T>
using compute_t =
    std::conditional_t<is_half_v<T>, float, std::conditional_t<std::is_same_v<T, complex64_t>, std::complex<float>, T>>;

/// The conversion every CPU kernel uses: through the compute types; complex to real keeps the
/// real part; anything to bool is "nonzero".
template <typename D, typename S>
inline D convert(S s) {
  using SC = compute_t<S>;
  using DC = compute_t<D>;
  const SC c = static_cast<SC>(s);
  if constexpr (std::is_same_v<D, bool>) {
    return c != SC{};
  } else if constexpr (is_complex_v<SC> && !is_complex_v<DC>) {
    return static_cast<D>(static_cast<DC>(c.real()));
  } else if constexpr (is_complex_v<DC> && !is_complex_v<SC>) {
    return D(DC(static_cast<float>(c), 0.0f));
  } else {
    return static_cast<D>(static_cast<DC>(c));
  }
}

using common::broadcast_strides;

/// A collapsed layout of K operands that walks the flat output index in runs.
template <int K>
struct StridedLayout : common::Layout<K> {
  using common::Layout<K>::Layout;

  /// Calls fn(offsets, n) for each run of `n` elements along the innermost dimension
  /// covering the flat (row-major) range [begin, end); offsets are per operand, in elements.
  template <typename F>
  void for_each_run(int64_t begin, int64_t end, F&& fn) const {
    const auto& shape = this->shape;
    const auto& strides = this->strides;
    const int nd = this->ndim();
    if (nd == 0) {
      if (begin < end) fn(std::array<int64_t, K>{}, int64_t{1});
      return;
    }
    common::Extents idx(static_cast<size_t>(nd), 0);
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
      const int64_t n = std::min(inner - idx[nd - 1], end - pos);
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
};

/// Elements per parallel chunk for simple element-wise loops.
constexpr int64_t kElementwiseGrain = 1 << 16;

}  // namespace braid::cpu
