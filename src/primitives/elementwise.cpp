// Names and equivalence of the element-wise primitives, generated from the op tables.
#include "primitives/elementwise.h"

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

}  // namespace braid
