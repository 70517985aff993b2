#include "graph/trace.h"

#include "braid/ops.h"
#include "braid/primitive.h"

namespace braid::detail {

namespace {
// The innermost transform call running on this thread. Seen only by this thread: it decides
// the nesting of a call made inside a traced function (grad of grad), nothing else.
thread_local const std::shared_ptr<TraceScope>* t_innermost = nullptr;
thread_local bool t_dynamic_tracing = false;
thread_local int t_recordings = 0;  // DynamicTracing scopes open on this thread
}  // namespace

bool in_dynamic_tracing() noexcept { return t_dynamic_tracing; }
bool in_recording() noexcept { return t_recordings > 0; }
DynamicTracing::DynamicTracing(bool on) noexcept : previous_(t_dynamic_tracing) {
  t_dynamic_tracing = on;
  ++t_recordings;
}
DynamicTracing::~DynamicTracing() {
  t_dynamic_tracing = previous_;
  --t_recordings;
}

std::shared_ptr<TraceScope> inherit_trace(const std::vector<array>& inputs) noexcept {
  const std::shared_ptr<TraceScope>* best = nullptr;
  for (const auto& in : inputs) {
    const auto& t = in.desc()->trace;
    if (t && (best == nullptr || t->depth > (*best)->depth) && t->active()) best = &t;
  }
  return best ? *best : nullptr;
}

std::shared_ptr<TraceScope> innermost_scope() noexcept { return t_innermost ? *t_innermost : nullptr; }

TraceCall::TraceCall(const std::vector<array>& primals) : enclosing_(t_innermost) {
  std::shared_ptr<TraceScope> parent = inherit_trace(primals);
  if (enclosing_ && (*enclosing_)->active() && (!parent || (*enclosing_)->depth > parent->depth)) {
    parent = *enclosing_;  // a function traced by the enclosing call may capture its tracers
  }
  scope_ = std::make_shared<TraceScope>();
  scope_->depth = parent ? parent->depth + 1 : 1;
  scope_->parent = std::move(parent);
  t_innermost = &scope_;
}

TraceCall::~TraceCall() {
  scope_->open.store(false, std::memory_order_relaxed);
  t_innermost = enclosing_;
}

std::vector<array> TraceCall::make_tracers(const std::vector<array>& primals) const {
  std::vector<array> out;
  out.reserve(primals.size());
  for (const auto& p : primals) {
    Stream s = p.primitive_ptr() ? p.primitive().stream() : default_stream(default_device());
    array t = copy(p, s);
    t.desc()->trace = scope_;  // before anyone else can see the copy
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace braid::detail
