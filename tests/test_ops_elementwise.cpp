// Element-wise ops, described once per op in a table (braid call, reference computed here in
// double or std::complex<double>, output dtype rule, accepted dtypes) and run by generic
// runners on every device, every accepted dtype, several layouts (broadcast, transposed,
// 0-d, size-zero, large enough for the parallel paths); dtypes a row does not accept must
// throw std::invalid_argument. Separate tests cover MLX's integer and special-value semantics,
// composite ops, operators and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support.h"

using namespace braid;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;
constexpr float fNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float fInf = std::numeric_limits<float>::infinity();
using cd = std::complex<double>;

const std::vector<Dtype>& every() { return test::kEveryDtype; }
std::vector<Dtype> without(std::vector<Dtype> v, std::initializer_list<Dtype> drop) {
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](Dtype d) { return std::find(drop.begin(), drop.end(), d) != drop.end(); }),
          v.end());
  return v;
}
std::vector<Dtype> real_dtypes() { return without(every(), {complex64}); }
std::vector<Dtype> integer_dtypes() {  // bool and the integers
  std::vector<Dtype> v = {bool_};
  for (Dtype d : test::kIntegerDtypes) v.push_back(d);
  return v;
}
bool contains(const std::vector<Dtype>& v, Dtype d) { return std::find(v.begin(), v.end(), d) != v.end(); }
bool is_int(Dtype d) { return issubdtype(d, integer); }

Dtype float_of(Dtype d) { return is_floating_point(d) ? d : promote_types(d, float32); }

// `v` as stored in `dt`: floats rounded, integers wrapped (v must be an exact integer), bool
// nonzero. Complex keeps the (float32-rounded) real part.
double stored(double v, Dtype dt) {
  if (std::isnan(v)) return v;
  const int64_t i = std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<int64_t>(v) : 0;
  switch (dt.val()) {
    case Dtype::Val::bool_: return v != 0 ? 1 : 0;
    case Dtype::Val::uint8: return static_cast<uint8_t>(i);
    case Dtype::Val::uint16: return static_cast<uint16_t>(i);
    case Dtype::Val::uint32: return static_cast<uint32_t>(i);
    case Dtype::Val::uint64: return static_cast<double>(static_cast<uint64_t>(i));
    case Dtype::Val::int8: return static_cast<int8_t>(i);
    case Dtype::Val::int16: return static_cast<int16_t>(i);
    case Dtype::Val::int32: return static_cast<int32_t>(i);
    case Dtype::Val::int64: return static_cast<double>(i);
    case Dtype::Val::float16: return static_cast<float>(float16_t(static_cast<float>(v)));
    case Dtype::Val::bfloat16: return static_cast<float>(bfloat16_t(static_cast<float>(v)));
    case Dtype::Val::float32:
    case Dtype::Val::complex64: return static_cast<float>(v);
    case Dtype::Val::float64: return v;
  }
  return v;
}

// Tolerance of a result stored in `dt` (relative and absolute).
double tolerance(Dtype dt) {
  switch (dt.val()) {
    case Dtype::Val::float16: return 2e-3;
    case Dtype::Val::bfloat16: return 1.6e-2;
    case Dtype::Val::float32:
    case Dtype::Val::complex64: return 2e-5;
    case Dtype::Val::float64: return 1e-12;
    default: return 0;
  }
}

// n random values for dtype `dt` in [lo, hi]: integers are small (|x| <= 10, unsigned >= 0),
// bool is 0/1. `nonzero` avoids zero.
std::vector<double> random_inputs(size_t n, Dtype dt, double lo, double hi, uint32_t seed, bool nonzero = false) {
  std::mt19937 rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) {
    if (dt == bool_) {
      x = nonzero ? 1 : static_cast<double>(rng() % 2);
    } else if (is_int(dt)) {
      double l = std::max(std::ceil(lo), -10.0), h = std::min(std::floor(hi), 10.0);
      if (issubdtype(dt, unsignedinteger)) l = std::max(l, 0.0);
      if (h < l) h = l;
      do {
        x = l + static_cast<double>(rng() % static_cast<uint32_t>(h - l + 1));
      } while (nonzero && x == 0 && h > l);
    } else {
      do {
        x = stored(std::uniform_real_distribution<double>(lo, hi)(rng), dt);
      } while (nonzero && x == 0);
    }
  }
  return v;
}

array make_complex(const std::vector<double>& re, const std::vector<double>& im, const Shape& shape) {
  std::vector<std::complex<float>> c(re.size());
  for (size_t i = 0; i < re.size(); ++i) c[i] = {static_cast<float>(re[i]), static_cast<float>(im[i])};
  return array(c.begin(), shape, complex64);
}

std::string tag(const char* op, Dtype dt, const Device& d, const std::string& what) {
  std::ostringstream os;
  os << op << " " << dt << " on " << test::device_name(d) << " (" << what << ")";
  return os.str();
}

// The layouts an input of `n` logical elements is given in: the values are always produced
// row-major in `shape`; each case says how the array holding them is built.
struct InputLayout {
  std::string name;
  Shape shape;
  // Builds an array of `shape` holding row-major `v` (of dtype dt) in this layout.
  array (*build)(const std::vector<double>& v, const Shape& shape, Dtype dt);
};

array as_contiguous(const std::vector<double>& v, const Shape& shape, Dtype dt) { return test::make(v, shape, dt); }
// A transposed view: the data is stored as the transposed shape.
array as_transposed(const std::vector<double>& v, const Shape& shape, Dtype dt) {
  const int r = shape[0], c = shape[1];
  std::vector<double> t(v.size());
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) t[static_cast<size_t>(j) * r + i] = v[static_cast<size_t>(i) * c + j];
  return transpose(test::make(t, {c, r}, dt));
}
// A broadcast view: rows of `shape` repeat the first row (the values must too).
array as_broadcast_rows(const std::vector<double>& v, const Shape& shape, Dtype dt) {
  std::vector<double> row(v.begin(), v.begin() + shape[1]);
  return broadcast_to(test::make(row, {1, shape[1]}, dt), shape);
}

std::vector<InputLayout> unary_layouts(bool large) {
  std::vector<InputLayout> l = {{"0-d", {}, as_contiguous},
                           {"3x4", {3, 4}, as_contiguous},
                           {"empty 0x3", {0, 3}, as_contiguous},
                           {"transposed 5x3", {5, 3}, as_transposed},
                           {"broadcast 4x6", {4, 6}, as_broadcast_rows}};
  if (large) l.push_back({"large", {100003}, as_contiguous});
  return l;
}

// Values for a layout: random, with every row equal for the broadcast one.
std::vector<double> layout_values(const InputLayout& l, Dtype dt, double lo, double hi, uint32_t seed,
                                  bool nonzero = false) {
  size_t n = 1;
  for (int d : l.shape) n *= static_cast<size_t>(d);
  std::vector<double> v = random_inputs(n, dt, lo, hi, seed, nonzero);
  if (l.build == as_broadcast_rows) {
    for (size_t i = static_cast<size_t>(l.shape[1]); i < n; ++i) v[i] = v[i % static_cast<size_t>(l.shape[1])];
  }
  return v;
}

void expect_matches(const array& out, const std::vector<double>& want, Dtype out_dt, const std::string& what) {
  ASSERT_EQ(out.dtype(), out_dt) << what;
  std::vector<double> rounded(want.size());
  for (size_t i = 0; i < want.size(); ++i) rounded[i] = stored(want[i], out_dt);
  const double tol = tolerance(out_dt);
  test::expect_close(test::values(out), rounded, tol, tol * 0.05, what);
}

void expect_complex(const array& out, const std::vector<cd>& want, const std::string& what) {
  auto got = test::complex_values(out);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const cd g(got[i].real(), got[i].imag());
    EXPECT_LE(std::abs(g - want[i]), 1e-4 * (1 + std::abs(want[i])))
        << what << " at " << i << ": got " << g << ", want " << want[i];
  }
}

// ---------------------------------------------------------------------------------------------
// Unary ops

enum class Out { same, floating, boolean, magnitude /* complex -> float32 */ };

Dtype out_dtype(Out rule, Dtype in) {
  switch (rule) {
    case Out::same: return in;
    case Out::floating: return float_of(in);
    case Out::boolean: return bool_;
    case Out::magnitude: return in == complex64 ? float32 : in;
  }
  return in;
}

struct UnaryRow {
  const char* name;
  array (*fn)(const array&, StreamOrDevice);
  double (*ref)(double);
  cd (*cref)(cd);  // complex64 reference; nullptr when complex64 must throw
  Out out;
  std::vector<Dtype> dtypes;  // the real dtypes accepted (complex64 follows cref)
  double lo, hi;
};

double sign_of(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }

