// eval / async_eval: find the unclaimed part of the graph, claim it node by node in
// topological order, hand it to the streams' strands, and wait (helping when possible).
//
// Why this never deadlocks: a node is pushed onto a strand only after all its inputs have
// been pushed (by us, earlier in topological order, or by another evaluation, which we wait
// for after handing over everything we hold). So every dependency and every strand-order
// edge points to an earlier push, and the wait-for graph has no cycle.
#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>

#include "backend/backend.h"
#include "braid/memory.h"
#include "braid/transforms.h"
#include "graph/exit.h"
#include "graph/node.h"
#include "graph/siblings.h"
#include "graph/trace.h"
#include "runtime/park.h"
#include "runtime/registry.h"
#include "runtime/strand.h"
#include "runtime/thread_cache.h"

namespace braid {
namespace detail {

namespace {

std::atomic<EvalHook> g_eval_hook{nullptr};

// Most nodes one evaluation hands a strand in one go; bounds queue memory per stream.
constexpr size_t kMaxQueuedPerStream = 1 << 16;
// Nodes claimed before they are pushed to their strand in one go.
constexpr size_t kMaxRun = 4096;

// An open-addressing set of node pointers: the DFS's visited set, reused per thread.
class NodeSet {
 public:
  bool insert(const ArrayDesc* p) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(p) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == p) return false;
      if (slots_[i] == nullptr) {
        slots_[i] = p;
        ++count_;
        return true;
      }
    }
  }
  bool contains(const ArrayDesc* p) const {
    if (slots_.empty()) return false;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(p) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == p) return true;
      if (slots_[i] == nullptr) return false;
    }
  }
  void clear() {
    if (slots_.size() > 4096) {
      slots_.assign(64, nullptr);  // do not keep a huge table after a huge graph
    } else {
      std::fill(slots_.begin(), slots_.end(), nullptr);
    }
    count_ = 0;
  }

 private:
  static size_t hash(const ArrayDesc* p) {
    return (reinterpret_cast<uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> 16;
  }
  void grow() {
    std::vector<const ArrayDesc*> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, old.size() * 2), nullptr);
    count_ = 0;
    for (auto* p : old) {
      if (p) insert(p);
    }
  }
  std::vector<const ArrayDesc*> slots_;
  size_t count_ = 0;
};

// Per-thread scratch, moved out while in use so that a nested eval (from a custom kernel)
// simply starts with empty scratch.
struct Scratch {
  NodeSet visited;
  std::vector<array> order;
  std::vector<std::pair<array, bool>> stack;
  std::vector<array> run;
};
struct ScratchTag;
struct OutputsTag;
using ThreadScratch = ThreadCache<Scratch, ScratchTag>;
using ThreadOutputs = ThreadCache<std::vector<array>, OutputsTag>;

Strand* strand_of(const ArrayDesc* d) { return d->primitive->stream().state()->strand.get(); }

void complete_node(ArrayDesc& d, Status final) noexcept {
  d.status.store(final);  // seq_cst: pairs with park_while's flag
  notify_parked(&d, d.parked);
  Waiter* waiters;
  std::vector<array> inputs;               // detached here, released after the lock
  const bool keep_inputs = is_tracer(&d);  // a transform will walk this graph
  {
    SpinGuard guard(d.lock);
    waiters = std::exchange(d.waiters, nullptr);
    if (!keep_inputs) inputs.swap(d.inputs);
  }
  while (waiters != nullptr) {
    // Read the link first: once resumed, the waiter may wait on another node.
    Waiter* next = std::exchange(waiters->next_waiter, nullptr);
    waiters->resume();
    waiters = next;
  }
}

// Depth-first post-order over nodes nobody has claimed yet. Nodes claimed by another
// evaluation but not yet pushed are kept (as leaves) so that phase 2 waits for their push.
void topo_order(const std::vector<array>& outputs, Scratch& s) {
  for (const auto& o : outputs) {
    if (!is_complete(o.desc())) s.stack.emplace_back(o, false);
  }
  while (!s.stack.empty()) {
    auto [node, expanded] = std::move(s.stack.back());
    s.stack.pop_back();
    ArrayDesc* d = node.desc();
    if (expanded) {
      s.order.push_back(std::move(node));
      continue;
    }
    if (!s.visited.insert(d)) continue;
    Status st = d->status.load(std::memory_order_acquire);
    if (st == Status::claimed) {
      s.order.push_back(std::move(node));
      continue;
    }
    if (st != Status::unscheduled) continue;
    if (!d->primitive) {
      // vmap's placeholder inputs have neither a value nor a primitive.
      throw std::invalid_argument(
          "[eval] Attempting to eval an array during function transformations like compile or vmap is not "
          "allowed.");
    }
    s.stack.emplace_back(node, true);
    SpinGuard guard(d->lock);  // inputs may be detached concurrently once the node completes
    for (const auto& in : d->inputs) {
      ArrayDesc* id = in.desc();
      if (!is_complete(id) && !s.visited.contains(id)) s.stack.emplace_back(in, false);
    }
  }
  s.visited.clear();
}

