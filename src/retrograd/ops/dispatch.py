"""Running an op: promote dtypes, call the kernel, wrap, record (the hot path).

Note [Hot path]
An op call does five things: promote dtypes, consult autocast, run the NumPy kernel,
wrap the result, and, only if grad mode is on and an input requires grad, record a
node. ``unary`` and ``binary`` serve the elementwise ops that dominate small-tensor
work, ``view_apply`` the view ops, and ``apply`` every other op. Each first tests the
optional modes' bits once (Note [Optional modes at dispatch]); while none is on, it
runs its plain path, which reads in that order: promote, kernel, wrap, record.
Nothing here builds dicts or wrappers per call.

Example:
    >>> import retrograd as torch
    >>> (torch.ones(2, dtype=torch.int64) / 2).dtype
    torch.float32
"""

from __future__ import annotations

import math
import numbers
import re
from weakref import ref as _weakref

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._core.layouts import cast_copy
from .._graph.forward_state import ELEMENTWISE, GENERAL, VIEW
from .._graph.forward_state import FW as _FW
from .._graph.forward_state import fw_op as _fw_op
from .._graph.modes import ANOMALY as _ANOMALY
from .._graph.modes import MODES as _MODES
from .._graph.modes import SAVED_HOOKS as _SAVED_HOOKS
from .._graph.modes import VMAP as _VMAP
from .._graph.node import Node, named, sink, user_site
from .._graph.provenance import mark as _cut_mark
from .._tensor.tensor import Tensor, _make, track_view
from . import buffers as _buffers
from .op import (
    _LOW,
    FLOAT_NP,
    Op,
    any_requires_grad,
    binary_dtype,
    finish_record,
    make_node,
    needs_grad,
    record,
    scalar_dtype,
)
from .records.view_regeneration import as_strided_regen as _AS_STRIDED_REGEN

_ndarray = np.ndarray
_ufunc = np.ufunc
_bshape = np.broadcast_shapes
_POOL_MIN = _buffers.pool_min()  # kept current by buffers.configure (Note [Buffer pool])
_asarray = np.asarray
_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)
_re_backward = re.compile(r"Backward\d*$")


# Note [Dispatch interceptors]
# A library above dispatch that must see every table op while one of its modes is on
# registers an interceptor here when it is imported, instead of dispatch importing it:
# autocast (amp/policy.py, Note [Autocast dispatch]) calls ``intercept_autocast`` with
# its thread-local state and its handler, vmap (_functorch/batched.py) calls
# ``intercept_vmap``. Both are reached only through the modal path (Note [Optional modes
# at dispatch]): until a library registers, its state is off.


class _Off:
    """The interceptor state while none is registered: never on."""

    on = False


_AMP = _Off()
_autocast_apply = None
_vmap_call = None  # vmap's handler (retrograd._functorch.batched), registered at its import


def intercept_autocast(state, handler) -> None:
    """Send ``apply``'s calls to ``handler(op, inputs, p, nout, differentiable)`` while
    ``state.on`` is true (Note [Dispatch interceptors]); amp registers at import.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops import dispatch
        >>> dispatch._AMP is torch.amp.state.AMP
        True
    """
    global _AMP, _autocast_apply
    _AMP, _autocast_apply = state, handler


def intercept_vmap(handler) -> None:
    """Send calls to ``handler(kind, op, inputs, p, nout, differentiable)`` while a vmap is
    open (the VMAP bit of Note [Optional modes]); it answers NotImplemented when no input
    is batched (Note [Batched tensors] in _functorch/batched.py).

    Example:
        >>> import retrograd.func
        >>> from retrograd.ops import dispatch
        >>> dispatch._vmap_call.__name__
        'batched_call'
    """
    global _vmap_call
    _vmap_call = handler


