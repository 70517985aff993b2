// braid.core.config: mlx.core.config's integer settings, over braid::config (braid/config.h).
// A name's value is looked up in this order: the innermost scoped_update of the calling thread,
// the last process-wide update, the environment variable of that name, then the caller's
// default.
#include <climits>
#include <memory>
#include <string>

#include "braid/config.h"
#include "python.h"

namespace braid::python {

namespace {

int setting_value(const std::string& name, int64_t value) {
  if (value < INT_MIN || value > INT_MAX) {
    throw std::invalid_argument("[config] The value of " + name + " does not fit in a 32-bit int.");
  }
  return static_cast<int>(value);
}

// One token per thread, alive as long as the thread: a scope entered on a thread that has
// ended (whose id the system may give to a new thread) is told apart from the current one's.
std::shared_ptr<char>& thread_token() {
  thread_local std::shared_ptr<char> token = std::make_shared<char>(0);
  return token;
}

// A context manager that sets values for the calling thread while it is entered. Exiting it
// removes its own values, whatever other scopes of the thread are still entered; exiting on a
// thread that did not enter it raises and changes nothing.
class ScopedUpdate {
 public:
  explicit ScopedUpdate(config::ConfigDict values) : values_(std::move(values)) {}
  ScopedUpdate(const ScopedUpdate&) = delete;
  ScopedUpdate(ScopedUpdate&&) = default;
  ~ScopedUpdate() {
    // Dropped while entered on another thread (or one that has ended): that thread's scope
    // cannot be touched from here, so it is left to end with its thread.
    if (scope_ && !on_owner()) (void)scope_.release();
  }

  void enter() {
    if (scope_) throw std::runtime_error("[config.scoped_update] Already entered.");
    scope_ = std::make_unique<config::ScopedUpdate>(values_);
    owner_ = thread_token();
  }

  void exit() {
    if (!scope_) return;
    if (!on_owner())
      throw std::runtime_error("[config.scoped_update] Exited on a thread that did not enter it.");
    scope_.reset();
  }

 private:
  bool on_owner() const {
    auto owner = owner_.lock();
    return owner != nullptr && owner == thread_token();
  }

  config::ConfigDict values_;
  std::unique_ptr<config::ScopedUpdate> scope_;
  std::weak_ptr<char> owner_;  // the entering thread's token
};

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  auto cfg = m.def_submodule("config", "braid.core.config: mlx.core.config's integer settings.");
  cfg.def(
      "get",
      [](const std::string& name, int64_t default_value) {
        return config::get(name.c_str(), setting_value(name, default_value));
      },
      "name"_a, "default_value"_a,
      "The value of a setting: the calling thread's innermost scoped_update, else the last "
      "update(), else the environment variable of that name (an integer), else default_value.");
  cfg.def(
      "update",
      [](const std::string& name, int64_t value) {
        config::update(name.c_str(), setting_value(name, value));
      },
      "name"_a, "value"_a, "Sets a setting for the whole process.");
  py::class_<ScopedUpdate>(cfg, "ScopedUpdate",
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
  cfg.def(
      "scoped_update",
      [](const py::kwargs& configs) {
        config::ConfigDict values;
        for (const auto& [key, value] : configs) {
          const std::string name = py::str(key).cast<std::string>();
          if (!py::isinstance<py::int_>(value)) {
            throw py::type_error("[config.scoped_update] The value of " + name + " must be an int.");
          }
          values[name] = setting_value(name, value.cast<int64_t>());
        }
        return ScopedUpdate(std::move(values));
      },
      "A context manager setting the keyword arguments' values for the calling thread while "
      "entered.");
}

}  // namespace braid::python
