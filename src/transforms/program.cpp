// compile's and export_function's recording and replay of a traced graph (program.h).
#include "transforms/program.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>

#include "graph/node.h"
#include "graph/siblings.h"
#include "graph/trace.h"
#include "primitives/primitives.h"

namespace braid::detail {

namespace {

// A computed 0-d leaf's dtype and bytes, or nothing: equal scalars (the 1 of two `x + 1`)
// become one constant, as MLX's simplification merges them.
std::optional<std::pair<int, uint64_t>> scalar_value(const array& a) {
  const detail::ArrayDesc* d = a.desc();
  if (d->primitive || a.ndim() != 0 || a.itemsize() > sizeof(uint64_t) || !detail::is_complete(d)) {
    return std::nullopt;
  }
  uint64_t bits = 0;
  std::memcpy(&bits, a.host_data(), a.itemsize());
  return std::make_pair(static_cast<int>(a.dtype().val()), bits);
}

// Whether two recorded steps compute the same thing (MLX's common subexpressions).
bool same_step(const Step& a, const Step& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.inputs.size() != b.inputs.size() ||
      a.position != b.position || (a.group == nullptr) != (b.group == nullptr)) {
    return false;
  }
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (a.inputs[i].kind != b.inputs[i].kind || a.inputs[i].index != b.inputs[i].index) return false;
  }
  const Primitive &p = *a.primitive, &q = *b.primitive;
  return p.stream() == q.stream() && std::strcmp(p.name(), q.name()) == 0 && p.is_equivalent(q);
}

// Removes the steps `drop` selects (no-ops of one input: the same shape and dtype), each
// replaced by its input wherever it is read.
void bypass_steps(Program& p, const std::function<bool(const Step&)>& drop) {
  std::vector<Ref> remap(p.steps.size());
  std::vector<Step> kept;
  kept.reserve(p.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    Step& s = p.steps[i];
    for (Ref& r : s.inputs) {
      if (r.kind == Ref::Kind::step) r = remap[r.index];
    }
    if (drop(s)) {
      remap[i] = s.inputs[0];
      continue;
    }
    remap[i] = Ref{Ref::Kind::step, static_cast<uint32_t>(kept.size())};
    kept.push_back(std::move(s));
  }
  for (Ref& r : p.outputs) {
    if (r.kind == Ref::Kind::step) r = remap[r.index];
  }
  p.steps = std::move(kept);
}

// Keeps only the steps and constants that an output reads, directly or through steps. The
// walk records every node of a captured subgraph that is not computed yet (its leaves and
// intermediates too, and the ancestors of a tracer that stays a constant), and the program
// lives as long as the compiled function: kept, they would hold their buffers or be replayed
// for nothing.
void drop_unused(Program& p) {
  std::vector<bool> step_used(p.steps.size()), constant_used(p.constants.size());
  auto mark = [&](const Ref& r) {
    if (r.kind == Ref::Kind::step) step_used[r.index] = true;
    if (r.kind == Ref::Kind::constant) constant_used[r.index] = true;
  };
  std::for_each(p.outputs.begin(), p.outputs.end(), mark);
  for (size_t i = p.steps.size(); i-- > 0;) {  // users after their inputs
    if (step_used[i]) std::for_each(p.steps[i].inputs.begin(), p.steps[i].inputs.end(), mark);
  }
  std::vector<uint32_t> step_at(p.steps.size()), constant_at(p.constants.size());
  std::vector<Step> steps;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    if (!step_used[i]) continue;
    step_at[i] = static_cast<uint32_t>(steps.size());
    steps.push_back(std::move(p.steps[i]));
  }
  std::vector<array> constants;
  for (size_t i = 0; i < p.constants.size(); ++i) {
    if (!constant_used[i]) continue;
    constant_at[i] = static_cast<uint32_t>(constants.size());
    constants.push_back(std::move(p.constants[i]));
  }
  p.steps = std::move(steps);
  p.constants = std::move(constants);
  auto rewrite = [&](Ref& r) {
    if (r.kind == Ref::Kind::step) r.index = step_at[r.index];
    if (r.kind == Ref::Kind::constant) r.index = constant_at[r.index];
  };
  for (Step& s : p.steps) std::for_each(s.inputs.begin(), s.inputs.end(), rewrite);
  std::for_each(p.outputs.begin(), p.outputs.end(), rewrite);
}

}  // namespace

