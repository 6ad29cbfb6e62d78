"""Primitives for ``retrograd.nn``: NumPy kernels and derivative rules in Tensor ops.

Same contract as ``ops/records/elementwise.py`` (Note [One table] in ``ops/records/table.py``):
each entry is an ``Op`` with a
forward kernel and rules written with retrograd Tensor ops, so ``create_graph`` and
double backward work through every layer. An nn composite gets its own entry here only
for memory or numerical stability; each entry says which.

Note [Convolution as one matrix product]
``conv`` reads the zero-padded input through a strided window view (``as_strided``:
batch, channels, output positions, kernel offsets; no copy), turns it into columns with
one reshape, and multiplies the columns by the weight in ONE matrix product (a batched
one over samples and groups). The columns are made for a slice of the batch at a time,
about 1 MB each (``_batch_slices``): a few matrix products instead of one, but the
columns stay in cache between the copy and the product, and a small buffer that is
freed and reused costs no fresh pages (Note [Kernel passes] in
ops/kernels/activations.py). Three ops form a closed set, the three partial derivatives of
the trilinear form T(x, w, g) = <conv(x, w), g>:
  * ``conv(x, w)``            = dT/dg  (the forward),
  * ``conv_transpose(g, w)``  = dT/dx  (columns by matmul, then col2im: one strided add
                                        per kernel offset, never a loop over positions),
  * ``conv_weight(x, g)``     = dT/dw  (columns times the output gradient, one matmul).
The rules of each are written with the other two, so every derivative of any order is
again a convolution. ``ConvTranspose`` layers are ``conv_transpose`` itself. ``p`` =
(stride, ((lo, hi) padding per dim), dilation, groups, input spatial shape, kernel
spatial shape) for all three.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> x = torch.ones(1, 1, 3, 3, requires_grad=True)
    >>> y = F.conv2d(x, torch.ones(1, 1, 2, 2))
    >>> y.tolist(), y.grad_fn.name()
    ([[[[4.0, 4.0], [4.0, 4.0]]]], 'ConvolutionBackward0')
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..._core import dtype as D
from ..._core.cpu_capability import onednn_at_least, onednn_takes
from ..._core.grad_mode import STATE
from ..._tensor.tensor import Tensor, _make
from ..batch_rules import conv_rule, dim_at, pointwise, unbatched_first
from ..dispatch import apply
from ..jvp_rules import jvp_linear
from ..kernels.activation_backward import (
    elu_backward_kernel,
    hardsigmoid_backward_kernel,
    hardsigmoid_kernel,
    hardswish_backward_kernel,
    hardswish_kernel,
    hardtanh_backward_kernel,
)
from ..kernels.erf import erf_kernel
from ..kernels.gelu import (
    gelu_backward_onednn_kernel,
    gelu_minimax_kernel,
    gelu_tanh_backward_kernel,
    gelu_tanh_kernel,
)
from ..kernels.norms import layer_norm_backward_kernel, layer_norm_kernel
from ..kernels.scatter_rows import scatter_add_rows
from ..kernels.softmax import (
    log_softmax_backward_kernel,
    log_softmax_kernel,
    softmax_backward_kernel,
    softmax_kernel,
)
from ..op import _LOW, Op, direct_kernel
from ..public import LOWER_PRECISION_FP
from . import table as T
from .helpers import _not_implemented, zeros_like_of

_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)


def _low_in(*arrays):
    """float16/bfloat16 kernels compute in float32 (NumPy has no fast low-precision BLAS)."""
    dt = arrays[0].dtype
    if dt in _LOW:
        return dt, tuple(None if a is None else a.astype(_F32) for a in arrays)
    return None, arrays


def _low_out(dt, out):
    return out if dt is None else out.astype(dt)


# ---------------------------------------------------------------------------------
# convolution (Note [Convolution as one matrix product])


def _pad_zero(x, pads):
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
    out = np.zeros(shape, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                           zip(x.shape[2:], pads))] = x
    return out


def _windows(xp, ksp, stride, dil, osp):
    """(B, C, *out positions, *kernel offsets) view of a padded input (no copy)."""
    st = xp.strides
    nsp = len(ksp)
    shape = xp.shape[:2] + tuple(osp) + tuple(ksp)
    strides = (st[:2] + tuple(st[2 + i] * stride[i] for i in range(nsp))
               + tuple(st[2 + i] * dil[i] for i in range(nsp)))
    return as_strided(xp, shape, strides, writeable=False)


def _out_shape(psp, ksp, stride, dil):
    return tuple((psp[i] - dil[i] * (ksp[i] - 1) - 1) // stride[i] + 1 for i in range(len(ksp)))


def _columns(x, ksp, p, osp):
    """Columns of the padded input: (B, G, Cg*K, O), C-contiguous (a copy, the im2col).

    This layout makes the forward ``W @ cols`` land in (B, Cout, *O) order with no
    transpose of the output (Note [Convolution as one matrix product]).
    """
    stride, pads, dil, groups = p[0], p[1], p[2], p[3]
    nsp = len(ksp)
    xp = _pad_zero(x, pads)
    win = _windows(xp, ksp, stride, dil, osp)  # (B, C, *O, *K)
    b, c = x.shape[:2]
    perm = (0, 1) + tuple(range(2 + nsp, 2 + 2 * nsp)) + tuple(range(2, 2 + nsp))
    return win.transpose(perm).reshape(b, groups, (c // groups) * math.prod(ksp),
                                       math.prod(osp))


_SLICE_BYTES = 1 << 20


def _batch_slices(bsz, sample_bytes):
    """Batch ranges of about 1 MB of columns each (Note [Convolution as one matrix
    product])."""
    step = max(1, _SLICE_BYTES // max(1, sample_bytes))
    return [(b0, min(b0 + step, bsz)) for b0 in range(0, bsz, step)]


def _conv_fwd(x, w, b, p):
    dt, (x, w, b) = _low_in(x, w, b)
    stride, pads, dil, groups = p[0], p[1], p[2], p[3]
    ksp = w.shape[2:]
    psp = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
    osp = _out_shape(psp, ksp, stride, dil)
    bsz = x.shape[0]
    cout = w.shape[0]
    wm = w.reshape(groups, cout // groups, -1)  # (G, Og, Cg*K)
    nout = math.prod(osp)
    out = np.empty((bsz, groups, cout // groups, nout), dtype=np.result_type(x, w))
    for b0, b1 in _batch_slices(bsz, x.shape[1] * math.prod(ksp) * nout * x.itemsize):
        if dt is None:
            np.matmul(wm, _columns(x[b0:b1], ksp, p, osp), out=out[b0:b1])  # (b, G, Og, O)
        else:  # float32 sums in torch's order (Note [Low-precision accumulation])
            out[b0:b1] = T.low_matmul_f32(wm, _columns(x[b0:b1], ksp, p, osp), dt)
    out = out.reshape((bsz, cout) + tuple(osp))
    if b is not None:
        out += b.reshape((cout,) + (1,) * len(osp))
    return _low_out(dt, out)


def _col2im(cols, xsp, ksp, p, osp, dtype):
    """Sum columns (B, C, *K, *O) back into an input-shaped array (the adjoint of im2col)."""
    stride, pads, dil = p[0], p[1], p[2]
    bsz, c = cols.shape[:2]
    psp = tuple(s + lo + hi for s, (lo, hi) in zip(xsp, pads))
    out = np.zeros((bsz, c) + psp, dtype=dtype)
    nsp = len(ksp)
    for k in itertools.product(*(range(kk) for kk in ksp)):
        key = (slice(None), slice(None)) + tuple(
            slice(k[i] * dil[i], k[i] * dil[i] + stride[i] * (osp[i] - 1) + 1, stride[i])
            for i in range(nsp))
        out[key] += cols[(slice(None), slice(None)) + k]
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(xsp, pads))
    return out[crop]


def _conv_t_fwd(g, w, b, p):
    dt, (g, w, b) = _low_in(g, w, b)
    stride, groups, xsp = p[0], p[3], p[4]
    bsz, cout = g.shape[:2]
    osp = g.shape[2:]
    ksp = w.shape[2:]
    cg = w.shape[1]
    og = cout // groups
    wm = w.reshape(groups, og, -1).transpose(0, 2, 1)  # (G, Cg*K, Og)
    if len(osp) > 1 and all(s == 1 for s in stride) and np.isfinite(w).all():
        out = _conv_t_rows(g, wm, xsp, ksp, p, groups * cg)
    else:
        nout = math.prod(osp)
        cols = np.matmul(wm, g.reshape(bsz, groups, og, nout))  # (B, G, Cg*K, O)
        cols = cols.reshape((bsz, groups * cg) + tuple(ksp) + tuple(osp))
        out = _col2im(cols, xsp, ksp, p, osp, g.dtype)
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * len(xsp))
    return _low_out(dt, np.ascontiguousarray(out))


def _conv_t_rows(g, wm, xsp, ksp, p, c):
    """conv_transpose for stride 1: col2im as one long-row add per kernel offset.

    Note [col2im on padded rows]
    With stride 1, output position o and kernel offset k meet at input position o + k*d
    (padded coordinates). Lay g out on the padded input's row length (zeros after each
    row's last output) and flatten the spatial dims: then ``o + k*d`` is the flat index of
    o plus a constant per k, so the columns of offset k add into one contiguous run of
    the flattened input, (B, C) runs of O_0 * P_1 * ... elements. The plain col2im adds
    (B, C, O_0, ..., O_{n-2}) short rows of O_{n-1} elements each, and NumPy's per-row
    overhead dominates. The zero columns of g give exactly zero columns (finite weights:
    the caller checks), which add nothing wherever they land.
    """
    pads, dil = p[1], p[2]
    bsz, cout = g.shape[:2]
    osp = g.shape[2:]
    nsp = len(osp)
    groups, cgk, og = wm.shape
    psp = tuple(s + lo + hi for s, (lo, hi) in zip(xsp, pads))
    rows = (osp[0],) + psp[1:]
    run = math.prod(rows)
    pst = [math.prod(psp[i + 1:]) for i in range(nsp)]
    starts = [sum(k[i] * dil[i] * pst[i] for i in range(nsp))
              for k in itertools.product(*(range(kk) for kk in ksp))]
    size = math.prod(psp)
    out = np.zeros((bsz, c, max(size, starts[-1] + run)), dtype=g.dtype)
    inside = (slice(None), slice(None)) + tuple(slice(0, o) for o in osp)
    for b0, b1 in _batch_slices(bsz, cgk * groups * run * g.itemsize):
        gw = np.zeros((b1 - b0, cout) + rows, dtype=g.dtype)
        gw[inside] = g[b0:b1]
        cols = np.matmul(wm, gw.reshape(b1 - b0, groups, og, run))  # (b, G, Cg*K, run)
        cols = cols.reshape(b1 - b0, c, len(starts), run)
        for j, st in enumerate(starts):
            o = out[b0:b1, :, st:st + run]
            np.add(o, cols[:, :, j], out=o)
    out = out[:, :, :size].reshape((bsz, c) + psp)
    return out[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                                  zip(xsp, pads))]


def _conv_w_fwd(x, g, p):
    dt, (x, g) = _low_in(x, g)
    groups, ksp = p[3], p[5]
    bsz, cout = g.shape[:2]
    osp = g.shape[2:]
    og = cout // groups
    nout = math.prod(osp)
    cgk = (x.shape[1] // groups) * math.prod(ksp)
    g4 = g.reshape(bsz, groups, og, nout)
    dw = np.zeros((groups, og, cgk), dtype=np.result_type(x, g))
    for b0, b1 in _batch_slices(bsz, groups * cgk * nout * x.itemsize):
        cols = _columns(x[b0:b1], ksp, p, osp)  # (b, G, Cg*K, O)
        if og <= nout:
            # one matrix product per sample, then a sum over the samples: no transposed
            # copy of the columns; the (b, G, Og, Cg*K) partials are no larger than them
            dw += np.matmul(g4[b0:b1], cols.transpose(0, 1, 3, 2)).sum(0)
        else:
            # many output channels, few positions: one (Og, b*O) @ (b*O, Cg*K) per group
            n = (b1 - b0) * nout
            g2 = np.ascontiguousarray(g4[b0:b1].transpose(1, 2, 0, 3)).reshape(groups, og, n)
            c2 = np.ascontiguousarray(cols.transpose(1, 2, 0, 3)).reshape(groups, cgk, n)
            dw += np.matmul(g2, c2.transpose(0, 2, 1))  # (G, Og, Cg*K)
    return _low_out(dt, dw.reshape((cout, x.shape[1] // groups) + tuple(ksp)))


def _bias_grad(g):
    return g.sum(dim=(0,) + tuple(range(2, g.ndim)))


def _conv_vjp(g, s, n, needs):
    x, w = s
    p = n._p
    r = [None, None, None]
    if needs[0]:
        r[0] = apply(conv_transpose, (g, w, None), p)
    if needs[1]:
        r[1] = apply(conv_weight, (x, g), p)
    if needs[2]:
        r[2] = _bias_grad(g)
    return r


def _conv_t_vjp(h, s, n, needs):
    g, w = s
    p = n._p
    r = [None, None, None]
    if needs[0]:
        r[0] = apply(conv, (h, w, None), p)
    if needs[1]:
        r[1] = apply(conv_weight, (h, g), p)
    if needs[2]:
        r[2] = _bias_grad(h)
    return r


def _conv_w_vjp(h, s, n, needs):
    x, g = s
    p = n._p
    r = [None, None]
    if needs[0]:
        r[0] = apply(conv_transpose, (g, h, None), p)
    if needs[1]:
        r[1] = apply(conv, (x, h, None), p)
    return r


conv = Op("conv", _conv_fwd, _conv_vjp, (0, 1), node_name="ConvolutionBackward0",
          autocast=LOWER_PRECISION_FP, batch=conv_rule)
conv_transpose = Op("conv_transpose", _conv_t_fwd, _conv_t_vjp, (0, 1),
                    node_name="ConvolutionBackward0", autocast=LOWER_PRECISION_FP, batch=conv_rule)
conv_weight = Op("conv_weight", _conv_w_fwd, _conv_w_vjp, (0, 1),
                 node_name="ConvolutionBackwardBackward0")


# ---------------------------------------------------------------------------------
# max pooling: indices from a window view, values and gradients through a
# gather/scatter pair over the flattened spatial dims (each the other's rule).
# p = (nsp, unique) for take_flat and (nsp, xsp, unique) for scatter_flat: nsp trailing
# spatial dims are addressed by the flat index; ``unique`` says no two windows share an
# element (stride >= dilated kernel), so the scatter is a plain assignment.


def _flat2(a, nsp):
    lead = a.shape[:a.ndim - nsp]
    return a.reshape(math.prod(lead), -1), lead


def _global_index(idx, nsp, size):
    """Indices into the whole flattened input: each row's flat index plus its row offset."""
    i2, lead = _flat2(idx, nsp)
    return (i2 + (np.arange(i2.shape[0], dtype=np.int64) * size)[:, None]).ravel(), lead


