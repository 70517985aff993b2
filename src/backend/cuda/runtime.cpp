// The CUDA runtime layer: one CUDA stream per braid GPU stream, completion events, the
// stream-safe caching device allocator, and host<->device transfers.
//
// A GPU node is "available" once its work is enqueued and its completion event recorded.
// GPU consumers on another stream wait for that event on the device (cudaStreamWaitEvent);
// host consumers (CPU nodes, item, data, eval's return) wait for it on the host.
//
// Lifetime: destructors here never throw and, when memory is short, fall back to paths that
// allocate nothing. At process exit quiesce() (or our own atexit handler, registered after
// cudart's so that it runs first) waits for braid's device work and shuts the backend down;
// from then on nothing here calls the CUDA runtime (buffers freed later are left to the exit).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/cuda_utils.h"
#include "backend/cuda/transfer.h"
#include "graph/node.h"
#include "memory/object_pool.h"
#include "primitives/primitives.h"
#include "runtime/strand.h"

namespace braid {
namespace cuda {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error so the stream stays usable
    throw std::runtime_error(std::string("[cuda] ") + what + ": " + cudaGetErrorString(err));
  }
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("[cuda] ") + what + ": cuBLAS status " + std::to_string(status));
  }
}

int32_t checked_int32(int64_t value, const char* op, const char* what) {
  if (value < INT32_MIN || value > INT32_MAX) {
    throw std::invalid_argument(std::string("[") + op + "] " + what + " " + std::to_string(value) +
                                " does not fit the 32-bit int that CUDA takes here.");
  }
  return static_cast<int32_t>(value);
}

namespace {

// Device allocation failure: a std::bad_alloc, like a failed host allocation, with a message.
class DeviceOutOfMemory : public std::bad_alloc {
 public:
  explicit DeviceOutOfMemory(size_t bytes)
      : what_("[cuda] out of device memory allocating " + std::to_string(bytes) + " bytes") {}
  DeviceOutOfMemory(size_t bytes, size_t device_bytes)
      : what_("[cuda] Cannot allocate " + std::to_string(bytes) + " bytes: more than the device's " +
              std::to_string(device_bytes) + " bytes of memory.") {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

struct DeviceInfo {
  bool available = false;
  cudaDeviceProp props{};
};

const DeviceInfo& device_info() {
  static const DeviceInfo* info = [] {
    auto* i = new DeviceInfo();  // deliberate leak: read by any thread until exit
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0 &&
        cudaGetDeviceProperties(&i->props, 0) == cudaSuccess) {
      i->available = true;
    } else {
      cudaGetLastError();
    }
    return i;
  }();
  return *info;
}

// The backend's life: started by the first stream, shut down once at exit. Every call into
// the CUDA runtime from braid's entry points holds an ApiUse, so shutting down can wait for
// the calls in flight before the runtime unloads. Flag and counter are seq_cst: the pair
// (count up, read flag) against (set flag, read count) must not both miss each other.
std::atomic<bool> g_started{false};
std::atomic<bool> g_shut_down{false};
std::atomic<int64_t> g_in_flight{0};
thread_local int64_t t_in_flight = 0;  // trivially destructible: valid until the thread ends

class ApiUse {
 public:
  ApiUse() noexcept {
    g_in_flight.fetch_add(1);
    if (g_shut_down.load()) {
      g_in_flight.fetch_sub(1);
      return;
    }
    ++t_in_flight;
    active_ = true;
  }
  ~ApiUse() {
    if (!active_) return;
    --t_in_flight;
    g_in_flight.fetch_sub(1);
  }
  ApiUse(const ApiUse&) = delete;
  ApiUse& operator=(const ApiUse&) = delete;
  /// False once the backend has shut down: the caller must not touch the CUDA runtime.
  bool active() const { return active_; }
  /// Throws unless active (for entry points that must do their work).
  void require(const char* what) const {
    if (!active_) {
      throw std::runtime_error(std::string("[") + what + "] the GPU backend has shut down (process exit)");
    }
  }

