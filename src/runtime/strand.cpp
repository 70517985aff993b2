#include "runtime/strand.h"

#include <chrono>

#include "graph/exit.h"
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

// Identifies the calling thread in segments and sleepers (0 is nobody).
uint64_t this_thread_token() {
  static std::atomic<uint64_t> next{1};
  thread_local const uint64_t token = next.fetch_add(1, std::memory_order_relaxed);
  return token;
}

// Set when the strand the thread sleeps on is handed to it.
thread_local std::atomic<bool> t_handed{false};

bool completed(ArrayDesc* d) {
  return d->status.load(std::memory_order_acquire) >= Status::available;
}
}  // namespace

bool add_waiter(ArrayDesc* node, Waiter* w) noexcept {
  SpinGuard guard(node->lock);
  if (completed(node)) return false;
  w->next_waiter = node->waiters;
  node->waiters = w;
  return true;
}

Strand::~Strand() {
  // Unlink one node at a time: the chain of owning links must not be destroyed recursively.
  MutexLock lock(mu_);
  while (queue_head_) queue_head_ = std::move(queue_head_->queue_next);
}

void Strand::post_self() noexcept {
  try {
    WorkerPool::instance().post(shared_from_this());
  } catch (...) {
    // Only the pool's first construction can throw (no thread could be started), and eval
    // starts the pool before it claims anything; leave the strand to an inline runner.
    MutexLock lock(mu_);
    if (state_ == State::queued) state_ = State::idle;
  }
}

void Strand::submit(std::vector<array>& nodes, bool wake) noexcept {
  const uint64_t me = this_thread_token();
  bool post = false;
  {
    MutexLock lock(mu_);
    // submitted_ only changes under mu_: it is the sequence number of the next node.
    const uint64_t next = submitted_.load(std::memory_order_relaxed);
    bool tracked = !segments_.empty() && segments_.back().owner == me;
    if (!tracked) {
      try {
        segments_.push_back({next, next, me});
        tracked = true;
      } catch (const std::bad_alloc&) {
        // Segments only steer hand-overs; without one these nodes are simply not handed over.
      }
    }
    for (auto& n : nodes) {
      std::shared_ptr<ArrayDesc> owned = ArrayDesc::release(n);
      ArrayDesc* d = owned.get();
      if (queue_tail_ != nullptr) {
        queue_tail_->queue_next = std::move(owned);
      } else {
        queue_head_ = std::move(owned);
      }
      queue_tail_ = d;
      // Published under the lock, before any runner can see the node.
      d->status.store(Status::scheduled);  // seq_cst: pairs with park_while's flag
      notify_parked(d, d->parked);         // evaluations waiting for this claim's push
      const uint64_t end = submitted_.fetch_add(1, std::memory_order_relaxed) + 1;
      if (tracked) segments_.back().end = end;
    }
    if (wake && state_ == State::idle) {
      state_ = State::queued;
      post = true;
    }
  }
  nodes.clear();
  if (post) post_self();
}

void Strand::kick() noexcept {
  {
    MutexLock lock(mu_);
    if (state_ != State::idle || !has_work()) return;
    state_ = State::queued;
  }
  post_self();
}

bool Strand::try_run_inline(ArrayDesc* until, uint64_t until_completed) {
  {
    MutexLock lock(mu_);
    if ((state_ != State::idle && state_ != State::queued) || !has_work()) {
      // A queued strand may be taken back from the pool; the worker then finds it not queued.
      return false;
    }
    state_ = State::running;
  }
  run_loop(until, until_completed, /*on_worker=*/false);
  return true;
}

void Strand::begin_wait(const ArrayDesc* node) {
  MutexLock lock(mu_);
  try {
    sleepers_.push_back({this_thread_token(), node, &t_handed});
  } catch (const std::bad_alloc&) {
    // Hand-overs only help: without the entry the strand is simply not handed to us.
  }
}

