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

std::vector<Shape> Primitive::output_shapes(const std::vector<array>&) {
  throw std::invalid_argument(std::string("[Primitive::output_shapes] ") + name() + " cannot infer output shapes.");
}

}  // namespace braid
