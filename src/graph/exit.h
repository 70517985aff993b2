// Process exit: the runtime stops and waits for running kernels before the libraries they
// call (OpenBLAS, the CUDA runtime) unload under them (docs/threading.md, "Thread exit and
// process exit").
#pragma once

namespace braid::detail {

/// Starts the worker pool (which throws if no thread can be started) and registers the exit
/// handler, once. Called by every evaluation before it claims anything.
void start_runtime();

/// Marks the calling thread as running a kernel while it lives, so that exit waits for it.
/// Once the process is exiting, a thread other than the exiting one (whose static destructors
/// may still evaluate) starts no kernel: the scope is `refused()`, and its caller gives the
/// node back and sleeps until the process is gone.
class KernelScope {
 public:
  KernelScope();
  ~KernelScope();
  bool refused() const { return refused_; }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

  struct Slot;  // defined in exit.cpp

 private:
  Slot* slot_;
  bool refused_ = false;
};

/// For the thread that is ending the process, whose static destructors may still evaluate
/// while the workers run nothing more: runs every stream's queued work that nobody holds
/// and, if there was none, pauses briefly. Returns false (doing nothing) on any other thread
/// or before exit; a waiter that gets true checks its condition again instead of sleeping,
/// since the thread that would otherwise wake it (a worker) has stopped.
bool help_at_exit() noexcept;

}  // namespace braid::detail
