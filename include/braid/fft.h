// braid::fft: MLX's mlx/fft.h, with MLX's names, signatures, defaults and semantics.
//
// The complex transforms (fft*, ifft*) return complex64, a real input cast first; the real ones
// take float32 (rfft*: a complex input loses its imaginary part) or return it (irfft*). `norm`
// scales them as NumPy's: Backward (the default) leaves the forward transforms unscaled and
// divides the inverse ones by N, Ortho divides both by sqrt(N), Forward divides the forward ones
// by N and leaves the inverse ones unscaled; N is the product of the transformed sizes (for
// irfft*, those of the output). Sizes `n` pad the input with zeros or truncate it along each axis
// before the transform; for irfft* they are the sizes of the output, the input's last
// transformed axis being padded or truncated to n.back() / 2 + 1. Every transform, under every
// norm, is differentiable (vjp, jvp) and vectorizable (vmap).
//
// As in MLX, `norm` comes before the stream. The forms without it that take a stream (MLX's
// signatures before it had `norm`) are kept at the end, so that code written for them compiles.
//
// Every function validates its arguments and throws std::invalid_argument("[fftn] ...") (the
// shifts: "[fftshift] ...", "[ifftshift] ...", the frequencies: "[fftfreq] ...",
// "[rfftfreq] ...") before any node exists. Like the ops, every function is thread-safe: any
// thread may build a transform and any other evaluate it.
#pragma once

#include <vector>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid::fft {

/// How a transform is scaled, as NumPy's `norm` ("backward", "ortho", "forward"): see above.
enum class FFTNorm { Backward, Ortho, Forward };

/// The n-dimensional discrete Fourier transform of `a` over `axes`, each padded or truncated
/// to its size in `n` (as many sizes as axes); complex64.
array fftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
           StreamOrDevice s = {});
/// fftn over `axes` at their sizes in `a`.
array fftn(const array& a, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
           StreamOrDevice s = {});
/// fftn over every axis of `a`.
array fftn(const array& a, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {});

/// The n-dimensional inverse transform (by default divided by the product of the sizes), as fftn.
array ifftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
            StreamOrDevice s = {});
/// ifftn over `axes` at their sizes in `a`.
array ifftn(const array& a, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
            StreamOrDevice s = {});
/// ifftn over every axis of `a`.
array ifftn(const array& a, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {});

/// The one-dimensional transform along `axis`, padded or truncated to `n`.
inline array fft(const array& a, int n, int axis, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return fftn(a, {n}, {axis}, norm, s);
}
/// The one-dimensional transform along `axis` (default the last) at its size.
inline array fft(const array& a, int axis = -1, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return fftn(a, {axis}, norm, s);
}

/// The one-dimensional inverse transform along `axis`, padded or truncated to `n`.
inline array ifft(const array& a, int n, int axis, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return ifftn(a, {n}, {axis}, norm, s);
}
/// The one-dimensional inverse transform along `axis` (default the last) at its size.
inline array ifft(const array& a, int axis = -1, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return ifftn(a, {axis}, norm, s);
}

/// The two-dimensional transform over `axes` at sizes `n`.
inline array fft2(const array& a, const Shape& n, const std::vector<int>& axes,
                  FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return fftn(a, n, axes, norm, s);
}
/// The two-dimensional transform over `axes` (default the last two) at their sizes.
inline array fft2(const array& a, const std::vector<int>& axes = {-2, -1}, FFTNorm norm = FFTNorm::Backward,
                  StreamOrDevice s = {}) {
  return fftn(a, axes, norm, s);
}

/// The two-dimensional inverse transform over `axes` at sizes `n`.
inline array ifft2(const array& a, const Shape& n, const std::vector<int>& axes,
                   FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return ifftn(a, n, axes, norm, s);
}
/// The two-dimensional inverse transform over `axes` (default the last two) at their sizes.
inline array ifft2(const array& a, const std::vector<int>& axes = {-2, -1}, FFTNorm norm = FFTNorm::Backward,
                   StreamOrDevice s = {}) {
  return ifftn(a, axes, norm, s);
}

/// The n-dimensional transform of the real (float32) `a` over `axes` at sizes `n`: the last
/// axis of `axes` keeps the n.back() / 2 + 1 non-negative frequencies; complex64.
array rfftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
            StreamOrDevice s = {});
/// rfftn over `axes` at their sizes in `a`.
array rfftn(const array& a, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
            StreamOrDevice s = {});
/// rfftn over every axis of `a`.
array rfftn(const array& a, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {});

/// The inverse of rfftn: a float32 result of sizes `n` over `axes`, the input's last axis of
/// `axes` padded or truncated to n.back() / 2 + 1 (the imaginary parts of its zero and, for an
/// even size, its Nyquist frequency are ignored).
array irfftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
             StreamOrDevice s = {});
/// irfftn over `axes`, sizes those of `a` except the last: 2 * (a.shape(axes.back()) - 1).
array irfftn(const array& a, const std::vector<int>& axes, FFTNorm norm = FFTNorm::Backward,
             StreamOrDevice s = {});
/// irfftn over every axis of `a`.
array irfftn(const array& a, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {});