void kick_all(const std::vector<std::shared_ptr<Strand>>& strands) noexcept {
  for (const auto& st : strands) st->kick();
}

// Where each strand of an evaluation stands: `touched` lists the strands the nodes of `order`
// run on, `pushed` how many nodes this evaluation gave each.
struct Targets {
  std::vector<std::shared_ptr<Strand>> touched;
  std::vector<size_t> pushed;
  size_t index_of(const Strand* st) const {
    for (size_t i = 0; i < touched.size(); ++i) {
      if (touched[i].get() == st) return i;
    }
    return touched.size();
  }
};

// Everything that may allocate happens here, before any node is claimed: a failure leaves
// every node as it was, so any thread can evaluate the graph again.
void prepare_targets(const std::vector<array>& order, std::vector<array>& run, Targets& t) {
  Strand* last = nullptr;
  for (const auto& node : order) {
    Strand* st = strand_of(node.desc());
    if (st == last) continue;
    last = st;
    if (t.index_of(st) == t.touched.size()) {
      t.touched.push_back(st->shared_from_this());
      t.pushed.push_back(0);
    }
  }
  run.reserve(std::min<size_t>(order.size(), kMaxRun));
}

// Claims and pushes `order` (topological) into the strands prepare_targets found. Allocates
// nothing and cannot fail between a claim and its push (DESIGN.md 1.8: nothing claimed is
// ever left unpushed).
void claim_and_submit(std::vector<array>& order, std::vector<array>& run, bool wake, Targets& t) noexcept {
  Strand* run_strand = nullptr;
  size_t run_index = 0;
  auto flush = [&] {
    if (run.empty()) return;
    Strand& st = *run_strand;
    t.pushed[run_index] += run.size();
    if (st.queued() > kMaxQueuedPerStream || get_active_memory() > get_memory_limit()) {
      // Backpressure: let this stream catch up. Everything it holds was pushed before, so
      // it drains whatever we hold unpushed.
      kick_all(t.touched);
      st.drain_to(get_active_memory() > get_memory_limit() ? 0 : kMaxQueuedPerStream / 2);
    }
    st.submit(run, wake);
  };
  for (auto& node : order) {
    ArrayDesc* d = node.desc();
    Status expected = Status::unscheduled;
    if (d->status.compare_exchange_strong(expected, Status::claimed, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      Strand* st = strand_of(d);
      if (st != run_strand) {
        flush();
        run_strand = st;
        run_index = t.index_of(st);
      }
      run.push_back(std::move(node));  // within the reserved capacity
      if (run.size() >= kMaxRun) flush();
    } else if (expected == Status::claimed) {
      // Another evaluation is about to push it: hand over all we hold, then wait.
      flush();
      kick_all(t.touched);
      while (d->status.load() == Status::claimed && help_at_exit()) {
      }
      park_while(d, d->parked, [d] { return d->status.load() == Status::claimed; });
    }
  }
  flush();
}

// Blocks until `node` completes, running its strand inline while nobody else holds it, or
// when the strand's runner hands it over at this thread's own nodes (if `handover`: the
// caller pushed a run long enough to be handed over).
void wait_for(const array& node, const std::vector<std::shared_ptr<Strand>>& touched, bool handover) {
  ArrayDesc* d = node.desc();
  bool kicked = false;
  for (;;) {
    Status st = d->status.load(std::memory_order_acquire);
    if (st >= Status::available) return;
    if (st == Status::scheduled && strand_of(d)->try_run_inline(d)) continue;
    // Our node may wait on work of ours queued on another stream: run that rather than
    // wait for a worker, which may be busy with someone's long evaluation.
    bool ran_other = false;
    for (const auto& other : touched) {
      if (other.get() != strand_of(d) && other->try_run_inline(d)) ran_other = true;
    }
    if (ran_other) continue;
    if (!kicked) {
      kick_all(touched);
      kicked = true;
      continue;
    }
    // At exit the workers run nothing: the exiting thread runs what the node waits for,
    // wherever it is queued, and polls while another thread still holds it.
    if (help_at_exit()) continue;
    if (st == Status::scheduled && handover) {
      // Sleep where the node's strand can find us and hand itself over. The registration
      // lasts exactly as long as the sleep, so a thread running anything (a nested eval in
      // a kernel, say) is never the one a strand is handed to.
      Strand* home = strand_of(d);
      home->begin_wait(d);
      park_while(d, d->parked, [d, st] { return d->status.load() == st && !Strand::handed_to_me(); });
      if (home->end_wait()) home->run_handed(d);
      continue;
    }
    park_while(d, d->parked, [d, st] { return d->status.load() == st; });
  }
}

void rethrow_if_failed(const std::vector<array>& outputs) {
  for (const auto& o : outputs) {
    if (o.desc()->status.load(std::memory_order_acquire) == Status::failed) {
      forget_stream_failure(o.desc()->error);  // told here, so synchronize will not repeat it
      std::rethrow_exception(o.desc()->error);
    }
  }
}

// GPU results are "available" once enqueued; a host-side wait also waits for the device.
void wait_device(const std::vector<array>& outputs) {
  for (const auto& o : outputs) {
    if (gpu::on_device(o)) gpu::wait_ready(o);
  }
}

Targets submit(const std::vector<array>& outputs, bool wake) {
  start_runtime();
  Scratch s = ThreadScratch::take();
  Targets targets;
  try {
    topo_order(outputs, s);
    prepare_targets(s.order, s.run, targets);
  } catch (...) {
    s.order.clear();
    s.stack.clear();
    s.visited.clear();
    ThreadScratch::give_back(std::move(s));
    throw;
  }
  claim_and_submit(s.order, s.run, wake, targets);
  s.order.clear();
  ThreadScratch::give_back(std::move(s));
  return targets;
}

}  // namespace

