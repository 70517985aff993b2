// Out-of-line parts of the indexing and sorting primitives.
#include "primitives/indexing.h"

namespace braid {

bool Gather::is_equivalent(const Primitive& o) const {
  auto* g = dynamic_cast<const Gather*>(&o);
  return g && g->axes_ == axes_ && g->slice_sizes_ == slice_sizes_;
}

bool GatherAxis::is_equivalent(const Primitive& o) const {
  auto* g = dynamic_cast<const GatherAxis*>(&o);
  return g && g->axis_ == axis_;
}

const char* Scatter::name() const {
  switch (reduce_) {
    case ReduceType::Max: return "ScatterMax";
    case ReduceType::Min: return "ScatterMin";
    case ReduceType::Sum: return "ScatterSum";
    case ReduceType::Prod: return "ScatterProd";
    case ReduceType::None: return "Scatter";
  }
  return "Scatter";
}

bool Scatter::is_equivalent(const Primitive& o) const {
  auto* p = dynamic_cast<const Scatter*>(&o);
  return p && p->reduce_ == reduce_ && p->axes_ == axes_;
}

bool Sort::is_equivalent(const Primitive& o) const {
  auto* p = dynamic_cast<const Sort*>(&o);
  return p && p->axis_ == axis_;
}

bool ArgSort::is_equivalent(const Primitive& o) const {
  auto* p = dynamic_cast<const ArgSort*>(&o);
  return p && p->axis_ == axis_;
}

bool Partition::is_equivalent(const Primitive& o) const {
  auto* p = dynamic_cast<const Partition*>(&o);
  return p && p->kth_ == kth_ && p->axis_ == axis_;
}

bool ArgPartition::is_equivalent(const Primitive& o) const {
  auto* p = dynamic_cast<const ArgPartition*>(&o);
  return p && p->kth_ == kth_ && p->axis_ == axis_;
}

}  // namespace braid
