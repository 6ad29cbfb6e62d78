"""Records of the shrink activations (``hardshrink``, ``softshrink``), RReLU
(``rrelu_with_noise``), ``pdist`` and the soft / multi / multilabel margin losses,
gathered by ``ops/records/table.py``.

Note [Shrink records]: PyTorch has one node per shrink (HardshrinkBackward0,
SoftshrinkBackward0) whose rule is a fused backward op, ``grad`` where |x| > lambd and 0
inside [-lambd, lambd]; that backward op's own derivative is itself for the incoming
gradient and zero for the saved input (HardshrinkBackwardBackward0 & co), so second
derivatives are zeros, as PyTorch's. p = (lambd,).

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.dispatch import apply
    >>> from retrograd.ops.records.activations import softshrink
    >>> apply(softshrink, (torch.tensor([-2., 0.1, 2.]),), (0.5,))
    tensor([-1.5000,  0.0000,  1.5000])
"""

from __future__ import annotations

import numpy as np

from ..._tensor.tensor import _make
from ..dispatch import apply
from ..jvp_rules import jvp_elementwise
from ..op import Op
from ..public import FP32
from .distance import lp_coefficient, lp_distance
from .helpers import _not_implemented, zeros_like_of
from .prelu import prelu_kernel

__all__ = ["hardshrink", "hardshrink_backward", "softshrink", "softshrink_backward",
           "rrelu_with_noise", "rrelu_with_noise_backward", "rrelu_with_noise_result",
           "pdist", "pdist_backward", "soft_margin_loss", "multi_margin_loss",
           "multi_margin_loss_backward", "multilabel_margin_loss",
           "multilabel_margin_loss_backward", "prelu_kernel"]


def _inside(x: np.ndarray, lambd: float) -> np.ndarray:
    return (x >= -lambd) & (x <= lambd)


def _hardshrink_fwd(x, p):
    return np.where(_inside(x, p[0]), 0, x).astype(x.dtype, copy=False)


def _softshrink_fwd(x, p):
    lambd = p[0]
    shrunk = np.where(x > lambd, x - lambd, x + lambd)
    return np.where(_inside(x, lambd), 0, shrunk).astype(x.dtype, copy=False)


def _shrink_bwd_fwd(g, x, p):
    return np.where(_inside(x, p[0]), 0, g).astype(g.dtype, copy=False)


def _shrink_ops(name: str, fwd, title: str) -> tuple:
    """The (backward op, op) pair of one shrink (Note [Shrink records])."""
    back = Op(f"{name}_backward", _shrink_bwd_fwd,
              (lambda gg, s, n: apply(back, (gg, s[1]), n._p),
               lambda gg, s, n: zeros_like_of(gg)),
              (0, 1), save_if=((1,), (0,)), jvp=jvp_elementwise, batch_ok=True,
              node_name=f"{title}BackwardBackward0")
    op = Op(name, fwd, (lambda g, s, n: apply(back, (g, s[0]), n._p),), (0,),
            jvp=jvp_elementwise, batch_ok=True, node_name=f"{title}Backward0")
    return back, op


hardshrink_backward, hardshrink = _shrink_ops("hardshrink", _hardshrink_fwd, "Hardshrink")
softshrink_backward, softshrink = _shrink_ops("softshrink", _softshrink_fwd, "Softshrink")


# Note [RReLU record]: PyTorch's rrelu_with_noise is one node (RreluWithNoiseBackward0;
# RreluWithNoiseBackward1 for the in-place rrelu_) whose rule is a fused backward op,
# grad * noise in training and leaky_relu's backward with the mean slope in eval. Both are
# grad times a per-element slope, so the record takes that slope array as a second,
# non-differentiable input (the drawn noise, or 1 / (lower + upper) / 2 by sign in eval):
# the forward is input * slope (exactly where(x > 0, x, slope * x) in eval), and the
# backward op's own derivative is itself for the incoming gradient
# (RreluWithNoiseBackwardBackward0), so second derivatives w.r.t. the input are zeros.
def _times_slope(x, slope, p=None):
    return (x * slope).astype(x.dtype, copy=False)


def _grad_times_slope(g, x, slope, p=None):
    return (g * slope).astype(g.dtype, copy=False)


rrelu_with_noise_backward = Op(
    "rrelu_with_noise_backward", _grad_times_slope,
    (lambda gg, s, n: apply(rrelu_with_noise_backward, (gg, s[0], s[1])),
     lambda gg, s, n: zeros_like_of(gg), None), (1, 2),
    save_if=((0,), (0,)), jvp=jvp_elementwise, batch_ok=True,
    node_name="RreluWithNoiseBackwardBackward0")


def _rrelu_rule(g, s, n):
    return apply(rrelu_with_noise_backward, (g, s[0], s[1]))


rrelu_with_noise = Op("rrelu_with_noise", _times_slope, (_rrelu_rule, None), (0, 1),
                      jvp=jvp_elementwise, batch_ok=True, node_name="RreluWithNoiseBackward0")
