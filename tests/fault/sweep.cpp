// Case 1: "the N-th allocation fails", for every N of one multi-stream evaluation (by eval,
// by async_eval waited on from another thread, and by a first eval that starts the runtime),
// each N in its own child. Checks DESIGN.md 1.8 at every injection point: the evaluation gives
// the right values or throws bad_alloc; the same graph, evaluated again from another thread
// with injection off, returns (the right values, or the failure stored on its nodes); fresh
// graphs evaluate; no buffer and (under ASan) no heap block leaks.
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "cases.h"
#include "graph/node.h"
#include "graphs.h"
#include "harness.h"
#include "inject.h"
#include "memory/allocator_hooks.h"

namespace fault {
namespace {

using namespace braid;
using namespace std::chrono_literals;

enum class Injector { operator_new, braid_allocator };

// The braid allocator's hook fails "the next allocations"; to fail one chosen point, the
// eval hook arms it as the k-th node starts its kernel (that node's output, or the next
// allocation after it when the node is a view).
std::atomic<int64_t> g_node_target{0};
std::atomic<int64_t> g_nodes_seen{0};
void node_hook(const array&) {
  int64_t i = g_nodes_seen.fetch_add(1) + 1;
  if (i == g_node_target.load()) detail::fail_next_allocations(1);
}

void arm(Injector inj, int64_t n) {
  if (inj == Injector::operator_new) {
    if (n == 0) {
      count_allocations();
    } else {
      fail_nth_allocation(n);
    }
  } else {
    g_nodes_seen.store(0);
    g_node_target.store(n);
    detail::set_eval_hook(node_hook);
  }
}

// Returns (points seen, failures injected).
std::pair<int64_t, int64_t> disarm(Injector inj) {
  if (inj == Injector::operator_new) {
    disarm_allocations();
    return {allocations_seen(), allocations_failed()};
  }
  detail::set_eval_hook(nullptr);
  detail::fail_next_allocations(0);  // a pending failure must not leak into the checks
  int64_t seen = g_nodes_seen.load();
  int64_t target = g_node_target.load();
  return {seen, target > 0 && seen >= target ? 1 : 0};
}

// Report slots.
enum { kSeen, kInjected, kThrew, kSecondThrew };

int fail(const char* what, const std::string& detail) {
  add_note("%s: %s", what, detail.c_str());
  return 1;
}

int evaluate_fresh(const std::vector<Stream>& streams, const char* what) {
  set_phase("%s", what);
  CheckedGraph g = sweep_graph(streams);
  try {
    eval(g.outputs);
  } catch (...) {
    return fail(what, "threw " + describe(std::current_exception()));
  }
  std::string wrong = check_values(g);
  return wrong.empty() ? 0 : fail(what, wrong);
}

// How the armed evaluation is made: eval on this thread; async_eval here and the handle
// waited on from another thread (strands posted to workers, a different waiter); or eval as
// the process's first use of braid's runtime (the worker pool starts inside it), of the sweep
// graph or of one op split across the pool (whose loop then makes the runtime's first waits).
enum class Mode { eval, async, cold, cold_op };
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::eval: return "eval";
    case Mode::async: return "async_eval + wait on another thread";
    case Mode::cold: return "first eval of the process (pool start-up included)";
    case Mode::cold_op: return "first eval of the process, one op split across the pool";
  }
  return "?";
}

// Evaluates `g` with the N-th point armed; returns what it threw (null if nothing).
std::exception_ptr evaluate_armed(Injector inj, Mode mode, int64_t n, const CheckedGraph& g) {
  std::vector<array> outputs = g.outputs;  // eval takes a vector: copy it before arming
  std::exception_ptr first;
  set_phase("%s with the failure armed (N=%" PRId64 ")", mode_name(mode), n);
  arm(inj, n);
  if (mode != Mode::async) {
    try {
      BraidCall call;
      eval(std::move(outputs));
    } catch (...) {
      first = std::current_exception();
    }
  } else {
    std::optional<EvalHandle> handle;
    try {
      BraidCall call;
      handle.emplace(async_eval(std::move(outputs)));
    } catch (...) {
      first = std::current_exception();
    }
    if (handle) {
      std::thread waiter([&] {
        try {
          BraidCall call;
          handle->wait();
        } catch (...) {
          first = std::current_exception();
        }
      });
      waiter.join();
    }
  }
  auto [seen, injected] = disarm(inj);
  report().counts[kSeen] = seen;
  report().counts[kInjected] = injected;
  report().counts[kThrew] = first ? 1 : 0;
  return first;
}

// With injection off, another thread evaluates the same graph: it must return, with the right
// values, or rethrow the failure stored on its nodes (only if the armed evaluation threw).
int evaluate_again(const CheckedGraph& g, const std::exception_ptr& first) {
  set_phase("the same graph evaluated from another thread (injection off; the armed evaluation %s)",
            first ? "threw" : "returned");
  std::exception_ptr second;
  std::string wrong;
  std::thread other([&] {
    set_thread_exempt(true);
    try {
      eval(g.outputs);
      wrong = check_values(g);
    } catch (...) {
      second = std::current_exception();
    }
  });
  other.join();
  report().counts[kSecondThrew] = second ? 1 : 0;
  if (second && !first)
    return fail("re-evaluation threw after the armed evaluation returned", describe(second));
  if (second && !caused_by_bad_alloc(second))
    return fail("re-evaluation threw something other than the stored failure", describe(second));
  if (!second && !wrong.empty()) return fail("re-evaluation returned wrong values", wrong);
  return 0;
}