// A node that reads a device buffer was published after the buffer was made (release/acquire
// on the node's status), so a thread that sees the node also sees this flag set.
std::atomic<bool> gpu::g_device_buffers_made{false};

void set_eval_hook(EvalHook hook) { g_eval_hook.store(hook, std::memory_order_release); }

ArrayDesc* first_incomplete_input(const array& node) {
  for (const auto& in : node.desc()->inputs) {
    if (!is_complete(in.desc())) return in.desc();
  }
  return nullptr;
}

namespace {
// The node whose kernel this thread runs and, for a multi-output primitive, its group (the
// previous ones restored after it, should a kernel run another's on its thread).
thread_local const ArrayDesc* t_running = nullptr;
thread_local const SiblingGroup* t_running_group = nullptr;

struct RunningHere {
  explicit RunningHere(const ArrayDesc* d) : previous(t_running), previous_group(t_running_group) {
    t_running = d;
    t_running_group = d->siblings.get();
  }
  ~RunningHere() {
    t_running = previous;
    t_running_group = previous_group;
  }
  RunningHere(const RunningHere&) = delete;
  RunningHere& operator=(const RunningHere&) = delete;
  const ArrayDesc* previous;
  const SiblingGroup* previous_group;
};

// The kernel of `node` on its device; results go to `outputs` (holding `node`, and the
// node's siblings in output order).
void run_kernel(array& node, std::vector<array>& outputs) {
  ArrayDesc& d = *node.desc();
  RunningHere running(&d);
  if (auto hook = g_eval_hook.load(std::memory_order_acquire)) hook(node);
  if (d.siblings) {
    gather_outputs(*d.siblings, node, outputs);
  } else {
    outputs.clear();
    outputs.push_back(node);
  }
  if (d.primitive->device().type == Device::gpu) {
    gpu::eval_node(node, outputs);
  } else if (gpu::device_buffers_made() && std::any_of(d.inputs.begin(), d.inputs.end(), gpu::on_device)) {
    // A CPU node reading GPU results works on host copies of them.
    std::vector<array> host_inputs;
    for (const auto& in : d.inputs) host_inputs.push_back(gpu::on_device(in) ? gpu::host_view(in) : in);
    d.primitive->eval_cpu(host_inputs, outputs);
  } else {
    d.primitive->eval_cpu(d.inputs, outputs);
  }
  if (d.siblings) {
    // A value nobody could read must not be published: a kernel gives every output a buffer.
    for (const auto& o : outputs) {
      if (!o.desc()->data)
        throw std::logic_error(std::string("[") + d.primitive->name() + "] gave an output no buffer.");
    }
  }
}

void finish_node(ArrayDesc& d, const std::exception_ptr& err) noexcept {
  if (err) {
    d.error = err;
    d.data.reset();
    d.data_ptr = nullptr;
    complete_node(d, Status::failed);
  } else {
    complete_node(d, Status::available);
  }
}

// After the kernel of a multi-output primitive: its other outputs that no evaluation has
// claimed complete now (claimed here first, so no evaluation claims them meanwhile); one
// that is claimed finds the group computed when its own run comes.
void finish_siblings(const ArrayDesc& d, std::vector<array>& outputs,
                     const std::exception_ptr& err) noexcept {
  for (auto& o : outputs) {
    ArrayDesc& s = *o.desc();
    if (&s == &d) continue;
    Status expected = Status::unscheduled;
    if (s.status.compare_exchange_strong(expected, Status::claimed, std::memory_order_acq_rel))
      finish_node(s, err);
  }
}
}  // namespace

