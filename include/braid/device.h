// Devices: where arrays are computed. The default device is process-wide.
#pragma once

#include <ostream>

namespace braid {

struct Device {
  enum class DeviceType { cpu, gpu };
  static constexpr DeviceType cpu = DeviceType::cpu;
  static constexpr DeviceType gpu = DeviceType::gpu;

  DeviceType type;
  int index;

  constexpr Device(DeviceType type, int index = 0) : type(type), index(index) {}  // NOLINT
  constexpr bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  constexpr bool operator!=(const Device& o) const { return !(*this == o); }
};

/// The calling thread's default device: a StreamContext's device if one is active on this
/// thread, otherwise the process-wide default. Thread-safe.
Device default_device();

/// Sets the process-wide default device (an atomic store; every thread sees it on its next
/// call). Throws std::invalid_argument if the device is not available. Thread-safe.
void set_default_device(const Device& d);

/// Whether this build and machine can run work on `d`. Thread-safe.
bool is_available(const Device& d);

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace braid
