// braid::random on every device: threefry2x32 against the published known-answer vectors and
// a scalar reference written here, random bits in MLX's layout for every width and odd size,
// keys, splits and the global sequence as MLX advances it, each distribution against the
// formula MLX composes and against its moments, the dtype and shape rules, and the threading
// contract (one process-wide sequence, no key drawn twice, explicit keys equal everywhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <numbers>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "backend/common/threefry.h"
#include "primitives/primitives.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;

namespace {

using Pair = std::pair<uint32_t, uint32_t>;

// ---- the scalar reference: Random123's formulation (a rotation table of eight, a key
// injection after every fourth round), written independently of the library ----
Pair threefry_reference(Pair key, Pair counter) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key.first, key.second, 0x1BD11BDAu ^ key.first ^ key.second};
  uint32_t x0 = counter.first + ks[0], x1 = counter.second + ks[1];
  for (int round = 0; round < 20; ++round) {
    x0 += x1;
    const int r = kRotations[round % 8];
    x1 = ((x1 << r) | (x1 >> (32 - r))) ^ x0;
    if (round % 4 == 3) {
      const uint32_t injection = static_cast<uint32_t>(round / 4 + 1);
      x0 += ks[injection % 3];
      x1 += ks[(injection + 1) % 3] + injection;
    }
  }
  return {x0, x1};
}

// The `bytes` output bytes of one key, word by word: word j < H is the first hash word of the
// counters (j, j + H + odd), word j > H (or >= H when even) the second of (j - H - odd, j), the
// middle word of an odd count the first of (H, 0).
std::vector<uint8_t> reference_bytes(Pair key, int64_t bytes) {
  const int64_t words = (bytes + 3) / 4, half = words / 2, odd = words % 2;
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  for (int64_t j = 0; j < words; ++j) {
    uint32_t w;
    if (j < half) {
      w = threefry_reference(key, {uint32_t(j), uint32_t(j + half + odd)}).first;
    } else if (odd && j == half) {
      w = threefry_reference(key, {uint32_t(half), 0u}).first;
    } else {
      w = threefry_reference(key, {uint32_t(j - half - odd), uint32_t(j)}).second;
    }
    for (int64_t b = 0; b < 4 && 4 * j + b < bytes; ++b)
      out[static_cast<size_t>(4 * j + b)] = uint8_t(w >> (8 * b));
  }
  return out;
}

// `count` values of `width` bytes each (little-endian) from one key.
std::vector<double> reference_bits(Pair key, int64_t count, int width) {
  const std::vector<uint8_t> bytes = reference_bytes(key, count * width);
  std::vector<double> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    for (int b = 0; b < width; ++b) v |= uint64_t(bytes[static_cast<size_t>(i * width + b)]) << (8 * b);
    out[static_cast<size_t>(i)] = static_cast<double>(v);
  }
  return out;
}

// MLX's split: the 4 words of the key's bits({2, 2}); rows 0 and 1.
std::pair<Pair, Pair> reference_split(Pair key) {
  const std::vector<double> w = reference_bits(key, 4, 4);
  return {{uint32_t(w[0]), uint32_t(w[1])}, {uint32_t(w[2]), uint32_t(w[3])}};
}

Pair key_of(const array& k) {
  const std::vector<double> v = test::values(k);
  return {uint32_t(v.at(0)), uint32_t(v.at(1))};
}

array key_array(Pair k) { return array({k.first, k.second}); }

// The uniform [0, 1) float32 MLX makes of a word: word / 2^32 in float32, capped below 1.
float unit_float(double word) {
  return std::min(static_cast<float>(word) / 4294967296.0f, std::nextafter(1.0f, 0.0f));
}

// erf^-1 by bisection in double.
double erfinv_reference(double y) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct Moments {
  double mean = 0, variance = 0;
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x / static_cast<double>(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean) / static_cast<double>(v.size());
  return m;
}

}  // namespace

// ---- threefry and bits ----

TEST(RandomThreefry, MatchesThePublishedKnownAnswerVectors) {
  // Random123's kat_vectors for threefry2x32_20 (also JAX's threefry test): counter, key, result.
  struct Kat {
    Pair counter, key, result;
  };
  const Kat kats[] = {
      {{0u, 0u}, {0u, 0u}, {0x6b200159u, 0x99ba4efeu}},
      {{0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}, {0x1cb996fcu, 0xbb002be7u}},
      {{0x243f6a88u, 0x85a308d3u}, {0x13198a2eu, 0x03707344u}, {0xc4923a9cu, 0x483df7a0u}},
  };
  for (const Kat& k : kats) {
    EXPECT_EQ(threefry_reference(k.key, k.counter), k.result);
    const common::Words2 got =
        common::threefry2x32({k.key.first, k.key.second}, {k.counter.first, k.counter.second});
    EXPECT_EQ(Pair(got.first, got.second), k.result);
  }
}

