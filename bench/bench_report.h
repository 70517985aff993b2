// What braid's benchmarks share (DESIGN.md section 5): timing, samples with their spread, the
// machine lines of a report, Markdown tables with PASS/MISS verdicts, and figures measured
// side by side with a peer. Header-only and free of libtorch, so that the CPU programs (built
// by CMake) and the GPU ones (built by bench/gpu/run.sh with plain g++) include the same file.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <braid/braid.h>

namespace braid_bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Stats {
  std::vector<double> samples;
  double median() const {
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    size_t n = s.size();
    return n == 0 ? 0.0 : (n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]));
  }
  double min() const { return *std::min_element(samples.begin(), samples.end()); }
  double max() const { return *std::max_element(samples.begin(), samples.end()); }
  bool empty() const { return samples.empty(); }
  Stats scaled(double factor) const {
    Stats r;
    for (double v : samples) r.samples.push_back(v * factor);
    return r;
  }
};

template <typename F>
Stats sample(int runs, F&& one_run) {
  Stats st;
  for (int r = 0; r < runs; ++r) st.samples.push_back(one_run());
  return st;
}

// A wrong answer makes every figure meaningless: count them and report.
inline std::atomic<int> g_wrong_answers{0};

inline void check(bool ok) {
  if (!ok) g_wrong_answers.fetch_add(1, std::memory_order_relaxed);
}

inline int wrong_answers() { return g_wrong_answers.load(); }

// One thread count for braid and its peer: the machine's, unless BRAID_NUM_THREADS says
// otherwise. braid's pool reads the variable when it starts, so call this before any braid op.
inline int pool_threads() {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (const char* env = std::getenv("BRAID_NUM_THREADS"); env && std::atoi(env) > 0) threads = std::atoi(env);
  setenv("BRAID_NUM_THREADS", std::to_string(threads).c_str(), 1);
  return threads;
}

// ---- command line ----

/// The options every benchmark takes: --runs N, --quick (which calls `quick`), --plot-data FILE
/// when `plot_data` is given, and --only LIST when `only` is given. Anything else prints the
/// usage and exits (0 for --help).
inline void parse_bench_args(int argc, char** argv, int& runs, const std::function<void()>& quick,
                             std::string* plot_data = nullptr, std::string* only = nullptr,
                             const std::string& only_choices = "") {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--quick") {
      runs = 3;
      quick();
    } else if (plot_data && arg == "--plot-data" && i + 1 < argc) {
      *plot_data = argv[++i];
    } else if (only && arg == "--only" && i + 1 < argc) {
      *only = argv[++i];
    } else {
      std::cerr << "usage: " << argv[0] << " [--runs N] [--quick]" << (plot_data ? " [--plot-data FILE]" : "")
                << (only ? " [--only " + only_choices + "]" : std::string()) << "\n";
      std::exit(arg == "--help" || arg == "-h" ? 0 : 2);
    }
  }
}

// ---- data ----

// Uniform floats in [lo, hi) from splitmix64: the same values on every run.
/// `v` as an evaluated braid array of `shape` (data made before any figure is timed).
template <typename T>
braid::array braid_of(const std::vector<T>& v, braid::Shape shape) {
  braid::array a(v.begin(), std::move(shape));
  a.eval();
  return a;
}

inline std::vector<float> random_floats(int64_t n, float lo, float hi, uint64_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x = lo + (hi - lo) * static_cast<float>(z >> 40) * 0x1.0p-24f;
  }
  return v;
}

inline std::vector<int32_t> random_ids(int64_t n, int32_t below, uint64_t seed) {
  std::vector<int32_t> ids;
  for (float f : random_floats(n, 0.0f, 1.0f, seed)) ids.push_back(std::min(below - 1, int32_t(f * below)));
  return ids;
}

// ---- report lines ----

inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(line.find_first_not_of(" \t", p + 1));
    }
  }
  return "unknown";
}

inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(f >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

inline std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}

inline std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __VERSION__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return __VERSION__;
#endif
}

inline std::string fmt(double v, int precision = 2) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

// "median (min .. max)".
inline std::string spread(const Stats& s, int precision = 2) {
  return fmt(s.median(), precision) + " (" + fmt(s.min(), precision) + " .. " + fmt(s.max(), precision) + ")";
}

// A target met or missed, as measured: nothing is rounded in braid's favour.
inline std::string verdict(bool pass) { return pass ? "PASS" : "MISS"; }

