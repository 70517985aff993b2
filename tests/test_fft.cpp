// braid::fft on every device, against a direct DFT computed here in double: every length up to
// 64, primes (Bluestein's path on the CPU), powers of two up to 2^16, padding and truncation,
// several axes, views, the real transforms and their round trips, every norm, the shifts, the
// sample frequencies, the errors, and the derivatives (finite differences: every transform is
// linear) and vmap.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "braid/fft.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using fft::FFTNorm;

namespace {

using cd = std::complex<double>;

const FFTNorm kNorms[] = {FFTNorm::Backward, FFTNorm::Ortho, FFTNorm::Forward};

std::string norm_name(FFTNorm norm) {
  switch (norm) {
    case FFTNorm::Backward: return "backward";
    case FFTNorm::Ortho: return "ortho";
    case FFTNorm::Forward: return "forward";
  }
  return "?";
}

// NumPy's factor on the unscaled sum over N points: forward transforms 1, 1 / sqrt(N) or 1 / N
// for backward, ortho and forward; inverse ones 1 / N, 1 / sqrt(N) or 1.
double numpy_scale(FFTNorm norm, double size, bool inverse) {
  switch (norm) {
    case FFTNorm::Backward: return inverse ? 1.0 / size : 1.0;
    case FFTNorm::Ortho: return 1.0 / std::sqrt(size);
    case FFTNorm::Forward: return inverse ? 1.0 : 1.0 / size;
  }
  return 0.0;
}

std::vector<cd> scaled(std::vector<cd> v, double by) {
  for (auto& x : v) x *= by;
  return v;
}

std::vector<cd> random_complex(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<cd> v(n);
  for (auto& x : v) x = cd(static_cast<float>(d(rng)), static_cast<float>(d(rng)));
  return v;
}

std::vector<cd> random_real(size_t n, uint32_t seed) {
  auto v = random_complex(n, seed);
  for (auto& x : v) x = cd(x.real(), 0.0);
  return v;
}

array complex_array(const std::vector<cd>& v, const Shape& shape) {
  std::vector<complex64_t> c;
  for (const auto& x : v) c.emplace_back(static_cast<float>(x.real()), static_cast<float>(x.imag()));
  return array(c.begin(), shape, complex64);
}

array real_array(const std::vector<cd>& v, const Shape& shape) {
  std::vector<float> r;
  for (const auto& x : v) r.push_back(static_cast<float>(x.real()));
  return array(r.begin(), shape, float32);
}

std::vector<cd> read(const array& a) {
  std::vector<cd> out;
  if (a.dtype() == complex64) {
    for (const auto& c : test::complex_values(a)) out.emplace_back(c.real(), c.imag());
  } else {
    for (double x : test::values(a)) out.emplace_back(x, 0.0);
  }
  return out;
}

// Bin k of the DFT of n points read `stride` apart from x: exp(-+2 pi i jk / n), jk taken mod n
// so the angle stays exact.
cd dft_bin(const cd* x, int64_t n, int64_t stride, int64_t k, bool inverse) {
  const double sign = inverse ? 1.0 : -1.0;
  cd acc = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double angle =
        sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
    acc += x[j * stride] * cd(std::cos(angle), std::sin(angle));
  }
  return inverse ? acc / static_cast<double>(n) : acc;
}

// The DFT along `axis` of a row-major array of `shape` (the n roots of unity tabulated once).
std::vector<cd> dft_axis(const std::vector<cd>& x, const Shape& shape, int axis, bool inverse) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < static_cast<int>(shape.size()); ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  std::vector<cd> roots(n);
  for (int64_t t = 0; t < n; ++t) {
    const double angle =
        (inverse ? 2.0 : -2.0) * std::numbers::pi * static_cast<double>(t) / static_cast<double>(n);
    roots[t] = cd(std::cos(angle), std::sin(angle));
  }
  std::vector<cd> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const cd* line = x.data() + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) {
        cd acc = 0;
        for (int64_t j = 0, jk = 0; j < n; ++j, jk = (jk + k) % n) acc += line[j * inner] * roots[jk];
        y[o * n * inner + i + k * inner] = inverse ? acc / static_cast<double>(n) : acc;
      }
    }
  }
  return y;
}

