"""Loss functions of braid.nn, as mlx.nn.losses: the same names, arguments, defaults and
reductions ("none", "mean" or "sum")."""

import math
from typing import Literal, Optional, get_args

import braid.core as mx

Reduction = Literal["none", "mean", "sum"]


def _reduce(loss: mx.array, reduction: Reduction = "none"):
    if reduction not in get_args(Reduction):
        raise ValueError(f"Invalid reduction. Must be one of {get_args(Reduction)}.")
    if reduction == "mean":
        return mx.mean(loss)
    if reduction == "sum":
        return mx.sum(loss)
    return loss


def _check_same_shape(a, b, first, second):
    if a.shape != b.shape:
        raise ValueError(f"{first} shape {a.shape} does not match {second} shape {b.shape}.")


def _apply_weights(loss, weights):
    if weights is None:
        return loss
    if weights.shape != loss.shape:
        raise ValueError(
            f"Weights with shape {weights.shape} is not the same as output loss with shape "
            f"{loss.shape}."
        )
    return loss * weights


def cross_entropy(
    logits: mx.array,
    targets: mx.array,
    weights: Optional[mx.array] = None,
    axis: int = -1,
    label_smoothing: float = 0.0,
    reduction: Reduction = "none",
) -> mx.array:
    """Cross entropy of unnormalized ``logits`` against ``targets``: class indices (the
    logits' shape without ``axis``) or probabilities (the logits' shape).

    ``label_smoothing`` in [0, 1) mixes the targets with the uniform distribution;
    ``weights`` (the loss's shape) scale each loss.
    """
    if label_smoothing < 0 or label_smoothing >= 1:
        raise ValueError(f"Label smoothing must in [0, 1), got {label_smoothing}.")

    targets_as_probs = targets.ndim == logits.ndim
    if targets_as_probs:
        expected = tuple(logits.shape)
    else:
        expected = list(logits.shape)
        expected.pop(axis)
        expected = tuple(expected)
    if tuple(targets.shape) != expected:
        raise ValueError(
            f"Targets shape {targets.shape} does not match logits shape {logits.shape}."
        )

    if targets_as_probs:
        score = mx.sum(logits * targets, axis=axis)
    else:
        score = mx.take_along_axis(logits, mx.expand_dims(targets, axis), axis).squeeze(axis)

    logsumexp = mx.logsumexp(logits, axis=axis)
    if label_smoothing > 0:
        smoothed = -mx.mean(logits, axis=axis) * label_smoothing
        loss = logsumexp - (1 - label_smoothing) * score + smoothed
    else:
        loss = logsumexp - score
    return _reduce(_apply_weights(loss, weights), reduction)


def binary_cross_entropy(
    inputs: mx.array,
    targets: mx.array,
    weights: Optional[mx.array] = None,
    with_logits: bool = True,
    reduction: Reduction = "mean",
) -> mx.array:
    """Binary cross entropy of ``inputs`` (logits, or probabilities when ``with_logits`` is
    False, their logs clipped at -100) against ``targets`` in {0, 1}."""
    _check_same_shape(inputs, targets, "Inputs", "targets")
    if with_logits:
        loss = mx.logaddexp(0.0, inputs) - inputs * targets
    else:
        log_p = mx.clip(mx.log(inputs), a_min=-100, a_max=None)
        log_not_p = mx.clip(mx.log(1 - inputs), a_min=-100, a_max=None)
        loss = -(targets * log_p + (1 - targets) * log_not_p)
    return _reduce(_apply_weights(loss, weights), reduction)


def l1_loss(predictions: mx.array, targets: mx.array, reduction: Reduction = "mean") -> mx.array:
    """Absolute differences ``|predictions - targets|``."""
    _check_same_shape(predictions, targets, "Predictions", "targets")
    return _reduce(mx.abs(predictions - targets), reduction)


def mse_loss(predictions: mx.array, targets: mx.array, reduction: Reduction = "mean") -> mx.array:
    """Squared differences ``(predictions - targets)^2``."""
    _check_same_shape(predictions, targets, "Predictions", "targets")
    return _reduce(mx.square(predictions - targets), reduction)


def nll_loss(
    inputs: mx.array, targets: mx.array, axis: int = -1, reduction: Reduction = "none"
) -> mx.array:
    """Negative log likelihood of the class indices ``targets`` under the log-probabilities
    ``inputs`` (distribution along ``axis``)."""
    picked = mx.take_along_axis(inputs, mx.expand_dims(targets, axis), axis).squeeze(axis)
    return _reduce(-picked, reduction)


