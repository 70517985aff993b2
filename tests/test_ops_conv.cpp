// Convolutions on every device against a direct double-precision reference written here: the
// general definition (stride, padding, both dilations, groups, flip) for conv1d/2d/3d and
// conv_general, the scatter definition for the transposed convolutions, the adjoint identity
// <conv(x, w), y> == <x, conv_transpose(y, w')> that ties the two together, MLX's documented
// output shapes, 16-bit types, non-contiguous operands and the chunked column buffer.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "primitives/conv.h"  // the chunk-size test hook
#include "support.h"

using namespace braid;

namespace {

std::string shape_string(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

std::vector<double> random_values(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  size_t n = 1;
  for (int32_t d : shape) n *= static_cast<size_t>(d);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

// Row-major element strides.
std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// The multi-index of `flat` over `dims` (row-major).
std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    idx[i] = flat % dims[i];
    flat /= dims[i];
  }
  return idx;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

struct ConvParams {
  std::vector<int> stride, lo, hi, kernel_dilation, input_dilation;
  int groups = 1;
  bool flip = false;
};

// out[n, p..., o] = sum over kernel positions k and the group's channels c of
// x_padded_dilated[n, p * stride + k' * kernel_dilation, g * Cg + c] * w[o, k, c], with k' the
// kernel index counted from the far end when flip is set.
std::vector<double> reference_conv(const std::vector<double>& x, const Shape& xs,
                                   const std::vector<double>& w, const Shape& ws, const ConvParams& p,
                                   Shape& out_shape) {
  const int dims = static_cast<int>(xs.size()) - 2;
  const int64_t c_in = xs.back(), c_out = ws[0], cg = c_in / p.groups, og = c_out / p.groups;
  out_shape = xs;
  out_shape.back() = static_cast<int32_t>(c_out);
  std::vector<int64_t> out_dims = {xs[0]}, kernel(dims);
  for (int d = 0; d < dims; ++d) {
    const int64_t in_span = static_cast<int64_t>(p.input_dilation[d]) * (xs[d + 1] - 1) + 1;
    const int64_t k_span = static_cast<int64_t>(p.kernel_dilation[d]) * (ws[d + 1] - 1) + 1;
    out_shape[d + 1] = static_cast<int32_t>((in_span + p.lo[d] + p.hi[d] - k_span) / p.stride[d] + 1);
    out_dims.push_back(out_shape[d + 1]);
    kernel[d] = ws[d + 1];
  }
  out_dims.push_back(c_out);
  const auto xst = strides_of(xs), wst = strides_of(ws);
  std::vector<double> out(static_cast<size_t>(product(out_dims)), 0.0);
  for (int64_t flat = 0; flat < static_cast<int64_t>(out.size()); ++flat) {
    const auto idx = unravel(flat, out_dims);
    const int64_t o = idx.back(), g = o / og;
    double sum = 0;
    for (int64_t kp = 0; kp < product(kernel); ++kp) {
      const auto k = unravel(kp, kernel);
      int64_t x_off = idx[0] * xst[0], w_off = o * wst[0];
      bool inside = true;
      for (int d = 0; d < dims; ++d) {
        const int64_t kk = p.flip ? kernel[d] - 1 - k[d] : k[d];
        const int64_t q = idx[d + 1] * p.stride[d] + kk * p.kernel_dilation[d] - p.lo[d];
        if (q < 0 || q % p.input_dilation[d] != 0 || q / p.input_dilation[d] >= xs[d + 1]) inside = false;
        x_off += q / p.input_dilation[d] * xst[d + 1];
        w_off += k[d] * wst[d + 1];
      }
      if (!inside) continue;
      for (int64_t c = 0; c < cg; ++c) sum += x[x_off + g * cg + c] * w[w_off + c];
    }
    out[flat] = sum;
  }
  return out;
}

// The transposed convolution by its scatter definition: every x[n, i..., g * Cg + c] adds
// x * w[o, k..., c] to out[n, i * stride - padding + k * dilation, o] for the group's o. The
// output size is MLX's: (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 +
// output_padding.
std::vector<double> reference_conv_transpose(const std::vector<double>& x, const Shape& xs,
                                             const std::vector<double>& w, const Shape& ws,
                                             const std::vector<int>& stride, const std::vector<int>& padding,
                                             const std::vector<int>& dilation,
                                             const std::vector<int>& output_padding, int groups,
                                             Shape& out_shape) {
  const int dims = static_cast<int>(xs.size()) - 2;
  const int64_t c_in = xs.back(), c_out = ws[0], cg = c_in / groups, og = c_out / groups;
  out_shape = xs;
  out_shape.back() = static_cast<int32_t>(c_out);
  std::vector<int64_t> in_dims(xs.begin(), xs.end()), kernel(dims);
  for (int d = 0; d < dims; ++d) {
    out_shape[d + 1] =
        (xs[d + 1] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (ws[d + 1] - 1) + 1 + output_padding[d];
    kernel[d] = ws[d + 1];
  }
  const auto xst = strides_of(xs), wst = strides_of(ws), ost = strides_of(out_shape);
  size_t total = 1;
  for (int32_t d : out_shape) total *= static_cast<size_t>(d);
  std::vector<double> out(total, 0.0);
  for (int64_t flat = 0; flat < static_cast<int64_t>(x.size()); ++flat) {
    const auto idx = unravel(flat, in_dims);
    const int64_t g = idx.back() / cg, c = idx.back() % cg;
    for (int64_t kp = 0; kp < product(kernel); ++kp) {
      const auto k = unravel(kp, kernel);
      int64_t o_off = idx[0] * ost[0], w_off = c;
      bool inside = true;
      for (int d = 0; d < dims; ++d) {
        const int64_t j = idx[d + 1] * stride[d] - padding[d] + k[d] * dilation[d];
        if (j < 0 || j >= out_shape[d + 1]) inside = false;
        o_off += j * ost[d + 1];
        w_off += k[d] * wst[d + 1];
      }
      if (!inside) continue;
      for (int64_t oo = 0; oo < og; ++oo) {
        const int64_t o = g * og + oo;
        out[o_off + o] += x[flat] * w[w_off + o * wst[0]];
      }
    }
  }
  return out;
}

double tolerance(Dtype dt) { return dt == float32 ? 1e-4 : (dt == float16 ? 3e-3 : 2e-2); }

const std::vector<Dtype> kConvDtypes = {float32, float16, bfloat16};

// One convolution case: shapes and MLX's per-axis parameters (symmetric padding).
struct Case {
  Shape x, w;
  std::vector<int> stride, padding, dilation;
  int groups = 1;
};

ConvParams params_of(const Case& c) {
  ConvParams p;
  p.stride = c.stride;
  p.lo = p.hi = c.padding;
  p.kernel_dilation = c.dilation;
  p.input_dilation = std::vector<int>(c.stride.size(), 1);
  p.groups = c.groups;
  return p;
}

std::string describe(const Shape& x, const Shape& w, Dtype dt, Device dev) {
  return test::device_name(dev) + " " + dtype_name(dt) + " x " + shape_string(x) + " w " + shape_string(w);
}

// One path of check_against_reference; `path` names it in failure messages.
void check_one_path(const Shape& xs, const Shape& ws, const ConvParams& p, uint32_t seed,
                    const std::function<array(const array&, const array&, Device)>& op,
                    const std::string& path) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : kConvDtypes) {
      const std::string what = describe(xs, ws, dt, dev) + path;
      const array x = test::make(random_values(xs, seed), xs, dt);
      const array w = test::make(random_values(ws, seed + 1), ws, dt);
      Shape want_shape;
      const auto want = reference_conv(test::values(x), xs, test::values(w), ws, p, want_shape);
      const array got = op(x, w, dev);
      EXPECT_EQ(got.shape(), want_shape) << what;
      EXPECT_EQ(got.dtype(), dt) << what;
      test::expect_close(test::values(got), want, tolerance(dt), tolerance(dt), what);
    }
  }
}

