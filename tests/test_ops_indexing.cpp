// Indexing (take, gather, scatter and friends) and sorting (sort, argsort, partition, topk).
// Every test runs on every device present; references are computed here in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "support.h"

using namespace braid;
using namespace braid::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Values exactly representable in every dtype the test uses (small integers; 0/1 for bool).
std::vector<double> ints(int64_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<double> exact_values(int64_t n, Dtype dt, uint32_t seed) {
  if (dt == bool_) return ints(n, seed, 0, 1);
  // Small enough that sums of three stay exact in int8 and uint8.
  if (issubdtype(dt, unsignedinteger)) return ints(n, seed, 0, 60);
  return ints(n, seed, -30, 30);
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Row-major multi-index of flat position `i` in `shape`.
std::vector<int64_t> unravel(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

// NumPy's take along `axis` in double.
std::vector<double> ref_take(const std::vector<double>& a, const Shape& as, const std::vector<double>& idx,
                             const Shape& is, int axis, Shape* out_shape) {
  Shape os;
  for (int i = 0; i < axis; ++i) os.push_back(as[i]);
  for (auto d : is) os.push_back(d);
  for (size_t i = axis + 1; i < as.size(); ++i) os.push_back(as[i]);
  *out_shape = os;
  const auto ast = strides_of(as);
  std::vector<double> out(static_cast<size_t>(numel(os)));
  for (int64_t o = 0; o < numel(os); ++o) {
    auto oi = unravel(o, os);
    int64_t flat_idx = 0;
    const auto ist = strides_of(is);
    for (size_t k = 0; k < is.size(); ++k) flat_idx += oi[axis + k] * ist[k];
    int64_t off = 0;
    for (int d = 0; d < axis; ++d) off += oi[d] * ast[d];
    off += wrap(static_cast<int64_t>(idx[flat_idx]), as[axis]) * ast[axis];
    for (size_t d = axis + 1; d < as.size(); ++d) off += oi[d - 1 + is.size()] * ast[d];
    out[o] = a[off];
  }
  return out;
}

// Reference stable sort / argsort of rows along `axis` with NaNs last.
bool ref_less(double x, double y) {
  if (std::isnan(x)) return false;
  if (std::isnan(y)) return true;
  return x < y;
}

void ref_sort(const std::vector<double>& a, const Shape& shape, int axis, std::vector<double>* sorted,
              std::vector<double>* perm) {
  const auto st = strides_of(shape);
  const int64_t n = shape[axis];
  sorted->assign(a.size(), 0);
  perm->assign(a.size(), 0);
  for (int64_t f = 0; f < static_cast<int64_t>(a.size()); ++f) {
    if (unravel(f, shape)[axis] != 0) continue;
    std::vector<int64_t> p(static_cast<size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::stable_sort(p.begin(), p.end(), [&](int64_t x, int64_t y) {
      return ref_less(a[f + x * st[axis]], a[f + y * st[axis]]);
    });
    for (int64_t j = 0; j < n; ++j) {
      (*sorted)[f + j * st[axis]] = a[f + p[j] * st[axis]];
      (*perm)[f + j * st[axis]] = static_cast<double>(p[j]);
    }
  }
}

// Exact equality where NaN equals NaN.
void expect_same(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  expect_close(got, want, 0, 0, what);
}

std::string where(const Device& d, Dtype dt) { return device_name(d) + " " + dtype_name(dt); }

}  // namespace

// ---------------------------------------------------------------------------------- take

TEST(OpsIndexing, TakeWithoutAxisIndexesTheFlattenedArray) {
  for (const Device& dev : test_devices()) {
    array a = reshape(arange(6, dev), {2, 3}, dev);
    array idx = array({0, 5, -1, 2}, {2, 2});
    array r = take(a, idx, dev);
    EXPECT_EQ(r.shape(), (Shape{2, 2}));
    EXPECT_EQ(r.dtype(), int32);
    EXPECT_EQ(values(r), (std::vector<double>{0, 5, 5, 2}));
    // A 0-d array flattens to one element.
    EXPECT_EQ(values(take(array(7.0f), array({0, 0, -1}), dev)), (std::vector<double>{7, 7, 7}));
  }
}

TEST(OpsIndexing, TakeAlongAnAxisPutsTheIndexDimensionsAtTheAxis) {
  const Shape as = {3, 4, 5};
  const auto av = exact_values(60, float32, 1);
  array a = make(av, as, float32);
  const Shape is = {2, 3};
  const std::vector<double> iv = {0, -1, 2, 1, 1, -3};
  for (const Device& dev : test_devices()) {
    for (int axis : {0, 1, 2, -1, -3}) {
      const int ax = axis < 0 ? axis + 3 : axis;
      std::vector<double> ivv = iv;
      for (auto& x : ivv) x = std::fmod(x, as[ax]);
      array r = take(a, make(ivv, is, int32), axis, dev);
      Shape want_shape;
      auto want = ref_take(av, as, ivv, is, ax, &want_shape);
      EXPECT_EQ(r.shape(), want_shape) << axis;
      expect_same(values(r), want, "axis " + std::to_string(axis));
    }
  }
}

TEST(OpsIndexing, TakeAcceptsEveryIntegerIndexDtype) {
  array a = make(exact_values(20, float32, 2), {4, 5}, float32);
  for (const Device& dev : test_devices()) {
    for (Dtype it : kIntegerDtypes) {
      std::vector<double> iv = {3, 0, 2, 2};
      if (!issubdtype(it, unsignedinteger)) iv[1] = -4;  // wraps to 0
      array r = take(a, make(iv, {4}, it), 0, dev);
      Shape ws;
      auto want = ref_take(values(a), a.shape(), iv, {4}, 0, &ws);
      expect_same(values(r), want, where(dev, it));
    }
  }
}

TEST(OpsIndexing, TakeInEveryDtypeAndFromNonContiguousInputs) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      const auto av = exact_values(24, dt, 3);
      array a = make(av, {4, 6}, dt);
      array idx = array({3, 1, 1, 0, -2});
      for (int axis : {0, 1}) {
        array r = take(a, idx, axis, dev);
        EXPECT_EQ(r.dtype(), dt);
        Shape ws;
        auto want = ref_take(av, {4, 6}, values(idx), {5}, axis, &ws);
        EXPECT_EQ(r.shape(), ws);
        expect_same(values(r), want, where(dev, dt));
      }
      // A transposed view and a broadcast view.
      array t = transpose(a);
      Shape ws;
      auto want = ref_take(values(t), {6, 4}, values(idx), {5}, 1, &ws);
      expect_same(values(take(t, idx, 1, dev)), want, "transposed " + where(dev, dt));
      array bc = broadcast_to(make(exact_values(6, dt, 4), {1, 6}, dt), {3, 6});
      want = ref_take(values(bc), {3, 6}, {2, 0}, {2}, 0, &ws);
      expect_same(values(take(bc, array({2, 0}), 0, dev)), want, "broadcast " + where(dev, dt));
    }
  }
}

