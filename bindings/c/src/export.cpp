// Function export (braid/c/export.h) over braid's export.h. A closure's keyword map is
// unordered; export's Kwargs is ordered by name, so they convert at the boundary.
#include "braid/c/export.h"

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

Kwargs to_kwargs(const StringToArray& map) { return Kwargs(map.begin(), map.end()); }

std::function<std::vector<array>(const Args&, const Kwargs&)> with_kwargs(ClosureKwargsFn fun) {
  return [fun = std::move(fun)](const Args& args, const Kwargs& kwargs) {
    return fun(args, StringToArray(kwargs.begin(), kwargs.end()));
  };
}

}  // namespace

extern "C" int mlx_export_function(const char* file, const mlx_closure fun, const mlx_vector_array args,
                                   bool shapeless) {
  return guard([&] { export_function(string_arg(file), get(fun), get(args), shapeless); });
}

extern "C" int mlx_export_function_kwargs(const char* file, const mlx_closure_kwargs fun,
                                          const mlx_vector_array args, const mlx_map_string_to_array kwargs,
                                          bool shapeless) {
  return guard([&] {
    export_function(string_arg(file), with_kwargs(get(fun)), get(args), to_kwargs(get(kwargs)), shapeless);
  });
}

extern "C" mlx_function_exporter mlx_function_exporter_new(const char* file, const mlx_closure fun,
                                                           bool shapeless) {
  return guard_value(mlx_function_exporter{nullptr}, [&] {
    return make<mlx_function_exporter>(exporter(string_arg(file), get(fun), shapeless));
  });
}

extern "C" int mlx_function_exporter_free(mlx_function_exporter xfunc) {
  return guard([&] { release(xfunc); });
}

extern "C" int mlx_function_exporter_apply(const mlx_function_exporter xfunc, const mlx_vector_array args) {
  return guard([&] { get(xfunc)(get(args)); });
}

extern "C" int mlx_function_exporter_apply_kwargs(const mlx_function_exporter xfunc,
                                                  const mlx_vector_array args,
                                                  const mlx_map_string_to_array kwargs) {
  return guard([&] { get(xfunc)(get(args), to_kwargs(get(kwargs))); });
}

extern "C" mlx_imported_function mlx_imported_function_new(const char* file) {
  return guard_value(mlx_imported_function{nullptr},
                     [&] { return make<mlx_imported_function>(import_function(string_arg(file))); });
}

extern "C" int mlx_imported_function_free(mlx_imported_function xfunc) {
  release(xfunc);
  return 0;
}

extern "C" int mlx_imported_function_apply(mlx_vector_array* res, const mlx_imported_function xfunc,
                                           const mlx_vector_array args) {
  return guard([&] { set(out(res), get(xfunc)(get(args))); });
}

extern "C" int mlx_imported_function_apply_kwargs(mlx_vector_array* res, const mlx_imported_function xfunc,
                                                  const mlx_vector_array args,
                                                  const mlx_map_string_to_array kwargs) {
  return guard([&] { set(out(res), get(xfunc)(get(args), to_kwargs(get(kwargs)))); });
}