// x zero-padded or truncated to `shape` (row-major both).
std::vector<cd> resize(const std::vector<cd>& x, const Shape& from, const Shape& to) {
  size_t total = 1;
  for (int d : to) total *= static_cast<size_t>(d);
  std::vector<cd> y(total, 0.0);
  std::vector<int> idx(to.size(), 0);
  for (size_t flat = 0; flat < total; ++flat) {
    size_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < to.size(); ++d) {
      if (idx[d] >= from[d]) inside = false;
      src = src * static_cast<size_t>(from[d]) + static_cast<size_t>(std::min(idx[d], from[d] - 1));
    }
    if (inside) y[flat] = x[src];
    for (int d = static_cast<int>(to.size()) - 1; d >= 0; --d) {
      if (++idx[d] < to[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

// The largest |got - want| relative to the root mean square of `want` (at least 1): float32
// transforms err by a few ulps of the spectrum's scale, not of each bin.
double spectrum_error(const std::vector<cd>& got, const std::vector<cd>& want) {
  EXPECT_EQ(got.size(), want.size());
  double rms = 0, worst = 0;
  for (const auto& w : want) rms += std::norm(w);
  rms = std::max(1.0, std::sqrt(rms / std::max<size_t>(1, want.size())));
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst / rms;
}

// float32 error bound for a transform of length n (its rounding grows with log n).
double tolerance(int64_t n) { return 2e-6 * (4.0 + std::log2(static_cast<double>(std::max<int64_t>(n, 2)))); }

void expect_spectrum(const array& got, const std::vector<cd>& want, Dtype dtype, const Shape& shape,
                     double tol, const std::string& what) {
  EXPECT_EQ(got.dtype(), dtype) << what;
  EXPECT_EQ(got.shape(), shape) << what;
  const double err = spectrum_error(read(got), want);
  EXPECT_LE(err, tol) << what;
}

// The first n / 2 + 1 bins along the last axis of rows of n.
std::vector<cd> half_spectrum(const std::vector<cd>& full, int64_t rows, int64_t n) {
  std::vector<cd> out;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k <= n / 2; ++k) out.push_back(full[r * n + k]);
  }
  return out;
}

// The real signal of n points whose half spectrum is `half` (m = n / 2 + 1 bins per row), as
// NumPy's irfft: the imaginary parts of bin 0 and, for an even n, bin n / 2 do not count.
std::vector<cd> inverse_half_spectrum(const std::vector<cd>& half, int64_t rows, int64_t n) {
  const int64_t m = n / 2 + 1;
  std::vector<cd> full(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < m; ++k) full[r * n + k] = half[r * m + k];
    for (int64_t k = m; k < n; ++k) full[r * n + k] = std::conj(full[r * n + n - k]);
  }
  std::vector<cd> out = dft_axis(full, {static_cast<int>(rows), static_cast<int>(n)}, 1, true);
  for (auto& v : out) v = cd(v.real(), 0.0);
  return out;
}

std::string on(const Device& dev, int64_t n) { return test::device_name(dev) + ", n = " + std::to_string(n); }

// Complex and real transforms of `rows` rows of length n, forward and inverse, against the DFT.
void check_length(int64_t n, int rows, const Device& dev) {
  const Shape shape{rows, static_cast<int>(n)};
  const auto x = random_complex(static_cast<size_t>(rows * n), static_cast<uint32_t>(n));
  const array xa = complex_array(x, shape);
  const double tol = tolerance(n);
  expect_spectrum(fft::fft(xa, -1, dev), dft_axis(x, shape, 1, false), complex64, shape, tol,
                  "fft " + on(dev, n));
  expect_spectrum(fft::ifft(xa, -1, dev), dft_axis(x, shape, 1, true), complex64, shape, tol,
                  "ifft " + on(dev, n));

  const auto r = random_real(static_cast<size_t>(rows * n), static_cast<uint32_t>(n + 1));
  const Shape half_shape{rows, static_cast<int>(n / 2 + 1)};
  const auto spectrum = half_spectrum(dft_axis(r, shape, 1, false), rows, n);
  expect_spectrum(fft::rfft(real_array(r, shape), -1, dev), spectrum, complex64, half_shape, tol,
                  "rfft " + on(dev, n));
  // irfft of an arbitrary half spectrum (its edge bins' imaginary parts ignored).
  const auto h = random_complex(static_cast<size_t>(rows * (n / 2 + 1)), static_cast<uint32_t>(n + 2));
  expect_spectrum(fft::irfft(complex_array(h, half_shape), static_cast<int>(n), -1, dev),
                  inverse_half_spectrum(h, rows, n), float32, shape, tol, "irfft " + on(dev, n));
}

// Bins sampled from a long transform (a direct DFT of every bin would take too long).
void check_long_length(int64_t n, const Device& dev) {
  const Shape shape{static_cast<int>(n)};
  const auto x = random_complex(static_cast<size_t>(n), static_cast<uint32_t>(n));
  const auto got = read(fft::fft(complex_array(x, shape), -1, dev));
  const auto r = random_real(static_cast<size_t>(n), static_cast<uint32_t>(n + 1));
  const auto got_real = read(fft::rfft(real_array(r, shape), -1, dev));
  const auto back = read(fft::ifft(fft::fft(complex_array(x, shape), -1, dev), -1, dev));
  const auto back_real =
      read(fft::irfft(fft::rfft(real_array(r, shape), -1, dev), static_cast<int>(n), -1, dev));
  ASSERT_EQ(got.size(), static_cast<size_t>(n));
  ASSERT_EQ(got_real.size(), static_cast<size_t>(n / 2 + 1));
  const double scale = std::sqrt(static_cast<double>(n));  // the spectrum's rms for unit-variance noise
  std::mt19937 rng(static_cast<uint32_t>(n));
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::vector<int64_t> bins = {0, 1, n / 2, n - 1};
  for (int i = 0; i < 12; ++i) bins.push_back(pick(rng));
  for (int64_t k : bins) {
    EXPECT_LE(std::abs(got[k] - dft_bin(x.data(), n, 1, k, false)), tolerance(n) * scale * 2)
        << "fft bin " << k << ", " << on(dev, n);
    const int64_t kr = k % (n / 2 + 1);
    EXPECT_LE(std::abs(got_real[kr] - dft_bin(r.data(), n, 1, kr, false)), tolerance(n) * scale)
        << "rfft bin " << kr << ", " << on(dev, n);
  }
  EXPECT_LE(spectrum_error(back, x), tolerance(n) * 2) << "ifft(fft(x)), " << on(dev, n);
  EXPECT_LE(spectrum_error(back_real, r), tolerance(n) * 2) << "irfft(rfft(x)), " << on(dev, n);
}

}  // namespace

