// The caching allocator. Buffers are freed by their last owner, which on the CPU is after
// every task that reads them has finished (tasks hold their inputs), so reuse is stream-safe.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <utility>
#include <unordered_map>
#include <vector>

#include <sys/sysinfo.h>

#include "braid/memory.h"
#include "memory/allocator_hooks.h"
#include "runtime/mutex.h"

namespace braid {
namespace detail {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kPage = 4096;

// Sizes are rounded to a class so that buffers of nearly equal size are reused.
size_t size_class(size_t size) {
  if (size <= kPage) return (size + kAlignment - 1) / kAlignment * kAlignment;
  return (size + kPage - 1) / kPage * kPage;
}

size_t total_ram() {
  struct sysinfo info {};
  if (sysinfo(&info) == 0) return static_cast<size_t>(info.totalram) * info.mem_unit;
  return size_t{8} << 30;
}

class CachingAllocator {
 public:
  CachingAllocator() : memory_limit_(total_ram() / 10 * 9), cache_limit_(total_ram() / 10 * 9) {}

  allocator::Buffer malloc(size_t size) EXCLUDES(mu_) {
    if (fail_next_.load(std::memory_order_relaxed) > 0 &&
        fail_next_.fetch_sub(1, std::memory_order_relaxed) > 0) {
      throw std::bad_alloc();
    }
    if (size > (SIZE_MAX >> 2)) throw std::bad_alloc();  // would overflow the size class
    size_t cls = size_class(std::max<size_t>(size, 1));
    void* ptr = nullptr;
    {
      MutexLock lock(mu_);
      auto it = cache_.find(cls);
      if (it != cache_.end() && !it->second.empty()) {
        ptr = it->second.back();
        it->second.pop_back();
        cache_bytes_ -= cls;
      } else if (active_.load(std::memory_order_relaxed) + cls > memory_limit_.load()) {
        release_cached(SIZE_MAX);  // over the guideline: give the cache back first
      }
    }
    if (ptr == nullptr) {
      ptr = std::aligned_alloc(kAlignment, cls);
      if (ptr == nullptr) {
        {
          MutexLock lock(mu_);
          release_cached(SIZE_MAX);
        }
        ptr = std::aligned_alloc(kAlignment, cls);
        if (ptr == nullptr) throw std::bad_alloc();
      }
    }
    size_t now = active_.fetch_add(cls, std::memory_order_relaxed) + cls;
    size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return allocator::Buffer{ptr, size};
  }

  void free(allocator::Buffer b) EXCLUDES(mu_) {
    if (b.ptr == nullptr) return;
    size_t cls = size_class(std::max<size_t>(b.size, 1));
    active_.fetch_sub(cls, std::memory_order_relaxed);
    {
      MutexLock lock(mu_);
      if (cache_bytes_ + cls <= cache_limit_) {
        cache_[cls].push_back(b.ptr);
        cache_bytes_ += cls;
        return;
      }
    }
    std::free(b.ptr);
  }

  size_t active() const { return active_.load(std::memory_order_relaxed); }
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }
  void reset_peak() { peak_.store(active(), std::memory_order_relaxed); }
  size_t cache_bytes() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cache_bytes_;
  }
  size_t set_memory_limit(size_t limit) { return memory_limit_.exchange(limit); }
  size_t memory_limit() const { return memory_limit_.load(std::memory_order_relaxed); }
  size_t set_cache_limit(size_t limit) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    size_t old = std::exchange(cache_limit_, limit);
    if (cache_bytes_ > cache_limit_) release_cached(cache_bytes_ - cache_limit_);
    return old;
  }
  void clear() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    release_cached(SIZE_MAX);
  }
  void fail_next(int n) { fail_next_.store(n, std::memory_order_relaxed); }

 private:
  // Frees cached buffers, largest classes first, until `bytes` have gone back.
  void release_cached(size_t bytes) REQUIRES(mu_) {
    std::vector<size_t> classes;
    for (auto& [cls, list] : cache_) {
      if (!list.empty()) classes.push_back(cls);
    }
    std::sort(classes.rbegin(), classes.rend());
    size_t freed = 0;
    for (size_t cls : classes) {
      auto& list = cache_[cls];
      while (!list.empty() && freed < bytes) {
        std::free(list.back());
        list.pop_back();
        cache_bytes_ -= cls;
        freed += cls;
      }
      if (freed >= bytes) break;
    }
  }

  Mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> cache_ GUARDED_BY(mu_);
  size_t cache_bytes_ GUARDED_BY(mu_) = 0;
  std::atomic<size_t> memory_limit_;
  size_t cache_limit_ GUARDED_BY(mu_);
  std::atomic<size_t> active_{0};
  std::atomic<size_t> peak_{0};
  std::atomic<int> fail_next_{0};
};

CachingAllocator& cpu_allocator() {
  static CachingAllocator* a = new CachingAllocator();  // deliberate leak: no exit races
  return *a;
}

}  // namespace

void fail_next_allocations(int count) { cpu_allocator().fail_next(count); }

}  // namespace detail

namespace allocator {
Buffer malloc(size_t size) { return detail::cpu_allocator().malloc(size); }
void free(Buffer buffer) { detail::cpu_allocator().free(buffer); }
}  // namespace allocator

size_t get_active_memory() { return detail::cpu_allocator().active(); }
size_t get_peak_memory() { return detail::cpu_allocator().peak(); }
void reset_peak_memory() { detail::cpu_allocator().reset_peak(); }
size_t get_cache_memory() { return detail::cpu_allocator().cache_bytes(); }
size_t set_memory_limit(size_t limit) { return detail::cpu_allocator().set_memory_limit(limit); }
size_t get_memory_limit() { return detail::cpu_allocator().memory_limit(); }
size_t set_cache_limit(size_t limit) { return detail::cpu_allocator().set_cache_limit(limit); }
void clear_cache() { detail::cpu_allocator().clear(); }

}  // namespace braid
