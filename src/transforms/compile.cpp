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
#include <map>
#include <mutex>
#include <typeinfo>

#include "braid/primitive.h"
#include "braid/stream.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "primitives/io.h"
#include "runtime/mutex.h"
#include "transforms/program.h"

namespace braid {

namespace {

std::atomic<CompileMode>& compile_mode() {
  // MLX reads MLX_DISABLE_COMPILE once, at start-up; here at the first use of compile.
  static std::atomic<CompileMode> mode{std::getenv("MLX_DISABLE_COMPILE") != nullptr ? CompileMode::disabled
                                                                                     : CompileMode::enabled};
  return mode;
}

using detail::Program;
using detail::record;
using detail::replay;

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
    std::shared_ptr<const Program> fused;    // the program with its element-wise steps fused
  };
  struct Programs {
    std::shared_ptr<const Program> program, fused;
  };
  bool shapeless = false;
  mutable detail::Mutex mu;
  std::map<std::vector<int64_t>, std::shared_ptr<Entry>> entries GUARDED_BY(mu);

  Programs programs_for(const CompileFn& fun, const std::vector<array>& inputs,
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
CompileCache::Impl::Programs CompileCache::Impl::programs_for(const CompileFn& fun,
                                                              const std::vector<array>& inputs,
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
  if (entry->program) return {entry->program, entry->fused};
  std::vector<array> placeholders;
  placeholders.reserve(inputs.size());
  for (const auto& in : inputs) placeholders.emplace_back(in.shape(), in.dtype(), nullptr, std::vector<array>{});
  std::vector<array> outputs;
  {
    detail::DynamicTracing dynamic(traced_shapeless);
    outputs = fun(placeholders);
  }
  // As MLX's compile, every node the function built is a step, also one that reads none of
  // the inputs (replayed, so recomputed, on each call, until something computes the traced
  // node); computed arrays, leaves and file loads (read once) are constants. The program is
  // simplified (repeats merged, no-ops dropped) unless the mode, when traced, says no_simplify.
  const bool simplify = compile_mode().load(std::memory_order_relaxed) != CompileMode::no_simplify;
  std::shared_ptr<const Program> program = record(
      placeholders, inputs, outputs, traced_shapeless,
      [](const Primitive& p) { return typeid(p) != typeid(Load); }, simplify, simplify);
  std::shared_ptr<const Program> fused = detail::fuse(program);
  if (!program->nested) entry->program = program, entry->fused = fused;
  return {program, fused};
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
  // The fused program, unless fusion is off or this call is itself being recorded (by an
  // enclosing compile, which fuses its own program, or by export_function, whose files hold
  // the element-wise steps).
  const bool fuse =
      compile_mode().load(std::memory_order_relaxed) != CompileMode::no_fuse && !detail::in_recording();
  auto pick = [fuse](const Impl::Programs& p) { return fuse ? p.fused : p.program; };
  Impl::Programs programs = impl_->programs_for(fun, inputs, constants, impl_->shapeless);
  // Only a shapeless key can meet other shapes (every other key holds them).
  bool same_shapes = true;
  for (size_t i = 0; impl_->shapeless && i < inputs.size() && same_shapes; ++i) {
    same_shapes = inputs[i].shape() == programs.program->input_shapes[i];
  }
  if (!same_shapes) {
    // A shapeless trace replays on the new shapes when each step's primitive can follow them;
    // otherwise (a primitive that cannot infer its shape, a stored slice that no longer fits)
    // these shapes get a trace of their own, as without shapeless.
    if (programs.program->shapeless) {
      try {
        return replay(*pick(programs), inputs, /*infer=*/true);
      } catch (const detail::ReplayShapeError&) {
        throw;  // the function's own shape error on these shapes (MLX raises it too)
      } catch (const std::invalid_argument&) {
      }
    }
    programs = impl_->programs_for(fun, inputs, constants, false);
  }
  return replay(*pick(programs), inputs);
}

CompileFn compile(CompileFn fun, bool shapeless) {
  // As MLX: nothing to compile is an error, unless compilation is off (then it is returned).
  if (!fun) {
    if (compile_mode().load(std::memory_order_relaxed) == CompileMode::disabled) return fun;
    throw std::invalid_argument("[compile] Cannot compile an empty function.");
  }
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
