// A strand: one stream's queue of nodes, run one at a time in submission order by whichever
// thread holds it (a pool worker, or a thread about to wait for the result).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "braid/array.h"
#include "runtime/mutex.h"
#include "runtime/pool.h"

namespace braid::detail {

/// Something to run once when a node completes (see add_waiter).
struct Waiter {
  virtual ~Waiter() = default;
  virtual void resume() = 0;
};

/// Registers `w` to run when `node` completes. Returns false (and registers nothing) if the
/// node has already completed. Thread-safe.
bool add_waiter(ArrayDesc* node, Waiter* w);

class Strand : public WorkItem, public Waiter, public std::enable_shared_from_this<Strand> {
 public:

  /// Appends claimed nodes in order. With `wake`, a worker will run them; without, the
  /// caller promises to run them inline or call kick() before it blocks. Thread-safe.
  void submit(std::vector<array>& nodes, bool wake) EXCLUDES(mu_);
  /// Hands pending work to the pool if nobody holds or has queued the strand. Thread-safe.
  void kick() EXCLUDES(mu_);
  /// Runs queued nodes on the calling thread if no one else holds the strand. Stops soon
  /// after `until` completes, as soon as `until_completed` nodes (if non-zero) have completed
  /// in total, or when the queue empties or parks. Returns whether it ran.
  bool try_run_inline(ArrayDesc* until, uint64_t until_completed = 0) EXCLUDES(mu_);
  /// Blocks until every node submitted before the call has completed, helping if it can.
  void synchronize() EXCLUDES(mu_) { wait_until_completed(submitted_.load()); }
  /// Blocks until at most `max_queued` nodes remain queued (backpressure), helping if it can.
  void drain_to(size_t max_queued) EXCLUDES(mu_);
  /// Blocks until `target` nodes have completed in total, helping if it can.
  void wait_until_completed(uint64_t target) EXCLUDES(mu_);
  /// Nodes queued and not yet completed.
  size_t queued() const {
    return submitted_.load(std::memory_order_acquire) - completed_.load(std::memory_order_acquire);
  }

  void run_work() override;  // a worker's turn
  void resume() override;    // the node the strand was parked on completed

 private:
  enum class State { idle, queued, running, parked };
  // Runs with state_ == running. Returns when the strand is idle, parked or handed back.
  void run_loop(ArrayDesc* until, uint64_t until_completed, bool on_worker) EXCLUDES(mu_);
  void post_self();

  Mutex mu_;
  std::deque<array> queue_ GUARDED_BY(mu_);
  State state_ GUARDED_BY(mu_) = State::idle;
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<bool> sync_parked_{false};  // someone has slept in wait_until_completed
};

/// Per-stream runtime state, shared by every Stream value and node that names the stream.
struct StreamState : std::enable_shared_from_this<StreamState> {
  StreamState(int index, Device device);
  ~StreamState();
  int index;
  Device device;
  std::shared_ptr<Strand> strand;
  std::shared_ptr<void> backend;  // the GPU backend's state (its CUDA stream) on GPU streams
};

/// Runs one claimed node whose inputs have all completed: computes it (or propagates an
/// input's error), publishes the result, wakes waiters, detaches inputs. Never throws.
void execute_node(array& node) noexcept;

/// The first input of `node` that has not completed, or null. Called by the node's claimer.
ArrayDesc* first_incomplete_input(const array& node);

}  // namespace braid::detail
