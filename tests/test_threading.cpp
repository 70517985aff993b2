// The threading contract of DESIGN.md section 1, one behaviour per test.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "braid/braid.h"
#include "graph/node.h"
#include "runtime/pool.h"
#include "runtime/strand.h"
#include "watchdog.h"

using namespace braid;
using braid_test::Watchdog;
using namespace std::chrono_literals;

namespace {

const Device kCpu = Device::cpu;

// ---- a primitive whose body the test supplies ----

using Body = std::function<void(const std::vector<array>&, array&)>;

class Lambda : public UnaryPrimitive {
 public:
  Lambda(Stream s, Body body) : UnaryPrimitive(std::move(s)), body_(std::move(body)) {}
  void eval_cpu(const std::vector<array>& inputs, array& out) override { body_(inputs, out); }
  void eval_gpu(const std::vector<array>&, array&) override {
    throw std::runtime_error("[Lambda] No GPU body.");
  }
  const char* name() const override { return "Lambda"; }

 private:
  Body body_;
};

// A float32 node of `shape` computed by `body` from `inputs` on `s`.
// Test kernels are host code: with no stream given they run on this thread's CPU stream,
// also when the suite runs with the GPU as default device (BRAID_DEVICE=gpu).
array custom(std::vector<array> inputs, Shape shape, StreamOrDevice s, Body body) {
  Stream st = std::holds_alternative<std::monostate>(s) ? default_stream(Device::cpu) : to_stream(std::move(s));
  return array(std::move(shape), float32, std::make_shared<Lambda>(st, std::move(body)), std::move(inputs));
}

// out = inputs[0] + k, elementwise (inputs[0] float32, contiguous, same size as out).
void add_constant(const std::vector<array>& in, array& out, float k) {
  detail::alloc_contiguous(out);
  const float* src = static_cast<const float*>(in[0].desc()->data_ptr);
  float* dst = static_cast<float*>(out.desc()->data_ptr);
  for (size_t i = 0; i < out.size(); ++i) dst[i] = src[i] + k;
}

// A body that runs `before` and then computes inputs[0] + k.
Body then_add(std::function<void()> before, float k = 0.0f) {
  return [before = std::move(before), k](const std::vector<array>& in, array& out) {
    before();
    add_constant(in, out, k);
  };
}

Body sleep_then_add(std::chrono::milliseconds d, float k = 0.0f) {
  return then_add([d] { std::this_thread::sleep_for(d); }, k);
}

Body throws(std::string msg, std::chrono::milliseconds delay = 0ms) {
  return [msg = std::move(msg), delay](const std::vector<array>&, array&) {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    throw std::runtime_error(msg);
  };
}

// A body that fills out with `v` (ignores inputs).
Body fill(float v) {
  return [v](const std::vector<array>&, array& out) {
    detail::alloc_contiguous(out);
    float* dst = static_cast<float*>(out.desc()->data_ptr);
    for (size_t i = 0; i < out.size(); ++i) dst[i] = v;
  };
}

std::vector<float> values(array a) {
  const float* p = a.data<float>();
  return std::vector<float>(p, p + a.size());
}

// Runs fn(i) on n new threads and joins them.
void on_threads(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int i = 0; i < n; ++i) threads.emplace_back(fn, i);
  for (auto& t : threads) t.join();
}

// Calls fn, which must throw std::runtime_error with message `msg`.
template <typename F>
void expect_kernel_error(F&& fn, const std::string& msg) {
  try {
    fn();
    ADD_FAILURE() << "expected the kernel error '" << msg << "', got no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), msg);
  } catch (...) {
    ADD_FAILURE() << "expected the kernel error '" << msg << "', got another exception";
  }
}

// ---- counting computations per node through the eval hook ----

std::mutex g_count_mu;
std::unordered_map<std::uintptr_t, int> g_counts;

void count_node(const array& node) {
  std::lock_guard<std::mutex> lock(g_count_mu);
  ++g_counts[node.id()];
}

// Installs the counting hook for the scope of a test.
class CountingHook {
 public:
  CountingHook() {
    std::lock_guard<std::mutex> lock(g_count_mu);
    g_counts.clear();
    detail::set_eval_hook(&count_node);
  }
  ~CountingHook() { detail::set_eval_hook(nullptr); }
  void reset() {
    std::lock_guard<std::mutex> lock(g_count_mu);
    g_counts.clear();
  }
  int count(const array& a) const {
    std::lock_guard<std::mutex> lock(g_count_mu);
    auto it = g_counts.find(a.id());
    return it == g_counts.end() ? 0 : it->second;
  }
};

std::string threads_name(const ::testing::TestParamInfo<int>& info) {
  return "Threads" + std::to_string(info.param);
}

}  // namespace

// ======================= 1. Streams are process-wide =======================

TEST(Threading, StreamValuesCompareEqualAcrossThreads) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  std::optional<Stream> seen;
  std::optional<Stream> looked_up;
  std::thread t([&] {
    seen = s;
    looked_up = Stream(s.index, kCpu);
  });
  t.join();
  EXPECT_EQ(*seen, s);
  EXPECT_EQ(*looked_up, s);
  EXPECT_EQ(looked_up->state(), s.state());
}

TEST(Threading, StreamLookupByIndexFindsLiveStreamFromAnyThread) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  array x({1.0f, 2.0f});
  std::optional<array> y;
  std::thread t([&] { y = add(x, x, Stream(s.index, kCpu)); });
  t.join();
  EXPECT_EQ(y->stream(), s);
  EXPECT_EQ(values(*y), (std::vector<float>{2.0f, 4.0f}));
}

TEST(Threading, StreamLookupOfUnknownIndexThrows) {
  Watchdog wd;
  EXPECT_THROW(Stream(1 << 30, kCpu), std::invalid_argument);
  std::thread t([] { EXPECT_THROW(Stream(1 << 30, kCpu), std::invalid_argument); });
  t.join();
}

TEST(Threading, StreamMadeByExitedThreadStaysUsable) {
  Watchdog wd;
  std::optional<Stream> s;
  std::optional<array> y;
  std::thread t([&] {
    s = new_stream(kCpu);
    y = multiply(array({1.0f, 2.0f, 3.0f}), array(3.0f), *s);
  });
  t.join();
  EXPECT_EQ(values(*y), (std::vector<float>{3.0f, 6.0f, 9.0f}));
  array z = add(*y, array(1.0f), *s);
  EXPECT_EQ(values(z), (std::vector<float>{4.0f, 7.0f, 10.0f}));
  EXPECT_NO_THROW(synchronize(*s));
  EXPECT_EQ(Stream(s->index, kCpu), *s);
}