TEST(Fft, EveryLengthUpTo64MatchesTheDft) {
  for (const Device& dev : test::test_devices()) {
    for (int64_t n = 1; n <= 64; ++n) check_length(n, 3, dev);
  }
}

TEST(Fft, PrimeAndAwkwardLengthsMatchTheDft) {
  // 97 and 1009 are primes past kissfft's small radices (Bluestein's path on the CPU), 2 * 1009
  // an even length whose half is such a prime (the real transforms' other path), 67 * 71 two
  // large prime factors, 3 * 5 * 7 * 64 kissfft's own mixed radix.
  // The sanitizer builds (whose reference DFT runs unoptimized) take the shorter ones.
  const std::vector<int64_t> lengths =
      test::kSanitized ? std::vector<int64_t>{97, 2 * 1009}
                       : std::vector<int64_t>{97, 127, 1009, 2 * 1009, 67 * 71, 3 * 5 * 7 * 64};
  for (const Device& dev : test::test_devices()) {
    for (int64_t n : lengths) check_length(n, 2, dev);
  }
}

TEST(Fft, LongTransformsMatchSampledBins) {
  const int top = test::kSanitized ? 12 : 16;
  for (const Device& dev : test::test_devices()) {
    for (int k = 10; k <= top; k += 2) check_long_length(int64_t{1} << k, dev);
    check_long_length(65537, dev);      // a prime: Bluestein's path at 2^18 points
    check_long_length(2 * 32771, dev);  // an even length over a prime half
  }
}

TEST(Fft, SizesPadWithZerosOrTruncate) {
  const Shape shape{3, 10};
  const auto x = random_complex(30, 11);
  const array xa = complex_array(x, shape);
  for (const Device& dev : test::test_devices()) {
    for (int n : {1, 4, 10, 16, 23}) {
      const Shape to{3, n};
      const auto want = dft_axis(resize(x, shape, to), to, 1, false);
      expect_spectrum(fft::fft(xa, n, 1, dev), want, complex64, to, tolerance(n), "fft " + on(dev, n));
      const auto inv = dft_axis(resize(x, shape, to), to, 1, true);
      expect_spectrum(fft::ifft(xa, n, -1, dev), inv, complex64, to, tolerance(n), "ifft " + on(dev, n));
      // The real transform reads the real parts.
      std::vector<cd> r(x.size());
      for (size_t i = 0; i < x.size(); ++i) r[i] = x[i].real();
      const auto rspec = half_spectrum(dft_axis(resize(r, shape, to), to, 1, false), 3, n);
      expect_spectrum(fft::rfft(xa, n, 1, dev), rspec, complex64, {3, n / 2 + 1}, tolerance(n),
                      "rfft of a complex input " + on(dev, n));
      // irfft: n output points from the first n / 2 + 1 bins (padded or truncated).
      const Shape bins{3, n / 2 + 1};
      expect_spectrum(fft::irfft(xa, n, 1, dev), inverse_half_spectrum(resize(x, shape, bins), 3, n), float32,
                      to, tolerance(n), "irfft " + on(dev, n));
    }
    // Along axis 0, padding one axis and truncating another.
    const auto want = dft_axis(dft_axis(resize(x, shape, {5, 7}), {5, 7}, 0, false), {5, 7}, 1, false);
    expect_spectrum(fft::fft2(xa, {5, 7}, {0, 1}, dev), want, complex64, {5, 7}, tolerance(35),
                    "fft2 resized");
    // The default irfft length is 2 * (m - 1).
    EXPECT_EQ(fft::irfft(xa, -1, dev).shape(), (Shape{3, 18}));
    EXPECT_EQ(fft::irfft2(complex_array(random_complex(12, 3), {3, 4}), {-2, -1}, dev).shape(),
              (Shape{3, 6}));
  }
}

