// Maxima on the GPU (the engine of reduce.cuh); any is the max of a bool input.
#include "backend/cuda/reduce.cuh"

namespace braid::cuda {

void reduce_max(const array& in, array& out, const std::vector<int>& axes, const Stream& s) {
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    GpuReducer<ExtremeOp<In, true>, In, In>(in, out, axes, s).run();
  });
}

}  // namespace braid::cuda