rrelu_with_noise_result = Op("rrelu_with_noise_result", _times_slope, (_rrelu_rule, None),
                             ("out", 1), jvp=jvp_elementwise, batch_ok=True,
                             node_name="RreluWithNoiseBackward1")


# Note [pdist record]: PdistBackward0 as PyTorch's _pdist_backward computes it: per pair
# (i, j) of rows, d = x_i - x_j and dist its p-norm, the gradient g * coef goes to row i
# and its negative to row j, coef as cdist's (Note [p-norm distance kernels] in
# ops/records/distance.py). PyTorch has no double backward (PdistBackwardBackward0 raises
# its error, here too); forward mode, which PyTorch also lacks, is the same coefficients
# applied to the tangent.
def _pairs(n: int) -> tuple:
    rows, cols = np.triu_indices(n, 1)
    return rows.astype(np.int64), cols.astype(np.int64)


def _pdist_fwd(x, p):
    rows, cols = _pairs(x.shape[0])
    return lp_distance(np.abs(x[rows] - x[cols]), p, x.dtype)


def _pdist_bwd_fwd(g, x, dist, p):
    rows, cols = _pairs(x.shape[0])
    gd = g[:, None] * lp_coefficient(x[rows] - x[cols], dist[:, None], p)
    return (_segment_sum(gd, rows, x.shape[0]) - _segment_sum(gd, cols, x.shape[0])
            ).astype(x.dtype, copy=False)


def _segment_sum(vals: np.ndarray, keys: np.ndarray, n: int) -> np.ndarray:
    """Rows of ``vals`` summed by ``keys`` into ``n`` rows (faster than np.add.at)."""
    out = np.zeros((n,) + vals.shape[1:], dtype=vals.dtype)
    if keys.size:
        order = np.argsort(keys, kind="stable")
        uniq, starts = np.unique(keys[order], return_index=True)
        out[uniq] = np.add.reduceat(vals[order], starts, axis=0)
    return out


def _pdist_no_double(g, s, n):
    raise NotImplementedError("the derivative for '_pdist_backward' is not implemented. "
                              "(PyTorch has no second derivative of pdist: compute the "
                              "distances with torch.cdist or from x[i] - x[j] for one)")


def _pdist_jvp(t, s, n, out):
    """Forward mode (which PyTorch lacks): sum over columns of coef * (t_i - t_j)."""
    if t[0] is None:
        return None
    x, dist = s
    rows, cols = (_make(a) for a in _pairs(x.shape[0]))
    coef = lp_coefficient(x._data[rows._data] - x._data[cols._data], dist._data[:, None], n._p)
    diff = t[0].index_select(0, rows) - t[0].index_select(0, cols)
    return (diff * _make(coef.astype(x._data.dtype))).sum(1)


pdist_backward = Op("pdist_backward", _pdist_bwd_fwd, (_pdist_no_double,) * 3, (),
                    jvp=lambda t, s, n, out: _pdist_no_double(None, s, n),
                    node_name="PdistBackwardBackward0")
pdist = Op("pdist", _pdist_fwd,
           (lambda g, s, n: apply(pdist_backward, (g, s[0], s[1]), n._p),), (0, "out"),
           jvp=_pdist_jvp, node_name="PdistBackward0")


# soft_margin_loss: one node (SoftMarginLossBackward0) saving input and target, as
# PyTorch's kernel; d/dx log(1 + exp(-t x)) = -t sigmoid(-t x), divided by the number of
# elements for 'mean'. The target is not differentiable (PyTorch's error is raised by the
# public function). p = reduction.
def _soft_margin_fwd(x, t, p):
    loss = np.log1p(np.exp(-x * t))
    if p == "mean":
        return np.asarray(loss.mean(), dtype=loss.dtype)
    return np.asarray(loss.sum(), dtype=loss.dtype) if p == "sum" else loss


def _soft_margin_rule(g, s, n):
    x, t = s
    grad = -t * (-(t * x)).sigmoid() * g
    return grad / x.numel() if n._p == "mean" else grad


def _soft_margin_jvp(t, s, n, out):
    if t[0] is None:
        return None
    x, tgt = s
    tan = -tgt * (-(tgt * x)).sigmoid() * t[0]
    return tan.mean() if n._p == "mean" else tan.sum() if n._p == "sum" else tan


soft_margin_loss = Op("soft_margin_loss", _soft_margin_fwd, (_soft_margin_rule, None), (0, 1),
                      jvp=_soft_margin_jvp, autocast=FP32, node_name="SoftMarginLossBackward0")