TEST(OpsIndexing, TakeRowsOfALargeTable) {
  const int rows = 3000, cols = 96, ids = 5000;
  const auto av = ints(int64_t{rows} * cols, 5, -1000, 1000);
  array a = make(av, {rows, cols}, float32);
  const auto iv = ints(ids, 6, -rows, rows - 1);
  array idx = make(iv, {ids}, int64);
  const int ids2 = 150;
  const auto iv2 = ints(ids2, 7, -cols, cols - 1);
  std::vector<double> want0, want1;
  for (int i = 0; i < ids; ++i) {
    const int64_t r = wrap(static_cast<int64_t>(iv[i]), rows);
    for (int j = 0; j < cols; ++j) want0.push_back(av[r * cols + j]);
  }
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < ids2; ++i)
      want1.push_back(av[int64_t{r} * cols + wrap(static_cast<int64_t>(iv2[i]), cols)]);
  }
  for (const Device& dev : test_devices()) {
    expect_same(values(take(a, idx, 0, dev)), want0, device_name(dev));
    // Along the last axis: strided slices.
    expect_same(values(take(a, make(iv2, {ids2}, int32), 1, dev)), want1, device_name(dev));
  }
}

TEST(OpsIndexing, TakeWithAnIntIndexDropsTheAxis) {
  for (const Device& dev : test_devices()) {
    array a = reshape(arange(12, dev), {3, 4}, dev);
    array r = take(a, 1, 0, dev);
    EXPECT_EQ(r.shape(), (Shape{4}));
    EXPECT_EQ(values(r), (std::vector<double>{4, 5, 6, 7}));
    EXPECT_EQ(values(take(a, 2, 1, dev)), (std::vector<double>{2, 6, 10}));
    EXPECT_EQ(values(take(a, -2, 1, dev)), (std::vector<double>{2, 6, 10}));  // -2 counts from the end
    EXPECT_EQ(values(take(a, -3, -1, dev)), (std::vector<double>{1, 5, 9}));
    array s = take(a, 7, dev);
    EXPECT_EQ(s.ndim(), 0u);
    EXPECT_EQ(s.item<int>(), 7);
    // As MLX: -1 makes an empty slice, which cannot be squeezed.
    EXPECT_THROW(take(a, -1, 0, dev), std::invalid_argument);
    EXPECT_THROW(take(a, 3, 0, dev), std::invalid_argument);
  }
}

TEST(OpsIndexing, TakeZeroSizeAndScalarIndices) {
  for (const Device& dev : test_devices()) {
    array a = reshape(arange(12, dev), {3, 4}, dev);
    array r = take(a, array(2), 1, dev);  // 0-d index: the axis disappears
    EXPECT_EQ(r.shape(), (Shape{3}));
    EXPECT_EQ(values(r), (std::vector<double>{2, 6, 10}));
    array e = take(a, zeros({0}, int32), 1, dev);
    EXPECT_EQ(e.shape(), (Shape{3, 0}));
    EXPECT_EQ(take(a, zeros({2, 0}, int32), 0, dev).shape(), (Shape{2, 0, 4}));
    array z = zeros({0, 4}, float32);
    EXPECT_EQ(take(z, zeros({0}, int32), 0, dev).shape(), (Shape{0, 4}));
    EXPECT_THROW(take(z, array({0}), 0, dev), std::invalid_argument);
  }
}