std::shared_ptr<const Program> record(const std::vector<array>& placeholders,
                                      const std::vector<array>& inputs, const std::vector<array>& outputs,
                                      bool shapeless, const std::function<bool(const Primitive&)>& unfold,
                                      bool drop_noops, bool merge) {
  auto program = std::make_shared<Program>();
  program->num_inputs = placeholders.size();
  for (const auto& p : placeholders) program->input_shapes.push_back(p.shape());
  // An op may take a shortcut for an empty input (softmax returns it as it is): a trace of
  // empty inputs is kept for their shapes only.
  program->shapeless = shapeless && std::none_of(placeholders.begin(), placeholders.end(),
                                                 [](const array& p) { return p.size() == 0; });
  // Whether the node's primitive gives back its shape from its inputs' (else no replay on
  // other shapes: the program is traced again for them).
  auto infers_shape = [](const array& node, const std::vector<array>& node_inputs) {
    try {
      std::vector<Shape> shapes = node.primitive().output_shapes(node_inputs);
      const auto& group = node.desc()->siblings;
      const size_t k = node.desc()->position;
      return shapes.size() == (group ? group->shapes.size() : 1) && shapes[k] == node.shape();
    } catch (const std::invalid_argument&) {
      return false;
    }
  };
  std::unordered_map<const detail::ArrayDesc*, Ref> done;
  for (size_t i = 0; i < placeholders.size(); ++i)
    done.emplace(placeholders[i].desc(), Ref{Ref::Kind::input, static_cast<uint32_t>(i)});
  std::unordered_set<const detail::ArrayDesc*> pending_inputs;
  for (const auto& in : inputs) {
    if (in.desc()->primitive && !detail::is_complete(in.desc())) pending_inputs.insert(in.desc());
  }
  std::map<std::pair<int, uint64_t>, Ref> scalars;
  std::unordered_multimap<size_t, uint32_t> steps_by_hash;  // a hash of name and inputs -> step
  bool captures_tracer = false;  // a transform's tracer captured: the trace is differentiated
  auto constant = [&](const array& a) {
    captures_tracer = captures_tracer || detail::is_tracer(a.desc());
    if (!a.desc()->primitive && !detail::is_complete(a.desc())) program->nested = true;
    if (pending_inputs.contains(a.desc())) {
      throw std::invalid_argument(
          "[compile] Attempting to compile a function with uncaptured inputs is not allowed.");
    }
    auto value = merge ? scalar_value(a) : std::nullopt;
    if (value) {
      if (auto it = scalars.find(*value); it != scalars.end()) {
        done.emplace(a.desc(), it->second);
        return;
      }
    }
    Ref r{Ref::Kind::constant, static_cast<uint32_t>(program->constants.size())};
    program->constants.push_back(a);
    done.emplace(a.desc(), r);
    if (value) scalars.emplace(*value, r);
  };
  std::unordered_map<const detail::SiblingGroup*, std::shared_ptr<const StepGroup>> step_groups;
  auto add_step = [&](const array& node, std::vector<Ref> refs, bool follows_inputs) {
    Step step{node.primitive_ptr(), std::move(refs),
              node.shape(),         node.dtype(),
              follows_inputs,       follows_inputs ? std::nullopt : std::optional<array>(node)};
    if (const auto& siblings = node.desc()->siblings) {
      auto& group = step_groups[siblings.get()];
      if (!group) group = std::make_shared<const StepGroup>(StepGroup{siblings->shapes, siblings->dtypes});
      step.group = group;
      step.position = node.desc()->position;
    }
    const auto index = static_cast<uint32_t>(program->steps.size());
    if (merge) {  // an earlier step computing the same stands for this one
      size_t h = std::hash<std::string_view>{}(step.primitive->name());
      for (Ref r : step.inputs) h = h * 1000003u ^ (static_cast<size_t>(r.kind) << 32 | r.index);
      for (auto [it, end] = steps_by_hash.equal_range(h); it != end; ++it) {
        if (same_step(program->steps[it->second], step)) {
          done.emplace(node.desc(), Ref{Ref::Kind::step, it->second});
          return;
        }
      }
      steps_by_hash.emplace(h, index);
    }
    done.emplace(node.desc(), Ref{Ref::Kind::step, index});
    program->steps.push_back(std::move(step));
  };

  struct Frame {
    array node;
    bool expanded = false;
    std::vector<array> inputs;  // copied under the node's lock when expanded
  };
  std::vector<Frame> stack;
  for (const auto& o : outputs) stack.push_back({o, false, {}});
  while (!stack.empty()) {
    Frame& f = stack.back();
    const detail::ArrayDesc* d = f.node.desc();
    if (done.contains(d)) {
      stack.pop_back();
      continue;
    }
    if (!f.expanded) {
      // A leaf, or a node already computed (its inputs may be gone): a constant.
      if (!d->primitive || detail::is_complete(d)) {
        constant(f.node);
        stack.pop_back();
        continue;
      }
      f.expanded = true;
      f.inputs = f.node.inputs();
      // Completion clears a node's inputs after publishing its status: a node that finished
      // since the check above may have handed back none. Its value is there: a constant.
      if (detail::is_complete(d)) {
        constant(f.node);
        stack.pop_back();
        continue;
      }
      std::vector<array> pending;
      for (const auto& in : f.inputs) {
        if (!done.contains(in.desc())) pending.push_back(in);
      }
      for (auto& in : pending) stack.push_back({std::move(in), false, {}});  // invalidates f
      continue;
    }
    bool depends = false;
    std::vector<Ref> refs;
    refs.reserve(f.inputs.size());
    for (const auto& in : f.inputs) {
      Ref r = done.at(in.desc());
      depends = depends || r.kind == Ref::Kind::input ||
                (r.kind == Ref::Kind::step && program->steps[r.index].follows_inputs);
      refs.push_back(r);
    }
    if (pending_inputs.contains(d)) {
      throw std::invalid_argument(
          "[compile] Attempting to compile a function with uncaptured inputs is not allowed.");
    }
    // An enclosing transform's tracer that reaches no placeholder stays a constant: a
    // replayed copy would not be the node the transform follows.
    if ((depends && !f.inputs.empty()) || (unfold && !detail::is_tracer(d) && unfold(f.node.primitive()))) {
      if (depends && program->shapeless && !infers_shape(f.node, f.inputs)) program->shapeless = false;
      add_step(f.node, std::move(refs), depends);
    } else {
      constant(f.node);  // built from captured arrays only: computed once, on the first replay
    }
    stack.pop_back();
  }
  for (const auto& o : outputs) program->outputs.push_back(done.at(o.desc()));
  // A compiled function runs as it is under a transform of its inputs, so its trace is never
  // differentiated, unless it captured a tracer: then its stop_gradient nodes matter.
  if (drop_noops && !captures_tracer) {
    bypass_steps(*program, [](const Step& s) {
      return s.inputs.size() == 1 &&
             (typeid(*s.primitive) == typeid(StopGradient) || typeid(*s.primitive) == typeid(Copy));
    });
  }
  drop_unused(*program);
  program->captures_tracer = captures_tracer;
  return program;
}

