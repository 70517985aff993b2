// Derivatives of the Fourier transforms. Every transform is linear, so its jvp is the same
// transform of the tangent and its vjp the adjoint transform of the cotangent (MLX's complex
// convention: the cotangent of z = x + iy is dL/dx + i dL/dy, so a complex-linear map A has
// the vjp A^H g, and a real input takes the real part).
#include <vector>

#include "braid/fft.h"
#include "braid/ops.h"
#include "primitives/fft.h"
#include "primitives/grad_utils.h"

namespace braid {

using detail::scalar_like;

namespace {

// The sizes of `a` along `axes`, and their product.
Shape sizes_along(const array& a, const std::vector<int>& axes) {
  Shape n;
  for (int ax : axes) n.push_back(a.shape(ax));
  return n;
}

double product(const Shape& n) {
  double p = 1.0;
  for (int v : n) p *= v;
  return p;
}

}  // namespace

std::vector<array> FFT::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                            const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& in = primals[0];
  const array& g = cotangents[0];
  if (!real_) {
    // The forward DFT's adjoint is N times the inverse DFT; the inverse's is the forward / N.
    const double n = product(sizes_along(in, axes_));
    if (!inverse_) return {multiply(fft::ifftn(g, axes_, s), scalar_like(n, g), s)};
    return {multiply(fft::fftn(g, axes_, s), scalar_like(1.0 / n, g), s)};
  }
  if (!inverse_) {
    // y = P F x with P keeping the first n / 2 + 1 frequencies of the last axis: the adjoint
    // is Re(F^H P^T g), N times the inverse transform of g zero-padded back to n.
    const Shape n = sizes_along(in, axes_);
    array x = braid::real(fft::ifftn(g, n, axes_, s), s);
    return {multiply(x, scalar_like(product(n), x), s)};
  }
  // x = C2R(F^-1 X) over the other axes first. C2R's adjoint is the forward real transform
  // divided by n, doubled at the frequencies that also stand for their conjugate (all but the
  // zero and, for an even n, the Nyquist one); F^-1's is F / N.
  const Shape n = sizes_along(outputs[0], axes_);
  const int last = axes_.back();
  const int len = n.back(), bins = len / 2 + 1;
  const double scale = 1.0 / product(n);
  std::vector<float> weights(bins, static_cast<float>(2.0 * scale));
  weights[0] = static_cast<float>(scale);
  if (len % 2 == 0) weights[bins - 1] = static_cast<float>(scale);
  Shape weight_shape(in.ndim(), 1);
  weight_shape[last] = bins;
  return {multiply(fft::rfftn(g, n, axes_, s), array(weights.begin(), weight_shape, float32), s)};
}

std::vector<array> FFT::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                            const std::vector<int>&, const std::vector<array>& outputs) {
  const Stream& s = stream();
  const array& t = tangents[0];
  if (!real_) return {inverse_ ? fft::ifftn(t, axes_, s) : fft::fftn(t, axes_, s)};
  if (!inverse_) return {fft::rfftn(t, sizes_along(primals[0], axes_), axes_, s)};
  return {fft::irfftn(t, sizes_along(outputs[0], axes_), axes_, s)};
}

}  // namespace braid
