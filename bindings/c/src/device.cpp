// mlx_device and mlx_stream: devices, process-wide streams, per-thread defaults.
#include <algorithm>
#include <sstream>
#include <variant>

#include "braid/c/device.h"
#include "braid/c/stream.h"
#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

template <typename T>
std::string text_of(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

}  // namespace

extern "C" mlx_device mlx_device_new(void) { return mlx_device{nullptr}; }
extern "C" mlx_device mlx_device_new_type(mlx_device_type type, int index) {
  return guard_value(mlx_device{nullptr},
                     [&] { return make<mlx_device>(Device(to_device_type(type), index)); });
}
extern "C" int mlx_device_free(mlx_device dev) {
  release(dev);
  return 0;
}
extern "C" int mlx_device_set(mlx_device* dev, const mlx_device src) {
  return guard([&] { set(out(dev), get(src)); });
}
extern "C" int mlx_device_tostring(mlx_string* str, mlx_device dev) {
  return guard([&] { set(out(str), text_of(get(dev))); });
}
extern "C" bool mlx_device_equal(mlx_device lhs, mlx_device rhs) {
  return guard_value(false, [&] { return get(lhs) == get(rhs); });
}
extern "C" int mlx_device_get_index(int* index, mlx_device dev) {
  return guard([&] { out(index) = get(dev).index; });
}
extern "C" int mlx_device_get_type(mlx_device_type* type, mlx_device dev) {
  return guard([&] { out(type) = get(dev).type == Device::cpu ? MLX_CPU : MLX_GPU; });
}
extern "C" int mlx_get_default_device(mlx_device* dev) {
  return guard([&] { set(out(dev), default_device()); });
}
extern "C" int mlx_set_default_device(mlx_device dev) {
  return guard([&] { set_default_device(get(dev)); });
}
extern "C" int mlx_device_is_available(bool* avail, mlx_device dev) {
  return guard([&] { out(avail) = is_available(get(dev)); });
}
extern "C" int mlx_device_count(int* count, mlx_device_type type) {
  return guard([&] { out(count) = device_count(to_device_type(type)); });
}

extern "C" mlx_device_info mlx_device_info_new(void) {
  return guard_value(mlx_device_info{nullptr},
                     [] { return make<mlx_device_info>(Object<mlx_device_info>{}); });
}
extern "C" int mlx_device_info_get(mlx_device_info* info, mlx_device dev) {
  return guard([&] { set(out(info), device_info(get(dev))); });
}
extern "C" int mlx_device_info_free(mlx_device_info info) {
  release(info);
  return 0;
}
extern "C" int mlx_device_info_has_key(bool* exists, mlx_device_info info, const char* key) {
  return guard([&] { out(exists) = get(info).count(string_arg(key)) > 0; });
}
extern "C" int mlx_device_info_is_string(bool* is_string, mlx_device_info info, const char* key) {
  return guard([&] {
    const auto& map = get(info);
    auto it = map.find(string_arg(key));
    out(is_string) = it != map.end() && std::holds_alternative<std::string>(it->second);
  });
}
extern "C" int mlx_device_info_get_string(const char** value, mlx_device_info info, const char* key) {
  int missing = 0;
  const int rc = guard([&] {
    const auto& map = get(info);
    auto it = map.find(string_arg(key));
    if (it == map.end() || !std::holds_alternative<std::string>(it->second)) {
      missing = 2;
      return;
    }
    out(value) = std::get<std::string>(it->second).c_str();
  });
  return rc != 0 ? rc : missing;
}
extern "C" int mlx_device_info_get_size(size_t* value, mlx_device_info info, const char* key) {
  int missing = 0;
  const int rc = guard([&] {
    const auto& map = get(info);
    auto it = map.find(string_arg(key));
    if (it == map.end() || !std::holds_alternative<size_t>(it->second)) {
      missing = 2;
      return;
    }
    out(value) = std::get<size_t>(it->second);
  });
  return rc != 0 ? rc : missing;
}
extern "C" int mlx_device_info_get_keys(mlx_vector_string* keys, mlx_device_info info) {
  return guard([&] {
    std::vector<std::string> names;
    for (const auto& entry : get(info)) names.push_back(entry.first);
    std::sort(names.begin(), names.end());
    set(out(keys), std::move(names));
  });
}

