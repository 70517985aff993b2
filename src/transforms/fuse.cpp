// compile's fusion of element-wise steps into Compiled nodes (program.h, primitives/compiled.h).
#include <algorithm>
#include <map>
#include <string>
#include <typeinfo>

#include "primitives/compiled.h"
#include "primitives/primitives.h"
#include "transforms/program.h"

namespace braid::detail {

namespace {

bool on_cpu(const Step& s) { return s.primitive->stream().device.type == Device::cpu; }

// A step the Compiled kernel runs: the element-wise primitives, whose values at the output's
// shape only need their inputs read broadcast. A step that reaches no input stays a step of
// its own, so that replays read its traced node's value once something computes it.
bool fusible(const Step& s) {
  const Primitive& p = *s.primitive;
  return on_cpu(s) && s.follows_inputs &&
         (typeid(p) == typeid(Unary) || typeid(p) == typeid(Binary) || typeid(p) == typeid(Select) ||
          typeid(p) == typeid(AsType));
}

constexpr int32_t kFree = -1;

}  // namespace

std::shared_ptr<const Program> fuse(const std::shared_ptr<const Program>& program) {
  const Program& p = *program;
  if (p.captures_tracer) return program;  // a transform runs its steps' own vjp, jvp and vmap
  const size_t n = p.steps.size();
  // The steps reading each step, and how often each step is read, by steps and by the outputs.
  std::vector<std::vector<uint32_t>> readers(n);
  for (size_t i = 0; i < n; ++i) {
    for (const Ref& r : p.steps[i].inputs) {
      if (r.kind == Ref::Kind::step) readers[r.index].push_back(static_cast<uint32_t>(i));
    }
  }
  std::vector<uint32_t> uses(n, 0);
  std::vector<bool> is_output(n, false);
  for (size_t i = 0; i < n; ++i) uses[i] = static_cast<uint32_t>(readers[i].size());
  for (const Ref& r : p.outputs) {
    if (r.kind == Ref::Kind::step) ++uses[r.index], is_output[r.index] = true;
  }
  // A broadcast of a group's input is read by the group as its input, broadcast (its target
  // shape is fixed, so not in a program replayed on other shapes). Read elsewhere too, the
  // broadcast also stays a step of its own, as MLX's fusion copies it into the kernel.
  auto fused_broadcast = [&](const Ref& in) {
    return in.kind == Ref::Kind::step && !p.shapeless &&
           typeid(*p.steps[in.index].primitive) == typeid(Broadcast);
  };

  // Groups, from the last step back: a fusible step not in a group yet is a group's root (its
  // value leaves the group); a step the group reads joins once every read of it (it may have
  // several) comes from the group's steps, unless it is an output. Then a fusible step the
  // group reads at the root's shape whose other readers all come after the root (or that is
  // an output of the program) joins as an output of the node too (MLX's multi-output
  // Compiled): its value is written in the same pass. Not in a shapeless program, where a
  // replay may give it another shape than the root's.
  std::vector<int32_t> group(n, kFree);
  std::vector<uint32_t> reads(n, 0);  // reads by the current group's steps
  std::vector<std::vector<uint32_t>> exported(n);  // per root: the members that are outputs too
  bool any = false;
  for (size_t r = n; r-- > 0;) {
    if (group[r] != kFree || !fusible(p.steps[r])) continue;
    const Stream& stream = p.steps[r].primitive->stream();
    std::vector<uint32_t> members{static_cast<uint32_t>(r)};
    std::vector<uint32_t> touched;
    group[r] = static_cast<int32_t>(r);
    size_t ops = 1;
    size_t next = 0;
    for (;;) {
      for (; next < members.size(); ++next) {
        const Step& s = p.steps[members[next]];
        if (!fusible(s)) continue;  // an absorbed broadcast: its input is the group's
        for (const Ref& in : s.inputs) {
          if (in.kind != Ref::Kind::step) continue;
          const uint32_t j = in.index;
          if (reads[j]++ == 0) touched.push_back(j);
          const Step& t = p.steps[j];
          if (group[j] != kFree || reads[j] != uses[j] || is_output[j] || !(t.primitive->stream() == stream))
            continue;
          if (fusible(t)) {
            ++ops;
          } else if (!fused_broadcast(in)) {
            continue;
          }
          group[j] = static_cast<int32_t>(r);
          members.push_back(j);
        }
      }
      if (p.shapeless) break;
      const size_t before = members.size();
      for (uint32_t j : touched) {
        const Step& t = p.steps[j];
        if (group[j] != kFree || !fusible(t) || t.shape != p.steps[r].shape ||
            !(t.primitive->stream() == stream))
          continue;
        const bool later = std::all_of(readers[j].begin(), readers[j].end(), [&](uint32_t x) {
          return x > r || group[x] == static_cast<int32_t>(r);
        });
        if (!later) continue;
        group[j] = static_cast<int32_t>(r);
        members.push_back(j);
        exported[r].push_back(j);
        ++ops;
      }
      if (members.size() == before) break;
    }
    for (uint32_t j : touched) reads[j] = 0;
    if (ops < 2) {
      for (uint32_t m : members) group[m] = kFree;
      group[r] = static_cast<int32_t>(n);  // visited, alone (an export would have made two ops)
      continue;
    }
    any = true;
  }
  if (!any) return program;

  auto fused = std::make_shared<Program>();
  fused->constants = p.constants;
  fused->num_inputs = p.num_inputs;
  fused->input_shapes = p.input_shapes;
  fused->shapeless = p.shapeless;
  fused->nested = p.nested;
  fused->captures_tracer = p.captures_tracer;
  std::vector<Ref> remap(n, Ref{Ref::Kind::step, 0});
  auto outer = [&](const Ref& r) { return r.kind == Ref::Kind::step ? remap[r.index] : r; };
  for (size_t i = 0; i < n; ++i) {
    const int32_t g = group[i];
    if (g == kFree || g == static_cast<int32_t>(n)) {
      Step s = p.steps[i];
      for (Ref& r : s.inputs) r = outer(r);
      remap[i] = Ref{Ref::Kind::step, static_cast<uint32_t>(fused->steps.size())};
      fused->steps.push_back(std::move(s));
      continue;
    }
    if (g != static_cast<int32_t>(i)) continue;  // a member: built with its root, read only by the group
    // The root: its group's steps in order (they all come before it).
    std::vector<uint32_t> members;
    for (size_t j = 0; j <= i; ++j) {
      if (group[j] == g) members.push_back(static_cast<uint32_t>(j));
    }
    // Broadcasts the group reads that stay steps (read elsewhere too): named with the group.
    std::vector<uint32_t> named = members;
    for (uint32_t m : members) {
      if (!fusible(p.steps[m])) continue;
      for (const Ref& r : p.steps[m].inputs) {
        if (fused_broadcast(r)) named.push_back(r.index);
      }
    }
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    std::vector<Ref> inputs;
    std::map<std::pair<int, uint32_t>, uint32_t> input_of;
    std::map<uint32_t, uint32_t> op_of;  // member step -> its op
    std::vector<Compiled::Op> ops;
    std::string name = "Compiled";
    // An argument from outside the group: one input of the node per distinct array.
    auto input = [&](const Ref& r) {
      const Ref o = outer(r);
      auto [it, fresh] =
          input_of.try_emplace({static_cast<int>(o.kind), o.index}, static_cast<uint32_t>(inputs.size()));
      if (fresh) inputs.push_back(o);
      return it->second;
    };
    for (uint32_t m : named) name += p.steps[m].primitive->name();
    for (uint32_t m : members) {
      if (!fusible(p.steps[m])) continue;  // an absorbed broadcast
      op_of[m] = static_cast<uint32_t>(ops.size());
      ops.push_back({p.steps[m].primitive, {}, p.steps[m].dtype});
    }
    // Arguments are numbered once the inputs are known: inputs first, then the ops.
    std::vector<std::vector<std::pair<bool, uint32_t>>> args(ops.size());  // (is an op, index)
    for (uint32_t m : members) {
      auto op = op_of.find(m);
      if (op == op_of.end()) continue;
      for (const Ref& r : p.steps[m].inputs) {
        auto inner = r.kind == Ref::Kind::step && group[r.index] == g ? op_of.find(r.index) : op_of.end();
        if (inner != op_of.end()) {
          args[op->second].push_back({true, inner->second});
        } else if (fused_broadcast(r)) {
          args[op->second].push_back({false, input(p.steps[r.index].inputs[0])});  // read broadcast
        } else {
          args[op->second].push_back({false, input(r)});
        }
      }
    }
    const auto num_inputs = static_cast<uint32_t>(inputs.size());
    for (size_t k = 0; k < ops.size(); ++k) {
      for (auto [is_op, index] : args[k]) ops[k].args.push_back(is_op ? num_inputs + index : index);
    }
    // The node's outputs: the root's value, then the exported members' (in step order).
    std::vector<uint32_t> out_steps{static_cast<uint32_t>(i)};
    std::sort(exported[i].begin(), exported[i].end());
    out_steps.insert(out_steps.end(), exported[i].begin(), exported[i].end());
    std::vector<uint32_t> out_ops;
    auto group_shapes = std::make_shared<StepGroup>();
    for (uint32_t m : out_steps) {
      out_ops.push_back(op_of.at(m));
      group_shapes->shapes.push_back(p.steps[m].shape);
      group_shapes->dtypes.push_back(p.steps[m].dtype);
    }
    const Step& root = p.steps[i];
    auto compiled = std::make_shared<Compiled>(root.primitive->stream(), std::move(ops), num_inputs,
                                               std::move(name), std::move(out_ops));
    std::shared_ptr<const StepGroup> shared_group;
    if (out_steps.size() > 1) shared_group = std::move(group_shapes);
    for (size_t o = 0; o < out_steps.size(); ++o) {
      const Step& m = p.steps[out_steps[o]];
      Step s{compiled,
             inputs,
             m.shape,
             m.dtype,
             root.follows_inputs,
             std::nullopt,
             shared_group,
             static_cast<uint32_t>(o)};
      remap[out_steps[o]] = Ref{Ref::Kind::step, static_cast<uint32_t>(fused->steps.size())};
      fused->steps.push_back(std::move(s));
    }
  }
  for (const Ref& r : p.outputs) fused->outputs.push_back(outer(r));
  return fused;
}

}  // namespace braid::detail