std::vector<UnaryRow> unary_rows() {
  const auto all = real_dtypes();
  return {
      {"abs", &abs, [](double x) { return std::fabs(x); }, [](cd z) { return cd(std::abs(z)); }, Out::magnitude, all, -5, 5},
      {"sign", &sign, sign_of, [](cd z) { return z / std::abs(z); }, Out::same, all, -5, 5},
      {"negative", &negative, [](double x) { return -x; }, [](cd z) { return -z; }, Out::same, without(all, {bool_}), -5, 5},
      {"square", &square, [](double x) { return x * x; }, [](cd z) { return z * z; }, Out::same, all, -5, 5},
      {"floor", &floor, [](double x) { return std::floor(x); }, nullptr, Out::same, all, -5, 5},
      {"ceil", &ceil, [](double x) { return std::ceil(x); }, nullptr, Out::same, all, -5, 5},
      {"round", &round, [](double x) { return std::nearbyint(x); },
       [](cd z) { return cd(std::nearbyint(z.real()), std::nearbyint(z.imag())); }, Out::same, all, -5, 5},
      {"sin", &sin, [](double x) { return std::sin(x); }, [](cd z) { return std::sin(z); }, Out::floating, all, -6, 6},
      {"cos", &cos, [](double x) { return std::cos(x); }, [](cd z) { return std::cos(z); }, Out::floating, all, -6, 6},
      {"tan", &tan, [](double x) { return std::tan(x); }, [](cd z) { return std::tan(z); }, Out::floating, all, -1.2, 1.2},
      {"arcsin", &arcsin, [](double x) { return std::asin(x); }, [](cd z) { return std::asin(z); }, Out::floating, all, -1, 1},
      {"arccos", &arccos, [](double x) { return std::acos(x); }, [](cd z) { return std::acos(z); }, Out::floating, all, -1, 1},
      {"arctan", &arctan, [](double x) { return std::atan(x); }, [](cd z) { return std::atan(z); }, Out::floating, all, -6, 6},
      {"sinh", &sinh, [](double x) { return std::sinh(x); }, [](cd z) { return std::sinh(z); }, Out::floating, all, -4, 4},
      {"cosh", &cosh, [](double x) { return std::cosh(x); }, [](cd z) { return std::cosh(z); }, Out::floating, all, -4, 4},
      {"tanh", &tanh, [](double x) { return std::tanh(x); }, [](cd z) { return std::tanh(z); }, Out::floating, all, -4, 4},
      {"arcsinh", &arcsinh, [](double x) { return std::asinh(x); }, [](cd z) { return std::asinh(z); }, Out::floating, all, -6, 6},
      {"arccosh", &arccosh, [](double x) { return std::acosh(x); }, [](cd z) { return std::acosh(z); }, Out::floating, all, 1, 6},
      {"arctanh", &arctanh, [](double x) { return std::atanh(x); }, [](cd z) { return std::atanh(z); }, Out::floating, all, -0.9, 0.9},
      {"exp", &exp, [](double x) { return std::exp(x); }, [](cd z) { return std::exp(z); }, Out::floating, all, -6, 6},
      {"expm1", &expm1, [](double x) { return std::expm1(x); }, [](cd z) { return std::exp(z) - 1.0; }, Out::floating, all, -3, 3},
      {"log", &log, [](double x) { return std::log(x); }, [](cd z) { return std::log(z); }, Out::floating, all, 0.05, 8},
      {"log2", &log2, [](double x) { return std::log2(x); }, [](cd z) { return std::log(z) / std::log(2.0); }, Out::floating, all, 0.05, 8},
      {"log10", &log10, [](double x) { return std::log10(x); }, [](cd z) { return std::log10(z); }, Out::floating, all, 0.05, 8},
      {"log1p", &log1p, [](double x) { return std::log1p(x); }, [](cd z) { return std::log(1.0 + z); }, Out::floating, all, -0.9, 6},
      {"sqrt", &sqrt, [](double x) { return std::sqrt(x); }, [](cd z) { return std::sqrt(z); }, Out::floating, all, 0, 9},
      {"rsqrt", &rsqrt, [](double x) { return 1 / std::sqrt(x); }, [](cd z) { return 1.0 / std::sqrt(z); }, Out::floating, all, 0.05, 9},
      {"reciprocal", &reciprocal, [](double x) { return 1 / x; }, [](cd z) { return 1.0 / z; }, Out::floating, all, 0.2, 5},
      {"sigmoid", &sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, [](cd z) { return 1.0 / (1.0 + std::exp(-z)); },
       Out::floating, all, -20, 20},
      {"erf", &erf, [](double x) { return std::erf(x); }, nullptr, Out::floating, all, -3, 3},
      {"erfinv", &erfinv, [](double y) {
         // Inverted by bisection on erf (the reference must not share the kernel's method).
         if (y <= -1 || y >= 1) return y == 1 ? kInf : (y == -1 ? -kInf : kNaN);
         double lo = -7, hi = 7;
         for (int i = 0; i < 64; ++i) {  // [-7, 7] halved 64 times: finer than a double
           const double mid = (lo + hi) / 2;
           (std::erf(mid) < y ? lo : hi) = mid;
         }
         return (lo + hi) / 2;
       }, nullptr, Out::floating, all, -0.95, 0.95},
      {"degrees", &degrees, [](double x) { return x * 180 / kPi; }, [](cd z) { return z * (180 / kPi); }, Out::floating, all, -6, 6},
      {"radians", &radians, [](double x) { return x * kPi / 180; }, [](cd z) { return z * (kPi / 180); }, Out::floating, all, -400, 400},
      {"isnan", &isnan, [](double x) { return std::isnan(x) ? 1.0 : 0.0; }, [](cd) { return cd(0); }, Out::boolean, all, -5, 5},
      {"isinf", &isinf, [](double x) { return std::isinf(x) ? 1.0 : 0.0; }, [](cd) { return cd(0); }, Out::boolean, all, -5, 5},
      {"isfinite", &isfinite, [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }, [](cd) { return cd(1); }, Out::boolean, all, -5, 5},
      {"isposinf", &isposinf, [](double x) { return x == kInf ? 1.0 : 0.0; }, [](cd) { return cd(0); }, Out::boolean, all, -5, 5},
      {"isneginf", &isneginf, [](double x) { return x == -kInf ? 1.0 : 0.0; }, [](cd) { return cd(0); }, Out::boolean, all, -5, 5},
      {"logical_not", &logical_not, [](double x) { return x == 0 ? 1.0 : 0.0; },
       [](cd z) { return cd(z == cd(0) ? 1 : 0); }, Out::boolean, all, -2, 2},
      {"real", &real, [](double x) { return x; }, [](cd z) { return cd(z.real()); }, Out::magnitude, all, -5, 5},
      {"imag", &imag, [](double) { return 0.0; }, [](cd z) { return cd(z.imag()); }, Out::magnitude, all, -5, 5},
      {"conjugate", &conjugate, [](double x) { return x; }, [](cd z) { return std::conj(z); }, Out::same, all, -5, 5},
      {"bitwise_invert", &bitwise_invert, [](double x) { return -x - 1; }, nullptr, Out::same,
       test::kIntegerDtypes, -5, 5},
      {"stop_gradient", &stop_gradient, [](double x) { return x; }, [](cd z) { return z; }, Out::same, all, -5, 5},
  };
}

void run_unary_real(const UnaryRow& r, Dtype dt, const Device& dev, uint32_t& seed) {
  // The large layouts reach the parallel paths, whose threading is the same for every dtype:
  // under ThreadSanitizer, one dtype per op takes them.
  const bool large = test::kThreadSanitized ? dt == (contains(r.dtypes, float32) ? float32 : r.dtypes.front())
                                            : dt == float32 || dt == int32 || dt == r.dtypes.front();
  for (const InputLayout& l : unary_layouts(large)) {
    const auto v = layout_values(l, dt, r.lo, r.hi, ++seed);
    const array x = l.build(v, l.shape, dt);
    const array out = r.fn(x, dev);
    const std::string what = tag(r.name, dt, dev, l.name);
    EXPECT_EQ(out.shape(), l.shape) << what;
    std::vector<double> want(v.size());
    for (size_t i = 0; i < v.size(); ++i) want[i] = r.ref(v[i]);
    expect_matches(out, want, out_dtype(r.out, dt), what);
  }
}

void run_unary_complex(const UnaryRow& r, const Device& dev, uint32_t& seed) {
  for (const Shape& shape : {Shape{}, Shape{3, 5}, Shape{0, 2}}) {
    size_t n = 1;
    for (int d : shape) n *= static_cast<size_t>(d);
    const auto re = random_inputs(n, float32, -1.5, 1.5, ++seed), im = random_inputs(n, float32, -1.5, 1.5, ++seed);
    const array x = make_complex(re, im, shape);
    const array out = r.fn(x, dev);
    const std::string what = tag(r.name, complex64, dev, "shape " + std::to_string(shape.size()) + "-d");
    EXPECT_EQ(out.dtype(), out_dtype(r.out, complex64)) << what;
    EXPECT_EQ(out.shape(), shape) << what;
    std::vector<cd> want(n);
    for (size_t i = 0; i < n; ++i) {
      want[i] = r.cref(cd(static_cast<float>(re[i]), static_cast<float>(im[i])));
    }
    expect_complex(out, want, what);
  }
}

// ---------------------------------------------------------------------------------------------
// Binary ops

enum class BOut { same, floating, boolean, shift /* bool -> uint8 */ };

Dtype out_dtype(BOut rule, Dtype t) {
  switch (rule) {
    case BOut::same: return t;
    case BOut::floating: return float_of(t);
    case BOut::boolean: return bool_;
    case BOut::shift: return t == bool_ ? uint8 : t;
  }
  return t;
}