def _take_flat_fwd(x, idx, p):
    flat, _ = _global_index(idx, p[0], math.prod(x.shape[x.ndim - p[0]:]))
    return np.take(x.reshape(-1), flat).reshape(idx.shape)


def _scatter_flat_fwd(g, idx, p):
    nsp, xsp, unique = p
    size = math.prod(xsp)
    flat, lead = _global_index(idx, nsp, size)
    if unique:  # each input element receives at most one gradient
        out = np.zeros(math.prod(lead) * size, dtype=g.dtype)
        out[flat] = np.add(g.reshape(-1), 0, dtype=g.dtype)  # 0 + g, as the sum gives -0.0
        return out.reshape(lead + tuple(xsp))
    out = np.bincount(flat, weights=g.reshape(-1).astype(np.float64),
                      minlength=math.prod(lead) * size)
    return out.astype(g.dtype, copy=False).reshape(lead + tuple(xsp))


take_flat = Op("take_flat", _take_flat_fwd,
               (lambda g, s, n: apply(scatter_flat, (g, s[0]),
                                      (n._p[0], n.input_shape(0)[-n._p[0]:], n._p[1])), None),
               (1,), node_name="MaxPool2DWithIndicesBackward0")
scatter_flat = Op("scatter_flat", _scatter_flat_fwd,
                  (lambda g, s, n: apply(take_flat, (g, s[0]), (n._p[0], n._p[2])), None),
                  (1,), node_name="MaxPool2DWithIndicesBackwardBackward0")


