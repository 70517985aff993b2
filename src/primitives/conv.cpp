#include <atomic>

#include "primitives/conv.h"

namespace braid {
namespace {
std::atomic<int64_t> g_test_chunk_bytes{0};  // relaxed: a test sets it before it evaluates
}  // namespace

int64_t conv_chunk_bytes(int64_t fallback) {
  const int64_t test = g_test_chunk_bytes.load(std::memory_order_relaxed);
  return test > 0 ? test : fallback;
}

void set_conv_chunk_bytes_for_testing(int64_t bytes) {
  g_test_chunk_bytes.store(bytes, std::memory_order_relaxed);
}

}  // namespace braid