// Python's modulo: the result takes the divisor's sign.
double py_mod(double x, double y) {
  double r = std::fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
int64_t as_int(double x) { return static_cast<int64_t>(x); }
// Lexicographic order of complex numbers.
bool clt(cd a, cd b) { return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag()); }

struct BinaryRow {
  const char* name;
  array (*fn)(const array&, const array&, StreamOrDevice);
  double (*ref)(double, double, Dtype);  // Dtype: the (promoted) input dtype
  cd (*cref)(cd, cd);                    // nullptr when complex64 must throw
  BOut out;
  std::vector<Dtype> dtypes;  // the real dtypes accepted
  double lo, hi, b_lo, b_hi;
  bool nonzero_b;
};

std::vector<BinaryRow> binary_rows() {
  const auto all = real_dtypes();
  const auto ints = integer_dtypes();
  return {
      {"add", &add, [](double x, double y, Dtype) { return x + y; }, [](cd a, cd b) { return a + b; },
       BOut::same, all, -5, 5, -5, 5, false},
      {"subtract", &subtract, [](double x, double y, Dtype) { return x - y; },
       [](cd a, cd b) { return a - b; }, BOut::same, all, -5, 5, -5, 5, false},
      {"multiply", &multiply, [](double x, double y, Dtype) { return x * y; },
       [](cd a, cd b) { return a * b; }, BOut::same, all, -5, 5, -5, 5, false},
      {"divide", &divide, [](double x, double y, Dtype) { return x / y; }, [](cd a, cd b) { return a / b; },
       BOut::floating, all, -5, 5, -5, 5, true},
      {"floor_divide", &floor_divide,
       [](double x, double y, Dtype t) {
         if (is_int(t)) return static_cast<double>(as_int(x) / as_int(y));  // truncates, as MLX
         return std::floor(stored(x / y, t));                               // floor of the rounded quotient
       },
       nullptr, BOut::same, all, -9, 9, -4, 4, true},
      {"remainder", &remainder, [](double x, double y, Dtype) { return py_mod(x, y); },
       [](cd a, cd b) {
         auto part = [](double x, double y) { double r = x - y * std::trunc(x / y); return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; };
         return cd(part(a.real(), b.real()), part(a.imag(), b.imag()));
       },
       BOut::same, all, -9, 9, -4, 4, true},
      {"power", &power,
       [](double x, double y, Dtype t) { return (is_int(t) && y < 0) ? 0.0 : std::pow(x, y); },
       [](cd a, cd b) { return std::pow(a, b); }, BOut::same, all, 0.5, 3, -2, 4, false},
      {"maximum", &maximum, [](double x, double y, Dtype) { return std::max(x, y); },
       [](cd a, cd b) { return clt(a, b) ? b : a; }, BOut::same, all, -5, 5, -5, 5, false},
      {"minimum", &minimum, [](double x, double y, Dtype) { return std::min(x, y); },
       [](cd a, cd b) { return clt(b, a) ? b : a; }, BOut::same, all, -5, 5, -5, 5, false},
      // Complex: MLX's definition, the lexicographically larger operand factored out.
      {"logaddexp", &logaddexp, [](double x, double y, Dtype) { return std::log(std::exp(x) + std::exp(y)); },
       [](cd a, cd b) {
         const cd hi = clt(b, a) ? a : b, lo = clt(b, a) ? b : a;
         return hi + std::log(1.0 + std::exp(lo - hi));
       },
       BOut::floating, all, -8, 8, -8, 8, false},
      {"arctan2", &arctan2, [](double x, double y, Dtype) { return std::atan2(x, y); }, nullptr,
       BOut::floating, all, -5, 5, -5, 5, false},
      {"equal", &equal, [](double x, double y, Dtype) { return x == y ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(a == b ? 1 : 0); }, BOut::boolean, all, -2, 2, -2, 2, false},
      {"not_equal", &not_equal, [](double x, double y, Dtype) { return x != y ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(a != b ? 1 : 0); }, BOut::boolean, all, -2, 2, -2, 2, false},
      {"less", &less, [](double x, double y, Dtype) { return x < y ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(clt(a, b) ? 1 : 0); }, BOut::boolean, all, -2, 2, -2, 2, false},
      {"less_equal", &less_equal, [](double x, double y, Dtype) { return x <= y ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(!clt(b, a) ? 1 : 0); }, BOut::boolean, all, -2, 2, -2, 2, false},
      {"greater", &greater, [](double x, double y, Dtype) { return x > y ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(clt(b, a) ? 1 : 0); }, BOut::boolean, all, -2, 2, -2, 2, false},
      {"greater_equal", &greater_equal, [](double x, double y, Dtype) { return x >= y ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(!clt(a, b) ? 1 : 0); }, BOut::boolean, all, -2, 2, -2, 2, false},
      {"logical_and", &logical_and, [](double x, double y, Dtype) { return (x != 0 && y != 0) ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(a != cd(0) && b != cd(0) ? 1 : 0); }, BOut::boolean, all, -1, 1, -1, 1,
       false},
      {"logical_or", &logical_or, [](double x, double y, Dtype) { return (x != 0 || y != 0) ? 1.0 : 0.0; },
       [](cd a, cd b) { return cd(a != cd(0) || b != cd(0) ? 1 : 0); }, BOut::boolean, all, -1, 1, -1, 1,
       false},
      {"bitwise_and", &bitwise_and,
       [](double x, double y, Dtype) { return static_cast<double>(as_int(x) & as_int(y)); }, nullptr,
       BOut::same, ints, -10, 10, -10, 10, false},
      {"bitwise_or", &bitwise_or,
       [](double x, double y, Dtype) { return static_cast<double>(as_int(x) | as_int(y)); }, nullptr,
       BOut::same, ints, -10, 10, -10, 10, false},
      {"bitwise_xor", &bitwise_xor,
       [](double x, double y, Dtype) { return static_cast<double>(as_int(x) ^ as_int(y)); }, nullptr,
       BOut::same, ints, -10, 10, -10, 10, false},
      {"left_shift", &left_shift,
       [](double x, double y, Dtype) { return static_cast<double>(as_int(x) * (int64_t{1} << as_int(y))); },
       nullptr, BOut::shift, ints, -10, 10, 0, 7, false},
      {"right_shift", &right_shift,
       [](double x, double y, Dtype) { return static_cast<double>(as_int(x) >> as_int(y)); }, nullptr,
       BOut::shift, ints, -10, 10, 0, 7, false},
  };
}

// Broadcast pairs: the shapes of a and b, and how to lay each out.
struct PairCase {
  std::string name;
  Shape a, b;
  bool transpose_a = false;
};

std::vector<PairCase> pair_cases(bool large) {
  std::vector<PairCase> c = {{"same 3x4", {3, 4}, {3, 4}},
                             {"row broadcast", {3, 4}, {4}},
                             {"outer broadcast", {3, 1}, {1, 4}},
                             {"scalar right", {2, 3}, {}},
                             {"scalar left", {}, {2, 3}},
                             {"0-d", {}, {}},
                             {"transposed left", {4, 3}, {4, 3}, true},
                             {"empty", {0, 4}, {4}}};
  if (large) {
    c.push_back({"large", {100003}, {100003}});
    c.push_back({"large scalar", {100003}, {}});
  }
  return c;
}

size_t numel(const Shape& s) {
  size_t n = 1;
  for (int d : s) n *= static_cast<size_t>(d);
  return n;
}

// Row-major broadcast of `v` (of shape `s`) to `out`.
std::vector<double> broadcast_values(const std::vector<double>& v, const Shape& s, const Shape& out) {
  if (s == out) return v;
  if (v.size() == 1) return std::vector<double>(numel(out), v[0]);
  std::vector<double> r(numel(out));
  for (size_t i = 0; i < r.size(); ++i) {
    size_t rem = i, src = 0, stride = 1;
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
      const size_t idx = rem % static_cast<size_t>(out[d]);
      rem /= static_cast<size_t>(out[d]);
      const int sd = d - static_cast<int>(out.size() - s.size());
      if (sd >= 0) {
        if (s[sd] != 1) src += idx * stride;
        stride *= static_cast<size_t>(s[sd]);
      }
    }
    r[i] = v[src];
  }
  return r;
}

