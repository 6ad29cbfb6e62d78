"""Batch and group normalization as PyTorch records them: one node each
(NativeBatchNormBackward0, NativeGroupNormBackward0) over (input, weight, bias), with
PyTorch's CPU kernels' arithmetic and backward formulas. Module alias ``TNO`` (Note
[Module aliases] in ``ops/__init__.py``).

Note [Normalization records]
The statistics are computed first, by direct kernels (``batch_norm_stats``,
``group_norm_stats``: Note [Direct kernels] in ops/op.py), as PyTorch's kernels compute
them: batch norm sums each channel in float64 (ATen's accumulate type for float on CPU)
and rounds the mean and the sum of squared deviations to the input's dtype; the inverse
standard deviation is 1/sqrt(var_sum / n + eps) in float64. The public function blends
them into the running statistics in place, in float64 as ATen does, without a version
bump (PyTorch's kernel writes them directly). The records then take the statistics as
tensors in their parameters ``p`` and compute ``x * alpha + beta`` per channel, alpha =
invstd * weight and beta = bias - mean * alpha, the order of ATen's contiguous CPU
kernel; in eval mode the running statistics take the batch's place.

Batch norm's rule is its backward op (``native_batch_norm_backward``: three outputs, the
input's, the weight's and the bias's gradients, one NumPy kernel as ATen's
batch_norm_backward), whose rules are FunctionsManual.cpp's batchnorm_double_backward in
Tensor ops: NativeBatchNormBackwardBackward0, as PyTorch. Group norm follows PyTorch's
derivatives.yaml: without create_graph the gradient is one NumPy kernel (ATen's
GroupNormBackward); with it, a composite of differentiable ops that recomputes the
statistics from the input (PyTorch's infinitely_differentiable_native_group_norm_backward
takes them from the node's other outputs, which retrograd's node does not have), so
derivatives of any order follow. ``p`` for batch norm: (save_mean, save_invstd,
running_mean, running_var, training, eps), the first four Tensors (empty ones for the
saved statistics in eval mode, as PyTorch) or None; for group norm: (mean, rstd, group,
eps, N, C, HxW), mean and rstd of shape (N, group).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([[1.0], [3.0]], requires_grad=True)
    >>> y = torch.nn.functional.batch_norm(x, None, None, training=True)
    >>> y.grad_fn.name(), y.grad_fn._saved_result1
    ('NativeBatchNormBackward0', tensor([2.]))
"""

from __future__ import annotations

import numpy as np

from ..._core.grad_mode import STATE
from ..._random.avx_math import mul_add
from ..dispatch import apply
from ..op import _LOW, Op, direct_kernel

_F32 = np.dtype(np.float32)


