// Replacements for operator new/delete (all forms) and pthread_create, with the injectable
// failures declared in inject.h. Memory comes from malloc, so the sanitizers still see (and
// check) every block; the real pthread_create is the next one in symbol lookup order, which
// under a sanitizer is its interceptor.
#include "inject.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace fault {
namespace {

enum Mode : int { kOff, kCount, kNth, kRandom };

std::atomic<int> g_mode{kOff};
std::atomic<int64_t> g_seen{0};
std::atomic<int64_t> g_failed{0};
std::atomic<int64_t> g_target{0};
std::atomic<uint64_t> g_seed{0};
std::atomic<uint32_t> g_one_in{0};
const bool g_backtraces = std::getenv("BRAID_FAULT_BACKTRACE") != nullptr;

// Trivially constructible: no guard and no allocation on first use, on any thread.
thread_local bool t_exempt = false;

std::atomic<int> g_thread_mode{kOff};
std::atomic<int> g_threads_seen{0};
std::atomic<int> g_threads_failed{0};
std::atomic<int> g_thread_target{0};
std::atomic<bool> g_thread_and_later{false};

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

bool should_fail() {
  // relaxed: the mode is set before the braid calls it is meant for (same thread, or before
  // the thread that allocates was handed the work, which synchronizes).
  int mode = g_mode.load(std::memory_order_relaxed);
  if (mode == kOff || t_exempt) return false;
  int64_t i = g_seen.fetch_add(1, std::memory_order_relaxed) + 1;
  bool fail = false;
  if (mode == kNth) {
    fail = i == g_target.load(std::memory_order_relaxed);
  } else if (mode == kRandom) {
    fail = mix(g_seed.load(std::memory_order_relaxed) ^ static_cast<uint64_t>(i)) %
               g_one_in.load(std::memory_order_relaxed) ==
           0;
  }
  if (fail) {
    g_failed.fetch_add(1, std::memory_order_relaxed);
    if (g_backtraces) {
      // Where the failure lands, for whoever fixes it (BRAID_FAULT_BACKTRACE=1).
      void* frames[32];
      int n = backtrace(frames, 32);
      static const char kHead[] = "[fault] injected operator new failure at:\n";
      (void)!write(STDERR_FILENO, kHead, sizeof kHead - 1);
      backtrace_symbols_fd(frames, n, STDERR_FILENO);
    }
  }
  return fail;
}

void* allocate(std::size_t size, std::size_t align) noexcept {
  if (should_fail()) return nullptr;
  if (size == 0) size = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(size);
  void* p = nullptr;
  return posix_memalign(&p, align, size) == 0 ? p : nullptr;
}

void* allocate_or_throw(std::size_t size, std::size_t align) {
  void* p = allocate(size, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void arm(int mode) {
  g_mode.store(kOff);
  g_seen.store(0);
  g_failed.store(0);
  g_mode.store(mode);
}

}  // namespace

void disarm_allocations() { g_mode.store(kOff); }
void count_allocations() { arm(kCount); }
void fail_nth_allocation(int64_t n) {
  g_target.store(n);
  arm(kNth);
}
void fail_random_allocations(uint64_t seed, uint32_t one_in) {
  g_seed.store(seed);
  g_one_in.store(one_in == 0 ? 1 : one_in);
  arm(kRandom);
}
int64_t allocations_seen() { return g_seen.load(); }
int64_t allocations_failed() { return g_failed.load(); }
void set_thread_exempt(bool exempt) { t_exempt = exempt; }
bool thread_exempt() { return t_exempt; }

void fail_thread_creation(int k, bool and_later) {
  g_thread_mode.store(kOff);
  g_threads_seen.store(0);
  g_threads_failed.store(0);
  g_thread_target.store(k);
  g_thread_and_later.store(and_later);
  g_thread_mode.store(k > 0 ? kNth : kCount);
}
void disarm_thread_creation() { g_thread_mode.store(kOff); }
int threads_seen() { return g_threads_seen.load(); }
int threads_failed() { return g_threads_failed.load(); }

}  // namespace fault

// ---- operator new / delete ----

void* operator new(std::size_t n) { return fault::allocate_or_throw(n, 0); }
void* operator new[](std::size_t n) { return fault::allocate_or_throw(n, 0); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return fault::allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return fault::allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return fault::allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return fault::allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return fault::allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return fault::allocate(n, static_cast<std::size_t>(a));
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

// ---- pthread_create ----

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static std::atomic<Create> real{nullptr};
  Create fn = real.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
    if (fn == nullptr) std::abort();
    real.store(fn, std::memory_order_release);
  }
  using namespace fault;
  if (g_thread_mode.load() != kOff) {
    int i = g_threads_seen.fetch_add(1) + 1;
    int k = g_thread_target.load();
    if (g_thread_mode.load() == kNth && (i == k || (g_thread_and_later.load() && i > k))) {
      g_threads_failed.fetch_add(1);
      return EAGAIN;
    }
  }
  return fn(thread, attr, start, arg);
}