@direct_kernel
def max_pool_indices(x, ksp, stride, pads, dil, osp):
    """Flat indices (into the unpadded spatial dims) of each window's maximum.

    NaN wins, as in PyTorch; ties go to the first element of the window.

    Note [Max pooling by kernel offsets]
    A window view (B, C, *O, *K) is read one kernel offset at a time: each offset is a
    strided (B, C, *O) view, so the maximum is K elementwise ``maximum`` passes (NaN
    propagates) and the first offset that attains it comes from K ``!=`` passes folded
    as arg = n0 * (1 + n1 * (1 + n2 * ...)), n_j = "offset j is not the max". An argmax
    over the last axis of a (..., K) copy would call NumPy's argmax once per window.
    """
    nsp = len(ksp)
    psp = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
    need = tuple((osp[i] - 1) * stride[i] + dil[i] * (ksp[i] - 1) + 1 for i in range(nsp))
    full = tuple((lo, hi + max(0, need[i] - psp[i])) for i, (lo, hi) in enumerate(pads))
    if any(lo or hi for lo, hi in full):
        if x.dtype.kind == "f" or x.dtype.name == "bfloat16":  # bfloat16 (ml_dtypes): "V"
            fill = -np.inf
        else:
            fill = np.iinfo(x.dtype).min
        shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], full))
        xp = np.full(shape, fill, dtype=x.dtype)
        xp[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                              zip(x.shape[2:], full))] = x
    else:
        xp = x
    win = _windows(xp, ksp, stride, dil, osp)
    offs = list(itertools.product(*(range(k) for k in ksp)))
    planes = [win[(Ellipsis,) + off] for off in offs]  # strided views, no copies
    m = planes[0].copy()
    for j in range(1, len(offs)):
        np.maximum(m, planes[j], out=m)
    floating = x.dtype.kind == "f" or x.dtype.name == "bfloat16"
    nan = floating and m.size and np.isnan(np.add.reduce(m, axis=None))
    acc = np.zeros(m.shape, np.uint8 if len(offs) <= 256 else np.int64)
    ne = np.empty(m.shape, np.bool_)
    for j in range(len(offs) - 2, -1, -1):
        v = planes[j]
        np.not_equal(v, m, out=ne)
        if nan:  # where the max is NaN, the first NaN is it
            ne &= ~np.isnan(v)
        acc += 1
        acc *= ne
    # window-local offset -> position in the unpadded input
    xst = [math.prod(x.shape[3 + i:]) for i in range(nsp)]
    table = np.array([sum(off[i] * dil[i] * xst[i] for i in range(nsp)) for off in offs],
                     dtype=np.int64)
    base = np.zeros((), dtype=np.int64)  # each window's first position, shape osp
    for i in range(nsp):
        oi = np.arange(osp[i], dtype=np.int64).reshape((osp[i],) + (1,) * (nsp - 1 - i))
        base = base + (oi * stride[i] - full[i][0]) * xst[i]
    flat = np.take(table, acc.astype(np.intp))  # take converts small ints ~10x slower
    flat += base
    return flat


