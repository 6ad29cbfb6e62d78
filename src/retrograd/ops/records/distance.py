"""Records of the p-norm distances between rows: ``torch.cdist``'s two paths
(``cdist``, PyTorch's _cdist_forward with CdistBackward0, and ``euclidean_dist``, its
matrix-multiplication path with EuclideanDistBackward0) and the per-pair helpers that
``pdist`` (ops/records/activations.py) shares. Gathered by ``ops/records/table.py``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.dispatch import apply
    >>> from retrograd.ops.records.distance import cdist
    >>> apply(cdist, (torch.tensor([[0., 0.]]), torch.tensor([[3., 4.], [1., 0.]])), 2.0)
    tensor([[5., 1.]])
"""

from __future__ import annotations

import numpy as np

from ..._tensor.tensor import _make
from ..dispatch import apply
from ..op import Op

__all__ = ["cdist", "cdist_backward", "euclidean_dist"]


# Note [p-norm distance kernels]
# pdist and cdist share PyTorch's CPU kernels (aten/src/ATen/native/cpu/DistanceOpsKernel):
# for d = |x_i - y_j| along the last axis the distance is count(d != 0) for p = 0,
# sum(d) for p = 1, sqrt(sum(d^2)) for p = 2, max(d) for p = inf and sum(d^p)^(1/p)
# otherwise; the gradient of one distance with respect to x_i is coef * g, coef =
# sign(x_i - y_j) (p = 1), diff / dist (p = 2), diff |diff|^(p-2) / dist^(p-1) (other
# p >= 1; 0 where dist = 0), sign(diff) |diff|^(p-1) / dist^(p-1) (p < 1; 0 where diff
# = 0), sign(diff) where |diff| = dist (p = inf: every tied element gets the full
# gradient) and 0 for p = 0. PyTorch has no double backward of either backward op
# (_pdist_backward, _cdist_backward: NotImplementedError), nor here.
def lp_distance(d: np.ndarray, p: float, dtype) -> np.ndarray:
    """The p-norm distances of the absolute differences ``d`` along the last axis
    (Note [p-norm distance kernels]).

    Example:
        >>> import numpy as np
        >>> lp_distance(np.array([[3., 4.]]), 2.0, np.float64)
        array([5.])
    """
    if p == 0:
        out = (d != 0).sum(-1)
    elif p == 1:
        out = d.sum(-1)
    elif p == 2:
        out = np.sqrt((d * d).sum(-1))
    elif p == np.inf:
        out = d.max(-1, initial=0)
    else:
        out = (d ** p).sum(-1) ** (1 / p)
    return np.asarray(out, dtype=dtype)


def lp_coefficient(diff: np.ndarray, dist: np.ndarray, p: float) -> np.ndarray:
    """d dist / d x_i for ``diff = x_i - y_j`` and its distance ``dist`` (broadcast
    against diff), Note [p-norm distance kernels].

    Example:
        >>> import numpy as np
        >>> lp_coefficient(np.array([[3., 4.]]), np.array([[5.]]), 2.0)
        array([[0.6, 0.8]])
    """
    if p == 0:
        return np.zeros_like(diff)
    if p == 1:
        return np.sign(diff)
    if p == np.inf:
        return np.sign(diff) * (np.abs(diff) == dist)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p < 1:
            return np.where(diff == 0, 0, np.sign(diff) * np.abs(diff) ** (p - 1)
                            / dist ** (p - 1))
        if p == 2:
            return np.where(dist == 0, 0, diff / dist)
        return np.where(dist == 0, 0, diff * np.abs(diff) ** (p - 2) / dist ** (p - 1))


