// export_function / import_function: MLX's C++ cases (basic, no inputs, two-output ops,
// primitives with state, keyword arguments, variable inputs, another stream, a malformed
// tape), then braid's: a graph over every family of primitives gives the function's values
// on every device, shapeless traces, constants stored once, random draws, what cannot be
// exported, every truncation and many corruptions of a file are clean errors, and 8 threads
// calling one imported function; the callback form (MLX's ExportCallback).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "braid/braid.h"
#include "support.h"

using namespace braid;
using test::values;

namespace {

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "." + std::to_string(::getpid()) + "." +
           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + ".mlxfn"))
      .string();
}

void expect_same(const std::vector<array>& got, const std::vector<array>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
    EXPECT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
    test::expect_close(values(got[i]), values(want[i]), tol, tol, "output " + std::to_string(i));
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST(Export, MlxBasicFunctions) {
  std::string path = temp_file("basic");
  auto fun = [](const Args& x) -> std::vector<array> { return {negative(exp(x[0]))}; };
  export_function(path, fun, {array({1.0f, 2.0f})});
  auto imported = import_function(path);
  EXPECT_THROW(imported({array({1.0f}), array({2.0f})}), std::invalid_argument);  // count
  EXPECT_THROW(imported({array({1.0f})}), std::invalid_argument);                 // shape
  EXPECT_THROW(imported({array({1.0f, 2.0f}, float16)}), std::invalid_argument);  // dtype
  expect_same(imported({array({1.0f, -1.0f})}), fun({array({1.0f, -1.0f})}));
  std::remove(path.c_str());
}

TEST(Export, MlxNoInputsTwoOutputsAndState) {
  std::string path = temp_file("misc");
  auto zeros_fn = [](const Args&) -> std::vector<array> { return {zeros({2, 2})}; };
  export_function(path, zeros_fn, {});
  expect_same(import_function(path)({}), zeros_fn({}));

  auto divmod_fn = [](const Args& x) { return divmod(x[0], x[1]); };
  Args in{array({5.0f, -10.0f}), array({3.0f, -2.0f})};
  export_function(path, divmod_fn, in);
  expect_same(import_function(path)(in), divmod_fn(in));

  auto part = [](const Args& x) -> std::vector<array> { return {argpartition(x[0], 2, 0)}; };
  array x = array({1, 3, 2, 4, 5, 7, 6, 8}, {4, 2});
  export_function(path, part, {x});
  expect_same(import_function(path)({x}), part({x}));
  std::remove(path.c_str());
}

TEST(Export, MlxKeywordArguments) {
  std::string path = temp_file("kwargs");
  auto fun = [](const Kwargs& kw) -> std::vector<array> { return {add(kw.at("x"), kw.at("y"))}; };
  export_function(path, fun, Kwargs{{"x", array(1)}, {"y", array(2)}});
  auto fn = import_function(path);
  EXPECT_THROW(fn({array(1), array(2)}), std::invalid_argument);
  EXPECT_THROW(fn(Kwargs{{"x", array(1)}, {"y", array(2)}, {"z", array(3)}}), std::invalid_argument);
  EXPECT_THROW(fn(Kwargs{{"a", array(1)}, {"b", array(2)}}), std::invalid_argument);
  EXPECT_EQ(fn(Kwargs{{"x", array(1)}, {"y", array(2)}})[0].item<int>(), 3);
  EXPECT_EQ(fn(Args{}, Kwargs{{"x", array(1)}, {"y", array(2)}})[0].item<int>(), 3);

  // Positional and keyword together.
  auto both = [](const Args& a, const Kwargs& kw) -> std::vector<array> {
    return {subtract(a[0], kw.at("z"))};
  };
  export_function(path, both, {array(10)}, {{"z", array(4)}});
  EXPECT_EQ(import_function(path)({array(7)}, {{"z", array(2)}})[0].item<int>(), 5);
  EXPECT_THROW(import_function(path)({array(7), array(2)}), std::invalid_argument);
  std::remove(path.c_str());
}

TEST(Export, MlxVariableInputs) {
  std::string path = temp_file("variable");
  auto fun = [](const Args& args) -> std::vector<array> {
    array out = array({1, 1, 1, 1});
    for (const auto& x : args) out = add(out, x);
    return {out};
  };
  {
    auto ex = exporter(path, fun);
    ex({array(0), array(0)});
    ex({array(0), array(0), array(0)});
    EXPECT_THROW(ex({array(5), array(6)}), std::invalid_argument);  // that signature is there
    ex.close();
    EXPECT_THROW(ex({array(0)}), std::runtime_error);
  }
  auto imported = import_function(path);
  EXPECT_EQ(values(imported({array(1), array(2)})[0]), (std::vector<double>{4, 4, 4, 4}));
  EXPECT_EQ(values(imported({array(1), array(2), array(3)})[0]), (std::vector<double>{7, 7, 7, 7}));
  EXPECT_THROW(imported({array(1)}), std::invalid_argument);
  std::remove(path.c_str());
}

TEST(Export, MlxAnotherStream) {
  std::string path = temp_file("stream");
  Stream other = new_stream(Device::cpu);
  auto fun = [other](const Args& args) -> std::vector<array> { return {abs(args[0], other)}; };
  export_function(path, fun, {array({0, 1, 2})});
  auto out = import_function(path)({array({0, -1, 2})});
  eval(out);
  EXPECT_EQ(values(out[0]), (std::vector<double>{0, 1, 2}));
  std::remove(path.c_str());
}

TEST(Export, MlxMalformedTapeIsARuntimeError) {
  // MLX's own header with an enormous tape size: not a braid file at all.
  std::string path = temp_file("bad_tape");
  {
    std::ofstream f(path, std::ios::binary);
    auto le64 = [&](uint64_t v) { f.write(reinterpret_cast<const char*>(&v), 8); };
    std::string ver = "0.0.0";
    le64(ver.size());
    f.write(ver.data(), static_cast<std::streamsize>(ver.size()));
    int32_t one = 1;
    f.write(reinterpret_cast<const char*>(&one), 4);
    f.put(0);
    for (int i = 0; i < 4; ++i) le64(0);
    le64(UINT64_MAX);
  }
  EXPECT_THROW(import_function(path), std::runtime_error);
  EXPECT_THROW(import_function(temp_file("does_not_exist")), std::runtime_error);
  std::remove(path.c_str());
}

// One function over the families of primitives (element-wise, reductions, scans, shapes,
// slices and updates, gathers and scatters, sorting, matmul, convolution, FFT, linear algebra
// on the CPU, quantization, softmax, random bits): the import computes what the function does.
TEST(Export, EveryFamilyOfPrimitivesRoundTrips) {
  for (const auto& d : test::test_devices()) {
    SCOPED_TRACE(test::device_name(d));
    StreamContext ctx(d);
    std::string path = temp_file("families");
    auto fun = [](const Args& in) -> std::vector<array> {
      const array& x = in[0];    // [4, 8] float32
      const array& idx = in[1];  // [3] int32
      std::vector<array> out;
      out.push_back(add(multiply(sin(x), exp(x)), maximum(x, array(0.5f))));
      out.push_back(where(greater(x, array(0.0f)), sqrt(abs(x)), square(x)));
      out.push_back(sum(x, {1}, true));
      out.push_back(argmax(x, 0));
      out.push_back(cumsum(x, 1, true, false));
      out.push_back(logsumexp(x, {0}));
      out.push_back(transpose(reshape(x, {2, 4, 4}), {2, 0, 1}));
      out.push_back(slice(x, {1, 0}, {4, 8}, {2, 3}));
      out.push_back(slice_update(x, ones({2, 2}), Shape{1, 1}, Shape{3, 3}));
      out.push_back(take(x, idx, 1));
      out.push_back(take_along_axis(x, argsort(x, 1), 1));
      out.push_back(scatter_add(zeros({5, 8}), {idx}, expand_dims(slice(x, {0, 0}, {3, 8}), 1), {0}));
      out.push_back(sort(x, 0));
      out.push_back(topk(x, 3, 1));
      out.push_back(matmul(x, transpose(x)));
      out.push_back(softmax(x, {1}));
      out.push_back(concatenate({x, negative(x)}, 0));
      out.push_back(pad(x, {{1, 1}, {0, 2}}, array(0.0f)));
      out.push_back(conv1d(reshape(x, {1, 8, 4}), ones({2, 3, 4}), 1, 1));
      out.push_back(astype(round(multiply(x, array(10.0f))), int32));
      out.push_back(abs(fft::rfft(x, 8, 1)));
      out.push_back(var(x, {0, 1}, false, 1));
      out.push_back(stop_gradient(erf(x)));
      out.push_back(diagonal(x, 1));
      out.push_back(broadcast_to(mean(x, 0), {3, 8}));
      return out;
    };
    Args in{random::normal({4, 8}, float32, 0.0, 1.0, random::key(3)), array({0, 2, 4})};
    export_function(path, fun, in);
    expect_same(import_function(path)(in), fun(in), 2e-5);
    std::remove(path.c_str());
  }
}

TEST(Export, LinalgAndQuantizedRoundTripOnTheCpu) {
  std::string path = temp_file("linalg");
  StreamContext ctx(Device::cpu);
  auto fun = [](const Args& in) -> std::vector<array> {
    array spd = add(matmul(in[0], transpose(in[0])), multiply(eye(4), array(4.0f)));
    std::vector<array> out{linalg::inv(spd), linalg::cholesky(spd), linalg::solve(spd, in[1])};
    auto q = quantize(in[2], 64, 4);
    out.push_back(quantized_matmul(in[3], q[0], q[1], q[2], true, 64, 4));
    out.push_back(dequantize(q[0], q[1], q[2], 64, 4));
    return out;
  };
  Args in{random::normal({4, 4}, float32, 0.0, 1.0, random::key(1)),
          random::normal({4, 2}, float32, 0.0, 1.0, random::key(2)),
          random::normal({32, 128}, float32, 0.0, 1.0, random::key(3)),
          random::normal({2, 128}, float32, 0.0, 1.0, random::key(4))};
  export_function(path, fun, in);
  expect_same(import_function(path)(in), fun(in), 1e-4);
  std::remove(path.c_str());
}

TEST(Export, ShapelessTracesServeOtherShapes) {
  std::string path = temp_file("shapeless");
  auto fun = [](const Args& in) -> std::vector<array> { return {add(exp(in[0]), mean(in[0], 0))}; };
  export_function(path, fun, {array({1.0f, 2.0f, 3.0f})}, /*shapeless=*/true);
  auto imported = import_function(path);
  array longer = array({0.5f, -1.0f, 2.0f, 4.0f, 0.0f});
  expect_same(imported({longer}), fun({longer}));
  EXPECT_THROW(imported({array({1.0f, 2.0f}, Shape{1, 2})}), std::invalid_argument);  // rank
  EXPECT_THROW(imported({array({1, 2, 3})}), std::invalid_argument);                  // dtype

  // A primitive that cannot follow new shapes (a broadcast to fixed sizes): MLX's error at export.
  auto fixed = [](const Args& in) -> std::vector<array> { return {broadcast_to(in[0], {3, 4})}; };
  EXPECT_THROW(export_function(path, fixed, {array({1.0f, 2.0f, 3.0f, 4.0f})}, true), std::invalid_argument);
  export_function(path, fixed, {array({1.0f, 2.0f, 3.0f, 4.0f})}, false);
  EXPECT_EQ(import_function(path)({array({4.0f, 3.0f, 2.0f, 1.0f})})[0].shape(), (Shape{3, 4}));

  // A reshape as MLX's Python API makes it keeps the shape asked for, its -1 inferred on each call; one the
  // input's size cannot hold is the call's error.
  auto halves = [](const Args& in) -> std::vector<array> {
    return {detail::reshape_keeping_request(in[0], {2, -1}), detail::reshape_keeping_request(in[0], {2, 2})};
  };
  export_function(path, halves, {array({1.0f, 2.0f, 3.0f, 4.0f})}, true);
  auto imported_halves = import_function(path);
  EXPECT_EQ(imported_halves({array({1.0f, 2.0f, 3.0f, 4.0f})})[1].shape(), (Shape{2, 2}));
  EXPECT_THROW(imported_halves({array({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f})}), std::invalid_argument);
  auto rows = [](const Args& in) -> std::vector<array> {
    return {detail::reshape_keeping_request(in[0], {2, -1})};
  };
  export_function(path, rows, {array({1.0f, 2.0f, 3.0f, 4.0f})}, true);
  array six = array({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  EXPECT_EQ(import_function(path)({six})[0].shape(), (Shape{2, 3}));
  expect_same(import_function(path)({six}), rows({six}));
  std::remove(path.c_str());
}

// Convolutions infer their output shape (MLX's test_export_conv_shapeless): 1-, 2- and 3-d,
// strided, padded, grouped, on inputs of other batch and spatial sizes.
TEST(Export, ShapelessConvolutionsServeOtherShapes) {
  std::string path = temp_file("conv_shapeless");
  struct Case {
    Shape weight;
    int groups;
    std::vector<Shape> inputs;
  };
  const std::vector<Case> cases = {
      {{8, 3, 3}, 1, {{4, 64, 3}, {1, 33, 3}, {2, 128, 3}}},
      {{6, 3, 3, 3}, 1, {{2, 32, 32, 3}, {1, 31, 31, 3}, {4, 64, 48, 3}}},
      {{6, 3, 3, 2}, 2, {{2, 32, 32, 4}, {3, 15, 20, 4}}},
      {{4, 3, 3, 3, 2}, 1, {{1, 8, 8, 8, 2}, {2, 7, 8, 9, 2}}},
  };
  for (const auto& c : cases) {
    array w = random::normal(c.weight, float32, 0, 1, random::key(1));
    eval(w);
    const int dims = static_cast<int>(c.weight.size()) - 2;
    auto fun = [&](const Args& in) -> std::vector<array> {
      return {conv_general(in[0], w, std::vector<int>(dims, 2), std::vector<int>(dims, 1),
                           std::vector<int>(dims, 1), std::vector<int>(dims, 1), std::vector<int>(dims, 1),
                           c.groups)};
    };
    export_function(path, fun, {random::normal(c.inputs[0])}, /*shapeless=*/true);
    auto imported = import_function(path);
    for (const auto& shape : c.inputs) {
      array x = random::normal(shape, float32, 0, 1, random::key(2));
      expect_same(imported({x}), fun({x}), 1e-4);
    }
  }
  // A new shape the fixed weight does not fit (another channel count) is the call's error.
  array w = random::normal({8, 3, 3});
  auto fun = [&](const Args& in) -> std::vector<array> { return {conv1d(in[0], w, 2, 1)}; };
  export_function(path, fun, {random::normal({4, 64, 3})}, true);
  EXPECT_THROW(import_function(path)({random::normal({4, 64, 5})}), std::invalid_argument);
  std::remove(path.c_str());
}

TEST(Export, CapturedArraysAreStoredOnce) {
  std::string path = temp_file("constants");
  array big = zeros({16, 2048});
  eval(big);
  auto fun = [big](const Args& args) -> std::vector<array> {
    array out = add(big, array(0.0f));
    for (const auto& a : args) out = add(out, a);
    return {out};
  };
  {
    auto ex = exporter(path, fun);
    for (int i = 0; i < 5; ++i) ex(Args(static_cast<size_t>(i), array(1.0f)));
  }
  EXPECT_LT(std::filesystem::file_size(path), big.nbytes() + 8192);
  auto imported = import_function(path);
  EXPECT_EQ(imported({array(1.0f), array(2.0f)})[0].shape(), big.shape());
  EXPECT_EQ(values(sum(imported({array(1.0f), array(2.0f)})[0])), std::vector<double>{3.0 * 16 * 2048});
  std::remove(path.c_str());
}

TEST(Export, RandomDrawsReplayTheExportedKeys) {
  std::string path = temp_file("random");
  random::seed(5);
  auto fun = [](const Args&) -> std::vector<array> { return {random::uniform({3})}; };
  export_function(path, fun, {});
  auto out = import_function(path)({});
  random::seed(5);
  auto expected = fun({});
  EXPECT_EQ(values(out[0]), values(expected[0]));
  std::remove(path.c_str());
}

TEST(Export, WhatCannotBeExportedIsAClearError) {
  std::string path = temp_file("custom");
  auto f = custom_vjp([](const std::vector<array>& x) { return std::vector<array>{sin(x[0])}; },
                      [](const std::vector<array>&, const std::vector<array>& cot,
                         const std::vector<array>&) { return cot; });
  try {
    export_function(path, f, {array({1.0f})});
    FAIL() << "exported a custom vjp";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[export_function]"), std::string::npos) << e.what();
  }
  // A capture of the call's own input is MLX's compile error.
  array x = exp(array({1.0f}));
  auto captures = [x](const Args& in) -> std::vector<array> { return {add(in[0], x)}; };
  EXPECT_THROW(export_function(path, captures, {x}), std::invalid_argument);
  // An unwritable path.
  EXPECT_THROW(export_function("/nonexistent-dir/f.mlxfn", captures, {array({1.0f})}), std::runtime_error);
  std::remove(path.c_str());
}

// Every prefix of a valid file, and files with bytes changed at random, import as a
// std::runtime_error or import cleanly (a changed constant value); never a crash. ASan checks
// the reads.
TEST(Export, DamagedFilesAreCleanErrors) {
  std::string path = temp_file("damaged");
  auto fun = [](const Args& in) -> std::vector<array> {
    return {sum(multiply(in[0], array({2.0f, 3.0f})), {0}), argsort(in[0], 0)};
  };
  export_function(path, fun, {array({1.0f, 2.0f})});
  const std::string good = read_bytes(path);
  std::string damaged = temp_file("damaged_copy");
  for (size_t n = 0; n < good.size(); ++n) {
    write_bytes(damaged, good.substr(0, n));
    EXPECT_THROW(import_function(damaged), std::runtime_error) << "prefix of " << n << " bytes";
  }
  std::mt19937 rng(7);
  int clean = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes = good;
    for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    write_bytes(damaged, bytes);
    try {
      import_function(damaged);
      ++clean;
    } catch (const std::runtime_error&) {
    }
  }
  RecordProperty("clean_imports", clean);
  std::remove(path.c_str());
  std::remove(damaged.c_str());
}

TEST(Export, EightThreadsCallOneImportedFunction) {
  std::string path = temp_file("threads");
  auto fun = [](const Args& in) -> std::vector<array> { return {sum(multiply(in[0], in[0]), {0})}; };
  export_function(path, fun, {zeros({64})});
  auto imported = import_function(path);
  std::vector<std::vector<double>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        array in = full({64}, array(static_cast<float>(t)));
        got[t] = values(imported({in})[0]);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[t], std::vector<double>{64.0 * t * t}) << "thread " << t;
  std::remove(path.c_str());
}

namespace {

using Specs = std::vector<std::tuple<std::string, Shape, Dtype>>;

struct Recorded {
  std::vector<ExportCallbackInput> records;
  ExportCallback callback() {
    return [this](const ExportCallbackInput& r) { records.push_back(r); };
  }
};

template <typename T>
const T& field(const ExportCallbackInput& r, const std::string& key) {
  auto it = r.find(key);
  if (it == r.end()) throw std::runtime_error("no field " + key);
  return std::get<T>(it->second);
}

const std::string& type_of(const ExportCallbackInput& r) { return field<std::string>(r, "type"); }

}  // namespace

// MLX's test_export_with_callback, and what each record holds.
TEST(Export, CallbackReceivesTheTraceAsRecords) {
  Recorded rec;
  auto fn = [](const Args& args, const Kwargs& kwargs) -> std::vector<array> {
    return {astype(log(abs(subtract(args[0], kwargs.at("y")))), int32)};
  };
  export_function(rec.callback(), fn, Args{array(1.0f)}, Kwargs{{"y", array(1.0f)}});
  ASSERT_EQ(rec.records.size(), 8u);
  std::vector<std::string> types;
  for (const auto& r : rec.records) types.push_back(type_of(r));
  EXPECT_EQ(types, (std::vector<std::string>{"inputs", "keyword_inputs", "outputs", "constants", "primitive",
                                             "primitive", "primitive", "primitive"}));
  const auto& inputs = field<Specs>(rec.records[0], "inputs");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0], std::make_tuple(std::string("A"), Shape{}, float32));
  const auto& keywords = field<std::vector<std::pair<std::string, std::string>>>(rec.records[1], "keywords");
  ASSERT_EQ(keywords.size(), 1u);
  EXPECT_EQ(keywords[0].first, "y");
  EXPECT_EQ(keywords[0].second, std::get<0>(inputs[1]));
  EXPECT_TRUE((field<std::vector<std::pair<std::string, array>>>(rec.records[3], "constants").empty()));

  std::vector<std::string> names;
  for (size_t i = 4; i < 8; ++i) names.push_back(field<std::string>(rec.records[i], "name"));
  EXPECT_EQ(names, (std::vector<std::string>{"Subtract", "Abs", "Log", "AsType"}));
  EXPECT_TRUE(field<std::vector<StateT>>(rec.records[4], "arguments").empty());
  EXPECT_TRUE(field<std::vector<StateT>>(rec.records[5], "arguments").empty());
  EXPECT_EQ(field<std::vector<StateT>>(rec.records[6], "arguments"),
            std::vector<StateT>{2});  // MLX's Log base e
  EXPECT_EQ(field<std::vector<StateT>>(rec.records[7], "arguments"), std::vector<StateT>{int32});
  // Each step reads what the earlier ones made; the last one's value is the output.
  EXPECT_EQ(field<Specs>(rec.records[4], "inputs"), inputs);
  for (size_t i = 5; i < 8; ++i) {
    EXPECT_EQ(field<Specs>(rec.records[i], "inputs"), field<Specs>(rec.records[i - 1], "outputs")) << i;
  }
  EXPECT_EQ(field<Specs>(rec.records[7], "outputs"), field<Specs>(rec.records[2], "outputs"));
  EXPECT_EQ(std::get<2>(field<Specs>(rec.records[2], "outputs")[0]), int32);
}