 private:
  bool active_ = false;
};

struct StreamCtx;

// Live streams, so that shutting down can wait for each of them. Intrusive, so unlinking in
// a destructor cannot fail; the list is leaked so streams may die after static destruction.
struct StreamList {
  std::mutex mu;
  StreamCtx* head = nullptr;
};
StreamList& live_streams() {
  static auto* list = new StreamList();  // deliberate leak
  return *list;
}

void shut_down() noexcept;
void exit_handler() { shut_down(); }

// Before braid's first stream: creates the CUDA context and cuBLASLt's lazily made state,
// then registers our exit handler. Those libraries register their exit-time teardown as they
// initialize; ours, registered later, runs first and waits out the calls in flight. Had
// cuBLASLt initialized in a worker's first product, an exit at that moment would destroy
// its state under the call (seen: SIGSEGV in cublasLtMatmulAlgoGetHeuristic at exit).
void start_runtime() {
  static std::once_flag once;
  std::call_once(once, [] {
    check(cudaFree(nullptr), "cudaFree (context creation)");
    warm_up_matmul();
    std::atexit(exit_handler);  // on failure quiesce() still runs from the worker pool's handler
    g_started.store(true);
  });
}

// Backend state of one GPU braid stream.
struct StreamCtx {
  cudaStream_t stream = nullptr;
  std::mutex mu;  // guards the buffers below (a stream's nodes encode one at a time anyway)
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  void* handle = nullptr;  // stream_handle()'s, with its destructor
  void (*destroy_handle)(void*) = nullptr;
  // Buffers last used by this stream alone: reusable by it at once, in stream order.
  std::mutex cache_mu;
  std::unordered_map<size_t, std::vector<void*>> cache;
  size_t cached_bytes = 0;
  StreamCtx* prev = nullptr;  // in live_streams(), guarded by its lock
  StreamCtx* next = nullptr;