TEST(OpsIndexing, OutOfRangeIndicesAreClampedAndNeverReadOutside) {
  for (const Device& dev : test_devices()) {
    array a = array({10.0f, 11.0f, 12.0f, 13.0f, 14.0f});
    // After wrapping negatives once: 7 -> 4, -9 -> -4 -> 0, 5 -> 4.
    EXPECT_EQ(values(take(a, array({7, -9, 5, 1}), 0, dev)), (std::vector<double>{14, 10, 14, 11}));
  }
}

TEST(OpsIndexing, TakeAlongAxisMatchesNumPy) {
  for (const Device& dev : test_devices()) {
    array a = reshape(arange(12, dev), {3, 4}, dev);
    array idx = array({0, 3, -1, 1, 2, 0}, {3, 2});
    array r = take_along_axis(a, idx, 1, dev);
    EXPECT_EQ(r.shape(), (Shape{3, 2}));
    EXPECT_EQ(values(r), (std::vector<double>{0, 3, 7, 5, 10, 8}));
    // Index dimensions of size 1 broadcast against the array.
    array r0 = take_along_axis(a, array({2, 0, 1, 1}, {1, 4}), 0, dev);
    EXPECT_EQ(values(r0), (std::vector<double>{8, 1, 6, 7}));
    array r2 = take_along_axis(a, array({1}, {1, 1}), -1, dev);
    EXPECT_EQ(r2.shape(), (Shape{3, 1}));
    EXPECT_EQ(values(r2), (std::vector<double>{1, 5, 9}));
    // argsort then take_along_axis sorts.
    array f = make({3, 1, 2, 9, 7, 8}, {2, 3}, float32);
    EXPECT_EQ(values(take_along_axis(f, argsort(f, 1, dev), 1, dev)), values(sort(f, 1, dev)));
  }
}

namespace {

// take_along_axis in double: a and the indices broadcast along every axis but `axis`; an index
// wraps once if negative, then clamps into range.
std::vector<double> ref_take_along(const std::vector<double>& a, const Shape& as, const std::vector<double>& idx,
                                   const Shape& is, int axis, Shape* out_shape) {
  Shape os(as.size());
  for (size_t d = 0; d < as.size(); ++d) os[d] = static_cast<int>(d) == axis ? is[d] : std::max(as[d], is[d]);
  *out_shape = os;
  const auto ast = strides_of(as), ist = strides_of(is);
  std::vector<double> out(static_cast<size_t>(numel(os)));
  for (int64_t o = 0; o < numel(os); ++o) {
    const auto oi = unravel(o, os);
    int64_t io = 0, ao = 0;
    for (size_t d = 0; d < os.size(); ++d) io += (is[d] == 1 ? 0 : oi[d]) * ist[d];
    const int64_t dim = as[axis];
    const int64_t at = std::clamp<int64_t>(wrap(static_cast<int64_t>(idx[io]), dim), 0, dim - 1);
    for (size_t d = 0; d < os.size(); ++d)
      ao += (static_cast<int>(d) == axis ? at : (as[d] == 1 ? 0 : oi[d])) * ast[d];
    out[o] = a[ao];
  }
  return out;
}

}  // namespace

TEST(OpsIndexing, TakeAlongAxisInEveryDtypeLayoutAndIndexType) {
  struct Case {
    Shape a, idx;
    int axis;
  };
  // Broadcasting on either side, out-of-range and negative indices, an empty index axis.
  const std::vector<Case> cases = {{{4, 5, 6}, {4, 3, 6}, 1}, {{4, 5, 6}, {4, 5, 9}, 2}, {{4, 5, 6}, {2, 1, 6}, 0},
                                   {{4, 1, 6}, {4, 3, 7}, 2}, {{3, 7}, {3, 0}, 1},       {{300, 700}, {300, 500}, 1},
                                   {{700, 3}, {900, 3}, 0}};
  for (const Device& dev : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      for (Dtype it : {int32, int64, uint8, int16, uint32}) {
        for (const Case& c : cases) {
          if (numel(c.a) > 1000 && (dt != float32 || it != int32)) continue;  // large: one of each
          const auto av = exact_values(numel(c.a), dt, 70);
          const int lo = issubdtype(it, unsignedinteger) ? 0 : -c.a[c.axis] - 2;
          auto iv = ints(numel(c.idx), 71, lo, c.a[c.axis] + 2);
          array a = make(av, c.a, dt);
          array idx = make(iv, c.idx, it);
          Shape os;
          const auto want = ref_take_along(values(a), c.a, iv, c.idx, c.axis, &os);
          const std::string what = where(dev, dt) + " indices " + dtype_name(it);
          array r = take_along_axis(a, idx, c.axis, dev);
          EXPECT_EQ(r.shape(), os) << what;
          EXPECT_EQ(r.dtype(), dt) << what;
          expect_same(values(r), want, what);
        }
      }
    }
    // Non-contiguous source and indices.
    array base = make(ints(120, 72, -50, 50), {4, 5, 6}, float32);
    array t = transpose(base, {2, 0, 1});  // [6, 4, 5]
    array it = transpose(make(ints(72, 73, -5, 4), {3, 4, 6}, int32), {2, 1, 0});  // [6, 4, 3]
    Shape os;
    const auto want = ref_take_along(values(t), t.shape(), values(it), it.shape(), 2, &os);
    expect_same(values(take_along_axis(t, it, 2, dev)), want, "transposed " + device_name(dev));
    array bi = broadcast_to(array({4, 0, -1}, {1, 1, 3}), {6, 4, 3});
    const auto want_b = ref_take_along(values(t), t.shape(), values(bi), bi.shape(), 2, &os);
    expect_same(values(take_along_axis(t, bi, 2, dev)), want_b, "broadcast indices " + device_name(dev));
  }
}

