// braid::fft (MLX's mlx/fft.h): validate, pad or truncate the input to the requested sizes, cast
// it to the transform's dtype and build one FFT node, scaled for `norm` by a multiply after it (so
// derivatives and vmap need nothing more); fftshift and ifftshift are rolls, fftfreq and
// rfftfreq aranges.
#include "braid/fft.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/fft.h"

namespace braid::fft {

namespace {

using detail::throw_invalid;

std::string list_str(const std::vector<int>& v) {
  std::string r = "(";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r + ")";
}

std::vector<int> all_axes(const array& a) {
  std::vector<int> axes(a.ndim());
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

// What the FFT node's output is multiplied by for `norm`: the node computes NumPy's "backward"
// (the inverse divided by N, the product of the sizes `n`).
double norm_scale(FFTNorm norm, const Shape& n, bool inverse) {
  double size = 1.0;
  for (int v : n) size *= v;
  switch (norm) {
    case FFTNorm::Backward: return 1.0;
    case FFTNorm::Ortho: return inverse ? std::sqrt(size) : 1.0 / std::sqrt(size);
    case FFTNorm::Forward: return inverse ? size : 1.0 / size;
  }
  throw_invalid("fftn", "Invalid FFT normalization mode.");
}

// The three kinds of transform: complex to complex (same shape in and out), real forward (n
// real values in, n / 2 + 1 frequencies out along the last axis) and real inverse (the reverse).
array fft_impl(const array& a, const Shape& n, const std::vector<int>& axes, bool real, bool inverse,
               FFTNorm norm, StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  if (nd < 1) throw_invalid("fftn", "Requires array with at least one dimension.");
  if (n.size() != axes.size()) throw_invalid("fftn", "Shape and axes have different sizes.");
  if (axes.empty()) return a;

  std::vector<int> valid(axes);
  for (int& ax : valid) ax = ax < 0 ? ax + nd : ax;
  const std::set<int> unique(valid.begin(), valid.end());
  if (unique.size() != valid.size()) throw_invalid("fftn", "Duplicated axis received " + list_str(axes));
  if (*unique.begin() < 0 || *unique.rbegin() >= nd) {
    throw_invalid("fftn", "Invalid axis received for array with " + std::to_string(nd) + " dimensions.");
  }
  if (std::any_of(n.begin(), n.end(), [](int v) { return v <= 0; })) {
    throw_invalid("fftn", "Invalid FFT output size requested " + detail::shape_str(n));
  }
  const double scale = norm_scale(norm, n, inverse);
  Stream st = detail::op_stream(std::move(s), "fftn");

  // The shape the transform reads: n along the axes, except a real inverse, whose last axis
  // holds n.back() / 2 + 1 frequencies.
  Shape in_shape = a.shape();
  for (size_t i = 0; i < valid.size(); ++i) in_shape[valid[i]] = n[i];
  if (real && inverse) in_shape[valid.back()] = n.back() / 2 + 1;

  array in = a;
  Shape stop = a.shape();
  bool truncate = false;
  std::vector<int> pad_axes;
  Shape pad_high;
  for (int d = 0; d < nd; ++d) {
    if (in_shape[d] < a.shape(d)) {
      stop[d] = in_shape[d];
      truncate = true;
    } else if (in_shape[d] > a.shape(d)) {
      pad_axes.push_back(d);
      pad_high.push_back(in_shape[d] - a.shape(d));
    }
  }
  if (truncate) in = slice(in, Shape(nd, 0), stop, st);
  if (!pad_axes.empty()) {
    in = pad(in, pad_axes, Shape(pad_axes.size(), 0), pad_high, array(0, in.dtype()), "constant", st);
  }

  Shape out_shape = in_shape;
  if (real) out_shape[valid.back()] = inverse ? n.back() : n.back() / 2 + 1;
  const Dtype in_type = real && !inverse ? float32 : complex64;
  const Dtype out_type = real && inverse ? float32 : complex64;
  array out(std::move(out_shape), out_type, detail::make_pooled<FFT>(st, std::move(valid), inverse, real),
            {astype(in, in_type, st)});
  return scale == 1.0 ? out : multiply(out, array(scale, out_type), st);
}

// The sizes along `axes` as they are in `a` (the inverse real transform's last one is the size
// its n / 2 + 1 frequencies came from, assuming an even n, as MLX and NumPy do).
array fft_impl(const array& a, const std::vector<int>& axes, bool real, bool inverse, FFTNorm norm,
               StreamOrDevice s) {
  const int nd = static_cast<int>(a.ndim());
  Shape n;
  for (int ax : axes) {
    // An out-of-range axis is reported by the checks above; its size here is a placeholder.
    const int v = ax < 0 ? ax + nd : ax;
    n.push_back(v >= 0 && v < nd ? a.shape(v) : 1);
  }
  if (real && inverse && !n.empty()) n.back() = (n.back() - 1) * 2;
  return fft_impl(a, n, axes, real, inverse, norm, std::move(s));
}

array fft_impl(const array& a, bool real, bool inverse, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, all_axes(a), real, inverse, norm, std::move(s));
}

// fftshift and ifftshift: a roll along each axis by shift(size).
template <typename Shift>
array shift_impl(const array& a, const std::vector<int>& axes, const char* op, Shift shift,
                 StreamOrDevice s) {
  if (axes.empty()) return a;
  const int nd = static_cast<int>(a.ndim());
  Shape shifts;
  for (int ax : axes) {
    const int v = ax < 0 ? ax + nd : ax;
    if (v < 0 || v >= nd) {
      throw_invalid(op, "Invalid axis " + std::to_string(ax) + " for array with " + std::to_string(nd) +
                            " dimensions.");
    }
    shifts.push_back(shift(a.shape(v)));
  }
  return roll(a, shifts, axes, std::move(s));
}

int half_down(int size) { return size / 2; }
int half_up(int size) { return (size + 1) / 2; }

void check_frequencies(const char* op, int n, double d) {
  if (n <= 0) throw_invalid(op, "`n` must be greater than 0.");
  if (d == 0.0) throw_invalid(op, "`d` must be non-zero.");
}

}  // namespace

array fftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, n, axes, false, false, norm, std::move(s));
}
array fftn(const array& a, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, axes, false, false, norm, std::move(s));
}
array fftn(const array& a, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, false, false, norm, std::move(s));
}

array ifftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, n, axes, false, true, norm, std::move(s));
}
array ifftn(const array& a, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, axes, false, true, norm, std::move(s));
}
array ifftn(const array& a, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, false, true, norm, std::move(s));
}

array rfftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, n, axes, true, false, norm, std::move(s));
}
array rfftn(const array& a, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, axes, true, false, norm, std::move(s));
}
array rfftn(const array& a, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, true, false, norm, std::move(s));
}

array irfftn(const array& a, const Shape& n, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, n, axes, true, true, norm, std::move(s));
}
array irfftn(const array& a, const std::vector<int>& axes, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, axes, true, true, norm, std::move(s));
}
array irfftn(const array& a, FFTNorm norm, StreamOrDevice s) {
  return fft_impl(a, true, true, norm, std::move(s));
}

array fftshift(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return shift_impl(a, axes, "fftshift", half_down, std::move(s));
}
array fftshift(const array& a, StreamOrDevice s) {
  return a.ndim() < 1 ? a : fftshift(a, all_axes(a), std::move(s));
}

array ifftshift(const array& a, const std::vector<int>& axes, StreamOrDevice s) {
  return shift_impl(a, axes, "ifftshift", half_up, std::move(s));
}
array ifftshift(const array& a, StreamOrDevice s) {
  return a.ndim() < 1 ? a : ifftshift(a, all_axes(a), std::move(s));
}

// NumPy's fftfreq: the frequencies -(n / 2) ... (n - 1) / 2 with zero rolled to the front.
array fftfreq(int n, double d, StreamOrDevice s) {
  check_frequencies("fftfreq", n, d);
  Stream st = detail::op_stream(std::move(s), "fftfreq");
  const array k =
      ifftshift(arange(static_cast<double>(-(n / 2)), static_cast<double>((n + 1) / 2), float32, st), st);
  return multiply(k, array(static_cast<float>(1.0 / (n * d)), float32), st);
}

array rfftfreq(int n, double d, StreamOrDevice s) {
  check_frequencies("rfftfreq", n, d);
  Stream st = detail::op_stream(std::move(s), "rfftfreq");
  return multiply(arange(static_cast<double>(n / 2 + 1), float32, st),
                  array(static_cast<float>(1.0 / (n * d)), float32), st);
}

}  // namespace braid::fft
