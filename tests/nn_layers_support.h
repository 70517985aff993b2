// Helpers shared by the nn layer tests: drawn inputs, reading a module's parameter by dotted
// name, and checking nn::value_and_grad against braid::value_and_grad of the same formula.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "braid/nn.h"
#include "support.h"

namespace braid::test {

/// n values uniform in [lo, hi) from `seed`.
inline std::vector<double> draw(size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

/// The parameter of `model` at a dotted path ("encoder.ln.weight").
inline array parameter(const nn::Module& model, const std::string& path) {
  for (auto& [name, value] : tree_flatten(model.parameters())) {
    if (name == path) return value;
  }
  ADD_FAILURE() << "no parameter " << path;
  return array(0.0f);
}

/// The dotted names of a tree's leaves, in order.
inline std::vector<std::string> leaf_names(const Tree& tree) {
  std::vector<std::string> names;
  for (auto& [name, value] : tree_flatten(tree)) names.push_back(name);
  return names;
}

/// nn::value_and_grad of `model_loss` (which calls the model) against braid::value_and_grad of
/// `formula_loss`, the same loss written over the trainable parameters in tree_flatten order.
inline void expect_parameter_gradients(nn::Module& model, const std::function<array()>& model_loss,
                                       const std::function<array(const std::vector<array>&)>& formula_loss,
                                       double tol = 1e-5) {
  auto [value, grads] =
      nn::value_and_grad(model, [&](const std::vector<array>&) { return model_loss(); })({});
  auto flat = tree_flatten(model.trainable_parameters());
  std::vector<array> params;
  std::vector<int> argnums;
  for (auto& [name, p] : flat) {
    argnums.push_back(static_cast<int>(params.size()));
    params.push_back(p);
  }
  auto [want_value, want_grads] = value_and_grad(formula_loss, argnums)(params);
  EXPECT_NEAR(value.item<double>(), want_value.item<double>(),
              tol * (1 + std::abs(want_value.item<double>())));
  auto got = tree_flatten(grads);
  ASSERT_EQ(got.size(), flat.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, flat[i].first);
    expect_close(values(got[i].second), values(want_grads[i]), tol, tol, "gradient of " + flat[i].first);
  }
}

}  // namespace braid::test
