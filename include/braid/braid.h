// The whole public API of braid.
#pragma once

#include "braid/array.h"
#include "braid/device.h"
#include "braid/dtype.h"
#include "braid/io.h"
#include "braid/linalg.h"
#include "braid/memory.h"
#include "braid/ops.h"
#include "braid/primitive.h"
#include "braid/random.h"
#include "braid/small_vector.h"
#include "braid/stream.h"
#include "braid/transforms.h"
#include "braid/tree.h"
#include "braid/version.h"
