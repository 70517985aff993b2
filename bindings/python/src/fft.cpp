// braid.core.fft: mlx.core.fft's transforms, shifts and frequencies, with its argument names (a,
// n or s, axis or axes, norm, stream) and defaults. As in MLX, the n-dimensional forms refuse
// sizes `s` without `axes`.
#include "braid/fft.h"

#include "ops_args.h"

namespace braid::python {

namespace {

using Norm = fft::FFTNorm;

// norm: "backward", "ortho" or "forward", NumPy's names.
Norm arg_norm(py::handle obj, const char* fn) {
  if (!PyUnicode_Check(obj.ptr())) throw_arg_type(fn, "norm", "a str", obj);
  const auto name = obj.cast<std::string>();
  if (name == "backward") return Norm::Backward;
  if (name == "ortho") return Norm::Ortho;
  if (name == "forward") return Norm::Forward;
  throw std::invalid_argument(std::string("[") + fn + "] Invalid norm \"" + name +
                              "\"; expected \"backward\", \"ortho\" or \"forward\".");
}

// fft, ifft, rfft, irfft: (a, n=None, axis=-1, norm="backward").
template <typename WithSize, typename AtSize>
void def_one_axis(py::module_& m, const char* name, WithSize with_size, AtSize at_size, const char* doc) {
  m.def(
      name,
      [name, with_size, at_size](py::object a, py::object n, int axis, py::object norm, StreamOrDevice s) {
        array x = arg_array(a, name, "a");
        const Norm how = arg_norm(norm, name);
        if (n.is_none()) return at_size(x, axis, how, s);
        return with_size(x, arg_int(n, name, "n"), axis, how, s);
      },
      "a"_a, "n"_a = py::none(), "axis"_a = -1, "norm"_a = "backward", "stream"_a = py::none(), doc);
}

// fft2, fftn and their kin: (a, s=None, axes=..., norm="backward"), axes defaulting to the last
// two axes for the two-dimensional forms and to every axis (None) for the n-dimensional ones.
template <typename WithSizes, typename AtSizes, typename AllAxes>
void def_axes(py::module_& m, const char* name, bool two_dims, WithSizes with_sizes, AtSizes at_sizes,
              AllAxes all_axes, const char* doc) {
  auto body = [name, with_sizes, at_sizes, all_axes](py::object a, py::object sizes, py::object axes,
                                                     py::object norm, StreamOrDevice s) {
    array x = arg_array(a, name, "a");
    const Norm how = arg_norm(norm, name);
    if (!axes.is_none() && !sizes.is_none()) {
      return with_sizes(x, arg_shape(sizes, name, "s"), arg_ints(axes, name, "axes"), how, s);
    }
    if (!axes.is_none()) return at_sizes(x, arg_ints(axes, name, "axes"), how, s);
    if (!sizes.is_none()) {
      throw std::invalid_argument(std::string("[") + name +
                                  "] `axes` should not be `None` if `s` is not `None`.");
    }
    return all_axes(x, how, s);
  };
  if (two_dims) {
    m.def(name, body, "a"_a, "s"_a = py::none(), "axes"_a.none(true) = py::make_tuple(-2, -1),
          "norm"_a = "backward", "stream"_a = py::none(), doc);
  } else {
    m.def(name, body, "a"_a, "s"_a = py::none(), "axes"_a = py::none(), "norm"_a = "backward",
          "stream"_a = py::none(), doc);
  }
}

// fftshift, ifftshift: (a, axes=None); axes may also be one int, as NumPy's.
template <typename Along, typename Every>
void def_shift(py::module_& m, const char* name, Along along, Every every, const char* doc) {
  m.def(
      name,
      [name, along, every](py::object a, py::object axes, StreamOrDevice s) {
        array x = arg_array(a, name, "a");
        if (axes.is_none()) return every(x, s);
        return along(x, arg_int_or_ints(axes, 0, name, "axes"), s);
      },
      "a"_a, "axes"_a = py::none(), "stream"_a = py::none(), doc);
}

// fftfreq, rfftfreq: (n, d=1.0).
template <typename Frequencies>
void def_frequencies(py::module_& m, const char* name, Frequencies frequencies, const char* doc) {
  m.def(
      name,
      [name, frequencies](py::object n, double d, StreamOrDevice s) {
        return frequencies(arg_int(n, name, "n"), d, s);
      },
      "n"_a, "d"_a = 1.0, "stream"_a = py::none(), doc);
}

using Axes = std::vector<int>;
using Sd = StreamOrDevice;

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  auto f = m.def_submodule("fft", "braid.core.fft: discrete Fourier transforms, as mlx.core.fft.");

