"""Primitives of the spatial nn layers: pixel/channel shuffles, im2col/col2im, adaptive max
pooling and max unpooling (NumPy kernels, rules in Tensor ops; Note [One table]).

Note [Spatial records come in adjoint pairs]
Each record here is linear in its differentiable input, and its rule is its adjoint, which
is again a record of this file: ``pixel_shuffle`` and ``pixel_unshuffle`` are each other's
inverse (a permutation, so adjoint = inverse), ``channel_shuffle`` with ``g`` groups is
undone by ``channel_shuffle`` with ``C / g`` groups, ``im2col`` and ``col2im`` are each
other's adjoint, and gathering at flat indices (adaptive max pooling) is the adjoint of
scattering there (max unpooling). So derivatives of every order are again these records,
and the node names are PyTorch's (PixelShuffleBackward0, Im2ColBackward0, ...).

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> x = torch.arange(4.).reshape(1, 4, 1, 1).requires_grad_()
    >>> y = F.pixel_shuffle(x, 2)
    >>> y.tolist(), y.grad_fn.name()
    ([[[[0.0, 1.0], [2.0, 3.0]]]], 'PixelShuffleBackward0')
"""

from __future__ import annotations

import numpy as np

from ..dispatch import apply
from ..op import Op, direct_kernel
from . import nn as TN

__all__ = ["adaptive_max_pool2d", "adaptive_max_pool3d", "channel_shuffle", "col2im", "im2col",
           "max_pool3d", "max_unpool2d", "max_unpool3d", "pixel_shuffle", "pixel_unshuffle"]

# ---------------------------------------------------------------------------------
# pixel and channel shuffles: p = (factor,) and (groups,)


def _pixel_shuffle_fwd(x, p):
    r = p[0]
    *lead, c, h, w = x.shape
    oc = c // (r * r)
    y = x.reshape(*lead, oc, r, r, h, w)
    n = len(lead)
    perm = tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(y.transpose(perm)).reshape(*lead, oc, h * r, w * r)


