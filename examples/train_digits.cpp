// train_digits: an MLP (64 -> 128 -> 10, ReLU) learns the handwritten digits of tests/data
// with AdamW and nn::value_and_grad. A progress bar per epoch on a terminal, one line per
// epoch with loss and train and held-out accuracy, and the loss curve as an SVG file.
//
//   train_digits [DATA] [--epochs N] [--batch N] [--lr X] [--device cpu|gpu] [--svg PATH]
//
// DATA defaults to the source tree's tests/data/digits.safetensors. Exits with 1 when the
// training fails (an error, a loss that is not finite, or a last epoch whose mean loss is not
// below the first step's), 2 for bad arguments.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "digits.h"

namespace {

struct Options {
  std::string data = digits::kDefaultPath;
  int epochs = 30;
  int batch = 128;
  double lr = 3e-3;
  bool gpu = false;
  std::string svg = "train_digits_loss.svg";
};

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [DATA] [--epochs N] [--batch N] [--lr X] [--device cpu|gpu] [--svg PATH]\n"
               "  DATA     digits.safetensors (default %s)\n"
               "  --epochs passes over the training digits (default 30)\n"
               "  --batch  digits per step (default 128)\n"
               "  --lr     AdamW learning rate (default 0.003)\n"
               "  --device where to train (default cpu)\n"
               "  --svg    where to write the loss curve (default train_digits_loss.svg)\n",
               program, digits::kDefaultPath);
}

