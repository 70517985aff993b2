// The parent side of the fault suite: every case runs in a child process (forked from a parent
// that never touched braid, or a fresh exec of this binary), under a watchdog. A hang, a
// signal or a non-zero exit becomes a reported failure naming the case, never a hung ctest.
#pragma once

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fault {

/// What a child leaves for its parent: where it is (so a hang names its phase) and counts.
/// Lives in a MAP_SHARED page created by the parent.
struct ChildReport {
  char phase[128];
  char note[1024];
  int64_t counts[8];
};

/// The calling child's report page (valid in a child only).
ChildReport& report();
/// Records the phase the child is entering (shown if it hangs or dies there).
void set_phase(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/// Appends a line to the note the parent prints with a failure.
void add_note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

struct ChildResult {
  enum class Kind { ok, exit_code, signal, hang } kind = Kind::ok;
  int code = 0;  // exit status or signal number
  double seconds = 0;
  ChildReport report{};
  std::string output;  // the child's stdout and stderr

  bool ok() const { return kind == Kind::ok; }
  /// One line: "exit 1", "signal 11 (Segmentation fault)", "hang (killed after 5.0 s)".
  std::string describe() const;
  /// Short: "hang", "exit status 1", "signal 11".
  std::string kind_name() const;
};

/// Runs `body` in a forked child with a watchdog of `timeout`; the child's exit status is
/// body's return value (after an ASan leak check, where the build has one).
ChildResult run_forked(const std::function<int()>& body, std::chrono::milliseconds timeout);
/// Runs this executable again with `args` (a fresh process whose main returns normally).
ChildResult run_exec(const std::vector<std::string>& args, std::chrono::milliseconds timeout);

/// Prints a failed child: its label, what happened, its phase, note and output (trimmed).
void print_failure(const std::string& label, const ChildResult& r);

/// True in sanitizer builds (which run fewer iterations and allow longer watchdogs).
bool sanitized();
/// Watchdog limits scale by this: 1 in Release, more under sanitizers, times
/// BRAID_WATCHDOG_SCALE when set.
int time_scale();

/// The seed for random cases: BRAID_FAULT_SEED if set, else fresh; printed by the caller.
uint64_t choose_seed();

}  // namespace fault