# ---------------------------------------------------------------------------------
# average pooling (linear; avg_pool and avg_pool_t are each other's adjoint).
# p = (ksp, stride, pads (lo, hi incl. ceil_mode's extra), divisor array, xsp)


def _avg_pool_fwd(x, p):
    ksp, stride, pads, div, _ = p
    nsp = len(ksp)
    osp = div.shape
    xp = _pad_zero(x, pads)
    win = _windows(xp, ksp, stride, (1,) * nsp, osp)
    s = win.sum(axis=tuple(range(2 + nsp, 2 + 2 * nsp)))
    return (s / div).astype(x.dtype, copy=False)


def _avg_pool_t_fwd(g, p):
    ksp, stride, pads, div, xsp = p
    nsp = len(ksp)
    gd = (g / div).astype(g.dtype, copy=False)
    cols = np.broadcast_to(gd.reshape(gd.shape[:2] + (1,) * nsp + gd.shape[2:]),
                           gd.shape[:2] + tuple(ksp) + gd.shape[2:])
    return np.ascontiguousarray(_col2im(cols, xsp, ksp, (stride, pads, (1,) * nsp),
                                        gd.shape[2:], g.dtype))


avg_pool = Op("avg_pool", _avg_pool_fwd, (lambda g, s, n: apply(avg_pool_t, (g,), n._p),),
              node_name="AvgPool2DBackward0")
avg_pool_t = Op("avg_pool_t", _avg_pool_t_fwd, (lambda g, s, n: apply(avg_pool, (g,), n._p),),
                node_name="AvgPool2DBackwardBackward0")


# ---------------------------------------------------------------------------------
# softmax and log_softmax: own entries for stability (max-shifted) and memory (each
# saves only its output). p = dim.
_add_reduce = np.add.reduce


# Note [Softmax backward ops]: as PyTorch's _log_softmax_backward_data and
# _softmax_backward_data, the backward of log_softmax (g - exp(y) * sum(g)) and of softmax
# (y * (g - sum(g * y))) are fused entries, each one kernel (Note [Softmax kernels] in
# ops/kernels/softmax.py), with rules of their own for double backward. p = dim.
log_softmax_backward = Op(
    "log_softmax_backward", log_softmax_backward_kernel,
    (lambda gg, s, n: gg - (gg * s[1].exp()).sum(n._p, keepdim=True),
     lambda gg, s, n: -gg * s[1].exp() * s[0].sum(n._p, keepdim=True)),
    (0, 1), save_if=((1,), (0, 1)), node_name="LogSoftmaxBackwardDataBackward0")
log_softmax = Op("log_softmax", log_softmax_kernel,
                 (lambda g, s, n: apply(log_softmax_backward, (g, s[0]), n._p),), ("out",),
                 node_name="LogSoftmaxBackward0", batch=dim_at(None))


def _softmax_bwd_rule_y(gg, s, n):
    # d/dy of <gg, y * (g - sum(g * y))> = gg * (g - sum(g * y)) - g * sum(gg * y)
    g, y = s
    return gg * (g - (g * y).sum(n._p, keepdim=True)) - g * (gg * y).sum(n._p, keepdim=True)


softmax_backward = Op(
    "softmax_backward", softmax_backward_kernel,
    (lambda gg, s, n: apply(softmax_backward, (gg, s[1]), n._p), _softmax_bwd_rule_y),
    (0, 1), save_if=((1,), (0, 1)), node_name="SoftmaxBackwardDataBackward0",
    batch=dim_at(None))
softmax = Op("softmax", softmax_kernel,
             (lambda g, s, n: apply(softmax_backward, (g, s[0]), n._p),), ("out",),
             node_name="SoftmaxBackward0", batch=dim_at(None))


# ---------------------------------------------------------------------------------
# layer normalization (Note [Layer norm kernels] in ops/kernels/norms.py): own entry for
# speed, one node (PyTorch's NativeLayerNormBackward0) instead of nine. Inputs (x, weight,
# bias), weight and bias None or of the normalized shape; p = (k, eps), k the number of
# trailing dims normalized. Without create_graph the gradient is one NumPy kernel; with it,
# PyTorch's formula in Tensor ops, so that double backward and forward AD go through it.


def _layer_norm_fwd(x, w, b, p):
    return layer_norm_kernel(x, w, b, p[0], p[1])


@direct_kernel
def layer_norm_backward_arrays(g, x, w, p, wanted):
    """The wanted ones of (dx, dweight, dbias) of layer_norm, as a tuple of arrays (Note
    [Layer norm kernels]). A direct kernel (Note [Direct kernels]): compiled backwards
    replay it."""
    outs = layer_norm_backward_kernel(g, x, w, p[0], p[1], wanted)
    return tuple(o for o in outs if o is not None)


