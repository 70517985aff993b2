// compile's fusion of element-wise steps into Compiled nodes: the fused node's values are bit
// for bit the unfused function's for every dtype, size (one tile, several, several threads'
// worth) and input layout; what joins a group (single-reader intermediates, broadcasts of
// inputs, MLX's names) and what does not (values read outside the group, GPU streams, the
// no_fuse mode); shapeless replays, exports of functions calling compiled ones, and threads.
// Fusion is the CPU's: the tests run with the CPU as the default device, also where the suite
// runs with the GPU as default (BRAID_DEVICE=gpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;

namespace {

class CompileFusion : public ::testing::Test {
 protected:
  void SetUp() override { set_default_device(Device::cpu); }
  void TearDown() override { set_default_device(saved_); }

 private:
  Device saved_ = default_device();
};

using VecFn = std::function<std::vector<array>(const std::vector<array>&)>;

std::string primitive_name(const array& a) { return a.has_primitive() ? a.primitive().name() : "(leaf)"; }

// Whether `a` is a fused node of exactly `ops` (MLX's name: "Compiled" and the ops' names, in
// the order of the recorded steps, which this check leaves open), and of casts when
// `casts_too` (the ones an op inserts for its dtype rule).
::testing::AssertionResult fused_of(const array& a, std::vector<std::string> ops, bool casts_too = false) {
  std::string rest = primitive_name(a);
  if (rest.rfind("Compiled", 0) != 0) return ::testing::AssertionFailure() << rest << " is not fused";
  rest.erase(0, 8);
  // Longest names first, so that "AsType" is not read as part of another name.
  std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return x.size() > y.size(); });
  for (const auto& op : ops) {
    const auto at = rest.find(op);
    if (at == std::string::npos) return ::testing::AssertionFailure() << primitive_name(a) << " lacks " << op;
    rest.erase(at, op.size());
  }
  for (size_t at; casts_too && (at = rest.find("AsType")) != std::string::npos;) rest.erase(at, 6);
  if (!rest.empty()) return ::testing::AssertionFailure() << primitive_name(a) << " has more: " << rest;
  return ::testing::AssertionSuccess();
}

// Equal element by element, NaNs in the same places.
void expect_identical(const array& got, const array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_TRUE(array_equal(got, want, /*equal_nan=*/true).item<bool>()) << what;
}

// A chain of every fused kernel kind on x (and a second input y): unary ops, binary ops with a
// scalar, a comparison, where, and casts through another dtype.
std::vector<array> mixed(const std::vector<array>& in) {
  const array& x = in[0];
  const array& y = in[1];
  array a = add(multiply(x, array(3, x.dtype())), y);
  array b = where(greater(a, y), subtract(a, x), negative(y));
  array c = astype(astype(b, float32), x.dtype());
  return {maximum(c, abs(x))};
}

std::vector<array> inexact_chain(const std::vector<array>& in) {
  const array& x = in[0];
  array e = exp(multiply(x, array(0.5f, x.dtype())));
  array s = sin(add(e, in[1]));
  return {where(isnan(s), array(0.0f, x.dtype()), divide(s, add(abs(x), array(1.0f, x.dtype()))))};
}

}  // namespace

TEST_F(CompileFusion, EveryDtypeAndSizeEqualsTheFunctionBitForBit) {
  const std::vector<Dtype> all = {bool_, uint8, uint16,  uint32,   uint64,  int8,    int16,
                                  int32, int64, float16, bfloat16, float32, float64, complex64};
  for (Dtype dt : all) {
    if (dt == bool_) continue;  // multiply of bools is not an op; see the comparisons below
    // Past one tile (32768) and into several threads' share for a few dtypes in the sanitizer
    // builds, every dtype elsewhere; the small sizes for all everywhere.
    const bool large = !test::kSanitized || dt == float32 || dt == int8 || dt == complex64;
    for (int n : {0, 1, 7, 32769, 100003}) {
      if (n > 7 && !large) continue;
      SCOPED_TRACE(std::to_string(n));
      array x = astype(multiply(random::normal({n}, float32, 0, 1, random::key(n)), array(20.0f)), dt);
      array y = astype(multiply(random::normal({n}, float32, 0, 1, random::key(n + 1)), array(20.0f)), dt);
      eval({x, y});
      auto fused = compile(mixed)({x, y})[0];
      std::vector<std::string> ops = {"Multiply", "Add",    "Greater", "Subtract",
                                      "Negative", "Select", "Abs",     "Maximum"};
      ASSERT_TRUE(fused_of(fused, ops, /*casts_too=*/true));
      expect_identical(fused, mixed({x, y})[0], "mixed");
      if (is_floating_point(dt) && dt != complex64) {
        auto f = compile(inexact_chain)({x, y})[0];
        EXPECT_TRUE(
            fused_of(f, {"Multiply", "Exp", "Add", "Sin", "IsNaN", "Abs", "Add", "Divide", "Select"}));
        expect_identical(f, inexact_chain({x, y})[0], "floating");
      }
    }
  }
  // Bool inputs through comparisons and logical ops.
  array p = greater(random::normal({1000}, float32, 0, 1, random::key(3)), array(0.0f));
  array q = less(random::normal({1000}, float32, 0, 1, random::key(4)), array(0.5f));
  eval({p, q});
  auto logic = [](const std::vector<array>& in) {
    return std::vector<array>{logical_or(logical_and(in[0], logical_not(in[1])), equal(in[0], in[1]))};
  };
  expect_identical(compile(logic)({p, q})[0], logic({p, q})[0], "bool");
}

