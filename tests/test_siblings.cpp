// Primitives with several outputs (array::make_arrays, MLX's siblings): one kernel call
// computes every output, whichever output is evaluated, on any thread, and transforms call
// the primitive's vjp, jvp and vmap once for all of them. divmod is one such node.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "support.h"

namespace {

using namespace braid;
using namespace braid::test;

// x + y and x - y of two float32 arrays of one shape (row-contiguous), written outside
// braid through the public headers; counts its kernel's calls.
class SumDiff : public Primitive {
 public:
  SumDiff(Stream s, std::atomic<int>* calls, bool fail = false)
      : Primitive(std::move(s)), calls_(calls), fail_(fail) {}

  void eval_cpu(const std::vector<array>& inputs, std::vector<array>& outputs) override {
    calls_->fetch_add(1);
    if (fail_) throw std::runtime_error("[SumDiff] as asked");
    const float* x = inputs[0].data<float>();
    const float* y = inputs[1].data<float>();
    for (auto& out : outputs) out.set_data(allocator::malloc(out.nbytes()));
    float* sum = outputs[0].data<float>();
    float* diff = outputs[1].data<float>();
    for (size_t i = 0; i < outputs[0].size(); ++i) {
      sum[i] = x[i] + y[i];
      diff[i] = x[i] - y[i];
    }
  }
  void eval_gpu(const std::vector<array>&, std::vector<array>&) override {
    throw std::runtime_error("[SumDiff] no GPU kernel");
  }
  std::vector<array> vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                         const std::vector<int>& argnums, const std::vector<array>& outputs) override {
    vjp_calls.fetch_add(1);
    EXPECT_EQ(outputs.size(), 2u);
    std::vector<array> out;
    for (int a : argnums) {
      out.push_back(a == 0 ? add(cotangents[0], cotangents[1], stream())
                           : subtract(cotangents[0], cotangents[1], stream()));
    }
    return out;
  }
  std::vector<array> jvp(const std::vector<array>&, const std::vector<array>& tangents,
                         const std::vector<int>& argnums) override {
    jvp_calls.fetch_add(1);
    array tx = zeros_like(tangents[0], stream()), ty = zeros_like(tangents[0], stream());
    for (size_t i = 0; i < argnums.size(); ++i) (argnums[i] == 0 ? tx : ty) = tangents[i];
    return {add(tx, ty, stream()), subtract(tx, ty, stream())};
  }
  std::pair<std::vector<array>, std::vector<int>> vmap(const std::vector<array>& inputs,
                                                       const std::vector<int>& axes) override {
    vmap_calls.fetch_add(1);
    // Both mapped along their axis: moved first, then one call on the batch.
    array x = contiguous(moveaxis(inputs[0], axes[0], 0, stream()), false, stream());
    array y = contiguous(moveaxis(inputs[1], axes[1], 0, stream()), false, stream());
    return {array::make_arrays({x.shape(), x.shape()}, {float32, float32},
                               std::make_shared<SumDiff>(stream(), calls_), {x, y}),
            {0, 0}};
  }
  std::vector<Shape> output_shapes(const std::vector<array>& inputs) override {
    return {inputs[0].shape(), inputs[0].shape()};
  }
  const char* name() const override { return "SumDiff"; }
  bool is_equivalent(const Primitive&) const override { return true; }

  inline static std::atomic<int> vjp_calls{0}, jvp_calls{0}, vmap_calls{0};

 private:
  std::atomic<int>* calls_;
  bool fail_;
};

std::vector<array> sum_diff(const array& x, const array& y, std::atomic<int>* calls, bool fail = false) {
  const Stream s = default_stream(Device::cpu);
  array a = contiguous(astype(x, float32, s), false, s);
  array b = contiguous(astype(y, float32, s), false, s);
  return array::make_arrays({a.shape(), a.shape()}, {float32, float32},
                            std::make_shared<SumDiff>(s, calls, fail), {a, b});
}

