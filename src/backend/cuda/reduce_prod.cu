// Products on the GPU (the engine of reduce.cuh), with sum's output dtypes.
#include "backend/cuda/reduce.cuh"

namespace braid::cuda {

void reduce_prod(const array& in, array& out, const std::vector<int>& axes, const Stream& s) {
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    GpuReducer<ProdOp<In, SumOut<In>>, In, SumOut<In>>(in, out, axes, s).run();
  });
}

}  // namespace braid::cuda
