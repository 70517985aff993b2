// The caching allocator. Buffers are freed by their last owner, which on the CPU is after
// every task that reads them has finished (tasks hold their inputs), so reuse is stream-safe.
//
// The cache is split into shards, each with its own lock; a thread frees into and allocates
// from its own shard first, so threads on different streams do not contend. Small sizes
// are binned by an array index, large ones by a map. get_peak_memory() is sampled at
// allocations of 16 KiB or more and at each query, not at every small allocation.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <sys/sysinfo.h>

#include "backend/backend.h"
#include "braid/memory.h"
#include "memory/allocator_hooks.h"
#include "runtime/mutex.h"

namespace braid {
namespace detail {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kSmall = 4096;  // sizes up to this are binned in 64-byte steps
constexpr size_t kPage = 4096;
constexpr int kShards = 16;
// Buffers of at least kHugeMin bytes are whole 2 MiB pages, aligned to them, and asked to be
// backed by transparent huge pages (madvise; most kernels' default "madvise" mode gives them
// only when asked): the first write then takes one page fault per 2 MiB instead of one per
// 4 KiB. Filling a fresh 3 GiB array took most of its time in page faults on the 2-core CI
// machine. The rounding costs at most 1/16 of such a buffer.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeMin = size_t{32} << 20;

size_t size_class(size_t size) {
  if (size <= kSmall) return (size + kAlignment - 1) / kAlignment * kAlignment;
  if (size >= kHugeMin) return (size + kHugePage - 1) / kHugePage * kHugePage;
  return (size + kPage - 1) / kPage * kPage;
}

// A fresh buffer of size class `cls`, or null.
void* fresh_buffer(size_t cls) {
  if (cls < kHugeMin) return std::aligned_alloc(kAlignment, cls);
  void* ptr = std::aligned_alloc(kHugePage, cls);
  // Advice only: where the kernel has no huge pages for it, the buffer keeps small pages.
  if (ptr != nullptr) madvise(ptr, cls, MADV_HUGEPAGE);
  return ptr;
}

size_t total_ram() {
  struct sysinfo info {};
  if (sysinfo(&info) == 0) return static_cast<size_t>(info.totalram) * info.mem_unit;
  return size_t{8} << 30;
}

// A cgroup v2 limit file ("max" or a byte count); SIZE_MAX when absent or unlimited.
size_t read_cgroup_limit(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return SIZE_MAX;
  char text[32] = {};
  const size_t n = std::fread(text, 1, sizeof(text) - 1, f);
  std::fclose(f);
  if (n == 0 || text[0] < '0' || text[0] > '9') return SIZE_MAX;
  return static_cast<size_t>(std::strtoull(text, nullptr, 10));
}

// The most memory this process could ever be given: physical memory plus swap, or the
// cgroup's memory plus swap limits when those are lower. A request above it can never be
// backed, even where the kernel overcommits and would hand out the address range anyway.
size_t backable_bytes() {
  struct sysinfo info {};
  size_t machine = SIZE_MAX;
  if (sysinfo(&info) == 0) {
    machine = (static_cast<size_t>(info.totalram) + static_cast<size_t>(info.totalswap)) * info.mem_unit;
  }
  const size_t mem = read_cgroup_limit("/sys/fs/cgroup/memory.max");
  if (mem != SIZE_MAX) {
    const size_t swap = read_cgroup_limit("/sys/fs/cgroup/memory.swap.max");
    const size_t group = swap == SIZE_MAX || mem > SIZE_MAX - swap ? SIZE_MAX : mem + swap;
    machine = std::min(machine, group);
  }
  return machine;
}

// std::bad_alloc with the size asked for and the limit in its message (no allocation).
class AllocationTooLarge : public std::bad_alloc {
 public:
  AllocationTooLarge(size_t size, size_t limit) {
    std::snprintf(msg_, sizeof(msg_),
                  "[malloc] Cannot allocate %zu bytes: more than this machine can ever provide "
                  "(%zu bytes of memory and swap).",
                  size, limit);
  }
  const char* what() const noexcept override { return msg_; }

