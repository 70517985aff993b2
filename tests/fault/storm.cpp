// Case 2: allocation-failure storms. For a second or two, one allocation in a few hundred
// fails on every thread (braid's workers included) while several threads build and evaluate
// random graphs on shared streams and on their own, some sharing lazy nodes with each other.
// Every evaluation must give the right values or throw bad_alloc; nothing may hang or crash;
// afterwards every stream evaluates correctly and no buffer is left behind.
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "cases.h"
#include "graphs.h"
#include "harness.h"
#include "inject.h"
#include "memory/allocator_hooks.h"

namespace fault {
namespace {

using namespace braid;
using namespace std::chrono_literals;
using Vec = std::vector<double>;

constexpr int kLen = 16;  // every random node is a float32 vector of 16

struct Node {
  array a;
  Vec ref;
};

double max_abs(const Vec& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Builds random graphs node by node: braid calls run inside BraidCall (they meet injected
// failures), the reference arithmetic outside it (it never does).
class RandomGraphs {
 public:
  RandomGraphs(uint64_t seed, std::vector<Stream> streams) : rng_(seed), streams_(std::move(streams)) {}

  const Stream& stream() { return streams_[pick(streams_.size())]; }
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  Node leaf() {
    const float scale = static_cast<float>(pick(7) + 1) / 16.0f;
    const Stream& s = stream();
    Node n{array(0.0f), Vec(kLen)};
    {
      BraidCall call;
      n.a = multiply(arange(0.0, static_cast<double>(kLen), s), array(scale), stream());
    }
    for (int i = 0; i < kLen; ++i) n.ref[i] = i * static_cast<double>(scale);
    return n;
  }

  // One random op over nodes of `pool`; keeps values bounded with a tanh when they grow.
  Node step(const std::vector<Node>& pool) {
    const Node& x = pool[pick(pool.size())];
    const Node& y = pool[pick(pool.size())];
    const Stream& s = stream();
    Node n{array(0.0f), Vec(kLen)};
    const size_t op = pick(9);
    {
      BraidCall call;
      switch (op) {
        case 0: n.a = add(x.a, y.a, s); break;
        case 1: n.a = subtract(x.a, y.a, s); break;
        case 2: n.a = multiply(x.a, y.a, s); break;
        case 3: n.a = maximum(x.a, y.a, s); break;
        case 4: n.a = tanh(x.a, s); break;
        case 5: n.a = exp(tanh(x.a, s), stream()); break;
        case 6: n.a = add(x.a, sum(y.a, stream()), s); break;
        case 7:
          n.a = reshape(matmul(reshape(x.a, {4, 4}, s), reshape(y.a, {4, 4}, stream()), s), {kLen}, stream());
          break;
        default: n.a = softmax(x.a, -1, false, s); break;
      }
    }
    const Vec &a = x.ref, &b = y.ref;
    double total = 0, mx = -1e300, z = 0;
    for (int i = 0; i < kLen; ++i) {
      total += b[i];
      mx = std::max(mx, a[i]);
    }
    for (int i = 0; i < kLen; ++i) z += std::exp(a[i] - mx);
    for (int i = 0; i < kLen; ++i) {
      switch (op) {
        case 0: n.ref[i] = a[i] + b[i]; break;
        case 1: n.ref[i] = a[i] - b[i]; break;
        case 2: n.ref[i] = a[i] * b[i]; break;
        case 3: n.ref[i] = std::max(a[i], b[i]); break;
        case 4: n.ref[i] = std::tanh(a[i]); break;
        case 5: n.ref[i] = std::exp(std::tanh(a[i])); break;
        case 6: n.ref[i] = a[i] + total; break;
        case 7: {
          const int r = i / 4, c = i % 4;
          n.ref[i] = 0;
          for (int k = 0; k < 4; ++k) n.ref[i] += a[r * 4 + k] * b[k * 4 + c];
          break;
        }
        default: n.ref[i] = std::exp(a[i] - mx) / z; break;
      }
    }
    if (max_abs(n.ref) > 4) {
      BraidCall call;
      n.a = tanh(n.a, stream());
    }
    if (max_abs(n.ref) > 4) {
      for (double& v : n.ref) v = std::tanh(v);
    }
    return n;
  }

  // A graph of 3-25 nodes; `extra` (a node shared with other threads) joins it if given.
  Node graph(const Node* extra) {
    std::vector<Node> pool;
    pool.push_back(leaf());
    if (pick(2) == 0) pool.push_back(leaf());
    if (extra) pool.push_back(*extra);
    const size_t steps = 2 + pick(24);
    for (size_t i = 0; i < steps; ++i) pool.push_back(step(pool));
    return pool.back();
  }

 private:
  std::mt19937_64 rng_;
  std::vector<Stream> streams_;
};

std::string wrong_values(const Node& n) {
  const float* p = n.a.data<float>();
  for (int i = 0; i < kLen; ++i) {
    double tol = 1e-3 * std::max(1.0, std::fabs(n.ref[i]));
    if (!(std::fabs(p[i] - n.ref[i]) <= tol)) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "element %d: %.7g, expected %.7g", i, static_cast<double>(p[i]),
                    n.ref[i]);
      return buf;
    }
  }
  return {};
}

// Report slots.
enum { kEvals, kRightValues, kThrew, kBuildThrew, kInjected, kWrong };

struct StormConfig {
  bool braid_allocator;  // also fail braid's own allocator, from an injector thread
  uint32_t one_in;       // operator new fails one call in this many
  double seconds;
  int threads;
};

// One storm, run in a child: the threads, what they share, and the tallies.
class Storm {
 public:
  Storm(const StormConfig& cfg, uint64_t seed) : cfg_(cfg), seed_(seed) {}