// Parses argv into `o`; false (after a message) on anything it does not understand.
bool parse(int argc, char** argv, Options& o) {
  bool have_data = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    try {
      if (arg == "--epochs" || arg == "--batch" || arg == "--lr" || arg == "--device" || arg == "--svg") {
        const char* v = value();
        if (!v) throw std::invalid_argument("needs a value");
        if (arg == "--epochs") o.epochs = digits::whole_number(v);
        if (arg == "--batch") o.batch = digits::whole_number(v);
        if (arg == "--lr") o.lr = digits::number(v);
        if (arg == "--svg") o.svg = v;
        if (arg == "--device") {
          if (std::string(v) != "cpu" && std::string(v) != "gpu") throw std::invalid_argument("cpu or gpu");
          o.gpu = std::string(v) == "gpu";
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
  if (o.epochs < 1 || o.batch < 1 || !(o.lr > 0) || o.svg.empty()) {
    std::fprintf(stderr, "--epochs and --batch must be at least 1, --lr positive, --svg a path\n");
    return false;
  }
  return true;
}

// "[#######.......]  7/11  loss 0.1234" redrawn in place; only called when stdout is a tty.
void draw_progress(int epoch, int epochs, int step, int steps, float loss) {
  constexpr int kWidth = 30;
  const int filled = (step + 1) * kWidth / steps;
  std::printf("\r\033[Kepoch %*d/%d [%s%s] %*d/%d  loss %.4f", int(std::to_string(epochs).size()), epoch + 1,
              epochs, std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
              int(std::to_string(steps).size()), step + 1, steps, loss);
  std::fflush(stdout);
}

// 1, 2 or 5 times a power of ten, the smallest such step that gives at most `max_ticks` ticks.
double nice_step(double range, int max_ticks) {
  const double raw = range / max_ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// The largest 1, 2 or 5 times a power of ten at most `v` (positive), and the smallest at least.
double nice_below(double v) {
  v = std::max(v, 1e-7);
  const double power = std::pow(10.0, std::floor(std::log10(v)));
  return v >= 5 * power ? 5 * power : v >= 2 * power ? 2 * power : power;
}
double nice_above(double v) {
  v = std::max(v, 1e-7);
  const double power = std::pow(10.0, std::floor(std::log10(v)));
  return v <= power ? power : v <= 2 * power ? 2 * power : v <= 5 * power ? 5 * power : 10 * power;
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The per-step losses and each epoch's mean against the step, on a log scale, as a
// self-contained SVG document.
std::string loss_svg(const std::vector<float>& losses, int steps_per_epoch, const std::string& title) {
  constexpr double kW = 760, kH = 460, kLeft = 75, kRight = 25, kTop = 50, kBottom = 60;
  const double plot_w = kW - kLeft - kRight, plot_h = kH - kTop - kBottom;
  const int n = static_cast<int>(losses.size());
  const auto [lo_it, hi_it] = std::minmax_element(losses.begin(), losses.end());
  const double y_lo = std::log10(nice_below(*lo_it));
  const double y_hi = std::max(std::log10(nice_above(*hi_it)), y_lo + 1);
  auto px = [&](double step) { return kLeft + plot_w * step / n; };
  auto py = [&](double loss) {
    return kTop + plot_h * (y_hi - std::log10(std::max(loss, 1e-7))) / (y_hi - y_lo);
  };

  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH
    << "\" viewBox=\"0 0 " << kW << ' ' << kH << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kW / 2 << "\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">" << title
    << "</text>\n";

  // Grid and tick labels: decades and both ends (and every 2x, 5x when the range is short) on
  // y, round steps on x.
  s << "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  std::ostringstream labels;
  labels.setf(std::ios::fixed);
  labels.precision(1);
  const bool minor = y_hi - y_lo <= 3;
  for (int e = static_cast<int>(std::floor(y_lo)); e <= static_cast<int>(y_hi); ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      const double at = std::log10(v);
      const bool end = std::abs(at - y_lo) < 1e-9 || std::abs(at - y_hi) < 1e-9;
      if ((m != 1.0 && !minor && !end) || at < y_lo - 1e-9 || at > y_hi + 1e-9) continue;
      s << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + plot_w << "\" y1=\"" << py(v) << "\" y2=\""
        << py(v) << "\"/>\n";
      labels << "<line x1=\"" << kLeft - 5 << "\" x2=\"" << kLeft << "\" y1=\"" << py(v) << "\" y2=\""
             << py(v) << "\" stroke=\"black\"/>\n"
             << "<text x=\"" << kLeft - 8 << "\" y=\"" << py(v) + 4 << "\" text-anchor=\"end\">"
             << format_number(v) << "</text>\n";
    }
  }
  const double x_step = nice_step(n, 8);
  for (double t = 0; t <= n + 1e-9; t += x_step) {
    s << "<line x1=\"" << px(t) << "\" x2=\"" << px(t) << "\" y1=\"" << kTop << "\" y2=\"" << kTop + plot_h
      << "\"/>\n";
    labels << "<line x1=\"" << px(t) << "\" x2=\"" << px(t) << "\" y1=\"" << kTop + plot_h << "\" y2=\""
           << kTop + plot_h + 5 << "\" stroke=\"black\"/>\n"
           << "<text x=\"" << px(t) << "\" y=\"" << kTop + plot_h + 19 << "\" text-anchor=\"middle\">"
           << format_number(t) << "</text>\n";
  }
  s << "</g>\n" << labels.str();

  // Axes and their names.
  s << "<path d=\"M" << kLeft << ',' << kTop << " V" << kTop + plot_h << " H" << kLeft + plot_w
    << "\" fill=\"none\" stroke=\"black\"/>\n"
    << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kH - 15 << "\" text-anchor=\"middle\">step ("
    << steps_per_epoch << " per epoch)</text>\n"
    << "<text transform=\"translate(20 " << kTop + plot_h / 2
    << ") rotate(-90)\" text-anchor=\"middle\">cross-entropy loss (log scale)</text>\n";

  // The curves: every step (step i drawn at x = i + 1), then each epoch's mean at its last step.
  s << "<polyline fill=\"none\" stroke=\"#7fb2e5\" stroke-width=\"1\" points=\"";
  for (int i = 0; i < n; ++i) s << px(i + 1) << ',' << py(losses[i]) << ' ';
  s << "\"/>\n<polyline fill=\"none\" stroke=\"#d9480f\" stroke-width=\"2\" points=\"";
  std::vector<std::pair<double, double>> means;
  for (int start = 0; start + steps_per_epoch <= n; start += steps_per_epoch) {
    const double sum = std::accumulate(losses.begin() + start, losses.begin() + start + steps_per_epoch, 0.0);
    means.emplace_back(px(start + steps_per_epoch), py(sum / steps_per_epoch));
    s << means.back().first << ',' << means.back().second << ' ';
  }
  s << "\"/>\n";
  for (auto [x, y] : means)
    s << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"2.5\" fill=\"#d9480f\"/>\n";

  // Legend, top right.
  const double lx = kLeft + plot_w - 150, ly = kTop + 12;
  s << "<rect x=\"" << lx - 10 << "\" y=\"" << ly - 12 << "\" width=\"155\" height=\"42\" fill=\"white\" "
    << "stroke=\"#bbbbbb\"/>\n"
    << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << ly << "\" y2=\"" << ly
    << "\" stroke=\"#7fb2e5\" stroke-width=\"1\"/>\n"
    << "<text x=\"" << lx + 32 << "\" y=\"" << ly + 4 << "\">loss per step</text>\n"
    << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << ly + 18 << "\" y2=\"" << ly + 18
    << "\" stroke=\"#d9480f\" stroke-width=\"2\"/>\n"
    << "<text x=\"" << lx + 32 << "\" y=\"" << ly + 22 << "\">mean per epoch</text>\n"
    << "</svg>\n";
  return s.str();
}

int train(const Options& o) {
  const braid::Device device = o.gpu ? braid::Device::gpu : braid::Device::cpu;
  if (!braid::is_available(device)) {
    std::fprintf(stderr, "train_digits: no GPU in this build or on this machine\n");
    return 1;
  }
  braid::set_default_device(device);
  const digits::Data data = digits::load(o.data);
  const int n_train = data.train_x.shape(0);
  if (o.batch > n_train) {
    std::fprintf(stderr, "train_digits: --batch %d is more than the %d training digits\n", o.batch, n_train);
    return 2;
  }
  std::printf(
      "braid %s train_digits: %d training digits, %d held out; MLP 64 -> 128 -> 10, AdamW lr %g, "
      "batch %d, %d epochs on the %s\n",
      braid::version(), n_train, data.test_x.shape(0), o.lr, o.batch, o.epochs, o.gpu ? "gpu" : "cpu");

  braid::random::seed(7);
  digits::Trainer trainer(data, o.lr, o.batch, /*shuffle_seed=*/11);
  const bool tty = isatty(STDOUT_FILENO);
  const int width = static_cast<int>(std::to_string(o.epochs).size());
  std::vector<float> losses;
  const auto start = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    const auto epoch_start = std::chrono::steady_clock::now();
    std::vector<float> epoch_losses = trainer.epoch([&](int step, int steps, float loss) {
      if (tty) draw_progress(epoch, o.epochs, step, steps, loss);
    });
    const double mean_loss =
        std::accumulate(epoch_losses.begin(), epoch_losses.end(), 0.0) / epoch_losses.size();
    losses.insert(losses.end(), epoch_losses.begin(), epoch_losses.end());
    if (!std::isfinite(mean_loss)) {
      std::printf("%s", tty ? "\n" : "");
      std::fprintf(stderr, "train_digits: the loss is not finite in epoch %d (is --lr %g too high?)\n",
                   epoch + 1, o.lr);
      return 1;
    }
    const double train_acc = trainer.train_accuracy(), test_acc = trainer.test_accuracy();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    std::printf("%sepoch %*d/%d  loss %.4f  train %6.2f%%  test %6.2f%%  %5.0f ms\n", tty ? "\r\033[K" : "",
                width, epoch + 1, o.epochs, mean_loss, 100 * train_acc, 100 * test_acc, 1e3 * seconds);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int steps = trainer.steps_per_epoch();
  const double last_epoch_loss = std::accumulate(losses.end() - steps, losses.end(), 0.0) / steps;
  const bool learned = last_epoch_loss < losses.front();

  char title[160];
  std::snprintf(title, sizeof title, "digits MLP 64-128-10, AdamW lr %g, batch %d: training loss", o.lr,
                o.batch);
  std::ofstream out(o.svg);
  out << loss_svg(losses, trainer.steps_per_epoch(), title);
  out.close();
  if (!out) {
    std::fprintf(stderr, "train_digits: could not write %s\n", o.svg.c_str());
    return 1;
  }
  std::printf("held-out accuracy %.2f%% after %d epochs in %.2f s; loss curve written to %s\n",
              100 * trainer.test_accuracy(), o.epochs, seconds, o.svg.c_str());
  if (!learned) {
    std::fprintf(stderr, "train_digits: the last epoch's loss %.4f is not below the first step's %.4f\n",
                 last_epoch_loss, losses.front());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help") {
      usage(argv[0]);
      return 0;
    }
  }
  if (!parse(argc, argv, options)) {
    usage(argv[0]);
    return 2;
  }
  try {
    return train(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_digits: %s\n", e.what());
    return 1;
  }
}