# Note [Optional modes at dispatch]
# vmap, autocast, forward-mode AD, anomaly mode and saved-tensor hooks change what an op
# call does. Each sets its bit of MODES.bits while on (Note [Optional modes] in
# _graph/modes.py), and ``unary``, ``binary``, ``view_apply`` and ``apply`` test the bits
# once, first: while they are 0 the rest of the function is the plain path (promote,
# kernel, wrap, record), which knows nothing of the modes. Otherwise ``_modal`` runs the
# call: vmap's handler takes calls with a batched input and autocast's takes table ops
# (``apply``), calling ``apply`` again with its own bit off (Note [Dispatch
# interceptors]); any other call runs the plain path with the bits cleared for its
# duration, and then each mode adds its part to the result: anomaly mode and saved-tensor
# hooks to the node it made (``finish_record``), forward AD the outputs' tangents (Note
# [Forward AD interceptor]). The plain path is the entry function itself, not a helper of
# it, so that it asks for the user's line one frame closer to the user (Note [User
# sites] in _graph/node.py).
def _modal(path: str, op, inputs, p, nout: int = 1, differentiable: bool = True):
    """Run an op call while an optional mode is on (Note [Optional modes at dispatch]);
    ``path``: 'unary', 'binary', 'view' or 'apply'."""
    bits = _MODES.bits
    if bits & _VMAP and _vmap_call is not None:  # (Note [Batched tensors])
        r = _vmap_call(path, op, inputs, p, nout, differentiable)
        if r is not NotImplemented:
            return r
    if path == "apply" and _AMP.on:  # (Note [Dispatch interceptors])
        return _autocast_apply(op, inputs, p, nout, differentiable)
    _MODES.bits = 0
    try:
        out = _plain(path, op, inputs, p, nout, differentiable)
    finally:
        _MODES.bits = bits
    if out is NotImplemented:
        return out
    if bits & (_ANOMALY | _SAVED_HOOKS):
        _finish_made(out, inputs)
    if _FW.active and differentiable:
        _fw_op(op, inputs, out, p, _FW_KIND[path])
    return out


#: the kind of op each path reports to forward AD (Note [JVP rules] in ops/jvp_rules.py)
_FW_KIND = {"unary": ELEMENTWISE, "binary": ELEMENTWISE, "view": VIEW, "apply": GENERAL}


def _plain(path: str, op, inputs, p, nout: int, differentiable: bool):
    """The call on ``path``, run while the mode bits are clear: its plain path."""
    if path == "unary":
        return unary(op, inputs[0], p)
    if path == "binary":
        return binary(op, inputs[0], inputs[1], p)
    if path == "view":
        return view_apply(op, inputs[0], p)
    return apply(op, inputs, p, nout, differentiable)


def _finish_made(out, inputs) -> None:
    """``finish_record`` for the node the plain path just made for ``out``, if it made one
    (its outputs are new tensors: a grad_fn on one of them is that node)."""
    for o in (out if out.__class__ is tuple else (out,)):
        if o is not None and o._gfn is not None:
            finish_record(o._gfn, out, inputs)
            return


# Note [Cut markers at dispatch]
# An op that makes no node while one of its inputs requires grad is where that input's
# gradient path ends (Note [Cut markers] in _graph/provenance.py): the plain paths hand
# such calls, and those with an input that carries a cut, to ``_unrecorded``. It marks
# the cut under a user's no_grad block, or with grad mode on when the op cuts by its
# nature (``reason``: a comparison, a differentiable op with an integer result); a
# result computed from cut values alone carries the first one's cut. Inside backward
# (STATE.cut_watch None) derivative rules neither leave markers nor pass cuts on: it
# returns at once there, where rules meet saved tensors that require grad at every step.
def _unrecorded(op, t: Tensor, inputs, reason: str | None = None) -> None:
    """``t`` was made from ``inputs`` without a node (Note [Cut markers at dispatch])."""
    watch = STATE.cut_watch
    if watch is None:
        return
    src = cut = None
    for x in inputs:
        if isinstance(x, Tensor):
            if x._rg:
                src = x
                break
            if cut is None:
                cut = x._cut
    if src is None:
        if cut is not None:
            t._cut = cut
    elif not STATE.enabled:
        if watch:
            _cut_mark("no_grad", _cut_name(op, t), src, t)
    elif reason is not None:
        _cut_mark(reason, _cut_name(op, t), src, t)


