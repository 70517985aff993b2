// The part of a traced graph that depends on a transform call's primals, in topological
// order: found with an explicit stack (graphs of any depth), visiting only tracer nodes.
// A node traced by the call (or by a call nested in it) keeps its inputs until the call
// returns, so the tape points at their input lists instead of copying them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "braid/array.h"

namespace braid::detail {

/// An open-addressing map from node to a small integer: no allocation per node, which
/// matters for graphs of millions of nodes.
class NodeIndex {
 public:
  static constexpr int32_t kAbsent = -2;
  /// Sets the value of `node` if it has none; returns whether it was set.
  bool insert(const ArrayDesc* node, int32_t value);
  /// Sets the value of `node`, present or not.
  void set(const ArrayDesc* node, int32_t value);
  /// The value of `node`, or kAbsent.
  int32_t find(const ArrayDesc* node) const;

 private:
  void grow();
  struct Slot {
    const ArrayDesc* node = nullptr;
    int32_t value = kAbsent;
  };
  std::vector<Slot> slots_;
  size_t count_ = 0;
};

struct TraceScope;

struct TapeEntry {
  array node;
  /// The node's own input list, or the tape's copy of it (see Tape::copied_inputs).
  const std::vector<array>* input_list;
  const std::vector<array>& inputs() const { return *input_list; }
};

/// entries[0, num_primals) are the primals (no inputs); the rest, in topological order, are
/// the nodes that depend on them. `index` maps a visited node to its entry, or to kConstant
/// when it does not depend on a primal.
struct Tape {
  static constexpr int32_t kConstant = -1;
  std::vector<TapeEntry> entries;
  size_t num_primals = 0;
  NodeIndex index;
  /// Input lists of nodes that another call traces (its scope may close while this call
  /// runs, and their evaluation may then detach them): copied under the node's lock. Each
  /// list stays put while the tape lives; an empty tape allocates nothing here.
  std::vector<std::unique_ptr<const std::vector<array>>> copied_inputs;
  /// The entry of `node`, or a negative value when nothing of it depends on a primal.
  int32_t entry_of(const array& node) const { return index.find(node.desc()); }
};

/// Nodes between `primals` (the tracers of the call whose scope is `scope`, open) and
/// `outputs`. For differentiation (`through_stop_gradient` false) a StopGradient node and
/// everything only it reaches are left out; vmap maps through them. The tape refers to the
/// nodes' input lists: use it while `outputs` are alive and the scope is open.
Tape build_tape(const std::vector<array>& outputs, const std::vector<array>& primals, const TraceScope& scope,
                bool through_stop_gradient = false);

}  // namespace braid::detail
