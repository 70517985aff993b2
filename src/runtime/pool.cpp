#include "runtime/pool.h"
#include "runtime/park.h"

#include <cstdlib>
#include <string>

namespace braid::detail {

namespace {

int pool_size() {
  if (const char* env = std::getenv("BRAID_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// A parallel loop shared by the caller and the workers that pick it up. Chunks are claimed
// with one atomic counter, so a late worker finds nothing left and leaves at once.
class ParallelJob : public WorkItem {
 public:
  ParallelJob(int64_t n, int64_t chunk, RangeFn body)
      : n_(n), chunk_(chunk), num_chunks_((n + chunk - 1) / chunk), body_(body) {}

  void run_work() override { run_chunks(); }

  // Runs chunks until none are left unclaimed.
  void run_chunks() {
    for (;;) {
      int64_t c = next_.fetch_add(1, std::memory_order_relaxed);
      if (c >= num_chunks_) return;
      int64_t begin = c * chunk_;
      int64_t end = std::min(n_, begin + chunk_);
      try {
        body_(begin, end);
      } catch (...) {
        MutexLock lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
      // release: the chunk's writes are visible to the caller once it sees the count.
      if (done_.fetch_add(1) + 1 == num_chunks_) notify_parked(&done_, parked_);
    }
  }

  void wait_and_rethrow() {
    // Other workers are running the last chunks; sleep until the final one reports.
    park_while(&done_, parked_, [this] { return done_.load() < num_chunks_; });
    MutexLock lock(mu_);
    if (error_) std::rethrow_exception(error_);
  }

  int64_t num_chunks() const { return num_chunks_; }

 private:
  const int64_t n_;
  const int64_t chunk_;
  const int64_t num_chunks_;
  const RangeFn body_;  // valid until wait_and_rethrow returns
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<bool> parked_{false};
  Mutex mu_;
  std::exception_ptr error_ GUARDED_BY(mu_);
};

}  // namespace

WorkerPool& WorkerPool::instance() {
  static WorkerPool* pool = new WorkerPool();  // deliberate leak: see the header
  return *pool;
}

WorkerPool::WorkerPool() : num_workers_(pool_size()) {
  workers_.reserve(num_workers_);
  for (int i = 0; i < num_workers_; ++i) {
    workers_.emplace_back([this] { worker_loop(); });
    workers_.back().detach();
  }
}

void WorkerPool::post(std::shared_ptr<WorkItem> item) {
  bool wake;
  {
    MutexLock lock(mu_);
    queue_.push_back(std::move(item));
    pending_.fetch_add(1, std::memory_order_relaxed);
    wake = idle_ > 0;
  }
  if (wake) cv_.notify_one();
}

void WorkerPool::worker_loop() {
  for (;;) {
    std::shared_ptr<WorkItem> item;
    {
      MutexLock lock(mu_);
      ++idle_;
      cv_.wait(mu_, [this]() REQUIRES(mu_) { return !queue_.empty(); });
      --idle_;
      item = std::move(queue_.front());
      queue_.pop_front();
      pending_.fetch_sub(1, std::memory_order_relaxed);
    }
    item->run_work();
  }
}

void WorkerPool::parallel_for(int64_t n, int64_t grain, RangeFn body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t max_chunks = static_cast<int64_t>(num_workers_) * 4;
  int64_t chunk = std::max(grain, (n + max_chunks - 1) / max_chunks);
  auto job = std::make_shared<ParallelJob>(n, chunk, body);
  if (job->num_chunks() <= 1 || num_workers_ <= 1) {
    body(0, n);
    return;
  }
  // The caller runs chunks too: with one helper fewer than there are workers, the loop uses
  // as many threads as the pool has cores, not one more (an extra thread means preemption
  // in the middle of a chunk while the others wait for it).
  int64_t helpers = std::min<int64_t>(job->num_chunks() - 1, num_workers_ - 1);
  for (int64_t i = 0; i < helpers; ++i) post(job);
  job->run_chunks();  // the caller helps instead of blocking a worker
  job->wait_and_rethrow();
}

}  // namespace braid::detail
