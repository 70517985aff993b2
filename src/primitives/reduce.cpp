// Names, equivalence and dtype rules of the reduction and scan primitives.
#include "primitives/reduce.h"

namespace braid {

const char* Reduce::name() const {
  switch (op_) {
    case Op::sum: return "Sum";
    case Op::prod: return "Prod";
    case Op::max: return "Max";
    case Op::min: return "Min";
    case Op::all: return "All";
    case Op::any: return "Any";
  }
  return "Reduce";
}

bool Reduce::is_equivalent(const Primitive& o) const {
  auto* r = dynamic_cast<const Reduce*>(&o);
  return r && r->op_ == op_ && r->axes_ == axes_;
}

Dtype Reduce::sum_dtype(Dtype in) {
  switch (in.val()) {
    case Dtype::Val::bool_:
    case Dtype::Val::int8:
    case Dtype::Val::int16:
    case Dtype::Val::int32: return int32;
    case Dtype::Val::uint8:
    case Dtype::Val::uint16:
    case Dtype::Val::uint32: return uint32;
    case Dtype::Val::uint64:
    case Dtype::Val::int64:
    case Dtype::Val::float16:
    case Dtype::Val::float32:
    case Dtype::Val::float64:
    case Dtype::Val::bfloat16:
    case Dtype::Val::complex64: return in;
  }
  return in;
}

const char* ArgReduce::name() const {
  switch (op_) {
    case Op::argmin: return "ArgMin";
    case Op::argmax: return "ArgMax";
  }
  return "ArgReduce";
}

bool ArgReduce::is_equivalent(const Primitive& o) const {
  auto* r = dynamic_cast<const ArgReduce*>(&o);
  return r && r->op_ == op_ && r->axis_ == axis_;
}

const char* Scan::name() const {
  switch (op_) {
    case Op::sum: return "CumSum";
    case Op::prod: return "CumProd";
    case Op::max: return "CumMax";
    case Op::min: return "CumMin";
    case Op::logaddexp: return "CumLogaddexp";
  }
  return "Scan";
}

bool Scan::is_equivalent(const Primitive& o) const {
  auto* r = dynamic_cast<const Scan*>(&o);
  return r && r->op_ == op_ && r->axis_ == axis_ && r->reverse_ == reverse_ && r->inclusive_ == inclusive_;
}

}  // namespace braid
