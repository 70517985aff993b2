#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "backend/backend.h"
#include "runtime/registry.h"

namespace braid {

namespace detail {

StreamRegistry& StreamRegistry::instance() {
  static StreamRegistry* registry = new StreamRegistry();  // deliberate leak: no exit races
  return *registry;
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
    index = next_index_++;
  }
  auto state = std::make_shared<StreamState>(index, d);
  if (d.type == Device::gpu) state->backend = gpu::new_stream_state(index);
  {
    MutexLock lock(mu_);
    streams_[index] = state;
  }
  return Stream(index, d, std::move(state));
}

Stream StreamRegistry::find(int index, Device d) {
  std::shared_ptr<StreamState> state;
  {
    MutexLock lock(mu_);
    auto it = streams_.find(index);
    if (it != streams_.end()) state = it->second.lock();
  }
  if (!state || state->device != d) {
    std::ostringstream msg;
    msg << "[Stream] No live stream with index " << index << " on " << d << ".";
    throw std::invalid_argument(msg.str());
  }
  return Stream(index, d, std::move(state));
}

std::vector<std::shared_ptr<StreamState>> StreamRegistry::all() {
  std::vector<std::shared_ptr<StreamState>> out;
  MutexLock lock(mu_);
  for (auto& [index, weak] : streams_) {
    if (auto s = weak.lock()) out.push_back(std::move(s));
  }
  return out;
}

void StreamRegistry::remove(int index) {
  MutexLock lock(mu_);
  auto it = streams_.find(index);
  // Only erase an expired entry: the index is never reused, so this is the dying stream.
  if (it != streams_.end() && it->second.expired()) streams_.erase(it);
}

StreamState::StreamState(int index, Device device)
    : index(index), device(device), strand(std::make_shared<Strand>()) {}

StreamState::~StreamState() { StreamRegistry::instance().remove(index); }

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
  std::optional<Stream> cpu_stream;
  std::optional<Stream> gpu_stream;
  std::optional<Device> device_override;  // set by StreamContext
  std::unordered_map<int, Stream> thread_local_streams;  // handle index -> real stream

  std::optional<Stream>& slot(Device d) { return d.type == Device::cpu ? cpu_stream : gpu_stream; }
};

ThreadDefaults& thread_defaults() {
  thread_local ThreadDefaults defaults;
  return defaults;
}

}  // namespace
}  // namespace detail

using detail::StreamRegistry;
using detail::thread_defaults;

Stream::Stream(int index, Device device) : Stream(StreamRegistry::instance().find(index, device)) {}

Device default_device() {
  auto& t = thread_defaults();
  if (t.device_override) return *t.device_override;
  return detail::default_device_slot().load(std::memory_order_relaxed);
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

Stream new_thread_local_stream(Device d) {
  if (!is_available(d)) {
    std::ostringstream msg;
    msg << "[new_thread_local_stream] Device " << d << " is not available.";
    throw std::invalid_argument(msg.str());
  }
  return Stream(StreamRegistry::instance().next_handle_index(), d, nullptr);
}

Stream stream_from_thread_local_stream(Stream s) {
  if (!s.is_thread_local_handle()) return s;
  auto& map = thread_defaults().thread_local_streams;
  auto it = map.find(s.index);
  if (it == map.end()) it = map.emplace(s.index, StreamRegistry::instance().create(s.device)).first;
  return it->second;
}

Stream new_thread_unsafe_stream(Device d) { return new_stream(d); }

Stream to_stream(StreamOrDevice s) {
  if (auto* stream = std::get_if<Stream>(&s)) return stream_from_thread_local_stream(*stream);
  if (auto* device = std::get_if<Device>(&s)) return default_stream(*device);
  return default_stream(default_device());
}

void synchronize(Stream s) {
  s = stream_from_thread_local_stream(s);
  s.state()->strand->synchronize();
  if (s.device.type == Device::gpu) detail::gpu::synchronize(*s.state());
}

void synchronize() { synchronize(default_stream(default_device())); }

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
  auto& t = thread_defaults();
  t.device_override = saved_->device_override;
  t.slot(saved_->device) = std::move(saved_->stream);
}

std::ostream& operator<<(std::ostream& os, const Device& d) {
  return os << (d.type == Device::cpu ? "cpu" : "gpu") << "(" << d.index << ")";
}

std::ostream& operator<<(std::ostream& os, const Stream& s) {
  return os << "Stream(" << (s.device.type == Device::cpu ? "cpu" : "gpu") << ", " << s.index << ")";
}

}  // namespace braid
