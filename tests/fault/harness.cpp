#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "inject.h"

extern "C" int __lsan_do_recoverable_leak_check() __attribute__((weak));

namespace fault {
namespace {

ChildReport* g_report = nullptr;

ChildReport* map_report() {
  void* p = mmap(nullptr, sizeof(ChildReport), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(2);
  }
  std::memset(p, 0, sizeof(ChildReport));
  return static_cast<ChildReport*>(p);
}

// The child's stdout and stderr go to an anonymous file the parent reads afterwards, so a
// sweep of a thousand children prints only what failed.
int make_output_file() {
  int fd = memfd_create("fault-child-output", 0);
  if (fd < 0) {
    std::perror("memfd_create");
    std::exit(2);
  }
  return fd;
}

std::string read_all(int fd) {
  std::string out;
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void redirect_output(int fd) {
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  close(fd);
}

// Waits for `pid` up to `timeout`, then kills it; polls with a backoff (children of the
// sweep live a few milliseconds, so the first polls are frequent).
ChildResult wait_child(pid_t pid, std::chrono::milliseconds timeout, ChildReport* rep, int out_fd) {
  using clock = std::chrono::steady_clock;
  ChildResult r;
  const auto start = clock::now();
  auto nap = std::chrono::microseconds(50);
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      std::perror("waitpid");
      std::exit(2);
    }
    if (clock::now() - start > timeout) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.kind = ChildResult::Kind::hang;
      break;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(2000));
  }
  r.seconds = std::chrono::duration<double>(clock::now() - start).count();
  if (r.kind != ChildResult::Kind::hang) {
    if (WIFEXITED(status)) {
      r.code = WEXITSTATUS(status);
      r.kind = r.code == 0 ? ChildResult::Kind::ok : ChildResult::Kind::exit_code;
    } else if (WIFSIGNALED(status)) {
      r.code = WTERMSIG(status);
      r.kind = ChildResult::Kind::signal;
    }
  }
  std::memcpy(&r.report, rep, sizeof(ChildReport));
  r.report.phase[sizeof r.report.phase - 1] = 0;
  r.report.note[sizeof r.report.note - 1] = 0;
  r.output = read_all(out_fd);
  close(out_fd);
  munmap(rep, sizeof(ChildReport));
  return r;
}

void vappend(char* dst, size_t cap, const char* fmt, va_list ap) {
  size_t len = std::strlen(dst);
  if (len + 1 >= cap) return;
  std::vsnprintf(dst + len, cap - len, fmt, ap);
}

}  // namespace

ChildReport& report() {
  static ChildReport fallback{};  // outside a child (running a case body directly)
  return g_report ? *g_report : fallback;
}

void set_phase(const char* fmt, ...) {
  ChildReport& r = report();
  r.phase[0] = 0;
  va_list ap;
  va_start(ap, fmt);
  vappend(r.phase, sizeof r.phase, fmt, ap);
  va_end(ap);
  // BRAID_FAULT_TRACE=1: each phase with its start time, in the child's output (--verbose).
  static const bool trace = std::getenv("BRAID_FAULT_TRACE") != nullptr;
  if (trace) {
    static const auto t0 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "[%8.3f s] %s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), r.phase);
  }
}

void add_note(const char* fmt, ...) {
  ChildReport& r = report();
  va_list ap;
  va_start(ap, fmt);
  vappend(r.note, sizeof r.note - 1, fmt, ap);
  va_end(ap);
  size_t len = std::strlen(r.note);
  if (len + 1 < sizeof r.note) {
    r.note[len] = '\n';
    r.note[len + 1] = 0;
  }
}