TEST(RandomBits, GiveJaxsValuesForKeysZeroAndOne) {
  // The values JAX's threefry_prng_impl.random_bits gives (MLX's tests quote them); each is
  // also checked against the reference, so none is taken on trust.
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array k0 = random::key(0), k1 = random::key(1);
    EXPECT_EQ(random::bits({}, k0, dev).item<uint32_t>(), 1797259609u) << what;
    EXPECT_EQ(random::bits({}, 2, k0, dev).item<uint16_t>(), 345) << what;
    EXPECT_EQ(random::bits({}, 1, k0, dev).item<uint8_t>(), 89) << what;
    EXPECT_EQ(random::bits({}, k1, dev).item<uint32_t>(), 507451445u) << what;
    EXPECT_EQ(random::bits({}, 2, k1, dev).item<uint16_t>(), 6197) << what;
    EXPECT_EQ(random::bits({}, 1, k1, dev).item<uint8_t>(), 53) << what;

    const std::vector<double> three = {4146024105., 1351547692., 2718843009.};
    array x = random::bits({3, 1}, k0, dev);
    EXPECT_EQ(x.shape(), (Shape{3, 1}));
    EXPECT_EQ(test::values(x), three) << what;
    EXPECT_EQ(reference_bits({0, 0}, 3, 4), three);

    const std::vector<std::vector<double>> by_size = {
        {20137, 63263, 64300, 20622, 16513},
        {20137, 63263, 64300, 20622, 16513, 41486},
        {20137, 63263, 1497, 14756, 16513, 41486, 44591},
        {20137, 63263, 1497, 14756, 16513, 41486, 44591, 19423},
    };
    for (int n = 5; n <= 8; ++n) {
      EXPECT_EQ(test::values(random::bits({n}, 2, k0, dev)), by_size[n - 5]) << what << " n " << n;
      EXPECT_EQ(reference_bits({0, 0}, n, 2), by_size[n - 5]) << "reference n " << n;
    }
  }
}

TEST(RandomBits, FollowMlxsLayoutForEveryWidthAndOddSize) {
  const Pair keys[] = {{0u, 0u}, {0u, 7u}, {0xdeadbeefu, 0x01234567u}, {0xffffffffu, 0xffffffffu}};
  const int64_t big = test::kSanitized ? 20011 : 100003;  // large enough to split across the pool
  for (Device dev : test::test_devices()) {
    for (const Pair& k : keys) {
      for (int width : {1, 2, 4}) {
        for (int64_t n : std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 9, 13, 31, 100, 1001, big}) {
          const std::string what =
              test::device_name(dev) + " width " + std::to_string(width) + " n " + std::to_string(n);
          array x = random::bits({static_cast<int32_t>(n)}, width, key_array(k), dev);
          ASSERT_EQ(x.dtype(), width == 4 ? uint32 : width == 2 ? uint16 : uint8) << what;
          ASSERT_EQ(test::values(x), reference_bits(k, n, width)) << what;
        }
      }
    }
  }
}

TEST(RandomBits, AreAPureFunctionOfTheKeyAndShapeOnly) {
  for (Device dev : test::test_devices()) {
    const array k = random::key(123);
    // Same element count, different shapes: the same bits in row-major order.
    EXPECT_EQ(test::values(random::bits({4, 6}, k, dev)), test::values(random::bits({24}, k, dev)));
    EXPECT_EQ(test::values(random::bits({7}, k, dev)), test::values(random::bits({7}, k, dev)));
    EXPECT_EQ(random::bits({0, 3}, k, dev).size(), 0u);
    // A strided key (a column of a transposed array) reads the same two words.
    const array keys = transpose(reshape(array({1u, 2u, 3u, 4u}), {2, 2}));  // rows {1, 3}, {2, 4}
    const array strided = reshape(slice(keys, {0, 0}, {2, 1}), {2});         // {1, 2}, strided
    EXPECT_EQ(test::values(random::bits({5}, strided, dev)), reference_bits({1u, 2u}, 5, 4));
  }
}

// ---- keys, split, the global sequence ----

TEST(RandomKey, SplitsTheSeedIntoHighAndLowWords) {
  EXPECT_EQ(key_of(random::key(0)), Pair(0u, 0u));
  EXPECT_EQ(key_of(random::key(1)), Pair(0u, 1u));
  EXPECT_EQ(key_of(random::key(uint64_t{1} << 32)), Pair(1u, 0u));
  EXPECT_EQ(key_of(random::key((uint64_t{1} << 32) + 1)), Pair(1u, 1u));
  EXPECT_EQ(random::key(5).dtype(), uint32);
  EXPECT_EQ(random::key(5).shape(), (Shape{2}));
}