TEST(Siblings, OneKernelCallComputesEveryOutput) {
  std::atomic<int> calls{0};
  auto outs = sum_diff(array({1.0f, 2.0f, 3.0f}), array({10.0f, 20.0f, 30.0f}), &calls);
  ASSERT_EQ(outs.size(), 2u);
  ASSERT_EQ(outs[0].siblings().size(), 1u);
  EXPECT_EQ(outs[0].siblings()[0].id(), outs[1].id());
  EXPECT_EQ(outs[1].siblings()[0].id(), outs[0].id());
  auto all = outs[1].outputs();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id(), outs[0].id());
  EXPECT_EQ(all[1].id(), outs[1].id());
  EXPECT_EQ(outs[0].inputs().size(), 2u);
  EXPECT_EQ(outs[0].inputs()[0].id(), outs[1].inputs()[0].id());

  eval(outs[1]);
  EXPECT_TRUE(outs[0].is_available());  // computed with its sibling
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(values(outs[0]), (std::vector<double>{11, 22, 33}));
  EXPECT_EQ(values(outs[1]), (std::vector<double>{-9, -18, -27}));
  EXPECT_EQ(calls.load(), 1);
  // As MLX: the siblings are gone once the graph is evaluated.
  EXPECT_TRUE(outs[0].siblings().empty());
  EXPECT_TRUE(outs[1].siblings().empty());
  EXPECT_EQ(outs[0].outputs().size(), 1u);
  // A single-output node has none.
  array z = add(outs[0], outs[1]);
  EXPECT_TRUE(z.siblings().empty());
  EXPECT_EQ(z.outputs()[0].id(), z.id());
}

TEST(Siblings, AnOutputNobodyHoldsIsStillComputed) {
  std::atomic<int> calls{0};
  array diff = sum_diff(array({5.0f, 7.0f}), array({1.0f, 2.0f}), &calls)[1];
  EXPECT_EQ(values(multiply(diff, array(2.0f))), (std::vector<double>{8, 10}));
  EXPECT_EQ(calls.load(), 1);
}

TEST(Siblings, ALostOutputIsMadeAgain) {
  std::atomic<int> calls{0};
  array sum = sum_diff(array({5.0f, 7.0f}), array({1.0f, 2.0f}), &calls)[0];
  // Asked before the kernel runs: the remade output joins the group, one call for both.
  auto sib = sum.siblings();
  ASSERT_EQ(sib.size(), 1u);
  EXPECT_EQ(values(sib[0]), (std::vector<double>{4, 5}));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(values(sum), (std::vector<double>{6, 9}));
  EXPECT_EQ(calls.load(), 1);

  // Asked once the kernel has run with a stand-in (a tracer keeps its graph): the output is
  // computed again, by a new call.
  calls = 0;
  auto [value, grad] = vjp(
      [&calls](const std::vector<array>& in) {
        array kept = sum_diff(in[0], in[1], &calls)[0];
        eval(kept);
        auto again = kept.siblings();
        EXPECT_EQ(again.size(), 1u);
        return std::vector<array>{add(kept, again.at(0))};  // (x + y) + (x - y) = 2x
      },
      {array({1.0f, 2.0f}), array({3.0f, 5.0f})}, {array({1.0f, 1.0f})});
  EXPECT_EQ(values(value[0]), (std::vector<double>{2, 4}));
  EXPECT_EQ(values(grad[0]), (std::vector<double>{2, 2}));
  EXPECT_EQ(values(grad[1]), (std::vector<double>{0, 0}));
  EXPECT_EQ(calls.load(), 2);
}

TEST(Siblings, ManyThreadsComputeEachGroupOnce) {
  constexpr int kGroups = 64, kThreads = 8;
  std::atomic<int> calls{0};
  std::vector<std::vector<array>> groups;
  for (int g = 0; g < kGroups; ++g) {
    groups.push_back(sum_diff(full({16}, static_cast<float>(g)), full({16}, 1.0f), &calls));
  }
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int g = 0; g < kGroups; ++g) {
        const int k = (t + g) % 2;  // half the threads ask for the other output
        array out = groups[g][k];
        const float want = k == 0 ? g + 1.0f : g - 1.0f;
        if (sum(out).item<float>() != 16 * want) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(calls.load(), kGroups);
}

TEST(Siblings, AKernelsErrorFailsEveryOutput) {
  std::atomic<int> calls{0};
  auto outs = sum_diff(array({1.0f}), array({2.0f}), &calls, /*fail=*/true);
  EXPECT_THROW(eval(outs[0]), std::runtime_error);
  EXPECT_THROW(eval(outs[1]), std::runtime_error);
  EXPECT_THROW(eval(add(outs[1], array(1.0f))), std::runtime_error);
  EXPECT_EQ(calls.load(), 1);
  // The stream goes on.
  EXPECT_EQ(values(add(array(1.0f), array(2.0f))), std::vector<double>{3});
}

