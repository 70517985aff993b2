// Training on the CPU, braid against libtorch side by side in one run (DESIGN.md section 5):
//   a. one AdamW step of the digits MLP (64-128-10, cross-entropy, batch 128), as
//      tests/test_nn_train_digits.cpp trains it, against libtorch's torch::nn and torch::optim;
//   b. value_and_grad of a 100-op element-wise chain ending in sum, against the forward alone
//      (braid's own ratio; libtorch's autograd against its inference-mode forward for reference).
// Both libraries start from the same weights, and their losses and gradients are compared.
// Prints a Markdown report. Options: --runs N, --quick, --plot-data FILE.
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <braid/braid.h>
#include <braid/nn.h>
#include <braid/optimizers.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "bench_report.h"

namespace {

using namespace braid_bench;
using braid::array;

struct Config {
  int threads = 1;        // braid's pool and libtorch's intra-op pool
  int runs = 9;           // samples per side of a figure
  double sample_s = 0.1;  // a sample repeats the call for about this long
  std::string plot_data;
};

Timed repeated(std::function<void()> step) {
  return [step = std::move(step)](int calls) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) step();
    return seconds_since(t0) / calls;
  };
}

torch::Tensor torch_of(const array& a) {
  std::vector<double> v = host_values(a);
  std::vector<int64_t> shape(a.shape().begin(), a.shape().end());
  return torch::tensor(v, torch::kFloat64).reshape(shape).to(torch::kFloat32);
}

