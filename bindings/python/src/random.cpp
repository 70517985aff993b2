// braid.core.random (mlx.core.random's names, arguments and defaults). Without a key, each
// function takes the next key of braid's process-wide sequence, which is shared by all
// threads and advanced under a lock: concurrent draws never reuse a key. With a key, the
// numbers depend on the key alone, whatever the thread or device.
#include "python.h"

namespace braid::python {

namespace {

using Key = std::optional<array>;

/// A bound given as a Python scalar or an array.
array bound(py::handle value) { return to_array(value); }

/// loc or scale of normal: None, or a scalar taken in `dtype`, or an array.
std::optional<array> moment(py::handle value, Dtype dtype, double neutral) {
  if (value.is_none()) return std::nullopt;
  if (is_python_scalar(value) && !PyComplex_Check(value.ptr())) {
    const double v = value.cast<double>();
    if (v == neutral) return std::nullopt;  // the standard distribution, complex dtypes included
    return array(v, dtype);
  }
  return to_array(value);
}

std::optional<Shape> optional_shape(py::handle shape) {
  if (shape.is_none()) return std::nullopt;
  return to_shape(shape);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  auto r = m.def_submodule("random", "Random numbers: threefry keys, as mlx.core.random.");

  r.def(
      "seed", [](uint64_t seed) { random::seed(seed); }, "seed"_a,
      "Restarts the global key sequence (shared by every thread) from key(seed).");
  r.def(
      "key", [](uint64_t seed) { return random::key(seed); }, "seed"_a,
      "The key (a uint32 array of shape (2,)) of a seed.");
  r.def(
      "split",
      [](const array& key, int num, py::object s) { return random::split(key, num, to_stream_or_device(s)); },
      "key"_a, "num"_a = 2, "stream"_a = py::none(),
      "num keys made from key, as an array of shape (num, 2).");
  r.def(
      "bits",
      [](py::object shape, int width, Key key, py::object s) {
        return random::bits(to_shape(shape), width, key, to_stream_or_device(s));
      },
      "shape"_a = py::list(), "width"_a = 4, "key"_a = py::none(), "stream"_a = py::none(),
      "Random bits: uint32 for width 4, uint16 for 2, uint8 for 1.");
  r.def(
      "uniform",
      [](py::object low, py::object high, py::object shape, std::optional<Dtype> dtype, Key key,
         py::object s) {
        return random::uniform(bound(low), bound(high), to_shape(shape), dtype.value_or(float32), key,
                               to_stream_or_device(s));
      },
      "low"_a = 0, "high"_a = 1, "shape"_a = py::list(), "dtype"_a = float32, "key"_a = py::none(),
      "stream"_a = py::none(), "Uniform samples in [low, high) (scalars or arrays broadcast to shape).");
  r.def(
      "normal",
      [](py::object shape, std::optional<Dtype> dtype, py::object loc, py::object scale, Key key,
         py::object s) {
        const Dtype t = dtype.value_or(float32);
        return random::normal(to_shape(shape), t, moment(loc, t, 0.0), moment(scale, t, 1.0), key,
                              to_stream_or_device(s));
      },
      "shape"_a = py::list(), "dtype"_a = float32, "loc"_a = 0.0, "scale"_a = 1.0, "key"_a = py::none(),
      "stream"_a = py::none(),
      "Normal samples of mean loc and standard deviation scale (scalars or arrays).");
  r.def(
      "multivariate_normal",
      [](const array& mean, const array& cov, py::object shape, std::optional<Dtype> dtype, Key key,
         py::object s) {
        return random::multivariate_normal(mean, cov, to_shape(shape), dtype.value_or(float32), key,
                                           to_stream_or_device(s));
      },
      "mean"_a, "cov"_a, "shape"_a = py::list(), "dtype"_a = float32, "key"_a = py::none(),
      "stream"_a = py::none(),
      "Samples of the normal distribution with mean (..., n) and covariance (..., n, n); float32.");
  r.def(
      "randint",
      [](py::object low, py::object high, py::object shape, std::optional<Dtype> dtype, Key key,
         py::object s) {
        return random::randint(bound(low), bound(high), to_shape(shape), dtype.value_or(int32), key,
                               to_stream_or_device(s));
      },
      "low"_a, "high"_a, "shape"_a = py::list(), "dtype"_a = int32, "key"_a = py::none(),
      "stream"_a = py::none(), "Integers in [low, high) (scalars or arrays broadcast to shape).");
  r.def(
      "bernoulli",
      [](py::object p, py::object shape, Key key, py::object s) {
        auto sh = optional_shape(shape);
        auto sd = to_stream_or_device(s);
        return sh ? random::bernoulli(bound(p), *sh, key, sd) : random::bernoulli(bound(p), key, sd);
      },
      "p"_a = 0.5, "shape"_a = py::none(), "key"_a = py::none(), "stream"_a = py::none(),
      "Booleans, true with probability p (a float or floating array; shape defaults to p's).");
  r.def(
      "truncated_normal",
      [](py::object lower, py::object upper, py::object shape, std::optional<Dtype> dtype, Key key,
         py::object s) {
        auto sh = optional_shape(shape);
        auto sd = to_stream_or_device(s);
        const Dtype t = dtype.value_or(float32);
        return sh ? random::truncated_normal(bound(lower), bound(upper), *sh, t, key, sd)
                  : random::truncated_normal(bound(lower), bound(upper), t, key, sd);
      },
      "lower"_a, "upper"_a, "shape"_a = py::none(), "dtype"_a = float32, "key"_a = py::none(),
      "stream"_a = py::none(),
      "Normal samples truncated to [lower, upper] (shape defaults to the bounds' broadcast shape).");
  r.def(
      "gumbel",
      [](py::object shape, std::optional<Dtype> dtype, Key key, py::object s) {
        return random::gumbel(to_shape(shape), dtype.value_or(float32), key, to_stream_or_device(s));
      },
      "shape"_a = py::list(), "dtype"_a = float32, "key"_a = py::none(), "stream"_a = py::none(),
      "Samples of the standard Gumbel distribution.");
  r.def(
      "categorical",
      [](const array& logits, int axis, py::object shape, std::optional<int> num_samples, Key key,
         py::object s) {
        auto sd = to_stream_or_device(s);
        if (!shape.is_none() && num_samples) {
          throw std::invalid_argument("[categorical] At most one of shape or num_samples can be specified.");
        }
        if (!shape.is_none()) return random::categorical(logits, axis, to_shape(shape), key, sd);
        if (num_samples) return random::categorical(logits, axis, *num_samples, key, sd);
        return random::categorical(logits, axis, key, sd);
      },
      "logits"_a, "axis"_a = -1, "shape"_a = py::none(), "num_samples"_a = py::none(), "key"_a = py::none(),
      "stream"_a = py::none(),
      "uint32 category indices drawn from the unnormalized log-probabilities along axis of logits.");
  r.def(
      "laplace",
      [](py::object shape, std::optional<Dtype> dtype, float loc, float scale, Key key, py::object s) {
        return random::laplace(to_shape(shape), dtype.value_or(float32), loc, scale, key,
                               to_stream_or_device(s));
      },
      "shape"_a = py::list(), "dtype"_a = float32, "loc"_a = 0.0, "scale"_a = 1.0, "key"_a = py::none(),
      "stream"_a = py::none(), "Samples of the Laplace distribution with location loc and scale scale.");
  r.def(
      "permutation",
      [](py::object x, int axis, Key key, py::object s) {
        auto sd = to_stream_or_device(s);
        if (PyLong_Check(x.ptr()) && !PyBool_Check(x.ptr()))
          return random::permutation(x.cast<int>(), key, sd);
        if (!py::isinstance<array>(x)) throw py::type_error("[permutation] x must be an int or an array.");
        return random::permutation(x.cast<array>(), axis, key, sd);
      },
      "x"_a, "axis"_a = 0, "key"_a = py::none(), "stream"_a = py::none(),
      "A random permutation of arange(x) for an int x, else x with its entries along axis shuffled.");
}

}  // namespace braid::python
