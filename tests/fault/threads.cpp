// Case 3: thread creation fails at each point of start-up (a container's pids limit, say).
// For k = 1 .. (threads braid starts at first use) + 1, the k-th pthread_create fails, and
// then, separately, every one from the k-th on. The first evaluation must give the right
// values (a smaller pool) or throw a clear exception; once threads can be created again,
// evaluation must work, from this thread and from others.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "cases.h"
#include "graphs.h"
#include "harness.h"
#include "inject.h"

namespace fault {
namespace {

using namespace braid;

enum { kThreadsSeen, kThreadsFailed, kFirstThrew };

int fail(const char* what, const std::string& detail) {
  add_note("%s: %s", what, detail.c_str());
  return 1;
}

// The first use of braid, with thread creation failing: right values, or a clear exception.
int first_use(int k, bool and_later, std::optional<CheckedGraph>& g, std::exception_ptr& first) {
  set_phase("first use of braid while thread creation fails (k=%d%s)", k, and_later ? " and later" : "");
  fail_thread_creation(k, and_later);
  try {
    BraidCall call;
    Stream a = new_stream(Device::cpu), b = new_stream(Device::cpu);
    g = small_graph(a, b);
    eval(g->outputs);
  } catch (...) {
    first = std::current_exception();
  }
  disarm_thread_creation();
  report().counts[kThreadsSeen] = threads_seen();
  report().counts[kThreadsFailed] = threads_failed();
  report().counts[kFirstThrew] = first ? 1 : 0;
  if (!first) {
    set_phase("reading the first eval's values");
    std::string wrong = check_values(*g);
    return wrong.empty() ? 0 : fail("first eval returned wrong values", wrong);
  }
  add_note("first eval threw %s", describe(first).c_str());
  try {
    std::rethrow_exception(first);
  } catch (const std::exception& e) {
    if (std::string(e.what()).empty()) return fail("first eval", "threw an exception with an empty message");
  } catch (...) {
    return fail("first eval", "threw something that is not a std::exception");
  }
  return 0;
}

// Once threads can be created again: eval from this thread, async_eval waited from others.
int usable_afterwards(const std::vector<Stream>& streams) {
  set_phase("thread creation allowed again: a fresh graph from this thread");
  {
    CheckedGraph h = sweep_graph(streams);
    try {
      eval(h.outputs);
    } catch (...) {
      return fail("evaluation after start-up", "threw " + describe(std::current_exception()));
    }
    std::string wrong = check_values(h);
    if (!wrong.empty()) return fail("evaluation after start-up", wrong);
  }
  set_phase("thread creation allowed again: async_eval, waited from other threads");
  CheckedGraph h = sweep_graph(streams);
  EvalHandle handle = async_eval(h.outputs);
  std::string results[2];
  std::thread waiters[2];
  for (int i = 0; i < 2; ++i) {
    waiters[i] = std::thread([&, i] {
      set_thread_exempt(true);
      try {
        handle.wait();
        results[i] = check_values(h);
      } catch (...) {
        results[i] = "threw " + describe(std::current_exception());
      }
    });
  }
  for (auto& w : waiters) w.join();
  for (const auto& r : results) {
    if (!r.empty()) return fail("async_eval after start-up", r);
  }
  return 0;
}

int thread_child(int pool, int k, bool and_later) {
  setenv("BRAID_NUM_THREADS", std::to_string(pool).c_str(), 1);
  std::optional<CheckedGraph> g;
  std::exception_ptr first;
  if (first_use(k, and_later, g, first) != 0) return 1;
  std::vector<Stream> streams = {new_stream(Device::cpu), new_stream(Device::cpu), new_stream(Device::cpu)};
  if (usable_afterwards(streams) != 0) return 1;
  if (g && first) {
    set_phase("the first graph again");
    try {
      eval(g->outputs);
      std::string wrong = check_values(*g);
      if (!wrong.empty()) return fail("the first graph re-evaluated", wrong);
    } catch (...) {
      // Keeping a failure stored on its nodes is allowed (DESIGN.md 1.8).
    }
  }
  set_phase("synchronize");
  if (std::string other = synchronize_all(streams); !other.empty())
    return fail("synchronize reported", other);
  return 0;
}

}  // namespace

int thread_creation(const Options& o) {
  const auto timeout = std::chrono::milliseconds(5000) * time_scale();
  int failed = 0, children = 0;
  std::map<std::string, int> first_errors;
  for (int pool : {4, 1}) {
    ChildResult clean = run_forked([&] { return thread_child(pool, 0, false); }, timeout);
    if (!clean.ok()) {
      print_failure("threads: clean start-up with BRAID_NUM_THREADS=" + std::to_string(pool), clean);
      ++failed;
      continue;
    }
    const int started = static_cast<int>(clean.report.counts[kThreadsSeen]);
    std::printf("threads: BRAID_NUM_THREADS=%d: braid starts %d threads at first use; failing k = 1..%d\n",
                pool, started, started + 1);
    std::fflush(stdout);
    for (bool and_later : {false, true}) {
      for (int k = 1; k <= started + 1; ++k) {
        ChildResult r = run_forked([&] { return thread_child(pool, k, and_later); }, timeout);
        ++children;
        char label[128];
        std::snprintf(label, sizeof label, "threads BRAID_NUM_THREADS=%d, pthread_create #%d%s fails", pool,
                      k, and_later ? " and every later one" : "");
        if (!r.ok()) {
          print_failure(label, r);
          ++failed;
          continue;
        }
        std::string note = r.report.note;
        if (r.report.counts[kFirstThrew]) ++first_errors[note.substr(0, note.find('\n'))];
        if (o.verbose) {
          std::printf("  %s: first eval %s (%" PRId64 " creations tried, %" PRId64 " failed)\n", label,
                      r.report.counts[kFirstThrew] ? "threw" : "returned right values",
                      r.report.counts[kThreadsSeen], r.report.counts[kThreadsFailed]);
        }
      }
    }
  }
  for (const auto& [what, count] : first_errors) std::printf("threads: %d x %s\n", count, what.c_str());
  std::printf("threads: %d start-up failure points tried; %d failed: %s\n", children, failed,
              failed ? "FAILED" : "passed");
  return failed ? 1 : 0;
}

}  // namespace fault
