// Reductions and scans, described once per op (a table row: braid call, reference in double,
// dtypes) and run by generic runners on every device over many shapes, layouts and dtypes.
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/reduce_simd.h"
#include "support.h"

namespace braid {
namespace {

using test::make;
using test::test_devices;
using test::values;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<Dtype> kRealDtypes = {bool_, uint8, uint16,  uint32,  uint64,  int8,    int16,
                                        int32, int64, float16, float32, float64, bfloat16};

// Small random values representable in `dt` (so sums and products stay exact for integers).
std::vector<double> random_values(int64_t n, Dtype dt, uint32_t seed, double lo = -3, double hi = 3,
                                  int span = 3) {
  std::mt19937 gen(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if (dt == bool_) {
      x = static_cast<double>(gen() % 2);
    } else if (issubdtype(dt, unsignedinteger)) {
      x = static_cast<double>(gen() % static_cast<uint32_t>(span + 1));
    } else if (issubdtype(dt, integer)) {
      x = static_cast<double>(static_cast<int>(gen() % static_cast<uint32_t>(2 * span + 1)) - span);
    } else {
      x = lo + (hi - lo) * std::uniform_real_distribution<double>(0, 1)(gen);
    }
  }
  return v;
}

// Relative precision of a dtype (0 for exact types).
double eps_of(Dtype dt) {
  if (dt == float16) return 1e-3;
  if (dt == bfloat16) return 8e-3;
  if (dt == float32 || dt == complex64) return 2e-6;
  if (dt == float64) return 1e-12;
  return 0;
}

std::vector<int> normalized(const std::vector<int>& axes, int nd) {
  std::vector<int> n;
  for (int a : axes) n.push_back(a < 0 ? a + nd : a);
  std::sort(n.begin(), n.end());
  return n;
}

// For each output (row-major over the kept axes), the input values it reduces.
std::vector<std::vector<double>> groups(const std::vector<double>& v, const Shape& shape,
                                        const std::vector<int>& axes) {
  const int nd = static_cast<int>(shape.size());
  std::vector<int64_t> out_strides(nd, 0);
  int64_t outputs = 1;
  for (int i = nd - 1; i >= 0; --i) {
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) {
      out_strides[i] = outputs;
      outputs *= shape[i];
    }
  }
  std::vector<std::vector<double>> g(static_cast<size_t>(outputs));
  for (auto& grp : g) grp.reserve(v.size() / g.size());  // every group reduces as many values
  std::vector<int64_t> idx(nd, 0);
  for (size_t flat = 0; flat < v.size(); ++flat) {
    int64_t o = 0;
    for (int i = 0; i < nd; ++i) o += idx[i] * out_strides[i];
    g[static_cast<size_t>(o)].push_back(v[flat]);
    for (int i = nd - 1; i >= 0 && ++idx[i] == shape[i]; --i) idx[i] = 0;
  }
  return g;
}

Shape reduced_shape(const Shape& shape, const std::vector<int>& axes, bool keepdims) {
  Shape s;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    const bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!r) s.push_back(shape[i]);
    if (r && keepdims) s.push_back(1);
  }
  return s;
}

Dtype float_of(Dtype dt) { return issubdtype(dt, inexact) ? dt : float32; }

Dtype sum_dtype(Dtype dt) {
  if (dt == bool_ || dt == int8 || dt == int16 || dt == int32) return int32;
  if (dt == uint8 || dt == uint16 || dt == uint32) return uint32;
  return dt;
}

double ref_sum(const std::vector<double>& g) { return std::accumulate(g.begin(), g.end(), 0.0); }
double ref_prod(const std::vector<double>& g) {
  double p = 1;
  for (double x : g) p *= x;
  return p;
}
double ref_max(const std::vector<double>& g) {
  double m = -kInf;
  for (double x : g) m = (x > m || std::isnan(x)) ? x : m;
  return m;
}
double ref_min(const std::vector<double>& g) {
  double m = kInf;
  for (double x : g) m = (x < m || std::isnan(x)) ? x : m;
  return m;
}
double ref_mean(const std::vector<double>& g) { return ref_sum(g) / static_cast<double>(g.size()); }
double ref_var(const std::vector<double>& g, int ddof) {
  const double mu = ref_mean(g);
  double s = 0;
  for (double x : g) s += (x - mu) * (x - mu);
  return s / std::max<double>(static_cast<double>(g.size()) - ddof, 0);
}
double ref_logsumexp(const std::vector<double>& g) {
  const double m = ref_max(g);
  if (std::isinf(m) || std::isnan(m)) return m;
  double s = 0;
  for (double x : g) s += std::exp(x - m);
  return m + std::log(s);
}

// MLX's median: the values sorted with NaNs last, then the middle one or the mean of the
// two middle ones.
double ref_median(std::vector<double> g) {
  std::sort(g.begin(), g.end(), [](double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); });
  const size_t mid = g.size() / 2;
  return g.size() % 2 ? g[mid] : (g[mid - 1] + g[mid]) / 2;
}

// One reduction: the braid call, its reference over one output's values, its output dtype,
// the dtypes it accepts, and whether a size-0 input throws.
struct ReduceRow {
  std::string name;
  std::function<array(const array&, const std::vector<int>&, bool, StreamOrDevice)> call;
  std::function<double(const std::vector<double>&)> ref;
  std::function<Dtype(Dtype)> out_dtype;
  std::vector<Dtype> dtypes;
  bool empty_throws = false;
  double tol_scale = 1;  // times eps of the output dtype, times the sum of |x|
};

const std::vector<ReduceRow>& reduce_rows() {
  static const std::vector<ReduceRow> rows = {
      {"sum", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return sum(a, ax, k, s); }, ref_sum,
       sum_dtype, kRealDtypes},
      {"prod", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return prod(a, ax, k, s); }, ref_prod,
       sum_dtype, kRealDtypes},
      {"max", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return max(a, ax, k, s); }, ref_max,
       [](Dtype d) { return d; }, kRealDtypes, true},
      {"min", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return min(a, ax, k, s); }, ref_min,
       [](Dtype d) { return d; }, kRealDtypes, true},
      {"all", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return all(a, ax, k, s); },
       [](auto& g) { return std::all_of(g.begin(), g.end(), [](double x) { return x != 0; }) ? 1.0 : 0.0; },
       [](Dtype) { return bool_; }, test::kEveryDtype},
      {"any", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return any(a, ax, k, s); },
       [](auto& g) { return std::any_of(g.begin(), g.end(), [](double x) { return x != 0; }) ? 1.0 : 0.0; },
       [](Dtype) { return bool_; }, test::kEveryDtype},
      {"mean", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return mean(a, ax, k, s); }, ref_mean,
       float_of, kRealDtypes},
      {"var", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return var(a, ax, k, 0, s); },
       [](auto& g) { return ref_var(g, 0); }, float_of, kRealDtypes, false, 8},
      {"var ddof 1", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return var(a, ax, k, 1, s); },
       [](auto& g) { return ref_var(g, 1); }, float_of, kRealDtypes, false, 8},
      {"std", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return braid::std(a, ax, k, 0, s); },
       [](auto& g) { return std::sqrt(ref_var(g, 0)); }, float_of, kRealDtypes, false, 8},
      {"std ddof 2", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return braid::std(a, ax, k, 2, s); },
       [](auto& g) { return std::sqrt(ref_var(g, 2)); }, float_of, kRealDtypes, false, 8},
      {"logsumexp", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return logsumexp(a, ax, k, s); },
       ref_logsumexp, float_of, kRealDtypes, true, 4},
      {"median", [](auto& a, auto& ax, bool k, StreamOrDevice s) { return median(a, ax, k, s); }, ref_median,
       float_of, kRealDtypes, true, 2},
  };
  return rows;
}

