// The allocator's counters and limits.
#include "braid/c/memory.h"

#include "handles.h"

using namespace braid::capi;

extern "C" int mlx_clear_cache(void) {
  return guard([] { braid::clear_cache(); });
}
extern "C" int mlx_get_active_memory(size_t* res) {
  return guard([&] { out(res) = braid::get_active_memory(); });
}
extern "C" int mlx_get_cache_memory(size_t* res) {
  return guard([&] { out(res) = braid::get_cache_memory(); });
}
extern "C" int mlx_get_memory_limit(size_t* res) {
  return guard([&] { out(res) = braid::get_memory_limit(); });
}
extern "C" int mlx_get_peak_memory(size_t* res) {
  return guard([&] { out(res) = braid::get_peak_memory(); });
}
extern "C" int mlx_reset_peak_memory(void) {
  return guard([] { braid::reset_peak_memory(); });
}
extern "C" int mlx_set_cache_limit(size_t* res, size_t limit) {
  return guard([&] { out(res) = braid::set_cache_limit(limit); });
}
extern "C" int mlx_set_memory_limit(size_t* res, size_t limit) {
  return guard([&] { out(res) = braid::set_memory_limit(limit); });
}
extern "C" int mlx_set_wired_limit(size_t* res, size_t limit) {
  return guard([&] { out(res) = braid::set_wired_limit(limit); });
}
