#include "runtime/park.h"

#include <cstdint>
#include <new>

namespace braid::detail {

ParkSlot& park_slot(const void* key) {
  // Built in static storage on first use: no allocation (a park must not fail when memory
  // is short) and never destroyed (no exit races).
  alignas(ParkSlot) static unsigned char storage[sizeof(ParkSlot) * 256];
  static ParkSlot* const slots = [] {
    auto* first = reinterpret_cast<ParkSlot*>(storage);
    for (int i = 0; i < 256; ++i) new (first + i) ParkSlot();
    return first;
  }();
  auto h = (reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull;
  return slots[h >> 56];
}

}  // namespace braid::detail