// Rounds references to what `dt` can hold, in one conversion. Values an integer type cannot
// hold (non-finite, beyond 1e300) are left as they are.
std::vector<double> round_all(std::vector<double> v, Dtype dt) {
  if (v.empty()) return v;
  const bool exact = !issubdtype(dt, inexact);
  std::vector<double> safe = v;
  for (auto& x : safe) {
    if (exact && (!std::isfinite(x) || std::abs(x) >= 1e300)) x = 0;
  }
  auto r = values(make(safe, {static_cast<int>(safe.size())}, dt));
  for (size_t i = 0; i < v.size(); ++i) {
    if (!(exact && (!std::isfinite(v[i]) || std::abs(v[i]) >= 1e300))) v[i] = r[i];
  }
  return v;
}

void check_reduce_row(const ReduceRow& row, const array& a, const std::vector<int>& axes, const Device& dev,
                      const std::string& what) {
  const std::vector<int> norm = normalized(axes, static_cast<int>(a.ndim()));
  const auto in = values(a);
  const auto g = groups(in, a.shape(), norm);
  const Dtype out_t = row.out_dtype(a.dtype());
  double scale = 0;
  for (double x : in) scale = std::max(scale, std::abs(x));
  std::vector<double> want;
  want.reserve(g.size());
  for (const auto& grp : g) want.push_back(row.ref(grp));
  want = round_all(want, out_t);
  const double n = g.empty() ? 1 : static_cast<double>(g[0].size());
  const double atol = eps_of(out_t) * row.tol_scale * (scale * n + scale * scale * 4 + 1);
  for (bool keep : {false, true}) {
    array r = row.call(a, axes, keep, dev);
    const std::string tag = row.name + " " + dtype_name(a.dtype()) + " " + what + " keepdims " +
                            std::to_string(keep) + " on " + test::device_name(dev);
    // An empty axis list returns the input (all/any cast it to bool, mean/var to float).
    if (!norm.empty()) {
      EXPECT_EQ(r.shape(), reduced_shape(a.shape(), norm, keep)) << tag;
    }
    EXPECT_EQ(r.dtype(), out_t) << tag;
    test::expect_close(values(r), want, eps_of(out_t) * 2, atol, tag);
  }
}

const std::vector<std::vector<int>> kAxisSets = {{0},    {1},    {2},       {-1},    {0, 1},
                                                 {1, 2}, {0, 2}, {0, 1, 2}, {-3, -1}};

TEST(OpsReduce, EveryReductionInEveryDtypeOverEveryAxisSet) {
  uint32_t seed = 10;
  for (const Device& dev : test_devices()) {
    for (const auto& row : reduce_rows()) {
      for (Dtype dt : row.dtypes) {
        if (dt == complex64) continue;  // complex: its own test
        const double hi = row.name == "logsumexp" ? 30 : row.name == "prod" ? 1.5 : 3;
        array a = make(random_values(60, dt, ++seed, -hi, hi, row.name == "prod" ? 1 : 3), {3, 4, 5}, dt);
        for (const auto& axes : kAxisSets) check_reduce_row(row, a, axes, dev, "axes");
      }
    }
  }
}

TEST(OpsReduce, NonContiguousInputsReduceAsTheirValues) {
  uint32_t seed = 200;
  for (const Device& dev : test_devices()) {
    for (const auto& row : reduce_rows()) {
      for (Dtype dt : {bool_, int8, uint16, int64, float16, float32, float64}) {
        const int span = row.name == "prod" ? 1 : 3;
        const double hi = row.name == "prod" ? 1.5 : 3;
        array base = make(random_values(60, dt, ++seed, -hi, hi, span), {3, 4, 5}, dt);
        const std::vector<array> views = {
            transpose(base),
            transpose(base, {2, 0, 1}),
            broadcast_to(make(random_values(5, dt, ++seed, -hi, hi, span), {1, 1, 5}, dt), {3, 4, 5}),
            broadcast_to(make(random_values(4, dt, ++seed, -hi, hi, span), {4, 1}, dt), {3, 4, 5}),
        };
        for (const auto& v : views) {
          for (const std::vector<int>& axes : {std::vector<int>{0}, {1}, {2}, {0, 2}, {0, 1, 2}}) {
            check_reduce_row(row, v, axes, dev, "view");
          }
        }
      }
    }
  }
}

TEST(OpsReduce, LargeInputsTakeTheParallelPaths) {
  uint32_t seed = 300;
  for (const Device& dev : test_devices()) {
    for (const auto& row : reduce_rows()) {
      if (row.name == "prod") continue;  // products of thousands of values only overflow
      if (row.name == "median") continue;  // sort's own tests cover its large inputs
      // Under TSan, one row per kernel kind: a sum, a comparison, a boolean and a composite.
      if (test::kThreadSanitized && row.name != "sum" && row.name != "max" && row.name != "all" &&
          row.name != "logsumexp") {
        continue;
      }
      const std::vector<Dtype> dtypes =
          test::kSanitized ? std::vector<Dtype>{float32} : std::vector<Dtype>{int32, float32, bfloat16};
      for (Dtype dt : dtypes) {
        for (const Shape& shape : {Shape{3, 70000}, Shape{70000, 3}, Shape{300, 400}}) {
          array a = make(random_values(shape[0] * static_cast<int64_t>(shape[1]), dt, ++seed), shape, dt);
          for (const std::vector<int>& axes : {std::vector<int>{0}, {1}, {0, 1}}) {
            check_reduce_row(row, a, axes, dev, "large");
          }
          check_reduce_row(row, transpose(a), {0}, dev, "large transposed");
        }
      }
    }
  }
}

// A few columns (2 to 17) of many rows, reduced over the rows: the CPU reads them as wide rows
// of several rows each and combines each column's partial results, with row counts that leave
// some rows outside the wide ones, one task or several, NaNs and the extreme values placed in
// the last rows and inside wide rows.
TEST(OpsReduce, NarrowColumnsOfManyRows) {
  uint32_t seed = 700;
  // 20001 rows take several tasks at width 16 (one at the narrower widths). The sanitizer
  // builds leave out the widths whose loops the others share (17 takes the plain column loop).
  const std::vector<int32_t> widths =
      test::kSanitized ? std::vector<int32_t>{3, 16} : std::vector<int32_t>{2, 3, 16, 17};
  for (const Device& dev : test_devices()) {
    for (int32_t w : widths) {
      for (int32_t n : {300, 2053, 20001}) {
        const std::string size = std::to_string(n) + " x " + std::to_string(w);
        for (Dtype dt : {float32, int32, uint8, bool_}) {
          auto v = random_values(int64_t{n} * w, dt, ++seed);
          if (dt == float32) {
            // Column 0: the largest value in the last row; column 1: a NaN near the end (rows
            // past the wide rows for most sizes). In the middle (inside a wide row, in a later
            // slot than the first): a NaN in column w - 1 and the smallest value in column 0.
            v[(int64_t{n} - 1) * w] = 10;
            v[(int64_t{n} - 2) * w + 1] = kNaN;
            v[(int64_t{n} / 2 + 1) * w + w - 1] = kNaN;
            v[(int64_t{n} / 2 + 2) * w] = -10;
          }
          const array a = make(v, {n, w}, dt);
          for (const auto& row : reduce_rows()) {
            const bool wanted = dt == bool_ ? (row.name == "all" || row.name == "any")
                                            : (row.name == "sum" || row.name == "max" || row.name == "min" ||
                                               row.name == "all");
            if (wanted) check_reduce_row(row, a, {0}, dev, "narrow " + size);
          }
        }
        // Products of signs (exact in every dtype; a lost or repeated -1 flips the result),
        // and float16 sums.
        auto signs = random_values(int64_t{n} * w, bool_, ++seed);
        for (auto& x : signs) x = 2 * x - 1;
        for (Dtype dt : {int32, float32}) {
          check_reduce_row(reduce_rows()[1], make(signs, {n, w}, dt), {0}, dev, "narrow prod " + size);
        }
        const array h = make(random_values(int64_t{n} * w, float16, ++seed), {n, w}, float16);
        check_reduce_row(reduce_rows()[0], h, {0}, dev, "narrow float16 " + size);
      }
    }
  }
}

