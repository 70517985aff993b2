// Closures: C callbacks wrapped as the std::functions that braid's transforms take. Each call
// hands the callback handles that own copies of its inputs, and takes its outputs back from the
// handles it set; a non-zero return becomes an exception that fails the applying call.
#include "braid/c/closure.h"

#include <type_traits>

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

/// A handle owned for the duration of one callback.
template <typename Handle>
struct Scoped {
  Handle h{nullptr};
  // A result vector starts empty but allocated, as mlx-c's: a callback may append to it.
  Scoped() {
    if constexpr (!std::is_same_v<Handle, mlx_array>) h = make<Handle>(Object<Handle>{});
  }
  template <typename Value>
  explicit Scoped(Value&& v) : h(make<Handle>(std::forward<Value>(v))) {}
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;
  ~Scoped() { release(h); }
  /// The object the callback left in the handle (an empty vector if it set nothing).
  Object<Handle> take() {
    if constexpr (std::is_default_constructible_v<Object<Handle>>) {
      if (h.ctx == nullptr) return Object<Handle>{};
    }
    return std::move(get(h));
  }
};

void check_status(int status, const char* closure) {
  if (status != 0) {
    throw std::runtime_error(std::string("[") + closure + "] The callback returned " +
                             std::to_string(status) + ".");
  }
}

template <typename F>
void check_function(F* fun, const char* closure) {
  if (fun == nullptr) throw std::invalid_argument(std::string("[") + closure + "] NULL function.");
}

/// The payload, released through `dtor` once the last copy of the closure is gone.
std::shared_ptr<void> hold_payload(void* payload, void (*dtor)(void*)) {
  if (dtor != nullptr) return std::shared_ptr<void>(payload, dtor);
  return std::shared_ptr<void>(payload, [](void*) {});
}

}  // namespace

// ---- mlx_closure ----

extern "C" mlx_closure mlx_closure_new(void) { return mlx_closure{nullptr}; }
extern "C" int mlx_closure_free(mlx_closure cls) {
  release(cls);
  return 0;
}
extern "C" mlx_closure mlx_closure_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array)) {
  return guard_value(mlx_closure{nullptr}, [&] {
    check_function(fun, "mlx_closure");
    return make<mlx_closure>(ClosureFn([fun](const std::vector<array>& inputs) {
      Scoped<mlx_vector_array> in(inputs), res;
      check_status(fun(&res.h, in.h), "mlx_closure");
      return res.take();
    }));
  });
}
extern "C" mlx_closure mlx_closure_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array,
                                                               void*),
                                                    void* payload, void (*dtor)(void*)) {
  auto held = hold_payload(payload, dtor);  // released now if making the closure fails
  return guard_value(mlx_closure{nullptr}, [&] {
    check_function(fun, "mlx_closure");
    return make<mlx_closure>(ClosureFn([fun, held](const std::vector<array>& inputs) {
      Scoped<mlx_vector_array> in(inputs), res;
      check_status(fun(&res.h, in.h, held.get()), "mlx_closure");
      return res.take();
    }));
  });
}
extern "C" int mlx_closure_set(mlx_closure* cls, const mlx_closure src) {
  return guard([&] { set(out(cls), get(src)); });
}
extern "C" int mlx_closure_apply(mlx_vector_array* res, mlx_closure cls, const mlx_vector_array input) {
  return guard([&] { set(out(res), get(cls)(get(input))); });
}
extern "C" mlx_closure mlx_closure_new_unary(int (*fun)(mlx_array*, const mlx_array)) {
  return guard_value(mlx_closure{nullptr}, [&] {
    check_function(fun, "mlx_closure");
    return make<mlx_closure>(ClosureFn([fun](const std::vector<array>& inputs) {
      if (inputs.size() != 1) {
        throw std::invalid_argument("[mlx_closure] A unary closure takes one array, not " +
                                    std::to_string(inputs.size()) + ".");
      }
      Scoped<mlx_array> in(inputs[0]), res;
      check_status(fun(&res.h, in.h), "mlx_closure");
      if (res.h.ctx == nullptr) throw std::invalid_argument("[mlx_closure] The callback set no result.");
      return std::vector<array>{res.take()};
    }));
  });
}

