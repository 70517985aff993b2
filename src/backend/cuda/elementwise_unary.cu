// Unary::eval_gpu: one case per row of BRAID_UNARY_OPS, each instantiating the op's functor
// for the dtypes its row accepts.
#include "backend/cuda/elementwise_kernels.cuh"
#include "primitives/primitives.h"

namespace braid {

void Unary::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  cuda::alloc_output_or_donate(inputs, out);
  if (out.size() == 0) return;
  switch (op_) {
#define BRAID_EW_CASE(op, Name, cls)                                                   \
  case Op::op:                                                                         \
    cuda::dispatch_class<ew::DtypeClass::cls>(in.dtype(), #Name, [&](auto tag) {       \
      cuda::unary_launch<typename decltype(tag)::type>(in, out, ew::Name{}, stream()); \
    });                                                                                \
    break;
    BRAID_UNARY_OPS(BRAID_EW_CASE)
#undef BRAID_EW_CASE
  }
}

}  // namespace braid