// float32 rows and columns whose lengths sit around the vector loops' sizes (sixteen lanes in
// vectors of four or eight, sums in blocks of 2048), with a NaN, the largest and the smallest
// value placed at lanes that different vectors hold.
TEST(OpsReduce, Float32RunsAroundTheVectorBlockSizes) {
  uint32_t seed = 800;
  for (const Device& dev : test_devices()) {
    for (int32_t n : {15, 16, 17, 31, 33, 2047, 2048, 2049, 4095, 4096, 4097, 6150, 8192}) {
      for (int32_t place : {0, 7, 8, 15}) {
        auto v = random_values(int64_t{3} * n, float32, ++seed);
        const int32_t at = std::min(place, n - 1), far = n - 1 - at;
        v[at] = 10;                                  // row 0: the largest value
        v[n + far] = -10;                            // row 1: the smallest value
        v[2 * static_cast<int64_t>(n) + at] = kNaN;  // row 2: a NaN
        const array a = make(v, {3, n}, float32);
        for (const auto& row : reduce_rows()) {
          if (row.name != "sum" && row.name != "max" && row.name != "min") continue;
          const std::string what = "n " + std::to_string(n) + " place " + std::to_string(place);
          check_reduce_row(row, a, {1}, dev, what);
          check_reduce_row(row, transpose(a), {0}, dev, what + " transposed");
          check_reduce_row(row, contiguous(transpose(a)), {0}, dev, what + " columns");
        }
      }
    }
  }
}

// A float32 sum over a contiguous run adds in a fixed order (cpu::simd::lane_sum: blocks of
// 2048, sixteen float lanes each), so its bits do not depend on the CPU's vector width or the
// thread count: values of very different magnitudes, whose sum rounds differently in any
// other order, give exactly lane_sum's result on the CPU, with or without BRAID_SCALAR_MATH.
TEST(OpsReduce, Float32RowSumsAddInTheFixedLaneOrder) {
  uint32_t seed = 900;
  for (int32_t n : {17, 2047, 2048, 2049, 4096, 6150, 20000}) {
    std::mt19937 gen(++seed);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(3) * n);
    for (size_t i = 0; i < v.size(); ++i) v[i] = unit(gen) * (i % 5 == 0 ? 1e6f : 1.0f);
    const array a(v.data(), {3, n}, float32);
    const std::vector<double> got = values(sum(a, 1, false, Device::cpu));  // float32 -> double is exact
    ASSERT_EQ(got.size(), 3u);
    for (int r = 0; r < 3; ++r) {
      const float want =
          static_cast<float>(cpu::simd::lane_sum<float>(v.data() + static_cast<int64_t>(r) * n, n));
      EXPECT_EQ(std::bit_cast<uint32_t>(static_cast<float>(got[r])), std::bit_cast<uint32_t>(want))
          << "n " << n << " row " << r;
    }
  }
}

