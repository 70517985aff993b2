#include "memory/object_pool.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

namespace braid::detail {
namespace {

constexpr size_t kGranule = 64;
constexpr size_t kClasses = 8;  // blocks of 64 .. 512 bytes
// Blocks move between a thread and the shared depot in batches of this many, so that a
// graph built on one thread and freed on another (a shared stream's runner) costs one lock
// per batch instead of a trip to malloc per block.
constexpr size_t kBatch = 256;
constexpr size_t kMaxDepotBatches = 64;  // per class; beyond this, batches go back to malloc
// A thread keeps up to this many bytes of free blocks (more when a class holds under two
// batches) before it passes batches to the depot, so that a thread that builds and frees
// graphs of a few thousand nodes reuses its own blocks, still in its core's cache. Blocks
// that pass through the depot were last written on another core: taking one costs a miss.
constexpr size_t kKeepBytes = size_t{2} << 20;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooling = false;  // let AddressSanitizer see every object's lifetime
#else
constexpr bool kPooling = true;
#endif

struct FreeBlock {
  FreeBlock* next;
};

void delete_chain(FreeBlock* b) {
  while (b) {
    FreeBlock* next = b->next;
    ::operator delete(b);
    b = next;
  }
}

struct Depot {
  std::mutex mu;
  std::vector<FreeBlock*> batches[kClasses];  // each a chain of kBatch blocks
};

Depot& depot() {
  static auto* d = new Depot();  // deliberate leak: threads may return blocks during exit
  return *d;
}

struct ThreadCache {
  FreeBlock* heads[kClasses] = {};
  size_t counts[kClasses] = {};
  size_t bytes = 0;  // in all classes

  ~ThreadCache() {
    for (auto* head : heads) delete_chain(head);
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

// Moves kBatch blocks from the thread's list to the depot.
void spill(ThreadCache& tc, size_t c) {
  FreeBlock* first = tc.heads[c];
  FreeBlock* last = first;
  for (size_t i = 1; i < kBatch; ++i) last = last->next;
  tc.heads[c] = last->next;
  tc.counts[c] -= kBatch;
  tc.bytes -= kBatch * (c + 1) * kGranule;
  last->next = nullptr;
  Depot& d = depot();
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.batches[c].size() < kMaxDepotBatches) {
      d.batches[c].push_back(first);
      return;
    }
  }
  delete_chain(first);
}

// Refills an empty thread list with one batch from the depot, if it has one.
bool refill(ThreadCache& tc, size_t c) {
  Depot& d = depot();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.batches[c].empty()) return false;
  tc.heads[c] = d.batches[c].back();
  tc.counts[c] = kBatch;
  tc.bytes += kBatch * (c + 1) * kGranule;
  d.batches[c].pop_back();
  return true;
}

}  // namespace

void* pool_alloc(size_t bytes) {
  const size_t c = class_of(bytes);
  if (!kPooling || c >= kClasses) return ::operator new(bytes);
  if (ThreadCache* tc = cache()) {
    if (tc->heads[c] != nullptr || refill(*tc, c)) {
      FreeBlock* b = tc->heads[c];
      tc->heads[c] = b->next;
      --tc->counts[c];
      tc->bytes -= (c + 1) * kGranule;
      return b;
    }
  }
  return ::operator new((c + 1) * kGranule);
}

void pool_free(void* p, size_t bytes) noexcept {
  const size_t c = class_of(bytes);
  ThreadCache* tc = kPooling && c < kClasses ? cache() : nullptr;
  if (tc == nullptr) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = tc->heads[c];
  tc->heads[c] = b;
  tc->bytes += (c + 1) * kGranule;
  if (++tc->counts[c] >= 2 * kBatch && tc->bytes > kKeepBytes) {
    try {
      spill(*tc, c);
    } catch (...) {
      // The depot could not grow: keep the blocks here.
    }
  }
}

}  // namespace braid::detail
