// Devices: where arrays are computed. The default device is process-wide.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <unordered_map>
#include <variant>

namespace braid {

struct Device {
  enum class DeviceType { cpu, gpu };
  static constexpr DeviceType cpu = DeviceType::cpu;
  static constexpr DeviceType gpu = DeviceType::gpu;

  DeviceType type;
  int index;

  constexpr Device(DeviceType type, int index = 0) : type(type), index(index) {}  // NOLINT
  // != and the reversed forms come from C++20's rewriting of ==.
  constexpr bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  /// An order for maps and sets: by type (cpu first), then index.
  constexpr bool operator<(const Device& o) const { return type != o.type ? type < o.type : index < o.index; }
};

/// As MLX: a device equals a bare type when its type is that type, whatever its index.
constexpr bool operator==(const Device& d, Device::DeviceType t) { return d.type == t; }

/// The calling thread's default device: a StreamContext's device if one is active on this
/// thread, otherwise the process-wide default. Thread-safe. As MLX's, a reference: it names
/// a slot of the calling thread that holds the answer until that thread's next call.
const Device& default_device();

/// Sets the process-wide default device (an atomic store; every thread sees it on its next
/// call). Throws std::invalid_argument if the device is not available. Thread-safe.
void set_default_device(const Device& d);

/// Whether this build and machine can run work on `d`. Thread-safe.
bool is_available(const Device& d);

namespace gpu {
/// Whether a GPU backend is present and has a device (MLX's gpu::is_available): the same as
/// is_available(Device::gpu).
bool is_available();
}  // namespace gpu

namespace cu {
/// MLX's cu::is_available: whether the CUDA backend has a device (braid's GPU backend is CUDA).
bool is_available();
}  // namespace cu

namespace metal {
/// MLX's metal::is_available, for programs that test it: braid has no Metal backend.
inline bool is_available() { return false; }
}  // namespace metal

/// How many devices of `type` this build and machine have (MLX): 1 CPU; 1 GPU when one is
/// usable (braid uses the first CUDA device), else 0. Thread-safe.
int device_count(Device::DeviceType type);

/// Facts about `d` (MLX's device_info), read once: "device_name" and "architecture" (strings;
/// for the GPU its name and "sm_XY"), "memory_size" and "total_memory" (bytes of system memory
/// for the CPU, of device memory for the GPU) and "max_recommended_working_set_size" (the
/// same: braid does not limit a process below it). Throws std::invalid_argument for a device
/// that is not available. Thread-safe; the map lives until exit.
const std::unordered_map<std::string, std::variant<std::string, size_t>>& device_info(
    const Device& d = default_device());

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace braid