TEST(Fft, SeveralAxesApplyOneAfterAnother) {
  const Shape shape{4, 3, 6};
  const auto x = random_complex(72, 21);
  const array xa = complex_array(x, shape);
  for (const Device& dev : test::test_devices()) {
    const std::string d = test::device_name(dev);
    auto along = [&](std::vector<cd> v, std::vector<int> axes, bool inverse) {
      for (int ax : axes) v = dft_axis(v, shape, ax, inverse);
      return v;
    };
    expect_spectrum(fft::fftn(xa, dev), along(x, {0, 1, 2}, false), complex64, shape, tolerance(72),
                    "fftn " + d);
    expect_spectrum(fft::ifftn(xa, dev), along(x, {0, 1, 2}, true), complex64, shape, tolerance(72),
                    "ifftn " + d);
    expect_spectrum(fft::fft2(xa, {-2, -1}, dev), along(x, {1, 2}, false), complex64, shape, tolerance(18),
                    "fft2 " + d);
    expect_spectrum(fft::fftn(xa, {2, 0}, dev), along(x, {0, 2}, false), complex64, shape, tolerance(24),
                    "fftn axes (2, 0) " + d);
    expect_spectrum(fft::ifft2(xa, {0, 1}, dev), along(x, {0, 1}, true), complex64, shape, tolerance(12),
                    "ifft2 axes (0, 1) " + d);

    // rfftn over (0, 2): the last listed axis (2) is halved; over (2, 0) axis 0 is.
    std::vector<cd> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) r[i] = x[i].real();
    const array ra = real_array(r, shape);
    array spec = fft::rfftn(ra, {0, 2}, dev);
    EXPECT_EQ(spec.shape(), (Shape{4, 3, 4})) << d;
    const auto full = along(r, {0, 2}, false);
    expect_spectrum(spec, resize(full, shape, {4, 3, 4}), complex64, {4, 3, 4}, tolerance(24),
                    "rfftn (0, 2) " + d);
    EXPECT_EQ(fft::rfftn(ra, {2, 0}, dev).shape(), (Shape{3, 3, 6})) << d;
    expect_spectrum(fft::rfftn(ra, {2, 0}, dev), resize(full, shape, {3, 3, 6}), complex64, {3, 3, 6},
                    tolerance(24), "rfftn (2, 0) " + d);
    // Round trips of the real transforms, even and odd last sizes.
    expect_spectrum(fft::irfftn(spec, {4, 6}, {0, 2}, dev), r, float32, shape, tolerance(24), "irfftn " + d);
    expect_spectrum(fft::irfft2(fft::rfft2(ra, {-2, -1}, dev), {3, 6}, {-2, -1}, dev), r, float32, shape,
                    tolerance(18), "irfft2 " + d);
    const auto odd = random_real(45, 5);
    const array oa = real_array(odd, {5, 9});
    expect_spectrum(fft::irfftn(fft::rfftn(oa, dev), {5, 9}, {0, 1}, dev), odd, float32, {5, 9},
                    tolerance(45), "irfftn odd " + d);
  }
}

TEST(Fft, EveryNormScalesTheSumsAsNumPy) {
  // dft_axis's inverse divides by the length; times the length it is the unscaled sum.
  const Shape shape{3, 10};
  const auto x = random_complex(30, 61);
  const array xa = complex_array(x, shape);
  std::vector<cd> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = x[i].real();
  const array ra = real_array(r, shape);
  for (const Device& dev : test::test_devices()) {
    for (FFTNorm norm : kNorms) {
      const std::string d = norm_name(norm) + " on " + test::device_name(dev);
      // One axis: N is the requested size, not the input's.
      for (int n : {10, 16, 7}) {
        const Shape to{3, n};
        const auto sum = dft_axis(resize(x, shape, to), to, 1, false);
        const auto inverse_sum = scaled(dft_axis(resize(x, shape, to), to, 1, true), n);
        expect_spectrum(fft::fft(xa, n, 1, norm, dev), scaled(sum, numpy_scale(norm, n, false)), complex64,
                        to, tolerance(n), "fft " + d + ", n = " + std::to_string(n));
        expect_spectrum(fft::ifft(xa, n, 1, norm, dev), scaled(inverse_sum, numpy_scale(norm, n, true)),
                        complex64, to, tolerance(n), "ifft " + d + ", n = " + std::to_string(n));
        const auto half = half_spectrum(dft_axis(resize(r, shape, to), to, 1, false), 3, n);
        expect_spectrum(fft::rfft(ra, n, 1, norm, dev), scaled(half, numpy_scale(norm, n, false)), complex64,
                        {3, n / 2 + 1}, tolerance(n), "rfft " + d + ", n = " + std::to_string(n));
        // irfft's N is its output size.
        const auto real_sum = scaled(inverse_half_spectrum(resize(x, shape, {3, n / 2 + 1}), 3, n), n);
        expect_spectrum(fft::irfft(xa, n, 1, norm, dev), scaled(real_sum, numpy_scale(norm, n, true)),
                        float32, to, tolerance(n), "irfft " + d + ", n = " + std::to_string(n));
      }
      // Several axes: N is the product of the sizes, here resized to 4 x 8.
      const Shape to{4, 8};
      const auto v = resize(x, shape, to);
      const auto sum = dft_axis(dft_axis(v, to, 0, false), to, 1, false);
      const auto inverse_sum = scaled(dft_axis(dft_axis(v, to, 0, true), to, 1, true), 32);
      expect_spectrum(fft::fftn(xa, to, {0, 1}, norm, dev), scaled(sum, numpy_scale(norm, 32, false)),
                      complex64, to, tolerance(32), "fftn " + d);
      expect_spectrum(fft::ifftn(xa, to, {0, 1}, norm, dev), scaled(inverse_sum, numpy_scale(norm, 32, true)),
                      complex64, to, tolerance(32), "ifftn " + d);
      expect_spectrum(fft::fft2(xa, to, {0, 1}, norm, dev), scaled(sum, numpy_scale(norm, 32, false)),
                      complex64, to, tolerance(32), "fft2 " + d);
      expect_spectrum(fft::ifft2(xa, {-2, -1}, norm, dev),
                      scaled(read(fft::ifft2(xa, {-2, -1}, dev)), numpy_scale(norm, 30, true) * 30),
                      complex64, shape, tolerance(30), "ifft2 at its sizes " + d);
      const auto rv = resize(r, shape, to);
      const auto rsum = resize(dft_axis(dft_axis(rv, to, 0, false), to, 1, false), to, {4, 5});
      expect_spectrum(fft::rfftn(ra, to, {0, 1}, norm, dev), scaled(rsum, numpy_scale(norm, 32, false)),
                      complex64, {4, 5}, tolerance(32), "rfftn " + d);
      expect_spectrum(fft::rfft2(ra, {-2, -1}, norm, dev),
                      scaled(read(fft::rfft2(ra, {-2, -1}, dev)), numpy_scale(norm, 30, false)), complex64,
                      {3, 6}, tolerance(30), "rfft2 at its sizes " + d);
      // The real inverses against the backward result, rescaled: N is the output's 4 x 8 (4 x 7).
      const array h = complex_array(random_complex(20, 62), {4, 5});
      expect_spectrum(fft::irfftn(h, to, {0, 1}, norm, dev),
                      scaled(read(fft::irfftn(h, to, {0, 1}, dev)), numpy_scale(norm, 32, true) * 32),
                      float32, to, tolerance(32), "irfftn " + d);
      expect_spectrum(fft::irfft2(h, {4, 7}, {0, 1}, norm, dev),
                      scaled(read(fft::irfft2(h, {4, 7}, {0, 1}, dev)), numpy_scale(norm, 28, true) * 28),
                      float32, {4, 7}, tolerance(28), "irfft2 " + d);
    }
  }
}