TEST(Threading, DefaultStreamOfExitedThreadStillEvaluates) {
  Watchdog wd;
  std::optional<Stream> thread_default;
  std::optional<array> y;
  std::thread t([&] {
    thread_default = default_stream(default_device());
    array x({1.0f, 2.0f, 3.0f});
    y = (x + 1.0f) * 2.0f;  // on this thread's default stream
  });
  t.join();
  EXPECT_EQ(y->stream(), *thread_default);
  EXPECT_EQ(values(*y), (std::vector<float>{4.0f, 6.0f, 8.0f}));
  EXPECT_NO_THROW(synchronize(*thread_default));
}

// Work a thread queued on its default stream and abandoned (no handle, no array kept) still
// runs after the thread exits, and its memory comes back.
TEST(Threading, AbandonedWorkOfExitedThreadStillCompletes) {
  Watchdog wd;
  const size_t start = get_active_memory();
  std::atomic<bool> ran{false};
  std::thread t([&] {
    array x = arange(0.0, 64.0);
    array slow = custom({x}, {64}, {}, then_add([&ran] {
                          std::this_thread::sleep_for(100ms);
                          ran.store(true);
                        }));
    async_eval(slow * 2.0f);
  });
  t.join();
  while (!ran.load()) std::this_thread::sleep_for(1ms);
  while (get_active_memory() != start) std::this_thread::sleep_for(1ms);  // the watchdog bounds this
  SUCCEED();
}

TEST(Threading, StreamLookupRacingStreamReleaseIsSafe) {
  Watchdog wd;
  std::atomic<bool> stop{false};
  std::atomic<int> latest{0};
  std::thread churn([&] {
    for (int k = 0; k < 2000; ++k) {
      Stream s = new_stream(kCpu);
      latest.store(s.index);
      array y = add(array(1.0f), array(static_cast<float>(k)), s);
      if (y.item<float>() != k + 1.0f) ADD_FAILURE() << "wrong value on a fresh stream";
    }
    stop.store(true);
  });
  int found = 0, missing = 0;
  do {  // at least one lookup, even when the churn finishes first
    int idx = latest.load();
    try {
      Stream s(idx, kCpu);
      EXPECT_EQ(s.index, idx);
      ++found;
    } catch (const std::invalid_argument&) {
      ++missing;  // released in the meantime
    }
  } while (!stop.load());
  churn.join();
  EXPECT_GT(found + missing, 0);
}

TEST(Threading, DefaultStreamOfExitedThreadIsReleasedWhenUnreferenced) {
  Watchdog wd;
  int index = -1;
  std::thread t([&] { index = default_stream(kCpu).index; });
  t.join();
  EXPECT_THROW(Stream(index, kCpu), std::invalid_argument);
}

// ======================= 2. A stream is a strand =======================

class ThreadingStreamOrder : public ::testing::TestWithParam<int> {};

// Every thread async-submits a sequence of independent nodes to one stream; the stream must
// run them one at a time and keep each thread's submission order.
TEST_P(ThreadingStreamOrder, EachSubmittingThreadKeepsItsOrder) {
  Watchdog wd;
  const int num_threads = GetParam();
  const int per_thread = 200;
  Stream s = new_stream(kCpu);

  std::mutex log_mu;
  std::vector<std::pair<int, int>> log;  // (thread, sequence number), in execution order
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  auto record = [&](int thread, int seq) {
    int now = in_flight.fetch_add(1) + 1;
    int seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    {
      std::lock_guard<std::mutex> lock(log_mu);
      log.emplace_back(thread, seq);
    }
    std::this_thread::yield();  // widen the window in which a second runner would overlap
    in_flight.fetch_sub(1);
  };

  std::latch start(num_threads);
  on_threads(num_threads, [&](int t) {
    array leaf(static_cast<float>(t));
    std::vector<EvalHandle> handles;
    start.arrive_and_wait();
    for (int k = 0; k < per_thread; ++k) {
      array node = custom({leaf}, {}, s, then_add([&record, t, k] { record(t, k); }));
      handles.push_back(async_eval(node));
    }
    for (auto& h : handles) h.wait();
  });

  EXPECT_EQ(max_in_flight.load(), 1) << "two tasks of one stream ran at the same time";
  ASSERT_EQ(log.size(), static_cast<size_t>(num_threads * per_thread));
  std::vector<int> next(num_threads, 0);
  for (auto [t, k] : log) {
    ASSERT_EQ(k, next[t]) << "thread " << t << "'s submissions ran out of order";
    ++next[t];
  }
}

INSTANTIATE_TEST_SUITE_P(ThreadingCounts, ThreadingStreamOrder, ::testing::Values(2, 4, 16), threads_name);

// Threads sharing a stream each run their own long runs of nodes when they are waiting for
// them (a node is cheapest on the core that built it), and the stream's order holds across
// the hand-overs.
TEST(Threading, LongRunsOnASharedStreamAreRunByTheirWaitingSubmitters) {
  Watchdog wd;
  constexpr int kThreads = 4;
  constexpr int kLen = 300;
  Stream s = new_stream(kCpu);
  std::atomic<bool> started{false};
  std::atomic<bool> open{false};
  array gate = custom({array(0.0f)}, {}, s, then_add([&] {
                        started.store(true);
                        while (!open.load()) std::this_thread::sleep_for(1ms);
                      }));
  EvalHandle gate_done = async_eval(gate);
  while (!started.load()) std::this_thread::sleep_for(1ms);

  // Each thread's queue of nodes waits behind the gate; it opens once all four sleep.
  std::thread opener([&] {
    while (s.state()->strand->sleepers() < kThreads) std::this_thread::sleep_for(1ms);
    open.store(true);
  });
  std::vector<std::thread::id> builders(kThreads);
  std::vector<std::vector<std::thread::id>> runners(kThreads);  // appended in stream order
  std::vector<int> order;  // builder index of every node, in execution order
  std::vector<float> results(kThreads);
  on_threads(kThreads, [&](int t) {
    builders[t] = std::this_thread::get_id();
    array y(static_cast<float>(t));
    for (int k = 0; k < kLen; ++k) {
      y = custom({y}, {}, s, then_add([&runners, &order, t] {
                   runners[t].push_back(std::this_thread::get_id());
                   order.push_back(t);
                 }, 1.0f));
    }
    y.eval();
    results[t] = y.item<float>();
  });
  opener.join();
  gate_done.wait();

  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(results[t], static_cast<float>(t + kLen));
    ASSERT_EQ(runners[t].size(), static_cast<size_t>(kLen));
    EXPECT_EQ(std::count(runners[t].begin(), runners[t].end(), builders[t]), kLen)
        << "thread " << t << "'s nodes ran on another thread";
  }
  // Each submission ran as one unbroken run: the stream did not interleave them.
  ASSERT_EQ(order.size(), static_cast<size_t>(kThreads * kLen));
  int switches = 0;
  for (size_t i = 1; i < order.size(); ++i) switches += order[i] != order[i - 1];
  EXPECT_EQ(switches, kThreads - 1);
}