def gaussian_nll_loss(
    inputs: mx.array,
    targets: mx.array,
    vars: mx.array,
    full: bool = False,
    eps: float = 1e-6,
    reduction: Reduction = "mean",
) -> mx.array:
    r"""Negative log likelihood of ``targets`` under normal distributions of means
    ``inputs`` and variances ``vars`` (at least ``eps``):
    :math:`\frac{1}{2}(\log v + (x - y)^2 / v)`, plus :math:`\frac{1}{2}\log 2\pi` when
    ``full``."""
    _check_same_shape(inputs, targets, "Inputs", "targets")
    _check_same_shape(inputs, vars, "Inputs", "vars")
    vars = mx.maximum(vars, eps)
    loss = 0.5 * (mx.log(vars) + mx.square(targets - inputs) / vars)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def kl_div_loss(
    inputs: mx.array, targets: mx.array, axis: int = -1, reduction: Reduction = "none"
) -> mx.array:
    """Kullback-Leibler divergence of the target distribution from the input one, both as
    log-probabilities along ``axis``: ``sum(exp(targets) * (targets - inputs), axis)``."""
    loss = mx.sum(mx.exp(targets) * (targets - inputs), axis)
    return _reduce(loss, reduction)


def smooth_l1_loss(
    predictions: mx.array,
    targets: mx.array,
    beta: float = 1.0,
    reduction: Reduction = "mean",
) -> mx.array:
    r"""Smooth L1: :math:`0.5 d^2 / \beta` where :math:`d = |x - y| < \beta`,
    :math:`d - 0.5 \beta` elsewhere."""
    _check_same_shape(predictions, targets, "Predictions", "targets")
    diff = mx.abs(predictions - targets)
    loss = mx.where(diff < beta, 0.5 * mx.square(diff) / beta, diff - 0.5 * beta)
    return _reduce(loss, reduction)


def triplet_loss(
    anchors: mx.array,
    positives: mx.array,
    negatives: mx.array,
    axis: int = -1,
    p: int = 2,
    margin: float = 1.0,
    eps: float = 1e-6,
    reduction: Reduction = "none",
) -> mx.array:
    r""":math:`\max(\|a - p\|_p - \|a - n\|_p + \text{margin}, 0)`, the distances taken as
    :math:`(\sum |\cdot|^p + \epsilon)^{1/p}` along ``axis`` (a square root for p = 2)."""

    def distance(a, b):
        total = mx.sum(mx.power(mx.abs(a - b), p), axis) + eps
        return mx.sqrt(total) if p == 2 else mx.power(total, 1.0 / p)

    loss = mx.maximum(distance(anchors, positives) - distance(anchors, negatives) + margin, 0)
    return _reduce(loss, reduction)


def hinge_loss(inputs: mx.array, targets: mx.array, reduction: Reduction = "none") -> mx.array:
    """``max(1 - inputs * targets, 0)`` for targets in {-1, 1}."""
    return _reduce(mx.maximum(1 - inputs * targets, 0), reduction)


def huber_loss(
    inputs: mx.array,
    targets: mx.array,
    delta: float = 1.0,
    reduction: Reduction = "none",
) -> mx.array:
    r"""Huber loss: :math:`\frac{1}{2} a^2` for :math:`|a| \le \delta`,
    :math:`\delta (|a| - \frac{1}{2}\delta)` beyond, with :math:`a` = inputs - targets."""
    abs_errors = mx.abs(inputs - targets)
    quadratic = mx.minimum(abs_errors, delta)
    linear = abs_errors - quadratic
    loss = 0.5 * mx.square(quadratic) + delta * linear
    return _reduce(loss, reduction)


def log_cosh_loss(inputs: mx.array, targets: mx.array, reduction: Reduction = "none") -> mx.array:
    """``log(cosh(inputs - targets))``, computed without overflow."""
    errors = inputs - targets
    loss = mx.logaddexp(errors, -errors) - math.log(2)
    return _reduce(loss, reduction)


def cosine_similarity_loss(
    x1: mx.array,
    x2: mx.array,
    axis: int = 1,
    eps: float = 1e-8,
    reduction: Reduction = "none",
) -> mx.array:
    r"""Cosine similarity along ``axis``:
    :math:`x_1 \cdot x_2 / \max(\|x_1\| \|x_2\|, \epsilon)`."""

    def norm(x):
        return mx.sqrt(mx.sum(mx.square(x), axis=axis))

    loss = mx.sum(x1 * x2, axis=axis) / mx.maximum(norm(x1) * norm(x2), eps)
    return _reduce(loss, reduction)


def margin_ranking_loss(
    inputs1: mx.array,
    inputs2: mx.array,
    targets: mx.array,
    margin: float = 0.0,
    reduction: Reduction = "none",
) -> mx.array:
    """``max(0, -targets * (inputs1 - inputs2) + margin)`` for targets in {-1, 1}."""
    if not (inputs1.shape == inputs2.shape == targets.shape):
        raise ValueError(
            "The shapes of the arguments do not match. The provided shapes are "
            f"inputs1.shape={inputs1.shape}, inputs2.shape={inputs2.shape}, and "
            f"targets.shape={targets.shape}."
        )
    loss = mx.maximum(0, -targets * (inputs1 - inputs2) + margin)
    return _reduce(loss, reduction)
