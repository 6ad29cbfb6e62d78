"""Running an op: promote dtypes, call the kernel, wrap, record (the hot path).

Note [Hot path]
An op call does five things: promote dtypes, consult autocast, run the NumPy kernel,
wrap the result, and, only if grad mode is on and an input requires grad, record a
node. ``unary`` and ``binary`` are written out by hand for the elementwise ops that
dominate small-tensor work; ``apply`` serves every other op. Nothing here builds
dicts or wrappers per call.

Example:
    >>> import retrograd as torch
    >>> (torch.ones(2, dtype=torch.int64) / 2).dtype
    torch.float32
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._grad_mode import STATE
from .._tensor import Tensor, _make
from ._core import _LOW, FLOAT_NP, binary_dtype, record, scalar_dtype

_ndarray = np.ndarray
_asarray = np.asarray
_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)


def _float_dtype():
    return D.DEFAULTS.float.np


def unary(op, a: Tensor, p=None) -> Tensor:
    """Elementwise op of one tensor (``op.kind == 'float'`` turns ints into floats)."""
    ad = a._data
    dt = ad.dtype
    if op.kind == "float" and dt not in FLOAT_NP:
        ad = ad.astype(D.DEFAULTS.float.np)
        dt = ad.dtype
    if dt in _LOW:
        out = (op.fwd(ad.astype(_F32)) if p is None else op.fwd(ad.astype(_F32), p)).astype(dt)
    else:
        out = op.fwd(ad) if p is None else op.fwd(ad, p)
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    t = _make(out)
    if a._rg and STATE.enabled and op.vjp is not None:
        record(op, t, (a,), p)
    return t


def binary(op, a, b) -> Tensor:
    """Elementwise op of two operands, either of which may be a Python number."""
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    if ta and tb:
        ad = a._data
        bd = b._data
        adt = ad.dtype
        if adt == bd.dtype:
            rdt = adt
        else:
            rdt = binary_dtype(adt, bd.dtype, ad.ndim == 0, bd.ndim == 0)
            if adt != rdt:
                ad = ad.astype(rdt)
            if bd.dtype != rdt:
                bd = bd.astype(rdt)
    elif ta:
        ad = a._data
        rdt = scalar_dtype(ad.dtype, b)
        if ad.dtype != rdt:
            ad = ad.astype(rdt)
        bd = b
        if rdt in _LOW:
            ad = ad.astype(_F32)
    elif tb:
        bd = b._data
        rdt = scalar_dtype(bd.dtype, a)
        if bd.dtype != rdt:
            bd = bd.astype(rdt)
        ad = a
        if rdt in _LOW:
            bd = bd.astype(_F32)
    else:
        raise TypeError(f"{op.name}: expected at least one Tensor, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    kind = op.kind
    if kind == "float" and rdt not in FLOAT_NP:
        rdt = D.DEFAULTS.float.np
        ad = ad.astype(rdt) if ta else ad
        bd = bd.astype(rdt) if tb else bd
    try:
        out = op.fwd(ad, bd)
    except ValueError as e:
        raise _shape_error(op, a, b, e) from None
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    if kind != "bool" and out.dtype != rdt:
        out = out.astype(rdt)
    t = _make(out)
    if STATE.enabled and ((ta and a._rg) or (tb and b._rg)) and op.vjp is not None:
        record(op, t, (a, b))
    return t


def _shape_error(op, a, b, e):
    sa = tuple(a.shape) if isinstance(a, Tensor) else ()
    sb = tuple(b.shape) if isinstance(b, Tensor) else ()
    return RuntimeError(
        f"The size of tensor a ({_mismatch(sa, sb)[0]}) must match the size of tensor b "
        f"({_mismatch(sa, sb)[1]}) at non-singleton dimension {_mismatch(sa, sb)[2]}. "
        f"{op.name} got shapes {sa} and {sb}, which do not broadcast: line the dimensions up "
        "from the right; each pair must be equal or one of them 1 (use unsqueeze/reshape).")


def _mismatch(sa, sb):
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return pa[i], pb[i], i
    return 0, 0, 0


def apply(op, inputs, p=None, nout: int = 1, differentiable: bool = True):
    """Run any table op on ``inputs`` (tensors or other values) and record it."""
    datas = [x._data if isinstance(x, Tensor) else x for x in inputs]
    out = op.fwd(*datas) if p is None else op.fwd(*datas, p)
    if nout == 1:
        if out.__class__ is not _ndarray:
            out = _asarray(out)
        t = _make(out)
        if differentiable and op.vjp is not None and out.dtype in FLOAT_NP and _needs(inputs):
            record(op, t, inputs, p)
        return t
    ts = tuple(_make(o if o.__class__ is _ndarray else _asarray(o)) for o in out)
    if differentiable and op.vjp is not None and _needs(inputs):
        record(op, ts, inputs, p, nout=nout)
    return ts


def _needs(inputs) -> bool:
    if not STATE.enabled:
        return False
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


def view_apply(op, a: Tensor, p):
    """A view op: the result shares memory and the version counter with ``a``.

    Note [Views and in-place]
    A view remembers its base (the tensor that owns the memory) and a recipe,
    ``(parent_recipe, op, p)``, that re-creates it from the base. An in-place op on a
    view whose graph matters rewrites the base's history (``CopySlices``) and then
    re-derives the view from the new base, so gradients flow through both, as in
    PyTorch.
    """
    out = op.fwd(a._data, p)
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    t = _make(out)
    t._vc = a._vc
    base = a._base
    if base is None:
        t._base = a
        t._vfn = (None, op, p)
    else:
        t._base = base
        t._vfn = (a._vfn, op, p)
    if a._rg and STATE.enabled:
        record(op, t, (a,), p)
    return t


def replay_view(recipe, t: Tensor) -> Tensor:
    """Apply a view recipe (see Note [Views and in-place]) to ``t``."""
    steps = []
    while recipe is not None:
        parent, op, p = recipe
        steps.append((op, p))
        recipe = parent
    for op, p in reversed(steps):
        t = view_apply(op, t, p)
    return t