Shape broadcast_of(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void run_binary_real(const BinaryRow& r, Dtype dt, const Device& dev, uint32_t& seed) {
  const bool large = dt == float32 || dt == int32;
  for (const PairCase& c : pair_cases(large)) {
    const auto va = random_inputs(numel(c.a), dt, r.lo, r.hi, ++seed);
    const auto vb = random_inputs(numel(c.b), dt, r.b_lo, r.b_hi, ++seed, r.nonzero_b);
    const array a = c.transpose_a ? as_transposed(va, c.a, dt) : test::make(va, c.a, dt);
    const array b = test::make(vb, c.b, dt);
    const array out = r.fn(a, b, dev);
    const Shape os = broadcast_of(c.a, c.b);
    const std::string what = tag(r.name, dt, dev, c.name);
    EXPECT_EQ(out.shape(), os) << what;
    const auto xa = broadcast_values(va, c.a, os), xb = broadcast_values(vb, c.b, os);
    std::vector<double> want(xa.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = r.ref(xa[i], xb[i], dt);
    expect_matches(out, want, out_dtype(r.out, dt), what);
  }
}

void run_binary_complex(const BinaryRow& r, const Device& dev, uint32_t& seed) {
  for (const PairCase& c : pair_cases(false)) {
    if (c.transpose_a) continue;
    const size_t na = numel(c.a), nb = numel(c.b);
    const bool integral = std::string(r.name).find("equal") != std::string::npos ||
                          std::string(r.name) == "less" || std::string(r.name) == "greater";
    // Comparisons draw small integers so that equal parts occur.
    auto draw = [&](size_t n) {
      return integral ? random_inputs(n, int32, -1, 1, ++seed) : random_inputs(n, float32, -1.5, 1.5, ++seed, true);
    };
    const auto ar = draw(na), ai = draw(na), br = draw(nb), bi = draw(nb);
    const array a = make_complex(ar, ai, c.a), b = make_complex(br, bi, c.b);
    const array out = r.fn(a, b, dev);
    const Shape os = broadcast_of(c.a, c.b);
    const std::string what = tag(r.name, complex64, dev, c.name);
    EXPECT_EQ(out.dtype(), out_dtype(r.out, complex64)) << what;
    EXPECT_EQ(out.shape(), os) << what;
    const auto xar = broadcast_values(ar, c.a, os), xai = broadcast_values(ai, c.a, os);
    const auto xbr = broadcast_values(br, c.b, os), xbi = broadcast_values(bi, c.b, os);
    std::vector<cd> want(xar.size());
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] = r.cref(cd(static_cast<float>(xar[i]), static_cast<float>(xai[i])),
                       cd(static_cast<float>(xbr[i]), static_cast<float>(xbi[i])));
    }
    expect_complex(out, want, what);
  }
}

template <typename F>
void expect_invalid(F&& f, const std::string& prefix, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not invalid_argument: " << e.what();
  }
}

}  // namespace

TEST(OpsElementwise, EveryUnaryOpMatchesItsReferenceInEveryDtypeAndLayout) {
  uint32_t seed = 1000;
  for (const Device& dev : test::test_devices()) {
    for (const UnaryRow& r : unary_rows()) {
      for (Dtype dt : every()) {
        if (std::string(r.name) == "bitwise_invert" && dt == bool_) continue;  // logical_not: tested below
        if (dt == complex64) {
          if (r.cref) {
            run_unary_complex(r, dev, seed);
          } else {
            expect_invalid([&] { r.fn(array(complex64_t(1, 1)), dev); }, std::string("[") + r.name + "]",
                           tag(r.name, dt, dev, "rejected"));
          }
        } else if (contains(r.dtypes, dt)) {
          run_unary_real(r, dt, dev, seed);
        } else {
          expect_invalid([&] { r.fn(zeros({2}, dt), dev); }, std::string("[") + r.name + "]", tag(r.name, dt, dev, "rejected"));
        }
      }
    }
  }
}

TEST(OpsElementwise, EveryBinaryOpMatchesItsReferenceInEveryDtypeAndBroadcast) {
  uint32_t seed = 2000;
  for (const Device& dev : test::test_devices()) {
    for (const BinaryRow& r : binary_rows()) {
      for (Dtype dt : every()) {
        if (dt == complex64) {
          if (r.cref) {
            run_binary_complex(r, dev, seed);
          } else {
            expect_invalid([&] { r.fn(array(complex64_t(1, 1)), array(complex64_t(2, 0)), dev); },
                           std::string("[") + r.name + "]", tag(r.name, dt, dev, "rejected"));
          }
        } else if (contains(r.dtypes, dt)) {
          run_binary_real(r, dt, dev, seed);
        } else {
          expect_invalid([&] { r.fn(ones({2}, dt), ones({2}, dt), dev); }, std::string("[") + r.name + "]",
                         tag(r.name, dt, dev, "rejected"));
        }
      }
    }
  }
}

// Operands read in place along rows: outer broadcasts with rows of several blocks (a
// multiple of the vector width or not), many short rows (several to a block), a bias
// over a batch, and row operands that cannot be read a vector at a time (starting one element
// into their buffer, transposed). Small integers, so every sum is exact in every dtype.
TEST(OpsElementwise, BroadcastAndViewOperandsAddExactlyAlongRowsOfEveryWidth) {
  uint32_t seed = 3000;
  auto ints = [&](const Shape& shape, Dtype dt) {
    size_t n = 1;
    for (int d : shape) n *= static_cast<size_t>(d);
    return test::make(random_inputs(n, int32, -10, 10, ++seed), shape, dt);
  };
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : {float32, float16, int8}) {
      const std::vector<std::pair<std::string, std::pair<array, array>>> cases = {
          {"outer 37 x 8208", {ints({37, 1}, dt), ints({1, 8208}, dt)}},
          {"outer 5 x 1030", {ints({5, 1}, dt), ints({1, 1030}, dt)}},
          {"outer 3000 x 16", {ints({3000, 1}, dt), ints({1, 16}, dt)}},
          {"outer 3000 x 3", {ints({3000, 1}, dt), ints({1, 3}, dt)}},
          {"bias over a batch", {ints({4, 6, 64}, dt), ints({64}, dt)}},
          {"outer over a batch", {ints({4, 1, 64}, dt), ints({1, 6, 64}, dt)}},
          {"row one element in", {ints({9, 1}, dt), slice(ints({1, 257}, dt), {0, 1}, {1, 257})}},
          {"transposed rows", {transpose(ints({64, 9}, dt)), ints({1, 64}, dt)}},
      };
      for (const auto& [name, ab] : cases) {
        const auto& [a, b] = ab;
        const array out = add(a, b, dev);
        const Shape os = broadcast_of(a.shape(), b.shape());
        ASSERT_EQ(out.shape(), os) << name;
        const auto xa = broadcast_values(test::values(a), a.shape(), os);
        const auto xb = broadcast_values(test::values(b), b.shape(), os);
        const auto got = test::values(out);
        size_t wrong = 0;
        for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != xa[i] + xb[i];
        EXPECT_EQ(wrong, 0u) << tag("add", dt, dev, name);
      }
    }
  }
}

// A short row repeated over a flat operand (a bias of a few features, per-channel constants
// over an image), on either side: rows of 2 to 32 elements over one or two axes, outputs
// whose parallel chunks start inside a row, and outputs large enough to be streamed. Every
// element is checked, for arithmetic (the vector kernels in float32), a comparison and
// integer dtypes.
TEST(OpsElementwise, ShortRowsRepeatedOverAFlatOperand) {
  uint32_t seed = 3500;
  auto ints = [&](const Shape& shape, Dtype dt) {
    return test::make(random_inputs(numel(shape), int32, -10, 10, ++seed), shape, dt);
  };
  struct Case {
    std::string name;
    Shape flat, row;
    bool row_first;
  };
  const std::vector<Case> cases = {
      {"[5000, 3] + [3]", {5000, 3}, {3}, false},
      {"[2] + [700, 2]", {700, 2}, {2}, true},
      {"[4, 2, 3] + [2, 3]", {4, 2, 3}, {2, 3}, false},
      {"[70001, 3] + [1, 3]: chunks start inside rows", {70001, 3}, {1, 3}, false},
      {"[32] + [3001, 32]", {3001, 32}, {32}, true},
      {"[620000, 7] + [7]: streamed", {620000, 7}, {7}, false},
  };
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : {float32, float16, int8, int64}) {
      for (const Case& c : cases) {
        // One streamed case is enough, and only in the plain build: its blocks are those of
        // the other cases, written around the cache.
        if (numel(c.flat) > 4000000 && (dt != float32 || test::kSanitized)) continue;
        const array f = ints(c.flat, dt), r = ints(c.row, dt);
        const array& a = c.row_first ? r : f;
        const array& b = c.row_first ? f : r;
        const Shape os = broadcast_of(a.shape(), b.shape());
        const auto xa = broadcast_values(test::values(a), a.shape(), os);
        const auto xb = broadcast_values(test::values(b), b.shape(), os);
        const auto sums = test::values(add(a, b, dev));
        const auto differences = test::values(subtract(a, b, dev));
        const auto products = test::values(multiply(a, b, dev));
        const auto less_than = test::values(less(a, b, dev));
        ASSERT_EQ(sums.size(), xa.size()) << c.name;
        size_t wrong = 0;
        for (size_t i = 0; i < xa.size(); ++i) {
          wrong += sums[i] != stored(xa[i] + xb[i], dt);
          wrong += differences[i] != stored(xa[i] - xb[i], dt);
          wrong += products[i] != stored(xa[i] * xb[i], dt);
          wrong += less_than[i] != (xa[i] < xb[i] ? 1.0 : 0.0);
        }
        EXPECT_EQ(wrong, 0u) << tag("add, subtract, multiply, less", dt, dev, c.name);
      }
    }
  }
}

