// Random numbers (MLX's mlx/random.h): counter-based threefry2x32 keys, bit-identical to MLX's
// and JAX's for the same key.
//
// A key is a uint32 array of shape {2}. A function given a key is a pure function of it: the
// same key gives the same numbers on every thread and device. A function given no key takes
// the next key of the process-wide sequence (KeySequence::default_()). That sequence is one
// per process, shared by every thread and advanced under a lock, so no two draws anywhere in
// the process get the same key; after seed(s), a single-threaded program draws the keys that
// MLX draws after mx.random.seed(s). Every function here may be called from any thread.
// Bad arguments throw std::invalid_argument("[op] ...") before any node exists.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid::random {

/// A sequence of keys: each next() splits the current key, keeps the first half as the new
/// state and returns the second (MLX's KeySequence). Thread-safe: concurrent next() calls are
/// linearized, each returning a different key of the same sequence.
class KeySequence {
 public:
  explicit KeySequence(uint64_t seed);
  ~KeySequence();
  KeySequence(const KeySequence&) = delete;
  KeySequence& operator=(const KeySequence&) = delete;

  /// Restarts the sequence from key(seed).
  void seed(uint64_t seed);
  /// The next key (a uint32 array of shape {2}).
  array next();

  /// The process's sequence, seeded on first use with the milliseconds since the epoch (as
  /// MLX). Never destroyed, so no thread can outlive it.
  static KeySequence& default_();

  /// The current key (a uint32 array of shape {2}) without advancing the sequence: MLX's
  /// mlx.core.random.state[0]. Inside a KeyOverride (process sequence, calling thread), the
  /// override's key.
  array state();
  /// Makes `key` (a uint32 array of shape {2}, evaluated here) the current key.
  void set_state(const array& key);
  /// Makes `desired` the current key if the current key still has `expected`'s value (both
  /// uint32 arrays of shape {2}; evaluated first, outside the lock); returns whether it did.
  /// A caller that read state() and computed a new key from it publishes it with this and
  /// starts again on false: no draw of another thread came between (compile's captured
  /// random state does this).
  bool compare_exchange(const array& expected, const array& desired);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// While alive, draws of the process-wide sequence (KeySequence::default_()) on the calling
/// thread split `key` (any array, possibly a traced one: no value is read) instead of the
/// shared state, as MLX's draws do from a traced mlx.core.random.state. compile traces a
/// Python function that captures the random state inside one. Nests; other threads and
/// explicit keys are not affected. Not movable: destroy on the thread that made it.
class KeyOverride {
 public:
  explicit KeyOverride(array key);
  ~KeyOverride();
  KeyOverride(const KeyOverride&) = delete;
  KeyOverride& operator=(const KeyOverride&) = delete;
  /// The key after the draws made so far (the state to write back).
  const array& key() const { return key_; }

 private:
  friend class KeySequence;
  array key_;
  KeyOverride* enclosing_;
};

/// The key of a seed: {seed >> 32, seed & 0xffffffff} as uint32.
array key(uint64_t seed);

/// Restarts the process-wide key sequence from key(seed). Thread-safe.
void seed(uint64_t seed);

/// Random bits of `shape`: uint32 (width 4), uint16 (width 2) or uint8 (width 1).
array bits(const Shape& shape, int width, const std::optional<array>& key = std::nullopt,
           StreamOrDevice s = {});
inline array bits(const Shape& shape, const std::optional<array>& key = std::nullopt, StreamOrDevice s = {}) {
  return bits(shape, 4, key, s);
}

/// Two keys from one.
std::pair<array, array> split(const array& key, StreamOrDevice s = {});
/// `num` keys from one, as a uint32 array of shape {num, 2}.
array split(const array& key, int num, StreamOrDevice s = {});

/// Uniform samples in [low, high) (low and high broadcast to `shape`) of a real floating
/// `dtype`: float32, float16 or bfloat16.
array uniform(const array& low, const array& high, const Shape& shape, Dtype dtype = float32,
              const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});
template <typename T, typename U>
array uniform(T low, U high, const Shape& shape, Dtype dtype = float32,
              const std::optional<array>& key = std::nullopt, StreamOrDevice s = {}) {
  return uniform(array(low), array(high), shape, dtype, key, to_stream(s));
}
/// Uniform samples in [0, 1).
array uniform(const Shape& shape, Dtype dtype, const std::optional<array>& key = std::nullopt,
              StreamOrDevice s = {});
inline array uniform(const Shape& shape, const std::optional<array>& key = std::nullopt,
                     StreamOrDevice s = {}) {
  return uniform(shape, float32, key, s);
}

/// Samples of the normal distribution with mean `loc` (default 0) and standard deviation
/// `scale` (default 1), both broadcast; any floating dtype, or complex64 (real and imaginary
/// parts each of variance 1/2, then scaled and shifted).
array normal(const Shape& shape, Dtype dtype, const std::optional<array>& loc,
             const std::optional<array>& scale, const std::optional<array>& key, StreamOrDevice s = {});
