// Binary::eval_cpu: one case per row of BRAID_BINARY_OPS, each instantiating the op's functor
// for the dtypes its row accepts.
#include "backend/cpu/elementwise_loops.h"
#include "primitives/primitives.h"

namespace braid {

void Binary::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  const array& b = inputs[1];
  detail::alloc_contiguous_or_donate(inputs, out);
  if (out.size() == 0) return;
  switch (op_) {
#define BRAID_EW_CASE(op, Name, cls)                                                                      \
  case Op::op:                                                                                            \
    cpu::dispatch_class<ew::DtypeClass::cls>(a.dtype(), #Name, [&](auto tag) {                            \
      cpu::binary_loop<typename decltype(tag)::type>(a, b, out, ew::Name{});                              \
    });                                                                                                   \
    break;
    BRAID_BINARY_OPS(BRAID_EW_CASE)
#undef BRAID_EW_CASE
  }
}

}  // namespace braid
