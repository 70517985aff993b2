// Creation, shape, data-movement and slicing ops: each checked against a reference computed
// here on row-major doubles, on every device, in every dtype, for contiguous and strided
// (transposed, sliced, broadcast) inputs, size-zero and 0-d shapes, and sizes that take the
// parallel copy paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.h"

using namespace braid;
using test::kEveryDtype;
using test::make;
using test::test_devices;
using test::values;

namespace {

// A row-major reference array of doubles.
struct Ref {
  Shape shape;
  std::vector<double> v;

  static Ref iota(const Shape& shape, double start = 0, int64_t mod = 0) {
    Ref r{shape, {}};
    int64_t n = 1;
    for (auto d : shape) n *= d;
    r.v.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) r.v[i] = start + static_cast<double>(mod ? i % mod : i);
    return r;
  }
  Strides strides() const {
    Strides st(shape.size(), 1);
    for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
      st[i] = st[i + 1] * std::max(shape[i + 1], 1);
    return st;
  }
  // Calls f(index) for every index in row-major order.
  static void for_each(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      f(idx);
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  }
  double at(const std::vector<int64_t>& idx) const {
    const Strides st = strides();
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * st[i];
    return v[static_cast<size_t>(off)];
  }
  // The reference of a computation out[idx] = f(idx) over `shape`.
  static Ref build(const Shape& shape, const std::function<double(const std::vector<int64_t>&)>& f) {
    Ref r{shape, {}};
    for_each(shape, [&](const std::vector<int64_t>& idx) { r.v.push_back(f(idx)); });
    return r;
  }
};

// What a value becomes in dtype `dt` (the test values are small integers: exact elsewhere).
double in_dtype(double x, Dtype dt) { return dt == bool_ ? (x != 0 ? 1.0 : 0.0) : x; }

std::vector<double> cast_all(std::vector<double> v, Dtype dt) {
  for (auto& x : v) x = in_dtype(x, dt);
  return v;
}

array make_on(const Ref& r, Dtype dt, Device d) {
  array a = make(r.v, r.shape, dt);
  // On the GPU, a node's output: device-resident, so that views of it share its buffer.
  return d == Device::cpu ? a : where(array(true), a, a, d);
}

void expect_values(const array& got, const Ref& want, const std::string& what) {
  EXPECT_EQ(got.shape(), want.shape) << what;
  test::expect_close(values(got), want.v, 0, 0, what);
}

std::string tag(Device d, Dtype dt) {
  std::ostringstream os;
  os << test::device_name(d) << " " << dt;
  return os.str();
}

// Inputs of one logical value in several layouts: contiguous, a transposed view of a
// column-major buffer, and a stepped slice of a larger array.
std::vector<std::pair<std::string, array>> layouts(const Ref& r, Dtype dt, Device d) {
  std::vector<std::pair<std::string, array>> out;
  out.emplace_back("contiguous", make_on(r, dt, d));
  if (r.shape.size() >= 2) {
    // The transpose of a contiguous transpose has r's values in a column-major buffer.
    Shape ts(r.shape.rbegin(), r.shape.rend());
    Ref t = Ref::build(ts, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> rev(idx.rbegin(), idx.rend());
      return r.at(rev);
    });
    out.emplace_back("transposed", transpose(make_on(t, dt, d), d));
  }
  if (!r.shape.empty()) {
    // Every other element of a doubled last axis.
    Shape big = r.shape;
    big.back() *= 2;
    Ref b = Ref::build(big, [&](const std::vector<int64_t>& idx) {
      if (idx.back() % 2) return -1.0;
      std::vector<int64_t> j = idx;
      j.back() /= 2;
      return r.at(j);
    });
    Shape start(big.size(), 0), stop = big, steps(big.size(), 1);
    steps.back() = 2;
    out.emplace_back("stepped slice", slice(make_on(b, dt, d), start, stop, steps, d));
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Creation

TEST(OpsShapeCreation, LikeOpsKeepShapeAndDtype) {
  for (Device d : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      array a = make(Ref::iota({2, 3}).v, {2, 3}, dt);
      array z = zeros_like(a, d), o = ones_like(a, d), f = full_like(a, 3, d);
      EXPECT_EQ(z.dtype(), dt);
      EXPECT_EQ(o.dtype(), dt);
      EXPECT_EQ(f.dtype(), dt);
      EXPECT_EQ(values(z), std::vector<double>(6, 0.0)) << tag(d, dt);
      EXPECT_EQ(values(o), std::vector<double>(6, 1.0)) << tag(d, dt);
      EXPECT_EQ(values(f), std::vector<double>(6, in_dtype(3, dt))) << tag(d, dt);
    }
    // full_like's shape is the broadcast of a's and the values'.
    array g = full_like(zeros({2, 1}), array({1.0f, 2.0f, 3.0f}), int32, d);
    EXPECT_EQ(g.shape(), (Shape{2, 3}));
    EXPECT_EQ(g.dtype(), int32);
    EXPECT_EQ(values(g), (std::vector<double>{1, 2, 3, 1, 2, 3}));
    EXPECT_EQ(full_like(zeros({2}, int8), 2.5f, float16, d).dtype(), float16);
    EXPECT_EQ(values(full_like(zeros({2}, int8), 2.7f, d)), (std::vector<double>{2, 2}));
    EXPECT_EQ(zeros_like(zeros({0, 4}), d).shape(), (Shape{0, 4}));
    EXPECT_EQ(ones_like(array(2.0f), d).ndim(), 0u);
  }
}

TEST(OpsShapeCreation, LinspaceIncludesBothEnds) {
  for (Device d : test_devices()) {
    array a = linspace(0, 1, 5, float32, d);
    EXPECT_EQ(a.dtype(), float32);
    test::expect_close(values(a), {0, 0.25, 0.5, 0.75, 1}, 1e-7, 0, "linspace");
    EXPECT_EQ(linspace(0, 10, 50, float32, d).size(), 50u);
    EXPECT_EQ(linspace(0, 10, 0, float32, d).size(), 0u);
    EXPECT_EQ(values(linspace(3, 10, 1, float32, d)), std::vector<double>{3});
    array b = linspace(-1, 1, 3, float64, d);
    EXPECT_EQ(b.dtype(), float64);
    EXPECT_EQ(values(b), (std::vector<double>{-1, 0, 1}));
    // Integer dtypes truncate the float32 values.
    EXPECT_EQ(values(linspace(0, 3, 4, int32, d)), (std::vector<double>{0, 1, 2, 3}));
    EXPECT_EQ(values(linspace(0, 1, 3, int32, d)), (std::vector<double>{0, 0, 1}));
    // Descending.
    test::expect_close(values(linspace(2, -2, 5, float16, d)), {2, 1, 0, -1, -2}, 0, 0, "descending");
  }
}

TEST(OpsShapeCreation, EyeAndIdentityPlaceOnesOnDiagonalK) {
  for (Device d : test_devices()) {
    for (int k : {-4, -1, 0, 1, 2, 5}) {
      array e = eye(3, 4, k, d);
      EXPECT_EQ(e.dtype(), float32);
      expect_values(e, Ref::build({3, 4}, [&](const auto& i) { return i[1] == i[0] + k ? 1.0 : 0.0; }),
                    "eye k=" + std::to_string(k));
    }
    for (Dtype dt : kEveryDtype) {
      array e = eye(3, dt, d);
      EXPECT_EQ(e.dtype(), dt);
      EXPECT_EQ(values(e), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1})) << tag(d, dt);
    }
    EXPECT_EQ(eye(2, 3, d).shape(), (Shape{2, 3}));
    EXPECT_EQ(eye(4, d).shape(), (Shape{4, 4}));
    EXPECT_EQ(eye(0, 0, d).shape(), (Shape{0, 0}));  // MLX's newer rule: empty, not an error
    EXPECT_EQ(eye(0, 3, d).shape(), (Shape{0, 3}));
    EXPECT_EQ(values(identity(2, int8, d)), (std::vector<double>{1, 0, 0, 1}));
    EXPECT_EQ(identity(2, d).dtype(), float32);
  }
}

TEST(OpsShapeCreation, TriTrilAndTriuFollowDiagonalK) {
  for (Device d : test_devices()) {
    for (int k : {-3, -1, 0, 1, 4}) {
      expect_values(tri(3, 5, k, int32, d),
                    Ref::build({3, 5}, [&](const auto& i) { return i[1] <= i[0] + k; }), "tri");
      const Ref x = Ref::iota({2, 3, 4}, 1);
      for (auto& [name, in] : layouts(x, float32, d)) {
        expect_values(tril(in, k, d),
                      Ref::build(x.shape, [&](const auto& i) { return i[2] <= i[1] + k ? x.at(i) : 0; }),
                      "tril " + name);
        expect_values(triu(in, k, d),
                      Ref::build(x.shape, [&](const auto& i) { return i[2] >= i[1] + k ? x.at(i) : 0; }),
                      "triu " + name);
      }
    }
    EXPECT_EQ(tri(2, bool_, d).dtype(), bool_);
    EXPECT_EQ(values(tri(2, bool_, d)), (std::vector<double>{1, 0, 1, 1}));
    for (Dtype dt : kEveryDtype) {
      array m = make(Ref::iota({3, 3}, 1).v, {3, 3}, dt);
      EXPECT_EQ(tril(m, 0, d).dtype(), dt);
      EXPECT_EQ(values(triu(m, 1, d)), cast_all({0, 2, 3, 0, 0, 6, 0, 0, 0}, dt)) << tag(d, dt);
    }
    EXPECT_EQ(tril(zeros({0, 3}), 0, d).shape(), (Shape{0, 3}));
  }
}

