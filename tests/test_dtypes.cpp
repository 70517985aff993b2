// Dtypes as MLX defines them: the 14 types, promotion, categories, limits, conversions and
// element access for every type.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support.h"

using namespace braid;
using braid::test::kEveryDtype;

TEST(Dtypes, SizesKindsAndSwitch) {
  EXPECT_EQ(kEveryDtype.size(), static_cast<size_t>(kNumDtypes));
  for (Dtype d : kEveryDtype) {
    int bytes = 0;
    switch (d) {  // usable in a switch, as MLX's Dtype
      case Dtype::Val::bool_:
      case Dtype::Val::uint8:
      case Dtype::Val::int8: bytes = 1; break;
      case Dtype::Val::uint16:
      case Dtype::Val::int16:
      case Dtype::Val::float16:
      case Dtype::Val::bfloat16: bytes = 2; break;
      case Dtype::Val::uint32:
      case Dtype::Val::int32:
      case Dtype::Val::float32: bytes = 4; break;
      case Dtype::Val::uint64:
      case Dtype::Val::int64:
      case Dtype::Val::float64:
      case Dtype::Val::complex64: bytes = 8; break;
    }
    EXPECT_EQ(d.size(), bytes) << d;
    EXPECT_EQ(size_of(d), bytes) << d;
    EXPECT_EQ(dtype_from_array_protocol(dtype_to_array_protocol(d)), d) << d;
  }
  EXPECT_EQ(kindof(bfloat16), Dtype::Kind::V);
  EXPECT_EQ(kindof(complex64), Dtype::Kind::c);
  EXPECT_EQ(dtype_to_array_protocol(float32), "<f4");
  EXPECT_EQ(dtype_to_array_protocol(bool_), "|b1");
  EXPECT_TRUE(is_floating_point(complex64));
  EXPECT_TRUE(is_complex(complex64));
  EXPECT_TRUE(is_unsigned(bool_));
  EXPECT_TRUE(is_integral(uint64));
  EXPECT_THROW(dtype_from_array_protocol("<x4"), std::invalid_argument);
}

TEST(Dtypes, PromotionFollowsMlxTable) {
  EXPECT_EQ(promote_types(uint8, int8), int16);
  EXPECT_EQ(promote_types(uint16, int8), int32);
  EXPECT_EQ(promote_types(uint32, int32), int64);
  EXPECT_EQ(promote_types(uint64, int64), float32);
  EXPECT_EQ(promote_types(int64, float16), float16);
  EXPECT_EQ(promote_types(float16, bfloat16), float32);
  EXPECT_EQ(promote_types(bfloat16, int32), bfloat16);
  EXPECT_EQ(promote_types(float64, float32), float64);
  EXPECT_EQ(promote_types(float64, complex64), complex64);
  EXPECT_EQ(promote_types(bool_, bool_), bool_);
  for (Dtype a : kEveryDtype) {
    EXPECT_EQ(promote_types(a, bool_), a);
    EXPECT_EQ(promote_types(a, a), a);
    for (Dtype b : kEveryDtype) EXPECT_EQ(promote_types(a, b), promote_types(b, a)) << a << " " << b;
  }
}

TEST(Dtypes, CategoriesAsNumPy) {
  EXPECT_TRUE(issubdtype(int8, integer));
  EXPECT_TRUE(issubdtype(int8, signedinteger));
  EXPECT_FALSE(issubdtype(int8, unsignedinteger));
  EXPECT_TRUE(issubdtype(uint32, number));
  EXPECT_TRUE(issubdtype(bfloat16, floating));
  EXPECT_TRUE(issubdtype(float64, inexact));
  EXPECT_TRUE(issubdtype(complex64, complexfloating));
  EXPECT_FALSE(issubdtype(complex64, floating));
  EXPECT_TRUE(issubdtype(bool_, generic));
  EXPECT_FALSE(issubdtype(bool_, integer));
  EXPECT_TRUE(issubdtype(floating, inexact));
  EXPECT_FALSE(issubdtype(inexact, floating));
  EXPECT_TRUE(issubdtype(float32, float32));
  EXPECT_FALSE(issubdtype(float32, float16));
  EXPECT_FALSE(issubdtype(floating, float32));
}

