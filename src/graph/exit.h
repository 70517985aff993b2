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
/// may still evaluate) starts no kernel: it sleeps here until the process is gone.
class KernelScope {
 public:
  KernelScope();
  ~KernelScope();
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

  struct Slot;  // defined in exit.cpp

 private:
  Slot* slot_;
};

}  // namespace braid::detail
