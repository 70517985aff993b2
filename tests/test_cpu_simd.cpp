// The CPU's AVX2 loops against the portable loops they stand in for (backend/cpu/*_avx2.cpp
// against reduce_simd.h and the scalar element-wise code): the same bits for every input, the
// payload of a NaN and the sign of a zero included. The AVX2 tables are called directly, so
// this holds whichever path BRAID_SCALAR_MATH picks for the ops.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/common/elementwise_ops.h"
#include "backend/cpu/reduce_simd.h"
#include "backend/cpu/vector_arith.h"

using namespace braid;

namespace {

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

bool scalar_math_forced() {
  const char* v = std::getenv("BRAID_SCALAR_MATH");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

float nan_with(uint32_t payload, bool negative) {
  return std::bit_cast<float>((negative ? 0xffc00000u : 0x7fc00000u) | (payload & 0x3fffffu));
}

// Random values with the cases that tell loops apart: zeros of both signs (max(-0, +0) keeps
// the first one it meets), NaNs with distinct payloads (the first NaN of a lane wins),
// infinities, subnormals, and magnitudes far apart (a sum's rounding depends on its order).
std::vector<float> tricky_values(int64_t n, uint32_t seed, int nan_per_mille) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 999);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    const int p = pick(rng);
    if (p < nan_per_mille) {
      x = nan_with(rng(), rng() & 1);
    } else if (p < 200) {
      x = (rng() & 1) ? -0.0f : 0.0f;
    } else if (p < 210) {
      x = (rng() & 1) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    } else if (p < 220) {
      x = unit(rng) * 1e-40f;
    } else if (p < 300) {
      x = unit(rng) * 1e7f;
    } else {
      x = unit(rng);
    }
  }
  return v;
}

// Finite values only, for the sums (an infinity or NaN would hide the rounding).
std::vector<float> sum_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = unit(rng) * (i % 7 == 0 ? 1e6f : 1.0f);
  return v;
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
int64_t first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_bits(a[i], b[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

const std::vector<int64_t> kLengths = {0,  1,  7,   8,    15,   16,   17,   31,
                                       32, 33, 100, 2047, 2048, 2049, 4101, 10000};

}  // namespace

TEST(CpuSimd, TheDispatcherPicksTheAvx2LoopsExactlyWhenTheCpuHasAvx2) {
  const cpu::simd::Kernels* chosen = cpu::simd::kernels();
  if (!cpu_has_avx2() || scalar_math_forced()) {
    EXPECT_EQ(chosen, nullptr);
  } else {
    EXPECT_NE(chosen, nullptr);
    EXPECT_EQ(chosen, cpu::simd::avx2::kernels());
  }
}

TEST(CpuSimd, Avx2ExtremesGiveThePortableLoopsBits) {
  if (!cpu_has_avx2()) {
    EXPECT_EQ(cpu::simd::kernels(), nullptr);
    return;
  }
  const cpu::simd::Kernels* k = cpu::simd::avx2::kernels();
  ASSERT_NE(k, nullptr);
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 1;
  for (int64_t n : kLengths) {
    for (int nan_per_mille : {0, 1, 30}) {
      const std::vector<float> v = tricky_values(n, ++seed, nan_per_mille);
      for (float init : {-inf, inf, 0.0f, -0.0f, nan_with(5, false)}) {
        const std::string what = "n " + std::to_string(n) + " NaNs/1000 " + std::to_string(nan_per_mille) +
                                 " init " + std::to_string(init) + " seed " + std::to_string(seed);
        EXPECT_TRUE(
            same_bits(k->extreme[1](v.data(), n, init), cpu::simd::extreme<float, true>(v.data(), n, init)))
            << "max " << what;
        EXPECT_TRUE(
            same_bits(k->extreme[0](v.data(), n, init), cpu::simd::extreme<float, false>(v.data(), n, init)))
            << "min " << what;
      }
    }
  }
}

TEST(CpuSimd, Avx2ExtremesOfSignedZerosKeepTheSameZero) {
  if (!cpu_has_avx2()) {
    EXPECT_EQ(cpu::simd::kernels(), nullptr);
    return;
  }
  const cpu::simd::Kernels* k = cpu::simd::avx2::kernels();
  ASSERT_NE(k, nullptr);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 16 + trial;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = (rng() & 1) ? -0.0f : 0.0f;
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(
        same_bits(k->extreme[1](v.data(), n, -inf), cpu::simd::extreme<float, true>(v.data(), n, -inf)))
        << "n " << n;
    EXPECT_TRUE(
        same_bits(k->extreme[0](v.data(), n, inf), cpu::simd::extreme<float, false>(v.data(), n, inf)))
        << "n " << n;
  }
}

