// An annotated mutex so that clang's -Wthread-safety turns a missing lock into an error.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#if defined(__clang__)
#define BRAID_TSA(x) __attribute__((x))
#else
#define BRAID_TSA(x)
#endif

#define CAPABILITY(x) BRAID_TSA(capability(x))
#define SCOPED_CAPABILITY BRAID_TSA(scoped_lockable)
#define GUARDED_BY(x) BRAID_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) BRAID_TSA(pt_guarded_by(x))
#define REQUIRES(...) BRAID_TSA(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) BRAID_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) BRAID_TSA(release_capability(__VA_ARGS__))
#define EXCLUDES(...) BRAID_TSA(locks_excluded(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS BRAID_TSA(no_thread_safety_analysis)

namespace braid::detail {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

/// Condition variable over Mutex. The caller holds `mu` around wait().
class CondVar {
 public:
  template <typename Pred>
  void wait(Mutex& mu, Pred pred) REQUIRES(mu) {
    std::unique_lock<std::mutex> lk(mu.native(), std::adopt_lock);
    cv_.wait(lk, pred);
    lk.release();
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

/// A spinning lock for short critical sections that are almost never contended (a
/// pthread mutex costs several times more when uncontended).
class CAPABILITY("mutex") SpinMutex {
 public:
  void lock() ACQUIRE() {
    while (flag_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; flag_.load(std::memory_order_relaxed); ++spins) {
        if (spins > 64) std::this_thread::yield();
      }
    }
  }
  void unlock() RELEASE() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

class SCOPED_CAPABILITY SpinLock {
 public:
  explicit SpinLock(SpinMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~SpinLock() RELEASE() { mu_.unlock(); }
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

 private:
  SpinMutex& mu_;
};

/// A test-and-test-and-set lock for tiny critical sections on graph nodes.
class SpinGuard {
 public:
  explicit SpinGuard(std::atomic<bool>& flag) : flag_(flag) {
    while (flag_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; flag_.load(std::memory_order_relaxed); ++spins) {
        if (spins > 64) std::this_thread::yield();  // the holder may be descheduled
      }
    }
  }
  ~SpinGuard() { flag_.store(false, std::memory_order_release); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

 private:
  std::atomic<bool>& flag_;
};

}  // namespace braid::detail
