// The NumPy reference suite: every case tests/numpy/make_cases.py wrote (inputs and NumPy's
// outputs as .npy files) runs on every device, with contiguous inputs and with transposed
// views of them, and must match within the tolerance of its output dtype:
//
//   dtype     rtol     atol (times the number of elements reduced into one output)
//   float64   1e-12    1e-12
//   float32   2e-6     1e-6
//   float16   2e-3     1e-3
//   bfloat16  1.6e-2   1e-2
//   integers, bool: exact
//
// Adding an op: a row in make_cases.py's main() and an entry in kOps below.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support.h"

using namespace braid;

namespace {

#ifndef BRAID_NUMPY_CASES_DIR
#define BRAID_NUMPY_CASES_DIR ""
#endif

struct Params {
  std::map<std::string, std::string> kv;
  std::vector<int> ints(const std::string& key) const {
    std::vector<int> out;
    auto it = kv.find(key);
    if (it == kv.end() || it->second.empty()) return out;
    std::stringstream ss(it->second);
    for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoi(item));
    return out;
  }
  int integer(const std::string& key, int fallback = 0) const {
    auto it = kv.find(key);
    return it == kv.end() ? fallback : std::stoi(it->second);
  }
};

using OpFn = std::function<array(const std::vector<array>&, const Params&, Device)>;

#define UNARY(op) {#op, [](const auto& x, const Params&, Device d) { return op(x[0], d); }}
#define BINARY(op) {#op, [](const auto& x, const Params&, Device d) { return op(x[0], x[1], d); }}
#define REDUCE(op) \
  {#op, [](const auto& x, const Params& p, Device d) { return op(x[0], p.ints("axes"), p.integer("keepdims"), d); }}

#define SCAN(op)                                                                                   \
  {#op, [](const auto& x, const Params& p, Device d) {                                             \
     return op(x[0], p.integer("axis"), p.integer("reverse"), p.integer("inclusive"), d);           \
   }}

