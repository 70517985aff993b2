// Minima on the GPU (the engine of reduce.cuh); all is the min of a bool input.
#include "backend/cuda/reduce.cuh"

namespace braid::cuda {

void reduce_min(const array& in, array& out, const std::vector<int>& axes, const Stream& s) {
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    GpuReducer<ExtremeOp<In, false>, In, In>(in, out, axes, s).run();
  });
}

}  // namespace braid::cuda
