// braid against libtorch on the CPU, side by side in one run (DESIGN.md section 5):
//   a. per-op overhead of a chain of tiny adds (build + eval),
//   b. steady-state bandwidth of a large add,
//   c. independent tiny-op graphs on 1 and 2 threads, each on its own stream,
//   d. 8 threads sharing one stream against 1 thread doing the same work on it.
// Prints a Markdown report: machine, versions, a table of ratios with targets, the spread of
// every measurement. Options: --runs N, --quick, --plot-data FILE.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <braid/braid.h>

#include "bench_report.h"

#ifdef BRAID_BENCH_HAVE_TORCH
#include <torch/torch.h>
#include <torch/version.h>
#endif

namespace {

using namespace braid_bench;

struct Config {
  int threads = 1;           // braid's pool and libtorch's intra-op pool
  int runs = 9;              // samples per measurement; the median is reported
  int chain_len = 1000;      // adds per chain
  int tiny_elems = 16;       // elements of the tiny array
  int chains_per_run = 20;   // (a) chains timed together as one sample
  int64_t big_elems = int64_t{16} << 20;
  int big_iters = 10;        // (b) adds timed together as one sample
  int chains_per_thread = 20;  // (c)
  int shared_threads = 8;      // (d)
  int shared_chains = 64;      // (d) total over all threads
  std::string plot_data;
};

// Starts `threads` threads. Each calls prepare(i), waits for the common start, then calls
// work(i). Returns the wall time from the start signal until the last thread finishes.
double timed_threads(int threads, const std::function<void(int)>& prepare,
                     const std::function<void(int)>& work) {
  std::latch ready(threads);
  std::latch go(1);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      prepare(i);
      ready.count_down();
      go.wait();
      work(i);
    });
  }
  ready.wait();
  auto t0 = Clock::now();
  go.count_down();
  for (auto& t : pool) t.join();
  return seconds_since(t0);
}

// ---- braid ----

// One chain: y = y + 1.0f, `len` times, from an evaluated zero array, then eval.
void braid_chain(const braid::array& start, int len) {
  braid::array y = start;
  for (int i = 0; i < len; ++i) y = y + 1.0f;
  y.eval();
  check(y.data<float>()[0] == static_cast<float>(len));
}

braid::array braid_tiny_start(const Config& cfg) {
  braid::array z = braid::zeros({cfg.tiny_elems});
  z.eval();
  return z;
}

// (a) microseconds per op.
double braid_tiny_chain_us(const Config& cfg, const braid::array& start) {
  auto t0 = Clock::now();
  for (int c = 0; c < cfg.chains_per_run; ++c) braid_chain(start, cfg.chain_len);
  return seconds_since(t0) * 1e6 / (double(cfg.chains_per_run) * cfg.chain_len);
}

// (b) GB/s of c = a + b, dropping c each time so its buffer goes back to the cache.
double braid_big_add_gbs(const Config& cfg, const braid::array& a, const braid::array& b) {
  auto t0 = Clock::now();
  for (int i = 0; i < cfg.big_iters; ++i) {
    braid::array c = a + b;
    c.eval();
  }
  double t = seconds_since(t0) / cfg.big_iters;
  return 3.0 * 4.0 * double(cfg.big_elems) / t / 1e9;
}

// (c) aggregate ops/s of `threads` threads, each with its own chains on its default stream.
double braid_independent_ops(const Config& cfg, int threads) {
  std::vector<std::optional<braid::array>> starts(threads);
  double t = timed_threads(
      threads,
      [&](int i) {
        starts[i] = braid_tiny_start(cfg);  // creates this thread's default stream
        braid_chain(*starts[i], cfg.chain_len);
      },
      [&](int i) {
        for (int c = 0; c < cfg.chains_per_thread; ++c) braid_chain(*starts[i], cfg.chain_len);
      });
  return double(threads) * cfg.chains_per_thread * cfg.chain_len / t;
}

// (d) ops/s of `threads` threads splitting cfg.shared_chains chains, all on stream `s`.
double braid_shared_stream_ops(const Config& cfg, int threads, const braid::Stream& s) {
  std::vector<std::optional<braid::array>> starts(threads);
  const int per_thread = cfg.shared_chains / threads;
  double t = timed_threads(
      threads,
      [&](int i) {
        braid::StreamContext ctx(s);
        starts[i] = braid_tiny_start(cfg);
      },
      [&](int i) {
        braid::StreamContext ctx(s);  // `y + 1.0f` now builds on s
        for (int c = 0; c < per_thread; ++c) braid_chain(*starts[i], cfg.chain_len);
      });
  return double(per_thread) * threads * cfg.chain_len / t;
}

// ---- libtorch ----

#ifdef BRAID_BENCH_HAVE_TORCH
constexpr bool kHaveTorch = true;