TEST(OpsReduce, ZeroSizeReductionsGiveTheIdentityOrThrow) {
  for (const Device& dev : test_devices()) {
    for (const auto& row : reduce_rows()) {
      array a = zeros({0, 3}, float32);
      if (row.empty_throws) {
        EXPECT_THROW(row.call(a, {0}, false, dev), std::invalid_argument) << row.name;
        continue;
      }
      array r = row.call(a, {0}, false, dev);
      EXPECT_EQ(r.shape(), (Shape{3})) << row.name;
      array e = row.call(zeros({3, 0}, int32), {0}, false, dev);
      EXPECT_EQ(e.shape(), (Shape{0})) << row.name;
      EXPECT_TRUE(values(e).empty()) << row.name;
    }
    EXPECT_EQ(values(sum(zeros({0, 3}), 0, false, dev)), (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(values(prod(zeros({0, 2}, int8), 0, false, dev)), (std::vector<double>{1, 1}));
    EXPECT_EQ(values(all(zeros({0, 2}), 0, false, dev)), (std::vector<double>{1, 1}));
    EXPECT_EQ(values(any(zeros({0, 2}), 0, false, dev)), (std::vector<double>{0, 0}));
    EXPECT_TRUE(std::isnan(values(mean(zeros({0}), false, dev))[0]));
    EXPECT_TRUE(std::isnan(values(var(zeros({0}), false, 0, dev))[0]));
  }
}

TEST(OpsReduce, ScalarsReduceOverNoAxes) {
  for (const Device& dev : test_devices()) {
    array s(int8_t{5});
    EXPECT_EQ(sum(s, dev).dtype(), int8);  // no axes: the input itself, as in MLX
    EXPECT_EQ(sum(s, dev).item<int8_t>(), 5);
    EXPECT_EQ(prod(s, true, dev).ndim(), 0u);
    EXPECT_EQ(all(array(2.0f), dev).dtype(), bool_);
    EXPECT_EQ(all(array(2.0f), dev).item<bool>(), true);
    EXPECT_EQ(any(array(0), dev).item<bool>(), false);
    EXPECT_EQ(max(array(3.5f), dev).item<float>(), 3.5f);
    EXPECT_EQ(mean(array(3), dev).dtype(), float32);
    EXPECT_EQ(mean(array(3), dev).item<float>(), 3.0f);
    EXPECT_EQ(var(array(3.0f), dev).item<float>(), 0.0f);
    EXPECT_EQ(logsumexp(array(2.0f), dev).item<float>(), 2.0f);
    EXPECT_EQ(argmax(array(2.0f), dev).item<uint32_t>(), 0u);
    EXPECT_EQ(argmin(array(2.0f), true, dev).ndim(), 0u);
  }
}

TEST(OpsReduce, MedianCountsNaNsAsTheLargestValues) {
  for (const Device& dev : test_devices()) {
    const auto med = [&](std::vector<double> v) {
      return values(median(make(v, {static_cast<int>(v.size())}, float32), dev))[0];
    };
    EXPECT_EQ(med({1, kNaN, 3}), 3.0);        // sorted 1, 3, NaN
    EXPECT_EQ(med({1, 2, kNaN, 4}), 3.0);     // (2 + 4) / 2
    EXPECT_TRUE(std::isnan(med({kNaN, kNaN, 1})));
    EXPECT_TRUE(std::isnan(med({1, kNaN})));  // (1 + NaN) / 2
    EXPECT_EQ(med({kInf, -kInf, 0}), 0.0);
    // Over several axes at once, and the overloads.
    array a = make({5, 1, 4, 2, 8, 7, 3, 6}, {2, 2, 2}, int32);
    EXPECT_EQ(values(median(a, std::vector<int>{0, 2}, false, dev)), (std::vector<double>{6, 3.5}));
    EXPECT_EQ(median(a, std::vector<int>{0, 2}, true, dev).shape(), (Shape{1, 2, 1}));
    EXPECT_EQ(values(median(a, dev)), std::vector<double>{4.5});
    EXPECT_EQ(median(a, true, dev).shape(), (Shape{1, 1, 1}));
    EXPECT_EQ(values(median(a, -1, false, dev)), (std::vector<double>{3, 3, 7.5, 4.5}));
    EXPECT_EQ(median(array(7), dev).dtype(), float32);
    EXPECT_EQ(median(array(7), dev).item<float>(), 7.0f);
    EXPECT_EQ(median(zeros({0, 3}), 1, false, dev).shape(), (Shape{0}));
  }
}

TEST(OpsReduce, OutputDtypesFollowMlx) {
  const std::vector<std::pair<Dtype, Dtype>> sums = {
      {bool_, int32},       {int8, int32},      {int16, int32},     {int32, int32},        {int64, int64},
      {uint8, uint32},      {uint16, uint32},   {uint32, uint32},   {uint64, uint64},      {float16, float16},
      {bfloat16, bfloat16}, {float32, float32}, {float64, float64}, {complex64, complex64}};
  for (auto [in, out] : sums) {
    EXPECT_EQ(sum(zeros({2}, in)).dtype(), out) << in;
    EXPECT_EQ(prod(zeros({2}, in)).dtype(), out) << in;
    EXPECT_EQ(max(zeros({2}, in)).dtype(), in) << in;
    EXPECT_EQ(min(zeros({2}, in)).dtype(), in) << in;
    EXPECT_EQ(all(zeros({2}, in)).dtype(), bool_) << in;
    EXPECT_EQ(argmax(zeros({2}, in)).dtype(), uint32) << in;
    EXPECT_EQ(mean(zeros({2}, in)).dtype(), float_of(in)) << in;
    // A complex input's variance and standard deviation are real (MLX, NumPy).
    const Dtype spread = in == complex64 ? float32 : float_of(in);
    EXPECT_EQ(var(zeros({2}, in)).dtype(), spread) << in;
    EXPECT_EQ(braid::std(zeros({2}, in)).dtype(), spread) << in;
    EXPECT_EQ(median(zeros({2}, in)).dtype(), float_of(in)) << in;
  }
}

TEST(OpsReduce, IntegerSumsAndProductsWrapInTheOutputType) {
  for (const Device& dev : test_devices()) {
    EXPECT_EQ(sum(full({300}, 200, uint8), dev).item<uint32_t>(), 60000u);
    EXPECT_EQ(sum(full({1000}, 100, int8), dev).item<int32_t>(), 100000);
    EXPECT_EQ(prod(full({20}, 3, int16), dev).item<int32_t>(), static_cast<int32_t>(3486784401u));
    EXPECT_EQ(prod(full({3}, -2, int8), dev).item<int32_t>(), -8);
    EXPECT_EQ(prod(array({int64_t{1} << 40, int64_t{1} << 30}), dev).item<int64_t>(), 0);  // 2^70 wraps to 0
  }
}

TEST(OpsReduce, NaNAndInfinitiesPropagate) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : test::kRealFloatDtypes) {
      array a = make({1, kNaN, 3, -kInf}, {4}, dt);
      EXPECT_TRUE(std::isnan(values(max(a, false, dev))[0])) << dt;
      EXPECT_TRUE(std::isnan(values(min(a, false, dev))[0])) << dt;
      EXPECT_TRUE(std::isnan(values(sum(a, false, dev))[0])) << dt;
      EXPECT_EQ(values(any(a, false, dev))[0], 1) << dt;  // NaN is nonzero
      EXPECT_EQ(values(max(make({-kInf, -kInf}, {2}, dt), false, dev))[0], -kInf) << dt;
      EXPECT_EQ(values(logsumexp(make({-kInf, -kInf}, {2}, dt), false, dev))[0], -kInf) << dt;
      EXPECT_EQ(values(logsumexp(make({kInf, 1}, {2}, dt), false, dev))[0], kInf) << dt;
      EXPECT_TRUE(std::isnan(values(logsumexp(make({kNaN, 1}, {2}, dt), false, dev))[0])) << dt;
      EXPECT_EQ(values(min(make({0.0, -0.0}, {2}, dt), false, dev))[0], 0.0) << dt;
    }
    // logsumexp stays finite where exp overflows.
    EXPECT_NEAR(logsumexp(array({1000.0f, 1000.0f}), dev).item<float>(), 1000.0f + std::log(2.0f), 1e-3);
  }
}

TEST(OpsReduce, ComplexSumsProductsAndExtremes) {
  for (const Device& dev : test_devices()) {
    std::vector<complex64_t> v = {{1, 2}, {3, -1}, {-2, 0.5f}, {3, -2}, {0, 1}, {1, 1}};
    array a(v.begin(), {2, 3}, complex64);
    auto s = test::complex_values(sum(a, 1, false, dev));
    EXPECT_EQ(s[0], std::complex<float>(2, 1.5f));
    EXPECT_EQ(s[1], std::complex<float>(4, 0));
    auto p = test::complex_values(prod(a, 0, false, dev));
    EXPECT_EQ(p[0], std::complex<float>(1, 2) * std::complex<float>(3, -2));
    auto m = test::complex_values(max(a, false, dev));  // lexicographic
    EXPECT_EQ(m[0], std::complex<float>(3, -1));
    auto n = test::complex_values(min(a, 1, false, dev));
    EXPECT_EQ(n[0], std::complex<float>(-2, 0.5f));
    EXPECT_EQ(test::complex_values(mean(a, false, dev))[0], std::complex<float>(1, 0.25f));
    EXPECT_EQ(values(all(a, false, dev))[0], 1);
    EXPECT_EQ(values(argmax(a, 1, false, dev)), (std::vector<double>{1, 0}));
  }
}