TEST_F(CompileFusion, InputsOfAnyLayoutAreReadBroadcastAndStrided) {
  array m = random::normal({300, 200}, float32, 0, 1, random::key(5));
  array col = random::normal({300, 1}, float32, 0, 1, random::key(6));
  array row = random::normal({200}, float32, 0, 1, random::key(7));
  eval({m, col, row});
  auto f = [](const std::vector<array>& in) {
    return std::vector<array>{abs(add(multiply(in[0], in[1]), in[2]))};
  };
  auto c = compile(f);
  const std::vector<std::vector<array>> cases = {
      {m, col, row},                                                     // broadcast columns and rows
      {transpose(transpose(m)), col, array(2.0f)},                       // a scalar
      {transpose(m), transpose(col), reshape(row, {200, 1})},            // transposed
      {slice(m, {0, 0}, {300, 200}, {2, 3}), array(1.5f), array(0.5f)},  // strided
      {broadcast_to(row, {300, 200}), col, m},                           // a broadcast input
      {array(3.0f), array(-1.0f), array(0.25f)},                         // 0-d, one element
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    auto got = c(cases[i])[0];
    EXPECT_TRUE(fused_of(got, {"Multiply", "Add", "Abs"}));
    expect_identical(got, f(cases[i])[0], "case " + std::to_string(i));
  }
}

// Inputs read through their strides are gathered a tile at a time: tiles that start inside a
// row, 3-d broadcasts along any axis, element sizes 1 to 8 (a float64 input cast inside the
// group is wider than every fused value), and several threads' tiles.
TEST_F(CompileFusion, GatheredInputsOfEveryElementSizeAcrossTiles) {
  const Shape shape{7, 301, 149};
  auto f = [](const std::vector<array>& in) {
    array x = add(astype(in[0], float32), astype(in[1], float32));
    return std::vector<array>{multiply(x, astype(in[2], float32))};
  };
  auto c = compile(f);
  for (Dtype t : {int8, float16, float32, float64}) {
    SCOPED_TRACE(dtype_name(t));
    array a = astype(multiply(random::normal(shape, float32, 0, 1, random::key(1)), array(20.0f)), t);
    array mid = astype(random::normal({7, 1, 149}, float32, 0, 1, random::key(2)), t);
    array lead = astype(random::normal({301, 1}, float32, 0, 1, random::key(3)), t);
    array swapped = astype(random::normal({149, 301, 7}, float32, 0, 1, random::key(4)), t);
    eval({a, mid, lead, swapped});
    const std::vector<std::vector<array>> cases = {
        {a, mid, lead},
        {transpose(swapped), lead, mid},
        {slice(astype(random::normal({7, 602, 149}, float32, 0, 1, random::key(5)), t), {0, 1, 0},
               {7, 602, 149}, {1, 2, 1}),
         broadcast_to(mid, shape), a},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
      auto got = c(cases[i])[0];
      EXPECT_TRUE(fused_of(got, {"Add", "Multiply"}, /*casts_too=*/true));
      expect_identical(got, f(cases[i])[0], "case " + std::to_string(i));
    }
  }
}

