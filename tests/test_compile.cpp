// compile: results equal the function's on every device, the function runs once per input
// signature (count, shapes, dtypes) and again for a new one, captured arrays stay constants,
// evaluation inside a trace throws MLX's error, compiled functions work under grad, jvp and
// vmap and compile grad, disable_compile calls the function directly, and 8 threads calling
// one compiled function get the sequential results with one trace.
#include <gtest/gtest.h>

#include <set>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using test::values;

namespace {

using VecFn = std::function<std::vector<array>(const std::vector<array>&)>;

// f(x, y) = (exp(x) * y + sum(x), x - y), counting its calls in `calls`.
VecFn counted(std::atomic<int>& calls) {
  return [&calls](const std::vector<array>& in) {
    calls.fetch_add(1);
    return std::vector<array>{add(multiply(exp(in[0]), in[1]), sum(in[0])), subtract(in[0], in[1])};
  };
}

void expect_same(const std::vector<array>& got, const std::vector<array>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape());
    EXPECT_EQ(got[i].dtype(), want[i].dtype());
    test::expect_close(values(got[i]), values(want[i]), 1e-6, 1e-6, "output " + std::to_string(i));
  }
}

}  // namespace

TEST(Compile, ResultsEqualTheFunctionOnEveryDevice) {
  for (const auto& d : test::test_devices()) {
    SCOPED_TRACE(test::device_name(d));
    StreamContext ctx(d);
    std::atomic<int> calls{0};
    auto f = counted(calls);
    auto c = compile(f);
    std::vector<array> in = {array({0.5f, -1.0f, 2.0f}), array({3.0f, 4.0f, 5.0f})};
    expect_same(c(in), f(in));
  }
}

TEST(Compile, TheFunctionRunsOncePerSignature) {
  std::atomic<int> calls{0}, uncompiled_calls{0};
  auto c = compile(counted(calls));
  auto f = counted(uncompiled_calls);
  for (int i = 0; i < 5; ++i) {
    std::vector<array> in = {multiply(array({1.0f, 2.0f}), array(static_cast<float>(i))),
                             array({3.0f, 4.0f})};
    expect_same(c(in), f(in));
  }
  EXPECT_EQ(calls.load(), 1);
}

TEST(Compile, ANewShapeDtypeOrInputCountTracesAgain) {
  std::atomic<int> calls{0};
  auto c = compile([&calls](const std::vector<array>& in) {
    calls.fetch_add(1);
    array acc = in[0];
    for (size_t i = 1; i < in.size(); ++i) acc = add(acc, in[i]);
    return std::vector<array>{multiply(acc, array(2, acc.dtype()))};
  });
  c({array({1.0f, 2.0f})});
  c({array({1.0f, 2.0f, 3.0f})});
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(c({array({1, 2})})[0].dtype(), int32);
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(values(c({array({1.0f}), array({2.0f})})[0]), std::vector<double>{6.0});
  EXPECT_EQ(calls.load(), 4);
  c({array({5.0f, 6.0f})});
  EXPECT_EQ(calls.load(), 4);
}

TEST(Compile, CapturedArraysAreConstants) {
  array w({10.0f, 20.0f});
  auto c = compile([w](const std::vector<array>& in) { return std::vector<array>{add(in[0], exp(w))}; });
  EXPECT_EQ(values(c({array({1.0f, 2.0f})})[0]), values(add(array({1.0f, 2.0f}), exp(w))));
  EXPECT_EQ(values(c({array({3.0f, 4.0f})})[0]), values(add(array({3.0f, 4.0f}), exp(w))));
}

TEST(Compile, RepeatedSubexpressionsAreBuiltOnce) {
  auto c = compile([](const std::vector<array>& in) {
    array y = add(in[0], array(1.0f));
    array z = add(in[0], array(1.0f));  // the same op on an equal constant: one node
    return std::vector<array>{y, z, multiply(y, z)};
  });
  auto out = c({array({1.0f, 2.0f})});
  EXPECT_EQ(out[0].id(), out[1].id());
  EXPECT_EQ(values(out[2]), (std::vector<double>{4.0, 9.0}));
  // Different constants or ops stay apart.
  auto d = compile([](const std::vector<array>& in) {
    return std::vector<array>{add(in[0], array(1.0f)), add(in[0], array(2.0f)), subtract(in[0], array(1.0f))};
  });
  auto o = d({array({1.0f})});
  EXPECT_NE(o[0].id(), o[1].id());
  EXPECT_NE(o[0].id(), o[2].id());
  EXPECT_EQ(values(o[1]), (std::vector<double>{3.0}));
  EXPECT_EQ(values(o[2]), (std::vector<double>{0.0}));
}

