#include "runtime/strand.h"

#include <chrono>

#include "runtime/park.h"
#include "runtime/pool.h"

namespace braid::detail {

namespace {
// After the node a thread waits for completes, it runs at most this many more nodes of the
// strand before handing the rest to the pool, so a busy shared stream cannot keep it forever.
constexpr int kInlineExtra = 64;
// A worker gives other strands a turn after this many nodes when others are waiting, or
// after this long, so that a strand of long kernels cannot keep a worker for kWorkerSlice of
// them while other threads' strands wait for one.
constexpr int kWorkerSlice = 64;
constexpr auto kWorkerSliceTime = std::chrono::milliseconds(2);
// Nodes taken from the queue per lock acquisition.
constexpr size_t kBatch = 64;

bool completed(ArrayDesc* d) {
  return d->status.load(std::memory_order_acquire) >= Status::available;
}
}  // namespace

bool add_waiter(ArrayDesc* node, Waiter* w) {
  SpinGuard guard(node->lock);
  if (completed(node)) return false;
  node->waiters.push_back(w);
  return true;
}

void Strand::post_self() { WorkerPool::instance().post(shared_from_this()); }

void Strand::submit(std::vector<array>& nodes, bool wake) {
  bool post = false;
  {
    MutexLock lock(mu_);
    for (auto& n : nodes) {
      queue_.push_back(std::move(n));  // strong guarantee: on bad_alloc `n` is untouched
      // Published under the lock, before any runner can see the node.
      ArrayDesc* d = queue_.back().desc();
      d->status.store(Status::scheduled);  // seq_cst: pairs with park_while's flag
      notify_parked(d, d->parked);         // evaluations waiting for this claim's push
      submitted_.fetch_add(1, std::memory_order_relaxed);
    }
    if (wake && state_ == State::idle) {
      state_ = State::queued;
      post = true;
    }
  }
  nodes.clear();
  if (post) post_self();
}

void Strand::kick() {
  {
    MutexLock lock(mu_);
    if (state_ != State::idle || queue_.empty()) return;
    state_ = State::queued;
  }
  post_self();
}

bool Strand::try_run_inline(ArrayDesc* until, uint64_t until_completed) {
  {
    MutexLock lock(mu_);
    // A queued strand may be taken back from the pool; the worker then finds it not queued.
    if (queue_.empty() || (state_ != State::idle && state_ != State::queued)) return false;
    state_ = State::running;
  }
  run_loop(until, until_completed, /*on_worker=*/false);
  return true;
}

void Strand::run_work() {
  {
    MutexLock lock(mu_);
    if (state_ != State::queued) return;  // taken inline meanwhile
    state_ = State::running;
  }
  run_loop(nullptr, 0, /*on_worker=*/true);
}

void Strand::resume() {
  {
    MutexLock lock(mu_);
    if (state_ != State::parked) return;
    state_ = State::queued;
  }
  post_self();
}

void Strand::run_loop(ArrayDesc* until, uint64_t until_completed, bool on_worker) {
  // Nodes are taken kBatch at a time under one lock; any not run go back to the front.
  std::vector<array> batch;
  batch.reserve(kBatch);
  size_t next = 0;
  auto give_back = [&]() REQUIRES(mu_) {
    for (size_t i = batch.size(); i-- > next;) queue_.push_front(std::move(batch[i]));
    batch.clear();
    next = 0;
  };
  int extra = 0;
  int slice = 0;
  const auto slice_start = on_worker ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  for (;;) {
    if (next == batch.size()) {
      batch.clear();
      next = 0;
      MutexLock lock(mu_);
      if (queue_.empty()) {
        state_ = State::idle;
        return;
      }
      for (size_t n = std::min(queue_.size(), kBatch); n > 0; --n) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (ArrayDesc* blocker = first_incomplete_input(batch[next])) {
      {
        MutexLock lock(mu_);
        give_back();
        state_ = State::parked;
      }
      if (add_waiter(blocker, this)) return;  // resume() re-queues the strand
      MutexLock lock(mu_);
      state_ = State::running;  // it completed meanwhile: carry on
      continue;
    }
    {
      array node = std::move(batch[next++]);  // released right after: its memory may go
      execute_node(node);
    }
    // seq_cst pairs with wait_until_completed's flag: it sees the count or we see it parked.
    completed_.fetch_add(1);
    notify_parked(&completed_, sync_parked_);

    bool hand_off = false;
    if (on_worker) {
      ++slice;
      hand_off = WorkerPool::instance().has_pending() &&
                 (slice >= kWorkerSlice || std::chrono::steady_clock::now() - slice_start >= kWorkerSliceTime);
    } else if (until != nullptr && completed(until)) {
      hand_off = ++extra > kInlineExtra;
    } else if (until_completed > 0 && completed_.load() >= until_completed) {
      // A synchronize or drain: what others submitted after its call is not its to run.
      hand_off = true;
    }
    if (hand_off) {
      {
        MutexLock lock(mu_);
        give_back();
        if (queue_.empty()) {
          state_ = State::idle;
          return;
        }
        state_ = State::queued;
      }
      post_self();
      return;
    }
  }
}

void Strand::wait_until_completed(uint64_t target) {
  while (completed_.load() < target) {
    if (try_run_inline(nullptr, target)) continue;
    kick();
    uint64_t done = completed_.load();
    if (done >= target) break;
    park_while(&completed_, sync_parked_, [&] { return completed_.load() == done; });
  }
}

}  // namespace braid::detail
