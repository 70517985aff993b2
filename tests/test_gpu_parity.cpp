// GPU parity: every op in braid/ops.h runs on the CPU and on the GPU from the same inputs, and
// the results must agree (exactly for integers, within a few rounding steps for floats).
// Inputs cover every dtype where it means something, non-contiguous layouts (transposed,
// broadcast, reshaped views) and sizes that reach the kernels' vectorized, multi-block and
// split paths. The suite skips itself when no GPU is available.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "braid/braid.h"

using namespace braid;

namespace {

const std::vector<Dtype> kAllDtypes = {bool_, uint8, int32, int64, float16, bfloat16, float32};
const std::vector<Dtype> kFloatDtypes = {float16, bfloat16, float32};
const std::vector<Dtype> kNumericDtypes = {uint8, int32, int64, float16, bfloat16, float32};
constexpr uint32_t kSeed = 20240611;

#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    if (!is_available(Device::gpu)) GTEST_SKIP() << "no GPU: braid::is_available(gpu) is false"; \
  } while (0)

template <typename T>
std::vector<double> read_strided(array& a) {
  const T* p = a.data<T>();
  const int nd = static_cast<int>(a.ndim());
  std::vector<double> out(a.size());
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t off = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i > 0) {
      for (int d = nd - 1; d >= 0; --d) {
        off += a.strides()[d];
        if (++idx[d] < a.shape()[d]) break;
        off -= a.strides()[d] * a.shape()[d];
        idx[d] = 0;
      }
    }
    if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<double>(p[off]);
    } else {
      out[i] = static_cast<double>(static_cast<float>(p[off]));
    }
  }
  return out;
}

// The elements of an evaluated array in row-major order of its shape.
std::vector<double> values(array a) {
  a.eval();
  switch (a.dtype().val()) {
    case Dtype::Val::bool_: return read_strided<bool>(a);
    case Dtype::Val::uint8: return read_strided<uint8_t>(a);
    case Dtype::Val::int32: return read_strided<int32_t>(a);
    case Dtype::Val::int64: return read_strided<int64_t>(a);
    case Dtype::Val::float16: return read_strided<float16_t>(a);
    case Dtype::Val::bfloat16: return read_strided<bfloat16_t>(a);
    case Dtype::Val::float32: return read_strided<float>(a);
    case Dtype::Val::uint16: return read_strided<uint16_t>(a);
    case Dtype::Val::uint32: return read_strided<uint32_t>(a);
    case Dtype::Val::uint64: return read_strided<uint64_t>(a);
    case Dtype::Val::int8: return read_strided<int8_t>(a);
    case Dtype::Val::int16: return read_strided<int16_t>(a);
    case Dtype::Val::float64: return read_strided<double>(a);
    case Dtype::Val::complex64: return read_strided<float>(a);
  }
  return {};
}