def _pixel_unshuffle_fwd(x, p):
    r = p[0]
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    perm = tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(y.transpose(perm)).reshape(*lead, c * r * r, h // r, w // r)


def _channel_shuffle_fwd(x, p):
    g = p[0]
    b, c = x.shape[:2]
    y = x.reshape((b, g, c // g) + x.shape[2:]).swapaxes(1, 2)
    return np.ascontiguousarray(y).reshape(x.shape)


pixel_shuffle = Op("pixel_shuffle", _pixel_shuffle_fwd,
                   (lambda g, s, n: apply(pixel_unshuffle, (g,), n._p),), batch_ok=True)
pixel_unshuffle = Op("pixel_unshuffle", _pixel_unshuffle_fwd,
                     (lambda g, s, n: apply(pixel_shuffle, (g,), n._p),), batch_ok=True)
channel_shuffle = Op("channel_shuffle", _channel_shuffle_fwd,
                     (lambda g, s, n: apply(channel_shuffle, (g,),
                                            (n.input_shape(0)[1] // n._p[0],)),))


# ---------------------------------------------------------------------------------
# im2col / col2im (F.unfold / F.fold): p = (kernel, dilation, ((lo, hi) pads), stride,
# image spatial shape, output positions per dim), all 2-tuples; (N,) C, ... arrays


def _im2col_fwd(x, p):
    if x.ndim == 3:  # unbatched (C, H, W): one node, as PyTorch's
        return _im2col_fwd(x[None], p)[0]
    ksp, dil, pads, stride, _, osp = p
    win = TN._windows(TN._pad_zero(x, pads), ksp, stride, dil, osp)  # (N, C, *O, *K)
    b, c = x.shape[:2]
    cols = win.transpose(0, 1, 4, 5, 2, 3)  # (N, C, *K, *O)
    return np.ascontiguousarray(cols).reshape(b, c * ksp[0] * ksp[1], osp[0] * osp[1])


def _col2im_fwd(cols, p):
    if cols.ndim == 2:
        return _col2im_fwd(cols[None], p)[0]
    ksp, dil, pads, stride, xsp, osp = p
    b = cols.shape[0]
    c = cols.shape[1] // (ksp[0] * ksp[1])
    blocks = cols.reshape((b, c) + tuple(ksp) + tuple(osp))
    return TN._col2im(blocks, xsp, ksp, (stride, pads, dil), osp, cols.dtype)


im2col = Op("im2col", _im2col_fwd, (lambda g, s, n: apply(col2im, (g,), n._p),),
            batch_ok=True, node_name="Im2ColBackward0")
col2im = Op("col2im", _col2im_fwd, (lambda g, s, n: apply(im2col, (g,), n._p),),
            batch_ok=True, node_name="Col2ImBackward0")


# ---------------------------------------------------------------------------------
# gathers and scatters at flat spatial indices (ops/records/nn.py's take_flat / scatter_flat
# kernels): p = (nsp, unique) for a gather; (nsp, output spatial shape, unique) for a
# scatter, as there


def _gather(name: str, node_name: str) -> Op:
    """A gather record and the scatter record of its backward, named as PyTorch names the
    pair (``<Op>Backward0``, ``<Op>BackwardBackward0``): each one's rule is the other."""
    def gather_rule(g, s, n):
        return apply(scatter, (g, s[0]), (n._p[0], n.input_shape(0)[-n._p[0]:], n._p[1]))

    def scatter_rule(g, s, n):
        return apply(gather, (g, s[0]), (n._p[0], n._p[2]))

    gather = Op(name, TN._take_flat_fwd, (gather_rule, None), (1,), node_name=node_name)
    scatter = Op(name + "_backward", TN._scatter_flat_fwd, (scatter_rule, None), (1,),
                 node_name=node_name.replace("Backward0", "BackwardBackward0"))
    return gather


adaptive_max_pool2d = _gather("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0")
adaptive_max_pool3d = _gather("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0")
max_pool3d = _gather("max_pool3d", "MaxPool3DWithIndicesBackward0")


def _scatter_rule(g, s, n):
    return apply(TN.take_flat, (g, s[0]), (n._p[0], n._p[2]))


max_unpool2d = Op("max_unpool2d", TN._scatter_flat_fwd, (_scatter_rule, None), (1,),
                  node_name="MaxUnpool2DBackward0")
max_unpool3d = Op("max_unpool3d", TN._scatter_flat_fwd, (_scatter_rule, None), (1,),
                  node_name="MaxUnpool3DBackward0")


@direct_kernel
def adaptive_max_indices(x: np.ndarray, osz: tuple) -> np.ndarray:
    """Flat indices (into the trailing ``len(osz)`` dims of ``x``) of each adaptive
    window's maximum: windows [floor(i * n / o), ceil((i + 1) * n / o)), as PyTorch's;
    the first maximum of a window wins, and the last NaN over any number."""
    nsp = len(osz)
    xsp = x.shape[x.ndim - nsp:]
    lead = x.shape[:x.ndim - nsp]
    out = np.empty(lead + tuple(osz), dtype=np.int64)
    bounds = [[((i * n) // o, -((-(i + 1) * n) // o)) for i in range(o)]
              for n, o in zip(xsp, osz)]
    for pos in np.ndindex(*osz):
        win = tuple(slice(*bounds[d][pos[d]]) for d in range(nsp))
        block = x[(Ellipsis,) + win]
        flat = block.reshape(lead + (-1,))
        if flat.dtype.kind == "f" or flat.dtype.name == "bfloat16":
            flat = flat.astype(np.float64)
            nan = np.isnan(flat)
            last_nan = flat.shape[-1] - 1 - nan[..., ::-1].argmax(-1)  # PyTorch: the last
            k = np.where(nan.any(-1), last_nan, np.where(nan, -np.inf, flat).argmax(-1))
        else:
            k = flat.argmax(-1)
        local = np.unravel_index(k, block.shape[x.ndim - nsp:])
        glob = 0
        for d in range(nsp):
            glob = glob * xsp[d] + (local[d] + bounds[d][pos[d]][0])
        out[(Ellipsis,) + pos] = glob
    return out
