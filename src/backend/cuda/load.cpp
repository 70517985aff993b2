// Load on the GPU: the bytes are read into host memory on the encoding thread, then copied to
// the output in stream order. From pageable memory cudaMemcpyAsync returns once the bytes are
// staged, so the host copy may go when it returns.
#include <memory>

#include "backend/cuda/cuda_utils.h"
#include "primitives/primitives.h"

namespace braid {

void Load::eval_gpu(const std::vector<array>& inputs, array& out) {
  cuda::alloc_output(out);
  const size_t bytes = out.nbytes();
  if (bytes == 0) return;
  std::unique_ptr<char[]> host(new char[bytes]);
  read_into(out, host.get());
  cuda::check(cudaMemcpyAsync(out.desc()->data_ptr, host.get(), bytes, cudaMemcpyHostToDevice,
                              cuda::stream_of(stream())),
              "cudaMemcpyAsync (Load)");
}

}  // namespace braid