// Random values representable in `dt`: 0/1 for bool, [0, 20) for uint8, [-20, 20] for other
// integers (so integer arithmetic stays exact), uniform in [lo, hi) for floats.
array random_array(const Shape& shape, Dtype dt, uint32_t seed, double lo = -4, double hi = 4) {
  std::mt19937 rng(seed);
  size_t n = 1;
  for (int32_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  std::uniform_real_distribution<double> real(lo, hi);
  for (auto& x : v) {
    if (dt == bool_) {
      x = static_cast<float>(rng() % 2);
    } else if (dt == uint8) {
      x = static_cast<float>(rng() % 20);
    } else if (is_integral(dt)) {
      x = static_cast<float>(static_cast<int>(rng() % 41) - 20);
    } else {
      x = static_cast<float>(real(rng));
    }
  }
  return array(v.begin(), shape, dt);
}

struct Tolerance {
  double rtol;
  double atol;
};

Tolerance default_tolerance(Dtype dt) {
  if (dt == float16) return {2e-3, 1e-3};
  if (dt == bfloat16) return {1.6e-2, 1e-2};
  if (dt == float32) return {2e-5, 1e-6};
  return {0, 0};
}

::testing::AssertionResult same_values(array gpu, array cpu, Tolerance tol) {
  if (gpu.shape() != cpu.shape()) return ::testing::AssertionFailure() << "shapes differ";
  if (gpu.dtype() != cpu.dtype()) {
    return ::testing::AssertionFailure() << "dtypes differ: gpu " << gpu.dtype() << ", cpu " << cpu.dtype();
  }
  const std::vector<double> g = values(gpu), c = values(cpu);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(c[i])) continue;
    if (std::isinf(c[i]) && g[i] == c[i]) continue;
    if (!(std::fabs(g[i] - c[i]) <= tol.atol + tol.rtol * std::fabs(c[i]))) {
      return ::testing::AssertionFailure() << "element " << i << " of " << g.size() << ": gpu " << g[i] << ", cpu "
                                           << c[i] << " (" << gpu.dtype() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Builds the same graph on each device and compares the results.
void expect_parity(const std::function<array(StreamOrDevice)>& build, const std::string& what,
                   std::optional<Tolerance> tol = std::nullopt) {
  SCOPED_TRACE(what + " (seed " + std::to_string(kSeed) + ")");
  array cpu = build(Device(Device::cpu));
  array gpu = build(Device(Device::gpu));
  EXPECT_TRUE(same_values(gpu, cpu, tol ? *tol : default_tolerance(cpu.dtype())));
}

std::string name_of(Dtype dt) { return dtype_name(dt); }

// Layouts of one logical [rows, cols] input: contiguous, a transposed view, a broadcast view.
std::vector<std::pair<std::string, std::function<array(const array&, StreamOrDevice)>>> layouts() {
  return {
      {"contiguous", [](const array& x, StreamOrDevice) { return x; }},
      {"transposed", [](const array& x, StreamOrDevice s) { return transpose(x, s); }},
      {"broadcast", [](const array& x, StreamOrDevice s) {
         return broadcast_to(reshape(x, Shape{1, x.shape(0), x.shape(1)}, s), Shape{3, x.shape(0), x.shape(1)}, s);
       }},
  };
}

}  // namespace

TEST(GpuParity, AsTypeConvertsEveryDtypePairInEveryLayout) {
  SKIP_WITHOUT_GPU();
  for (Dtype from : kAllDtypes) {
    // Non-negative values: converting a negative float to uint8 is undefined on the CPU.
    const array x = random_array({37, 53}, from, kSeed, 0, 100);
    for (Dtype to : kAllDtypes) {
      for (const auto& [layout, view] : layouts()) {
        expect_parity([&](StreamOrDevice s) { return astype(view(x, s), to, s); },
                      "astype " + name_of(from) + " -> " + name_of(to) + ", " + layout);
      }
    }
  }
}

TEST(GpuParity, AsTypeLargeContiguousUsesTheVectorPathAndItsTail) {
  SKIP_WITHOUT_GPU();
  const array x = random_array({(1 << 20) + 7}, float32, kSeed, 0, 100);
  for (Dtype to : kAllDtypes) {
    expect_parity([&](StreamOrDevice s) { return astype(x, to, s); }, "astype float32 -> " + name_of(to));
  }
}

TEST(GpuParity, FullZerosOnesFillEveryDtype) {
  SKIP_WITHOUT_GPU();
  for (Dtype dt : kAllDtypes) {
    expect_parity([&](StreamOrDevice s) { return zeros({1000, 33}, dt, s); }, "zeros " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return ones({(1 << 20) + 3}, dt, s); }, "ones " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return full({7, 5}, 3.5f, dt, s); }, "full scalar " + name_of(dt));
    const array row = random_array({1, 29}, dt, kSeed);
    expect_parity([&](StreamOrDevice s) { return full({17, 29}, row, s); }, "full row " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return full({17, 29}, row, float32, s); }, "full row to float32 " + name_of(dt));
  }
}

TEST(GpuParity, ArangeMatchesForEveryNumericDtype) {
  SKIP_WITHOUT_GPU();
  for (Dtype dt : kNumericDtypes) {
    expect_parity([&](StreamOrDevice s) { return arange(0.0, 200.0, 1.0, dt, s); }, "arange 0..200 " + name_of(dt));
    // Negative values converted to uint8 are undefined on the CPU.
    const double start = dt == uint8 ? 0.5 : -5.0;
    expect_parity([&](StreamOrDevice s) { return arange(start, 9.0, 0.3, dt, s); }, "arange step 0.3 " + name_of(dt));
  }
  expect_parity([](StreamOrDevice s) { return arange(0, 3000001, 3, s); }, "arange int32 large");
  expect_parity([](StreamOrDevice s) { return arange(10.0, -10.0, -0.25, s); }, "arange negative step");
  expect_parity([](StreamOrDevice s) { return arange(0.0, 0.0, 1.0, s); }, "arange empty");
}

TEST(GpuParity, ViewsReadTheSameElements) {
  SKIP_WITHOUT_GPU();
  for (Dtype dt : kAllDtypes) {
    const array x = random_array({4, 6, 5}, dt, kSeed);
    expect_parity([&](StreamOrDevice s) { return transpose(x, {2, 0, 1}, s); }, "transpose " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return broadcast_to(x, {3, 4, 6, 5}, s); }, "broadcast " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return reshape(x, {24, 5}, s); }, "reshape view " + name_of(dt));
    // A reshape of a transposed view needs a copy.
    expect_parity([&](StreamOrDevice s) { return reshape(transpose(x, s), {5, 24}, s); },
                  "reshape copy " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return reshape(broadcast_to(x, {2, 4, 6, 5}, s), {-1}, s); },
                  "reshape of broadcast " + name_of(dt));
  }
  // More non-mergeable dimensions than a kernel indexes at once.
  const array big = random_array({2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3}, float32, kSeed);
  std::vector<int> perm = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  expect_parity([&](StreamOrDevice s) { return reshape(transpose(big, perm, s), {-1}, s); },
                "reshape copy of an 11-d transpose");
}

