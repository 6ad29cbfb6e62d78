"""Loss records: one node per PyTorch loss kernel (MseLossBackward0, HuberLossBackward0,
SmoothL1LossBackward0, BinaryCrossEntropyBackward0, BinaryCrossEntropyWithLogitsBackward0),
with PyTorch's derivative formulas (tools/autograd/derivatives.yaml) and its backward
kernels' order of operations (aten/src/ATen/native/Loss.cpp, PointwiseOpsKernel.cpp).
Module alias ``TLO`` (Note [Module aliases] in ``ops/__init__.py``).

Note [Loss records]
PyTorch computes these losses in one kernel each and records one node, whose rule calls a
backward op of its own (``mse_loss_backward``, ...) with its own derivatives in
derivatives.yaml: the double backward is PyTorch's formula, not the derivative of a chain
of subtractions and squares. Each record here is such a pair: the loss (inputs ``self``
and ``target``, both differentiable as in PyTorch) and its backward op (inputs
``grad_output``, ``self``, ``target``; node ``...BackwardBackward0``), whose rules are
written in Tensor ops (derivatives of any order). ``p = (reduction, extra)``: the
reduction as PyTorch's enum (0 none, 1 mean, 2 sum, the int ``_saved_reduction`` shows),
``extra`` beta, delta or the weights. The forward kernel is the pointwise loss reduced by
the mean/sum kernels ``Tensor.mean``/``Tensor.sum`` use, so values are those of the
composites these records replace. A 0-d gradient of a reduced loss broadcasts in the
backward kernel; a gradient the backward op returns for ``grad_output`` has the input's
shape and the engine sums it back (as PyTorch's validate_outputs does).

The weights of binary_cross_entropy(_with_logits) are no inputs (PyTorch's node has no
edge for them, and refuses a weight that requires grad): they ride in ``p``.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = torch.nn.functional.mse_loss(x, torch.zeros(2))
    >>> y, y.grad_fn._saved_reduction
    (tensor(2.5000, grad_fn=<MseLossBackward0>), 1)
"""

from __future__ import annotations

import math

import numpy as np

from ..dispatch import apply
from ..kernels.sum import sum_kernel
from ..op import Op
from ..public import FP32
from . import nn as TN
from .reductions import _mean_fwd

NONE, MEAN, SUM = 0, 1, 2
#: PyTorch's reduction enum of each name (at::Reduction)
REDUCTION = {"none": NONE, "mean": MEAN, "sum": SUM}
_EPS = 1e-12  # PyTorch's EPSILON of the BCE kernels and formulas
_ALL = (None, False, None)


def _reduce(loss: np.ndarray, red: int) -> np.ndarray:
    """A pointwise loss reduced as ATen's apply_loss_reduction (mean/sum of every element)."""
    if red == MEAN:
        return _mean_fwd(loss, _ALL)
    if red == SUM:
        return sum_kernel(loss, _ALL)
    return loss


def _norm(x: np.ndarray, red: int, scale: float = 1.0):
    """``scale / numel`` for a mean (``scale`` otherwise), in x's dtype, as the backward
    kernels' ``norm_val``."""
    return x.dtype.type(scale / x.size if red == MEAN and x.size else scale)


def _mean_div(g, x, red: int):
    """``g / numel(x)`` for a mean reduction (the ``/= input.sym_numel()`` of the formulas)."""
    return g / x.numel() if red == MEAN else g


def _loss_pair(name: str, fwd, bwd_fwd, bwd_rules, title: str, extra_grad=None):
    """The (loss, loss_backward) records of one loss (Note [Loss records]); the loss's
    rule for input i is loss_backward(g, self, target) with self/target swapped for the
    target (mse, huber, smooth_l1 are functions of self - target, odd in it)."""
    back = Op(f"{name}_backward", bwd_fwd, bwd_rules, (0, 1, 2),
              node_name=f"{title}BackwardBackward0")

    def self_rule(g, s, n):
        return apply(back, (g, s[0], s[1]), n._p)

    def target_rule(g, s, n):
        return apply(back, (g, s[1], s[0]), n._p)

    loss = Op(name, fwd, (self_rule, extra_grad or target_rule), (0, 1), autocast=FP32,
              node_name=f"{title}Backward0")
    return loss, back


# ---------------------------------------------------------------------------------
# mse_loss: (x - t)^2; backward norm * (x - t) * g with norm = 2 (/ numel for a mean);
# its derivatives: grad_output -> mse_loss_backward(gg, x, t), self -> 2 gg g (/ numel),
# target -> the negative (derivatives.yaml's mse_loss_double_backward)


def _mse_fwd(x, t, p):
    d = x - t
    return _reduce(d * d, p[0])


