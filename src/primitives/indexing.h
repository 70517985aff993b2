// Indexing (gather, scatter and friends) and sorting.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

// (none yet)

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_INDEXING_PRIMITIVES(X) 

}  // namespace braid