TEST(GpuParity, UnaryOpsInEveryLayout) {
  SKIP_WITHOUT_GPU();
  for (Dtype dt : {uint8, int32, int64, float16, bfloat16, float32}) {
    const array x = random_array({33, 65}, dt, kSeed);
    for (const auto& [layout, view] : layouts()) {
      expect_parity([&](StreamOrDevice s) { return negative(view(x, s), s); }, "negative " + name_of(dt) + " " + layout);
    }
  }
  for (Dtype dt : {int32, float16, bfloat16, float32}) {
    const array x = random_array({33, 65}, dt, kSeed, -3, 3);
    const array pos = random_array({33, 65}, dt, kSeed + 1, 0.01, 50);
    for (const auto& [layout, view] : layouts()) {
      const std::string tag = name_of(dt) + " " + layout;
      expect_parity([&](StreamOrDevice s) { return exp(view(x, s), s); }, "exp " + tag);
      expect_parity([&](StreamOrDevice s) { return tanh(view(x, s), s); }, "tanh " + tag);
      expect_parity([&](StreamOrDevice s) { return log(view(pos, s), s); }, "log " + tag);
      expect_parity([&](StreamOrDevice s) { return sqrt(view(pos, s), s); }, "sqrt " + tag);
    }
  }
  const array big = random_array({(1 << 22) + 5}, float32, kSeed, -3, 3);
  expect_parity([&](StreamOrDevice s) { return exp(big, s); }, "exp large");
  const array half_big = random_array({(1 << 21) + 3}, float16, kSeed, -3, 3);
  expect_parity([&](StreamOrDevice s) { return tanh(half_big, s); }, "tanh large float16");
}

TEST(GpuParity, BinaryOpsEveryDtypeAndBroadcast) {
  SKIP_WITHOUT_GPU();
  using BinaryOp = array (*)(const array&, const array&, StreamOrDevice);
  const std::vector<std::pair<std::string, BinaryOp>> ops = {
      {"add", add},         {"subtract", subtract}, {"multiply", multiply}, {"divide", divide},
      {"maximum", maximum}, {"minimum", minimum},   {"equal", equal},       {"less", less},
      {"greater", greater}};
  for (Dtype dt : kAllDtypes) {
    const array a = random_array({31, 67}, dt, kSeed);
    const array b = random_array({31, 67}, dt, kSeed + 1);
    const array row = random_array({1, 67}, dt, kSeed + 2);
    const array col = random_array({31, 1}, dt, kSeed + 3);
    const array scalar = random_array({}, dt, kSeed + 4);
    const array bt = random_array({67, 31}, dt, kSeed + 5);
    for (const auto& [name, op] : ops) {
      if (name == "subtract" && dt == bool_) continue;  // defined, but not worth a case
      const std::string tag = name + " " + name_of(dt);
      expect_parity([&](StreamOrDevice s) { return op(a, b, s); }, tag + " same shape");
      expect_parity([&](StreamOrDevice s) { return op(a, scalar, s); }, tag + " scalar right");
      expect_parity([&](StreamOrDevice s) { return op(scalar, b, s); }, tag + " scalar left");
      expect_parity([&](StreamOrDevice s) { return op(a, row, s); }, tag + " row broadcast");
      expect_parity([&](StreamOrDevice s) { return op(col, row, s); }, tag + " outer broadcast");
      expect_parity([&](StreamOrDevice s) { return op(transpose(bt, s), a, s); }, tag + " transposed");
    }
  }
}

TEST(GpuParity, BinaryFloatSpecialValues) {
  SKIP_WITHOUT_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> av = {nan, 1.0f, -inf, 0.0f, 2.0f, nan, -0.0f, 5.0f};
  const std::vector<float> bv = {1.0f, nan, inf, 0.0f, -2.0f, nan, 0.0f, 0.0f};
  for (Dtype dt : kFloatDtypes) {
    const array a(av.begin(), {8}, dt);
    const array b(bv.begin(), {8}, dt);
    for (auto op : {maximum, minimum, divide, equal, less, greater, add}) {
      expect_parity([&](StreamOrDevice s) { return op(a, b, s); }, "special values " + name_of(dt));
    }
  }
}