TEST(Fft, EachNormsInverseUndoesItsTransformAndOrthoKeepsTheEnergy) {
  const auto x = random_complex(4 * 12, 63);
  const array xa = complex_array(x, {4, 12});
  const auto r = random_real(5 * 9, 64);
  const array ra = real_array(r, {5, 9});
  for (const Device& dev : test::test_devices()) {
    for (FFTNorm norm : kNorms) {
      const std::string d = norm_name(norm) + " on " + test::device_name(dev);
      expect_spectrum(fft::ifft(fft::fft(xa, -1, norm, dev), -1, norm, dev), x, complex64, {4, 12},
                      tolerance(12), "ifft(fft) " + d);
      expect_spectrum(fft::ifftn(fft::fftn(xa, norm, dev), norm, dev), x, complex64, {4, 12}, tolerance(48),
                      "ifftn(fftn) " + d);
      expect_spectrum(fft::irfft(fft::rfft(ra, -1, norm, dev), 9, -1, norm, dev), r, float32, {5, 9},
                      tolerance(9), "irfft(rfft) " + d);
      expect_spectrum(fft::irfftn(fft::rfftn(ra, norm, dev), {5, 9}, {0, 1}, norm, dev), r, float32, {5, 9},
                      tolerance(45), "irfftn(rfftn) " + d);
    }
    // Parseval: the orthonormal transform keeps sum |x|^2.
    double energy = 0, spectrum_energy = 0;
    for (const auto& v : x) energy += std::norm(v);
    for (const auto& v : read(fft::fft2(xa, {-2, -1}, FFTNorm::Ortho, dev))) spectrum_energy += std::norm(v);
    EXPECT_NEAR(spectrum_energy, energy, energy * 1e-5) << test::device_name(dev);
  }
}

TEST(Fft, FrequenciesAreNumPysFftfreqAndRfftfreq) {
  auto expect_frequencies = [](const array& got, const std::vector<double>& want, const std::string& what) {
    EXPECT_EQ(got.dtype(), float32) << what;
    ASSERT_EQ(got.shape(), (Shape{static_cast<int>(want.size())})) << what;
    const auto values = test::values(got);
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_NEAR(values[k], want[k], 1e-6 * std::max(1.0, std::abs(want[k]))) << what << ", bin " << k;
    }
  };
  for (const Device& dev : test::test_devices()) {
    const std::string d = test::device_name(dev);
    expect_frequencies(fft::fftfreq(5, 1.0, dev), {0, 0.2, 0.4, -0.4, -0.2}, "fftfreq(5) " + d);
    expect_frequencies(fft::fftfreq(4, 0.5, dev), {0, 0.5, -1, -0.5}, "fftfreq(4, 0.5) " + d);
    expect_frequencies(fft::rfftfreq(5, 1.0, dev), {0, 0.2, 0.4}, "rfftfreq(5) " + d);
    expect_frequencies(fft::rfftfreq(4, 0.5, dev), {0, 0.5, 1}, "rfftfreq(4, 0.5) " + d);
    for (int n : {1, 2, 3, 8, 9, 64, 101}) {
      for (double spacing : {1.0, 0.1, -2.5}) {
        std::vector<double> want, want_half;
        for (int k = 0; k < n; ++k) want.push_back((k < (n + 1) / 2 ? k : k - n) / (n * spacing));
        for (int k = 0; k <= n / 2; ++k) want_half.push_back(k / (n * spacing));
        const std::string what = "n = " + std::to_string(n) + ", d = " + std::to_string(spacing) + " " + d;
        expect_frequencies(fft::fftfreq(n, spacing, dev), want, "fftfreq " + what);
        expect_frequencies(fft::rfftfreq(n, spacing, dev), want_half, "rfftfreq " + what);
      }
    }
  }
  // d defaults to 1.
  EXPECT_EQ(test::values(fft::fftfreq(4)), (std::vector<double>{0, 0.25, -0.5, -0.25}));
  EXPECT_EQ(test::values(fft::rfftfreq(4)), (std::vector<double>{0, 0.25, 0.5}));
}

