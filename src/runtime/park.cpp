#include "runtime/park.h"

#include <cstdint>

namespace braid::detail {

ParkSlot& park_slot(const void* key) {
  static ParkSlot* slots = new ParkSlot[256];  // deliberate leak: no exit races
  auto h = (reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull;
  return slots[h >> 56];
}

}  // namespace braid::detail
