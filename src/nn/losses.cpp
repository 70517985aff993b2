// Loss functions as compositions of braid's ops, in MLX's formulas (nn/losses.h). Every check
// runs before the first op, so a bad call builds no node.
#include "braid/nn/losses.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "braid/ops.h"
#include "nn/scalars.h"

namespace braid::nn::losses {

using detail::weak_float;
using detail::weak_int;

namespace {

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

[[noreturn]] void fail(const std::string& fn, const std::string& what) {
  throw std::invalid_argument("[" + fn + "] " + what);
}

void check_reduction(const std::string& fn, const std::string& reduction) {
  if (reduction != "none" && reduction != "mean" && reduction != "sum") {
    fail(fn, "Invalid reduction '" + reduction + "'. Must be one of 'none', 'mean', 'sum'.");
  }
}

array reduce(const array& loss, const std::string& reduction) {
  if (reduction == "mean") return mean(loss);
  if (reduction == "sum") return sum(loss);
  return loss;
}

void check_same_shape(const std::string& fn, const array& a, const char* a_name, const array& b,
                      const char* b_name) {
  if (a.shape() != b.shape()) {
    fail(fn, std::string(a_name) + " shape " + shape_str(a.shape()) + " does not match " + b_name +
                 " shape " + shape_str(b.shape()) + ".");
  }
}

// `axis` of an array of `ndim` dimensions, made non-negative.
int normalize_axis(const std::string& fn, int axis, int ndim) {
  if (axis < -ndim || axis >= ndim) {
    fail(fn, "Axis " + std::to_string(axis) + " is out of range for an array of " + std::to_string(ndim) +
                 " dimensions.");
  }
  return axis < 0 ? axis + ndim : axis;
}

// NumPy's broadcast of two shapes, computed before any op so that a bad axis builds no node.
Shape broadcast_shape(const std::string& fn, const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int32_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int32_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      fail(fn, "Shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast.");
    }
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

Shape drop_axis(Shape shape, int axis) {
  shape.erase(shape.begin() + axis);
  return shape;
}

// Class-index targets: integers shaped as `inputs` without `axis`.
void check_class_indices(const std::string& fn, const array& inputs, const array& targets, int axis) {
  if (targets.shape() != drop_axis(inputs.shape(), axis)) {
    fail(fn, "Targets shape " + shape_str(targets.shape()) + " does not match logits shape " +
                 shape_str(inputs.shape()) + " without axis " + std::to_string(axis) + ".");
  }
  if (!issubdtype(targets.dtype(), integer)) fail(fn, "Class-index targets must have an integer dtype.");
}

void check_weights(const std::string& fn, const std::optional<array>& weights, const Shape& loss_shape) {
  if (weights && weights->shape() != loss_shape) {
    fail(fn, "Weights with shape " + shape_str(weights->shape()) +
                 " is not the same as output loss with shape " + shape_str(loss_shape) + ".");
  }
}

}  // namespace

array cross_entropy(const array& logits, const array& targets, const std::optional<array>& weights, int axis,
                    float label_smoothing, const std::string& reduction) {
  const std::string fn = "cross_entropy";
  check_reduction(fn, reduction);
  if (label_smoothing < 0 || label_smoothing >= 1) {
    fail(fn, "Label smoothing must in [0, 1), got " + std::to_string(label_smoothing) + ".");
  }
  const int ax = normalize_axis(fn, axis, static_cast<int>(logits.ndim()));
  const bool targets_as_probs = targets.ndim() == logits.ndim();
  if (targets_as_probs) {
    if (targets.shape() != logits.shape()) {
      fail(fn, "Targets shape " + shape_str(targets.shape()) + " does not match logits shape " +
                   shape_str(logits.shape()) + ".");
    }
  } else {
    check_class_indices(fn, logits, targets, ax);
  }
  check_weights(fn, weights, drop_axis(logits.shape(), ax));

  const array score = targets_as_probs ? sum(logits * targets, ax)
                                       : squeeze(take_along_axis(logits, expand_dims(targets, ax), ax), ax);
  const array lse = logsumexp(logits, ax);
  array loss = lse - score;
  if (label_smoothing > 0) {
    // The true class keeps 1 - label_smoothing of its score; the rest spreads over the mean logit.
    const array adjusted_score = weak_float(1.0 - label_smoothing, score) * score;
    const array smoothed_loss = -mean(logits, ax) * weak_float(label_smoothing, logits);
    loss = lse - adjusted_score + smoothed_loss;
  }
  if (weights) loss = loss * *weights;
  return reduce(loss, reduction);
}

array binary_cross_entropy(const array& inputs, const array& targets, const std::optional<array>& weights,
                           bool with_logits, const std::string& reduction) {
  const std::string fn = "binary_cross_entropy";
  check_reduction(fn, reduction);
  check_same_shape(fn, inputs, "Inputs", targets, "targets");
  check_weights(fn, weights, inputs.shape());
  array loss = [&] {
    if (with_logits) return logaddexp(weak_float(0.0, inputs), inputs) - inputs * targets;
    const array floor_ = weak_int(-100, inputs);
    const array log_p = clip(log(inputs), floor_, std::nullopt);
    const array log_not_p = clip(log(weak_int(1, inputs) - inputs), floor_, std::nullopt);
    return -(targets * log_p + (weak_int(1, targets) - targets) * log_not_p);
  }();
  if (weights) loss = loss * *weights;
  return reduce(loss, reduction);
}

array l1_loss(const array& predictions, const array& targets, const std::string& reduction) {
  check_reduction("l1_loss", reduction);
  check_same_shape("l1_loss", predictions, "Predictions", targets, "targets");
  return reduce(abs(predictions - targets), reduction);
}

array mse_loss(const array& predictions, const array& targets, const std::string& reduction) {
  check_reduction("mse_loss", reduction);
  check_same_shape("mse_loss", predictions, "Predictions", targets, "targets");
  return reduce(square(predictions - targets), reduction);
}

array nll_loss(const array& inputs, const array& targets, int axis, const std::string& reduction) {
  const std::string fn = "nll_loss";
  check_reduction(fn, reduction);
  const int ax = normalize_axis(fn, axis, static_cast<int>(inputs.ndim()));
  check_class_indices(fn, inputs, targets, ax);
  return reduce(-squeeze(take_along_axis(inputs, expand_dims(targets, ax), ax), ax), reduction);
}

array gaussian_nll_loss(const array& inputs, const array& targets, const array& vars, bool full, float eps,
                        const std::string& reduction) {
  const std::string fn = "gaussian_nll_loss";
  check_reduction(fn, reduction);
  check_same_shape(fn, inputs, "Inputs", targets, "targets");
  check_same_shape(fn, inputs, "Inputs", vars, "vars");
  const array v = maximum(vars, weak_float(eps, vars));
  array loss = weak_float(0.5, v) * (log(v) + square(targets - inputs) / v);
  if (full) loss = loss + weak_float(0.5 * std::log(2 * std::numbers::pi), loss);
  return reduce(loss, reduction);
}

array kl_div_loss(const array& inputs, const array& targets, int axis, const std::string& reduction) {
  const std::string fn = "kl_div_loss";
  check_reduction(fn, reduction);
  const Shape shape = broadcast_shape(fn, inputs.shape(), targets.shape());
  const int ax = normalize_axis(fn, axis, static_cast<int>(shape.size()));
  return reduce(sum(exp(targets) * (targets - inputs), ax), reduction);
}

array smooth_l1_loss(const array& predictions, const array& targets, float beta,
                     const std::string& reduction) {
  const std::string fn = "smooth_l1_loss";
  check_reduction(fn, reduction);
  check_same_shape(fn, predictions, "Predictions", targets, "targets");
  const array diff = abs(predictions - targets);
  const array b = weak_float(beta, diff);
  const array loss =
      where(diff < b, weak_float(0.5, diff) * square(diff) / b, diff - weak_float(0.5, diff) * b);
  return reduce(loss, reduction);
}

array triplet_loss(const array& anchors, const array& positives, const array& negatives, int axis, int p,
                   float margin, float eps, const std::string& reduction) {
  const std::string fn = "triplet_loss";
  check_reduction(fn, reduction);
  const Shape to_positive_shape = broadcast_shape(fn, anchors.shape(), positives.shape());
  const Shape to_negative_shape = broadcast_shape(fn, anchors.shape(), negatives.shape());
  if (to_positive_shape.size() != to_negative_shape.size()) {
    fail(fn, "Anchors, positives and negatives broadcast to different numbers of dimensions.");
  }
  const int ax = normalize_axis(fn, axis, static_cast<int>(to_positive_shape.size()));
  const array to_positive = anchors - positives;
  const array to_negative = anchors - negatives;
  // The p-norm (sum |d|^p + eps)^(1/p) along the axis; sqrt for p = 2.
  auto distance = [&](const array& d) {
    const array total = sum(power(abs(d), weak_int(p, d)), ax) + weak_float(eps, d);
    return p == 2 ? sqrt(total) : power(total, weak_float(1.0 / p, total));
  };
  const array gap = distance(to_positive) - distance(to_negative);
  return reduce(maximum(gap + weak_float(margin, gap), weak_int(0, gap)), reduction);
}

array hinge_loss(const array& inputs, const array& targets, const std::string& reduction) {
  check_reduction("hinge_loss", reduction);
  const array product = inputs * targets;
  return reduce(maximum(weak_int(1, product) - product, weak_int(0, product)), reduction);
}

array huber_loss(const array& inputs, const array& targets, float delta, const std::string& reduction) {
  check_reduction("huber_loss", reduction);
  const array abs_errors = abs(inputs - targets);
  const array d = weak_float(delta, abs_errors);
  const array quadratic = minimum(abs_errors, d);
  const array linear = abs_errors - quadratic;
  return reduce(weak_float(0.5, quadratic) * square(quadratic) + d * linear, reduction);
}

array log_cosh_loss(const array& inputs, const array& targets, const std::string& reduction) {
  check_reduction("log_cosh_loss", reduction);
  const array errors = inputs - targets;
  return reduce(logaddexp(errors, -errors) - weak_float(std::numbers::ln2, errors), reduction);
}

array cosine_similarity_loss(const array& x1, const array& x2, int axis, float eps,
                             const std::string& reduction) {
  const std::string fn = "cosine_similarity_loss";
  check_reduction(fn, reduction);
  if (x1.ndim() != x2.ndim()) {
    fail(fn, "x1 " + shape_str(x1.shape()) + " and x2 " + shape_str(x2.shape()) +
                 " must have the same number of dimensions.");
  }
  broadcast_shape(fn, x1.shape(), x2.shape());
  const int ax = normalize_axis(fn, axis, static_cast<int>(x1.ndim()));
  const array product = x1 * x2;
  const array x1_norm = sqrt(sum(square(x1), ax));
  const array x2_norm = sqrt(sum(square(x2), ax));
  const array norms = x1_norm * x2_norm;
  return reduce(sum(product, ax) / maximum(norms, weak_float(eps, norms)), reduction);
}

array margin_ranking_loss(const array& inputs1, const array& inputs2, const array& targets, float margin,
                          const std::string& reduction) {
  const std::string fn = "margin_ranking_loss";
  check_reduction(fn, reduction);
  if (inputs1.shape() != inputs2.shape() || inputs1.shape() != targets.shape()) {
    fail(fn, "The shapes of the arguments do not match. The provided shapes are inputs1.shape=" +
                 shape_str(inputs1.shape()) + ", inputs2.shape=" + shape_str(inputs2.shape()) +
                 ", and targets.shape=" + shape_str(targets.shape()) + ".");
  }
  const array differences = inputs1 - inputs2;
  const array ranked = -targets * differences;
  return reduce(maximum(weak_int(0, ranked), ranked + weak_float(margin, ranked)), reduction);
}

}  // namespace braid::nn::losses