// One line per op: the braid call a manifest op name stands for.
const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> table = {
      BINARY(add), BINARY(subtract), BINARY(multiply), BINARY(divide), BINARY(maximum), BINARY(minimum),
      BINARY(equal), BINARY(not_equal), BINARY(less), BINARY(less_equal), BINARY(greater), BINARY(greater_equal),
      BINARY(logaddexp), BINARY(arctan2), BINARY(power), BINARY(remainder), BINARY(floor_divide),
      BINARY(logical_and), BINARY(logical_or), BINARY(bitwise_and), BINARY(bitwise_or), BINARY(bitwise_xor),
      UNARY(negative), UNARY(exp), UNARY(log), UNARY(sqrt), UNARY(tanh), UNARY(sin), UNARY(cos), UNARY(tan),
      UNARY(arcsin), UNARY(arccos), UNARY(arctan), UNARY(sinh), UNARY(cosh), UNARY(arcsinh), UNARY(arccosh),
      UNARY(arctanh), UNARY(expm1), UNARY(log2), UNARY(log10), UNARY(log1p), UNARY(rsqrt), UNARY(reciprocal),
      UNARY(sigmoid), UNARY(erf), UNARY(degrees), UNARY(radians), UNARY(abs), UNARY(square), UNARY(sign),
      UNARY(floor), UNARY(ceil), UNARY(round), UNARY(isnan), UNARY(isinf), UNARY(isfinite), UNARY(isposinf),
      UNARY(isneginf), UNARY(logical_not), UNARY(bitwise_invert),
      REDUCE(sum), REDUCE(max), REDUCE(min), REDUCE(prod), REDUCE(mean), REDUCE(all), REDUCE(any), REDUCE(logsumexp),
      REDUCE(median),
      {"var", [](const auto& x, const Params& p, Device d) { return var(x[0], p.ints("axes"), p.integer("keepdims"), 0, d); }},
      {"std", [](const auto& x, const Params& p, Device d) { return braid::std(x[0], p.ints("axes"), p.integer("keepdims"), 0, d); }},
      {"argmax", [](const auto& x, const Params& p, Device d) { return argmax(x[0], p.integer("axis"), false, d); }},
      {"argmin", [](const auto& x, const Params& p, Device d) { return argmin(x[0], p.integer("axis"), false, d); }},
      SCAN(cumsum), SCAN(cumprod), SCAN(cummax), SCAN(cummin), SCAN(logcumsumexp),
      {"concatenate", [](const auto& x, const Params& p, Device d) { return concatenate({x[0], x[1]}, p.integer("axis"), d); }},
      {"stack", [](const auto& x, const Params& p, Device d) { return stack({x[0], x[1]}, p.integer("axis"), d); }},
      {"tile", [](const auto& x, const Params& p, Device d) { return tile(x[0], p.ints("reps"), d); }},
      {"repeat", [](const auto& x, const Params& p, Device d) { return repeat(x[0], p.integer("repeats"), p.integer("axis"), d); }},
      {"roll", [](const auto& x, const Params& p, Device d) { return roll(x[0], p.integer("shift"), p.integer("axis"), d); }},
      {"pad",
       [](const auto& x, const Params& p, Device d) {
         return pad(x[0], {0, 1}, Shape(p.ints("low")), Shape(p.ints("high")), array(0), "constant", d);
       }},
      {"slice",
       [](const auto& x, const Params& p, Device d) {
         return slice(x[0], Shape(p.ints("start")), Shape(p.ints("stop")), Shape(p.ints("strides")), d);
       }},
      {"tril", [](const auto& x, const Params& p, Device d) { return tril(x[0], p.integer("k"), d); }},
      {"triu", [](const auto& x, const Params& p, Device d) { return triu(x[0], p.integer("k"), d); }},
      {"diagonal", [](const auto& x, const Params& p, Device d) { return diagonal(x[0], p.integer("offset"), 0, 1, d); }},
      {"sort", [](const auto& x, const Params& p, Device d) { return sort(x[0], p.integer("axis"), d); }},
      {"argsort", [](const auto& x, const Params& p, Device d) { return argsort(x[0], p.integer("axis"), d); }},
      BINARY(matmul), BINARY(inner), BINARY(outer), BINARY(kron),
      {"tensordot",
       [](const auto& x, const Params& p, Device d) {
         if (p.kv.count("axis")) return tensordot(x[0], x[1], p.integer("axis"), d);
         return tensordot(x[0], x[1], p.ints("axes_a"), p.ints("axes_b"), d);
       }},
  };
  return table;
}

struct Case {
  std::string id, op;
  Params params;
  std::vector<Dtype> in_dtypes;
  Dtype out_dtype = float32;
};

Dtype dtype_named(const std::string& name) {
  for (Dtype d : test::kEveryDtype) {
    if (dtype_name(d) == name) return d;
  }
  throw std::runtime_error("unknown dtype " + name);
}

std::string cases_dir() { return test::numpy_cases_dir(); }