TEST(RandomSplit, GivesJaxsKeys) {
  for (Device dev : test::test_devices()) {
    auto [a, b] = random::split(random::key(0), dev);
    EXPECT_EQ(key_of(a), Pair(4146024105u, 967050713u));
    EXPECT_EQ(key_of(b), Pair(2718843009u, 1272950319u));
    EXPECT_EQ(reference_split({0, 0}),
              std::make_pair(Pair(4146024105u, 967050713u), Pair(2718843009u, 1272950319u)));
    const array keys = random::split(random::key(0), 3, dev);
    EXPECT_EQ(keys.shape(), (Shape{3, 2}));
    EXPECT_EQ(keys.dtype(), uint32);
    const std::vector<double> want = {2467461003., 428148500.,  3186719485.,
                                      3840466878., 2562233961., 1946702221.};
    EXPECT_EQ(test::values(keys), want);
    EXPECT_EQ(reference_bits({0, 0}, 6, 4), want);
    // Splitting twice gives the same keys.
    auto [c, d] = random::split(random::key(0), dev);
    EXPECT_EQ(key_of(a), key_of(c));
    EXPECT_EQ(key_of(b), key_of(d));
  }
}

TEST(RandomSeed, AdvancesTheGlobalSequenceAsMlxsKeySequence) {
  for (Device dev : test::test_devices()) {
    // After seed(s), each draw splits the state, keeps the first key and uses the second.
    random::seed(4);
    const double x = random::bits({}, std::nullopt, dev).item<uint32_t>();
    const double y = random::bits({}, std::nullopt, dev).item<uint32_t>();
    Pair state = {0u, 4u};
    auto [s1, k1] = reference_split(state);
    auto [s2, k2] = reference_split(s1);
    EXPECT_EQ(x, reference_bits(k1, 1, 4)[0]);
    EXPECT_EQ(y, reference_bits(k2, 1, 4)[0]);
    random::seed(4);
    EXPECT_EQ(random::bits({}, std::nullopt, dev).item<uint32_t>(), x);
    EXPECT_EQ(random::bits({}, std::nullopt, dev).item<uint32_t>(), y);
  }
  // An explicit key never advances the sequence.
  random::seed(9);
  const array first = random::KeySequence::default_().next();
  random::seed(9);
  random::uniform({3}, random::key(1)).eval();
  EXPECT_EQ(key_of(random::KeySequence::default_().next()), key_of(first));
  // A sequence of one's own is independent of the global one.
  random::KeySequence mine(9);
  EXPECT_EQ(key_of(mine.next()), key_of(first));
}

// ---- distributions ----

TEST(RandomUniform, IsMlxsScaledWordsAndStaysInBounds) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array k = random::key(0);
    array a = random::uniform({}, k, dev);
    EXPECT_EQ(a.dtype(), float32);
    EXPECT_EQ(a.shape(), Shape{});
    EXPECT_EQ(a.item<float>(), static_cast<float>(1797259609u) / 4294967296.0f) << what;
    EXPECT_EQ(random::uniform({}, random::key(1), dev).item<float>(),
              static_cast<float>(507451445u) / 4294967296.0f);

    // Bit-exact against the words, then scaled into [low, high) in float32.
    const std::vector<double> words = reference_bits({0, 0}, 1000, 4);
    const std::vector<double> unit = test::values(random::uniform({1000}, k, dev));
    const std::vector<double> shifted = test::values(random::uniform(-1.0f, 5.0f, {1000}, float32, k, dev));
    for (size_t i = 0; i < words.size(); ++i) {
      const float u = unit_float(words[i]);
      ASSERT_EQ(unit[i], u) << what << " at " << i;
      ASSERT_EQ(shifted[i], static_cast<double>(6.0f * u + -1.0f)) << what << " at " << i;
      ASSERT_TRUE(shifted[i] >= -1 && shifted[i] < 5) << what;
    }

    for (Dtype dt : {float32, float16, bfloat16}) {
      array x = random::uniform({20000}, dt, k, dev);
      EXPECT_EQ(x.dtype(), dt);
      const std::vector<double> v = test::values(x);
      EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double u) { return u >= 0 && u < 1; })) << what;
      const Moments m = moments(v);
      EXPECT_NEAR(m.mean, 0.5, 0.01) << what;
      EXPECT_NEAR(m.variance, 1.0 / 12, 0.005) << what;
    }
    // Bounds broadcast to the shape.
    EXPECT_EQ(random::uniform(zeros({3, 1}), ones({1, 3}), {3, 3}, float32, std::nullopt, dev).shape(),
              (Shape{3, 3}));
    EXPECT_EQ(random::uniform({2, 3}, std::nullopt, dev).shape(), (Shape{2, 3}));
    EXPECT_EQ(random::uniform({0}, std::nullopt, dev).size(), 0u);
  }
}