// Eager inference, as a serving loop would run it.
struct TorchInference {
  torch::NoGradGuard no_grad;
  c10::InferenceMode inference;
};

void torch_chain(const torch::Tensor& start, int len) {
  torch::Tensor y = start;
  for (int i = 0; i < len; ++i) y = y + 1.0;
  check(y[0].item<float>() == static_cast<float>(len));
}

torch::Tensor torch_tiny_start(const Config& cfg) { return torch::zeros({cfg.tiny_elems}); }

double torch_tiny_chain_us(const Config& cfg, const torch::Tensor& start) {
  TorchInference guard;
  auto t0 = Clock::now();
  for (int c = 0; c < cfg.chains_per_run; ++c) torch_chain(start, cfg.chain_len);
  return seconds_since(t0) * 1e6 / (double(cfg.chains_per_run) * cfg.chain_len);
}

double torch_big_add_gbs(const Config& cfg, const torch::Tensor& a, const torch::Tensor& b,
                         torch::Tensor& c) {
  TorchInference guard;
  auto t0 = Clock::now();
  for (int i = 0; i < cfg.big_iters; ++i) torch::add_out(c, a, b);
  double t = seconds_since(t0) / cfg.big_iters;
  return 3.0 * 4.0 * double(cfg.big_elems) / t / 1e9;
}

double torch_independent_ops(const Config& cfg, int threads, int chains_per_thread) {
  std::vector<torch::Tensor> starts(threads);
  double t = timed_threads(
      threads,
      [&](int i) {
        TorchInference guard;
        starts[i] = torch_tiny_start(cfg);
        torch_chain(starts[i], cfg.chain_len);
      },
      [&](int i) {
        TorchInference guard;
        for (int c = 0; c < chains_per_thread; ++c) torch_chain(starts[i], cfg.chain_len);
      });
  return double(threads) * chains_per_thread * cfg.chain_len / t;
}

std::string torch_version() { return TORCH_VERSION; }
#else
constexpr bool kHaveTorch = false;
std::string torch_version() { return "not built (libtorch not found at configure time)"; }
#endif

// ---- report ----

struct Row {
  std::string id, figure, braid, torch, ratio, target, result;
};

