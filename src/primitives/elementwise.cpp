// Names and equivalence of the element-wise primitives, generated from the op tables.
#include "primitives/elementwise.h"

#include <cstring>

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
  if (!c || c->num_inputs_ != num_inputs_ || c->ops_.size() != ops_.size()) return false;
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

}  // namespace braid