def _cut_name(op, t: Tensor) -> str:
    """How a cut marker names ``op`` (a dtype conversion, whose kernel is ``cast_copy``,
    by its target dtype)."""
    return f"to({D.FROM_NP[t._data.dtype]})" if op.fwd is cast_copy else op.name


_SCALARS = frozenset((float, int, bool))


def _is_number(x) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, complex)


_SCALAR_ARRAYS: dict = {}


def scalar_array(v, dt):
    """A cached read-only 0-d array for a Python scalar (NumPy is ~2x faster with these
    than with a Python float, and the value is exactly the scalar cast to ``dt``)."""
    cls = v.__class__
    key = (v, cls, dt) if v or cls is int or cls is bool else (math.copysign(1.0, v), dt)
    r = _SCALAR_ARRAYS.get(key)
    if r is None:
        if len(_SCALAR_ARRAYS) > 4096:  # NaN keys never match; keep the cache bounded
            _SCALAR_ARRAYS.clear()
        try:
            r = np.asarray(v, dtype=dt)
        except OverflowError:  # out-of-range ints wrap, as in PyTorch
            r = np.asarray(v).astype(dt)
        r.flags.writeable = False
        _SCALAR_ARRAYS[key] = r
    return r


def _cacheable(v) -> bool:
    """False for a floating-point zero: 0.0 and -0.0 are equal dict keys, and a cached
    -0.0 answering for 0.0 flips the sign of results (x * 0.0, 0.0 ** x); scalar_array
    keys zeros by their sign (the same test, inline), _PLANS does not keep them."""
    return bool(v) or v.__class__ is int or v.__class__ is bool


def unary(op, a: Tensor, p=None) -> Tensor:
    """Elementwise op of one tensor (``op.kind == 'float'`` turns ints into floats);
    ``p``: the op's non-tensor argument, given to its kernel after the operand.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records import table as T
        >>> unary(T.neg, torch.tensor([1.0, -2.0]))
        tensor([-1.,  2.])
    """
    if _MODES.bits:  # Note [Optional modes at dispatch]
        return _modal("unary", op, (a,), p)
    ad = a._data
    dt = ad.dtype
    if op.kind == "float" and dt not in FLOAT_NP:
        ad = ad.astype(D.DEFAULTS.float.np)
        dt = ad.dtype
    if dt in _LOW:  # float16/bfloat16 compute in float32, as PyTorch's CPU kernels
        f = ad.astype(_F32)
        out = (op.fwd(f) if p is None else op.fwd(f, p)).astype(dt)
    elif ad.nbytes >= _POOL_MIN:  # Note [Buffer pool] (buffers.py)
        out = _pooled_unary(op, ad, p)
    else:
        out = op.fwd(ad) if p is None else op.fwd(ad, p)
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    t = _make(out)
    if a._rg and STATE.enabled and op.vjp is not None:
        make_node(op, t, (a,), p, 1, user_site())
    elif a._rg or a._cut is not None:  # Note [Cut markers at dispatch]
        _unrecorded(op, t, (a,))
    return t


def _pooled_unary(op, ad, p):
    """A large unary kernel's result, in a pooled buffer where the kernel can write one
    (a float ufunc over a C-contiguous array: Note [Buffer pool])."""
    if op.fwd.__class__ is _ufunc and ad.dtype.kind == "f" and p is None and \
            ad.flags.c_contiguous:
        return op.fwd(ad, out=_buffers.result_for(ad, None, ad.shape, ad.dtype))
    return op.fwd(ad) if p is None else op.fwd(ad, p)


