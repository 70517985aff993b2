// Value tests for every op in braid/ops.h, each checked against a scalar reference computed
// here in double from the same (dtype-rounded) inputs. Inputs cover every dtype where it means
// something, and non-contiguous layouts: transposed, broadcast (zero strides), reshaped views.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "support.h"

using namespace braid;

namespace {

const std::vector<Dtype> kAllDtypes = {bool_, uint8, int32, int64, float16, bfloat16, float32};
const std::vector<Dtype> kFloatDtypes = {float16, bfloat16, float32};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<int64_t> shape64(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// Row-major multi-index of flat position `i`.
std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + idx[d];
  return i;
}

// The value `v` becomes once stored as `dt` (integers wrap, as the kernels' casts do).
double round_to(double v, Dtype dt) {
  if (std::isnan(v)) return v;
  switch (dt.val()) {
    case Dtype::Val::bool_: return v != 0 ? 1 : 0;
    case Dtype::Val::uint8: return static_cast<uint8_t>(static_cast<int64_t>(v));
    case Dtype::Val::int32: return static_cast<int32_t>(static_cast<int64_t>(v));
    case Dtype::Val::int64: return static_cast<double>(static_cast<int64_t>(v));
    case Dtype::Val::float16: return static_cast<float>(float16_t(static_cast<float>(v)));
    case Dtype::Val::bfloat16: return static_cast<float>(bfloat16_t(static_cast<float>(v)));
    case Dtype::Val::float32: return static_cast<float>(v);
  }
  return v;
}

template <typename T>
std::vector<double> read_values(array& a) {
  const T* p = a.data<T>();
  const auto shape = shape64(a.shape());
  const int nd = static_cast<int>(shape.size());
  std::vector<double> out(a.size());
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t off = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i > 0) {  // odometer step through the strides
      for (int d = nd - 1; d >= 0; --d) {
        off += a.strides()[d];
        if (++idx[d] < shape[d]) break;
        off -= a.strides()[d] * shape[d];
        idx[d] = 0;
      }
    }
    if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) {
      out[i] = static_cast<float>(p[off]);
    } else {
      out[i] = static_cast<double>(p[off]);
    }
  }
  return out;
}

// Evaluates `a` and returns its elements in row-major order of its shape, read via strides.
std::vector<double> values(array a) {
  switch (a.dtype().val()) {
    case Dtype::Val::bool_: return read_values<bool>(a);
    case Dtype::Val::uint8: return read_values<uint8_t>(a);
    case Dtype::Val::int32: return read_values<int32_t>(a);
    case Dtype::Val::int64: return read_values<int64_t>(a);
    case Dtype::Val::float16: return read_values<float16_t>(a);
    case Dtype::Val::bfloat16: return read_values<bfloat16_t>(a);
    case Dtype::Val::float32: return read_values<float>(a);
    case Dtype::Val::uint16: return read_values<uint16_t>(a);
    case Dtype::Val::uint32: return read_values<uint32_t>(a);
    case Dtype::Val::uint64: return read_values<uint64_t>(a);
    case Dtype::Val::int8: return read_values<int8_t>(a);
    case Dtype::Val::int16: return read_values<int16_t>(a);
    case Dtype::Val::float64: return read_values<double>(a);
    case Dtype::Val::complex64: return read_values<float>(a);
  }
  return {};
}

array make(const std::vector<double>& v, const Shape& shape, Dtype dt) {
  if (is_floating_point(dt)) {
    std::vector<float> f(v.begin(), v.end());
    return array(f.begin(), shape, dt);
  }
  std::vector<int64_t> i(v.size());
  for (size_t k = 0; k < v.size(); ++k) i[k] = static_cast<int64_t>(v[k]);
  return array(i.begin(), shape, dt);
}

// Random values already representable in `dt`; small, so integer arithmetic stays exact.
std::vector<double> random_values(int64_t n, Dtype dt, uint32_t seed, double lo = -4, double hi = 4) {
  std::mt19937 rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if (dt == bool_) {
      x = static_cast<double>(rng() % 2);
    } else if (dt == uint8) {
      x = static_cast<double>(rng() % 20);
    } else if (is_integral(dt)) {
      x = static_cast<double>(static_cast<int>(rng() % 41) - 20);
    } else {
      x = round_to(std::uniform_real_distribution<double>(lo, hi)(rng), dt);
    }
  }
  return v;
}

double rel_tol(Dtype dt) {
  if (dt == float16) return 2e-3;
  if (dt == bfloat16) return 1.6e-2;
  if (dt == float32) return 2e-5;
  return 0;
}

// Element-wise comparison; NaN matches NaN, integers must match exactly.
::testing::AssertionResult all_close(const std::vector<double>& got, const std::vector<double>& want,
                                     Dtype dt, double abs_tol = -1) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  const double rt = rel_tol(dt);
  const double at = abs_tol >= 0 ? abs_tol : rt;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(g) && std::isnan(w)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= at + rt * std::fabs(w))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << ", want " << w << " (" << dt << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<double> rounded(std::vector<double> v, Dtype dt) {
  for (auto& x : v) x = round_to(x, dt);
  return v;
}

// Reference reduction of row-major `v` of `shape` over `axes` (non-negative); keepdims layout.
std::vector<double> ref_reduce(const std::vector<double>& v, const std::vector<int64_t>& shape,
                               const std::vector<int>& axes, bool is_max) {
  std::vector<int64_t> out_shape = shape;
  for (int a : axes) out_shape[a] = 1;
  std::vector<double> out(static_cast<size_t>(numel(out_shape)), is_max ? -kInf : 0.0);
  // Output offset of each input position: an odometer over the input with reduced strides 0.
  std::vector<int64_t> out_strides(shape.size(), 0), idx(shape.size(), 0);
  for (int d = static_cast<int>(shape.size()) - 1, st = 1; d >= 0;
       st *= static_cast<int>(out_shape[d]), --d) {
    out_strides[d] = out_shape[d] == 1 ? 0 : st;
  }
  int64_t o_off = 0;
  for (int64_t i = 0; i < numel(shape); ++i) {
    if (i > 0) {
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        o_off += out_strides[d];
        if (++idx[d] < shape[d]) break;
        o_off -= out_strides[d] * shape[d];
        idx[d] = 0;
      }
    }
    double& o = out[o_off];
    const double x = v[i];
    if (is_max) {
      o = (std::isnan(x) || std::isnan(o)) ? kNaN : std::max(o, x);
    } else {
      o += x;
    }
  }
  return out;
}

// Reference matmul of [..., M, K] x [..., K, N] with NumPy batch broadcasting.
std::vector<double> ref_matmul(const std::vector<double>& a, std::vector<int64_t> as,
                               const std::vector<double>& b, std::vector<int64_t> bs,
                               std::vector<int64_t>* out_shape) {
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  while (ab.size() < bb.size()) ab.insert(ab.begin(), 1);
  while (bb.size() < ab.size()) bb.insert(bb.begin(), 1);
  std::vector<int64_t> batch(ab.size());
  for (size_t i = 0; i < ab.size(); ++i) batch[i] = std::max(ab[i], bb[i]);
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  std::vector<double> out(static_cast<size_t>(numel(*out_shape)), 0.0);
  for (int64_t t = 0; t < numel(batch); ++t) {
    auto idx = unravel(t, batch);
    std::vector<int64_t> ia(idx.size()), ib(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      ia[i] = ab[i] == 1 ? 0 : idx[i];
      ib[i] = bb[i] == 1 ? 0 : idx[i];
    }
    const int64_t oa = ravel(ia, ab) * m * k, ob = ravel(ib, bb) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += a[oa + i * k + p] * b[ob + p * n + j];
        out[t * m * n + i * n + j] = acc;
      }
    }
  }
  return out;
}

