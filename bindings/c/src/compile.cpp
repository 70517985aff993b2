// compile over closures (mlx-c's compile.h).
#include "braid/c/compile.h"

#include "braid/compile.h"
#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

CompileMode to_compile_mode(mlx_compile_mode mode) {
  switch (mode) {
    case MLX_COMPILE_MODE_DISABLED: return CompileMode::disabled;
    case MLX_COMPILE_MODE_NO_SIMPLIFY: return CompileMode::no_simplify;
    case MLX_COMPILE_MODE_NO_FUSE: return CompileMode::no_fuse;
    case MLX_COMPILE_MODE_ENABLED: return CompileMode::enabled;
  }
  throw std::invalid_argument("[mlx_set_compile_mode] Unknown compile mode " + std::to_string(mode) + ".");
}

}  // namespace

extern "C" int mlx_compile(mlx_closure* res, const mlx_closure fun, bool shapeless) {
  return guard([&] { set(out(res), compile(get(fun), shapeless)); });
}
extern "C" int mlx_disable_compile(void) {
  return guard([] { disable_compile(); });
}
extern "C" int mlx_enable_compile(void) {
  return guard([] { enable_compile(); });
}
extern "C" int mlx_set_compile_mode(mlx_compile_mode mode) {
  return guard([&] { set_compile_mode(to_compile_mode(mode)); });
}
