// The fault cases. Each returns 0 when every child behaved, 1 otherwise, and prints one
// summary line (plus one block per failed child).
#pragma once

#include <cstdint>
#include <string>

namespace fault {

struct Options {
  int64_t from = 0;      // sweeps: first N (0 = 1)
  int64_t to = 0;        // sweeps: last N (0 = counted + margin)
  int runs = 0;          // repeated cases: runs (0 = the build's default)
  double seconds = 0;    // storms: duration (0 = default)
  bool verbose = false;  // one line per child
  double timeout = 0;    // per-child watchdog in seconds (0 = the case's default)
  int max_hangs = 3;     // after this many hangs, a sweep's watchdog gets shorter
};

int sweep_operator_new(const Options& o);
int sweep_braid_allocator(const Options& o);
int storm_operator_new(const Options& o);
int storm_braid_allocator(const Options& o);
int thread_creation(const Options& o);
int exit_with_work_in_flight(const Options& o);
int exit_from_another_thread(const Options& o);
int eval_in_static_destructor(const Options& o);
int eval_in_thread_local_destructor(const Options& o);

/// The programs the exit cases run as fresh processes (`--run NAME RUN`, RUN the run's
/// index, which varies the timing); returns main's value.
int run_program(const std::string& name, int run);

}  // namespace fault
