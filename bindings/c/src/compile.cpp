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
extern "C" int mlx_detail_compile(mlx_closure* res, const mlx_closure fun, uintptr_t fun_id, bool shapeless,
                                  const uint64_t* constants, size_t constants_num) {
  return guard([&] {
    if (constants == nullptr && constants_num > 0) {
      throw std::invalid_argument("[mlx_detail_compile] constants is null but constants_num is not 0.");
    }
    std::vector<uint64_t> keyed(constants, constants + constants_num);
    set(out(res), detail::compile(get(fun), fun_id, shapeless, std::move(keyed)));
  });
}
extern "C" int mlx_detail_compile_clear_cache(void) {
  return guard([] { detail::compile_clear_cache(); });
}
extern "C" int mlx_detail_compile_erase(uintptr_t fun_id) {
  return guard([&] { detail::compile_erase(fun_id); });
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