  int run() {
    set_phase("setup (before arming)");
    shared_ = {new_stream(Device::cpu), new_stream(Device::cpu)};
    for (int t = 0; t < cfg_.threads; ++t) own_.push_back(new_stream(Device::cpu));
    {
      CheckedGraph warm = small_graph(shared_[0], shared_[1]);
      eval(warm.outputs);
    }
    for (const auto& s : shared_) synchronize(s);
    const size_t base_memory = get_active_memory();
    storm();
    if (wrong_.load() > 0) return 1;
    shared_node_.reset();
    after_storm();
    if (wrong_.load() > 0) return 1;
    set_phase("after the storm: synchronize every stream");
    std::vector<Stream> every = shared_;
    every.insert(every.end(), own_.begin(), own_.end());
    if (std::string other = synchronize_all(every); !other.empty()) {
      add_note("synchronize reported a failure that is not an allocation failure: %s", other.c_str());
      return 1;
    }
    if (get_active_memory() != base_memory) {
      add_note("buffers leaked: active memory %zu bytes after the storm's graphs are gone, %zu before",
               get_active_memory(), base_memory);
      return 1;
    }
    return 0;
  }

 private:
  void storm() {
    set_phase("the storm (%d threads, %.1f s)", cfg_.threads, cfg_.seconds);
    std::vector<std::thread> threads;
    for (int t = 0; t < cfg_.threads; ++t) threads.emplace_back([this, t] { evaluate_until_stopped(t); });
    std::thread injector;
    if (cfg_.braid_allocator) {
      injector = std::thread([this] {
        set_thread_exempt(true);
        while (!stop_.load()) {
          detail::fail_next_allocations(1);
          std::this_thread::sleep_for(200us);
        }
      });
    }
    fail_random_allocations(seed_, cfg_.one_in);
    std::this_thread::sleep_for(std::chrono::duration<double>(cfg_.seconds));
    set_phase("joining the storm's threads (the storm is over: injection off)");
    disarm_allocations();
    stop_.store(true);
    if (injector.joinable()) injector.join();
    detail::fail_next_allocations(0);
    for (auto& th : threads) th.join();
    ChildReport& rep = report();
    rep.counts[kEvals] = evals_.load();
    rep.counts[kRightValues] = right_.load();
    rep.counts[kThrew] = threw_.load();
    rep.counts[kBuildThrew] = build_threw_.load();
    rep.counts[kInjected] = allocations_failed();
    rep.counts[kWrong] = wrong_.load();
  }

  // A storm thread: random graphs on the shared streams and its own, some including the lazy
  // node thread 0 publishes, evaluated with eval or async_eval until the storm ends.
  void evaluate_until_stopped(int t) {
    set_thread_exempt(true);
    RandomGraphs gen(seed_ + 7919 * static_cast<uint64_t>(t + 1), {shared_[0], shared_[1], own_[t]});
    for (int k = 0; !stop_.load(std::memory_order_relaxed); ++k) {
      std::optional<Node> extra;
      try {
        if (t == 0 && k % 8 == 0) publish(gen.graph(nullptr));
        std::lock_guard<std::mutex> lock(shared_mu_);
        extra = shared_node_;
      } catch (...) {
        expect_bad_alloc(t, "building the shared node");
      }
      std::optional<Node> n;
      try {
        n = gen.graph(extra ? &*extra : nullptr);
      } catch (...) {
        expect_bad_alloc(t, "building a graph");
        build_threw_.fetch_add(1);
        continue;
      }
      evals_.fetch_add(1);
      try {
        {
          BraidCall call;
          if (k % 3 == 0) {
            async_eval(n->a).wait();
          } else {
            eval(n->a);
          }
        }
        std::string bad = wrong_values(*n);
        if (bad.empty()) {
          right_.fetch_add(1);
        } else {
          wrong(t, "wrong values after eval returned: " + bad);
        }
      } catch (...) {
        if (expect_bad_alloc(t, "eval")) threw_.fetch_add(1);
      }
    }
  }