def _mse_bwd_fwd(g, x, t, p):
    out = _norm(x, p[0], 2.0) * (x - t) * g
    return out.astype(np.result_type(x, t), copy=False)


def _mse_double(gg, s, n):
    return _mean_div(gg * s[0] * 2, s[1], n._p[0])


mse_loss, mse_loss_backward = _loss_pair(
    "mse_loss", _mse_fwd, _mse_bwd_fwd,
    (lambda gg, s, n: apply(mse_loss_backward, (gg, s[1], s[2]), n._p),
     _mse_double, lambda gg, s, n: -_mse_double(gg, s, n)), "MseLoss")


# ---------------------------------------------------------------------------------
# huber_loss (delta) and smooth_l1_loss (beta > 0): quadratic inside |x - t| < delta,
# linear beyond. Backward kernels (PointwiseOpsKernel.cpp): x = self - target;
#   huber:     x <= -delta: -norm g delta;  x >= delta: norm g delta;  else norm x g
#   smooth_l1: x <= -beta:  -norm g;        x >= beta:  norm g;        else norm x g / beta
# double backward: grad * (|x - t| < delta) (/ beta for smooth_l1) (/ numel for a mean)


def _huber_fwd(x, t, p):
    delta = p[1]
    z = np.abs(x - t)
    loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return _reduce(loss.astype(z.dtype, copy=False), p[0])


def _smooth_l1_fwd(x, t, p):
    beta = p[1]
    z = np.abs(x - t)
    loss = np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
    return _reduce(loss.astype(z.dtype, copy=False), p[0])


def _piecewise_bwd(g, x, t, p, outer_is_k: bool):
    """The huber/smooth_l1 backward kernel in PyTorch's vectorized form: norm * adj * g
    with adj = ±k (huber) or ±1 (smooth_l1) where |x - t| >= k, else x - t (huber) or
    (x - t) / k (smooth_l1): a clip to [-k, k] (to [-1, 1]), the same values without a
    select."""
    red, k = p
    d = x - t
    dt = d.dtype.type
    if outer_is_k:
        adj = np.clip(d, dt(-k), dt(k))
    else:
        adj = np.clip(d / dt(k), dt(-1), dt(1))
    return (_norm(d, red) * adj * g).astype(d.dtype, copy=False)


def _huber_bwd_fwd(g, x, t, p):
    return _piecewise_bwd(g, x, t, p, True)


def _smooth_l1_bwd_fwd(g, x, t, p):
    return _piecewise_bwd(g, x, t, p, False)


def _inside_double(gg, s, n, over_k: bool):
    g, x, t = s
    red, k = n._p
    if over_k and k == 0:  # PyTorch's guard against a division by zero
        return (gg * g) * 0
    inside = ((x - t).abs() < k).to(gg.dtype)
    r = (gg * g) * inside
    return _mean_div(r / k if over_k else r, x, red)


def _back_rules(back_ref, over_k: bool):
    return (lambda gg, s, n: apply(back_ref(), (gg, s[1], s[2]), n._p),
            lambda gg, s, n: _inside_double(gg, s, n, over_k),
            lambda gg, s, n: -_inside_double(gg, s, n, over_k))


huber_loss, huber_loss_backward = _loss_pair(
    "huber_loss", _huber_fwd, _huber_bwd_fwd,
    _back_rules(lambda: huber_loss_backward, False), "HuberLoss")
smooth_l1_loss, smooth_l1_loss_backward = _loss_pair(
    "smooth_l1_loss", _smooth_l1_fwd, _smooth_l1_bwd_fwd,
    _back_rules(lambda: smooth_l1_loss_backward, True), "SmoothL1Loss")


# ---------------------------------------------------------------------------------
# binary_cross_entropy: (t - 1) max(log1p(-x), -100) - t max(log x, -100), times the
# weight; backward g (x - t) / max((1 - x) x, 1e-12) times the weight (/ numel); the
# target's gradient -logit(x) g w (/ numel) (binary_cross_entropy_target_backward). The
# backward op's derivatives are FunctionsManual.cpp's binary_cross_entropy_double_backward
# (self), _double_backward_target and _double_backward_grad_output. p = (reduction, weight
# Tensor or None), the weight saved as PyTorch saves it (``"p1"``: version-checked).


def _weighted(a, w):
    return a if w is None else a * w._data