// A multi-output primitive is one record listing all its outputs, as MLX's; an output the
// function does not use gets a name of its own.
TEST(Export, CallbackListsEveryOutputOfAMultiOutputPrimitive) {
  Recorded rec;
  export_function(
      rec.callback(), [](const Args& in) -> std::vector<array> { return {divmod(in[0], in[1])[1]}; },
      Args{array({7, 9}), array({2, 4})});
  std::vector<const ExportCallbackInput*> divmods;
  for (const auto& r : rec.records) {
    if (type_of(r) == "primitive" && field<std::string>(r, "name") == "DivMod") divmods.push_back(&r);
  }
  ASSERT_EQ(divmods.size(), 1u);
  const auto& outs = field<Specs>(*divmods[0], "outputs");
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_NE(std::get<0>(outs[0]), std::get<0>(outs[1]));
  EXPECT_EQ(std::get<1>(outs[0]), (Shape{2}));
  EXPECT_EQ(field<Specs>(rec.records[2], "outputs")[0], outs[1]);  // the function returns the remainder
}

TEST(Export, CallbackExporterReportsEachConstantOnceAndTheOpsState) {
  Recorded rec;
  array w = reshape(arange(6.0f), {2, 3});
  eval(w);  // a captured value (unevaluated, its ops would be steps of the trace)
  auto fun = [w](const Args& args) -> std::vector<array> {
    array s = sum(multiply(args[0], w), {1}, true);
    return {broadcast_to(s, {2, 3}), reshape(w, {3, 2}), args[0]};
  };
  {
    auto ex = exporter(rec.callback(), fun);
    ex({ones({2, 3})});
    ex({ones({1, 3})});
  }
  std::vector<size_t> constant_counts;
  std::set<std::string> step_names;
  size_t traces = 0;
  for (const auto& r : rec.records) {
    const auto& t = type_of(r);
    if (t == "constants") {
      const auto& c = field<std::vector<std::pair<std::string, array>>>(r, "constants");
      constant_counts.push_back(c.size());
      for (const auto& [name, value] : c) EXPECT_EQ(values(value), values(w)) << name;
    } else if (t == "outputs") {
      ++traces;
      const auto& outs = field<Specs>(r, "outputs");
      ASSERT_EQ(outs.size(), 3u);
      EXPECT_EQ(std::get<1>(outs[1]), (Shape{3, 2}));
    } else if (t == "primitive") {
      const auto& out = field<Specs>(r, "outputs");
      ASSERT_EQ(out.size(), 1u);
      EXPECT_TRUE(step_names.insert(std::get<0>(out[0])).second) << "a name given twice";
      const auto& name = field<std::string>(r, "name");
      const auto& args = field<std::vector<StateT>>(r, "arguments");
      if (name == "Broadcast") EXPECT_EQ(args, std::vector<StateT>{Shape({2, 3})});
      if (name == "Reshape") EXPECT_EQ(args, std::vector<StateT>{Shape({3, 2})});
      if (name == "Sum") {
        ASSERT_EQ(args.size(), 2u);  // braid's: the reduction, then its axes
        EXPECT_EQ(std::get<std::vector<int>>(args[1]), std::vector<int>{1});
      }
    }
  }
  EXPECT_EQ(traces, 2u);
  // The second trace reuses the captured array the first reported (w, made before the calls).
  EXPECT_EQ(constant_counts, (std::vector<size_t>{1, 0}));
  // An output that is an input: named as the input.
  EXPECT_EQ(std::get<0>(field<Specs>(rec.records[2], "outputs")[2]),
            std::get<0>(field<Specs>(rec.records[0], "inputs")[0]));
}

