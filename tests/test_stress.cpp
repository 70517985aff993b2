// Randomized stress of the runtime: many threads build, share, evaluate and drop tiny graphs
// over several streams; every result is checked against a scalar reference computed beside
// it. Replay a run with BRAID_STRESS_SEED=<seed printed by the test>.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "graph/node.h"
#include "watchdog.h"

using namespace braid;
using braid_test::Watchdog;

namespace {

const Device kCpu = Device::cpu;
constexpr float kBound = 1000.0f;  // values stay small integers: float32 arithmetic is exact
const char* const kInjected = "stress: injected kernel failure";

// synchronize rethrows a kernel's failure that no eval reported; here only injected ones fail.
void synchronize_expecting_injected(const Stream& s) {
  try {
    synchronize(s);
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()) != kInjected) throw;
  }
}

// A kernel that fails, or that spins a little before copying its input (to vary timing).
class StressKernel : public UnaryPrimitive {
 public:
  StressKernel(Stream s, bool fail) : UnaryPrimitive(std::move(s)), fail_(fail) {}
  void eval_cpu(const std::vector<array>& inputs, array& out) override {
    if (fail_) throw std::runtime_error(kInjected);
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (std::chrono::steady_clock::now() < until) {
    }
    detail::alloc_contiguous(out);
    const float* src = static_cast<const float*>(inputs[0].desc()->data_ptr);
    float* dst = static_cast<float*>(out.desc()->data_ptr);
    for (size_t i = 0; i < out.size(); ++i) dst[i] = src[i];
  }
  void eval_gpu(const std::vector<array>&, array&) override {
    throw std::runtime_error("[StressKernel] No GPU body.");
  }
  const char* name() const override { return "StressKernel"; }

 private:
  bool fail_;
};

// An array and the values it must have (size 1 broadcasts), or the error it must raise.
struct Value {
  array a{0.0f};
  std::vector<float> expect{0.0f};
  bool fails = false;
};