inline array normal(const Shape& shape, Dtype dtype, const float loc, const float scale,
                    const std::optional<array>& key = std::nullopt, StreamOrDevice s = {}) {
  auto loc_ = loc == 0 ? std::nullopt : std::make_optional(array(loc, dtype));
  auto scale_ = scale == 1 ? std::nullopt : std::make_optional(array(scale, dtype));
  return normal(shape, dtype, loc_, scale_, key, s);
}
inline array normal(const Shape& shape, const float loc, const float scale,
                    const std::optional<array>& key = std::nullopt, StreamOrDevice s = {}) {
  return normal(shape, float32, loc, scale, key, s);
}
inline array normal(const Shape& shape, const Dtype dtype, const std::optional<array>& key = std::nullopt,
                    StreamOrDevice s = {}) {
  return normal(shape, dtype, std::nullopt, std::nullopt, key, s);
}
inline array normal(const Shape& shape, const std::optional<array>& key = std::nullopt,
                    StreamOrDevice s = {}) {
  return normal(shape, float32, std::nullopt, std::nullopt, key, s);
}

/// Samples of the multivariate normal distribution with mean `mean` [..., n] and covariance
/// `cov` [..., n, n]; the result has shape broadcast(cov batch, mean batch, shape) + [n].
/// float32 only. The covariance's square root U sqrt(S) V^T (from its SVD) is computed on the
/// CPU, whatever the stream; the rest runs on `s`.
array multivariate_normal(const array& mean, const array& cov, const Shape& shape, Dtype dtype,
                          const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});

/// Integers in [low, high) (broadcast to `shape`) of an integer or bool dtype; `low` where
/// high <= low.
array randint(const array& low, const array& high, const Shape& shape, Dtype dtype = int32,
              const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});
template <typename T, typename U>
array randint(T low, U high, const Shape& shape, Dtype dtype = int32,
              const std::optional<array>& key = std::nullopt, StreamOrDevice s = {}) {
  return randint(array(low), array(high), shape, dtype, key, to_stream(s));
}

/// bool samples, true with probability p (a floating array broadcast to `shape`; default 0.5).
array bernoulli(const array& p, const Shape& shape, const std::optional<array>& key = std::nullopt,
                StreamOrDevice s = {});
array bernoulli(const array& p, const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});
template <typename T>
array bernoulli(T p, const std::optional<array>& key = std::nullopt, StreamOrDevice s = {}) {
  return bernoulli(array(p), key, s);
}
template <typename T>
array bernoulli(T p, const Shape& shape, const std::optional<array>& key = std::nullopt,
                StreamOrDevice s = {}) {
  return bernoulli(array(p), shape, key, s);
}
array bernoulli(const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});

/// Standard normal samples truncated to [lower, upper] (clipped there), of a real floating
/// dtype; without `shape`, the broadcast shape of the bounds.
array truncated_normal(const array& lower, const array& upper, const Shape& shape, Dtype dtype = float32,
                       const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});
array truncated_normal(const array& lower, const array& upper, Dtype dtype = float32,
                       const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});

/// Samples of the standard Gumbel distribution: -log(-log(uniform)).
array gumbel(const Shape& shape, Dtype dtype = float32, const std::optional<array>& key = std::nullopt,
             StreamOrDevice s = {});

/// uint32 category indices along `axis` of the unnormalized log-probabilities `logits`: of
/// `shape` (which the logits without `axis` broadcast to), `num_samples` per distribution (a
/// new last axis), or one per distribution.
array categorical(const array& logits, int axis, const Shape& shape,
                  const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});
array categorical(const array& logits_, int axis, int num_samples,
                  const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});
array categorical(const array& logits, int axis = -1, const std::optional<array>& key = std::nullopt,
                  StreamOrDevice s = {});

/// Samples of the Laplace distribution with location `loc` and scale `scale`.
array laplace(const Shape& shape, Dtype dtype, const float loc, const float scale,
              const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});
inline array laplace(const Shape& shape, const float loc, const float scale,
                     const std::optional<array>& key = std::nullopt, StreamOrDevice s = {}) {
  return laplace(shape, float32, loc, scale, key, s);
}
inline array laplace(const Shape& shape, const Dtype dtype, const std::optional<array>& key = std::nullopt,
                     StreamOrDevice s = {}) {
  return laplace(shape, dtype, 0.0, 1.0, key, s);
}
inline array laplace(const Shape& shape, const std::optional<array>& key = std::nullopt,
                     StreamOrDevice s = {}) {
  return laplace(shape, float32, 0.0, 1.0, key, s);
}

/// x with its entries along `axis` randomly permuted.
array permutation(const array& x, int axis = 0, const std::optional<array>& key = std::nullopt,
                  StreamOrDevice s = {});
/// A random permutation of arange(x), as uint32.
array permutation(int x, const std::optional<array>& key = std::nullopt, StreamOrDevice s = {});

}  // namespace braid::random
