// Streams: process-wide ordered queues of work (DESIGN.md section 1).
#pragma once

#include <memory>
#include <ostream>
#include <variant>
#include <vector>

#include "braid/device.h"

namespace braid {

namespace detail {
struct StreamState;
}

/// A stream is a queue, not a thread: the same value names the same queue on every thread.
/// Work on one stream runs one task at a time in submission order. Copying a Stream is cheap
/// and keeps the queue alive; a Stream may be used from any thread at any time.
struct Stream {
  /// Distinct among live streams (>= 0) and among live thread-local handles (< 0); the index
  /// of a stream or handle that no longer exists may be given to a new one.
  int index;
  Device device;

  /// Looks up a live stream by index. Throws std::invalid_argument if none has that index.
  Stream(int index, Device device);

  bool operator==(const Stream& o) const { return index == o.index && device == o.device; }
  bool operator!=(const Stream& o) const { return !(*this == o); }
  /// An order for maps and sets (by index, which live streams do not share).
  bool operator<(const Stream& o) const { return index < o.index; }

  /// True for a handle made by new_thread_local_stream: it resolves to one real stream per
  /// calling thread wherever a stream is accepted.
  bool is_thread_local_handle() const { return index < 0; }

  // Runtime access; not part of the public contract.
  detail::StreamState* state() const { return state_.get(); }
  /// For a handle, the owner of its index (state() stays null).
  const std::shared_ptr<detail::StreamState>& shared_state() const { return state_; }
  Stream(int index, Device device, std::shared_ptr<detail::StreamState> state)
      : index(index), device(device), state_(std::move(state)) {}

 private:
  std::shared_ptr<detail::StreamState> state_;
};

/// Where an op runs: nothing (the calling thread's default stream of its default device), a
/// stream (or thread-local stream handle), or a device (that device's default stream).
using StreamOrDevice = std::variant<std::monostate, Stream, Device>;

/// Resolves `s` on the calling thread to a real stream. Thread-safe.
Stream to_stream(StreamOrDevice s);
/// As above, but nothing (std::monostate) means `default_`'s default stream (MLX's overload).
Stream to_stream(StreamOrDevice s, Device default_);

/// The calling thread's default stream for `d`, created on first use and released when the
/// thread exits and no array or Stream value references it. Thread-safe. This and the other
/// per-thread settings below keep working in thread_local and static destructors at exit.
Stream default_stream(Device d);

/// Makes `s` the calling thread's default stream for `s.device`; other threads are unaffected.
void set_default_stream(Stream s);

/// A new process-wide stream on `d`; it lives as long as any Stream value or array refers to
/// it. Thread-safe.
Stream new_stream(Device d);

/// MLX's type for the handle new_thread_local_stream makes: a Stream whose
/// is_thread_local_handle() is true, accepted wherever a stream is.
struct ThreadLocalStream : public Stream {
  using Stream::Stream;
};

/// A handle that resolves to one real stream per calling thread (created on first use).
/// Arrays built through it carry the real stream, so they evaluate on any thread. Once its
/// last copy dies, each thread releases its stream (at its next new resolution or exit).
ThreadLocalStream new_thread_local_stream(Device d);

/// The calling thread's real stream behind a thread-local handle (`s` itself otherwise).
Stream stream_from_thread_local_stream(Stream s);

/// For source compatibility with MLX: returns an ordinary stream, which is already safe to
/// use from any number of threads without a caller-side lock.
Stream new_thread_unsafe_stream(Device d);

/// Blocks until all work submitted to `s` before the call has finished, then rethrows the
/// oldest failure of a kernel on `s` that no eval, wait, item, data or synchronize has
/// reported yet; the stream's later unreported failures are dropped with it (they stay on the
/// arrays that failed). Callable from any thread.
void synchronize(Stream s);

/// synchronize(default_stream(default_device())), as in MLX.
void synchronize();

/// The live stream with this index, on whichever device (MLX's get_stream). Throws
/// std::invalid_argument if no live stream has it. Thread-safe.
Stream get_stream(int index);

/// Every live stream (made by new_stream or as some thread's default), in index order (MLX).
/// Thread-safe.
std::vector<Stream> get_streams();

/// Lets go of the calling thread's default streams and of the real streams its thread-local
/// handles resolved to (MLX's "clear the streams of this thread"): its next default is a new
/// stream. Work already submitted still runs; streams still referred to stay alive. Thread-safe.
void clear_streams();

/// Sets the calling thread's default device and stream for the lifetime of the object, then
/// restores them. Affects only the calling thread. Not movable between threads.
class StreamContext {
 public:
  explicit StreamContext(StreamOrDevice s);
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

std::ostream& operator<<(std::ostream& os, const Stream& s);

}  // namespace braid