uint64_t stress_seed() {
  if (const char* env = std::getenv("BRAID_STRESS_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}() * 0x100000001ull ^ std::random_device{}();
}

int env_int(const char* name, int fallback) {
  if (const char* env = std::getenv(name)) {
    int v = std::atoi(env);
    if (v > 0) return v;
  }
  return fallback;
}

struct Config {
  int threads = 16;
  int actions = 10'000;
  int base_streams = 4;
  size_t memory_limit = 0;  // 0: leave the limit alone
};

class StressRun {
 public:
  StressRun(Config cfg, uint64_t seed) : cfg_(cfg), seed_(seed) {}

  void run() {
    lo_ = array(-kBound);
    hi_ = array(kBound);
    {
      std::lock_guard<std::mutex> lock(streams_mu_);
      for (int i = 0; i < cfg_.base_streams; ++i) {
        streams_.push_back(new_stream(kCpu));
        every_stream_.push_back(streams_.back());
      }
    }
    std::mt19937_64 rng(seed_);
    pool_ = std::make_unique<Slot[]>(kPoolSize);
    for (int i = 0; i < kPoolSize; ++i) pool_[i].v = leaf(rng);

    std::vector<std::thread> threads;
    for (int t = 0; t < cfg_.threads; ++t) threads.emplace_back([this, t] { worker(t); });
    for (auto& th : threads) th.join();

    // Drop everything, then let every stream finish what was queued on it.
    pool_.reset();
    lo_ = array(0.0f);
    hi_ = array(0.0f);
    std::vector<Stream> all;
    {
      std::lock_guard<std::mutex> lock(streams_mu_);
      all = every_stream_;
      streams_.clear();
      every_stream_.clear();
    }
    for (const auto& s : all) synchronize_expecting_injected(s);
  }

  int error_count() const { return errors_.load(); }
  std::string first_errors() const {
    std::lock_guard<std::mutex> lock(err_mu_);
    std::string out;
    for (const auto& e : messages_) out += e + "\n";
    return out;
  }
  int64_t checks() const { return checks_.load(); }
  int64_t expected_failures() const { return failures_seen_.load(); }

 private:
  static constexpr int kPoolSize = 64;
  static constexpr size_t kMaxLocal = 12;
  static constexpr size_t kMaxPending = 8;
  static constexpr size_t kExtraStreams = 4;

  struct Slot {
    std::mutex mu;
    Value v;
  };

  struct Pending {
    Value v;
    EvalHandle h;
  };

  void error(int t, int action, const std::string& what) {
    errors_.fetch_add(1);
    std::lock_guard<std::mutex> lock(err_mu_);
    if (messages_.size() < 20) {
      std::ostringstream os;
      os << "seed " << seed_ << ", thread " << t << ", action " << action << ": " << what;
      messages_.push_back(os.str());
    }
  }

  Value leaf(std::mt19937_64& rng) {
    auto small = [&] { return static_cast<float>(static_cast<int>(rng() % 21) - 10); };
    if (rng() % 2) {
      float v = small();
      return Value{array(v), {v}, false};
    }
    std::vector<float> e = {small(), small(), small()};
    return Value{array({e[0], e[1], e[2]}), e, false};
  }

  Stream pick_stream(std::mt19937_64& rng) {
    std::lock_guard<std::mutex> lock(streams_mu_);
    return streams_[rng() % streams_.size()];
  }

  Value from_pool(std::mt19937_64& rng) {
    Slot& slot = pool_[rng() % kPoolSize];
    std::lock_guard<std::mutex> lock(slot.mu);
    return slot.v;
  }

  void to_pool(std::mt19937_64& rng, Value v) {
    Slot& slot = pool_[rng() % kPoolSize];
    std::lock_guard<std::mutex> lock(slot.mu);
    slot.v = std::move(v);
  }

  Value pick_input(std::mt19937_64& rng, std::deque<Value>& local) {
    int r = static_cast<int>(rng() % 10);
    if (r < 4 && !local.empty()) return local[rng() % local.size()];
    if (r < 8) return from_pool(rng);
    return leaf(rng);
  }

  static float clamp(float x) { return std::min(std::max(x, -kBound), kBound); }

  // One random op on one or two values, on a random stream (or the thread's default).
  Value apply(std::mt19937_64& rng, const Value& x, const Value& y) {
    std::optional<Stream> s;
    if (rng() % 4 != 0) s = pick_stream(rng);
    StreamOrDevice sd = s ? StreamOrDevice(*s) : StreamOrDevice{};
    const size_t n = std::max(x.expect.size(), y.expect.size());
    auto ex = [&](size_t i) { return x.expect[x.expect.size() == 1 ? 0 : i]; };
    auto ey = [&](size_t i) { return y.expect[y.expect.size() == 1 ? 0 : i]; };
    const int op = static_cast<int>(rng() % 10);
    auto build = [&]() -> array {
      switch (op) {
        case 0: return add(x.a, y.a, sd);
        case 1: return subtract(x.a, y.a, sd);
        case 2: return multiply(x.a, y.a, sd);
        case 3: return maximum(x.a, y.a, sd);
        case 4: return minimum(x.a, y.a, sd);
        case 5: return where(less(x.a, y.a, sd), x.a, y.a, sd);
        case 6: return where(greater(x.a, y.a, sd), subtract(x.a, y.a, sd), add(x.a, y.a, sd), sd);
        case 7: return negative(x.a, sd);
        case 8: return astype(astype(add(x.a, y.a, sd), int32, sd), float32, sd);
        default: return where(equal(x.a, y.a, sd), y.a, negative(y.a, sd), sd);
      }
    };
    array r = build();
    std::vector<float> expect(n, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      float a = ex(i), b = ey(i), v = 0;
      switch (op) {
        case 0: v = a + b; break;
        case 1: v = a - b; break;
        case 2: v = a * b; break;
        case 3: v = std::max(a, b); break;
        case 4: v = std::min(a, b); break;
        case 5: v = a < b ? a : b; break;
        case 6: v = a > b ? a - b : a + b; break;
        case 7: v = -a; break;
        case 8: v = a + b; break;
        case 9: v = a == b ? b : -b; break;
      }
      expect[i] = clamp(v);
    }
    if (op == 7) expect.resize(x.expect.size());
    Value out{minimum(maximum(r, lo_, sd), hi_, sd), std::move(expect), op == 7 ? x.fails : (x.fails || y.fails)};
    // Now and then a slow or failing kernel on yet another stream.
    int k = static_cast<int>(rng() % 10000);
    if (k < 100) {
      const bool fail = k < 3;
      out.a = array(out.a.shape(), float32, std::make_shared<StressKernel>(pick_stream(rng), fail), {out.a});
      out.fails = out.fails || fail;
    }
    return out;
  }

  // Checks an array against its reference; `use_item` reads through item() (size 1 only).
  void check(int t, int action, Value& v, bool use_item) {
    checks_.fetch_add(1);
    try {
      if (use_item && v.a.size() == 1) {
        float got = v.a.item<float>();
        if (v.fails) return error(t, action, "item() returned instead of raising the kernel error");
        if (got != v.expect[0]) {
          return error(t, action, "item() = " + std::to_string(got) + ", expected " + std::to_string(v.expect[0]));
        }
        return;
      }
      const float* p = v.a.data<float>();
      if (v.fails) return error(t, action, "data() returned instead of raising the kernel error");
      if (v.a.size() != v.expect.size()) return error(t, action, "wrong size");
      for (size_t i = 0; i < v.expect.size(); ++i) {
        if (p[i] != v.expect[i]) {
          return error(t, action, "element " + std::to_string(i) + " = " + std::to_string(p[i]) + ", expected " +
                                      std::to_string(v.expect[i]));
        }
      }
    } catch (const std::runtime_error& e) {
      if (!v.fails || std::string(e.what()) != kInjected) {
        return error(t, action, std::string("unexpected exception: ") + e.what());
      }
      failures_seen_.fetch_add(1);
    } catch (const std::exception& e) {
      error(t, action, std::string("unexpected exception: ") + e.what());
    }
  }

  void worker(int t) {
    std::mt19937_64 rng(seed_ + 0x9E3779B97F4A7C15ull * (t + 1));
    {
      std::lock_guard<std::mutex> lock(streams_mu_);
      every_stream_.push_back(default_stream(kCpu));  // ops without a stream land here
    }
    std::deque<Value> local;
    std::deque<Pending> pending;
    auto keep = [&](Value v) {
      local.push_back(std::move(v));
      if (local.size() > kMaxLocal) local.pop_front();
    };
    for (int action = 0; action < cfg_.actions; ++action) {
      int r = static_cast<int>(rng() % 1000);
      if (r < 250) {  // build one op
        Value v = apply(rng, pick_input(rng, local), pick_input(rng, local));
        if (rng() % 3 == 0 && (!v.fails || rng() % 16 == 0)) to_pool(rng, v);
        keep(std::move(v));
      } else if (r < 350) {  // build a chain
        Value v = pick_input(rng, local);
        int len = 2 + static_cast<int>(rng() % 7);
        for (int i = 0; i < len; ++i) v = apply(rng, v, pick_input(rng, local));
        if (rng() % 2 == 0 && (!v.fails || rng() % 16 == 0)) to_pool(rng, v);
        keep(std::move(v));
      } else if (r < 500) {  // eval one
        if (local.empty()) continue;
        Value& v = local[rng() % local.size()];
        try {
          eval(v.a);
        } catch (const std::runtime_error&) {
        }
        check(t, action, v, false);
      } else if (r < 550) {  // eval several at once
        if (local.size() < 2) continue;
        std::vector<array> outs;
        std::vector<Value*> vs;
        for (int i = 0; i < 3; ++i) {
          vs.push_back(&local[rng() % local.size()]);
          outs.push_back(vs.back()->a);
        }
        Value p = from_pool(rng);
        outs.push_back(p.a);
        bool any_fails = p.fails;
        for (auto* v : vs) any_fails = any_fails || v->fails;
        try {
          eval(outs);
          if (any_fails) error(t, action, "eval of several returned instead of raising the kernel error");
        } catch (const std::runtime_error& e) {
          if (!any_fails) error(t, action, std::string("unexpected exception: ") + e.what());
        }
        for (auto* v : vs) check(t, action, *v, false);
        check(t, action, p, false);
      } else if (r < 650) {  // async_eval, waited on later
        if (local.empty()) continue;
        Value v = local[rng() % local.size()];
        EvalHandle h = async_eval(v.a);
        pending.push_back(Pending{std::move(v), std::move(h)});
        if (pending.size() > kMaxPending) pending.pop_front();  // dropped without waiting
      } else if (r < 750) {  // wait on an earlier async_eval
        if (pending.empty()) continue;
        size_t i = rng() % pending.size();
        try {
          pending[i].h.wait();
          if (pending[i].v.fails) error(t, action, "wait() returned instead of raising the kernel error");
        } catch (const std::runtime_error& e) {
          if (!pending[i].v.fails) error(t, action, std::string("unexpected exception from wait: ") + e.what());
        }
        if (!pending[i].h.ready()) error(t, action, "handle not ready after wait()");
        check(t, action, pending[i].v, rng() % 2 == 0);
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (r < 870) {  // read a value another thread may have built, maybe unevaluated
        Value v = from_pool(rng);
        check(t, action, v, rng() % 2 == 0);
      } else if (r < 920) {  // drop things
        if (!local.empty()) local.erase(local.begin() + static_cast<std::ptrdiff_t>(rng() % local.size()));
        if (rng() % 4 == 0 && !pending.empty()) pending.pop_front();
        if (rng() % 4 == 0) to_pool(rng, leaf(rng));
      } else if (r < 950) {  // poll without blocking
        if (!pending.empty()) (void)pending.front().h.ready();
        Value v = from_pool(rng);
        (void)v.a.is_available();
      } else if (r < 980) {  // synchronize a stream
        Stream s = pick_stream(rng);
        synchronize_expecting_injected(s);
      } else if (r < 985) {  // a new stream replaces one of the extra streams
        Stream s = new_stream(kCpu);
        std::lock_guard<std::mutex> lock(streams_mu_);
        every_stream_.push_back(s);
        if (streams_.size() < cfg_.base_streams + kExtraStreams) {
          streams_.push_back(s);
        } else {
          streams_[cfg_.base_streams + rng() % kExtraStreams] = s;
        }
      } else {  // evaluate on a short-lived helper thread
        if (local.empty()) continue;
        Value v = local[rng() % local.size()];
        std::thread helper([&] { check(t, action, v, true); });
        helper.join();
      }
    }
    // Whatever is still pending is waited on and checked before the thread leaves.
    for (auto& p : pending) {
      try {
        p.h.wait();
      } catch (const std::runtime_error&) {
      }
      check(t, -1, p.v, false);
    }
  }

  Config cfg_;
  uint64_t seed_;
  array lo_{0.0f};
  array hi_{0.0f};
  std::unique_ptr<Slot[]> pool_;
  std::mutex streams_mu_;
  std::vector<Stream> streams_;
  std::vector<Stream> every_stream_;
  std::atomic<int> errors_{0};
  mutable std::mutex err_mu_;
  std::vector<std::string> messages_;
  std::atomic<int64_t> checks_{0};
  std::atomic<int64_t> failures_seen_{0};
};

void run_stress(Config cfg) {
  const uint64_t seed = stress_seed();
  std::cout << "[stress] seed " << seed << " (replay with BRAID_STRESS_SEED=" << seed << "), " << cfg.threads
            << " threads x " << cfg.actions << " actions" << std::endl;
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  const size_t start = get_active_memory();
  std::optional<size_t> old_limit;
  if (cfg.memory_limit > 0) old_limit = set_memory_limit(cfg.memory_limit);
  auto t0 = std::chrono::steady_clock::now();
  int errors = 0;
  std::string messages;
  int64_t checks = 0, failures = 0;
  {
    StressRun run(cfg, seed);
    run.run();
    errors = run.error_count();
    messages = run.first_errors();
    checks = run.checks();
    failures = run.expected_failures();
  }
  if (old_limit) set_memory_limit(*old_limit);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[stress] " << checks << " checks (" << failures << " expected kernel errors) in " << secs << " s"
            << std::endl;
  EXPECT_EQ(errors, 0) << "seed " << seed << "\n" << messages;
  EXPECT_GT(checks, 0);
  EXPECT_EQ(get_active_memory(), start) << "memory held after every array was dropped (seed " << seed << ")";
}

}  // namespace

TEST(Stress, RandomGraphsOnManyThreadsAndStreams) {
  Watchdog wd(std::chrono::seconds(170));
  Config cfg;
  cfg.threads = env_int("BRAID_STRESS_THREADS", 16);
  cfg.actions = env_int("BRAID_STRESS_ACTIONS", 10'000);
  run_stress(cfg);
}

// The same under a memory limit so low that every submission first drains its stream.
TEST(Stress, RandomGraphsUnderATinyMemoryLimit) {
  Watchdog wd(std::chrono::seconds(170));
  Config cfg;
  cfg.threads = env_int("BRAID_STRESS_THREADS", 16);
  cfg.actions = env_int("BRAID_STRESS_ACTIONS", 10'000) / 5;
  cfg.memory_limit = 1;
  run_stress(cfg);
}