def binary(op, a, b, p=None) -> Tensor:
    """Elementwise op of two operands, either of which may be a Python number (``p``: the
    op's non-tensor argument, e.g. ``alpha``, given to its kernel after the operands).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records import table as T
        >>> binary(T.sub, 1.0, torch.tensor([1.0, 2.0]))
        tensor([ 0., -1.])
    """
    if _MODES.bits:  # Note [Optional modes at dispatch]
        return _modal("binary", op, (a, b), p)
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    kind = op.kind
    if ta and tb:
        ad = a._data
        bd = b._data
        rdt = ad.dtype
        if rdt is not bd.dtype or (kind == "float" and rdt not in FLOAT_NP):
            rdt, ad, bd = _promote(kind, ad, bd)
        big = ad.nbytes >= _POOL_MIN or bd.nbytes >= _POOL_MIN
    elif ta or tb:  # a tensor and a number, in either order (Note [Scalar plans])
        td = a._data if ta else b._data
        v = b if ta else a
        plan = _PLANS.get((td.dtype, v, v.__class__, kind)) or _scalar_plan(td.dtype, v, kind)
        if plan is None:
            return NotImplemented
        rdt, cdt, vd = plan
        if td.dtype is not cdt:
            td = td.astype(cdt)
        big = td.nbytes >= _POOL_MIN
        if ta:  # the operands' order kept
            ad, bd = td, vd
        else:
            ad, bd = vd, td
    else:
        raise TypeError(f"{op.name}: expected at least one Tensor, got {type(a).__name__} "
                        f"and {type(b).__name__}")
    try:
        if big:  # Note [Buffer pool] (buffers.py)
            out = _pooled_binary(op, ad, bd, p, rdt)
        else:
            out = op.fwd(ad, bd) if p is None else op.fwd(ad, bd, p)
    except (ValueError, TypeError) as e:
        _explain_kernel_error(op, a, b, rdt, e)
        raise
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    if out.dtype is not rdt and kind != "bool" and out.dtype != rdt:
        out = out.astype(rdt)
    t = _make(out)
    rg = (ta and a._rg) or (tb and b._rg)
    if rg and STATE.enabled and op.vjp is not None:
        make_node(op, t, (a, b), p, 1, user_site())
    elif rg or (ta and a._cut is not None) or (tb and b._cut is not None):
        _unrecorded(op, t, (a, b), "comparison" if kind == "bool" else None)
    return t


def _promote(kind, ad, bd):
    """(result dtype, ``ad``, ``bd``) of two tensors' arrays, each cast to the dtype the
    kernel computes in (Note [Type promotion] in _core/dtype.py); ``kind``: the op's."""
    rdt = ad.dtype
    bdt = bd.dtype
    if rdt is not bdt and rdt != bdt:
        rdt = binary_dtype(rdt, bdt, ad.ndim == 0, bd.ndim == 0)
        cdt = _F32 if rdt in _LOW else rdt  # float16/bfloat16 compute in float32, so a
        if ad.dtype != cdt:  # float32 0-d operand is not rounded first (PyTorch)
            ad = ad.astype(cdt)
        if bdt != cdt:
            bd = bd.astype(cdt)
    if kind == "float" and rdt not in FLOAT_NP:
        rdt = D.DEFAULTS.float.np
        ad = ad.astype(rdt)
        bd = bd.astype(rdt)
    return rdt, ad, bd


def _pooled_binary(op, ad, bd, p, rdt):
    """A large binary kernel's result, in a pooled buffer (or the gradient the engine
    offers: Note [Gradient donation]) where the kernel can write one: a float ufunc over
    C-contiguous operands of the result's dtype (Note [Buffer pool])."""
    if op.fwd.__class__ is _ufunc and ad.dtype is rdt and bd.dtype is rdt and \
            rdt.kind == "f" and op.kind != "bool" and ad.flags.c_contiguous and \
            bd.flags.c_contiguous:
        return op.fwd(ad, bd, out=_buffers.result_for(ad, bd, _bshape(ad.shape, bd.shape), rdt))
    return op.fwd(ad, bd) if p is None else op.fwd(ad, bd, p)


