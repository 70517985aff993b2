// Binary::eval_cpu: one case per row of BRAID_BINARY_OPS, each instantiating the op's functor
// for the dtypes its row accepts.
#include "backend/cpu/elementwise_into.h"
#include "backend/cpu/elementwise_loops.h"
#include "primitives/primitives.h"

namespace braid {

void cpu::binary_into(Binary::Op op, const array& a, const array& b, array& out) {
  using Op = Binary::Op;
  switch (op) {
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

void Binary::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous_or_donate(inputs, out);
  if (out.size() > 0) cpu::binary_into(op_, inputs[0], inputs[1], out);
}

}  // namespace braid