TEST(GpuParity, BinaryLargeContiguousAndScalar) {
  SKIP_WITHOUT_GPU();
  for (Dtype dt : {uint8, int32, float16, float32}) {
    const array a = random_array({(1 << 22) + 13}, dt, kSeed);
    const array b = random_array({(1 << 22) + 13}, dt, kSeed + 1);
    expect_parity([&](StreamOrDevice s) { return add(a, b, s); }, "large add " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return multiply(a, array(3, dt), s); }, "large scalar multiply " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return less(a, b, s); }, "large less " + name_of(dt));
  }
}

TEST(GpuParity, WhereEveryDtypeAndBroadcast) {
  SKIP_WITHOUT_GPU();
  const array cond = random_array({29, 41}, bool_, kSeed);
  const array cond_row = random_array({1, 41}, bool_, kSeed + 1);
  for (Dtype dt : kAllDtypes) {
    const array x = random_array({29, 41}, dt, kSeed + 2);
    const array y = random_array({29, 41}, dt, kSeed + 3);
    const array yt = random_array({41, 29}, dt, kSeed + 4);
    const array scalar = random_array({}, dt, kSeed + 5);
    const std::string tag = name_of(dt);
    expect_parity([&](StreamOrDevice s) { return where(cond, x, y, s); }, "where " + tag);
    expect_parity([&](StreamOrDevice s) { return where(cond_row, x, scalar, s); }, "where broadcast " + tag);
    expect_parity([&](StreamOrDevice s) { return where(cond, transpose(yt, s), x, s); }, "where transposed " + tag);
  }
  const array big_cond = random_array({(1 << 21) + 1}, bool_, kSeed);
  const array big_x = random_array({(1 << 21) + 1}, float32, kSeed + 1);
  expect_parity([&](StreamOrDevice s) { return where(big_cond, big_x, array(0.0f), s); }, "where large");
}

TEST(GpuParity, SumAndMaxOverEveryAxisSubset) {
  SKIP_WITHOUT_GPU();
  const Shape shape = {4, 5, 6, 7};
  for (Dtype dt : kAllDtypes) {
    const array x = random_array(shape, dt, kSeed);
    const array xt_base = random_array({7, 6, 5, 4}, dt, kSeed + 1);
    // Float sums are compared against the size of their terms, not of the (possibly small) total.
    // var and logsumexp of integers are float32: compare those at float32's tolerance.
    Tolerance sum_tol = default_tolerance(is_floating_point(dt) ? dt : float32);
    if (dt == float32 || !is_floating_point(dt)) sum_tol.atol = 1e-4;
    if (dt == float16) sum_tol.atol = 1e-2;
    if (dt == bfloat16) sum_tol.atol = 5e-2;
    for (int mask = 1; mask < 16; ++mask) {
      std::vector<int> axes;
      for (int i = 0; i < 4; ++i) {
        if (mask & (1 << i)) axes.push_back(i);
      }
      const std::string tag = name_of(dt) + " axes mask " + std::to_string(mask);
      expect_parity([&](StreamOrDevice s) { return sum(x, axes, false, s); }, "sum " + tag, sum_tol);
      expect_parity([&](StreamOrDevice s) { return max(x, axes, true, s); }, "max " + tag);
      expect_parity([&](StreamOrDevice s) { return sum(transpose(xt_base, s), axes, false, s); }, "sum transposed " + tag, sum_tol);
      expect_parity([&](StreamOrDevice s) { return max(transpose(xt_base, s), axes, false, s); }, "max transposed " + tag);
    }
    expect_parity([&](StreamOrDevice s) { return mean(x, {1, 3}, false, s); }, "mean " + name_of(dt), sum_tol);
  }
}

TEST(GpuParity, ReductionsOfBroadcastAndEmptyInputs) {
  SKIP_WITHOUT_GPU();
  const array row = random_array({1, 300}, float32, kSeed);
  expect_parity([&](StreamOrDevice s) { return sum(broadcast_to(row, {500, 300}, s), 0, false, s); },
                "sum of broadcast over rows");
  expect_parity([&](StreamOrDevice s) { return sum(broadcast_to(row, {500, 300}, s), 1, false, s); },
                "sum of broadcast over columns");
  expect_parity([&](StreamOrDevice s) { return max(broadcast_to(row, {500, 300}, s), s); }, "max of broadcast");
  const array empty = zeros({0, 5}, float32);
  expect_parity([&](StreamOrDevice s) { return sum(empty, 0, false, s); }, "sum over an empty axis");
  expect_parity([&](StreamOrDevice s) { return sum(random_array({3, 1, 4}, int32, kSeed), 1, true, s); },
                "sum over a size-1 axis");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(5000, 1.0f);
  v[4321] = nan;
  const array with_nan(v.begin(), {5000}, float32);
  expect_parity([&](StreamOrDevice s) { return max(with_nan, s); }, "max with NaN");
}

