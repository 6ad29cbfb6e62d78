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

import math
import numbers
import re
from weakref import ref as _weakref

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._graph.forward_state import FW as _FW
from .._graph.forward_state import fw_op as _fw_op
from .._graph.modes import MODES as _MODES
from .._graph.modes import VMAP as _VMAP
from .._graph.node import Node, sink
from .._graph.provenance import mark as _cut_mark
from .._tensor.tensor import Tensor, _make, track_view
from . import buffers as _buffers
from .op import (
    _LOW,
    FLOAT_NP,
    Op,
    any_requires_grad,
    binary_dtype,
    needs_grad,
    record,
    record1,
    record2,
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
# its thread-local state and its handler. While MODES.bits is set (Note [Optional modes]
# in _graph/modes.py), ``apply`` tests the state's ``on`` flag and hands the call to the
# handler while it is set. Until a library registers, the flag is a constant False.


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
    """Send calls with a batched input to ``handler(kind, op, inputs, p, nout,
    differentiable)`` (Note [Batched tensors] in _functorch/batched.py); a batched
    tensor's ``_data`` is not a plain ndarray, which is what ``unary``, ``binary`` and
    ``view_apply`` test, and ``apply`` tests the VMAP mode bit (Note [Optional modes]).

    Example:
        >>> import retrograd.func
        >>> from retrograd.ops import dispatch
        >>> dispatch._vmap_call.__name__
        'batched_call'
    """
    global _vmap_call
    _vmap_call = handler


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
    """Elementwise op of one tensor (``op.kind == 'float'`` turns ints into floats)."""
    ad = a._data
    if ad.__class__ is not _ndarray and _vmap_call is not None:  # a batched tensor
        r = _vmap_call("unary", op, (a,), p)
        if r is not NotImplemented:
            return r
    dt = ad.dtype
    if op.kind == "float" and dt not in FLOAT_NP:
        ad = ad.astype(D.DEFAULTS.float.np)
        dt = ad.dtype
    if dt in _LOW:
        out = (op.fwd(ad.astype(_F32)) if p is None else op.fwd(ad.astype(_F32), p)).astype(dt)
    elif ad.nbytes >= _POOL_MIN and op.fwd.__class__ is _ufunc and dt.kind == "f" \
            and p is None and ad.flags.c_contiguous:  # Note [Buffer pool] (buffers.py)
        out = op.fwd(ad, out=_buffers.result_for(ad, None, ad.shape, dt))
    else:
        out = op.fwd(ad) if p is None else op.fwd(ad, p)
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    t = _make(out)
    if a._rg:
        if STATE.enabled:
            if op.vjp is not None:
                record1(op, t, a, p)
        elif STATE.cut_watch:
            _cut_mark("no_grad", op.name, a, t)
    elif a._cut is not None:  # a value computed from a cut one (Note [Cut markers])
        t._cut = a._cut
    if _FW.active:  # forward-mode AD, the one optional mode of elementwise ops
        _fw_op(op, (a,), t, p, 1)
    return t


def binary(op, a, b, p=None) -> Tensor:
    """Elementwise op of two operands, either of which may be a Python number (``p``: the
    op's non-tensor argument, e.g. ``alpha``, given to its kernel after the operands)."""
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    kind = op.kind
    if ta and tb:
        ad = a._data
        bd = b._data
        if (ad.__class__ is not _ndarray or bd.__class__ is not _ndarray) and \
                _vmap_call is not None:  # a batched tensor (Note [Batched tensors])
            r = _vmap_call("binary", op, (a, b), p)
            if r is not NotImplemented:
                return r
        rdt = ad.dtype
        bdt = bd.dtype
        if rdt is not bdt and rdt != bdt:
            rdt = binary_dtype(rdt, bdt, ad.ndim == 0, bd.ndim == 0)
            cdt = _F32 if rdt in _LOW else rdt  # float16/bfloat16 compute in float32, so a
            if ad.dtype != cdt:  # float32 0-d operand is not rounded first (PyTorch)
                ad = ad.astype(cdt)
            if bdt != cdt:
                bd = bd.astype(cdt)
        if kind is not None and kind == "float" and rdt not in FLOAT_NP:
            rdt = D.DEFAULTS.float.np
            ad = ad.astype(rdt)
            bd = bd.astype(rdt)
    else:
        if ta:
            ad = a._data
            if ad.__class__ is not _ndarray and _vmap_call is not None:
                r = _vmap_call("binary", op, (a, b), p)
                if r is not NotImplemented:
                    return r
            plan = _PLANS.get((ad.dtype, b, b.__class__, kind))
            if plan is None:
                plan = _scalar_plan(ad.dtype, b, kind)
                if plan is None:
                    return NotImplemented
            rdt, cdt, bd = plan
            if ad.dtype is not cdt:
                ad = ad.astype(cdt)
        elif tb:
            bd = b._data
            if bd.__class__ is not _ndarray and _vmap_call is not None:
                r = _vmap_call("binary", op, (a, b), p)
                if r is not NotImplemented:
                    return r
            plan = _PLANS.get((bd.dtype, a, a.__class__, kind))
            if plan is None:
                plan = _scalar_plan(bd.dtype, a, kind)
                if plan is None:
                    return NotImplemented
            rdt, cdt, ad = plan
            if bd.dtype is not cdt:
                bd = bd.astype(cdt)
        else:
            raise TypeError(f"{op.name}: expected at least one Tensor, got {type(a).__name__} "
                            f"and {type(b).__name__}")
    try:
        if (ad.nbytes >= _POOL_MIN or (tb and bd.nbytes >= _POOL_MIN)) and \
                op.fwd.__class__ is _ufunc and ad.dtype is rdt and bd.dtype is rdt and \
                rdt.kind == "f" and kind != "bool" and ad.flags.c_contiguous and \
                bd.flags.c_contiguous:  # Note [Buffer pool] (buffers.py)
            out = op.fwd(ad, bd, out=_buffers.result_for(ad, bd, _bshape(ad.shape, bd.shape),
                                                          rdt))  # Note [Gradient donation]
        else:
            out = op.fwd(ad, bd) if p is None else op.fwd(ad, bd, p)
    except ValueError as e:
        try:
            np.broadcast_shapes(a._data.shape if ta else (), b._data.shape if tb else ())
        except ValueError:
            raise _shape_error(op, a, b, e) from None
        raise
    except TypeError:
        if op.bool_error is not None and rdt == _BOOL:  # sub's message (Note [Complete records])
            raise RuntimeError(op.bool_error) from None
        raise
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    if out.dtype is not rdt and kind != "bool" and out.dtype != rdt:
        out = out.astype(rdt)
    t = _make(out)
    if (ta and a._rg) or (tb and b._rg):
        if STATE.enabled:
            if op.vjp is not None:
                record2(op, t, a, b, p)
            elif kind == "bool" and STATE.cut_watch is not None:  # None: inside backward
                _cut_mark("comparison", op.name, a if ta and a._rg else b, t)
        elif STATE.cut_watch:
            _cut_mark("no_grad", op.name, a if ta and a._rg else b, t)
    elif ta and a._cut is not None:  # Note [Cut markers]: computed from a cut value
        t._cut = a._cut
    elif tb and b._cut is not None:
        t._cut = b._cut
    if _FW.active:  # forward-mode AD, the one optional mode of views and elementwise ops
        _fw_op(op, (a, b), t, p, 1)
    return t


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
    """Run any table op on ``inputs`` (tensors or other values) and record it."""
    modes = _MODES.bits  # Note [Optional modes]: one read while every optional mode is off
    if modes:
        if modes & _VMAP:  # (Note [Batched tensors] in _functorch/batched.py)
            r = _vmap_call("apply", op, inputs, p, nout, differentiable)
            if r is not NotImplemented:
                return r
        if _AMP.on:  # (Note [Dispatch interceptors])
            return _autocast_apply(op, inputs, p, nout, differentiable)
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
    if nout == 1:
        if out.__class__ is not _ndarray:
            out = _asarray(out)
        t = _make(out)
        if STATE.enabled:
            if differentiable and op.vjp is not None:
                if out.dtype not in FLOAT_NP:  # an integer result cuts the path
                    _mark_apply_cut(op, t, inputs, p)
                elif n == 1:
                    if inputs[0].__class__ is Tensor or isinstance(inputs[0], Tensor):
                        if inputs[0]._rg:
                            record1(op, t, inputs[0], p)
                elif any_requires_grad(inputs):
                    # user_site, record, apply, the op's function (ours): start above them
                    record(op, t, inputs, p, depth=4)
        elif STATE.cut_watch:
            _mark_apply_cut(op, t, inputs, p)
        if not t._rg and t._cut is None and STATE.cut_watch is not None:  # Note [Cut
            # markers]: computed from a cut value (None: inside backward, nothing to mark)
            for x in inputs:
                if isinstance(x, Tensor) and x._cut is not None:
                    t._cut = x._cut
                    break
        if modes and _FW.active and differentiable:
            _fw_op(op, inputs, t, p, 0)
        return t
    ts = tuple(_make(o if o.__class__ is _ndarray else _asarray(o)) for o in out)
    if differentiable and op.vjp is not None and needs_grad(inputs):
        record(op, ts, inputs, p, nout=nout)
    elif STATE.cut_watch and not STATE.enabled:
        for o in ts:
            _mark_apply_cut(op, o, inputs, p)
    if modes and _FW.active and differentiable:
        _fw_op(op, inputs, ts, p, 0)
    return ts


def _mark_apply_cut(op, t: Tensor, inputs, p) -> None:
    """Note [Cut markers] (_graph/provenance.py): an op under no_grad, or a
    differentiable op whose result is an integer, took a tensor that requires grad."""
    if STATE.cut_watch is None:  # inside backward: derivative rules leave no markers
        return
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            name = op.name
            if name == "to_copy":
                name = f"to({D.FROM_NP[t._data.dtype]})"
            _cut_mark("no_grad" if not STATE.enabled else "integer", name, x, t)
            return


def view_apply(op: Op, a: Tensor, p: object) -> Tensor:
    """A view op: the result shares memory and the version counter with ``a``.

    Note [Views and in-place]
    A view remembers its base (the tensor that owns the memory) and a recipe,
    ``(parent_recipe, op, p)``, that re-creates it from the base. An in-place op on a
    view whose graph matters rewrites the base's history (``CopySlices``); every view
    of that base, the written one included, then re-derives its grad_fn from the new
    base when next used (Note [View grad_fn regeneration]), so gradients flow through
    both, as in PyTorch.
    """
    ad = a._data
    if ad.__class__ is not _ndarray and _vmap_call is not None:  # a batched tensor
        r = _vmap_call("view", op, (a,), p)
        if r is not NotImplemented:
            return r
    out = op.fwd(ad, p)
    if out.__class__ is not _ndarray:
        out = _asarray(out)
    t = _make(out)
    vc = t._vc = a._vc
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
            record1(op, t, a, p)
        else:
            t._rg = True  # as PyTorch: a view of a tensor that requires grad does too
            t._vmeta = "no_grad"
            if STATE.cut_watch:
                _cut_mark("no_grad", op.name, a, t)
    else:
        if a._cut is not None:  # Note [Cut markers]: a view of a cut value
            t._cut = a._cut
        if not STATE.enabled:
            t._vmeta = "no_grad"
        if STATE.cut_watch is not None:  # None: a derivative rule's view of a gradient,
            track_view(base, t)  # which no one can make require grad (_graph/engine.py)
    if _FW.active:  # forward-mode AD, the one optional mode of views and elementwise ops
        _fw_op(op, (a,), t, p, 2)
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
        node = record1(_AS_STRIDED_REGEN, fresh, base, p)
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
        >>> (torch.ones(1, requires_grad=True) * 2).grad_fn
        <MulBackward0 object>
    """
    if self._base is not None and self._vc[0] != self._vver:
        regenerate_view_grad_fn(self)
    return self._gfn


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
