// compile: trace a function once per signature on placeholder inputs (no value, no
// primitive: evaluating anything built from them throws, as MLX), record the graph from the
// outputs back to the placeholders, and replay it on later calls by building the same nodes
// from the new inputs with the recorded primitive objects (immutable, so shared by every
// replay on every thread).
#include "braid/compile.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <map>
#include <mutex>
#include <unordered_map>

#include "braid/primitive.h"
#include "braid/stream.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "runtime/mutex.h"

namespace braid {

namespace {

std::atomic<CompileMode>& compile_mode() {
  // MLX reads MLX_DISABLE_COMPILE once, at start-up; here at the first use of compile.
  static std::atomic<CompileMode> mode{std::getenv("MLX_DISABLE_COMPILE") != nullptr ? CompileMode::disabled
                                                                                     : CompileMode::enabled};
  return mode;
}

// Where a replayed node's input comes from.
struct Ref {
  enum class Kind : uint8_t { input, step, constant };
  Kind kind;
  uint32_t index;
};

struct Step {
  std::shared_ptr<Primitive> primitive;
  std::vector<Ref> inputs;
  Shape shape;
  Dtype dtype;
};

// One trace: immutable once recorded, read by any number of replays at once.
struct Program {
  std::vector<Step> steps;       // inputs before their users
  std::vector<array> constants;  // arrays the function captured (or made from no input)
  std::vector<Ref> outputs;
  size_t num_inputs = 0;
  std::vector<Shape> input_shapes;  // the shapes it was traced for
  // Traced shapeless and every step's primitive infers its output shape from its inputs': a
  // replay on inputs of other shapes (of the same ranks) recomputes the shapes.
  bool shapeless = false;
  // The graph reached a value-less leaf that is not one of this trace's placeholders: the
  // call happened inside another compile's trace (or a vmap's), whose placeholder this trace
  // captured. Right for this call only: not kept.
  bool nested = false;
};

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
  if (a.dtype != b.dtype || a.shape != b.shape || a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (a.inputs[i].kind != b.inputs[i].kind || a.inputs[i].index != b.inputs[i].index) return false;
  }
  const Primitive &p = *a.primitive, &q = *b.primitive;
  return p.stream() == q.stream() && std::strcmp(p.name(), q.name()) == 0 && p.is_equivalent(q);
}

// Keeps only the constants that a step or an output reads. The walk records every node of a
// captured subgraph that is not computed yet (its leaves and intermediates too), and the
// program lives as long as the compiled function: kept, they would hold their buffers.
void drop_unused_constants(Program& p) {
  std::vector<uint32_t> remap(p.constants.size(), UINT32_MAX);
  auto mark = [&](const Ref& r) {
    if (r.kind == Ref::Kind::constant) remap[r.index] = 0;
  };
  for (const Step& s : p.steps) std::for_each(s.inputs.begin(), s.inputs.end(), mark);
  std::for_each(p.outputs.begin(), p.outputs.end(), mark);
  std::vector<array> kept;
  for (size_t i = 0; i < p.constants.size(); ++i) {
    if (remap[i] == UINT32_MAX) continue;
    remap[i] = static_cast<uint32_t>(kept.size());
    kept.push_back(std::move(p.constants[i]));
  }
  p.constants = std::move(kept);
  auto rewrite = [&](Ref& r) {
    if (r.kind == Ref::Kind::constant) r.index = remap[r.index];
  };
  for (Step& s : p.steps) std::for_each(s.inputs.begin(), s.inputs.end(), rewrite);
  std::for_each(p.outputs.begin(), p.outputs.end(), rewrite);
}

// The graph between `placeholders` and `outputs`, with an explicit stack (graphs of any
// depth). Nodes that reach no placeholder are constants, kept as they are. Equal scalar
// constants and steps that repeat an earlier one (the same equivalent primitive on the same
// inputs) are recorded once. A node that reaches one of the call's own `inputs` (captured by
// the function as well as passed, and not yet computed) is MLX's error: the replay could not
// tell it from the input it stands for.
std::shared_ptr<const Program> record(const std::vector<array>& placeholders, const std::vector<array>& inputs,
                                      const std::vector<array>& outputs, bool shapeless) {
  auto program = std::make_shared<Program>();
  program->num_inputs = placeholders.size();
  for (const auto& p : placeholders) program->input_shapes.push_back(p.shape());
  // An op may take a shortcut for an empty input (softmax returns it as it is): a trace of
  // empty inputs is kept for their shapes only.
  program->shapeless =
      shapeless && std::none_of(placeholders.begin(), placeholders.end(), [](const array& p) { return p.size() == 0; });
  // Whether the node's primitive gives back its shape from its inputs' (else no replay on
  // other shapes: the program is traced again for them).
  auto infers_shape = [](const array& node, const std::vector<array>& node_inputs) {
    try {
      std::vector<Shape> shapes = node.primitive().output_shapes(node_inputs);
      return shapes.size() == 1 && shapes[0] == node.shape();
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
  auto constant = [&](const array& a) {
    if (!a.desc()->primitive && !detail::is_complete(a.desc())) program->nested = true;
    if (pending_inputs.contains(a.desc())) {
      throw std::invalid_argument(
          "[compile] Attempting to compile a function with uncaptured inputs is not allowed.");
    }
    auto value = scalar_value(a);
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
  auto add_step = [&](const array& node, std::vector<Ref> refs) {
    Step step{node.primitive_ptr(), std::move(refs), node.shape(), node.dtype()};
    size_t h = std::hash<std::string_view>{}(step.primitive->name());
    for (Ref r : step.inputs) h = h * 1000003u ^ (static_cast<size_t>(r.kind) << 32 | r.index);
    for (auto [it, end] = steps_by_hash.equal_range(h); it != end; ++it) {
      if (same_step(program->steps[it->second], step)) {
        done.emplace(node.desc(), Ref{Ref::Kind::step, it->second});
        return;
      }
    }
    const auto index = static_cast<uint32_t>(program->steps.size());
    steps_by_hash.emplace(h, index);
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
      depends = depends || r.kind != Ref::Kind::constant;
      refs.push_back(r);
    }
    if (pending_inputs.contains(d)) {
      throw std::invalid_argument(
          "[compile] Attempting to compile a function with uncaptured inputs is not allowed.");
    }
    if (depends && !f.inputs.empty()) {
      if (program->shapeless && !infers_shape(f.node, f.inputs)) program->shapeless = false;
      add_step(f.node, std::move(refs));
    } else {
      constant(f.node);  // built from captured arrays only: computed once, on the first replay
    }
    stack.pop_back();
  }
  for (const auto& o : outputs) program->outputs.push_back(done.at(o.desc()));
  drop_unused_constants(*program);
  return program;
}

// The program's nodes built from `inputs`; with `infer`, each node's shape is what its
// primitive computes from its new inputs' (throws std::invalid_argument where one does not
// fit), else the recorded one.
std::vector<array> replay(const Program& p, const std::vector<array>& inputs, bool infer = false) {
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
  for (const auto& s : p.steps) {
    node_inputs.clear();
    for (Ref r : s.inputs) node_inputs.push_back(resolve(r));
    if (infer) {
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

// The key of a call: the calling thread's default stream, the caller's constants, then each
// input's dtype and shape (its rank only for a shapeless trace). The recorded primitives keep
// the streams they were traced on, and ops without a stream trace on the calling thread's
// default one: keyed on it, a compiled function called from several threads runs on each
// thread's own stream (in parallel, as the uncompiled function would), not all on the first
// caller's.
std::vector<int64_t> signature(const std::vector<array>& inputs, const std::vector<uint64_t>& constants,
                               bool shapeless) {
  std::vector<int64_t> key;
  key.reserve(5 + constants.size() + inputs.size() * 4);
  key.push_back(shapeless);
  const Stream s = default_stream(default_device());
  key.push_back(static_cast<int64_t>(s.device.type));
  key.push_back(s.index);
  key.push_back(static_cast<int64_t>(constants.size()));
  for (uint64_t c : constants) key.push_back(static_cast<int64_t>(c));
  key.push_back(static_cast<int64_t>(inputs.size()));
  for (const auto& in : inputs) {
    key.push_back(static_cast<int64_t>(in.dtype().val()));
    key.push_back(static_cast<int64_t>(in.ndim()));
    if (!shapeless) key.insert(key.end(), in.shape().begin(), in.shape().end());
  }
  return key;
}

}  // namespace

struct CompileCache::Impl {
  // One signature's trace. `trace_mu` makes a second caller of a signature being traced wait
  // for that trace instead of running the function again.
  struct Entry {
    std::mutex trace_mu;
    std::shared_ptr<const Program> program;  // written under trace_mu, read under it too
  };
  bool shapeless = false;
  mutable detail::Mutex mu;
  std::map<std::vector<int64_t>, std::shared_ptr<Entry>> entries GUARDED_BY(mu);

  std::shared_ptr<const Program> program_for(const CompileFn& fun, const std::vector<array>& inputs,
                                             const std::vector<uint64_t>& constants, bool traced_shapeless);
};

CompileCache::CompileCache(bool shapeless) : impl_(std::make_shared<Impl>()) { impl_->shapeless = shapeless; }
CompileCache::~CompileCache() = default;

size_t CompileCache::size() const {
  detail::MutexLock lock(impl_->mu);
  return impl_->entries.size();
}

// The program of this call's signature, traced now if there is none (`shapeless`: keyed on
// ranks only and traced with ops building shape-following nodes).
std::shared_ptr<const Program> CompileCache::Impl::program_for(const CompileFn& fun, const std::vector<array>& inputs,
                                                               const std::vector<uint64_t>& constants,
                                                               bool traced_shapeless) {
  std::shared_ptr<Entry> entry;
  {
    detail::MutexLock lock(mu);
    auto& slot = entries[signature(inputs, constants, traced_shapeless)];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  // Held while tracing: the function runs once per signature. A trace that throws leaves no
  // program, and the next caller traces again.
  std::lock_guard<std::mutex> lock(entry->trace_mu);
  if (entry->program) return entry->program;
  std::vector<array> placeholders;
  placeholders.reserve(inputs.size());
  for (const auto& in : inputs) placeholders.emplace_back(in.shape(), in.dtype(), nullptr, std::vector<array>{});
  std::vector<array> outputs;
  {
    detail::DynamicTracing dynamic(traced_shapeless);
    outputs = fun(placeholders);
  }
  std::shared_ptr<const Program> program = record(placeholders, inputs, outputs, traced_shapeless);
  if (!program->nested) entry->program = program;
  return program;
}

std::vector<array> CompileCache::call(const CompileFn& fun, const std::vector<array>& inputs,
                                      const std::vector<uint64_t>& constants) {
  if (compile_mode().load(std::memory_order_relaxed) == CompileMode::disabled) return fun(inputs);
  // Called inside a transformation (grad, vmap, ...) with its tracers: the function runs as
  // it is, as MLX's compiled functions do there. A trace made from tracers would keep the
  // ones it captured (the enclosing function's intermediates) for later, unrelated calls.
  if (std::any_of(inputs.begin(), inputs.end(), [](const array& a) { return a.is_tracer(); })) return fun(inputs);
  // Called while a shapeless function is traced: the function runs as it is, so its ops build
  // the enclosing trace's shape-following nodes (its own trace could hold a mean's constant
  // count; and a function calling itself on a smaller input would wait for its own trace).
  if (detail::in_dynamic_tracing()) return fun(inputs);
  std::shared_ptr<const Program> program = impl_->program_for(fun, inputs, constants, impl_->shapeless);
  // Only a shapeless key can meet other shapes (every other key holds them).
  bool same_shapes = true;
  for (size_t i = 0; impl_->shapeless && i < inputs.size() && same_shapes; ++i) {
    same_shapes = inputs[i].shape() == program->input_shapes[i];
  }
  if (!same_shapes) {
    // A shapeless trace replays on the new shapes when each step's primitive can follow them;
    // otherwise (a primitive that cannot infer its shape, a stored slice that no longer fits)
    // these shapes get a trace of their own, as without shapeless.
    if (program->shapeless) {
      try {
        return replay(*program, inputs, /*infer=*/true);
      } catch (const std::invalid_argument&) {
      }
    }
    program = impl_->program_for(fun, inputs, constants, false);
  }
  return replay(*program, inputs);
}

CompileFn compile(CompileFn fun, bool shapeless) {
  auto cache = std::make_shared<CompileCache>(shapeless);
  return [fun = std::move(fun), cache](const std::vector<array>& inputs) { return cache->call(fun, inputs); };
}

namespace detail {

namespace {
// The caches of functions compiled by id (mlx_detail_compile), per (id, shapeless).
struct IdCaches {
  Mutex mu;
  std::map<std::pair<std::uintptr_t, bool>, std::shared_ptr<CompileCache>> caches GUARDED_BY(mu);
};
IdCaches& id_caches() {
  static IdCaches* caches = new IdCaches();  // never destroyed: compiled functions may outlive exit
  return *caches;
}
}  // namespace

CompileFn compile(CompileFn fun, std::uintptr_t fun_id, bool shapeless, std::vector<uint64_t> constants) {
  std::shared_ptr<CompileCache> cache;
  {
    IdCaches& ids = id_caches();
    MutexLock lock(ids.mu);
    auto& slot = ids.caches[{fun_id, shapeless}];
    if (!slot) slot = std::make_shared<CompileCache>(shapeless);
    cache = slot;
  }
  return [fun = std::move(fun), cache, constants = std::move(constants)](const std::vector<array>& inputs) {
    return cache->call(fun, inputs, constants);
  };
}

void compile_erase(std::uintptr_t fun_id) {
  IdCaches& ids = id_caches();
  MutexLock lock(ids.mu);
  ids.caches.erase({fun_id, false});
  ids.caches.erase({fun_id, true});
}

void compile_clear_cache() {
  IdCaches& ids = id_caches();
  MutexLock lock(ids.mu);
  ids.caches.clear();
}

}  // namespace detail

void disable_compile() { compile_mode().store(CompileMode::disabled, std::memory_order_relaxed); }
void enable_compile() { compile_mode().store(CompileMode::enabled, std::memory_order_relaxed); }
void set_compile_mode(CompileMode mode) { compile_mode().store(mode, std::memory_order_relaxed); }

}  // namespace braid
