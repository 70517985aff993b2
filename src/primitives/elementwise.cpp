// Names and equivalence of the element-wise primitives, generated from the op tables; DivMod,
// which runs two of Binary's kernels as one node.
#include "primitives/elementwise.h"

#include <cstring>
#include <stdexcept>

#include "braid/ops.h"
#include "ops/utils.h"
#include "primitives/compiled.h"

namespace braid {

const char* Unary::name() const {
  switch (op_) {
#define BRAID_EW_NAME(op, Name, accepts) \
  case Op::op: return #Name;
    BRAID_UNARY_OPS(BRAID_EW_NAME)
#undef BRAID_EW_NAME
  }
  return "Unary";
}

uint8_t Unary::accepts(Op op) {
  switch (op) {
#define BRAID_EW_ACCEPTS(op, Name, cls) \
  case Op::op: return ew::DtypeClass::cls;
    BRAID_UNARY_OPS(BRAID_EW_ACCEPTS)
#undef BRAID_EW_ACCEPTS
  }
  return 0;
}

bool Unary::is_equivalent(const Primitive& o) const {
  auto* u = dynamic_cast<const Unary*>(&o);
  return u && u->op_ == op_;
}

const char* Binary::name() const {
  switch (op_) {
#define BRAID_EW_NAME(op, Name, accepts) \
  case Op::op: return #Name;
    BRAID_BINARY_OPS(BRAID_EW_NAME)
#undef BRAID_EW_NAME
  }
  return "Binary";
}

uint8_t Binary::accepts(Op op) {
  switch (op) {
#define BRAID_EW_ACCEPTS(op, Name, cls) \
  case Op::op: return ew::DtypeClass::cls;
    BRAID_BINARY_OPS(BRAID_EW_ACCEPTS)
#undef BRAID_EW_ACCEPTS
  }
  return 0;
}

bool Binary::is_equivalent(const Primitive& o) const {
  auto* b = dynamic_cast<const Binary*>(&o);
  return b && b->op_ == op_;
}

bool ScaledUnary::is_equivalent(const Primitive& o) const {
  auto* p = dynamic_cast<const ScaledUnary*>(&o);
  return p && p->op_ == op_;
}

bool Compiled::is_equivalent(const Primitive& o) const {
  auto* c = dynamic_cast<const Compiled*>(&o);
  if (!c || c->num_inputs_ != num_inputs_ || c->ops_.size() != ops_.size() || c->outputs_ != outputs_)
    return false;
  for (size_t k = 0; k < ops_.size(); ++k) {
    const Op &a = ops_[k], &b = c->ops_[k];
    if (a.dtype != b.dtype || a.args != b.args ||
        std::strcmp(a.primitive->name(), b.primitive->name()) != 0 ||
        !a.primitive->is_equivalent(*b.primitive)) {
      return false;
    }
  }
  return true;
}

// DivMod runs floor_divide's and remainder's kernels, on whichever device.
namespace {
void check_div_mod(const std::vector<array>& inputs, const std::vector<array>& outputs) {
  if (inputs.size() != 2 || outputs.size() != 2)
    throw std::logic_error("[DivMod] expects two inputs and two outputs.");
}
}  // namespace

void DivMod::eval_cpu(const std::vector<array>& inputs, std::vector<array>& outputs) {
  check_div_mod(inputs, outputs);
  Binary(stream(), Binary::Op::floor_divide).eval_cpu(inputs, outputs[0]);
  Binary(stream(), Binary::Op::remainder).eval_cpu(inputs, outputs[1]);
}

void DivMod::eval_gpu(const std::vector<array>& inputs, std::vector<array>& outputs) {
  check_div_mod(inputs, outputs);
  Binary(stream(), Binary::Op::floor_divide).eval_gpu(inputs, outputs[0]);
  Binary(stream(), Binary::Op::remainder).eval_gpu(inputs, outputs[1]);
}

std::vector<array> DivMod::vjp(const std::vector<array>& primals, const std::vector<array>&,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  std::vector<array> out;
  for (int a : argnums) out.push_back(zeros_like(primals[a], stream()));
  return out;
}

std::vector<array> DivMod::jvp(const std::vector<array>&, const std::vector<array>&, const std::vector<int>&,
                               const std::vector<array>& outputs) {
  std::vector<array> out;
  for (const auto& o : outputs) out.push_back(zeros(o.shape(), o.dtype(), stream()));
  return out;
}

std::vector<Shape> DivMod::output_shapes(const std::vector<array>& inputs) {
  Shape shape = detail::broadcast_shapes(inputs[0].shape(), inputs[1].shape(), "DivMod");
  return {shape, shape};
}

}  // namespace braid