def _check_probabilities(x, t):
    """The range checks of PyTorch's kernel (made there, on every element)."""
    if x.size and ((x < 0).any() or (x > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1: binary_cross_"
                           "entropy takes probabilities; for logits use "
                           "binary_cross_entropy_with_logits (BCEWithLogitsLoss)")
    if t.size and ((t < 0).any() or (t > 1).any()):
        raise RuntimeError("all elements of target should be between 0 and 1")


def _bce_fwd(x, t, p):
    _check_probabilities(x, t)
    with np.errstate(divide="ignore"):
        loss = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    loss = _weighted(loss.astype(x.dtype, copy=False), p[1])
    return _reduce(loss.astype(x.dtype, copy=False), p[0])


def _bce_bwd_fwd(g, x, t, p):
    one = x.dtype.type(1)
    out = g * (x - t) / np.maximum((one - x) * x, x.dtype.type(_EPS))
    out = _weighted(out.astype(x.dtype, copy=False), p[1])
    if p[0] == MEAN and x.size:
        out = out / x.dtype.type(x.size)
    return np.broadcast_to(out, x.shape).astype(x.dtype, copy=False)


def _tensor_weighted(r, w):
    return r if w is None else r * w


def _bce_target_rule(g, s, n):
    x, w = s[0], s[2]
    red = n._p[0]
    return _mean_div(_tensor_weighted(-x.logit() * g, w), x, red)


def _bce_double_self(gg, s, n):
    g, x, t, w = s
    red = n._p[0]
    gi = (x * x - 2 * x * t + t) / ((x + _EPS).pow(2) * (1 - x + _EPS).pow(2))
    return _mean_div(_tensor_weighted(gi * (gg * g), w), x, red)


def _bce_double_grad_output(gg, s, n):
    x, t, w = s[1], s[2], s[3]
    red = n._p[0]
    ggo = (x - t) / ((x + _EPS) * (1 - x + _EPS))
    return _mean_div(_tensor_weighted(ggo * gg, w), x, red)


def _bce_double_target(gg, s, n):
    g, x, w = s[0], s[1], s[3]
    red = n._p[0]
    res = _tensor_weighted(-gg * g, w)
    denom = ((1 - x) * x).detach().clamp_min(_EPS)
    return _mean_div(res / denom, x, red)


binary_cross_entropy_backward = Op(
    "binary_cross_entropy_backward", _bce_bwd_fwd,
    (_bce_double_grad_output, _bce_double_self, _bce_double_target), (0, 1, 2, "p1"),
    node_name="BinaryCrossEntropyBackwardBackward0")
binary_cross_entropy = Op(
    "binary_cross_entropy", _bce_fwd,
    (lambda g, s, n: apply(binary_cross_entropy_backward, (g, s[0], s[1]), n._p),
     _bce_target_rule), (0, 1, "p1"), autocast=FP32, node_name="BinaryCrossEntropyBackward0")


# ---------------------------------------------------------------------------------
# binary_cross_entropy_with_logits (Loss.cpp): log_sigmoid(x) times (pos_weight - 1) t + 1,
# loss (1 - t) x - that, times the weight. PyTorch's rules are composites of Tensor ops
# (FunctionsManual.cpp's binary_cross_entropy_with_logits_backward and _target_backward),
# so their derivatives come from those ops. p = (reduction, weight, pos_weight).


def _log_sigmoid(x):
    with np.errstate(over="ignore"):
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _bce_logits_fwd(x, t, p):
    red, w, pw = p
    ls = _log_sigmoid(x).astype(x.dtype, copy=False)
    if pw is not None:
        ls = ls * ((pw._data - 1) * t + 1)
    loss = (1 - t) * x - ls
    loss = _weighted(loss.astype(x.dtype, copy=False), w)
    return _reduce(loss.astype(x.dtype, copy=False), red)


def _bce_logits_self_rule(g, s, n):
    x, t, w, pw = s
    red = n._p[0]
    if pw is not None:
        pt = pw * t
        gi = (pt + 1 - t) * x.sigmoid() - pt
    else:
        gi = x.sigmoid() - t
    return _mean_div(_tensor_weighted(gi * g, w), x, red)


def _softplus(x):
    return apply(TN.softplus, (x,), (1.0, math.inf))


def _bce_logits_target_rule(g, s, n):
    x, w, pw = s[0], s[2], s[3]
    red = n._p[0]
    if pw is not None:  # log_sigmoid(-x) - log_sigmoid(x) pw, log_sigmoid(x) = -softplus(-x)
        gt = (_softplus(-x) * pw - _softplus(x)) * g
    else:
        gt = -x * g
    return _mean_div(_tensor_weighted(gt, w), x, red)


binary_cross_entropy_with_logits = Op(
    "binary_cross_entropy_with_logits", _bce_logits_fwd,
    (_bce_logits_self_rule, _bce_logits_target_rule), (0, 1, "p1", "p2"), autocast=FP32,
    node_name="BinaryCrossEntropyWithLogitsBackward0")