// float32 add, subtract, multiply and divide on the CPU round each element once, whether the
// operands are runs, a run and a broadcast scalar, or long enough for the vector kernels
// (vector_arith.h), with or without BRAID_SCALAR_MATH: the results equal the scalar float bits.
TEST(OpsElementwise, Float32ArithmeticOnRunsAndBroadcastScalarsIsExact) {
  std::mt19937 gen(4100);
  std::uniform_real_distribution<float> unit(-3.0f, 3.0f);
  auto floats = [&](const Shape& shape) {
    size_t n = 1;
    for (int d : shape) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    for (float& x : v) x = unit(gen);
    return std::make_pair(array(v.data(), shape, float32), v);
  };
  struct Op {
    const char* name;
    std::function<array(const array&, const array&)> braid_op;
    float (*ref)(float, float);
  };
  const std::vector<Op> ops = {
      {"add", [](const array& a, const array& b) { return add(a, b, Device::cpu); },
       [](float a, float b) { return a + b; }},
      {"subtract", [](const array& a, const array& b) { return subtract(a, b, Device::cpu); },
       [](float a, float b) { return a - b; }},
      {"multiply", [](const array& a, const array& b) { return multiply(a, b, Device::cpu); },
       [](float a, float b) { return a * b; }},
      {"divide", [](const array& a, const array& b) { return divide(a, b, Device::cpu); },
       [](float a, float b) { return a / b; }},
  };
  const std::vector<std::pair<Shape, Shape>> shapes = {{{1037}, {1037}},    {{7}, {7}},  {{45, 1}, {1, 77}},
                                                       {{45, 77}, {45, 1}}, {{300}, {}}, {{}, {300}},
                                                       {{2, 3, 40}, {40}}};
  for (const auto& [sa, sb] : shapes) {
    const auto [a, va] = floats(sa);
    const auto [b, vb] = floats(sb);
    for (const Op& op : ops) {
      const array out = op.braid_op(a, b);
      const Shape os = broadcast_of(sa, sb);
      const auto xa = broadcast_values(std::vector<double>(va.begin(), va.end()), sa, os);
      const auto xb = broadcast_values(std::vector<double>(vb.begin(), vb.end()), sb, os);
      const auto got = test::values(out);
      ASSERT_EQ(got.size(), xa.size());
      size_t wrong = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const float want = op.ref(static_cast<float>(xa[i]), static_cast<float>(xb[i]));
        wrong += std::bit_cast<uint32_t>(static_cast<float>(got[i])) != std::bit_cast<uint32_t>(want);
      }
      EXPECT_EQ(wrong, 0u) << op.name << " of shapes with " << sa.size() << " and " << sb.size() << " dims, "
                           << got.size() << " elements";
    }
  }
}

TEST(OpsElementwise, BinaryOpsPromoteEveryPairOfDtypesAsMlx) {
  for (const BinaryRow& r : binary_rows()) {
    for (Dtype da : every()) {
      for (Dtype db : every()) {
        const Dtype t = promote_types(da, db);
        const bool accepted = t == complex64 ? r.cref != nullptr : contains(r.dtypes, t);
        if (!accepted) continue;
        const array out = r.fn(ones({2}, da), ones({2}, db), {});
        EXPECT_EQ(out.dtype(), out_dtype(r.out, t)) << r.name << " " << da << " " << db;
      }
    }
  }
  // C++ scalars carry their own dtype.
  EXPECT_EQ((array(1, int8) + 1).dtype(), int32);
  EXPECT_EQ((array(1.0f, float16) * 2.0).dtype(), float32);
  EXPECT_EQ(divide(array(1, int64), array(2, int64)).dtype(), float32);
  EXPECT_EQ(arctan2(array(1, uint64), array(2, int8)).dtype(), float32);
  EXPECT_EQ(logaddexp(array(1.0, float64), array(2, int32)).dtype(), float64);
}

TEST(OpsElementwise, LargeOutputsStreamedPastTheCacheAreExact) {
  const int n = (4 << 20) + 21;  // float32: just over 16 MiB
  const array a = astype(arange(0, n, 1), float32);
  for (const Device& dev : test::test_devices()) {
    const array mx = maximum(a, full({n}, 1000.5f), dev), ne = not_equal(a, full({n}, 7.0f), dev);
    const auto v = test::values(mx), w = test::values(ne);
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += v[i] != std::max(static_cast<double>(i), 1000.5) || (w[i] != 0) != (i != 7);
    EXPECT_EQ(wrong, 0) << test::device_name(dev);
  }
}

// A large output of two short vectors is written through the cache, one of two arrays as
// large is streamed past it (the CPU's rule in backend/cpu/streaming.h): both exact.
TEST(OpsElementwise, LargeOuterSumsAndTheirDoublesAreExact) {
  const int m = 2049;  // m * m float32: just over 16 MiB
  const array col = reshape(astype(arange(0, m, 1), float32), {m, 1});
  const array row = reshape(astype(arange(0, m, 1), float32) * 4096.0f, {1, m});
  for (const Device& dev : test::test_devices()) {
    const array outer = add(col, row, dev);
    const array doubled = add(outer, outer, dev);
    const auto v = test::values(outer), w = test::values(doubled);
    int wrong = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        const double want = static_cast<double>(i) + 4096.0 * static_cast<double>(j);
        wrong += v[i * m + j] != want || w[i * m + j] != 2 * want;
      }
    }
    EXPECT_EQ(wrong, 0) << test::device_name(dev);
  }
}

// Long contiguous float32 runs take the CPU's vector kernels (glibc's libmvec on AVX2
// machines) and the GPU's fast paths: a dense sweep of each function's domain, special values
// included, against the double-precision result, within 4 ulp (or, where the result passes
// through zero away from x = 0, within 2^-23 |x|).
// A float32 element's value does not depend on the layout it is read from: transposed,
// strided and broadcast inputs give the bits of the contiguous input (compile's fused nodes
// read their inputs in other layouts than the unfused ops do).
TEST(OpsElementwise, Float32TranscendentalsDoNotDependOnTheLayout) {
  const array x = multiply(random::normal({64, 48}, float32, 0, 1, random::key(11)), array(3.0f));
  eval(x);
  const std::vector<std::pair<const char*, std::function<array(const array&, StreamOrDevice)>>> fns = {
      {"exp", [](const array& a, StreamOrDevice s) { return exp(a, s); }},
      {"expm1", [](const array& a, StreamOrDevice s) { return expm1(a, s); }},
      {"log", [](const array& a, StreamOrDevice s) { return log(abs(a, s), s); }},
      {"log1p", [](const array& a, StreamOrDevice s) { return log1p(abs(a, s), s); }},
      {"sin", [](const array& a, StreamOrDevice s) { return sin(a, s); }},
      {"cos", [](const array& a, StreamOrDevice s) { return cos(a, s); }},
      {"tanh", [](const array& a, StreamOrDevice s) { return tanh(a, s); }},
      {"erf", [](const array& a, StreamOrDevice s) { return erf(a, s); }},
  };
  for (const Device& dev : test::test_devices()) {
    for (const auto& [name, f] : fns) {
      const std::string what = std::string(name) + " on " + test::device_name(dev);
      const array flat = f(x, dev);
      EXPECT_TRUE(array_equal(f(transpose(x), dev), transpose(flat), true).item<bool>())
          << what << " transposed";
      EXPECT_TRUE(
          array_equal(f(slice(x, {0, 1}, {64, 48}, {3, 2}), dev), slice(flat, {0, 1}, {64, 48}, {3, 2}), true)
              .item<bool>())
          << what << " strided";
      const array one = slice(x, {5, 7}, {6, 8});
      EXPECT_TRUE(array_equal(f(broadcast_to(one, {64, 48}), dev),
                              broadcast_to(slice(flat, {5, 7}, {6, 8}), {64, 48}), true)
                      .item<bool>())
          << what << " broadcast";
    }
  }
}

TEST(OpsElementwise, Float32TranscendentalsAreWithinFourUlpOnLongContiguousRuns) {
  struct Fn {
    const char* name;
    std::function<array(const array&, StreamOrDevice)> op;
    double (*ref)(double);
    double lo, hi;
    bool zero_crossings;
  };
  const std::vector<Fn> fns = {
      {"exp", [](const array& x, StreamOrDevice s) { return exp(x, s); }, [](double x) { return std::exp(x); }, -110, 95, false},
      {"expm1", [](const array& x, StreamOrDevice s) { return expm1(x, s); }, [](double x) { return std::expm1(x); }, -30, 95, false},
      {"log", [](const array& x, StreamOrDevice s) { return log(x, s); }, [](double x) { return std::log(x); }, 0, 1e30, false},
      {"log1p", [](const array& x, StreamOrDevice s) { return log1p(x, s); }, [](double x) { return std::log1p(x); }, -1, 1e30, false},
      {"sin", [](const array& x, StreamOrDevice s) { return sin(x, s); }, [](double x) { return std::sin(x); }, -100, 100, true},
      {"cos", [](const array& x, StreamOrDevice s) { return cos(x, s); }, [](double x) { return std::cos(x); }, -100, 100, true},
      {"tanh", [](const array& x, StreamOrDevice s) { return tanh(x, s); }, [](double x) { return std::tanh(x); }, -12, 12, false},
      {"erf", [](const array& x, StreamOrDevice s) { return erf(x, s); }, [](double x) { return std::erf(x); }, -6, 6, false},
  };
  const int n = 1 << 16;
  for (const Fn& f : fns) {
    std::vector<float> x;
    x.reserve(n + 16);
    const bool log_spaced = f.hi > 1e3;
    for (int i = 0; i < n; ++i) {
      const double t = (i + 0.5) / n;
      x.push_back(static_cast<float>(log_spaced ? f.lo + std::pow(10.0, -30 + 60 * t) : f.lo + (f.hi - f.lo) * t));
    }
    for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, 1e-7f, -1e-7f, fInf, -fInf, fNaN, 88.72f, 88.73f, -87.3f,
                    -103.9f, -1.0f, 1.0f}) {
      x.push_back(v);
    }
    const array in = array(x.data(), {static_cast<int32_t>(x.size())}, float32);
    for (const Device& dev : test::test_devices()) {
      const auto got = test::values(f.op(in, dev));
      int bad = 0;
      for (size_t i = 0; i < x.size() && bad < 5; ++i) {
        const double want = f.ref(static_cast<double>(x[i]));
        const float wf = static_cast<float>(want);
        const float gf = static_cast<float>(got[i]);
        if (std::isnan(want) || std::isnan(gf)) {
          if (std::isnan(want) != std::isnan(gf)) ++bad, ADD_FAILURE() << f.name << "(" << x[i] << ") = " << gf;
          continue;
        }
        if (std::isinf(wf) || std::isinf(gf)) {
          if (wf != gf) ++bad, ADD_FAILURE() << f.name << "(" << x[i] << ") = " << gf << ", want " << wf;
          continue;
        }
        const double ulp = std::nextafter(std::fabs(wf), fInf) - std::fabs(wf);
        const double err = std::fabs(static_cast<double>(gf) - want);
        const double allowed = std::max(4 * ulp, f.zero_crossings ? 0x1p-23 * std::fabs(x[i]) : 0.0);
        if (err > allowed && err > 1e-44) {
          ++bad;
          ADD_FAILURE() << test::device_name(dev) << " " << f.name << "(" << x[i] << ") = " << gf << ", want " << want
                        << " (" << err / ulp << " ulp)";
        }
      }
    }
  }
}

