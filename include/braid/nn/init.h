// Parameter initializers (MLX's mlx/nn/init.py). Each factory returns an initializer: a
// callable that takes an array and returns a new one of its shape (its values are not read).
// Random initializers draw from braid::random's process-wide key sequence, one key per call,
// as MLX's do. An initializer may be called from any number of threads at once; a shape it
// cannot handle throws std::invalid_argument("[<factory name>] ...") when it is called.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "braid/array.h"

namespace braid::nn::init {

/// An initializer of one argument.
using Initializer = std::function<array(const array&)>;

/// Returns full(a.shape, value) of `dtype`.
Initializer constant(float value, Dtype dtype = float32);
/// Samples of the normal distribution N(mean, std^2).
Initializer normal(float mean = 0.0f, float std = 1.0f, Dtype dtype = float32);
/// Samples of the uniform distribution on [low, high).
Initializer uniform(float low = 0.0f, float high = 1.0f, Dtype dtype = float32);
/// The identity matrix; the input must be square and 2-d.
Initializer identity(Dtype dtype = float32);

/// (fan_in, fan_out) of a weight as MLX computes them: fan_in = shape[-1] and fan_out =
/// shape[0], each times the product of the axes between (the kernel of a channels-last
/// convolution weight [C_out, kernel..., C_in]). Fewer than 2 dimensions throw.
std::pair<int64_t, int64_t> fan_in_fan_out(const array& a, const std::string& caller = "fan_in_fan_out");

/// Glorot (Xavier) initializer: called as init(a) or init(a, gain).
class GlorotInitializer {
 public:
  enum class Distribution { normal, uniform };
  GlorotInitializer(Distribution distribution, Dtype dtype) : distribution_(distribution), dtype_(dtype) {}
  /// normal: std = gain * sqrt(2 / (fan_in + fan_out)); uniform: on [-limit, limit) with
  /// limit = gain * sqrt(6 / (fan_in + fan_out)).
  array operator()(const array& a, float gain = 1.0f) const;

 private:
  Distribution distribution_;
  Dtype dtype_;
};

/// He (Kaiming) initializer: called as init(a), init(a, mode) or init(a, mode, gain), with
/// mode "fan_in" (the default) or "fan_out"; any other mode throws.
class HeInitializer {
 public:
  enum class Distribution { normal, uniform };
  HeInitializer(Distribution distribution, Dtype dtype) : distribution_(distribution), dtype_(dtype) {}
  /// normal: std = gain / sqrt(fan); uniform: on [-limit, limit) with limit = gain * sqrt(3 / fan).
  array operator()(const array& a, const std::string& mode = "fan_in", float gain = 1.0f) const;

 private:
  Distribution distribution_;
  Dtype dtype_;
};

/// Glorot normal: N(0, gain^2 * 2 / (fan_in + fan_out)).
GlorotInitializer glorot_normal(Dtype dtype = float32);
/// Glorot uniform: U(-limit, limit), limit = gain * sqrt(6 / (fan_in + fan_out)).
GlorotInitializer glorot_uniform(Dtype dtype = float32);
/// He normal: N(0, gain^2 / fan).
HeInitializer he_normal(Dtype dtype = float32);
/// He uniform: U(-limit, limit), limit = gain * sqrt(3 / fan).
HeInitializer he_uniform(Dtype dtype = float32);

/// A 2-d array of N(mean, std^2) samples with ceil(sparsity * rows) entries of each column, at
/// random rows, set to zero (as MLX and PyTorch's sparse_).
Initializer sparse(double sparsity, float mean = 0.0f, float std = 1.0f, Dtype dtype = float32);

/// A 2-d matrix with orthonormal rows or columns (whichever are fewer), times `gain`: the
/// first rows x cols block of Q from the QR decomposition of an n x n standard normal draw
/// (n = max(rows, cols)), with Q's columns signed so that R's diagonal is positive. The QR
/// runs on the host in double precision (braid has no linalg::qr; MLX runs its QR on the CPU).
Initializer orthogonal(float gain = 1.0f, Dtype dtype = float32);

}  // namespace braid::nn::init
