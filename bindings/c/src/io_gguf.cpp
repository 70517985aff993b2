// GGUF files: the metadata value handle (braid's GGUFMetaData), the string-to-metadata map with
// its iterator, and load_gguf/save_gguf. mlx-c's rules where they differ from the other maps:
// a value handed out is always a new handle, and the iterator ends with 1.
#include "braid/c/io_gguf.h"

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

using MetadataMap = Object<mlx_map_string_to_gguf_metadata>;

/// An iterator's state: the position in the map named by the iterator's map_ctx.
struct MetadataCursor {
  MetadataMap::const_iterator position;
};

/// The metadata value, when it holds a T; otherwise an invalid argument naming `what`.
template <typename T>
const T& value_of(mlx_gguf_metadata metadata, const char* fn, const char* what) {
  const auto* value = std::get_if<T>(&get(metadata));
  if (value == nullptr)
    throw std::invalid_argument(std::string("[") + fn + "] The metadata is not " + what + ".");
  return *value;
}

std::unordered_map<std::string, GGUFMetaData> metadata_arg(mlx_map_string_to_gguf_metadata m) {
  if (m.ctx == nullptr) return {};
  return get(m);
}

}  // namespace

extern "C" mlx_gguf_metadata mlx_gguf_metadata_new_string(const char* value) {
  return guard_value(mlx_gguf_metadata{nullptr},
                     [&] { return make<mlx_gguf_metadata>(GGUFMetaData(string_arg(value))); });
}
extern "C" mlx_gguf_metadata mlx_gguf_metadata_new_array(const mlx_array value) {
  return guard_value(mlx_gguf_metadata{nullptr},
                     [&] { return make<mlx_gguf_metadata>(GGUFMetaData(get(value))); });
}
extern "C" mlx_gguf_metadata mlx_gguf_metadata_new_string_vector(const mlx_vector_string value) {
  return guard_value(mlx_gguf_metadata{nullptr},
                     [&] { return make<mlx_gguf_metadata>(GGUFMetaData(get(value))); });
}
extern "C" mlx_gguf_metadata_type mlx_gguf_metadata_get_type(const mlx_gguf_metadata metadata) {
  // The variant's alternatives are in the enum's order: none, array, string, string vector.
  return guard_value(MLX_GGUF_METADATA_NONE,
                     [&] { return static_cast<mlx_gguf_metadata_type>(get(metadata).index()); });
}
extern "C" int mlx_gguf_metadata_get_string(mlx_string* res, const mlx_gguf_metadata metadata) {
  return guard(
      [&] { set(out(res), value_of<std::string>(metadata, "mlx_gguf_metadata_get_string", "a string")); });
}
extern "C" int mlx_gguf_metadata_get_array(mlx_array* res, const mlx_gguf_metadata metadata) {
  return guard([&] { set(out(res), value_of<array>(metadata, "mlx_gguf_metadata_get_array", "an array")); });
}
extern "C" int mlx_gguf_metadata_get_string_vector(mlx_vector_string* res, const mlx_gguf_metadata metadata) {
  return guard([&] {
    set(out(res), value_of<std::vector<std::string>>(metadata, "mlx_gguf_metadata_get_string_vector",
                                                     "a string vector"));
  });
}
extern "C" int mlx_gguf_metadata_free(mlx_gguf_metadata metadata) {
  release(metadata);
  return 0;
}

extern "C" mlx_map_string_to_gguf_metadata mlx_map_string_to_gguf_metadata_new(void) {
  return guard_value(mlx_map_string_to_gguf_metadata{nullptr},
                     [] { return make<mlx_map_string_to_gguf_metadata>(MetadataMap{}); });
}
extern "C" int mlx_map_string_to_gguf_metadata_set(mlx_map_string_to_gguf_metadata* map,
                                                   const mlx_map_string_to_gguf_metadata src) {
  return guard([&] { set(out(map), get(src)); });
}
extern "C" int mlx_map_string_to_gguf_metadata_insert(mlx_map_string_to_gguf_metadata map, const char* key,
                                                      const mlx_gguf_metadata value) {
  return guard([&] { get(map).insert_or_assign(string_arg(key), get(value)); });
}
extern "C" int mlx_map_string_to_gguf_metadata_get(mlx_gguf_metadata* res,
                                                   const mlx_map_string_to_gguf_metadata map,
                                                   const char* key) {
  int status = 0;
  const int failed = guard([&] {
    mlx_gguf_metadata& result = out(res);
    const auto& m = get(map);
    auto found = m.find(string_arg(key));
    if (found == m.end()) {
      status = 2;
    } else {
      result = make<mlx_gguf_metadata>(found->second);
    }
  });
  return failed ? failed : status;
}
extern "C" int mlx_map_string_to_gguf_metadata_free(mlx_map_string_to_gguf_metadata map) {
  release(map);
  return 0;
}

extern "C" mlx_map_string_to_gguf_metadata_iterator mlx_map_string_to_gguf_metadata_iterator_new(
    mlx_map_string_to_gguf_metadata map) {
  return guard_value(mlx_map_string_to_gguf_metadata_iterator{nullptr, nullptr}, [&] {
    return mlx_map_string_to_gguf_metadata_iterator{new MetadataCursor{get(map).begin()}, map.ctx};
  });
}
extern "C" int mlx_map_string_to_gguf_metadata_iterator_free(mlx_map_string_to_gguf_metadata_iterator it) {
  delete static_cast<MetadataCursor*>(it.ctx);
  return 0;
}
extern "C" int mlx_map_string_to_gguf_metadata_iterator_next(const char** key, mlx_gguf_metadata* value,
                                                             mlx_map_string_to_gguf_metadata_iterator it) {
  int status = 0;
  const int failed = guard([&] {
    const char*& key_result = out(key);
    mlx_gguf_metadata& value_result = out(value);
    if (it.ctx == nullptr || it.map_ctx == nullptr)
      throw std::invalid_argument("[mlx_map_string_to_gguf_metadata_iterator] The iterator is empty.");
    auto& position = static_cast<MetadataCursor*>(it.ctx)->position;
    if (position == static_cast<const MetadataMap*>(it.map_ctx)->end()) {
      status = 1;
      return;
    }
    value_result = make<mlx_gguf_metadata>(position->second);
    key_result = position->first.c_str();
    ++position;
  });
  return failed ? failed : status;
}

extern "C" int mlx_load_gguf(mlx_map_string_to_array* res_arrays,
                             mlx_map_string_to_gguf_metadata* res_metadata, const char* file,
                             const mlx_stream s) {
  return guard([&] {
    auto [arrays, metadata] = load_gguf(string_arg(file), stream_arg(s));
    set(out(res_arrays), std::move(arrays));
    set(out(res_metadata), std::move(metadata));
  });
}
extern "C" int mlx_save_gguf(const char* file, const mlx_map_string_to_array arrays,
                             const mlx_map_string_to_gguf_metadata metadata) {
  return guard([&] { save_gguf(string_arg(file), get(arrays), metadata_arg(metadata)); });
}
