#include "transforms/tape.h"

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

const std::vector<array> kNoInputs;  // a primal's: empty, owns nothing at exit

// Whether `d` is traced by the call of `scope` or by one nested in it: then it keeps its
// inputs while that call runs (complete_node and detach leave a tracer's inputs alone).
bool traced_within(const ArrayDesc* d, const TraceScope& scope) {
  for (const TraceScope* s = d->trace.get(); s != nullptr; s = s->parent.get()) {
    if (s == &scope) return true;
  }
  return false;
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

Tape build_tape(const std::vector<array>& outputs, const std::vector<array>& primals, const TraceScope& scope,
                bool through_stop_gradient) {
  Tape tape;
  for (const auto& p : primals) {
    // A primal passed twice is one node: its first entry collects for both.
    if (tape.index.insert(p.desc(), static_cast<int32_t>(tape.entries.size())))
      tape.entries.push_back({p, &kNoInputs});
  }
  tape.num_primals = tape.entries.size();
  // Post-order depth-first walk over arrays held by `outputs` or by a tracer's input list,
  // which stay put while the call runs: no reference counting, no copied lists. A frame is
  // expanded once it carries its node's inputs. A node is "visited" (kConstant) on the way
  // down and gets its entry on the way up.
  struct Frame {
    const array* node;
    const std::vector<array>* inputs;
  };
  std::vector<Frame> stack;
  stack.reserve(64);
  for (const auto& o : outputs) stack.push_back({&o, nullptr});
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    ArrayDesc* d = f.node->desc();
    if (f.inputs) {
      for (const auto& in : *f.inputs) {
        if (tape.index.find(in.desc()) >= 0) {
          tape.index.set(d, static_cast<int32_t>(tape.entries.size()));  // was kConstant
          tape.entries.push_back({*f.node, f.inputs});
          break;
        }
      }
      continue;
    }
    if (!tape.index.insert(d, Tape::kConstant)) continue;  // visited
    // Only tracers can depend on the primals; anything else is a constant here.
    if (!d->primitive || !is_tracer(d)) continue;
    if (!through_stop_gradient && is_stop_gradient(*d->primitive)) continue;
    const std::vector<array>* inputs = &d->inputs;
    if (!traced_within(d, scope)) {
      SpinGuard guard(d->lock);  // read as eval does: this node may lose its tracing meanwhile
      inputs = tape.copied_inputs.emplace_back(std::make_unique<const std::vector<array>>(d->inputs)).get();
    }
    stack.push_back({f.node, inputs});
    for (const auto& in : *inputs) {
      if (tape.index.find(in.desc()) == NodeIndex::kAbsent) stack.push_back({&in, nullptr});
    }
  }
  return tape;
}

}  // namespace braid::detail
