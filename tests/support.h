// Helpers shared by the op tests: the devices every op runs on, reading any array back as
// doubles, and building arrays of any dtype from doubles.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "braid/braid.h"

namespace braid::test {

/// True in the ThreadSanitizer and AddressSanitizer builds, which run 5-15x slower: tests
/// whose large sizes exist to reach the parallel paths cover fewer dtypes there (the small
/// cases still cover every dtype in every build).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

/// True in the ThreadSanitizer build, the slowest (every memory access is checked against
/// every thread's history). Large cases whose rows share one kernel run a representative row
/// there; the plain and ASan builds run every row.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitized = true;
#else
inline constexpr bool kThreadSanitized = false;
#endif

/// The NumPy-generated cases and archives: the build's own, or those in $BRAID_NUMPY_CASES
/// (e.g. generated on another machine, for one without NumPy).
/// Runs `build`, which must reject its input at graph build: std::invalid_argument, or
/// std::out_of_range (MLX's type for an axis out of range in the reductions and diagonal),
/// with a message starting with `prefix` ("[op]").
inline ::testing::AssertionResult throws_bad_input(const std::function<void()>& build,
                                                   const std::string& prefix) {
  auto check = [&](const std::string& what) {
    if (what.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << what << "\" does not start with " << prefix;
  };
  try {
    build();
  } catch (const std::invalid_argument& e) {
    return check(e.what());
  } catch (const std::out_of_range& e) {
    return check(e.what());
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw (expected " << prefix << ")";
}

inline std::string numpy_cases_dir() {
  const char* env = std::getenv("BRAID_NUMPY_CASES");
#ifdef BRAID_NUMPY_CASES_DIR
  return env && *env ? env : BRAID_NUMPY_CASES_DIR;
#else
  return env && *env ? env : "";
#endif
}

/// Every dtype, in Val order.
inline const std::vector<Dtype> kEveryDtype = {bool_,   uint8,   uint16,  uint32,  uint64,   int8,     int16,
                                               int32,   int64,   float16, float32, float64,  bfloat16, complex64};
inline const std::vector<Dtype> kRealFloatDtypes = {float16, bfloat16, float32, float64};
inline const std::vector<Dtype> kIntegerDtypes = {uint8, uint16, uint32, uint64, int8, int16, int32, int64};

/// The devices present: the CPU, and the GPU when this build and machine have one. An op test
/// loops over these, so the same description runs on every device.
inline std::vector<Device> test_devices() {
  std::vector<Device> d = {Device::cpu};
  if (is_available(Device::gpu)) d.push_back(Device::gpu);
  return d;
}

inline std::string device_name(const Device& d) { return d == Device::cpu ? "cpu" : "gpu"; }

/// The elements of `a` in row-major order, read on the CPU as dtype `as` (whose C++ type is
/// `Stored`) and converted to `Out`.
template <typename Stored, typename Out = Stored>
std::vector<Out> row_major(const array& a, Dtype as) {
  array r = reshape(a.dtype() == as ? copy(a, Device::cpu) : astype(a, as, Device::cpu), {-1}, Device::cpu);
  r.eval();
  std::vector<Out> out(r.size());
  const Stored* p = r.data<Stored>();
  const int64_t st = r.ndim() ? r.strides()[0] : 1;
  for (size_t i = 0; i < r.size(); ++i) out[i] = static_cast<Out>(p[static_cast<int64_t>(i) * st]);
  return out;
}

/// The elements of a complex64 array in row-major order.
inline std::vector<std::complex<float>> complex_values(const array& a) {
  return row_major<complex64_t, std::complex<float>>(a, complex64);
}

/// The elements of `a` (evaluated, any layout) in row-major order, as doubles; complex64
/// elements give their real part (use complex_values for both parts).
inline std::vector<double> values(const array& a) {
  if (a.dtype() == complex64) {
    std::vector<double> out;
    for (const auto& c : complex_values(a)) out.push_back(c.real());
    return out;
  }
  return row_major<double>(a, float64);
}

/// The elements of an array of C++ type T exactly (values goes through double, which loses
/// 64-bit integers past 2^53).
template <typename T>
std::vector<T> exact_values(const array& a) {
  return row_major<T>(a, a.dtype());
}

/// An array of `shape` and dtype `dt` from row-major doubles (converted as astype does).
inline array make(const std::vector<double>& v, const Shape& shape, Dtype dt) {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  if (v.size() != n) throw std::logic_error("test::make: " + std::to_string(v.size()) + " values for " + std::to_string(n) + " elements");
  return astype(array(v.begin(), shape, float64), dt, Device::cpu);
}

/// Expects equal shapes and elements within `atol + rtol * |expected|` (NaN matches NaN,
/// infinities must match exactly).
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  auto close = [&](size_t i) {
    const double g = got[i], w = want[i];
    if (std::isnan(w)) return std::isnan(g);
    if (std::isinf(w)) return g == w;
    return std::abs(g - w) <= atol + rtol * std::abs(w);
  };
  // One plain pass first: GoogleTest's per-element assertions cost more than the comparison,
  // most of all in the sanitizer builds. Only a mismatch goes through them.
  size_t first = 0;
  while (first < got.size() && close(first)) ++first;
  for (size_t i = first; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << " at " << i << ": got " << g << ", want NaN";
    } else if (std::isinf(w)) {
      EXPECT_EQ(g, w) << what << " at " << i;
    } else {
      EXPECT_LE(std::abs(g - w), atol + rtol * std::abs(w)) << what << " at " << i << ": got " << g << ", want " << w;
    }
  }
}

}  // namespace braid::test