/// The one-dimensional transform of a real input along `axis` at size `n` (n / 2 + 1 outputs).
inline array rfft(const array& a, int n, int axis, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return rfftn(a, {n}, {axis}, norm, s);
}
/// The one-dimensional transform of a real input along `axis` (default the last).
inline array rfft(const array& a, int axis = -1, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return rfftn(a, {axis}, norm, s);
}
/// The inverse of rfft: `n` real outputs along `axis`.
inline array irfft(const array& a, int n, int axis, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return irfftn(a, {n}, {axis}, norm, s);
}
/// The inverse of rfft along `axis` (default the last): 2 * (a.shape(axis) - 1) outputs.
inline array irfft(const array& a, int axis = -1, FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return irfftn(a, {axis}, norm, s);
}

/// The two-dimensional transform of a real input over `axes` at sizes `n`.
inline array rfft2(const array& a, const Shape& n, const std::vector<int>& axes,
                   FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return rfftn(a, n, axes, norm, s);
}
/// The two-dimensional transform of a real input over `axes` (default the last two).
inline array rfft2(const array& a, const std::vector<int>& axes = {-2, -1}, FFTNorm norm = FFTNorm::Backward,
                   StreamOrDevice s = {}) {
  return rfftn(a, axes, norm, s);
}

/// The inverse of rfft2 with output sizes `n` over `axes`.
inline array irfft2(const array& a, const Shape& n, const std::vector<int>& axes,
                    FFTNorm norm = FFTNorm::Backward, StreamOrDevice s = {}) {
  return irfftn(a, n, axes, norm, s);
}
/// The inverse of rfft2 over `axes` (default the last two).
inline array irfft2(const array& a, const std::vector<int>& axes = {-2, -1}, FFTNorm norm = FFTNorm::Backward,
                    StreamOrDevice s = {}) {
  return irfftn(a, axes, norm, s);
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

/// The frequencies of the n bins of fft for samples `d` apart, in fft's order:
/// [0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (n * d); float32. Needs n > 0 and d != 0.
array fftfreq(int n, double d = 1.0, StreamOrDevice s = {});
/// The frequencies of the n / 2 + 1 bins of rfft: [0, 1, ..., n / 2] / (n * d); float32.
array rfftfreq(int n, double d = 1.0, StreamOrDevice s = {});

// MLX's forms before `norm` (Backward), the stream required: fft(a, n, axis, s) and the like.

inline array fftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return fftn(a, n, axes, FFTNorm::Backward, s);
}
inline array fftn(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return fftn(a, axes, FFTNorm::Backward, s);
}
inline array fftn(const array& a, StreamOrDevice s) { return fftn(a, FFTNorm::Backward, s); }
inline array ifftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return ifftn(a, n, axes, FFTNorm::Backward, s);
}
inline array ifftn(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return ifftn(a, axes, FFTNorm::Backward, s);
}
inline array ifftn(const array& a, StreamOrDevice s) { return ifftn(a, FFTNorm::Backward, s); }
inline array rfftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return rfftn(a, n, axes, FFTNorm::Backward, s);
}
inline array rfftn(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return rfftn(a, axes, FFTNorm::Backward, s);
}
inline array rfftn(const array& a, StreamOrDevice s) { return rfftn(a, FFTNorm::Backward, s); }
inline array irfftn(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return irfftn(a, n, axes, FFTNorm::Backward, s);
}
inline array irfftn(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return irfftn(a, axes, FFTNorm::Backward, s);
}
inline array irfftn(const array& a, StreamOrDevice s) { return irfftn(a, FFTNorm::Backward, s); }

inline array fft(const array& a, int n, int axis, StreamOrDevice s) {
  return fft(a, n, axis, FFTNorm::Backward, s);
}
inline array fft(const array& a, int axis, StreamOrDevice s) { return fft(a, axis, FFTNorm::Backward, s); }
inline array ifft(const array& a, int n, int axis, StreamOrDevice s) {
  return ifft(a, n, axis, FFTNorm::Backward, s);
}
inline array ifft(const array& a, int axis, StreamOrDevice s) { return ifft(a, axis, FFTNorm::Backward, s); }
inline array rfft(const array& a, int n, int axis, StreamOrDevice s) {
  return rfft(a, n, axis, FFTNorm::Backward, s);
}
inline array rfft(const array& a, int axis, StreamOrDevice s) { return rfft(a, axis, FFTNorm::Backward, s); }
inline array irfft(const array& a, int n, int axis, StreamOrDevice s) {
  return irfft(a, n, axis, FFTNorm::Backward, s);
}
inline array irfft(const array& a, int axis, StreamOrDevice s) {
  return irfft(a, axis, FFTNorm::Backward, s);
}

inline array fft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return fft2(a, n, axes, FFTNorm::Backward, s);
}
inline array fft2(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return fft2(a, axes, FFTNorm::Backward, s);
}
inline array ifft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return ifft2(a, n, axes, FFTNorm::Backward, s);
}
inline array ifft2(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return ifft2(a, axes, FFTNorm::Backward, s);
}
inline array rfft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return rfft2(a, n, axes, FFTNorm::Backward, s);
}
inline array rfft2(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return rfft2(a, axes, FFTNorm::Backward, s);
}
inline array irfft2(const array& a, const Shape& n, const std::vector<int>& axes, StreamOrDevice s) {
  return irfft2(a, n, axes, FFTNorm::Backward, s);
}
inline array irfft2(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return irfft2(a, axes, FFTNorm::Backward, s);
}

}  // namespace braid::fft