TEST(RandomNormal, IsSqrtTwoErfinvOfAUniformWithMomentsZeroAndOne) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array k = random::key(128291);
    // normal = sqrt(2) erfinv(uniform(nextafter(-1, 0), 1)) in float32.
    const array low(std::nextafter(-1.0f, 0.0f)), high(1.0f);
    const std::vector<double> u = test::values(random::uniform(low, high, {500}, float32, k, dev));
    const std::vector<double> z = test::values(random::normal({500}, k, dev));
    std::vector<double> want(u.size());
    for (size_t i = 0; i < u.size(); ++i) want[i] = std::sqrt(2.0) * erfinv_reference(u[i]);
    test::expect_close(z, want, 2e-5, 2e-6, what + " normal formula");

    for (Dtype dt : {float32, float16, bfloat16, float64}) {
      array x = random::normal({20000}, dt, k, dev);
      EXPECT_EQ(x.dtype(), dt);
      const std::vector<double> v = test::values(x);
      EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double t) { return std::isfinite(t); })) << what;
      const Moments m = moments(v);
      EXPECT_NEAR(m.mean, 0.0, 0.03) << what;
      EXPECT_NEAR(m.variance, 1.0, 0.05) << what;
    }
    // loc and scale: scale * z + loc.
    test::expect_close(test::values(random::normal({3, 2}, 1.0f, 2.0f, k, dev)),
                       test::values(2.0f * random::normal({3, 2}, k, dev) + 1.0f), 1e-6, 1e-6,
                       what + " loc/scale");
    test::expect_close(test::values(random::normal({3, 2}, float16, 1.0f, 2.0f, k, dev)),
                       test::values(2.0f * random::normal({3, 2}, float16, k, dev) + 1.0f), 2e-3, 2e-3,
                       what + " loc/scale float16");
    // Array loc and scale broadcast.
    const array b = random::normal({3, 1, 2}, k, dev);
    array y = random::normal({3, 4, 2}, float16, b, b, std::nullopt, dev);
    EXPECT_EQ(y.shape(), (Shape{3, 4, 2}));
    EXPECT_EQ(y.dtype(), float16);
    EXPECT_EQ(random::normal({}, std::nullopt, dev).shape(), Shape{});
  }
}

TEST(RandomNormal, OfComplex64HasHalfTheVarianceInEachPart) {
  for (Device dev : test::test_devices()) {
    array c = random::normal({20000}, complex64, random::key(3), dev);
    EXPECT_EQ(c.dtype(), complex64);
    EXPECT_EQ(c.shape(), (Shape{20000}));
    std::vector<double> re, im;
    for (const auto& z : test::complex_values(c)) re.push_back(z.real()), im.push_back(z.imag());
    EXPECT_NEAR(moments(re).variance, 0.5, 0.03);
    EXPECT_NEAR(moments(im).variance, 0.5, 0.03);
    EXPECT_EQ(random::normal({1, 2, 3}, complex64, 3.0f, 2.0f, std::nullopt, dev).shape(), (Shape{1, 2, 3}));
    EXPECT_EQ(random::normal({}, complex64, std::nullopt, dev).shape(), Shape{});
  }
}

TEST(RandomMultivariateNormal, HasTheRequestedMeanAndCovariance) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array k = random::key(0);
    // The factor U sqrt(S) V^T of a symmetric positive semi-definite matrix is its square root.
    for (const std::vector<double>& c :
         {std::vector<double>{2, 0.5, 0.5, 1}, std::vector<double>{1, -1, 0.5, -1, 1, -0.5, 0.5, -0.5, 1}}) {
      const int n = c.size() == 4 ? 2 : 3;
      const array cov = test::make(c, {n, n}, float32);
      const array f =
          array(cov.shape(), float32, std::make_shared<SvdSquareRoot>(default_stream(Device::cpu)), {cov});
      test::expect_close(test::values(matmul(f, f, Device::cpu)), c, 1e-5, 1e-5, "factor squared");
      test::expect_close(test::values(transpose(f, Device::cpu)), test::values(f), 1e-6, 1e-6,
                         "factor symmetric");

      const array mean = n == 2 ? array({4.0f, 7.0f}) : arange(3);
      const int samples = 30000;
      const std::vector<double> d =
          test::values(random::multivariate_normal(mean, cov, {samples}, float32, k, dev));
      ASSERT_EQ(d.size(), static_cast<size_t>(samples * n)) << what;
      const std::vector<double> mu = test::values(mean);
      std::vector<double> em(n, 0.0), ec(n * n, 0.0);
      for (int s = 0; s < samples; ++s)
        for (int i = 0; i < n; ++i) em[i] += d[s * n + i] / samples;
      for (int s = 0; s < samples; ++s)
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j)
            ec[i * n + j] += (d[s * n + i] - em[i]) * (d[s * n + j] - em[j]) / samples;
      test::expect_close(em, mu, 0, 0.05, what + " mean");
      test::expect_close(ec, c, 0, 0.08, what + " covariance");
      // The composition: mean + z @ factor with z the key's standard normals.
      const array one = random::multivariate_normal(mean, cov, {}, float32, k, dev);
      EXPECT_EQ(one.shape(), (Shape{n}));
      const array z = random::normal({n}, float32, k, dev);
      test::expect_close(test::values(one), test::values(add(mean, matmul(z, f, Device::cpu), Device::cpu)),
                         1e-5, 1e-5, what + " composition");
    }
    // Shapes: mean and cov batches broadcast with the requested shape.
    const array mean = array({0, 7, 1, 2, 3, 4}, {3, 2});
    const array cov = array({1.0f, 0.5f, 0.5f, 1.0f}, {2, 2});
    EXPECT_EQ(random::multivariate_normal(mean, cov, {4, 3}, float32, std::nullopt, dev).shape(),
              (Shape{4, 3, 2}));
    EXPECT_EQ(random::multivariate_normal(array({0, 0}), eye(2), {}, float32, k, dev).dtype(), float32);
  }
}

