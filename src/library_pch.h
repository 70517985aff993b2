// The headers most of the library's sources include, parsed once per build and precompiled
// (see CMakeLists.txt): about 1.5 s of each source's compile time, in each of the three builds
// of `make test`. Only headers every source may see without changing its meaning belong here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "braid/ops.h"
#include "graph/node.h"
#include "primitives/primitives.h"