// Runs `body` once on each of a backend's convolution paths: as the backend chooses (oneDNN on
// the CPU, cuDNN on the GPU, where they take the case), then on im2col, which the chunk-size
// hook forces (with chunks too large to cut these tests' convolutions).
void for_each_conv_path(const std::function<void(const std::string&)>& body) {
  struct Restore {
    ~Restore() { set_conv_chunk_bytes_for_testing(0); }
  } restore;
  for (int64_t chunk : {int64_t{0}, int64_t{1} << 30}) {
    set_conv_chunk_bytes_for_testing(chunk);
    body(chunk == 0 ? "" : " (im2col)");
  }
}

// Runs `op` on random x and w of the case's shapes and compares with the reference, on every
// convolution path.
void check_against_reference(const Shape& xs, const Shape& ws, const ConvParams& p, uint32_t seed,
                             const std::function<array(const array&, const array&, Device)>& op) {
  for_each_conv_path([&](const std::string& path) { check_one_path(xs, ws, p, seed, op, path); });
}

array conv_nd(const array& x, const array& w, const Case& c, Device dev) {
  const auto& s = c.stride;
  const auto& p = c.padding;
  const auto& d = c.dilation;
  switch (s.size()) {
    case 1: return conv1d(x, w, s[0], p[0], d[0], c.groups, dev);
    case 2: return conv2d(x, w, {s[0], s[1]}, {p[0], p[1]}, {d[0], d[1]}, c.groups, dev);
    default: return conv3d(x, w, {s[0], s[1], s[2]}, {p[0], p[1], p[2]}, {d[0], d[1], d[2]}, c.groups, dev);
  }
}

