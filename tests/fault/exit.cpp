// Case 4: the process ends while braid is busy, or braid is used while the process ends.
// Each program runs as a fresh process (this binary, `--run NAME`) whose main really returns
// (or calls std::exit), many times; every run must exit with status 0.
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "cases.h"
#include "graph/node.h"
#include "graphs.h"
#include "harness.h"

namespace fault {
namespace {

using namespace braid;
using namespace std::chrono_literals;

std::vector<Stream> four_streams() {
  return {new_stream(Device::cpu), new_stream(Device::cpu), new_stream(Device::cpu), new_stream(Device::cpu)};
}

// Set by the eval hook when a matmul kernel starts: lets a run end the process while one is
// certainly running (an exit a few microseconds after async_eval often beats the workers).
std::atomic<bool> g_matmul_started{false};
void note_matmul(const array& node) {
  if (std::strcmp(node.primitive().name(), "Matmul") == 0) g_matmul_started.store(true);
}

// Even runs end at once; odd runs as soon as a matmul kernel runs on a worker.
void wait_for_work_in_flight(int run) {
  if (run % 2 == 0) return;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!g_matmul_started.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
}

// Four streams of 256x256 matmul chains and other ops, submitted, then main returns.
int exit_in_flight(int run) {
  setenv("BRAID_NUM_THREADS", "8", 0);  // more kernels running at the moment of exit
  detail::set_eval_hook(note_matmul);
  std::vector<array> work = exit_workload(four_streams());
  async_eval(work);
  wait_for_work_in_flight(run);
  return 0;
}

// Another thread submits the same workload and calls std::exit while main waits on a stream.
int exit_from_thread(int run) {
  setenv("BRAID_NUM_THREADS", "8", 0);
  detail::set_eval_hook(note_matmul);
  auto streams = four_streams();
  std::vector<array> more = exit_workload(streams);
  std::thread quitter([&] {
    std::vector<array> work = exit_workload(streams);
    async_eval(work);
    wait_for_work_in_flight(run);
    std::exit(0);
  });
  eval(more);
  quitter.join();  // reached only when eval finishes before std::exit ends the process
  return 0;
}

// Streams that work is still in flight on when main returns (static-dtor's odd runs).
std::vector<Stream>* g_busy_streams = nullptr;

// On an odd run: a result on one busy stream whose input was queued on another by an
// async_eval at exit, a stream that the evaluation itself then never touches. The workers
// have stopped: the exiting thread must run that queue. Returns what is wrong, if anything.
std::string check_untouched_stream_input() {
  if (g_busy_streams == nullptr) return {};
  const Stream& other = (*g_busy_streams)[3];
  array x = sum(exp(divide(arange(0.0, 65536.0, other), array(65536.0f), other), other), other);
  async_eval({x});
  array total = add(x, array(1.0f), (*g_busy_streams)[0]);
  eval(total);
  double want = 1.0;
  for (int i = 0; i < 65536; ++i) want += std::exp(i / 65536.0);
  const double got = total.item<float>();
  if (std::fabs(got - want) <= 1e-4 * want) return {};
  return "sum over the untouched stream: " + std::to_string(got) + ", expected " + std::to_string(want);
}

// Builds and evaluates a multi-stream graph and checks it; used from destructors at exit. On
// streams with work in flight when there are some: a worker may hold one of them at exit.
void evaluate_and_check(const char* where) {
  try {
    std::vector<Stream> streams = g_busy_streams != nullptr
                                      ? std::vector<Stream>{(*g_busy_streams)[0], (*g_busy_streams)[1],
                                                            (*g_busy_streams)[2]}
                                      : std::vector<Stream>{new_stream(Device::cpu), new_stream(Device::cpu),
                                                            default_stream(Device::cpu)};
    CheckedGraph g = sweep_graph(streams);
    eval(g.outputs);
    std::string wrong = check_values(g);
    if (wrong.empty()) wrong = check_untouched_stream_input();
    if (!wrong.empty()) {
      std::fprintf(stderr, "%s: wrong values: %s\n", where, wrong.c_str());
      std::fflush(stderr);
      _exit(3);
    }
  } catch (...) {
    std::fprintf(stderr, "%s: threw %s\n", where, describe(std::current_exception()).c_str());
    std::fflush(stderr);
    _exit(4);
  }
}

// Like a cache flushed at exit: constructed before braid's own statics and thread-locals
// exist, so it is destroyed after them.
struct EvalInStaticDestructor {
  ~EvalInStaticDestructor() { evaluate_and_check("eval in a static destructor"); }
};

struct EvalInThreadLocalDestructor {
  const char* where;
  ~EvalInThreadLocalDestructor() { evaluate_and_check(where); }
};

int static_dtor(int run) {
  static EvalInStaticDestructor at_exit;
  CheckedGraph g =
      sweep_graph({new_stream(Device::cpu), new_stream(Device::cpu), default_stream(Device::cpu)});
  eval(g.outputs);
  if (!check_values(g).empty()) return 5;
  if (run % 2 == 1) {
    // Main returns with matmuls running on the streams the destructor then evaluates on.
    setenv("BRAID_NUM_THREADS", "8", 0);
    detail::set_eval_hook(note_matmul);
    g_busy_streams = new std::vector<Stream>(four_streams());  // deliberately kept to the end
    async_eval(exit_workload(*g_busy_streams));
    wait_for_work_in_flight(run);
  }
  return 0;
}

int thread_local_dtor() {
  // On a thread that ends: its thread_local dies after braid's thread-locals of that thread.
  std::thread t([] {
    thread_local EvalInThreadLocalDestructor at_thread_exit{
        "eval in a thread_local destructor (std::thread)"};
    (void)&at_thread_exit;
    CheckedGraph g =
        sweep_graph({new_stream(Device::cpu), new_stream(Device::cpu), default_stream(Device::cpu)});
    eval(g.outputs);
  });
  t.join();
  // On the main thread: destroyed by exit, after braid's thread-locals of the main thread.
  thread_local EvalInThreadLocalDestructor at_exit{"eval in a thread_local destructor (main thread)"};
  (void)&at_exit;
  CheckedGraph g =
      sweep_graph({new_stream(Device::cpu), new_stream(Device::cpu), default_stream(Device::cpu)});
  eval(g.outputs);
  return check_values(g).empty() ? 0 : 5;
}

// Runs `program` `runs` times; each must exit with status 0, promptly (its work takes a few
// milliseconds: an exit that takes seconds is waiting for something that will not come).
int repeat(const char* name, const char* program, int runs, const Options& o) {
  if (o.runs > 0) runs = o.runs;
  const auto slow = std::chrono::milliseconds(5000) * time_scale();
  const auto timeout = std::chrono::milliseconds(15000) * time_scale();
  int failed = 0, printed = 0, done = 0, hangs = 0;
  std::map<std::string, int> kinds;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs && hangs < 3; ++i, ++done) {
    ChildResult r = run_exec({"--run", program, std::to_string(i)}, timeout);
    if (o.verbose) std::printf("  run %d: %s\n", i + 1, r.describe().c_str());
    std::string kind = r.kind_name();
    if (r.ok() && r.seconds > std::chrono::duration<double>(slow).count()) {
      kind = "slow exit";
      std::snprintf(r.report.note, sizeof r.report.note, "exited with status 0, but only after %.1f s",
                    r.seconds);
    } else if (r.ok()) {
      continue;
    }
    ++failed;
    ++kinds[kind];
    if (r.kind == ChildResult::Kind::hang) ++hangs;
    if (printed++ < 2) print_failure(std::string(name) + " run " + std::to_string(i + 1), r);
  }
  if (hangs >= 3) std::printf("%s: stopped after 3 hangs\n", name);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %d runs in %.1f s, %d exited promptly with status 0", name, done, secs, done - failed);
  for (const auto& [what, count] : kinds) std::printf("; %d %s", count, what.c_str());
  std::printf(": %s\n", failed ? "FAILED" : "passed");
  return failed ? 1 : 0;
}

}  // namespace

int run_program(const std::string& name, int run) {
  if (name == "exit-in-flight") return exit_in_flight(run);
  if (name == "exit-from-thread") return exit_from_thread(run);
  if (name == "static-dtor") return static_dtor(run);
  if (name == "thread-local-dtor") return thread_local_dtor();
  std::fprintf(stderr, "unknown program %s\n", name.c_str());
  return 2;
}

int exit_with_work_in_flight(const Options& o) {
  return repeat("exit-in-flight", "exit-in-flight", sanitized() ? 6 : 30, o);
}

int exit_from_another_thread(const Options& o) {
  return repeat("exit-from-thread", "exit-from-thread", sanitized() ? 4 : 20, o);
}

int eval_in_static_destructor(const Options& o) {
  return repeat("static-dtor", "static-dtor", sanitized() ? 4 : 10, o);
}

int eval_in_thread_local_destructor(const Options& o) {
  return repeat("thread-local-dtor", "thread-local-dtor", sanitized() ? 2 : 5, o);
}

}  // namespace fault