TEST(GpuParity, LargeReductionsTakeTheMultiBlockPaths) {
  SKIP_WITHOUT_GPU();
  // 2^24 ones sum exactly in float only through a tree of partial sums.
  const Device gpu(Device::gpu);
  array ones_gpu = sum(ones({1 << 24}, float32, gpu), gpu);
  EXPECT_EQ(ones_gpu.item<float>(), 16777216.0f);

  const array big = random_array({(1 << 24) + 3}, float32, kSeed, 0, 1);
  expect_parity([&](StreamOrDevice s) { return sum(big, s); }, "sum of 16M floats", Tolerance{1e-5, 0});
  expect_parity([&](StreamOrDevice s) { return max(big, s); }, "max of 16M floats");
  const array big_int = random_array({(1 << 23) + 1}, int32, kSeed);
  expect_parity([&](StreamOrDevice s) { return sum(big_int, s); }, "sum of 8M int32");
  const array big_u8 = random_array({(1 << 23) + 1}, uint8, kSeed);
  expect_parity([&](StreamOrDevice s) { return sum(big_u8, s); }, "sum of 8M uint8 to uint32");
  const array big_half = random_array({1 << 22}, bfloat16, kSeed, 0, 1);
  expect_parity([&](StreamOrDevice s) { return sum(reshape(big_half, {64, 1 << 16}, s), 1, false, s); },
                "row sums of bfloat16", Tolerance{1.6e-2, 0});

  const array wide = random_array({8, 1 << 20}, float32, kSeed, 0, 1);
  expect_parity([&](StreamOrDevice s) { return sum(wide, 1, false, s); }, "few long rows", Tolerance{1e-5, 0});
  expect_parity([&](StreamOrDevice s) { return max(wide, 1, false, s); }, "max of few long rows");
  const array tall = random_array({1 << 16, 512}, float32, kSeed, 0, 1);
  expect_parity([&](StreamOrDevice s) { return sum(tall, 0, false, s); }, "column sums", Tolerance{1e-5, 0});
  expect_parity([&](StreamOrDevice s) { return max(tall, 0, false, s); }, "column maxima");
  expect_parity([&](StreamOrDevice s) { return sum(tall, 1, false, s); }, "many short rows", Tolerance{1e-5, 0});
  const array narrow = random_array({1 << 20, 3}, float32, kSeed, 0, 1);
  expect_parity([&](StreamOrDevice s) { return sum(narrow, 0, false, s); }, "few long columns", Tolerance{1e-5, 0});
  expect_parity([&](StreamOrDevice s) { return sum(narrow, 1, false, s); }, "very short rows", Tolerance{1e-5, 0});
  expect_parity([&](StreamOrDevice s) { return sum(transpose(tall, s), 1, false, s); }, "transposed row sums",
                Tolerance{1e-5, 0});
  const array cube = random_array({64, 256, 128}, float32, kSeed, 0, 1);
  expect_parity([&](StreamOrDevice s) { return sum(cube, {0, 2}, false, s); }, "outer and inner axes",
                Tolerance{1e-5, 0});
}