TEST(Fft, ViewsAndOtherDtypesTransformAsTheirValues) {
  const auto x = random_complex(48, 31);
  const array xa = complex_array(x, {6, 8});
  for (const Device& dev : test::test_devices()) {
    const std::string d = test::device_name(dev);
    for (const array& view : {transpose(xa), slice(xa, {0, 1}, {6, 8}, {2, 3}),
                              broadcast_to(slice(xa, {0, 0}, {1, 8}), {5, 8})}) {
      const array copy = contiguous(view);
      for (int axis : {0, 1}) {
        expect_spectrum(fft::fft(view, axis, dev), read(fft::fft(copy, axis, dev)), complex64, view.shape(),
                        1e-6, "fft of a view, axis " + std::to_string(axis) + " " + d);
        expect_spectrum(fft::rfft(view, axis, dev), read(fft::rfft(copy, axis, dev)), complex64,
                        fft::rfft(copy, axis, dev).shape(), 1e-6, "rfft of a view " + d);
        expect_spectrum(fft::irfft(view, axis, dev), read(fft::irfft(copy, axis, dev)), float32,
                        fft::irfft(copy, axis, dev).shape(), 1e-6, "irfft of a view " + d);
      }
    }
    // Integer and float64 inputs become complex64 (rfft: float32) first.
    const array ints = array({1, 2, 3, 4, 5}, int32);
    const array as_complex = astype(ints, complex64);
    expect_spectrum(fft::fft(ints, -1, dev), read(fft::fft(as_complex, -1, dev)), complex64, {5}, 1e-7,
                    "int " + d);
    expect_spectrum(fft::rfft(astype(ints, float64), -1, dev), read(fft::rfft(as_complex, -1, dev)),
                    complex64, {3}, 1e-7, "float64 " + d);
    EXPECT_EQ(fft::irfft(ints, -1, dev).dtype(), float32) << d;
    EXPECT_EQ(fft::fftn(zeros({2, 0, 3}), {0, 2}, dev).shape(), (Shape{2, 0, 3})) << "empty " << d;
  }
}

TEST(Fft, ShiftsRollByHalfTheAxis) {
  for (const Device& dev : test::test_devices()) {
    const array a = reshape(arange(0, 20, int32), {4, 5});
    // NumPy's fftshift moves index i to (i + n / 2) mod n; ifftshift undoes it.
    const std::vector<double> shifted = test::values(fft::fftshift(a, dev));
    const std::vector<double> want = {13, 14, 10, 11, 12, 18, 19, 15, 16, 17, 3, 4, 0, 1, 2, 8, 9, 5, 6, 7};
    EXPECT_EQ(shifted, want);
    EXPECT_EQ(test::values(fft::ifftshift(fft::fftshift(a, dev), dev)), test::values(a));
    EXPECT_EQ(test::values(fft::fftshift(a, {1}, dev)),
              (std::vector<double>{3, 4, 0, 1, 2, 8, 9, 5, 6, 7, 13, 14, 10, 11, 12, 18, 19, 15, 16, 17}));
    EXPECT_EQ(test::values(fft::ifftshift(a, {-1}, dev)),
              (std::vector<double>{2, 3, 4, 0, 1, 7, 8, 9, 5, 6, 12, 13, 14, 10, 11, 17, 18, 19, 15, 16}));
    EXPECT_EQ(fft::fftshift(array(3.0f), dev).ndim(), 0u);
    EXPECT_EQ(fft::fftshift(zeros({0}), dev).shape(), (Shape{0}));
    EXPECT_EQ(fft::fftshift(a, std::vector<int>{}, dev).shape(), a.shape());
  }
}

