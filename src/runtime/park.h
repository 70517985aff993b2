// A parking lot: threads sleep on an address until it is notified. Unlike std::atomic's
// wait/notify in libstdc++ 12, a notify with nobody parked costs one load, not a syscall.
#pragma once

#include <atomic>
#include <chrono>

#include "runtime/mutex.h"

namespace braid::detail {

struct ParkSlot {
  Mutex mu;
  CondVar cv;
};

/// One pause of a spin loop: lets the core's other hardware thread run.
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Spins while `still_waiting()` is true, for at most `budget`; returns whether the wait
/// ended. A wake-up through the kernel costs tens of microseconds where an idle core is
/// halted (virtual machines most), so waits that usually end within the budget spin first.
template <typename Pred>
bool spin_while(Pred still_waiting, std::chrono::nanoseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (!still_waiting()) return true;
      cpu_pause();
    }
    if (std::chrono::steady_clock::now() >= deadline) return !still_waiting();
  }
}

/// The slot an address parks on (a fixed table, shared by hashing).
ParkSlot& park_slot(const void* key);

/// Blocks while `still_waiting()` is true. `parked` is the flag notify_parked checks; it is
/// set (seq_cst) before the condition is re-checked under the slot's lock, so a notifier that
/// changes the condition with a seq_cst store and then reads the flag never misses us.
template <typename Pred>
void park_while(const void* key, std::atomic<bool>& parked, Pred still_waiting) {
  parked.store(true);
  ParkSlot& slot = park_slot(key);
  MutexLock lock(slot.mu);
  slot.cv.wait(slot.mu, [&] { return !still_waiting(); });
}

/// Wakes every thread parked on `key`, if any parked. Call after a seq_cst store that ends
/// their wait.
inline void notify_parked(const void* key, const std::atomic<bool>& parked) {
  if (!parked.load()) return;
  ParkSlot& slot = park_slot(key);
  { MutexLock lock(slot.mu); }  // a parker between its check and its sleep holds this lock
  slot.cv.notify_all();
}

/// Wakes every thread parked on `key`'s slot, whatever flag they parked with. `key` is only
/// hashed, so it may name memory that is already gone. For a wake whose condition is not
/// on `key` itself (the parkers' predicates read it), after a seq_cst store.
inline void notify_key(const void* key) {
  ParkSlot& slot = park_slot(key);
  { MutexLock lock(slot.mu); }
  slot.cv.notify_all();
}

}  // namespace braid::detail