extern "C" mlx_stream mlx_stream_new(void) { return mlx_stream{nullptr}; }
extern "C" mlx_stream mlx_stream_new_device(mlx_device dev) {
  return guard_value(mlx_stream{nullptr}, [&] { return make<mlx_stream>(new_stream(get(dev))); });
}
extern "C" int mlx_stream_set(mlx_stream* stream, const mlx_stream src) {
  return guard([&] { set(out(stream), get(src)); });
}
extern "C" int mlx_stream_free(mlx_stream stream) {
  release(stream);
  return 0;
}
extern "C" int mlx_stream_tostring(mlx_string* str, mlx_stream stream) {
  return guard([&] { set(out(str), text_of(get(stream))); });
}
extern "C" bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs) {
  return guard_value(false, [&] { return get(lhs) == get(rhs); });
}
extern "C" int mlx_stream_get_device(mlx_device* dev, mlx_stream stream) {
  return guard([&] { set(out(dev), get(stream).device); });
}
extern "C" int mlx_stream_get_index(int* index, mlx_stream stream) {
  return guard([&] { out(index) = get(stream).index; });
}
extern "C" int mlx_synchronize(mlx_stream stream) {
  return guard([&] {
    if (stream.ctx == nullptr) {
      synchronize();
    } else {
      synchronize(get(stream));
    }
  });
}
extern "C" int mlx_get_default_stream(mlx_stream* stream, mlx_device dev) {
  return guard([&] { set(out(stream), default_stream(get(dev))); });
}
extern "C" int mlx_set_default_stream(mlx_stream stream) {
  return guard([&] { set_default_stream(get(stream)); });
}
extern "C" mlx_stream mlx_default_cpu_stream_new(void) {
  return guard_value(mlx_stream{nullptr}, [] { return make<mlx_stream>(default_stream(Device::cpu)); });
}
extern "C" mlx_stream mlx_default_gpu_stream_new(void) {
  return guard_value(mlx_stream{nullptr}, [] { return make<mlx_stream>(default_stream(Device::gpu)); });
}

extern "C" int mlx_synchronize_default(void) {
  return guard([] { synchronize(); });
}
extern "C" int mlx_clear_streams(void) {
  return guard([] { clear_streams(); });
}
extern "C" mlx_stream mlx_stream_new_thread_unsafe(mlx_device dev) {
  return guard_value(mlx_stream{nullptr},
                     [&] { return make<mlx_stream>(new_thread_unsafe_stream(get(dev))); });
}
extern "C" int mlx_get_streams(mlx_vector_stream* res) {
  return guard([&] { set(out(res), get_streams()); });
}
extern "C" mlx_stream_thread_local mlx_stream_thread_local_new(mlx_device dev) {
  return guard_value(mlx_stream_thread_local{nullptr},
                     [&] { return make<mlx_stream_thread_local>(new_thread_local_stream(get(dev))); });
}
extern "C" int mlx_stream_thread_local_set(mlx_stream_thread_local* tls, const mlx_stream_thread_local src) {
  return guard([&] { set(out(tls), get(src)); });
}
extern "C" int mlx_stream_thread_local_free(mlx_stream_thread_local tls) {
  release(tls);
  return 0;
}
extern "C" int mlx_stream_from_thread_local(mlx_stream* res, const mlx_stream_thread_local tls) {
  return guard([&] { set(out(res), stream_from_thread_local_stream(get(tls))); });
}
extern "C" int mlx_synchronize_thread_local(mlx_stream_thread_local tls) {
  return guard([&] { synchronize(stream_from_thread_local_stream(get(tls))); });
}
