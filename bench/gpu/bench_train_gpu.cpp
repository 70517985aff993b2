// Training on the GPU, braid against libtorch (the torch Python package's, from C++) on the same
// GPU in one run (DESIGN.md section 5):
//   a. one AdamW step of a 4-layer MLP, 4096 wide, batch 256, bfloat16 parameters and
//      activations, cross-entropy over 4096 classes; both libraries from the same weights;
//   b. 8 threads, each training its own 4-layer MLP (1024 wide, batch 64, bfloat16) on its own
//      stream: aggregate steps per second, with 1 thread alone for reference.
// Prints a Markdown report in the style of bench/bench_train.cpp. Build and run:
// bench/gpu/run.sh train [--quick | --runs N].
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <atomic>
#include <barrier>
#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_report.h"
#include "braid/braid.h"
#include "braid/nn.h"
#include "braid/optimizers.h"

namespace {

using namespace braid_bench;
using braid::array;

struct Config {
  int runs = 7;           // samples per side of a figure
  double sample_s = 0.2;  // (a) a sample repeats the step for about this long
  int thread_steps = 50;  // (b) steps each thread takes per sample
  int threads = 8;        // (b)
};

void device_sync() { cudaDeviceSynchronize(); }

struct MlpShape {
  int width, layers, batch;  // a square Linear per layer, ReLU between layers
};
constexpr MlpShape kLarge{4096, 4, 256}, kSmall{1024, 4, 64};
// Small enough that a few steps of bfloat16 training move both libraries' losses alike.
constexpr double kLearningRate = 1e-4, kWeightDecay = 0.01;
constexpr int kCheckedSteps = 5, kWarmupSteps = 3;

std::string describe(const MlpShape& m) {
  return std::to_string(m.layers) + "-layer MLP " + std::to_string(m.width) + " wide, batch " +
         std::to_string(m.batch) + ", bfloat16";
}

// ---- braid ----

std::shared_ptr<braid::nn::Sequential> braid_mlp(const MlpShape& m) {
  std::vector<std::shared_ptr<braid::nn::Module>> layers;
  for (int l = 0; l < m.layers; ++l) {
    if (l > 0) layers.push_back(std::make_shared<braid::nn::ReLU>());
    layers.push_back(std::make_shared<braid::nn::Linear>(m.width, m.width));
  }
  auto model = std::make_shared<braid::nn::Sequential>(std::move(layers));
  model->set_dtype(braid::bfloat16);
  braid::eval(braid::tree_leaves(model->parameters()));
  return model;
}

// A model, its optimizer and one batch, on the calling thread's default stream.
struct BraidTrainer {
  std::shared_ptr<braid::nn::Sequential> model;
  // torch::optim::AdamW always corrects the moments' bias; so does this one, for the same work.
  braid::optimizers::AdamW optimizer{
      kLearningRate, {0.9, 0.999}, 1e-8, kWeightDecay, /*bias_correction=*/true};
  std::function<std::pair<array, braid::Tree>(const std::vector<array>&)> loss_and_grad;
  array x, y;
  braid::EvalHandle in_flight;

  BraidTrainer(const MlpShape& m, uint64_t seed)
      : model(braid_mlp(m)),
        x(braid::astype(braid_of(random_floats(int64_t{m.batch} * m.width, -1, 1, seed), {m.batch, m.width}),
                        braid::bfloat16)),
        y(braid::copy(braid_of(random_ids(m.batch, m.width, seed + 1), {m.batch}))) {
    braid::eval(x, y);
    auto net = model;
    loss_and_grad = braid::nn::value_and_grad(*model, [net](const std::vector<array>& in) {
      return braid::nn::losses::cross_entropy((*net)(in[0]), in[1], std::nullopt, -1, 0.0f, "mean");
    });
  }

  // Builds a step and submits it, then waits for the step before: the host builds each step
  // while the device runs the previous one, and never runs further ahead.
  array step() {
    auto [loss, grads] = loss_and_grad({x, y});
    optimizer.update(*model, grads);
    std::vector<array> outputs = braid::tree_leaves(model->parameters());
    for (auto& s : braid::tree_leaves(optimizer.state())) outputs.push_back(s);
    outputs.push_back(loss);
    braid::EvalHandle submitted = braid::async_eval(std::move(outputs));
    in_flight.wait();
    in_flight = std::move(submitted);
    return loss;
  }
  void finish() { in_flight.wait(); }
};

// ---- libtorch ----

torch::nn::Sequential torch_mlp(const MlpShape& m) {
  torch::nn::Sequential model;
  for (int l = 0; l < m.layers; ++l) {
    if (l > 0) model->push_back(torch::nn::ReLU());
    model->push_back(torch::nn::Linear(m.width, m.width));
  }
  model->to(torch::kCUDA, torch::kBFloat16);
  return model;
}

// The same on the calling thread's current CUDA stream: eager torch::nn, autograd and
// torch::optim::AdamW (as torch.optim.AdamW with its defaults but the learning rate).
struct TorchTrainer {
  torch::nn::Sequential model;
  torch::optim::AdamW optimizer;
  torch::Tensor x, y;