TEST(Compile, NoSimplifyKeepsRepeatsApart) {
  // CompileMode::no_simplify (as MLX's): the trace keeps each repeated expression, equal
  // scalar and copy as traced; the mode in effect at tracing shapes the cached trace.
  auto fn = [](const std::vector<array>& in) {
    array y = add(in[0], array(1.0f));
    array z = add(in[0], array(1.0f));
    return std::vector<array>{y, z, copy(multiply(y, z))};
  };
  set_compile_mode(CompileMode::no_simplify);
  auto c = compile(fn);
  auto out = c({array({1.0f, 2.0f})});
  EXPECT_NE(out[0].id(), out[1].id());
  std::set<std::uintptr_t> ones;  // the two 1s, apart (read by one fused node or two nodes)
  for (const array& o : {out[0], out[1]}) {
    for (const auto& in : o.inputs()) {
      if (in.ndim() == 0) ones.insert(in.id());
    }
  }
  EXPECT_EQ(ones.size(), 2u);
  EXPECT_STREQ(out[2].primitive().name(), "Copy");
  EXPECT_EQ(values(out[2]), (std::vector<double>{4.0, 9.0}));
  set_compile_mode(CompileMode::enabled);
  out = c({array({2.0f, 3.0f})});  // the trace made under no_simplify, replayed
  EXPECT_NE(out[0].id(), out[1].id());
  EXPECT_EQ(values(out[2]), (std::vector<double>{9.0, 16.0}));
  auto simplified = compile(fn)({array({1.0f, 2.0f})});
  EXPECT_EQ(simplified[0].id(), simplified[1].id());
  EXPECT_EQ(values(simplified[2]), (std::vector<double>{4.0, 9.0}));
}