TEST(Export, CallbackErrorsReachTheCallerAndLeaveTheExporterUsable) {
  auto fun = [](const Args& in) -> std::vector<array> { return {exp(in[0])}; };
  EXPECT_THROW(export_function(ExportCallback{}, fun, {array(1.0f)}), std::invalid_argument);

  // A callback that throws: the trace is not added, so the same signature can be exported again.
  bool fail = true;
  size_t primitives = 0;
  auto ex = exporter(
      [&](const ExportCallbackInput& r) {
        if (type_of(r) != "primitive") return;
        if (fail) throw std::runtime_error("callback failed");
        ++primitives;
      },
      fun);
  EXPECT_THROW(ex({array(1.0f)}), std::runtime_error);
  fail = false;
  ex({array(1.0f)});
  EXPECT_EQ(primitives, 1u);
  EXPECT_THROW(ex({array(2.0f)}), std::invalid_argument);  // that signature is there now

  // What cannot be written to a file cannot be reported either.
  auto custom = custom_vjp([](const std::vector<array>& x) { return std::vector<array>{sin(x[0])}; },
                           [](const std::vector<array>&, const std::vector<array>& cot,
                              const std::vector<array>&) { return cot; });
  Recorded rec;
  EXPECT_THROW(export_function(rec.callback(), custom, {array({1.0f})}), std::invalid_argument);
}

TEST(Export, MetadataIsStoredWithTheFile) {
  std::string path = temp_file("metadata");
  auto fun = [](const Args& in) -> std::vector<array> { return {abs(in[0])}; };
  const Metadata metadata{{"name", "model"}, {"params", "7000000000"}, {"", "empty key"}};
  export_function(path, fun, {array({1.0f, -2.0f})}, false, metadata);
  auto imported = import_function(path);
  EXPECT_EQ(imported.metadata(), metadata);
  EXPECT_EQ(values(imported({array({1.0f, -2.0f})})[0]), (std::vector<double>{1, 2}));
  {  // kept as every trace rewrites the file
    auto ex = exporter(path, fun, false, metadata);
    ex({array({1.0f})});
    ex({array({1.0f, 2.0f})});
  }
  EXPECT_EQ(import_function(path).metadata(), metadata);
  export_function(path, fun, {array({1.0f})});
  EXPECT_TRUE(import_function(path).metadata().empty());
  std::remove(path.c_str());
}