TEST(CpuSimd, Avx2ColumnExtremesGiveThePortableLoopsBits) {
  if (!cpu_has_avx2()) {
    EXPECT_EQ(cpu::simd::kernels(), nullptr);
    return;
  }
  const cpu::simd::Kernels* k = cpu::simd::avx2::kernels();
  ASSERT_NE(k, nullptr);
  uint32_t seed = 100;
  for (int64_t n : {1, 5, 8, 16, 17, 33, 100, 4096}) {
    for (int64_t rows : {1, 3, 8, 9, 17, 64}) {
      const int64_t stride = n + 3;
      const std::vector<float> p = tricky_values(rows * stride, ++seed, 20);
      const std::vector<float> start = tricky_values(n, ++seed, 20);
      for (int kmax : {0, 1}) {
        std::vector<float> got = start, want = start;
        k->extreme_rows[kmax](got.data(), p.data(), stride, rows, n);
        if (kmax) {
          cpu::simd::extreme_rows<float, true>(want.data(), p.data(), stride, rows, n);
        } else {
          cpu::simd::extreme_rows<float, false>(want.data(), p.data(), stride, rows, n);
        }
        EXPECT_EQ(first_difference(got, want), -1)
            << (kmax ? "max" : "min") << " n " << n << " rows " << rows << " seed " << seed;
      }
    }
  }
}

TEST(CpuSimd, Avx2SumsGiveThePortableLoopsBits) {
  if (!cpu_has_avx2()) {
    EXPECT_EQ(cpu::simd::kernels(), nullptr);
    return;
  }
  const cpu::simd::Kernels* k = cpu::simd::avx2::kernels();
  ASSERT_NE(k, nullptr);
  uint32_t seed = 200;
  for (int64_t n : kLengths) {
    const std::vector<float> v = sum_values(n, ++seed);
    EXPECT_TRUE(same_bits(k->sum(v.data(), n), cpu::simd::lane_sum<float>(v.data(), n))) << "n " << n;
  }
  for (int64_t n : {1, 5, 16, 17, 33, 100, 4096}) {
    for (int64_t rows : {1, 3, 8, 9, 17, 128}) {
      const int64_t stride = n + 5;
      const std::vector<float> p = sum_values(rows * stride, ++seed);
      const std::vector<float> start = sum_values(n, ++seed);
      std::vector<float> got = start, want = start;
      k->sum_rows(got.data(), p.data(), stride, rows, n);
      cpu::simd::sum_rows<float>(want.data(), p.data(), stride, rows, n);
      EXPECT_EQ(first_difference(got, want), -1) << "n " << n << " rows " << rows;
    }
  }
}

TEST(CpuSimd, Avx2ArithmeticGivesTheScalarBits) {
  const bool forced = scalar_math_forced();
  for (cpu::Operands operands : {cpu::Operands::runs, cpu::Operands::x_scalar, cpu::Operands::y_scalar}) {
    for (cpu::ArithOp op : {cpu::ArithOp::add, cpu::ArithOp::subtract, cpu::ArithOp::multiply,
                            cpu::ArithOp::divide, cpu::ArithOp::maximum, cpu::ArithOp::minimum}) {
      const bool extreme = op == cpu::ArithOp::maximum || op == cpu::ArithOp::minimum;
      const cpu::ArithFn chosen = cpu::vector_arith(op, operands);
      if (!cpu_has_avx2()) {
        EXPECT_EQ(chosen, nullptr);
        continue;
      }
      EXPECT_EQ(chosen == nullptr, forced);
      const cpu::ArithFn k = cpu::avx2::arith_kernel(op, operands);
      ASSERT_NE(k, nullptr);
      uint32_t seed = 300;
      for (int64_t n : kLengths) {
        std::vector<float> x = tricky_values(n + 1, ++seed, 20), y = tricky_values(n + 1, ++seed, 20);
        // Of two NaN operands, which payload an arithmetic operation returns is the
        // compiler's choice in the scalar loops: no position has two. Maximum and minimum
        // decide it (x's), so they keep every pair, ties of signed zeros included.
        for (size_t i = 0; i < y.size() && !extreme; ++i) {
          if (std::isnan(x[i]) || std::isnan(x[0])) y[i] = 1.5f;
        }
        std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n)), in_place = x;
        for (int64_t i = 0; i < n; ++i) {
          const float a = operands == cpu::Operands::x_scalar ? x[0] : x[i];
          const float b = operands == cpu::Operands::y_scalar ? y[0] : y[i];
          switch (op) {
            case cpu::ArithOp::add: want[i] = a + b; break;
            case cpu::ArithOp::subtract: want[i] = a - b; break;
            case cpu::ArithOp::multiply: want[i] = a * b; break;
            case cpu::ArithOp::divide: want[i] = a / b; break;
            case cpu::ArithOp::maximum: want[i] = ew::Maximum{}(a, b); break;
            case cpu::ArithOp::minimum: want[i] = ew::Minimum{}(a, b); break;
          }
        }
        k(x.data(), y.data(), got.data(), n);
        EXPECT_EQ(first_difference(got, want), -1)
            << "op " << static_cast<int>(op) << " operands " << static_cast<int>(operands) << " n " << n;
        if (operands == cpu::Operands::runs) {  // out may be an input
          k(in_place.data(), y.data(), in_place.data(), n);
          in_place.resize(static_cast<size_t>(n));
          EXPECT_EQ(first_difference(in_place, want), -1)
              << "in place, op " << static_cast<int>(op) << " n " << n;
        }
      }
    }
  }
}