TEST(Compile, NodesReadingNoInputAreStepsAsMlx) {
  // As MLX's compile, every node the function builds is replayed, also one that reads none of
  // the inputs, so equal scalars merge and repeated expressions of them are built once.
  set_compile_mode(CompileMode::no_fuse);
  auto scalars = compile([](const std::vector<array>&) {
    return std::vector<array>{abs(array(-1.0f)), abs(array(-1.0f))};
  })({});
  EXPECT_EQ(scalars[0].inputs().at(0).id(), scalars[1].inputs().at(0).id());
  EXPECT_EQ(scalars[1].item<float>(), 1.0f);
  auto maxima = compile([](const std::vector<array>&) {
    array a({-1.0f, 2.0f});
    array b = maximum(a, array(0.0f)), c = maximum(negative(a), array(0.0f));
    return std::vector<array>{b, c, add(b, c)};
  })({array({-1.0f, 2.0f})});
  EXPECT_EQ(maxima[0].inputs().at(1).id(), maxima[1].inputs().at(1).id());
  EXPECT_EQ(values(maxima[2]), (std::vector<double>{1.0, 2.0}));
  // Multi-output ops: equal calls merge output by output, in order.
  auto sums = compile([](const std::vector<array>&) {
    auto c = divmod(array(1.0f), array(2.0f)), d = divmod(array(1.0f), array(2.0f));
    return std::vector<array>{add(c[0], d[0]), add(c[1], d[1])};
  })({});
  EXPECT_EQ(sums[0].inputs().at(0).id(), sums[0].inputs().at(1).id());
  EXPECT_EQ(sums[1].inputs().at(0).id(), sums[1].inputs().at(1).id());
  auto same = compile([](const std::vector<array>&) { return divmod(array(1.0f), array(1.0f)); })({});
  EXPECT_EQ(same[0].inputs().at(0).id(), same[0].inputs().at(1).id());
  EXPECT_EQ(same[0].inputs().at(0).id(), same[1].inputs().at(0).id());
  auto stacked = compile([](const std::vector<array>&) {
    auto c = divmod(array(1.0f), array(2.0f)), d = divmod(array(1.0f), array(2.0f));
    return std::vector<array>{stack({c[0], c[1], d[0], d[1]})};
  })({})[0];
  ASSERT_EQ(stacked.inputs().size(), 4u);
  EXPECT_EQ(stacked.inputs()[0].id(), stacked.inputs()[2].id());
  EXPECT_EQ(stacked.inputs()[1].id(), stacked.inputs()[3].id());
  EXPECT_EQ(values(stacked), (std::vector<double>{0.0, 1.0, 0.0, 1.0}));
  set_compile_mode(CompileMode::enabled);
  // A captured graph not computed yet is replayed with the function (recomputed on each
  // call); what the caller holds is neither computed nor changed by it.
  array lazy = exp(array({0.0f, 1.0f}));
  auto f = compile([lazy](const std::vector<array>& in) { return std::vector<array>{add(in[0], lazy)}; });
  EXPECT_EQ(values(f({array({1.0f, 1.0f})})[0]), values(add(array({1.0f, 1.0f}), exp(array({0.0f, 1.0f})))));
  EXPECT_EQ(values(f({array({2.0f, 2.0f})})[0]), values(add(array({2.0f, 2.0f}), exp(array({0.0f, 1.0f})))));
  EXPECT_FALSE(lazy.is_available());
  EXPECT_NE(f({array({1.0f, 1.0f})})[0].inputs().at(1).id(), lazy.id());
  // Once the caller computes it, the calls read its value instead of computing it again.
  eval(lazy);
  array after = f({array({3.0f, 3.0f})})[0];
  EXPECT_EQ(after.inputs().at(1).id(), lazy.id());
  EXPECT_EQ(values(after), values(add(array({3.0f, 3.0f}), exp(array({0.0f, 1.0f})))));
}

TEST(Compile, ACapturedLoadIsReadOnce) {
  // A lazily loaded array is a constant, as in MLX: the file is read once, by the first call
  // (or the caller), not on every call.
  const std::string path = ::testing::TempDir() + "braid_compile_load.npy";
  save(path, full({4}, 1.0f));
  array w = load(path);
  auto f = compile([w](const std::vector<array>& in) { return std::vector<array>{add(in[0], w)}; });
  EXPECT_EQ(values(f({zeros({4})})[0]), std::vector<double>(4, 1.0));
  save(path, full({4}, 7.0f));
  EXPECT_EQ(values(f({zeros({4})})[0]), std::vector<double>(4, 1.0));
  EXPECT_EQ(values(w), std::vector<double>(4, 1.0));
  std::remove(path.c_str());
}

TEST(Compile, AFunctionCapturingAnUnevaluatedInputThrows) {
  array x = add(array({1.0f, 2.0f}), array(2.0f));
  auto c = compile([x](const std::vector<array>& in) { return std::vector<array>{add(in[0], add(x, array(1.0f)))}; });
  try {
    c({x});
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "[compile] Attempting to compile a function with uncaptured inputs is not allowed.");
  }
  eval(x);  // computed, it is a constant like any other captured array
  EXPECT_EQ(values(c({x})[0]), (std::vector<double>{7.0, 9.0}));
}

TEST(Compile, OutputsMayBeInputsOrConstants) {
  auto c = compile([](const std::vector<array>& in) {
    return std::vector<array>{in[0], array(7.0f), in[0]};
  });
  array x({1.0f, 2.0f});
  auto out = c({x});
  EXPECT_EQ(out[0].id(), x.id());
  EXPECT_EQ(out[1].item<float>(), 7.0f);
  EXPECT_EQ(out[2].id(), x.id());
}

TEST(Compile, EvalInsideATraceThrowsMlxsError) {
  auto c = compile([](const std::vector<array>& in) {
    array y = multiply(in[0], in[0]);
    y.eval();
    return std::vector<array>{y};
  });
  try {
    c({array({1.0f, 2.0f})});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "[eval] Attempting to eval an array during function transformations like compile or vmap is not "
        "allowed.");
  }
  // A failed trace leaves nothing behind: a later call traces again, and fails again.
  EXPECT_THROW(c({array({1.0f, 2.0f})}), std::invalid_argument);
}