TEST_F(CompileFusion, GroupsFollowMlxsRules) {
  // MLX's test_shared_broadcast: the broadcast is read by the fused node and by a sum.
  auto shared = compile([](const std::vector<array>& in) {
    array yy = broadcast_to(in[1], in[2].shape());
    return std::vector<array>{add(in[0], multiply(yy, in[2])), sum(yy)};
  });
  array a = random::normal({10, 10}, float32, 0, 1, random::key(8)), c = random::normal({10, 10});
  auto out = shared({a, array(0.1f), c});
  EXPECT_EQ(primitive_name(out[0]), "CompiledBroadcastMultiplyAdd");
  expect_identical(out[0], add(a, multiply(array(0.1f), c)), "shared broadcast");
  EXPECT_NEAR(out[1].item<float>(), 10.0f, 1e-5);
  // A value the function also returns joins as a second output of the node (MLX's
  // multi-output Compiled): one pass writes both; the outputs are siblings.
  auto two = compile([](const std::vector<array>& in) {
    array h = exp(add(in[0], array(1.0f)));
    return std::vector<array>{h, sqrt(multiply(h, array(2.0f)))};
  });
  array x = random::uniform({64});
  auto o = two({x});
  EXPECT_TRUE(fused_of(o[0], {"Add", "Exp", "Multiply", "Sqrt"}));
  ASSERT_EQ(o[0].siblings().size(), 1u);
  EXPECT_EQ(o[0].siblings()[0].id(), o[1].id());
  for (const auto& in : o[1].inputs())
    EXPECT_TRUE(in.id() == x.id() || in.ndim() == 0);  // x and the constants
  expect_identical(o[0], exp(add(x, array(1.0f))), "first output");
  expect_identical(o[1], sqrt(multiply(exp(add(x, array(1.0f))), array(2.0f))), "second output");
  // A value read twice inside the group joins it; a lone op stays as it is.
  auto twice = compile([](const std::vector<array>& in) {
    array s = sin(in[0]);
    return std::vector<array>{add(multiply(s, s), s), negative(in[0])};
  });
  auto t = twice({x});
  EXPECT_TRUE(fused_of(t[0], {"Sin", "Multiply", "Add"}));
  EXPECT_EQ(primitive_name(t[1]), "Negative");
  // Steps that are not element-wise are boundaries.
  auto bounded = compile([](const std::vector<array>& in) {
    return std::vector<array>{sqrt(add(sum(exp(add(in[0], array(1.0f)))), array(2.0f)))};
  });
  auto b = bounded({x});
  EXPECT_TRUE(fused_of(b[0], {"Add", "Sqrt"}));
  std::vector<std::string> below;  // the nodes down the first inputs, to the next fused one
  for (array node = b[0].inputs()[0]; node.has_primitive() && !fused_of(node, {"Add", "Exp"});
       node = node.inputs()[0]) {
    below.push_back(primitive_name(node));
  }
  EXPECT_NE(std::find(below.begin(), below.end(), "Sum"), below.end());
  EXPECT_LE(below.size(), 2u);  // the sum and its reshape to a scalar
  EXPECT_NEAR(b[0].item<float>(), std::sqrt(sum(exp(add(x, array(1.0f)))).item<float>() + 2.0f), 1e-3);
}

TEST_F(CompileFusion, ValuesReadOutsideTheGroupBecomeOutputsOfItsNode) {
  // Read after the group by an op that is not element-wise: an output of the node too; every
  // output equals the unfused function's bits, across tiles and threads.
  auto f = [](const std::vector<array>& in) {
    array a = multiply(in[0], in[1]);
    array b = exp(a);
    array c = add(b, in[0]);
    return std::vector<array>{sum(a), c, b};
  };
  for (int n : {5, 100000}) {
    array x = random::uniform({n}, float32, random::key(3)),
          y = random::uniform({n}, float32, random::key(4));
    auto got = compile(f)({x, y});
    auto want = f({x, y});
    ASSERT_EQ(got[1].outputs().size(), 3u);  // c, then a and b, which leave the group too
    EXPECT_TRUE(fused_of(got[1], {"Multiply", "Exp", "Add"}));
    EXPECT_EQ(got[2].primitive_ptr(), got[1].primitive_ptr());
    expect_identical(got[1], want[1], "c");
    expect_identical(got[2], want[2], "b");
    EXPECT_EQ(got[0].item<float>(), want[0].item<float>());
  }
  // Read before the group's root by a step the group depends on (a mean the last op scales
  // by): it cannot leave a node that needs it first, so the groups stay apart.
  auto g = [](const std::vector<array>& in) {
    array h = exp(add(in[0], array(1.0f)));
    return std::vector<array>{sqrt(multiply(h, mean(h)))};
  };
  array x = random::uniform({64}, float32, random::key(5));
  auto got = compile(g)({x});
  EXPECT_TRUE(fused_of(got[0], {"Multiply", "Multiply", "Sqrt"}));  // the mean's scaling joins
  EXPECT_TRUE(got[0].siblings().empty());
  expect_identical(got[0], g({x})[0], "two groups");
  // Of another shape than the root (broadcast into it): not an output of the node.
  auto k = [](const std::vector<array>& in) {
    array r = exp(in[1]);
    return std::vector<array>{add(in[0], r), r};
  };
  array m = random::uniform({4, 8}), v = random::uniform({8});
  auto kept = compile(k)({m, v});
  EXPECT_TRUE(kept[0].siblings().empty());
  expect_identical(kept[0], k({m, v})[0], "broadcast");
  expect_identical(kept[1], k({m, v})[1], "small");
  // A shapeless program keeps its groups apart (a replay may give another shape).
  auto shapeless = compile(f, /*shapeless=*/true);
  auto sl = shapeless({array({1.0f, 2.0f}), array({3.0f, 4.0f})});
  EXPECT_TRUE(sl[1].siblings().empty());
  expect_identical(sl[1], f({array({1.0f, 2.0f}), array({3.0f, 4.0f})})[1], "shapeless");
}