  StreamCtx() {
    StreamList& l = live_streams();
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    std::lock_guard<std::mutex> lock(l.mu);
    next = l.head;
    if (next) next->prev = this;
    l.head = this;
  }
  ~StreamCtx() {
    ApiUse use;
    {
      StreamList& l = live_streams();
      std::lock_guard<std::mutex> lock(l.mu);
      (prev ? prev->next : l.head) = next;
      if (next) next->prev = prev;
    }
    if (!use.active()) return;  // after shutdown the exit reclaims the stream and its buffers
    cudaStreamSynchronize(stream);
    if (handle) destroy_handle(handle);
    if (workspace) cudaFree(workspace);
    if (scratch) cudaFree(scratch);
    for (auto& [cls, list] : cache) {
      for (void* p : list) cudaFree(p);
    }
    cudaStreamDestroy(stream);
    cudaGetLastError();
  }
};

// Waits (boundedly: exit must not hang) for other threads' calls in flight, then for the
// device work on every live stream. Idempotent.
void shut_down() noexcept {
  if (g_shut_down.exchange(true)) return;
  if (!g_started.load()) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (g_in_flight.load() > t_in_flight && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  StreamList& l = live_streams();
  std::lock_guard<std::mutex> lock(l.mu);
  for (StreamCtx* c = l.head; c != nullptr; c = c->next) cudaStreamSynchronize(c->stream);
  cudaGetLastError();
}

StreamCtx& ctx_of(const Stream& s) {
  return *static_cast<StreamCtx*>(s.state()->backend.get());
}
std::shared_ptr<StreamCtx> ctx_ptr(const Stream& s) {
  return std::static_pointer_cast<StreamCtx>(s.state()->backend);
}

// Destroys an event unless the backend has shut down (then the exit reclaims it). Pending
// work is fine: CUDA releases a recorded event once it completes.
void destroy_event(cudaEvent_t e) noexcept {
  ApiUse use;
  if (!use.active()) return;
  cudaEventDestroy(e);
  cudaGetLastError();
}

// Events are reused: creating one costs far more than recording it. Each thread keeps its
// own free events, so threads encoding on different streams share no lock here; a thread's
// events go to a shared list when it exits (beyond a bound they are destroyed). The thread's
// list is reached through a trivially destructible pointer with a "gone" flag, so an event
// returned after the list died (a global array freed at exit) goes to the shared list.
constexpr size_t kThreadEvents = 4096;
constexpr size_t kSharedEvents = 16384;

struct SharedEvents {
  std::mutex mu;
  std::vector<cudaEvent_t> list;
};
SharedEvents& shared_events() {
  static auto* s = new SharedEvents();  // deliberate leak: events come back during exit
  return *s;
}

// Moves up to the shared list's free room from `events` to it; destroys the rest.
void give_back(std::vector<cudaEvent_t>& events) noexcept {
  size_t moved = 0;
  {
    SharedEvents& s = shared_events();
    std::lock_guard<std::mutex> lock(s.mu);
    const size_t n = std::min(events.size(), kSharedEvents - std::min(kSharedEvents, s.list.size()));
    try {
      s.list.reserve(s.list.size() + n);
      s.list.insert(s.list.end(), events.end() - static_cast<std::ptrdiff_t>(n), events.end());
      moved = n;
    } catch (...) {
      // No room could be made: the events are destroyed below.
    }
  }
  for (size_t i = 0; i + moved < events.size(); ++i) destroy_event(events[i]);
  events.clear();
}

thread_local std::vector<cudaEvent_t>* t_events = nullptr;
thread_local bool t_events_gone = false;

struct ThreadEvents {
  std::vector<cudaEvent_t> list;
  ThreadEvents() { t_events = &list; }
  ~ThreadEvents() {
    t_events = nullptr;
    t_events_gone = true;
    give_back(list);
  }
};

// The calling thread's free list, or null once it has died.
std::vector<cudaEvent_t>* thread_events() noexcept {
  if (t_events != nullptr || t_events_gone) return t_events;
  thread_local ThreadEvents owner;
  return t_events;
}

class EventPool {
 public:
  /// A free event (reused or new). Throws if CUDA cannot create one.
  cudaEvent_t get() {
    if (auto* local = thread_events(); local != nullptr && !local->empty()) {
      cudaEvent_t e = local->back();
      local->pop_back();
      return e;
    }
    {
      SharedEvents& s = shared_events();
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.list.empty()) {
        cudaEvent_t e = s.list.back();
        s.list.pop_back();
        return e;
      }
    }
    cudaEvent_t e;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return e;
  }
  /// Keeps `e` for reuse, or destroys it when no list has room (or memory is short).
  void put(cudaEvent_t e) noexcept {
    if (auto* local = thread_events(); local != nullptr && local->size() < kThreadEvents) {
      try {
        local->push_back(e);
        return;
      } catch (...) {
        // The list could not grow: try the shared one.
      }
    }
    {
      SharedEvents& s = shared_events();
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.list.size() < kSharedEvents) {
        try {
          s.list.push_back(e);
          return;
        } catch (...) {
          // Destroyed below.
        }
      }
    }
    destroy_event(e);
  }
};

EventPool& events() {
  static auto* pool = new EventPool();  // deliberate leak
  return *pool;
}

// Bookkeeping of one buffer: on device data, who produced it and who read it; on either
// side, its copy on the other side once someone needed it.
struct DataState {
  std::mutex mu;
  cudaEvent_t ready = nullptr;  // recorded after the producer's work
  std::shared_ptr<StreamCtx> producer;
  std::vector<std::shared_ptr<StreamCtx>> users;  // streams that read the buffer
  std::shared_ptr<detail::Data> mirror;
  ~DataState() {
    if (ready) events().put(ready);
  }
  void add_user(const std::shared_ptr<StreamCtx>& s) {
    for (const auto& u : users) {
      if (u == s) return;
    }
    users.push_back(s);
  }
};

// Lazily created states of host buffers are guarded by a striped lock.
std::mutex& state_lock(const detail::Data* d) {
  static auto* locks = new std::mutex[64];  // deliberate leak
  return locks[(reinterpret_cast<uintptr_t>(d) >> 6) % 64];
}

DataState& state_of(detail::Data& d) {
  std::lock_guard<std::mutex> lock(state_lock(&d));
  if (!d.device_state) d.device_state = std::make_shared<DataState>();
  return *static_cast<DataState*>(d.device_state.get());
}

// The caching device allocator. A buffer used by one stream only goes back to that stream's
// own cache, which that stream reuses at once (stream order makes it safe) under its own
// lock: threads on different streams never meet here. A buffer several streams used waits
// in a shared list until events recorded on those streams at free time have completed.
class DeviceAllocator {
 public:
  void* malloc(size_t bytes, const std::shared_ptr<StreamCtx>& requester) {
    const size_t total = device_props().totalGlobalMem;
    if (bytes > total) throw DeviceOutOfMemory(bytes, total);  // could never succeed: say why
    const size_t cls = size_class(bytes);
    if (void* p = take_own(*requester, cls)) return p;
    if (void* p = take_shared(cls)) return p;
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, cls);
    if (err != cudaSuccess) {
      cudaGetLastError();
      trim(*requester);  // give back what has settled, then try once more
      err = cudaMalloc(&p, cls);
      if (err != cudaSuccess) {
        cudaGetLastError();
        throw DeviceOutOfMemory(bytes);
      }
    }
    const size_t now = active_.fetch_add(cls, std::memory_order_relaxed) + cls;
    size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return p;
  }