TEST(OpsShapeCreation, MeshgridInBothIndexings) {
  for (Device d : test_devices()) {
    array x({1, 2, 3}), y({4, 5});
    auto xy = meshgrid({x, y}, false, "xy", d);
    ASSERT_EQ(xy.size(), 2u);
    EXPECT_EQ(xy[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(values(xy[0]), (std::vector<double>{1, 2, 3, 1, 2, 3}));
    EXPECT_EQ(values(xy[1]), (std::vector<double>{4, 4, 4, 5, 5, 5}));
    auto ij = meshgrid({x, y}, false, "ij", d);
    EXPECT_EQ(ij[0].shape(), (Shape{3, 2}));
    EXPECT_EQ(values(ij[0]), (std::vector<double>{1, 1, 2, 2, 3, 3}));
    EXPECT_EQ(values(ij[1]), (std::vector<double>{4, 5, 4, 5, 4, 5}));
    auto sp = meshgrid({x, y, array({7, 8, 9, 10})}, true, "xy", d);
    EXPECT_EQ(sp[0].shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(sp[1].shape(), (Shape{2, 1, 1}));
    EXPECT_EQ(sp[2].shape(), (Shape{1, 1, 4}));
    auto dense = meshgrid({x, y, array({7, 8, 9, 10})}, false, "xy", d);
    EXPECT_EQ(dense[2].shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(meshgrid({x}, false, "xy", d)[0].shape(), (Shape{3}));
  }
}

TEST(OpsShapeCreation, ArangeConvertsStartAndStepToTheDtypeFirst) {
  for (Device d : test_devices()) {
    // As NumPy: the step of an integer arange is int(start + step) - int(start).
    EXPECT_EQ(values(arange(-3.0, 3.0, 0.5, int32, d)),
              (std::vector<double>{-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(values(arange(0.5, 5.0, 1.5, int32, d)), (std::vector<double>{0, 2, 4}));
    // An infinite step pointing the right way gives just the start; the wrong way nothing.
    EXPECT_EQ(values(arange(2.0, 5.0, INFINITY, d)), (std::vector<double>{2}));
    EXPECT_EQ(arange(2.0, 5.0, -INFINITY, d).size(), 0u);
    EXPECT_EQ(values(arange(0.0, 3.0, 1.0, complex64, d)), (std::vector<double>{0, 1, 2}));
    EXPECT_EQ(values(arange(10.0, 7.0, -1.0, uint8, d)), (std::vector<double>{10, 9, 8}));
    array big = arange(0, 200000, d);
    std::vector<double> want(200000);
    std::iota(want.begin(), want.end(), 0.0);
    EXPECT_EQ(values(big), want);
  }
}

TEST(OpsShapeCreation, WindowFunctions) {
  const double pi = std::acos(-1.0);
  for (Device d : test_devices()) {
    const int M = 7;
    std::vector<double> hann, hamm, bart, black;
    for (int n = 0; n < M; ++n) {
      const double x = static_cast<double>(n) / (M - 1);
      hann.push_back(0.5 - 0.5 * std::cos(2 * pi * x));
      hamm.push_back(0.54 - 0.46 * std::cos(2 * pi * x));
      bart.push_back(1 - std::abs(2 * x - 1));
      black.push_back(0.42 - 0.5 * std::cos(2 * pi * x) + 0.08 * std::cos(4 * pi * x));
    }
    test::expect_close(values(hanning(M, d)), hann, 1e-6, 1e-7, "hanning");
    test::expect_close(values(hamming(M, d)), hamm, 1e-6, 1e-7, "hamming");
    test::expect_close(values(bartlett(M, d)), bart, 1e-6, 1e-7, "bartlett");
    test::expect_close(values(blackman(M, d)), black, 1e-6, 1e-7, "blackman");
    EXPECT_EQ(hanning(M, d).dtype(), float32);
    EXPECT_EQ(hamming(0, d).shape(), (Shape{0}));
    EXPECT_EQ(bartlett(-3, d).shape(), (Shape{0}));
    EXPECT_EQ(values(blackman(1, d)), std::vector<double>{1});
  }
}

// ---------------------------------------------------------------------------------------------
// Views: squeeze, expand_dims, flatten, unflatten, swapaxes, moveaxis, atleast_*, broadcasting

TEST(OpsShapeViews, SqueezeAndExpandDimsShareTheBuffer) {
  for (Device d : test_devices()) {
    const Ref r = Ref::iota({1, 3, 1, 2});
    array a = make_on(r, float32, d);
    a.eval();
    array s = squeeze(a, d);
    EXPECT_EQ(s.shape(), (Shape{3, 2}));
    EXPECT_EQ(squeeze(a, 0, d).shape(), (Shape{3, 1, 2}));
    EXPECT_EQ(squeeze(a, std::vector<int>{-2, 0}, d).shape(), (Shape{3, 2}));
    EXPECT_EQ(squeeze(a, std::vector<int>{}, d).id(), a.id());
    EXPECT_EQ(values(s), r.v);
    s.eval();
    EXPECT_EQ(s.desc()->data.get(), a.desc()->data.get());
    array e = expand_dims(a, std::vector<int>{0, -1}, d);
    EXPECT_EQ(e.shape(), (Shape{1, 1, 3, 1, 2, 1}));
    EXPECT_EQ(expand_dims(a, 2, d).shape(), (Shape{1, 3, 1, 1, 2}));
    EXPECT_EQ(values(e), r.v);
    e.eval();
    EXPECT_EQ(e.desc()->data.get(), a.desc()->data.get());
    EXPECT_TRUE(e.flags().row_contiguous);
    // Of a transposed input: still views, values in the new order.
    array t = transpose(make_on(Ref::iota({2, 3}), int16, d), d);
    EXPECT_EQ(values(expand_dims(t, 1, d)), (std::vector<double>{0, 3, 1, 4, 2, 5}));
    EXPECT_EQ(values(squeeze(expand_dims(t, 0, d), d)), (std::vector<double>{0, 3, 1, 4, 2, 5}));
    EXPECT_EQ(expand_dims(array(1.0f), 0, d).shape(), (Shape{1}));
  }
}

// A reshape of a strided input is a view where its axes allow one (each run of new axes covers
// a run of old axes laid out row-major, as NumPy's reshape without copy), and a copy otherwise;
// either way the elements are the row-major order of the input.
TEST(OpsShapeViews, ReshapeOfStridedInputsIsAViewWhereTheLayoutAllows) {
  struct Case {
    Shape shape;
    Strides strides;  // empty: a copy is needed
  };
  for (Device d : test_devices()) {
    array x = reshape(arange(64, int32, d), {2, 4, 8}, d);
    x.eval();
    const array t = transpose(x, {0, 2, 1}, d);  // (2, 8, 4), strides (32, 1, 8)
    const std::vector<Case> cases = {{{2, 4, 2, 4}, {32, 2, 1, 8}},
                                     {{2, 8, 2, 2}, {32, 1, 16, 8}},
                                     {{2, 8, 2, 1, 2}, {32, 1, 16, 16, 8}},
                                     {{1, 2, 8, 4, 1}, {64, 32, 1, 8, 8}},
                                     {{2, 32}, {}},
                                     {{16, 4}, {}}};
    const std::vector<double> want = values(contiguous(t, false, d));
    for (const Case& c : cases) {
      array y = reshape(t, c.shape, d);
      y.eval();
      EXPECT_EQ(values(y), want) << test::device_name(d);
      if (c.strides.empty()) {
        EXPECT_NE(y.desc()->data.get(), x.desc()->data.get()) << test::device_name(d);
        continue;
      }
      EXPECT_EQ(y.strides(), c.strides) << test::device_name(d);
      EXPECT_EQ(y.desc()->data.get(), x.desc()->data.get()) << test::device_name(d);
    }
    // A slice with a step and a broadcast: views where the merged axes allow.
    const array s = slice(x, {0, 0, 0}, {2, 4, 8}, {1, 2, 2}, d);  // (2, 2, 4), strides (32, 16, 2)
    array sy = reshape(s, {4, 4}, d);
    EXPECT_EQ(values(sy), values(contiguous(s, false, d)));
    sy.eval();
    EXPECT_EQ(sy.strides(), (Strides{16, 2}));
    const array b = broadcast_to(reshape(arange(3, float32, d), {1, 3}, d), {4, 3}, d);
    array by = reshape(b, {2, 2, 3}, d);
    EXPECT_EQ(values(by), values(contiguous(b, false, d)));
    by.eval();
    EXPECT_EQ(by.strides(), (Strides{0, 0, 1}));
    EXPECT_EQ(values(reshape(b, {12}, d)), values(contiguous(b, false, d)));
  }
}

// The layout flags say what the strides are: a fresh matrix is row-major only, its transpose
// column-major only, a vector (one axis longer than 1) both, as in MLX.
TEST(OpsShapeViews, LayoutFlagsFollowTheStrides) {
  for (Device d : test_devices()) {
    const std::string what = test::device_name(d);
    array x = ones({10, 10}, float32, d);
    x.eval();
    EXPECT_TRUE(x.flags().row_contiguous) << what;
    EXPECT_FALSE(x.flags().col_contiguous) << what;
    array y = exp(x, d);  // an op's fresh output
    y.eval();
    EXPECT_TRUE(y.flags().row_contiguous) << what;
    EXPECT_FALSE(y.flags().col_contiguous) << what;
    array t = transpose(y, d);
    t.eval();
    EXPECT_FALSE(t.flags().row_contiguous) << what;
    EXPECT_TRUE(t.flags().col_contiguous) << what;
    EXPECT_TRUE(t.flags().contiguous) << what;
    array r = reshape(x, {10, 1, 10, 1}, d);
    r.eval();
    EXPECT_TRUE(r.flags().row_contiguous) << what;
    EXPECT_FALSE(r.flags().col_contiguous) << what;
    array v = ones({1, 7, 1}, float32, d);
    v.eval();
    EXPECT_TRUE(v.flags().row_contiguous && v.flags().col_contiguous) << what;
    // contiguous: dense in some order (a broadcast of one element, a permutation), not a slice
    // with steps; an empty broadcast reads no data.
    array b = broadcast_to(array(1.0f), {2, 8, 10}, d);
    b.eval();
    EXPECT_EQ(b.data_size(), 1u) << what;
    EXPECT_TRUE(b.flags().contiguous) << what;
    EXPECT_FALSE(b.flags().row_contiguous || b.flags().col_contiguous) << what;
    array p = transpose(reshape(x, {2, 5, 10}, d), {0, 2, 1}, d);
    p.eval();
    EXPECT_TRUE(p.flags().contiguous) << what;
    EXPECT_FALSE(p.flags().row_contiguous || p.flags().col_contiguous) << what;
    array s = slice(x, {0, 0}, {10, 10}, {2, 2}, d);
    s.eval();
    EXPECT_FALSE(s.flags().contiguous) << what;
    array e = broadcast_to(zeros({4, 2, 1}, float32, d), {4, 2, 0}, d);
    e.eval();
    EXPECT_EQ(e.data_size(), 0u) << what;
    EXPECT_TRUE(e.flags().contiguous && e.flags().row_contiguous && e.flags().col_contiguous) << what;
    const std::vector<float> host = {1, 2, 3, 4, 5, 6};
    array h(host.data(), {2, 3}, float32);
    EXPECT_TRUE(h.flags().row_contiguous) << what;
    EXPECT_FALSE(h.flags().col_contiguous) << what;
  }
}

TEST(OpsShapeViews, FlattenAndUnflatten) {
  for (Device d : test_devices()) {
    const Ref r = Ref::iota({2, 3, 4});
    array a = make_on(r, float32, d);
    EXPECT_EQ(flatten(a, d).shape(), (Shape{24}));
    EXPECT_EQ(flatten(a, 1, 2, d).shape(), (Shape{2, 12}));
    EXPECT_EQ(flatten(a, 0, 1, d).shape(), (Shape{6, 4}));
    EXPECT_EQ(flatten(a, -2, -1, d).shape(), (Shape{2, 12}));
    EXPECT_EQ(flatten(a, -10, 10, d).shape(), (Shape{24}));  // clamped
    EXPECT_EQ(flatten(a, 1, 1, d).id(), a.id());
    EXPECT_EQ(flatten(array(3), d).shape(), (Shape{1}));
    EXPECT_EQ(flatten(zeros({2, 0, 3}), d).shape(), (Shape{0}));
    EXPECT_EQ(flatten(zeros({2, 0, 3}), 0, 1, d).shape(), (Shape{0, 3}));
    EXPECT_EQ(values(flatten(transpose(a, d), d)), values(transpose(a, d)));
    EXPECT_EQ(unflatten(a, 2, {2, 2}, d).shape(), (Shape{2, 3, 2, 2}));
    EXPECT_EQ(unflatten(a, -1, {-1, 2}, d).shape(), (Shape{2, 3, 2, 2}));
    EXPECT_EQ(unflatten(a, 0, {2}, d).id(), a.id());
    EXPECT_EQ(values(unflatten(a, 1, {3, 1}, d)), r.v);
  }
}

TEST(OpsShapeViews, SwapaxesAndMoveaxisPermute) {
  for (Device d : test_devices()) {
    const Ref r = Ref::iota({2, 3, 4});
    array a = make_on(r, int32, d);
    expect_values(swapaxes(a, 0, -1, d),
                  Ref::build({4, 3, 2},
                             [&](const auto& i) {
                               return r.at({i[2], i[1], i[0]});
                             }),
                  "swapaxes");
    expect_values(moveaxis(a, 0, 2, d),
                  Ref::build({3, 4, 2},
                             [&](const auto& i) {
                               return r.at({i[2], i[0], i[1]});
                             }),
                  "moveaxis 0->2");
    expect_values(moveaxis(a, -1, 0, d),
                  Ref::build({4, 2, 3},
                             [&](const auto& i) {
                               return r.at({i[1], i[2], i[0]});
                             }),
                  "moveaxis -1->0");
  }
}

TEST(OpsShapeViews, AtleastAddsUnitAxes) {
  for (Device d : test_devices()) {
    array s(2.0f), v({1, 2, 3}), m = zeros({2, 3}), t = zeros({1, 2, 3, 4});
    EXPECT_EQ(atleast_1d(s, d).shape(), (Shape{1}));
    EXPECT_EQ(atleast_1d(v, d).id(), v.id());
    EXPECT_EQ(atleast_2d(s, d).shape(), (Shape{1, 1}));
    EXPECT_EQ(atleast_2d(v, d).shape(), (Shape{1, 3}));
    EXPECT_EQ(atleast_2d(m, d).id(), m.id());
    EXPECT_EQ(atleast_3d(s, d).shape(), (Shape{1, 1, 1}));
    EXPECT_EQ(atleast_3d(v, d).shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(atleast_3d(m, d).shape(), (Shape{2, 3, 1}));
    EXPECT_EQ(atleast_3d(t, d).id(), t.id());
    auto many = atleast_2d(std::vector<array>{s, v, m}, d);
    ASSERT_EQ(many.size(), 3u);
    EXPECT_EQ(many[1].shape(), (Shape{1, 3}));
    EXPECT_EQ(atleast_1d(std::vector<array>{s}, d)[0].shape(), (Shape{1}));
    EXPECT_EQ(atleast_3d(std::vector<array>{v, t}, d)[0].shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(values(atleast_3d(v, d)), (std::vector<double>{1, 2, 3}));
  }
}

TEST(OpsShapeViews, BroadcastArraysToTheCommonShape) {
  for (Device d : test_devices()) {
    auto out = broadcast_arrays({array({1, 2, 3}), reshape(array({10.0f, 20.0f}), {2, 1}), array(5)}, d);
    ASSERT_EQ(out.size(), 3u);
    for (auto& o : out) EXPECT_EQ(o.shape(), (Shape{2, 3}));
    EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2, 3, 1, 2, 3}));
    EXPECT_EQ(values(out[1]), (std::vector<double>{10, 10, 10, 20, 20, 20}));
    EXPECT_EQ(out[1].dtype(), float32);
    EXPECT_EQ(values(out[2]), std::vector<double>(6, 5));
    EXPECT_TRUE(broadcast_arrays({}, d).empty());
    EXPECT_EQ(broadcast_arrays({zeros({0, 1}), zeros({3})}, d)[0].shape(), (Shape{0, 3}));
  }
}

// ---------------------------------------------------------------------------------------------
// slice and slice_update

namespace {

// NumPy's slice of r with (start, stop, step) per axis.
Ref ref_slice(const Ref& r, const Shape& start, const Shape& stop, const Shape& steps) {
  std::vector<std::vector<int64_t>> picks(r.shape.size());
  Shape out;
  for (size_t i = 0; i < r.shape.size(); ++i) {
    const int64_t n = r.shape[i], st = steps[i];
    int64_t b = start[i] < 0 ? start[i] + n : start[i];
    int64_t e = stop[i] < 0 ? stop[i] + n : stop[i];
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      for (int64_t j = b; j < e; j += st) picks[i].push_back(j);
    } else {
      b = std::min(b, n - 1);
      e = std::max<int64_t>(e, -1);
      for (int64_t j = b; j > e; j += st) picks[i].push_back(j);
    }
    out.push_back(static_cast<int32_t>(picks[i].size()));
  }
  return Ref::build(out, [&](const auto& idx) {
    std::vector<int64_t> j(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) j[i] = picks[i][idx[i]];
    return r.at(j);
  });
}

struct SliceCase {
  Shape start, stop, steps;
};

const std::vector<SliceCase> kSliceCases = {
    {{0, 0, 0}, {2, 3, 4}, {1, 1, 1}},          {{1, 0, 1}, {2, 3, 3}, {1, 1, 1}},
    {{0, 0, 0}, {2, 3, 4}, {1, 2, 3}},          {{-1, -2, -3}, {2, 3, 4}, {1, 1, 1}},
    {{1, 2, 3}, {-3, -4, -5}, {-1, -1, -2}},    {{0, 0, 0}, {100, 100, 100}, {1, 1, 1}},
    {{-100, 0, 0}, {100, 3, 4}, {1, 1, 5}},     {{1, 0, 0}, {1, 3, 4}, {1, 1, 1}},
    {{5, 5, 5}, {-10, -10, -10}, {-1, -2, -3}}, {{0, 2, 1}, {2, 0, 3}, {1, 1, 1}},
};

}  // namespace

TEST(OpsShapeSlice, MatchesNumPySlicingInEveryDtypeAndLayout) {
  const Ref r = Ref::iota({2, 3, 4}, 1);
  for (Device d : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      for (auto& [name, in] : layouts(r, dt, d)) {
        for (const auto& c : kSliceCases) {
          Ref want = ref_slice(r, c.start, c.stop, c.steps);
          want.v = cast_all(want.v, dt);
          array got = slice(in, c.start, c.stop, c.steps, d);
          EXPECT_EQ(got.dtype(), dt);
          expect_values(got, want, tag(d, dt) + " " + name);
        }
      }
    }
  }
}

TEST(OpsShapeSlice, IsAViewAndIdentitySlicesReturnTheInput) {
  for (Device d : test_devices()) {
    array a = make_on(Ref::iota({4, 5}), float32, d);
    a.eval();
    array s = slice(a, {1, 1}, {3, 5}, d);
    s.eval();
    EXPECT_EQ(s.desc()->data.get(), a.desc()->data.get());
    EXPECT_EQ(values(s), (std::vector<double>{6, 7, 8, 9, 11, 12, 13, 14}));
    EXPECT_EQ(slice(a, {0, 0}, {4, 5}, d).id(), a.id());
    EXPECT_EQ(slice(a, {0, 0}, {40, 50}, {1, 1}, d).id(), a.id());
    // A slice of a slice, and a reversed axis.
    array ss = slice(slice(a, {0, 0}, {4, 5}, {2, 1}, d), {0, 4}, {2, 0}, {1, -2}, d);
    EXPECT_EQ(values(ss), (std::vector<double>{4, 2, 14, 12}));
    // Elementwise ops and reductions read strided slices correctly.
    EXPECT_EQ(values(add(s, s, d)), (std::vector<double>{12, 14, 16, 18, 22, 24, 26, 28}));
    EXPECT_EQ(sum(slice(a, {0, 4}, {4, 0}, {1, -1}, d), d).item<float>(), 160.0f);
    // A single element slice is usable as a broadcast scalar.
    array one = slice(a, {2, 3}, {3, 4}, d);
    EXPECT_EQ(values(add(a, one, d))[0], 13.0);
  }
}

TEST(OpsShapeSlice, EmptyAndZeroSizeSlices) {
  for (Device d : test_devices()) {
    array a = make_on(Ref::iota({3, 4}), int32, d);
    EXPECT_EQ(slice(a, {2, 0}, {1, 4}, d).shape(), (Shape{0, 4}));
    EXPECT_EQ(slice(a, {0, 0}, {3, 4}, {-1, 1}, d).shape(), (Shape{0, 4}));
    EXPECT_TRUE(values(slice(a, {3, 0}, {3, 4}, d)).empty());
    array e = zeros({0, 5});
    EXPECT_EQ(slice(e, {0, 1}, {0, 3}, d).shape(), (Shape{0, 2}));
    EXPECT_EQ(slice(array(7), Shape{}, Shape{}, d).item<int>(), 7);
  }
}

TEST(OpsShapeSlice, ArrayStartsSliceAlongTheGivenAxes) {
  for (Device d : test_devices()) {
    const Ref r = Ref::iota({4, 5});
    array a = make_on(r, float32, d);
    expect_values(slice(a, array({1, 2}), {0, 1}, {2, 3}, d),
                  Ref::build({2, 3},
                             [&](const auto& i) {
                               return r.at({i[0] + 1, i[1] + 2});
                             }),
                  "two axes");
    expect_values(slice(a, array(3), {1}, {4, 2}, d),
                  Ref::build({4, 2},
                             [&](const auto& i) {
                               return r.at({i[0], i[1] + 3});
                             }),
                  "0-d start");
    expect_values(slice(a, array({int64_t{2}}, int64), {-2}, {2, 5}, d),
                  Ref::build({2, 5},
                             [&](const auto& i) {
                               return r.at({i[0] + 2, i[1]});
                             }),
                  "int64 start");
    // Out-of-range starts are clamped so the slice fits (negative ones count from the end).
    expect_values(slice(a, array({uint8_t{9}}, uint8), {0}, {2, 5}, d),
                  Ref::build({2, 5},
                             [&](const auto& i) {
                               return r.at({i[0] + 2, i[1]});
                             }),
                  "clamped");
    expect_values(slice(a, array({-1}), {1}, {4, 1}, d),
                  Ref::build({4, 1},
                             [&](const auto& i) {
                               return r.at({i[0], 4});
                             }),
                  "negative");
    for (Dtype dt : kEveryDtype) {
      array t = transpose(make_on(r, dt, d), d);
      EXPECT_EQ(values(slice(t, array({1, 1}), {0, 1}, {2, 2}, d)), cast_all({6, 11, 7, 12}, dt))
          << tag(d, dt);
    }
  }
}

TEST(OpsShapeSliceUpdate, ReplacesTheSliceInEveryDtypeAndLayout) {
  const Ref r = Ref::iota({2, 3, 4}, 1);
  for (Device d : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      for (auto& [name, in] : layouts(r, dt, d)) {
        for (const auto& c : kSliceCases) {
          Ref sl = ref_slice(r, c.start, c.stop, c.steps);
          // The update: 100 + its own index, written where the slice picks.
          Ref upd = Ref::iota(sl.shape, 100);
          Ref want = r;
          // Recover the picked positions by slicing an array of flat indices.
          Ref flat = Ref::iota(r.shape);
          Ref pos = ref_slice(flat, c.start, c.stop, c.steps);
          for (size_t i = 0; i < pos.v.size(); ++i) want.v[static_cast<size_t>(pos.v[i])] = upd.v[i];
          want.v = cast_all(want.v, dt);
          array got = slice_update(in, make_on(upd, float32, d), c.start, c.stop, c.steps, d);
          EXPECT_EQ(got.dtype(), dt);
          expect_values(got, want, tag(d, dt) + " " + name);
        }
      }
    }
  }
}

TEST(OpsShapeSliceUpdate, BroadcastsTheUpdateAndLeavesTheSourceUnchanged) {
  for (Device d : test_devices()) {
    array a = make_on(Ref::iota({3, 4}), int32, d);
    array u = slice_update(a, array(-1), Shape{0, 1}, Shape{3, 3}, d);
    EXPECT_EQ(values(u), (std::vector<double>{0, -1, -1, 3, 4, -1, -1, 7, 8, -1, -1, 11}));
    array row = slice_update(a, array({7.9f, 8.1f}), {1, 0}, {3, 4}, {1, 2}, d);
    EXPECT_EQ(row.dtype(), int32);
    EXPECT_EQ(values(row), (std::vector<double>{0, 1, 2, 3, 7, 5, 8, 7, 7, 9, 8, 11}));
    EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
    // A slice covering everything gives the (converted, broadcast) update.
    array all = slice_update(a, array(2.5f), Shape{0, 0}, Shape{3, 4}, d);
    EXPECT_EQ(all.dtype(), int32);
    EXPECT_EQ(values(all), std::vector<double>(12, 2));
    // Empty slices change nothing.
    EXPECT_EQ(values(slice_update(a, zeros({0, 4}), Shape{2, 0}, Shape{2, 4}, d)), values(a));
    EXPECT_EQ(slice_update(zeros({0, 3}), zeros({0, 3}), Shape{0, 0}, Shape{0, 3}, d).shape(), (Shape{0, 3}));
  }
}

TEST(OpsShapeSliceUpdate, ArrayStartsAndCombiningForms) {
  for (Device d : test_devices()) {
    array a = make_on(Ref::iota({3, 4}), float32, d);
    array u = slice_update(a, array({-1.0f, -2.0f}, {1, 2}), array({1, 2}), {0, 1}, d);
    EXPECT_EQ(values(u), (std::vector<double>{0, 1, 2, 3, 4, 5, -1, -2, 8, 9, 10, 11}));
    // The update's missing leading axis broadcasts over the unnamed axis 0.
    array col = slice_update(a, array({5.0f}), array({3}), {1}, d);
    EXPECT_EQ(values(col), (std::vector<double>{0, 1, 2, 5, 4, 5, 6, 5, 8, 9, 10, 5}));
    // Starts clamp so the box fits.
    array cl = slice_update(a, array({9.0f, 9.0f}, {1, 2}), array({5, 5}), {0, 1}, d);
    EXPECT_EQ(values(cl), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9}));
    EXPECT_EQ(values(slice_update_add(a, array(10.0f), {0, 0}, {2, 2}, d)),
              (std::vector<double>{10, 11, 2, 3, 14, 15, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(values(slice_update_prod(a, array(2.0f), {0, 1}, {3, 4}, {2, 2}, d)),
              (std::vector<double>{0, 2, 2, 6, 4, 5, 6, 7, 8, 18, 10, 22}));
    EXPECT_EQ(values(slice_update_max(a, array({5.0f, 5.0f, 5.0f, 5.0f}), {0, 0}, {1, 4}, d)),
              (std::vector<double>{5, 5, 5, 5, 4, 5, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(values(slice_update_min(a, array(5.0f), {2, 0}, {3, 4}, {1, 1}, d)),
              (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 5, 5, 5, 5}));
    array full_add = slice_update_add(a, array(1), {0, 0}, {3, 4}, d);
    EXPECT_EQ(full_add.dtype(), float32);
    EXPECT_EQ(values(full_add)[11], 12.0);
    array i = make_on(Ref::iota({4}), int8, d);
    EXPECT_EQ(slice_update_add(i, array(1.5f), {1}, {3}, d).dtype(), int8);
  }
}

// ---------------------------------------------------------------------------------------------
// concatenate, stack, split

TEST(OpsShapeConcatenate, PiecesAlongEachAxisInEveryDtypeAndLayout) {
  const Ref x = Ref::iota({2, 3, 4}, 1), y = Ref::iota({2, 3, 4}, 50);
  for (Device d : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      auto lx = layouts(x, dt, d), ly = layouts(y, dt, d);
      for (size_t l = 0; l < lx.size(); ++l) {
        for (int axis : {0, 1, 2, -1}) {
          const int ax = axis < 0 ? axis + 3 : axis;
          Shape s = x.shape;
          s[ax] *= 2;
          Ref want = Ref::build(s, [&](const auto& i) {
            std::vector<int64_t> j = i;
            if (j[ax] < x.shape[ax]) return x.at(j);
            j[ax] -= x.shape[ax];
            return y.at(j);
          });
          want.v = cast_all(want.v, dt);
          array got = concatenate({lx[l].second, ly[(l + 1) % ly.size()].second}, axis, d);
          EXPECT_EQ(got.dtype(), dt);
          expect_values(got, want, tag(d, dt) + " " + lx[l].first + " axis " + std::to_string(axis));
        }
      }
    }
  }
}

TEST(OpsShapeConcatenate, PromotesBroadcastsAndSkipsEmptyPieces) {
  for (Device d : test_devices()) {
    array a = concatenate({array({1, 2}), array({2.5f}), zeros({0}, int8)}, 0, d);
    EXPECT_EQ(a.dtype(), float32);
    EXPECT_EQ(values(a), (std::vector<double>{1, 2, 2.5}));
    EXPECT_EQ(concatenate({array({1}, int8), array({300}, int16)}, 0, d).dtype(), int16);
    EXPECT_EQ(concatenate({array({true}), array({2u})}, 0, d).dtype(), uint32);
    EXPECT_EQ(concatenate({array({1.0f}), array({1.0}, float64)}, 0, d).dtype(), float64);
    // A broadcast piece (zero strides).
    array b = concatenate({broadcast_to(array(7), {2, 2}), make_on(Ref::iota({2, 1}), int32, d)}, 1, d);
    EXPECT_EQ(values(b), (std::vector<double>{7, 7, 0, 7, 7, 1}));
    array one = array({1, 2});
    EXPECT_EQ(concatenate({one}, 0, d).id(), one.id());
    // Without an axis the inputs are flattened.
    array f = concatenate({make_on(Ref::iota({2, 2}), int32, d), array({9})}, d);
    EXPECT_EQ(values(f), (std::vector<double>{0, 1, 2, 3, 9}));
    EXPECT_EQ(concatenate({zeros({0, 3}), zeros({0, 3})}, 0, d).shape(), (Shape{0, 3}));
  }
}

TEST(OpsShapeConcatenate, LargeInputsTakeTheParallelCopyPaths) {
  for (Device d : test_devices()) {
    for (Dtype dt : {uint8, float16, float32, float64}) {
      const Ref x = Ref::iota({300, 700}, 0, 97);
      for (int axis : {0, 1}) {
        const Ref y = Ref::iota(axis == 0 ? Shape{200, 700} : Shape{300, 500}, 1, 89);
        Shape s = x.shape;
        s[axis] += y.shape[axis];
        Ref want = Ref::build(s, [&](const auto& i) {
          std::vector<int64_t> j = i;
          if (j[axis] < x.shape[axis]) return x.at(j);
          j[axis] -= x.shape[axis];
          return y.at(j);
        });
        expect_values(concatenate({make_on(x, dt, d), make_on(y, dt, d)}, axis, d), want, tag(d, dt));
      }
      // Converting while concatenating a transposed piece.
      array t = transpose(make_on(Ref::iota({500, 300}, 0, 91), int32, d), d);
      array c = concatenate({make_on(x, dt, d), t}, 1, d);
      EXPECT_EQ(c.shape(), (Shape{300, 1200}));
      EXPECT_EQ(values(c).back(), (299 + 499 * 300) % 91);
    }
  }
}

// Pieces of 16 MiB or more: the CPU writes them around the cache (streamed stores straight from
// the source), with rows that start unaligned in the result (the second piece starts 2049
// elements into each row), so every head, body and tail of a run is exercised.
TEST(OpsShapeConcatenate, PiecesLargeEnoughToStream) {
  for (Device d : test_devices()) {
    for (Dtype dt : {uint8, float32}) {
      // Each piece 16 MiB or more; the second starts w1 elements into each row of the result.
      const int rows = dt == uint8 ? 4100 : 2100, w1 = dt == uint8 ? 4097 : 2049, w2 = w1 - 2;
      array x = reshape(astype(remainder(arange(0, rows * w1, 1, int32), array(251)), dt), {rows, w1});
      array y = reshape(astype(remainder(arange(7, 7 + rows * w2, 1, int32), array(241)), dt), {rows, w2});
      array c = concatenate({x, y}, 1, d);
      EXPECT_EQ(c.shape(), (Shape{rows, w1 + w2})) << tag(d, dt);
      EXPECT_TRUE(array_equal(slice(c, {0, 0}, {rows, w1}), x).item<bool>()) << tag(d, dt);
      EXPECT_TRUE(array_equal(slice(c, {0, w1}, {rows, w1 + w2}), y).item<bool>()) << tag(d, dt);
      EXPECT_EQ(values(slice(c, {rows - 1, w1 - 1}, {rows, w1 + 2})),
                (std::vector<double>{static_cast<double>((rows * w1 - 1) % 251),
                                     static_cast<double>((7 + (rows - 1) * w2) % 241),
                                     static_cast<double>((8 + (rows - 1) * w2) % 241)}))
          << tag(d, dt);
      // Whole pieces, one run each, the second starting at an odd offset.
      array z = concatenate({flatten(x), flatten(y)}, 0, d);
      EXPECT_TRUE(array_equal(slice(z, {0}, {rows * w1}), flatten(x)).item<bool>()) << tag(d, dt);
      EXPECT_TRUE(array_equal(slice(z, {rows * w1}, {rows * (w1 + w2)}), flatten(y)).item<bool>()) << tag(d, dt);
    }
  }
}

// Pieces whose rows are several thousand elements (more than one block of the GPU's row copy
// across each row, the last one partial) and pieces of a few rows.
TEST(OpsShapeConcatenate, WideAndShortRowsAlongTheLastAxis) {
  for (Device d : test_devices()) {
    for (Dtype dt : {uint8, float32}) {
      for (int rows : {3, 70}) {
        const Ref x = Ref::iota({rows, 20000}, 0, 101), y = Ref::iota({rows, 4160}, 5, 103);
        const Ref want = Ref::build({rows, 24160}, [&](const auto& i) {
          return i[1] < 20000 ? x.at(i) : y.at({i[0], i[1] - 20000});
        });
        expect_values(concatenate({make_on(x, dt, d), make_on(y, dt, d)}, 1, d), want, tag(d, dt));
      }
    }
  }
}

// MLX's braced-list overload: `transpose(a, {})` is a scalar's (empty) permutation, not the
// stream argument.
TEST(OpsShapeTranspose, BracedAxesListsAsMlx) {
  EXPECT_EQ(transpose(array(1.0f), {}).shape(), Shape{});
  EXPECT_EQ(transpose(array(1.0f), {}).item<float>(), 1.0f);
  const array x = reshape(arange(6.0f), {2, 3});
  EXPECT_EQ(transpose(x, {1, 0}).shape(), (Shape{3, 2}));
  EXPECT_TRUE(array_equal(transpose(x, {1, 0}), transpose(x)).item<bool>());
  EXPECT_THROW(transpose(x, {}), std::invalid_argument);
  const Stream s = default_stream(Device::cpu);
  EXPECT_EQ(transpose(x, {1, 0}, s).shape(), (Shape{3, 2}));
  EXPECT_EQ(transpose(array(2.0f), {}, s).item<float>(), 2.0f);
}

// Transposes made contiguous, of every element size, whole or read from a wider (sliced)
// array: the GPU copies these by tiles, whole tiles a vector at a time where both sides are
// aligned (the pitch of columns [4, cols + 4) of a [rows, cols + 8] array keeps them so for
// cols a multiple of 4; columns [3, cols + 3) do not), edge tiles element by element.
TEST(OpsShapeTranspose, ContiguousTransposesOfEveryElementSize) {
  for (Device d : test_devices()) {
    for (Dtype dt : {uint8, bfloat16, float32, int64}) {
      for (const Shape& shape : {Shape{33, 70}, Shape{64, 64}, Shape{100, 37}, Shape{2, 300}, Shape{40, 1000},
                                 Shape{130, 200}, Shape{256, 128}}) {
        const Ref x = Ref::iota(shape, 0, 113);
        const Ref want = Ref::build({shape[1], shape[0]}, [&](const auto& i) { return x.at({i[1], i[0]}); });
        expect_values(contiguous(transpose(make_on(x, dt, d), d), false, d), want, tag(d, dt));
        for (int offset : {3, 4}) {
          const Ref wide = Ref::iota({shape[0], shape[1] + 2 * offset}, 0, 113);
          array part = slice(make_on(wide, dt, d), {0, offset}, {shape[0], shape[1] + offset}, d);
          const Ref want_part = Ref::build({shape[1], shape[0]}, [&](const auto& i) {
            return wide.at({i[1], i[0] + offset});
          });
          expect_values(contiguous(transpose(part, d), false, d), want_part,
                        tag(d, dt) + " sliced from " + std::to_string(offset));
        }
      }
    }
  }
}

TEST(OpsShapeStack, AddsANewAxis) {
  for (Device d : test_devices()) {
    array a({1, 2, 3}), b({4, 5, 6});
    array s0 = stack({a, b}, d);
    EXPECT_EQ(s0.shape(), (Shape{2, 3}));
    EXPECT_EQ(values(s0), (std::vector<double>{1, 2, 3, 4, 5, 6}));
    array s1 = stack({a, b}, 1, d);
    EXPECT_EQ(s1.shape(), (Shape{3, 2}));
    EXPECT_EQ(values(s1), (std::vector<double>{1, 4, 2, 5, 3, 6}));
    EXPECT_EQ(stack({a, b}, -1, d).shape(), (Shape{3, 2}));
    EXPECT_EQ(stack({a}, d).shape(), (Shape{1, 3}));
    EXPECT_EQ(stack({array(1), array(2.0f)}, d).dtype(), float32);
    EXPECT_EQ(values(stack({array(1), array(2)}, d)), (std::vector<double>{1, 2}));
  }
}

TEST(OpsShapeSplit, BySectionsAndByIndices) {
  for (Device d : test_devices()) {
    const Ref r = Ref::iota({6, 4});
    array a = make_on(r, int32, d);
    auto p = split(a, 3, d);
    ASSERT_EQ(p.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(p[i].shape(), (Shape{2, 4}));
      EXPECT_EQ(values(p[i])[0], 8.0 * i);
    }
    auto q = split(a, 2, 1, d);
    ASSERT_EQ(q.size(), 2u);
    EXPECT_EQ(values(q[1]), (std::vector<double>{2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23}));
    auto idx = split(a, Shape{1, 4}, d);
    ASSERT_EQ(idx.size(), 3u);
    EXPECT_EQ(idx[0].shape(), (Shape{1, 4}));
    EXPECT_EQ(idx[1].shape(), (Shape{3, 4}));
    EXPECT_EQ(idx[2].shape(), (Shape{2, 4}));
    auto neg = split(a, Shape{-1}, 1, d);
    EXPECT_EQ(neg[0].shape(), (Shape{6, 3}));
    EXPECT_EQ(neg[1].shape(), (Shape{6, 1}));
    auto beyond = split(a, Shape{2, 10}, 0, d);
    EXPECT_EQ(beyond[1].shape(), (Shape{4, 4}));
    EXPECT_EQ(beyond[2].shape(), (Shape{0, 4}));
    auto none = split(a, Shape{}, 0, d);
    ASSERT_EQ(none.size(), 1u);
    EXPECT_EQ(none[0].id(), a.id());
    a.eval();
    p[1].eval();
    EXPECT_EQ(p[1].desc()->data.get(), a.desc()->data.get());
  }
}

// ---------------------------------------------------------------------------------------------
// tile, repeat, pad, roll

TEST(OpsShapeTileRepeat, MatchNumPy) {
  for (Device d : test_devices()) {
    const Ref r = Ref::iota({2, 3});
    for (auto& [name, in] : layouts(r, int32, d)) {
      expect_values(tile(in, {2, 1}, d),
                    Ref::build({4, 3},
                               [&](const auto& i) {
                                 return r.at({i[0] % 2, i[1]});
                               }),
                    "tile " + name);
      expect_values(tile(in, {2}, d),
                    Ref::build({2, 6},
                               [&](const auto& i) {
                                 return r.at({i[0], i[1] % 3});
                               }),
                    "tile short reps " + name);
      expect_values(tile(in, {2, 1, 2}, d),
                    Ref::build({2, 2, 6},
                               [&](const auto& i) {
                                 return r.at({i[1], i[2] % 3});
                               }),
                    "tile long reps " + name);
      expect_values(repeat(in, 2, 1, d),
                    Ref::build({2, 6},
                               [&](const auto& i) {
                                 return r.at({i[0], i[1] / 2});
                               }),
                    "repeat axis 1 " + name);
      expect_values(repeat(in, 3, 0, d),
                    Ref::build({6, 3},
                               [&](const auto& i) {
                                 return r.at({i[0] / 3, i[1]});
                               }),
                    "repeat axis 0 " + name);
      expect_values(repeat(in, 2, d), Ref::build({12}, [&](const auto& i) { return r.v[i[0] / 2]; }),
                    "repeat flat " + name);
    }
    EXPECT_EQ(tile(array(3), {2, 2}, d).shape(), (Shape{2, 2}));
    EXPECT_EQ(tile(array({1, 2}), {0}, d).shape(), (Shape{0}));
    array a({1, 2});
    EXPECT_EQ(repeat(a, 1, 0, d).id(), a.id());
    array z = repeat(zeros({2, 3}, int16), 0, 1, d);
    EXPECT_EQ(z.shape(), (Shape{2, 0}));  // MLX's newer rule: the axis becomes empty
    EXPECT_EQ(z.dtype(), int16);
    EXPECT_EQ(repeat(zeros({2, 3}, int16), 0, 0, d).shape(), (Shape{0, 3}));
    EXPECT_EQ(repeat(zeros({2, 3}, int16), 0, d).shape(), (Shape{0}));
    EXPECT_EQ(values(repeat(array(5), 3, d)), (std::vector<double>{5, 5, 5}));
  }
}

TEST(OpsShapePad, ConstantAndEdgeModesInEveryDtype) {
  const Ref r = Ref::iota({2, 3}, 1);
  for (Device d : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      for (auto& [name, in] : layouts(r, dt, d)) {
        Ref want = Ref::build({5, 4}, [&](const auto& i) {
          const int64_t a = i[0] - 1, b = i[1] - 0;
          return (a >= 0 && a < 2 && b < 3) ? r.at({a, b}) : 9.0;
        });
        want.v = cast_all(want.v, dt);
        array got = pad(in, std::vector<std::pair<int, int>>{{1, 2}, {0, 1}}, array(9), "constant", d);
        EXPECT_EQ(got.dtype(), dt);
        expect_values(got, want, "constant " + tag(d, dt) + " " + name);
        Ref edge = Ref::build({5, 4}, [&](const auto& i) {
          const int64_t a = std::clamp<int64_t>(i[0] - 1, 0, 1), b = std::clamp<int64_t>(i[1], 0, 2);
          return r.at({a, b});
        });
        edge.v = cast_all(edge.v, dt);
        expect_values(pad(in, std::vector<std::pair<int, int>>{{1, 2}, {0, 1}}, array(0), "edge", d), edge,
                      "edge " + tag(d, dt) + " " + name);
      }
    }
    array a = make_on(r, float32, d);
    EXPECT_EQ(pad(a, 1, array(0), "constant", d).shape(), (Shape{4, 5}));
    EXPECT_EQ(pad(a, std::pair<int, int>{0, 2}, array(0), "constant", d).shape(), (Shape{4, 5}));
    EXPECT_EQ(pad(a, std::vector<int>{-1}, Shape{2}, Shape{0}, array(1.5), "constant", d).shape(),
              (Shape{2, 5}));
    EXPECT_EQ(values(pad(a, std::vector<int>{1}, Shape{1}, Shape{0}, array(1.5), "constant", d))[0], 1.5);
    EXPECT_EQ(pad(a, 0, array(0), "constant", d).id(), a.id());
    EXPECT_EQ(values(pad(zeros({0}), 2, array(4.0f), "constant", d)), (std::vector<double>{4, 4, 4, 4}));
    EXPECT_EQ(values(pad(array(3), 2, array(4), "constant", d)), (std::vector<double>{3}));
    // Large enough for the parallel copy and fill.
    array big = pad(ones({400, 400}), 3, array(2.0f), "constant", d);
    EXPECT_EQ(sum(big, d).item<float>(), 160000.0f + 2.0f * (406 * 406 - 160000));
  }
}

TEST(OpsShapeRoll, EveryOverload) {
  const Ref r = Ref::iota({3, 4});
  for (Device d : test_devices()) {
    for (auto& [name, a] : layouts(r, int32, d)) {
      auto rolled = [&](int64_t s0, int64_t s1) {
        return Ref::build({3, 4}, [&](const auto& i) {
          return r.at({((i[0] - s0) % 3 + 3) % 3, ((i[1] - s1) % 4 + 4) % 4});
        });
      };
      auto flat_rolled = [&](int64_t s) {
        return Ref::build({3, 4},
                          [&](const auto& i) { return r.v[(((i[0] * 4 + i[1] - s) % 12) + 12) % 12]; });
      };
      expect_values(roll(a, 5, d), flat_rolled(5), "flat " + name);
      expect_values(roll(a, -2, d), flat_rolled(-2), "flat negative " + name);
      expect_values(roll(a, Shape{2, 3}, d), flat_rolled(5), "flat summed " + name);
      expect_values(roll(a, 1, 0, d), rolled(1, 0), "axis 0 " + name);
      expect_values(roll(a, -5, -1, d), rolled(0, -5), "axis -1 " + name);
      expect_values(roll(a, 2, std::vector<int>{0, 1}, d), rolled(2, 2), "same shift " + name);
      expect_values(roll(a, Shape{1, 2}, 1, d), rolled(0, 3), "summed on one axis " + name);
      expect_values(roll(a, Shape{1, -1, 7}, std::vector<int>{1, 0}, d), rolled(-1, 1), "per axis " + name);
      expect_values(roll(a, 12, d), r, "full turn " + name);
    }
    EXPECT_EQ(roll(zeros({0, 3}), 2, 0, d).shape(), (Shape{0, 3}));
    EXPECT_EQ(roll(array(4), 3, d).item<int>(), 4);
  }
}

// ---------------------------------------------------------------------------------------------
// diagonal, diag, trace

TEST(OpsShapeDiagonal, ViewsTheDiagonalAsTheLastAxis) {
  const Ref r = Ref::iota({3, 4, 5});
  for (Device d : test_devices()) {
    for (auto& [name, a] : layouts(r, float32, d)) {
      for (int off : {-3, -1, 0, 2, 4, 6}) {
        const int64_t len =
            std::max<int64_t>(0, std::min<int64_t>(3 - std::max(-off, 0), 4 - std::max(off, 0)));
        expect_values(diagonal(a, off, 0, 1, d),
                      Ref::build({5, static_cast<int32_t>(len)},
                                 [&](const auto& i) {
                                   return r.at({i[1] + std::max(-off, 0), i[1] + std::max(off, 0), i[0]});
                                 }),
                      "axes 0,1 " + name);
      }
      expect_values(diagonal(a, 1, -1, 0, d),
                    Ref::build({4, 2},
                               [&](const auto& i) {
                                 return r.at({i[1] + 1, i[0], i[1]});
                               }),
                    "axes -1,0 " + name);
    }
    array a = make_on(Ref::iota({3, 3}), int32, d);
    a.eval();
    array dg = diagonal(a, 0, 0, 1, d);
    dg.eval();
    EXPECT_EQ(dg.desc()->data.get(), a.desc()->data.get());
    EXPECT_EQ(values(dg), (std::vector<double>{0, 4, 8}));
  }
}

TEST(OpsShapeDiagonal, DiagBuildsOrReadsADiagonal) {
  for (Device d : test_devices()) {
    for (Dtype dt : kEveryDtype) {
      array v = make({1, 2, 3}, {3}, dt);
      for (int k : {-2, 0, 1}) {
        const int n = 3 + std::abs(k);
        array m = diag(v, k, d);
        EXPECT_EQ(m.dtype(), dt);
        expect_values(m,
                      Ref::build({n, n},
                                 [&](const auto& i) {
                                   return i[1] == i[0] + k
                                              ? in_dtype(static_cast<double>(std::min(i[0], i[1]) + 1), dt)
                                              : 0.0;
                                 }),
                      tag(d, dt) + " k=" + std::to_string(k));
      }
    }
    array m = make_on(Ref::iota({3, 4}), float32, d);
    EXPECT_EQ(values(diag(m, 1, d)), (std::vector<double>{1, 6, 11}));
    EXPECT_EQ(values(diag(m, 0, d)), (std::vector<double>{0, 5, 10}));
    EXPECT_EQ(diag(zeros({0}), 0, d).shape(), (Shape{0, 0}));
  }
}

TEST(OpsShapeDiagonal, TraceSumsTheDiagonal) {
  for (Device d : test_devices()) {
    array a = make_on(Ref::iota({3, 3}), float32, d);
    EXPECT_EQ(trace(a, d).item<float>(), 12.0f);
    EXPECT_EQ(trace(a, 1, 0, 1, d).item<float>(), 1.0f + 5.0f);
    EXPECT_EQ(trace(a, -1, 1, 0, d).item<float>(), 1.0f + 5.0f);
    array t = trace(make_on(Ref::iota({2, 3, 3}), int32, d), 0, 1, 2, float32, d);
    EXPECT_EQ(t.dtype(), float32);
    EXPECT_EQ(values(t), (std::vector<double>{12, 39}));
    EXPECT_EQ(trace(zeros({2, 0}), d).item<float>(), 0.0f);
  }
}

// ---------------------------------------------------------------------------------------------
// as_strided, copy, contiguous, view, number_of_elements, depends

TEST(OpsShapeStrided, AsStridedViewsTheFlatArray) {
  for (Device d : test_devices()) {
    const Ref r = Ref::iota({4, 4});
    for (auto& [name, a] : layouts(r, int32, d)) {
      // Overlapping windows of 3 over the flat array, from element 2.
      array w = as_strided(a, {4, 3}, {2, 1}, 2, d);
      expect_values(
          w, Ref::build({4, 3}, [&](const auto& i) { return static_cast<double>(2 + i[0] * 2 + i[1]); }),
          "windows " + name);
      array z = as_strided(a, {2, 2}, {0, -1}, 5, d);
      EXPECT_EQ(values(z), (std::vector<double>{5, 4, 5, 4})) << name;
    }
    EXPECT_EQ(as_strided(zeros({2}), {0, 5}, {100, 100}, 0, d).shape(), (Shape{0, 5}));
  }
}

TEST(OpsShapeStrided, CopyAndContiguous) {
  for (Device d : test_devices()) {
    array a = make_on(Ref::iota({2, 3}), float32, d);
    array c = copy(a, d);
    EXPECT_NE(c.id(), a.id());
    EXPECT_EQ(values(c), values(a));
    array t = transpose(a, d);
    array ct = contiguous(t, false, d);
    ct.eval();
    EXPECT_TRUE(ct.flags().row_contiguous);
    EXPECT_EQ(values(ct), (std::vector<double>{0, 3, 1, 4, 2, 5}));
    array cc = contiguous(t, true, d);
    cc.eval();
    EXPECT_TRUE(cc.flags().col_contiguous);
    EXPECT_EQ(values(cc), (std::vector<double>{0, 3, 1, 4, 2, 5}));
    array s = contiguous(slice(a, {0, 0}, {2, 3}, {1, 2}, d), false, d);
    s.eval();
    EXPECT_TRUE(s.flags().row_contiguous);
    EXPECT_EQ(values(s), (std::vector<double>{0, 2, 3, 5}));
  }
}

TEST(OpsShapeStrided, ViewReinterpretsTheBytes) {
  for (Device d : test_devices()) {
    array f = astype(array({1.0f, -2.0f}), float32, d);
    array u = view(f, uint32, d);
    EXPECT_EQ(u.shape(), (Shape{2}));
    EXPECT_EQ(values(u), (std::vector<double>{0x3f800000, 0xc0000000}));
    array b = view(f, uint8, d);
    EXPECT_EQ(b.shape(), (Shape{8}));
    EXPECT_EQ(values(b), (std::vector<double>{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}));
    array back = view(view(f, int16, d), float32, d);
    EXPECT_EQ(values(back), (std::vector<double>{1, -2}));
    array wide = view(make({1, 0, 0, 0, 2, 0, 0, 0}, {2, 4}, uint8), int32, d);
    EXPECT_EQ(wide.shape(), (Shape{2, 1}));
    EXPECT_EQ(values(wide), (std::vector<double>{1, 2}));
    // Of a transposed input: its row-major bytes.
    array t = transpose(make({1, 2, 3, 4}, {2, 2}, int32), d);
    EXPECT_EQ(values(view(t, uint32, d)), (std::vector<double>{1, 3, 2, 4}));
    // Of a misaligned slice: still exact.
    array bytes = make({9, 1, 0, 0, 0, 2, 0, 0, 0}, {9}, uint8);
    EXPECT_EQ(values(view(slice(bytes, {1}, {9}, d), int32, d)), (std::vector<double>{1, 2}));
    EXPECT_EQ(values(view(array(1.0f), int32, d)), std::vector<double>{0x3f800000});
    EXPECT_EQ(view(array({true, false}), uint8, d).dtype(), uint8);
    array c = view(array({1.0f, 2.0f}), complex64, d);
    EXPECT_EQ(c.shape(), (Shape{1}));
    EXPECT_EQ(test::complex_values(c)[0], std::complex<float>(1, 2));
  }
}

TEST(OpsShapeStrided, NumberOfElementsAndDepends) {
  for (Device d : test_devices()) {
    array a = zeros({2, 3, 4});
    array n = number_of_elements(a, {0, 2}, false, int32, d);
    EXPECT_EQ(n.ndim(), 0u);
    EXPECT_EQ(n.dtype(), int32);
    EXPECT_EQ(n.item<int>(), 8);
    EXPECT_FLOAT_EQ(number_of_elements(a, {-1}, true, float32, d).item<float>(), 0.25f);
    EXPECT_EQ(number_of_elements(a, {}, false, int32, d).item<int>(), 1);
    array x = add(make_on(Ref::iota({3}), float32, d), array(1.0f), d);
    array dep = multiply(x, array(2.0f), d);
    auto out = depends({x}, {dep});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2, 3}));
    EXPECT_TRUE(dep.is_available());
    EXPECT_TRUE(depends({}, {dep}).empty());
  }
}

// ---------------------------------------------------------------------------------------------
// Bad input: every invalid call throws std::invalid_argument naming the op, before evaluating.

namespace {

#define EXPECT_OP_THROWS(prefix, ...) \
  EXPECT_TRUE(test::throws_bad_input([&] { (void)(__VA_ARGS__); }, prefix))

}  // namespace

TEST(OpsShapeBadInput, EachInvalidCallNamesItsOp) {
  array m = zeros({2, 3}), v = zeros({4}), s = zeros({}), f = zeros({2, 3}, int32);
  EXPECT_OP_THROWS("[linspace]", linspace(0, 1, -1));
  EXPECT_OP_THROWS("[eye]", eye(-1));
  EXPECT_OP_THROWS("[eye]", eye(2, -1));
  EXPECT_OP_THROWS("[tril]", tril(v));
  EXPECT_OP_THROWS("[triu]", triu(s));
  EXPECT_OP_THROWS("[meshgrid]", meshgrid({v}, false, "yx"));
  EXPECT_OP_THROWS("[full_like]", full_like(m, array({1, 2})));
  EXPECT_OP_THROWS("[arange]", arange(0.0, NAN, 1.0));
  EXPECT_OP_THROWS("[arange]", arange(0.0, INFINITY, 1.0));
  EXPECT_OP_THROWS("[arange]", arange(0.0, 1.0, 0.0));
  EXPECT_OP_THROWS("[squeeze]", squeeze(m, 0));
  EXPECT_OP_THROWS("[squeeze]", squeeze(zeros({1, 2}), std::vector<int>{0, 0}));
  EXPECT_OP_THROWS("[squeeze]", squeeze(m, 2));
  EXPECT_OP_THROWS("[expand_dims]", expand_dims(m, 3));
  EXPECT_OP_THROWS("[expand_dims]", expand_dims(m, std::vector<int>{1, 1}));
  EXPECT_OP_THROWS("[flatten]", flatten(zeros({2, 3, 4}), 2, 1));
  EXPECT_OP_THROWS("[unflatten]", unflatten(m, 1, {}));
  EXPECT_OP_THROWS("[unflatten]", unflatten(m, 1, {2, 2}));
  EXPECT_OP_THROWS("[unflatten]", unflatten(m, 2, {3}));
  EXPECT_OP_THROWS("[unflatten]", unflatten(m, 1, {-1, -1}));
  EXPECT_OP_THROWS("[swapaxes]", swapaxes(m, 0, 2));
  EXPECT_OP_THROWS("[moveaxis]", moveaxis(m, -3, 0));
  EXPECT_OP_THROWS("[broadcast_arrays]", broadcast_arrays({m, v}));
  EXPECT_OP_THROWS("[tile]", tile(m, {-1}));
  EXPECT_OP_THROWS("[repeat]", repeat(m, -1, 0));
  EXPECT_OP_THROWS("[repeat]", repeat(m, 2, 2));
  EXPECT_OP_THROWS("[pad]", pad(m, 1, array(0), "wrap"));
  EXPECT_OP_THROWS("[pad]", pad(m, -1));
  EXPECT_OP_THROWS("[pad]", pad(m, std::vector<std::pair<int, int>>{{1, 1}}));
  EXPECT_OP_THROWS("[pad]", pad(m, std::vector<int>{0}, Shape{1, 1}, Shape{1}));
  EXPECT_OP_THROWS("[pad]", pad(m, std::vector<int>{2}, Shape{1}, Shape{1}));
  EXPECT_OP_THROWS("[pad]", pad(m, 1, array({1, 2})));
  EXPECT_OP_THROWS("[pad]", pad(zeros({0}), 1, array(0), "edge"));
  EXPECT_OP_THROWS("[roll]", roll(m, Shape{1}, std::vector<int>{0, 1}));
  EXPECT_OP_THROWS("[roll]", roll(m, 1, 2));
  EXPECT_OP_THROWS("[diagonal]", diagonal(v));
  EXPECT_OP_THROWS("[diagonal]", diagonal(m, 0, 1, 1));
  EXPECT_OP_THROWS("[diagonal]", diagonal(m, 0, 0, 2));
  EXPECT_OP_THROWS("[diag]", diag(zeros({2, 2, 2})));
  EXPECT_OP_THROWS("[trace]", trace(v));
  EXPECT_OP_THROWS("[trace]", trace(m, 0, 0, -2, float32));
  EXPECT_OP_THROWS("[as_strided]", as_strided(m, {2, 2}, {1}, 0));
  EXPECT_OP_THROWS("[as_strided]", as_strided(m, {2, 2}, {3, 1}, 3));
  EXPECT_OP_THROWS("[as_strided]", as_strided(m, {2}, {-1}, 0));
  EXPECT_OP_THROWS("[view]", view(s, int16));
  EXPECT_OP_THROWS("[view]", view(m, float64));
  EXPECT_OP_THROWS("[number_of_elements]", number_of_elements(m, {2}, false));
  EXPECT_OP_THROWS("[slice]", slice(m, {0}, {1}));
  EXPECT_OP_THROWS("[slice]", slice(m, {0, 0}, {1, 1}, {1, 0}));
  EXPECT_OP_THROWS("[slice]", slice(m, array({1.0f}), {0}, {1, 3}));
  EXPECT_OP_THROWS("[slice]", slice(m, array({1, 1}), {0}, {1, 3}));
  EXPECT_OP_THROWS("[slice]", slice(m, array({1}), {0}, {3, 3}));
  EXPECT_OP_THROWS("[slice]", slice(m, array({1}), {0}, {1}));
  EXPECT_OP_THROWS("[slice]", slice(m, array({1}), {2}, {1, 3}));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, v, Shape{0, 0}, Shape{2, 3}));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, s, Shape{0}, Shape{2}));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, s, {0, 0}, {2, 3}, {0, 1}));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, zeros({1, 2, 3}), array({0}), {0}));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, zeros({1, 4}), array({0}), {0}));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, s, array({0.5f}), {0}));
  EXPECT_OP_THROWS("[slice_update_add]", slice_update_add(m, v, {0, 0}, {2, 3}));
  EXPECT_OP_THROWS("[slice_update_prod]", slice_update_prod(m, s, {0}, {2}));
  EXPECT_OP_THROWS("[slice_update_max]", slice_update_max(m, s, {0, 0}, {1, 1}, {0, 1}));
  EXPECT_OP_THROWS("[slice_update_min]", slice_update_min(m, zeros({3}), {0, 0}, {2, 2}));
  EXPECT_OP_THROWS("[split]", split(m, 4));
  EXPECT_OP_THROWS("[split]", split(m, 0, 1));
  EXPECT_OP_THROWS("[split]", split(m, 3, 2));
  EXPECT_OP_THROWS("[split]", split(s, Shape{1}));
  EXPECT_OP_THROWS("[concatenate]", concatenate({}, 0));
  EXPECT_OP_THROWS("[concatenate]", concatenate({m, v}, 0));
  EXPECT_OP_THROWS("[concatenate]", concatenate({m, zeros({3, 3})}, 1));
  EXPECT_OP_THROWS("[concatenate]", concatenate({m, m}, 2));
  EXPECT_OP_THROWS("[concatenate]", concatenate({s, s}, 0));
  EXPECT_OP_THROWS("[stack]", stack({}));
  EXPECT_OP_THROWS("[stack]", stack({m, v}));
  EXPECT_OP_THROWS("[stack]", stack({m, m}, 3));
  for (const array* a : {&m, &v, &s, &f}) EXPECT_FALSE(a->is_available());
}

