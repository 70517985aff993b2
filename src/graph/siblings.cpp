#include "graph/siblings.h"

#include <stdexcept>
#include <string>

#include "braid/primitive.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "runtime/mutex.h"

namespace braid {

namespace detail {

namespace {
// A node for output `k` of the group, not registered in it (the caller decides).
array make_member(const std::shared_ptr<SiblingGroup>& g, size_t k, const std::shared_ptr<Primitive>& prim,
                  std::vector<array> inputs) {
  array out(g->shapes[k], g->dtypes[k], prim, std::move(inputs));
  out.desc()->siblings = g;
  out.desc()->position = static_cast<uint32_t>(k);
  return out;
}
}  // namespace

void gather_outputs(SiblingGroup& g, const array& self, std::vector<array>& outputs) {
  outputs.clear();
  const ArrayDesc& d = *self.desc();
  SpinGuard guard(g.lock);
  g.started = true;
  for (size_t k = 0; k < g.members.size(); ++k) {
    if (k == d.position) {
      outputs.push_back(self);
    } else if (auto member = g.members[k].lock()) {
      outputs.emplace_back(std::move(member));
    } else {
      // Nobody holds this output: the kernel writes it into a node that is dropped after.
      outputs.push_back(make_member(d.siblings, k, d.primitive, {}));
    }
  }
}

}  // namespace detail

std::vector<array> array::make_arrays(std::vector<Shape> shapes, const std::vector<Dtype>& dtypes,
                                      const std::shared_ptr<Primitive>& primitive,
                                      const std::vector<array>& inputs) {
  if (!primitive) throw std::invalid_argument("[array::make_arrays] Expected a primitive.");
  if (shapes.empty() || shapes.size() != dtypes.size()) {
    throw std::invalid_argument(
        "[array::make_arrays] Expected one dtype per shape and at least one output, got " +
        std::to_string(shapes.size()) + " shapes and " + std::to_string(dtypes.size()) + " dtypes.");
  }
  if (shapes.size() == 1) return {array(std::move(shapes[0]), dtypes[0], primitive, inputs)};
  auto g = std::make_shared<detail::SiblingGroup>();
  g->shapes = std::move(shapes);
  g->dtypes = dtypes;
  std::vector<array> outs;
  outs.reserve(g->shapes.size());
  for (size_t k = 0; k < g->shapes.size(); ++k) outs.push_back(detail::make_member(g, k, primitive, inputs));
  g->members.reserve(outs.size());
  for (const auto& o : outs) g->members.emplace_back(o.desc_ptr());
  return outs;
}

std::vector<array> array::outputs() const {
  detail::ArrayDesc& d = *desc_;
  if (!d.siblings || !has_primitive()) return {*this};
  detail::SiblingGroup& g = *d.siblings;
  std::vector<array> inputs;
  {
    detail::SpinGuard guard(d.lock);
    inputs = d.inputs;
  }
  // Evaluated since the check above (its inputs may be gone): no siblings any more, as MLX.
  if (!has_primitive()) return {*this};
  const size_t n = g.members.size();
  std::vector<array> outs(n, *this);  // every lost output's place is filled below
  std::vector<size_t> lost;
  {
    detail::SpinGuard guard(g.lock);
    for (size_t k = 0; k < n; ++k) {
      if (k == d.position) continue;
      if (auto member = g.members[k].lock()) {
        outs[k] = array(std::move(member));
      } else {
        lost.push_back(k);
      }
    }
  }
  if (lost.empty()) return outs;
  // An output nobody holds is made again: a node registered in the group while the kernel
  // has not taken its outputs, else (its value went with the kernel's stand-in) the first of
  // a new group, computing the same outputs again.
  std::vector<array> remade;
  for (size_t k : lost) remade.push_back(detail::make_member(d.siblings, k, d.primitive, inputs));
  std::vector<size_t> recompute;
  {
    detail::SpinGuard guard(g.lock);
    for (size_t i = 0; i < lost.size(); ++i) {
      const size_t k = lost[i];
      if (auto member = g.members[k].lock()) {
        outs[k] = array(std::move(member));  // remade by another thread meanwhile
      } else if (!g.started) {
        g.members[k] = remade[i].desc_ptr();
        outs[k] = remade[i];
      } else {
        recompute.push_back(k);  // below, outside the lock
      }
    }
  }
  if (!recompute.empty()) {
    std::vector<array> fresh = make_arrays(g.shapes, g.dtypes, d.primitive, inputs);
    for (size_t k : recompute) outs[k] = fresh[k];
  }
  return outs;
}

std::vector<array> array::siblings() const {
  std::vector<array> outs = outputs();
  if (outs.size() == 1) return {};
  outs.erase(outs.begin() + desc_->position);
  return outs;
}

}  // namespace braid
