// The key sequences: a key held on the host and advanced by threefry under a mutex, so that
// concurrent draws are linearized and the process-wide sequence is one, not one per thread.
#include <chrono>

#include "backend/common/threefry.h"
#include "braid/random.h"
#include "runtime/mutex.h"

namespace braid::random {

struct KeySequence::State {
  detail::Mutex mu;
  common::Words2 key GUARDED_BY(mu);
};

namespace {

common::Words2 key_words(uint64_t seed) {
  return {static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(seed)};
}

uint64_t time_seed() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

}  // namespace

KeySequence::KeySequence(uint64_t seed) : state_(std::make_unique<State>()) {
  detail::MutexLock lock(state_->mu);
  state_->key = key_words(seed);
}

KeySequence::~KeySequence() = default;

void KeySequence::seed(uint64_t seed) {
  detail::MutexLock lock(state_->mu);
  state_->key = key_words(seed);
}

array KeySequence::next() {
  common::Words2 handed_out;
  {
    detail::MutexLock lock(state_->mu);
    common::Words2 kept;
    common::split_key(state_->key, kept, handed_out);
    state_->key = kept;
  }
  return array({handed_out.first, handed_out.second});
}

KeySequence& KeySequence::default_() {
  // Deliberately leaked: no static destructor can race a thread that still draws at exit.
  static KeySequence* const sequence = new KeySequence(time_seed());
  return *sequence;
}

array key(uint64_t seed) {
  const common::Words2 k = key_words(seed);
  return array({k.first, k.second});
}

void seed(uint64_t seed) { KeySequence::default_().seed(seed); }

}  // namespace braid::random