TEST(Fft, InvalidCallsThrowMlxsErrors) {
  auto expect_invalid = [](auto f, const std::string& prefix) {
    try {
      f();
      ADD_FAILURE() << "no error; expected " << prefix;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    }
  };
  const array a = zeros({4, 4}, complex64);
  expect_invalid([] { fft::fftn(array(3.0f)); }, "[fftn] Requires array with at least one dimension.");
  expect_invalid([] { fft::irfftn(array(3.0f)); }, "[fftn] Requires array with at least one dimension.");
  expect_invalid([&] { fft::fftn(a, {4}, {0, 1}); }, "[fftn] Shape and axes have different sizes.");
  expect_invalid([&] { fft::fftn(a, {0, -2}); }, "[fftn] Duplicated axis received");
  expect_invalid([&] { fft::fft(a, 2); }, "[fftn] Invalid axis received for array with 2 dimensions.");
  expect_invalid([&] { fft::fft2(a, {-3, 0}); }, "[fftn] Invalid axis received");
  expect_invalid([&] { fft::fft(a, 0, 0); }, "[fftn] Invalid FFT output size requested");
  expect_invalid([&] { fft::rfft(a, -3, 1); }, "[fftn] Invalid FFT output size requested");
  expect_invalid([] { fft::irfft(zeros({3, 1}, complex64)); }, "[fftn] Invalid FFT output size requested");
  expect_invalid([&] { fft::fftshift(a, {2}); }, "[fftshift] Invalid axis 2 for array with 2 dimensions.");
  expect_invalid([&] { fft::ifftshift(a, {-3}); },
                 "[ifftshift] Invalid axis -3 for array with 2 dimensions.");
  expect_invalid([&] { fft::fft(a, 0, 0, FFTNorm::Ortho); }, "[fftn] Invalid FFT output size requested");
  expect_invalid([&] { fft::fft(a, -1, static_cast<FFTNorm>(3)); }, "[fftn] Invalid FFT normalization mode.");
  expect_invalid([] { fft::fftfreq(0); }, "[fftfreq] `n` must be greater than 0.");
  expect_invalid([] { fft::fftfreq(-4, 0.5); }, "[fftfreq] `n` must be greater than 0.");
  expect_invalid([] { fft::fftfreq(4, 0.0); }, "[fftfreq] `d` must be non-zero.");
  expect_invalid([] { fft::rfftfreq(0); }, "[rfftfreq] `n` must be greater than 0.");
  expect_invalid([] { fft::rfftfreq(4, -0.0); }, "[rfftfreq] `d` must be non-zero.");
  // No axes: the input itself, as MLX.
  EXPECT_EQ(fft::fftn(zeros({3}, int32), Shape{}, std::vector<int>{}).dtype(), int32);
}

TEST(Fft, GradientsMatchFiniteDifferences) {
  // Each transform is linear, so a central difference with any step is exact up to rounding:
  // checked for a real loss of the real and imaginary parts, in every input direction (for a
  // complex input, the gradient is dL/dx + i dL/dy).
  struct Case {
    std::string name;
    Shape shape;
    bool complex_input;
    std::function<array(const array&)> f;
  };
  const std::vector<Case> cases = {
      {"fft", {2, 5}, true, [](const array& x) { return fft::fft(x); }},
      {"ifft padded", {5}, true, [](const array& x) { return fft::ifft(x, 8, 0); }},
      {"fft of a real input, truncated", {6}, false, [](const array& x) { return fft::fft(x, 4, 0); }},
      {"fft2", {3, 4}, true, [](const array& x) { return fft::fft2(x); }},
      {"ifftn axes (1, 0)",
       {3, 4},
       true,
       [](const array& x) {
         return fft::ifftn(x, {1, 0});
       }},
      {"rfft even", {2, 6}, false, [](const array& x) { return fft::rfft(x); }},
      {"rfft odd, padded", {5}, false, [](const array& x) { return fft::rfft(x, 7, 0); }},
      {"rfft2", {3, 4}, false, [](const array& x) { return fft::rfft2(x); }},
      {"irfft even", {2, 4}, true, [](const array& x) { return fft::irfft(x); }},
      {"irfft odd", {4}, true, [](const array& x) { return fft::irfft(x, 7, 0); }},
      {"irfft2", {3, 4}, true, [](const array& x) { return fft::irfft2(x); }},
      {"irfftn axes (1, 0), odd",
       {4, 3},
       true,
       [](const array& x) {
         return fft::irfftn(x, {3, 5}, {1, 0});
       }},
      // The norms scale the transforms, and so their derivatives.
      {"fft ortho", {2, 5}, true, [](const array& x) { return fft::fft(x, -1, FFTNorm::Ortho); }},
      {"ifft forward, padded",
       {5},
       true,
       [](const array& x) { return fft::ifft(x, 8, 0, FFTNorm::Forward); }},
      {"fftn ortho axes (1, 0)",
       {3, 4},
       true,
       [](const array& x) {
         return fft::fftn(x, {1, 0}, FFTNorm::Ortho);
       }},
      {"rfft forward odd", {5}, false, [](const array& x) { return fft::rfft(x, -1, FFTNorm::Forward); }},
      {"rfft2 ortho",
       {3, 4},
       false,
       [](const array& x) {
         return fft::rfft2(x, {-2, -1}, FFTNorm::Ortho);
       }},
      {"irfft ortho odd", {4}, true, [](const array& x) { return fft::irfft(x, 7, 0, FFTNorm::Ortho); }},
      {"irfftn forward axes (1, 0)",
       {4, 3},
       true,
       [](const array& x) {
         return fft::irfftn(x, {3, 5}, {1, 0}, FFTNorm::Forward);
       }},
  };
  uint32_t seed = 100;
  for (const Device& dev : test::test_devices()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(c.name + " on " + test::device_name(dev));
      const size_t size = static_cast<size_t>(test::values(zeros(c.shape)).size());
      const auto x = c.complex_input ? random_complex(size, seed++) : random_real(size, seed++);
      const Shape out_shape =
          c.f(c.complex_input ? complex_array(x, c.shape) : real_array(x, c.shape)).shape();
      size_t out_size = 1;
      for (int d : out_shape) out_size *= static_cast<size_t>(d);
      const auto w = random_complex(out_size, seed++);
      const array wre = real_array(w, out_shape);
      std::vector<cd> wim_v(w.size());
      for (size_t i = 0; i < w.size(); ++i) wim_v[i] = w[i].imag();
      const array wim = real_array(wim_v, out_shape);
      // L = sum(Re(y) * wre + Im(y) * wim); a real output has no imaginary part.
      auto loss = [&](const array& in) {
        array y = c.f(in);
        return y.dtype() == complex64 ? sum(real(y) * wre + imag(y) * wim) : sum(y * wre);
      };
      auto make = [&](const std::vector<cd>& v) {
        return c.complex_input ? complex_array(v, c.shape) : real_array(v, c.shape);
      };
      StreamContext ctx(dev);
      const array g = grad(std::function<array(const array&)>(loss))(make(x));
      EXPECT_EQ(g.dtype(), c.complex_input ? complex64 : float32);
      EXPECT_EQ(g.shape(), c.shape);
      const auto got = read(g);
      std::vector<cd> want(size);
      const double h = 0.5;
      for (size_t i = 0; i < size; ++i) {
        for (const cd dir : {cd(1, 0), cd(0, 1)}) {
          if (!c.complex_input && dir.imag() != 0) continue;
          auto plus = x, minus = x;
          plus[i] += h * dir;
          minus[i] -= h * dir;
          const double d = (loss(make(plus)).item<float>() - loss(make(minus)).item<float>()) / (2 * h);
          want[i] += d * dir;
        }
      }
      EXPECT_LE(spectrum_error(got, want), 2e-5);

      // jvp: the transform of the tangent.
      const auto t = c.complex_input ? random_complex(size, seed++) : random_real(size, seed++);
      auto [outs, tangents] = jvp(
          [&](const std::vector<array>& in) { return std::vector<array>{c.f(in[0])}; }, {make(x)}, {make(t)});
      EXPECT_LE(spectrum_error(read(tangents[0]), read(c.f(make(t)))), 1e-6);
    }
  }
}

