// vjp, jvp and value_and_grad (MLX's semantics): trace the function on tracer copies of the
// primals, collect the part of the graph that depends on them (transforms/tape.h), and run
// each primitive's vjp backwards or jvp forwards over it. All state lives in the call.
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "braid/ops.h"
#include "braid/transforms.h"
#include "graph/node.h"
#include "graph/siblings.h"
#include "graph/trace.h"
#include "ops/utils.h"
#include "primitives/elementwise.h"
#include "transforms/custom.h"
#include "transforms/tape.h"

namespace braid {

namespace {

Stream stream_for(const array& a) {
  return a.primitive_ptr() ? a.primitive().stream() : default_stream(default_device());
}

bool is_stop_gradient(const array& a) { return a.primitive_ptr() && braid::is_stop_gradient(a.primitive()); }

// The inputs of `entry` that depend on the primals: their positions and their tape entries.
void find_targets(const detail::Tape& tape, const detail::TapeEntry& entry, std::vector<int>& argnums,
                  std::vector<int32_t>& targets) {
  argnums.clear();
  targets.clear();
  for (size_t i = 0; i < entry.inputs().size(); ++i) {
    const int32_t t = tape.entry_of(entry.inputs()[i]);
    if (t < 0) continue;
    argnums.push_back(static_cast<int>(i));
    targets.push_back(t);
  }
}

// The nodes on a tape that go back (and forward) together, one group per call: the outputs
// of a custom function's call, and the outputs of a multi-output primitive (siblings).
// `members[i]` is the entry of output i (-1 when the tape has none).
struct CustomGroups {
  struct Group {
    const void* key;
    std::vector<int32_t> members;
    int32_t first;  // the lowest entry: every consumer of every member comes after it
    bool custom;    // a custom function's call (else a primitive's siblings)
  };
  std::vector<Group> groups;
  std::vector<int32_t> group_of;  // per entry; empty when the tape has no grouped node

  explicit CustomGroups(const detail::Tape& tape) {
    std::unordered_map<const void*, int32_t> by_key;
    for (size_t e = tape.num_primals; e < tape.entries.size(); ++e) {
      const detail::TapeEntry& entry = tape.entries[e];
      const detail::ArrayDesc& d = *entry.node.desc();
      const detail::CustomTransforms* c = detail::as_custom(*d.primitive);
      if (c == nullptr && !d.siblings) continue;
      if (group_of.empty()) group_of.assign(tape.entries.size(), -1);
      const void* key = c ? c->group_key(entry.inputs()) : d.siblings.get();
      const size_t n = c ? static_cast<size_t>(c->num_outputs()) : d.siblings->shapes.size();
      auto [it, fresh] = by_key.emplace(key, static_cast<int32_t>(groups.size()));
      if (fresh) groups.push_back({key, std::vector<int32_t>(n, -1), static_cast<int32_t>(e), c != nullptr});
      groups[it->second].members[c ? c->index() : d.position] = static_cast<int32_t>(e);
      group_of[e] = it->second;
    }
  }
  /// The group of entry `e`, or null.
  const Group* of(size_t e) const {
    return group_of.empty() || group_of[e] < 0 ? nullptr : &groups[group_of[e]];
  }
  /// The position of entry `e`'s node among its group's outputs.
  static size_t position(const detail::TapeEntry& entry) {
    const detail::CustomTransforms* c = detail::as_custom(entry.node.primitive());
    return c ? static_cast<size_t>(c->index()) : entry.node.desc()->position;
  }
};

}  // namespace

std::pair<std::vector<array>, std::vector<array>> vjp(
    const std::function<std::vector<array>(const std::vector<array>&)>& fun,
    const std::vector<array>& primals, const std::vector<array>& cotans) {
  detail::TraceCall call(primals);
  std::vector<array> tracers = call.make_tracers(primals);
  std::vector<array> outputs = fun(tracers);

  // Pair each output with its cotangent; outputs under stop_gradient take none.
  std::vector<std::pair<size_t, size_t>> output_cotan;
  size_t next = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const array& out = outputs[i];
    if (is_stop_gradient(out)) continue;
    if (next >= cotans.size()) {
      std::ostringstream msg;
      msg << "[vjp] Number of outputs to compute gradients for (" << outputs.size()
          << ") does not match number of cotangents (" << cotans.size() << ").";
      throw std::invalid_argument(msg.str());
    }
    if (out.shape() != cotans[next].shape()) {
      std::ostringstream msg;
      msg << "[vjp] Output shape " << detail::shape_str(out.shape()) << " does not match cotangent shape "
          << detail::shape_str(cotans[next].shape()) << ".";
      if (outputs.size() == 1 && out.size() == 1)
        msg << " If you are using grad your function must return a scalar.";
      throw std::invalid_argument(msg.str());
    }
    output_cotan.emplace_back(i, next++);
  }