TEST(OpsElementwise, IntegerDivisionTruncatesAndRemainderTakesTheDivisorsSign) {
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : {int8, int16, int32, int64}) {
      const array a = test::make({7, -7, 7, -7, 0, 5}, {6}, dt), b = test::make({2, 2, -2, -2, 3, 0}, {6}, dt);
      EXPECT_EQ(test::values(floor_divide(a, b, dev)), (std::vector<double>{3, -3, -3, 3, 0, 0})) << dt;
      EXPECT_EQ(test::values(remainder(a, b, dev)), (std::vector<double>{1, 1, -1, -1, 0, 0})) << dt;
      auto qr = divmod(a, b, dev);
      ASSERT_EQ(qr.size(), 2u);
      EXPECT_EQ(test::values(qr[0]), test::values(floor_divide(a, b, dev)));
      EXPECT_EQ(test::values(qr[1]), test::values(remainder(a, b, dev)));
    }
    // The most negative value divided by -1 wraps instead of trapping.
    EXPECT_EQ(test::values(floor_divide(array(INT32_MIN), array(-1), dev)), (std::vector<double>{INT32_MIN}));
    EXPECT_EQ(test::values(remainder(array(INT32_MIN), array(-1), dev)), (std::vector<double>{0}));
    for (Dtype dt : test::kRealFloatDtypes) {
      const array a = test::make({7, -7, 7, -7, 5.5}, {5}, dt), b = test::make({2, 2, -2, -2, 0}, {5}, dt);
      EXPECT_EQ(test::values(floor_divide(a, b, dev)), (std::vector<double>{3, -4, -4, 3, kInf})) << dt;
      auto r = test::values(remainder(a, b, dev));
      EXPECT_EQ(std::vector<double>(r.begin(), r.begin() + 4), (std::vector<double>{1, 1, -1, -1})) << dt;
      EXPECT_TRUE(std::isnan(r[4])) << dt;
    }
  }
}

TEST(OpsElementwise, IntegerPowersStayIntegersAndWrap) {
  for (const Device& dev : test::test_devices()) {
    const array p = power(array({2, -3, 1, -1, -1, 2, 0}), array({10, 3, -5, -3, -4, -1, 0}), dev);
    EXPECT_EQ(p.dtype(), int32);
    // A negative exponent gives 0 whatever the base, 1 and -1 included, as MLX's kernels.
    EXPECT_EQ(test::values(p), (std::vector<double>{1024, -27, 0, 0, 0, 0, 1}));
    EXPECT_EQ(test::values(power(array({2}, uint8), array({9}, uint8), dev)), (std::vector<double>{0}));
    EXPECT_EQ(test::values(power(array({3}, int64), array({39}, int64), dev)), (std::vector<double>{4052555153018976267.0}));
    EXPECT_EQ(test::values(power(array({true, false, false}), array({false, false, true}), dev)),
              (std::vector<double>{1, 1, 0}));
  }
}

TEST(OpsElementwise, ShiftsAndBitwiseOpsFollowIntegerSemantics) {
  for (const Device& dev : test::test_devices()) {
    EXPECT_EQ(test::values(left_shift(array({1, -3, 1, 5}), array({3, 2, 31, 40}), dev)),
              (std::vector<double>{8, -12, INT32_MIN, 0}));
    EXPECT_EQ(test::values(right_shift(array({-8, 8, -1, -5, 5}), array({1, 2, 40, 40, 40}), dev)),
              (std::vector<double>{-4, 2, -1, -1, 0}));
    const array sb = left_shift(array({true, true}), array({true, false}), dev);
    EXPECT_EQ(sb.dtype(), uint8);
    EXPECT_EQ(test::values(sb), (std::vector<double>{2, 1}));
    EXPECT_EQ(test::values(right_shift(array({200}, uint8), array({3}, uint8), dev)), (std::vector<double>{25}));
    EXPECT_EQ(test::values(bitwise_and(array({true, true}), array({true, false}), dev)), (std::vector<double>{1, 0}));
    EXPECT_EQ(bitwise_xor(array({true}), array({true}), dev).dtype(), bool_);
    EXPECT_EQ(test::values(bitwise_invert(array({0, 5, -1}), dev)), (std::vector<double>{-1, -6, 0}));
    EXPECT_EQ(test::values(bitwise_invert(array({uint8_t{0}, uint8_t{200}}), dev)), (std::vector<double>{255, 55}));
    const array inv_b = bitwise_invert(array({true, false}), dev);
    EXPECT_EQ(inv_b.dtype(), bool_);
    EXPECT_EQ(test::values(inv_b), (std::vector<double>{0, 1}));
  }
}

TEST(OpsElementwise, IntegerArithmeticWrapsAndBoolArithmeticIsLogical) {
  for (const Device& dev : test::test_devices()) {
    EXPECT_EQ(test::values(add(array({INT32_MAX}), array({1}), dev)), (std::vector<double>{INT32_MIN}));
    EXPECT_EQ(test::values(multiply(array({uint16_t{65535}}), array({uint16_t{65535}}), dev)), (std::vector<double>{1}));
    EXPECT_EQ(test::values(negative(array({INT32_MIN}), dev)), (std::vector<double>{INT32_MIN}));
    EXPECT_EQ(test::values(abs(array({int8_t{-128}, int8_t{-5}}), dev)), (std::vector<double>{-128, 5}));
    EXPECT_EQ(test::values(square(array({int8_t{16}}), dev)), (std::vector<double>{0}));
    const array t({true, true, false, false}), f({true, false, true, false});
    EXPECT_EQ(test::values(add(t, f, dev)), (std::vector<double>{1, 1, 1, 0}));
    EXPECT_EQ(test::values(subtract(t, f, dev)), (std::vector<double>{0, 1, 1, 0}));
    EXPECT_EQ(test::values(multiply(t, f, dev)), (std::vector<double>{1, 0, 0, 0}));
    EXPECT_EQ(add(t, f, dev).dtype(), bool_);
  }
}

TEST(OpsElementwise, SpecialFloatValuesInEveryFloatDtype) {
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : test::kRealFloatDtypes) {
      const array x = test::make({kNaN, kInf, -kInf, -0.0, 1.0}, {5}, dt);
      const std::string what = tag("special", dt, dev, "");
      EXPECT_EQ(test::values(isnan(x, dev)), (std::vector<double>{1, 0, 0, 0, 0})) << what;
      EXPECT_EQ(test::values(isinf(x, dev)), (std::vector<double>{0, 1, 1, 0, 0})) << what;
      EXPECT_EQ(test::values(isfinite(x, dev)), (std::vector<double>{0, 0, 0, 1, 1})) << what;
      EXPECT_EQ(test::values(isposinf(x, dev)), (std::vector<double>{0, 1, 0, 0, 0})) << what;
      EXPECT_EQ(test::values(isneginf(x, dev)), (std::vector<double>{0, 0, 1, 0, 0})) << what;
      test::expect_close(test::values(sign(x, dev)), {0, 1, -1, 0, 1}, 0, 0, what + " sign");
      test::expect_close(test::values(abs(x, dev)), {kNaN, kInf, kInf, 0, 1}, 0, 0, what + " abs");
      EXPECT_TRUE(std::signbit(test::values(negative(test::make({0.0}, {1}, dt), dev))[0])) << what;
      // NaN wins either way round.
      const array y = test::make({1, kNaN, kInf, -kInf, -1}, {5}, dt);
      test::expect_close(test::values(maximum(x, y, dev)), {kNaN, kNaN, kInf, -0.0, 1}, 0, 0, what + " maximum");
      test::expect_close(test::values(minimum(x, y, dev)), {kNaN, kNaN, -kInf, -kInf, -1}, 0, 0, what + " minimum");
      test::expect_close(test::values(logaddexp(test::make({-kInf, kInf, kInf, -kInf, kNaN}, {5}, dt),
                                                test::make({-kInf, kInf, -kInf, 0, 0}, {5}, dt), dev)),
                         {-kInf, kInf, kInf, 0, kNaN}, 0, 0, what + " logaddexp");
      test::expect_close(test::values(log(test::make({0, -1}, {2}, dt), dev)), {-kInf, kNaN}, 0, 0, what + " log");
      test::expect_close(test::values(sqrt(test::make({-1}, {1}, dt), dev)), {kNaN}, 0, 0, what + " sqrt");
      test::expect_close(test::values(erfinv(test::make({1, -1, 2, 0}, {4}, dt), dev)), {kInf, -kInf, kNaN, 0}, 0, 0,
                         what + " erfinv");
      test::expect_close(test::values(sigmoid(test::make({-1000, 1000, kNaN}, {3}, dt), dev)), {0, 1, kNaN}, 0, 0,
                         what + " sigmoid");
      test::expect_close(test::values(divide(test::make({1, -1, 0}, {3}, dt), test::make({0, 0, 0}, {3}, dt), dev)),
                         {kInf, -kInf, kNaN}, 0, 0, what + " divide");
      test::expect_close(test::values(equal(x, x, dev)), {0, 1, 1, 1, 1}, 0, 0, what + " equal");
      test::expect_close(test::values(not_equal(x, x, dev)), {1, 0, 0, 0, 0}, 0, 0, what + " not_equal");
    }
  }
}