def _explain_kernel_error(op, a, b, rdt, e: Exception) -> None:
    """Raise our error where NumPy's says less: operands that do not broadcast (its
    ValueError), PyTorch's refusal to subtract bool tensors (its TypeError); return
    otherwise (the caller re-raises the kernel's own error)."""
    if isinstance(e, ValueError):
        try:
            np.broadcast_shapes(a._data.shape if isinstance(a, Tensor) else (),
                                b._data.shape if isinstance(b, Tensor) else ())
        except ValueError:
            raise _shape_error(op, a, b, e) from None
    elif op.bool_error is not None and rdt == _BOOL:  # sub's message (Note [Complete records])
        raise RuntimeError(op.bool_error) from None


# Note [Scalar plans]
# ``tensor op python_scalar`` is the commonest call in small-tensor code. Its dtype
# decisions depend only on (tensor dtype, scalar value and type, op kind), so they are
# made once and cached with the scalar already converted to a read-only 0-d array of
# the compute dtype: result dtype, compute dtype (float32 for float16/bfloat16, as
# PyTorch's CPU kernels compute), and the array. set_default_dtype clears the cache.
_PLANS: dict = {}
D.CACHES.append(_PLANS)


def _scalar_plan(tdt, v, kind):
    if v.__class__ not in _SCALARS and not _is_number(v):
        return None
    rdt = scalar_dtype(tdt, v)
    if kind == "float" and rdt not in FLOAT_NP:
        rdt = D.DEFAULTS.float.np
    cdt = _F32 if rdt in _LOW else rdt
    if len(_PLANS) > 4096:  # NaN keys never match; keep the cache bounded
        _PLANS.clear()
    plan = (rdt, cdt, scalar_array(v, cdt))
    if _cacheable(v):
        _PLANS[(tdt, v, v.__class__, kind)] = plan
    return plan


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


def apply(op: Op, inputs: tuple | list, p: object = None, nout: int = 1,
          differentiable: bool = True) -> Tensor | tuple[Tensor, ...]:
    """Run any table op on ``inputs`` (tensors or other values) and record it.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records import table as T
        >>> x = torch.tensor([[1.0, 2.0]], requires_grad=True)
        >>> apply(T.mm_ops["mm"], (x, x.t())).grad_fn.name()
        'MmBackward0'
    """
    if _MODES.bits:  # Note [Optional modes at dispatch]
        return _modal("apply", op, inputs, p, nout, differentiable)
    n = len(inputs)
    if n == 2:  # the commonest arities written out (no list per call)
        a, b = inputs
        a = a._data if isinstance(a, Tensor) else a
        b = b._data if isinstance(b, Tensor) else b
        out = op.fwd(a, b) if p is None else op.fwd(a, b, p)
    elif n == 1:
        a = inputs[0]
        a = a._data if isinstance(a, Tensor) else a
        out = op.fwd(a) if p is None else op.fwd(a, p)
    elif n == 3:  # addmm (nn.Linear), where, addcmul, lerp
        a, b, c = inputs
        a = a._data if isinstance(a, Tensor) else a
        b = b._data if isinstance(b, Tensor) else b
        c = c._data if isinstance(c, Tensor) else c
        out = op.fwd(a, b, c) if p is None else op.fwd(a, b, c, p)
    else:
        datas = [x._data if isinstance(x, Tensor) else x for x in inputs]
        out = op.fwd(*datas) if p is None else op.fwd(*datas, p)
    if nout != 1:
        return _apply_multi(op, inputs, p, out, nout, differentiable)
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    t = _make(out)
    if STATE.enabled and differentiable and op.vjp is not None and out.dtype in FLOAT_NP and \
            any_requires_grad(inputs):
        make_node(op, t, inputs, p, 1, user_site())
    else:  # Note [Cut markers at dispatch] (an integer result of a differentiable op cuts)
        _unrecorded(op, t, inputs, "integer" if differentiable and op.vjp is not None else None)
    return t


