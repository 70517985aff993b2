// What train_digits and parallel_sweep share: the 1,797 8x8 handwritten digits of tests/data
// (see its README), with every fifth digit held out for testing, and a trainer for an MLP on
// them with AdamW and nn::value_and_grad.
#pragma once

#include <braid/braid.h>
#include <braid/nn.h>
#include <braid/optimizers.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace digits {

// The source tree's copy of the data; BRAID_SOURCE_DIR comes from examples/CMakeLists.txt.
#ifdef BRAID_SOURCE_DIR
inline const char* const kDefaultPath = BRAID_SOURCE_DIR "/tests/data/digits.safetensors";
#else
inline const char* const kDefaultPath = "tests/data/digits.safetensors";
#endif

constexpr int kPixels = 64;
constexpr int kClasses = 10;

struct Data {
  braid::array train_x, train_y, test_x, test_y;
};

// Pixels scaled to [0, 1], labels as int32; evaluated before returning, so the arrays can be
// read from any thread without recomputing them.
inline Data load(const std::string& path) {
  auto arrays = braid::load_safetensors(path).first;
  if (!arrays.count("images") || !arrays.count("labels")) {
    throw std::runtime_error(path + " has no 'images' and 'labels' arrays");
  }
  braid::array x = braid::astype(arrays.at("images"), braid::float32) / braid::array(16.0f);
  braid::array y = braid::astype(arrays.at("labels"), braid::int32);
  if (x.ndim() != 2 || x.shape(1) != kPixels || y.ndim() != 1 || y.shape(0) != x.shape(0)) {
    throw std::runtime_error(path + ": expected images [N, 64] and labels [N]");
  }
  std::vector<int32_t> train, test;
  for (int i = 0; i < x.shape(0); ++i) (i % 5 == 0 ? test : train).push_back(i);
  auto rows = [](const std::vector<int32_t>& idx) {
    return braid::array(idx.data(), {static_cast<int>(idx.size())}, braid::int32);
  };
  Data d{braid::take(x, rows(train), 0), braid::take(y, rows(train), 0), braid::take(x, rows(test), 0),
         braid::take(y, rows(test), 0)};
  braid::eval(d.train_x, d.train_y, d.test_x, d.test_y);
  return d;
}

// An MLP 64 -> hidden -> 10 (ReLU) trained by AdamW on minibatches in a fresh random order
// each epoch. The constructor draws the initial weights from braid::random's process-wide
// sequence, so build trainers on one thread, after random::seed, to get the same weights each
// time; epoch() uses only its own key and may then run on any thread (one thread per trainer).
class Trainer {
 public:
  Trainer(const Data& data, double learning_rate, int batch, uint64_t shuffle_seed, int hidden = 128)
      : data_(data),
        model_(std::make_shared<braid::nn::Sequential>(
            std::make_shared<braid::nn::Linear>(kPixels, hidden), std::make_shared<braid::nn::ReLU>(),
            std::make_shared<braid::nn::Linear>(hidden, kClasses))),
        optimizer_(learning_rate),
        batch_(batch),
        key_(braid::random::key(shuffle_seed)) {
    auto model = model_;
    loss_and_grad_ = braid::nn::value_and_grad(*model_, [model](const std::vector<braid::array>& in) {
      return braid::nn::losses::cross_entropy((*model)(in[0]), in[1], std::nullopt, -1, 0.0f, "mean");
    });
    braid::eval(braid::tree_leaves(model_->parameters()));
  }

  // Minibatches per epoch (the last partial batch is dropped).
  int steps_per_epoch() const { return data_.train_x.shape(0) / batch_; }

  // One epoch; returns each step's loss and calls on_step(step, steps, loss) after each.
  std::vector<float> epoch(const std::function<void(int, int, float)>& on_step = {}) {
    auto [epoch_key, next_key] = braid::random::split(key_);
    key_ = next_key;
    const int steps = steps_per_epoch();
    braid::array order = braid::random::permutation(data_.train_x.shape(0), epoch_key);
    std::vector<float> losses;
    losses.reserve(steps);
    for (int step = 0; step < steps; ++step) {
      braid::array idx = braid::slice(order, {step * batch_}, {(step + 1) * batch_});
      auto [loss, grads] =
          loss_and_grad_({braid::take(data_.train_x, idx, 0), braid::take(data_.train_y, idx, 0)});
      optimizer_.update(*model_, grads);
      // The updates are lazy: evaluate parameters and optimizer state each step, or the graph
      // grows with every step.
      std::vector<braid::array> outputs = braid::tree_leaves(model_->parameters());
      for (auto& s : braid::tree_leaves(optimizer_.state())) outputs.push_back(s);
      outputs.push_back(loss);
      braid::eval(outputs);
      losses.push_back(loss.item<float>());
      if (on_step) on_step(step, steps, losses.back());
    }
    return losses;
  }

  // The fraction of `x` classified as `y`.
  double accuracy(const braid::array& x, const braid::array& y) {
    braid::array correct = braid::equal(braid::argmax((*model_)(x), -1), y);
    return braid::mean(braid::astype(correct, braid::float32)).item<float>();
  }
  double train_accuracy() { return accuracy(data_.train_x, data_.train_y); }
  double test_accuracy() { return accuracy(data_.test_x, data_.test_y); }

 private:
  const Data& data_;
  std::shared_ptr<braid::nn::Sequential> model_;
  braid::optimizers::AdamW optimizer_;
  std::function<std::pair<braid::array, braid::Tree>(const std::vector<braid::array>&)> loss_and_grad_;
  int batch_;
  braid::array key_;
};

// The whole of `text` as a number (a command-line value); throws std::invalid_argument
// otherwise.
inline double number(const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v) || std::abs(v) > 1e9) {
    throw std::invalid_argument(std::string("'") + text + "' is not a number");
  }
  return v;
}

// The whole of `text` as an integer; throws std::invalid_argument otherwise.
inline int whole_number(const char* text) {
  const double v = number(text);
  if (v != std::floor(v)) throw std::invalid_argument(std::string("'") + text + "' is not a whole number");
  return static_cast<int>(v);
}

}  // namespace digits
