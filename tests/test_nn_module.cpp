// nn::Module's parameter tree and trees of arrays: structure, update, freezing, weights files,
// and value_and_grad over a module from several threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "braid/braid.h"
#include "braid/nn.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using braid::test::values;

namespace {

// y = x @ w + b, with the shapes of MLX's Linear.
struct Affine : nn::Module {
  Affine(const array& w, const array& b) {
    register_parameter("weight", w);
    register_parameter("bias", b);
  }
  std::string name() const override { return "Affine"; }
  array operator()(const array& x) override { return matmul(x, transpose(param("weight"))) + param("bias"); }
};

struct TwoLayers : nn::Module {
  std::shared_ptr<Affine> first, second;
  std::vector<std::shared_ptr<Affine>> extra;
  TwoLayers() {
    first = register_module("first", std::make_shared<Affine>(full({3, 2}, 0.5f), zeros({3})));
    second = register_module("second", std::make_shared<Affine>(full({1, 3}, -1.0f), ones({1})));
    extra = register_modules("extra", std::vector<std::shared_ptr<Affine>>{
                                          std::make_shared<Affine>(eye(1), zeros({1}))});
    register_parameter("scale", array(2.0f));
  }
  std::string name() const override { return "TwoLayers"; }
  array operator()(const array& x) override {
    return (*extra[0])((*second)(tanh((*first)(x)))) * param("scale");
  }
};

std::vector<std::string> paths(const Tree& tree) {
  std::vector<std::string> out;
  for (const auto& [path, leaf] : tree_flatten(tree)) out.push_back(path);
  return out;
}

}  // namespace

TEST(Tree, FlattenAndUnflattenAreInverse) {
  Tree tree;
  tree["layers"] = Tree(Tree::List{Tree(array(1.0f)), Tree(Tree::Dict{{"w", Tree(array(2.0f))}})});
  tree["b"] = Tree(array(3.0f));
  auto flat = tree_flatten(tree);
  EXPECT_EQ(paths(tree), (std::vector<std::string>{"layers.0", "layers.1.w", "b"}));
  Tree back = tree_unflatten(flat);
  ASSERT_TRUE(back.at("layers").is_list());
  EXPECT_EQ(back.at("layers").at(1).at("w").leaf().item<float>(), 2.0f);
  EXPECT_EQ(paths(back), paths(tree));
  EXPECT_EQ(paths(Tree(array(1.0f))), std::vector<std::string>{""});
  EXPECT_EQ(tree_flatten(tree, "model")[2].first, "model.b");
}

TEST(Tree, UnflattenRejectsConflictingPaths) {
  EXPECT_THROW(tree_unflatten({{"a", array(1.0f)}, {"a.b", array(2.0f)}}), std::invalid_argument);
  EXPECT_THROW(tree_unflatten({{"a.b", array(1.0f)}, {"a", array(2.0f)}}), std::invalid_argument);
  EXPECT_THROW(tree_unflatten({{"a.0", array(1.0f)}, {"a.2", array(2.0f)}}), std::invalid_argument);
  EXPECT_THROW(Tree(array(1.0f)).at("x"), std::invalid_argument);
  EXPECT_THROW(Tree().at("x"), std::out_of_range);
}

TEST(Tree, MapOverSeveralTreesFollowsTheFirst) {
  Tree a = tree_unflatten({{"x", array(1.0f)}, {"y.0", array(2.0f)}});
  Tree b = tree_unflatten({{"x", array(10.0f)}, {"y.0", array(20.0f)}, {"z", array(5.0f)}});
  Tree sum = tree_map([](const std::vector<array>& l) { return l[0] + l[1]; }, {a, b});
  EXPECT_EQ(paths(sum), (std::vector<std::string>{"x", "y.0"}));
  EXPECT_EQ(sum.at("y").at(0).leaf().item<float>(), 22.0f);
  EXPECT_THROW(tree_map([](const std::vector<array>& l) { return l[0]; }, {b, a}), std::invalid_argument);
  Tree merged = tree_merge(a, tree_unflatten({{"x", array(7.0f)}, {"w", array(8.0f)}}));
  EXPECT_EQ(paths(merged), (std::vector<std::string>{"x", "y.0", "w"}));
  EXPECT_EQ(merged.at("x").leaf().item<float>(), 7.0f);
}

TEST(NnModule, ParametersAreANestedOrderedTree) {
  TwoLayers model;
  EXPECT_EQ(paths(model.parameters()),
            (std::vector<std::string>{"first.weight", "first.bias", "second.weight", "second.bias",
                                      "extra.0.weight", "extra.0.bias", "scale"}));
  std::vector<std::string> names;
  for (auto& [path, m] : model.named_modules()) names.push_back(path + ":" + m->name());
  EXPECT_EQ(names, (std::vector<std::string>{":TwoLayers", "first:Affine", "second:Affine", "extra.0:Affine"}));
}