 private:
  char msg_[192];
};

// Each shard keeps its own byte counts on its own cache line: threads on different streams
// never write a shared counter on the hot path. Totals are sums over the shards.
struct alignas(64) Shard {
  SpinMutex mu;                                                  // nearly always taken by one thread only
  std::vector<void*> small[kSmall / kAlignment] GUARDED_BY(mu);  // index: class / 64 - 1
  std::map<size_t, std::vector<void*>> large GUARDED_BY(mu);
  std::atomic<int64_t> active{0};  // handed out minus returned through this shard
  std::atomic<int64_t> cached{0};
};

// Small buffers cached per shard at most (on top of the global cache limit).
constexpr int64_t kSmallCachePerShard = int64_t{64} << 20;
// The peak is sampled at allocations of at least this size and at every query.
constexpr size_t kPeakSample = size_t{16} << 10;

std::atomic<int> g_next_shard{0};
int my_shard() {
  // Round-robin at a thread's first allocation, so that concurrent threads rarely share one.
  thread_local int shard = g_next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

class CachingAllocator {
 public:
  CachingAllocator()
      : memory_limit_(total_ram() / 10 * 9),
        cache_limit_(total_ram() / 10 * 9),
        backable_(std::min(backable_bytes(), SIZE_MAX >> 2)) {}

  allocator::Buffer malloc(size_t size) {
    if (fail_next_.load(std::memory_order_relaxed) > 0 &&
        fail_next_.fetch_sub(1, std::memory_order_relaxed) > 0) {
      throw std::bad_alloc();
    }
    if (size > backable_) throw AllocationTooLarge(size, backable_);
    const size_t cls = size_class(std::max<size_t>(size, 1));
    Shard& home = shards_[my_shard()];
    void* ptr = take(home, cls);
    // A fresh large buffer costs page faults, far more than looking through other shards.
    for (int i = 1; ptr == nullptr && cls > kSmall && i < kShards; ++i) {
      ptr = take(shards_[(&home - shards_ + i) % kShards], cls);
    }
    if (ptr == nullptr) {
      if (cls > kSmall && active() + cls > memory_limit_.load(std::memory_order_relaxed)) {
        clear();  // over the guideline: give the cache back before growing
      }
      ptr = fresh_buffer(cls);
      if (ptr == nullptr) {
        clear();
        ptr = fresh_buffer(cls);
        if (ptr == nullptr) throw std::bad_alloc();
      }
    }
    home.active.fetch_add(static_cast<int64_t>(cls), std::memory_order_relaxed);
    if (cls >= kPeakSample) note_peak();
    return allocator::Buffer{ptr, size};
  }

  void free(allocator::Buffer b) noexcept {
    if (b.ptr == nullptr) return;
    const size_t cls = size_class(std::max<size_t>(b.size, 1));
    Shard& home = shards_[my_shard()];
    home.active.fetch_sub(static_cast<int64_t>(cls), std::memory_order_relaxed);
    const int64_t limit = static_cast<int64_t>(cache_limit_.load(std::memory_order_relaxed));
    const int64_t c = static_cast<int64_t>(cls);
    bool keep = cls <= kSmall
                    ? home.cached.load(std::memory_order_relaxed) + c <= std::min(limit, kSmallCachePerShard)
                    : static_cast<int64_t>(cache_bytes()) + c <= limit;
    if (keep) {
      SpinLock lock(home.mu);
      try {
        if (cls <= kSmall) {
          home.small[cls / kAlignment - 1].push_back(b.ptr);
        } else {
          home.large[cls].push_back(b.ptr);
        }
        home.cached.fetch_add(c, std::memory_order_relaxed);
        return;
      } catch (const std::bad_alloc&) {
        // No room to cache it (this runs in destructors, when memory is short): free it.
      }
    }
    std::free(b.ptr);
  }

  size_t active() const {
    int64_t sum = 0;
    for (const auto& s : shards_) sum += s.active.load(std::memory_order_relaxed);
    return sum > 0 ? static_cast<size_t>(sum) : 0;
  }
  size_t peak() {
    // As MLX, a reset peak reads 0 until memory is next allocated (small allocations are not
    // sampled as they happen: a change of the active bytes since the reset stands for them).
    if (peak_.load(std::memory_order_relaxed) == 0 &&
        active() == active_at_reset_.load(std::memory_order_relaxed))
      return 0;
    note_peak();
    return peak_.load(std::memory_order_relaxed);
  }
  void reset_peak() {
    active_at_reset_.store(active(), std::memory_order_relaxed);
    peak_.store(0, std::memory_order_relaxed);
  }
  size_t cache_bytes() const {
    int64_t sum = 0;
    for (const auto& s : shards_) sum += s.cached.load(std::memory_order_relaxed);
    return sum > 0 ? static_cast<size_t>(sum) : 0;
  }
  size_t set_memory_limit(size_t limit) { return memory_limit_.exchange(limit); }
  size_t memory_limit() const { return memory_limit_.load(std::memory_order_relaxed); }
  size_t set_cache_limit(size_t limit) {
    size_t old = cache_limit_.exchange(limit);
    if (cache_bytes() > limit) clear();
    return old;
  }
  void clear() {
    for (auto& s : shards_) {
      SpinLock lock(s.mu);
      int64_t freed = 0;
      for (size_t i = 0; i < kSmall / kAlignment; ++i) {
        for (void* p : s.small[i]) std::free(p);
        freed += static_cast<int64_t>(s.small[i].size() * (i + 1) * kAlignment);
        s.small[i].clear();
      }
      for (auto& [cls, list] : s.large) {
        for (void* p : list) std::free(p);
        freed += static_cast<int64_t>(list.size() * cls);
      }
      s.large.clear();
      s.cached.fetch_sub(freed, std::memory_order_relaxed);
    }
  }
  void fail_next(int n) { fail_next_.store(n, std::memory_order_relaxed); }

 private:
  void note_peak() {
    size_t now = active();
    size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }

  void* take(Shard& s, size_t cls) {
    SpinLock lock(s.mu);
    std::vector<void*>* list;
    if (cls <= kSmall) {
      list = &s.small[cls / kAlignment - 1];
    } else {
      auto it = s.large.find(cls);
      if (it == s.large.end()) return nullptr;
      list = &it->second;
    }
    if (list->empty()) return nullptr;
    void* p = list->back();
    list->pop_back();
    s.cached.fetch_sub(static_cast<int64_t>(cls), std::memory_order_relaxed);
    return p;
  }

  Shard shards_[kShards];
  std::atomic<size_t> memory_limit_;
  std::atomic<size_t> cache_limit_;
  const size_t backable_;  // requests above this can never be backed (see backable_bytes)
  std::atomic<size_t> peak_{0};
  std::atomic<size_t> active_at_reset_{0};  // active bytes at the last reset_peak()
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
void free(Buffer buffer) noexcept { detail::cpu_allocator().free(buffer); }
}  // namespace allocator

// Host and device memory together: the peak is the sum of the two peaks (each exact, their sum an
// upper bound on the two together).
size_t get_active_memory() { return detail::cpu_allocator().active() + detail::gpu::active_memory(); }
size_t get_peak_memory() { return detail::cpu_allocator().peak() + detail::gpu::peak_memory(); }
void reset_peak_memory() {
  detail::cpu_allocator().reset_peak();
  detail::gpu::reset_peak_memory();
}
size_t get_cache_memory() { return detail::cpu_allocator().cache_bytes(); }
size_t set_memory_limit(size_t limit) { return detail::cpu_allocator().set_memory_limit(limit); }
size_t get_memory_limit() { return detail::cpu_allocator().memory_limit(); }
size_t set_cache_limit(size_t limit) { return detail::cpu_allocator().set_cache_limit(limit); }
void clear_cache() { detail::cpu_allocator().clear(); }

size_t set_wired_limit(size_t limit) {
  static std::atomic<size_t> wired_limit{0};  // kept for MLX's API only; nothing reads it
  return wired_limit.exchange(limit, std::memory_order_relaxed);
}

namespace {

/// The bytes the allocator set aside for `d`: its size class (the device allocator's rounding
/// on the GPU), or its own bytes for inline, external and empty buffers.
size_t reserved_bytes(const detail::Data& d) {
  const size_t bytes = d.buffer.size;
  if (bytes == 0 || d.is_inline || d.external) return bytes;
  return d.on_device ? detail::gpu::allocated_bytes(bytes) : detail::size_class(bytes);
}

}  // namespace

size_t array::buffer_size() const {
  array(*this).eval();
  const detail::Data* d = desc()->data.get();
  return d == nullptr ? 0 : reserved_bytes(*d);
}

size_t get_array_buffer_size(const std::vector<array>& arrays) {
  std::unordered_set<const detail::Data*> seen;
  size_t total = 0;
  for (const array& a : arrays) {
    // As MLX: an array never scheduled is an error. One scheduled (async_eval) is waited for,
    // so that its buffer is read only once written.
    if (a.desc()->status.load(std::memory_order_acquire) == detail::Status::unscheduled) {
      throw std::invalid_argument("[get_array_buffer_size] Arrays must be evaluated first.");
    }
    if (!a.is_available()) {
      try {
        array(a).eval();
      } catch (const std::exception& e) {
        throw std::invalid_argument(std::string("[get_array_buffer_size] An array's evaluation failed: ") +
                                    e.what());
      }
    }
    const detail::Data* d = a.desc()->data.get();
    if (d == nullptr || !seen.insert(d).second) continue;
    total += reserved_bytes(*d);
  }
  return total;
}

}  // namespace braid