  detail::Tape tape = detail::build_tape(outputs, tracers, *call.scope());

  // One cotangent slot per tape entry, released once its node has passed it on.
  std::vector<std::optional<array>> cotan(tape.entries.size());
  auto accumulate = [&](int32_t entry, array c, const Stream& s) {
    auto& slot = cotan[entry];
    if (slot) {
      slot = add(*slot, c, s);
    } else {
      slot.emplace(std::move(c));
    }
  };
  for (auto [out_idx, cotan_idx] : output_cotan) {
    const array& o = outputs[out_idx];
    const int32_t entry = tape.entry_of(o);
    if (entry < 0) continue;  // does not depend on the primals
    accumulate(entry, astype(cotans[cotan_idx], o.dtype(), stream_for(o)), stream_for(o));
  }
  // Reused across entries: a vector built per entry cost an allocation and a reference
  // count round trip per array, a sizeable part of differentiating a long chain.
  std::vector<int> argnums;
  std::vector<int32_t> targets;
  std::vector<array> cotangents;
  std::vector<array> node_outputs(1, array(0.0f));  // its element is swapped with each node
  const CustomGroups custom(tape);
  for (size_t e = tape.entries.size(); e-- > tape.num_primals;) {
    if (const CustomGroups::Group* group = custom.of(e)) {
      // A custom function's outputs, or a primitive's, go back together, at the first of
      // them, once every cotangent has arrived: one call of the vjp with all of them (zero
      // where none came).
      if (static_cast<int32_t>(e) != group->first) continue;
      const detail::TapeEntry& entry = tape.entries[e];
      Primitive& prim = entry.node.primitive();
      const detail::CustomTransforms* c = detail::as_custom(prim);
      const size_t n_args = c ? entry.inputs().size() - group->members.size() : entry.inputs().size();
      // A primitive's vjp sees all its outputs (an output off the tape made again).
      std::vector<array> outs = c ? std::vector<array>{} : entry.node.outputs();
      cotangents.clear();
      bool any = false;
      for (size_t i = 0; i < group->members.size(); ++i) {
        const int32_t member = group->members[i];
        if (member >= 0 && cotan[member]) {
          cotangents.push_back(std::move(*cotan[member]));
          cotan[member].reset();
          any = true;
        } else if (c) {
          cotangents.push_back(zeros_like(entry.inputs()[n_args + i], prim.stream()));
        } else {
          cotangents.push_back(zeros(outs[i].shape(), outs[i].dtype(), prim.stream()));
        }
      }
      if (!any) continue;
      find_targets(tape, entry, argnums, targets);
      std::vector<array> vjps = c ? c->group_vjp(entry.inputs(), cotangents, argnums)
                                  : prim.vjp(entry.inputs(), cotangents, argnums, outs);
      for (size_t i = 0; i < argnums.size(); ++i) accumulate(targets[i], std::move(vjps[i]), prim.stream());
      continue;
    }
    if (!cotan[e]) continue;  // nothing flows back through this node
    cotangents.clear();
    cotangents.push_back(std::move(*cotan[e]));
    cotan[e].reset();
    detail::TapeEntry& entry = tape.entries[e];
    // The node is lent to node_outputs for the call and then given back: swaps, where a
    // copy would cost two atomic reference count updates per node.
    std::swap(node_outputs[0], entry.node);
    find_targets(tape, entry, argnums, targets);
    Primitive& prim = node_outputs[0].primitive();
    std::vector<array> vjps = prim.vjp(entry.inputs(), cotangents, argnums, node_outputs);
    std::swap(node_outputs[0], entry.node);
    for (size_t i = 0; i < argnums.size(); ++i) accumulate(targets[i], std::move(vjps[i]), prim.stream());
  }

  std::vector<array> grads;
  grads.reserve(tracers.size());
  for (size_t i = 0; i < tracers.size(); ++i) {
    const int32_t entry = tape.entry_of(tracers[i]);
    grads.push_back(cotan[entry] ? *cotan[entry] : zeros_like(primals[i], stream_for(primals[i])));
  }
  return {std::move(outputs), std::move(grads)};
}

std::pair<array, array> vjp(const std::function<array(const array&)>& fun, const array& primal,
                            const array& cotangent) {
  auto vec_fun = [&fun](const std::vector<array>& in) { return std::vector<array>{fun(in[0])}; };
  auto [outputs, vjps] = vjp(vec_fun, {primal}, {cotangent});
  return {outputs[0], vjps[0]};
}