  TorchTrainer(const MlpShape& m, uint64_t seed)
      : model(torch_mlp(m)),
        optimizer(model->parameters(), torch::optim::AdamWOptions(kLearningRate).weight_decay(kWeightDecay)) {
    std::vector<float> xs = random_floats(int64_t{m.batch} * m.width, -1, 1, seed);
    std::vector<int32_t> ys = random_ids(m.batch, m.width, seed + 1);
    x = torch::from_blob(xs.data(), {m.batch, m.width}).to(torch::kCUDA, torch::kBFloat16);
    y = torch::from_blob(ys.data(), {m.batch}, torch::kInt32).to(torch::kCUDA, torch::kInt64);
  }

  // Takes braid's weights (both lay a Linear's weight out as [out, in]).
  void copy_weights(const braid::nn::Module& from) {
    torch::NoGradGuard no_grad;
    std::vector<array> leaves = braid::tree_leaves(from.parameters());
    std::vector<torch::Tensor> params = model->parameters();
    check(leaves.size() == params.size());
    for (size_t i = 0; i < std::min(leaves.size(), params.size()); ++i) {
      std::vector<double> v = host_values(leaves[i]);
      std::vector<int64_t> shape(leaves[i].shape().begin(), leaves[i].shape().end());
      torch::Tensor w = torch::from_blob(v.data(), shape, torch::kFloat64).to(torch::kCUDA, torch::kBFloat16);
      check(w.sizes() == params[i].sizes());
      if (w.sizes() == params[i].sizes()) params[i].copy_(w);
    }
  }

  torch::Tensor step() {
    // optimizer.zero_grad(/*set_to_none=*/true), written out for libtorch versions without it.
    for (auto& p : optimizer.param_groups()[0].params()) p.mutable_grad().reset();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer.step();
    return loss;
  }
};

// ---- threads ----

// Threads that each prepare once, then run their work at every round; a round's time runs
// from the common start until the last thread has finished.
class ThreadGroup {
 public:
  ThreadGroup(int threads, const std::function<void(int)>& prepare, std::function<void(int)> work)
      : start_(threads + 1), done_(threads + 1), work_(std::move(work)) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, i, prepare] {
        prepare(i);
        done_.arrive_and_wait();
        while (true) {
          start_.arrive_and_wait();
          if (stop_.load()) return;
          work_(i);
          done_.arrive_and_wait();
        }
      });
    }
    done_.arrive_and_wait();  // every thread has prepared
  }
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;
  ~ThreadGroup() {
    stop_.store(true);
    start_.arrive_and_wait();
    for (auto& t : threads_) t.join();
  }

  double round() {
    auto t0 = Clock::now();
    start_.arrive_and_wait();
    done_.arrive_and_wait();
    return seconds_since(t0);
  }

 private:
  std::barrier<> start_, done_;
  std::function<void(int)> work_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// braid: every thread its own stream (new_stream, entered with StreamContext) and model.
struct BraidThreads {
  std::vector<std::optional<braid::Stream>> streams;
  std::vector<std::unique_ptr<BraidTrainer>> trainers;
  ThreadGroup group;

  BraidThreads(int threads, int steps)
      : streams(threads),
        trainers(threads),
        group(
            threads,
            [this](int i) {
              streams[i] = braid::new_stream(braid::Device::gpu);
              braid::StreamContext on(*streams[i]);
              trainers[i] = std::make_unique<BraidTrainer>(kSmall, 100 + i);
              for (int k = 0; k < kWarmupSteps; ++k) trainers[i]->step();
              trainers[i]->finish();
            },
            [this, steps](int i) {
              braid::StreamContext on(*streams[i]);
              for (int k = 0; k < steps; ++k) trainers[i]->step();
              trainers[i]->finish();
              braid::synchronize(*streams[i]);
            }) {}
};

