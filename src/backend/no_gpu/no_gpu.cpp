// Linked when braid is built without a GPU backend: every GPU entry point says so.
#include <stdexcept>
#include <string>

#include "primitives/primitives.h"
#include "runtime/registry.h"

namespace braid {

namespace detail {
bool gpu_is_available() { return false; }
}  // namespace detail

#define BRAID_NO_GPU(P)                                                        \
  void P::eval_gpu(const std::vector<array>&, array&) {                        \
    throw std::runtime_error(std::string("[") + name() + "] no GPU backend"); \
  }

BRAID_NO_GPU(Unary)
BRAID_NO_GPU(Binary)
BRAID_NO_GPU(Select)
BRAID_NO_GPU(AsType)
BRAID_NO_GPU(Full)
BRAID_NO_GPU(Arange)
BRAID_NO_GPU(Broadcast)
BRAID_NO_GPU(Reshape)
BRAID_NO_GPU(Transpose)
BRAID_NO_GPU(Reduce)
BRAID_NO_GPU(Matmul)
BRAID_NO_GPU(Softmax)

}  // namespace braid