TEST(GpuParity, EveryReductionAndArgReductionOverEveryAxis) {
  SKIP_WITHOUT_GPU();
  std::vector<Dtype> dtypes = kAllDtypes;
  dtypes.push_back(float64);
  for (Dtype dt : dtypes) {
    // Products of small values stay in range; every other reduction sees the usual values.
    const array x = random_array({6, 7, 40}, dt, kSeed);
    const array small = random_array({6, 7, 5}, dt, kSeed + 1, 0.5, 1.5);
    const array xt = transpose(random_array({40, 7, 6}, dt, kSeed + 2));
    // var and logsumexp of integers are float32: compare those at float32's tolerance.
    Tolerance sum_tol = default_tolerance(is_floating_point(dt) ? dt : float32);
    if (dt == float32 || !is_floating_point(dt)) sum_tol.atol = 1e-4;
    if (dt == float16) sum_tol.atol = 2e-2;
    if (dt == bfloat16) sum_tol.atol = 1e-1;
    for (int axis : {0, 1, 2}) {
      const std::string tag = name_of(dt) + " axis " + std::to_string(axis);
      const std::vector<int> ax = {axis};
      expect_parity([&](StreamOrDevice s) { return min(x, ax, false, s); }, "min " + tag);
      expect_parity([&](StreamOrDevice s) { return max(xt, ax, true, s); }, "max transposed " + tag);
      expect_parity([&](StreamOrDevice s) { return prod(small, ax, false, s); }, "prod " + tag, sum_tol);
      expect_parity([&](StreamOrDevice s) { return all(x, ax, false, s); }, "all " + tag);
      expect_parity([&](StreamOrDevice s) { return any(xt, ax, false, s); }, "any " + tag);
      expect_parity([&](StreamOrDevice s) { return argmax(x, axis, false, s); }, "argmax " + tag);
      expect_parity([&](StreamOrDevice s) { return argmin(xt, axis, true, s); }, "argmin transposed " + tag);
      expect_parity([&](StreamOrDevice s) { return var(x, ax, false, 1, s); }, "var " + tag, sum_tol);
      expect_parity([&](StreamOrDevice s) { return logsumexp(x, ax, false, s); }, "logsumexp " + tag, sum_tol);
    }
  }
  // Long rows split over blocks, NaN rules, many columns.
  std::vector<float> v((1 << 22) + 5, 1.0f);
  v[123457] = 5.0f;
  v[3000001] = 5.0f;
  v[77] = std::numeric_limits<float>::quiet_NaN();
  const array big(v.begin(), {static_cast<int>(v.size())}, float32);
  expect_parity([&](StreamOrDevice s) { return argmax(big, s); }, "argmax of 4M with a later NaN");
  v[0] = std::numeric_limits<float>::quiet_NaN();
  const array nan_first(v.begin(), {static_cast<int>(v.size())}, float32);
  expect_parity([&](StreamOrDevice s) { return argmin(nan_first, s); }, "argmin with a NaN first");
  const array tall = random_array({1 << 16, 64}, float32, kSeed, 0, 1);
  expect_parity([&](StreamOrDevice s) { return argmax(tall, 0, false, s); }, "argmax of columns");
  expect_parity([&](StreamOrDevice s) { return argmin(tall, 1, false, s); }, "argmin of short rows");
  expect_parity([&](StreamOrDevice s) { return min(tall, 0, false, s); }, "column minima");
  const array cplx = astype(random_array({9, 33}, float32, kSeed), complex64);
  expect_parity([&](StreamOrDevice s) { return astype(sum(cplx, 1, false, s), float32, s); }, "complex sum", Tolerance{1e-5, 1e-5});
}

TEST(GpuParity, EveryScanAlongEveryAxisBothWays) {
  SKIP_WITHOUT_GPU();
  std::vector<Dtype> dtypes = kAllDtypes;
  dtypes.push_back(float64);
  for (Dtype dt : dtypes) {
    const array x = random_array({5, 6, 300}, dt, kSeed, -1, 1);
    const array xt = transpose(random_array({300, 6, 5}, dt, kSeed + 1, -1, 1));
    const array small = random_array({5, 6, 7}, dt, kSeed + 2, 0.5, 1.5);
    Tolerance tol = default_tolerance(dt);
    if (dt == float32) tol.atol = 1e-4;
    if (dt == float16) tol.atol = 5e-2;
    if (dt == bfloat16) tol.atol = 3e-1;
    for (int axis : {0, 1, 2}) {
      for (bool reverse : {false, true}) {
        for (bool inclusive : {true, false}) {
          const std::string tag = name_of(dt) + " axis " + std::to_string(axis) + (reverse ? " reverse" : "") +
                                  (inclusive ? "" : " exclusive");
          expect_parity([&](StreamOrDevice s) { return cumsum(x, axis, reverse, inclusive, s); }, "cumsum " + tag, tol);
          expect_parity([&](StreamOrDevice s) { return cumsum(xt, axis, reverse, inclusive, s); },
                        "cumsum transposed " + tag, tol);
          expect_parity([&](StreamOrDevice s) { return cumprod(small, axis, reverse, inclusive, s); }, "cumprod " + tag,
                        tol);
          expect_parity([&](StreamOrDevice s) { return cummax(x, axis, reverse, inclusive, s); }, "cummax " + tag);
          expect_parity([&](StreamOrDevice s) { return cummin(xt, axis, reverse, inclusive, s); }, "cummin " + tag);
          if (is_floating_point(dt)) {
            expect_parity([&](StreamOrDevice s) { return logcumsumexp(x, axis, reverse, inclusive, s); },
                          "logcumsumexp " + tag, tol);
          }
        }
      }
    }
  }
  const array long_row = random_array({3, 100003}, float32, kSeed, -1, 1);
  expect_parity([&](StreamOrDevice s) { return cumsum(long_row, 1, false, true, s); }, "cumsum of long rows",
                Tolerance{1e-4, 1e-2});
  expect_parity([&](StreamOrDevice s) { return cummax(long_row, 1, true, false, s); }, "cummax of long rows");
}