void check_cases(const std::vector<Case>& cases) {
  uint32_t seed = 1;
  for (const Case& c : cases) {
    check_against_reference(
        c.x, c.w, params_of(c), seed += 2,
        [&](const array& x, const array& w, Device dev) { return conv_nd(x, w, c, dev); });
  }
}

// x's elements in a transposed (channels-first) buffer, viewed back in x's layout.
array transposed_layout(const array& x) {
  std::vector<int> perm(x.ndim()), inverse(x.ndim());
  for (size_t i = 0; i < x.ndim(); ++i) perm[i] = static_cast<int>(x.ndim() - 1 - i);
  for (size_t i = 0; i < x.ndim(); ++i) inverse[perm[i]] = static_cast<int>(i);
  return transpose(contiguous(transpose(x, perm, Device::cpu), false, Device::cpu), inverse, Device::cpu);
}

// conv_general cases (any padding, input dilation, flip) against the reference on every path.
struct GeneralCase {
  Shape x, w;
  ConvParams p;
};

void check_general_cases(const std::vector<GeneralCase>& cases, uint32_t seed) {
  for (const GeneralCase& c : cases) {
    check_against_reference(c.x, c.w, c.p, seed += 2, [&](const array& x, const array& w, Device dev) {
      return conv_general(x, w, c.p.stride, c.p.lo, c.p.hi, c.p.kernel_dilation, c.p.input_dilation,
                          c.p.groups, c.p.flip, dev);
    });
  }
}

}  // namespace

TEST(OpsConv, Conv1dMatchesTheDirectDefinition) {
  check_cases({
      {{2, 9, 3}, {4, 3, 3}, {1}, {0}, {1}},
      {{2, 9, 3}, {4, 3, 3}, {2}, {1}, {1}},
      {{1, 11, 2}, {3, 3, 2}, {1}, {2}, {2}},
      {{2, 10, 3}, {5, 4, 3}, {3}, {2}, {2}},
      {{2, 8, 6}, {6, 3, 2}, {1}, {1}, {1}, 3},   // groups
      {{1, 10, 4}, {4, 3, 1}, {1}, {1}, {1}, 4},  // depthwise
      {{1, 10, 4}, {8, 3, 1}, {2}, {0}, {3}, 4},  // depthwise with two outputs per channel
      {{3, 5, 4}, {2, 1, 4}, {1}, {0}, {1}},      // pointwise
      {{2, 5, 4}, {3, 1, 4}, {2}, {1}, {1}},      // size-1 kernel with stride and padding
      {{1, 4, 1}, {1, 4, 1}, {1}, {0}, {1}},      // the kernel covers the whole input
  });
}

