// braid.core.config: mlx.core.config's integer settings. A name's value is looked up in this
// order: the innermost scoped_update of the calling thread, the last process-wide update, the
// environment variable of that name, then the caller's default.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python.h"

namespace braid::python {

namespace {

std::mutex g_process_mu;
std::map<std::string, int64_t> g_process;  // guarded by g_process_mu

// The thread's scoped values: one frame per entered ScopedUpdate, innermost last. A frame is
// found by its id, so scopes may also be exited out of order (overlapping asyncio tasks,
// generators, ExitStack) without disturbing the others.
struct Frame {
  uint64_t id;
  std::vector<std::pair<std::string, int64_t>> values;
};
thread_local std::vector<Frame> t_scopes;
std::atomic<uint64_t> g_next_frame{1};

std::optional<int64_t> scoped_value(const std::string& name) {
  for (auto frame = t_scopes.rbegin(); frame != t_scopes.rend(); ++frame) {
    for (const auto& [key, value] : frame->values) {
      if (key == name) return value;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> environment_value(const std::string& name) {
  const char* text = std::getenv(name.c_str());
  if (text == nullptr) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE) {
    throw std::invalid_argument("[config.get] The environment variable " + name + "='" + text +
                                "' is not an integer.");
  }
  return value;
}

int64_t get(const std::string& name, int64_t default_value) {
  if (auto v = scoped_value(name)) return *v;
  {
    std::lock_guard<std::mutex> lock(g_process_mu);
    if (auto it = g_process.find(name); it != g_process.end()) return it->second;
  }
  if (auto v = environment_value(name)) return *v;
  return default_value;
}

// A context manager that sets values for the calling thread while it is entered. Exiting it
// removes its own frame, wherever that frame is in the thread's stack; exiting on a thread that
// did not enter it raises and changes nothing.
class ScopedUpdate {
 public:
  explicit ScopedUpdate(std::vector<std::pair<std::string, int64_t>> values) : values_(std::move(values)) {}

  void enter() {
    if (id_ != 0) throw std::runtime_error("[config.scoped_update] Already entered.");
    const uint64_t id = g_next_frame.fetch_add(1, std::memory_order_relaxed);
    t_scopes.push_back(Frame{id, values_});
    id_ = id;
  }

  void exit() {
    if (id_ == 0) return;
    auto it = std::find_if(t_scopes.begin(), t_scopes.end(), [&](const Frame& f) { return f.id == id_; });
    if (it == t_scopes.end()) {
      throw std::runtime_error("[config.scoped_update] Exited on a thread that did not enter it.");
    }
    t_scopes.erase(it);
    id_ = 0;
  }

 private:
  std::vector<std::pair<std::string, int64_t>> values_;
  uint64_t id_ = 0;  // the entered frame's id; 0 when not entered
};

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  auto config = m.def_submodule("config", "braid.core.config: mlx.core.config's integer settings.");
  config.def(
      "get", &get, "name"_a, "default_value"_a,
      "The value of a setting: the calling thread's innermost scoped_update, else the last "
      "update(), else the environment variable of that name (an integer), else default_value.");
  config.def(
      "update",
      [](const std::string& name, int64_t value) {
        std::lock_guard<std::mutex> lock(g_process_mu);
        g_process[name] = value;
      },
      "name"_a, "value"_a, "Sets a setting for the whole process.");
  py::class_<ScopedUpdate>(config, "ScopedUpdate",
                           "A context manager setting values for the thread that enters it.")
      .def("__enter__",
           [](ScopedUpdate& self) -> ScopedUpdate& {
             self.enter();
             return self;
           })
      .def("__exit__", [](ScopedUpdate& self, const py::args&) {
        self.exit();
        return false;
      });
  config.def(
      "scoped_update",
      [](const py::kwargs& configs) {
        std::vector<std::pair<std::string, int64_t>> values;
        for (const auto& [key, value] : configs) {
          if (!py::isinstance<py::int_>(value)) {
            throw py::type_error("[config.scoped_update] The value of " + py::str(key).cast<std::string>() +
                                 " must be an int.");
          }
          values.emplace_back(key.cast<std::string>(), value.cast<int64_t>());
        }
        return ScopedUpdate(std::move(values));
      },
      "A context manager setting the keyword arguments' values for the calling thread while "
      "entered.");
}

}  // namespace braid::python