TEST(OpsIndexing, PutAlongAxisWritesAndScatterAddAxisAccumulates) {
  for (const Device& dev : test_devices()) {
    array a = zeros({2, 3}, float32);
    array idx = array({2, 0, 1, 1}, {2, 2});
    array r = put_along_axis(a, array({2, 0, 1, 0}, {2, 2}), array({5.0f, 6.0f, 7.0f, 8.0f}, {2, 2}), 1, dev);
    EXPECT_EQ(values(r), (std::vector<double>{6, 0, 5, 8, 7, 0}));
    EXPECT_EQ(values(put_along_axis(a, array({2, 0}, {2, 1}), array(9.0f), 1, dev)),
              (std::vector<double>{0, 0, 9, 9, 0, 0}));
    EXPECT_EQ(values(put_along_axis(a, array({-1, 0, 1}, {1, 3}), array({1.0f, 2.0f, 3.0f}, {1, 3}), 0, dev)),
              (std::vector<double>{0, 2, 0, 1, 0, 3}));
    array s = scatter_add_axis(a, idx, array({5.0f, 6.0f, 7.0f, 8.0f}, {2, 2}), 1, dev);
    EXPECT_EQ(values(s), (std::vector<double>{6, 0, 5, 0, 15, 0}));
    // Values broadcast the indices up (duplicates then accumulate).
    EXPECT_EQ(values(scatter_add_axis(a, array({0, 2}, {2, 1}), ones({2, 3}), 1, dev)),
              (std::vector<double>{3, 0, 0, 0, 0, 3}));
    // Values are cast to a's dtype; an empty a is returned unchanged.
    EXPECT_EQ(put_along_axis(zeros({2, 2}, int32), array({0, 1}, {2, 1}), array(2.7f), 1, dev).dtype(),
              int32);
    EXPECT_EQ(put_along_axis(zeros({0, 2}), zeros({0, 2}, int32), array(1.0f), 1, dev).shape(),
              (Shape{0, 2}));
  }
}

// ---------------------------------------------------------------------------------- gather

TEST(OpsIndexing, GatherKeepsSliceDimensions) {
  const Shape as = {4, 5, 6};
  const auto av = exact_values(120, float32, 8);
  array a = make(av, as, float32);
  const auto st = strides_of(as);
  for (const Device& dev : test_devices()) {
    array i0 = array({0, 3, -1}, {3, 1});
    array i2 = array({5, 1}, {1, 2});
    array r = gather(a, {i0, i2}, {0, 2}, {1, 5, 1}, dev);
    EXPECT_EQ(r.shape(), (Shape{3, 2, 1, 5, 1}));
    std::vector<double> want;
    for (int x : {0, 3, 3}) {
      for (int z : {5, 1}) {
        for (int y = 0; y < 5; ++y) want.push_back(av[x * st[0] + y * st[1] + z * st[2]]);
      }
    }
    expect_same(values(r), want, device_name(dev));
    // Slices longer than one along the indexed axis; starts clamp so the slice fits.
    array g = gather(a, array({1, 3}), 0, {2, 1, 6}, dev);
    EXPECT_EQ(g.shape(), (Shape{2, 2, 1, 6}));
    want.clear();
    for (int x : {1, 2}) {  // start 3 is clamped to 4 - 2 = 2
      for (int dx = 0; dx < 2; ++dx) {
        for (int z = 0; z < 6; ++z) want.push_back(av[(x + dx) * st[0] + z * st[2]]);
      }
    }
    expect_same(values(g), want, device_name(dev));
    // No index arrays: the leading slice.
    array h = gather(a, std::vector<array>{}, std::vector<int>{}, {2, 2, 2}, dev);
    EXPECT_EQ(h.shape(), (Shape{2, 2, 2}));
    EXPECT_EQ(values(h)[7], av[st[0] + st[1] + 1]);
    // Zero-size slices.
    EXPECT_EQ(gather(a, array({1}), 1, {4, 0, 6}, dev).shape(), (Shape{1, 4, 0, 6}));
  }
}

// ---------------------------------------------------------------------------------- scatter