std::vector<double> ref_softmax_rows(const std::vector<double>& v, int64_t width) {
  std::vector<double> out(v.size());
  for (size_t r = 0; r * width < v.size(); ++r) {
    double mx = -kInf;
    for (int64_t i = 0; i < width; ++i) mx = std::max(mx, v[r * width + i]);
    double total = 0;
    for (int64_t i = 0; i < width; ++i) total += std::exp(v[r * width + i] - mx);
    for (int64_t i = 0; i < width; ++i) out[r * width + i] = std::exp(v[r * width + i] - mx) / total;
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Creation

TEST(OpsCreation, ZerosAndOnesInEveryDtype) {
  for (Dtype dt : kAllDtypes) {
    array z = zeros({2, 3}, dt);
    array o = ones({3, 2}, dt);
    EXPECT_EQ(z.dtype(), dt);
    EXPECT_EQ(o.dtype(), dt);
    EXPECT_EQ(z.shape(), (Shape{2, 3}));
    EXPECT_EQ(values(z), std::vector<double>(6, 0.0)) << dt;
    EXPECT_EQ(values(o), std::vector<double>(6, 1.0)) << dt;
  }
  EXPECT_EQ(zeros({4}).dtype(), float32);
  EXPECT_EQ(ones({4}).dtype(), float32);
}

TEST(OpsCreation, ZeroSizeAndScalarShapes) {
  array e = zeros({0, 3});
  EXPECT_EQ(e.size(), 0u);
  EXPECT_TRUE(values(e).empty());
  array s = ones({});
  EXPECT_EQ(s.ndim(), 0u);
  EXPECT_EQ(s.item<float>(), 1.0f);
}

TEST(OpsCreation, FullFromScalarConvertsToTheDtype) {
  EXPECT_EQ(values(full({2, 2}, 7.5f)), std::vector<double>(4, 7.5));
  EXPECT_EQ(full({2, 2}, 7.5f).dtype(), float32);
  EXPECT_EQ(values(full({3}, 3.7f, int32)), std::vector<double>(3, 3.0));
  EXPECT_EQ(values(full({2}, 5, bool_)), std::vector<double>(2, 1.0));
  EXPECT_EQ(full({2}, int64_t{5}).dtype(), int64);
  EXPECT_EQ(values(full({2}, 1000.0f, float16)), std::vector<double>(2, 1000.0));
}

TEST(OpsCreation, FullBroadcastsAnArrayOfValues) {
  array row({1, 2, 3});
  array f = full({2, 3}, row);
  EXPECT_EQ(f.dtype(), int32);
  EXPECT_EQ(values(f), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  array col = full({2, 3}, reshape(array({1.5f, -2.0f}), {2, 1}), bfloat16);
  EXPECT_EQ(col.dtype(), bfloat16);
  EXPECT_EQ(values(col), (std::vector<double>{1.5, 1.5, 1.5, -2, -2, -2}));
  // A transposed (non-contiguous) source.
  array t = full({2, 2}, transpose(array({1, 2, 3, 4}, {2, 2})));
  EXPECT_EQ(values(t), (std::vector<double>{1, 3, 2, 4}));
}

// Integer aranges convert start and start + step saturating (past the type's range: its
// limits, as MLX where conversion saturates), then step in wrapping arithmetic. Every device.
TEST(OpsCreation, ArangeConvertsOutsideValuesSaturating) {
  const double imax = 2147483647.0, imin = -2147483648.0;
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    EXPECT_EQ(values(arange(1099511627776.0, 1099511627779.0, 1.0, int32)), (std::vector<double>(3, imax)));
    EXPECT_EQ(values(arange(-1099511627776.0, -1099511627774.0, 1.0, int32)), (std::vector<double>(2, imin)));
    EXPECT_EQ(values(arange(imax - 1, imax + 3, 1.0, int32)),
              (std::vector<double>{imax - 1, imax, imin, imin + 1}));
    EXPECT_EQ(values(arange(250.0, 260.0, 2.0, uint8)), (std::vector<double>{250, 252, 254, 0, 2}));
    EXPECT_EQ(values(arange(0.0, 3.0, 1.0, int64)), (std::vector<double>{0, 1, 2}));
  }
}

TEST(OpsCreation, ArangeIntegerOverloads) {
  EXPECT_EQ(arange(5).dtype(), int32);
  EXPECT_EQ(values(arange(5)), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values(arange(2, 6)), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(values(arange(5, 1, -1)), (std::vector<double>{5, 4, 3, 2}));
  EXPECT_EQ(values(arange(0, 10, 3)), (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(arange(3, 3).size(), 0u);
  EXPECT_EQ(arange(10, 0).size(), 0u);
}

TEST(OpsCreation, ArangeFloatingOverloads) {
  EXPECT_EQ(arange(3.0).dtype(), float32);
  EXPECT_EQ(values(arange(3.0)), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values(arange(1.0, 3.0)), (std::vector<double>{1, 2}));
  EXPECT_EQ(values(arange(0.0, 1.0, 0.25)), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(values(arange(1.0, 0.0, -0.5)), (std::vector<double>{1, 0.5}));
  EXPECT_EQ(arange(0.0, 1.0, 0.3).size(), 4u);  // ceil(1 / 0.3)
  array h = arange(0.0, 2.0, 0.5, float16);
  EXPECT_EQ(h.dtype(), float16);
  EXPECT_EQ(values(h), (std::vector<double>{0, 0.5, 1, 1.5}));
  EXPECT_EQ(values(arange(4.0, int64)), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(arange(4.0, int64).dtype(), int64);
  EXPECT_EQ(values(arange(1.0, 4.0, uint8)), (std::vector<double>{1, 2, 3}));
}

// ---------------------------------------------------------------------------------------------
// astype, reshape, transpose, broadcast_to

TEST(OpsAsType, EveryPairOfDtypes) {
  const std::vector<double> src = {0, 1, 2, 5, 100};
  for (Dtype from : kAllDtypes) {
    const std::vector<double> in = rounded(src, from);
    for (Dtype to : kAllDtypes) {
      array out = astype(make(in, {5}, from), to);
      EXPECT_EQ(out.dtype(), to);
      EXPECT_TRUE(all_close(values(out), rounded(in, to), to)) << from << " -> " << to;
    }
  }
}

TEST(OpsAsType, FloatToIntegerTruncatesAndNonzeroIsTrue) {
  EXPECT_EQ(values(astype(array({2.7f, -2.7f, 0.0f}), int32)), (std::vector<double>{2, -2, 0}));
  EXPECT_EQ(values(astype(array({0.5f, 0.0f, -1.0f}), bool_)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(values(astype(array({-1, 300}), uint8)), (std::vector<double>{255, 44}));
}

TEST(OpsAsType, SameDtypeReturnsTheInputAndViewsAreGathered) {
  array a({1.0f, 2.0f});
  EXPECT_EQ(astype(a, float32).id(), a.id());
  array t = transpose(array({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(values(astype(t, float16)), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  array b = broadcast_to(array({1, 2}), {3, 2});
  EXPECT_EQ(values(astype(b, int64)), (std::vector<double>{1, 2, 1, 2, 1, 2}));
}

TEST(OpsReshape, KeepsRowMajorOrderAndInfersOneDimension) {
  array a = arange(12);
  array r = reshape(a, {3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  EXPECT_EQ(values(r), values(a));
  EXPECT_EQ(reshape(a, {2, 3, 2}).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(reshape(a, {12}).id(), a.id());
  EXPECT_EQ(reshape(array(5.0f), {1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(reshape(array({7}), {}).ndim(), 0u);
}

TEST(OpsReshape, NonContiguousInputsAreGatheredFirst) {
  array t = transpose(reshape(arange(6), {2, 3}));  // [[0,3],[1,4],[2,5]]
  EXPECT_EQ(values(reshape(t, {6})), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  array b = broadcast_to(array({1, 2}), {2, 2});
  EXPECT_EQ(values(reshape(b, {4})), (std::vector<double>{1, 2, 1, 2}));
  array tt = reshape(transpose(reshape(arange(24), {2, 3, 4}), {2, 0, 1}), {4, 6});
  std::vector<double> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(i * 12 + j * 4 + k);
  EXPECT_EQ(values(tt), want);
}

TEST(OpsReshape, ZeroSizeArrays) {
  array e = zeros({0, 3});
  EXPECT_EQ(reshape(e, {3, 0}).shape(), (Shape{3, 0}));
  EXPECT_EQ(reshape(e, {-1, 3}).shape(), (Shape{0, 3}));
  EXPECT_EQ(reshape(e, {-1}).shape(), (Shape{0}));
}

TEST(OpsTranspose, DefaultReversesAndAxesPermute) {
  array a = reshape(arange(24), {2, 3, 4});
  array t = transpose(a);
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  array p = transpose(a, {1, -1, 0});
  EXPECT_EQ(p.shape(), (Shape{3, 4, 2}));
  auto tv = values(t), pv = values(p);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        const double v = i * 12 + j * 4 + k;
        EXPECT_EQ(tv[k * 6 + j * 2 + i], v);
        EXPECT_EQ(pv[j * 8 + k * 2 + i], v);
      }
    }
  }
  EXPECT_EQ(values(transpose(transpose(a))), values(a));
  EXPECT_EQ(transpose(array(1.0f)).ndim(), 0u);
}

TEST(OpsTranspose, EveryDtype) {
  for (Dtype dt : kAllDtypes) {
    auto v = random_values(6, dt, 3);
    array t = transpose(make(v, {2, 3}, dt));
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_EQ(values(t), (std::vector<double>{v[0], v[3], v[1], v[4], v[2], v[5]})) << dt;
  }
}

TEST(OpsBroadcastTo, RepeatsAlongNewAndUnitDimensions) {
  array row({1.0f, 2.0f, 3.0f});
  array b = broadcast_to(row, {2, 3});
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(b), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  array col = broadcast_to(reshape(row, {3, 1}), {2, 3, 2});
  EXPECT_EQ(values(col), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(values(broadcast_to(array(int64_t{4}), {2, 2})), std::vector<double>(4, 4.0));
  EXPECT_EQ(broadcast_to(row, {0, 3}).size(), 0u);
  EXPECT_EQ(broadcast_to(row, {3}).id(), row.id());
  // A broadcast of a transposed view.
  array t = broadcast_to(transpose(array({1, 2, 3, 4}, {2, 2})), {2, 2, 2});
  EXPECT_EQ(values(t), (std::vector<double>{1, 3, 2, 4, 1, 3, 2, 4}));
}

// ---------------------------------------------------------------------------------------------
// Element-wise

namespace {

using BinaryFn = array (*)(const array&, const array&, StreamOrDevice);

struct BinaryCase {
  const char* name;
  BinaryFn fn;
  std::function<double(double, double)> ref;
  bool compare;  // result is bool
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", &add, [](double x, double y) { return x + y; }, false},
      {"subtract", &subtract, [](double x, double y) { return x - y; }, false},
      {"multiply", &multiply, [](double x, double y) { return x * y; }, false},
      {"maximum", &maximum,
       [](double x, double y) { return (std::isnan(x) || std::isnan(y)) ? kNaN : std::max(x, y); }, false},
      {"minimum", &minimum,
       [](double x, double y) { return (std::isnan(x) || std::isnan(y)) ? kNaN : std::min(x, y); }, false},
      {"equal", &equal, [](double x, double y) { return x == y ? 1.0 : 0.0; }, true},
      {"less", &less, [](double x, double y) { return x < y ? 1.0 : 0.0; }, true},
      {"greater", &greater, [](double x, double y) { return x > y ? 1.0 : 0.0; }, true},
  };
}

// Checks op(a, b) against the reference for row-major values of arrays with the given shapes.
void check_binary(const BinaryCase& c, const array& a, const array& b, Dtype expected_dtype) {
  array out = c.fn(a, b, {});
  const Dtype t = promote_types(a.dtype(), b.dtype());
  EXPECT_EQ(out.dtype(), c.compare ? bool_ : expected_dtype) << c.name;
  // Reference: broadcast the inputs' logical values by index.
  const auto os = shape64(out.shape());
  auto av = values(a), bv = values(b);
  auto as = shape64(a.shape()), bs = shape64(b.shape());
  std::vector<double> want(static_cast<size_t>(numel(os)));
  for (int64_t i = 0; i < numel(os); ++i) {
    auto idx = unravel(i, os);
    auto pick = [&](const std::vector<int64_t>& s) {
      std::vector<int64_t> j(s.size());
      for (size_t d = 0; d < s.size(); ++d) j[d] = s[d] == 1 ? 0 : idx[idx.size() - s.size() + d];
      return ravel(j, s);
    };
    double r = c.ref(round_to(av[pick(as)], t), round_to(bv[pick(bs)], t));
    want[i] = c.compare ? r : round_to(r, t);
  }
  EXPECT_TRUE(all_close(values(out), want, c.compare ? bool_ : t))
      << c.name << " " << a.dtype() << " " << b.dtype();
}

}  // namespace

TEST(OpsElementwise, BinaryOpsInEveryDtype) {
  uint32_t seed = 10;
  for (const auto& c : binary_cases()) {
    for (Dtype dt : kAllDtypes) {
      if (dt == bool_ && std::string(c.name) == "subtract") continue;  // checked below
      array a = make(random_values(12, dt, ++seed), {3, 4}, dt);
      array b = make(random_values(12, dt, ++seed), {3, 4}, dt);
      check_binary(c, a, b, dt);
    }
  }
}

// Outputs of 16 MiB and more are written with streaming stores in blocks; every element,
// including the unaligned heads and the tails of the parallel chunks, must be right.
TEST(OpsElementwise, LargeOutputsAreExactInEveryBlockAndTail) {
  const int n = (4 << 20) + 37;  // float32: just over 16 MiB
  array a = arange(0.0, static_cast<double>(n), 1.0, float32);
  array b = full({n}, 0.5f);
  array c = add(a, b);
  const float* pc = c.data<float>();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += pc[i] != static_cast<float>(i) + 0.5f;
  EXPECT_EQ(wrong, 0);
  const int m = (16 << 20) + 5;  // bool: just over 16 MiB
  array x = astype(arange(0, m, 1, int32), uint8);
  array eq = equal(x, full({m}, 7, uint8));
  ASSERT_EQ(eq.dtype(), bool_);
  const bool* pe = eq.data<bool>();
  int hits = 0;
  for (int i = 0; i < m; ++i) hits += pe[i] ? 1 : 0;
  EXPECT_EQ(hits, m / 256 + (m % 256 > 7 ? 1 : 0));
  EXPECT_TRUE(pe[7]);
  EXPECT_FALSE(pe[m - 1]);
}

TEST(OpsElementwise, BoolArithmeticIsLogical) {
  array a({true, true, false, false});
  array b({true, false, true, false});
  EXPECT_EQ(add(a, b).dtype(), bool_);
  EXPECT_EQ(values(add(a, b)), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(multiply(a, b)), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(maximum(a, b)), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(minimum(a, b)), (std::vector<double>{1, 0, 0, 0}));
}

TEST(OpsElementwise, UnsignedArithmeticWraps) {
  array a = array({3, 250}, uint8);
  array b = array({5, 10}, uint8);
  EXPECT_EQ(values(subtract(a, b)), (std::vector<double>{254, 240}));
  EXPECT_EQ(values(add(a, b)), (std::vector<double>{8, 4}));
}

TEST(OpsElementwise, DivideIsTrueDivision) {
  for (Dtype dt : kAllDtypes) {
    std::vector<double> x = rounded({7, 1, 0, 9, 4, 6}, dt), y = rounded({2, 4, 1, 3, 8, 5}, dt);
    if (dt == bool_) y = {1, 1, 1, 1, 1, 1};
    array out = divide(make(x, {2, 3}, dt), make(y, {2, 3}, dt));
    const Dtype want_t = is_floating_point(dt) ? dt : float32;
    EXPECT_EQ(out.dtype(), want_t) << dt;
    std::vector<double> want(6);
    for (int i = 0; i < 6; ++i) want[i] = round_to(x[i] / y[i], want_t);
    EXPECT_TRUE(all_close(values(out), want, want_t)) << dt;
  }
  EXPECT_EQ(divide(array({1, 2}), array({2, 4})).dtype(), float32);
  EXPECT_EQ(values(divide(array({1.0f, -1.0f}), array({0.0f, 0.0f}))), (std::vector<double>{kInf, -kInf}));
}

TEST(OpsElementwise, MaximumAndMinimumPropagateNaN) {
  for (Dtype dt : kFloatDtypes) {
    array a = make({1, kNaN, 3}, {3}, dt);
    array b = make({kNaN, 2, 1}, {3}, dt);
    auto mx = values(maximum(a, b)), mn = values(minimum(a, b));
    EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && mx[2] == 3) << dt;
    EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]) && mn[2] == 1) << dt;
  }
}

TEST(OpsElementwise, TypePromotion) {
  struct Case {
    Dtype a, b, out;
  };
  const std::vector<Case> cases = {
      {int32, float16, float16}, {float16, bfloat16, float32}, {uint8, int32, int32},
      {bool_, int32, int32},     {uint8, int64, int64},        {int64, float32, float32},
      {bool_, float16, float16}, {bfloat16, float32, float32}, {bool_, uint8, uint8},
      {int32, int64, int64},     {uint8, bfloat16, bfloat16},  {int32, int32, int32},
  };
  uint32_t seed = 100;
  for (const auto& c : cases) {
    array a = make(random_values(6, c.a, ++seed), {2, 3}, c.a);
    array b = make(random_values(6, c.b, ++seed), {2, 3}, c.b);
    EXPECT_EQ(promote_types(c.a, c.b), c.out);
    check_binary(binary_cases()[0], a, b, c.out);  // add
    check_binary(binary_cases()[2], b, a, c.out);  // multiply, operands swapped
  }
  EXPECT_EQ(divide(array({1, 2}, int32), array({2, 2}, int32)).dtype(), float32);
  EXPECT_EQ(divide(array({1, 2}, uint8), array({2, 2}, int64)).dtype(), float32);
  EXPECT_EQ(divide(array({1, 2}, int32), array({2.0f, 2.0f}, float16)).dtype(), float16);
}

TEST(OpsElementwise, BroadcastingAndNonContiguousInputs) {
  uint32_t seed = 200;
  for (Dtype dt : {int32, float16, float32}) {
    array m = make(random_values(12, dt, ++seed), {3, 4}, dt);
    array row = make(random_values(4, dt, ++seed), {4}, dt);
    array col = make(random_values(3, dt, ++seed), {3, 1}, dt);
    array scalar = make({2}, {}, dt);
    array mt = transpose(make(random_values(12, dt, ++seed), {4, 3}, dt));  // [3, 4], strided
    array bc = broadcast_to(row, {3, 4});                                   // zero stride
    array rs = reshape(transpose(make(random_values(12, dt, ++seed), {2, 6}, dt)), {3, 4});  // gathered
    for (const auto& c : binary_cases()) {
      check_binary(c, m, row, dt);
      check_binary(c, col, m, dt);
      check_binary(c, col, row, dt);  // both broadcast: [3,1] and [4] -> [3,4]
      check_binary(c, m, scalar, dt);
      check_binary(c, scalar, mt, dt);
      check_binary(c, mt, bc, dt);
      check_binary(c, rs, mt, dt);
    }
  }
}

TEST(OpsElementwise, ZeroSizeOperands) {
  array e = zeros({0, 3});
  array r = add(e, array({1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(r.shape(), (Shape{0, 3}));
  EXPECT_TRUE(values(r).empty());
  EXPECT_EQ(exp(e).shape(), (Shape{0, 3}));
  EXPECT_TRUE(values(exp(e)).empty());
  EXPECT_EQ(where(zeros({3}, bool_), e, array(1.0f)).shape(), (Shape{0, 3}));
}

TEST(OpsElementwise, UnaryOpsInEveryDtype) {
  struct Case {
    const char* name;
    array (*fn)(const array&, StreamOrDevice);
    double (*ref)(double);
    double lo, hi;
  };
  const std::vector<Case> cases = {
      {"exp", &exp, [](double x) { return std::exp(x); }, -4, 4},
      {"log", &log, [](double x) { return std::log(x); }, 0.05, 8},
      {"sqrt", &sqrt, [](double x) { return std::sqrt(x); }, 0, 9},
      {"tanh", &tanh, [](double x) { return std::tanh(x); }, -3, 3},
  };
  uint32_t seed = 300;
  for (const auto& c : cases) {
    for (Dtype dt : kAllDtypes) {
      std::vector<double> v = random_values(10, dt, ++seed, c.lo, c.hi);
      if (!is_floating_point(dt)) {
        for (auto& x : v) x = std::fabs(x) + (std::string(c.name) == "log" ? 1 : 0);
        if (dt == bool_ && std::string(c.name) == "log") v = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
      }
      v = rounded(v, dt);
      array out = c.fn(transpose(make(v, {2, 5}, dt)), {});
      const Dtype t = is_floating_point(dt) ? dt : float32;
      EXPECT_EQ(out.dtype(), t) << c.name << " " << dt;
      std::vector<double> want;
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 2; ++j) want.push_back(round_to(c.ref(v[j * 5 + i]), t));
      EXPECT_TRUE(all_close(values(out), want, t, 1e-6 + rel_tol(t))) << c.name << " " << dt;
    }
  }
}

TEST(OpsElementwise, SpecialValuesOfUnaryOps) {
  auto lg = values(log(array({0.0f, -1.0f, 1.0f})));
  EXPECT_EQ(lg[0], -kInf);
  EXPECT_TRUE(std::isnan(lg[1]));
  EXPECT_EQ(lg[2], 0.0);
  EXPECT_TRUE(std::isnan(values(sqrt(array({-1.0f})))[0]));
  EXPECT_EQ(values(exp(array({-kInf, kInf}, float16))), (std::vector<double>{0, kInf}));
}

TEST(OpsElementwise, NegativeInEveryNumericDtype) {
  for (Dtype dt : kAllDtypes) {
    if (dt == bool_) continue;
    auto v = random_values(6, dt, 400);
    array out = negative(broadcast_to(make(v, {1, 6}, dt), {2, 6}));
    EXPECT_EQ(out.dtype(), dt);
    std::vector<double> want;
    for (int r = 0; r < 2; ++r)
      for (double x : v) want.push_back(round_to(-x, dt));
    EXPECT_EQ(values(out), want) << dt;
  }
  EXPECT_EQ(values(negative(array({3}, uint8))), (std::vector<double>{253}));
}

TEST(OpsElementwise, WhereSelectsAndBroadcasts) {
  array cond({true, false, true});
  array x = reshape(arange(6), {2, 3});
  array y(-1.0f);
  array w = where(cond, x, y);
  EXPECT_EQ(w.dtype(), float32);
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(w), (std::vector<double>{0, -1, 2, 3, -1, 5}));
  // A non-bool condition is converted: nonzero is true.
  array wc = where(array({0, 2}), array({1, 1}, int64), array({9, 9}, uint8));
  EXPECT_EQ(wc.dtype(), int64);
  EXPECT_EQ(values(wc), (std::vector<double>{9, 1}));
  // Column condition against transposed operands, in every dtype.
  for (Dtype dt : kAllDtypes) {
    auto xv = random_values(6, dt, 500), yv = random_values(6, dt, 501);
    array c = reshape(array({true, false, true}), {3, 1});
    array r = where(c, transpose(make(xv, {2, 3}, dt)), transpose(make(yv, {2, 3}, dt)));
    EXPECT_EQ(r.dtype(), dt);
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) want.push_back(i != 1 ? xv[j * 3 + i] : yv[j * 3 + i]);
    EXPECT_EQ(values(r), want) << dt;
  }
}

TEST(OpsOperators, ArrayAndScalarOperands) {
  array a({1, 2, 3});
  array f({1.0f, 2.0f, 4.0f});
  EXPECT_EQ(values(a + 1), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ((a + 1).dtype(), int32);
  EXPECT_EQ(values(1 + a), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(values(a - 1), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values(10 - a), (std::vector<double>{9, 8, 7}));
  EXPECT_EQ(values(a * 3), (std::vector<double>{3, 6, 9}));
  EXPECT_EQ(values(3 * a), (std::vector<double>{3, 6, 9}));
  EXPECT_EQ(values(f / 2.0f), (std::vector<double>{0.5, 1, 2}));
  EXPECT_EQ(values(4.0f / f), (std::vector<double>{4, 2, 1}));
  EXPECT_EQ((a / 2).dtype(), float32);
  EXPECT_EQ(values(a / 2), (std::vector<double>{0.5, 1, 1.5}));
  EXPECT_EQ(values(2 / a), values(divide(array(2), a)));
  EXPECT_EQ((a + 1.5f).dtype(), float32);
  EXPECT_EQ(values(a + 1.5f), (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(values(-a), (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(values(a + f), (std::vector<double>{2, 4, 7}));
  EXPECT_EQ(values(a - f), (std::vector<double>{0, 0, -1}));
  EXPECT_EQ(values(a * f), (std::vector<double>{1, 4, 12}));
  EXPECT_EQ(values(f / a), (std::vector<double>{1, 1, static_cast<float>(4.0 / 3.0)}));
  // A float32 scalar promotes a float16 array (C++ scalars carry their own type, as in MLX).
  array h({1.0f, 2.0f}, float16);
  EXPECT_EQ((h * 2.0f).dtype(), float32);
  EXPECT_EQ((h * array(2.0f, float16)).dtype(), float16);
  EXPECT_EQ((array({true, false}) + int64_t{1}).dtype(), int64);
}

// ---------------------------------------------------------------------------------------------
// Reductions

namespace {

// Compares sum/max over `axes` of `a` (any layout) with the reference, keepdims both ways.
void check_reduce(const array& a, const std::vector<int>& axes, bool is_max) {
  const int nd = static_cast<int>(a.ndim());
  std::vector<int> norm;
  for (int ax : axes) norm.push_back(ax < 0 ? ax + nd : ax);
  std::sort(norm.begin(), norm.end());
  const Dtype out_t = is_max ? a.dtype() : (a.dtype() == bool_ ? int32 : a.dtype() == uint8 ? uint32 : a.dtype());
  const auto want = rounded(ref_reduce(values(a), shape64(a.shape()), norm, is_max), out_t);
  for (bool keep : {false, true}) {
    array r = is_max ? braid::max(a, axes, keep) : sum(a, axes, keep);
    EXPECT_EQ(r.dtype(), out_t) << a.dtype();
    Shape want_shape;
    for (int i = 0; i < nd; ++i) {
      const bool reduced = std::find(norm.begin(), norm.end(), i) != norm.end();
      if (!reduced) want_shape.push_back(a.shape()[i]);
      if (reduced && keep) want_shape.push_back(1);
    }
    EXPECT_EQ(r.shape(), want_shape);
    const double tol = is_floating_point(out_t) ? rel_tol(out_t) : 0;
    EXPECT_TRUE(all_close(values(r), want, out_t, tol)) << (is_max ? "max" : "sum") << " " << a.dtype();
  }
}

}  // namespace

TEST(OpsReduce, SumAndMaxInEveryDtypeOverEveryAxisSet) {
  const std::vector<std::vector<int>> axis_sets = {{0},    {1},    {2},       {-1},    {0, 1},
                                                   {1, 2}, {0, 2}, {0, 1, 2}, {-3, -1}};
  uint32_t seed = 600;
  for (Dtype dt : kAllDtypes) {
    array a = make(random_values(60, dt, ++seed), {3, 4, 5}, dt);
    for (const auto& axes : axis_sets) {
      check_reduce(a, axes, false);
      check_reduce(a, axes, true);
    }
  }
}

TEST(OpsReduce, NonContiguousInputs) {
  uint32_t seed = 700;
  for (Dtype dt : {bool_, int32, float16, float32}) {
    array base = make(random_values(60, dt, ++seed), {3, 4, 5}, dt);
    const std::vector<array> views = {
        transpose(base),             // reversed strides
        transpose(base, {1, 0, 2}),  // permuted outer dims
        transpose(base, {2, 0, 1}),  // unit stride in the middle
        broadcast_to(make(random_values(5, dt, ++seed), {1, 1, 5}, dt), {3, 4, 5}),  // zero strides
        broadcast_to(make(random_values(4, dt, ++seed), {4, 1}, dt), {3, 4, 5}),
        reshape(transpose(base, {0, 2, 1}), {3, 4, 5}),  // a gathered copy
    };
    for (const auto& v : views) {
      for (const std::vector<int>& axes :
           std::vector<std::vector<int>>{{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}}) {
        check_reduce(v, axes, false);
        check_reduce(v, axes, true);
      }
    }
  }
}

TEST(OpsReduce, OverloadsAndNegativeAxes) {
  array a = reshape(arange(6), {2, 3});
  EXPECT_EQ(sum(a).item<int>(), 15);
  EXPECT_EQ(sum(a).ndim(), 0u);
  EXPECT_EQ(sum(a, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(values(sum(a, 0)), (std::vector<double>{3, 5, 7}));
  EXPECT_EQ(values(sum(a, -1)), (std::vector<double>{3, 12}));
  EXPECT_EQ(sum(a, -1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(values(sum(a, std::vector<int>{-2, 1})), (std::vector<double>{15}));
  EXPECT_EQ(braid::max(a).item<int>(), 5);
  EXPECT_EQ(braid::max(a, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(values(braid::max(a, 0)), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(values(braid::max(a, -1, true)), (std::vector<double>{2, 5}));
  EXPECT_EQ(braid::max(a, -1, true).shape(), (Shape{2, 1}));
  EXPECT_FLOAT_EQ(mean(a).item<float>(), 2.5f);
  EXPECT_EQ(mean(a, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(values(mean(a, 0)), (std::vector<double>{1.5, 2.5, 3.5}));
  EXPECT_EQ(values(mean(a, -1, true)), (std::vector<double>{1, 4}));
  EXPECT_EQ(mean(a, std::vector<int>{0, 1}, true).shape(), (Shape{1, 1}));
  // A 0-d array reduces over no axes.
  EXPECT_EQ(sum(array(3)).item<int>(), 3);
  EXPECT_EQ(braid::max(array(3.5f)).item<float>(), 3.5f);
}

TEST(OpsReduce, EmptyAxisListReturnsTheInput) {
  array a({true, false});
  EXPECT_EQ(sum(a, std::vector<int>{}).id(), a.id());
  EXPECT_EQ(braid::max(a, std::vector<int>{}).id(), a.id());
  array m = mean(a, std::vector<int>{});
  EXPECT_EQ(m.dtype(), float32);
  EXPECT_EQ(values(m), (std::vector<double>{1, 0}));
  array f({1.0f, 2.0f}, float16);
  EXPECT_EQ(mean(f, std::vector<int>{}).id(), f.id());
}

// The mean of 16-bit floats sums in float32: a float16 total of 100,000 ones would be inf.
TEST(OpsReduce, MeanOfHalfPrecisionDoesNotOverflow) {
  for (Dtype t : {float16, bfloat16}) {
    array a = ones({100000}, t);
    array m = mean(a);
    EXPECT_EQ(m.dtype(), t);
    EXPECT_EQ(m.item<float>(), 1.0f) << dtype_name(t);
    array rows = full({4, 30000}, 3.0f, t);
    EXPECT_EQ(values(mean(rows, 1)), (std::vector<double>{3, 3, 3, 3})) << dtype_name(t);
    EXPECT_EQ(values(mean(transpose(rows), 0)), (std::vector<double>{3, 3, 3, 3})) << dtype_name(t);
  }
  // The sum itself keeps the input's dtype, as in MLX.
  EXPECT_EQ(sum(ones({4}, float16)).dtype(), float16);
}

TEST(OpsReduce, SumOutputDtypes) {
  EXPECT_EQ(sum(array({true, true, true})).dtype(), int32);
  EXPECT_EQ(sum(array({true, true, true})).item<int>(), 3);
  array u = full({300}, 200, uint8);
  EXPECT_EQ(sum(u).dtype(), uint32);
  EXPECT_EQ(sum(u).item<uint32_t>(), 60000u);
  EXPECT_EQ(sum(array({1, 2}, int64)).dtype(), int64);
  EXPECT_EQ(sum(array({1, 2}, int32)).dtype(), int32);
  EXPECT_EQ(sum(array({1, 2}, float16)).dtype(), float16);
  EXPECT_EQ(sum(array({1, 2}, bfloat16)).dtype(), bfloat16);
  EXPECT_EQ(braid::max(array({true, false})).dtype(), bool_);
  EXPECT_EQ(braid::max(array({1, 2}, uint8)).dtype(), uint8);
}

TEST(OpsReduce, SixteenBitSumsAccumulateInFloat) {
  // float16 counts exactly only to 2048; an accumulator in float16 would stop there.
  EXPECT_EQ(sum(ones({4096}, float16)).item<float>(), 4096.0f);
  EXPECT_EQ(sum(ones({64, 64}, float16), 0).dtype(), float16);
  EXPECT_EQ(values(sum(ones({4096, 2}, bfloat16), 0)), (std::vector<double>{4096, 4096}));
  EXPECT_EQ(values(sum(broadcast_to(array(1.0f, float16), {3, 4096}), 1)),
            (std::vector<double>{4096, 4096, 4096}));
}

TEST(OpsReduce, SumOfSixteenMillionOnesIsExact) {
  array a = ones({1 << 24});
  EXPECT_EQ(sum(a).item<float>(), 16777216.0f);
  EXPECT_EQ(values(sum(reshape(a, {4, 1 << 22}), 1)), std::vector<double>(4, 4194304.0));
  EXPECT_EQ(values(sum(reshape(a, {1 << 22, 4}), 0)), std::vector<double>(4, 4194304.0));
  EXPECT_EQ(sum(transpose(reshape(a, {1 << 12, 1 << 12}))).item<float>(), 16777216.0f);
  // Blocked float partials keep a sum of 2^24 copies of 0.1 within a few float ulps.
  EXPECT_NEAR(sum(full({1 << 24}, 0.1f)).item<float>(), (1 << 24) * static_cast<double>(0.1f),
              1677721.6 * 1e-6);
}

TEST(OpsReduce, LargeShapesTakeEveryParallelPath) {
  struct Case {
    Shape shape;
    std::vector<int> axes;
    bool transposed;
  };
  const std::vector<Case> cases = {
      {{3, 70000}, {1}, false},     // few long rows, split into chunks
      {{70000, 5}, {1}, false},     // many short rows
      {{70000, 3}, {0}, false},     // few columns, the reduced range split
      {{8, 66000}, {0}, false},     // many column blocks
      {{40, 300, 30}, {1}, false},  // batched columns
      {{150, 1000}, {1}, true},     // transposed: columns in memory
      {{150, 1000}, {0}, true},     // transposed: rows in memory
      {{20, 30, 400}, {0, 2}, false},
  };
  uint32_t seed = 800;
  for (const auto& c : cases) {
    for (Dtype dt : {int32, float32, bfloat16}) {
      Shape s = c.shape;
      if (c.transposed) std::reverse(s.begin(), s.end());
      int64_t n = 1;
      for (auto d : s) n *= d;
      array a = make(random_values(n, dt, ++seed), s, dt);
      if (c.transposed) a = transpose(a);
      check_reduce(a, c.axes, false);
      check_reduce(a, c.axes, true);
    }
  }
}

TEST(OpsReduce, MaxPropagatesNaNOnEveryPath) {
  for (Dtype dt : kFloatDtypes) {
    std::vector<double> v(4 * 70000, 1.0);
    v[3] = kNaN;              // row 0, early
    v[70000 + 69999] = kNaN;  // row 1, last
    array a = make(v, {4, 70000}, dt);
    auto rows = values(braid::max(a, 1));
    EXPECT_TRUE(std::isnan(rows[0]) && std::isnan(rows[1])) << dt;
    EXPECT_EQ(rows[2], 1.0);
    std::vector<double> vt(v.size());  // the same rows stored as columns
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 70000; ++c) vt[c * 4 + r] = v[r * 70000 + c];
    auto cols = values(braid::max(transpose(make(vt, {70000, 4}, dt)), 1));
    EXPECT_TRUE(std::isnan(cols[0]) && std::isnan(cols[1]) && cols[3] == 1.0) << dt;
    EXPECT_TRUE(std::isnan(braid::max(a).item<float>())) << dt;
    auto c0 = values(braid::max(a, 0));
    EXPECT_TRUE(std::isnan(c0[3]) && std::isnan(c0[69999]) && c0[0] == 1.0) << dt;
  }
  EXPECT_TRUE(std::isnan(braid::max(array({kNaN, 1.0, 2.0})).item<float>()));
  EXPECT_TRUE(std::isnan(braid::max(array({1.0, 2.0, kNaN})).item<float>()));
}

TEST(OpsReduce, MaxOfInfinitiesAndNegatives) {
  EXPECT_EQ(braid::max(array({-kInf, -kInf})).item<float>(), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(braid::max(array({-5, -3, -9})).item<int>(), -3);
  EXPECT_EQ(braid::max(array({int64_t{-5}, int64_t{-30000000000}})).item<int64_t>(), -5);
  EXPECT_EQ(braid::max(array({false, false})).item<bool>(), false);
  EXPECT_EQ(braid::max(array({false, true})).item<bool>(), true);
}

TEST(OpsReduce, ZeroSizeInputs) {
  EXPECT_EQ(sum(zeros({0})).item<float>(), 0.0f);
  EXPECT_EQ(values(sum(zeros({0, 3}), 0)), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(sum(zeros({3, 0}, int32), 1)), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(sum(zeros({3, 0}), 0).shape(), (Shape{0}));
  // max of an empty reduced axis throws; along another axis the output is empty (as NumPy).
  EXPECT_THROW(braid::max(zeros({0, 3}), 0), std::invalid_argument);
  EXPECT_EQ(braid::max(zeros({0, 3}), 1).shape(), (Shape{0}));
  EXPECT_TRUE(std::isnan(mean(zeros({0})).item<float>()));
  auto m = values(mean(zeros({2, 0}), 1));
  EXPECT_TRUE(m.size() == 2 && std::isnan(m[0]) && std::isnan(m[1]));
  EXPECT_TRUE(std::isnan(mean(zeros({0}, int32)).item<float>()));
}

TEST(OpsReduce, MeanDtypesAndValues) {
  uint32_t seed = 900;
  for (Dtype dt : kAllDtypes) {
    auto v = random_values(24, dt, ++seed);
    array a = make(v, {2, 3, 4}, dt);
    const Dtype t = is_floating_point(dt) ? dt : float32;
    for (const std::vector<int>& axes : std::vector<std::vector<int>>{{0}, {2}, {-1, 0}, {0, 1, 2}}) {
      std::vector<int> norm;
      for (int ax : axes) norm.push_back(ax < 0 ? ax + 3 : ax);
      std::sort(norm.begin(), norm.end());
      double count = 1;
      for (int ax : norm) count *= a.shape()[ax];
      auto want = ref_reduce(v, {2, 3, 4}, norm, false);
      for (auto& x : want) x = round_to(x / count, t);
      array m = mean(transpose(transpose(a)), axes);
      EXPECT_EQ(m.dtype(), t) << dt;
      EXPECT_TRUE(all_close(values(m), want, t, 2 * rel_tol(t))) << dt;
    }
  }
  EXPECT_EQ(values(mean(array({1, 2}, int32))), (std::vector<double>{1.5}));
  // 16-bit means accumulate in float and scale in float32 (1/3000 is inexact in float16).
  array m16 = mean(full({3000}, 3.0f, float16));
  EXPECT_EQ(m16.dtype(), float16);
  EXPECT_EQ(m16.item<float>(), 3.0f);
  EXPECT_TRUE(all_close(values(mean(full({2, 70000}, 3.0f, bfloat16), 1)), {3, 3}, bfloat16));
  EXPECT_EQ(mean(array({true, false, true, true})).item<float>(), 0.75f);
}

// ---------------------------------------------------------------------------------------------
// matmul

namespace {

void check_matmul(const array& a, const array& b, Dtype want_dtype, double tol_scale = 1) {
  array out = matmul(a, b);
  EXPECT_EQ(out.dtype(), want_dtype);
  auto as = shape64(a.shape()), bs = shape64(b.shape());
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  std::vector<int64_t> os;
  auto want = ref_matmul(rounded(values(a), want_dtype), as, rounded(values(b), want_dtype), bs, &os);
  if (a_vec) os.erase(os.end() - 2);
  if (b_vec) os.erase(os.end() - 1);
  EXPECT_EQ(shape64(out.shape()), os);
  const int64_t k = as.back();
  // Rounding grows with K; 16-bit results are rounded once more at the end.
  const double tol = tol_scale * (1e-5 * static_cast<double>(k) + rel_tol(want_dtype));
  EXPECT_TRUE(all_close(values(out), rounded(want, want_dtype), want_dtype, tol));
}

array rand_array(const Shape& s, Dtype dt, uint32_t seed) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return make(random_values(n, dt, seed, -2, 2), s, dt);
}

}  // namespace

TEST(OpsMatmul, TwoDimensionalAgainstTripleLoop) {
  check_matmul(rand_array({3, 4}, float32, 1), rand_array({4, 5}, float32, 2), float32);
  check_matmul(rand_array({1, 7}, float32, 3), rand_array({7, 1}, float32, 4), float32);
  check_matmul(rand_array({17, 33}, float32, 5), rand_array({33, 9}, float32, 6), float32);
}

TEST(OpsMatmul, VectorOperandsFollowNumPy) {
  array v = rand_array({4}, float32, 10);
  array m = rand_array({4, 3}, float32, 11);
  array mt = rand_array({3, 4}, float32, 12);
  EXPECT_EQ(matmul(v, m).shape(), (Shape{3}));
  check_matmul(v, m, float32);
  EXPECT_EQ(matmul(mt, v).shape(), (Shape{3}));
  check_matmul(mt, v, float32);
  EXPECT_EQ(matmul(v, v).ndim(), 0u);
  check_matmul(v, v, float32);
  array batch = rand_array({2, 4, 3}, float32, 13);
  EXPECT_EQ(matmul(v, batch).shape(), (Shape{2, 3}));
  check_matmul(v, batch, float32);
  EXPECT_EQ(matmul(rand_array({2, 3, 4}, float32, 14), v).shape(), (Shape{2, 3}));
  check_matmul(rand_array({2, 3, 4}, float32, 14), v, float32);
}

TEST(OpsMatmul, BatchedAndBroadcastBatches) {
  check_matmul(rand_array({2, 3, 4, 5}, float32, 20), rand_array({2, 3, 5, 6}, float32, 21), float32);
  check_matmul(rand_array({4, 5}, float32, 22), rand_array({2, 3, 5, 6}, float32, 23), float32);
  check_matmul(rand_array({2, 3, 4, 5}, float32, 24), rand_array({5, 6}, float32, 25), float32);
  check_matmul(rand_array({2, 1, 4, 5}, float32, 26), rand_array({3, 5, 6}, float32, 27), float32);
  check_matmul(rand_array({64, 8, 8}, float32, 28), rand_array({64, 8, 8}, float32, 29), float32);
}

TEST(OpsMatmul, TransposedAndStridedOperands) {
  array a = rand_array({6, 4}, float32, 30);  // used as a^T: [4, 6]
  array b = rand_array({5, 6}, float32, 31);  // used as b^T: [6, 5]
  check_matmul(transpose(a), rand_array({6, 5}, float32, 32), float32);
  check_matmul(rand_array({4, 6}, float32, 33), transpose(b), float32);
  check_matmul(transpose(a), transpose(b), float32);
  // Batched, last two axes swapped (column-contiguous matrices).
  array ba = rand_array({3, 5, 4}, float32, 34);
  array bb = rand_array({3, 6, 5}, float32, 35);
  check_matmul(transpose(ba, {0, 2, 1}), transpose(bb, {0, 2, 1}), float32);
  // Batch axis in the middle of the memory order.
  check_matmul(transpose(rand_array({4, 3, 5}, float32, 36), {1, 0, 2}), rand_array({3, 5, 2}, float32, 37),
               float32);
  // Neither rows nor columns contiguous: copied first.
  check_matmul(transpose(rand_array({4, 5, 3}, float32, 38), {2, 0, 1}), rand_array({3, 5, 2}, float32, 39),
               float32);
  // Broadcast rows inside the matrix (zero stride): copied first.
  check_matmul(broadcast_to(rand_array({1, 5}, float32, 40), {4, 5}), rand_array({5, 3}, float32, 41),
               float32);
  check_matmul(rand_array({4, 5}, float32, 42), broadcast_to(rand_array({5, 1}, float32, 43), {5, 3}),
               float32);
}

TEST(OpsMatmul, SixteenBitAndMixedDtypes) {
  check_matmul(rand_array({5, 7}, float16, 50), rand_array({7, 3}, float16, 51), float16);
  check_matmul(rand_array({5, 7}, bfloat16, 52), rand_array({7, 3}, bfloat16, 53), bfloat16);
  check_matmul(transpose(rand_array({7, 5}, float16, 54)), rand_array({2, 7, 3}, float16, 55), float16);
  check_matmul(rand_array({5, 7}, float16, 56), rand_array({7, 3}, float32, 57), float32);
  check_matmul(rand_array({5, 7}, float16, 58), rand_array({7, 3}, bfloat16, 59), float32);
  // An integer operand promotes with a floating one (MLX's rule: the promoted type must be real).
  check_matmul(rand_array({5, 7}, int32, 60), rand_array({7, 3}, float32, 61), float32);
  check_matmul(rand_array({5, 7}, bfloat16, 62), rand_array({7, 3}, uint8, 63), bfloat16);
}

TEST(OpsMatmul, LargeProductsSplitAcrossWorkers) {
  check_matmul(rand_array({300, 200}, float32, 70), rand_array({200, 150}, float32, 71), float32);
  check_matmul(transpose(rand_array({200, 300}, float32, 72)), rand_array({200, 150}, float32, 73), float32);
  check_matmul(rand_array({2, 130, 70}, bfloat16, 74), rand_array({70, 90}, bfloat16, 75), bfloat16);
}

TEST(OpsMatmul, EmptyDimensions) {
  array z = matmul(rand_array({3, 0}, float32, 80), rand_array({0, 4}, float32, 81));
  EXPECT_EQ(z.shape(), (Shape{3, 4}));
  EXPECT_EQ(values(z), std::vector<double>(12, 0.0));
  array zh = matmul(zeros({2, 3, 0}, float16), zeros({0, 2}, float16));
  EXPECT_EQ(values(zh), std::vector<double>(12, 0.0));
  EXPECT_EQ(matmul(zeros({0, 3}), zeros({3, 4})).shape(), (Shape{0, 4}));
  EXPECT_TRUE(values(matmul(zeros({0, 3}), zeros({3, 4}))).empty());
  EXPECT_EQ(matmul(zeros({0, 2, 3}), zeros({3, 4})).shape(), (Shape{0, 2, 4}));
}

// ---------------------------------------------------------------------------------------------
// softmax

TEST(OpsSoftmax, LastAxisMatchesReferenceAndRowsSumToOne) {
  for (Dtype dt : kFloatDtypes) {
    auto v = random_values(5 * 37, dt, 1000, -6, 6);
    array a = make(v, {5, 37}, dt);
    array s = softmax(a, -1);
    EXPECT_EQ(s.dtype(), dt);
    EXPECT_EQ(s.shape(), a.shape());
    EXPECT_TRUE(all_close(values(s), rounded(ref_softmax_rows(v, 37), dt), dt, 1e-6 + rel_tol(dt) / 4)) << dt;
    auto rows = values(sum(astype(s, float32), 1));
    EXPECT_TRUE(all_close(rows, std::vector<double>(5, 1.0), float32, 37 * rel_tol(dt))) << dt;
  }
}

TEST(OpsSoftmax, OverloadsChooseTheAxes) {
  auto v = random_values(12, float32, 1001);
  array a = make(v, {3, 4}, float32);
  EXPECT_TRUE(all_close(values(softmax(a, 1)), ref_softmax_rows(v, 4), float32));
  EXPECT_TRUE(all_close(values(softmax(a, std::vector<int>{1})), ref_softmax_rows(v, 4), float32));
  EXPECT_TRUE(all_close(values(softmax(a)), ref_softmax_rows(v, 12), float32));  // all axes
  EXPECT_TRUE(all_close(values(softmax(a, std::vector<int>{0, -1})), ref_softmax_rows(v, 12), float32));
  EXPECT_TRUE(all_close(values(softmax(array({1.0f, 2.0f, 3.0f}))), ref_softmax_rows({1, 2, 3}, 3), float32));
  // Axis 0: softmax of the columns.
  auto col = values(softmax(a, 0));
  auto ref = ref_softmax_rows(values(transpose(a)), 3);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(col[i * 4 + j], ref[j * 3 + i], 1e-6);
  EXPECT_EQ(softmax(array(2.0f)).item<float>(), 1.0f);
}

TEST(OpsSoftmax, NonContiguousInputs) {
  auto v = random_values(24, float32, 1002);
  array base = make(v, {4, 6}, float32);
  array t = transpose(base);  // [6, 4], last axis strided
  EXPECT_TRUE(all_close(values(softmax(t, -1)), ref_softmax_rows(values(t), 4), float32));
  array b = broadcast_to(make({1, 2, 3}, {3}, float32), {2, 3});
  EXPECT_TRUE(all_close(values(softmax(b)), ref_softmax_rows({1, 2, 3, 1, 2, 3}, 6), float32));
  EXPECT_TRUE(all_close(values(softmax(b, 1)), ref_softmax_rows({1, 2, 3, 1, 2, 3}, 3), float32));
  array bh = broadcast_to(make({1, 2, 3}, {3}, float16), {2, 3});
  EXPECT_TRUE(
      all_close(values(softmax(bh, -1)), rounded(ref_softmax_rows({1, 2, 3, 1, 2, 3}, 3), float16), float16));
}

TEST(OpsSoftmax, IntegerInputsBecomeFloat32) {
  array s = softmax(array({1, 2, 3}));
  EXPECT_EQ(s.dtype(), float32);
  EXPECT_TRUE(all_close(values(s), ref_softmax_rows({1, 2, 3}, 3), float32));
  EXPECT_EQ(softmax(array({true, false}), 0).dtype(), float32);
  EXPECT_EQ(softmax(reshape(arange(6), {2, 3}), 0).dtype(), float32);
}

TEST(OpsSoftmax, LargeAndInfiniteValuesStayFinite) {
  array s = softmax(array({1000.0, 1001.0, -kInf}));
  auto v = values(s);
  EXPECT_NEAR(v[0], 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(v[1], std::exp(1.0) / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_EQ(v[2], 0.0);
  auto c = values(softmax(reshape(array({1000.0, -kInf, 1001.0, -kInf}), {2, 2}), 0));
  EXPECT_NEAR(c[0], 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_TRUE(std::isnan(c[1]));  // a column of only -inf, as in NumPy
}

TEST(OpsSoftmax, PreciseSixteenBitOverOtherAxes) {
  auto v = random_values(12, float16, 1003, -3, 3);
  for (bool precise : {false, true}) {
    array s = softmax(make(v, {3, 4}, float16), std::vector<int>{0, 1}, precise);
    EXPECT_EQ(s.dtype(), float16);
    EXPECT_TRUE(
        all_close(values(s), rounded(ref_softmax_rows(v, 12), float16), float16, 4 * rel_tol(float16)));
  }
}

TEST(OpsSoftmax, LargeRowsInParallel) {
  auto v = random_values(300 * 513, float32, 1004, -10, 10);
  array r = softmax(make(v, {300, 513}, float32), -1);
  EXPECT_TRUE(all_close(values(r), ref_softmax_rows(v, 513), float32, 1e-7));
}

TEST(OpsSoftmax, ZeroSizeInputs) {
  EXPECT_EQ(softmax(zeros({0, 3}), -1).shape(), (Shape{0, 3}));
  EXPECT_EQ(softmax(zeros({0, 3}), 0).shape(), (Shape{0, 3}));
  EXPECT_TRUE(values(softmax(zeros({3, 0}), -1)).empty());
}

TEST(OpsSoftmax, LeadingMaskedEntriesGiveZeroNotNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  array x({-inf, -inf, 0.0f, 0.0f}, {1, 4});
  array y = softmax(x, -1);
  const float* p = y.data<float>();
  EXPECT_EQ(p[0], 0.0f);
  EXPECT_EQ(p[1], 0.0f);
  EXPECT_FLOAT_EQ(p[2], 0.5f);
  EXPECT_FLOAT_EQ(p[3], 0.5f);
}

// --- MLX's array API in the details MLX's own tests use ----------------------------------------

TEST(ArrayApi, ListConstructorsTakeMlxsSpecialCases) {
  const array empty({});
  EXPECT_EQ(empty.dtype(), float32);
  EXPECT_EQ(empty.shape(), Shape{0});
  EXPECT_EQ(sum(empty).item<float>(), 0.0f);
  const array empty_ints({}, int32);
  EXPECT_EQ(empty_ints.dtype(), int32);
  EXPECT_EQ(empty_ints.shape(), Shape{0});
  const array mixed({3, 2.5, 1.0});  // ints and doubles: float32
  EXPECT_EQ(mixed.dtype(), float32);
  EXPECT_EQ(test::values(mixed), (std::vector<double>{3, 2.5, 1}));
  const array with_inf({1.0, std::numeric_limits<float>::infinity()});
  EXPECT_EQ(with_inf.dtype(), float32);
  EXPECT_TRUE(std::isinf(test::values(with_inf)[1]));
  EXPECT_EQ(array({1, 2, 3}).dtype(), int32);
  EXPECT_EQ(array({1, 2}, float16).dtype(), float16);

  std::vector<bool> flags{true, false, true, true};
  const array from_bools(flags.begin(), {2, 2}, bool_);
  EXPECT_EQ(test::values(from_bools), (std::vector<double>{1, 0, 1, 1}));
  std::vector<int> ints{4, 5, 6};
  EXPECT_EQ(test::values(array(ints.begin(), {3})), (std::vector<double>{4, 5, 6}));
}

TEST(ArrayApi, EvaluationDetachesTheGraphAsMlx) {
  array y = ones({3, 3});
  EXPECT_TRUE(y.has_primitive());
  EXPECT_FALSE(y.is_evaled());
  eval(y);
  EXPECT_FALSE(y.has_primitive());  // MLX's detach; the primitive stays readable
  EXPECT_TRUE(y.is_evaled());
  EXPECT_TRUE(y.is_available());
  EXPECT_TRUE(y.siblings().empty());
  EXPECT_GE(y.buffer_size(), y.nbytes());
  EXPECT_FALSE(array(1.0f).has_primitive());
  EXPECT_TRUE(array(1.0f).is_evaled());

  // Outside a transform set_tracer changes nothing; inside one it marks the array.
  array x = array(1);
  x.set_tracer(true);
  EXPECT_FALSE(x.is_tracer());
  array c = ones({2});
  auto fn = [&](const array& in) {
    array t = in * 2.0f;
    EXPECT_TRUE(t.is_tracer());
    t.set_tracer(false);
    EXPECT_FALSE(t.is_tracer());
    array m = c + 1.0f;
    EXPECT_FALSE(m.is_tracer());
    m.set_tracer(true);
    EXPECT_TRUE(m.is_tracer());
    eval(c);
    EXPECT_FALSE(c.has_primitive());  // evaluated inside, not a tracer: detached
    return sum(in * in);
  };
  EXPECT_EQ(grad(std::function<array(const array&)>(fn))(array(3.0f)).item<float>(), 6.0f);
}

TEST(ArrayApi, IteratesOverTheFirstAxis) {
  const array m = reshape(arange(6.0, float32), {3, 2});
  std::vector<std::vector<double>> rows;
  for (const array& row : m) {
    EXPECT_EQ(row.shape(), Shape{2});
    rows.push_back(test::values(row));
  }
  EXPECT_EQ(rows, (std::vector<std::vector<double>>{{0, 1}, {2, 3}, {4, 5}}));
  int n = 0;
  for (auto it = m.begin(); it != m.end(); ++it) ++n;
  EXPECT_EQ(n, 3);
  EXPECT_THROW(array(1.0f).begin(), std::invalid_argument);
  // The elements are read-only, as MLX's iterator's.
  static_assert(std::is_const_v<decltype(*m.begin())>);
}

TEST(ArrayApi, AxisErrorsOfReductionsDiagonalAndShapeAreOutOfRangeAsMlx) {
  const array x = zeros({2, 3});
  EXPECT_THROW(x.shape(2), std::out_of_range);
  EXPECT_THROW(x.shape(-3), std::out_of_range);
  EXPECT_THROW(x.strides(2), std::out_of_range);
  EXPECT_EQ(x.shape(-1), 3);
  EXPECT_THROW(sum(x, 2), std::out_of_range);
  EXPECT_THROW(sum(array(1), 0), std::out_of_range);
  EXPECT_THROW(mean(x, -3), std::out_of_range);
  EXPECT_THROW(max(x, 5), std::out_of_range);
  EXPECT_THROW(logsumexp(x, 2), std::out_of_range);
  EXPECT_THROW(sum(x, std::vector<int>{0, 0}), std::invalid_argument);  // duplicates
  EXPECT_THROW(diagonal(x, 1, 6, 0), std::out_of_range);
  EXPECT_THROW(diagonal(x, 1, 0, -3), std::out_of_range);
  EXPECT_THROW(diagonal(x, 0, 1, 1), std::invalid_argument);
}

TEST(ArrayApi, BackendAvailabilityAsMlx) {
  EXPECT_EQ(gpu::is_available(), is_available(Device::gpu));
  EXPECT_EQ(cu::is_available(), is_available(Device::gpu));
  EXPECT_FALSE(metal::is_available());
}

// --- braid::config (MLX's mlx/config.h) ------------------------------------------------------

namespace {
std::string g_handler_name;
int g_handler_default = 0;
int answer_42(const char* name, int default_val) {
  g_handler_name = name;
  g_handler_default = default_val;
  return 42;
}
}  // namespace

TEST(Config, ScopesNestPerThreadOverProcessWideUpdates) {
  constexpr const char* name = "BRAID_TEST_CXX_SCOPED_CONFIG";
  EXPECT_EQ(config::get(name, 7), 7);
  EXPECT_EQ(config::get(name, -3), -3);  // a default is not stored
  config::update(name, 1);
  EXPECT_EQ(config::get(name, 0), 1);
  {
    auto outer = config::scoped_update({{name, 2}});
    EXPECT_EQ(config::get(name, 0), 2);
    int seen_elsewhere = 0;
    std::thread([&] { seen_elsewhere = config::get(name, 0); }).join();
    EXPECT_EQ(seen_elsewhere, 1);  // scopes are the thread's own
    {
      auto inner = config::scoped_update({{name, 3}});
      EXPECT_EQ(config::get(name, 0), 3);
    }
    EXPECT_EQ(config::get(name, 0), 2);
  }
  EXPECT_EQ(config::get(name, 0), 1);
  // Scopes may end out of order.
  auto a = std::make_unique<config::ScopedUpdate>(config::ConfigDict{{name, 4}});
  auto b = std::make_unique<config::ScopedUpdate>(config::ConfigDict{{name, 5}});
  a.reset();
  EXPECT_EQ(config::get(name, 0), 5);
  b.reset();
  EXPECT_EQ(config::get(name, 0), 1);
}

TEST(Config, AHandlerAnswersEveryGet) {
  config::update("BRAID_TEST_CXX_CONFIG_HANDLER", 1);
  config::register_config_handler(answer_42);
  EXPECT_EQ(config::get("BRAID_TEST_CXX_CONFIG_HANDLER", 7), 42);
  EXPECT_EQ(g_handler_name, "BRAID_TEST_CXX_CONFIG_HANDLER");
  EXPECT_EQ(g_handler_default, 7);
  config::register_config_handler(nullptr);
  EXPECT_EQ(config::get("BRAID_TEST_CXX_CONFIG_HANDLER", 7), 1);
}
