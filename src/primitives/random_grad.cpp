// Derivatives of the random primitives: random bits are integers of an integer key, so their
// cotangents and tangents are zeros.
#include "primitives/grad_utils.h"
#include "primitives/random.h"

namespace braid {

std::vector<array> RandomBits::vjp(const std::vector<array>& primals, const std::vector<array>&,
                                   const std::vector<int>& argnums, const std::vector<array>&) {
  return detail::zero_grads(primals, argnums, stream());
}

std::vector<array> RandomBits::jvp(const std::vector<array>&, const std::vector<array>&,
                                   const std::vector<int>&, const std::vector<array>& outputs) {
  return {zeros_like(outputs[0], stream())};
}

}  // namespace braid