// ---- mlx_closure_kwargs ----

extern "C" mlx_closure_kwargs mlx_closure_kwargs_new(void) { return mlx_closure_kwargs{nullptr}; }
extern "C" int mlx_closure_kwargs_free(mlx_closure_kwargs cls) {
  release(cls);
  return 0;
}
extern "C" mlx_closure_kwargs mlx_closure_kwargs_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array,
                                                                     const mlx_map_string_to_array)) {
  return guard_value(mlx_closure_kwargs{nullptr}, [&] {
    check_function(fun, "mlx_closure_kwargs");
    return make<mlx_closure_kwargs>(ClosureKwargsFn([fun](const std::vector<array>& args, const StringToArray& kw) {
      Scoped<mlx_vector_array> in(args), res;
      Scoped<mlx_map_string_to_array> in_kw(kw);
      check_status(fun(&res.h, in.h, in_kw.h), "mlx_closure_kwargs");
      return res.take();
    }));
  });
}
extern "C" mlx_closure_kwargs mlx_closure_kwargs_new_func_payload(int (*fun)(mlx_vector_array*,
                                                                             const mlx_vector_array,
                                                                             const mlx_map_string_to_array, void*),
                                                                  void* payload, void (*dtor)(void*)) {
  auto held = hold_payload(payload, dtor);
  return guard_value(mlx_closure_kwargs{nullptr}, [&] {
    check_function(fun, "mlx_closure_kwargs");
    return make<mlx_closure_kwargs>(
        ClosureKwargsFn([fun, held](const std::vector<array>& args, const StringToArray& kw) {
          Scoped<mlx_vector_array> in(args), res;
          Scoped<mlx_map_string_to_array> in_kw(kw);
          check_status(fun(&res.h, in.h, in_kw.h, held.get()), "mlx_closure_kwargs");
          return res.take();
        }));
  });
}
extern "C" int mlx_closure_kwargs_set(mlx_closure_kwargs* cls, const mlx_closure_kwargs src) {
  return guard([&] { set(out(cls), get(src)); });
}
extern "C" int mlx_closure_kwargs_apply(mlx_vector_array* res, mlx_closure_kwargs cls, const mlx_vector_array input_0,
                                        const mlx_map_string_to_array input_1) {
  return guard([&] { set(out(res), get(cls)(get(input_0), get(input_1))); });
}

// ---- mlx_closure_value_and_grad ----

extern "C" mlx_closure_value_and_grad mlx_closure_value_and_grad_new(void) {
  return mlx_closure_value_and_grad{nullptr};
}
extern "C" int mlx_closure_value_and_grad_free(mlx_closure_value_and_grad cls) {
  release(cls);
  return 0;
}
extern "C" mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func(
    int (*fun)(mlx_vector_array*, mlx_vector_array*, const mlx_vector_array)) {
  return guard_value(mlx_closure_value_and_grad{nullptr}, [&] {
    check_function(fun, "mlx_closure_value_and_grad");
    return make<mlx_closure_value_and_grad>(ValueAndGradFn([fun](const std::vector<array>& inputs) {
      Scoped<mlx_vector_array> in(inputs), values, grads;
      check_status(fun(&values.h, &grads.h, in.h), "mlx_closure_value_and_grad");
      return std::make_pair(values.take(), grads.take());
    }));
  });
}
extern "C" mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func_payload(
    int (*fun)(mlx_vector_array*, mlx_vector_array*, const mlx_vector_array, void*), void* payload,
    void (*dtor)(void*)) {
  auto held = hold_payload(payload, dtor);
  return guard_value(mlx_closure_value_and_grad{nullptr}, [&] {
    check_function(fun, "mlx_closure_value_and_grad");
    return make<mlx_closure_value_and_grad>(ValueAndGradFn([fun, held](const std::vector<array>& inputs) {
      Scoped<mlx_vector_array> in(inputs), values, grads;
      check_status(fun(&values.h, &grads.h, in.h, held.get()), "mlx_closure_value_and_grad");
      return std::make_pair(values.take(), grads.take());
    }));
  });
}
extern "C" int mlx_closure_value_and_grad_set(mlx_closure_value_and_grad* cls,
                                              const mlx_closure_value_and_grad src) {
  return guard([&] { set(out(cls), get(src)); });
}
extern "C" int mlx_closure_value_and_grad_apply(mlx_vector_array* res_0, mlx_vector_array* res_1,
                                                mlx_closure_value_and_grad cls,
                                                const mlx_vector_array input) {
  return guard([&] {
    auto [values, grads] = get(cls)(get(input));
    set(out(res_0), std::move(values));
    set(out(res_1), std::move(grads));
  });
}