TEST(OpsShapeBadInput, EveryOpNamesItselfWhenTheDeviceIsUnavailable) {
  if (is_available(Device::gpu)) GTEST_SKIP() << "a GPU is available";
  const Device g = Device::gpu;
  array m = zeros({2, 3}), v = zeros({3});
  EXPECT_OP_THROWS("[full]", zeros_like(m, g));
  EXPECT_OP_THROWS("[linspace]", linspace(0, 1, 3, float32, g));
  EXPECT_OP_THROWS("[eye]", eye(2, g));
  EXPECT_OP_THROWS("[hanning]", hanning(4, g));
  EXPECT_OP_THROWS("[blackman]", blackman(4, g));
  EXPECT_OP_THROWS("[tri]", tri(2, float32, g));
  EXPECT_OP_THROWS("[tril]", tril(m, 0, g));
  EXPECT_OP_THROWS("[triu]", triu(m, 0, g));
  EXPECT_OP_THROWS("[meshgrid]", meshgrid({v}, false, "xy", g));
  EXPECT_OP_THROWS("[squeeze]", squeeze(m, g));
  EXPECT_OP_THROWS("[expand_dims]", expand_dims(m, 0, g));
  EXPECT_OP_THROWS("[flatten]", flatten(m, g));
  EXPECT_OP_THROWS("[unflatten]", unflatten(m, 1, {3, 1}, g));
  EXPECT_OP_THROWS("[swapaxes]", swapaxes(m, 0, 1, g));
  EXPECT_OP_THROWS("[moveaxis]", moveaxis(m, 0, 1, g));
  EXPECT_OP_THROWS("[broadcast_arrays]", broadcast_arrays({m, v}, g));
  EXPECT_OP_THROWS("[tile]", tile(m, {2}, g));
  EXPECT_OP_THROWS("[repeat]", repeat(m, 2, 0, g));
  EXPECT_OP_THROWS("[pad]", pad(m, 1, array(0), "constant", g));
  EXPECT_OP_THROWS("[roll]", roll(m, 1, 0, g));
  EXPECT_OP_THROWS("[diagonal]", diagonal(m, 0, 0, 1, g));
  EXPECT_OP_THROWS("[diag]", diag(v, 0, g));
  EXPECT_OP_THROWS("[trace]", trace(m, g));
  EXPECT_OP_THROWS("[as_strided]", as_strided(m, {2}, {1}, 0, g));
  EXPECT_OP_THROWS("[copy]", copy(m, g));
  EXPECT_OP_THROWS("[contiguous]", contiguous(m, false, g));
  EXPECT_OP_THROWS("[view]", view(m, int32, g));
  EXPECT_OP_THROWS("[atleast_1d]", atleast_1d(m, g));
  EXPECT_OP_THROWS("[atleast_2d]", atleast_2d(m, g));
  EXPECT_OP_THROWS("[atleast_3d]", atleast_3d(m, g));
  EXPECT_OP_THROWS("[number_of_elements]", number_of_elements(m, {0}, false, int32, g));
  EXPECT_OP_THROWS("[slice]", slice(m, {0, 0}, {1, 1}, g));
  EXPECT_OP_THROWS("[slice]", slice(m, array(0), {0}, {1, 3}, g));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, array(1.0f), Shape{0, 0}, Shape{1, 1}, g));
  EXPECT_OP_THROWS("[slice_update]", slice_update(m, array(1.0f), array(0), {0}, g));
  EXPECT_OP_THROWS("[slice_update_add]", slice_update_add(m, array(1.0f), {0, 0}, {1, 1}, g));
  EXPECT_OP_THROWS("[split]", split(m, 2, 0, g));
  EXPECT_OP_THROWS("[concatenate]", concatenate({m, m}, 0, g));
  EXPECT_OP_THROWS("[stack]", stack({m, m}, 0, g));
}