// A complex value is NaN when either part is, and a NaN wins max, min, maximum, minimum and
// the running extremes (NumPy's rule; MLX's max([1+1j, nan+4j]) is nan+4j). Which NaN wins
// when a group holds two is the first on the CPU (as NumPy); on the GPU it is one of them.
TEST(OpsReduce, ComplexExtremesPropagateNaNInEitherPart) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto is_nan = [](std::complex<float> z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
  for (const Device& dev : test_devices()) {
    const std::string d = test::device_name(dev);
    std::vector<complex64_t> pair = {{1, 1}, {nan, 4}};
    array a(pair.begin(), {2}, complex64);
    for (const array& r : {max(a, false, dev), min(a, false, dev)}) {
      auto z = test::complex_values(r)[0];
      EXPECT_TRUE(std::isnan(z.real()) && z.imag() == 4.0f) << d << ": " << z;
    }
    // The NaN in the imaginary part, in rows long enough for the CPU's lanes, and in columns.
    std::vector<complex64_t> v(3 * 40);
    for (size_t i = 0; i < v.size(); ++i) v[i] = {static_cast<float>(i % 7), static_cast<float>(i % 5)};
    v[40 + 17] = {2, nan};
    array m(v.begin(), {3, 40}, complex64);
    for (const array& r : {max(m, 1, false, dev), min(m, 1, false, dev)}) {
      auto z = test::complex_values(r);
      EXPECT_FALSE(is_nan(z[0])) << d;
      EXPECT_TRUE(z[1].real() == 2.0f && std::isnan(z[1].imag())) << d << ": " << z[1];
      EXPECT_FALSE(is_nan(z[2])) << d;
    }
    for (const array& r : {max(m, 0, false, dev), min(m, 0, false, dev)}) {
      auto z = test::complex_values(r);
      EXPECT_TRUE(z[17].real() == 2.0f && std::isnan(z[17].imag())) << d << ": " << z[17];
      EXPECT_FALSE(is_nan(z[16])) << d;
    }
    // Element-wise, on either side; and the running max from the NaN on.
    std::vector<complex64_t> lhs = {{1, 1}, {nan, 4}, {3, 0}}, rhs = {{2, nan}, {5, 5}, {0, 0}};
    array l(lhs.begin(), {3}, complex64), r(rhs.begin(), {3}, complex64);
    for (const array& e : {maximum(l, r, dev), minimum(l, r, dev), maximum(r, l, dev)}) {
      auto z = test::complex_values(e);
      EXPECT_TRUE(is_nan(z[0]) && is_nan(z[1]) && !is_nan(z[2])) << d;
    }
    std::vector<complex64_t> run = {{1, 0}, {0, nan}, {9, 9}, {nan, 1}};
    auto c = test::complex_values(cummax(array(run.begin(), {4}, complex64), 0, false, true, dev));
    EXPECT_FALSE(is_nan(c[0])) << d;
    EXPECT_TRUE(c[1].real() == 0.0f && c[2].real() == 0.0f && is_nan(c[3])) << d;
    if (dev == Device::cpu) {
      // Two NaNs: the first wins (NumPy's np.max and np.maximum.accumulate).
      std::vector<complex64_t> two = {{2, nan}, {nan, 4}};
      auto t = test::complex_values(max(array(two.begin(), {2}, complex64), false, dev))[0];
      EXPECT_EQ(t.real(), 2.0f) << t;
      EXPECT_EQ(
          test::complex_values(cummax(array(run.begin(), {4}, complex64), 0, false, true, dev))[3].real(),
          0.0f);
    }
  }
}

TEST(OpsReduce, OverloadsAndKeepdims) {
  for (const Device& dev : test_devices()) {
    array a = reshape(arange(6), {2, 3});
    EXPECT_EQ(sum(a, true, dev).shape(), (Shape{1, 1}));
    EXPECT_EQ(values(prod(a, -1, false, dev)), (std::vector<double>{0, 60}));
    EXPECT_EQ(values(min(a, 0, true, dev)), (std::vector<double>{0, 1, 2}));
    EXPECT_EQ(min(a, 0, true, dev).shape(), (Shape{1, 3}));
    EXPECT_EQ(values(all(a, 1, false, dev)), (std::vector<double>{0, 1}));
    EXPECT_EQ(values(any(a, std::vector<int>{0, 1}, true, dev)), (std::vector<double>{1}));
    EXPECT_NEAR(var(a, dev).item<float>(), 35.0f / 12, 1e-5);
    EXPECT_NEAR(var(a, false, 1, dev).item<float>(), 3.5f, 1e-5);
    test::expect_close(values(braid::std(a, 1, true, 1, dev)), {1, 1}, 1e-6, 1e-6, "std ddof 1");
    EXPECT_EQ(braid::std(a, 1, true, 1, dev).shape(), (Shape{2, 1}));
    EXPECT_EQ(braid::std(a, std::vector<int>{0}, false, 0, dev).shape(), (Shape{3}));
    // N <= ddof: inf for N > 0.
    EXPECT_EQ(values(var(a, 0, false, 2, dev))[0], kInf);
    EXPECT_TRUE(std::isnan(values(var(array({1.0f, 1.0f}), false, 2, dev))[0]));  // 0 * inf
    EXPECT_EQ(all(a, std::vector<int>{}, false, dev).dtype(), bool_);
    EXPECT_EQ(sum(a, std::vector<int>{}, false, dev).id(), a.id());
    EXPECT_EQ(max(a, std::vector<int>{}, false, dev).id(), a.id());
  }
}

// ---- argmin / argmax ----

struct ArgRow {
  std::string name;
  std::function<array(const array&, int, bool, StreamOrDevice)> call;
  bool is_max;
};

const std::vector<ArgRow> kArgRows = {
    {"argmax", [](auto& a, int ax, bool k, StreamOrDevice s) { return argmax(a, ax, k, s); }, true},
    {"argmin", [](auto& a, int ax, bool k, StreamOrDevice s) { return argmin(a, ax, k, s); }, false},
};

// MLX's CPU rule: along the axis, start at element 0 and move only to a strictly better one.
// One index per output, row-major over the other axes.
std::vector<double> ref_args(const std::vector<double>& v, const Shape& shape, int ax, bool is_max) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < ax; ++i) outer *= shape[i];
  for (size_t i = ax + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t len = shape[ax];
  std::vector<double> want;
  want.reserve(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double* p = v.data() + o * len * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k) {
        if (is_max ? p[k * inner] > p[best * inner] : p[k * inner] < p[best * inner]) best = k;
      }
      want.push_back(static_cast<double>(best));
    }
  }
  return want;
}

void check_arg(const ArgRow& row, const array& a, int axis, const Device& dev, const std::string& what) {
  const int nd = static_cast<int>(a.ndim());
  const int ax = axis < 0 ? axis + nd : axis;
  const std::vector<double> want = ref_args(values(a), a.shape(), ax, row.is_max);
  for (bool keep : {false, true}) {
    array r = row.call(a, axis, keep, dev);
    const std::string tag = row.name + " " + dtype_name(a.dtype()) + " " + what + " axis " +
                            std::to_string(axis) + " on " + test::device_name(dev);
    EXPECT_EQ(r.dtype(), uint32) << tag;
    EXPECT_EQ(r.shape(), reduced_shape(a.shape(), {ax}, keep)) << tag;
    EXPECT_EQ(values(r), want) << tag;
  }
}

TEST(OpsArgReduce, FirstExtremeInEveryDtypeAlongEveryAxis) {
  uint32_t seed = 400;
  for (const Device& dev : test_devices()) {
    for (const auto& row : kArgRows) {
      for (Dtype dt : kRealDtypes) {
        // Few distinct values: many ties, so the first index must win.
        array a = make(random_values(60, dt, ++seed, -2, 2), {3, 4, 5}, dt);
        if (issubdtype(dt, floating)) a = astype(astype(a, int32), dt);
        for (int axis : {0, 1, 2, -1}) {
          check_arg(row, a, axis, dev, "");
          check_arg(row, transpose(a), axis, dev, "transposed");
        }
        check_arg(row, broadcast_to(make({1, 3, 3, 0}, {4, 1}, dt), {4, 6}), 0, dev, "broadcast");
      }
    }
  }
}

TEST(OpsArgReduce, LargeRowsAndColumns) {
  uint32_t seed = 500;
  for (const Device& dev : test_devices()) {
    for (const auto& row : kArgRows) {
      const std::vector<Dtype> dtypes =
          test::kSanitized ? std::vector<Dtype>{float32} : std::vector<Dtype>{float32, bfloat16, int32, float64};
      for (Dtype dt : dtypes) {
        for (const Shape& shape : {Shape{5, 70000}, Shape{70000, 5}, Shape{400, 300}}) {
          array a = make(random_values(shape[0] * static_cast<int64_t>(shape[1]), dt, ++seed, -1000, 1000),
                         shape, dt);
          check_arg(row, a, 0, dev, "large");
          check_arg(row, a, 1, dev, "large");
        }
      }
    }
  }
}