  def_one_axis(
      f, "fft",
      [](const array& a, int n, int axis, Norm norm, Sd s) { return fft::fft(a, n, axis, norm, s); },
      [](const array& a, int axis, Norm norm, Sd s) { return fft::fft(a, axis, norm, s); },
      "One-dimensional discrete Fourier transform along `axis`, the input padded with zeros or truncated to "
      "`n` (default a.shape[axis]). `norm` scales it as NumPy's: not at all (\"backward\", the default), "
      "by 1 / sqrt(n) (\"ortho\") or by 1 / n (\"forward\"). Returns complex64.");
  def_one_axis(
      f, "ifft",
      [](const array& a, int n, int axis, Norm norm, Sd s) { return fft::ifft(a, n, axis, norm, s); },
      [](const array& a, int axis, Norm norm, Sd s) { return fft::ifft(a, axis, norm, s); },
      "One-dimensional inverse discrete Fourier transform along `axis`, the input padded or truncated to "
      "`n`; scaled by 1 / n (\"backward\", the default), 1 / sqrt(n) (\"ortho\") or not at all "
      "(\"forward\").");
  def_one_axis(
      f, "rfft",
      [](const array& a, int n, int axis, Norm norm, Sd s) { return fft::rfft(a, n, axis, norm, s); },
      [](const array& a, int axis, Norm norm, Sd s) { return fft::rfft(a, axis, norm, s); },
      "One-dimensional transform of a real input (a complex input is cast to a real type): n // 2 + 1 "
      "complex outputs along `axis`, scaled as fft's for `norm`.");
  def_one_axis(
      f, "irfft",
      [](const array& a, int n, int axis, Norm norm, Sd s) { return fft::irfft(a, n, axis, norm, s); },
      [](const array& a, int axis, Norm norm, Sd s) { return fft::irfft(a, axis, norm, s); },
      "The inverse of rfft: `n` real outputs along `axis` (default 2 * (a.shape[axis] - 1)), the input "
      "padded or truncated to n // 2 + 1; scaled as ifft's for `norm`.");

  def_axes(
      f, "fft2", true,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::fft2(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::fft2(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::fftn(a, norm, s); },
      "Two-dimensional discrete Fourier transform over `axes` (default [-2, -1]) at sizes `s`; `norm` as "
      "fft's, n the product of the sizes.");
  def_axes(
      f, "ifft2", true,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::ifft2(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::ifft2(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::ifftn(a, norm, s); },
      "Two-dimensional inverse discrete Fourier transform over `axes` (default [-2, -1]) at sizes `s`; "
      "`norm` as ifft's, n the product of the sizes.");
  def_axes(
      f, "fftn", false,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::fftn(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::fftn(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::fftn(a, norm, s); },
      "n-dimensional discrete Fourier transform over `axes` (default every axis) at sizes `s`; `norm` as "
      "fft's, n the product of the sizes.");
  def_axes(
      f, "ifftn", false,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::ifftn(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::ifftn(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::ifftn(a, norm, s); },
      "n-dimensional inverse discrete Fourier transform over `axes` (default every axis) at sizes `s`; "
      "`norm` as ifft's, n the product of the sizes.");
  def_axes(
      f, "rfft2", true,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::rfft2(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::rfft2(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::rfftn(a, norm, s); },
      "Two-dimensional transform of a real input over `axes` (default [-2, -1]): the last axis keeps "
      "s[-1] // 2 + 1 frequencies; `norm` as fft2's.");
  def_axes(
      f, "irfft2", true,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::irfft2(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::irfft2(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::irfftn(a, norm, s); },
      "The inverse of rfft2: real outputs of sizes `s` over `axes` (default [-2, -1]); `norm` as ifft2's, n "
      "the product of the output sizes.");
  def_axes(
      f, "rfftn", false,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::rfftn(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::rfftn(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::rfftn(a, norm, s); },
      "n-dimensional transform of a real input over `axes` (default every axis): the last axis keeps "
      "s[-1] // 2 + 1 frequencies; `norm` as fftn's.");
  def_axes(
      f, "irfftn", false,
      [](const array& a, const Shape& n, const Axes& ax, Norm norm, Sd s) {
        return fft::irfftn(a, n, ax, norm, s);
      },
      [](const array& a, const Axes& ax, Norm norm, Sd s) { return fft::irfftn(a, ax, norm, s); },
      [](const array& a, Norm norm, Sd s) { return fft::irfftn(a, norm, s); },
      "The inverse of rfftn: real outputs of sizes `s` over `axes` (default every axis); `norm` as ifftn's, "
      "n the product of the output sizes.");

  def_shift(
      f, "fftshift", [](const array& a, const Axes& ax, Sd s) { return fft::fftshift(a, ax, s); },
      [](const array& a, Sd s) { return fft::fftshift(a, s); },
      "Moves the zero frequency to the center: a roll by shape // 2 along `axes` (default every axis).");
  def_shift(
      f, "ifftshift", [](const array& a, const Axes& ax, Sd s) { return fft::ifftshift(a, ax, s); },
      [](const array& a, Sd s) { return fft::ifftshift(a, s); },
      "The inverse of fftshift: a roll by (shape + 1) // 2 along `axes` (default every axis).");

  def_frequencies(
      f, "fftfreq", [](int n, double d, Sd s) { return fft::fftfreq(n, d, s); },
      "The sample frequencies of fft's n bins for samples `d` apart: [0, 1, ..., (n - 1) // 2, -(n // 2), "
      "..., -1] / (n * d), float32.");
  def_frequencies(
      f, "rfftfreq", [](int n, double d, Sd s) { return fft::rfftfreq(n, d, s); },
      "The sample frequencies of rfft's n // 2 + 1 bins for samples `d` apart: [0, 1, ..., n // 2] / (n * "
      "d), "
      "float32.");
}

}  // namespace braid::python
