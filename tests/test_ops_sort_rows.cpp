// Sorting, partitioning and topk of many rows (lengths around each size class the GPU
// sorts a row per block, and just past the largest), in every dtype, with NaNs, signed zeros
// and many equal elements (stability), from contiguous, transposed, strided and broadcast
// inputs. Every test runs on every device present; references are computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <random>

#include "support.h"

using namespace braid;
using namespace braid::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Row lengths at and just past each size class of the GPU's block sort (and below the first).
const std::vector<int> kRowLengths = {32, 33, 128, 129, 512, 513, 1024, 1025, 2048, 2049, 4096, 4097};

using Element = std::complex<double>;

// The element order: NaNs (in either part) last and equal to each other, then lexicographic.
bool element_less(const Element& x, const Element& y) {
  const bool xn = std::isnan(x.real()) || std::isnan(x.imag());
  const bool yn = std::isnan(y.real()) || std::isnan(y.imag());
  if (xn) return false;
  if (yn) return true;
  return x.real() < y.real() || (x.real() == y.real() && x.imag() < y.imag());
}

std::vector<Element> elements(const array& a) {
  std::vector<Element> out;
  if (a.dtype() == complex64) {
    for (const auto& c : complex_values(a)) out.emplace_back(c.real(), c.imag());
  } else {
    for (double v : values(a)) out.emplace_back(v, 0.0);
  }
  return out;
}

// Small values with many repeats; floats also get NaNs, infinities and both zeros.
array row_data(const Shape& shape, Dtype dt, uint32_t seed) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::mt19937 rng(seed);
  const bool is_bool = dt == bool_;
  const bool is_unsigned = issubdtype(dt, unsignedinteger);
  std::uniform_int_distribution<int> small(is_bool ? 0 : (is_unsigned ? 0 : -20), is_bool ? 1 : 20);
  const bool floating = issubdtype(dt, inexact);
  std::vector<double> re(static_cast<size_t>(n)), im(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    re[i] = small(rng);
    im[i] = small(rng) % 3;
    if (!floating) continue;
    switch (i % 37) {
      case 3: re[i] = kNaN; break;
      case 7: re[i] = -0.0; break;
      case 11: re[i] = 0.0; break;
      case 13: re[i] = -kInf; break;
      case 17: re[i] = kInf; break;
      case 19: im[i] = kNaN; break;
      default: break;
    }
  }
  if (dt != complex64) return make(re, shape, dt);
  std::vector<complex64_t> c;
  for (int64_t i = 0; i < n; ++i) c.emplace_back(static_cast<float>(re[i]), static_cast<float>(im[i]));
  return array(c.begin(), shape, complex64);
}

// Checks sort and argsort of `a` along `axis` against a stable sort of each row.
void expect_sorts_stably(const array& a, int axis, const Device& dev, const std::string& what) {
  const Shape shape = a.shape();
  const int nd = static_cast<int>(shape.size());
  const int ax = axis < 0 ? axis + nd : axis;
  std::vector<int64_t> st(nd, 1);
  for (int d = nd - 2; d >= 0; --d) st[d] = st[d + 1] * shape[d + 1];
  const int64_t n = shape[ax];
  const auto in = elements(a);
  std::vector<Element> want_sorted(in.size());
  std::vector<double> want_perm(in.size());
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t f = 0; f < static_cast<int64_t>(in.size()); ++f) {
    if ((f / st[ax]) % n != 0) continue;  // f starts a row
    std::iota(p.begin(), p.end(), 0);
    std::stable_sort(p.begin(), p.end(), [&](int64_t x, int64_t y) {
      return element_less(in[f + x * st[ax]], in[f + y * st[ax]]);
    });
    for (int64_t j = 0; j < n; ++j) {
      want_sorted[f + j * st[ax]] = in[f + p[j] * st[ax]];
      want_perm[f + j * st[ax]] = static_cast<double>(p[j]);
    }
  }
  const std::string at = what + " on " + device_name(dev) + " " + dtype_name(a.dtype());
  array positions = argsort(a, axis, dev);
  EXPECT_EQ(positions.dtype(), uint32) << at;
  const auto got_perm = values(positions);
  ASSERT_EQ(got_perm.size(), want_perm.size()) << at;
  int64_t wrong = 0;
  for (size_t i = 0; i < got_perm.size(); ++i) wrong += got_perm[i] != want_perm[i];
  EXPECT_EQ(wrong, 0) << "argsort " << at;
  array sorted = sort(a, axis, dev);
  EXPECT_EQ(sorted.dtype(), a.dtype()) << at;
  const auto got = elements(sorted);
  ASSERT_EQ(got.size(), want_sorted.size()) << at;
  wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    // Equal in the element order: the same value, or both NaN.
    wrong += element_less(got[i], want_sorted[i]) || element_less(want_sorted[i], got[i]);
  }
  EXPECT_EQ(wrong, 0) << "sort " << at;
}

}  // namespace

TEST(OpsSortRows, RowsAtEverySizeClassBoundarySortStably) {
  for (const Device& dev : test_devices()) {
    for (int n : kRowLengths) {
      for (Dtype dt : {float32, int64, uint8, float16}) {
        expect_sorts_stably(row_data({5, n}, dt, static_cast<uint32_t>(n)), -1, dev,
                            "row " + std::to_string(n));
      }
    }
  }
}

TEST(OpsSortRows, RowsSortStablyInEveryDtype) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      for (int n : {33, 1000, 4096}) {
        expect_sorts_stably(row_data({3, n}, dt, 40 + static_cast<uint32_t>(n)), 1, dev,
                            "row " + std::to_string(n));
      }
    }
  }
}