def _layer_norm_vjp(g, s, n, needs):
    x, w = s
    k, eps = n._p
    wanted = (needs[0], needs[1] and w is not None, needs[2])
    if not any(wanted):
        return [None, None, None]
    if not STATE.enabled and g.__class__ is Tensor and x.__class__ is Tensor and \
            (w is None or w.__class__ is Tensor) and g._data.shape == x._data.shape:
        outs = iter(layer_norm_backward_arrays(g._data, x._data,
                                               None if w is None else w._data, n._p, wanted))
        return [_make(next(outs)) if want else None for want in wanted]
    dims = tuple(range(x.ndim - k, x.ndim))
    d = x - x.mean(dims, keepdim=True)
    rstd = ((d * d).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = d * rstd
    rows = tuple(range(x.ndim - k))
    gw = gb = None
    if needs[1] and w is not None:
        gw = (g * xhat).sum(rows) if rows else g * xhat
    if needs[2]:
        gb = g.sum(rows) if rows else g
    gx = None
    if needs[0]:
        gy = g if w is None else g * w
        gx = rstd * (gy - gy.mean(dims, keepdim=True)
                     - xhat * (gy * xhat).mean(dims, keepdim=True))
    return [gx, gw, gb]


def _layer_norm_batch(c):
    """vmap: the batched input is normalized as it is (its batch dims lead, the normalized
    ones trail); a batched weight or bias is then applied by broadcasting."""
    if not (c.batched[1] or c.batched[2]):
        return c.run(c.args, c.p)
    out = c.run((c.args[0] if c.batched[0] else c.full(0), None, None), c.p)
    rank = c.logical_ndim(0)
    for i in (1, 2):
        t = c.args[i]
        if t is None:
            continue
        if c.batched[i]:  # its batch dims in front of the input's unnormalized ones
            s = tuple(t.shape)
            t = t.reshape(s[:c.nb] + (1,) * (rank - c.logical_ndim(i)) + s[c.nb:])
        out = out * t if i == 1 else out + t
    return out


layer_norm = Op("layer_norm", _layer_norm_fwd, _layer_norm_vjp, (0, 1),
                node_name="NativeLayerNormBackward0", nondiff=(), batch=_layer_norm_batch)


# ---------------------------------------------------------------------------------
# activations with their own entries


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_fwd(x, approximate):
    if approximate == "tanh":
        dt, (xf,) = _low_in(x)
        return _low_out(dt, gelu_tanh_kernel(xf))
    if _onednn_gelu(x):
        return _gelu_onednn_fwd(x)
    # ATen's own loops (float64, one element, a strided input): erf in float64
    xd = x.astype(np.float64)
    return (0.5 * xd * (1.0 + erf_kernel(xd * _SQRT_HALF))).astype(x.dtype, copy=False)


_ONEDNN_NAMES = {np.dtype(np.float32): "float32", D.bfloat16.np: "bfloat16",
                 np.dtype(np.float16): "float16"}


def _onednn_gelu(x) -> bool:
    """Whether PyTorch computes this gelu (and its gelu_backward) with oneDNN (Note [CPU
    capability])."""
    return x.size > 1 and x.flags.c_contiguous and onednn_takes(_ONEDNN_NAMES.get(x.dtype, ""))


def _gelu_onednn_fwd(x):
    # oneDNN's AVX-512 kernel, bit for bit (Note [GELU as oneDNN computes it]), in float32
    # for bfloat16/float16 too. Its special values follow the ISA (Note [CPU capability]):
    # the AVX-512 kernels keep a zero's sign and give nan at +inf (with the sign bit set
    # but for float16); the float32 AVX2/SSE4.1 kernel gives +0.0 for every zero and +inf
    # there, and its values (Abramowitz and Stegun's erf) within 1e-6 of these
    out = gelu_minimax_kernel(x if x.dtype == _F32 else x.astype(_F32))
    if x.dtype != _F32:
        out = out.astype(x.dtype)
    if onednn_at_least("AVX512_CORE_FP16" if x.dtype == _F16 else "AVX512_CORE"):
        if x.dtype == _F16:
            np.copyto(out, np.nan, where=np.isposinf(x))
    elif x.dtype == _F32:
        np.add(out, 0.0, out=out)
        np.copyto(out, np.inf, where=np.isposinf(x))
    return out


@direct_kernel
def gelu_backward_arrays(g, x, approximate):
    """gelu_backward of arrays of one shape and dtype: oneDNN's (erf form, where PyTorch
    calls it: Note [GELU as oneDNN computes it]) or ATen's tanh form, in float32 for
    float16/bfloat16. A direct kernel (Note [Direct kernels]): compiled backwards replay it."""
    dt, (gf, xf) = _low_in(g, x)
    with np.errstate(over="ignore", invalid="ignore"):
        if approximate == "tanh":
            return _low_out(dt, gelu_tanh_backward_kernel(gf, xf))
        return _low_out(dt, gelu_backward_onednn_kernel(gf, xf))


def _gelu_rule(g, s, n):
    x = s[0]
    if not STATE.enabled and g.__class__ is Tensor and x.__class__ is Tensor:
        ga, xa = g._data, x._data  # one kernel when no graph is made of the gradient
        if ga.shape == xa.shape and ga.dtype == xa.dtype and xa.ndim and (
                _onednn_gelu(xa) if n._p != "tanh" else xa.dtype.kind == "f"):
            return _make(gelu_backward_arrays(ga, xa, n._p))
    if n._p == "tanh":
        x3 = x * x * x
        t = ((x + 0.044715 * x3) * _SQRT_2_OVER_PI).tanh()
        dinner = (1.0 + 3 * 0.044715 * x * x) * _SQRT_2_OVER_PI
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)
    cdf = 0.5 * (1.0 + (x * _SQRT_HALF).erf())
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


# own entry for memory: one saved input instead of the erf/tanh chain's intermediates
gelu = Op("gelu", _gelu_fwd, (_gelu_rule,), (0,), node_name="GeluBackward0", batch=pointwise)


def _softplus_fwd(x, p):
    beta, threshold = p
    bx = x * beta if beta != 1 else x
    sp = (np.maximum(bx, 0) + np.log1p(np.exp(-np.abs(bx))))
    if beta != 1:
        sp = sp / beta
    out = np.where(bx > threshold, x, sp)
    return out.astype(x.dtype, copy=False)


def _softplus_rule(g, s, n):
    beta, threshold = n._p
    bx = s[0] * beta if beta != 1 else s[0]
    d = bx.sigmoid()
    if threshold != math.inf:
        d = T._where(bx > threshold, 1.0, d)
    return g * d