TEST(GpuParity, SoftmaxAcrossRowWidthsAndDtypes) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int, int>> shapes = {{3, 1},      {5, 7},     {64, 32},   {17, 100},   {9, 1000},
                                                   {8, 1024},   {8, 1025},  {4, 4096},  {3, 5000},   {2, 20000},
                                                   {300, 2048}, {2, 70000}, {1, 200000}, {130, 65536}};
  for (Dtype dt : kFloatDtypes) {
    for (const auto& [rows, width] : shapes) {
      const array x = random_array({rows, width}, dt, kSeed, -8, 8);
      const std::string tag = name_of(dt) + " " + std::to_string(rows) + "x" + std::to_string(width);
      expect_parity([&](StreamOrDevice s) { return softmax(x, -1, false, s); }, "softmax " + tag);
    }
    const array x = random_array({40, 33}, dt, kSeed, -8, 8);
    expect_parity([&](StreamOrDevice s) { return softmax(transpose(x, s), -1, false, s); },
                  "softmax transposed " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return softmax(x, 0, true, s); }, "softmax axis 0 " + name_of(dt));
    expect_parity([&](StreamOrDevice s) { return softmax(x, false, s); }, "softmax all axes " + name_of(dt));
  }
  const float inf = std::numeric_limits<float>::infinity();
  // -inf entries (masked positions) contribute nothing, as long as one entry is finite.
  std::vector<float> masked = {1.0f, 2.0f, -inf, 0.5f, -inf, 3.0f, -1.0f, 2.0f};
  const array m(masked.begin(), {2, 4}, float32);
  array g = softmax(m, -1, false, Device(Device::gpu));
  std::vector<double> gv = values(g);
  EXPECT_EQ(gv[2], 0.0);
  EXPECT_EQ(gv[4], 0.0);
  EXPECT_NEAR(gv[0] + gv[1] + gv[2] + gv[3], 1.0, 1e-6);
}

namespace {

Tolerance product_tolerance(Dtype dt) {
  if (dt == float64) return {1e-12, 1e-12};
  if (dt == float32) return {1e-4, 1e-4};
  return dt == float16 ? Tolerance{4e-3, 2e-2} : Tolerance{2e-2, 1e-1};
}

}  // namespace

TEST(GpuParity, MatmulShapesLayoutsAndDtypes) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::array<int, 3>> mkn = {{1, 1, 1}, {1, 64, 1}, {7, 13, 5},   {64, 64, 64},
                                               {1, 300, 200}, {200, 300, 1}, {129, 257, 65}};
  for (Dtype dt : {float16, bfloat16, float32, float64}) {
    const Tolerance tol = product_tolerance(dt);
    for (const auto& [m, k, n] : mkn) {
      const array a = random_array({m, k}, dt, kSeed, -1, 1);
      const array b = random_array({k, n}, dt, kSeed + 1, -1, 1);
      const array at = random_array({k, m}, dt, kSeed + 2, -1, 1);
      const array bt = random_array({n, k}, dt, kSeed + 3, -1, 1);
      const std::string tag = name_of(dt) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
      expect_parity([&](StreamOrDevice s) { return matmul(a, b, s); }, "matmul " + tag, tol);
      expect_parity([&](StreamOrDevice s) { return matmul(transpose(at, s), b, s); }, "matmul A^T " + tag, tol);
      expect_parity([&](StreamOrDevice s) { return matmul(a, transpose(bt, s), s); }, "matmul B^T " + tag, tol);
      expect_parity([&](StreamOrDevice s) { return matmul(transpose(at, s), transpose(bt, s), s); },
                    "matmul A^T B^T " + tag, tol);
    }
    const std::string tag = name_of(dt);
    const array ba = random_array({6, 33, 17}, dt, kSeed, -1, 1);
    const array bb = random_array({6, 17, 9}, dt, kSeed + 1, -1, 1);
    const array shared = random_array({17, 9}, dt, kSeed + 2, -1, 1);
    const array four_a = random_array({2, 1, 33, 17}, dt, kSeed + 3, -1, 1);
    const array four_b = random_array({1, 3, 17, 9}, dt, kSeed + 4, -1, 1);
    expect_parity([&](StreamOrDevice s) { return matmul(ba, bb, s); }, "batched " + tag, tol);
    expect_parity([&](StreamOrDevice s) { return matmul(ba, shared, s); }, "broadcast right operand " + tag, tol);
    expect_parity([&](StreamOrDevice s) { return matmul(transpose(shared, s), transpose(ba, {0, 2, 1}, s), s); },
                  "broadcast left operand, transposed " + tag, tol);
    expect_parity([&](StreamOrDevice s) { return matmul(four_a, four_b, s); }, "two broadcast batch dims " + tag, tol);
    expect_parity([&](StreamOrDevice s) { return matmul(transpose(ba, {1, 0, 2}, s), shared, s); },
                  "batch dim in the middle of memory " + tag, tol);
    const array vec = random_array({17}, dt, kSeed + 5, -1, 1);
    expect_parity([&](StreamOrDevice s) { return matmul(vec, bb, s); }, "vector left " + tag, tol);
    expect_parity([&](StreamOrDevice s) { return matmul(ba, vec, s); }, "vector right " + tag, tol);
    // A row broadcast into a matrix has zero strides inside the matrix: copied first.
    const array one_row = random_array({1, 17}, dt, kSeed + 6, -1, 1);
    expect_parity([&](StreamOrDevice s) { return matmul(broadcast_to(one_row, {33, 17}, s), shared, s); },
                  "matrix with a zero stride " + tag, tol);
    expect_parity([&](StreamOrDevice s) { return matmul(zeros({5, 0}, dt, s), zeros({0, 4}, dt, s), s); },
                  "inner dimension 0 " + tag);
  }
  const array big_a = random_array({512, 1024}, float32, kSeed, -1, 1);
  const array big_b = random_array({1024, 768}, float32, kSeed + 1, -1, 1);
  expect_parity([&](StreamOrDevice s) { return matmul(big_a, big_b, s); }, "large float32 (no TF32)",
                Tolerance{1e-4, 1e-4});
}

