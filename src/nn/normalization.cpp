// Normalization layers (MLX's normalization.py). Scalars join the arithmetic in the input's
// dtype, as Python's weakly typed floats do in MLX.
#include <numeric>
#include <stdexcept>

#include "braid/fast.h"
#include "braid/nn/layers.h"
#include "braid/ops.h"

namespace braid::nn {

namespace {

array scalar_like(double value, const array& x) { return array(static_cast<float>(value), x.dtype()); }

// (x - mean) * rsqrt(var + eps).
array normalize(const array& x, const array& mean, const array& var, float eps) {
  return multiply(subtract(x, mean), rsqrt(add(var, scalar_like(eps, var))));
}

std::vector<int> axis_range(int begin, int end) {
  std::vector<int> axes(std::max(0, end - begin));
  std::iota(axes.begin(), axes.end(), begin);
  return axes;
}

}  // namespace

LayerNorm::LayerNorm(int dims, float eps, bool affine, bool bias) : eps_(eps) {
  if (dims <= 0) fail("dims must be positive; got " + std::to_string(dims) + ".");
  if (affine) {
    register_parameter("weight", ones({dims}));
    if (bias) register_parameter("bias", zeros({dims}));
  }
}

array LayerNorm::operator()(const array& x) {
  std::optional<array> weight, bias;
  if (has_param("weight")) weight = param("weight");
  if (has_param("bias")) bias = param("bias");
  return fast::layer_norm(x, weight, bias, eps_);
}

RMSNorm::RMSNorm(int dims, float eps) : eps_(eps) {
  if (dims <= 0) fail("dims must be positive; got " + std::to_string(dims) + ".");
  register_parameter("weight", ones({dims}));
}

array RMSNorm::operator()(const array& x) { return fast::rms_norm(x, param("weight"), eps_); }

GroupNorm::GroupNorm(int num_groups, int dims, float eps, bool affine, bool pytorch_compatible)
    : num_groups_(num_groups), dims_(dims), eps_(eps), pytorch_compatible_(pytorch_compatible) {
  if (num_groups <= 0 || dims <= 0) fail("num_groups and dims must be positive.");
  if (pytorch_compatible && dims % num_groups != 0) {
    fail("dims (" + std::to_string(dims) + ") must be divisible by num_groups (" +
         std::to_string(num_groups) + ").");
  }
  if (affine) {
    register_parameter("bias", zeros({dims}));
    register_parameter("weight", ones({dims}));
  }
}

array GroupNorm::operator()(const array& x) {
  if (x.ndim() < 2 || x.shape(-1) != dims_) {
    fail("Expected an input [batch, ..., " + std::to_string(dims_) + "].");
  }
  const int batch = x.shape(0);
  array y = x;
  if (pytorch_compatible_) {
    // Consecutive features form a group: [batch, groups, spatial * group_size].
    const int group_size = dims_ / num_groups_;
    y = transpose(reshape(x, {batch, -1, num_groups_, group_size}), {0, 2, 1, 3});
    y = fast::layer_norm(reshape(y, {batch, num_groups_, -1}), std::nullopt, std::nullopt, eps_);
    y = transpose(reshape(y, {batch, num_groups_, -1, group_size}), {0, 2, 1, 3});
  } else {
    // Feature f belongs to group f % num_groups (MLX's grouping).
    y = reshape(x, {batch, -1, num_groups_});
    y = normalize(y, mean(y, 1, true), var(y, 1, true), eps_);
  }
  y = reshape(y, x.shape());
  return has_param("weight") ? add(multiply(param("weight"), y), param("bias")) : y;
}

BatchNorm::BatchNorm(int num_features, float eps, float momentum, bool affine, bool track_running_stats)
    : num_features_(num_features), eps_(eps), momentum_(momentum), track_running_stats_(track_running_stats) {
  if (num_features <= 0) fail("num_features must be positive; got " + std::to_string(num_features) + ".");
  if (affine) {
    register_parameter("weight", ones({num_features}));
    register_parameter("bias", zeros({num_features}));
  }
  if (track_running_stats) {
    register_parameter("running_mean", zeros({num_features}));
    register_parameter("running_var", ones({num_features}));
    freeze(false, {"running_mean", "running_var"});
  }
}

BatchNorm& BatchNorm::unfreeze(bool recurse, const std::vector<std::string>& keys, bool strict) {
  Module::unfreeze(recurse, keys, strict);
  if (track_running_stats_) freeze(false, {"running_mean", "running_var"});
  return *this;
}

array BatchNorm::operator()(const array& x) {
  if (x.ndim() < 2 || x.ndim() > 4) {
    fail("Expected input tensor to have 2, 3 or 4 dimensions, but got " + std::to_string(x.ndim()));
  }
  if (x.shape(-1) != num_features_) {
    fail("Expected " + std::to_string(num_features_) + " features in the last axis, got " +
         std::to_string(x.shape(-1)) + ".");
  }
  const auto axes = axis_range(0, static_cast<int>(x.ndim()) - 1);
  array batch_mean = mean(x, axes);
  array batch_var = var(x, axes);
  array m = batch_mean, v = batch_var;
  if (training() && track_running_stats_) {
    // The running statistics take no part in gradients (MLX keeps them frozen).
    const float keep = static_cast<float>(1.0 - static_cast<double>(momentum_));
    auto blend = [&](const array& running, const array& batch) {
      return add(multiply(array(keep), running), multiply(array(momentum_), stop_gradient(batch)));
    };
    register_parameter("running_mean", blend(param("running_mean"), batch_mean));
    register_parameter("running_var", blend(param("running_var"), batch_var));
  } else if (track_running_stats_) {
    m = param("running_mean");
    v = param("running_var");
  }
  array y = normalize(x, m, v, eps_);
  return has_param("weight") ? add(multiply(param("weight"), y), param("bias")) : y;
}

InstanceNorm::InstanceNorm(int dims, float eps, bool affine) : eps_(eps) {
  if (dims <= 0) fail("dims must be positive; got " + std::to_string(dims) + ".");
  if (affine) {
    register_parameter("weight", ones({dims}));
    register_parameter("bias", zeros({dims}));
  }
}

array InstanceNorm::operator()(const array& x) {
  if (x.ndim() < 2) fail("Expected an input [batch, ..., channels].");
  const auto axes = axis_range(1, static_cast<int>(x.ndim()) - 1);
  array y = normalize(x, mean(x, axes, true), var(x, axes, true), eps_);
  return has_param("weight") ? add(multiply(param("weight"), y), param("bias")) : y;
}

}  // namespace braid::nn