bool running_here(const ArrayDesc* d) noexcept {
  return t_running == d || (d->siblings != nullptr && d->siblings.get() == t_running_group);
}

bool execute_node(array& node) noexcept {
  ArrayDesc& d = *node.desc();
  SiblingGroup* group = d.siblings.get();
  if (group && group->ran.load(std::memory_order_acquire)) {
    finish_node(d, group->error);  // computed with a sibling that ran first
    return true;
  }
  std::exception_ptr err;
  for (const auto& in : d.inputs) {
    if (in.desc()->status.load(std::memory_order_acquire) == Status::failed) {
      err = in.desc()->error;  // every dependent fails with the original error
      break;
    }
  }
  std::vector<array> outputs = ThreadOutputs::take();
  bool refused = false;
  if (!err) {
    try {
      KernelScope running_kernel;  // exit waits for it
      refused = running_kernel.refused();
      if (!refused) run_kernel(node, outputs);
    } catch (...) {
      err = std::current_exception();
      note_stream_failure(*d.primitive->stream().state(), err);  // for synchronize, if no eval reports it
    }
  }
  if (group && !refused) {
    group->error = err;
    group->ran.store(true, std::memory_order_release);
    finish_siblings(d, outputs, err);
  }
  outputs.clear();
  ThreadOutputs::give_back(std::move(outputs));
  if (refused) return false;
  finish_node(d, err);
  return true;
}

void Strand::drain_to(size_t max_queued) {
  uint64_t sub = submitted_.load();
  wait_until_completed(sub > max_queued ? sub - max_queued : 0);
}

}  // namespace detail

void eval(std::vector<array> outputs) {
  bool all_done = true;
  for (const auto& o : outputs) {
    if (!detail::is_complete(o.desc())) {
      all_done = false;
      break;
    }
  }
  if (!all_done) {
    auto targets = detail::submit(outputs, /*wake=*/false);
    const auto& touched = targets.touched;
    const auto& pushed = targets.pushed;
    // Keep the first output's strand for ourselves; get every other one going now.
    detail::Strand* mine = nullptr;
    for (const auto& o : outputs) {
      if (!detail::is_complete(o.desc()) && o.primitive_ptr()) {
        mine = detail::strand_of(o.desc());
        break;
      }
    }
    for (const auto& st : touched) {
      if (st.get() != mine) st->kick();
    }
    for (const auto& o : outputs) {
      // Only a thread with a long run of its own on the output's stream can be handed it.
      bool handover = false;
      if (o.primitive_ptr() && !detail::is_complete(o.desc())) {
        for (size_t i = 0; i < touched.size(); ++i) {
          if (touched[i].get() == detail::strand_of(o.desc()))
            handover = pushed[i] >= detail::Strand::kHandOffMin;
        }
      }
      detail::wait_for(o, touched, handover);
    }
  }
  detail::rethrow_if_failed(outputs);
  detail::wait_device(outputs);
}

EvalHandle async_eval(std::vector<array> outputs) {
  for (const auto& o : outputs) {
    // As MLX: a traced function evaluates its intermediates with eval, never asynchronously.
    if (detail::is_tracer(o.desc())) {
      throw std::invalid_argument("[async_eval] Not allowed inside a graph transformation.");
    }
  }
  detail::submit(outputs, /*wake=*/true);
  return EvalHandle(std::move(outputs));
}

void EvalHandle::wait() const {
  // The runs' sizes are not known here: any thread may wait on a handle.
  for (const auto& o : outputs_) detail::wait_for(o, {}, /*handover=*/true);
  detail::rethrow_if_failed(outputs_);
  detail::wait_device(outputs_);
}

bool EvalHandle::ready() const {
  return std::all_of(outputs_.begin(), outputs_.end(),
                     [](const array& o) { return detail::is_complete(o.desc()); });
}

}  // namespace braid