// libtorch: every thread a stream of its pool (getStreamFromPool, entered with
// CUDAStreamGuard) and its own model.
struct TorchThreads {
  std::vector<std::optional<c10::cuda::CUDAStream>> streams;
  std::vector<std::unique_ptr<TorchTrainer>> trainers;
  std::vector<torch::Tensor> last_loss;
  ThreadGroup group;

  TorchThreads(int threads, int steps)
      : streams(threads),
        trainers(threads),
        last_loss(threads),
        group(
            threads,
            [this](int i) {
              streams[i] = c10::cuda::getStreamFromPool();
              c10::cuda::CUDAStreamGuard on(*streams[i]);
              trainers[i] = std::make_unique<TorchTrainer>(kSmall, 100 + i);
              for (int k = 0; k < kWarmupSteps; ++k) trainers[i]->step();
              streams[i]->synchronize();
            },
            [this, steps](int i) {
              c10::cuda::CUDAStreamGuard on(*streams[i]);
              for (int k = 0; k < steps; ++k) last_loss[i] = trainers[i]->step();
              streams[i]->synchronize();
            }) {}
};

// ---- the figures ----

struct StepFigures {
  Stats braid_step, torch_step;
  Answer losses{"", 0, 0};
};

StepFigures bench_step(const Config& cfg) {
  braid::Stream s = braid::new_stream(braid::Device::gpu);
  braid::StreamContext on(s);
  braid::random::seed(7);
  BraidTrainer b(kLarge, 1);
  TorchTrainer t(kLarge, 1);
  t.copy_weights(*b.model);

  // The same first steps from the same weights; bfloat16 rounds differently in the two, so
  // they agree loosely (the loss starts near ln 4096 = 8.3, where bfloat16's spacing is 1/16).
  std::vector<double> braid_losses, torch_losses;
  for (int k = 0; k < kCheckedSteps; ++k) {
    braid_losses.push_back(braid::astype(b.step(), braid::float32).item<float>());
    torch_losses.push_back(t.step().to(torch::kFloat32).item<float>());
  }
  StepFigures r;
  r.losses = {"a. losses of the first " + std::to_string(kCheckedSteps) + " steps from the same weights",
              max_abs_diff(braid_losses, torch_losses), 0.1};
  for (const auto& p : braid::tree_leaves(b.model->parameters())) check(p.dtype() == braid::bfloat16);

  const Timed braid_steps = [&](int calls) {
    braid::synchronize(s);
    device_sync();
    auto t0 = Clock::now();
    for (int k = 0; k < calls; ++k) b.step();
    b.finish();
    braid::synchronize(s);
    device_sync();
    return seconds_since(t0) / calls;
  };
  const Timed torch_steps = [&](int calls) {
    device_sync();
    auto t0 = Clock::now();
    for (int k = 0; k < calls; ++k) t.step();
    device_sync();
    return seconds_since(t0) / calls;
  };
  auto sides = measure_sides({braid_steps, torch_steps}, cfg.runs, cfg.sample_s);
  r.braid_step = sides[0];
  r.torch_step = sides[1];
  return r;
}

struct ThreadFigures {
  int threads;
  Stats braid_steps_s, torch_steps_s;  // aggregate steps per second
};

ThreadFigures bench_threads(const Config& cfg, int threads) {
  BraidThreads b(threads, cfg.thread_steps);
  TorchThreads t(threads, cfg.thread_steps);
  b.group.round();  // warm-up: every stream's first full round
  t.group.round();
  const double steps = double(threads) * cfg.thread_steps;
  ThreadFigures r{threads, {}, {}};
  for (int k = 0; k < cfg.runs; ++k) {
    r.braid_steps_s.samples.push_back(steps / b.group.round());
    r.torch_steps_s.samples.push_back(steps / t.group.round());
  }
  for (int i = 0; i < threads; ++i) {
    braid::StreamContext on(*b.streams[i]);
    check(std::isfinite(braid::astype(b.trainers[i]->step(), braid::float32).item<float>()));
    check(std::isfinite(t.last_loss[i].to(torch::kFloat32).item<float>()));
  }
  return r;
}

