// Loss functions (MLX's mlx/nn/losses.py): MLX's arguments in MLX's order with MLX's defaults,
// including each loss's own default reduction. `reduction` is "none" (the element-wise loss),
// "mean" or "sum" (a 0-d array); any other value, and inputs whose shapes do not fit, throw
// std::invalid_argument("[<loss name>] ...") before any node is built. Every function is
// thread-safe (it only builds a graph).
#pragma once

#include <optional>
#include <string>

#include "braid/array.h"

namespace braid::nn::losses {

/// Cross entropy of unnormalized `logits`: logsumexp(logits) - score along `axis`. `targets`
/// are class indices (an integer array shaped as logits without `axis`) or probabilities (the
/// shape of logits). label_smoothing in [0, 1) mixes the score with the mean logit; `weights`
/// (shaped as the element-wise loss) multiply the loss before the reduction.
array cross_entropy(const array& logits, const array& targets,
                    const std::optional<array>& weights = std::nullopt, int axis = -1,
                    float label_smoothing = 0.0f, const std::string& reduction = "none");

/// Binary cross entropy of logits (with_logits: logaddexp(0, x) - x * y) or of probabilities
/// (log terms clipped below at -100); inputs, targets and weights share one shape.
array binary_cross_entropy(const array& inputs, const array& targets,
                           const std::optional<array>& weights = std::nullopt, bool with_logits = true,
                           const std::string& reduction = "mean");

/// |predictions - targets| (equal shapes).
array l1_loss(const array& predictions, const array& targets, const std::string& reduction = "mean");

/// (predictions - targets)^2 (equal shapes).
array mse_loss(const array& predictions, const array& targets, const std::string& reduction = "mean");

/// -inputs[target] along `axis` of log-probabilities `inputs`; `targets` are integer class
/// indices shaped as inputs without `axis`.
array nll_loss(const array& inputs, const array& targets, int axis = -1,
               const std::string& reduction = "none");

/// 0.5 * (log(v) + (targets - inputs)^2 / v) with v = max(vars, eps), plus 0.5 * log(2 pi)
/// when `full`; inputs, targets and vars share one shape.
array gaussian_nll_loss(const array& inputs, const array& targets, const array& vars, bool full = false,
                        float eps = 1e-6f, const std::string& reduction = "mean");

/// sum(exp(targets) * (targets - inputs), axis) of log-probabilities.
array kl_div_loss(const array& inputs, const array& targets, int axis = -1,
                  const std::string& reduction = "none");

/// 0.5 d^2 / beta where d = |predictions - targets| < beta, else d - 0.5 beta (equal shapes).
array smooth_l1_loss(const array& predictions, const array& targets, float beta = 1.0f,
                     const std::string& reduction = "mean");

/// max(d(a, p) - d(a, n) + margin, 0) with d(x, y) = (sum(|x - y|^p) + eps)^(1/p), the sums over
/// `axis` (the p-norm, as MLX: sqrt for p = 2).
array triplet_loss(const array& anchors, const array& positives, const array& negatives, int axis = -1,
                   int p = 2, float margin = 1.0f, float eps = 1e-6f, const std::string& reduction = "none");

/// max(1 - inputs * targets, 0), targets in {-1, 1}.
array hinge_loss(const array& inputs, const array& targets, const std::string& reduction = "none");

/// 0.5 a^2 where |a| <= delta, else delta * (|a| - 0.5 delta), a = inputs - targets.
array huber_loss(const array& inputs, const array& targets, float delta = 1.0f,
                 const std::string& reduction = "none");

/// log(cosh(inputs - targets)), computed as logaddexp(a, -a) - log(2) so it never overflows.
array log_cosh_loss(const array& inputs, const array& targets, const std::string& reduction = "none");

/// sum(x1 * x2, axis) / max(|x1| |x2|, eps), the norms along `axis` (default 1, as MLX).
array cosine_similarity_loss(const array& x1, const array& x2, int axis = 1, float eps = 1e-8f,
                             const std::string& reduction = "none");

/// max(0, -targets * (inputs1 - inputs2) + margin), targets in {-1, 1}; all three share one
/// shape.
array margin_ranking_loss(const array& inputs1, const array& inputs2, const array& targets,
                          float margin = 0.0f, const std::string& reduction = "none");

}  // namespace braid::nn::losses
