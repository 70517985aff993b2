// The primitive set, one header per op family. Declarations only: ops build these, backends
// define eval_cpu/eval_gpu (src/backend/cpu/*.cpp, src/backend/cuda/*.cu or the no_gpu stub).
#pragma once

#include "primitives/compiled.h"
#include "primitives/conv.h"
#include "primitives/elementwise.h"
#include "primitives/factorizations.h"
#include "primitives/indexing.h"
#include "primitives/io.h"
#include "primitives/linalg.h"
#include "primitives/optimizer.h"
#include "primitives/quantized.h"
#include "primitives/random.h"
#include "primitives/reduce.h"
#include "primitives/shape.h"
