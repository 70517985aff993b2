#include "transforms/tape.h"

#include <typeinfo>
#include <utility>

#include "graph/node.h"
#include "graph/trace.h"
#include "primitives/elementwise.h"
#include "runtime/mutex.h"

namespace braid::detail {

namespace {
size_t slot_hash(const ArrayDesc* p) {
  return (reinterpret_cast<uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> 16;
}
}  // namespace

bool NodeIndex::insert(const ArrayDesc* node, int32_t value) {
  if ((count_ + 1) * 2 > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot_hash(node) & mask;; i = (i + 1) & mask) {
    if (slots_[i].node == node) return false;
    if (slots_[i].node == nullptr) {
      slots_[i] = {node, value};
      ++count_;
      return true;
    }
  }
}

void NodeIndex::set(const ArrayDesc* node, int32_t value) {
  if (insert(node, value)) return;
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot_hash(node) & mask;; i = (i + 1) & mask) {
    if (slots_[i].node == node) {
      slots_[i].value = value;
      return;
    }
  }
}

int32_t NodeIndex::find(const ArrayDesc* node) const {
  if (slots_.empty()) return kAbsent;
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot_hash(node) & mask;; i = (i + 1) & mask) {
    if (slots_[i].node == node) return slots_[i].value;
    if (slots_[i].node == nullptr) return kAbsent;
  }
}

void NodeIndex::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max<size_t>(512, old.size() * 2), Slot{});  // a few hundred nodes without regrowing
  count_ = 0;
  for (const auto& s : old) {
    if (s.node) insert(s.node, s.value);
  }
}

Tape build_tape(const std::vector<array>& outputs, const std::vector<array>& primals,
                bool through_stop_gradient) {
  Tape tape;
  for (const auto& p : primals) {
    // A primal passed twice is one node: its first entry collects for both.
    if (tape.index.insert(p.desc(), static_cast<int32_t>(tape.entries.size())))
      tape.entries.push_back({p, {}});
  }
  tape.num_primals = tape.entries.size();
  // Post-order depth-first walk; an expanded frame carries the inputs read on the way down.
  // A node is "visited" (kConstant) on the way down and gets its entry on the way up.
  struct Frame {
    array node;
    bool expanded;
    std::vector<array> inputs;
  };
  std::vector<Frame> stack;
  for (const auto& o : outputs) stack.push_back({o, false, {}});
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    ArrayDesc* d = f.node.desc();
    if (f.expanded) {
      if (!through_stop_gradient && typeid(*d->primitive) == typeid(StopGradient)) continue;
      for (const auto& in : f.inputs) {
        if (tape.index.find(in.desc()) >= 0) {
          tape.index.set(d, static_cast<int32_t>(tape.entries.size()));  // was kConstant
          tape.entries.push_back({std::move(f.node), std::move(f.inputs)});
          break;
        }
      }
      continue;
    }
    if (!tape.index.insert(d, Tape::kConstant)) continue;  // visited
    // Only tracers can depend on the primals; anything else is a constant here.
    if (!d->primitive || !is_tracer(d)) continue;
    std::vector<array> inputs;
    {
      SpinGuard guard(d->lock);  // a tracer keeps its inputs, but read them as eval does
      inputs = d->inputs;
    }
    const size_t frame = stack.size();
    stack.push_back({std::move(f.node), true, std::move(inputs)});
    for (size_t i = 0; i < stack[frame].inputs.size(); ++i) {
      const array& in = stack[frame].inputs[i];  // re-read: pushing may move the stack
      if (tape.index.find(in.desc()) == NodeIndex::kAbsent) stack.push_back({array(in), false, {}});
    }
  }
  return tape;
}

}  // namespace braid::detail