// A kernel that evaluates a long run on a shared stream (a nested eval) while other threads
// submit long runs to it: hand-overs go only to sleeping threads, so the nested evaluation
// and everyone else finish.
TEST(Threading, NestedEvalOfLongRunsOnASharedStreamFinishes) {
  Watchdog wd;
  constexpr int kLen = 200;
  Stream shared = new_stream(kCpu);
  Stream outer = new_stream(kCpu);
  auto chain = [&](float start) {
    array y(start);
    for (int k = 0; k < kLen; ++k) y = add(y, array(1.0f), shared);
    return y;
  };
  for (int round = 0; round < 5; ++round) {
    std::atomic<float> nested_result{0.0f};
    array x = custom({array(0.0f)}, {}, outer, then_add([&] {
                       array y = chain(100.0f);
                       y.eval();  // nested: this thread holds `outer` meanwhile
                       nested_result.store(y.item<float>());
                     }));
    std::vector<float> results(4);
    on_threads(4, [&](int t) {
      if (t == 0) {
        x.eval();
        results[t] = x.item<float>();
      } else {
        array y = chain(static_cast<float>(t));
        y.eval();
        results[t] = y.item<float>();
      }
    });
    EXPECT_EQ(nested_result.load(), 100.0f + kLen) << "round " << round;
    EXPECT_EQ(results[0], 0.0f);
    for (int t = 1; t < 4; ++t) EXPECT_EQ(results[t], static_cast<float>(t + kLen)) << "round " << round;
  }
}

TEST(Threading, SubmissionThatHappensBeforeAnotherRunsFirst) {
  Watchdog wd;
  for (int round = 0; round < 20; ++round) {
    Stream s = new_stream(kCpu);
    std::mutex mu;
    std::vector<char> order;
    auto note = [&](char c) {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(c);
    };
    std::atomic<bool> submitted{false};
    std::optional<EvalHandle> ha, hb;
    std::thread a([&] {
      array x = custom({array(1.0f)}, {}, s, then_add([&] {
                         std::this_thread::sleep_for(5ms);
                         note('a');
                       }));
      ha = async_eval(x);
      submitted.store(true, std::memory_order_release);
    });
    std::thread b([&] {
      while (!submitted.load(std::memory_order_acquire)) std::this_thread::yield();
      array y = custom({array(2.0f)}, {}, s, then_add([&] { note('b'); }));
      hb = async_eval(y);
    });
    a.join();
    b.join();
    hb->wait();
    ha->wait();
    ASSERT_EQ(order, (std::vector<char>{'a', 'b'})) << "round " << round;
  }
}

// A task parked on an input from another stream holds back the tasks submitted after it.
TEST(Threading, ParkedTaskIsNotOvertakenByLaterSubmission) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  Stream other = new_stream(kCpu);
  std::mutex mu;
  std::vector<char> order;
  auto note = [&](char c) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(c);
  };
  array slow = custom({array(1.0f)}, {}, other, sleep_then_add(200ms));
  array first = custom({slow}, {}, s, then_add([&] { note('1'); }));
  EvalHandle h1 = async_eval(first);
  std::optional<EvalHandle> h2;
  std::thread t([&] {
    array second = custom({array(2.0f)}, {}, s, then_add([&] { note('2'); }));
    h2 = async_eval(second);
  });
  t.join();
  h2->wait();
  h1.wait();
  EXPECT_EQ(order, (std::vector<char>{'1', '2'}));
}

// ======================= 3. Graphs cross threads =======================

TEST(Threading, GraphBuiltOnOneThreadEvaluatesOnAnother) {
  Watchdog wd;
  std::optional<array> y;
  std::thread builder([&] {
    array x({1.0f, 2.0f, 3.0f});
    Stream s = new_stream(kCpu);
    y = add(multiply(x, x), x, s);
  });
  builder.join();
  std::vector<float> got;
  std::thread evaluator([&] { got = values(*y); });
  evaluator.join();
  EXPECT_EQ(got, (std::vector<float>{2.0f, 6.0f, 12.0f}));
}

TEST(Threading, GraphBuiltAndEvaluatedOnSpawnedThreads) {
  Watchdog wd;
  // Each thread lives only for one graph, as tasks of a test harness or a thread pool do.
  for (int round = 0; round < 10; ++round) {
    std::atomic<int> wrong{0};
    on_threads(8, [&](int i) {
      array x = arange(0.0, 4.0);
      array y = x * static_cast<float>(i) + 1.0f;
      std::vector<float> expect = {1.0f, 1.0f + i, 1.0f + 2 * i, 1.0f + 3 * i};
      if (values(y) != expect) wrong.fetch_add(1);
    });
    ASSERT_EQ(wrong.load(), 0) << "round " << round;
  }
}

TEST(Threading, EvaluationOnSpawnedThreadOfGraphFromMain) {
  Watchdog wd;
  array x({1.0f, 2.0f});
  array y = (x + x) * x;
  std::vector<float> got;
  std::thread([&] { std::thread([&] { got = values(y); }).join(); }).join();
  EXPECT_EQ(got, (std::vector<float>{2.0f, 8.0f}));
}