ChildResult run_forked(const std::function<int()>& body, std::chrono::milliseconds timeout) {
  ChildReport* rep = map_report();
  int out_fd = make_output_file();
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (pid == 0) {
    redirect_output(out_fd);
    g_report = rep;
    set_thread_exempt(true);  // the harness's own code never meets injected failures
    int rc;
    try {
      rc = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "uncaught exception in the child: %s\n", e.what());
      rc = 3;
    }
    disarm_allocations();
    disarm_thread_creation();
    if (__lsan_do_recoverable_leak_check != nullptr) {
      // Also after a failed check: a leaked buffer's allocation stack says where it was lost.
      if (rc == 0) set_phase("leak check");  // else the phase that failed stays shown
      if (__lsan_do_recoverable_leak_check() != 0) {
        add_note("LeakSanitizer found leaks (report in the output)");
        if (rc == 0) rc = 4;
      }
    }
    std::fflush(stdout);
    std::fflush(stderr);
    // Straight to the kernel: braid's workers may still run, so no exit handlers; and the
    // sanitizers' _exit hooks (a second leak check, ThreadSanitizer's one-second sleep at
    // exit) would cost more than the child itself. Their reports halt at once instead
    // (halt_on_error, set in main.cpp), with the sanitizer's own exit status.
    syscall(SYS_exit_group, rc);
  }
  return wait_child(pid, timeout, rep, out_fd);
}

ChildResult run_exec(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  ChildReport* rep = map_report();  // unused by an exec'd child, but keeps one shape
  int out_fd = make_output_file();
  std::vector<char*> argv;
  static const char kSelf[] = "/proc/self/exe";
  argv.push_back(const_cast<char*>(kSelf));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (pid == 0) {
    redirect_output(out_fd);
    execv(kSelf, argv.data());
    std::perror("execv");
    _exit(127);
  }
  return wait_child(pid, timeout, rep, out_fd);
}

std::string ChildResult::describe() const {
  char buf[160];
  switch (kind) {
    case Kind::ok: std::snprintf(buf, sizeof buf, "ok (%.2f s)", seconds); break;
    case Kind::exit_code: std::snprintf(buf, sizeof buf, "exit status %d", code); break;
    case Kind::signal:
      std::snprintf(buf, sizeof buf, "killed by signal %d (%s)", code, strsignal(code));
      break;
    case Kind::hang: std::snprintf(buf, sizeof buf, "HANG (no exit after %.1f s; killed)", seconds); break;
  }
  return buf;
}

std::string ChildResult::kind_name() const {
  switch (kind) {
    case Kind::ok: return "ok";
    case Kind::exit_code: return "exit status " + std::to_string(code);
    case Kind::signal: return "signal " + std::to_string(code);
    case Kind::hang: return "hang";
  }
  return "?";
}

void print_failure(const std::string& label, const ChildResult& r) {
  std::printf("FAIL %s: %s\n", label.c_str(), r.describe().c_str());
  if (r.report.phase[0]) std::printf("  phase: %s\n", r.report.phase);
  if (r.report.note[0]) {
    std::printf("  note:\n");
    const char* line = r.report.note;
    while (*line) {
      const char* end = std::strchr(line, '\n');
      size_t n = end ? static_cast<size_t>(end - line) : std::strlen(line);
      std::printf("    %.*s\n", static_cast<int>(n), line);
      line += n + (end ? 1 : 0);
    }
  }
  if (!r.output.empty()) {
    // Sanitizer reports put the useful frames first; keep the head of long output.
    constexpr size_t kMax = 6000;
    std::printf("  output%s:\n", r.output.size() > kMax ? " (first 6000 bytes)" : "");
    std::string shown = r.output.substr(0, kMax);
    size_t pos = 0;
    while (pos < shown.size()) {
      size_t end = shown.find('\n', pos);
      if (end == std::string::npos) end = shown.size();
      std::printf("    | %.*s\n", static_cast<int>(end - pos), shown.c_str() + pos);
      pos = end + 1;
    }
  }
  std::fflush(stdout);
}

bool sanitized() {
#if defined(BRAID_FAULT_SANITIZED)
  return true;
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

int time_scale() {
  int scale = sanitized() ? 2 : 1;
  if (const char* env = std::getenv("BRAID_WATCHDOG_SCALE")) {
    int k = std::atoi(env);
    if (k > 0) scale *= k;
  }
  return scale;
}

uint64_t choose_seed() {
  if (const char* env = std::getenv("BRAID_FAULT_SEED")) return std::strtoull(env, nullptr, 0);
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace fault
