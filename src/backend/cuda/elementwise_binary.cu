// Binary::eval_gpu: one case per row of BRAID_BINARY_OPS, each instantiating the op's functor
// for the dtypes its row accepts.
#include "backend/cuda/elementwise_kernels.cuh"
#include "primitives/primitives.h"

namespace braid {

void Binary::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  const array& b = inputs[1];
  cuda::alloc_output_or_donate(inputs, out);
  if (out.size() == 0) return;
  switch (op_) {
#define BRAID_EW_CASE(op, Name, cls)                                                       \
  case Op::op:                                                                             \
    cuda::dispatch_class<ew::DtypeClass::cls>(a.dtype(), #Name, [&](auto tag) {            \
      cuda::binary_launch<typename decltype(tag)::type>(a, b, out, ew::Name{}, stream()); \
    });                                                                                    \
    break;
    BRAID_BINARY_OPS(BRAID_EW_CASE)
#undef BRAID_EW_CASE
  }
}

}  // namespace braid