// MLX's flip and unstack (views), and pad's reflect and symmetric modes with NumPy's repeated
// reflection for pads longer than the axis; each against NumPy's values, on every device.
TEST(OpsShapeViews, FlipUnstackAndMirrorPadding) {
  for (Device d : test_devices()) {
    SCOPED_TRACE(test::device_name(d));
    array x = array({0, 1, 2, 3, 4, 5}, {2, 3});
    EXPECT_EQ(values(flip(x, d)), (std::vector<double>{5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(values(flip(x, 0, d)), (std::vector<double>{3, 4, 5, 0, 1, 2}));
    EXPECT_EQ(values(flip(x, -1, d)), (std::vector<double>{2, 1, 0, 5, 4, 3}));
    EXPECT_EQ(values(flip(x, std::vector<int>{0, 1}, d)), (std::vector<double>{5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(values(flip(array({1, 2, 3, 4}), d)), (std::vector<double>{4, 3, 2, 1}));
    EXPECT_OP_THROWS("[flip]", flip(x, 2, d));
    EXPECT_OP_THROWS("[flip]", flip(x, std::vector<int>{1, -1}, d));

    auto rows = unstack(x, 0, d);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].shape(), (Shape{3}));
    EXPECT_EQ(values(rows[1]), (std::vector<double>{3, 4, 5}));
    auto cols = unstack(x, 1, d);
    ASSERT_EQ(cols.size(), 3u);
    EXPECT_EQ(values(cols[2]), (std::vector<double>{2, 5}));
    EXPECT_TRUE(array_equal(stack(cols, 1, d), x).item<bool>());
    EXPECT_TRUE(unstack(zeros({0, 2}), 0, d).empty());
    EXPECT_OP_THROWS("[unstack]", unstack(x, 2, d));
    EXPECT_OP_THROWS("[unstack]", unstack(array(1.0f), 0, d));

    array v = array({1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
    auto padded = [&](int lo, int hi, const char* mode) {
      return values(pad(v, {{lo, hi}}, array(0.0f), mode, d));
    };
    EXPECT_EQ(padded(2, 2, "reflect"), (std::vector<double>{3, 2, 1, 2, 3, 4, 5, 4, 3}));
    EXPECT_EQ(padded(0, 3, "reflect"), (std::vector<double>{1, 2, 3, 4, 5, 4, 3, 2}));
    EXPECT_EQ(padded(2, 2, "symmetric"), (std::vector<double>{2, 1, 1, 2, 3, 4, 5, 5, 4}));
    EXPECT_EQ(padded(3, 0, "symmetric"), (std::vector<double>{3, 2, 1, 1, 2, 3, 4, 5}));
    EXPECT_EQ(values(pad(array({1.0f, 2.0f, 3.0f}), {{5, 5}}, array(0.0f), "reflect", d)),
              (std::vector<double>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2}));  // NumPy's np.pad
    EXPECT_EQ(values(pad(array({1.0f, 2.0f}), {{3, 4}}, array(0.0f), "symmetric", d)),
              (std::vector<double>{2, 2, 1, 1, 2, 2, 1, 1, 2}));
    EXPECT_EQ(values(pad(array({7.0f}), {{2, 1}}, array(0.0f), "reflect", d)),
              (std::vector<double>{7, 7, 7, 7}));
    // Two axes, each mirrored in turn.
    EXPECT_EQ(values(pad(x, {{1, 0}, {0, 2}}, array(0), "reflect", d)),
              (std::vector<double>{3, 4, 5, 4, 3, 0, 1, 2, 1, 0, 3, 4, 5, 4, 3}));
    EXPECT_OP_THROWS("[pad]", pad(zeros({0}), {{1, 1}}, array(0.0f), "reflect", d));
    EXPECT_OP_THROWS("[pad]", pad(v, {{1, 1}}, array(0.0f), "wrap", d));
  }
}

TEST(OpsShapeCreation, LinspaceWithoutItsEndpointIsNumpys) {
  for (Device d : test_devices()) {
    EXPECT_EQ(values(linspace(0, 10, 5, false, float32, d)), (std::vector<double>{0, 2, 4, 6, 8}));
    EXPECT_EQ(values(linspace(0, 10, 5, true, int32, d)), (std::vector<double>{0, 2, 5, 7, 10}));
    EXPECT_EQ(linspace(0, 10, 5, false, int32, d).dtype(), int32);
    EXPECT_EQ(values(linspace(1, 10, 1, false, float32, d)), (std::vector<double>{1}));
    EXPECT_EQ(linspace(0, 1, 0, false, float32, d).shape(), (Shape{0}));
    test::expect_close(values(linspace(-2.7, -0.7, 7, false, float32, d)),
                       {-2.7, -2.4142857, -2.1285714, -1.8428571, -1.5571429, -1.2714286, -0.9857143}, 1e-6,
                       1e-6, "negative range");
    EXPECT_OP_THROWS("[linspace]", linspace(0, 1, -1, false, float32, d));
  }
}

// A reversed axis reaches memory before the data pointer: not dense in MLX's sense, however
// many elements it covers (MLX's as_strided check).
TEST(OpsShapeViews, ReversedViewsAreNotFlaggedContiguous) {
  array x = arange(10.0f);
  eval(x);
  array r = as_strided(x, {10}, {-1}, 9);
  eval(r);
  EXPECT_FALSE(r.flags().contiguous);
  EXPECT_FALSE(r.flags().row_contiguous);
  EXPECT_EQ(values(r), (std::vector<double>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  array f = flip(reshape(x, {2, 5}), 1);
  eval(f);
  EXPECT_FALSE(f.flags().contiguous);
  EXPECT_EQ(values(add(f, array(1.0f))), (std::vector<double>{5, 4, 3, 2, 1, 10, 9, 8, 7, 6}));
  array t = transpose(reshape(x, {2, 5}));
  eval(t);
  EXPECT_TRUE(t.flags().contiguous);  // a transpose still is
}
