#include "memory/object_pool.h"

#include <cstdint>

namespace braid::detail {
namespace {

constexpr size_t kGranule = 64;
constexpr size_t kClasses = 8;                 // blocks of 64 .. 512 bytes
constexpr size_t kMaxCachedBytes = 4u << 20;   // per thread

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooling = false;  // let AddressSanitizer see every object's lifetime
#else
constexpr bool kPooling = true;
#endif

struct FreeBlock {
  FreeBlock* next;
};

struct ThreadCache {
  FreeBlock* heads[kClasses] = {};
  size_t cached_bytes = 0;

  ~ThreadCache() {
    for (auto*& head : heads) {
      while (head) {
        FreeBlock* next = head->next;
        ::operator delete(head);
        head = next;
      }
    }
  }
};

// Trivial thread_locals stay valid until the thread ends, so frees that arrive after the
// cache's destructor (other thread_locals dying later) can still see it is gone.
thread_local ThreadCache* t_cache = nullptr;
thread_local bool t_cache_gone = false;

struct CacheOwner {
  ThreadCache cache;
  CacheOwner() { t_cache = &cache; }
  ~CacheOwner() {
    t_cache = nullptr;
    t_cache_gone = true;
  }
};

ThreadCache* make_cache() {
  if (!t_cache_gone) {
    thread_local CacheOwner owner;
  }
  return t_cache;
}

inline ThreadCache* cache() { return t_cache != nullptr ? t_cache : make_cache(); }

size_t class_of(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }

}  // namespace

void* pool_alloc(size_t bytes) {
  const size_t c = class_of(bytes);
  if (!kPooling || c >= kClasses) return ::operator new(bytes);
  if (ThreadCache* tc = cache()) {
    if (FreeBlock* b = tc->heads[c]) {
      tc->heads[c] = b->next;
      tc->cached_bytes -= (c + 1) * kGranule;
      return b;
    }
  }
  return ::operator new((c + 1) * kGranule);
}

void pool_free(void* p, size_t bytes) noexcept {
  const size_t c = class_of(bytes);
  if (!kPooling || c >= kClasses) {
    ::operator delete(p);
    return;
  }
  ThreadCache* tc = cache();
  if (tc == nullptr || tc->cached_bytes + (c + 1) * kGranule > kMaxCachedBytes) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = tc->heads[c];
  tc->heads[c] = b;
  tc->cached_bytes += (c + 1) * kGranule;
}

}  // namespace braid::detail