TEST(Fft, VmapMovesTheTransformedAxesPastTheBatch) {
  const auto x = random_complex(60, 41);
  const array xa = complex_array(x, {3, 4, 5});
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    const std::string d = test::device_name(dev);
    auto per_slice = [&](std::function<array(const array&)> f, int in_axis) {
      std::vector<array> slices;
      for (int k = 0; k < xa.shape(in_axis); ++k) slices.push_back(f(take(xa, k, in_axis)));
      return stack(slices, 0);
    };
    auto mapped = [&](std::function<array(const array&)> f, int in_axis) {
      return vmap([f](const std::vector<array>& in) { return std::vector<array>{f(in[0])}; }, {in_axis},
                  {0})({xa})[0];
    };
    const std::vector<std::pair<std::string, std::function<array(const array&)>>> fns = {
        {"fft axis 0", [](const array& v) { return fft::fft(v, 0); }},
        {"ifft2", [](const array& v) { return fft::ifft2(v); }},
        {"rfft", [](const array& v) { return fft::rfft(real(v)); }},
        {"irfft axis 0", [](const array& v) { return fft::irfft(v, 5, 0); }},
        {"rfftn (1, 0)",
         [](const array& v) {
           return fft::rfftn(real(v), {1, 0});
         }},
        {"ifft ortho axis 0", [](const array& v) { return fft::ifft(v, 0, FFTNorm::Ortho); }},
        {"irfft2 forward",
         [](const array& v) {
           return fft::irfft2(v, {-2, -1}, FFTNorm::Forward);
         }},
    };
    for (const auto& [name, f] : fns) {
      for (int in_axis : {0, 1, 2}) {
        const array want = per_slice(f, in_axis);
        const array got = mapped(f, in_axis);
        EXPECT_EQ(got.shape(), want.shape()) << name << " " << d;
        EXPECT_LE(spectrum_error(read(got), read(want)), 1e-6) << name << ", in axis " << in_axis << " " << d;
      }
    }
  }
}

TEST(FftThreads, TransformsOnManyThreadsAndStreamsAgree) {
  braid_test::Watchdog watchdog;
  const auto x = random_complex(4 * 1009, 51);
  const array xa = complex_array(x, {4, 1009});
  for (const Device& dev : test::test_devices()) {
    const auto want = read(fft::fft(xa, -1, dev));
    std::vector<std::vector<cd>> got(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        // Half the threads share the default stream of the device, half have their own.
        Stream s = t % 2 ? new_stream(dev) : default_stream(dev);
        got[t] = read(fft::fft(xa, -1, s));
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 8; ++t) EXPECT_EQ(spectrum_error(got[t], want), 0.0) << "thread " << t;
  }
}