def _apply_multi(op, inputs, p, out, nout: int, differentiable: bool) -> tuple:
    """``apply``'s wrap and record for an op with ``nout`` outputs."""
    ts = tuple(_make(o if o.__class__ is _ndarray else _asarray(o)) for o in out)
    if differentiable and op.vjp is not None and needs_grad(inputs):
        make_node(op, ts, inputs, p, nout, user_site())
    elif STATE.cut_watch and not STATE.enabled:  # Note [Cut markers at dispatch]
        for o in ts:
            _unrecorded(op, o, inputs)
    return ts


def view_apply(op: Op, a: Tensor, p: object) -> Tensor:
    """A view op: the result shares memory and the version counter with ``a``.

    Note [Views and in-place]
    A view remembers its base (the tensor that owns the memory) and a recipe,
    ``(parent_recipe, op, p)``, that re-creates it from the base. An in-place op on a
    view whose graph matters rewrites the base's history (``CopySlices``); every view
    of that base, the written one included, then re-derives its grad_fn from the new
    base when next used (Note [View grad_fn regeneration]), so gradients flow through
    both, as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, 3)
        >>> x.t()._base is x
        True
    """
    if _MODES.bits:  # Note [Optional modes at dispatch]
        return _modal("view", op, (a,), p)
    out = op.fwd(a._data, p)
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    t = _make(out)
    vc = t._vc = a._vc  # Note [Views and in-place]: one version counter, a base, a recipe
    if vc[0]:
        t._vver = vc[0]
    base = a._base
    if base is None:
        base = t._base = a
        t._vfn = (None, op, p)
    else:
        t._base = base
        t._vfn = (a._vfn, op, p)
        if a._vmeta is not None:  # a view of a no_grad/multi-output view inherits its kind
            t._vmeta = a._vmeta
    if a._rg:
        if STATE.enabled:
            make_node(op, t, (a,), p, 1, user_site())
        else:
            t._rg = True  # as PyTorch: a view of a tensor that requires grad does too
            t._vmeta = "no_grad"
            _unrecorded(op, t, (a,))  # Note [Cut markers at dispatch]
    else:
        if a._cut is not None:  # Note [Cut markers]: a view of a cut value
            t._cut = a._cut
        if not STATE.enabled:
            t._vmeta = "no_grad"
        if STATE.cut_watch is not None:  # None: a derivative rule's view of a gradient,
            track_view(base, t)  # which no one can make require grad (_graph/engine.py)
    return t


# Note [View grad_fn regeneration]
# A view's grad_fn is valid for the version of the memory it was made at (``_vver``).
# An in-place op on the base or on any view of it bumps the shared version counter, so
# every other view's grad_fn is stale: it still points at the base's old history.
# As in PyTorch, a stale view re-derives its grad_fn lazily, on the next read of
# ``grad_fn`` or ``requires_grad`` or when it is used as an op's input (``_edge``): the
# view's recipe is replayed, with grad mode on, from the base's current grad_fn. Views
# PyTorch refuses to re-derive (made under no_grad from a tensor that requires grad,
# outputs of a multi-output view op such as split/unbind, views made inside a custom
# Function) raise PyTorch's error instead of silently keeping the old graph.
def regenerate_view_grad_fn(view: Tensor) -> None:
    """Re-derive a stale view's grad_fn from its base (Note [View grad_fn regeneration])."""
    base = view._base
    if view._gfn is None and not base._rg:
        # nothing requires grad: nothing to re-derive yet. As PyTorch, the view stays stale,
        # so that if its base comes to require grad, the view's grad_fn is derived then
        return
    check_view_rebase(view, indirect=True)
    prev = STATE.enabled
    STATE.enabled = True
    p = (view._vfn, base._data.shape, base._data.dtype, view._data)
    try:
        if _FW.active:  # (forward AD: the tangent follows the recipe)
            fresh = replay_view(view._vfn, base)
        else:
            fresh = apply(_AS_STRIDED_REGEN, (base,), p)
    finally:
        STATE.enabled = prev
    old = view._gfn
    if fresh._gfn is None and old is not None:
        # the base does not require grad (it stopped, or the view required grad through a
        # leaf view of it: x[0].requires_grad_() then a view of that): PyTorch still
        # re-derives a node, AsStridedBackward0 with an invalid edge to the base, so a
        # gradient reaching the view goes nowhere, not where the old node led
        node = record(_AS_STRIDED_REGEN, fresh, (base,), p)
        node._edges = ((sink(), 0, base._data.shape, base._data.dtype),)
    view._gfn = fresh._gfn
    view._rg = fresh._rg
    view._inherits = False  # (its own node now: it keeps requiring grad, as in PyTorch)
    if view._out_nr:
        view._out_nr = 0
    view._vver = view._vc[0]
    if view._retains:
        move_retain(view, old, fresh._gfn)