TEST(Dtypes, FinfoAndIinfo) {
  EXPECT_EQ(finfo(float32).max, std::numeric_limits<float>::max());
  EXPECT_EQ(finfo(float32).min, -std::numeric_limits<float>::max());
  EXPECT_EQ(finfo(float16).max, 65504.0);
  EXPECT_EQ(finfo(float16).eps, std::ldexp(1.0, -10));
  EXPECT_EQ(finfo(bfloat16).eps, std::ldexp(1.0, -7));
  EXPECT_EQ(static_cast<float>(bfloat16_t(static_cast<float>(finfo(bfloat16).max))), finfo(bfloat16).max);
  EXPECT_EQ(finfo(float64).eps, std::numeric_limits<double>::epsilon());
  EXPECT_EQ(finfo(float16).bits, 16);
  EXPECT_EQ(finfo(bfloat16).bits, 16);
  EXPECT_EQ(finfo(complex64).bits, 32);
  EXPECT_EQ(finfo(complex64).dtype, float32);
  EXPECT_EQ(finfo(float64).bits, 64);
  EXPECT_EQ(finfo(float16).smallest_normal, std::ldexp(1.0, -14));
  EXPECT_EQ(finfo(bfloat16).smallest_normal, std::numeric_limits<float>::min());
  EXPECT_EQ(finfo(float32).smallest_normal, std::numeric_limits<float>::min());
  EXPECT_EQ(finfo(float64).smallest_normal, std::numeric_limits<double>::min());
  EXPECT_EQ(iinfo(int8).min, -128);
  EXPECT_EQ(iinfo(uint64).max, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(iinfo(int64).min, std::numeric_limits<int64_t>::min());
  EXPECT_THROW(finfo{int32}, std::invalid_argument);
  EXPECT_THROW(iinfo{float32}, std::invalid_argument);
}

TEST(Dtypes, ScalarsKeepTheirValueInEveryDtype) {
  EXPECT_EQ(array(1.5).dtype(), float32);  // double gives float32, as MLX
  EXPECT_EQ(array(0.1, float64).item<double>(), 0.1);
  EXPECT_EQ(array(int64_t{1} << 62).item<int64_t>(), int64_t{1} << 62);
  EXPECT_EQ(array(std::numeric_limits<uint64_t>::max()).item<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(array(int8_t{-5}).dtype(), int8);
  EXPECT_EQ(array(uint16_t{65535}).item<uint16_t>(), 65535);
  const complex64_t c = array(complex64_t{1.5f, -2.0f}).item<complex64_t>();
  EXPECT_EQ(c.real(), 1.5f);
  EXPECT_EQ(c.imag(), -2.0f);
  EXPECT_EQ(array(7, int32).item<long long>(), 7);
  EXPECT_EQ(array(3.75f).item<int>(), 3);
  for (Dtype d : kEveryDtype) {
    array a(1.0, d);
    EXPECT_EQ(a.dtype(), d);
    EXPECT_EQ(a.itemsize(), d.size());
    EXPECT_EQ(a.nbytes(), d.size());
    EXPECT_EQ(a.item<double>(), 1.0) << d;
    EXPECT_EQ(a.item<float16_t>(), 1.0f) << d;
    EXPECT_EQ(a.item<complex64_t>().real(), 1.0f) << d;
  }
}

TEST(Dtypes, AsTypeBetweenEveryPairOnEveryDevice) {
  const std::vector<double> v = {0, 1, 2, 3, 100, 5, 6, 7};
  for (Device dev : test::test_devices()) {
    for (Dtype from : kEveryDtype) {
      for (Dtype to : kEveryDtype) {
        array a = test::make(v, {2, 4}, from);
        std::vector<double> want = test::values(a);
        for (double& w : want) w = test::values(astype(array(w, float64), to, Device::cpu))[0];
        array b = astype(transpose(a), to, dev);  // strided source
        std::vector<double> got = test::values(transpose(b));
        test::expect_close(got, want, 0, 0, dtype_name(from) + "->" + dtype_name(to) + " on " + test::device_name(dev));
      }
    }
  }
}

TEST(Dtypes, ComplexToRealKeepsTheRealPartAndBoolIsNonzero) {
  array c(complex64_t{2.5f, -1.0f});
  EXPECT_EQ(astype(c, float32).item<float>(), 2.5f);
  EXPECT_EQ(astype(c, int32).item<int32_t>(), 2);
  EXPECT_TRUE(astype(array(complex64_t{0.0f, 1.0f}), bool_).item<bool>());
  EXPECT_FALSE(astype(array(complex64_t{0.0f, 0.0f}), bool_).item<bool>());
  auto back = test::complex_values(astype(array({1.0f, -2.0f}), complex64));
  EXPECT_EQ(back[1], std::complex<float>(-2.0f, 0.0f));
  // complex64_t converts to its real part, as MLX's does; arithmetic with real numbers and
  // comparisons stay complex (MLX's lexicographic order), and it is true when either part is
  // nonzero.
  const complex64_t z = c.item<complex64_t>();
  const float re = z;
  EXPECT_EQ(re, 2.5f);
  static_assert(std::is_same_v<decltype(z + 1), complex64_t>);
  static_assert(std::is_same_v<decltype(2.0 * z), complex64_t>);
  EXPECT_EQ(z + 1, complex64_t(3.5f, -1.0f));
  EXPECT_EQ(2.0 * z, complex64_t(5.0f, -2.0f));
  EXPECT_EQ(z - 1, complex64_t(1.5f, -1.0f));
  EXPECT_EQ(z / 2, complex64_t(1.25f, -0.5f));
  EXPECT_EQ(1.0f / complex64_t(0.0f, 1.0f), complex64_t(0.0f, -1.0f));
  EXPECT_TRUE(complex64_t(1, 1) < complex64_t(1, 2));
  EXPECT_FALSE(complex64_t(1, 2) < complex64_t(1, 1));
  EXPECT_TRUE(complex64_t(2, -5) > complex64_t(1, 9));
  EXPECT_TRUE(complex64_t(1, 1) <= complex64_t(1, 1) && complex64_t(1, 1) >= complex64_t(1, 1));
  EXPECT_TRUE(static_cast<bool>(complex64_t(0, 5)));
  EXPECT_FALSE(static_cast<bool>(complex64_t(0, 0)));
  EXPECT_EQ(array(z * 2).dtype(), complex64);
}

TEST(Dtypes, Float64KeepsDoublePrecision) {
  array a(1.0 + 1e-12, float64);
  array b = a + array(1e-12, float64);
  EXPECT_EQ(b.dtype(), float64);
  EXPECT_DOUBLE_EQ(b.item<double>(), 1.0 + 2e-12);
  array s = sum(full({1000}, array(0.1, float64)));
  EXPECT_EQ(s.dtype(), float64);
  EXPECT_NEAR(s.item<double>(), 100.0, 1e-10);
}
