#include "runtime/strand.h"

#include "runtime/pool.h"

namespace braid::detail {

namespace {
// After the node a thread waits for completes, it runs at most this many more nodes of the
// strand before handing the rest to the pool, so a busy shared stream cannot keep it forever.
constexpr int kInlineExtra = 64;
// A worker gives other strands a turn after this many nodes when others are waiting.
constexpr int kWorkerSlice = 64;

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
      d->status.store(Status::scheduled, std::memory_order_release);
      d->status.notify_all();  // evaluations waiting for this claim to be pushed
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

bool Strand::try_run_inline(ArrayDesc* until) {
  {
    MutexLock lock(mu_);
    // A queued strand may be taken back from the pool; the worker then finds it not queued.
    if (queue_.empty() || (state_ != State::idle && state_ != State::queued)) return false;
    state_ = State::running;
  }
  run_loop(until, /*on_worker=*/false);
  return true;
}

void Strand::run_work() {
  {
    MutexLock lock(mu_);
    if (state_ != State::queued) return;  // taken inline meanwhile
    state_ = State::running;
  }
  run_loop(nullptr, /*on_worker=*/true);
}

void Strand::resume() {
  {
    MutexLock lock(mu_);
    if (state_ != State::parked) return;
    state_ = State::queued;
  }
  post_self();
}

void Strand::run_loop(ArrayDesc* until, bool on_worker) {
  int extra = 0;
  int slice = 0;
  for (;;) {
    array* head;
    {
      MutexLock lock(mu_);
      if (queue_.empty()) {
        state_ = State::idle;
        return;
      }
      // References into a deque survive push_back, and only the runner pops.
      head = &queue_.front();
    }
    if (ArrayDesc* blocker = first_incomplete_input(*head)) {
      {
        MutexLock lock(mu_);
        state_ = State::parked;
      }
      if (add_waiter(blocker, this)) return;  // resume() re-queues the strand
      MutexLock lock(mu_);
      state_ = State::running;  // it completed meanwhile: carry on
      continue;
    }
    execute_node(*head);
    {
      MutexLock lock(mu_);
      queue_.pop_front();
    }
    // seq_cst pairs with synchronize(): either it sees the new count or we see its waiter.
    completed_.fetch_add(1);
    if (sync_waiters_.load() > 0) completed_.notify_all();

    bool hand_off = false;
    if (on_worker) {
      hand_off = ++slice >= kWorkerSlice && WorkerPool::instance().has_pending();
      if (hand_off) slice = 0;
    } else if (until != nullptr && completed(until)) {
      hand_off = ++extra > kInlineExtra;
    }
    if (hand_off) {
      {
        MutexLock lock(mu_);
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
  sync_waiters_.fetch_add(1);
  for (;;) {
    uint64_t done = completed_.load();
    if (done >= target) break;
    if (try_run_inline(nullptr)) continue;
    kick();
    done = completed_.load();
    if (done >= target) break;
    completed_.wait(done);
  }
  sync_waiters_.fetch_sub(1);
}

}  // namespace braid::detail
