#include <pthread.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "backend/backend.h"
#include "runtime/registry.h"

namespace braid {

namespace detail {

namespace {

constexpr int64_t kIndexRange = int64_t{std::numeric_limits<int>::max()} + 1;

// A handle's key in [0, INT_MAX] <-> its index in [INT_MIN, -1] (each way, without overflow).
int flip_handle(int x) { return -1 - x; }

// Owned by every copy of a thread-local handle (through an aliasing pointer whose state()
// stays null): the handle's index is taken until the last copy dies.
struct HandleState {
  int index;
  explicit HandleState(int i) : index(i) {}
  ~HandleState() { StreamRegistry::instance().release_handle(index); }
};

}  // namespace

StreamRegistry& StreamRegistry::instance() {
  static StreamRegistry* registry = new StreamRegistry();  // deliberate leak: no exit races
  return *registry;
}

template <typename Live>
int StreamRegistry::take_free(int64_t& cursor, const Live& live) {
  if (live.size() >= static_cast<uint64_t>(kIndexRange)) {
    throw std::runtime_error("[new_stream] Every stream index is in use.");
  }
  int64_t c = (cursor % kIndexRange + kIndexRange) % kIndexRange;
  while (live.count(static_cast<int>(c)) != 0) c = (c + 1) % kIndexRange;
  cursor = c + 1;
  return static_cast<int>(c);
}

Stream StreamRegistry::create(Device d) {
  if (!is_available(d)) {
    std::ostringstream msg;
    msg << "[new_stream] Device " << d << " is not available (no GPU backend or no GPU found).";
    throw std::invalid_argument(msg.str());
  }
  int index;
  {
    MutexLock lock(mu_);
    index = take_free(stream_cursor_, streams_);
    streams_.emplace(index, std::weak_ptr<StreamState>());  // reserved until the stream is built
  }
  std::shared_ptr<StreamState> state;
  try {
    state = std::make_shared<StreamState>(index, d);
  } catch (...) {
    remove(index);
    throw;
  }
  // From here on, ~StreamState gives the index back if anything throws.
  if (d.type == Device::gpu) state->backend = gpu::new_stream_state(index);
  {
    MutexLock lock(mu_);
    streams_.find(index)->second = state;
  }
  return Stream(index, d, std::move(state));
}

std::shared_ptr<StreamState> StreamRegistry::lookup(int index) {
  MutexLock lock(mu_);
  auto it = streams_.find(index);
  return it != streams_.end() ? it->second.lock() : nullptr;
}

Stream StreamRegistry::find(int index, Device d) {
  std::shared_ptr<StreamState> state = lookup(index);
  if (!state || state->device != d) {
    std::ostringstream msg;
    msg << "[Stream] No live stream with index " << index << " on " << d << ".";
    throw std::invalid_argument(msg.str());
  }
  return Stream(index, d, std::move(state));
}

Stream StreamRegistry::find(int index) {
  std::shared_ptr<StreamState> state = lookup(index);
  if (!state) {
    throw std::invalid_argument("[get_stream] No live stream with index " + std::to_string(index) + ".");
  }
  const Device d = state->device;
  return Stream(index, d, std::move(state));
}

std::vector<std::shared_ptr<StreamState>> StreamRegistry::all() {
  // Locked outside mu_: dropping the last reference there would run ~StreamState under it.
  std::vector<std::weak_ptr<StreamState>> weak;
  {
    MutexLock lock(mu_);
    weak.reserve(streams_.size());
    for (auto& [index, w] : streams_) weak.push_back(w);
  }
  std::vector<std::shared_ptr<StreamState>> out;
  out.reserve(weak.size());
  for (auto& w : weak) {
    if (auto s = w.lock()) out.push_back(std::move(s));
  }
  return out;
}

void StreamRegistry::remove(int index) noexcept {
  MutexLock lock(mu_);
  auto it = streams_.find(index);
  // Only an expired entry is the dying stream's (or a reservation that failed): a live
  // index is never handed out twice.
  if (it != streams_.end() && it->second.expired()) streams_.erase(it);
}

Stream StreamRegistry::new_handle(Device d) {
  int index;
  {
    MutexLock lock(mu_);
    const int key = take_free(handle_cursor_, handles_);
    handles_.insert(key);
    index = flip_handle(key);
  }
  std::shared_ptr<HandleState> owner;
  try {
    owner = std::make_shared<HandleState>(index);
  } catch (...) {
    release_handle(index);
    throw;
  }
  return Stream(index, d, std::shared_ptr<StreamState>(std::move(owner), nullptr));
}

void StreamRegistry::release_handle(int index) noexcept {
  MutexLock lock(mu_);
  handles_.erase(flip_handle(index));
}

void StreamRegistry::start_stream_indices_at(int64_t cursor) {
  MutexLock lock(mu_);
  stream_cursor_ = cursor;
}

void StreamRegistry::start_handle_indices_at(int64_t cursor) {
  MutexLock lock(mu_);
  handle_cursor_ = cursor;
}

StreamState::StreamState(int index, Device device)
    : index(index), device(device), strand(std::make_shared<Strand>()) {}

StreamState::~StreamState() {
  take_stream_failure(*this);  // no one can synchronize it any more
  StreamRegistry::instance().remove(index);
}

namespace {

struct UnreportedFailure {
  const StreamState* stream;  // removed from the table before the stream dies
  std::exception_ptr error;
};

// A few per stream, oldest first: one an eval reports leaves the next for synchronize.
constexpr size_t kKeptPerStream = 8;

struct FailureTable {
  Mutex mu;
  std::vector<UnreportedFailure> entries GUARDED_BY(mu);
  std::atomic<size_t> count{0};  // entries.size(), read without the lock to skip an empty table
};

FailureTable& failure_table() {
  static FailureTable* table = new FailureTable();  // deliberate leak: used until exit
  return *table;
}

}  // namespace

void note_stream_failure(const StreamState& s, const std::exception_ptr& e) noexcept {
  FailureTable& t = failure_table();
  MutexLock lock(t.mu);
  size_t kept = 0;
  for (const auto& f : t.entries) kept += f.stream == &s;
  if (kept >= kKeptPerStream) return;
  try {
    t.entries.push_back({&s, e});
  } catch (...) {
    return;  // no memory: synchronize will not report this one
  }
  t.count.store(t.entries.size());
}

std::exception_ptr take_stream_failure(const StreamState& s) noexcept {
  FailureTable& t = failure_table();
  if (t.count.load() == 0) return nullptr;
  // Declared before the lock, so that no exception object is destroyed under it (its
  // destructor may take locks of its own, a Python exception's the GIL).
  std::exception_ptr first;
  std::array<std::exception_ptr, kKeptPerStream> later;
  size_t num_later = 0;
  MutexLock lock(t.mu);
  // The oldest is reported; the stream's later ones go with it (synchronize reports one).
  auto keep = t.entries.begin();
  for (auto it = t.entries.begin(); it != t.entries.end(); ++it) {
    if (it->stream != &s) {
      if (keep != it) *keep = std::move(*it);
      ++keep;
    } else if (!first) {
      first = std::move(it->error);
    } else if (num_later < later.size()) {
      later[num_later++] = std::move(it->error);
    }
  }
  t.entries.erase(keep, t.entries.end());
  t.count.store(t.entries.size());
  return first;
}

void forget_stream_failure(const std::exception_ptr& e) noexcept {
  FailureTable& t = failure_table();
  if (t.count.load() == 0) return;
  MutexLock lock(t.mu);
  // Order kept (the oldest is reported first). The caller holds `e`, so no exception object
  // is destroyed under the lock.
  auto keep = t.entries.begin();
  for (auto it = t.entries.begin(); it != t.entries.end(); ++it) {
    if (it->error == e) continue;
    if (keep != it) *keep = std::move(*it);
    ++keep;
  }
  t.entries.erase(keep, t.entries.end());
  t.count.store(t.entries.size());
}

namespace {

// The default device at start: the GPU when BRAID_DEVICE=gpu and one is available (so the
// whole test suite can run on the GPU), else the CPU.
Device initial_device() {
  const char* env = std::getenv("BRAID_DEVICE");
  if (env != nullptr && std::string(env) == "gpu" && gpu::is_available()) return Device(Device::gpu);
  return Device(Device::cpu);
}

// The process-wide default device; Device is 8 trivially copyable bytes, so this is lock-free.
// Set on first use, not at static initialization: probing the GPU then would initialize CUDA
// before tools such as compute-sanitizer attach.
std::atomic<Device>& default_device_slot() {
  static std::atomic<Device> slot{initial_device()};
  return slot;
}

// Everything a thread sets for itself. Destroyed at thread exit, which drops this thread's
// hold on its default streams; they live on while arrays or Stream values refer to them.
struct ThreadDefaults {
  // A handle's real stream on this thread. `handle` tells the handle from a later one that
  // reuses its index after it died.
  struct Resolved {
    std::weak_ptr<StreamState> handle;
    Stream stream;
  };