# own entry for stability: log1p(exp(x)) overflows for large x, and the derivative
# sigmoid(beta * x) has no inf*0 in it
softplus = Op("softplus", _softplus_fwd, (_softplus_rule,), (0,), node_name="SoftplusBackward0",
              batch=pointwise)


# Note [SiLU and Mish]
# Own entries, as PyTorch's (SiluBackward0, MishBackward0), with its kernels' formulas:
# silu(x) = x / (1 + exp(-x)) and mish(x) = x * tanh(log1p(exp(x))), float16/bfloat16 in
# float32. The gradient forms the derivative first and multiplies the incoming gradient
# in once, as PyTorch's (infinitely differentiable) backward formulas do: an infinite
# gradient at x = 0 gives inf, where the composites x * sigmoid(x) and x * tanh(softplus
# (x)) gave g*a + (g*x)*b = inf + nan. One node saves the input, nothing else. Without
# create_graph the gradient is one NumPy kernel in float32 for float16/bfloat16 (PyTorch's
# silu_backward/mish_backward kernels); with it, the composite of differentiable ops.
def _silu_fwd(x):
    dt, (xf,) = _low_in(x)
    with np.errstate(over="ignore"):
        return _low_out(dt, xf / (1 + np.exp(-xf)))


def _mish_fwd(x):
    dt, (xf,) = _low_in(x)
    with np.errstate(over="ignore"):
        return _low_out(dt, xf * np.tanh(np.log1p(np.exp(xf))))


def _kernel_backward(g, x, fn):
    """``fn(g, x)`` on arrays (float32 for float16/bfloat16) when no graph is being made
    of the gradient, else None."""
    if STATE.enabled or g.__class__ is not Tensor or x.__class__ is not Tensor:
        return None
    dt, (ga, xa) = _low_in(g._data, x._data)
    with np.errstate(over="ignore", invalid="ignore"):  # (a 0-d input's result is a
        return _make(np.asarray(_low_out(dt, fn(ga, xa))))  # NumPy scalar: an array again)


def _silu_bwd_kernel(g, x):
    sig = 1 / (1 + np.exp(-x))
    return g * sig * (1 + x * (1 - sig))


def _mish_bwd_kernel(g, x):
    sig = 1 / (1 + np.exp(-x))
    tsp = np.tanh(np.log1p(np.exp(x)))
    return g * (tsp + x * sig * (1 - tsp * tsp))


def _silu_rule(g, s, n):
    x = s[0]
    r = _kernel_backward(g, x, _silu_bwd_kernel)
    if r is not None:
        return r
    sig = x.sigmoid()
    return g * sig * (1.0 + x * (1.0 - sig))


def _mish_rule(g, s, n):
    x = s[0]
    r = _kernel_backward(g, x, _mish_bwd_kernel)
    if r is not None:
        return r
    tsp = x.exp().log1p().tanh()
    return g * (tsp + x * x.sigmoid() * (1.0 - tsp * tsp))


silu = Op("silu", _silu_fwd, (_silu_rule,), (0,), batch=pointwise)
mish = Op("mish", _mish_fwd, (_mish_rule,), (0,), batch=pointwise)


# ELU, SELU and CELU: own entries for the kink at 0, where PyTorch's elu_backward takes the
# negative branch (the first derivative at 0 is alpha * scale * input_scale) and its
# elu_double_backward masks with x < 0 (the second derivative at 0 is 0); no composite of
# where/clamp/expm1 gives both. p = (alpha, scale, input_scale, is_result): ``elu`` saves
# its input, ``elu_result`` (the in-place forms, which overwrite the input) its output,
# as PyTorch's elu_ does; elu_backward(g, y, p) reads y as that saved tensor.


def _elu_fwd(x, p):
    alpha, scale, iscale = p[0], p[1], p[2]
    # min: no overflow; 0 first, so that -0.0 stays -0.0 (NumPy's minimum returns its
    # second argument on ties) and elu(-0.0) is -0.0, as PyTorch's expm1 branch gives
    neg = np.expm1(np.minimum(0, x) * iscale) * (alpha * scale)
    return np.where(x <= 0, neg, x * scale).astype(x.dtype, copy=False)


def _elu_bwd_fwd(g, y, p):
    return elu_backward_kernel(g, y, p)  # (Note [NaN in the vector and scalar loops])


def _elu_bwd_rule_y(gg, s, n):
    g, y = s
    iscale, is_result = n._p[2], n._p[3]
    mask = (y < 0).to(gg.dtype)
    if is_result:
        return gg * g * iscale * mask
    return apply(elu_backward, (gg * g * iscale, y), n._p) * mask


elu_backward = Op("elu_backward", _elu_bwd_fwd,
                  (lambda gg, s, n: apply(elu_backward, (gg, s[1]), n._p), _elu_bwd_rule_y),
                  (0, 1), save_if=((1,), (0, 1)), node_name="EluBackwardBackward0")
elu = Op("elu", _elu_fwd, (lambda g, s, n: apply(elu_backward, (g, s[0]), n._p + (False,)),),
         (0,), node_name="EluBackward0", batch=pointwise)
elu_result = Op("elu_result", _elu_fwd,
                (lambda g, s, n: apply(elu_backward, (g, s[0]), n._p + (True,)),), ("out",),
                node_name="EluBackward1", batch=pointwise)


# leaky_relu and hardtanh as PyTorch has them: the node saves the input (the output,
# for the in-place forms F.leaky_relu(x, inplace=True), whose write overwrites the
# input: LeakyReluBackward1 / HardtanhBackward1), and its rule is a fused backward op
# (like relu's threshold_backward) whose own derivative w.r.t. that saved tensor is zero:
# second derivatives are zeros, as in PyTorch. p = (negative_slope,) or (min, max).


def _leaky_relu_fwd(x, p):
    xw = _f32_if_low(x)  # PyTorch's float16/bfloat16 kernels compute in float32
    return np.where(x > 0, xw, xw * xw.dtype.type(p[0])).astype(x.dtype, copy=False)


def _leaky_relu_bwd_fwd(g, x, p):
    gw = _f32_if_low(g)
    return np.where(x > 0, gw, gw * gw.dtype.type(p[0])).astype(g.dtype, copy=False)