bool Strand::end_wait() {
  const uint64_t me = this_thread_token();
  MutexLock lock(mu_);
  for (size_t i = sleepers_.size(); i-- > 0;) {
    if (sleepers_[i].thread == me) {
      sleepers_.erase(sleepers_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  t_handed.store(false, std::memory_order_relaxed);
  if (state_ != State::handed || handed_to_ != me) return false;
  state_ = State::running;
  return true;
}

void Strand::run_handed(ArrayDesc* until) { run_loop(until, 0, /*on_worker=*/false); }

bool Strand::handed_to_me() { return t_handed.load(); }

const void* Strand::take_batch(uint64_t me) {
  while (!segments_.empty() && segments_.front().end <= taken_) segments_.pop_front();
  if (!segments_.empty()) {
    const Segment& head = segments_.front();
    if (head.owner != me && head.end - taken_ >= kHandOffMin) {
      for (const Sleeper& s : sleepers_) {
        if (s.thread != head.owner) continue;
        state_ = State::handed;
        handed_to_ = s.thread;
        s.handed->store(true);  // seq_cst: pairs with park_while's flag, as node statuses do
        return s.park_key;
      }
    }
  }
  // Stop before the next long run of another thread's nodes, to offer it to its owner.
  const uint64_t queued = submitted_.load(std::memory_order_relaxed) - taken_;  // changes under mu_
  uint64_t limit = taken_ + std::min<uint64_t>(queued, kBatch);
  for (size_t i = 1; i < segments_.size() && segments_[i].begin < limit; ++i) {
    const Segment& s = segments_[i];
    if (s.owner != me && s.end - s.begin >= kHandOffMin) {
      limit = s.begin;
      break;
    }
  }
  batch_.clear();
  batch_next_ = 0;
  for (; taken_ < limit; ++taken_) {
    std::shared_ptr<ArrayDesc> node = std::move(queue_head_);
    queue_head_ = std::move(node->queue_next);
    if (!queue_head_) queue_tail_ = nullptr;
    batch_.emplace_back(std::move(node));  // within the reserved capacity
  }
  return nullptr;
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
  const uint64_t me = this_thread_token();
  const WorkerPool& pool = WorkerPool::instance();  // started by the evaluation that submitted
  int extra = 0;
  int slice = 0;
  const auto slice_start = on_worker ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  for (;;) {
    if (batch_next_ == batch_.size()) {
      const void* wake_key;
      {
        MutexLock lock(mu_);
        if (queue_head_ == nullptr) {
          state_ = State::idle;
          return;
        }
        wake_key = take_batch(me);
      }
      if (wake_key != nullptr) {
        notify_key(wake_key);  // the new holder parks on its node's slot
        return;
      }
    }
    if (pool.stopping() && !WorkerPool::is_stopping_thread()) {
      // The process is ending: run nothing more here, and leave the strand (its batch
      // included) to the exiting thread, whose static destructors may still evaluate.
      {
        MutexLock lock(mu_);
        state_ = State::idle;
      }
      WorkerPool::sleep_forever();
    }
    if (ArrayDesc* blocker = first_incomplete_input(batch_[batch_next_])) {
      {
        MutexLock lock(mu_);
        state_ = State::parked;
      }
      if (add_waiter(blocker, this)) return;  // resume() re-queues the strand
      MutexLock lock(mu_);
      state_ = State::running;  // it completed meanwhile: carry on
      continue;
    }
    {
      array node = std::move(batch_[batch_next_++]);  // released right after: its memory may go
      if (!execute_node(node)) {
        // The process began to end after the check above: give the node back and leave the
        // strand to the exiting thread, as there.
        batch_[--batch_next_] = std::move(node);
        {
          MutexLock lock(mu_);
          state_ = State::idle;
        }
        WorkerPool::sleep_forever();
      }
    }
    // seq_cst pairs with wait_until_completed's flag: it sees the count or we see it parked.
    completed_.fetch_add(1);
    notify_parked(&completed_, sync_parked_);

    bool hand_off = false;
    if (on_worker) {
      ++slice;
      // A stopping pool (process exit) runs no further kernels; the strand stays queued for
      // a thread that waits on it (an evaluation from a static destructor runs it inline).
      hand_off = pool.stopping() ||
                 (pool.has_pending() &&
                  (slice >= kWorkerSlice || std::chrono::steady_clock::now() - slice_start >= kWorkerSliceTime));
    } else if (until != nullptr && completed(until)) {
      hand_off = ++extra > kInlineExtra;
    } else if (until_completed > 0 && completed_.load() >= until_completed) {
      // A synchronize or drain: what others submitted after its call is not its to run.
      hand_off = true;
    }
    if (hand_off) {
      {
        MutexLock lock(mu_);
        if (!has_work()) {
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
    if (help_at_exit()) continue;  // nobody else runs anything now
    park_while(&completed_, sync_parked_, [&] { return completed_.load() == done; });
  }
}

}  // namespace braid::detail
