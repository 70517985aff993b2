// Per-thread free lists for the small objects every op allocates (nodes, primitives, data
// handles). A lazy graph builds and frees thousands of these per evaluation; glibc's own
// per-thread cache holds only a few blocks per size, so without this most of a tiny op's
// time goes to malloc and free.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace braid::detail {

/// A block of at least `bytes` (alignment 16). Thread-safe; blocks may be freed on any thread.
void* pool_alloc(size_t bytes);
void pool_free(void* p, size_t bytes) noexcept;

template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT
  T* allocate(size_t n) { return static_cast<T*>(pool_alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { pool_free(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const {
    return false;
  }
};

/// make_shared through the pool.
template <typename T, typename... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(PoolAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace braid::detail
