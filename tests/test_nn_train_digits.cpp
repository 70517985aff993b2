// Training to a stated accuracy: an MLP on the 1,797 handwritten digits of tests/data (see its
// README), with nn::value_and_grad and AdamW, reaches at least 97% accuracy on a held-out fifth.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "braid/braid.h"
#include "braid/nn.h"
#include "braid/optimizers.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;

namespace {

struct Digits {
  array train_x, train_y, test_x, test_y;
};

// Every fifth digit is held out for testing.
Digits load_digits() {
  auto arrays = load_safetensors(std::string(BRAID_TEST_DATA_DIR) + "/digits.safetensors").first;
  array x = astype(arrays.at("images"), float32) / array(16.0f);
  array y = astype(arrays.at("labels"), int32);
  const int n = x.shape(0);
  std::vector<int32_t> train, test;
  for (int i = 0; i < n; ++i) (i % 5 == 0 ? test : train).push_back(i);
  auto rows = [](const std::vector<int32_t>& idx) { return array(idx.data(), {int(idx.size())}, int32); };
  Digits d{take(x, rows(train), 0), take(y, rows(train), 0), take(x, rows(test), 0), take(y, rows(test), 0)};
  eval(d.train_x, d.train_y, d.test_x, d.test_y);
  return d;
}

double accuracy(nn::Module& model, const array& x, const array& y) {
  return mean(astype(equal(argmax(model(x), -1), y), float32)).item<float>();
}

}  // namespace

TEST(NnTraining, DigitsMlpReachesNinetySevenPercentHeldOut) {
  braid_test::Watchdog watchdog;
  const Digits data = load_digits();
  ASSERT_EQ(data.train_x.shape(), (Shape{1437, 64}));
  random::seed(7);
  nn::Sequential model(std::make_shared<nn::Linear>(64, 128), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::Linear>(128, 10));
  optimizers::AdamW optimizer(3e-3);
  auto loss_and_grad = nn::value_and_grad(model, [&model](const std::vector<array>& in) {
    return nn::losses::cross_entropy(model(in[0]), in[1], std::nullopt, -1, 0.0f, "mean");
  });
  const auto start = std::chrono::steady_clock::now();
  constexpr int kEpochs = 30, kBatch = 128;
  const int n = data.train_x.shape(0);
  array key = random::key(11);
  double first_loss = 0, last_loss = 0;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    auto [epoch_key, next_key] = random::split(key);
    key = next_key;
    array order = random::permutation(n, epoch_key);
    for (int b = 0; b + kBatch <= n; b += kBatch) {
      array idx = slice(order, {b}, {b + kBatch});
      auto [loss, grads] = loss_and_grad({take(data.train_x, idx, 0), take(data.train_y, idx, 0)});
      optimizer.update(model, grads);
      std::vector<array> outputs = tree_leaves(model.parameters());
      for (auto& s : tree_leaves(optimizer.state())) outputs.push_back(s);
      outputs.push_back(loss);
      eval(outputs);
      last_loss = loss.item<float>();
      if (epoch == 0 && b == 0) first_loss = last_loss;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  model.eval();
  const double test_accuracy = accuracy(model, data.test_x, data.test_y);
  std::printf("digits MLP: loss %.3f -> %.4f, held-out accuracy %.2f%%, %d epochs in %.2f s\n", first_loss,
              last_loss, 100 * test_accuracy, kEpochs, seconds);
  EXPECT_LT(last_loss, first_loss / 10);
  EXPECT_GE(test_accuracy, 0.97);
}