TEST(RandomRandint, StaysInHalfOpenIntervalsForEveryIntegerDtype) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array k = random::key(0);
    array a = random::randint(0, 1, {}, int32, std::nullopt, dev);
    EXPECT_EQ(a.shape(), Shape{});
    EXPECT_EQ(a.dtype(), int32);
    EXPECT_EQ(a.item<int32_t>(), 0);
    for (Dtype dt : {int8, int16, int32, int64, uint8, uint16, uint32, uint64}) {
      array x = random::randint(3, 15, {2000}, dt, k, dev);
      EXPECT_EQ(x.dtype(), dt);
      std::set<double> seen;
      for (double v : test::values(x)) seen.insert(v);
      EXPECT_EQ(*seen.begin(), 3) << what << " " << dtype_name(dt);
      EXPECT_EQ(*seen.rbegin(), 14) << what << " " << dtype_name(dt);
      EXPECT_EQ(seen.size(), 12u) << what;
    }
    // MLX's sampler: low + bits mod (high - low), in uint64; 64-bit types take two 32-bit
    // draws from the halves of the split key, high word second.
    const std::vector<double> b32 = test::values(random::bits({1000}, 4, k, dev));
    const std::vector<double> r = test::values(random::randint(-5, 5, {1000}, int32, k, dev));
    for (size_t i = 0; i < b32.size(); ++i) {
      ASSERT_EQ(r[i], -5 + static_cast<double>(static_cast<uint64_t>(b32[i]) % 10)) << what;
    }
    {
      auto [k1, k2] = random::split(k);
      const auto lo_bits = test::exact_values<uint32_t>(random::bits({64}, 4, k1, dev));
      const auto hi_bits = test::exact_values<uint32_t>(random::bits({64}, 4, k2, dev));
      const int64_t base = int64_t{1} << 40;
      const auto x = test::exact_values<int64_t>(
          random::randint(array(base), array(base + 1000003), {64}, int64, k, dev));
      for (int i = 0; i < 64; ++i) {
        const uint64_t raw = (static_cast<uint64_t>(hi_bits[i]) << 32) | lo_bits[i];
        ASSERT_EQ(x[i], base + static_cast<int64_t>(raw % 1000003)) << what << " " << i;
      }
    }
    // Exact past float32's integers: both values of [2^24, 2^24 + 2), every value of a narrow
    // interval at 2^40.
    std::set<double> big;
    for (double v : test::values(random::randint(1 << 24, (1 << 24) + 2, {2000}, int32, k, dev)))
      big.insert(v);
    EXPECT_EQ(big, (std::set<double>{16777216, 16777217})) << what;
    {
      const int64_t base = int64_t{1} << 40;
      const auto x = test::exact_values<int64_t>(
          random::randint(array(base), array(base + 1024), {10000}, int64, k, dev));
      std::set<int64_t> seen(x.begin(), x.end());
      EXPECT_EQ(seen.size(), 1024u) << what;
      EXPECT_EQ(*seen.begin(), base) << what;
      EXPECT_EQ(*seen.rbegin(), base + 1023) << what;
    }
    // Widths beyond int64's range, and uint64 intervals straddling 2^63.
    {
      const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      const auto x =
          test::exact_values<int64_t>(random::randint(array(lo), array(hi), {4000}, int64, k, dev));
      std::set<int64_t> seen(x.begin(), x.end());
      EXPECT_GT(seen.size(), 3990u) << what;
      EXPECT_TRUE(*seen.begin() < 0 && *seen.rbegin() > 0) << what;
      const uint64_t ulo = uint64_t{1} << 62, uhi = ~uint64_t{0};
      const auto u = test::exact_values<uint64_t>(
          random::randint(array(ulo, uint64), array(uhi, uint64), {4000}, uint64, k, dev));
      std::set<uint64_t> useen(u.begin(), u.end());
      EXPECT_GT(useen.size(), 3990u) << what;
      EXPECT_GE(*useen.begin(), ulo) << what;
      EXPECT_GT(*useen.rbegin(), uint64_t{1} << 63) << what;
      // An inverted uint64 interval straddling 2^63 is empty: every draw is `low`.
      const uint64_t inv_lo = (uint64_t{1} << 63) + (uint64_t{1} << 40);
      const auto e = test::exact_values<uint64_t>(
          random::randint(array(inv_lo, uint64), array(ulo, uint64), {100}, uint64, k, dev));
      EXPECT_TRUE(std::all_of(e.begin(), e.end(), [&](uint64_t v) { return v == inv_lo; })) << what;
      // Float bounds truncate: [0.5, 0.9) is [0, 0), empty.
      const std::vector<double> z = test::values(random::randint(array(0.5f), array(0.9f), {100}, int32, k, dev));
      EXPECT_TRUE(std::all_of(z.begin(), z.end(), [](double v) { return v == 0; })) << what;
    }
    // Broadcast bounds; high <= low gives low; bool.
    const array lo = reshape(array({0, 0, 0}), {3, 1}), hi = reshape(array({12, 13, 14, 15}), {1, 4});
    EXPECT_EQ(random::randint(lo, hi, {3, 4}, int32, std::nullopt, dev).shape(), (Shape{3, 4}));
    const std::vector<double> same = test::values(random::randint(10, -10, {100}, int32, std::nullopt, dev));
    EXPECT_TRUE(std::all_of(same.begin(), same.end(), [](double v) { return v == 10; })) << what;
    const std::vector<double> coin = test::values(random::randint(0, 2, {1000}, bool_, k, dev));
    const double heads = std::count(coin.begin(), coin.end(), 1.0);
    EXPECT_GT(heads, 400) << what;
    EXPECT_LT(heads, 600) << what;
  }
}