Config parse_args(int argc, char** argv) {
  Config cfg;
  parse_bench_args(argc, argv, cfg.runs, [&cfg] { cfg.sample_s = 0.05; cfg.thread_steps = 20; });
  return cfg;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg = parse_args(argc, argv);
  if (!braid::is_available(braid::Device::gpu) || !torch::cuda::is_available()) {
    std::cerr << "no GPU available: nothing to measure\n";
    return 1;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  const std::string date = utc_now();

  std::cerr << "braid GPU training bench: running (" << cfg.runs << " samples per figure)...\n";
  std::cerr << "  a. " << describe(kLarge) << ", one AdamW step\n";
  const StepFigures a = bench_step(cfg);
  braid::clear_cache();
  std::cerr << "  b. " << describe(kSmall) << ", 1 and " << cfg.threads << " threads\n";
  const ThreadFigures one = bench_threads(cfg, 1);
  const ThreadFigures many = bench_threads(cfg, cfg.threads);

  const double slowdown_limit = 1.05, threads_target = 1.5;
  const Stats a_ratio = quotients(a.braid_step, a.torch_step);
  const Stats one_ratio = quotients(one.braid_steps_s, one.torch_steps_s);
  const Stats many_ratio = quotients(many.braid_steps_s, many.torch_steps_s);
  const std::string n = std::to_string(cfg.threads);
  const std::vector<std::vector<std::string>> rows = {
      {"a", "one AdamW step, " + describe(kLarge) + ", cross-entropy: ms",
       fmt(a.braid_step.median() * 1e3, 3), fmt(a.torch_step.median() * 1e3, 3), fmt(a_ratio.median(), 3),
       "braid time / torch time <= 1.05", verdict(a_ratio.median() <= slowdown_limit)},
      {"b1", "1 thread training its own " + describe(kSmall) + " on its own stream: steps/s",
       fmt(one.braid_steps_s.median(), 0), fmt(one.torch_steps_s.median(), 0), fmt(one_ratio.median(), 2), "",
       ""},
      {"b" + n, n + " threads, each as b1: steps/s (total)", fmt(many.braid_steps_s.median(), 0),
       fmt(many.torch_steps_s.median(), 0), fmt(many_ratio.median(), 2), "braid steps/s / torch's >= 1.50",
       verdict(many_ratio.median() >= threads_target)},
  };

  std::ostream& out = std::cout;
  out << "# braid GPU training benchmark\n\n";
  out << "- date: " << date << "\n";
  out << "- GPU: " << prop.name << " (" << prop.multiProcessorCount << " SMs); host " << cpu_model() << ", "
      << std::thread::hardware_concurrency() << " hardware threads\n";
  out << "- versions: braid " << braid::version() << ", libtorch " << TORCH_VERSION << ", compiler "
      << compiler() << "\n";
  out << "- method: median of " << cfg.runs << " samples per figure, the samples of braid and libtorch "
      << "alternating; (a) a sample repeats the step for about " << fmt(cfg.sample_s * 1e3, 0)
      << " ms (at least once) after warm-up steps, the device synchronized before and after; (b) a sample is "
      << cfg.thread_steps << " steps on every thread, from a common start until the last thread's stream "
      << "is synchronized\n";
  out << "- model: Linear layers " << kLarge.width << " x " << kLarge.width << " (a) or " << kSmall.width
      << " x " << kSmall.width << " (b) with bias, ReLU between, 4 of them; cross-entropy (mean) over "
      << "as many classes as the width; AdamW, lr " << kLearningRate << ", weight decay " << kWeightDecay
      << ", betas 0.9/0.999, eps 1e-8, bias correction; parameters, optimizer state and activations "
         "bfloat16\n";
  out << "- braid: nn::value_and_grad, optimizers::AdamW; each step's loss, parameters and optimizer state "
         "go to async_eval, and the host waits for the step before (one step in flight); (b) each thread "
         "its own new_stream(Device::gpu) entered with StreamContext\n";
  out << "- libtorch: eager torch::nn::Sequential, torch::nn::functional::cross_entropy, backward, "
         "torch::optim::AdamW, gradients set to none before each step; (b) each thread its own stream from "
         "c10::cuda::getStreamFromPool entered with CUDAStreamGuard\n\n";
  print_table(out, {"#", "figure", "braid", "libtorch", "ratio", "target", "result"}, "llrrrll", rows);

  out << "\nSpread, median (min .. max) over the samples:\n\n";
  print_table(out, {"figure", "braid", "libtorch"}, "lll",
              {{"a. ms/step", spread(a.braid_step.scaled(1e3), 3), spread(a.torch_step.scaled(1e3), 3)},
               {"a. braid time / torch time", spread(a_ratio, 3), ""},
               {"b1. steps/s", spread(one.braid_steps_s, 0), spread(one.torch_steps_s, 0)},
               {"b" + n + ". steps/s", spread(many.braid_steps_s, 0), spread(many.torch_steps_s, 0)},
               {"b" + n + ". braid / torch", spread(many_ratio, 2), ""}});
  out << "\n";
  print_answers(out, {a.losses});
  return wrong_answers() == 0 ? 0 : 1;
}
