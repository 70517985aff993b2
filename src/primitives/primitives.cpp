#include "primitives/primitives.h"

#include <stdexcept>
#include <string>

namespace braid {

std::vector<array> Primitive::vjp(const std::vector<array>&, const std::vector<array>&,
                                  const std::vector<int>&, const std::vector<array>&) {
  throw std::invalid_argument(std::string("[") + name() + "] vjp is not implemented.");
}

std::vector<array> Primitive::jvp(const std::vector<array>&, const std::vector<array>&,
                                  const std::vector<int>&) {
  throw std::invalid_argument(std::string("[") + name() + "] jvp is not implemented.");
}

std::pair<std::vector<array>, std::vector<int>> Primitive::vmap(const std::vector<array>&,
                                                                const std::vector<int>&) {
  throw std::invalid_argument(std::string("[") + name() + "] vmap is not implemented.");
}

const char* Unary::name() const {
  switch (op_) {
    case Op::negative: return "Negative";
    case Op::exp: return "Exp";
    case Op::log: return "Log";
    case Op::sqrt: return "Sqrt";
    case Op::tanh: return "Tanh";
  }
  return "Unary";
}

bool Unary::is_equivalent(const Primitive& o) const {
  auto* u = dynamic_cast<const Unary*>(&o);
  return u && u->op_ == op_;
}

const char* Binary::name() const {
  switch (op_) {
    case Op::add: return "Add";
    case Op::subtract: return "Subtract";
    case Op::multiply: return "Multiply";
    case Op::divide: return "Divide";
    case Op::maximum: return "Maximum";
    case Op::minimum: return "Minimum";
    case Op::equal: return "Equal";
    case Op::less: return "Less";
    case Op::greater: return "Greater";
  }
  return "Binary";
}

bool Binary::is_equivalent(const Primitive& o) const {
  auto* b = dynamic_cast<const Binary*>(&o);
  return b && b->op_ == op_;
}

}  // namespace braid