def _f32_if_low(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype in (_F16, D.bfloat16.np) else a


def _hardtanh_fwd(x, p):
    return np.clip(x, p[0], p[1]).astype(x.dtype, copy=False)


def _hardtanh_bwd_fwd(g, x, p):
    return hardtanh_backward_kernel(g, x, p[0], p[1])  # (Note [NaN in the vector and scalar loops])


def _fused_mask_ops(name, fwd, bwd_fwd, title, result_nr=1):
    back = Op(f"{name}_backward", bwd_fwd,
              (lambda gg, s, n: apply(back, (gg, s[1]), n._p),
               lambda gg, s, n: zeros_like_of(gg)),
              (0, 1), save_if=((1,), (0,)), node_name=f"{title}BackwardBackward0")

    def rule(g, s, n):
        return apply(back, (g, s[0]), n._p)
    return (back, Op(name, fwd, (rule,), (0,), node_name=f"{title}Backward0"),
            Op(f"{name}_result", fwd, (rule,), ("out",),
               node_name=f"{title}Backward{result_nr}"))


leaky_relu_backward, leaky_relu, leaky_relu_result = _fused_mask_ops(
    "leaky_relu", _leaky_relu_fwd, _leaky_relu_bwd_fwd, "LeakyRelu")
hardtanh_backward, hardtanh, hardtanh_result = _fused_mask_ops(
    "hardtanh", _hardtanh_fwd, _hardtanh_bwd_fwd, "Hardtanh", result_nr=0)  # (as torch)


# hardswish and hardsigmoid as PyTorch has them: one node saving the input
# (HardswishBackward0, HardsigmoidBackward0; the in-place forms save a copy of it) and a
# backward op with PyTorch's kernels, NaN inputs included (Note [NaN in the vector and
# scalar loops]). hardswish_backward's derivative w.r.t. the input is PyTorch's
# where(-3 < x < 3, gg * g / 3, 0); hardsigmoid_backward has none in PyTorch (its
# NotImplemented node).


def _hardswish_bwd_rule_x(gg, s, n):
    g, x = s
    return T._where((x > -3.0).logical_and(x < 3.0), gg * g / 3.0, 0.0)


hardswish_backward = Op("hardswish_backward", lambda g, x: hardswish_backward_kernel(g, x),
                        (lambda gg, s, n: apply(hardswish_backward, (gg, s[1])),
                         _hardswish_bwd_rule_x),
                        (0, 1), save_if=((1,), (0, 1)), node_name="HardswishBackwardBackward0",
                        batch=pointwise)
hardswish = Op("hardswish", hardswish_kernel,
               (lambda g, s, n: apply(hardswish_backward, (g, s[0])),), (0,),
               node_name="HardswishBackward0", batch=pointwise)
hardsigmoid_backward = _not_implemented(
    "hardsigmoid_backward", lambda g, x: hardsigmoid_backward_kernel(g, x), (True, True),
    "(PyTorch has no second derivative of hardsigmoid: it is 0 almost everywhere)")
hardsigmoid = Op("hardsigmoid", hardsigmoid_kernel,
                 (lambda g, s, n: apply(hardsigmoid_backward, (g, s[0])),), (0,),
                 node_name="HardsigmoidBackward0", batch=pointwise)


# ---------------------------------------------------------------------------------
# embedding: rows of the weight; the gradient is a row scatter-add with the
# padding_idx row kept at zero. p = padding_idx (or None)


def _embedding_fwd(w, idx, pad=None):
    return np.take(w, idx, axis=0)


def _embedding_bwd_fwd(g, idx, p):
    num, pad = p
    dim = g.shape[-1]
    out = scatter_add_rows(g.reshape(-1, dim), idx.reshape(-1), num)
    if pad is not None:
        out[pad] = 0
    return out


def _embedding_rule(g, s, n):
    return apply(embedding_backward, (g, s[0]), (n.input_shape(0)[0], n._p))


def _embedding_bwd_rule(h, s, n):
    idx = s[0]
    r = apply(embedding, (h, idx), None)
    pad = n._p[1]
    if pad is not None:
        r = T._where(_make(np.expand_dims(idx._data != pad, -1)), r, 0.0)
    return r


embedding = Op("embedding", _embedding_fwd, (_embedding_rule, None), (1,),
               node_name="EmbeddingBackward0", batch=unbatched_first)
embedding_backward = Op("embedding_backward", _embedding_bwd_fwd, (_embedding_bwd_rule, None),
                        (1,), node_name="EmbeddingBackwardBackward0")


# ---------------------------------------------------------------------------------
# dropout: the mask (already scaled by 1/(1-p)) lives in p and is reused by the rule;
# own entry for memory: the input is not saved


def _dropout_fwd(x, mask):
    return (x * mask).astype(x.dtype, copy=False)


dropout = Op("dropout", _dropout_fwd, (lambda g, s, n: g * _make(n._p),),
             node_name="NativeDropoutBackward0")


# ---------------------------------------------------------------------------------
# identity on several tensors: the node that module backward hooks attach to (recorded
# directly by nn/modules/module.py, Note [Module backward hooks]; no forward kernel)


def _identity_many_vjp(g, s, n, needs):
    gs = g if isinstance(g, (list, tuple)) else [g]
    return [gs[i] if need else None for i, need in enumerate(needs)]


backward_hook = Op("backward_hook", None, _identity_many_vjp,
                   node_name="BackwardHookFunctionBackward")



# ---------------------------------------------------------------------------------
# Note [Fused NLL]: the negative log likelihood of (N, C) log-probabilities is one node
# (PyTorch's NllLossBackward0) instead of gather, squeeze, neg, mul, sum and div: the
# loss of a small network is then one step of the backward pass, not six. ``w`` is
# the per-sample weight (class weight of the target, 0 where ignored), not
# differentiable, as in PyTorch. p = (target indices, reduction, mask of the targets
# that are not ignored or None).


_ARANGE: dict = {}


def _rows(n: int):
    """np.arange(n), cached (read-only) for the batch sizes a training loop repeats."""
    r = _ARANGE.get(n)
    if r is None:
        if len(_ARANGE) > 64:
            _ARANGE.clear()
        r = _ARANGE[n] = np.arange(n)
        r.flags.writeable = False
    return r


def _nll_fwd(logp, w, p):
    # w is None when no sample is ignored and there is no class weight (all ones); valid
    # (None: every target counts) marks the targets that are not ignore_index
    idx, reduction, valid = p
    loss = np.negative(logp[_rows(idx.shape[0]), idx])
    if valid is not None:  # ignored rows add 0 whatever they hold: -inf * 0 is no nan
        loss[~valid] = 0  # (PyTorch's kernel skips them)
    if w is not None:
        loss *= w
    if reduction == "none":
        return loss
    total = _add_reduce(loss)
    if reduction == "sum":
        return total
    den = _total_weight(w, idx.shape[0], total.dtype)
    if den:
        return total / den
    with np.errstate(divide="ignore", invalid="ignore"):  # (Note below)
        return total / den


# A mean over a total weight of 0 (every target ignored, or weighted 0) is PyTorch's
# nan (0/0), and its gradient nan or inf; NumPy would warn about the division, PyTorch
# does not: that rare case runs under np.errstate.
def _total_weight(w, n: int, dt):
    """The denominator of nll's mean: the sum of the per-sample weights, or ``n``."""
    return _add_reduce(w) if w is not None else dt.type(n)


def _nll_bwd_fwd(g, w, p):
    # the gradient of _nll_fwd: -w * g (/ sum(w) for the mean) at each (row, target)
    idx, reduction, valid, shape, dt = p
    if reduction == "mean":
        den = _total_weight(w, idx.shape[0], g.dtype)
        if not den:  # nan or inf: without NumPy's warnings (the note above)
            with np.errstate(divide="ignore", invalid="ignore"):
                return _nll_bwd_fwd(g / den, w, (idx, "sum", valid, shape, dt))
        g = g / den
    coef = np.negative(g if w is None else w * g)
    if valid is not None:  # ignored rows get 0, even from an inf or nan g (every target
        coef[~valid] = 0  # ignored makes the mean's g/0 inf: PyTorch skips those rows)
    out = np.zeros(shape, dt)
    out[_rows(idx.shape[0]), idx] = coef
    return out


# nll and nll_backward are linear in their first input and transposes of each other,
# so each one's rule is the other one (w, the per-sample weight, is a constant).
nll = Op("nll", _nll_fwd,
         lambda g, s, n, needs: [apply(nll_backward, (g, s[0]),
                                       n._p + (n.input_shape(0), n.input_dtype(0))), None],
         (1,), node_name="NllLossBackward0", nondiff=(1,))  # the target has no slot
nll_backward = Op("nll_backward", _nll_bwd_fwd,
                  lambda g, s, n, needs: [apply(nll, (g, s[0]), n._p[:3]), None],
                  (1,), node_name="NllLossBackwardBackward0")


# Note [NLL under vmap]
# Inside vmap the targets are a batched tensor whose values Python cannot read, so nll
# cannot take its index as a parameter (Note [Fused NLL]). ``nll_nd`` takes the targets
# as an input instead and works on any leading dims: (..., N, C) log-probabilities and
# (..., N) targets, the loss reduced over N (PyTorch's nll_loss batch rule likewise
# reduces per batch element). Its batch rule expands both operands to the full batch,
# so one kernel serves the whole batch, and its gradient is one node: under W9's
# vmap(grad(cross_entropy)) this is 2 ops where gather, squeeze, where, to, neg, mul,
# sum and div (and their gradients) were 16. Both are linear in their first input: their
# tangents are themselves (jvp_linear). p = (ignore_index, reduction); the
# gradient's p adds the class count and dtype. A target out of range raises the error
# of PyTorch's vmap (a gather's).
def _nll_nd_mask(t, ignore_index, logp=None):
    valid = t != ignore_index
    if logp is not None:
        nc = logp.shape[-1]
        bad = valid & ((t < 0) | (t >= nc))
        if bad.any():  # PyTorch's vmap gathers: its gather's words
            raise RuntimeError(
                f"index {int(t[bad].flat[0])} is out of bounds for dimension {logp.ndim - 1} "
                f"with size {nc} (a target of nll_loss/cross_entropy under vmap: each must "
                f"lie in [0, {nc - 1}] or equal ignore_index)")
    return valid, np.where(valid, t, 0)


def _nll_nd_fwd(logp, t, p):
    ignore_index, reduction = p
    valid, safe = _nll_nd_mask(t, ignore_index, logp)
    picked = np.take_along_axis(logp, safe[..., None], -1)[..., 0]
    loss = np.where(valid, np.negative(picked), logp.dtype.type(0))
    if reduction == "none":
        return loss
    total = _add_reduce(loss, axis=-1)
    if reduction == "sum":
        return total
    with np.errstate(divide="ignore", invalid="ignore"):  # every target ignored: nan
        return total / _add_reduce(valid, axis=-1).astype(loss.dtype)


def _nll_nd_bwd_fwd(g, t, p):
    ignore_index, reduction, nc, dt = p
    valid, safe = _nll_nd_mask(t, ignore_index)
    with np.errstate(divide="ignore", invalid="ignore"):
        if reduction == "mean":
            g = g / _add_reduce(valid, axis=-1).astype(g.dtype)
        coef = np.negative(g if reduction == "none" else g[..., None])
        coef = np.where(valid, coef, coef.dtype.type(0))  # ignored targets get 0, even
    out = np.zeros(coef.shape + (nc,), dt)  # from an inf or nan g
    np.put_along_axis(out, np.broadcast_to(safe, coef.shape)[..., None], coef[..., None], -1)
    return out


def _nll_nd_rule(c):
    return c.run((c.full(0), c.full(1)), c.p)


nll_nd = Op("nll_nd", _nll_nd_fwd,
            lambda g, s, n, needs: [apply(nll_nd_backward, (g, s[0]),
                                          n._p + (n.input_shape(0)[-1], n.input_dtype(0))),
                                    None],
            (1,), node_name="NllLossBackward0", nondiff=(1,), batch=_nll_nd_rule,
            jvp=jvp_linear)
nll_nd_backward = Op("nll_nd_backward", _nll_nd_bwd_fwd,
                     lambda g, s, n, needs: [apply(nll_nd, (g, s[0]), n._p[:2]), None],
                     (1,), node_name="NllLossBackwardBackward0", batch=_nll_nd_rule,
                     jvp=jvp_linear)


ALL_NN_OPS = {k: v for k, v in dict(globals()).items() if isinstance(v, Op)}
