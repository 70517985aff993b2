// The key sequences: a key held on the host and advanced by threefry under a mutex, so that
// concurrent draws are linearized and the process-wide sequence is one, not one per thread.
#include <chrono>
#include <stdexcept>
#include <string>

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

// The innermost KeyOverride of this thread: seen only by this thread.
thread_local KeyOverride* t_override = nullptr;

common::Words2 words_of(array k, const char* op) {
  if (k.dtype() != uint32 || k.ndim() != 1 || k.shape(0) != 2) {
    throw std::invalid_argument(std::string("[") + op + "] A key is a uint32 array of shape (2,).");
  }
  k.eval();
  const uint32_t* p = k.data<uint32_t>();
  return {p[0], p[k.strides(0)]};
}

}  // namespace

KeyOverride::KeyOverride(array key) : key_(std::move(key)), enclosing_(t_override) { t_override = this; }
KeyOverride::~KeyOverride() { t_override = enclosing_; }

array KeySequence::state() {
  if (t_override != nullptr && this == &default_()) return t_override->key_;
  common::Words2 k;
  {
    detail::MutexLock lock(state_->mu);
    k = state_->key;
  }
  return array({k.first, k.second});
}

void KeySequence::set_state(const array& key) {
  const common::Words2 k = words_of(key, "random.state");
  detail::MutexLock lock(state_->mu);
  state_->key = k;
}

bool KeySequence::compare_exchange(const array& expected, const array& desired) {
  const common::Words2 e = words_of(expected, "random.state");
  const common::Words2 d = words_of(desired, "random.state");
  detail::MutexLock lock(state_->mu);
  if (state_->key.first != e.first || state_->key.second != e.second) return false;
  state_->key = d;
  return true;
}

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
  if (t_override != nullptr && this == &default_()) {
    auto [kept, handed] = split(t_override->key_);
    t_override->key_ = std::move(kept);
    return handed;
  }
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