TEST(OpsIndexing, ScatterWritesUpdateSlices) {
  for (const Device& dev : test_devices()) {
    array a = zeros({4, 3}, float32);
    array upd = make({1, 2, 3, 4, 5, 6}, {2, 1, 3}, float32);
    array r = scatter(a, array({2, -4}), upd, 0, dev);
    EXPECT_EQ(r.shape(), (Shape{4, 3}));
    EXPECT_EQ(values(r), (std::vector<double>{4, 5, 6, 0, 0, 0, 1, 2, 3, 0, 0, 0}));
    // Partial slices and two indexed axes.
    array p = scatter(a, {array({1, 3}), array({2, 0})}, make({7, 8}, {2, 1, 1}, float32), {0, 1}, dev);
    EXPECT_EQ(values(p), (std::vector<double>{0, 0, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0}));
    // The input is not modified.
    EXPECT_EQ(values(a), std::vector<double>(12, 0));
  }
}

TEST(OpsIndexing, ScatterReductionsCombineDuplicates) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {int8, int16, int32, uint8, uint32, int64, uint64, float16, bfloat16, float32, float64}) {
      array a = make({1, 2, 3, 4}, {4}, dt);
      array idx = array({0, 2, 0, 3, 0});
      array upd = make({2, 3, 3, 1, 1}, {5, 1}, dt);
      expect_same(values(scatter_add(a, idx, upd, 0, dev)), {7, 2, 6, 5}, "add " + where(dev, dt));
      expect_same(values(scatter_prod(a, idx, upd, 0, dev)), {6, 2, 9, 4}, "prod " + where(dev, dt));
      expect_same(values(scatter_max(a, idx, upd, 0, dev)), {3, 2, 3, 4}, "max " + where(dev, dt));
      expect_same(values(scatter_min(a, idx, upd, 0, dev)), {1, 2, 3, 1}, "min " + where(dev, dt));
      expect_same(values(scatter(a, array({1}), make({9}, {1, 1}, dt), 0, dev)), {1, 9, 3, 4},
                  where(dev, dt));
    }
  }
}

TEST(OpsIndexing, ScatterInEveryDtype) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      const auto av = exact_values(12, dt, 9);
      array a = make(av, {3, 4}, dt);
      array upd = make(exact_values(8, dt, 10), {2, 1, 4}, dt);
      auto want = av;
      const auto uv = values(upd);
      for (int j = 0; j < 4; ++j) want[2 * 4 + j] = uv[j], want[0 * 4 + j] = uv[4 + j];
      expect_same(values(scatter(a, array({2, 0}), upd, 0, dev)), want, where(dev, dt));
      array sum1 = scatter_add(a, array({1, 1}), upd, 0, dev);
      EXPECT_EQ(sum1.dtype(), dt);
      auto ws = av;
      for (int j = 0; j < 4; ++j) ws[4 + j] = av[4 + j] + uv[j] + uv[4 + j];
      if (dt == bool_) {
        for (auto& x : ws) x = x != 0;  // bool adds as logical or
      }
      expect_same(values(sum1), ws, "add " + where(dev, dt));
    }
  }
}

TEST(OpsIndexing, ScatterAddOfManyRowsIntoALargeTable) {
  const int rows = 2000, cols = 160, ids = 6000;
  const auto av = ints(int64_t{rows} * cols, 11, -8, 8);
  const auto iv = ints(ids, 12, -rows, rows - 1);
  const auto uv = ints(int64_t{ids} * cols, 13, -8, 8);
  std::vector<double> want = av;
  for (int i = 0; i < ids; ++i) {
    const int64_t r = wrap(static_cast<int64_t>(iv[i]), rows);
    for (int j = 0; j < cols; ++j) want[r * cols + j] += uv[int64_t{i} * cols + j];
  }
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {float32, int32, float64}) {
      array r = scatter_add(make(av, {rows, cols}, dt), make(iv, {ids}, int32), make(uv, {ids, 1, cols}, dt),
                            0, dev);
      expect_same(values(r), want, where(dev, dt));
    }
  }
}

