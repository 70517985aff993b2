// Tracing for the transforms (MLX's tracer arrays). A transform call (vjp, jvp, vmap) opens a
// TraceScope and marks its copies of the primals with it; every node built from a node of an
// open scope inherits the scope when it is constructed. While the scope is open such nodes
// are tracers: they keep their inputs when they finish evaluating, so a traced function may
// evaluate intermediates (on any thread) and the transform can still walk the graph. Once
// the call returns the scope closes and the same nodes detach like any other.
//
// Everything lives in the call: two threads tracing at once have separate scopes, and no
// global counter decides what a tracer is.
#pragma once

#include <stdexcept>

#include <atomic>
#include <memory>
#include <vector>

#include "braid/array.h"

namespace braid::detail {

struct TraceScope {
  std::atomic<bool> open{true};
  // The scope this one was opened inside (a transform of a transform): while the outer call
  // is open, nodes of the inner one must keep their graphs for the outer walk.
  std::shared_ptr<TraceScope> parent;
  int depth = 1;

  /// Open, or nested in an open scope. Lock-free; the chain is as long as the nesting.
  bool active() const noexcept {
    for (const TraceScope* s = this; s != nullptr; s = s->parent.get()) {
      // Relaxed: a stale answer only delays one detach or keeps one graph a little longer.
      if (s->open.load(std::memory_order_relaxed)) return true;
    }
    return false;
  }
};

/// Whether the node belongs to an active scope.
inline bool is_tracer(const ArrayDesc* d) noexcept { return d->trace != nullptr && d->trace->active(); }

/// The scope of the innermost transform call running on this thread (null outside one).
std::shared_ptr<TraceScope> innermost_scope() noexcept;

/// The scope a node built from `inputs` belongs to: the deepest active scope among them.
std::shared_ptr<TraceScope> inherit_trace(const std::vector<array>& inputs) noexcept;

/// One transform call's tracing: opens a scope nested in the innermost scope open on this
/// thread (or in the deepest scope among `primals`), and closes it when destroyed.
class TraceCall {
 public:
  explicit TraceCall(const std::vector<array>& primals);
  ~TraceCall();
  TraceCall(const TraceCall&) = delete;
  TraceCall& operator=(const TraceCall&) = delete;

  /// Copies of `primals` (Copy nodes, no data moved) that are tracers of this call.
  std::vector<array> make_tracers(const std::vector<array>& primals) const;
  const std::shared_ptr<TraceScope>& scope() const { return scope_; }

 private:
  std::shared_ptr<TraceScope> scope_;
  const std::shared_ptr<TraceScope>* enclosing_;  // the caller's TraceCall outlives this one
};

/// Whether this thread is tracing a shapeless compiled function (MLX's in_dynamic_tracing):
/// ops then build nodes whose values follow the input shapes on every replay (a mean divides
/// by a NumberOfElements node, a dropped axis is a Squeeze, not a Reshape to fixed sizes).
bool in_dynamic_tracing() noexcept;

/// An op's own shape error met while a shapeless trace replays on new shapes (a reshape to a
/// stored shape that the new input's size does not fit): raised to the caller as MLX raises
/// it, where other replay failures only mean "trace again for these shapes".
class ReplayShapeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Whether this thread is recording a trace (compile's or export_function's): a compiled
/// function called now replays its unfused steps, which the enclosing recording keeps (and
/// compile fuses in its own program).
bool in_recording() noexcept;

/// Sets in_dynamic_tracing() on this thread while it lives (a trace of a compiled function or
/// of an exported one: `on` for a shapeless one), and restores the previous value after; the
/// thread is in_recording() meanwhile.
class DynamicTracing {
 public:
  explicit DynamicTracing(bool on) noexcept;
  ~DynamicTracing();
  DynamicTracing(const DynamicTracing&) = delete;
  DynamicTracing& operator=(const DynamicTracing&) = delete;

 private:
  bool previous_;
};

}  // namespace braid::detail
