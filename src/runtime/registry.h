// The process-wide stream registry and the per-thread defaults.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "braid/stream.h"
#include "runtime/mutex.h"
#include "runtime/strand.h"

namespace braid::detail {

/// Index -> stream, for Stream(index, device) and synchronize over all streams. The hot path
/// (ops, eval) never comes here: a Stream value carries its state. Deliberately leaked.
///
/// Indices are ints (MLX's API): real streams take [0, INT_MAX], thread-local handles
/// [INT_MIN, -1]. Each range is handed out from a rotating 64-bit cursor that skips indices
/// still in use, so once a range has been used up, indices of dead streams (or handles) are
/// reused: a process may create streams for ever, and two live ones never share an index.
class StreamRegistry {
 public:
  static StreamRegistry& instance();
  /// A new stream on `d`. Throws std::invalid_argument if `d` is not available.
  Stream create(Device d) EXCLUDES(mu_);
  /// The live stream with this index, or throws std::invalid_argument.
  Stream find(int index, Device d) EXCLUDES(mu_);
  /// The live stream with this index on any device, or throws std::invalid_argument.
  Stream find(int index) EXCLUDES(mu_);
  /// Every live stream.
  std::vector<std::shared_ptr<StreamState>> all() EXCLUDES(mu_);
  /// Called by ~StreamState. Never allocates.
  void remove(int index) noexcept EXCLUDES(mu_);
  /// A new thread-local stream handle on `d`: a negative index that no live handle has, kept
  /// until the last copy of the returned value dies. Its state() is null.
  Stream new_handle(Device d) EXCLUDES(mu_);
  /// Called when the last copy of a handle dies. Never allocates.
  void release_handle(int index) noexcept EXCLUDES(mu_);

  /// Test hooks: where the next search for a free stream (handle) index starts. Any value is
  /// safe: live indices are skipped. `cursor` counts from 0; a handle's index is -1 - cursor.
  void start_stream_indices_at(int64_t cursor) EXCLUDES(mu_);
  void start_handle_indices_at(int64_t cursor) EXCLUDES(mu_);

 private:
  // The first key from `cursor` on (wrapping within [0, INT_MAX]) that `live` lacks;
  // advances the cursor past it.
  template <typename Live>
  static int take_free(int64_t& cursor, const Live& live);
  // The live stream with this index, or null. The reference is dropped after the lock, by
  // the caller (the last one would run ~StreamState, which takes mu_).
  std::shared_ptr<StreamState> lookup(int index) EXCLUDES(mu_);

  Mutex mu_;
  // A reserved index maps to an empty weak_ptr until its stream is built.
  std::unordered_map<int, std::weak_ptr<StreamState>> streams_ GUARDED_BY(mu_);
  std::unordered_set<int> handles_ GUARDED_BY(mu_);  // live handles, as -1 - index
  int64_t stream_cursor_ GUARDED_BY(mu_) = 0;
  int64_t handle_cursor_ GUARDED_BY(mu_) = 0;
};

}  // namespace braid::detail