// On the CPU, updates of one row apply in their order, whichever thread applies them (rows are
// grouped by destination, or split into column ranges when a few rows take most updates):
// float32 sums of values far apart in magnitude, whose rounding depends on the order, equal
// the sequential sums bit for bit, and of several writes to a row the last one stays.
TEST(OpsIndexing, ScatterAppliesTheUpdatesOfARowInTheirOrder) {
  const int rows = 3000, cols = 96, ids = 4096;
  std::mt19937 gen(21);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> table(static_cast<size_t>(rows) * cols), upd(static_cast<size_t>(ids) * cols);
  for (float& x : table) x = unit(gen);
  for (size_t i = 0; i < upd.size(); ++i) upd[i] = unit(gen) * (i % 3 == 0 ? 1e6f : 1.0f);
  struct Case {
    const char* name;
    std::function<int32_t(int)> id;
  };
  const std::vector<Case> cases = {
      {"spread with repeats", [&](int) { return static_cast<int32_t>(gen() % rows); }},
      {"sorted with repeats", [](int i) { return static_cast<int32_t>(int64_t{i} * rows / ids); }},
      {"one row", [](int) { return int32_t{7}; }},
      {"a few rows", [&](int) { return static_cast<int32_t>(gen() % 3); }},
      {"some out of range", [&](int) { return static_cast<int32_t>(gen() % (2 * rows)) - rows / 2; }},
  };
  for (const Case& c : cases) {
    std::vector<int32_t> idx(ids);
    for (int i = 0; i < ids; ++i) idx[i] = c.id(i);
    std::vector<float> summed = table, written = table;
    for (int i = 0; i < ids; ++i) {
      int64_t r = idx[i] < 0 ? idx[i] + rows : idx[i];
      if (r < 0 || r >= rows) continue;
      for (int j = 0; j < cols; ++j) {
        summed[r * cols + j] += upd[static_cast<size_t>(i) * cols + j];
        written[r * cols + j] = upd[static_cast<size_t>(i) * cols + j];
      }
    }
    const array a(table.data(), {rows, cols}, float32);
    const array u(upd.data(), {ids, 1, cols}, float32);
    const array at(idx.data(), {ids}, int32);
    const std::vector<double> got_sum = values(scatter_add(a, at, u, 0, Device::cpu));
    const std::vector<double> got_set = values(scatter(a, at, u, 0, Device::cpu));
    int64_t wrong_sum = 0, wrong_set = 0;
    for (size_t k = 0; k < table.size(); ++k) {
      wrong_sum += static_cast<float>(got_sum[k]) != summed[k];
      wrong_set += static_cast<float>(got_set[k]) != written[k];
    }
    EXPECT_EQ(wrong_sum, 0) << c.name << ": scatter_add";
    EXPECT_EQ(wrong_set, 0) << c.name << ": scatter";
  }
}

TEST(OpsIndexing, ScatterDropsOutOfRangeUpdates) {
  for (const Device& dev : test_devices()) {
    array a = zeros({4}, float32);
    array r = scatter_add(a, array({4, -5, 1, -1, 100}), make({1, 2, 3, 4, 5}, {5, 1}, float32), 0, dev);
    EXPECT_EQ(values(r), (std::vector<double>{0, 3, 0, 4}));
  }
}

TEST(OpsIndexing, ScatterOfNonContiguousUpdatesAndInputs) {
  for (const Device& dev : test_devices()) {
    array a = transpose(reshape(arange(12.0, float32), {4, 3}));                          // (3, 4) view
    array upd = transpose(reshape(arange(100.0, 108.0, float32), {4, 1, 2}), {2, 1, 0});  // (2, 1, 4)
    array r = scatter(a, array({2, 0}), upd, 0, dev);
    auto av = values(a);
    auto uv = values(upd);
    for (int j = 0; j < 4; ++j) av[8 + j] = uv[j], av[j] = uv[4 + j];
    EXPECT_EQ(values(r), av);
  }
}

TEST(OpsIndexing, MaskedScatterFillsTruePositionsInOrder) {
  for (const Device& dev : test_devices()) {
    array a = zeros({2, 3}, float32);
    array mask = array({true, false, true, false, true, true}, {2, 3});
    array src = array({1, 2, 3, 4, 5});  // int32, cast to float32
    array r = masked_scatter(a, mask, src, dev);
    EXPECT_EQ(r.dtype(), float32);
    EXPECT_EQ(values(r), (std::vector<double>{1, 0, 2, 0, 3, 4}));
    // A mask over the leading dimensions covers whole rows.
    array r2 = masked_scatter(a, array({false, true}), src, dev);
    EXPECT_EQ(values(r2), (std::vector<double>{0, 0, 0, 1, 2, 3}));
    // Positions past the end of src keep a's value.
    array r3 = masked_scatter(full({2, 3}, 7.0f), array({true, true}), array({1.0f, 2.0f}), dev);
    EXPECT_EQ(values(r3), (std::vector<double>{1, 2, 7, 7, 7, 7}));
    // Large enough for the chunked passes.
    const int n = 300000;
    auto mv = ints(n, 14, 0, 1);
    std::vector<double> want(n, -1);
    std::vector<double> sv(n);
    std::iota(sv.begin(), sv.end(), 0);
    for (int i = 0, k = 0; i < n; ++i) {
      if (mv[i] != 0) want[i] = k++;
    }
    array big = masked_scatter(full({n}, -1.0f), make(mv, {n}, bool_), make(sv, {n}, float32), dev);
    expect_same(values(big), want, device_name(dev));
  }
}

// ---------------------------------------------------------------------------------- sorting

TEST(OpsSort, SortWithoutAxisSortsTheFlattenedArray) {
  for (const Device& dev : test_devices()) {
    array a = make({5, 1, 4, 2, 3, 0}, {2, 3}, float32);
    array r = sort(a, dev);
    EXPECT_EQ(r.shape(), (Shape{6}));
    EXPECT_EQ(values(r), (std::vector<double>{0, 1, 2, 3, 4, 5}));
    array p = argsort(a, dev);
    EXPECT_EQ(p.dtype(), uint32);
    EXPECT_EQ(values(p), (std::vector<double>{5, 1, 3, 4, 2, 0}));
    EXPECT_EQ(sort(array(3.0f), dev).shape(), (Shape{1}));
    EXPECT_EQ(values(sort(a, -1, dev)), (std::vector<double>{1, 4, 5, 0, 2, 3}));
  }
}

