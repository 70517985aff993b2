// Upsample (MLX's upsample.py): nearest, linear and cubic interpolation over any number of
// spatial axes. Each axis gets sampling indices (and weights); the samples are gathered axis
// by axis and the weighted samples of every combination of neighbours are summed.
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "braid/nn/layers.h"
#include "braid/ops.h"

namespace braid::nn {

namespace {

// One neighbour along one axis: indices [M] into the axis and their weights [M] (float32).
struct Tap {
  array indices;
  array weights;
};

// The sample positions of the M = int(scale * N) outputs along an axis of N.
array scaled_positions(int N, float scale, bool align_corners) {
  const int M = static_cast<int>(static_cast<double>(scale) * N);
  array steps = arange(0.0, M, 1.0, float32);
  if (align_corners) {
    // One output sits on the first input (PyTorch's and MLX's Python rule).
    return multiply(steps, array(M > 1 ? static_cast<float>(static_cast<double>(N - 1) / (M - 1)) : 0.0f));
  }
  const double step = 1.0 / static_cast<double>(scale);
  const double start = ((M - 1) * step - N + 1) / 2;
  return subtract(multiply(steps, array(static_cast<float>(step))), array(static_cast<float>(start)));
}

array as_index(const array& positions, int N) {
  return astype(clip(positions, array(0.0f), array(static_cast<float>(N - 1))), uint32);
}

std::vector<Tap> linear_taps(int N, float scale, bool align_corners) {
  array pos = clip(scaled_positions(N, scale, align_corners), array(0.0f), array(static_cast<float>(N - 1)));
  array left = floor(pos), right = ceil(pos);
  array w = subtract(pos, left);
  return {{astype(left, uint32), subtract(array(1.0f), w)}, {astype(right, uint32), w}};
}

// The cubic convolution kernel (a = -0.75) at distance |pos - grid|, for the inner (1) or
// outer (2) neighbours.
array cubic_weight(const array& pos, const array& grid, int dist) {
  const float a = -0.75f;
  array x = abs(subtract(pos, grid));
  if (dist == 1) {
    // ((a + 2) x - (a + 3)) x^2 + 1
    return add(multiply(subtract(multiply(array(a + 2.0f), x), array(a + 3.0f)), multiply(x, x)),
               array(1.0f));
  }
  // (((x - 5) x + 8) x - 4) a
  return multiply(subtract(multiply(add(multiply(subtract(x, array(5.0f)), x), array(8.0f)), x), array(4.0f)),
                  array(a));
}

std::vector<Tap> cubic_taps(int N, float scale, bool align_corners) {
  array pos = scaled_positions(N, scale, align_corners);
  array l1 = floor(pos), r1 = floor(add(pos, array(1.0f)));
  array l2 = subtract(l1, array(1.0f)), r2 = add(r1, array(1.0f));
  return {{as_index(l1, N), cubic_weight(pos, l1, 1)},
          {as_index(r1, N), cubic_weight(pos, r1, 1)},
          {as_index(l2, N), cubic_weight(pos, l2, 2)},
          {as_index(r2, N), cubic_weight(pos, r2, 2)}};
}

array nearest_indices(int N, float scale) {
  const int M = static_cast<int>(static_cast<double>(scale) * N);
  array idx = arange(0.0, M, 1.0, float32);
  const float ratio = static_cast<float>(static_cast<double>(N) / M);
  if (M > N) {
    idx = round(subtract(multiply(add(idx, array(0.5f)), array(ratio)), array(0.5f)));
  } else {
    idx = multiply(idx, array(ratio));
  }
  return astype(idx, uint32);
}

array upsample_nearest(const array& x, const std::vector<float>& scale) {
  const int dims = static_cast<int>(scale.size());
  bool integral = true;
  for (float s : scale) integral = integral && s == std::floor(s);
  if (integral) {
    // Whole-number scales: each element repeated along a broadcast axis, then merged.
    Shape expanded{x.shape(0)}, repeated{x.shape(0)}, merged{x.shape(0)};
    for (int d = 0; d < dims; ++d) {
      const int n = x.shape(1 + d), k = static_cast<int>(scale[d]);
      expanded.insert(expanded.end(), {n, 1});
      repeated.insert(repeated.end(), {n, k});
      merged.push_back(n * k);
    }
    for (Shape* s : {&expanded, &repeated, &merged}) s->push_back(x.shape(-1));
    return reshape(broadcast_to(reshape(x, expanded), repeated), merged);
  }
  array y = x;
  for (int d = 0; d < dims; ++d) y = take(y, nearest_indices(x.shape(1 + d), scale[d]), 1 + d);
  return y;
}

array interpolate(const array& x, const std::vector<std::vector<Tap>>& taps) {
  const int dims = static_cast<int>(taps.size());
  // Every combination of one tap per axis, counted like an odometer.
  std::vector<size_t> choice(dims, 0);
  std::optional<array> total;
  while (true) {
    array sample = x;
    std::optional<array> weight;
    for (int d = 0; d < dims; ++d) {
      const Tap& tap = taps[d][choice[d]];
      sample = take(sample, tap.indices, 1 + d);
      Shape shape(dims + 1, 1);
      shape[d] = -1;
      array w = reshape(tap.weights, shape);
      weight = weight ? multiply(*weight, w) : w;
    }
    array term = multiply(*weight, sample);
    total = total ? add(*total, term) : term;
    int d = dims - 1;
    while (d >= 0 && ++choice[d] == taps[d].size()) choice[d--] = 0;
    if (d < 0) break;
  }
  return *total;
}

// The antialiasing kernels at |x|: the triangle (linear) or Keys' cubic with a = -0.5.
array antialias_filter(const array& x, bool cubic) {
  array d = abs(x);
  if (!cubic) return maximum(subtract(array(1.0f), d), array(0.0f));
  const float a = -0.5f;
  array near =
      add(multiply(subtract(multiply(array(a + 2.0f), d), array(a + 3.0f)), multiply(d, d)), array(1.0f));
  array far = multiply(
      subtract(multiply(add(multiply(subtract(d, array(5.0f)), d), array(8.0f)), d), array(4.0f)), array(a));
  return where(less(d, array(1.0f)), near, where(less(d, array(2.0f)), far, array(0.0f)));
}

// One axis resampled with the kernel centred at ratio * (i + 0.5) and, when ratio (input step
// per output step) is above 1, widened by it; taps outside the input are left out and the
// weights of each output normalized (PyTorch's antialiased interpolation).
array antialias_axis(const array& x, int axis, float scale, bool align_corners, bool cubic) {
  const int N = x.shape(axis);
  const int M = static_cast<int>(static_cast<double>(scale) * N);
  const double ratio = align_corners ? (M > 1 ? static_cast<double>(N - 1) / (M - 1) : 0.0) : 1.0 / scale;
  const double support = (cubic ? 2.0 : 1.0) * std::max(ratio, 1.0);
  const float inverse = static_cast<float>(ratio >= 1.0 ? 1.0 / ratio : 1.0);
  array center = expand_dims(
      multiply(add(arange(0.0, M, 1.0, float32), array(0.5f)), array(static_cast<float>(ratio))), 1);
  array first = maximum(floor(add(center, array(static_cast<float>(0.5 - support)))), array(0.0f));
  array last =
      minimum(floor(add(center, array(static_cast<float>(0.5 + support)))), array(static_cast<float>(N)));
  array j = expand_dims(arange(0.0, N, 1.0, float32), 0);
  array w = antialias_filter(multiply(add(subtract(j, center), array(0.5f)), array(inverse)), cubic);
  w = where(logical_and(greater_equal(j, first), less(j, last)), w, array(0.0f));
  array total = sum(w, 1, /*keepdims=*/true);
  w = divide(w, where(equal(total, array(0.0f)), array(1.0f), total));  // [M, N]
  array moved = moveaxis(x, axis, -1);
  return moveaxis(astype(matmul(moved, transpose(w)), x.dtype()), -1, axis);
}

// The taps of one axis applied to that axis alone.
array interpolate_axis(const array& x, int axis, const std::vector<Tap>& taps) {
  std::optional<array> total;
  Shape shape(x.ndim(), 1);
  shape[axis] = -1;
  for (const Tap& tap : taps) {
    array term = multiply(reshape(tap.weights, shape), take(x, tap.indices, axis));
    total = total ? add(*total, term) : term;
  }
  return *total;
}

}  // namespace

Upsample::Upsample(float scale_factor, const std::string& mode, bool align_corners, bool antialias)
    : Upsample(std::vector<float>{scale_factor}, mode, align_corners, antialias) {
  per_axis_ = false;
}

Upsample::Upsample(std::vector<float> scale_factor, const std::string& mode, bool align_corners,
                   bool antialias)
    : scale_factor_(std::move(scale_factor)),
      per_axis_(true),
      mode_(mode),
      align_corners_(align_corners),
      antialias_(antialias) {
  if (mode != "nearest" && mode != "linear" && mode != "cubic") {
    fail("Got unsupported upsampling algorithm: " + mode);
  }
  if (scale_factor_.empty()) fail("scale_factor needs at least one value.");
  for (float s : scale_factor_) {
    if (!(s > 0.0f)) fail("scale_factor must be positive.");
  }
}

array Upsample::operator()(const array& x) {
  const int dims = static_cast<int>(x.ndim()) - 2;
  if (dims <= 0) {
    fail("The input should have at least 1 spatial dimension which means it should be at least 3D but " +
         std::to_string(x.ndim()) + "D was provided");
  }
  if (per_axis_ && static_cast<int>(scale_factor_.size()) != dims) {
    fail("One scale per spatial dimension is required but " + std::to_string(scale_factor_.size()) +
         " scales were given for " + std::to_string(dims) + " spatial dimensions");
  }
  std::vector<float> scale = per_axis_ ? scale_factor_ : std::vector<float>(dims, scale_factor_[0]);
  for (int d = 0; d < dims; ++d) {
    const int M = static_cast<int>(static_cast<double>(scale[d]) * x.shape(1 + d));
    if (M < 1) {
      fail("The output of spatial axis " + std::to_string(d) + " would have " + std::to_string(M) +
           " elements.");
    }
  }
  if (mode_ == "nearest") return upsample_nearest(x, scale);
  if (antialias_) {
    array y = x;
    for (int d = 0; d < dims; ++d) {
      // Upsampling with the triangle kernel is plain linear interpolation.
      y = mode_ == "linear" && scale[d] >= 1.0f
              ? interpolate_axis(y, 1 + d, linear_taps(y.shape(1 + d), scale[d], align_corners_))
              : antialias_axis(y, 1 + d, scale[d], align_corners_, mode_ == "cubic");
    }
    return y;
  }
  std::vector<std::vector<Tap>> taps;
  for (int d = 0; d < dims; ++d) {
    taps.push_back(mode_ == "linear" ? linear_taps(x.shape(1 + d), scale[d], align_corners_)
                                     : cubic_taps(x.shape(1 + d), scale[d], align_corners_));
  }
  return interpolate(x, taps);
}

}  // namespace braid::nn