TEST(OpsElementwise, RoundIsHalfToEvenAndTakesDecimals) {
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : test::kRealFloatDtypes) {
      const array x = test::make({0.5, 1.5, 2.5, -0.5, -1.5, 3.49}, {6}, dt);
      EXPECT_EQ(test::values(round(x, dev)), (std::vector<double>{0, 2, 2, -0.0, -2, 3})) << dt;
      EXPECT_EQ(round(x, 1, dev).dtype(), dt);
    }
    test::expect_close(test::values(round(array({1.2345f, -2.5f, 0.125f}), 2, dev)), {1.23, -2.5, 0.12}, 1e-6, 0, "decimals");
    // Integers: unchanged at 0 decimals; negative decimals round to tens, ties to even.
    const array i = array({125, 135, -15});
    EXPECT_EQ(round(i, dev).dtype(), int32);
    EXPECT_EQ(test::values(round(i, -1, dev)), (std::vector<double>{120, 140, -20}));
    EXPECT_EQ(round(i, -1, dev).dtype(), int32);
    EXPECT_EQ(test::values(round(array({1.25f}, float16), 1, dev)), (std::vector<double>{1.2001953125}));
  }
}

TEST(OpsElementwise, NanToNumReplacesWithDefaultsOrGivenValues) {
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : {float16, bfloat16, float32}) {
      const array x = test::make({kNaN, kInf, -kInf, 2}, {4}, dt);
      const finfo fi(dt);
      EXPECT_EQ(test::values(nan_to_num(x, 0.0f, std::nullopt, std::nullopt, dev)),
                (std::vector<double>{0, fi.max, fi.min, 2}))
          << dt;
      EXPECT_EQ(test::values(nan_to_num(x, 5.0f, 10.0f, -20.0f, dev)), (std::vector<double>{5, 10, -20, 2})) << dt;
      EXPECT_EQ(nan_to_num(x, 0.0f, std::nullopt, std::nullopt, dev).dtype(), dt);
    }
    const array i = array({1, 2});
    EXPECT_EQ(nan_to_num(i, 0.0f, std::nullopt, std::nullopt, dev).id(), i.id());
  }
}

TEST(OpsElementwise, IsCloseAllCloseAndArrayEqual) {
  for (const Device& dev : test::test_devices()) {
    const array a({1.0f, 1.0f, fNaN, fInf, fInf, -fInf, 0.0f, 100.0f});
    const array b({1.0f + 1e-6f, 1.1f, fNaN, fInf, -fInf, -fInf, 1e-9f, 100.001f});
    EXPECT_EQ(test::values(isclose(a, b, 1e-5, 1e-8, false, dev)), (std::vector<double>{1, 0, 0, 1, 0, 1, 1, 1}));
    EXPECT_EQ(test::values(isclose(a, b, 1e-5, 1e-8, true, dev)), (std::vector<double>{1, 0, 1, 1, 0, 1, 1, 1}));
    EXPECT_EQ(isclose(a, b, 1e-5, 1e-8, false, dev).dtype(), bool_);
    // Not symmetric: the tolerance scales with |b|.
    EXPECT_TRUE(allclose(array(1.0f), array(10.0f), 0.91, 0, false, dev).item<bool>());
    EXPECT_FALSE(allclose(array(10.0f), array(1.0f), 0.91, 0, false, dev).item<bool>());
    EXPECT_TRUE(allclose(array({1, 2}), array({1.0f, 2.0f}), 1e-5, 1e-8, false, dev).item<bool>());
    EXPECT_FALSE(allclose(array({1.0f, fNaN}), array({1.0f, fNaN}), 1e-5, 1e-8, false, dev).item<bool>());
    EXPECT_TRUE(allclose(array({1.0f, fNaN}), array({1.0f, fNaN}), 1e-5, 1e-8, true, dev).item<bool>());
    EXPECT_TRUE(allclose(zeros({0, 3}), zeros({0, 3}), 1e-5, 1e-8, false, dev).item<bool>());
    const array ac = allclose(array({1.0f, 2.0f}), array({1.0f, 2.0f}), 1e-5, 1e-8, false, dev);
    EXPECT_EQ(ac.ndim(), 0u);
    EXPECT_EQ(ac.dtype(), bool_);

    EXPECT_TRUE(array_equal(array({1, 2, 3}), array({1.0f, 2.0f, 3.0f}), dev).item<bool>());
    EXPECT_FALSE(array_equal(array({1, 2, 3}), array({1, 2, 4}), dev).item<bool>());
    EXPECT_FALSE(array_equal(array({1, 2}), array({1, 2, 3}), dev).item<bool>());
    EXPECT_FALSE(array_equal(zeros({2, 3}), zeros({3, 2}), dev).item<bool>());
    EXPECT_FALSE(array_equal(array({fNaN}), array({fNaN}), dev).item<bool>());
    EXPECT_TRUE(array_equal(array({fNaN, 1.0f}), array({fNaN, 1.0f}), true, dev).item<bool>());
    EXPECT_TRUE(array_equal(zeros({0}), zeros({0}, int32), dev).item<bool>());
    EXPECT_TRUE(array_equal(transpose(reshape(arange(6), {2, 3})), transpose(reshape(arange(6), {2, 3})), dev).item<bool>());
  }
}

TEST(OpsElementwise, ClipTakesEitherBoundAndPromotes) {
  for (const Device& dev : test::test_devices()) {
    const array x({-3, 0, 3, 7});
    EXPECT_EQ(test::values(clip(x, array(0), array(5), dev)), (std::vector<double>{0, 0, 3, 5}));
    EXPECT_EQ(test::values(clip(x, array(0), std::nullopt, dev)), (std::vector<double>{0, 0, 3, 7}));
    EXPECT_EQ(test::values(clip(x, std::nullopt, array(1), dev)), (std::vector<double>{-3, 0, 1, 1}));
    EXPECT_EQ(clip(x, array(0), array(5), dev).dtype(), int32);
    EXPECT_EQ(clip(x, array(0.5f), std::nullopt, dev).dtype(), float32);
    const array c = clip(x, array({-1, -1, -1, -1}), reshape(array({1, 2}), {2, 1}), dev);
    EXPECT_EQ(c.shape(), (Shape{2, 4}));
    EXPECT_EQ(test::values(c), (std::vector<double>{-1, 0, 1, 1, -1, 0, 2, 2}));
    test::expect_close(test::values(clip(array({fNaN, 2.0f}), array(0.0f), array(1.0f), dev)), {kNaN, 1}, 0, 0, "clip nan");
  }
}

TEST(OpsElementwise, ComplexPartsAndConjugate) {
  for (const Device& dev : test::test_devices()) {
    const array z = make_complex({1, -2}, {3, 4}, {2});
    EXPECT_EQ(real(z, dev).dtype(), float32);
    EXPECT_EQ(test::values(real(z, dev)), (std::vector<double>{1, -2}));
    EXPECT_EQ(test::values(imag(z, dev)), (std::vector<double>{3, 4}));
    test::expect_close(test::values(abs(z, dev)), {std::sqrt(10.0), std::sqrt(20.0)}, 1e-6, 0, "abs complex");
    auto c = test::complex_values(conjugate(z, dev));
    EXPECT_EQ(c[1], std::complex<float>(-2, -4));
    const array f({1.5f, -2.0f});
    EXPECT_EQ(real(f, dev).id(), f.id());
    EXPECT_EQ(conjugate(f, dev).id(), f.id());
    EXPECT_EQ(imag(f, dev).dtype(), float32);
    EXPECT_EQ(test::values(imag(f, dev)), (std::vector<double>{0, 0}));
  }
}