// ---- mlx_closure_custom (a vjp) ----

extern "C" mlx_closure_custom mlx_closure_custom_new(void) { return mlx_closure_custom{nullptr}; }
extern "C" int mlx_closure_custom_free(mlx_closure_custom cls) {
  release(cls);
  return 0;
}
extern "C" mlx_closure_custom mlx_closure_custom_new_func(
    int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const mlx_vector_array)) {
  return guard_value(mlx_closure_custom{nullptr}, [&] {
    check_function(fun, "mlx_closure_custom");
    return make<mlx_closure_custom>(CustomVjpFn(
        [fun](const std::vector<array>& a, const std::vector<array>& b, const std::vector<array>& c) {
          Scoped<mlx_vector_array> in0(a), in1(b), in2(c), res;
          check_status(fun(&res.h, in0.h, in1.h, in2.h), "mlx_closure_custom");
          return res.take();
        }));
  });
}
extern "C" mlx_closure_custom mlx_closure_custom_new_func_payload(int (*fun)(mlx_vector_array*,
                                                                             const mlx_vector_array,
                                                                             const mlx_vector_array,
                                                                             const mlx_vector_array, void*),
                                                                  void* payload, void (*dtor)(void*)) {
  auto held = hold_payload(payload, dtor);
  return guard_value(mlx_closure_custom{nullptr}, [&] {
    check_function(fun, "mlx_closure_custom");
    return make<mlx_closure_custom>(CustomVjpFn(
        [fun, held](const std::vector<array>& a, const std::vector<array>& b, const std::vector<array>& c) {
          Scoped<mlx_vector_array> in0(a), in1(b), in2(c), res;
          check_status(fun(&res.h, in0.h, in1.h, in2.h, held.get()), "mlx_closure_custom");
          return res.take();
        }));
  });
}
extern "C" int mlx_closure_custom_set(mlx_closure_custom* cls, const mlx_closure_custom src) {
  return guard([&] { set(out(cls), get(src)); });
}
extern "C" int mlx_closure_custom_apply(mlx_vector_array* res, mlx_closure_custom cls,
                                        const mlx_vector_array input_0, const mlx_vector_array input_1,
                                        const mlx_vector_array input_2) {
  return guard([&] { set(out(res), get(cls)(get(input_0), get(input_1), get(input_2))); });
}

// ---- mlx_closure_custom_jvp ----

