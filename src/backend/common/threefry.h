// The threefry2x32 counter-based generator (20 rounds, Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC11) and MLX's (= JAX's) layout of its words in a random
// bits array. Compiled for the host and, under nvcc, for the device.
//
// Layout: the output of one key is `bytes` bytes, read as W = ceil(bytes / 4) little-endian
// uint32 words (the last one possibly cut short). With H = W / 2 and odd = W % 2, counter pair
// p < H is (p, p + H + odd): its first hash word is word p and its second is word p + H + odd.
// When W is odd, the middle word H is the first hash word of the counter pair (H, 0).
// Counters are 32-bit: MLX and JAX wrap them, and so does braid.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define BRAID_RNG_HD __host__ __device__
#else
#define BRAID_RNG_HD
#endif

namespace braid::common {

struct Words2 {
  uint32_t first;
  uint32_t second;
};

BRAID_RNG_HD inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// One round: mix, rotate by r, xor.
BRAID_RNG_HD inline void threefry_round(uint32_t& x0, uint32_t& x1, int r) {
  x0 += x1;
  x1 = rotl32(x1, r) ^ x0;
}

/// threefry2x32 with 20 rounds of `counter` under `key`.
BRAID_RNG_HD inline Words2 threefry2x32(Words2 key, Words2 counter) {
  const uint32_t ks[3] = {key.first, key.second, key.first ^ key.second ^ 0x1BD11BDAu};
  uint32_t x0 = counter.first + ks[0];
  uint32_t x1 = counter.second + ks[1];
  // Five groups of four rounds, the rotations alternating; a key injection after each group.
  for (int g = 0; g < 5; ++g) {
    if (g % 2 == 0) {
      threefry_round(x0, x1, 13);
      threefry_round(x0, x1, 15);
      threefry_round(x0, x1, 26);
      threefry_round(x0, x1, 6);
    } else {
      threefry_round(x0, x1, 17);
      threefry_round(x0, x1, 29);
      threefry_round(x0, x1, 16);
      threefry_round(x0, x1, 24);
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + static_cast<uint32_t>(g + 1);
  }
  return {x0, x1};
}

/// How one key's bytes split into words and counter pairs (see the layout above).
struct BitsLayout {
  int64_t bytes;  // output bytes per key
  int64_t words;  // ceil(bytes / 4)
  int64_t half;   // words / 2
  bool odd;       // words % 2

  BRAID_RNG_HD explicit BitsLayout(int64_t bytes_per_key)
      : bytes(bytes_per_key), words((bytes_per_key + 3) / 4), half(words / 2), odd(words % 2 != 0) {}
  /// Hash evaluations per key: one per counter pair.
  BRAID_RNG_HD int64_t pairs() const { return half + (odd ? 1 : 0); }
};

/// Counter pair `p` of a key: its hash, the word index of its first word and of its second
/// (-1 when the second word is not used: the middle word of an odd count).
struct BitsPair {
  Words2 hash;
  int64_t first_word;
  int64_t second_word;
};

BRAID_RNG_HD inline BitsPair bits_pair(Words2 key, const BitsLayout& l, int64_t p) {
  if (p < l.half) {
    const int64_t second = p + l.half + (l.odd ? 1 : 0);
    const Words2 ctr{static_cast<uint32_t>(p), static_cast<uint32_t>(second)};
    return {threefry2x32(key, ctr), p, second};
  }
  const Words2 ctr{static_cast<uint32_t>(p), 0u};
  return {threefry2x32(key, ctr), p, -1};
}

/// MLX's split of a key into two: bits({2, 2}) of the key, rows 0 and 1.
BRAID_RNG_HD inline void split_key(Words2 key, Words2& first, Words2& second) {
  // Four words: pair 0 is counters (0, 2) -> words 0 and 2, pair 1 is (1, 3) -> words 1 and 3.
  const Words2 a = threefry2x32(key, {0u, 2u});
  const Words2 b = threefry2x32(key, {1u, 3u});
  first = {a.first, b.first};
  second = {a.second, b.second};
}

}  // namespace braid::common