TEST(OpsArgReduce, NaNFirstWinsAndLaterNaNsAreSkipped) {
  for (const Device& dev : test_devices()) {
    for (Dtype dt : test::kRealFloatDtypes) {
      for (int n : {5, 100}) {
        std::vector<double> later(static_cast<size_t>(n), 1.0), first(static_cast<size_t>(n), 1.0);
        later[2] = kNaN;
        later[n - 1] = 7;
        later[3] = -7;
        first[0] = kNaN;
        first[1] = 9;
        for (const auto& row : kArgRows) {
          array l = make(later, {n}, dt), f = make(first, {n}, dt);
          EXPECT_EQ(row.call(l, 0, false, dev).item<uint32_t>(),
                    row.is_max ? static_cast<uint32_t>(n - 1) : 3u)
              << row.name << " " << dt << " " << n;
          EXPECT_EQ(row.call(f, 0, false, dev).item<uint32_t>(), 0u) << row.name << " " << dt << " " << n;
          // The same as columns.
          array lc = transpose(broadcast_to(reshape(l, {1, n}), {3, n}));
          EXPECT_EQ(values(row.call(lc, 0, false, dev))[1], row.is_max ? n - 1 : 3) << row.name << " " << dt;
        }
      }
    }
  }
}

// Many outputs along a strided axis: the GPU splits each column walk into chunks.
TEST(OpsArgReduce, ManyStridedColumnsSplitAlongTheAxis) {
  const int n = 300, cols = 2100;
  std::vector<double> v(static_cast<size_t>(n) * cols);
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < cols; ++c) {
      double x = (r * 37 + c * 11) % 23 - 11.0;                 // ties everywhere
      if (c % 4 == 0 && r == 0) x = kNaN;                       // NaN first: index 0
      if (c % 4 == 1 && (r == 150 || r == 299)) x = kNaN;       // later NaNs are skipped
      if (c % 4 == 2) x = (r == 40 || r == 260) ? 50.0 : -50.0;  // the first of two maxima
      if (c % 4 == 3) x = (r == 70 || r == 280) ? -60.0 : 0.0;  // the first of two minima
      v[static_cast<size_t>(r) * cols + c] = x;
    }
  }
  for (const auto& row : kArgRows) {
    std::vector<double> want(static_cast<size_t>(cols));
    for (int c = 0; c < cols; ++c) {
      double best = v[c];
      int at = 0;
      for (int r = 1; r < n; ++r) {
        const double x = v[static_cast<size_t>(r) * cols + c];
        if (row.is_max ? x > best : x < best) {
          best = x;
          at = r;
        }
      }
      want[c] = at;
    }
    for (const Device& dev : test_devices()) {
      for (Dtype dt : {float32, bfloat16}) {
        EXPECT_EQ(values(row.call(make(v, {n, cols}, dt), 0, false, dev)), want) << row.name << " " << dt;
      }
    }
  }
}

TEST(OpsArgReduce, SplitColumnsKeepTheFirstIndexAndTheNaNRule) {
  const int n = 70000;
  std::vector<double> v(static_cast<size_t>(n) * 3, 0.0);
  for (int r = 0; r < n; ++r) {
    v[r * 3 + 0] = (r == 0) ? kNaN : r % 7;  // NaN first: index 0
    v[r * 3 + 1] = (r == 50000) ? kNaN : 1;  // a later NaN is skipped; ties keep the first
    v[r * 3 + 2] = -kInf;                    // all equal: index 0
  }
  v[20000 * 3 + 1] = 9;
  v[60000 * 3 + 1] = 9;
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {float32, float64, bfloat16}) {
      array a = make(v, {n, 3}, dt);
      EXPECT_EQ(values(argmax(a, 0, false, dev)), (std::vector<double>{0, 20000, 0})) << dt;
      EXPECT_EQ(values(argmin(a, 0, false, dev)), (std::vector<double>{0, 0, 0})) << dt;
    }
  }
}

// Shapes for each way the GPU reads: unit-stride rows (16-byte vectors after an unaligned
// head, many rows, or few long rows split into chunks), columns read as vectors (split along
// the axis, or not) and columns one by one (a width that is no multiple of the vector).
TEST(OpsArgReduce, RowsAndColumnsOfEveryWidthAndAlignment) {
  struct Case {
    Shape shape;
    int axis;
  };
  const std::vector<Case> cases = {{{2100, 37}, 1}, {{3, 50001}, 1}, {{300, 2048}, 0},
                                   {{2, 50, 1024}, 1}, {{100, 2050}, 0}, {{2, 3000, 64}, 1}};
  uint32_t seed = 600;
  for (const Device& dev : test_devices()) {
    for (Dtype dt : {int8, float16, float32, float64}) {
      for (const Case& c : cases) {
        int64_t n = 1;
        for (auto d : c.shape) n *= d;
        auto v = random_values(n, dt, ++seed, -20, 20);
        if (issubdtype(dt, floating)) {  // ties, and NaNs first in some rows and later in others
          for (auto& x : v) x = std::round(x);
          for (int64_t i = 0; i < n; i += 89) v[i] = kNaN;
        }
        array a = make(v, c.shape, dt);
        // Rows starting one element into the array: no row is 16-byte aligned.
        Shape start(c.shape.size(), 0);
        start.back() = 1;
        const array offset = slice(a, start, c.shape);
        for (const auto& row : kArgRows) {
          check_arg(row, a, c.axis, dev, "");
          check_arg(row, offset, c.axis, dev, "offset");
        }
      }
    }
  }
}

// The ends of each dtype's range (-inf and inf for floats): a chunk of the axis holding only the
// worst value for its op, or only NaNs, must not hide a later better element, and a whole axis
// of the worst value gives index 0. Long axes, so the GPU splits both rows and columns.
TEST(OpsArgReduce, RangeEndsAcrossChunks) {
  const int n = 70000, cols = 8;
  for (Dtype dt : {uint8, int8, int32, float32, bfloat16}) {
    const bool fl = issubdtype(dt, floating);
    const double lo = fl ? -kInf : (dt == uint8 ? 0.0 : dt == int8 ? -128.0 : -2147483648.0);
    const double hi = fl ? kInf : (dt == uint8 ? 255.0 : dt == int8 ? 127.0 : 2147483647.0);
    std::vector<double> v(static_cast<size_t>(n) * cols);
    for (int r = 0; r < n; ++r) {
      double* row = &v[static_cast<size_t>(r) * cols];
      row[0] = lo;
      row[1] = r == 65000 ? 0.0 : lo;
      row[2] = hi;
      row[3] = r == 65000 ? 0.0 : hi;
      row[4] = r % 2 == 0 ? lo : hi;
      row[5] = fl && r > 0 && r < 40000 ? kNaN : (r == 50000 ? 1.0 : lo);  // NaNs skipped, then a later 1
      row[6] = r == n - 1 ? hi : lo;
      row[7] = r == n - 1 ? lo : hi;
    }
    array a = make(v, {n, cols}, dt);
    for (const Device& dev : test_devices()) {
      for (const auto& row : kArgRows) {
        check_arg(row, a, 0, dev, "range ends, columns");
        check_arg(row, transpose(a), 1, dev, "range ends, strided rows");
        check_arg(row, contiguous(transpose(a)), 1, dev, "range ends, rows");
      }
    }
  }
}