std::pair<std::vector<array>, std::vector<array>> jvp(
    const std::function<std::vector<array>(const std::vector<array>&)>& fun,
    const std::vector<array>& primals, const std::vector<array>& tangents) {
  if (primals.size() != tangents.size()) {
    throw std::invalid_argument("[jvp] Number of inputs does not match number of tangents.");
  }
  for (size_t i = 0; i < primals.size(); ++i) {
    if (primals[i].shape() != tangents[i].shape()) {
      throw std::invalid_argument("[jvp] Input shape does not match shape of tangent.");
    }
  }
  detail::TraceCall call(primals);
  std::vector<array> tracers = call.make_tracers(primals);
  std::vector<array> outputs = fun(tracers);
  detail::Tape tape = detail::build_tape(outputs, tracers, *call.scope());

  std::vector<std::optional<array>> tan(tape.entries.size());
  for (size_t i = 0; i < tracers.size(); ++i) {
    auto& slot = tan[tape.entry_of(tracers[i])];
    slot = slot ? add(*slot, tangents[i]) : tangents[i];  // a primal passed twice
  }
  std::vector<int> argnums;
  std::vector<int32_t> targets;
  std::vector<array> in_tangents;
  const CustomGroups custom(tape);
  std::vector<std::vector<array>> group_tangents(custom.groups.size());
  for (size_t e = tape.num_primals; e < tape.entries.size(); ++e) {
    const detail::TapeEntry& entry = tape.entries[e];
    const CustomGroups::Group* group = custom.of(e);
    if (group && static_cast<int32_t>(e) != group->first) {
      // A later output of a custom function's call or of a primitive: its tangent came with
      // the first's.
      tan[e] = group_tangents[custom.group_of[e]].at(CustomGroups::position(entry));
      continue;
    }
    find_targets(tape, entry, argnums, targets);
    in_tangents.clear();
    for (int32_t t : targets) in_tangents.push_back(*tan[t]);
    if (group) {
      // One call of the jvp gives every output's tangent.
      auto& all = group_tangents[custom.group_of[e]];
      if (const detail::CustomTransforms* c = detail::as_custom(entry.node.primitive())) {
        all = c->group_jvp(entry.inputs(), in_tangents, argnums);
      } else {
        all = entry.node.primitive().jvp(entry.inputs(), in_tangents, argnums, entry.node.outputs());
      }
      tan[e] = all.at(CustomGroups::position(entry));
      continue;
    }
    tan[e] = std::move(entry.node.primitive().jvp(entry.inputs(), in_tangents, argnums, {entry.node})[0]);
  }

  std::vector<array> jvps;
  jvps.reserve(outputs.size());
  for (const auto& out : outputs) {
    const int32_t entry = tape.entry_of(out);
    jvps.push_back(entry >= 0 ? *tan[entry] : zeros_like(out, stream_for(out)));
  }
  return {std::move(outputs), std::move(jvps)};
}

std::pair<array, array> jvp(const std::function<array(const array&)>& fun, const array& primal,
                            const array& tangent) {
  auto vec_fun = [&fun](const std::vector<array>& in) { return std::vector<array>{fun(in[0])}; };
  auto [outputs, jvps] = jvp(vec_fun, {primal}, {tangent});
  return {outputs[0], jvps[0]};
}

ValueAndGradFn value_and_grad(const std::function<std::vector<array>(const std::vector<array>&)>& fun,
                              const std::vector<int>& argnums) {
  if (argnums.empty()) throw std::invalid_argument("[grad] Must specify at least one argument.");
  return [fun, argnums](const std::vector<array>& inputs) {
    const int n = static_cast<int>(inputs.size());
    std::set<int> args;
    for (int arg : argnums) args.insert(arg < 0 ? arg + n : arg);
    if (args.size() != argnums.size()) {
      throw std::invalid_argument("[grad] Repeat argument number not allowed in grad.");
    }
    if (*args.begin() < 0 || *args.rbegin() >= n) {
      std::ostringstream msg;
      msg << "[grad] Invalid argument number for function with " << n << " inputs.";
      throw std::invalid_argument(msg.str());
    }
    auto gfun = [&fun, &inputs, &args](const std::vector<array>& ginputs) {
      std::vector<array> all(inputs);
      auto arg = args.begin();
      for (const auto& g : ginputs) all[*arg++] = g;
      std::vector<array> outputs = fun(all);
      for (size_t i = 1; i < outputs.size(); ++i)
        outputs[i] = stop_gradient(outputs[i], stream_for(outputs[i]));
      return outputs;
    };
    std::vector<array> ginputs;
    for (int arg : args) ginputs.push_back(inputs[arg]);
    // A float32 one: vjp casts it to the output's dtype.
    return vjp(gfun, ginputs, {array(1.0f)});
  };
}

}  // namespace braid
