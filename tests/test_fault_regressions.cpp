// Fault paths of the core that need no injected failures: reading a node's inputs while its
// evaluation detaches them, the pool's queue (one entry per item), and parallel loops that
// throw. The injected-failure sweeps live in tests/fault/.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "runtime/pool.h"
#include "watchdog.h"

using namespace braid;

namespace {

// Counts its turns; used to check how often the pool runs an item.
class CountingItem : public detail::WorkItem {
 public:
  void run_work() override { runs.fetch_add(1); }
  std::atomic<int> runs{0};
};

}  // namespace

// The node's inputs are swapped out by whichever thread completes it; a reader on another
// thread gets a consistent copy (ThreadSanitizer reports the race if it reads unlocked).
TEST(Faults, InputsCanBeReadWhileAnotherThreadCompletesTheNode) {
  braid_test::Watchdog watchdog;
  for (int round = 0; round < 200; ++round) {
    array a = full({64}, 1.0f);
    array b = full({64}, 2.0f);
    array sum = add(a, b);
    std::atomic<bool> go{false};
    std::thread reader([&] {
      while (!go.load()) {
      }
      for (int i = 0; i < 50; ++i) {
        auto ins = sum.inputs();
        EXPECT_TRUE(ins.empty() || ins.size() == 2);
      }
    });
    go.store(true);
    sum.eval();
    reader.join();
    EXPECT_EQ(sum.data<float>()[63], 3.0f);
  }
}

// Posting an item that is still waiting for a worker does not queue it twice (the queue is
// intrusive), and every queued item runs.
TEST(Faults, AnItemPostedTwiceBeforeItRunsRunsOnce) {
  braid_test::Watchdog watchdog;
  auto& pool = detail::WorkerPool::instance();
  for (int round = 0; round < 100; ++round) {
    auto item = std::make_shared<CountingItem>();
    pool.post(item);
    pool.post(item);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (item->runs.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    // Give a wrongly queued second entry time to run.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_GE(item->runs.load(), 1);
    EXPECT_LE(item->runs.load(), 2);  // a second post after the first turn began may run again
  }
}

// An item posted for several workers runs once per share.
TEST(Faults, AnItemPostedForSeveralWorkersRunsOncePerShare) {
  braid_test::Watchdog watchdog;
  auto& pool = detail::WorkerPool::instance();
  auto item = std::make_shared<CountingItem>();
  pool.post(item, 3);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (item->runs.load() < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(item->runs.load(), 3);
}

// A parallel loop whose body throws rethrows on the caller, and once it has returned no
// worker calls the body again: the body lives in the caller's frame.
TEST(Faults, ParallelForNeverCallsTheBodyAfterItReturns) {
  braid_test::Watchdog watchdog;
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> calls{0};
    std::atomic<bool> returned{false};
    std::atomic<int> calls_after_return{0};
    auto body = [&](int64_t begin, int64_t) {
      if (returned.load()) calls_after_return.fetch_add(1);
      calls.fetch_add(1);
      if (begin == 0) throw std::runtime_error("chunk 0 failed");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    };
    EXPECT_THROW(detail::parallel_for(64, 1, body), std::runtime_error);
    returned.store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(calls_after_return.load(), 0);
    EXPECT_GE(calls.load(), 1);
  }
}

// Every index of a parallel loop is covered by exactly one chunk, each chunk lies in [0, n)
// and is at least `grain` long except the last one, for loop sizes around the lane and
// chunk boundaries, with several threads running loops at once.
TEST(Faults, ParallelForCoversEveryIndexOnce) {
  braid_test::Watchdog watchdog;
  auto check = [](int64_t n, int64_t grain) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<int> bad{0};
    detail::parallel_for(n, grain, [&](int64_t begin, int64_t end) {
      if (begin < 0 || end > n || begin >= end || (end - begin < grain && end != n)) bad.fetch_add(1);
      for (int64_t i = std::max<int64_t>(begin, 0); i < std::min(end, n); ++i)
        hits[static_cast<size_t>(i)].fetch_add(1);
    });
    EXPECT_EQ(bad.load(), 0) << "n " << n << ", grain " << grain;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1)
          << "index " << i << " of n " << n << ", grain " << grain;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&check, t] {
      for (int64_t n : {1, 2, 3, 5, 7, 8, 9, 63, 64, 65, 127, 1000, 4099}) {
        for (int64_t grain : {1, 2, 3, 7, 64}) check(n + t, grain);
      }
    });
  }
  for (auto& th : threads) th.join();
}

// Tearing down a long chain whose nodes are shared with a live array keeps the shared part.
TEST(Faults, TearingDownAChainKeepsNodesOthersStillHold) {
  braid_test::Watchdog watchdog;
  array keep = full({4}, 1.0f);
  {
    array x = keep;
    for (int i = 0; i < 100000; ++i) x = x + 1.0f;
    array middle = x;
    for (int i = 0; i < 100000; ++i) x = x + 1.0f;
    x = array(0.0f);  // drops the top half; `middle` still holds the bottom half
    EXPECT_EQ(middle.data<float>()[0], 100001.0f);
  }
  EXPECT_EQ(keep.data<float>()[3], 1.0f);
}

// Empty arrays whose other dimensions multiply past 2^63 are valid, wherever the zero is
// (UndefinedBehaviorSanitizer checks the stride arithmetic).
TEST(Faults, EmptyArraysWithHugeOtherDimensionsAreValid) {
  for (Shape shape : {Shape{0, 65536, 65536, 65536, 65536}, Shape{65536, 65536, 65536, 65536, 0}}) {
    array z = zeros(shape, float32);
    EXPECT_EQ(z.size(), 0u);
    array t = transpose(z, {4, 3, 2, 1, 0});
    array s = sum(t + 1.0f);
    EXPECT_EQ(s.item<float>(), 0.0f);
  }
}