TEST(RandomBernoulli, IsBitsBelowTheScaledProbability) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array k = random::key(5);
    array a = random::bernoulli(std::nullopt, dev);
    EXPECT_EQ(a.dtype(), bool_);
    EXPECT_EQ(a.shape(), Shape{});
    EXPECT_EQ(test::values(random::bernoulli(array({2.0f, -2.0f}), std::nullopt, dev)),
              (std::vector<double>{1, 0}));
    EXPECT_EQ(
        random::bernoulli(reshape(array({0.1f, 0.2f, 0.3f}), {1, 3}), {4, 3}, std::nullopt, dev).shape(),
        (Shape{4, 3}));
    EXPECT_EQ(random::bernoulli(0.5f, {3, 3}, std::nullopt, dev).shape(), (Shape{3, 3}));
    EXPECT_EQ(random::bernoulli(zeros({0}), std::nullopt, dev).size(), 0u);
    EXPECT_EQ(random::bernoulli(array(0.5, float16), std::nullopt, dev).dtype(), bool_);

    const float upper = std::nextafter(4294967296.0f, std::numeric_limits<float>::max());
    const std::vector<double> words = reference_bits({0u, 5u}, 20000, 4);
    const std::vector<double> got = test::values(random::bernoulli(0.3f, {20000}, k, dev));
    double ones = 0;
    for (size_t i = 0; i < words.size(); ++i) {
      ASSERT_EQ(got[i], static_cast<float>(words[i]) < 0.3f * upper ? 1.0 : 0.0) << what << " at " << i;
      ones += got[i];
    }
    EXPECT_NEAR(ones / 20000, 0.3, 0.015) << what;
  }
}

TEST(RandomTruncatedNormal, StaysWithinItsBounds) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    array a = random::truncated_normal(array(-2.0f), array(2.0f), float32, std::nullopt, dev);
    EXPECT_EQ(a.size(), 1u);
    EXPECT_EQ(a.dtype(), float32);
    EXPECT_EQ(random::truncated_normal(array(-2.0f), array(2.0f), {}, float16, std::nullopt, dev).dtype(),
              float16);
    EXPECT_EQ(random::truncated_normal(array(-2.0f), array(2.0f), {3, 4}, float32, std::nullopt, dev).shape(),
              (Shape{3, 4}));
    EXPECT_EQ(random::truncated_normal(zeros({0}), zeros({0}), float32, std::nullopt, dev).size(), 0u);

    const array lower = reshape(array({-2.0f, -3.0f}), {1, 2}),
                upper = reshape(array({0.0f, 3.0f, 1.5f}), {3, 1});
    array x = random::truncated_normal(lower, upper, float32, std::nullopt, dev);
    EXPECT_EQ(x.shape(), (Shape{3, 2}));
    EXPECT_TRUE(all(less_equal(x, upper)).item<bool>() && all(less_equal(lower, x)).item<bool>()) << what;
    // high < low clips everything to low.
    const std::vector<double> flipped =
        test::values(random::truncated_normal(array(2.0f), array(-2.0f), {10}, float32, std::nullopt, dev));
    EXPECT_TRUE(std::all_of(flipped.begin(), flipped.end(), [](double v) { return v == 2.0; })) << what;
    // Truncated to [-1, 1]: mean 0, variance 1 - 2 phi(1) / (2 Phi(1) - 1) = 0.2911.
    const std::vector<double> v = test::values(
        random::truncated_normal(array(-1.0f), array(1.0f), {20000}, float32, random::key(2), dev));
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double t) { return t >= -1 && t <= 1; })) << what;
    const double phi1 = std::exp(-0.5) / std::sqrt(2 * std::numbers::pi),
                 cdf_span = std::erf(1 / std::sqrt(2.0));
    const Moments m = moments(v);
    EXPECT_NEAR(m.mean, 0, 0.02) << what;
    EXPECT_NEAR(m.variance, 1 - 2 * phi1 / cdf_span, 0.01) << what;
  }
}