TEST_F(CompileFusion, AValueReadTwiceByOneOpKeepsItsSlotUntilItsLastRead) {
  // e * e read e twice in one op: its slot must be freed once, or two later intermediates
  // share it.
  auto f = [](const std::vector<array>& in) {
    array e = exp(in[0]);
    array m = multiply(e, e);
    return std::vector<array>{multiply(add(sin(in[1]), cos(in[1])), m)};
  };
  for (int n : {3, 40000}) {
    array a = random::uniform(0.0f, 2.0f, {n}, float32, random::key(20)), b = random::uniform({n});
    auto got = compile(f)({a, b})[0];
    EXPECT_TRUE(fused_of(got, {"Exp", "Multiply", "Sin", "Cos", "Add", "Multiply"}));
    expect_identical(got, f({a, b})[0], "e * e");
  }
}

TEST_F(CompileFusion, OneElementAndStridedInputsGiveTheUnfusedBits) {
  auto f = [](const std::vector<array>& in) {
    return std::vector<array>{add(multiply(exp(in[0]), in[1]), sin(in[1]))};
  };
  array y = random::normal({70001});
  array m = random::normal({300, 200});
  const std::vector<std::vector<array>> cases = {
      {array({2.0f}, {1, 1}), random::normal({5})},
      {random::normal({1}), y},
      {transpose(m), transpose(m)},
      {slice(m, {0, 0}, {300, 1}), slice(m, {0, 3}, {300, 4})},
  };
  auto c = compile(f);
  for (size_t i = 0; i < cases.size(); ++i)
    expect_identical(c(cases[i])[0], f(cases[i])[0], "case " + std::to_string(i));
}

TEST_F(CompileFusion, ACompiledFunctionCapturingATracerIsDifferentiatedAndVectorized) {
  // A compiled function closing over a parameter that grad (vmap) traces: its steps are the
  // transform's to differentiate (vectorize), so they are not fused.
  auto loss = [](const array& w) {
    auto g = compile([w](const std::vector<array>& in) {
      return std::vector<array>{add(exp(multiply(in[0], w)), array(1.0f))};
    });
    return sum(g({ones({3})})[0]);
  };
  array w = array({0.5f, 1.0f, -1.0f});
  auto [value, grad_w] = value_and_grad(std::function<array(const array&)>(loss))(w);
  test::expect_close(test::values(grad_w), {std::exp(0.5), std::exp(1.0), std::exp(-1.0)}, 1e-6, 1e-6,
                     "grad");
  auto per_row =
      vmap(std::function<std::vector<array>(const std::vector<array>&)>([](const std::vector<array>& in) {
        array w = in[0];
        auto g = compile(
            [w](const std::vector<array>& x) { return std::vector<array>{exp(add(multiply(x[0], w), w))}; });
        return g({array(2.0f)});
      }))({array({0.0f, 1.0f})});
  test::expect_close(test::values(per_row[0]), {1.0, std::exp(3.0)}, 1e-6, 1e-5, "vmap");
}

TEST_F(CompileFusion, NoFuseModeAndGpuStreamsKeepTheSteps) {
  auto f = [](const std::vector<array>& in) { return std::vector<array>{exp(add(in[0], array(1.0f)))}; };
  array x = array({1.0f, 2.0f});
  auto c = compile(f);
  set_compile_mode(CompileMode::no_fuse);
  auto unfused = c({x})[0];
  set_compile_mode(CompileMode::enabled);
  EXPECT_EQ(primitive_name(unfused), "Exp");
  EXPECT_TRUE(fused_of(c({x})[0], {"Add", "Exp"}));
  for (const auto& d : test::test_devices()) {
    if (d == Device::cpu) continue;
    StreamContext ctx(d);
    auto g = compile(f)({x})[0];
    EXPECT_EQ(primitive_name(g), "Exp");  // the GPU runs the steps as they are
    test::expect_close(test::values(g), test::values(f({x})[0]), 1e-6, 1e-6, "gpu");
  }
}

