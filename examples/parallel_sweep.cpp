// parallel_sweep: a learning-rate sweep. N MLPs (64 -> 128 -> 10) learn the handwritten digits
// of tests/data with AdamW, each at its own learning rate (log-uniform from 1e-4 to 3e-2),
// from the same initial weights and in the same order of minibatches. First they train one
// after another on one thread; then all at once, each in its own std::thread on its own stream.
// Every model's numbers are fixed by its seeds, so both runs must print the same table.
//
//   parallel_sweep [DATA] [--models N] [--epochs N] [--batch N] [--device cpu|gpu]
//
// What it shows (docs/threading.md): streams are queues, not threads; threads that each
// train on their own stream share one worker pool and get the single-threaded results.
// Exits with 1 when the two runs disagree or training fails, 2 for bad arguments.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "digits.h"

namespace {

constexpr double kLowestRate = 1e-4;
constexpr double kHighestRate = 3e-2;

struct Options {
  std::string data = digits::kDefaultPath;
  int models = 8;
  int epochs = 30;
  int batch = 128;
  bool gpu = false;
};

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [DATA] [--models N] [--epochs N] [--batch N] [--device cpu|gpu]\n"
               "  DATA     digits.safetensors (default %s)\n"
               "  --models how many learning rates, from %g to %g (default 8)\n"
               "  --epochs passes over the training digits (default 30)\n"
               "  --batch  digits per step (default 128)\n"
               "  --device where to train (default cpu)\n",
               program, digits::kDefaultPath, kLowestRate, kHighestRate);
}

// Parses argv into `o`; false (after a message) on anything it does not understand.
bool parse(int argc, char** argv, Options& o) {
  bool have_data = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    try {
      if (arg == "--models" || arg == "--epochs" || arg == "--batch" || arg == "--device") {
        if (i + 1 >= argc) throw std::invalid_argument("needs a value");
        const std::string v = argv[++i];
        if (arg == "--models") o.models = digits::whole_number(v.c_str());
        if (arg == "--epochs") o.epochs = digits::whole_number(v.c_str());
        if (arg == "--batch") o.batch = digits::whole_number(v.c_str());
        if (arg == "--device") {
          if (v != "cpu" && v != "gpu") throw std::invalid_argument("cpu or gpu");
          o.gpu = v == "gpu";
        }
      } else if (!arg.empty() && arg[0] != '-' && !have_data) {
        o.data = arg;
        have_data = true;
      } else {
        throw std::invalid_argument("unknown argument");
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", arg.c_str(), e.what());
      return false;
    }
  }
  if (o.models < 1 || o.models > 256 || o.epochs < 1 || o.batch < 1) {
    std::fprintf(stderr, "--models must be 1 to 256, --epochs and --batch at least 1\n");
    return false;
  }
  return true;
}

// Model i's learning rate: log-uniform from kLowestRate to kHighestRate.
double learning_rate(int i, int models) {
  if (models == 1) return kLowestRate;
  return kLowestRate * std::pow(kHighestRate / kLowestRate, static_cast<double>(i) / (models - 1));
}

struct Result {
  float loss = 0;      // the mean loss of the last epoch
  float accuracy = 0;  // on the held-out digits
  std::string error;   // what a training thread threw, if it did
};

// The trainers of one run, built here on the calling thread: the layers draw their initial
// weights from random's process-wide sequence, which seeding before each build makes the same
// for every model and every run. Training them then touches only each trainer's own keys.
std::vector<std::unique_ptr<digits::Trainer>> make_trainers(const digits::Data& data, const Options& o) {
  std::vector<std::unique_ptr<digits::Trainer>> trainers;
  for (int i = 0; i < o.models; ++i) {
    braid::random::seed(7);
    trainers.push_back(std::make_unique<digits::Trainer>(data, learning_rate(i, o.models), o.batch,
                                                         /*shuffle_seed=*/11));
  }
  return trainers;
}