TEST(OpsConv, Conv2dMatchesTheDirectDefinition) {
  check_cases({
      {{2, 6, 5, 3}, {4, 3, 2, 3}, {1, 1}, {0, 0}, {1, 1}},
      {{1, 7, 6, 2}, {3, 3, 3, 2}, {2, 1}, {1, 0}, {1, 2}},
      {{2, 5, 5, 4}, {6, 3, 3, 2}, {1, 1}, {1, 1}, {1, 1}, 2},  // groups
      {{1, 6, 6, 3}, {3, 3, 3, 1}, {1, 2}, {1, 1}, {2, 1}, 3},  // depthwise, dilated
      {{2, 4, 3, 5}, {2, 1, 1, 5}, {1, 1}, {0, 0}, {1, 1}},     // pointwise
      {{1, 5, 4, 2}, {2, 5, 4, 2}, {1, 1}, {0, 0}, {1, 1}},     // one output position
  });
}

TEST(OpsConv, Conv3dMatchesTheDirectDefinition) {
  check_cases({
      {{1, 4, 5, 3, 2}, {3, 2, 3, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}},
      {{2, 5, 4, 4, 2}, {2, 2, 2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {2, 1, 1}},
      {{1, 3, 3, 3, 3}, {2, 1, 1, 1, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}},  // pointwise
  });
}

TEST(OpsConv, ConvGeneralHandlesAsymmetricPaddingInputDilationAndFlip) {
  struct General {
    Shape x, w;
    ConvParams p;
  };
  const std::vector<General> cases = {
      {{2, 7, 3}, {4, 3, 3}, {{1}, {2}, {0}, {1}, {1}, 1, false}},
      {{1, 6, 2}, {3, 3, 2}, {{1}, {1}, {2}, {1}, {2}, 1, true}},     // input dilation and flip
      {{2, 5, 4}, {4, 2, 2}, {{2}, {0}, {3}, {2}, {3}, 2, true}},     // with groups
      {{1, 5, 2}, {2, 4, 1}, {{1}, {0}, {0}, {1}, {1}, 2, true}},     // MLX's grouped flip case
      {{1, 8, 2}, {2, 3, 2}, {{1}, {-2}, {1}, {1}, {1}, 1, false}},   // negative padding crops
      {{1, 5, 2}, {2, 2, 2}, {{1}, {-3}, {-1}, {1}, {2}, 1, false}},  // crops the dilated input
      {{1, 5, 4, 4}, {4, 3, 2, 2}, {{1, 2}, {1, 0}, {0, 2}, {2, 1}, {1, 2}, 2, true}},
      {{2, 3, 3, 2}, {2, 2, 2, 2}, {{2, 2}, {-1, 1}, {2, -1}, {1, 1}, {3, 2}, 1, false}},
      {{1, 3, 4, 2, 2}, {2, 2, 2, 1, 2}, {{1, 1, 2}, {0, 1, 0}, {1, 0, 0}, {1, 2, 1}, {2, 1, 1}, 1, true}},
  };
  uint32_t seed = 100;
  for (const General& c : cases) {
    check_against_reference(c.x, c.w, c.p, seed += 2, [&](const array& x, const array& w, Device dev) {
      return conv_general(x, w, c.p.stride, c.p.lo, c.p.hi, c.p.kernel_dilation, c.p.input_dilation,
                          c.p.groups, c.p.flip, dev);
    });
  }
  // The overload with one symmetric padding per axis, and parameters given once for every axis.
  const ConvParams sym = {{2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false};
  check_against_reference({1, 6, 5, 2}, {3, 3, 3, 2}, sym, 7, [](const array& x, const array& w, Device dev) {
    return conv_general(x, w, std::vector<int>{2}, std::vector<int>{1}, {}, {}, 1, false, dev);
  });
}

TEST(OpsConv, NonContiguousInputsAndWeightsGiveTheSameValues) {
  for_each_conv_path([](const std::string& path) {
    for (Device dev : test::test_devices()) {
      for (Dtype dt : kConvDtypes) {
        const Shape xs = {2, 5, 6, 4}, ws = {4, 3, 2, 2};
        const ConvParams p = {{1, 2}, {1, 0}, {1, 0}, {1, 1}, {1, 1}, 2, false};
        const array x = test::make(random_values(xs, 11), xs, dt);
        const array w = test::make(random_values(ws, 12), ws, dt);
        Shape want_shape;
        const auto want = reference_conv(test::values(x), xs, test::values(w), ws, p, want_shape);
        const std::string what = describe(xs, ws, dt, dev) + path;
        // Transposed buffers for both operands.
        const array got = conv2d(transposed_layout(x), transposed_layout(w), {1, 2}, {1, 0}, {1, 1}, 2, dev);
        test::expect_close(test::values(got), want, tolerance(dt), tolerance(dt), what + " transposed");
        // Every other element of a larger input, and a pointwise kernel over a transposed input.
        const Shape big = {2, 10, 6, 4};
        const array xb = test::make(random_values(big, 13), big, dt);
        const array stepped = slice(xb, {0, 0, 0, 0}, {2, 10, 6, 4}, {1, 2, 1, 1}, Device::cpu);
        const auto want_stepped =
            reference_conv(test::values(stepped), xs, test::values(w), ws, p, want_shape);
        test::expect_close(test::values(conv2d(stepped, w, {1, 2}, {1, 0}, {1, 1}, 2, dev)), want_stepped,
                           tolerance(dt), tolerance(dt), what + " stepped");
        const Shape w1s = {3, 1, 1, 4};
        const array w1 = test::make(random_values(w1s, 14), w1s, dt);
        const ConvParams p1 = {{1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 1, false};
        const auto want1 = reference_conv(test::values(x), xs, test::values(w1), w1s, p1, want_shape);
        test::expect_close(test::values(conv2d(transposed_layout(x), w1, {1, 1}, {0, 0}, {1, 1}, 1, dev)),
                           want1, tolerance(dt), tolerance(dt), what + " pointwise transposed");
      }
    }
  });
}

TEST(OpsConv, MixedDtypesPromote) {
  for (Device dev : test::test_devices()) {
    const Shape xs = {1, 6, 2}, ws = {3, 3, 2};
    const array x = test::make(random_values(xs, 21), xs, float16);
    const array w = test::make(random_values(ws, 22), ws, float32);
    const array got = conv1d(x, w, 1, 1, 1, 1, dev);
    EXPECT_EQ(got.dtype(), float32);
    Shape want_shape;
    const ConvParams p = {{1}, {1}, {1}, {1}, {1}, 1, false};
    const auto want = reference_conv(test::values(x), xs, test::values(w), ws, p, want_shape);
    test::expect_close(test::values(got), want, 1e-4, 1e-4, test::device_name(dev));
    EXPECT_EQ(conv1d(x, astype(w, bfloat16), 1, 0, 1, 1, dev).dtype(), float32);  // as promote_types
  }
}

TEST(OpsConv, OutputShapesAreMlxs) {
  const array x2 = zeros({1, 7, 7, 2});
  EXPECT_EQ(conv2d(x2, zeros({4, 3, 3, 2}), {2, 2}, {1, 1}).shape(), (Shape{1, 4, 4, 4}));
  EXPECT_EQ(conv2d(x2, zeros({4, 3, 3, 2}), {1, 1}, {0, 0}, {3, 3}).shape(), (Shape{1, 1, 1, 4}));
  EXPECT_EQ(conv1d(zeros({2, 10, 3}), zeros({5, 4, 3}), 3, 2).shape(), (Shape{2, 4, 5}));
  EXPECT_EQ(conv3d(zeros({1, 4, 5, 6, 1}), zeros({2, 2, 2, 2, 1})).shape(), (Shape{1, 3, 4, 5, 2}));
  // (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 + output_padding
  EXPECT_EQ(
      conv_transpose2d(zeros({1, 4, 5, 2}), zeros({3, 3, 3, 2}), {2, 2}, {1, 1}, {1, 1}, {1, 0}).shape(),
      (Shape{1, 8, 9, 3}));
  EXPECT_EQ(conv_transpose1d(zeros({2, 6, 4}), zeros({4, 3, 2}), 3, 0, 2, 2, 2).shape(), (Shape{2, 22, 4}));
  EXPECT_EQ(conv_transpose3d(zeros({1, 2, 3, 4, 1}), zeros({1, 2, 2, 2, 1}), {2, 1, 1}).shape(),
            (Shape{1, 4, 4, 5, 1}));
}

TEST(OpsConv, ConvTransposeMatchesTheScatterDefinition) {
  struct Transposed {
    Shape x, w;
    std::vector<int> stride, padding, dilation, output_padding;
    int groups = 1;
  };
  const std::vector<Transposed> cases = {
      {{2, 5, 3}, {4, 3, 3}, {1}, {0}, {1}, {0}},
      {{1, 6, 2}, {3, 3, 2}, {2}, {1}, {1}, {1}},
      {{2, 4, 4}, {6, 3, 2}, {3}, {1}, {2}, {2}, 2},  // groups, dilation, output padding
      {{1, 5, 2}, {2, 3, 2}, {2}, {3}, {1}, {0}},     // padding beyond the kernel: the input is cropped
      {{1, 3, 4, 2}, {3, 3, 2, 2}, {2, 1}, {1, 0}, {1, 2}, {1, 0}},
      {{2, 4, 3, 4}, {4, 2, 3, 2}, {1, 2}, {0, 1}, {2, 1}, {0, 1}, 2},
      {{1, 2, 3, 2, 2}, {2, 2, 2, 2, 2}, {2, 1, 2}, {1, 0, 0}, {1, 1, 2}, {1, 0, 1}},
  };
  uint32_t seed = 300;
  for (const Transposed& c : cases) {
    for (Device dev : test::test_devices()) {
      for (Dtype dt : kConvDtypes) {
        const std::string what = describe(c.x, c.w, dt, dev);
        const array x = test::make(random_values(c.x, seed), c.x, dt);
        const array w = test::make(random_values(c.w, seed + 1), c.w, dt);
        Shape want_shape;
        const auto want =
            reference_conv_transpose(test::values(x), c.x, test::values(w), c.w, c.stride, c.padding,
                                     c.dilation, c.output_padding, c.groups, want_shape);
        const auto& s = c.stride;
        const auto& p = c.padding;
        const auto& d = c.dilation;
        const auto& op = c.output_padding;
        array got = x;
        switch (s.size()) {
          case 1: got = conv_transpose1d(x, w, s[0], p[0], d[0], op[0], c.groups, dev); break;
          case 2:
            got = conv_transpose2d(x, w, {s[0], s[1]}, {p[0], p[1]}, {d[0], d[1]}, {op[0], op[1]}, c.groups,
                                   dev);
            break;
          default:
            got = conv_transpose3d(x, w, {s[0], s[1], s[2]}, {p[0], p[1], p[2]}, {d[0], d[1], d[2]},
                                   {op[0], op[1], op[2]}, c.groups, dev);
        }
        EXPECT_EQ(got.shape(), want_shape) << what;
        test::expect_close(test::values(got), want, tolerance(dt), tolerance(dt), what);
      }
    }
    seed += 2;
  }
}

// <conv(x, w), y> == <x, conv_transpose(y, w')>, with w' the weight with C_out and C_in
// swapped within each group, and output_padding chosen to give back x's length.
TEST(OpsConv, ConvTransposeIsTheAdjointOfConv) {
  struct Adjoint {
    Shape x, w;
    int stride, padding, dilation, groups;
  };
  const std::vector<Adjoint> cases = {
      {{2, 9, 3}, {4, 3, 3}, 1, 0, 1, 1},       {{1, 10, 2}, {3, 3, 2}, 2, 1, 1, 1},
      {{2, 11, 4}, {6, 3, 2}, 3, 2, 2, 2},      {{1, 7, 6, 2}, {3, 3, 2, 2}, 2, 1, 1, 1},
      {{1, 6, 7, 4}, {4, 2, 3, 1}, 2, 0, 2, 4},
  };
  uint32_t seed = 500;
  for (const Adjoint& c : cases) {
    for_each_conv_path([&](const std::string& path) {
      for (Device dev : test::test_devices()) {
        const int dims = static_cast<int>(c.x.size()) - 2;
        const array x = test::make(random_values(c.x, seed), c.x, float32);
        const array w = test::make(random_values(c.w, seed + 1), c.w, float32);
        std::vector<int> v1(dims, c.stride), vp(dims, c.padding), vd(dims, c.dilation), vi(dims, 1);
        const array y = conv_general(x, w, v1, vp, vp, vd, vi, c.groups, false, dev);
        const array r = test::make(random_values(y.shape(), seed + 2), y.shape(), float32);
        // w' [C_in, K..., C_out / groups]: w'[g * Cg + c, k, o] = w[g * Og + o, k, c].
        const int64_t c_in = c.x.back(), c_out = c.w[0], cg = c_in / c.groups, og = c_out / c.groups;
        Shape wts = c.w;
        wts[0] = static_cast<int32_t>(c_in);
        wts.back() = static_cast<int32_t>(og);
        const auto wv = test::values(w);
        const int64_t kernel = static_cast<int64_t>(wv.size()) / (c_out * cg);
        std::vector<double> wt(wv.size());
        for (int64_t o = 0; o < c_out; ++o) {
          for (int64_t k = 0; k < kernel; ++k) {
            for (int64_t ch = 0; ch < cg; ++ch) {
              const int64_t g = o / og;
              wt[((g * cg + ch) * kernel + k) * og + o % og] = wv[(o * kernel + k) * cg + ch];
            }
          }
        }
        const array w_adj = test::make(wt, wts, float32);
        std::vector<int> out_pad(dims);
        for (int d = 0; d < dims; ++d) {
          out_pad[d] = c.x[d + 1] -
                       ((y.shape(d + 1) - 1) * c.stride - 2 * c.padding + c.dilation * (c.w[d + 1] - 1) + 1);
          ASSERT_GE(out_pad[d], 0);
        }
        array z = x;
        if (dims == 1) {
          z = conv_transpose1d(r, w_adj, c.stride, c.padding, c.dilation, out_pad[0], c.groups, dev);
        } else {
          z = conv_transpose2d(r, w_adj, {c.stride, c.stride}, {c.padding, c.padding},
                               {c.dilation, c.dilation}, {out_pad[0], out_pad[1]}, c.groups, dev);
        }
        ASSERT_EQ(z.shape(), x.shape());
        const auto yv = test::values(y), rv = test::values(r), xv = test::values(x), zv = test::values(z);
        double lhs = 0, rhs = 0, scale = 0;
        for (size_t i = 0; i < yv.size(); ++i) {
          lhs += yv[i] * rv[i];
          scale += std::abs(yv[i] * rv[i]);
        }
        for (size_t i = 0; i < xv.size(); ++i) rhs += xv[i] * zv[i];
        EXPECT_NEAR(lhs, rhs, 1e-4 * scale) << test::device_name(dev) << " x " << shape_string(c.x) << path;
      }
    });
    seed += 3;
  }
}

TEST(OpsConv, ChunkedColumnBuffersGiveTheSameValues) {
  const Shape xs = {2, 9, 8, 4}, ws = {6, 3, 3, 2};
  const ConvParams p = {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2, false};
  // A few rows per chunk, then less than one row (one row per chunk).
  for (int64_t bytes : {int64_t{4096}, int64_t{1}}) {
    set_conv_chunk_bytes_for_testing(bytes);
    check_one_path(
        xs, ws, p, 41,
        [](const array& x, const array& w, Device dev) {
          return conv2d(x, w, {1, 1}, {1, 1}, {1, 1}, 2, dev);
        },
        " chunk bytes " + std::to_string(bytes));
  }
  set_conv_chunk_bytes_for_testing(0);
}

TEST(OpsConv, LargerConvolutionsSplitAcrossTheWorkers) {
  const Shape xs = {2, 32, 32, 8}, ws = {16, 3, 3, 8};
  const ConvParams p = {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false};
  check_against_reference(xs, ws, p, 61, [](const array& x, const array& w, Device dev) {
    return conv2d(x, w, {1, 1}, {1, 1}, {1, 1}, 1, dev);
  });
}

// Channel counts of whole tensor-core tiles (multiples of 8), where the GPU runs float16 and
// bfloat16 through cuDNN's graph API: every rank, groups, strides, dilation and flip.
TEST(OpsConv, TensorCoreChannelCountsOfEveryRank) {
  check_general_cases({
      {{2, 13, 16}, {16, 3, 16}, {{1}, {1}, {1}, {1}, {1}, 1, false}},
      {{2, 9, 9, 16}, {32, 3, 3, 16}, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false}},
      {{1, 11, 10, 32}, {16, 3, 3, 16}, {{2, 1}, {2, 2}, {2, 2}, {2, 1}, {1, 1}, 2, false}},
      {{2, 8, 8, 16}, {16, 3, 3, 16}, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, true}},
      {{1, 5, 6, 5, 8}, {16, 3, 3, 3, 8}, {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, false}},
  }, 800);
}

// The CPU's oneDNN path cuts a convolution into pieces: blocks of samples (the last one
// shorter) when there are many, else blocks of output rows of each sample, whose first and
// last blocks carry the padding (asymmetric or cropping here). Batches on both sides of the
// cut, with strides, dilation and groups.
TEST(OpsConv, ConvolutionsCutIntoPiecesGiveTheSameValues) {
  check_general_cases({
      {{1, 23, 9, 4}, {6, 3, 3, 2}, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2, false}},
      {{1, 30, 7, 3}, {4, 3, 2, 3}, {{2, 1}, {2, 0}, {1, 1}, {2, 1}, {1, 1}, 1, false}},
      {{1, 19, 6, 2}, {3, 4, 3, 2}, {{1, 1}, {-1, 1}, {3, -1}, {1, 1}, {1, 1}, 1, true}},
      {{3, 17, 5, 4}, {4, 3, 3, 4}, {{1, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false}},
      {{5, 9, 8, 4}, {8, 3, 3, 1}, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 4, false}},
      {{17, 6, 6, 4}, {4, 3, 3, 4}, {{1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 1, false}},
      {{37, 5, 3}, {4, 3, 3}, {{1}, {1}, {2}, {1}, {1}, 1, false}},
      {{2, 9, 6, 5, 2}, {3, 3, 3, 2, 2}, {{1, 1, 1}, {1, 1, 0}, {1, 0, 1}, {1, 1, 1}, {1, 1, 1}, 1, false}},
  }, 700);
}

// More geometries than the CPU's oneDNN path keeps plans for: the oldest make way, and a
// geometry seen again is planned again.
TEST(OpsConv, ManyGeometriesInARowGiveTheSameValues) {
  const ConvParams p = {{1}, {1}, {1}, {1}, {1}, 1, false};
  uint32_t seed = 900;
  for (int pass = 0; pass < 2; ++pass) {
    for (int32_t width = 1; width <= 70; width += pass == 0 ? 1 : 23) {
      for (Device dev : test::test_devices()) {
        const Shape xs = {1, width, 2}, ws = {3, 3, 2};
        const array x = test::make(random_values(xs, seed), xs, float32);
        const array w = test::make(random_values(ws, seed + 1), ws, float32);
        Shape want_shape;
        const auto want = reference_conv(test::values(x), xs, test::values(w), ws, p, want_shape);
        test::expect_close(test::values(conv1d(x, w, 1, 1, 1, 1, dev)), want, 1e-4, 1e-4,
                           test::device_name(dev) + " width " + std::to_string(width));
      }
      seed += 2;
    }
  }
}

TEST(OpsConv, EmptyBatchesChannelsAndOutputs) {
  for (Device dev : test::test_devices()) {
    const array none = conv1d(zeros({0, 5, 3}), ones({2, 3, 3}), 1, 0, 1, 1, dev);
    EXPECT_EQ(none.shape(), (Shape{0, 3, 2}));
    EXPECT_TRUE(test::values(none).empty());
    const array no_channels = conv1d(zeros({1, 5, 0}), ones({2, 3, 0}), 1, 0, 1, 1, dev);
    EXPECT_EQ(no_channels.shape(), (Shape{1, 3, 2}));
    EXPECT_EQ(test::values(no_channels), std::vector<double>(6, 0.0));
    EXPECT_EQ(conv2d(ones({1, 3, 3, 2}), ones({0, 2, 2, 2}), {1, 1}, {0, 0}, {1, 1}, 1, dev).shape(),
              (Shape{1, 2, 2, 0}));
  }
}