std::vector<array> replay(const Program& p, const std::vector<array>& inputs, bool infer) {
  std::vector<array> nodes;
  nodes.reserve(p.steps.size());
  auto resolve = [&](Ref r) -> const array& {
    switch (r.kind) {
      case Ref::Kind::input: return inputs[r.index];
      case Ref::Kind::step: return nodes[r.index];
      case Ref::Kind::constant: return p.constants[r.index];
    }
    return p.constants[r.index];  // unreachable
  };
  std::vector<array> node_inputs;
  std::unordered_map<const StepGroup*, std::vector<array>> groups;  // a multi-output call's nodes
  for (const auto& s : p.steps) {
    if (s.traced && detail::is_complete(s.traced->desc())) {
      nodes.push_back(*s.traced);
      continue;
    }
    if (s.group) {
      // The first step of a call builds all its outputs; the others take theirs.
      auto [it, fresh] = groups.try_emplace(s.group.get());
      if (fresh) {
        node_inputs.clear();
        for (Ref r : s.inputs) node_inputs.push_back(resolve(r));
        std::vector<Shape> shapes =
            infer && s.follows_inputs ? s.primitive->output_shapes(node_inputs) : s.group->shapes;
        it->second = array::make_arrays(std::move(shapes), s.group->dtypes, s.primitive, node_inputs);
      }
      nodes.push_back(it->second.at(s.position));
      continue;
    }
    node_inputs.clear();
    for (Ref r : s.inputs) node_inputs.push_back(resolve(r));
    if (infer && s.follows_inputs) {
      std::vector<Shape> shapes = s.primitive->output_shapes(node_inputs);
      nodes.emplace_back(std::move(shapes.at(0)), s.dtype, s.primitive, node_inputs);
    } else {
      nodes.emplace_back(s.shape, s.dtype, s.primitive, node_inputs);
    }
  }
  std::vector<array> outputs;
  outputs.reserve(p.outputs.size());
  for (Ref r : p.outputs) outputs.push_back(resolve(r));
  return outputs;
}

}  // namespace braid::detail
