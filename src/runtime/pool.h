// The one worker pool: strands and parallel kernels share it (DESIGN.md section 3).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
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
};

class WorkerPool {
 public:
  /// The process's pool, created on first use and deliberately never destroyed, so that no
  /// static destructor can race a worker at exit.
  static WorkerPool& instance();

  /// Queues `item`; one idle worker wakes for it. Thread-safe.
  void post(std::shared_ptr<WorkItem> item) EXCLUDES(mu_);
  /// Whether other work is waiting (a hint for fairness). Thread-safe.
  bool has_pending() const { return pending_.load(std::memory_order_relaxed) > 0; }
  int num_workers() const { return num_workers_; }

  /// Calls body(begin, end) over [0, n) split into chunks of at least `grain`. The calling
  /// thread runs chunks too and returns when all are done; the first exception is rethrown.
  void parallel_for(int64_t n, int64_t grain, RangeFn body);

 private:
  WorkerPool();
  void worker_loop();

  Mutex mu_;
  CondVar cv_;
  std::deque<std::shared_ptr<WorkItem>> queue_ GUARDED_BY(mu_);
  int idle_ GUARDED_BY(mu_) = 0;
  std::atomic<int> pending_{0};
  int num_workers_;
  std::vector<std::thread> workers_;
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