def _axes(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _chan(a, ndim: int):
    """A per-channel vector shaped (1, C, 1, ...) to broadcast against an ndim input."""
    return a.reshape((1, -1) + (1,) * (ndim - 2))


def _mul_add(x, a, b):
    """``x * a + b`` in x's dtype, with float32's one rounding of PyTorch's vectorized fmadd
    where its CPU capability has one (``mul_add``, Note [CPU capability])."""
    if x.dtype == _F32:
        return mul_add(x, a.astype(_F32, copy=False), b.astype(_F32, copy=False), _F32)
    return (x * a + b).astype(x.dtype, copy=False)


def _acc(dt):
    """ATen's CPU accumulate type: float64 for float32/float64, float32 for the 16-bit
    floats."""
    return _F32 if dt in _LOW else np.float64


# ---------------------------------------------------------------------------------
# batch norm


@direct_kernel
def batch_norm_stats(x: np.ndarray) -> tuple:
    """(mean, var_sum) per channel (Note [Normalization records])."""
    axes = _axes(x.ndim)
    acc = _acc(x.dtype)
    n = x.size // x.shape[1]
    mean = (np.add.reduce(x, axis=axes, dtype=acc) / n).astype(x.dtype)
    d = x - _chan(mean, x.ndim)
    var_sum = np.add.reduce(d * d, axis=axes, dtype=acc).astype(x.dtype)
    return mean, var_sum


@direct_kernel
def batch_norm_invstd(var_sum: np.ndarray, n: int, eps: float) -> np.ndarray:
    """1 / sqrt(var_sum / n + eps) in the accumulate type, rounded to var_sum's dtype."""
    v = var_sum.astype(_acc(var_sum.dtype))
    return (1 / np.sqrt(v / n + eps)).astype(var_sum.dtype)


@direct_kernel
def update_running_stats(rm, rv, mean, var_sum, n: int, momentum: float) -> None:
    """Blend the batch statistics into the running ones in place, as ATen's contiguous
    batch_norm_cpu: momentum in the statistics' dtype, the mean's blend in that dtype, the
    unbiased variance var_sum / (n - 1) in the accumulate type."""
    if rm is not None:
        m = rm.dtype.type(momentum)
        rm[...] = m * mean.astype(rm.dtype) + (rm.dtype.type(1) - m) * rm
    if rv is not None:
        m = rv.dtype.type(momentum)
        acc = _acc(rv.dtype)
        unbiased = var_sum.astype(acc) / (n - 1)
        rv[...] = acc(m) * unbiased + ((rv.dtype.type(1) - m) * rv).astype(acc)


def _bn_terms(p, dt):
    """(mean, invstd) per channel: the batch's in training, the running ones in eval."""
    mean, invstd, rm, rv, training, eps = p
    if training:
        return mean._data, invstd._data
    pt = rv._data.dtype.type
    return rm._data, pt(1) / np.sqrt(rv._data + pt(eps))


def _bn_fwd(x, w, b, p):
    mean, invstd = _bn_terms(p, x.dtype)
    alpha = invstd if w is None else invstd * w
    beta = -(mean * alpha) if b is None else b - mean * alpha
    return _mul_add(x, _chan(alpha, x.ndim), _chan(beta, x.ndim))


def _bn_bwd_fwd(g, x, w, p):
    """ATen's batch_norm_backward (CPU): per channel sum = Σ g, dotp = Σ (x - mean) g;
    training: (g - sum/n - (x - mean) dotp invstd² / n) invstd w; eval: g invstd w."""
    mean, invstd = _bn_terms(p, x.dtype)
    nd = x.ndim
    axes = _axes(nd)
    acc = _acc(x.dtype)
    n = x.size // x.shape[1]
    xm = x - _chan(mean, nd).astype(x.dtype)
    gsum = np.add.reduce(g, axis=axes, dtype=acc)
    dotp = np.add.reduce(xm * g, axis=axes, dtype=acc)
    scale = invstd if w is None else invstd * w
    if p[4]:
        k = (dotp * invstd * invstd / n).astype(x.dtype)
        gmean = (gsum / n).astype(x.dtype)
        gi = (g - _chan(gmean, nd) - xm * _chan(k, nd)) * _chan(scale, nd)
    else:
        gi = g * _chan(scale, nd)
    gw = (dotp * invstd).astype(x.dtype if w is None else w.dtype)
    gb = gsum.astype(gw.dtype)
    return gi.astype(x.dtype, copy=False), gw, gb


def _bn_vjp(g, s, n, needs):
    gi, gw, gb = apply(native_batch_norm_backward, (g, s[0], s[1]), n._p, nout=3)
    return [gi if needs[0] else None, gw if needs[1] else None, gb if needs[2] else None]


def _sum_c(t, axes):
    """sum_exclude_dim1 of batchnorm_double_backward (keepdim)."""
    return t.sum(axes, keepdim=True)


def _bn_double_vjp(grads, s, n, needs):
    """FunctionsManual.cpp's batchnorm_double_backward: the gradients of the backward op's
    outputs (ggI, ggW, ggB) give those of its inputs (gO, input, weight)."""
    ggi, ggw, ggb = grads
    go, x, w, mean, invstd, rm, rv = s
    training, eps = n._p[4], n._p[5]
    nd = x.ndim
    axes = _axes(nd)
    m = x.numel() // x.shape[1]
    shape = (1, -1) + (1,) * (nd - 2)
    gamma = 1.0 if w is None else w.reshape(shape)
    mu = (mean if training else rm).reshape(shape)
    xm = x - mu
    s12 = (invstd if training else (rv + eps).pow(-0.5)).reshape(shape)
    s1, s32 = s12.pow(2), s12.pow(3)
    xm_s32 = xm * s32
    go_xm_sum = _sum_c(go * xm, axes)
    go_sum = _sum_c(go, axes)
    gi = None
    if ggi is not None and training:
        ggi_sum = _sum_c(ggi, axes)
        ggi_xm_sum = _sum_c(ggi * xm, axes)
        all_sub = (ggi_sum * go_sum / m - _sum_c(go * ggi, axes)
                   + s1 * go_xm_sum * ggi_xm_sum * (3.0 / m))
        gi = gamma * (xm_s32 * all_sub / m + ggi_xm_sum * s32 / m * (go_sum / m - go)
                      + go_xm_sum * s32 / m * (ggi_sum / m - ggi))
    if ggw is not None:
        ggw_e = ggw.reshape(shape)
        if training:
            term = ggw_e * (go * s12 - s12 * go_sum / m - xm_s32 * go_xm_sum / m)
        else:
            term = ggw_e * s12 * go
        gi = term if gi is None else gi + term

    def first_back(g, gam):
        return (gam * s12 / m) * (g * m - _sum_c(g, axes) - xm * s1 * _sum_c(g * xm, axes))

    gg = None
    if ggi is not None and needs[2] and w is not None:
        gg = (ggi * first_back(go, 1.0) if training else ggi * go * s12).sum(axes)
    ggo = None
    if ggi is not None:
        ggo = first_back(ggi, gamma) if training else ggi * s12 * gamma
    if ggw is not None:
        t = ggw.reshape(shape) * xm * s12
        ggo = t if ggo is None else ggo + t
    if ggb is not None:
        t = ggb.reshape(shape).expand(x.shape)
        ggo = t if ggo is None else ggo + t
    return [ggo if needs[0] else None, gi if needs[1] else None, gg]


native_batch_norm_backward = Op(
    "native_batch_norm_backward", _bn_bwd_fwd, _bn_double_vjp,
    (0, 1, 2, "p0", "p1", "p2", "p3"), node_name="NativeBatchNormBackwardBackward0")
native_batch_norm = Op("native_batch_norm", _bn_fwd, _bn_vjp, (0, 1, "p0", "p1", "p2", "p3"),
                       node_name="NativeBatchNormBackward0")


# ---------------------------------------------------------------------------------
# group norm: the input seen as (N, group, D * HxW), D = C / group


@direct_kernel
def group_norm_stats(x: np.ndarray, group: int, eps: float) -> tuple:
    """(mean, rstd) of shape (N, group), in the accumulate type, rounded to x's dtype."""
    acc = _acc(x.dtype)
    xg = x.reshape(x.shape[0], group, -1).astype(acc)
    mean = xg.mean(-1)
    d = xg - mean[..., None]
    var = np.maximum((d * d).mean(-1), 0)
    return mean.astype(x.dtype), (1 / np.sqrt(var + eps)).astype(x.dtype)


def _gn_params(x, w, b, group):
    """(gamma, beta) as (1, group, D) arrays (ones and zeros where not given)."""
    c = x.shape[1]
    dt = x.dtype
    gamma = np.ones(c, dt) if w is None else w
    beta = np.zeros(c, dt) if b is None else b
    return gamma.reshape(1, group, c // group), beta.reshape(1, group, c // group)


def _gn_fwd(x, w, b, p):
    """ATen's GroupNormKernel: scale = rstd gamma, bias = -scale mean + beta, y = scale x
    + bias, per (sample, channel)."""
    mean, rstd, group = p[0]._data, p[1]._data, p[2]
    n, c = x.shape[:2]
    gamma, beta = _gn_params(x, w, b, group)
    scale = rstd[..., None] * gamma
    bias = -scale * mean[..., None] + beta
    xs = x.reshape(n, group, c // group, -1)
    return _mul_add(xs, scale[..., None], bias[..., None]).reshape(x.shape)


def _gn_bwd_fwd(g, x, w, p):
    """ATen's GroupNormBackward (CPU): ds = Σ g x, db = Σ g per (sample, channel); per
    group c2 = (db_γ mean - ds_γ) rstd³ / (D HxW), c3 = -c2 mean - db_γ rstd / (D HxW);
    dx = rstd γ g + c2 x + c3; dγ = Σ_n (ds - db mean) rstd; dβ = Σ_n db."""
    mean, rstd, group = p[0]._data, p[1]._data, p[2]
    n, c = x.shape[:2]
    d = c // group
    acc = _acc(x.dtype)
    xs = x.reshape(n, group, d, -1)
    gs = g.reshape(n, group, d, -1)
    ds = np.add.reduce(gs * xs, axis=-1, dtype=acc)  # (n, group, d)
    db = np.add.reduce(gs, axis=-1, dtype=acc)
    gamma, _ = _gn_params(x, w, None, group)
    m = mean[..., None].astype(acc)
    r = rstd[..., None].astype(acc)
    s = 1.0 / (d * xs.shape[-1])
    ds_g = (ds * gamma).sum(-1, keepdims=True)
    db_g = (db * gamma).sum(-1, keepdims=True)
    c2 = (db_g * m - ds_g) * r * r * r * s
    c3 = -c2 * m - db_g * r * s
    c1 = r[..., None] * gamma[..., None]
    dx = c1 * gs + c2[..., None] * xs + c3[..., None]
    dgamma = ((ds - db * m) * r).sum(0).reshape(c)
    dbeta = db.sum(0).reshape(c)
    wdt = x.dtype if w is None else w.dtype
    return dx.reshape(x.shape).astype(x.dtype), dgamma.astype(wdt), dbeta.astype(wdt)


def _gn_composite(g, x, w, group, eps, needs):
    """The group norm gradients in differentiable Tensor ops, the statistics recomputed
    from x (Note [Normalization records])."""
    n, c = x.shape[0], x.shape[1]
    xg = x.reshape(n, group, -1)
    mean = xg.mean(-1, keepdim=True)
    xm = xg - mean
    rstd = ((xm * xm).mean(-1, keepdim=True) + eps).rsqrt()
    y = xm * rstd
    gg = g.reshape(n, group, -1)
    gy = gg if w is None else (g * w.reshape((1, c) + (1,) * (x.ndim - 2))).reshape(
        n, group, -1)
    gi = None
    if needs[0]:
        gi = (rstd * (gy - gy.mean(-1, keepdim=True) - y * (gy * y).mean(-1, keepdim=True))
              ).reshape(x.shape)
    axes = (0, 2)
    gw = (g * y.reshape(x.shape)).reshape(n, c, -1).sum(axes) if needs[1] else None
    gb = g.reshape(n, c, -1).sum(axes) if needs[2] else None
    return [gi, gw, gb]


def _gn_vjp(g, s, n, needs):
    x, w = s[0], s[1]
    group, eps = n._p[2], n._p[3]
    if STATE.enabled:  # create_graph: derivatives of any order (Note [Normalization records])
        return _gn_composite(g, x, w, group, eps, needs)
    gi, gw, gb = apply(native_group_norm_backward, (g, x, w), n._p, nout=3)
    return [gi if needs[0] else None, gw if needs[1] else None, gb if needs[2] else None]


# the kernel behind the plain backward (never recorded: grad mode is off there)
native_group_norm_backward = Op("native_group_norm_backward", _gn_bwd_fwd, None,
                                register=False)
native_group_norm = Op("native_group_norm", _gn_fwd, _gn_vjp, (0, 1, "p0", "p1"),
                       node_name="NativeGroupNormBackward0")
