// Derivatives of the matrix products and of softmax.
#include "primitives/grad_utils.h"
#include "primitives/linalg.h"

namespace braid {

using detail::scalar_like;

namespace {

array mT(const array& a, const Stream& s) { return swapaxes(a, -1, -2, s); }

}  // namespace

std::vector<array> Matmul::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  std::vector<array> out;
  for (int arg : argnums) {
    out.push_back(arg == 0 ? matmul(c, mT(primals[1], s), s) : matmul(mT(primals[0], s), c, s));
  }
  return out;
}

std::vector<array> Matmul::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                               const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  std::optional<array> total;
  for (size_t i = 0; i < argnums.size(); ++i) {
    array t = argnums[i] == 0 ? matmul(tangents[i], primals[1], s) : matmul(primals[0], tangents[i], s);
    total = total ? add(*total, t, s) : t;
  }
  return {*total};
}

std::vector<array> AddMM::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                              const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& c = cotangents[0];
  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 2) {
      out.push_back(detail::unbroadcast(multiply(scalar_like(beta_, c), c, s), primals[2].shape(), s));
      continue;
    }
    array g = arg == 0 ? matmul(c, mT(primals[1], s), s) : matmul(mT(primals[0], s), c, s);
    out.push_back(alpha_ == 1.0f ? g : multiply(scalar_like(alpha_, g), g, s));
  }
  return out;
}

std::vector<array> AddMM::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                              const std::vector<int>& argnums, const std::vector<array>& outputs) {
  const Stream& s = stream();
  std::optional<array> product;
  std::optional<array> shift;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const array& t = tangents[i];
    if (argnums[i] == 2) {
      shift = multiply(scalar_like(beta_, t), t, s);
      continue;
    }
    array p = argnums[i] == 0 ? matmul(t, primals[1], s) : matmul(primals[0], t, s);
    product = product ? add(*product, p, s) : p;
  }
  array total = zeros_like(outputs[0], s);
  if (product) total = alpha_ == 1.0f ? *product : multiply(scalar_like(alpha_, *product), *product, s);
  if (shift) total = add(total, *shift, s);
  return {total};
}

std::vector<array> Softmax::vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                                const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& y = outputs[0];
  const array& c = cotangents[0];
  return {multiply(y, subtract(c, sum(multiply(c, y, s), -1, true, s), s), s)};
}

std::vector<array> Softmax::jvp(const std::vector<array>&, const std::vector<array>& tangents,
                                const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& y = outputs[0];
  const array& t = tangents[0];
  return {multiply(y, subtract(t, sum(multiply(t, y, s), -1, true, s), s), s)};
}

}  // namespace braid
