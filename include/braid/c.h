/* braid's C API: mlx-c's interface (types, names, signatures, error handling) over braid, so a
 * C program or a binding written against mlx-c builds by including this header instead of
 * "mlx/c/mlx.h" and linking libbraid_c (CMake: braid::c).
 *
 * Conventions, as in mlx-c: functions return 0 on success and non-zero on failure, after
 * passing the message to the error handler (see braid/c/error.h); no C++ exception crosses
 * this interface. Results are written through the first pointer argument. Handles are
 * created with *_new (or returned by a constructor) and released with *_free.
 *
 * Thread safety: every function of this API may be called from any thread at any time; each
 * header states what else holds for its family. What stays the caller's is writing one handle
 * (set, free, a result pointer) while another thread uses that same handle. */
#ifndef BRAID_C_H
#define BRAID_C_H

#include "braid/c/array.h"
#include "braid/c/closure.h"
#include "braid/c/compile.h"
#include "braid/c/device.h"
#include "braid/c/distributed.h"
#include "braid/c/distributed_group.h"
#include "braid/c/error.h"
#include "braid/c/export.h"
#include "braid/c/fast.h"
#include "braid/c/fft.h"
#include "braid/c/half.h"
#include "braid/c/io.h"
#include "braid/c/io_gguf.h"
#include "braid/c/io_types.h"
#include "braid/c/linalg.h"
#include "braid/c/map.h"
#include "braid/c/memory.h"
#include "braid/c/ops.h"
#include "braid/c/optional.h"
#include "braid/c/random.h"
#include "braid/c/stream.h"
#include "braid/c/string.h"
#include "braid/c/transforms.h"
#include "braid/c/vector.h"
#include "braid/c/version.h"

#endif
