// Derivatives of Convolution. Per spatial axis the forward reads the input dilated by
// input_dilation and padded by (lo, hi): P positions, of which output o takes
// o * stride + k * kernel_dilation for each kernel tap k. Both gradients are convolutions
// again:
//  - input: the cotangent dilated by the stride, correlated with the kernel transposed in its
//    channels and flipped, gives the gradient of all P positions; the input's own positions
//    (lo + i * input_dilation) are then sliced out (positions cropped away get zero);
//  - weight: the input correlated with the cotangent used as a kernel dilated by the stride,
//    with stride kernel_dilation, batch and channels exchanged (groups stay groups).
#include "primitives/conv.h"
#include "primitives/grad_utils.h"

namespace braid {

namespace {

struct AxisGeometry {
  int64_t dilated_input;  // (S - 1) * input_dilation + 1
  int64_t padded;         // P
  int64_t kernel_extent;  // (K - 1) * kernel_dilation + 1
  int64_t dilated_out;    // (O - 1) * stride + 1
};

// Axes [0, n) as a permutation with `a` and `b` exchanged.
std::vector<int> swapped(int n, int a, int b) {
  std::vector<int> axes(n);
  for (int i = 0; i < n; ++i) axes[i] = i;
  std::swap(axes[a], axes[b]);
  return axes;
}

}  // namespace

std::vector<array> Convolution::vjp(const std::vector<array>& primals, const std::vector<array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  const array& x = primals[0];
  const array& w = primals[1];
  const array& c = cotangents[0];
  const int dims = static_cast<int>(x.ndim()) - 2;
  const int g = groups_;
  const int c_in = x.shape(-1);
  const int c_out = w.shape(0);
  std::vector<AxisGeometry> geo(dims);
  for (int d = 0; d < dims; ++d) {
    auto& a = geo[d];
    a.dilated_input = int64_t(x.shape(d + 1) - 1) * input_dilation_[d] + 1;
    a.padded = a.dilated_input + padding_lo_[d] + padding_hi_[d];
    a.kernel_extent = int64_t(w.shape(d + 1) - 1) * kernel_dilation_[d] + 1;
    a.dilated_out = int64_t(c.shape(d + 1) - 1) * stride_[d] + 1;
  }
  std::vector<int> spatial(dims);
  for (int d = 0; d < dims; ++d) spatial[d] = d + 1;

  std::vector<array> out;
  for (int arg : argnums) {
    if (arg == 0) {
      // Kernel [C_out, K..., C_in/g] -> [C_in, K..., C_out/g], group by group.
      Shape grouped{g, c_out / g};
      for (int d = 0; d < dims; ++d) grouped.push_back(w.shape(d + 1));
      grouped.push_back(c_in / g);
      array wt = reshape(w, grouped, s);
      std::vector<int> order{0, dims + 2};
      for (int d = 0; d < dims; ++d) order.push_back(d + 2);
      order.push_back(1);
      wt = transpose(wt, order, s);
      Shape kernel_shape{c_in};
      for (int d = 0; d < dims; ++d) kernel_shape.push_back(w.shape(d + 1));
      kernel_shape.push_back(c_out / g);
      wt = reshape(wt, kernel_shape, s);
      std::vector<int> lo(dims), hi(dims), unit(dims, 1);
      for (int d = 0; d < dims; ++d) {
        lo[d] = static_cast<int>(geo[d].kernel_extent - 1);
        hi[d] = static_cast<int>(geo[d].padded - geo[d].dilated_out);
      }
      array all = conv_general(c, wt, unit, lo, hi, kernel_dilation_, stride_, g, !flip_, s);
      // all has P positions per axis; the input's are lo + i * input_dilation.
      Shape low_pad(dims), high_pad(dims), start(dims + 2, 0), stop = all.shape(), step(dims + 2, 1);
      for (int d = 0; d < dims; ++d) {
        const int64_t first = padding_lo_[d];
        const int64_t last = first + geo[d].dilated_input - 1;
        low_pad[d] = static_cast<int32_t>(std::max<int64_t>(0, -first));
        high_pad[d] = static_cast<int32_t>(std::max<int64_t>(0, last + 1 - geo[d].padded));
        start[d + 1] = static_cast<int32_t>(first + low_pad[d]);
        stop[d + 1] = static_cast<int32_t>(last + low_pad[d] + 1);
        step[d + 1] = input_dilation_[d];
      }
      array padded = pad(all, spatial, low_pad, high_pad, array(0, all.dtype()), "constant", s);
      out.push_back(slice(padded, start, stop, step, s));
    } else {
      // Input [N, S..., C_in] -> [C_in/g, S..., g * N]; cotangent [N, O..., C_out] -> [C_out, O..., N].
      const int n = x.shape(0);
      Shape split_in{n};
      for (int d = 0; d < dims; ++d) split_in.push_back(x.shape(d + 1));
      split_in.push_back(g);
      split_in.push_back(c_in / g);
      array xi = reshape(x, split_in, s);
      std::vector<int> order{dims + 2};
      for (int d = 0; d < dims; ++d) order.push_back(d + 1);
      order.push_back(dims + 1);
      order.push_back(0);
      xi = transpose(xi, order, s);
      Shape merged_in{c_in / g};
      for (int d = 0; d < dims; ++d) merged_in.push_back(x.shape(d + 1));
      merged_in.push_back(g * n);
      xi = reshape(xi, merged_in, s);
      array ck = transpose(c, swapped(dims + 2, 0, dims + 1), s);  // [C_out, O..., N]
      array dw = conv_general(xi, ck, kernel_dilation_, padding_lo_, padding_hi_, stride_, input_dilation_, g,
                              false, s);
      // dw is [C_in/g, >= K..., C_out]: keep K taps, put C_out first.
      Shape start(dims + 2, 0), stop = dw.shape();
      for (int d = 0; d < dims; ++d) stop[d + 1] = w.shape(d + 1);
      dw = slice(dw, start, stop, s);
      dw = transpose(dw, swapped(dims + 2, 0, dims + 1), s);
      if (flip_) {
        Shape rstart(dims + 2, 0), rstop = dw.shape(), rstep(dims + 2, 1);
        for (int d = 0; d < dims; ++d) {
          rstart[d + 1] = -1;
          rstop[d + 1] = -w.shape(d + 1) - 1;
          rstep[d + 1] = -1;
        }
        dw = slice(dw, rstart, rstop, rstep, s);
      }
      out.push_back(dw);
    }
  }
  return out;
}

std::vector<array> Convolution::jvp(const std::vector<array>& primals, const std::vector<array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<array>&) {
  const Stream& s = stream();
  std::optional<array> total;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const array& x = argnums[i] == 0 ? tangents[i] : primals[0];
    const array& w = argnums[i] == 1 ? tangents[i] : primals[1];
    array t = conv_general(x, w, stride_, padding_lo_, padding_hi_, kernel_dilation_, input_dilation_, groups_,
                           flip_, s);
    total = total ? add(*total, t, s) : t;
  }
  return {*total};
}

}  // namespace braid