# Note [cdist records]
# torch.cdist takes one of two paths, as PyTorch's cdist_impl: for p = 2 with
# compute_mode 'use_mm_for_euclid_dist' (or the default mode and more than 25 rows in
# either input) it is ``euclidean_dist``, sqrt(clamp(|x|^2 - 2 x.y + |y|^2, 0)) through one
# matrix product (EuclideanDistBackward0, whose rule is PyTorch's _euclidean_dist_backward
# in Tensor ops, so it differentiates again); otherwise the direct kernel ``cdist``
# (CdistBackward0), whose rule is the record ``cdist_backward`` (CdistBackwardBackward0,
# no derivative in PyTorch). Both take inputs (..., r1, c) and (..., r2, c) whose batch
# dims broadcast; the engine sums each gradient back to its input's shape.
def _diffs(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return x1[..., :, None, :] - x2[..., None, :, :]


def _cdist_fwd(x1, x2, p):
    return lp_distance(np.abs(_diffs(x1, x2)), p, x1.dtype)


def _cdist_bwd_fwd(g, x1, x2, dist, p):
    coef = lp_coefficient(_diffs(x1, x2), dist[..., None], p)
    return (g[..., None] * coef).sum(-2).astype(x1.dtype, copy=False)


def _cdist_no_double(g, s, n):
    raise NotImplementedError("the derivative for '_cdist_backward' is not implemented. "
                              "(PyTorch has no second derivative of cdist's direct kernel: "
                              "for p=2 pass compute_mode='use_mm_for_euclid_dist', whose "
                              "gradient differentiates again)")


def _cdist_jvp(t, s, n, out):
    """Forward mode: the sum over columns of coef * (t1_i - t2_j)."""
    x1, x2 = s[0], s[1]
    dist = out._data
    res = None
    coef = _make(lp_coefficient(_diffs(x1._data, x2._data), dist[..., None], n._p)
                 .astype(dist.dtype, copy=False))
    if t[0] is not None:
        res = (t[0].unsqueeze(-2) * coef).sum(-1)
    if t[1] is not None:
        part = (t[1].unsqueeze(-3) * coef).sum(-1)
        res = -part if res is None else res - part
    return res


cdist_backward = Op("cdist_backward", _cdist_bwd_fwd, (_cdist_no_double,) * 4, (),
                    jvp=lambda t, s, n, out: _cdist_no_double(None, s, n),
                    node_name="CdistBackwardBackward0")
cdist = Op("cdist", _cdist_fwd,
           (lambda g, s, n: apply(cdist_backward, (g, s[0], s[1], s[2]), n._p),
            lambda g, s, n: apply(cdist_backward, (g.mT, s[1], s[0], s[2].mT), n._p)),
           (0, 1, "out"), jvp=_cdist_jvp, node_name="CdistBackward0")


def _euclidean_fwd(x1, x2):
    # PyTorch's form: [-2 x, |x|^2, 1] @ [y, 1, |y|^2]^T (half precision in float32)
    dt = x1.dtype
    if dt.itemsize < 4:
        x1, x2 = x1.astype(np.float32), x2.astype(np.float32)
    n1 = (x1 * x1).sum(-1, keepdims=True)
    n2 = (x2 * x2).sum(-1, keepdims=True)
    a = np.concatenate([-2 * x1, n1, np.ones_like(n1)], -1)
    b = np.concatenate([x2, np.ones_like(n2), n2], -1)
    return np.sqrt(np.maximum(a @ np.swapaxes(b, -1, -2), 0)).astype(dt, copy=False)


def _euclidean_ratio(g, res):
    # g / res, 0 where the distance is 0 (PyTorch's subgradient there)
    return (g / res).masked_fill(res == 0, 0)


def _euclidean_x1(g, s, n):
    ratio = _euclidean_ratio(g, s[2])
    return s[0] * ratio.sum(-1, keepdim=True) - ratio.matmul(s[1])


def _euclidean_x2(g, s, n):
    ratio = _euclidean_ratio(g, s[2])
    return s[1] * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(s[0])


def _euclidean_jvp(t, s, n, out):
    """Forward mode: ((x1 - x2) . (t1 - t2)) / res per pair, 0 where res = 0."""
    x1, x2 = s[0], s[1]
    num = None
    if t[0] is not None:
        num = (x1 * t[0]).sum(-1, keepdim=True) - t[0].matmul(x2.mT)
    if t[1] is not None:
        part = (x2 * t[1]).sum(-1).unsqueeze(-2) - x1.matmul(t[1].mT)
        num = part if num is None else num + part
    return _euclidean_ratio(num, out)


euclidean_dist = Op("euclidean_dist", _euclidean_fwd, (_euclidean_x1, _euclidean_x2),
                    (0, 1, "out"), jvp=_euclidean_jvp)
