// The one worker pool: strands and parallel kernels share it (DESIGN.md section 3).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "runtime/mutex.h"

namespace braid::detail {

/// A non-owning reference to a callable body(begin, end); no allocation, unlike std::function.
class RangeFn {
 public:
  // Not for RangeFn itself: copying a RangeFn must copy the reference, not refer to the copy.
  template <typename F>
    requires(!std::is_same_v<std::remove_cv_t<F>, RangeFn>)
  RangeFn(F& f)  // NOLINT: implicit on purpose
      : obj_(&f), call_([](void* o, int64_t b, int64_t e) { (*static_cast<F*>(o))(b, e); }) {}
  void operator()(int64_t b, int64_t e) const { call_(obj_, b, e); }

 private:
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};

/// Something a worker can run: a strand's turn or a share of a parallel loop.
class WorkItem {
 public:
  virtual ~WorkItem() = default;
  virtual void run_work() = 0;

 private:
  friend class WorkerPool;
  // The pool's queue is intrusive (guarded by the pool's lock), so posting never allocates
  // and never fails. An item is in the queue at most once; `shares` workers take it.
  WorkItem* next_ = nullptr;
  std::shared_ptr<WorkItem> queued_ref_;  // keeps the item alive while queued
  bool in_queue_ = false;
  int64_t shares_ = 0;
};

class WorkerPool {
 public:
  /// The process's pool, created on first use and deliberately never destroyed, so that no
  /// static destructor can race a worker at exit. Starts as many workers as it can (at least
  /// one); throws std::runtime_error if no thread can be started (and tries again next call).
  static WorkerPool& instance();

  /// Queues `item` for `shares` workers (each runs item->run_work() once); idle workers wake
  /// for it. An item already queued is not queued twice. Never allocates, never throws.
  /// Thread-safe.
  void post(std::shared_ptr<WorkItem> item, int64_t shares = 1) noexcept EXCLUDES(mu_);
  /// Whether other work is waiting (a hint for fairness). Thread-safe.
  bool has_pending() const { return pending_.load(std::memory_order_relaxed) > 0; }
  int num_workers() const { return num_workers_; }

  /// Calls body(begin, end) over [0, n) split into chunks of at least `grain`. The calling
  /// thread runs chunks too and returns when all are done, never while a worker can still
  /// call `body`; the first exception is rethrown.
  void parallel_for(int64_t n, int64_t grain, RangeFn body);

  /// Stops the workers from taking further work (process exit). Queued work stays queued:
  /// threads that wait for it run it inline. Thread-safe; the pool stays stopped.
  void stop() noexcept EXCLUDES(mu_);
  /// Whether stop() was called. Any thread. seq_cst: a thread that publishes "in a kernel"
  /// and then reads false is seen by the stopping thread's scan (src/graph/exit.cpp).
  bool stopping() const { return stopping_flag_.load(); }
  /// Whether the calling thread is the one that called stop() (it ends the process).
  static bool is_stopping_thread();
  /// For a thread that must start nothing more while the process ends: never returns.
  [[noreturn]] static void sleep_forever();

 private:
  WorkerPool();
  void worker_loop();
  std::shared_ptr<WorkItem> take_locked() REQUIRES(mu_);

  Mutex mu_;
  CondVar cv_;
  WorkItem* head_ GUARDED_BY(mu_) = nullptr;
  WorkItem* tail_ GUARDED_BY(mu_) = nullptr;
  int idle_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stopping_flag_{false};
  std::atomic<int> pending_{0};
  // 1 while an idle worker spins; post() clears it to hand that worker a share (under mu_).
  std::atomic<int> spinning_{0};
  int num_workers_ = 0;
};

/// Shorthand for WorkerPool::instance().parallel_for.
/// Small loops run inline without touching the pool.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& body) {
  if (n <= grain) {
    if (n > 0) body(0, n);
    return;
  }
  WorkerPool::instance().parallel_for(n, grain, RangeFn(body));
}

}  // namespace braid::detail
