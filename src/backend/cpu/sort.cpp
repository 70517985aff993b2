// Sort, ArgSort, Partition, ArgPartition on the CPU. Rows along the axis run in parallel;
// each row is copied into a contiguous buffer first. Long rows of real types are sorted with
// an LSD radix sort of (key, position) pairs, where the key is an unsigned integer whose
// order is the element order (NaNs last, -0.0 == +0.0; backend/common/indexing.h): stable,
// and linear in the row length. Short rows and complex64 use std::stable_sort.
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "backend/common/indexing.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using cpu::compute_t;

// Rows at least this long take the radix sort.
constexpr int64_t kRadixMin = 256;

// Strict weak order with NaNs (any part, for complex) after everything else.
template <typename T>
bool nan_last_less(const T& a, const T& b) {
  using C = compute_t<T>;
  if constexpr (std::is_floating_point_v<C>) {
    const C x = static_cast<C>(a), y = static_cast<C>(b);
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x < y;
  } else if constexpr (cpu::is_complex_v<C>) {
    const bool nx = std::isnan(a.real()) || std::isnan(a.imag());
    const bool ny = std::isnan(b.real()) || std::isnan(b.imag());
    if (nx || ny) return !nx;
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else {
    return a < b;
  }
}

template <typename T>
inline constexpr bool radix_sortable_v = !cpu::is_complex_v<T>;

template <typename T>
auto sort_key(const T& v) {
  using U = typename common::UnsignedOfSize<sizeof(T)>::type;
  U bits;
  std::memcpy(&bits, &v, sizeof(T));
  if constexpr (std::is_same_v<T, float16_t>) {
    return common::float_key<U>(bits, common::kHalfExp, common::kHalfMant);
  } else if constexpr (std::is_same_v<T, bfloat16_t>) {
    return common::float_key<U>(bits, common::kBf16Exp, common::kBf16Mant);
  } else if constexpr (std::is_same_v<T, float>) {
    return common::float_key<U>(bits, common::kF32Exp, common::kF32Mant);
  } else if constexpr (std::is_same_v<T, double>) {
    return common::float_key<U>(bits, common::kF64Exp, common::kF64Mant);
  } else if constexpr (std::is_signed_v<T>) {
    return common::signed_key<U>(bits);
  } else {
    return bits;
  }
}

// A resizable buffer that is plain T storage for bool too (std::vector<bool> packs bits).
template <typename T>
class RowBuffer {
 public:
  void resize(size_t n) {
    if (n > cap_) {
      data_ = std::make_unique<T[]>(n);
      cap_ = n;
    }
    size_ = n;
  }
  T* begin() { return data_.get(); }
  T* end() { return data_.get() + size_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  std::unique_ptr<T[]> data_;
  size_t size_ = 0, cap_ = 0;
};

// Per-chunk buffers, reused across the rows of one parallel chunk.
template <typename T>
struct RowScratch {
  RowBuffer<T> vals;
  std::vector<uint32_t> perm, perm_alt;
  std::vector<decltype(sort_key(T{}))> keys, keys_alt;
};

// Stable LSD radix argsort of vals[0, n) into s.perm (8-bit digits; passes whose digit is the
// same for every key are skipped).
template <typename T>
void radix_argsort(RowScratch<T>& s, int64_t n) {
  using U = decltype(sort_key(T{}));
  constexpr int kPasses = sizeof(U);
  std::vector<U>& k0 = s.keys;
  std::vector<U>& k1 = s.keys_alt;
  k0.resize(static_cast<size_t>(n));
  k1.resize(static_cast<size_t>(n));
  s.perm.resize(static_cast<size_t>(n));
  s.perm_alt.resize(static_cast<size_t>(n));
  std::array<int64_t, kPasses * 256> hist{};
  for (int64_t i = 0; i < n; ++i) {
    const U k = sort_key(s.vals[i]);
    k0[i] = k;
    for (int p = 0; p < kPasses; ++p) ++hist[p * 256 + ((k >> (8 * p)) & 0xFF)];
  }
  std::iota(s.perm.begin(), s.perm.end(), 0u);
  U* kin = k0.data();
  U* kout = k1.data();
  uint32_t* pin = s.perm.data();
  uint32_t* pout = s.perm_alt.data();
  for (int p = 0; p < kPasses; ++p) {
    int64_t* h = &hist[p * 256];
    if (*std::max_element(h, h + 256) == n) continue;
    int64_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      const int64_t c = h[d];
      h[d] = sum;
      sum += c;
    }
    const int shift = 8 * p;
    for (int64_t i = 0; i < n; ++i) {
      const U k = kin[i];
      const int64_t dst = h[(k >> shift) & 0xFF]++;
      kout[dst] = k;
      pout[dst] = pin[i];
    }
    std::swap(kin, kout);
    std::swap(pin, pout);
  }
  if (pin != s.perm.data()) std::copy(pin, pin + n, s.perm.data());
}

template <typename T>
void argsort_row(RowScratch<T>& s, int64_t n) {
  if constexpr (radix_sortable_v<T>) {
    if (n >= kRadixMin) {
      radix_argsort(s, n);
      return;
    }
  }
  s.perm.resize(static_cast<size_t>(n));
  std::iota(s.perm.begin(), s.perm.end(), 0u);
  std::stable_sort(s.perm.begin(), s.perm.end(),
                   [&](uint32_t x, uint32_t y) { return nan_last_less(s.vals[x], s.vals[y]); });
}

enum class RowOp { sort, argsort, partition, argpartition };

// Runs `op` on every row of `in` along `axis`, writing `out` (fresh, row-contiguous).
template <typename T, typename R>
void rows_along_axis(const array& in, array& out, int axis, RowOp op, int kth) {
  const common::AxisRows ar = common::axis_rows(in.shape(), axis);
  const int64_t n = ar.n;
  if (n == 0 || ar.rows == 0) return;
  cpu::StridedLayout<2> layout(ar.others,
                               {ar.others_of(in.strides(), axis), ar.others_of(out.strides(), axis)});
  const int64_t is = in.strides()[axis], os = out.strides()[axis];
  const int64_t s0 = layout.inner_stride(0), s1 = layout.inner_stride(1);
  const T* src = static_cast<const T*>(in.desc()->data_ptr);
  R* dst = static_cast<R*>(out.desc()->data_ptr);
  detail::parallel_for(ar.rows, std::max<int64_t>(1, (1 << 14) / n), [&](int64_t b, int64_t e) {
    RowScratch<T> s;
    s.vals.resize(static_cast<size_t>(n));
    layout.for_each_run(b, e, [&](const std::array<int64_t, 2>& off, int64_t len) {
      for (int64_t r = 0; r < len; ++r) {
        const T* x = src + off[0] + r * s0;
        R* y = dst + off[1] + r * s1;
        for (int64_t i = 0; i < n; ++i) s.vals[i] = x[i * is];
        switch (op) {
          case RowOp::sort:
            if constexpr (std::is_same_v<R, T>) {
              if (radix_sortable_v<T> && n >= kRadixMin) {
                argsort_row(s, n);
                for (int64_t i = 0; i < n; ++i) y[i * os] = s.vals[s.perm[i]];
              } else {
                std::stable_sort(s.vals.begin(), s.vals.end(), nan_last_less<T>);
                for (int64_t i = 0; i < n; ++i) y[i * os] = s.vals[i];
              }
            }
            break;
          case RowOp::argsort:
            if constexpr (std::is_same_v<R, uint32_t>) {
              argsort_row(s, n);
              for (int64_t i = 0; i < n; ++i) y[i * os] = s.perm[i];
            }
            break;
          case RowOp::partition:
            if constexpr (std::is_same_v<R, T>) {
              std::nth_element(s.vals.begin(), s.vals.begin() + kth, s.vals.end(), nan_last_less<T>);
              for (int64_t i = 0; i < n; ++i) y[i * os] = s.vals[i];
            }
            break;
          case RowOp::argpartition:
            if constexpr (std::is_same_v<R, uint32_t>) {
              s.perm.resize(static_cast<size_t>(n));
              std::iota(s.perm.begin(), s.perm.end(), 0u);
              std::nth_element(s.perm.begin(), s.perm.begin() + kth, s.perm.end(),
                               [&](uint32_t p, uint32_t q) { return nan_last_less(s.vals[p], s.vals[q]); });
              for (int64_t i = 0; i < n; ++i) y[i * os] = s.perm[i];
            }
            break;
        }
      }
    });
  });
}

void run_rows(const array& in, array& out, int axis, RowOp op, int kth) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  cpu::dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (op == RowOp::sort || op == RowOp::partition) {
      rows_along_axis<T, T>(in, out, axis, op, kth);
    } else {
      rows_along_axis<T, uint32_t>(in, out, axis, op, kth);
    }
  });
}

}  // namespace

void Sort::eval_cpu(const std::vector<array>& inputs, array& out) {
  run_rows(inputs[0], out, axis_, RowOp::sort, 0);
}

void ArgSort::eval_cpu(const std::vector<array>& inputs, array& out) {
  run_rows(inputs[0], out, axis_, RowOp::argsort, 0);
}

void Partition::eval_cpu(const std::vector<array>& inputs, array& out) {
  run_rows(inputs[0], out, axis_, RowOp::partition, kth_);
}

void ArgPartition::eval_cpu(const std::vector<array>& inputs, array& out) {
  run_rows(inputs[0], out, axis_, RowOp::argpartition, kth_);
}

}  // namespace braid