  /// Returns a buffer last used by `users` (and by `extra`, when not null). Never throws:
  /// when the bookkeeping cannot allocate, the buffer is freed at once after those streams
  /// finish.
  void free(void* p, size_t bytes, const std::vector<std::shared_ptr<StreamCtx>>& users,
            StreamCtx* extra) noexcept {
    const size_t cls = size_class(bytes);
    active_.fetch_sub(cls, std::memory_order_relaxed);
    if (users.size() + (extra ? 1 : 0) == 1) {
      if (keep_own(extra ? *extra : *users[0], p, cls)) return;
    } else if (keep_shared(p, cls, users, extra)) {
      return;
    }
    for (const auto& u : users) cudaStreamSynchronize(u->stream);
    if (extra) cudaStreamSynchronize(extra->stream);
    cudaFree(p);
    cudaGetLastError();
  }

  size_t active() const { return active_.load(std::memory_order_relaxed); }
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }
  void reset_peak() { peak_.store(0, std::memory_order_relaxed); }  // as MLX: 0 until the next allocation

  // The bytes actually held for a request of `bytes`.
  static size_t size_class(size_t bytes) {
    const size_t g = bytes < (size_t{1} << 20) ? 512 : (size_t{2} << 20);
    return (std::max<size_t>(bytes, 1) + g - 1) / g * g;
  }

 private:
  struct Shared {
    void* ptr;
    size_t cls;
    std::vector<cudaEvent_t> pending;
  };

  static bool keep_own(StreamCtx& s, void* p, size_t cls) noexcept {
    std::lock_guard<std::mutex> lock(s.cache_mu);
    try {
      s.cache[cls].push_back(p);
    } catch (...) {
      return false;
    }
    s.cached_bytes += cls;
    return true;
  }

  // Parks the buffer until events recorded now on each user stream have completed.
  bool keep_shared(void* p, size_t cls, const std::vector<std::shared_ptr<StreamCtx>>& users,
                   StreamCtx* extra) noexcept {
    Shared c{p, cls, {}};
    auto record = [&](StreamCtx& u) {
      cudaEvent_t e = events().get();
      if (cudaEventRecord(e, u.stream) != cudaSuccess) {
        cudaGetLastError();
        events().put(e);
        return false;
      }
      c.pending.push_back(e);  // reserved: cannot throw
      return true;
    };
    try {
      c.pending.reserve(users.size() + 1);
      bool recorded = true;
      for (const auto& u : users) recorded = recorded && record(*u);
      if (recorded && extra) recorded = record(*extra);
      if (recorded) {
        std::lock_guard<std::mutex> lock(mu_);
        shared_.push_back(std::move(c));  // Shared moves without throwing: c is intact on failure
        return true;
      }
    } catch (...) {
      // No event or no room: freed synchronously by the caller.
    }
    for (cudaEvent_t e : c.pending) events().put(e);
    return false;
  }

  void* take_own(StreamCtx& s, size_t cls) {
    std::lock_guard<std::mutex> lock(s.cache_mu);
    auto it = s.cache.find(cls);
    if (it == s.cache.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    s.cached_bytes -= cls;
    active_.fetch_add(cls, std::memory_order_relaxed);
    return p;
  }

  static bool settled(const Shared& c) {
    for (cudaEvent_t e : c.pending) {
      cudaError_t q = cudaEventQuery(e);
      if (q != cudaSuccess) {
        if (q != cudaErrorNotReady) cudaGetLastError();
        return false;
      }
    }
    return true;
  }

  void* take_shared(size_t cls) {
    std::lock_guard<std::mutex> lock(mu_);
    int looked = 0;
    for (size_t i = shared_.size(); i-- > 0 && looked < 8;) {
      if (shared_[i].cls != cls) continue;
      ++looked;
      if (!settled(shared_[i])) continue;
      void* p = shared_[i].ptr;
      for (cudaEvent_t e : shared_[i].pending) events().put(e);
      shared_.erase(shared_.begin() + static_cast<std::ptrdiff_t>(i));
      active_.fetch_add(cls, std::memory_order_relaxed);
      return p;
    }
    return nullptr;
  }

  void trim(StreamCtx& own) {
    {
      std::lock_guard<std::mutex> lock(own.cache_mu);
      for (auto& [cls, list] : own.cache) {
        for (void* p : list) cudaFree(p);
        list.clear();
      }
      own.cached_bytes = 0;
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = shared_.size(); i-- > 0;) {
      if (!settled(shared_[i])) continue;
      for (cudaEvent_t e : shared_[i].pending) events().put(e);
      cudaFree(shared_[i].ptr);
      shared_.erase(shared_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  std::mutex mu_;
  std::vector<Shared> shared_;
  std::atomic<size_t> active_{0};
  std::atomic<size_t> peak_{0};
};

DeviceAllocator& device_allocator() {
  static auto* a = new DeviceAllocator();  // deliberate leak: buffers may die at exit
  return *a;
}

std::shared_ptr<detail::Data> new_device_data(size_t bytes, const std::shared_ptr<StreamCtx>& s) {
  void* p = device_allocator().malloc(bytes, s);
  detail::gpu::g_device_buffers_made.store(true, std::memory_order_relaxed);
  std::shared_ptr<detail::Data> data;
  try {
    data = detail::make_pooled<detail::Data>(allocator::Buffer{p, bytes}, true);
  } catch (...) {
    device_allocator().free(p, bytes, {}, s.get());
    throw;
  }
  auto st = std::make_shared<DataState>();
  st->users.push_back(s);
  data->device_state = std::move(st);
  return data;
}

// An evaluated leaf with `in`'s layout over `data`, whose buffer mirrors in's buffer.
array translated(const array& in, const std::shared_ptr<detail::Data>& data) {
  const detail::ArrayDesc& src = *in.desc();
  array out(in.shape(), in.dtype(), nullptr, {});
  detail::ArrayDesc& d = *out.desc();
  auto offset = static_cast<const char*>(src.data_ptr) - static_cast<const char*>(src.data->buffer.ptr);
  d.data = data;
  d.data_ptr = static_cast<char*>(data->buffer.ptr) + offset;
  d.strides = src.strides;
  d.flags = src.flags;
  d.data_size = src.data_size;
  d.status.store(detail::Status::available, std::memory_order_release);
  return out;
}

// The device copy of a host-resident input, made once per buffer and ordered before `s`.
array device_view(const array& in, const std::shared_ptr<StreamCtx>& s) {
  detail::Data& host = *in.desc()->data;
  DataState& hs = state_of(host);
  std::shared_ptr<detail::Data> dev;
  {
    std::lock_guard<std::mutex> lock(hs.mu);
    if (!hs.mirror) {
      dev = new_device_data(host.buffer.size, s);
      if (host.buffer.size > 0 && host.buffer.size <= kSmallWrite) {
        write_small_async(dev->buffer.ptr, host.buffer.ptr, host.buffer.size, s->stream);  // scalars
      } else if (host.buffer.size > 0) {
        // From pageable memory this returns once the bytes are staged: `host` may go.
        check(cudaMemcpyAsync(dev->buffer.ptr, host.buffer.ptr, host.buffer.size, cudaMemcpyHostToDevice, s->stream),
              "cudaMemcpyAsync (host to device)");
      }
      auto& ds = *static_cast<DataState*>(dev->device_state.get());
      ds.producer = s;
      ds.ready = events().get();
      check(cudaEventRecord(ds.ready, s->stream), "cudaEventRecord");
      // Memory braid does not own may be pinned, where the copy above runs asynchronously; its
      // owner may release it as soon as this node completes, so the copy finishes here.
      if (host.external && host.buffer.size > 0)
        check(cudaEventSynchronize(ds.ready), "cudaEventSynchronize");
      hs.mirror = dev;
    } else {
      dev = hs.mirror;
    }
  }
  auto& ds = *static_cast<DataState*>(dev->device_state.get());
  {
    std::lock_guard<std::mutex> lock(ds.mu);
    if (ds.producer != s && ds.ready) check(cudaStreamWaitEvent(s->stream, ds.ready, 0), "cudaStreamWaitEvent");
    ds.add_user(s);
  }
  return translated(in, dev);
}

// Waits on the host until a device buffer's producer has finished.
void wait_host(detail::Data& d) {
  DataState& ds = state_of(d);
  cudaEvent_t e;
  {
    std::lock_guard<std::mutex> lock(ds.mu);
    e = ds.ready;
  }
  if (e) check(cudaEventSynchronize(e), "cudaEventSynchronize");
}

// The host copy of a device buffer, made once after its producer finished.
std::shared_ptr<detail::Data> host_mirror(detail::Data& d) {
  DataState& ds = state_of(d);
  std::lock_guard<std::mutex> lock(ds.mu);
  if (!ds.mirror) {
    if (ds.ready) check(cudaEventSynchronize(ds.ready), "cudaEventSynchronize");
    auto host = detail::new_host_data(d.buffer.size);
    if (d.buffer.size > 0) {
      check(cudaMemcpy(host->buffer.ptr, d.buffer.ptr, d.buffer.size, cudaMemcpyDeviceToHost),
            "cudaMemcpy (device to host)");
    }
    ds.mirror = std::move(host);
  }
  return ds.mirror;
}

}  // namespace

cudaStream_t stream_of(const Stream& s) { return ctx_of(s).stream; }

void alloc_output(array& out) {
  const Stream& s = out.primitive().stream();
  detail::ArrayDesc& d = *out.desc();
  d.data = new_device_data(out.nbytes(), ctx_ptr(s));
  d.data_ptr = d.data->buffer.ptr;
  if (!d.flags.row_contiguous) d.strides = detail::row_major_strides(d.shape);
  d.data_size = d.size;
  d.flags = detail::flags_for(d.shape, d.strides, d.size);
}

bool donate(const std::vector<array>& inputs, size_t i, array& out) {
  const array& in = inputs[i];
  if (!detail::gpu::on_device(in) || !detail::donation_allowed(inputs, i, out)) return false;
  const detail::ArrayDesc& src = *in.desc();
  auto s = ctx_ptr(out.primitive().stream());
  DataState& st = state_of(*src.data);
  {
    std::lock_guard<std::mutex> lock(st.mu);
    // Readers on other streams may still be queued (a node completes once enqueued): out's
    // writes wait for what those streams hold now. The producer was waited for as an input.
    for (const auto& u : st.users) {
      if (u == s) continue;
      cudaEvent_t e = events().get();
      // A wait takes the event's state when it is called, so the event can go back at once.
      const cudaError_t rec = cudaEventRecord(e, u->stream);
      const cudaError_t wait = rec == cudaSuccess ? cudaStreamWaitEvent(s->stream, e, 0) : rec;
      events().put(e);
      check(wait, "cudaStreamWaitEvent (donated buffer)");
    }
    // The buffer gets new contents: a new completion event (eval_node records it) and no host
    // copy of the old ones.
    if (st.ready) events().put(std::exchange(st.ready, nullptr));
    st.producer.reset();
    st.mirror.reset();
    st.users.clear();
    st.users.push_back(s);  // within the capacity: s was a user already
  }
  const Strides out_strides = detail::row_major_strides(out.shape());
  detail::copy_shared_buffer(out, in, out_strides, detail::flags_for(out.shape(), out_strides, out.size()),
                             out.size());
  return true;
}

void alloc_output_or_donate(const std::vector<array>& inputs, array& out) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (donate(inputs, i, out)) return;
  }
  alloc_output(out);
}