TEST(Compile, GradOfACompiledFunctionAndCompiledGrad) {
  auto f = [](const std::vector<array>& in) { return std::vector<array>{sum(multiply(sin(in[0]), in[0]))}; };
  auto df = [f](const std::vector<array>& in) { return value_and_grad(f)(in).second; };
  array x({0.1f, 0.7f, -1.3f});
  auto want = df({x});
  auto cf = compile(f);
  expect_same(value_and_grad(cf)({x}).second, want);
  auto cdf = compile(df);
  expect_same(cdf({x}), want);
  array x2 = multiply(x, array(2.0f));
  expect_same(cdf({x2}), df({x2}));
}

TEST(Compile, JvpAndVmapOfACompiledFunction) {
  auto f = [](const std::vector<array>& in) {
    return std::vector<array>{add(multiply(in[0], in[0]), array(1.0f))};
  };
  auto cf = compile(f);
  array x({1.0f, 2.0f, 3.0f});
  array t({1.0f, 1.0f, 1.0f});
  expect_same(jvp(cf, {x}, {t}).second, jvp(f, {x}, {t}).second);
  array m = reshape(arange(6.0, float32), {2, 3});
  expect_same(vmap(cf)({m}), f({m}));
}

TEST(Compile, DisableCompileCallsTheFunctionEachTime) {
  std::atomic<int> calls{0};
  auto c = compile(counted(calls));
  std::vector<array> in = {array({1.0f}), array({2.0f})};
  disable_compile();
  c(in);
  c(in);
  EXPECT_EQ(calls.load(), 2);
  set_compile_mode(CompileMode::no_fuse);
  c(in);
  c(in);
  EXPECT_EQ(calls.load(), 3);
  enable_compile();
}

// MLX's test_shapeless_compile and test_shapeless_compile_with_reduction: one trace serves
// every shape of the same ranks, on every device; a new dtype or rank traces again.
TEST(Compile, ShapelessReplaysOneTraceOnOtherShapes) {
  for (const auto& d : test::test_devices()) {
    SCOPED_TRACE(test::device_name(d));
    StreamContext ctx(d);
    std::atomic<int> calls{0};
    auto f = [&calls](const std::vector<array>& in) {
      calls.fetch_add(1);
      array x = in[0], y = in[1];
      return std::vector<array>{add(add(x, sum(y, 0, /*keepdims=*/true)), exp(x)),
                                mean(multiply(x, y), -1), var(y, 0, false, 1), argmax(x, 1),
                                transpose(cumsum(x, 1)), squeeze(expand_dims(softmax(y, -1), 0), 0),
                                matmul(x, swapaxes(y, -1, -2))};
    };
    std::atomic<int> plain_calls{0};
    auto plain = [&](const std::vector<array>& in) {
      plain_calls.fetch_add(1);
      return f(in);
    };
    CompileCache cache(/*shapeless=*/true);
    for (auto [rows, cols] : {std::pair{2, 3}, {3, 3}, {5, 4}, {1, 7}, {2, 3}}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
      array x = random::normal({rows, cols}, float32, 0.0f, 1.0f, random::key(rows * 10 + cols));
      array y = random::normal({rows, cols}, float32, 0.0f, 1.0f, random::key(rows * 10 + cols + 100));
      expect_same(cache.call(plain, {x, y}), f({x, y}));
    }
    EXPECT_EQ(plain_calls.load(), 1);
    EXPECT_EQ(cache.size(), 1u);
    // A new dtype or a new rank is a new signature.
    cache.call(plain, {ones({2, 2}, float16), ones({2, 2}, float16)});
    cache.call(plain, {ones({2, 2, 1}), ones({2, 2, 1})});
    EXPECT_EQ(plain_calls.load(), 3);
  }
}

