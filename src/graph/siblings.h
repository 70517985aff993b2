// The outputs of a primitive with several (array::make_arrays): one node per output, all with
// the same primitive and inputs, computed by one call of the primitive's kernel.
//
// Each output is an ordinary node for the runtime: claimed, queued and completed on its own.
// They all run on the primitive's stream, so on one strand, one at a time: the first to run
// calls the kernel with every output (a fresh node stands in for one nobody holds any more),
// then completes the others nobody has claimed; an output another evaluation had already
// claimed finds the group computed when its own turn comes, and completes with it.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <vector>

#include "braid/array.h"

namespace braid::detail {

struct SiblingGroup {
  std::vector<Shape> shapes;  // per output, immutable
  std::vector<Dtype> dtypes;
  std::atomic<bool> lock{false};  // guards `members` and `started`
  // The outputs' nodes, by position. Weak: a node holds its group, not its siblings (a node
  // is freed as soon as nobody holds it, as any other).
  std::vector<std::weak_ptr<ArrayDesc>> members;
  bool started = false;  // the kernel has taken its outputs: a lost output cannot be remade here
  // Set (release) once the kernel has run; `error` is written before it.
  std::atomic<bool> ran{false};
  std::exception_ptr error;
};

/// The group's outputs, for a kernel: the live nodes, and fresh ones in place of lost ones.
/// Marks the group started. `self` is the node that runs the kernel.
void gather_outputs(SiblingGroup& g, const array& self, std::vector<array>& outputs);

}  // namespace braid::detail