// exp(-inf + i y) is 0 for every y, also an infinite or NaN one (C99's cexp, NumPy; MLX's test).
TEST(OpsElementwise, ComplexExpOfMinusInfinityIsZero) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const Device& dev : test::test_devices()) {
    const array z = make_complex({-inf, -inf, -inf, -inf}, {-inf, inf, nan, 2.0f}, {4});
    for (const auto& c : test::complex_values(exp(z, dev))) {
      EXPECT_EQ(c.real(), 0.0f) << c;
      EXPECT_EQ(c.imag(), 0.0f) << c;
    }
  }
}

TEST(OpsElementwise, StopGradientIsTheIdentity) {
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : every()) {
      const array x = transpose(test::make({1, 0, 2, 1, 3, 0}, {2, 3}, dt));
      const array y = stop_gradient(x, dev);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(y.shape(), x.shape());
      EXPECT_EQ(test::values(y), test::values(x)) << dt;
    }
  }
}

TEST(OpsElementwise, WhereSelectsInEveryDtypeAndLayout) {
  uint32_t seed = 3000;
  for (const Device& dev : test::test_devices()) {
    for (Dtype dt : every()) {
      const auto xv = random_inputs(12, dt, -5, 5, ++seed), yv = random_inputs(12, dt, -5, 5, ++seed);
      const array cond = reshape(array({true, false, true}), {3, 1});
      const array r = where(cond, as_transposed(xv, {3, 4}, dt), test::make(yv, {3, 4}, dt), dev);
      EXPECT_EQ(r.dtype(), dt);
      std::vector<double> want(12);
      for (int i = 0; i < 12; ++i) want[i] = (i / 4 != 1) ? xv[i] : yv[i];
      EXPECT_EQ(test::values(r), want) << dt;
      const array big = where(astype(arange(0, 100003, 1), bool_), test::make({1}, {}, dt), test::make({0}, {}, dt), dev);
      const auto bv = test::values(big);
      EXPECT_EQ(bv[0], 0) << dt;
      EXPECT_EQ(std::count(bv.begin(), bv.end(), 1.0), 100002) << dt;
    }
    EXPECT_EQ(where(array(true), array(1, int8), array(2.0f, float16), dev).dtype(), float16);
    EXPECT_EQ(where(zeros({0, 2}, bool_), array(1), array(2), dev).shape(), (Shape{0, 2}));
  }
}

TEST(OpsElementwise, DegreesAndRadiansUseFloat) {
  EXPECT_EQ(degrees(array(1)).dtype(), float32);
  EXPECT_EQ(radians(array(180.0f, float16)).dtype(), float16);
  EXPECT_NEAR(radians(array(180)).item<float>(), kPi, 1e-6);
  EXPECT_NEAR(degrees(array(kPi, float64)).item<double>(), 180, 1e-12);
}

TEST(OpsOperators, EveryOperatorWithArraysAndScalarsOnEitherSide) {
  const array a({1, 2, 3});
  const array b({3, 2, 1});
  EXPECT_EQ(test::values(a % 2), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(test::values(7 % a), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(test::values(a % b), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(test::values(a == b), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(test::values(a == 2), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(test::values(2 == a), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(test::values(a != 2), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(test::values(2 != a), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(test::values(a < b), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(test::values(a < 2), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(test::values(2 < a), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(test::values(a <= 2), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(test::values(2 <= a), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(test::values(a > 2), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(test::values(2 > a), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(test::values(a >= 2.5f), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(test::values(2 >= a), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ((a == b).dtype(), bool_);
  EXPECT_EQ(test::values(a <= b), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(test::values(a >= b), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(test::values(a > b), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(test::values(a != b), (std::vector<double>{1, 0, 1}));
  const array t({true, true, false}), f({true, false, false});
  EXPECT_EQ(test::values(t && f), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(test::values(t || f), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(test::values(a & b), (std::vector<double>{1, 2, 1}));
  EXPECT_EQ(test::values(a | b), (std::vector<double>{3, 2, 3}));
  EXPECT_EQ(test::values(a ^ b), (std::vector<double>{2, 0, 2}));
  EXPECT_EQ(test::values(a << b), (std::vector<double>{8, 8, 6}));
  EXPECT_EQ(test::values(b >> array({1, 1, 1})), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(test::values(~a), (std::vector<double>{-2, -3, -4}));
  EXPECT_EQ(test::values(-a), (std::vector<double>{-1, -2, -3}));
  // Division by a C++ scalar goes through float32, whatever the scalar's type.
  const array h({2.0f, 4.0f}, float16);
  EXPECT_EQ((h / 2.0).dtype(), float32);
  EXPECT_EQ((2.0 / h).dtype(), float32);
  EXPECT_EQ((h / h).dtype(), float16);
  EXPECT_EQ(test::values(a / 2), (std::vector<double>{0.5, 1, 1.5}));
  EXPECT_EQ(test::values(3 / a), (std::vector<double>{3, 1.5, 1}));
  EXPECT_EQ((array(1, int8) + int8_t{1}).dtype(), int8);
  EXPECT_EQ((array(1, int8) * 1).dtype(), int32);
  EXPECT_EQ((array(1.0, float64) - 1.0f).dtype(), float64);
}

TEST(OpsElementwise, BadInputThrowsInvalidArgumentNamingTheOp) {
  const array f = zeros({2, 3});
  const array c = astype(f, complex64);
  const array i = zeros({2, 3}, int32);
  const array bad = zeros({4});
  struct Case {
    const char* op;
    std::function<void()> call;
  };
  const std::vector<Case> cases = {
      {"negative", [&] { negative(zeros({2}, bool_)); }},
      {"floor", [&] { floor(c); }},
      {"ceil", [&] { ceil(c); }},
      {"erf", [&] { erf(c); }},
      {"erfinv", [&] { erfinv(c); }},
      {"bitwise_invert", [&] { bitwise_invert(f); }},
      {"bitwise_invert", [&] { bitwise_invert(c); }},
      {"bitwise_and", [&] { bitwise_and(f, i); }},
      {"bitwise_or", [&] { bitwise_or(c, c); }},
      {"bitwise_xor", [&] { bitwise_xor(astype(i, float16), i); }},
      {"left_shift", [&] { left_shift(f, i); }},
      {"right_shift", [&] { right_shift(i, astype(i, bfloat16)); }},
      {"arctan2", [&] { arctan2(f, c); }},
      {"floor_divide", [&] { floor_divide(c, f); }},
      {"divmod", [&] { divmod(c, f); }},
      {"nan_to_num", [&] { nan_to_num(astype(f, float64)); }},
      {"nan_to_num", [&] { nan_to_num(c); }},
      {"clip", [&] { clip(f, std::nullopt, std::nullopt); }},
      {"clip", [&] { clip(f, bad, std::nullopt); }},
      {"add", [&] { add(f, bad); }},
      {"divide", [&] { divide(f, bad); }},
      {"floor_divide", [&] { floor_divide(f, bad); }},
      {"floor_divide", [&] { floor_divide(i, bad); }},
      {"remainder", [&] { remainder(f, bad); }},
      {"divmod", [&] { divmod(f, bad); }},
      {"power", [&] { power(f, bad); }},
      {"maximum", [&] { maximum(f, bad); }},
      {"not_equal", [&] { not_equal(f, bad); }},
      {"less_equal", [&] { less_equal(f, bad); }},
      {"greater_equal", [&] { greater_equal(f, bad); }},
      {"logical_and", [&] { logical_and(f, bad); }},
      {"bitwise_or", [&] { bitwise_or(i, zeros({4}, int32)); }},
      {"isclose", [&] { isclose(f, bad); }},
      {"allclose", [&] { allclose(f, bad); }},
      {"where", [&] { where(f, f, bad); }},
  };
  for (const auto& c : cases) expect_invalid(c.call, std::string("[") + c.op + "]", c.op);
}

TEST(OpsElementwise, EveryOpNamesItselfWhenTheDeviceIsUnavailable) {
  if (is_available(Device::gpu)) GTEST_SKIP() << "a GPU is available";
  const Device gpu = Device::gpu;
  const array f = zeros({2});
  for (const UnaryRow& r : unary_rows()) {
    expect_invalid([&] { r.fn(f, gpu); }, std::string("[") + r.name + "]", r.name);
  }
  for (const BinaryRow& r : binary_rows()) {
    expect_invalid([&] { r.fn(f, f, gpu); }, std::string("[") + r.name + "]", r.name);
  }
  expect_invalid([&] { round(f, 2, gpu); }, "[round]", "round decimals");
  expect_invalid([&] { nan_to_num(f, 0.0f, std::nullopt, std::nullopt, gpu); }, "[nan_to_num]", "nan_to_num");
  expect_invalid([&] { divmod(f, f, gpu); }, "[divmod]", "divmod");
  expect_invalid([&] { clip(f, f, std::nullopt, gpu); }, "[clip]", "clip");
  expect_invalid([&] { isclose(f, f, 1e-5, 1e-8, false, gpu); }, "[isclose]", "isclose");
  expect_invalid([&] { allclose(f, f, 1e-5, 1e-8, false, gpu); }, "[allclose]", "allclose");
  expect_invalid([&] { array_equal(f, f, false, gpu); }, "[array_equal]", "array_equal");
  expect_invalid([&] { where(f, f, f, gpu); }, "[where]", "where");
}
