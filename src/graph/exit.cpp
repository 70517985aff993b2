#include "graph/exit.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "backend/backend.h"
#include "runtime/mutex.h"
#include "runtime/pool.h"
#include "runtime/registry.h"

namespace braid::detail {

// One per thread that has run a kernel, reused by later threads once its thread ended.
struct KernelScope::Slot {
  std::atomic<bool> running{false};
  std::atomic<bool> in_use{true};
  Slot* next = nullptr;  // immutable once listed
};

namespace {

// How long exit waits for the kernels running when it starts.
constexpr auto kExitWaitLimit = std::chrono::seconds(10);

using Slot = KernelScope::Slot;

struct SlotList {
  Mutex mu;
  Slot* head GUARDED_BY(mu) = nullptr;
};

SlotList& slot_list() {
  static auto* list = new SlotList();  // deliberate leak: threads end during exit
  return *list;
}

// Trivially destructible, so they stay readable until the thread ends.
thread_local Slot* t_slot = nullptr;
thread_local bool t_slot_gone = false;

struct SlotOwner {
  ~SlotOwner() {
    if (t_slot != nullptr) t_slot->in_use.store(false, std::memory_order_release);
    t_slot = nullptr;
    t_slot_gone = true;
  }
};

// The calling thread's slot; null after its thread_locals died (its kernels then go
// untracked). May throw std::bad_alloc the first time, before any kernel starts.
Slot* my_slot() {
  if (t_slot != nullptr || t_slot_gone) return t_slot;
  SlotList& list = slot_list();
  Slot* slot = nullptr;
  {
    MutexLock lock(list.mu);
    for (Slot* s = list.head; s != nullptr && slot == nullptr; s = s->next) {
      bool free_slot = false;
      if (s->in_use.compare_exchange_strong(free_slot, true)) slot = s;
    }
    if (slot == nullptr) {
      slot = new Slot();
      slot->next = list.head;
      list.head = slot;
    }
  }
  t_slot = slot;
  thread_local SlotOwner owner;  // gives the slot back when the thread ends
  return slot;
}

// Whether a thread other than the caller is inside a kernel.
bool others_running() {
  SlotList& list = slot_list();
  MutexLock lock(list.mu);
  for (Slot* s = list.head; s != nullptr; s = s->next) {
    if (s != t_slot && s->running.load()) return true;
  }
  return false;
}

void quiesce_at_exit() {
  // Workers take no more work and strands run no further node on any thread but this one
  // (the others sleep, leaving their strand to us); kernels already running are waited for
  // here, the program's own threads' included. stop()'s seq_cst store pairs with the kernel
  // slots: a kernel either sees the pool stopping or is seen running below.
  WorkerPool::instance().stop();
  const auto deadline = std::chrono::steady_clock::now() + kExitWaitLimit;
  while (others_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  gpu::quiesce();
}

}  // namespace

void start_runtime() {
  static const bool started = [] {
    WorkerPool::instance();
    std::atexit(quiesce_at_exit);
    return true;
  }();
  (void)started;
}

KernelScope::KernelScope() : slot_(my_slot()) {
  if (slot_ != nullptr) slot_->running.store(true);  // seq_cst: pairs with the pool's stop()
  if (WorkerPool::instance().stopping() && !WorkerPool::is_stopping_thread()) {
    // Another thread is ending the process: this thread, as the workers do, starts nothing
    // more. Its caller gives the node back to its strand (the exiting thread may need it)
    // and sleeps; an exception here would reach code that is racing the exit.
    if (slot_ != nullptr) slot_->running.store(false, std::memory_order_release);
    slot_ = nullptr;
    refused_ = true;
  }
}

KernelScope::~KernelScope() {
  if (slot_ != nullptr) slot_->running.store(false, std::memory_order_release);
}

bool help_at_exit() noexcept {
  if (!WorkerPool::is_stopping_thread()) return false;
  bool ran = false;
  try {
    for (const auto& stream : StreamRegistry::instance().all()) {
      if (stream->strand->try_run_inline(nullptr)) ran = true;
    }
  } catch (...) {
    // No memory for the list: pause and let the caller check again.
  }
  // Nothing to run: a thread that was releasing a strand, or finishing a kernel that exit
  // stopped waiting for, will be done soon. Poll: nobody is left to wake us.
  if (!ran) std::this_thread::sleep_for(std::chrono::microseconds(100));
  return true;
}

}  // namespace braid::detail