TEST(NnModule, FreezeLeavesArraysOutOfTheTrainableOnes) {
  TwoLayers model;
  model.first->freeze();
  model.freeze(false, {"scale"});
  EXPECT_EQ(paths(model.trainable_parameters()),
            (std::vector<std::string>{"second.weight", "second.bias", "extra.0.weight", "extra.0.bias"}));
  EXPECT_TRUE(model.trainable_parameters().at("first").is_dict());
  model.unfreeze();
  EXPECT_EQ(paths(model.trainable_parameters()).size(), 7u);
  model.freeze(true, {"bias"});
  EXPECT_EQ(paths(model.trainable_parameters()),
            (std::vector<std::string>{"first.weight", "second.weight", "extra.0.weight", "scale"}));
  EXPECT_THROW(model.freeze(false, {"nothing"}, true), std::invalid_argument);
}

TEST(NnModule, UpdateReplacesArraysAndRejectsUnknownPlacesWholly) {
  TwoLayers model;
  model.update(tree_unflatten({{"second.bias", array({4.0f})}}));
  EXPECT_EQ(values(model.parameters().at("second").at("bias").leaf()), std::vector<double>{4.0});
  Tree bad = tree_unflatten({{"scale", array(9.0f)}, {"second.nothing", array(1.0f)}});
  EXPECT_THROW(model.update(bad), std::invalid_argument);
  EXPECT_EQ(model.parameters().at("scale").leaf().item<float>(), 2.0f) << "a failed update changed nothing";
  model.update(bad, false);
  EXPECT_EQ(model.parameters().at("scale").leaf().item<float>(), 9.0f);
  model.train(false);
  for (auto& [path, m] : model.named_modules()) EXPECT_FALSE(m->training()) << path;
}

TEST(NnModule, WeightsRoundTripThroughSafetensorsAndNpz) {
  TwoLayers model;
  model.update(tree_map([](const array& a) { return a + array(1.5f); }, model.parameters()));
  std::string file = ::testing::TempDir() + "braid_module_weights.safetensors";
  model.save_weights(file);
  TwoLayers fresh;
  fresh.load_weights(file);
  auto want = tree_flatten(model.parameters());
  auto got = tree_flatten(fresh.parameters());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(values(got[i].second), values(want[i].second)) << got[i].first;
  std::remove(file.c_str());
  std::string npz = ::testing::TempDir() + "braid_module_weights.npz";
  model.save_weights(npz);
  TwoLayers from_npz;
  from_npz.load_weights(npz);
  EXPECT_EQ(values(from_npz.parameters().at("second").at("weight").leaf()),
            values(model.parameters().at("second").at("weight").leaf()));
  std::remove(npz.c_str());
  EXPECT_THROW(fresh.load_weights({{"scale", array(1.0f)}}), std::invalid_argument);  // missing the rest
  auto wrong_shape = want;
  wrong_shape[0].second = zeros({2, 2});
  EXPECT_THROW(fresh.load_weights(wrong_shape), std::invalid_argument);
  EXPECT_NO_THROW(fresh.load_weights({{"scale", array(1.0f)}}, false));
}

TEST(NnModule, ValueAndGradMatchesTheGradientOfTheParameters) {
  TwoLayers model;
  model.freeze(false, {"scale"});
  array x = reshape(arange(0.0, 8.0, 1.0, float32), {4, 2}) / array(8.0f);
  auto loss = [&model](const std::vector<array>& in) { return sum(model(in[0])); };
  auto [value, grads] = nn::value_and_grad(model, loss)({x});
  EXPECT_EQ(paths(grads), paths(model.trainable_parameters()));
  // The same gradient, differentiating with respect to the arrays themselves.
  auto flat = tree_flatten(model.trainable_parameters());
  auto direct = [&](const std::vector<array>& p) {
    array h = tanh(matmul(x, transpose(p[0])) + p[1]);
    h = matmul(h, transpose(p[2])) + p[3];
    return sum((matmul(h, transpose(p[4])) + p[5]) * array(2.0f));
  };
  std::vector<array> arrays;
  for (auto& [path, a] : flat) arrays.push_back(a);
  auto [want_value, want_grads] = value_and_grad(direct, std::vector<int>{0, 1, 2, 3, 4, 5})(arrays);
  EXPECT_NEAR(value.item<float>(), want_value.item<float>(), 1e-5);
  auto got = tree_leaves(grads);
  for (size_t i = 0; i < got.size(); ++i) {
    test::expect_close(values(got[i]), values(want_grads[i]), 1e-5, 1e-6, flat[i].first);
  }
  EXPECT_FALSE(model.parameters().at("first").at("weight").leaf().is_tracer()) << "the model is not modified";
}

TEST(NnModuleThreads, ValueAndGradOfOneModelOnEightThreads) {
  braid_test::Watchdog watchdog;
  TwoLayers model;
  array x = reshape(arange(0.0, 8.0, 1.0, float32), {4, 2}) / array(8.0f);
  auto vg = nn::value_and_grad(model, [&model](const std::vector<array>& in) { return sum(square(model(in[0]))); });
  auto [v0, g0] = vg({x});
  const auto want = tree_leaves(g0);
  constexpr int kThreads = 8;
  std::vector<std::vector<array>> got(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int rep = 0; rep < 3; ++rep) got[t] = tree_leaves(vg({x}).second);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values(got[t][i]), values(want[i])) << "thread " << t;
  }
}