int sweep_child(Injector inj, Mode mode, int64_t n) {
  // A fixed pool, so counts and cost do not follow the machine. A first use starts three
  // workers or more, so that failures between their starts find some already running; the
  // one-op graph gets four, so that its loop has helpers still inside a chunk when the caller
  // runs out of chunks to take.
  const bool cold = mode == Mode::cold || mode == Mode::cold_op;
  setenv("BRAID_NUM_THREADS", mode == Mode::cold_op ? "4" : cold ? "3" : "2", 1);
  set_phase("setup (before arming)");
  std::vector<Stream> streams = {new_stream(Device::cpu), new_stream(Device::cpu), new_stream(Device::cpu)};
  // Start the pool and touch every stream first, except when start-up is what is swept.
  if (!cold) {
    if (evaluate_fresh(streams, "warm-up evaluation (before arming)") != 0) return 1;
    for (const auto& s : streams) synchronize(s);
  }
  const size_t base_memory = get_active_memory();
  {
    CheckedGraph g = mode == Mode::cold_op ? parallel_op_graph(streams[0]) : sweep_graph(streams);
    std::exception_ptr first = evaluate_armed(inj, mode, n, g);
    if (first && !caused_by_bad_alloc(first))
      return fail("the armed evaluation threw something else", describe(first));
    if (first && report().counts[kInjected] == 0)
      return fail("threw with no failure injected", describe(first));
    if (!first) {
      set_phase("reading the values the armed evaluation returned");
      std::string wrong = check_values(g);
      if (!wrong.empty()) return fail("the armed evaluation returned wrong values", wrong);
    }
    if (evaluate_again(g, first) != 0) return 1;
  }
  if (evaluate_fresh(streams, "a fresh graph on the same streams") != 0) return 1;
  {
    std::vector<Stream> fresh = {new_stream(Device::cpu), new_stream(Device::cpu), streams[0]};
    if (evaluate_fresh(fresh, "a fresh graph on new streams") != 0) return 1;
    if (std::string other = synchronize_all(fresh); !other.empty())
      return fail("synchronize reported", other);
  }
  set_phase("synchronize every stream");
  if (std::string other = synchronize_all(streams); !other.empty())
    return fail("synchronize reported", other);
  if (get_active_memory() != base_memory) {
    add_note("buffers leaked: active memory %zu bytes after the graphs are gone, %zu before",
             get_active_memory(), base_memory);
    return 1;
  }
  return 0;
}

// What a sweep saw, point by point.
struct Tally {
  int64_t swept = 0, threw = 0, absorbed = 0, missed = 0, hangs = 0;
  int failed = 0, printed = 0;
  std::map<std::string, std::string> failures;  // kind of failure -> the N that had it

  void add(const char* name, int64_t n, const ChildResult& r, bool verbose) {
    ++swept;
    if (!r.ok()) {
      char label[96];
      std::snprintf(label, sizeof label, "%s N=%" PRId64, name, n);
      if (printed++ < 8 || verbose) {
        print_failure(label, r);
      } else {
        std::printf("FAIL %s: %s; phase: %s\n", label, r.describe().c_str(), r.report.phase);
      }
      failures[r.kind_name()] += " " + std::to_string(n);
      ++failed;
      if (r.kind == ChildResult::Kind::hang) ++hangs;
      return;
    }
    const int64_t* c = r.report.counts;
    ++(c[kThrew] ? threw : c[kInjected] ? absorbed : missed);
    if (verbose) {
      std::printf(
          "  N=%" PRId64 ": %s, eval %s%s (%.3f s)\n", n, c[kInjected] ? "failure injected" : "no failure",
          c[kThrew] ? "threw bad_alloc" : "returned right values",
          c[kThrew] ? (c[kSecondThrew] ? ", re-eval rethrew it" : ", re-eval computed it") : "", r.seconds);
      if (!r.output.empty()) std::printf("%s", r.output.c_str());
    }
  }

  int summary(const char* name, double secs) const {
    std::printf("%s: %" PRId64 " injection points swept in %.1f s: %" PRId64 " threw bad_alloc, %" PRId64
                " returned right values with the failure absorbed, %" PRId64
                " never reached the failure; %d failed\n",
                name, swept, secs, threw, absorbed, missed, failed);
    if (failures.empty()) return 0;
    std::printf("%s: FAILED:", name);
    for (const auto& [kind, ns] : failures) std::printf(" %s at N =%s;", kind.c_str(), ns.c_str());
    std::printf("\n");
    return 1;
  }
};