// A Markdown table; `align` holds one character per column, 'l' or 'r'.
inline void print_table(std::ostream& out, const std::vector<std::string>& header, const std::string& align,
                        const std::vector<std::vector<std::string>>& rows) {
  auto line = [&](const std::vector<std::string>& cells) {
    out << "|";
    for (const auto& c : cells) out << " " << c << " |";
    out << "\n";
  };
  line(header);
  out << "|";
  for (size_t i = 0; i < header.size(); ++i) out << (i < align.size() && align[i] == 'r' ? "---:|" : "---|");
  out << "\n";
  for (const auto& r : rows) line(r);
}

// ---- figures measured side by side ----

// Seconds per call, timed over `calls` calls. The function does all the waiting that makes
// the work complete (eval on the CPU, a stream or device synchronize on the GPU).
using Timed = std::function<double(int calls)>;

// How a figure is judged: by the peer library's time, or by the machine's copy bandwidth.
enum class Peer { torch_time, copy_bandwidth };

struct Figure {
  std::string id, name;
  Peer peer;
  double target;                   // the ratio to reach; 0 marks a reference row without a verdict
  double bytes;                    // bytes braid and torch move per call (copy_bandwidth figures)
  double copy_bytes;               // bytes the copy moves per call (read + write)
  Timed braid, torch, copy;        // torch and copy may be empty
  Stats braid_s, torch_s, copy_s;  // seconds per call

  Figure(std::string id, std::string name, Peer peer, double target, double bytes = 0, double copy_bytes = 0)
      : id(std::move(id)),
        name(std::move(name)),
        peer(peer),
        target(target),
        bytes(bytes),
        copy_bytes(copy_bytes) {}

  // ms per call for torch_time figures, GB/s for copy_bandwidth ones.
  Stats braid_figure() const { return shown(braid_s, bytes); }
  Stats torch_figure() const { return shown(torch_s, bytes); }
  Stats copy_figure() const { return shown(copy_s, copy_bytes); }
  bool has_ratio() const { return peer == Peer::torch_time ? !torch_s.empty() : !copy_s.empty(); }
  // torch time / braid time, or braid's bandwidth / the copy's: higher is better for braid.
  double ratio() const {
    return peer == Peer::torch_time ? torch_s.median() / braid_s.median()
                                    : braid_figure().median() / copy_figure().median();
  }
  std::string target_text() const {
    if (target == 0) return "reference";
    return (peer == Peer::torch_time ? "torch time / braid time >= " : "braid GB/s / copy GB/s >= ") +
           fmt(target, 2);
  }

 private:
  Stats shown(const Stats& seconds, double moved) const {
    Stats r;
    for (double t : seconds.samples)
      r.samples.push_back(peer == Peer::torch_time ? t * 1e3 : moved / t / 1e9);
    return r;
  }
};

// Warms `timed` up, then picks how many calls make one sample last about `sample_s` seconds.
inline int calls_per_sample(const Timed& timed, double sample_s) {
  timed(1);  // first touch: allocator cache, pool, code paths, one-off plans
  const double one = timed(1);
  return static_cast<int>(std::clamp(sample_s / std::max(one, 1e-9), 1.0, 10000.0));
}

