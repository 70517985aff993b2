// The process-wide stream registry and the per-thread defaults.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "braid/stream.h"
#include "runtime/mutex.h"
#include "runtime/strand.h"

namespace braid::detail {

/// Index -> stream, for Stream(index, device) and synchronize over all streams. The hot path
/// (ops, eval) never comes here: a Stream value carries its state. Deliberately leaked.
class StreamRegistry {
 public:
  static StreamRegistry& instance();
  /// A new stream on `d`. Throws std::invalid_argument if `d` is not available.
  Stream create(Device d) EXCLUDES(mu_);
  /// The live stream with this index, or throws std::invalid_argument.
  Stream find(int index, Device d) EXCLUDES(mu_);
  /// Every live stream.
  std::vector<std::shared_ptr<StreamState>> all() EXCLUDES(mu_);
  /// Called by ~StreamState.
  void remove(int index) EXCLUDES(mu_);
  /// A fresh (negative) index for a thread-local stream handle.
  int next_handle_index() { return -1 - next_handle_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Mutex mu_;
  std::unordered_map<int, std::weak_ptr<StreamState>> streams_ GUARDED_BY(mu_);
  int next_index_ GUARDED_BY(mu_) = 0;
  std::atomic<int> next_handle_{0};
};


}  // namespace braid::detail
