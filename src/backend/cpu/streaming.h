// Writing large outputs around the cache (non-temporal stores): the element-wise loops and
// the strided copy use it for outputs of kStreamBytes or more whose inputs are about as large
// (stream_output), where a normal store first reads each line it writes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace braid::cpu {

constexpr size_t kStreamBytes = size_t{16} << 20;

/// Whether an op that reads `read` bytes and writes `written` streams its output. Only large
/// outputs of large inputs: their reads push the output's lines out of the cache anyway, and
/// streaming saves reading each line before it is written. An output computed from small
/// (broadcast) inputs is written through the cache: on the 2-core EPYC development machine,
/// whose last-level cache holds a 64 MiB result, streaming one from two 16 KiB vectors ran at
/// 30 GB/s against 73 GB/s with ordinary stores, while an add of two 64 MiB arrays and the
/// 64 MiB copies ran faster streamed.
inline bool stream_output(size_t read, size_t written) {
  return written >= kStreamBytes && 2 * read >= written;
}

/// dst[i] = f(i) for i in [b, e), computed in blocks into an L1 buffer and streamed out (the
/// flat loop over `f` stays one the compiler vectorizes). A task calls stream_fence() once,
/// after its last stream_out, before it reports done.
template <typename R, typename F>
void stream_out(R* dst, int64_t b, int64_t e, F&& f) {
  static_assert(sizeof(R) <= 16 && 16 % sizeof(R) == 0, "stream_out writes whole 16-byte vectors");
#if defined(__SSE2__)
  constexpr int64_t kBlock = 1024 / sizeof(R);
  alignas(64) R tmp[kBlock];
  int64_t i = b;
  for (; i < e && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = f(i);
  for (; i + kBlock <= e; i += kBlock) {
    for (int64_t k = 0; k < kBlock; ++k) tmp[k] = f(i + k);
    auto* out = reinterpret_cast<__m128i*>(dst + i);
    const auto* in = reinterpret_cast<const __m128i*>(tmp);
    constexpr int64_t kVectors = kBlock * static_cast<int64_t>(sizeof(R)) / 16;
    for (int64_t k = 0; k < kVectors; ++k) _mm_stream_si128(out + k, _mm_load_si128(in + k));
  }
  for (; i < e; ++i) dst[i] = f(i);
#else
  for (int64_t i = b; i < e; ++i) dst[i] = f(i);
#endif
}

/// dst[0, bytes) = src[0, bytes), written around the cache: unaligned 16-byte loads straight
/// into non-temporal stores, four in flight. A copy staged through stream_out's buffer is a
/// third as fast (the staging copy, 64 MiB on the 2-core EPYC: 18 GB/s against 63).
inline void stream_copy(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
#if defined(__SSE2__)
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, bytes - i);
#else
  std::memcpy(d, s, bytes);
#endif
}

/// Makes a task's streamed stores visible before the task reports done.
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace braid::cpu
