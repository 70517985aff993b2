// braid::fft: MLX's mlx/fft.h, with MLX's names, signatures, defaults and semantics.
//
// The complex transforms (fft*, ifft*) return complex64, a real input cast first; the real ones
// take float32 (rfft*: a complex input loses its imaginary part) or return it (irfft*). The
// forward transforms are unnormalized, the inverse ones divide by the product of the sizes
// (NumPy's "backward" norm). Sizes `n` pad the input with zeros or truncate it along each axis
// before the transform; for irfft* they are the sizes of the output, the input's last
// transformed axis being padded or truncated to n.back() / 2 + 1. Every transform is
// differentiable (vjp, jvp) and vectorizable (vmap).
//
// Every function validates its arguments and throws std::invalid_argument("[fftn] ...") (the
// shifts: "[fftshift] ...", "[ifftshift] ...") before any node exists. Like the ops, every
// function is thread-safe: any thread may build a transform and any other evaluate it.
#pragma once

#include <vector>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid::fft {

/// The n-dimensional discrete Fourier transform of `a` over `axes`, each padded or truncated
/// to its size in `n` (as many sizes as axes); complex64.
array fftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {});
/// fftn over `axes` at their sizes in `a`.
array fftn(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});
/// fftn over every axis of `a`.
array fftn(const array& a, StreamOrDevice s = {});

/// The n-dimensional inverse transform (divided by the product of the sizes), as fftn.
array ifftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {});
/// ifftn over `axes` at their sizes in `a`.
array ifftn(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});
/// ifftn over every axis of `a`.
array ifftn(const array& a, StreamOrDevice s = {});

/// The one-dimensional transform along `axis`, padded or truncated to `n`.
inline array fft(const array& a, int n, int axis, StreamOrDevice s = {}) { return fftn(a, {n}, {axis}, s); }
/// The one-dimensional transform along `axis` (default the last) at its size.
inline array fft(const array& a, int axis = -1, StreamOrDevice s = {}) { return fftn(a, {axis}, s); }

/// The one-dimensional inverse transform along `axis`, padded or truncated to `n`.
inline array ifft(const array& a, int n, int axis, StreamOrDevice s = {}) { return ifftn(a, {n}, {axis}, s); }
/// The one-dimensional inverse transform along `axis` (default the last) at its size.
inline array ifft(const array& a, int axis = -1, StreamOrDevice s = {}) { return ifftn(a, {axis}, s); }

/// The two-dimensional transform over `axes` at sizes `n`.
inline array fft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {}) {
  return fftn(a, n, axes, s);
}
/// The two-dimensional transform over `axes` (default the last two) at their sizes.
inline array fft2(const array& a, const std::vector<int>& axes = {-2, -1}, StreamOrDevice s = {}) {
  return fftn(a, axes, s);
}

/// The two-dimensional inverse transform over `axes` at sizes `n`.
inline array ifft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {}) {
  return ifftn(a, n, axes, s);
}
/// The two-dimensional inverse transform over `axes` (default the last two) at their sizes.
inline array ifft2(const array& a, const std::vector<int>& axes = {-2, -1}, StreamOrDevice s = {}) {
  return ifftn(a, axes, s);
}

/// The n-dimensional transform of the real (float32) `a` over `axes` at sizes `n`: the last
/// axis of `axes` keeps the n.back() / 2 + 1 non-negative frequencies; complex64.
array rfftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {});
/// rfftn over `axes` at their sizes in `a`.
array rfftn(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});
/// rfftn over every axis of `a`.
array rfftn(const array& a, StreamOrDevice s = {});

/// The inverse of rfftn: a float32 result of sizes `n` over `axes`, the input's last axis of
/// `axes` padded or truncated to n.back() / 2 + 1 (the imaginary parts of its zero and, for an
/// even size, its Nyquist frequency are ignored).
array irfftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {});
/// irfftn over `axes`, sizes those of `a` except the last: 2 * (a.shape(axes.back()) - 1).
array irfftn(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});
/// irfftn over every axis of `a`.
array irfftn(const array& a, StreamOrDevice s = {});

/// The one-dimensional transform of a real input along `axis` at size `n` (n / 2 + 1 outputs).
inline array rfft(const array& a, int n, int axis, StreamOrDevice s = {}) { return rfftn(a, {n}, {axis}, s); }
/// The one-dimensional transform of a real input along `axis` (default the last).
inline array rfft(const array& a, int axis = -1, StreamOrDevice s = {}) { return rfftn(a, {axis}, s); }
/// The inverse of rfft: `n` real outputs along `axis`.
inline array irfft(const array& a, int n, int axis, StreamOrDevice s = {}) {
  return irfftn(a, {n}, {axis}, s);
}
/// The inverse of rfft along `axis` (default the last): 2 * (a.shape(axis) - 1) outputs.
inline array irfft(const array& a, int axis = -1, StreamOrDevice s = {}) { return irfftn(a, {axis}, s); }

/// The two-dimensional transform of a real input over `axes` at sizes `n`.
inline array rfft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {}) {
  return rfftn(a, n, axes, s);
}
/// The two-dimensional transform of a real input over `axes` (default the last two).
inline array rfft2(const array& a, const std::vector<int>& axes = {-2, -1}, StreamOrDevice s = {}) {
  return rfftn(a, axes, s);
}

/// The inverse of rfft2 with output sizes `n` over `axes`.
inline array irfft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s = {}) {
  return irfftn(a, n, axes, s);
}
/// The inverse of rfft2 over `axes` (default the last two).
inline array irfft2(const array& a, const std::vector<int>& axes = {-2, -1}, StreamOrDevice s = {}) {
  return irfftn(a, axes, s);
}

/// Moves the zero frequency to the center: a roll by shape / 2 along every axis (a 0-d array
/// is returned as it is).
array fftshift(const array& a, StreamOrDevice s = {});
/// fftshift along `axes` only.
array fftshift(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});

/// The inverse of fftshift: a roll by (shape + 1) / 2 along every axis.
array ifftshift(const array& a, StreamOrDevice s = {});
/// ifftshift along `axes` only.
array ifftshift(const array& a, const std::vector<int>& axes, StreamOrDevice s = {});

}  // namespace braid::fft
