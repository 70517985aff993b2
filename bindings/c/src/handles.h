// The C API's plumbing: which C++ object each C handle owns, how handles are read and written,
// and the error boundary that every entry point goes through (no exception crosses it).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "braid/braid.h"
#include "braid/c/array.h"
#include "braid/c/closure.h"
#include "braid/c/device.h"
#include "braid/c/distributed_group.h"
#include "braid/c/error.h"
#include "braid/c/export.h"
#include "braid/c/io_gguf.h"
#include "braid/c/io_types.h"
#include "braid/c/map.h"
#include "braid/c/optional.h"
#include "braid/c/stream.h"
#include "braid/c/string.h"
#include "braid/c/vector.h"

namespace braid::capi {

using ClosureFn = std::function<std::vector<array>(const std::vector<array>&)>;
using StringToArray = std::unordered_map<std::string, array>;
using ClosureKwargsFn = std::function<std::vector<array>(const std::vector<array>&, const StringToArray&)>;
using CustomVjpFn = std::function<std::vector<array>(const std::vector<array>&, const std::vector<array>&,
                                                     const std::vector<array>&)>;
using CustomJvpFn = std::function<std::vector<array>(const std::vector<array>&, const std::vector<array>&,
                                                     const std::vector<int>&)>;
using CustomVmapFn = std::function<std::pair<std::vector<array>, std::vector<int>>(const std::vector<array>&,
                                                                                   const std::vector<int>&)>;

/// The C++ object behind each handle type; `ctx` points to one, owned by the handle.
template <typename Handle>
struct HandleTraits;

#define BRAID_C_HANDLE(CType, ...)              \
  template <>                                   \
  struct HandleTraits<CType> {                  \
    using type = __VA_ARGS__;                   \
    static constexpr const char* name = #CType; \
  };
BRAID_C_HANDLE(mlx_array, array)
BRAID_C_HANDLE(mlx_string, std::string)
BRAID_C_HANDLE(mlx_vector_array, std::vector<array>)
BRAID_C_HANDLE(mlx_vector_vector_array, std::vector<std::vector<array>>)
BRAID_C_HANDLE(mlx_vector_int, std::vector<int>)
BRAID_C_HANDLE(mlx_vector_string, std::vector<std::string>)
BRAID_C_HANDLE(mlx_map_string_to_array, std::unordered_map<std::string, array>)
BRAID_C_HANDLE(mlx_map_string_to_string, std::unordered_map<std::string, std::string>)
BRAID_C_HANDLE(mlx_device, Device)
BRAID_C_HANDLE(mlx_device_info, std::unordered_map<std::string, std::variant<std::string, size_t>>)
BRAID_C_HANDLE(mlx_stream, Stream)
BRAID_C_HANDLE(mlx_stream_thread_local, Stream)
BRAID_C_HANDLE(mlx_vector_stream, std::vector<Stream>)
BRAID_C_HANDLE(mlx_distributed_group, distributed::Group)
BRAID_C_HANDLE(mlx_closure, ClosureFn)
BRAID_C_HANDLE(mlx_closure_kwargs, ClosureKwargsFn)
BRAID_C_HANDLE(mlx_function_exporter, FunctionExporter)
BRAID_C_HANDLE(mlx_imported_function, ImportedFunction)
BRAID_C_HANDLE(mlx_closure_value_and_grad, ValueAndGradFn)
BRAID_C_HANDLE(mlx_closure_custom, CustomVjpFn)
BRAID_C_HANDLE(mlx_closure_custom_jvp, CustomJvpFn)
BRAID_C_HANDLE(mlx_closure_custom_vmap, CustomVmapFn)
BRAID_C_HANDLE(mlx_io_reader, std::shared_ptr<io::Reader>)
BRAID_C_HANDLE(mlx_io_writer, std::shared_ptr<io::Writer>)
BRAID_C_HANDLE(mlx_gguf_metadata, GGUFMetaData)
BRAID_C_HANDLE(mlx_map_string_to_gguf_metadata, std::unordered_map<std::string, GGUFMetaData>)
#undef BRAID_C_HANDLE

template <typename Handle>
using Object = typename HandleTraits<Handle>::type;

/// The object a handle holds; an empty handle is an invalid argument.
template <typename Handle>
Object<Handle>& get(Handle h) {
  if (h.ctx == nullptr) {
    throw std::invalid_argument(std::string("[") + HandleTraits<Handle>::name + "] The handle is empty.");
  }
  return *static_cast<Object<Handle>*>(h.ctx);
}

/// A new handle holding `value`.
template <typename Handle, typename Value>
Handle make(Value&& value) {
  return Handle{new Object<Handle>(std::forward<Value>(value))};
}

/// Makes `h` hold `value`: assigns to its object, or gives an empty handle a new one.
template <typename Handle, typename Value>
void set(Handle& h, Value&& value) {
  if (h.ctx != nullptr) {
    *static_cast<Object<Handle>*>(h.ctx) = std::forward<Value>(value);
  } else {
    h.ctx = new Object<Handle>(std::forward<Value>(value));
  }
}

/// Frees the handle's object (an empty handle has none).
template <typename Handle>
void release(Handle h) {
  delete static_cast<Object<Handle>*>(h.ctx);
}

/// The handle a result pointer names; a NULL result pointer is an invalid argument.
template <typename Handle>
Handle& out(Handle* h) {
  if (h == nullptr) throw std::invalid_argument("[braid_c] The result pointer is NULL.");
  return *h;
}

/// Passes the message to the installed error handler. Never throws.
void report_error(const char* message) noexcept;
/// Reports the exception being handled; call only inside a catch block.
void report_current_exception() noexcept;

/// Runs `body`, turning any exception into a report and a non-zero return.
template <typename Body>
int guard(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (...) {
    report_current_exception();
    return 1;
  }
}

/// Runs `body` and returns its value, or reports the exception and returns `fallback`.
template <typename Result, typename Body>
Result guard_value(Result fallback, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    report_current_exception();
    return fallback;
  }
}

