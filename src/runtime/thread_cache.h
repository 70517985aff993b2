// A per-thread object reused across calls (scratch vectors that keep their capacity), safe to
// ask for at any point of a thread's life: a static or thread_local destructor that evaluates
// at exit runs after the thread's own thread_locals have died, and then gets a fresh object.
#pragma once

#include <utility>

namespace braid::detail {

/// One T per thread and Tag. take() moves the thread's object out (so a nested call starts
/// empty), give_back() returns it; after the thread's copy died both still work, without it.
template <typename T, typename Tag>
class ThreadCache {
 public:
  static T take() {
    T* p = slot();
    return p != nullptr ? std::move(*p) : T{};
  }
  static void give_back(T&& value) noexcept {
    if (T* p = slot_if_alive()) *p = std::move(value);
  }

 private:
  struct Owner {
    T value;
    Owner() { ptr_ = &value; }
    ~Owner() {
      ptr_ = nullptr;
      gone_ = true;
    }
  };
  static T* slot_if_alive() noexcept { return ptr_; }
  static T* slot() {
    if (ptr_ == nullptr && !gone_) {
      thread_local Owner owner;
    }
    return ptr_;
  }
  // Trivially destructible, so they stay readable until the thread ends.
  static thread_local T* ptr_;
  static thread_local bool gone_;
};

template <typename T, typename Tag>
thread_local T* ThreadCache<T, Tag>::ptr_ = nullptr;
template <typename T, typename Tag>
thread_local bool ThreadCache<T, Tag>::gone_ = false;

}  // namespace braid::detail
