// mlx_string: a handle owning a std::string; and mlx_version.
#include "braid/c/string.h"

#include "braid/c/version.h"
#include "handles.h"

using namespace braid::capi;

extern "C" mlx_string mlx_string_new(void) { return mlx_string{nullptr}; }

extern "C" mlx_string mlx_string_new_data(const char* str) {
  return guard_value(mlx_string{nullptr}, [&] { return make<mlx_string>(string_arg(str)); });
}

extern "C" int mlx_string_set(mlx_string* str, const mlx_string src) {
  return guard([&] { set(out(str), get(src)); });
}

extern "C" const char* mlx_string_data(mlx_string str) {
  if (str.ctx == nullptr) return "";
  return get(str).c_str();
}

extern "C" int mlx_string_free(mlx_string str) {
  release(str);
  return 0;
}

extern "C" int mlx_version(mlx_string* str) {
  return guard([&] { set(out(str), std::string(braid::version())); });
}