// ---- argument conversions ----

/// An empty stream handle means the calling thread's default stream.
inline StreamOrDevice stream_arg(mlx_stream s) {
  if (s.ctx == nullptr) return {};
  return get(s);
}

Dtype to_dtype(mlx_dtype d);
inline mlx_dtype to_c_dtype(Dtype d) { return static_cast<mlx_dtype>(d.val()); }
Device::DeviceType to_device_type(mlx_device_type t);

inline std::optional<array> optional_arg(mlx_array a) {
  if (a.ctx == nullptr) return std::nullopt;
  return get(a);
}
inline std::optional<int> optional_arg(mlx_optional_int o) {
  return o.has_value ? std::make_optional(o.value) : std::nullopt;
}
inline std::optional<float> optional_arg(mlx_optional_float o) {
  return o.has_value ? std::make_optional(o.value) : std::nullopt;
}
inline std::optional<Dtype> optional_arg(mlx_optional_dtype o) {
  return o.has_value ? std::make_optional(to_dtype(o.value)) : std::nullopt;
}

/// A C++ sequence (Shape, Strides, std::vector) from a C pointer and count.
template <typename Sequence, typename T>
Sequence sequence_arg(const T* data, size_t count) {
  if (count > 0 && data == nullptr)
    throw std::invalid_argument("[braid_c] A NULL pointer with a non-zero count.");
  if (count == 0) return Sequence();
  return Sequence(data, data + count);
}

/// An optional sequence: empty (std::nullopt) for a NULL pointer, as mlx-c's "may be null".
template <typename Sequence, typename T>
std::optional<Sequence> optional_sequence_arg(const T* data, size_t count) {
  if (data == nullptr) return std::nullopt;
  return Sequence(data, data + count);
}

inline std::string string_arg(const char* s) {
  if (s == nullptr) throw std::invalid_argument("[braid_c] A NULL string.");
  return std::string(s);
}

}  // namespace braid::capi
