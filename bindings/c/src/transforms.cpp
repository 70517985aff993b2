// Evaluation and the function transforms over closures.
#include "braid/c/transforms.h"

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

template <typename Handle>
std::optional<Object<Handle>> optional_closure(Handle h) {
  if (h.ctx == nullptr) return std::nullopt;
  return get(h);
}

}  // namespace

extern "C" int mlx_eval(const mlx_vector_array outputs) {
  return guard([&] { eval(get(outputs)); });
}
extern "C" int mlx_async_eval(const mlx_vector_array outputs) {
  return guard([&] { async_eval(get(outputs)); });
}
extern "C" int mlx_checkpoint(mlx_closure* res, const mlx_closure fun) {
  return guard([&] { set(out(res), checkpoint(get(fun))); });
}
extern "C" int mlx_custom_function(mlx_closure* res, const mlx_closure fun, const mlx_closure_custom fun_vjp,
                                   const mlx_closure_custom_jvp fun_jvp,
                                   const mlx_closure_custom_vmap fun_vmap) {
  return guard([&] {
    set(out(res), custom_function(get(fun), optional_closure(fun_vjp), optional_closure(fun_jvp),
                                  optional_closure(fun_vmap)));
  });
}
extern "C" int mlx_custom_vjp(mlx_closure* res, const mlx_closure fun, const mlx_closure_custom fun_vjp) {
  return guard([&] { set(out(res), custom_vjp(get(fun), get(fun_vjp))); });
}
extern "C" int mlx_jvp(mlx_vector_array* res_0, mlx_vector_array* res_1, const mlx_closure fun,
                       const mlx_vector_array primals, const mlx_vector_array tangents) {
  return guard([&] {
    auto [outputs, jvps] = jvp(get(fun), get(primals), get(tangents));
    set(out(res_0), std::move(outputs));
    set(out(res_1), std::move(jvps));
  });
}
extern "C" int mlx_value_and_grad(mlx_closure_value_and_grad* res, const mlx_closure fun, const int* argnums,
                                  size_t argnums_num) {
  return guard(
      [&] { set(out(res), value_and_grad(get(fun), sequence_arg<std::vector<int>>(argnums, argnums_num))); });
}
extern "C" int mlx_vjp(mlx_vector_array* res_0, mlx_vector_array* res_1, const mlx_closure fun,
                       const mlx_vector_array primals, const mlx_vector_array cotangents) {
  return guard([&] {
    auto [outputs, vjps] = vjp(get(fun), get(primals), get(cotangents));
    set(out(res_0), std::move(outputs));
    set(out(res_1), std::move(vjps));
  });
}
extern "C" int mlx_vmap(mlx_closure* res, const mlx_closure fun, const int* in_axes, size_t in_axes_num,
                        const int* out_axes, size_t out_axes_num) {
  return guard([&] {
    set(out(res), vmap(get(fun), sequence_arg<std::vector<int>>(in_axes, in_axes_num),
                       sequence_arg<std::vector<int>>(out_axes, out_axes_num)));
  });
}