TEST(OpsSort, SortAndArgsortAlongEveryAxisInEveryDtype) {
  const Shape shape = {3, 4, 5};
  for (const Device& dev : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      const auto av = values(make(exact_values(60, dt, 20), shape, dt));
      array a = make(av, shape, dt);
      for (int axis : {0, 1, 2, -1}) {
        const int ax = axis < 0 ? axis + 3 : axis;
        std::vector<double> ws, wp;
        ref_sort(av, shape, ax, &ws, &wp);
        array s = sort(a, axis, dev);
        EXPECT_EQ(s.dtype(), dt);
        expect_same(values(s), ws, "sort " + where(dev, dt));
        array p = argsort(a, axis, dev);
        EXPECT_EQ(p.dtype(), uint32);
        expect_same(values(p), wp, "argsort " + where(dev, dt));
      }
    }
  }
}

TEST(OpsSort, NaNsGoLastAndEqualElementsKeepTheirOrder) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : kRealFloatDtypes) {
      array a = make({3, kNaN, 1, 1, -0.0, 0.0, kNaN, -kInf, kInf}, {9}, dt);
      expect_same(values(argsort(a, 0, dev)), {7, 4, 5, 2, 3, 0, 8, 1, 6}, where(dev, dt));
      expect_same(values(sort(a, 0, dev)), {-kInf, 0, 0, 1, 1, 3, kInf, kNaN, kNaN}, where(dev, dt));
    }
  }
}

TEST(OpsSort, LongRowsSortStablyInEveryRealDtype) {
  const int n = 100000;
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {float32, float16, bfloat16, float64, int64, int8, uint16, uint32, bool_}) {
      auto av = values(make(exact_values(n, dt, 21), {n}, dt));
      if (is_floating_point(dt)) {
        for (int i = 0; i < n; i += 997) av[i] = kNaN;
        av[5] = -kInf;
        av[6] = -0.0;
      }
      array a = make(av, {n}, dt);
      std::vector<double> ws, wp;
      ref_sort(av, {n}, 0, &ws, &wp);
      expect_same(values(sort(a, dev)), ws, "sort " + where(dev, dt));
      expect_same(values(argsort(a, dev)), wp, "argsort " + where(dev, dt));
    }
    // Many rows of medium length, along a non-last axis.
    const Shape shape = {700, 40};
    auto av = ints(28000, 22, -300, 300);
    std::vector<double> ws, wp;
    ref_sort(av, shape, 0, &ws, &wp);
    array a = make(av, shape, float32);
    expect_same(values(sort(a, 0, dev)), ws, "rows " + device_name(dev));
    expect_same(values(argsort(a, 0, dev)), wp, "rows " + device_name(dev));
  }
}

TEST(OpsSort, SortsNonContiguousAndZeroSizeInputs) {
  for (const Device& dev : test_devices()) {
    array base = make(ints(60, 23, -9, 9), {3, 4, 5}, float32);
    array t = transpose(base, {2, 0, 1});
    const auto tv = values(t);
    for (int axis : {0, 1, 2}) {
      std::vector<double> ws, wp;
      ref_sort(tv, t.shape(), axis, &ws, &wp);
      expect_same(values(sort(t, axis, dev)), ws, "transposed");
      expect_same(values(argsort(t, axis, dev)), wp, "transposed");
    }
    array bc = broadcast_to(array({3.0f, 1.0f, 2.0f}), {2, 3});
    EXPECT_EQ(values(sort(bc, 1, dev)), (std::vector<double>{1, 2, 3, 1, 2, 3}));
    EXPECT_EQ(values(argsort(bc, 0, dev)), (std::vector<double>{0, 0, 0, 1, 1, 1}));
    EXPECT_EQ(sort(zeros({0, 3}), 1, dev).shape(), (Shape{0, 3}));
    EXPECT_EQ(argsort(zeros({2, 0}), 1, dev).shape(), (Shape{2, 0}));
    EXPECT_EQ(sort(zeros({0}), dev).size(), 0u);
  }
}

TEST(OpsSort, ComplexSortsLexicographically) {
  for (const Device& dev : test_devices()) {
    std::vector<complex64_t> c = {{2, 1}, {1, 5}, {2, -1}, {1, 0}};
    array a(c.begin(), {4}, complex64);
    EXPECT_EQ(values(argsort(a, 0, dev)), (std::vector<double>{3, 1, 2, 0}));
    auto s = complex_values(sort(a, 0, dev));
    EXPECT_EQ(s[1], std::complex<float>(1, 5));
    EXPECT_EQ(s[2], std::complex<float>(2, -1));
  }
}