TEST(GpuParity, MatrixProductFamilyMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (Dtype dt : {float16, bfloat16, float32, float64}) {
    const Tolerance tol = product_tolerance(dt);
    const std::string tag = " " + name_of(dt);
    const array a = random_array({3, 40, 70}, dt, kSeed, -1, 1);
    const array b = random_array({70, 33}, dt, kSeed + 1, -1, 1);
    const array c = random_array({33}, dt, kSeed + 2, -1, 1);
    expect_parity([&](StreamOrDevice s) { return addmm(c, a, b, 0.5f, 2.f, s); }, "addmm" + tag, tol);
    expect_parity(
        [&](StreamOrDevice s) {
          return addmm(reshape(c, {33, 1}, s), transpose(b, s), transpose(a, {0, 2, 1}, s), 1.f, 1.f, s);
        },
        "addmm transposed" + tag, tol);
    // A mixture of experts: 64 tokens, each routed to one of 8 experts (sorted), and products
    // with both index arrays over column-major weights.
    const array tokens = random_array({64, 1, 70}, dt, kSeed + 3, -1, 1);
    const array experts = random_array({8, 70, 33}, dt, kSeed + 4, -1, 1);
    std::vector<uint32_t> route(64);
    for (int i = 0; i < 64; ++i) route[i] = static_cast<uint32_t>(i / 8);
    const array sorted(route.begin(), Shape{64}, uint32);
    expect_parity([&](StreamOrDevice s) { return gather_mm(tokens, experts, std::nullopt, sorted, true, s); },
                  "gather_mm sorted rhs" + tag, tol);
    const array lhs = astype(random_array({4, 16}, float32, kSeed + 5, 0, 63.9), uint32);
    const array rhs = astype(random_array({16}, float32, kSeed + 6, 0, 7.9), int32);
    expect_parity(
        [&](StreamOrDevice s) {
          const array col_major =
              transpose(contiguous(transpose(experts, {0, 2, 1}, s), false, s), {0, 2, 1}, s);
          return gather_mm(tokens, col_major, lhs, rhs, false, s);
        },
        "gather_mm both indices, column-major weights" + tag, tol);
    const array segments = array({0, 10, 10, 70, 5, 5, 33, 64}, Shape{2, 2, 2}, int32);
    expect_parity(
        [&](StreamOrDevice s) {
          return segmented_mm(reshape(a, {120, 70}, s), b, segments, s);
        },
        "segmented_mm" + tag, tol);
    const array mask_out = astype(random_array({3, 1, 1}, float32, kSeed + 7, 0, 2), bool_);
    const array mask_lhs = random_array({2, 3}, dt, kSeed + 8, -1, 1);
    expect_parity(
        [&](StreamOrDevice s) { return block_masked_mm(a, b, 32, mask_out, mask_lhs, std::nullopt, s); },
        "block_masked_mm" + tag, tol);
  }
}

TEST(GpuParity, ChainedGraphMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const array x = random_array({64, 128}, float32, kSeed, -2, 2);
  const array w = random_array({128, 32}, float32, kSeed + 1, -1, 1);
  expect_parity(
      [&](StreamOrDevice s) {
        array h = tanh(matmul(x, w, s), s);
        array p = softmax(h, -1, false, s);
        array m = where(greater(p, array(0.03f), s), p, zeros(p.shape(), float32, s), s);
        return sum(multiply(m, p, s), 1, false, s);
      },
      "matmul, tanh, softmax, where, sum", Tolerance{1e-4, 1e-6});
}