TEST(Threading, EvaluatedArrayIsReadableFromAnyThread) {
  Watchdog wd;
  array y = arange(0.0, 64.0) * 2.0f;
  y.eval();
  std::atomic<int> wrong{0};
  on_threads(8, [&](int) {
    std::vector<float> v = values(y);
    for (int i = 0; i < 64; ++i) {
      if (v[i] != 2.0f * i) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

// ======================= 4. Exactly once =======================

class ThreadingExactlyOnce : public ::testing::TestWithParam<int> {};

// Threads evaluate (at one moment) graphs that share two layers of nodes spread over three
// streams; every shared node is computed once and every result is right.
TEST_P(ThreadingExactlyOnce, SharedNodesAreComputedOnce) {
  Watchdog wd;
  const int num_threads = GetParam();
  const int rounds = 20;
  const int width = 16;
  std::vector<Stream> shared_streams = {new_stream(kCpu), new_stream(kCpu), new_stream(kCpu)};
  CountingHook hook;

  for (int round = 0; round < rounds; ++round) {
    hook.reset();  // node addresses of the last round may be reused
    std::vector<array> leaves;
    std::vector<float> leaf_vals;
    for (int i = 0; i < 4; ++i) {
      leaf_vals.push_back(static_cast<float>(i + round % 3));
      leaves.emplace_back(leaf_vals.back());
    }
    std::vector<array> l1, l2;
    std::vector<float> v1, v2;
    for (int i = 0; i < width; ++i) {
      l1.push_back(add(leaves[i % 4], leaves[(i + 1) % 4], shared_streams[i % 3]));
      v1.push_back(leaf_vals[i % 4] + leaf_vals[(i + 1) % 4]);
    }
    for (int i = 0; i < width; ++i) {
      l2.push_back(multiply(l1[i], l1[(i + 5) % width], shared_streams[(i + 1) % 3]));
      v2.push_back(v1[i] * v1[(i + 5) % width]);
    }

    std::barrier sync(num_threads);
    std::atomic<int> wrong{0};
    on_threads(num_threads, [&](int t) {
      // Each thread sums every l2 node in its own order, on its own default stream.
      std::vector<int> idx(width);
      for (int i = 0; i < width; ++i) idx[i] = (i * 7 + t * 3) % width;
      array acc = l1[t % width];
      float expect = v1[t % width];
      for (int i : idx) {
        acc = acc + l2[i];
        expect += v2[i];
      }
      sync.arrive_and_wait();
      float got = 0;
      switch ((t + round) % 3) {
        case 0: got = acc.item<float>(); break;
        case 1: eval(acc); got = acc.item<float>(); break;
        case 2: async_eval(acc).wait(); got = acc.item<float>(); break;
      }
      if (got != expect) wrong.fetch_add(1);
    });
    ASSERT_EQ(wrong.load(), 0) << "round " << round;
    for (const auto& n : l1) ASSERT_EQ(hook.count(n), 1) << "round " << round;
    for (const auto& n : l2) ASSERT_EQ(hook.count(n), 1) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(ThreadingCounts, ThreadingExactlyOnce, ::testing::Values(2, 4, 16), threads_name);

// A node claimed (and blocked) in one evaluation is awaited, not recomputed, by another.
TEST(Threading, NodeClaimedElsewhereIsAwaitedNotRecomputed) {
  Watchdog wd;
  CountingHook hook;
  Stream s1 = new_stream(kCpu);
  Stream s2 = new_stream(kCpu);
  std::latch entered(1);
  std::latch release(1);
  array x = custom({array(1.0f)}, {}, s1, then_add([&] {
                     entered.count_down();
                     release.wait();
                   }, 10.0f));
  EvalHandle h = async_eval(x);
  entered.wait();  // x is running on a worker now
  std::atomic<bool> done{false};
  float got = 0;
  std::thread t([&] {
    array y = add(x, array(1.0f), s2);
    got = y.item<float>();
    done.store(true);
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(done.load()) << "the consumer finished before its input was computed";
  release.count_down();
  t.join();
  h.wait();
  EXPECT_EQ(got, 12.0f);
  EXPECT_EQ(hook.count(x), 1);
}

// Kernels large enough to split across the pool, from many threads at once: workers and
// callers share one pool and nobody blocks a worker waiting on the pool.
TEST(Threading, LargeKernelsFromManyThreadsShareThePool) {
  Watchdog wd;
  const int n = 1 << 18;
  array base = arange(0.0, static_cast<double>(n));
  base.eval();
  std::atomic<int> wrong{0};
  on_threads(8, [&](int t) {
    Stream s = new_stream(kCpu);
    for (int k = 0; k < 4; ++k) {
      array y = add(multiply(base, array(2.0f), s), array(static_cast<float>(t)), s);
      if (k % 2) async_eval(y).wait();
      const float* p = y.data<float>();
      for (int i = 0; i < n; i += 997) {
        if (p[i] != 2.0f * i + t) wrong.fetch_add(1);
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

// ======================= 5. Cross-stream dependencies =======================

TEST(Threading, CrossStreamDependencyOnSlowProducerIsAutomatic) {
  Watchdog wd;
  Stream producer_stream = new_stream(kCpu);
  Stream consumer_stream = new_stream(kCpu);
  array x({1.0f, 2.0f, 3.0f});
  array slow = custom({x}, {3}, producer_stream, sleep_then_add(300ms, 100.0f));
  array y = add(slow, x, consumer_stream);
  EXPECT_EQ(values(y), (std::vector<float>{102.0f, 104.0f, 106.0f}));
}

TEST(Threading, CrossStreamDependencyAcrossThreadsIsAutomatic) {
  Watchdog wd;
  Stream producer_stream = new_stream(kCpu);
  array x({1.0f, 2.0f});
  array slow = custom({x}, {2}, producer_stream, sleep_then_add(200ms, 1.0f));
  EvalHandle h = async_eval(slow);  // the producer is claimed by this thread
  std::vector<float> got;
  std::thread t([&] {
    Stream consumer_stream = new_stream(kCpu);
    got = values(multiply(slow, x, consumer_stream));
  });
  t.join();
  h.wait();
  EXPECT_EQ(got, (std::vector<float>{2.0f, 6.0f}));
}

// A chain that hops between four streams, with slow links, gives the sequential result.
TEST(Threading, ChainHoppingBetweenStreamsKeepsItsOrder) {
  Watchdog wd;
  std::vector<Stream> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(new_stream(kCpu));
  array x(0.0f);
  float expect = 0;
  for (int i = 0; i < 400; ++i) {
    if (i % 50 == 7) {
      x = custom({x}, {}, streams[i % 4], sleep_then_add(10ms, 2.0f));
      expect += 2.0f;
    } else {
      x = (i % 2 == 0) ? add(x, array(1.0f), streams[i % 4]) : multiply(x, array(1.0f), streams[i % 4]);
      if (i % 2 == 0) expect += 1.0f;
    }
  }
  EXPECT_EQ(x.item<float>(), expect);
}

// ======================= 6. Defaults per thread =======================

TEST(Threading, DefaultStreamIsPerThreadAndStable) {
  Watchdog wd;
  Stream mine = default_stream(kCpu);
  EXPECT_EQ(default_stream(kCpu), mine);
  std::optional<Stream> a1, a2, b;
  std::thread ta([&] {
    a1 = default_stream(kCpu);
    a2 = default_stream(kCpu);
  });
  std::thread tb([&] { b = default_stream(kCpu); });
  ta.join();
  tb.join();
  EXPECT_EQ(*a1, *a2);
  EXPECT_NE(*a1, *b);
  EXPECT_NE(*a1, mine);
  EXPECT_NE(*b, mine);
}

TEST(Threading, SetDefaultStreamChangesOnlyTheCallingThread) {
  Watchdog wd;
  const Device dev = default_device();  // the CPU, or the GPU under BRAID_DEVICE=gpu
  Stream main_default = default_stream(dev);
  Stream chosen = new_stream(dev);
  std::latch set(1);
  std::latch checked(1);
  std::optional<Stream> in_setter, in_other;
  std::optional<Stream> built_in_setter, built_in_other;
  std::thread setter([&] {
    set_default_stream(chosen);
    in_setter = default_stream(dev);
    built_in_setter = (array(1.0f) + 1.0f).stream();
    set.count_down();
    checked.wait();  // stay alive while the other thread looks
  });
  std::thread other([&] {
    set.wait();
    in_other = default_stream(dev);
    built_in_other = (array(1.0f) + 1.0f).stream();
    checked.count_down();
  });
  setter.join();
  other.join();
  EXPECT_EQ(*in_setter, chosen);
  EXPECT_EQ(*built_in_setter, chosen);
  EXPECT_NE(*in_other, chosen);
  EXPECT_NE(*built_in_other, chosen);
  EXPECT_EQ(default_stream(dev), main_default);
}

TEST(Threading, StreamContextChangesOnlyTheCallingThread) {
  Watchdog wd;
  const int num_threads = 8;
  std::vector<Stream> streams;
  for (int i = 0; i < num_threads; ++i) streams.push_back(new_stream(kCpu));
  std::barrier sync(num_threads);
  std::atomic<int> wrong{0};
  on_threads(num_threads, [&](int t) {
    Stream before = default_stream(kCpu);
    {
      StreamContext ctx(streams[t]);
      sync.arrive_and_wait();  // every thread is inside its own context now
      for (int k = 0; k < 50; ++k) {
        if (default_stream(kCpu) != streams[t]) wrong.fetch_add(1);
        array y = array(static_cast<float>(k)) + 1.0f;
        if (y.stream() != streams[t]) wrong.fetch_add(1);
        if (y.item<float>() != k + 1.0f) wrong.fetch_add(1);
      }
      sync.arrive_and_wait();
    }
    if (default_stream(kCpu) != before) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Threading, StreamContextRestoresDefaultsOnExit) {
  Watchdog wd;
  Stream before = default_stream(kCpu);
  Device device_before = default_device();
  Stream outer = new_stream(kCpu);
  Stream inner = new_stream(kCpu);
  {
    StreamContext c1(outer);
    EXPECT_EQ(default_stream(kCpu), outer);
    {
      StreamContext c2(inner);
      EXPECT_EQ(default_stream(kCpu), inner);
      EXPECT_EQ((array(1.0f) + 1.0f).stream(), inner);
    }
    EXPECT_EQ(default_stream(kCpu), outer);
    {
      StreamContext c3(kCpu);  // a device: its default stream, which is `outer` here
      EXPECT_EQ(default_stream(kCpu), outer);
    }
  }
  EXPECT_EQ(default_stream(kCpu), before);
  EXPECT_EQ(default_device(), device_before);
}

TEST(Threading, StreamContextRestoresDefaultsWhenLeftByException) {
  Watchdog wd;
  Stream before = default_stream(kCpu);
  Stream s = new_stream(kCpu);
  try {
    StreamContext ctx(s);
    throw std::runtime_error("leave the scope");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(default_stream(kCpu), before);
}

TEST(Threading, DefaultDeviceIsProcessWide) {
  Watchdog wd;
  Device before = default_device();
  Device target = is_available(Device::gpu) ? Device(Device::gpu) : Device(Device::cpu);
  std::thread setter([&] { set_default_device(target); });
  setter.join();
  std::optional<Device> seen;
  std::thread reader([&] { seen = default_device(); });
  reader.join();
  EXPECT_EQ(*seen, target);
  EXPECT_EQ(default_device(), target);
  if (!is_available(Device::gpu)) {
    std::thread bad([] { EXPECT_THROW(set_default_device(Device::gpu), std::invalid_argument); });
    bad.join();
    EXPECT_EQ(default_device(), Device(Device::cpu));
  }
  set_default_device(before);
}

TEST(Threading, StreamContextDeviceOverrideIsPerThread) {
  if (!is_available(Device::gpu)) GTEST_SKIP() << "needs a second device (a GPU)";
  Watchdog wd;
  Device before = default_device();
  set_default_device(Device::cpu);
  std::latch inside(1);
  std::latch checked(1);
  std::optional<Device> in_context, elsewhere;
  std::thread a([&] {
    StreamContext ctx(Device(Device::gpu));
    in_context = default_device();
    inside.count_down();
    checked.wait();
  });
  std::thread b([&] {
    inside.wait();
    elsewhere = default_device();
    checked.count_down();
  });
  a.join();
  b.join();
  EXPECT_EQ(*in_context, Device(Device::gpu));
  EXPECT_EQ(*elsewhere, Device(Device::cpu));
  set_default_device(before);
}

// ======================= 7. Thread-local streams =======================

TEST(Threading, ThreadLocalStreamResolvesToOneRealStreamPerThread) {
  Watchdog wd;
  Stream handle = new_thread_local_stream(kCpu);
  EXPECT_TRUE(handle.is_thread_local_handle());
  std::optional<Stream> a1, a2, b1, b2;
  std::latch both(2);  // keep both threads alive together
  std::thread ta([&] {
    a1 = stream_from_thread_local_stream(handle);
    a2 = stream_from_thread_local_stream(handle);
    both.arrive_and_wait();
  });
  std::thread tb([&] {
    b1 = stream_from_thread_local_stream(handle);
    b2 = stream_from_thread_local_stream(handle);
    both.arrive_and_wait();
  });
  ta.join();
  tb.join();
  EXPECT_EQ(*a1, *a2);
  EXPECT_EQ(*b1, *b2);
  EXPECT_NE(*a1, *b1);
  EXPECT_FALSE(a1->is_thread_local_handle());
  EXPECT_FALSE(b1->is_thread_local_handle());
  Stream mine = stream_from_thread_local_stream(handle);
  EXPECT_NE(mine, *a1);
  EXPECT_NE(mine, *b1);
  EXPECT_EQ(stream_from_thread_local_stream(handle), mine);
}

TEST(Threading, ArraysBuiltThroughThreadLocalStreamEvaluateOnAnotherThread) {
  Watchdog wd;
  Stream handle = new_thread_local_stream(kCpu);
  std::optional<array> y;
  std::optional<Stream> real;
  std::thread builder([&] {
    real = stream_from_thread_local_stream(handle);
    array x({1.0f, 2.0f});
    y = add(multiply(x, x, handle), x, handle);
  });
  builder.join();  // the builder's thread-local stream now lives only through y
  EXPECT_EQ(y->stream(), *real);
  EXPECT_FALSE(y->stream().is_thread_local_handle());
  std::vector<float> got;
  std::thread evaluator([&] { got = values(*y); });
  evaluator.join();
  EXPECT_EQ(got, (std::vector<float>{2.0f, 6.0f}));
  EXPECT_NO_THROW(synchronize(handle));  // resolves to this thread's own real stream
}

// ======================= 8. Errors travel, nothing hangs =======================

TEST(Threading, KernelErrorIsRethrownByEvalForEveryDependent) {
  Watchdog wd;
  Stream s1 = new_stream(kCpu);
  Stream s2 = new_stream(kCpu);
  array x({1.0f, 2.0f});
  array bad = custom({x}, {2}, s1, throws("kernel failed: dependents"));
  array d1 = add(bad, x, s1);
  array d2 = multiply(d1, x, s2);
  array d3 = add(bad, d2, s2);
  expect_kernel_error([&] { eval(d3); }, "kernel failed: dependents");
  for (array a : {bad, d1, d2, d3}) {
    expect_kernel_error([&] { eval(a); }, "kernel failed: dependents");
    expect_kernel_error([&] { a.eval(); }, "kernel failed: dependents");
    EXPECT_FALSE(a.is_available());
  }
}

TEST(Threading, KernelErrorOnAWorkerIsRethrownOnTheCaller) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  std::atomic<std::thread::id> kernel_thread{};
  array bad = custom({array(1.0f)}, {}, s, [&](const std::vector<array>&, array&) {
    kernel_thread.store(std::this_thread::get_id());
    throw std::runtime_error("kernel failed: worker");
  });
  array dependent = add(bad, array(1.0f), s);
  EvalHandle h = async_eval(dependent);
  while (!detail::is_complete(dependent.desc())) std::this_thread::sleep_for(1ms);  // ran elsewhere
  EXPECT_NE(kernel_thread.load(), std::this_thread::get_id());
  expect_kernel_error([&] { h.wait(); }, "kernel failed: worker");
  expect_kernel_error([&] { eval(dependent); }, "kernel failed: worker");
  expect_kernel_error([&] { (void)dependent.item<float>(); }, "kernel failed: worker");
}

TEST(Threading, KernelErrorIsRethrownByItemOnAnotherThread) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  array bad = custom({array(1.0f)}, {}, s, throws("kernel failed: item"));
  array dependent = bad * 2.0f;
  std::thread t([&] {
    expect_kernel_error([&] { (void)dependent.item<float>(); }, "kernel failed: item");
    expect_kernel_error([&] { (void)bad.item<float>(); }, "kernel failed: item");
  });
  t.join();
  expect_kernel_error([&] { (void)dependent.item<float>(); }, "kernel failed: item");
}

TEST(Threading, KernelErrorIsRethrownByAsyncEvalHandleOnAnyThread) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  array bad = custom({array(1.0f)}, {}, s, throws("kernel failed: handle", 50ms));
  array dependent = add(bad, array(1.0f), s);
  EvalHandle h = async_eval(dependent);
  on_threads(4, [&](int) { expect_kernel_error([&] { h.wait(); }, "kernel failed: handle"); });
  expect_kernel_error([&] { h.wait(); }, "kernel failed: handle");
  EXPECT_TRUE(h.ready());
}

TEST(Threading, StreamKeepsWorkingAfterKernelError) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  array bad = custom({array(1.0f)}, {}, s, throws("kernel failed: stream"));
  array dependent = add(bad, array(1.0f), s);
  expect_kernel_error([&] { eval(dependent); }, "kernel failed: stream");
  EXPECT_NO_THROW(synchronize(s));
  array good = add(array({1.0f, 2.0f}), array(1.0f), s);
  EXPECT_EQ(values(good), (std::vector<float>{2.0f, 3.0f}));
  array later = custom({good}, {2}, s, sleep_then_add(1ms, 1.0f));
  EXPECT_NO_THROW(async_eval(later).wait());
  EXPECT_EQ(values(later), (std::vector<float>{3.0f, 4.0f}));
}

TEST(Threading, KernelErrorTravelsAcrossStreamsToAParkedConsumer) {
  Watchdog wd;
  Stream s1 = new_stream(kCpu);
  Stream s2 = new_stream(kCpu);
  array bad = custom({array(1.0f)}, {}, s1, throws("kernel failed: parked", 200ms));
  array consumer = add(bad, array(1.0f), s2);  // s2 parks on bad until it fails
  array after = add(array(5.0f), array(1.0f), s2);
  EvalHandle hc = async_eval(consumer);
  EvalHandle ha = async_eval(after);
  expect_kernel_error([&] { hc.wait(); }, "kernel failed: parked");
  ha.wait();
  EXPECT_EQ(after.item<float>(), 6.0f);
}

class ThreadingFailingNode : public ::testing::TestWithParam<int> {};

// Many threads wait on one failing node, through eval, item, their own handles and a shared
// handle; every one of them gets the error.
TEST_P(ThreadingFailingNode, EveryWaiterGetsTheError) {
  Watchdog wd;
  const int num_threads = GetParam();
  std::vector<Stream> streams = {new_stream(kCpu), new_stream(kCpu), new_stream(kCpu)};
  for (int round = 0; round < 5; ++round) {
    array bad = custom({array(1.0f)}, {}, streams[0], throws("kernel failed: waiters", 100ms));
    EvalHandle shared = async_eval(bad);
    std::atomic<int> got_error{0};
    std::latch start(num_threads);
    on_threads(num_threads, [&](int t) {
      array dependent = add(bad, array(static_cast<float>(t)), streams[t % 3]);
      start.arrive_and_wait();
      try {
        switch (t % 4) {
          case 0: eval(dependent); break;
          case 1: (void)dependent.item<float>(); break;
          case 2: async_eval(dependent).wait(); break;
          case 3: shared.wait(); break;
        }
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == "kernel failed: waiters") got_error.fetch_add(1);
      }
    });
    ASSERT_EQ(got_error.load(), num_threads) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(ThreadingCounts, ThreadingFailingNode, ::testing::Values(2, 4, 16), threads_name);

// As MLX's synchronize raises a stream's errors: a kernel failure that no eval, wait or item
// has reported comes out of the next synchronize of the stream it failed on, once, on
// whichever thread synchronizes. One already reported through an array does not come again.
TEST(Threading, SynchronizeRethrowsAnUnreportedKernelErrorOnce) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  Stream other = new_stream(kCpu);
  array bad = custom({array(1.0f)}, {}, s, throws("kernel failed: synchronize"));
  array downstream = custom({bad}, {}, other, then_add([] {}));
  async_eval(downstream);
  EXPECT_NO_THROW(synchronize(other));  // it failed on s; other only passed it on
  std::thread([&] { expect_kernel_error([&] { synchronize(s); }, "kernel failed: synchronize"); }).join();
  EXPECT_NO_THROW(synchronize(s));
  expect_kernel_error([&] { eval(bad); }, "kernel failed: synchronize");  // the array keeps it
  expect_kernel_error([&] { eval(downstream); }, "kernel failed: synchronize");

  // Reported by eval (here through a dependent on another stream): synchronize stays quiet.
  array bad2 = custom({array(1.0f)}, {}, s, throws("kernel failed: reported"));
  array after2 = custom({bad2}, {}, other, then_add([] {}));
  EvalHandle h = async_eval(after2);
  expect_kernel_error([&] { h.wait(); }, "kernel failed: reported");
  EXPECT_NO_THROW(synchronize(s));
  EXPECT_NO_THROW(synchronize(other));

  // synchronize reports the oldest unreported failure, and the later ones on the stream with
  // it; one an eval reported leaves the next for synchronize. The stream keeps working.
  array first = custom({array(1.0f)}, {}, s, throws("kernel failed: first"));
  array second = custom({array(1.0f)}, {}, s, throws("kernel failed: second"));
  async_eval(first);
  async_eval(second);
  expect_kernel_error([&] { synchronize(s); }, "kernel failed: first");
  EXPECT_NO_THROW(synchronize(s));
  array third = custom({array(1.0f)}, {}, s, throws("kernel failed: third"));
  array fourth = custom({array(1.0f)}, {}, s, throws("kernel failed: fourth"));
  async_eval(third);
  async_eval(fourth);
  expect_kernel_error([&] { eval(third); }, "kernel failed: third");
  expect_kernel_error([&] { synchronize(s); }, "kernel failed: fourth");
  EXPECT_NO_THROW(synchronize(s));
  array fine = custom({array(1.0f)}, {}, s, then_add([] {}, 1.0f));
  EXPECT_EQ(values(fine), std::vector<float>{2.0f});
  EXPECT_NO_THROW(synchronize(s));
}

// ======================= 9. Memory =======================

TEST(Threading, ActiveMemoryReturnsToStartAfterGraphsAreDropped) {
  Watchdog wd;
  std::vector<Stream> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(new_stream(kCpu));
  const size_t start = get_active_memory();
  {
    std::vector<array> kept_unevaluated;
    std::mutex mu;
    on_threads(8, [&](int t) {
      std::vector<array> local;
      array x = arange(0.0, 100.0);
      for (int k = 0; k < 50; ++k) {
        array y = add(x, array(static_cast<float>(k)), streams[(t + k) % 4]);
        array z = multiply(y, y, streams[(t + k + 1) % 4]);
        switch (k % 3) {
          case 0: z.eval(); break;
          case 1: async_eval(z); break;  // handle dropped, work still queued
          case 2: break;                 // never evaluated
        }
        local.push_back(z);
      }
      std::lock_guard<std::mutex> lock(mu);
      kept_unevaluated.push_back(local.back());
    });
    EXPECT_GT(get_active_memory(), start);
  }
  for (const auto& s : streams) synchronize(s);
  EXPECT_EQ(get_active_memory(), start);
}

// A buffer still read by a slow task on one stream is not handed out again while other
// streams allocate and write same-sized buffers.
TEST(Threading, BufferStillReadByAnotherStreamIsNotReused) {
  Watchdog wd;
  const int n = 256;
  Stream reader_stream = new_stream(kCpu);
  std::vector<Stream> churn_streams = {new_stream(kCpu), new_stream(kCpu)};
  array x = arange(0.0, static_cast<double>(n), churn_streams[0]);
  x.eval();
  const void* x_buffer = x.data<float>();

  std::latch reading(1);
  array copy = custom({x}, {n}, reader_stream, then_add([&] {
                        reading.count_down();
                        std::this_thread::sleep_for(500ms);
                      }));
  EvalHandle h = async_eval(copy);
  reading.wait();
  x = array(0.0f);  // the running task now holds the only reference to x's buffer

  std::atomic<int> reused{0};
  on_threads(2, [&](int t) {
    for (int k = 0; k < 1000 && !detail::is_complete(copy.desc()); ++k) {
      array junk = full({n}, -1.0f, churn_streams[t]);
      if (k % 2 == 0) {
        junk.eval();
      } else {
        async_eval(junk).wait();  // computed by a worker, from its own cache shard
      }
      // Checked after the allocation: if the reader still runs, it ran during it.
      if (junk.data<float>() == x_buffer && !detail::is_complete(copy.desc())) reused.fetch_add(1);
    }
  });
  h.wait();
  EXPECT_EQ(reused.load(), 0) << "x's buffer was handed out while a task still read it";
  std::vector<float> got = values(copy);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], static_cast<float>(i));
}

// The same through a view: a reshaped view shares the buffer and keeps it alive.
TEST(Threading, BufferReadThroughAViewIsNotReusedWhileTheReaderRuns) {
  Watchdog wd;
  const int n = 256;
  Stream reader_stream = new_stream(kCpu);
  Stream churn_stream = new_stream(kCpu);
  array x = arange(0.0, static_cast<double>(n), churn_stream);
  array view = reshape(x, {16, 16}, churn_stream);
  view.eval();
  const void* x_buffer = x.data<float>();
  ASSERT_EQ(view.data<float>(), x_buffer);  // a view, not a copy

  std::latch reading(1);
  array copy = custom({view}, {16, 16}, reader_stream, then_add([&] {
                        reading.count_down();
                        std::this_thread::sleep_for(300ms);
                      }));
  EvalHandle h = async_eval(copy);
  reading.wait();
  x = array(0.0f);
  view = array(0.0f);

  int reused = 0;
  for (int k = 0; k < 1000 && !detail::is_complete(copy.desc()); ++k) {
    array junk = full({n}, -1.0f, churn_stream);
    junk.eval();
    if (junk.data<float>() == x_buffer && !detail::is_complete(copy.desc())) ++reused;
  }
  h.wait();
  EXPECT_EQ(reused, 0) << "the buffer behind a view was handed out while a task still read it";
  std::vector<float> got = values(copy);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], static_cast<float>(i));
}

// ======================= 11. Backpressure is per stream =======================

namespace {

// Long chains of slow nodes: one evaluated by a thread of its own, the others through
// async_eval so that every pool worker is busy with one. `stop` makes the rest fast.
struct HeavyLoad {
  std::atomic<bool> stop{false};
  std::vector<array> tails;
  std::vector<EvalHandle> handles;
  std::thread evaluator;

  HeavyLoad(int chains, int length, std::chrono::milliseconds per_node) {
    for (int c = 0; c < chains; ++c) {
      Stream s = new_stream(kCpu);
      array x(0.0f);
      for (int i = 0; i < length; ++i) {
        x = custom({x}, {}, s, then_add([this, per_node] {
                     if (!stop.load()) std::this_thread::sleep_for(per_node);
                   }, 1.0f));
      }
      tails.push_back(x);
    }
    for (size_t c = 1; c < tails.size(); ++c) handles.push_back(async_eval(tails[c]));
    evaluator = std::thread([this] { tails[0].eval(); });
  }
  bool any_finished() const {
    return std::any_of(tails.begin(), tails.end(), [](const array& a) { return detail::is_complete(a.desc()); });
  }
  void finish() {
    stop.store(true);
    evaluator.join();
    for (auto& h : handles) h.wait();
  }
};

}  // namespace

TEST(Threading, HeavyEvaluationDoesNotStallSmallEvalsOnAnotherStream) {
  Watchdog wd;
  const int workers = detail::WorkerPool::instance().num_workers();
  HeavyLoad heavy(workers + 1, 2000, 5ms);  // about 10 s per chain
  Stream mine = new_stream(kCpu);
  int wrong = 0;
  for (int k = 0; k < 100; ++k) {
    array y = add(multiply(array(static_cast<float>(k)), array(2.0f), mine), array(1.0f), mine);
    if (y.item<float>() != 2.0f * k + 1.0f) ++wrong;
  }
  bool heavy_still_running = !heavy.any_finished();
  heavy.finish();
  EXPECT_EQ(wrong, 0);
  EXPECT_TRUE(heavy_still_running) << "the small evaluations waited for the heavy ones";
}

TEST(Threading, HeavyEvaluationDoesNotStallAsyncEvalsOnAnotherStream) {
  Watchdog wd;
  const int workers = detail::WorkerPool::instance().num_workers();
  HeavyLoad heavy(workers + 1, 2000, 5ms);
  Stream mine = new_stream(kCpu);
  int wrong = 0;
  for (int k = 0; k < 100; ++k) {
    array y = add(multiply(array(static_cast<float>(k)), array(2.0f), mine), array(1.0f), mine);
    async_eval(y).wait();
    if (y.item<float>() != 2.0f * k + 1.0f) ++wrong;
  }
  bool heavy_still_running = !heavy.any_finished();
  heavy.finish();
  EXPECT_EQ(wrong, 0);
  EXPECT_TRUE(heavy_still_running) << "the small evaluations waited for the heavy ones";
}

// The small graphs here use two streams of their own: one part runs on the waiting thread,
// the other must not sit behind the heavy strands that occupy every worker.
TEST(Threading, HeavyEvaluationDoesNotStallSmallTwoStreamEvals) {
  Watchdog wd;
  const int workers = detail::WorkerPool::instance().num_workers();
  HeavyLoad heavy(workers + 1, 1000, 20ms);  // about 20 s per chain
  Stream mine = new_stream(kCpu);
  Stream mine_too = new_stream(kCpu);
  int wrong = 0;
  for (int k = 0; k < 20; ++k) {
    array a = multiply(array(static_cast<float>(k)), array(2.0f), mine_too);
    array y = add(a, array(1.0f), mine);
    if (y.item<float>() != 2.0f * k + 1.0f) ++wrong;
  }
  bool heavy_still_running = !heavy.any_finished();
  heavy.finish();
  EXPECT_EQ(wrong, 0);
  EXPECT_TRUE(heavy_still_running) << "the small evaluations waited for the heavy ones";
}

// ======================= synchronize, handles, thread-unsafe streams =======================

TEST(Threading, SynchronizeFromAnotherThreadWaitsForEarlierSubmissions) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  Stream producer = new_stream(kCpu);
  std::optional<array> last;
  std::latch submitted(1);
  std::thread submitter([&] {
    array slow_input = custom({array(0.0f)}, {}, producer, sleep_then_add(100ms, 1.0f));
    array x = slow_input;
    for (int i = 0; i < 10; ++i) x = custom({x}, {}, s, sleep_then_add(10ms, 1.0f));
    last = x;
    async_eval(x);
    submitted.count_down();
  });
  bool available_after_sync = false;
  std::thread syncer([&] {
    submitted.wait();
    synchronize(s);
    available_after_sync = last->is_available();
  });
  submitter.join();
  syncer.join();
  EXPECT_TRUE(available_after_sync);
  EXPECT_EQ(last->item<float>(), 11.0f);
}

// synchronize waits for what was submitted before it, not for whatever other threads keep
// submitting afterwards. Every worker is busy with long kernels, so the stream is still
// waiting for a worker when synchronize is called and the caller may run it itself.
TEST(Threading, SynchronizeReturnsWhileOtherThreadsKeepSubmitting) {
  Watchdog wd(std::chrono::seconds(300));
  const int workers = detail::WorkerPool::instance().num_workers();
  HeavyLoad heavy(workers + 1, 200, 500ms);
  Stream s = new_stream(kCpu);
  std::atomic<bool> stop{false};
  auto spin = [&stop](const std::vector<array>& in, array& out) {
    auto until = std::chrono::steady_clock::now() + 100us;
    while (!stop.load() && std::chrono::steady_clock::now() < until) {
    }
    add_constant(in, out, 1.0f);
  };
  std::vector<std::thread> submitters;
  for (int t = 0; t < 2; ++t) {
    submitters.emplace_back([&] {
      while (!stop.load()) {
        array x(0.0f);
        for (int i = 0; i < 256; ++i) x = custom({x}, {}, s, spin);
        async_eval(x);
      }
    });
  }
  while (s.state()->strand->queued() < 2000) std::this_thread::sleep_for(1ms);
  std::atomic<bool> returned{false};
  std::thread syncer([&] {
    synchronize(s);
    returned.store(true);
  });
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!returned.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  bool returned_in_time = returned.load();
  stop.store(true);
  heavy.stop.store(true);
  for (auto& t : submitters) t.join();
  syncer.join();
  heavy.finish();
  synchronize(s);
  EXPECT_TRUE(returned_in_time) << "synchronize kept running work submitted after it was called";
}

TEST(Threading, AsyncEvalHandleCanBeWaitedOnByOtherThreads) {
  Watchdog wd;
  Stream s = new_stream(kCpu);
  array x = custom({array({1.0f, 2.0f})}, {2}, s, sleep_then_add(100ms, 1.0f));
  array y = x * 3.0f;
  EvalHandle h = async_eval(y);
  std::atomic<int> ready_after_wait{0};
  on_threads(4, [&](int) {
    EvalHandle copy = h;
    copy.wait();
    copy.wait();  // any number of times
    if (copy.ready() && y.is_available()) ready_after_wait.fetch_add(1);
  });
  EXPECT_EQ(ready_after_wait.load(), 4);
  EXPECT_EQ(values(y), (std::vector<float>{6.0f, 9.0f}));
}

TEST(Threading, ThreadUnsafeStreamIsSafeFromManyThreads) {
  Watchdog wd;
  Stream s = new_thread_unsafe_stream(kCpu);
  EXPECT_FALSE(s.is_thread_local_handle());
  array shared_base = arange(0.0, 8.0, s);
  std::atomic<int> wrong{0};
  on_threads(16, [&](int t) {
    for (int k = 0; k < 50; ++k) {
      array y = add(multiply(shared_base, array(static_cast<float>(t)), s), array(static_cast<float>(k)), s);
      std::vector<float> v = (k % 2 == 0) ? values(y) : (async_eval(y).wait(), values(y));
      for (int i = 0; i < 8; ++i) {
        if (v[i] != static_cast<float>(i * t + k)) wrong.fetch_add(1);
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_NO_THROW(synchronize(s));
}