std::vector<double> torch_values(const torch::Tensor& t) {
  torch::Tensor d = t.detach().to(torch::kFloat64).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

// ---- a. the digits MLP ----

constexpr int kBatch = 128, kInputs = 64, kHidden = 128, kClasses = 10;
constexpr double kLearningRate = 3e-3;
constexpr int kCheckedSteps = 5;

struct BraidMlp {
  braid::nn::Sequential model{std::make_shared<braid::nn::Linear>(kInputs, kHidden),
                              std::make_shared<braid::nn::ReLU>(),
                              std::make_shared<braid::nn::Linear>(kHidden, kClasses)};
  // torch::optim::AdamW always corrects the moments' bias; so does this one, for the same work.
  braid::optimizers::AdamW optimizer{kLearningRate, {0.9, 0.999}, 1e-8, 0.01, /*bias_correction=*/true};
  std::function<std::pair<array, braid::Tree>(const std::vector<array>&)> loss_and_grad =
      braid::nn::value_and_grad(model, [this](const std::vector<array>& in) {
        return braid::nn::losses::cross_entropy(model(in[0]), in[1], std::nullopt, -1, 0.0f, "mean");
      });

  // One step, evaluated: the loss, the new parameters and the optimizer's state.
  array step(const array& x, const array& y) {
    auto [loss, grads] = loss_and_grad({x, y});
    optimizer.update(model, grads);
    std::vector<array> outputs = braid::tree_leaves(model.parameters());
    for (auto& s : braid::tree_leaves(optimizer.state())) outputs.push_back(s);
    outputs.push_back(loss);
    braid::eval(outputs);
    return loss;
  }
};

struct TorchMlp {
  torch::nn::Sequential model{torch::nn::Linear(kInputs, kHidden), torch::nn::ReLU(),
                              torch::nn::Linear(kHidden, kClasses)};
  torch::optim::AdamW optimizer{model->parameters(),
                                torch::optim::AdamWOptions(kLearningRate).weight_decay(0.01)};

  // Takes braid's initial weights (both lay a Linear's weight out as [out, in]).
  void copy_weights(const braid::nn::Module& from) {
    torch::NoGradGuard no_grad;
    std::vector<array> leaves = braid::tree_leaves(from.parameters());
    std::vector<torch::Tensor> params = model->parameters();
    check(leaves.size() == params.size());
    for (size_t i = 0; i < std::min(leaves.size(), params.size()); ++i) {
      torch::Tensor w = torch_of(leaves[i]);
      check(w.sizes() == params[i].sizes());
      if (w.sizes() == params[i].sizes()) params[i].copy_(w);
    }
  }

  torch::Tensor step(const torch::Tensor& x, const torch::Tensor& y) {
    // zero_grad(set_to_none=true), written out: libtorch 1.13's zero_grad() zeroes in place.
    for (auto& p : optimizer.param_groups()[0].params()) p.mutable_grad().reset();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer.step();
    return loss;
  }
};

struct TrainFigures {
  Stats braid_step, torch_step;
  Answer losses{"", 0, 0};
};

TrainFigures bench_mlp_step(const Config& cfg) {
  const std::vector<float> xs = random_floats(int64_t{kBatch} * kInputs, 0.0f, 1.0f, 1);
  const std::vector<int32_t> ys = random_ids(kBatch, kClasses, 2);
  const array x = braid_of(xs, {kBatch, kInputs}), y = braid_of(ys, {kBatch});
  const torch::Tensor tx = torch::from_blob(const_cast<float*>(xs.data()), {kBatch, kInputs}).clone();
  const torch::Tensor ty =
      torch::from_blob(const_cast<int32_t*>(ys.data()), {kBatch}, torch::kInt32).to(torch::kInt64);

  braid::random::seed(7);
  BraidMlp b;
  TorchMlp t;
  t.copy_weights(b.model);

  // The same first steps from the same weights: the losses must agree to float32 rounding.
  std::vector<double> braid_losses, torch_losses;
  for (int i = 0; i < kCheckedSteps; ++i) {
    braid_losses.push_back(b.step(x, y).item<float>());
    torch_losses.push_back(t.step(tx, ty).item<float>());
  }
  TrainFigures r;
  r.losses = {"a. losses of the first " + std::to_string(kCheckedSteps) + " steps from the same weights",
              max_abs_diff(braid_losses, torch_losses), 1e-4};

  auto sides = measure_sides({repeated([&] { b.step(x, y); }), repeated([&] { t.step(tx, ty); })}, cfg.runs,
                             cfg.sample_s);
  r.braid_step = sides[0];
  r.torch_step = sides[1];
  return r;
}

// ---- b. a 100-op chain and its gradient ----

constexpr int kChainOps = 100, kChainElems = 64;

// A cycle of cheap element-wise ops whose derivatives multiply to about 1 over the chain, so
// that the gradient neither vanishes nor overflows.
array braid_chain(const array& x) {
  array y = x;
  for (int i = 0; i < kChainOps; ++i) {
    switch (i % 4) {
      case 0: y = y * 1.5f; break;
      case 1: y = y + 0.5f; break;
      case 2: y = braid::sin(y); break;
      case 3: y = braid::exp(y); break;
    }
  }
  return braid::sum(y);
}

torch::Tensor torch_chain(const torch::Tensor& x) {
  torch::Tensor y = x;
  for (int i = 0; i < kChainOps; ++i) {
    switch (i % 4) {
      case 0: y = y * 1.5; break;
      case 1: y = y + 0.5; break;
      case 2: y = torch::sin(y); break;
      case 3: y = torch::exp(y); break;
    }
  }
  return y.sum();
}

struct ChainFigures {
  Stats braid_forward, braid_grad, torch_forward, torch_grad;
  Answer value{"", 0, 0}, gradient{"", 0, 0};
};

ChainFigures bench_chain(const Config& cfg) {
  const std::vector<float> xs = random_floats(kChainElems, -1.0f, 1.0f, 3);
  const array x = braid_of(xs, {kChainElems});
  const torch::Tensor tx = torch::from_blob(const_cast<float*>(xs.data()), {kChainElems}).clone();
  const auto value_and_grad = braid::value_and_grad(std::function<array(const array&)>(braid_chain));

  auto torch_value_and_grad = [&] {
    torch::Tensor leaf = tx.detach().requires_grad_(true);
    torch::Tensor value = torch_chain(leaf);
    torch::Tensor grad = torch::autograd::grad({value}, {leaf})[0];
    return std::make_pair(value, grad);
  };

  ChainFigures r;
  {
    auto [value, grad] = value_and_grad(x);
    braid::eval(value, grad);
    auto [tvalue, tgrad] = torch_value_and_grad();
    r.value = {"b. value of the chain", max_abs_diff(host_values(value), torch_values(tvalue)), 1e-4};
    const std::vector<double> want = torch_values(tgrad);
    double largest = 0;
    for (double g : want) largest = std::max(largest, std::abs(g));
    r.gradient = {"b. gradient of the chain (largest element " + fmt(largest, 3) + ")",
                  max_abs_diff(host_values(grad), want), 1e-4};
  }

  const Timed braid_forward = repeated([&] { braid_chain(x).eval(); });
  const Timed braid_grad = repeated([&] {
    auto [value, grad] = value_and_grad(x);
    braid::eval(value, grad);
  });
  const Timed torch_forward = repeated([&] {
    c10::InferenceMode guard;
    torch_chain(tx);
  });
  const Timed torch_grad = repeated([&] { torch_value_and_grad(); });
  auto sides = measure_sides({braid_forward, braid_grad, torch_forward, torch_grad}, cfg.runs, cfg.sample_s);
  r.braid_forward = sides[0];
  r.braid_grad = sides[1];
  r.torch_forward = sides[2];
  r.torch_grad = sides[3];
  return r;
}

Config parse_args(int argc, char** argv) {
  Config cfg;
  parse_bench_args(argc, argv, cfg.runs, [&cfg] { cfg.sample_s = 0.03; }, &cfg.plot_data);
  return cfg;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg = parse_args(argc, argv);
  cfg.threads = pool_threads();  // before braid's pool starts (on first use, below)
  torch::set_num_threads(cfg.threads);
  const int torch_threads = torch::get_num_threads();
  const std::string load_before = load_average();
  const std::string date = utc_now();

  std::cerr << "braid training bench: running (" << cfg.runs << " samples per figure)...\n";
  std::cerr << "  a. digits MLP, one AdamW step\n";
  const TrainFigures a = bench_mlp_step(cfg);
  std::cerr << "  b. value_and_grad of a " << kChainOps << "-op chain\n";
  const ChainFigures b = bench_chain(cfg);
  const std::string load_after = load_average();

  const Stats a_ratio = quotients(a.torch_step, a.braid_step);
  const Stats b_ratio = quotients(b.braid_grad, b.braid_forward);
  const Stats b_torch_ratio = quotients(b.torch_grad, b.torch_forward);
  const std::string chain = std::to_string(kChainOps) + "-op chain on " + std::to_string(kChainElems) +
                            " float32 (* 1.5, + 0.5, sin, exp; then sum)";
  const std::vector<std::vector<std::string>> rows = {
      {"a", "one AdamW step, MLP 64-128-10, batch 128, cross-entropy: ms",
       fmt(a.braid_step.median() * 1e3, 3), fmt(a.torch_step.median() * 1e3, 3), fmt(a_ratio.median(), 2),
       "torch time / braid time >= 1.00", verdict(a_ratio.median() >= 1.0)},
      {"b1", chain + ", forward (build + eval): ms", fmt(b.braid_forward.median() * 1e3, 3),
       fmt(b.torch_forward.median() * 1e3, 3), fmt(b.torch_forward.median() / b.braid_forward.median(), 2),
       "", ""},
      {"b2", "the same, value_and_grad (value + gradient): ms", fmt(b.braid_grad.median() * 1e3, 3),
       fmt(b.torch_grad.median() * 1e3, 3), fmt(b.torch_grad.median() / b.braid_grad.median(), 2), "", ""},
      {"b", "value_and_grad time / forward time", fmt(b_ratio.median(), 2), fmt(b_torch_ratio.median(), 2),
       "", "braid <= 2.00", verdict(b_ratio.median() <= 2.0)},
  };

  std::ostream& out = std::cout;
  out << "# braid training benchmark (CPU)\n\n";
  out << "- date: " << date << "\n";
  out << "- machine: " << cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads\n";
  out << "- threads: braid pool " << cfg.threads << ", libtorch intra-op " << torch_threads
      << " (torch::set_num_threads)\n";
  out << "- versions: braid " << braid::version() << ", libtorch " << TORCH_VERSION << ", compiler "
      << compiler() << "\n";
  out << "- load average (1/5/15 min): " << load_before << " at start, " << load_after << " at end\n";
  out << "- method: median of " << cfg.runs << " samples per figure; a sample repeats the call for about "
      << fmt(cfg.sample_s * 1e3, 0) << " ms (at least once) after warm-up calls; the samples of the sides "
      << "alternate; ratios are taken sample by sample\n";
  out << "- a: random inputs in [0, 1) and labels, both libraries from braid's initial weights; braid: "
         "nn::value_and_grad, optimizers::AdamW (bias correction on, as torch's), eval of the loss, "
         "parameters and optimizer state each step; libtorch: torch::nn::Sequential, "
         "torch::nn::functional::cross_entropy, backward, torch::optim::AdamW, gradients set to none "
         "before each step; lr 3e-3, weight decay 0.01\n";
  out << "- b: braid's forward builds the chain and evaluates it; value_and_grad builds, "
         "differentiates and evaluates value and gradient; libtorch (reference): eager forward under "
         "InferenceMode, and forward with autograd plus torch::autograd::grad\n\n";
  print_table(out, {"#", "figure", "braid", "libtorch", "torch / braid", "target", "result"}, "llrrrll",
              rows);

  out << "\nSpread, median (min .. max) over the samples:\n\n";
  print_table(out, {"figure", "braid", "libtorch"}, "lll",
              {{"a. ms/step", spread(a.braid_step.scaled(1e3), 3), spread(a.torch_step.scaled(1e3), 3)},
               {"a. torch / braid", spread(a_ratio, 2), ""},
               {"b1. ms", spread(b.braid_forward.scaled(1e3), 3), spread(b.torch_forward.scaled(1e3), 3)},
               {"b2. ms", spread(b.braid_grad.scaled(1e3), 3), spread(b.torch_grad.scaled(1e3), 3)},
               {"b. value_and_grad / forward", spread(b_ratio, 2), spread(b_torch_ratio, 2)}});
  out << "\n";
  print_answers(out, {a.losses, b.value, b.gradient});

  if (!cfg.plot_data.empty()) {
    std::ofstream f(cfg.plot_data);
    f << "# label value target (a: higher is better; b: lower is)\n";
    f << "\"a: torch/braid step\" " << a_ratio.median() << " 1.0\n";
    f << "\"b: grad/forward\" " << b_ratio.median() << " 2.0\n";
  }
  return wrong_answers() == 0 ? 0 : 1;
}
