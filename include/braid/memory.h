// Memory: the caching allocator and its limits. Every function here is thread-safe.
#pragma once

#include <cstddef>
#include <vector>

namespace braid {

class array;

namespace allocator {

/// A block of memory from the allocator. `size` is what was asked for.
struct Buffer {
  void* ptr = nullptr;
  size_t size = 0;
};

/// Allocates `size` bytes (size 0 gives a valid, empty buffer). Throws std::bad_alloc when
/// the system has no memory; the allocator stays usable afterwards.
Buffer malloc(size_t size);
/// Returns a buffer to the cache (or the system when the cache is over its limit). Callers
/// free a buffer only when no stream uses it any more; arrays guarantee this by holding
/// their data until every task that reads it has finished.
void free(Buffer buffer) noexcept;

}  // namespace allocator

/// Bytes held by live arrays' buffers, in host and device memory together (not counting the
/// caches, nor constants of at most 16 bytes made from host values, which live inside the
/// array's bookkeeping).
size_t get_active_memory();
/// The largest host use since start or the last reset_peak_memory(), plus the largest device
/// use (the sum of the two peaks: at least the largest get_active_memory() seen).
size_t get_peak_memory();
/// Sets the peak to 0, as MLX: get_peak_memory() reads 0 until memory is next allocated.
void reset_peak_memory();
/// Bytes kept in the cache for reuse.
size_t get_cache_memory();
/// A guideline for active memory: above it the cache is trimmed and new submissions wait for
/// their stream's queued work to finish. Returns the previous limit.
size_t set_memory_limit(size_t limit);
size_t get_memory_limit();
/// The most bytes the cache keeps; 0 disables caching. Returns the previous limit.
size_t set_cache_limit(size_t limit);
/// Returns every cached buffer to the system.
void clear_cache();
/// MLX's limit on memory kept resident (wired) by Metal's residency sets. braid wires nothing
/// (neither backend has such sets): the value is only kept. Returns the previous one (0 at
/// first).
size_t set_wired_limit(size_t limit);

/// Bytes of the distinct buffers behind `arrays`: each buffer once (views share their base's),
/// at the size its allocator holds for it, which can exceed the arrays' nbytes. Constants of at
/// most 16 bytes and arrays over the caller's memory count their bytes; graph nodes, caches and
/// the copy one backend keeps of the other's data (a GPU mirror of a host array, a host copy of
/// a device array) are not counted. Every array must have been evaluated or scheduled
/// (std::invalid_argument otherwise); a scheduled one is waited for.
size_t get_array_buffer_size(const std::vector<array>& arrays);

}  // namespace braid