// Start-up and submission come first in a run: the first operator new points are swept one by
// one even when the rest is strided.
constexpr int64_t kDense = 12;

// Sweeps one injector in one mode over N = 1 .. (what a clean run counts) + a margin, every
// `stride`-th N (after the first kDense, for operator new), until `deadline`. Returns 0 when
// every point behaved; adds the points swept to `swept`.
int sweep_mode(Injector inj, Mode mode, const char* name, const char* unit, const Options& o, int stride,
               std::chrono::steady_clock::time_point deadline, int64_t& swept) {
  const int64_t dense = inj == Injector::operator_new ? kDense : 0;
  using std::chrono::milliseconds;
  const milliseconds timeout = o.timeout > 0 ? milliseconds(static_cast<int64_t>(o.timeout * 1000))
                                             : milliseconds(5000) * time_scale();
  // A hang is for ever: after a few, shorter watchdogs keep a sweep of a badly broken tree
  // within its time budget, and the budget stops it before ctest's timeout would.
  const milliseconds short_timeout = std::min(timeout, milliseconds(1500) * time_scale());
  // Threads make the count vary a little from run to run: take the largest of a few.
  int64_t counted = 0;
  for (int i = 0; i < (sanitized() ? 2 : 3); ++i) {
    ChildResult r = run_forked([&] { return sweep_child(inj, mode, 0); }, timeout);
    if (!r.ok()) {
      print_failure(std::string(name) + ": clean run (no injection), " + mode_name(mode), r);
      std::printf("%s: FAILED before sweeping (the clean run must pass)\n", name);
      return 1;
    }
    counted = std::max(counted, r.report.counts[kSeen]);
  }
  const int64_t from = o.from > 0 ? o.from : 1;
  const int64_t to = o.to > 0 ? o.to : counted + std::max<int64_t>(5, counted / 10);
  std::string pattern;
  if (stride > 1) {
    pattern = dense > 0 ? " (every N up to " + std::to_string(dense) + ", then every " +
                              std::to_string(stride) + ")"
                        : " (every " + std::to_string(stride) + ")";
  }
  std::printf("%s, %s: a clean run makes %" PRId64 " %s; sweeping N = %" PRId64 "..%" PRId64 "%s\n", name,
              mode_name(mode), counted, unit, from, to, pattern.c_str());

  Tally tally;
  static const char* const kLabels[] = {" eval", " async", " cold", " cold-op"};
  const std::string label = std::string(name) + kLabels[static_cast<int>(mode)];
  const auto start = std::chrono::steady_clock::now();
  for (int64_t n = from; n <= to; n += n < dense ? 1 : stride) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::printf("%s: time budget spent; N >= %" PRId64 " not swept\n", label.c_str(), n);
      tally.failures["not swept (time budget)"] = " " + std::to_string(n) + "..";
      break;
    }
    const bool many_hangs = tally.hangs >= o.max_hangs;
    ChildResult r =
        run_forked([&] { return sweep_child(inj, mode, n); }, many_hangs ? short_timeout : timeout);
    tally.add(label.c_str(), n, r, o.verbose);
    if (!many_hangs && tally.hangs >= o.max_hangs) {
      std::printf("%s: %" PRId64 " hangs: the watchdog is %.1f s from here on\n", label.c_str(), tally.hangs,
                  std::chrono::duration<double>(short_timeout).count());
    }
  }
  swept += tally.swept;
  return tally.summary(label.c_str(),
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// In Release every N of every mode. Under a sanitizer, where a child costs a third of a
// second: operator new every N with eval and with the one-op first eval (whose start-up
// points are the cold sweep's), every fourth after the first kDense with async_eval; node
// kernels every second N with eval, every fourth with async_eval, and no cold sweep (a
// kernel's failure does not depend on the pool starting in the same evaluation).
int run_sweep(Injector inj, const char* name, const char* unit, const Options& o) {
  int64_t swept = 0;
  // The whole case stays within ctest's 300 s even on a tree that hangs at every point.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(200);
  const int stride = sanitized() ? 4 : 1;
  const int eval_stride = sanitized() && inj == Injector::braid_allocator ? 2 : 1;
  int failed = sweep_mode(inj, Mode::eval, name, unit, o, eval_stride, deadline, swept);
  failed |= sweep_mode(inj, Mode::async, name, unit, o, stride, deadline, swept);
  if (!sanitized()) failed |= sweep_mode(inj, Mode::cold, name, unit, o, stride, deadline, swept);
  if (!sanitized() || inj == Injector::operator_new) {
    failed |= sweep_mode(inj, Mode::cold_op, name, unit, o, 1, deadline, swept);
  }
  std::printf("%s: %" PRId64 " injection points swept in all: %s\n", name, swept,
              failed ? "FAILED" : "passed");
  return failed;
}

}  // namespace

int sweep_operator_new(const Options& o) {
  return run_sweep(Injector::operator_new, "sweep-new", "operator new calls", o);
}

int sweep_braid_allocator(const Options& o) {
  return run_sweep(Injector::braid_allocator, "sweep-braid", "node kernels", o);
}

}  // namespace fault