  void publish(const Node& n) {
    std::lock_guard<std::mutex> lock(shared_mu_);
    shared_node_ = n;
  }

  // Called in a catch block: true for bad_alloc, a recorded failure otherwise.
  bool expect_bad_alloc(int t, const char* what) {
    std::exception_ptr e = std::current_exception();
    if (caused_by_bad_alloc(e)) return true;
    wrong(t, std::string(what) + " threw " + describe(e));
    return false;
  }

  void wrong(int t, const std::string& what) {
    std::lock_guard<std::mutex> lock(note_mu_);
    add_note("thread %d: %s", t, what.c_str());
    wrong_.fetch_add(1);
  }

  void after_storm() {
    set_phase("after the storm: every thread evaluates fresh graphs on every stream");
    std::vector<std::thread> threads;
    for (int t = 0; t < cfg_.threads; ++t) {
      threads.emplace_back([this, t] {
        set_thread_exempt(true);
        RandomGraphs gen(seed_ ^ 0xA5A5A5A5ull ^ static_cast<uint64_t>(t), {shared_[0], shared_[1], own_[t]});
        for (int k = 0; k < 5; ++k) {
          try {
            Node n = gen.graph(nullptr);
            eval(n.a);
            std::string bad = wrong_values(n);
            if (!bad.empty()) return wrong(t, "after the storm: wrong values: " + bad);
          } catch (...) {
            return wrong(t, "after the storm: threw " + describe(std::current_exception()));
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    CheckedGraph g = sweep_graph({shared_[0], shared_[1], own_[0]});
    try {
      eval(g.outputs);
      std::string bad = check_values(g);
      if (!bad.empty()) wrong(-1, "after the storm, the sweep graph: " + bad);
    } catch (...) {
      wrong(-1, "after the storm, the sweep graph threw " + describe(std::current_exception()));
    }
  }

  const StormConfig cfg_;
  const uint64_t seed_;
  std::vector<Stream> shared_;
  std::vector<Stream> own_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> evals_{0}, right_{0}, threw_{0}, build_threw_{0}, wrong_{0};
  std::mutex shared_mu_;
  std::optional<Node> shared_node_;  // a lazy node several threads' graphs include
  std::mutex note_mu_;
};

int run_storm(const char* name, StormConfig cfg, const Options& o) {
  if (o.seconds > 0) cfg.seconds = o.seconds;
  const int rounds = o.runs > 0 ? o.runs : 1;
  int failed = 0;
  for (int round = 0; round < rounds; ++round) {
    const uint64_t seed = choose_seed();
    std::printf("%s: seed %" PRIu64
                " (set BRAID_FAULT_SEED to repeat), %d threads, one operator new in %u fails%s, %.1f s\n",
                name, seed, cfg.threads, cfg.one_in,
                cfg.braid_allocator ? ", and a braid allocation every 200 us" : "", cfg.seconds);
    std::fflush(stdout);
    const auto timeout =
        std::chrono::milliseconds(static_cast<int64_t>(cfg.seconds * 1000) + 20000 * time_scale());
    ChildResult r = run_forked(
        [&] {
          setenv("BRAID_NUM_THREADS", "4", 1);  // more workers than cores: more interleavings
          return Storm(cfg, seed).run();
        },
        timeout);
    const int64_t* c = r.report.counts;
    std::printf("%s: %" PRId64 " evaluations: %" PRId64 " right values, %" PRId64 " threw bad_alloc; %" PRId64
                " graph builds threw; %" PRId64 " operator new failures injected\n",
                name, c[kEvals], c[kRightValues], c[kThrew], c[kBuildThrew], c[kInjected]);
    if (!r.ok()) {
      char label[96];
      std::snprintf(label, sizeof label, "%s (seed %" PRIu64 ")", name, seed);
      print_failure(label, r);
      ++failed;
    } else if (c[kThrew] == 0) {
      std::printf("%s: FAILED: no injected failure reached an evaluation (the storm tested nothing)\n", name);
      ++failed;
    }
  }
  std::printf("%s: %s\n", name, failed ? "FAILED" : "passed");
  return failed ? 1 : 0;
}

}  // namespace

int storm_operator_new(const Options& o) {
  return run_storm("storm-new", {.braid_allocator = false, .one_in = 300, .seconds = 1.5, .threads = 6}, o);
}

int storm_braid_allocator(const Options& o) {
  return run_storm("storm-braid", {.braid_allocator = true, .one_in = 3000, .seconds = 1.5, .threads = 6}, o);
}

}  // namespace fault