def move_retain(t: Tensor, old, new) -> None:
    """``retain_grad`` follows a tensor to its new grad_fn after an in-place op (as
    PyTorch moves the retains-grad hook); hooks registered before stay on the old node."""
    if old is not None and old._retain:
        for nr, ref in list(old._retain.items()):
            if ref() is t:
                del old._retain[nr]
    if new is None:
        return
    new._hooked = True
    if new._retain is None:
        new._retain = {}
    new._retain[t._out_nr] = _weakref(t)


def check_view_rebase(view: Tensor, indirect: bool, via: str | None = None) -> None:
    """PyTorch's refusal to rewrite the history of a view made under no_grad, by a
    multi-output view op, or inside a custom Function (``handle_view_on_rebase``).
    ``via``: the write goes into a new view of ``view`` made by that op (``x[0] = v``
    writes into ``x.select(0, 0)``, "Select"), which inherits the kind and names itself."""
    kind = view._vmeta
    step = view._vfn
    while step is not None:  # made inside a custom Function: that is what counts
        if step[2].__class__.__name__ == "FnView":
            kind = "fn"
            break
        step = step[0]
    if kind is None:
        return
    node = view._gfn
    what = "its base or another view of its base has been" if indirect else "is being"
    fn = _re_backward.sub("", node.name()) if node is not None else None
    out_nr = view._out_nr
    if via is not None:
        fn, out_nr, node = via, 0, True
    if kind == "no_grad" or node is None:
        head = (f"Output {out_nr} of {fn} is a view of a view which was created in"
                if node is not None else "A view was created in")
        msg = f"{head} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        msg = f"Output {out_nr} of {fn} is a view and {what} modified inplace."
    if kind == "multi":
        msg += (" This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
    elif kind == "no_grad":
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You "
                "can clarify your code by moving both the view and the inplace either both "
                "inside the no_grad block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")
    else:
        msg += (" This view was created inside a custom Function (or because an input was "
                "returned as-is) and the autograd logic to handle view+inplace would override "
                "the custom backward associated with the custom Function, leading to incorrect "
                "gradients. This behavior is forbidden. You can fix this by cloning the output "
                "of the custom Function.")
    raise RuntimeError(msg)  # PyTorch's words, which name the fix already


def _grad_fn(self) -> Node | None:
    """The node that made this tensor (None for leaves); a view whose base or sibling was
    written in place since gets its grad_fn re-derived first (Note [View grad_fn
    regeneration]).

    Example:
        >>> import retrograd as torch
        >>> (torch.ones(1, requires_grad=True) * 2).grad_fn  # doctest: +ELLIPSIS
        <MulBackward0 object at 0x...>
    """
    if self._base is not None and self._vc[0] != self._vver:
        regenerate_view_grad_fn(self)
    g = self._gfn
    if g.__class__ is Node:  # its own class, now that it is seen (Note [Node classes])
        return named(g)
    return g


# the op layer's Tensor.grad_fn: the core property plus the regeneration of stale views
Tensor.grad_fn = property(_grad_fn, Tensor.grad_fn.fset, doc=_grad_fn.__doc__)


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