const cudaDeviceProp& device_props() { return device_info().props; }

cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h;
    check(cublasLtCreate(&h), "cublasLtCreate");
    return h;
  }();
  return handle;
}

void* lt_workspace(const Stream& s, size_t* bytes) {
  StreamCtx& c = ctx_of(s);
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.workspace) {
    c.workspace_bytes = size_t{32} << 20;
    check(cudaMalloc(&c.workspace, c.workspace_bytes), "cudaMalloc (cuBLASLt workspace)");
  }
  *bytes = c.workspace_bytes;
  return c.workspace;
}

void* scratch(const Stream& s, size_t bytes) {
  StreamCtx& c = ctx_of(s);
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.scratch_bytes < bytes) {
    if (c.scratch) {
      // Earlier kernels of this stream may still read it: let them finish first.
      check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
      cudaFree(c.scratch);
      c.scratch = nullptr;
      c.scratch_bytes = 0;
    }
    // The size is recorded only once the buffer exists: a failed cudaMalloc throws and leaves
    // no buffer, so the next call tries again instead of returning null.
    const size_t size = std::max(bytes, size_t{1} << 20);
    void* buffer = nullptr;
    check(cudaMalloc(&buffer, size), "cudaMalloc (scratch)");
    c.scratch = buffer;
    c.scratch_bytes = size;
  }
  return c.scratch;
}

