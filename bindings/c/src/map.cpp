// The map handles: mlx_map_string_to_array and mlx_map_string_to_string, with their iterators.
#include "braid/c/map.h"

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

/// An iterator's state: the position in the map named by the iterator's map_ctx.
template <typename Map>
struct Cursor {
  typename Map::const_iterator position;
};

template <typename It, typename MapHandle>
It iterator_new(MapHandle map) {
  return guard_value(It{nullptr, nullptr}, [&] {
    using Map = Object<MapHandle>;
    const Map& m = get(map);
    return It{new Cursor<Map>{m.begin()}, map.ctx};
  });
}

/// Advances the iterator; false once every entry has been visited.
template <typename Map, typename It>
const typename Map::value_type* iterator_next(It it) {
  if (it.ctx == nullptr || it.map_ctx == nullptr)
    throw std::invalid_argument("[mlx_map_iterator] The iterator is empty.");
  auto* cursor = static_cast<Cursor<Map>*>(it.ctx);
  const Map& m = *static_cast<const Map*>(it.map_ctx);
  if (cursor->position == m.end()) return nullptr;
  return &*cursor->position++;
}

std::string key_arg(const char* key) { return string_arg(key); }

}  // namespace

extern "C" mlx_map_string_to_array mlx_map_string_to_array_new(void) {
  return guard_value(mlx_map_string_to_array{nullptr},
                     [] { return make<mlx_map_string_to_array>(Object<mlx_map_string_to_array>{}); });
}
extern "C" int mlx_map_string_to_array_set(mlx_map_string_to_array* map, const mlx_map_string_to_array src) {
  return guard([&] { set(out(map), get(src)); });
}
extern "C" int mlx_map_string_to_array_free(mlx_map_string_to_array map) {
  release(map);
  return 0;
}
extern "C" int mlx_map_string_to_array_insert(mlx_map_string_to_array map, const char* key,
                                              const mlx_array value) {
  return guard([&] { get(map).insert_or_assign(key_arg(key), get(value)); });
}
extern "C" int mlx_map_string_to_array_get(mlx_array* value, const mlx_map_string_to_array map,
                                           const char* key) {
  int status = 0;
  const int failed = guard([&] {
    const auto& m = get(map);
    auto found = m.find(key_arg(key));
    if (found == m.end()) {
      status = 2;
    } else {
      set(out(value), found->second);
    }
  });
  return failed ? failed : status;
}
extern "C" mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(
    mlx_map_string_to_array map) {
  return iterator_new<mlx_map_string_to_array_iterator>(map);
}
extern "C" int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it) {
  delete static_cast<Cursor<Object<mlx_map_string_to_array>>*>(it.ctx);
  return 0;
}
extern "C" int mlx_map_string_to_array_iterator_next(const char** key, mlx_array* value,
                                                     mlx_map_string_to_array_iterator it) {
  int status = 0;
  const int failed = guard([&] {
    const auto* entry = iterator_next<Object<mlx_map_string_to_array>>(it);
    if (entry == nullptr) {
      status = 2;
      return;
    }
    out(key) = entry->first.c_str();
    set(out(value), entry->second);
  });
  return failed ? failed : status;
}

extern "C" mlx_map_string_to_string mlx_map_string_to_string_new(void) {
  return guard_value(mlx_map_string_to_string{nullptr},
                     [] { return make<mlx_map_string_to_string>(Object<mlx_map_string_to_string>{}); });
}
extern "C" int mlx_map_string_to_string_set(mlx_map_string_to_string* map,
                                            const mlx_map_string_to_string src) {
  return guard([&] { set(out(map), get(src)); });
}
extern "C" int mlx_map_string_to_string_free(mlx_map_string_to_string map) {
  release(map);
  return 0;
}
extern "C" int mlx_map_string_to_string_insert(mlx_map_string_to_string map, const char* key,
                                               const char* value) {
  return guard([&] { get(map).insert_or_assign(key_arg(key), string_arg(value)); });
}
extern "C" int mlx_map_string_to_string_get(const char** value, const mlx_map_string_to_string map,
                                            const char* key) {
  int status = 0;
  const int failed = guard([&] {
    const auto& m = get(map);
    auto found = m.find(key_arg(key));
    if (found == m.end()) {
      status = 2;
    } else {
      out(value) = found->second.c_str();
    }
  });
  return failed ? failed : status;
}
extern "C" mlx_map_string_to_string_iterator mlx_map_string_to_string_iterator_new(
    mlx_map_string_to_string map) {
  return iterator_new<mlx_map_string_to_string_iterator>(map);
}
extern "C" int mlx_map_string_to_string_iterator_free(mlx_map_string_to_string_iterator it) {
  delete static_cast<Cursor<Object<mlx_map_string_to_string>>*>(it.ctx);
  return 0;
}
extern "C" int mlx_map_string_to_string_iterator_next(const char** key, const char** value,
                                                      mlx_map_string_to_string_iterator it) {
  int status = 0;
  const int failed = guard([&] {
    const auto* entry = iterator_next<Object<mlx_map_string_to_string>>(it);
    if (entry == nullptr) {
      status = 2;
      return;
    }
    out(key) = entry->first.c_str();
    out(value) = entry->second.c_str();
  });
  return failed ? failed : status;
}
