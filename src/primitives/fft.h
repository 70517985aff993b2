// The discrete Fourier transforms (braid/fft.h). Kept out of primitives.h: only the fft op,
// its derivatives, vmap and the backends' fft files need it.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// The discrete Fourier transform over `axes` (non-negative, unique; the op pads or truncates
/// the input first). Complex: complex64 in and out, same shape. Real forward: float32 in, the
/// last of `axes` keeps n / 2 + 1 frequencies. Real inverse: the input's last of `axes` holds
/// n / 2 + 1 frequencies, the output n real values (n comes from the output's shape), and the
/// imaginary parts of the zero and Nyquist frequencies are ignored. The inverse transforms
/// divide by the product of the transformed sizes. Multi-axis transforms apply the axes one at
/// a time: a real forward transform starts with the last axis, a real inverse ends with it.
class FFT : public UnaryPrimitive {
 public:
  FFT(Stream s, std::vector<int> axes, bool inverse, bool real)
      : UnaryPrimitive(std::move(s)), axes_(std::move(axes)), inverse_(inverse), real_(real) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "FFT"; }
  bool is_equivalent(const Primitive& other) const override {
    const auto* o = dynamic_cast<const FFT*>(&other);
    return o && axes_ == o->axes_ && inverse_ == o->inverse_ && real_ == o->real_;
  }
  const std::vector<int>& axes() const { return axes_; }
  bool inverse() const { return inverse_; }
  bool real() const { return real_; }

 private:
  std::vector<int> axes_;
  bool inverse_;
  bool real_;
};

#define BRAID_FFT_PRIMITIVES(X) X(FFT)

}  // namespace braid
