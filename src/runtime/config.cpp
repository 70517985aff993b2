// braid::config (include/braid/config.h).
#include "braid/config.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>

namespace braid::config {

namespace {

struct Process {
  std::shared_mutex mu;
  ConfigDict values;  // guarded by mu
};

Process& process() {
  static Process p;
  return p;
}

// The calling thread's scopes, innermost first.
std::list<ConfigDict>& scopes() {
  thread_local std::list<ConfigDict> list;
  return list;
}

std::atomic<ConfigHandler>& handler() {
  static std::atomic<ConfigHandler> h{nullptr};
  return h;
}

std::optional<int> environment_value(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || value < INT_MIN || value > INT_MAX) {
    throw std::invalid_argument(std::string("[config::get] The environment variable ") + name + "='" + text +
                                "' is not an integer.");
  }
  return static_cast<int>(value);
}

}  // namespace

void update(const char* name, int val) {
  Process& p = process();
  std::unique_lock lock(p.mu);
  p.values[name] = val;
}

int get(const char* name, int default_val) {
  if (ConfigHandler h = handler().load(std::memory_order_acquire)) return h(name, default_val);
  for (const ConfigDict& scope : scopes()) {
    if (auto it = scope.find(name); it != scope.end()) return it->second;
  }
  Process& p = process();
  {
    std::shared_lock lock(p.mu);
    if (auto it = p.values.find(name); it != p.values.end()) return it->second;
  }
  const std::optional<int> env = environment_value(name);
  if (!env) return default_val;  // not stored: the next get may pass another default
  update(name, *env);            // as MLX: the environment is read once, then kept
  return *env;
}

ScopedUpdate::ScopedUpdate(ConfigDict configs) {
  auto& list = scopes();
  list.push_front(std::move(configs));
  it_ = list.begin();
}

ScopedUpdate::ScopedUpdate(const ScopedUpdate& other) {
  auto& list = scopes();
  list.push_front(*other.it_);
  it_ = list.begin();
}

ScopedUpdate::~ScopedUpdate() { scopes().erase(it_); }

void register_config_handler(ConfigHandler h) { handler().store(h, std::memory_order_release); }

}  // namespace braid::config