std::vector<Case> read_manifest() {
  std::vector<Case> cases;
  std::ifstream f(cases_dir() + "/manifest.tsv");
  for (std::string line; std::getline(f, line);) {
    if (line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cols.push_back(c);
    if (cols.size() != 5) throw std::runtime_error("bad manifest line: " + line);
    Case c{cols[0], cols[1], {}, {}, dtype_named(cols[4])};
    std::stringstream ps(cols[2]);
    for (std::string kv; std::getline(ps, kv, ';');) {
      const auto eq = kv.find('=');
      if (eq != std::string::npos) c.params.kv[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    std::stringstream ds(cols[3]);
    for (std::string d; std::getline(ds, d, ',');) c.in_dtypes.push_back(dtype_named(d));
    cases.push_back(std::move(c));
  }
  return cases;
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = read_manifest();
  return cases;
}

std::vector<std::string> ops_in_manifest() {
  std::set<std::string> names;
  for (const Case& c : all_cases()) names.insert(c.op);
  if (names.empty()) names.insert("missing_manifest");
  return {names.begin(), names.end()};
}

void tolerance(Dtype d, double* rtol, double* atol) {
  switch (d.val()) {
    case Dtype::Val::float64: *rtol = 1e-12, *atol = 1e-12; return;
    case Dtype::Val::float32:
    case Dtype::Val::complex64: *rtol = 2e-6, *atol = 1e-6; return;
    case Dtype::Val::float16: *rtol = 2e-3, *atol = 1e-3; return;
    case Dtype::Val::bfloat16: *rtol = 1.6e-2, *atol = 1e-2; return;
    case Dtype::Val::bool_:
    case Dtype::Val::uint8:
    case Dtype::Val::uint16:
    case Dtype::Val::uint32:
    case Dtype::Val::uint64:
    case Dtype::Val::int8:
    case Dtype::Val::int16:
    case Dtype::Val::int32:
    case Dtype::Val::int64: *rtol = 0, *atol = 0; return;
  }
}

// The same values as `x`, read through a transposed view on `dev` (ndim >= 2), so kernels
// meet strided inputs.
array transposed_view(const array& x, Device dev) {
  if (x.ndim() < 2 || x.size() == 0) return x;
  array t = transpose(x, dev);
  array copy = where(array(true), t, t, dev);  // a contiguous copy of the transposed layout
  return transpose(copy, dev);
}

class NumpyReference : public ::testing::TestWithParam<std::string> {};

TEST_P(NumpyReference, MatchesNumPyOnEveryDeviceAndLayout) {
  const std::string& op = GetParam();
  ASSERT_NE(op, "missing_manifest") << "no NumPy cases at " << cases_dir()
                                    << " (the build runs tests/numpy/make_cases.py; it needs python3-numpy)";
  auto fn = ops().find(op);
  ASSERT_NE(fn, ops().end()) << "make_cases.py has cases for '" << op << "' but kOps has no entry";
  const std::string dir = cases_dir();
  int checked = 0;
  for (const Case& c : all_cases()) {
    if (c.op != op) continue;
    std::vector<array> inputs;
    for (size_t i = 0; i < c.in_dtypes.size(); ++i) {
      inputs.push_back(astype(load(dir + "/" + c.id + ".in" + std::to_string(i) + ".npy"), c.in_dtypes[i], Device::cpu));
    }
    const array expected = load(dir + "/" + c.id + ".out.npy");
    const std::vector<double> want = test::values(expected);
    // values() reads complex64 as its real part: the imaginary parts are compared apart.
    const bool is_complex = c.out_dtype == complex64;
    const std::vector<double> want_imag =
        is_complex ? test::values(imag(expected, Device::cpu)) : std::vector<double>{};
    double rtol = 0, atol = 0;
    tolerance(c.out_dtype, &rtol, &atol);
    const double reduced = expected.size() ? static_cast<double>(inputs[0].size()) / expected.size() : 1;
    atol *= std::max(1.0, reduced);
    for (Device dev : test::test_devices()) {
      for (int layout = 0; layout < 2; ++layout) {
        std::vector<array> in = inputs;
        if (layout == 1) {
          for (array& x : in) x = transposed_view(x, dev);
        }
        const std::string what = c.id + " on " + test::device_name(dev) + (layout ? " (transposed inputs)" : "");
        array got = fn->second(in, c.params, dev);
        EXPECT_EQ(got.dtype(), c.out_dtype) << what;
        EXPECT_EQ(got.shape(), expected.shape()) << what;
        if (got.shape() != expected.shape()) continue;
        test::expect_close(test::values(got), want, rtol, atol, what);
        if (is_complex)
          test::expect_close(test::values(imag(got, dev)), want_imag, rtol, atol,
                             what + " (imaginary parts)");
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Ops, NumpyReference, ::testing::ValuesIn(ops_in_manifest()),
                         [](const auto& info) { return info.param; });

}  // namespace