// A pause before each sample: the side sampled before may leave threads spinning (libgomp's
// workers spin for a while after a parallel region before they sleep), and those would take
// cores from the next side's sample.
inline void settle() {
  static const int ms = [] {
    const char* env = std::getenv("BRAID_BENCH_SETTLE_MS");
    return env ? std::atoi(env) : 20;
  }();
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Samples every side of `f`, interleaved (braid, torch, copy, braid, ...): the bandwidth that
// other tenants leave over drifts within seconds, and alternating shares the drift fairly.
inline void measure(Figure& f, int runs, double sample_s) {
  std::vector<std::pair<const Timed*, Stats*>> sides = {{&f.braid, &f.braid_s}};
  if (f.torch) sides.push_back({&f.torch, &f.torch_s});
  if (f.copy) sides.push_back({&f.copy, &f.copy_s});
  std::vector<int> calls;
  for (auto& [timed, stats] : sides) calls.push_back(calls_per_sample(*timed, sample_s));
  for (int r = 0; r < runs; ++r) {
    for (size_t i = 0; i < sides.size(); ++i) {
      settle();
      sides[i].second->samples.push_back((*sides[i].first)(calls[i]));
    }
  }
}

// The same for sides that are not a Figure's (more than two, or a ratio of braid to itself):
// one sample of each side in turn, `runs` times.
inline std::vector<Stats> measure_sides(const std::vector<Timed>& sides, int runs, double sample_s) {
  std::vector<int> calls;
  for (const auto& timed : sides) calls.push_back(calls_per_sample(timed, sample_s));
  std::vector<Stats> stats(sides.size());
  for (int r = 0; r < runs; ++r) {
    for (size_t i = 0; i < sides.size(); ++i) {
      settle();
      stats[i].samples.push_back(sides[i](calls[i]));
    }
  }
  return stats;
}

// Sample by sample quotients a_i / b_i of two sides measured together: the pairs were taken
// back to back, so each quotient saw one state of the machine.
inline Stats quotients(const Stats& a, const Stats& b) {
  Stats q;
  for (size_t i = 0; i < std::min(a.samples.size(), b.samples.size()); ++i)
    q.samples.push_back(a.samples[i] / b.samples[i]);
  return q;
}

// The table of figures: values, the ratio its target reads, the verdict.
inline void print_figures(std::ostream& out, const std::vector<Figure>& figures) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : figures) {
    const int prec = f.peer == Peer::torch_time ? 3 : 1;
    const std::string na = "n/a";
    std::string result;
    if (f.target > 0) result = f.has_ratio() ? verdict(f.ratio() >= f.target) : na;
    rows.push_back({f.id, f.name, fmt(f.braid_figure().median(), prec),
                    f.torch_s.empty() ? na : fmt(f.torch_figure().median(), prec),
                    f.copy_s.empty() ? "" : fmt(f.copy_figure().median(), prec),
                    f.has_ratio() ? fmt(f.ratio(), 2) : na, f.target_text(), result});
  }
  print_table(out, {"#", "figure", "braid", "libtorch", "copy", "ratio", "target", "result"}, "llrrrrll",
              rows);
}

// Median (min .. max) of every side of every figure.
inline void print_spread(std::ostream& out, const std::vector<Figure>& figures) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : figures) {
    const int prec = f.peer == Peer::torch_time ? 3 : 1;
    rows.push_back({f.id, spread(f.braid_figure(), prec),
                    f.torch_s.empty() ? "n/a" : spread(f.torch_figure(), prec),
                    f.copy_s.empty() ? "" : spread(f.copy_figure(), prec)});
  }
  print_table(out, {"#", "braid", "libtorch", "copy"}, "llll", rows);
}

// ---- answers ----

// The elements of `a` (evaluated, any layout, any device) in row-major order, as doubles.
inline std::vector<double> host_values(const braid::array& a) {
  braid::array r =
      braid::reshape(braid::astype(a, braid::float64, braid::Device::cpu), {-1}, braid::Device::cpu);
  r.eval();
  std::vector<double> out(r.size());
  const double* p = r.data<double>();
  const int64_t step = r.ndim() ? r.strides()[0] : 1;
  for (size_t i = 0; i < r.size(); ++i) out[i] = p[static_cast<int64_t>(i) * step];
  return out;
}

struct Answer {
  std::string what;
  double max_abs_diff;
  double tolerance;  // on max_abs_diff
  bool ok() const { return max_abs_diff <= tolerance; }
};

// Largest |got - want|; infinite when the sizes differ or a value is NaN on one side only.
inline double max_abs_diff(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
    if (!std::isnan(got[i])) worst = std::max(worst, std::abs(got[i] - want[i]));
  }
  return worst;
}

// The table of answers, each also counted by check(); then the line that says whether all
// were right.
inline void print_answers(std::ostream& out, const std::vector<Answer>& answers) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : answers) {
    check(a.ok());
    std::ostringstream diff, tol;
    diff << std::setprecision(3) << a.max_abs_diff;
    tol << std::setprecision(3) << a.tolerance;
    rows.push_back({a.what, diff.str(), tol.str(), a.ok() ? "ok" : "WRONG"});
  }
  print_table(out, {"answer (braid against libtorch)", "max abs diff", "tolerance", ""}, "lrrl", rows);
  const int wrong = wrong_answers();
  out << "\nAnswers checked: " << (wrong == 0 ? "all correct" : std::to_string(wrong) + " WRONG") << ".\n";
}

}  // namespace braid_bench