TEST(OpsSortRows, ManyRowsSortStably) {
  for (const Device& dev : test_devices()) {
    expect_sorts_stably(row_data({3000, 200}, float32, 50), -1, dev, "3000 rows of 200");
    expect_sorts_stably(row_data({2, 150, 1024}, bfloat16, 51), 2, dev, "300 rows of 1024");
    expect_sorts_stably(row_data({70, 3000}, float64, 52), 1, dev, "70 rows of 3000");
  }
}

TEST(OpsSortRows, NonContiguousRowsSortStably) {
  for (const Device& dev : test_devices()) {
    for (int n : {100, 1025, 4096}) {
      const std::string len = std::to_string(n);
      // The sorted axis first.
      expect_sorts_stably(row_data({n, 6}, float32, 60), 0, dev, "axis 0 of " + len);
      // The sorted axis last, with a stride.
      array t = transpose(row_data({4, n, 3}, int32, 61), {0, 2, 1});
      expect_sorts_stably(t, 2, dev, "strided rows of " + len);
      array stepped = slice(row_data({3, 2 * n}, complex64, 62), {0, 0}, {3, 2 * n}, {1, 2});
      expect_sorts_stably(stepped, 1, dev, "every other element of " + len);
      // One row broadcast to several.
      array bc = broadcast_to(row_data({1, n}, float16, 63), {5, n});
      expect_sorts_stably(bc, 1, dev, "broadcast rows of " + len);
    }
  }
}

namespace {

// The rows (along the last axis) of an array, as given and sorted stably in the element order.
struct SortedRows {
  int64_t n;
  std::vector<Element> in, sorted;
};

SortedRows sorted_rows(const array& a) {
  SortedRows r{a.shape().back(), elements(a), {}};
  r.sorted = r.in;
  for (size_t f = 0; f < r.sorted.size(); f += static_cast<size_t>(r.n)) {
    std::stable_sort(r.sorted.begin() + f, r.sorted.begin() + f + r.n, element_less);
  }
  return r;
}

// Checks that each row of `parted` is a partition of the same row of `rows` at kth: the same
// elements, the kth in its sorted place, none larger before it and none smaller after it (in
// the element order). `positions` (when given) are argpartition's, into the rows as given.
void expect_partitions(const SortedRows& rows, const array& parted, const array* positions, int kth,
                       const std::string& what) {
  const int64_t n = rows.n;
  std::vector<Element> got;
  std::vector<double> at;
  if (positions) {
    at = values(*positions);
  } else {
    got = elements(parted);
  }
  ASSERT_EQ(positions ? at.size() : got.size(), rows.in.size()) << what;
  int64_t wrong = 0;
  std::vector<Element> out(static_cast<size_t>(n));
  for (int64_t f = 0; f < static_cast<int64_t>(rows.in.size()); f += n) {
    for (int64_t j = 0; j < n; ++j) {
      if (positions && !(at[f + j] >= 0 && at[f + j] < static_cast<double>(n))) {
        ++wrong;  // an index outside the row
        out[j] = rows.in[f];
      } else {
        out[j] = positions ? rows.in[f + static_cast<int64_t>(at[f + j])] : got[f + j];
      }
    }
    const Element* sorted = rows.sorted.data() + f;
    const Element pivot = out[kth];
    wrong += element_less(pivot, sorted[kth]) || element_less(sorted[kth], pivot);
    for (int64_t j = 0; j < kth; ++j) wrong += element_less(pivot, out[j]);
    for (int64_t j = kth + 1; j < n; ++j) wrong += element_less(out[j], pivot);
    std::stable_sort(out.begin(), out.end(), element_less);
    for (int64_t j = 0; j < n; ++j)
      wrong += element_less(out[j], sorted[j]) || element_less(sorted[j], out[j]);
  }
  EXPECT_EQ(wrong, 0) << what;
}

}  // namespace

TEST(OpsSortRows, ManyRowsPartitionInEveryDtype) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      array a = row_data({70, 301}, dt, 80);
      const SortedRows rows = sorted_rows(a);
      for (int kth : {0, 150, 300}) {
        const std::string what = device_name(dev) + " " + dtype_name(dt) + " kth " + std::to_string(kth);
        expect_partitions(rows, partition(a, kth, -1, dev), nullptr, kth, "partition " + what);
        array p = argpartition(a, kth, -1, dev);
        EXPECT_EQ(p.dtype(), uint32);
        expect_partitions(rows, a, &p, kth, "argpartition " + what);
      }
    }
    // Rows along the first axis (read through an encoded copy) and many equal top bytes.
    array t = transpose(row_data({301, 70}, float32, 81));
    expect_partitions(sorted_rows(t), partition(t, 7, -1, dev), nullptr, 7,
                      "transposed on " + device_name(dev));
  }
}

TEST(OpsSortRows, TopkOfManyLongRowsHoldsTheLargest) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {float32, bfloat16, int64}) {
      array a = row_data({20, 5000}, dt, 90);
      const int k = 32;
      array t = topk(a, k, -1, dev);
      ASSERT_EQ(t.shape(), (Shape{20, k}));
      const auto in = elements(a), got = elements(t);
      int64_t wrong = 0;
      for (int r = 0; r < 20; ++r) {
        std::vector<Element> row(in.begin() + r * 5000, in.begin() + (r + 1) * 5000);
        std::vector<Element> top(got.begin() + r * k, got.begin() + (r + 1) * k);
        std::stable_sort(row.begin(), row.end(), element_less);
        std::stable_sort(top.begin(), top.end(), element_less);
        for (int j = 0; j < k; ++j) {
          const Element& w = row[5000 - k + j];
          wrong += element_less(top[j], w) || element_less(w, top[j]);
        }
      }
      EXPECT_EQ(wrong, 0) << device_name(dev) << " " << dtype_name(dt);
    }
  }
}