TEST(RandomGumbel, HasTheEulerMascheroniMeanAndPiSquaredOverSixVariance) {
  for (Device dev : test::test_devices()) {
    array g = random::gumbel({100, 200}, float32, random::key(11), dev);
    EXPECT_EQ(g.shape(), (Shape{100, 200}));
    EXPECT_EQ(g.dtype(), float32);
    const Moments m = moments(test::values(g));
    EXPECT_NEAR(m.mean, 0.5772156649, 0.03);
    EXPECT_NEAR(m.variance, std::numbers::pi * std::numbers::pi / 6, 0.1);
    EXPECT_EQ(random::gumbel({2}, float16, std::nullopt, dev).dtype(), float16);
  }
}

TEST(RandomCategorical, DrawsCategoriesWithTheirProbabilities) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array logits = zeros({10, 20});
    EXPECT_EQ(random::categorical(logits, -1, std::nullopt, dev).shape(), (Shape{10}));
    EXPECT_EQ(random::categorical(logits, 0, std::nullopt, dev).shape(), (Shape{20}));
    array out = random::categorical(logits, 1, std::nullopt, dev);
    EXPECT_EQ(out.shape(), (Shape{10}));
    EXPECT_EQ(out.dtype(), uint32);
    EXPECT_LT(max(out).item<uint32_t>(), 20u);
    out = random::categorical(logits, 0, Shape{5, 20}, std::nullopt, dev);
    EXPECT_EQ(out.shape(), (Shape{5, 20}));
    EXPECT_LT(max(out).item<uint32_t>(), 10u);
    EXPECT_EQ(random::categorical(logits, 1, 7, std::nullopt, dev).shape(), (Shape{10, 7}));
    EXPECT_EQ(random::categorical(logits, 0, 7, std::nullopt, dev).shape(), (Shape{20, 7}));

    const std::vector<double> p = {0.1, 0.2, 0.7};
    const array lp = log(test::make(p, {3}, float32));
    const int n = 20000;
    const std::vector<double> draws = test::values(random::categorical(lp, -1, n, random::key(1), dev));
    ASSERT_EQ(draws.size(), static_cast<size_t>(n));
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(std::count(draws.begin(), draws.end(), double(c)) / double(n), p[c], 0.015)
          << what << " " << c;
    }
    // The composition: argmax of gumbel + logits over the category axis.
    const array g = random::gumbel({4, 3}, float32, random::key(8), dev);
    EXPECT_EQ(test::values(random::categorical(lp, -1, Shape{4}, random::key(8), dev)),
              test::values(argmax(add(g, lp), 1)));
  }
}

TEST(RandomLaplace, HasLocationMeanAndTwiceTheSquaredScaleVariance) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    const array k = random::key(0);
    array a = random::laplace({}, k, dev);
    EXPECT_EQ(a.shape(), Shape{});
    EXPECT_EQ(a.dtype(), float32);
    EXPECT_EQ(a.item<float>(), random::laplace({}, k, dev).item<float>());
    for (Dtype dt : {float16, bfloat16}) {
      const std::vector<double> v = test::values(random::laplace({10000}, dt, 0.0f, 1.0f, std::nullopt, dev));
      EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double t) { return std::isfinite(t); })) << what;
    }
    test::expect_close(test::values(random::laplace({3, 2}, 1.0f, 2.0f, k, dev)),
                       test::values(2.0f * random::laplace({3, 2}, k, dev) + 1.0f), 1e-6, 1e-6,
                       what + " loc/scale");
    const Moments m =
        moments(test::values(random::laplace({20000}, float32, 1.0f, 2.0f, random::key(4), dev)));
    EXPECT_NEAR(m.mean, 1.0, 0.06) << what;
    EXPECT_NEAR(m.variance, 8.0, 0.4) << what;
  }
}

TEST(RandomPermutation, IsArgsortOfBitsAndKeepsEveryElement) {
  for (Device dev : test::test_devices()) {
    const std::string what = test::device_name(dev);
    std::vector<double> p = test::values(random::permutation(4, std::nullopt, dev));
    std::sort(p.begin(), p.end());
    EXPECT_EQ(p, (std::vector<double>{0, 1, 2, 3})) << what;
    const array k = random::key(6);
    EXPECT_EQ(test::values(random::permutation(100, k, dev)),
              test::values(argsort(random::bits({100}, k, dev))));
    EXPECT_EQ(random::permutation(100, k, dev).dtype(), uint32);

    const array x = reshape(arange(16), {4, 4});
    for (int axis : {0, 1}) {
      array out = random::permutation(x, axis, std::nullopt, dev);
      EXPECT_TRUE(array_equal(sort(out, axis), x).item<bool>()) << what;
    }
    EXPECT_FALSE(array_equal(random::permutation(16384, std::nullopt, dev), arange(16384)).item<bool>());
    array one = random::permutation(array({1}, {1, 1}), 0, std::nullopt, dev);
    EXPECT_EQ(one.shape(), (Shape{1, 1}));
    EXPECT_EQ(one.dtype(), int32);
  }
}

