// braid::config: MLX's integer settings (mlx/config.h), by name. get(name, default) answers, in
// this order: the registered handler (when one is), the calling thread's scoped updates
// (innermost first), the last update() anywhere in the process, then the environment variable
// of that name, whose value is then kept as an update, else `default_val` (not kept: MLX
// stores it, so that a later get with another default answers the first).
//
// Thread safety: update, get and register_config_handler may be called from any thread at any
// time. A ScopedUpdate applies to the thread that made it and must be destroyed on that thread
// (as MLX's); scopes of one thread may end in any order.
#pragma once

#include <list>
#include <string>
#include <unordered_map>

namespace braid::config {

/// Sets `name` to `val` for the whole process.
void update(const char* name, int val);
/// The value of `name` (see above); an environment variable that is not an integer is a
/// std::invalid_argument ("[config::get] ...").
int get(const char* name, int default_val);

using ConfigDict = std::unordered_map<std::string, int>;

/// Sets values for the calling thread while it lives.
class ScopedUpdate {
 public:
  ScopedUpdate(ConfigDict configs);  // NOLINT: MLX's implicit conversion
  ScopedUpdate(const ScopedUpdate& other);
  ScopedUpdate& operator=(const ScopedUpdate&) = delete;
  ~ScopedUpdate();

 private:
  std::list<ConfigDict>::iterator it_;
};

inline ScopedUpdate scoped_update(ConfigDict configs) { return ScopedUpdate(std::move(configs)); }

/// A function answering every get() in place of the stored values (null removes it).
using ConfigHandler = int (*)(const char* name, int default_val);
void register_config_handler(ConfigHandler handler);

}  // namespace braid::config
