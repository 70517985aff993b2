// The narrow interface between the core runtime and the GPU backend. Exactly one backend
// implementation is linked: src/backend/cuda or src/backend/no_gpu (which throws).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "braid/array.h"

namespace braid::detail {
struct StreamState;
}

namespace braid::detail::gpu {

/// Whether a GPU is present and usable.
bool is_available();
/// The GPU's name, architecture ("sm_90") and memory in bytes, for device_info. Only called
/// when is_available().
struct Properties {
  std::string name;
  std::string architecture;
  size_t total_memory = 0;
};
Properties properties();
/// Backend state for a new GPU stream (its CUDA stream); released with the stream.
std::shared_ptr<void> new_stream_state(int index);
/// Runs a claimed GPU node whose inputs have completed: makes inputs device-resident and
/// ordered before the node's stream, calls eval_gpu with `outputs` (the node, and its
/// siblings for a multi-output primitive), records each output's completion event.
void eval_node(array& node, std::vector<array>& outputs);
/// A host-resident view of `in` (same shape and strides), copying device data back after
/// its producer finishes. Blocks the calling thread for the copy.
array host_view(const array& in);
/// Blocks until a GPU-resident evaluated array's producer has finished on the device.
void wait_ready(const array& a);
/// Element 0 of a GPU-resident evaluated array in host memory.
void* host_pointer(const array& a);
/// Returns a device buffer once every stream that used it has moved past its last use.
void free_device(Data& d) noexcept;
/// Bytes of device memory held by buffers in use (the allocator's cache not counted), the
/// most held at once since the start or the last reset_peak_memory, and that reset.
size_t active_memory() noexcept;
size_t peak_memory() noexcept;
void reset_peak_memory() noexcept;
/// The bytes the device allocator holds for a buffer of `bytes` (its size class).
size_t allocated_bytes(size_t bytes) noexcept;
/// Waits for all work already enqueued on a GPU stream's device queue.
void synchronize(StreamState& s);
/// Called once at process exit after the worker pool has stopped taking work: waits for the
/// device work already enqueued and stops using the CUDA runtime, so that it never unloads
/// under a running call. Never throws; a no-op when no GPU was used.
void quiesce() noexcept;

/// Set (before the buffer is used) when the backend makes its first device buffer. Until
/// then no array is GPU-resident, and CPU nodes need not look at their inputs' buffers.
extern std::atomic<bool> g_device_buffers_made;
inline bool device_buffers_made() { return g_device_buffers_made.load(std::memory_order_relaxed); }

/// True when `a`'s buffer lives on the GPU.
inline bool on_device(const array& a) { return a.desc()->data && a.desc()->data->on_device; }

}  // namespace braid::detail::gpu