TEST(Siblings, MakeArraysRefusesMismatchedLists) {
  std::atomic<int> calls{0};
  auto prim = std::make_shared<SumDiff>(default_stream(Device::cpu), &calls);
  EXPECT_TRUE(throws_bad_input(
      [&] {
        array::make_arrays({{2}, {2}}, {float32}, prim, {array(1.0f)});
      },
      "[array::make_arrays]"));
  EXPECT_TRUE(throws_bad_input([&] { array::make_arrays({}, {}, prim, {}); }, "[array::make_arrays]"));
  // One shape: an ordinary node.
  EXPECT_TRUE(array::make_arrays({{2}}, {float32}, prim, {array({1.0f, 2.0f})})[0].siblings().empty());
}

TEST(Siblings, TransformsCallThePrimitiveOnceForAllOutputs) {
  std::atomic<int> calls{0};
  array x = array({1.0f, 2.0f, 3.0f}), y = array({4.0f, 5.0f, 6.0f});
  SumDiff::vjp_calls = 0;
  // sum(s * s) + 3 * sum(d): d/dx = 2s + 3, d/dy = 2s - 3.
  auto [value, grads] = value_and_grad(
      [&calls](const std::vector<array>& in) {
        auto o = sum_diff(in[0], in[1], &calls);
        return add(sum(multiply(o[0], o[0])), multiply(array(3.0f), sum(o[1])));
      },
      std::vector<int>{0, 1})({x, y});
  EXPECT_EQ(values(value), std::vector<double>{25 + 49 + 81 - 27});
  EXPECT_EQ(values(grads[0]), (std::vector<double>{13, 17, 21}));
  EXPECT_EQ(values(grads[1]), (std::vector<double>{7, 11, 15}));
  EXPECT_EQ(SumDiff::vjp_calls.load(), 1);

  // Only one output used: the other's cotangent is zero.
  auto g = grad([&calls](const array& in) {
    return sum(sum_diff(in, array({1.0f, 1.0f, 1.0f}), &calls)[1]);
  })(x);
  EXPECT_EQ(values(g), (std::vector<double>{1, 1, 1}));

  SumDiff::jvp_calls = 0;
  auto [outs, tangents] =
      jvp([&calls](const std::vector<array>& in) { return sum_diff(in[0], in[1], &calls); }, {x, y},
          {array({1.0f, 0.0f, 0.0f}), array({0.0f, 1.0f, 0.0f})});
  EXPECT_EQ(values(tangents[0]), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(values(tangents[1]), (std::vector<double>{1, -1, 0}));
  EXPECT_EQ(SumDiff::jvp_calls.load(), 1);

  SumDiff::vmap_calls = 0;
  array bx = reshape(arange(6.0f), {2, 3}), by = reshape(arange(6.0f, 12.0f), {3, 2});
  auto vf = vmap([&calls](const std::vector<array>& in) { return sum_diff(in[0], in[1], &calls); }, {1, 0});
  auto mapped = vf({bx, by});
  // Row i of the result: column i of bx with row i of by.
  EXPECT_EQ(values(mapped[0]), (std::vector<double>{6, 10, 9, 13, 12, 16}));
  EXPECT_EQ(values(mapped[1]), (std::vector<double>{-6, -4, -7, -5, -8, -6}));
  EXPECT_EQ(SumDiff::vmap_calls.load(), 1);
}

TEST(Siblings, CompileReplaysOneNodeForAllOutputs) {
  std::atomic<int> calls{0};
  auto f = compile([&calls](const std::vector<array>& in) {
    auto o = sum_diff(in[0], in[1], &calls);
    return std::vector<array>{multiply(o[0], o[1]), o[1]};
  });
  for (float k : {1.0f, 2.0f}) {
    calls = 0;
    auto out = f({array({k, 3.0f}), array({1.0f, 1.0f})});
    EXPECT_EQ(values(out[0]), (std::vector<double>{(k + 1) * (k - 1), 8}));
    EXPECT_EQ(values(out[1]), (std::vector<double>{k - 1, 2}));
    EXPECT_EQ(calls.load(), 1);
  }
}

TEST(Siblings, DivmodIsOneNodeOnEveryDevice) {
  for (const Device& d : test_devices()) {
    SCOPED_TRACE(device_name(d));
    auto out = divmod(array({5, -6, 7}), array({2, 4, -2}), d);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_STREQ(out[0].primitive().name(), "DivMod");
    EXPECT_EQ(out[0].siblings().at(0).id(), out[1].id());
    // Integers: the quotient truncates (MLX's floor_divide), the remainder takes the divisor's
    // sign (Python's %), as MLX's DivMod gives them.
    EXPECT_EQ(values(out[0]), (std::vector<double>{2, -1, -3}));
    EXPECT_EQ(values(out[1]), (std::vector<double>{1, 2, -1}));
    EXPECT_TRUE(out[1].is_available());
    EXPECT_TRUE(out[0].siblings().empty());

    auto f = divmod(array({5.5f, -6.0f}), array(2.0f), d);
    EXPECT_EQ(f[0].dtype(), float32);
    EXPECT_EQ(values(f[0]), (std::vector<double>{2, -3}));
    EXPECT_EQ(values(f[1]), (std::vector<double>{1.5, 0}));

    // Not differentiable: zero gradients, as MLX.
    auto g = grad([&d](const array& x) { return sum(divmod(x, array(2.0f), d)[1]); })(array({3.0f, 4.0f}));
    EXPECT_EQ(values(g), (std::vector<double>{0, 0}));
    auto [o, t] = jvp([&d](const std::vector<array>& in) { return divmod(in[0], array(2.0f), d); },
                      {array({3.0f, 4.0f})}, {array({1.0f, 1.0f})});
    EXPECT_EQ(values(t[0]), (std::vector<double>{0, 0}));
    EXPECT_EQ(values(t[1]), (std::vector<double>{0, 0}));

    // vmap with one mapped input of higher rank than the other.
    auto vf = vmap([&d](const std::vector<array>& in) { return divmod(in[0], in[1], d); }, {1, -1});
    auto v = vf({reshape(arange(6), {3, 2}), array({4, 3, 2})});
    EXPECT_EQ(v[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(values(v[0]), (std::vector<double>{0, 0, 2, 0, 1, 2}));
    EXPECT_EQ(values(v[1]), (std::vector<double>{0, 2, 0, 1, 0, 1}));
  }
}

TEST(Siblings, ExportedFunctionsKeepMultiOutputNodes) {
  const std::string path = ::testing::TempDir() + "braid_siblings.mlxfn";
  export_function(path,
                  [](const Args& in) {
                    auto o = divmod(in[0], in[1]);
                    return std::vector<array>{o[1], add(o[0], o[1])};
                  },
                  {array({7, 9}), array({2, 4})});
  auto f = import_function(path);
  auto out = f({array({7, 9}), array({2, 4})});
  ASSERT_EQ(out[0].siblings().size(), 1u);  // one node again
  EXPECT_STREQ(out[0].primitive().name(), "DivMod");
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{4, 3}));
  std::remove(path.c_str());
}

TEST(Siblings, ALongUnevaluatedChainIsFreedWithoutRecursion) {
  // Each quotient's node is freed by the iterative teardown, as single-output nodes are: a
  // recursive one overflows the stack long before this.
  array x = array({1000.0f});
  for (int i = 0; i < 100000; ++i) x = divmod(x, array(1.0f))[0];
  x = array(0.0f);
  SUCCEED();
}

// The bytes of a file, and back.
std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(Siblings, ImportRefusesAStepWhoseOutputsDoNotFitItsPrimitive) {
  const std::string path = ::testing::TempDir() + "braid_siblings_bad.mlxfn";
  export_function(path, [](const Args& in) { return std::vector<array>{divmod(in[0], in[1])[0]}; },
                  {array({7, 9}), array({2, 4})});
  const std::string good = read_bytes(path);
  const size_t name = good.find("DivMod");
  ASSERT_NE(name, std::string::npos);

  // A single-output primitive (Select's state has DivMod's length) in a group of two.
  std::string bad = good;
  bad.replace(name, 6, "Select");
  write_bytes(path, bad);
  EXPECT_THROW(import_function(path), std::runtime_error);

  // DivMod's group dropped: a step of one output. The group follows the input references
  // (a u64 count, then 5 bytes each): a u64 count of outputs, the position and the call's
  // first step (u32 each), then each output's dtype (1 byte) and 1-d shape (a u64 count and
  // an i32).
  size_t at = name + 6;
  uint64_t count = 0;
  std::memcpy(&count, good.data() + at, 8);
  at += 8 + 5 * count;
  uint64_t outputs = 0;
  std::memcpy(&outputs, good.data() + at, 8);
  ASSERT_EQ(outputs, 2u);
  bad = good;
  bad.replace(at, 8 + 4 + 4 + 2 * (1 + 8 + 4), std::string(8, '\0'));
  write_bytes(path, bad);
  EXPECT_THROW(import_function(path), std::runtime_error);

  write_bytes(path, good);
  EXPECT_EQ(values(import_function(path)({array({7, 9}), array({2, 4})})[0]), (std::vector<double>{3, 2}));
  std::remove(path.c_str());
}

}  // namespace
