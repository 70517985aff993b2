// braid_fault_tests: the fault-injection suite (issue 10). Usage:
//   braid_fault_tests CASE [--from N] [--to N] [--runs R] [--seconds S] [--timeout S]
//                          [--max-hangs H] [--verbose]
//   braid_fault_tests list
// Each case forks its children from this process, which never touches braid itself (so fork
// is safe: no braid threads exist here). `--run PROGRAM` is how the exit cases start a fresh
// process. To chase a failure: `sweep-new --from N --to N --verbose` repeats one point and
// shows the child's output; BRAID_FAULT_BACKTRACE=1 prints where each injected operator new
// failure lands, BRAID_FAULT_TRACE=1 times the child's phases, BRAID_FAULT_SEED repeats a
// storm, BRAID_WATCHDOG_SCALE lengthens every watchdog.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cases.h"
#include "inject.h"

// Sanitizer allocators abort on impossible requests unless told to return null. A report must
// end the child that found it (forked children leave without the sanitizers' exit hooks).
// ThreadSanitizer sleeps at exit while other threads live, to let them race the exit; 200 ms
// is four times the exit cases' work, and spares a second per run.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:halt_on_error=1"; }
extern "C" const char* __tsan_default_options() {
  return "allocator_may_return_null=1:halt_on_error=1:atexit_sleep_ms=200";
}
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }

namespace {

struct Case {
  const char* name;
  int (*run)(const fault::Options&);
  const char* what;
};

const Case kCases[] = {
    {"sweep-new", fault::sweep_operator_new, "the N-th operator new of a multi-stream eval fails, every N"},
    {"sweep-braid", fault::sweep_braid_allocator,
     "the braid allocation at the N-th node kernel fails, every N"},
    {"storm-new", fault::storm_operator_new,
     "random operator new failures on every thread, concurrent evals"},
    {"storm-braid", fault::storm_braid_allocator, "random braid allocator failures too, concurrent evals"},
    {"threads", fault::thread_creation, "the k-th (and every later) pthread_create at start-up fails"},
    {"exit-in-flight", fault::exit_with_work_in_flight, "main returns with matmuls in flight on 4 streams"},
    {"exit-from-thread", fault::exit_from_another_thread,
     "std::exit from another thread with work in flight"},
    {"static-dtor", fault::eval_in_static_destructor, "eval from a static object's destructor at exit"},
    {"thread-local-dtor", fault::eval_in_thread_local_destructor, "eval from thread_local destructors"},
};

int usage() {
  std::fprintf(stderr,
               "usage: braid_fault_tests CASE [--from N] [--to N] [--runs R] [--seconds S] "
               "[--timeout S] [--max-hangs H] [--verbose]\ncases:\n");
  for (const auto& c : kCases) std::fprintf(stderr, "  %-18s %s\n", c.name, c.what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  fault::set_thread_exempt(true);  // the harness's own allocations never fail
  if (argc >= 3 && std::strcmp(argv[1], "--run") == 0)
    return fault::run_program(argv[2], argc >= 4 ? std::atoi(argv[3]) : 0);
  if (argc < 2) return usage();
  const std::string name = argv[1];
  if (name == "list") {
    for (const auto& c : kCases) std::printf("%s\n", c.name);
    return 0;
  }
  fault::Options o;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (arg == "--from") {
      o.from = std::atoll(value());
    } else if (arg == "--to") {
      o.to = std::atoll(value());
    } else if (arg == "--runs") {
      o.runs = std::atoi(value());
    } else if (arg == "--seconds") {
      o.seconds = std::atof(value());
    } else if (arg == "--timeout") {
      o.timeout = std::atof(value());
    } else if (arg == "--max-hangs") {
      o.max_hangs = std::atoi(value());
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else {
      return usage();
    }
  }
  for (const auto& c : kCases) {
    if (name == c.name) {
      std::setvbuf(stdout, nullptr, _IOLBF, 0);
      return c.run(o);
    }
  }
  return usage();
}
