// Unary::eval_cpu: one case per row of BRAID_UNARY_OPS, each instantiating the op's functor
// for the dtypes its row accepts.
#include "backend/cpu/elementwise_into.h"
#include "backend/cpu/elementwise_loops.h"
#include "primitives/primitives.h"

namespace braid {

void cpu::unary_into(Unary::Op op, const array& in, array& out) {
  using Op = Unary::Op;
  switch (op) {
#define BRAID_EW_CASE(op, Name, cls)                                                                      \
  case Op::op:                                                                                            \
    cpu::dispatch_class<ew::DtypeClass::cls>(in.dtype(), #Name, [&](auto tag) {                           \
      cpu::unary_loop<typename decltype(tag)::type>(in, out, ew::Name{});                                 \
    });                                                                                                   \
    break;
    BRAID_UNARY_OPS(BRAID_EW_CASE)
#undef BRAID_EW_CASE
  }
}

void Unary::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous_or_donate(inputs, out);
  if (out.size() > 0) cpu::unary_into(op_, inputs[0], out);
}

}  // namespace braid