TEST(RandomDtypes, FollowMlxsRules) {
  EXPECT_THROW(random::uniform({}, int32), std::invalid_argument);
  EXPECT_THROW(random::uniform({}, float64), std::invalid_argument);  // MLX has no float64 uniform
  EXPECT_THROW(random::normal({}, int32), std::invalid_argument);
  EXPECT_THROW(random::randint(array(3), array(5), {1}, float32), std::invalid_argument);
  EXPECT_THROW(random::laplace({}, int32), std::invalid_argument);
  EXPECT_THROW(random::truncated_normal(array(0.0f), array(1.0f), int32), std::invalid_argument);
  EXPECT_THROW(random::bernoulli(array(1, int32)), std::invalid_argument);
  for (Dtype dt : {int8, int32, int64, uint8, uint32, uint64, float16, bfloat16}) {
    EXPECT_THROW(random::multivariate_normal(array({0.0f, 0.0f}), eye(2), {}, dt), std::invalid_argument);
  }
  for (int width : {0, 3, 5, -1})
    EXPECT_THROW(random::bits({}, width, random::key(0)), std::invalid_argument);
  for (const array& bad :
       {array({0, 0}), array({0, 0}, {1, 2}), array({0u, 0u, 0u}, {3, 1}), array({0u, 0u}, {2, 1})}) {
    EXPECT_THROW(random::uniform({}, bad), std::invalid_argument);
    EXPECT_THROW(random::normal({}, bad), std::invalid_argument);
    EXPECT_THROW(random::randint(0, 5, {}, int32, bad), std::invalid_argument);
  }
  EXPECT_EQ(random::gumbel({1, 1}).dtype(), float32);
}

// ---- threads ----

// Keys drawn by 8 threads at once are all different, and together they are exactly the first
// keys of the sequence drawn alone: the draws were linearized, none lost or repeated.
TEST(RandomThreads, EightThreadsDrawDistinctKeysOfTheOneSequence) {
  braid_test::Watchdog watchdog;
  constexpr int kThreads = 8;
  const int per_thread = test::kSanitized ? 50 : 200;
  const uint64_t seed = 20240611;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  random::seed(seed);
  std::vector<std::vector<Pair>> drawn(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) drawn[t].push_back(key_of(random::KeySequence::default_().next()));
    });
  }
  for (auto& th : threads) th.join();
  std::multiset<Pair> got;
  for (const auto& keys : drawn) got.insert(keys.begin(), keys.end());
  std::multiset<Pair> want;
  Pair state = {uint32_t(seed >> 32), uint32_t(seed)};
  for (int i = 0; i < kThreads * per_thread; ++i) {
    auto [next, handed_out] = reference_split(state);
    want.insert(handed_out);
    state = next;
  }
  EXPECT_EQ(std::set<Pair>(got.begin(), got.end()).size(), got.size()) << "a key was drawn twice";
  EXPECT_EQ(got, want);
}

TEST(RandomThreads, DrawsWithoutAKeyOnManyThreadsNeverRepeat) {
  braid_test::Watchdog watchdog;
  constexpr int kThreads = 8, kDraws = 20;
  std::vector<std::vector<std::vector<double>>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kDraws; ++i) got[t].push_back(test::values(random::bits({4})));
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::vector<double>> distinct;
  for (const auto& per : got) distinct.insert(per.begin(), per.end());
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kThreads * kDraws));
}

TEST(RandomThreads, ASeededProgramGivesTheSameNumbersOnAnyThread) {
  braid_test::Watchdog watchdog;
  random::seed(7);
  const std::vector<double> here = test::values(random::uniform({8}));
  const std::vector<double> here2 = test::values(random::normal({8}));
  std::vector<double> there, there2;
  std::thread([&] {
    random::seed(7);
    there = test::values(random::uniform({8}));
    there2 = test::values(random::normal({8}));
  }).join();
  EXPECT_EQ(here, there);
  EXPECT_EQ(here2, there2);
}

TEST(RandomThreads, ExplicitKeysGiveTheSameBitsOnEveryThreadAndDevice) {
  braid_test::Watchdog watchdog;
  const array k = random::key(42);
  const std::vector<double> want = reference_bits({0u, 42u}, 1001, 4);
  for (Device dev : test::test_devices()) {
    std::vector<std::vector<double>> got(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] { got[t] = test::values(random::bits({1001}, k, dev)); });
    }
    for (auto& th : threads) th.join();
    for (const auto& g : got) EXPECT_EQ(g, want) << test::device_name(dev);
  }
}
