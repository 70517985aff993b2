#pragma once

#define BRAID_VERSION_MAJOR 0
#define BRAID_VERSION_MINOR 1
#define BRAID_VERSION_PATCH 0

namespace braid {
/// The library's version, "major.minor.patch".
const char* version();
}  // namespace braid
