// Initializers (nn/init.h) from braid::random and braid's ops, in MLX's formulas and draw
// order (sparse draws its row order first, then the values, as MLX does).
#include "braid/nn/init.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "braid/ops.h"
#include "braid/random.h"

namespace braid::nn::init {

namespace {

[[noreturn]] void fail(const std::string& fn, const std::string& what) {
  throw std::invalid_argument("[" + fn + "] " + what);
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

array uniform_symmetric(double limit, const Shape& shape, Dtype dtype) {
  return random::uniform(array(-limit, dtype), array(limit, dtype), shape, dtype);
}

array normal_scaled(double std, const Shape& shape, Dtype dtype) {
  return random::normal(shape, dtype, 0.0f, static_cast<float>(std));
}

// Householder QR of the n x n row-major matrix `a` (overwritten by R); returns Q, row-major,
// with a * Q's columns signed so that R's diagonal is non-negative (MLX multiplies by sign(r_jj)).
std::vector<double> orthogonal_factor(std::vector<double> a, int n) {
  std::vector<double> q(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) q[static_cast<size_t>(i) * n + i] = 1.0;
  auto at = [n](std::vector<double>& m, int r, int c) -> double& {
    return m[static_cast<size_t>(r) * n + c];
  };
  std::vector<double> v(n);
  for (int k = 0; k + 1 < n; ++k) {
    double norm = 0;
    for (int i = k; i < n; ++i) norm += at(a, i, k) * at(a, i, k);
    norm = std::sqrt(norm);
    if (norm == 0) continue;
    const double alpha = at(a, k, k) > 0 ? -norm : norm;
    double vnorm = 0;
    for (int i = k; i < n; ++i) {
      v[i] = at(a, i, k) - (i == k ? alpha : 0.0);
      vnorm += v[i] * v[i];
    }
    vnorm = std::sqrt(vnorm);
    if (vnorm == 0) continue;
    for (int i = k; i < n; ++i) v[i] /= vnorm;
    for (int c = k; c < n; ++c) {  // a <- (I - 2 v v^T) a
      double dot = 0;
      for (int i = k; i < n; ++i) dot += v[i] * at(a, i, c);
      for (int i = k; i < n; ++i) at(a, i, c) -= 2 * dot * v[i];
    }
    for (int r = 0; r < n; ++r) {  // q <- q (I - 2 v v^T)
      double dot = 0;
      for (int i = k; i < n; ++i) dot += at(q, r, i) * v[i];
      for (int i = k; i < n; ++i) at(q, r, i) -= 2 * dot * v[i];
    }
  }
  for (int c = 0; c < n; ++c) {
    const double d = at(a, c, c);
    const double s = d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0);
    for (int r = 0; r < n; ++r) at(q, r, c) *= s;
  }
  return q;
}

}  // namespace

Initializer constant(float value, Dtype dtype) {
  return [value, dtype](const array& a) { return full(a.shape(), array(value), dtype); };
}

Initializer normal(float mean, float std, Dtype dtype) {
  return [mean, std, dtype](const array& a) { return random::normal(a.shape(), dtype, mean, std); };
}

Initializer uniform(float low, float high, Dtype dtype) {
  return [low, high, dtype](const array& a) {
    return random::uniform(array(low, dtype), array(high, dtype), a.shape(), dtype);
  };
}

Initializer identity(Dtype dtype) {
  return [dtype](const array& a) {
    if (a.ndim() != 2 || a.shape(0) != a.shape(1)) {
      fail("identity", "The input array must be a square matrix but got shape " + shape_str(a.shape()) + ".");
    }
    return eye(a.shape(0), dtype);
  };
}

std::pair<int64_t, int64_t> fan_in_fan_out(const array& a, const std::string& caller) {
  if (a.ndim() < 2) {
    fail(caller, "Glorot / He initialization requires at least 2 dimensional input but input with " +
                     std::to_string(a.ndim()) + " dimensions.");
  }
  int64_t receptive_field = 1;
  for (size_t i = 1; i + 1 < a.ndim(); ++i) receptive_field *= a.shape()[i];
  return {int64_t{a.shape(-1)} * receptive_field, int64_t{a.shape(0)} * receptive_field};
}

array GlorotInitializer::operator()(const array& a, float gain) const {
  const bool is_normal = distribution_ == Distribution::normal;
  const auto [fan_in, fan_out] = fan_in_fan_out(a, is_normal ? "glorot_normal" : "glorot_uniform");
  const double fans = static_cast<double>(fan_in + fan_out);
  if (is_normal) return normal_scaled(gain * std::sqrt(2.0 / fans), a.shape(), dtype_);
  return uniform_symmetric(gain * std::sqrt(6.0 / fans), a.shape(), dtype_);
}

array HeInitializer::operator()(const array& a, const std::string& mode, float gain) const {
  const bool is_normal = distribution_ == Distribution::normal;
  const std::string fn = is_normal ? "he_normal" : "he_uniform";
  const auto [fan_in, fan_out] = fan_in_fan_out(a, fn);
  if (mode != "fan_in" && mode != "fan_out") {
    fail(fn, "Invalid mode: " + mode + ". Valid modes are: fan_in, fan_out");
  }
  const double fan = static_cast<double>(mode == "fan_in" ? fan_in : fan_out);
  if (is_normal) return normal_scaled(gain / std::sqrt(fan), a.shape(), dtype_);
  return uniform_symmetric(gain * std::sqrt(3.0 / fan), a.shape(), dtype_);
}

GlorotInitializer glorot_normal(Dtype dtype) { return {GlorotInitializer::Distribution::normal, dtype}; }
GlorotInitializer glorot_uniform(Dtype dtype) { return {GlorotInitializer::Distribution::uniform, dtype}; }
HeInitializer he_normal(Dtype dtype) { return {HeInitializer::Distribution::normal, dtype}; }
HeInitializer he_uniform(Dtype dtype) { return {HeInitializer::Distribution::uniform, dtype}; }

Initializer sparse(double sparsity, float mean, float std, Dtype dtype) {
  return [sparsity, mean, std, dtype](const array& a) {
    if (a.ndim() != 2)
      fail("sparse", "Only tensors with 2 dimensions are supported, got shape " + shape_str(a.shape()) + ".");
    const int rows = a.shape(0), cols = a.shape(1);
    const int num_zeros = static_cast<int>(std::ceil(sparsity * rows));
    if (num_zeros < 0 || num_zeros > rows) {
      fail("sparse", "sparsity " + std::to_string(sparsity) + " gives " + std::to_string(num_zeros) +
                         " zeros per column of " + std::to_string(rows) + ".");
    }
    const array order = argsort(random::uniform(a.shape()), 0);
    const array values = random::normal(a.shape(), dtype, mean, std);
    if (num_zeros == 0) return values;
    const array zero_rows = slice(order, {0, 0}, {num_zeros, cols});
    return put_along_axis(values, zero_rows, array(0, dtype), 0);
  };
}

Initializer orthogonal(float gain, Dtype dtype) {
  return [gain, dtype](const array& a) {
    if (a.ndim() != 2) {
      fail("orthogonal", "Orthogonal initialization requires a 2D array but got a " +
                             std::to_string(a.ndim()) + "D array.");
    }
    const int rows = a.shape(0), cols = a.shape(1);
    const int n = std::max(rows, cols);
    array draw = astype(random::normal({n, n}), float64, Device::cpu);
    draw.eval();
    std::vector<double> q =
        orthogonal_factor(std::vector<double>(draw.data<double>(), draw.data<double>() + draw.size()), n);
    std::vector<float> block(static_cast<size_t>(rows) * cols);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c)
        block[static_cast<size_t>(r) * cols + c] =
            static_cast<float>(q[static_cast<size_t>(r) * n + c] * gain);
    }
    return astype(array(block.begin(), {rows, cols}, float32), dtype);
  };
}

}  // namespace braid::nn::init