TEST_F(CompileFusion, ShapelessReplaysTheFusedNodeOnOtherShapes) {
  auto f = [](const std::vector<array>& in) {
    return std::vector<array>{multiply(exp(in[0]), add(in[1], array(2.0f)))};
  };
  auto c = compile(f, /*shapeless=*/true);
  for (const Shape& s : {Shape{4, 3}, Shape{100, 700}, Shape{1, 5}}) {
    array x = random::normal(s), y = random::normal({s[1]});
    auto got = c({x, y})[0];
    EXPECT_TRUE(fused_of(got, {"Exp", "Add", "Multiply"}));
    expect_identical(got, f({x, y})[0], "shape");
  }
}

TEST_F(CompileFusion, ExportingAFunctionThatCallsACompiledOneKeepsItsSteps) {
  auto inner = compile(
      [](const std::vector<array>& in) { return std::vector<array>{tanh(multiply(in[0], array(2.0f)))}; });
  const std::string path =
      (std::filesystem::temp_directory_path() / ("braid_fusion_" + std::to_string(::getpid()) + ".mlxfn"))
          .string();
  export_function(path, [&](const Args& args) { return inner({add(args[0], array(1.0f))}); },
                  {array({0.5f, 1.0f})});
  auto imported = import_function(path);
  array x = array({0.25f, -3.0f});
  expect_identical(imported({x})[0], tanh(multiply(add(x, array(1.0f)), array(2.0f))), "imported");
  std::filesystem::remove(path);
}

TEST_F(CompileFusion, ThreadsCallingOneFusedFunctionGetTheSequentialResults) {
  braid_test::Watchdog watchdog;
  auto c = compile(inexact_chain);
  std::vector<std::vector<array>> inputs;
  std::vector<array> want;
  for (int t = 0; t < 8; ++t) {
    array x = random::normal({70000 + t}, float32, 0, 1, random::key(100 + t));
    array y = random::normal({70000 + t}, float32, 0, 1, random::key(200 + t));
    eval({x, y});
    inputs.push_back({x, y});
    want.push_back(inexact_chain({x, y})[0]);
  }
  eval(want);
  std::vector<array> got(8, array(0.0f));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep) {
        got[t] = c(inputs[t])[0];
        got[t].eval();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) expect_identical(got[t], want[t], "thread " + std::to_string(t));
}

// MLX's test_compile_donates_input_buffer: a fused node writes into the buffer of an input
// nothing else holds, across tiles, with the unfused values.
TEST_F(CompileFusion, AFusedNodeWritesIntoAnInputNothingElseHolds) {
  auto c =
      compile([](const std::vector<array>& in) { return std::vector<array>{add(sin(in[0]), array(1.0f))}; });
  for (int n : {16, 70001}) {
    array x = astype(arange(0, n, 1), float32);
    eval(x);
    const array want = add(sin(x), array(1.0f));
    eval(want);
    const void* buffer = x.desc()->data.get();
    array out = c({x})[0];
    EXPECT_TRUE(fused_of(out, {"Sin", "Add"}));
    x = array(0.0f);  // the fused node's input list holds the only reference now
    eval(out);
    EXPECT_EQ(out.desc()->data.get(), buffer) << n;
    expect_identical(out, want, "donated, " + std::to_string(n) + " elements");
  }
  // Held elsewhere: not donated.
  array x = astype(arange(0, 16, 1), float32);
  eval(x);
  array out = c({x})[0];
  eval(out);
  EXPECT_NE(out.desc()->data.get(), x.desc()->data.get());
}

// MLX's "test compile unary fused": the fused nodes of two calls are equivalent; another
// function's are not.
TEST_F(CompileFusion, FusedNodesOfTheSameStepsAreEquivalent) {
  auto c =
      compile([](const std::vector<array>& in) { return std::vector<array>{abs(negative(exp(in[0])))}; });
  auto other =
      compile([](const std::vector<array>& in) { return std::vector<array>{abs(exp(negative(in[0])))}; });
  const array x({1.0f, 2.0f}), y({3.0f, 4.0f});
  const array a = c({x})[0], b = c({y})[0], d = other({x})[0];
  ASSERT_TRUE(fused_of(a, {"Abs", "Negative", "Exp"}));
  EXPECT_TRUE(a.primitive().is_equivalent(b.primitive()));
  EXPECT_FALSE(a.primitive().is_equivalent(d.primitive()));
}
