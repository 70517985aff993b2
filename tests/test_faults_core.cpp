// Issue 10, core part: sizes beyond 32 bits (reshape, BLAS), stream indices past INT_MAX,
// and per-thread defaults used after the thread's own thread_locals died.
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "runtime/pool.h"
#include "runtime/registry.h"
#include "watchdog.h"

using namespace braid;
using braid_test::Watchdog;
using namespace std::chrono_literals;

namespace braid::cpu {
// Defined in src/backend/cpu/matmul.cpp.
int blas_int(int64_t value, const char* what);
bool blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool& trans, int64_t& ld);
}  // namespace braid::cpu

namespace {

const Device kCpu = Device::cpu;

std::vector<float> values(array a) {
  const float* p = a.data<float>();
  return std::vector<float>(p, p + a.size());
}

// The message of the std::invalid_argument that `fn` throws ("" if it throws none).
std::string invalid_argument_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Whether some live stream has this index on the CPU.
bool is_live(int index) {
  try {
    Stream(index, kCpu);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// Polls until no live stream has `index` (a worker may drop its last reference a moment late).
bool released_soon(int index) {
  for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
    if (!is_live(index)) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// ======================= 9. reshape sizes beyond 32 bits =======================

// Building the graph is enough: the 4 GiB array is never evaluated.
TEST(FaultsCore, ReshapeRejectsAnInferredDimensionBeyondInt32) {
  array big = zeros({65536, 65537}, uint8);
  std::string msg = invalid_argument_of([&] { reshape(big, {-1}); });
  EXPECT_TRUE(starts_with(msg, "[reshape]")) << msg;
  EXPECT_NE(msg.find("4295032832"), std::string::npos) << msg;
}

TEST(FaultsCore, ReshapeInferringExactly2To31NamesReshapeAndTheDimension) {
  array big = zeros({32768, 65536}, uint8);
  std::string msg = invalid_argument_of([&] { reshape(big, {-1}); });
  EXPECT_TRUE(starts_with(msg, "[reshape]")) << msg;
  EXPECT_NE(msg.find("2147483648"), std::string::npos) << msg;
  // One less fits.
  array fits = zeros({32767, 65536}, uint8);
  EXPECT_EQ(reshape(fits, {-1}).shape(), (Shape{32767 * 65536}));
  EXPECT_EQ(reshape(big, {2, -1}).shape(), (Shape{2, 1073741824}));
}

// 65536^4 = 2^64 wraps to 0 in 64 bits, the size of an empty array.
TEST(FaultsCore, ReshapeGivenDimensionsWhoseProductWrapsDoNotMatch) {
  array empty = zeros({0}, uint8);
  std::string msg = invalid_argument_of([&] { reshape(empty, {65536, 65536, 65536, 65536}); });
  EXPECT_TRUE(starts_with(msg, "[reshape] Cannot reshape")) << msg;
  msg = invalid_argument_of([&] { reshape(empty, {65536, 65536, 65536, 65536, -1}); });
  EXPECT_TRUE(starts_with(msg, "[reshape]")) << msg;
  // A zero dimension still makes the product 0.
  EXPECT_EQ(reshape(empty, {65536, 0, 65536, 65536}).size(), 0u);
}

// ======================= 11. BLAS's int =======================

TEST(FaultsCore, BlasNarrowingIsCheckedAtTheIntLimit) {
  EXPECT_EQ(cpu::blas_int(INT_MAX, "leading dimension"), INT_MAX);
  EXPECT_EQ(cpu::blas_int(0, "row count"), 0);
  std::string msg = invalid_argument_of([] { cpu::blas_int(int64_t{INT_MAX} + 1, "leading dimension"); });
  EXPECT_TRUE(starts_with(msg, "[matmul]")) << msg;
  EXPECT_NE(msg.find("2147483648"), std::string::npos) << msg;
  EXPECT_FALSE(invalid_argument_of([] { cpu::blas_int(-1, "row count"); }).empty());
}

// A row stride past INT_MAX (a [2, 3] view into rows of 2^31 floats) is copied, not passed on.
TEST(FaultsCore, MatmulCopiesAnOperandWhoseLeadingDimensionExceedsInt) {
  bool trans = true;
  int64_t ld = 0;
  EXPECT_TRUE(cpu::blas_layout(2, 3, INT_MAX, 1, trans, ld));
  EXPECT_FALSE(trans);
  EXPECT_EQ(ld, INT_MAX);
  EXPECT_FALSE(cpu::blas_layout(2, 3, int64_t{INT_MAX} + 1, 1, trans, ld));
  EXPECT_FALSE(cpu::blas_layout(3, 2, 1, int64_t{1} << 40, trans, ld));  // transposed
  EXPECT_TRUE(cpu::blas_layout(3, 2, 1, 3, trans, ld));
  EXPECT_TRUE(trans);
}

// ======================= 10. stream indices past INT_MAX =======================

TEST(FaultsCore, StreamIndicesStayNonNegativeAndDistinctPastTheIntLimit) {
  Watchdog wd;
  auto& registry = detail::StreamRegistry::instance();
  registry.start_stream_indices_at(int64_t{INT_MAX} - 3);
  std::vector<Stream> made;
  for (int i = 0; i < 16; ++i) made.push_back(new_stream(kCpu));
  std::set<int> seen;
  for (const auto& s : registry.all()) {
    EXPECT_GE(s->index, 0);
    EXPECT_TRUE(seen.insert(s->index).second) << "two live streams share index " << s->index;
  }
  for (const auto& s : made) {
    EXPECT_GE(s.index, 0);
    EXPECT_FALSE(s.is_thread_local_handle());
    EXPECT_EQ(Stream(s.index, kCpu).state(), s.state());
    array y = add(array({1.0f, 2.0f}), array({3.0f, 4.0f}), s);
    EXPECT_EQ(y.stream(), s);
    EXPECT_EQ(values(y), (std::vector<float>{4.0f, 6.0f}));
  }
}

TEST(FaultsCore, ANewStreamNeverTakesTheIndexOfALiveOne) {
  auto& registry = detail::StreamRegistry::instance();
  Stream first = new_stream(kCpu);
  registry.start_stream_indices_at(first.index);
  Stream second = new_stream(kCpu);
  EXPECT_NE(second.index, first.index);
  EXPECT_EQ(Stream(first.index, kCpu).state(), first.state());
  EXPECT_EQ(Stream(second.index, kCpu).state(), second.state());
}

// A server that makes short-lived streams for ever wraps the index range and keeps going.
TEST(FaultsCore, StreamsCanBeMadeForEverOnceTheIndicesWrap) {
  Watchdog wd;
  auto& registry = detail::StreamRegistry::instance();
  Stream kept = new_stream(kCpu);
  registry.start_stream_indices_at(int64_t{INT_MAX} - 100);
  for (int i = 0; i < 2000; ++i) {
    Stream s = new_stream(kCpu);
    ASSERT_GE(s.index, 0);
    ASSERT_NE(s.index, kept.index);
    if (i % 100 == 0) EXPECT_EQ(values(multiply(array({3.0f}), array({2.0f}), s)), (std::vector<float>{6.0f}));
  }
  EXPECT_EQ(Stream(kept.index, kCpu).state(), kept.state());
}

TEST(FaultsCore, ThreadLocalHandlesStayNegativeAndDistinctPastTheIntLimit) {
  Watchdog wd;
  auto& registry = detail::StreamRegistry::instance();
  registry.start_handle_indices_at(int64_t{INT_MAX} - 3);  // index -1 - INT_MAX is INT_MIN
  std::vector<Stream> handles;
  for (int i = 0; i < 8; ++i) handles.push_back(new_thread_local_stream(kCpu));
  std::set<int> indices, real;
  for (const auto& h : handles) {
    EXPECT_LT(h.index, 0);
    EXPECT_TRUE(h.is_thread_local_handle());
    EXPECT_TRUE(indices.insert(h.index).second) << "two live handles share index " << h.index;
    Stream r = stream_from_thread_local_stream(h);
    EXPECT_FALSE(r.is_thread_local_handle());
    EXPECT_TRUE(real.insert(r.index).second);
    array y = add(array({1.0f}), array({2.0f}), h);
    EXPECT_EQ(y.stream(), r);
    EXPECT_EQ(values(y), (std::vector<float>{3.0f}));
  }
}

TEST(FaultsCore, ANewHandleNeverTakesTheIndexOfALiveOne) {
  auto& registry = detail::StreamRegistry::instance();
  registry.start_handle_indices_at(1000);
  Stream first = new_thread_local_stream(kCpu);
  registry.start_handle_indices_at(1000);
  Stream second = new_thread_local_stream(kCpu);
  EXPECT_NE(second.index, first.index);
  EXPECT_NE(stream_from_thread_local_stream(second), stream_from_thread_local_stream(first));
}

// The thread's map from handle to real stream must not hand a dead handle's stream to a new
// handle that reuses its index.
TEST(FaultsCore, AHandleThatReusesADeadHandlesIndexGetsItsOwnStream) {
  auto& registry = detail::StreamRegistry::instance();
  registry.start_handle_indices_at(2000);
  std::optional<Stream> dead = new_thread_local_stream(kCpu);
  const int index = dead->index;
  Stream dead_real = stream_from_thread_local_stream(*dead);
  dead.reset();
  registry.start_handle_indices_at(2000);
  Stream handle = new_thread_local_stream(kCpu);
  ASSERT_EQ(handle.index, index);  // the index was free again
  Stream real = stream_from_thread_local_stream(handle);
  EXPECT_NE(real, dead_real);
  EXPECT_EQ(stream_from_thread_local_stream(handle), real);
}

// ======================= 5. defaults after the thread's thread_locals died =======================

// A thread_local whose destructor runs braid. Constructed before the thread first uses braid,
// it is destroyed after braid's per-thread state (reverse order of construction).
struct AtThreadExit {
  std::function<void()> fn;
  ~AtThreadExit() {
    if (fn) fn();
  }
};
thread_local AtThreadExit t_at_exit;

struct ExitResults {
  std::vector<float> computed;
  bool default_kept = false, context_applied = false, context_restored = false, handle_kept = false;
  int late_default = -1, late_handle_stream = -1;
};

// Runs in a dying thread's (or the process's) destructors: every per-thread entry point.
void use_braid_at_exit(ExitResults& r, const Stream& explicit_stream, const Stream& other, const Stream& handle) {
  Stream d = default_stream(kCpu);
  r.late_default = d.index;
  r.default_kept = default_stream(kCpu) == d;
  array x({1.0f, 2.0f, 3.0f});
  r.computed = values(multiply(add(x, x), x));
  set_default_stream(explicit_stream);
  {
    StreamContext ctx(other);
    r.context_applied = default_stream(kCpu) == other && to_stream({}) == other;
  }
  r.context_restored = default_stream(kCpu) == explicit_stream;
  Stream h = stream_from_thread_local_stream(handle);
  r.late_handle_stream = h.index;
  r.handle_kept = stream_from_thread_local_stream(handle) == h && values(add(x, x, handle))[2] == 6.0f;
}

TEST(FaultsCore, BraidWorksInAThreadLocalDestructorAfterTheThreadsDefaultsDied) {
  Watchdog wd;
  Stream explicit_stream = new_stream(kCpu);
  Stream other = new_stream(kCpu);
  Stream handle = new_thread_local_stream(kCpu);
  ExitResults r;
  std::thread t([&] {
    t_at_exit.fn = [&] { use_braid_at_exit(r, explicit_stream, other, handle); };
    // Now braid's per-thread state comes to life, after t_at_exit.
    default_stream(kCpu);
    stream_from_thread_local_stream(handle);
    StreamContext ctx(other);
  });
  t.join();
  EXPECT_EQ(r.computed, (std::vector<float>{2.0f, 8.0f, 18.0f}));
  EXPECT_TRUE(r.default_kept);
  EXPECT_TRUE(r.context_applied);
  EXPECT_TRUE(r.context_restored);
  EXPECT_TRUE(r.handle_kept);
  // What the dying thread made for itself is released once it is gone.
  ASSERT_GE(r.late_default, 0);
  EXPECT_TRUE(released_soon(r.late_default)) << "late default stream " << r.late_default << " leaked";
  EXPECT_TRUE(released_soon(r.late_handle_stream)) << "late handle stream " << r.late_handle_stream << " leaked";
}

// A static destructor runs after the main thread's thread_locals died. The child process
// checks its results and exits 0 only if they are right (and, under ASan, nothing leaked).
struct EvaluateAtExit {
  ~EvaluateAtExit() {
    Stream explicit_stream = new_stream(kCpu);
    Stream other = new_stream(kCpu);
    Stream handle = new_thread_local_stream(kCpu);
    ExitResults r;
    use_braid_at_exit(r, explicit_stream, other, handle);
    const bool ok = r.computed == std::vector<float>{2.0f, 8.0f, 18.0f} && r.default_kept && r.context_applied &&
                    r.context_restored && r.handle_kept;
    std::fprintf(stderr, ok ? "exit evaluation right\n" : "exit evaluation wrong\n");
    std::fflush(stderr);
    if (!ok) std::_Exit(1);
  }
};

TEST(FaultsCoreDeathTest, BraidWorksInAStaticDestructorAfterMainsDefaultsDied) {
  Watchdog wd;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // The pool and the defaults exist before the static, so their own exit work (if
        // any) comes after its destructor; the main thread's thread_locals die before it.
        detail::WorkerPool::instance();
        default_stream(kCpu);
        stream_from_thread_local_stream(new_thread_local_stream(kCpu));  // a used handle map
        static EvaluateAtExit at_exit;
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "exit evaluation right");
}

}  // namespace