// All epochs of one trainer on the calling thread's current default stream.
Result train(digits::Trainer& trainer, int epochs) {
  Result r;
  try {
    std::vector<float> losses;
    for (int epoch = 0; epoch < epochs; ++epoch) losses = trainer.epoch();
    r.loss = static_cast<float>(std::accumulate(losses.begin(), losses.end(), 0.0) / losses.size());
    r.accuracy = static_cast<float>(trainer.test_accuracy());
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

struct Timing {
  double wall_s = 0;
  double cpu_s = 0;  // of the whole process, all threads
};

// Wall and process CPU time since construction. The CPU time tells a busy machine (CPU time
// well below wall time times the cores) from a slow program.
class Clocks {
 public:
  Clocks() : wall_(std::chrono::steady_clock::now()), cpu_(std::clock()) {}
  Timing elapsed() const {
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count(),
            static_cast<double>(std::clock() - cpu_) / CLOCKS_PER_SEC};
  }

 private:
  std::chrono::steady_clock::time_point wall_;
  std::clock_t cpu_;
};

// The row's numbers as printed, so that two runs are compared at the digits a reader sees.
std::string printed(const Result& r) {
  if (!r.error.empty()) return "error: " + r.error;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%15.4f  %12.2f%%", r.loss, 100 * r.accuracy);
  return buf;
}

int sweep(const Options& o) {
  const braid::Device device = o.gpu ? braid::Device::gpu : braid::Device::cpu;
  if (!braid::is_available(device)) {
    std::fprintf(stderr, "parallel_sweep: no GPU in this build or on this machine\n");
    return 1;
  }
  braid::set_default_device(device);
  const digits::Data data = digits::load(o.data);
  if (o.batch > data.train_x.shape(0)) {
    std::fprintf(stderr, "parallel_sweep: --batch %d is more than the %d training digits\n", o.batch,
                 data.train_x.shape(0));
    return 2;
  }
  std::printf(
      "braid %s parallel_sweep: %d MLPs 64 -> 128 -> 10 on the digits, AdamW lr %g .. %g, %d epochs of "
      "batch %d, on the %s (%u hardware threads)\n",
      braid::version(), o.models, kLowestRate, kHighestRate, o.epochs, o.batch, o.gpu ? "gpu" : "cpu",
      std::thread::hardware_concurrency());

  // An untimed epoch first, so that neither timing pays for first use (worker start-up, the
  // allocator's first buffers).
  digits::Trainer(data, kLowestRate, o.batch, /*shuffle_seed=*/1).epoch();

  // One after another, on this thread and one stream.
  std::vector<Result> one_by_one(o.models);
  Timing one_by_one_time;
  {
    auto trainers = make_trainers(data, o);
    braid::StreamContext on(braid::new_stream(device));
    const Clocks start;
    for (int i = 0; i < o.models; ++i) one_by_one[i] = train(*trainers[i], o.epochs);
    one_by_one_time = start.elapsed();
  }

  // All at once: thread i trains model i on a stream of its own.
  std::vector<Result> at_once(o.models);
  Timing at_once_time;
  {
    auto trainers = make_trainers(data, o);
    std::vector<braid::Stream> streams;
    for (int i = 0; i < o.models; ++i) streams.push_back(braid::new_stream(device));
    const Clocks start;
    std::vector<std::thread> threads;
    for (int i = 0; i < o.models; ++i) {
      threads.emplace_back([&, i] {
        braid::StreamContext on(streams[i]);  // this thread's default stream only
        at_once[i] = train(*trainers[i], o.epochs);
      });
    }
    for (auto& t : threads) t.join();
    at_once_time = start.elapsed();
  }

  std::printf("\n%5s  %13s  %15s  %13s\n", "model", "learning rate", "last-epoch loss", "test accuracy");
  int disagreements = 0, failures = 0;
  bool bit_for_bit = true;
  for (int i = 0; i < o.models; ++i) {
    const Result &a = one_by_one[i], &b = at_once[i];
    const bool agree = printed(a) == printed(b);
    disagreements += !agree;
    failures += !a.error.empty() || !b.error.empty();
    bit_for_bit = bit_for_bit && std::memcmp(&a.loss, &b.loss, sizeof a.loss) == 0 &&
                  std::memcmp(&a.accuracy, &b.accuracy, sizeof a.accuracy) == 0;
    std::printf("%5d  %13.2e  %s", i + 1, learning_rate(i, o.models), printed(a).c_str());
    if (!agree) std::printf("   at once: %s  DIFFERENT", printed(b).c_str());
    std::printf("\n");
  }
  const std::string at_once_label = "all at once on " + std::to_string(o.models) + " threads:";
  std::printf("\n%-30s %6.2f s  (CPU time %.2f s)\n",
              "one after another on 1 thread:", one_by_one_time.wall_s, one_by_one_time.cpu_s);
  std::printf("%-30s %6.2f s  (CPU time %.2f s)  speed-up %.2fx\n", at_once_label.c_str(),
              at_once_time.wall_s, at_once_time.cpu_s, one_by_one_time.wall_s / at_once_time.wall_s);
  if (failures) {
    std::printf("%d model(s) failed to train\n", failures);
    return 1;
  }
  if (disagreements) {
    std::printf("the runs DISAGREE on %d model(s)\n", disagreements);
    return 1;
  }
  std::printf("both runs agree %s\n", bit_for_bit ? "bit for bit" : "to the printed digits");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      usage(argv[0]);
      return 0;
    }
  }
  Options options;
  if (!parse(argc, argv, options)) {
    usage(argv[0]);
    return 2;
  }
  try {
    return sweep(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parallel_sweep: %s\n", e.what());
    return 1;
  }
}