extern "C" mlx_closure_custom_jvp mlx_closure_custom_jvp_new(void) { return mlx_closure_custom_jvp{nullptr}; }
extern "C" int mlx_closure_custom_jvp_free(mlx_closure_custom_jvp cls) {
  release(cls);
  return 0;
}
extern "C" mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func(
    int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const int*, size_t)) {
  return guard_value(mlx_closure_custom_jvp{nullptr}, [&] {
    check_function(fun, "mlx_closure_custom_jvp");
    return make<mlx_closure_custom_jvp>(CustomJvpFn(
        [fun](const std::vector<array>& a, const std::vector<array>& b, const std::vector<int>& argnums) {
          Scoped<mlx_vector_array> in0(a), in1(b), res;
          check_status(fun(&res.h, in0.h, in1.h, argnums.data(), argnums.size()), "mlx_closure_custom_jvp");
          return res.take();
        }));
  });
}
extern "C" mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func_payload(
    int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const int*, size_t, void*),
    void* payload, void (*dtor)(void*)) {
  auto held = hold_payload(payload, dtor);
  return guard_value(mlx_closure_custom_jvp{nullptr}, [&] {
    check_function(fun, "mlx_closure_custom_jvp");
    return make<mlx_closure_custom_jvp>(
        CustomJvpFn([fun, held](const std::vector<array>& a, const std::vector<array>& b,
                                const std::vector<int>& argnums) {
          Scoped<mlx_vector_array> in0(a), in1(b), res;
          check_status(fun(&res.h, in0.h, in1.h, argnums.data(), argnums.size(), held.get()),
                       "mlx_closure_custom_jvp");
          return res.take();
        }));
  });
}
extern "C" int mlx_closure_custom_jvp_set(mlx_closure_custom_jvp* cls, const mlx_closure_custom_jvp src) {
  return guard([&] { set(out(cls), get(src)); });
}
extern "C" int mlx_closure_custom_jvp_apply(mlx_vector_array* res, mlx_closure_custom_jvp cls,
                                            const mlx_vector_array input_0, const mlx_vector_array input_1,
                                            const int* input_2, size_t input_2_num) {
  return guard([&] {
    set(out(res), get(cls)(get(input_0), get(input_1), sequence_arg<std::vector<int>>(input_2, input_2_num)));
  });
}

// ---- mlx_closure_custom_vmap ----

extern "C" mlx_closure_custom_vmap mlx_closure_custom_vmap_new(void) {
  return mlx_closure_custom_vmap{nullptr};
}
extern "C" int mlx_closure_custom_vmap_free(mlx_closure_custom_vmap cls) {
  release(cls);
  return 0;
}
extern "C" mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func(
    int (*fun)(mlx_vector_array*, mlx_vector_int*, const mlx_vector_array, const int*, size_t)) {
  return guard_value(mlx_closure_custom_vmap{nullptr}, [&] {
    check_function(fun, "mlx_closure_custom_vmap");
    return make<mlx_closure_custom_vmap>(CustomVmapFn([fun](const std::vector<array>& a,
                                                            const std::vector<int>& axes) {
      Scoped<mlx_vector_array> in(a), outputs;
      Scoped<mlx_vector_int> out_axes;
      check_status(fun(&outputs.h, &out_axes.h, in.h, axes.data(), axes.size()), "mlx_closure_custom_vmap");
      return std::make_pair(outputs.take(), out_axes.take());
    }));
  });
}
extern "C" mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func_payload(
    int (*fun)(mlx_vector_array*, mlx_vector_int*, const mlx_vector_array, const int*, size_t, void*),
    void* payload, void (*dtor)(void*)) {
  auto held = hold_payload(payload, dtor);
  return guard_value(mlx_closure_custom_vmap{nullptr}, [&] {
    check_function(fun, "mlx_closure_custom_vmap");
    return make<mlx_closure_custom_vmap>(
        CustomVmapFn([fun, held](const std::vector<array>& a, const std::vector<int>& axes) {
          Scoped<mlx_vector_array> in(a), outputs;
          Scoped<mlx_vector_int> out_axes;
          check_status(fun(&outputs.h, &out_axes.h, in.h, axes.data(), axes.size(), held.get()),
                       "mlx_closure_custom_vmap");
          return std::make_pair(outputs.take(), out_axes.take());
        }));
  });
}
extern "C" int mlx_closure_custom_vmap_set(mlx_closure_custom_vmap* cls, const mlx_closure_custom_vmap src) {
  return guard([&] { set(out(cls), get(src)); });
}
extern "C" int mlx_closure_custom_vmap_apply(mlx_vector_array* res_0, mlx_vector_int* res_1,
                                             mlx_closure_custom_vmap cls, const mlx_vector_array input_0,
                                             const int* input_1, size_t input_1_num) {
  return guard([&] {
    auto [outputs, axes] = get(cls)(get(input_0), sequence_arg<std::vector<int>>(input_1, input_1_num));
    set(out(res_0), std::move(outputs));
    set(out(res_1), std::move(axes));
  });
}
