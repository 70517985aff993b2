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
#include <vector>

#include "runtime/mutex.h"

namespace braid::detail {

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
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

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
inline void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= grain) {
    if (n > 0) body(0, n);
    return;
  }
  WorkerPool::instance().parallel_for(n, grain, body);
}

}  // namespace braid::detail