Config parse_args(int argc, char** argv) {
  Config cfg;
  parse_bench_args(argc, argv, cfg.runs, [&cfg] { cfg.chains_per_run = 5; cfg.big_iters = 3; cfg.chains_per_thread = 5; cfg.shared_chains = 16; }, &cfg.plot_data);
  return cfg;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg = parse_args(argc, argv);

  cfg.threads = pool_threads();  // before braid's pool starts (on first use, below)
#ifdef BRAID_BENCH_HAVE_TORCH
  torch::set_num_threads(cfg.threads);
  const int torch_threads = torch::get_num_threads();
#endif
  const std::string load_before = load_average();
  const std::string date = utc_now();

  std::cerr << "braid bench: running (" << cfg.runs << " samples per figure)...\n";

  // (a) per-op overhead.
  std::cerr << "  a. tiny-add chain\n";
  braid::array braid_start = braid_tiny_start(cfg);
  braid_tiny_chain_us(cfg, braid_start);  // warm-up: pool, allocator cache, code paths
  Stats braid_a = sample(cfg.runs, [&] { return braid_tiny_chain_us(cfg, braid_start); });
  Stats torch_a;
#ifdef BRAID_BENCH_HAVE_TORCH
  torch::Tensor torch_start = torch_tiny_start(cfg);
  torch_tiny_chain_us(cfg, torch_start);
  torch_a = sample(cfg.runs, [&] { return torch_tiny_chain_us(cfg, torch_start); });
#endif

  // (b) steady-state add. Samples of the two alternate, so that the memory bandwidth this
  // machine's neighbours leave over (it drifts by a third from second to second) is shared
  // fairly.
  std::cerr << "  b. 16M-element add\n";
  Stats braid_b, torch_b;
  {
    braid::array a = braid::full({static_cast<int32_t>(cfg.big_elems)}, 1.0f);
    braid::array b = braid::full({static_cast<int32_t>(cfg.big_elems)}, 2.0f);
    braid::eval(a, b);
    {
      braid::array c = a + b;
      check(c.data<float>()[cfg.big_elems - 1] == 3.0f);
    }
    braid_big_add_gbs(cfg, a, b);
#ifdef BRAID_BENCH_HAVE_TORCH
    torch::Tensor ta = torch::full({cfg.big_elems}, 1.0f);
    torch::Tensor tb = torch::full({cfg.big_elems}, 2.0f);
    torch::Tensor tc = torch::empty({cfg.big_elems});
    torch_big_add_gbs(cfg, ta, tb, tc);
    check(tc[cfg.big_elems - 1].item<float>() == 3.0f);
#endif
    for (int r = 0; r < cfg.runs; ++r) {
      braid_b.samples.push_back(braid_big_add_gbs(cfg, a, b));
#ifdef BRAID_BENCH_HAVE_TORCH
      torch_b.samples.push_back(torch_big_add_gbs(cfg, ta, tb, tc));
#endif
    }
  }
  braid::clear_cache();

  // (c) independent graphs on 1 and 2 threads.
  std::cerr << "  c. independent chains, 1 and 2 threads\n";
  // Interleaved, as in (d): this machine's speed drifts by tens of percent over seconds.
  Stats braid_c1, braid_c2, torch_c1, torch_c2;
  braid_independent_ops(cfg, 2);  // warm-up: both threads' caches and streams
  for (int r = 0; r < cfg.runs; ++r) {
    braid_c1.samples.push_back(braid_independent_ops(cfg, 1));
    braid_c2.samples.push_back(braid_independent_ops(cfg, 2));
  }
#ifdef BRAID_BENCH_HAVE_TORCH
  for (int r = 0; r < cfg.runs; ++r) {
    torch_c1.samples.push_back(torch_independent_ops(cfg, 1, cfg.chains_per_thread));
    torch_c2.samples.push_back(torch_independent_ops(cfg, 2, cfg.chains_per_thread));
  }
#endif

  // (d) 8 threads on one stream against 1 thread on it, same total work.
  std::cerr << "  d. " << cfg.shared_threads << " threads sharing one stream\n";
  Stats braid_d1, braid_d8, torch_d1, torch_d8;
  {
    braid::Stream shared = braid::new_stream(braid::Device::cpu);
    braid_shared_stream_ops(cfg, 1, shared);  // warm-up
    // Interleave the two so that drifting load hits both alike.
    for (int r = 0; r < cfg.runs; ++r) {
      braid_d1.samples.push_back(braid_shared_stream_ops(cfg, 1, shared));
      braid_d8.samples.push_back(braid_shared_stream_ops(cfg, cfg.shared_threads, shared));
    }
  }
#ifdef BRAID_BENCH_HAVE_TORCH
  for (int r = 0; r < cfg.runs; ++r) {
    torch_d1.samples.push_back(torch_independent_ops(cfg, 1, cfg.shared_chains));
    torch_d8.samples.push_back(
        torch_independent_ops(cfg, cfg.shared_threads, cfg.shared_chains / cfg.shared_threads));
  }
#endif
  const std::string load_after = load_average();

  // ---- table ----
  const std::string na = "n/a";
  std::vector<Row> rows;
  std::vector<std::pair<std::string, std::pair<double, double>>> plot;  // label -> (value, target)

  {
    double bm = braid_a.median();
    Row r{"a", "tiny-add chain: 1,000 x (16 float32 + 1), build + eval, us/op", fmt(bm, 3), na, na,
          "braid/torch <= 0.50", na};
    if (kHaveTorch) {
      double tm = torch_a.median(), ratio = bm / tm;
      r.torch = fmt(tm, 3);
      r.ratio = fmt(ratio, 2);
      r.result = verdict(ratio <= 0.5);
      plot.push_back({"a: us/op vs torch", {ratio, 0.5}});
    }
    rows.push_back(r);
  }
  {
    double bm = braid_b.median();
    Row r{"b", "add 16M float32, steady state, GB/s (3 x 4 x 16M bytes/add)", fmt(bm, 2), na, na,
          "braid/torch >= 0.90", na};
    if (kHaveTorch) {
      double tm = torch_b.median(), ratio = bm / tm;
      r.torch = fmt(tm, 2);
      r.ratio = fmt(ratio, 2);
      r.result = verdict(ratio >= 0.9);
      plot.push_back({"b: GB/s vs torch", {ratio, 0.9}});
    }
    rows.push_back(r);
  }
  {
    double b1 = braid_c1.median() / 1e6, b2 = braid_c2.median() / 1e6;
    Row r1{"c1", "independent chains, 1 thread, own stream: Mops/s", fmt(b1, 3), na, na, "", ""};
    Row r2{"c2", "independent chains, 2 threads, own streams: Mops/s (total)", fmt(b2, 3), na, na, "", ""};
    Row rs{"c", "scaling 2 threads / 1 thread", fmt(b2 / b1, 2), na, na, "braid >= 1.70",
           verdict(b2 / b1 >= 1.7)};
    if (kHaveTorch) {
      double t1 = torch_c1.median() / 1e6, t2 = torch_c2.median() / 1e6;
      r1.torch = fmt(t1, 3);
      r1.ratio = fmt(b1 / t1, 2);
      r2.torch = fmt(t2, 3);
      r2.ratio = fmt(b2 / t2, 2);
      rs.torch = fmt(t2 / t1, 2);
      rs.ratio = fmt((b2 / b1) / (t2 / t1), 2);
    }
    plot.push_back({"c: 2T/1T", {b2 / b1, 1.7}});
    rows.push_back(r1);
    rows.push_back(r2);
    rows.push_back(rs);
  }
  {
    double b1 = braid_d1.median() / 1e6, b8 = braid_d8.median() / 1e6;
    const std::string n = std::to_string(cfg.shared_threads);
    Row r1{"d1", "one stream, 1 thread runs all chains: Mops/s", fmt(b1, 3), na, na, "", ""};
    Row r8{"d" + n, "one stream, " + n + " threads split the chains: Mops/s (total)", fmt(b8, 3), na, na,
           "", ""};
    Row rs{"d", n + " threads on one stream / 1 thread", fmt(b8 / b1, 2), na, na, "braid >= 0.80",
           verdict(b8 / b1 >= 0.8)};
    if (kHaveTorch) {
      double t1 = torch_d1.median() / 1e6, t8 = torch_d8.median() / 1e6;
      r1.torch = fmt(t1, 3);
      r1.ratio = fmt(b1 / t1, 2);
      r8.torch = fmt(t8, 3);
      r8.ratio = fmt(b8 / t8, 2);
      rs.torch = fmt(t8 / t1, 2);
      rs.ratio = fmt((b8 / b1) / (t8 / t1), 2);
    }
    plot.push_back({"d: 8T/1T one stream", {b8 / b1, 0.8}});
    rows.push_back(r1);
    rows.push_back(r8);
    rows.push_back(rs);
  }

  std::ostream& out = std::cout;
  out << "# braid CPU benchmark\n\n";
  out << "- date: " << date << "\n";
  out << "- machine: " << cpu_model() << ", " << std::thread::hardware_concurrency()
      << " hardware threads\n";
  out << "- threads: braid pool " << cfg.threads;
#ifdef BRAID_BENCH_HAVE_TORCH
  out << ", libtorch intra-op " << torch_threads << " (torch::set_num_threads)";
#endif
  out << "\n";
  out << "- versions: braid " << braid::version() << ", libtorch " << torch_version() << ", compiler "
      << compiler() << "\n";
  out << "- load average (1/5/15 min): " << load_before << " at start, " << load_after << " at end\n";
  out << "- method: median of " << cfg.runs << " samples per figure; a sample is " << cfg.chains_per_run
      << " chains (a), " << cfg.big_iters << " adds (b), " << cfg.chains_per_thread
      << " chains per thread (c), " << cfg.shared_chains << " chains in total (d)\n";
  out << "- libtorch: eager, NoGradGuard + InferenceMode; (b) uses torch::add_out into a preallocated "
         "output; (c) and (d) give each thread its own chain (libtorch has no streams on the CPU)\n\n";

  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) cells.push_back({r.id, r.figure, r.braid, r.torch, r.ratio, r.target, r.result});
  print_table(out, {"#", "figure", "braid", "libtorch", "braid / libtorch", "target", "result"}, "llrrrll",
              cells);

  out << "\nSpread, median (min .. max) over the samples:\n\n";
  std::vector<std::vector<std::string>> spreads;
  auto spread_row = [&](const std::string& name, const Stats& b, const Stats& t, double scale, int prec) {
    spreads.push_back({name, spread(b.scaled(scale), prec), t.empty() ? na : spread(t.scaled(scale), prec)});
  };
  spread_row("a. us/op", braid_a, torch_a, 1.0, 3);
  spread_row("b. GB/s", braid_b, torch_b, 1.0, 2);
  spread_row("c1. Mops/s", braid_c1, torch_c1, 1e-6, 3);
  spread_row("c2. Mops/s", braid_c2, torch_c2, 1e-6, 3);
  spread_row("d1. Mops/s", braid_d1, torch_d1, 1e-6, 3);
  spread_row("d" + std::to_string(cfg.shared_threads) + ". Mops/s", braid_d8, torch_d8, 1e-6, 3);
  print_table(out, {"figure", "braid", "libtorch"}, "lll", spreads);

  const int wrong = wrong_answers();
  out << "\nAnswers checked: " << (wrong == 0 ? "all correct" : std::to_string(wrong) + " WRONG") << ".\n";
  if (std::thread::hardware_concurrency() < 2) {
    out << "\nNote: fewer than 2 hardware threads, so figure c cannot show scaling.\n";
  }

  if (!cfg.plot_data.empty()) {
    std::ofstream f(cfg.plot_data);
    f << "# label value target (higher is better except for 'a', where lower is)\n";
    for (const auto& [label, vt] : plot) f << '"' << label << "\" " << vt.first << " " << vt.second << "\n";
  }
  return wrong == 0 ? 0 : 1;
}