  std::optional<Stream> cpu_stream;
  std::optional<Stream> gpu_stream;
  std::optional<Device> device_override;                   // set by StreamContext
  std::unordered_map<int, Resolved> thread_local_streams;  // handle index -> real stream

  std::optional<Stream>& slot(Device d) { return d.type == Device::cpu ? cpu_stream : gpu_stream; }
};

// Trivially destructible, so they stay readable until the thread ends: a thread_local or
// static destructor that runs braid after the owner below died sees `gone`.
thread_local ThreadDefaults* t_defaults = nullptr;
thread_local bool t_defaults_gone = false;

struct DefaultsOwner {
  ThreadDefaults defaults;
  DefaultsOwner() { t_defaults = &defaults; }
  ~DefaultsOwner() {
    t_defaults = nullptr;
    t_defaults_gone = true;
  }
};

// A thread's defaults once its DefaultsOwner died. Freed by a pthread key destructor, which
// glibc runs after every C++ thread_local destructor; listed so that one never freed (the
// main thread's at exit) stays reachable rather than leaked.
struct LateDefaults {
  ThreadDefaults defaults;
  LateDefaults* prev = nullptr;
  LateDefaults* next = nullptr;
};

void free_late_defaults(void* p);

struct LateList {
  Mutex mu;
  LateDefaults* head GUARDED_BY(mu) = nullptr;
  pthread_key_t key{};
  bool has_key = pthread_key_create(&key, &free_late_defaults) == 0;
};

LateList& late_list() {
  static auto* list = new LateList();  // deliberate leak: used by threads exiting at any time
  return *list;
}

void free_late_defaults(void* p) {
  auto* late = static_cast<LateDefaults*>(p);
  if (t_defaults == &late->defaults) t_defaults = nullptr;  // a later use makes a new one
  LateList& list = late_list();
  {
    MutexLock lock(list.mu);
    if (late->prev != nullptr) late->prev->next = late->next;
    if (late->next != nullptr) late->next->prev = late->prev;
    if (list.head == late) list.head = late->next;
  }
  delete late;
}

ThreadDefaults& late_defaults() {
  LateList& list = late_list();
  auto* late = new LateDefaults();
  {
    MutexLock lock(list.mu);
    late->next = list.head;
    if (list.head != nullptr) list.head->prev = late;
    list.head = late;
  }
  // Without the key it stays listed until the process ends.
  if (list.has_key) pthread_setspecific(list.key, late);
  t_defaults = &late->defaults;
  return late->defaults;
}

ThreadDefaults& thread_defaults() {
  if (t_defaults != nullptr) return *t_defaults;
  if (!t_defaults_gone) {
    thread_local DefaultsOwner owner;
    return owner.defaults;
  }
  return late_defaults();
}

bool same_handle(const std::weak_ptr<StreamState>& a, const std::shared_ptr<StreamState>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace
}  // namespace detail

using detail::StreamRegistry;
using detail::thread_defaults;

Stream::Stream(int index, Device device) : Stream(StreamRegistry::instance().find(index, device)) {}

const Device& default_device() {
  // Reads, never creates: a thread without defaults has no override. The answer is copied
  // into a slot of the calling thread (trivially destructible, so readable at exit too),
  // which the reference names until this thread's next call.
  thread_local Device answer(Device::cpu);
  const detail::ThreadDefaults* t = detail::t_defaults;
  answer = t != nullptr && t->device_override ? *t->device_override
                                              : detail::default_device_slot().load(std::memory_order_relaxed);
  return answer;
}

void set_default_device(const Device& d) {
  if (!is_available(d)) {
    std::ostringstream msg;
    msg << "[set_default_device] Device " << d << " is not available.";
    throw std::invalid_argument(msg.str());
  }
  detail::default_device_slot().store(d, std::memory_order_relaxed);
}

bool is_available(const Device& d) {
  if (d.type == Device::cpu) return d.index == 0;
  return d.index == 0 && detail::gpu::is_available();
}

namespace gpu {
bool is_available() { return braid::is_available(Device::gpu); }
}  // namespace gpu

namespace cu {
bool is_available() { return braid::is_available(Device::gpu); }
}  // namespace cu

int device_count(Device::DeviceType type) {
  if (type == Device::cpu) return 1;
  return detail::gpu::is_available() ? 1 : 0;
}

namespace {

using DeviceInfo = std::unordered_map<std::string, std::variant<std::string, size_t>>;

DeviceInfo cpu_info() {
  std::string name = "cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      name = line.substr(line.find(':') + 1);
      name.erase(0, name.find_first_not_of(' '));
      break;
    }
  }
  struct utsname u {};
  const std::string arch = uname(&u) == 0 ? u.machine : "unknown";
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const size_t memory = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
  return {{"device_name", name},
          {"architecture", arch},
          {"memory_size", memory},
          {"total_memory", memory},
          {"max_recommended_working_set_size", memory}};
}

DeviceInfo gpu_info() {
  const auto p = detail::gpu::properties();
  return {{"device_name", p.name},
          {"architecture", p.architecture},
          {"memory_size", p.total_memory},
          {"total_memory", p.total_memory},
          {"max_recommended_working_set_size", p.total_memory}};
}

}  // namespace

const std::unordered_map<std::string, std::variant<std::string, size_t>>& device_info(const Device& d) {
  if (!is_available(d)) {
    std::ostringstream msg;
    msg << "[device_info] " << d << " is not available.";
    throw std::invalid_argument(msg.str());
  }
  if (d.type == Device::cpu) {
    static const DeviceInfo* cpu = new DeviceInfo(cpu_info());  // read by any thread until exit
    return *cpu;
  }
  static const DeviceInfo* gpu = new DeviceInfo(gpu_info());
  return *gpu;
}

Stream default_stream(Device d) {
  auto& slot = thread_defaults().slot(d);
  if (!slot || slot->device != d) slot = StreamRegistry::instance().create(d);
  return *slot;
}

void set_default_stream(Stream s) {
  s = stream_from_thread_local_stream(s);
  thread_defaults().slot(s.device) = std::move(s);
}

Stream new_stream(Device d) { return StreamRegistry::instance().create(d); }

std::vector<Stream> get_streams() {
  std::vector<Stream> out;
  for (auto& state : StreamRegistry::instance().all()) {
    const int index = state->index;
    const Device device = state->device;
    out.emplace_back(index, device, std::move(state));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void clear_streams() {
  // Moved out first: dropping the last reference to a stream runs its teardown, which must
  // not find this thread's defaults half-cleared.
  auto& t = thread_defaults();
  std::optional<Stream> cpu, gpu;
  cpu.swap(t.cpu_stream);
  gpu.swap(t.gpu_stream);
  std::unordered_map<int, detail::ThreadDefaults::Resolved> resolved;
  resolved.swap(t.thread_local_streams);
}

ThreadLocalStream new_thread_local_stream(Device d) {
  if (!is_available(d)) {
    std::ostringstream msg;
    msg << "[new_thread_local_stream] Device " << d << " is not available.";
    throw std::invalid_argument(msg.str());
  }
  const Stream handle = StreamRegistry::instance().new_handle(d);
  return ThreadLocalStream(handle.index, handle.device, handle.shared_state());
}

Stream stream_from_thread_local_stream(Stream s) {
  if (!s.is_thread_local_handle()) return s;
  auto& map = thread_defaults().thread_local_streams;
  auto it = map.find(s.index);
  if (it != map.end() && detail::same_handle(it->second.handle, s.shared_state())) return it->second.stream;
  Stream real = StreamRegistry::instance().create(s.device);
  // Handles that died cannot be resolved again: release their streams (and the entry of the
  // dead handle whose index `s` reuses).
  std::erase_if(map, [](const auto& entry) { return entry.second.handle.expired(); });
  map.insert_or_assign(s.index, detail::ThreadDefaults::Resolved{s.shared_state(), real});
  return real;
}

Stream new_thread_unsafe_stream(Device d) { return new_stream(d); }

Stream to_stream(StreamOrDevice s) {
  if (auto* stream = std::get_if<Stream>(&s)) return stream_from_thread_local_stream(*stream);
  if (auto* device = std::get_if<Device>(&s)) return default_stream(*device);
  return default_stream(default_device());
}

Stream to_stream(StreamOrDevice s, Device default_) {
  if (std::holds_alternative<std::monostate>(s)) return default_stream(default_);
  return to_stream(std::move(s));
}

void synchronize(Stream s) {
  s = stream_from_thread_local_stream(s);
  s.state()->strand->synchronize();
  if (s.device.type == Device::gpu) detail::gpu::synchronize(*s.state());
  if (std::exception_ptr failure = detail::take_stream_failure(*s.state())) std::rethrow_exception(failure);
}

void synchronize() { synchronize(default_stream(default_device())); }

Stream get_stream(int index) { return detail::StreamRegistry::instance().find(index); }

struct StreamContext::Saved {
  std::optional<Device> device_override;
  Device device;
  std::optional<Stream> stream;
};

StreamContext::StreamContext(StreamOrDevice s) {
  if (std::holds_alternative<std::monostate>(s)) {
    throw std::invalid_argument("[StreamContext] Invalid argument, please specify a stream or device.");
  }
  Stream stream = to_stream(s);
  auto& t = thread_defaults();
  saved_ = std::make_unique<Saved>(Saved{t.device_override, stream.device, t.slot(stream.device)});
  t.device_override = stream.device;
  t.slot(stream.device) = stream;
}

StreamContext::~StreamContext() {
  // Made before this thread's defaults died, it has nothing left to restore (and must not
  // allocate new ones in a destructor).
  detail::ThreadDefaults* t = detail::t_defaults;
  if (t == nullptr) return;
  t->device_override = saved_->device_override;
  t->slot(saved_->device) = std::move(saved_->stream);
}

std::ostream& operator<<(std::ostream& os, const Device& d) {
  return os << "Device(" << (d.type == Device::cpu ? "cpu" : "gpu") << ", " << d.index << ")";  // MLX's form
}

std::ostream& operator<<(std::ostream& os, const Stream& s) {
  return os << "Stream(" << (s.device.type == Device::cpu ? "cpu" : "gpu") << ", " << s.index << ")";
}

}  // namespace braid