namespace {

// Checks the partition property of `got` (values of one row) around kth.
void expect_partitioned(const std::vector<double>& got, std::vector<double> row, int kth,
                        const std::string& what) {
  std::stable_sort(row.begin(), row.end(), ref_less);
  ASSERT_EQ(got.size(), row.size());
  const double pivot = got[kth];
  EXPECT_TRUE(pivot == row[kth] || (std::isnan(pivot) && std::isnan(row[kth]))) << what;
  for (int i = 0; i < kth; ++i) EXPECT_FALSE(ref_less(pivot, got[i])) << what << " at " << i;
  for (size_t i = kth + 1; i < got.size(); ++i) EXPECT_FALSE(ref_less(got[i], pivot)) << what << " at " << i;
  auto sorted_got = got;
  std::stable_sort(sorted_got.begin(), sorted_got.end(), ref_less);
  expect_same(sorted_got, row, what + " (same elements)");
}

}  // namespace

TEST(OpsSort, PartitionPlacesTheKthElement) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {float32, int32, float16, uint8}) {
      const int n = 1000;
      auto av = values(make(exact_values(n, dt, 24), {n}, dt));
      array a = make(av, {n}, dt);
      for (int kth : {0, 17, 500, n - 1, -1, -300}) {
        const int k = kth < 0 ? kth + n : kth;
        expect_partitioned(values(partition(a, kth, dev)), av, k, "partition " + where(dev, dt));
        auto p = values(argpartition(a, kth, 0, dev));
        std::vector<double> by_index;
        for (double i : p) by_index.push_back(av[static_cast<size_t>(i)]);
        expect_partitioned(by_index, av, k, "argpartition " + where(dev, dt));
      }
    }
    // Rows along the first axis.
    auto av = ints(60, 25, -9, 9);
    array a = make(av, {6, 10}, float32);
    auto got = values(partition(a, 2, 0, dev));
    for (int c = 0; c < 10; ++c) {
      std::vector<double> row, col;
      for (int r = 0; r < 6; ++r) row.push_back(av[r * 10 + c]), col.push_back(got[r * 10 + c]);
      expect_partitioned(col, row, 2, "axis 0");
    }
    EXPECT_EQ(argpartition(a, 1, dev).dtype(), uint32);
  }
}

TEST(OpsSort, PartitionOfLongRows) {
  // Rows long enough for the GPU's select to stage them in shared memory (with either block
  // size) and too long for it; keys of 1, 2 and 8 bytes with many ties, and of 4.
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {float32, float16, int64, uint8}) {
      for (int n : {3000, 20000, 70000}) {
        const int rows = 2;
        // Wide ranges (every key byte matters) for float32 and int64, narrow ones elsewhere.
        const bool wide = dt == float32 || dt == int64;
        auto av = values(
            make(wide ? ints(rows * n, n % 97, -(1 << 24), 1 << 24) : exact_values(rows * n, dt, n % 97),
                 {rows * n}, dt));
        array a = make(av, {rows, n}, dt);
        for (int kth : {0, n / 2, n - 32}) {
          auto got = values(partition(a, kth, 1, dev));
          auto places = values(argpartition(a, kth, 1, dev));
          for (int r = 0; r < rows; ++r) {
            std::vector<double> row(av.begin() + int64_t{r} * n, av.begin() + int64_t{r + 1} * n);
            std::vector<double> g(got.begin() + int64_t{r} * n, got.begin() + int64_t{r + 1} * n), by_index;
            const std::string what =
                where(dev, dt) + " n " + std::to_string(n) + " kth " + std::to_string(kth);
            expect_partitioned(g, row, kth, "partition " + what);
            for (int64_t i = int64_t{r} * n; i < int64_t{r + 1} * n; ++i)
              by_index.push_back(row[static_cast<size_t>(places[i])]);
            expect_partitioned(by_index, row, kth, "argpartition " + what);
          }
        }
      }
    }
  }
}

TEST(OpsSort, TopkReturnsTheKLargest) {
  for (const Device& dev : test_devices()) {
    auto av = ints(240, 26, -50, 50);
    array a = make(av, {4, 60}, float32);
    for (int k : {1, 5, 59}) {
      array t = topk(a, k, 1, dev);
      EXPECT_EQ(t.shape(), (Shape{4, k}));
      auto got = values(t);
      for (int r = 0; r < 4; ++r) {
        std::vector<double> row(av.begin() + r * 60, av.begin() + (r + 1) * 60);
        std::sort(row.begin(), row.end());
        std::vector<double> want(row.end() - k, row.end());
        std::vector<double> g(got.begin() + r * k, got.begin() + (r + 1) * k);
        std::sort(g.begin(), g.end());
        EXPECT_EQ(g, want) << "k " << k;
      }
    }
    EXPECT_EQ(topk(a, 0, 1, dev).shape(), (Shape{4, 0}));
    array all = topk(a, 60, -1, dev);
    EXPECT_EQ(all.id(), a.id());  // k == n returns a itself
    array flat = topk(a, 3, dev);
    EXPECT_EQ(flat.shape(), (Shape{3}));
    auto fv = values(flat);
    std::sort(fv.begin(), fv.end());
    auto sorted = av;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(fv, std::vector<double>(sorted.end() - 3, sorted.end()));
    // NaN sorts last, so it is the largest.
    EXPECT_TRUE(std::isnan(values(topk(make({1, kNaN, 3}, {3}, float32), 1, dev))[0]));
  }
}
