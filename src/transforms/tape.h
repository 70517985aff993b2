// The part of a traced graph that depends on a transform call's primals, in topological
// order: found with an explicit stack (graphs of any depth), visiting only tracer nodes and
// reading each node's inputs under its lock.
#pragma once

#include <cstdint>
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

struct TapeEntry {
  array node;
  std::vector<array> inputs;  // read once, under the node's lock
};

/// entries[0, num_primals) are the primals (no inputs); the rest, in topological order, are
/// the nodes that depend on them. `index` maps a visited node to its entry, or to kConstant
/// when it does not depend on a primal.
struct Tape {
  static constexpr int32_t kConstant = -1;
  std::vector<TapeEntry> entries;
  size_t num_primals = 0;
  NodeIndex index;
  /// The entry of `node`, or a negative value when nothing of it depends on a primal.
  int32_t entry_of(const array& node) const { return index.find(node.desc()); }
};

/// Nodes between `primals` (the call's tracers) and `outputs`. For differentiation
/// (`through_stop_gradient` false) a StopGradient node and everything only it reaches are
/// left out; vmap maps through them.
Tape build_tape(const std::vector<array>& outputs, const std::vector<array>& primals,
                bool through_stop_gradient = false);

}  // namespace braid::detail