void* stream_handle(const Stream& s, void* (*make)(cudaStream_t), void (*destroy)(void*)) {
  StreamCtx& c = ctx_of(s);
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.handle) {
    c.handle = make(c.stream);
    c.destroy_handle = destroy;
  }
  return c.handle;
}

size_t active_device_memory() { return device_allocator().active(); }

}  // namespace cuda

namespace detail::gpu {

bool is_available() { return cuda::device_info().available; }

Properties properties() {
  const cudaDeviceProp& p = cuda::device_info().props;
  return Properties{p.name, "sm_" + std::to_string(p.major) + std::to_string(p.minor), p.totalGlobalMem};
}

// Until the first device buffer exists there is nothing to count (and no reason to touch CUDA).
size_t active_memory() noexcept { return device_buffers_made() ? cuda::device_allocator().active() : 0; }
size_t peak_memory() noexcept { return device_buffers_made() ? cuda::device_allocator().peak() : 0; }
void reset_peak_memory() noexcept {
  if (device_buffers_made()) cuda::device_allocator().reset_peak();
}
size_t allocated_bytes(size_t bytes) noexcept { return cuda::DeviceAllocator::size_class(bytes); }

std::shared_ptr<void> new_stream_state(int) {
  cuda::ApiUse use;
  use.require("new_stream");
  cuda::start_runtime();
  return std::make_shared<cuda::StreamCtx>();
}

void eval_node(array& node, std::vector<array>& outputs) {
  cuda::ApiUse use;
  use.require("eval");
  ArrayDesc& d = *node.desc();
  auto s = cuda::ctx_ptr(d.primitive->stream());
  bool all_on_device = true;
  for (const auto& in : d.inputs) {
    if (!on_device(in)) {
      all_on_device = false;
      continue;
    }
    auto& st = cuda::state_of(*in.desc()->data);
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.ready && st.producer != s) {
      cuda::check(cudaStreamWaitEvent(s->stream, st.ready, 0), "cudaStreamWaitEvent");
    }
    st.add_user(s);
  }
  if (all_on_device) {
    d.primitive->eval_gpu(d.inputs, outputs);  // the node's own list: see donation_allowed
  } else {
    std::vector<array> inputs;
    inputs.reserve(d.inputs.size());
    for (const auto& in : d.inputs) inputs.push_back(on_device(in) ? in : cuda::device_view(in, s));
    d.primitive->eval_gpu(inputs, outputs);
  }
  // A new buffer gets its completion event; a view shares its source's.
  for (const auto& out : outputs) {
    if (!out.desc()->data)
      throw std::logic_error(std::string("[") + d.primitive->name() + "] gave an output no buffer.");
    auto& out_state = cuda::state_of(*out.desc()->data);
    std::lock_guard<std::mutex> lock(out_state.mu);
    if (!out_state.ready) {
      out_state.producer = s;
      out_state.ready = cuda::events().get();
      cuda::check(cudaEventRecord(out_state.ready, s->stream), "cudaEventRecord");
    }
  }
}

