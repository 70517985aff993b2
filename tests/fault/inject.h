// Fault injection for the fault suite: this binary replaces the global operator new (every
// form) and pthread_create, and fails them on command. The controls are atomics, shared by all
// threads of the process; each case runs in a forked child, so every count is per child.
#pragma once

#include <cstdint>

namespace fault {

// ---- operator new ----

/// Stops failing and counting allocations.
void disarm_allocations();
/// Counts allocations (from non-exempt threads) without failing any.
void count_allocations();
/// The n-th allocation from now (1-based, counted over all non-exempt threads) fails, once.
void fail_nth_allocation(int64_t n);
/// Each allocation from now fails with probability 1/one_in, decided by a hash of `seed` and
/// the allocation's sequence number (reproducible for a given interleaving).
void fail_random_allocations(uint64_t seed, uint32_t one_in);
/// Allocations seen and failed since the last arm/count call.
int64_t allocations_seen();
int64_t allocations_failed();

/// Allocations made by an exempt thread are never counted nor failed. Threads start not
/// exempt (braid's workers must meet failures); harness threads mark themselves exempt and
/// clear the mark only around braid calls (see BraidCall).
void set_thread_exempt(bool exempt);
bool thread_exempt();

/// Clears the calling thread's exemption for its lifetime: the braid calls made inside it
/// meet injected failures, the harness code around it does not.
class BraidCall {
 public:
  BraidCall() : saved_(thread_exempt()) { set_thread_exempt(false); }
  ~BraidCall() { set_thread_exempt(saved_); }
  BraidCall(const BraidCall&) = delete;
  BraidCall& operator=(const BraidCall&) = delete;

 private:
  bool saved_;
};

// ---- pthread_create ----

/// pthread_create calls from now are counted; the k-th (1-based) fails with EAGAIN, or every
/// one from the k-th on when `and_later`. k = 0 only counts.
void fail_thread_creation(int k, bool and_later);
void disarm_thread_creation();
int threads_seen();
int threads_failed();

}  // namespace fault
