// The vector handles: mlx_vector_array, mlx_vector_vector_array, mlx_vector_int,
// mlx_vector_string and mlx_vector_stream, one template over the element's C and C++ types.
#include "braid/c/vector.h"
#include "braid/c/stream.h"

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

/// How a C element becomes a C++ element of the vector handle V.
template <typename V>
struct Element;
template <>
struct Element<mlx_vector_array> {
  static const array& in(const mlx_array a) { return get(a); }
};
template <>
struct Element<mlx_vector_vector_array> {
  static const std::vector<array>& in(const mlx_vector_array v) { return get(v); }
};
template <>
struct Element<mlx_vector_int> {
  static int in(int v) { return v; }
};
template <>
struct Element<mlx_vector_string> {
  static std::string in(const char* s) { return string_arg(s); }
};

template <>
struct Element<mlx_vector_stream> {
  static const Stream& in(const mlx_stream s) { return get(s); }
};

template <typename V, typename C>
Object<V> from_data(const C* data, size_t size) {
  if (size > 0 && data == nullptr)
    throw std::invalid_argument("[mlx_vector] NULL data with a non-zero size.");
  Object<V> v;
  v.reserve(size);
  for (size_t i = 0; i < size; ++i) v.push_back(Element<V>::in(data[i]));
  return v;
}

template <typename V>
const auto& element_at(const V vec, size_t idx) {
  const auto& v = get(vec);
  if (idx >= v.size()) {
    throw std::out_of_range(std::string("[") + HandleTraits<V>::name + "_get] Index " + std::to_string(idx) +
                            " is out of range for a vector of size " + std::to_string(v.size()) + ".");
  }
  return v[idx];
}

}  // namespace

// The same fourteen functions for each vector type.
#define BRAID_C_VECTOR(V, VALUE_T, DATA_T)                                                             \
  extern "C" V V##_new(void) {                                                                         \
    return guard_value(V{nullptr}, [] { return make<V>(Object<V>{}); });                               \
  }                                                                                                    \
  extern "C" int V##_set(V* vec, const V src) {                                                        \
    return guard([&] { set(out(vec), get(src)); });                                                    \
  }                                                                                                    \
  extern "C" int V##_free(V vec) {                                                                     \
    release(vec);                                                                                      \
    return 0;                                                                                          \
  }                                                                                                    \
  extern "C" V V##_new_data(DATA_T* data, size_t size) {                                               \
    return guard_value(V{nullptr}, [&] { return make<V>(from_data<V>(data, size)); });                 \
  }                                                                                                    \
  extern "C" V V##_new_value(VALUE_T val) {                                                            \
    return guard_value(V{nullptr}, [&] { return make<V>(Object<V>{Element<V>::in(val)}); });           \
  }                                                                                                    \
  extern "C" int V##_set_data(V* vec, DATA_T* data, size_t size) {                                     \
    return guard([&] { set(out(vec), from_data<V>(data, size)); });                                    \
  }                                                                                                    \
  extern "C" int V##_set_value(V* vec, VALUE_T val) {                                                  \
    return guard([&] { set(out(vec), Object<V>{Element<V>::in(val)}); });                              \
  }                                                                                                    \
  extern "C" int V##_append_data(V vec, DATA_T* data, size_t size) {                                   \
    return guard([&] {                                                                                 \
      auto items = from_data<V>(data, size);                                                           \
      auto& v = get(vec);                                                                              \
      v.insert(v.end(), std::make_move_iterator(items.begin()), std::make_move_iterator(items.end())); \
    });                                                                                                \
  }                                                                                                    \
  extern "C" int V##_append_value(V vec, VALUE_T val) {                                                \
    return guard([&] { get(vec).push_back(Element<V>::in(val)); });                                    \
  }                                                                                                    \
  extern "C" size_t V##_size(V vec) {                                                                  \
    return guard_value<size_t>(0, [&] { return vec.ctx == nullptr ? size_t{0} : get(vec).size(); });   \
  }

BRAID_C_VECTOR(mlx_vector_array, const mlx_array, const mlx_array)
BRAID_C_VECTOR(mlx_vector_vector_array, const mlx_vector_array, const mlx_vector_array)
BRAID_C_VECTOR(mlx_vector_int, int, int)
BRAID_C_VECTOR(mlx_vector_string, const char*, const char*)
BRAID_C_VECTOR(mlx_vector_stream, const mlx_stream, const mlx_stream)
#undef BRAID_C_VECTOR

extern "C" int mlx_vector_array_get(mlx_array* res, const mlx_vector_array vec, size_t idx) {
  return guard([&] { set(out(res), element_at(vec, idx)); });
}
extern "C" int mlx_vector_vector_array_get(mlx_vector_array* res, const mlx_vector_vector_array vec,
                                           size_t idx) {
  return guard([&] { set(out(res), element_at(vec, idx)); });
}
extern "C" int mlx_vector_int_get(int* res, const mlx_vector_int vec, size_t idx) {
  return guard([&] { out(res) = element_at(vec, idx); });
}
extern "C" int mlx_vector_string_get(char** res, const mlx_vector_string vec, size_t idx) {
  return guard([&] { out(res) = const_cast<char*>(element_at(vec, idx).c_str()); });
}
extern "C" int mlx_vector_stream_get(mlx_stream* res, const mlx_vector_stream vec, size_t idx) {
  return guard([&] { set(out(res), element_at(vec, idx)); });
}