array host_view(const array& in) {
  cuda::ApiUse use;
  use.require("eval");
  return cuda::translated(in, cuda::host_mirror(*in.desc()->data));
}

void wait_ready(const array& a) {
  cuda::ApiUse use;
  use.require("eval");
  cuda::wait_host(*a.desc()->data);
}

void* host_pointer(const array& a) {
  cuda::ApiUse use;
  use.require("array::data");
  const ArrayDesc& d = *a.desc();
  auto mirror = cuda::host_mirror(*d.data);
  auto offset = static_cast<const char*>(d.data_ptr) - static_cast<const char*>(d.data->buffer.ptr);
  return static_cast<char*>(mirror->buffer.ptr) + offset;
}

void free_device(Data& d) noexcept {
  cuda::ApiUse use;
  if (!use.active()) return;  // shut down: the exit returns device memory
  std::vector<std::shared_ptr<cuda::StreamCtx>> users;
  cuda::StreamCtx* extra = nullptr;
  if (d.device_state) {
    // The state dies with `d`: take its users rather than copy them (a copy could throw).
    auto& st = *static_cast<cuda::DataState*>(d.device_state.get());
    std::lock_guard<std::mutex> lock(st.mu);
    users = std::move(st.users);
    if (st.producer && std::find(users.begin(), users.end(), st.producer) == users.end()) {
      extra = st.producer.get();  // kept alive by st.producer
    }
  }
  cuda::device_allocator().free(d.buffer.ptr, d.buffer.size, users, extra);
}

void synchronize(StreamState& s) {
  cuda::ApiUse use;
  use.require("synchronize");
  auto* c = static_cast<cuda::StreamCtx*>(s.backend.get());
  cuda::check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
}

void quiesce() noexcept { cuda::shut_down(); }

}  // namespace detail::gpu
}  // namespace braid