# Note [Margin loss records]: multi_margin_loss and multilabel_margin_loss are PyTorch
# kernels with one node each (MultiMarginLossBackward0, MultilabelMarginLossBackward0)
# whose backward ops have no derivative (torch::autograd::NotImplemented: the double
# backward raises PyTorch's error, here too). Per sample n the loss is a weighted sum of
# hinges h(margin - x[j] + x[i]) over pairs (j a target class, i another class), divided
# by the number of classes C: h = relu or relu² (p = 2) and the weight weight[y] for
# multi_margin; h = relu, margin 1 and the weight "how often j is in the target prefix
# (before the first -1) times [i is no target]" for multilabel_margin. The gradient is
# the hinge's slope times the weight, +1 for x[i] and -1 for x[j]. Forward mode (absent
# in PyTorch) applies the same per-element derivatives to the tangent.
# p = (reduction, one_sample[, power, margin]); one_sample: a 0-D/1-D input, whose
# 'none' result is 0-D.
def target_counts(t: np.ndarray, c: int) -> np.ndarray:
    """(N, C) counts of each class in each row's target prefix (before the first -1)."""
    valid = np.cumprod(t >= 0, axis=1).astype(bool)
    rows = np.nonzero(valid)[0]
    flat = rows * c + t[valid]
    return np.bincount(flat, minlength=t.shape[0] * c).reshape(t.shape[0], c)


def _reduce_np(per: np.ndarray, p) -> np.ndarray:
    if p[0] == "mean":
        return np.asarray(per.mean() if per.size else np.nan, dtype=per.dtype)
    if p[0] == "sum":
        return np.asarray(per.sum(), dtype=per.dtype)
    return per.reshape(()) if p[1] else per


def _scale_np(g: np.ndarray, d: np.ndarray, p) -> np.ndarray:
    """The per-element derivatives ``d`` (N, C) times the output gradient ``g``."""
    if p[0] == "none":
        return d * g.reshape(-1, 1)
    return d * (g / d.shape[0] if p[0] == "mean" else g)


def _mm_parts(x, t, w, p):
    margin = p[3]
    x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)
    n, c = x2.shape
    ar = np.arange(n)
    t = t.reshape(-1)
    z = margin - x2[ar, t][:, None] + x2
    off = np.ones_like(z)
    off[ar, t] = 0
    wz = w[t][:, None] * off / c
    return x2, z, wz, ar, t


def _mm_fwd(x, t, w, p):
    x2, z, wz, _, _ = _mm_parts(x, t, w, p)
    h = np.maximum(z, 0)
    per = ((h * h if p[2] == 2 else h) * wz).sum(1)
    return _reduce_np(per.astype(x.dtype, copy=False), p)


def _mm_derivs(x, t, w, p):
    x2, z, wz, ar, t = _mm_parts(x, t, w, p)
    d = (z > 0) * (2 * z if p[2] == 2 else 1) * wz
    d[ar, t] = -d.sum(1)
    return d.astype(x.dtype, copy=False)


def _mlm_parts(x, t):
    """Only the (sample, target class) rows that occur: K rows of C hinges, not N x C x C."""
    x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)
    c = x2.shape[1]
    counts = target_counts(t.reshape(x2.shape), c)
    rows, cls = np.nonzero(counts)
    z = 1 - x2[rows, cls][:, None] + x2[rows]
    w = counts[rows, cls][:, None] * (counts[rows] == 0) / c
    return x2, rows, cls, z, w


def _mlm_fwd(x, t, p):
    x2, rows, _, z, w = _mlm_parts(x, t)
    per = np.bincount(rows, (np.maximum(z, 0) * w).sum(1), minlength=x2.shape[0])
    return _reduce_np(per.astype(x.dtype), p)


def _mlm_derivs(x, t, p):
    x2, rows, cls, z, w = _mlm_parts(x, t)
    b = (z > 0) * w
    d = _segment_sum(b, rows, x2.shape[0])
    np.subtract.at(d, (rows, cls), b.sum(1))
    return d.astype(x.dtype, copy=False)


def _margin_ops(name: str, fwd, derivs, title: str, n_inputs: int) -> tuple:
    """The (backward op, op) pair of one margin loss (Note [Margin loss records])."""
    def bwd_fwd(g, x, *rest):
        p = rest[-1]
        return _scale_np(g, derivs(x, *rest), p).reshape(x.shape).astype(x.dtype, copy=False)

    back = _not_implemented(f"{name}_backward", bwd_fwd, (True, True) + (None,) * (n_inputs - 1),
                            "(PyTorch has no second derivative of this loss: "
                            f"compose F.{name}'s formula from Tensor ops for one)")

    def rule(g, s, n):
        return apply(back, (g,) + tuple(s), n._p)

    def jvp(t, s, n, out):
        if t[0] is None:
            return None
        d = _make(derivs(*(a._data for a in s), n._p))
        tan = (d * t[0].reshape(d.shape)).sum(1)
        p = n._p
        return tan.mean() if p[0] == "mean" else tan.sum() if p[0] == "sum" else (
            tan.reshape(()) if p[1] else tan)

    op = Op(name, fwd, (rule,) + (None,) * (n_inputs - 1), tuple(range(n_inputs)), jvp=jvp,
            autocast=FP32, node_name=f"{title}Backward0")
    return back, op


multi_margin_loss_backward, multi_margin_loss = _margin_ops(
    "multi_margin_loss", _mm_fwd, _mm_derivs, "MultiMarginLoss", 3)
multilabel_margin_loss_backward, multilabel_margin_loss = _margin_ops(
    "multilabel_margin_loss", _mlm_fwd, _mlm_derivs, "MultilabelMarginLoss", 2)
