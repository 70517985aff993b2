// Linked when braid is built without a GPU backend: every GPU entry point says so.
#include <stdexcept>
#include <string>

#include "backend/backend.h"
#include "primitives/fft.h"
#include "primitives/primitives.h"

namespace braid {

namespace detail::gpu {
namespace {
[[noreturn]] void no_gpu(const char* what) {
  throw std::runtime_error(std::string("[") + what + "] no GPU backend");
}
}  // namespace

bool is_available() { return false; }
Properties properties() { no_gpu("device_info"); }
std::shared_ptr<void> new_stream_state(int) { no_gpu("new_stream"); }
void eval_node(array& node, std::vector<array>&) { no_gpu(node.primitive().name()); }
array host_view(const array&) { no_gpu("eval"); }
void wait_ready(const array&) { no_gpu("eval"); }
void* host_pointer(const array&) { no_gpu("array::data"); }
void free_device(Data&) noexcept {}
size_t active_memory() noexcept { return 0; }
size_t peak_memory() noexcept { return 0; }
void reset_peak_memory() noexcept {}  // no device buffer can exist without a GPU backend
size_t allocated_bytes(size_t bytes) noexcept { return bytes; }
void synchronize(StreamState&) { no_gpu("synchronize"); }
void quiesce() noexcept {}
}  // namespace detail::gpu

#define BRAID_NO_GPU(P)                                                        \
  void P::eval_gpu(const std::vector<array>&, array&) {                        \
    throw std::runtime_error(std::string("[") + name() + "] no GPU backend"); \
  }

BRAID_ELEMENTWISE_PRIMITIVES(BRAID_NO_GPU)
BRAID_SHAPE_PRIMITIVES(BRAID_NO_GPU)
BRAID_REDUCE_PRIMITIVES(BRAID_NO_GPU)
BRAID_LINALG_PRIMITIVES(BRAID_NO_GPU)
BRAID_INDEXING_PRIMITIVES(BRAID_NO_GPU)
BRAID_QUANTIZED_PRIMITIVES(BRAID_NO_GPU)
BRAID_CONV_PRIMITIVES(BRAID_NO_GPU)
BRAID_IO_PRIMITIVES(BRAID_NO_GPU)
BRAID_RANDOM_PRIMITIVES(BRAID_NO_GPU)
BRAID_OPTIMIZER_PRIMITIVES(BRAID_NO_GPU)
BRAID_FFT_PRIMITIVES(BRAID_NO_GPU)

}  // namespace braid