TEST(OpsArgReduce, FlattenedOverloads) {
  for (const Device& dev : test_devices()) {
    array a = array({3, 9, 2, 9, 1, 1}, {2, 3});
    EXPECT_EQ(argmax(a, dev).item<uint32_t>(), 1u);
    EXPECT_EQ(argmin(a, dev).item<uint32_t>(), 4u);
    EXPECT_EQ(argmax(a, true, dev).shape(), (Shape{1, 1}));
    EXPECT_EQ(argmin(transpose(a), false, dev).item<uint32_t>(), 3u);
    EXPECT_EQ(values(argmax(a, 0, false, dev)), (std::vector<double>{1, 0, 0}));
    EXPECT_EQ(values(argmin(a, -1, true, dev)), (std::vector<double>{2, 1}));
    EXPECT_THROW(argmax(zeros({0}), dev), std::invalid_argument);
    EXPECT_THROW(argmin(zeros({2, 0}), 1, false, dev), std::invalid_argument);
    EXPECT_EQ(argmin(zeros({2, 0}), 0, false, dev).shape(), (Shape{0}));  // as NumPy
  }
}

// ---- scans ----

struct ScanRow {
  std::string name;
  std::function<array(const array&, int, bool, bool, StreamOrDevice)> call;
  std::function<double(double, double)> step;
  double identity;
  std::vector<Dtype> dtypes;
  std::function<Dtype(Dtype)> out_dtype = [](Dtype d) { return d; };
};

double logaddexp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (lo == -kInf || hi == kInf) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

const std::vector<ScanRow>& scan_rows() {
  static const std::vector<ScanRow> rows = {
      {"cumsum", [](auto& a, int ax, bool r, bool i, StreamOrDevice s) { return cumsum(a, ax, r, i, s); },
       [](double a, double b) { return a + b; }, 0, kRealDtypes,
       [](Dtype d) { return d == bool_ ? int32 : d; }},
      {"cumprod", [](auto& a, int ax, bool r, bool i, StreamOrDevice s) { return cumprod(a, ax, r, i, s); },
       [](double a, double b) { return a * b; }, 1, kRealDtypes},
      {"cummax", [](auto& a, int ax, bool r, bool i, StreamOrDevice s) { return cummax(a, ax, r, i, s); },
       [](double a, double b) { return (b > a || std::isnan(b)) ? b : a; }, -kInf, kRealDtypes},
      {"cummin", [](auto& a, int ax, bool r, bool i, StreamOrDevice s) { return cummin(a, ax, r, i, s); },
       [](double a, double b) { return (b < a || std::isnan(b)) ? b : a; }, kInf, kRealDtypes},
      {"logcumsumexp",
       [](auto& a, int ax, bool r, bool i, StreamOrDevice s) { return logcumsumexp(a, ax, r, i, s); },
       logaddexp, -kInf, test::kRealFloatDtypes},
  };
  return rows;
}

// The reference scan of `v` (row-major, `shape`) along `axis`; values rounded to `dt` at
// every step, as the kernels store them.
std::vector<double> ref_scan(const ScanRow& row, const std::vector<double>& v, const Shape& shape, int axis,
                             bool reverse, bool inclusive, Dtype dt) {
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t n = shape[axis];
  const int64_t outer = static_cast<int64_t>(v.size()) / std::max<int64_t>(1, n * inner);
  std::vector<double> out(v.size());
  const bool is_int = !issubdtype(dt, inexact);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < inner; ++c) {
      double acc = row.identity;
      if (is_int && std::isinf(acc)) acc = acc > 0 ? 1e300 : -1e300;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t r = reverse ? n - 1 - k : k;
        const size_t at = static_cast<size_t>((o * n + r) * inner + c);
        if (!inclusive) out[at] = acc;
        acc = row.step(acc, v[at]);
        if (inclusive) out[at] = acc;
      }
    }
  }
  return out;
}

void check_scan(const ScanRow& row, const array& a, int axis, const Device& dev, const std::string& what) {
  const int ax = axis < 0 ? axis + static_cast<int>(a.ndim()) : axis;
  const auto in = values(a);
  const Dtype out_t = row.out_dtype(a.dtype());
  for (bool reverse : {false, true}) {
    for (bool inclusive : {true, false}) {
      array r = row.call(a, axis, reverse, inclusive, dev);
      const std::string tag = row.name + " " + dtype_name(a.dtype()) + " " + what + " axis " +
                              std::to_string(axis) + (reverse ? " reverse" : "") +
                              (inclusive ? "" : " exclusive") + " on " + test::device_name(dev);
      EXPECT_EQ(r.dtype(), out_t) << tag;
      EXPECT_EQ(r.shape(), a.shape()) << tag;
      auto want = round_all(ref_scan(row, in, a.shape(), ax, reverse, inclusive, out_t), out_t);
      if (issubdtype(out_t, inexact)) {
        const double e = eps_of(out_t);
        const double n = a.ndim() ? a.shape()[ax] : 1;
        test::expect_close(values(r), want, 4 * e, 40 * e * std::max(1.0, n / 100), tag);
      } else {
        auto got = values(r);
        ASSERT_EQ(got.size(), want.size()) << tag;
        for (size_t i = 0; i < got.size(); ++i) {
          if (std::abs(want[i]) < 1e300) EXPECT_EQ(got[i], want[i]) << tag << " at " << i;
        }
      }
    }
  }
}

TEST(OpsScan, EveryScanInEveryDtypeAlongEveryAxis) {
  uint32_t seed = 600;
  for (const Device& dev : test_devices()) {
    for (const auto& row : scan_rows()) {
      for (Dtype dt : row.dtypes) {
        const double hi = row.name == "cumprod" ? 1.5 : 3;
        array a = make(random_values(60, dt, ++seed, -hi, hi, row.name == "cumprod" ? 1 : 3), {3, 4, 5}, dt);
        for (int axis : {0, 1, 2, -1}) {
          check_scan(row, a, axis, dev, "");
          check_scan(row, transpose(a), axis, dev, "transposed");
        }
        check_scan(row, broadcast_to(make(random_values(5, dt, ++seed), {5}, dt), {4, 5}), 0, dev,
                   "broadcast");
      }
    }
  }
}

TEST(OpsScan, LongRowsAndManyColumns) {
  uint32_t seed = 700;
  for (const Device& dev : test_devices()) {
    for (const auto& row : scan_rows()) {
      if (row.name == "cumprod") continue;
      if (test::kThreadSanitized && row.name != "cumsum" && row.name != "cummax") continue;  // one per kernel kind
      const std::vector<Dtype> dtypes =
          test::kSanitized ? std::vector<Dtype>{float32} : std::vector<Dtype>{int32, float32, float64};
      for (Dtype dt : dtypes) {
        if (row.name == "logcumsumexp" && dt == int32) continue;
        for (const Shape& shape : {Shape{3, 50000}, Shape{2000, 70}, Shape{7, 3000}}) {
          array a =
              make(random_values(shape[0] * static_cast<int64_t>(shape[1]), dt, ++seed, -1, 1), shape, dt);
          check_scan(row, a, 1, dev, "large");
          check_scan(row, a, 0, dev, "large");
        }
      }
    }
  }
}

