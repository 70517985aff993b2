// A strand: one stream's queue of nodes, run one at a time in submission order by whichever
// thread holds it (a pool worker, or a thread about to wait for the result).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <vector>

#include "braid/array.h"
#include "runtime/mutex.h"
#include "runtime/pool.h"

namespace braid::detail {

/// Something to run once when a node completes (see add_waiter). A waiter waits on at most
/// one node at a time: its link into that node's list is its own.
struct Waiter {
  virtual ~Waiter() = default;
  virtual void resume() = 0;
  Waiter* next_waiter = nullptr;  // guarded by the lock of the node it waits on
};

/// Registers `w` to run when `node` completes. Returns false (and registers nothing) if the
/// node has already completed. Never allocates, never throws. Thread-safe.
bool add_waiter(ArrayDesc* node, Waiter* w) noexcept;

class Strand : public WorkItem, public Waiter, public std::enable_shared_from_this<Strand> {
 public:
  Strand() { batch_.reserve(kBatch); }
  ~Strand() override;

  /// A run of at least this many nodes from one thread is handed to that thread to run, if it
  /// sleeps waiting: its nodes were built there and are freed there (into its own pools),
  /// where another runner would miss the cache on nearly every node and free them across
  /// threads. Shorter runs are not worth a wake-up.
  static constexpr uint64_t kHandOffMin = 128;

  /// Appends claimed nodes in order and empties `nodes`. With `wake`, a worker will run
  /// them; without, the caller promises to run them inline or call kick() before it blocks.
  /// Never allocates, never throws: a claimed node always reaches its queue. Thread-safe.
  void submit(std::vector<array>& nodes, bool wake) noexcept EXCLUDES(mu_);
  /// Hands pending work to the pool if nobody holds or has queued the strand. Never throws.
  /// Thread-safe.
  void kick() noexcept EXCLUDES(mu_);
  /// Runs queued nodes on the calling thread if no one else holds the strand. Stops soon
  /// after `until` completes, as soon as `until_completed` nodes (if non-zero) have completed
  /// in total, when the queue empties or parks, or when it hands the strand to the thread
  /// whose nodes come next. Returns whether it ran.
  bool try_run_inline(ArrayDesc* until, uint64_t until_completed = 0) EXCLUDES(mu_);
  /// Registers the calling thread, about to sleep until `node` (queued here) completes. A
  /// runner that reaches a long run of nodes this thread submitted then hands the strand to
  /// it (state handed) and wakes it (parkers on `node`'s slot), so that each thread runs the
  /// nodes it built, whose memory is in its core's cache. The sleep must also end when
  /// handed_to_me() turns true, and be followed by end_wait().
  void begin_wait(const ArrayDesc* node) EXCLUDES(mu_);
  /// Ends begin_wait. Returns true if the strand was handed to the caller, which then holds
  /// it and must call run_handed().
  bool end_wait() EXCLUDES(mu_);
  /// Runs a strand that end_wait() handed to the caller (as try_run_inline does).
  void run_handed(ArrayDesc* until) EXCLUDES(mu_);
  /// Whether the strand the calling thread sleeps on was handed to it.
  static bool handed_to_me();
  /// Threads registered by begin_wait now (for tests).
  size_t sleepers() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return sleepers_.size();
  }
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
  enum class State { idle, queued, running, parked, handed };
  // A run of consecutive nodes submitted by one thread: sequence numbers [begin, end).
  struct Segment {
    uint64_t begin;
    uint64_t end;
    uint64_t owner;  // the submitting thread's token
  };
  // A thread sleeping in wait_for on a node of this strand (see begin_wait).
  struct Sleeper {
    uint64_t thread;
    const void* park_key;        // the node it parks on; its address only, never read
    std::atomic<bool>* handed;   // the thread's flag; valid while registered (under mu_)
  };
  static constexpr size_t kBatch = 64;  // nodes taken from the queue per lock acquisition

  // Runs with state_ == running. Returns when the strand is idle, parked or handed back.
  void run_loop(ArrayDesc* until, uint64_t until_completed, bool on_worker) EXCLUDES(mu_);
  // Queues the strand on the pool (state queued).
  void post_self() noexcept;
  // Only while no one holds the strand (the holder moves through batch_ without the lock).
  bool has_work() const REQUIRES(mu_) { return queue_head_ != nullptr || batch_next_ != batch_.size(); }
  // Refills the (empty) batch from the queue, stopping before a long run of another thread's
  // nodes. If such a run is at the head and its owner sleeps in wait_for, hands the strand
  // to it instead and returns the key to wake it with.
  const void* take_batch(uint64_t me) REQUIRES(mu_);

  Mutex mu_;
  // The queue: nodes linked through ArrayDesc::queue_next, each owned by the link before it.
  std::shared_ptr<ArrayDesc> queue_head_ GUARDED_BY(mu_);
  ArrayDesc* queue_tail_ GUARDED_BY(mu_) = nullptr;
  State state_ GUARDED_BY(mu_) = State::idle;
  std::deque<Segment> segments_ GUARDED_BY(mu_);
  uint64_t taken_ GUARDED_BY(mu_) = 0;   // nodes ever moved from the queue to the batch
  std::vector<Sleeper> sleepers_ GUARDED_BY(mu_);
  uint64_t handed_to_ GUARDED_BY(mu_) = 0;  // with State::handed: the thread that may take it
  // Nodes taken off the queue and not yet run, in order, ahead of the queue. Used only by
  // the strand's holder (state running); a holder that stops early leaves the rest for the
  // next one (ownership passes through mu_). Capacity reserved once: running never allocates.
  std::vector<array> batch_;
  size_t batch_next_ = 0;
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

// Failures that nobody has been told of, for synchronize (MLX's synchronize raises a stream's
// errors): up to 8 per stream, oldest first, each kept until an eval or a wait rethrows it,
// synchronize takes the stream's (reporting the oldest), or the stream dies. None of these
// throws; only noting one may allocate (without memory it is not kept).

/// A kernel on `s` failed with `e`.
void note_stream_failure(const StreamState& s, const std::exception_ptr& e) noexcept;
/// The oldest failure kept for `s` (null if none); all of the stream's are forgotten.
std::exception_ptr take_stream_failure(const StreamState& s) noexcept;
/// Forgets `e` wherever it is kept: it has reached a caller through an array.
void forget_stream_failure(const std::exception_ptr& e) noexcept;

/// Runs one claimed node whose inputs have all completed: computes it (or propagates an
/// input's error), publishes the result, wakes waiters, detaches inputs. Never throws.
/// Returns false, touching nothing, when another thread is ending the process: the caller
/// then gives the node back to its strand and starts nothing more.
bool execute_node(array& node) noexcept;

/// The first input of `node` that has not completed, or null. Called by the node's claimer.
ArrayDesc* first_incomplete_input(const array& node);

}  // namespace braid::detail