// What a shapeless trace keeps from the traced shapes (a captured constant, as MLX's test:
// the function does not run again, so a changed capture is not seen), and what it cannot
// follow (a slice): those shapes are traced again, and every call's result is the function's.
// A reshape keeps the shape asked for, its -1 inferred again on each replay (MLX's).
TEST(Compile, ShapelessTracesAgainWhereAPrimitiveCannotFollowTheShapes) {
  float captured = 1.0f;
  std::atomic<int> calls{0};
  auto add_captured = compile(
      [&](const std::vector<array>& in) {
        calls.fetch_add(1);
        return std::vector<array>{add(in[0], array(captured))};
      },
      /*shapeless=*/true);
  EXPECT_EQ(values(add_captured({array({1.0f, 2.0f})})[0]), (std::vector<double>{2, 3}));
  captured = 2.0f;
  EXPECT_EQ(values(add_captured({array({1.0f, 2.0f, 3.0f})})[0]), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(calls.load(), 1);

  std::atomic<int> reshape_calls{0};
  CompileCache cache(/*shapeless=*/true);
  auto flatten_and_slice = [&](const std::vector<array>& in) {
    reshape_calls.fetch_add(1);
    array x = in[0];
    return std::vector<array>{reshape(x, {-1}), slice(x, {0, 1}, x.shape())};
  };
  for (int n : {2, 3, 2, 4}) {
    array x = arange(static_cast<double>(n * 3), float32);
    x = reshape(x, {n, 3});
    auto got = cache.call(flatten_and_slice, {x});
    EXPECT_EQ(got[0].shape(), (Shape{n * 3}));
    EXPECT_EQ(values(got[0]), values(flatten(x)));
    EXPECT_EQ(got[1].shape(), (Shape{n, 2}));
    EXPECT_EQ(values(got[1]), values(slice(x, {0, 1}, {n, 3})));
  }
  EXPECT_EQ(reshape_calls.load(), 3);  // shapes (2, 3), (3, 3) and (4, 3), each once

  // A stored slice update that no longer fits the input: traced again, never written outside.
  std::atomic<int> update_calls{0};
  auto set_third = compile(
      [&](const std::vector<array>& in) {
        update_calls.fetch_add(1);
        return std::vector<array>{slice_update(in[0], array({9.0f}), Shape{2}, Shape{3})};
      },
      /*shapeless=*/true);
  EXPECT_EQ(values(set_third({zeros({4})})[0]), (std::vector<double>{0, 0, 9, 0}));
  EXPECT_EQ(values(set_third({zeros({5})})[0]), (std::vector<double>{0, 0, 9, 0, 0}));
  EXPECT_EQ(update_calls.load(), 1);
  // Past the end of a shorter input the slice is empty (NumPy's clamping), as uncompiled.
  EXPECT_EQ(values(set_third({zeros({2})})[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(update_calls.load(), 2);

  // Batched products whose batches stop matching (the op broadcast them at the trace).
  auto product = compile([](const std::vector<array>& in) { return std::vector<array>{matmul(in[0], in[1])}; },
                         /*shapeless=*/true);
  for (int b : {2, 1}) {
    array x = reshape(arange(24.0, float32), {2, 3, 4});
    array y = reshape(arange(20.0 * b, float32), {b, 4, 5});
    auto got = product({x, y})[0];
    EXPECT_EQ(got.shape(), (Shape{2, 3, 5}));
    EXPECT_EQ(values(got), values(matmul(x, y)));
  }

  // A compiled function called inside a shapeless trace runs as it is: its mean counts each
  // replay's input, not the first trace's.
  auto inner = compile([](const std::vector<array>& in) { return std::vector<array>{mean(in[0], 0, true)}; });
  auto outer = compile([&](const std::vector<array>& in) { return inner(in); }, /*shapeless=*/true);
  for (int n : {4, 8}) {
    array x = reshape(arange(static_cast<double>(n * 3), float32), {n, 3});
    EXPECT_EQ(values(outer({x})[0]), values(mean(x, 0, true)));
  }
}

// mean's divisor in a shapeless trace is a NumberOfElements node: MLX's test of a compiled
// mean over inputs of 2, 4 and 7 elements. Differentiated or vmapped inside the trace, it
// counts the replay's input as well.
TEST(Compile, NumberOfElementsFollowsTheShapeOfEachReplay) {
  auto cmean = compile([](const std::vector<array>& in) { return std::vector<array>{mean(in[0], true)}; },
                       /*shapeless=*/true);
  for (int n : {2, 4, 7}) EXPECT_EQ(values(cmean({ones({n})})[0]), (std::vector<double>{1}));
  EXPECT_EQ(values(number_of_elements(ones({2, 4}), {0, 1}, true, float32)), (std::vector<double>{0.125}));

  // vmap's count is over the batched input's other axes: one trace for every shape.
  std::atomic<int> calls{0};
  auto row_means = compile(
      [&](const std::vector<array>& in) {
        calls.fetch_add(1);
        return std::vector<array>{vmap([](const array& a) { return mean(a); })(in[0])};
      },
      /*shapeless=*/true);
  // grad's broadcast of the cotangent cannot follow a new shape: each shape is traced, and the
  // count's zero derivative is checked on each.
  auto mean_grad = compile(
      [](const std::vector<array>& in) {
        return std::vector<array>{grad([](const array& a) { return mean(a); })(in[0])};
      },
      /*shapeless=*/true);
  for (auto [rows, cols] : {std::pair{2, 3}, {4, 5}}) {
    array x = reshape(arange(static_cast<double>(rows * cols), float32), {rows, cols});
    test::expect_close(values(row_means({x})[0]), values(mean(x, 1)), 1e-6, 0, "vmap");
    test::expect_close(values(mean_grad({x})[0]), std::vector<double>(rows * cols, 1.0 / (rows * cols)), 1e-7, 0,
                       "grad");
  }
  EXPECT_EQ(calls.load(), 1);
}

// MLX's C++ "test shapeless compile": a reshape to fixed sizes fails for another size (the
// replay's error, as MLX's); a function that can follow shapes replays its trace, keeping its
// constant (the same array), and traces again for a new dtype or rank.
TEST(Compile, ShapelessKeepsItsConstantsAcrossShapesAsMlx) {
  auto to_square = compile([](const std::vector<array>& in) { return std::vector<array>{reshape(in[0], {2, 2})}; },
                           /*shapeless=*/true);
  to_square({array({1, 2, 3, 4})});
  EXPECT_THROW(to_square({array({1, 2, 3, 4, 5})}), std::invalid_argument);

  auto add_two = compile([](const std::vector<array>& in) { return std::vector<array>{in[0] + array({2})}; },
                         /*shapeless=*/true);
  array out = add_two({array({1, 2})})[0];
  array out2 = add_two({array({1, 2, 3, 4})})[0];
  EXPECT_EQ(out.inputs()[1].id(), out2.inputs()[1].id());
  EXPECT_EQ(values(out2), (std::vector<double>{3, 4, 5, 6}));
  out2 = add_two({array({1.0f, 2.0f})})[0];
  EXPECT_NE(out.inputs()[1].id(), out2.inputs()[1].id());
  out2 = add_two({array({1.0f, 2.0f}, {1, 2})})[0];
  EXPECT_NE(out.inputs()[1].id(), out2.inputs()[1].id());
}

// MLX's "shapeless compile with reshape", through the reshape of MLX's Python API: the traced
// reshape keeps (rows * cols, -1) from the first call's shapes, so a new last axis is
// inferred, other leading sizes cannot be held (a ValueError in Python, not a new trace), and
// reshapes asking for different shapes of the same input stay apart; one asking for the
// input's own shape is a node too. braid's own reshape (the one its ops call) keeps tracing
// again for new shapes, so flatten and a matrix-vector product follow them.
TEST(Compile, ShapelessReshapeKeepsTheShapeAskedFor) {
  std::atomic<int> calls{0};
  auto merge_leading = compile(
      [&](const std::vector<array>& in) {
        calls.fetch_add(1);
        const array& x = in[0];
        return std::vector<array>{detail::reshape_keeping_request(x, {x.shape(0) * x.shape(1), -1}),
                                  detail::reshape_keeping_request(x, {-1, x.shape(2)})};
      },
      /*shapeless=*/true);
  auto out = merge_leading({zeros({2, 3, 4})});
  EXPECT_EQ(out[0].shape(), (Shape{6, 4}));
  EXPECT_EQ(out[1].shape(), (Shape{6, 4}));
  array x = reshape(arange(48.0, float32), {2, 3, 8});
  out = merge_leading({x});
  EXPECT_EQ(out[0].shape(), (Shape{6, 8}));
  EXPECT_EQ(values(out[0]), values(x));
  EXPECT_THROW(merge_leading({reshape(arange(40.0, float32), {2, 4, 5})}), std::invalid_argument);  // (-1, 4)
  EXPECT_THROW(merge_leading({zeros({5, 5, 5})}), std::invalid_argument);  // (6, -1) of 125
  EXPECT_EQ(calls.load(), 1);

  auto rows_of_four = compile(
      [](const std::vector<array>& in) {
        return std::vector<array>{detail::reshape_keeping_request(in[0], {-1, 4})};
      },
      /*shapeless=*/true);
  EXPECT_EQ(rows_of_four({zeros({3, 4})})[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(rows_of_four({zeros({2, 8})})[0].shape(), (Shape{4, 4}));

  auto flat_and_matvec = compile(
      [](const std::vector<array>& in) {
        return std::vector<array>{flatten(in[0]), matmul(in[0], ones({in[0].shape(1)}))};
      },
      /*shapeless=*/true);
  for (int n : {2, 4}) {
    auto got = flat_and_matvec({ones({n, 3})});
    EXPECT_EQ(got[0].shape(), (Shape{n * 3}));
    EXPECT_EQ(got[1].shape(), (Shape{n}));
  }
}

TEST(Compile, OutputShapesOfAPrimitiveThatCannotInferThrowsMlxsError) {
  array x = reshape(arange(6.0, float32), {2, 3});
  try {
    x.primitive().output_shapes({arange(6.0, float32)});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "[Primitive::output_shapes] Reshape cannot infer output shapes.");
  }
  array y = add(x, array(1.0f));
  EXPECT_EQ(y.primitive().output_shapes({ones({4, 1}), ones({5})})[0], (Shape{4, 5}));
}

TEST(Compile, EightThreadsCallingOneCompiledFunctionGetTheSequentialResults) {
  braid_test::Watchdog watchdog;
  std::atomic<int> calls{0};
  auto f = counted(calls);
  auto c = compile(f);
  constexpr int kThreads = 8, kCalls = 16;
  std::vector<std::vector<array>> inputs;
  std::vector<std::vector<array>> want;
  for (int i = 0; i < kThreads * kCalls; ++i) {
    inputs.push_back({random::normal({8, 8}, float32, random::key(i)),
                      random::normal({8, 8}, float32, random::key(1000 + i))});
    want.push_back(f(inputs.back()));
  }
  calls.store(0);
  std::vector<std::vector<array>> got(inputs.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kThreads * kCalls; i += kThreads) {
        got[i] = c(inputs[i]);
        eval(got[i]);
      }
    });
  }
  for (auto& th : threads) th.join();
  // One trace per thread: ops without a stream trace on the caller's default stream, and
  // each thread has its own, so the replays run in parallel on the threads' own streams.
  EXPECT_EQ(calls.load(), kThreads);
  for (size_t i = 0; i < got.size(); ++i) expect_same(got[i], want[i]);
}

// MLX's "enable and disable compile" and "simplify noops": nothing to compile is an error
// unless compilation is off; stop_gradient and copy inside a compiled function are dropped,
// their input standing for them.
TEST(Compile, EmptyFunctionsAndNoOpsAsMlx) {
  EXPECT_THROW(compile(nullptr), std::invalid_argument);
  disable_compile();
  EXPECT_NO_THROW(compile(nullptr));
  enable_compile();
  EXPECT_THROW(compile(nullptr), std::invalid_argument);

  const array a = array({1.0f, 2.0f});
  auto fun = [](const std::vector<array>& in) -> std::vector<array> {
    return {copy(stop_gradient(exp(stop_gradient(in[0]))))};
  };
  const array b = compile(fun)({a})[0];
  ASSERT_EQ(b.inputs().size(), 1u);
  EXPECT_EQ(b.inputs()[0].id(), a.id());
  EXPECT_EQ(values(b), values(exp(a)));
}