TEST(OpsScan, FlattenedOverloadsScalarsAndEmptyInputs) {
  for (const Device& dev : test_devices()) {
    array a = array({1, 2, 3, 4}, {2, 2});
    EXPECT_EQ(values(cumsum(a, false, true, dev)), (std::vector<double>{1, 3, 6, 10}));
    EXPECT_EQ(cumsum(a, false, true, dev).shape(), (Shape{4}));
    EXPECT_EQ(values(cumsum(a, true, true, dev)), (std::vector<double>{10, 9, 7, 4}));
    EXPECT_EQ(values(cumprod(a, false, false, dev)), (std::vector<double>{1, 1, 2, 6}));
    EXPECT_EQ(values(cummax(transpose(a), false, true, dev)), (std::vector<double>{1, 3, 3, 4}));
    EXPECT_EQ(values(cummin(a, 1, true, false, dev)), (std::vector<double>{2, 2147483647, 4, 2147483647}));
    EXPECT_EQ(cumsum(array(true), false, true, dev).shape(), (Shape{1}));
    EXPECT_EQ(cumsum(array(true), false, true, dev).dtype(), int32);
    EXPECT_EQ(cumsum(zeros({0, 3}), 0, false, true, dev).shape(), (Shape{0, 3}));
    EXPECT_EQ(cumsum(zeros({3, 0}), 1, false, true, dev).shape(), (Shape{3, 0}));
    EXPECT_EQ(values(cumsum(array({true, true, false}), 0, false, true, dev)),
              (std::vector<double>{1, 2, 2}));
    EXPECT_EQ(cumsum(array({1, 2}, int8), 0, false, true, dev).dtype(), int8);  // no widening
    auto l = values(logcumsumexp(array({0.0f, 0.0f}), false, false, dev));
    EXPECT_EQ(l[0], -kInf);
    EXPECT_NEAR(l[1], 0.0, 1e-6);
    auto m = values(cummax(array({1.0, kNaN, 3.0}, float32), false, true, dev));
    EXPECT_TRUE(m[0] == 1 && std::isnan(m[1]) && std::isnan(m[2]));
    std::vector<complex64_t> cv = {{1, 1}, {2, -1}, {0, 3}};
    auto c = test::complex_values(cumsum(array(cv.begin(), {3}, complex64), false, true, dev));
    EXPECT_EQ(c[2], std::complex<float>(3, 3));
  }
}

// complex64 logcumsumexp steps with MLX's complex logaddexp: the exp of each output is the
// running sum of the inputs' exps (whichever branch of the log a step picks), forwards,
// backwards and exclusive, along either axis; an exclusive scan starts at exp = 0.
TEST(OpsScan, ComplexLogcumsumexpIsTheLogOfTheRunningSumOfExps) {
  using cf = std::complex<double>;
  std::vector<complex64_t> v;
  for (int i = 0; i < 2 * 70; ++i)
    v.emplace_back(0.05f * static_cast<float>(i % 13) - 0.3f, 0.4f * std::sin(0.7f * i));
  const array a(v.begin(), {2, 70}, complex64);
  for (const Device& dev : test_devices()) {
    for (int axis : {0, 1}) {
      for (bool reverse : {false, true}) {
        for (bool inclusive : {true, false}) {
          const array out = logcumsumexp(a, axis, reverse, inclusive, dev);
          ASSERT_EQ(out.dtype(), complex64);
          const std::vector<std::complex<float>> got = test::complex_values(out);
          const int n = axis == 0 ? 2 : 70, lines = axis == 0 ? 70 : 2;
          for (int l = 0; l < lines; ++l) {
            cf running = 0;
            for (int k = 0; k < n; ++k) {
              const int j = reverse ? n - 1 - k : k;
              const int idx = axis == 0 ? j * 70 + l : l * 70 + j;
              const cf x(v[idx].real(), v[idx].imag());
              if (inclusive) running += std::exp(x);
              const cf want = running;
              const cf have = std::exp(cf(got[idx].real(), got[idx].imag()));
              EXPECT_NEAR(std::abs(have - want), 0.0, 2e-5 * (1 + std::abs(want)))
                  << dev << " axis " << axis << " reverse " << reverse << " inclusive " << inclusive << " at "
                  << idx;
              if (!inclusive) running += std::exp(x);
            }
          }
        }
      }
    }
  }
}

// ---- bad input ----

TEST(OpsReduce, BadInputThrowsWithTheOpName) {
  array m = zeros({2, 3});
  array e = zeros({0, 3});
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"[sum]", [&] { sum(m, 2); }},
      {"[sum]",
       [&] {
         sum(m, std::vector<int>{0, 0});
       }},
      {"[prod]", [&] { prod(m, -3); }},
      {"[all]",
       [&] {
         all(m, std::vector<int>{1, -1});
       }},
      {"[any]", [&] { any(array(1), 0); }},
      {"[max]", [&] { max(e); }},
      {"[min]", [&] { min(e, 0); }},
      {"[min]", [&] { min(m, 5); }},
      {"[mean]", [&] { mean(m, 2); }},
      {"[var]", [&] { var(m, 2); }},
      {"[var]",
       [&] {
         var(m, std::vector<int>{0, 0});
       }},
      {"[std]", [&] { braid::std(m, -3); }},
      {"[argmax]", [&] { argmax(m, 2); }},
      {"[argmin]", [&] { argmin(e); }},
      {"[argmax]", [&] { argmax(e, 0); }},
      {"[argmin]", [&] { argmin(array(1), 0); }},
      {"[median]", [&] { median(m, 2); }},
      {"[median]",
       [&] {
         median(m, std::vector<int>{1, -1});
       }},
      {"[median]", [&] { median(m, std::vector<int>{}); }},
      {"[median]", [&] { median(e); }},
      {"[median]", [&] { median(e, 0); }},
      {"[logsumexp]", [&] { logsumexp(e); }},
      {"[logsumexp]", [&] { logsumexp(m, 3); }},
      {"[cumsum]", [&] { cumsum(m, 2); }},
      {"[cumprod]", [&] { cumprod(m, -3); }},
      {"[cummax]", [&] { cummax(array(1), 0); }},
      {"[cummin]", [&] { cummin(m, 7); }},
      {"[logcumsumexp]", [&] { logcumsumexp(m, 2); }},
  };
  for (const auto& [prefix, call] : cases) {
    EXPECT_TRUE(test::throws_bad_input(call, prefix));
  }
}

}  // namespace
}  // namespace braid

namespace braid {

// max, min, argmax and argmin of an array empty along an axis they do not reduce give an empty
// result, as NumPy; only an empty reduced axis is an error.
TEST(OpsReduce, ExtremaOfArraysEmptyAlongAnotherAxis) {
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    array m = braid::max(zeros({0, 2}), -1);
    eval(m);
    EXPECT_EQ(m.shape(), (Shape{0}));
    array n = braid::min(zeros({3, 0, 2}), std::vector<int>{-1}, true);
    eval(n);
    EXPECT_EQ(n.shape(), (Shape{3, 0, 1}));
    array k = braid::max(zeros({0, 3, 2}), std::vector<int>{1, 2});
    eval(k);
    EXPECT_EQ(k.shape(), (Shape{0}));
    array i = argmax(zeros({0, 3}), 1);
    eval(i);
    EXPECT_EQ(i.shape(), (Shape{0}));
    EXPECT_THROW(braid::max(zeros({2, 0}), -1), std::invalid_argument);
    EXPECT_THROW(braid::min(zeros({0, 2}), 0), std::invalid_argument);
    EXPECT_THROW(argmin(zeros({3, 0}), 1), std::invalid_argument);
  }
}

}  // namespace braid
