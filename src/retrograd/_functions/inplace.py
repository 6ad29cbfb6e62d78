"""In-place semantics (Note [In-place ops]): the checks PyTorch makes before a write, the
version bump, rebasing a view's history onto its base (CopySlices), writes into
memory that NumPy holds read-only, in-place ops on overlapping views, and the direct
in-place kernels used outside any graph. Every ``Tensor.<op>_`` method is made here
from its out-of-place function (``_make_inplace``; which ops have one: their ``@public``
lines, Note [Exposure records] in public.py).

Example:
    >>> import retrograd as torch
    >>> a = torch.tensor([1., 2.], requires_grad=True)
    >>> b = a * 1
    >>> _ = b[0:1].mul_(3)
    >>> b.grad_fn.name()
    'torch::autograd::CopySlices'
"""

from __future__ import annotations

import weakref

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._graph.forward_state import FW as _FW
from .._graph.forward_state import inplace_tangent as _inplace_tangent
from .._graph.node import _LEGACY
from .._tensor.tensor import (
    Tensor,
    _make,
    check_inference_write,
    mark_views_requiring_grad,
    result_type,
)
from ..ops import buffers as _buffers
from ..ops import overlap as _overlap
from ..ops.dispatch import apply, check_view_rebase, move_retain
from ..ops.dispatch import scalar_array as _scalar_array
from ..ops.op import Op, record
from ..ops.op import any_requires_grad as _any_rg
from ..ops.records.copy_slices import copy_slices as _COPY_SLICES
from ..ops.records.copy_slices import folded_copy_slices as _folded_copy_slices
from ..ops.records.copy_slices import overlap_self as _OVERLAP_SELF
from ..ops.records.view_regeneration import base_positions
from .arguments import _py_abs
from .indexing import norm_key
from .shape import expand


def _views_itself(self) -> bool:
    """Is ``self`` a view (of a base that requires grad) whose elements share memory?"""
    return self._base is not None and self._base._rg and _overlap.aliases_itself(self._data)


# ----------------------------------------------------------------------------------
# in-place ops (Note [In-place ops])


def _check_inplace_leaf(self, grad: bool | None = None) -> None:
    """PyTorch's ``check_inplace``: in grad mode, when the op involves a tensor that
    requires grad (``grad``; default: ``self`` does), refuse to write into a leaf that
    requires grad, a view (that requires grad) of any leaf, or a view whose history can't
    be rewritten."""
    if not STATE.enabled:
        return
    if grad is None:
        grad = self._rg
    if not grad:
        return
    base = self._base
    if base is not None:
        if grad:
            check_view_rebase(self, indirect=False)
        if (self._rg or base._rg) and base._gfn is None:  # PyTorch: the view requires
            _raise_view_of_leaf()  # grad and its base is a leaf (whether or not it does)
    elif self._rg and self._gfn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. Leaves "
            "that require grad (parameters, tensors made with requires_grad=True) must keep "
            "their value for backward: update them inside `with torch.no_grad():` (as optimizers "
            "do), or use an out-of-place op (x = x + 1).")


def _raise_view_of_leaf() -> None:
    # PyTorch asks only that the view require grad and its base be a leaf: the base need not
    # require grad itself (a view made before ``view.requires_grad_()`` counts too)
    raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                       "in-place operation. Clone the leaf first (x = leaf.clone(); "
                       "x[...] = ...), or modify it under torch.no_grad().")


#: the tensor an overlapping write (``_aliased_write``) is under way into: its op, re-entered,
#: skips the overlap checks
_WRITING: list = [None]


# Note [Batched writes]: an in-place op on a batched tensor inside vmap (Note [Batched
# tensors] in _functorch/batched.py) is handed to vmap's handler, registered here at its
# import (``BATCHED_WRITE[0]``), which writes the op's batched result into the physical
# tensor. A batched tensor's ``_data`` is read-only, so every in-place path reaches one of
# the rare branches below before writing; they test the class of ``_data``.
BATCHED_WRITE: list = [None]


def batched_write(kind: str, self, fn, args, kwargs):
    """Hand an in-place op on a batched tensor to vmap (Note [Batched writes])."""
    return BATCHED_WRITE[0](kind, self, fn, args, kwargs)


def is_batched_data(d) -> bool:
    """Whether ``d`` is the ``_data`` of a batched tensor (Note [Batched writes])."""
    return d.__class__ is not np.ndarray and BATCHED_WRITE[0] is not None and \
        getattr(d, "_src", None) is not None


def _refuse_batched_result(res) -> None:
    from ..ops.batch_rules import NoBatchingRule  # (a function marked for the per-element
    # fallback then runs once per element: Note [Per-element fallback])

    raise NoBatchingRule(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due "
        "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please "
        "try to use out-of-place operators instead of inplace arithmetic. If said operator "
        "is being called inside the PyTorch framework, please file a bug report instead.")


def _aliased_write(self, body, compute=None, inputs=(), out=None, rewrite=None):
    """Run ``body()``, an in-place op's usual path, on ``self`` whose memory NumPy holds
    read-only (an expanded or overlapping view) or that an input overlaps: the op writes
    through a writable alias of the same memory (Note [Memory overlap in in-place ops] in
    ops/overlap.py). When element-by-element order matters (``out``, default ``self``'s
    array, aliases itself or an input), the values are then rewritten as PyTorch's kernel
    leaves them: ``compute()`` gives the op's result from the memory as it is. An op that
    writes only some elements (index_put_, masked_fill_) passes ``rewrite(w)``, which
    writes just those into the writable alias ``w``, when self's elements share memory."""
    d = self._data
    if is_batched_data(d):
        return batched_write("other", self, None, (), {})
    w = _overlap.writable(d)
    if w is None:  # memory NumPy must not write (a shared constant): self gets its own
        d = self._data = _overlap.private_copy(d)
        w = _overlap.writable(d)
    out = d if out is None else out
    seq = compute is not None and _overlap.needs_sequential(out, inputs)
    redo = not seq and rewrite is not None and _overlap.aliases_itself(d)
    orig = d.copy() if seq or redo else None
    self._data = w
    prev_writing = _WRITING[0]
    _WRITING[0] = self  # body() may re-enter the op: the checks are done
    try:
        res = body()
    finally:
        _WRITING[0] = prev_writing
        if self._data is w:
            self._data = d
    node = self._gfn  # a node that saved its result keeps the read-only array
    if w is not d and node is not None and node._out is not None:
        node._out[:] = [(d,) + e[1:] if e is not None and e[0] is w else e for e in node._out]
    if redo:
        w[...] = orig
        rewrite(w)
    if seq:
        w[...] = orig
        prev = STATE.enabled
        STATE.enabled = False
        try:
            _overlap.sequential(out, compute, inputs)
        finally:
            STATE.enabled = prev
    return res


_CAN_CAST_CACHE: dict = {}


def _can_cast(src, dst) -> bool:
    key = (src, dst)
    r = _CAN_CAST_CACHE.get(key)
    if r is None:
        s, d = D.FROM_NP[src], D.FROM_NP[dst]
        r = _CAN_CAST_CACHE[key] = s.category <= d.category
    return r


# Note [In-place ops]
# An in-place op is its out-of-place op followed by a write into the tensor's
# memory: the value is computed (and, in grad mode, recorded against the tensor's
# *old* history), written with np.copyto so views see it, and the version counter
# is bumped so saved copies of the old value are detected. The tensor then takes
# the new node as its grad_fn ("rebase"). For a view, the base's history is
# rewritten instead (Note [Views and in-place]).
def _inplace(self: Tensor, res: Tensor) -> Tensor:
    """Write ``res``, the op's out-of-place result, into ``self`` (Note [In-place ops]):
    PyTorch's checks, the write and its version bump, then ``self`` takes the result's
    history."""
    if res._data.__class__ is not _ndarray and is_batched_data(res._data):
        _refuse_batched_result(res)  # (self is not batched: Note [Batched writes])
    _check_inplace_leaf(self, res._rg)
    _check_result_fits(self, res)
    if res._rg:
        _snapshot_saved_self(self, res._gfn)
    np.copyto(self._data, res._data, casting="unsafe")
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, res)
    if not (res._rg and STATE.enabled):
        if self._rg and self.grad_fn is not None and STATE.enabled:
            raise RuntimeError("the derivative of this in-place op is not implemented: it was "
                               "applied to a tensor that requires grad. Use it under no_grad() "
                               "or on a detached tensor.")
        return self
    _take_history(self, res)
    return self


def _check_result_fits(self: Tensor, res: Tensor) -> None:
    """PyTorch's refusals of an in-place result that ``self`` cannot hold: a dtype it
    cannot be cast to, or a shape that does not broadcast to ``self``'s."""
    sd = self._data.dtype
    rd = res._data.dtype
    if sd != rd and not _can_cast(rd, sd):
        raise RuntimeError(f"result type {_LEGACY[res.dtype.name]} can't be cast to the desired "
                           f"output type {_LEGACY[self.dtype.name]}. The in-place op would "
                           "truncate its result; use the out-of-place op, or convert the tensor "
                           "first (x = x.float()).")
    if res._data.shape != self._data.shape:
        bshape = np.broadcast_shapes(res._data.shape, self._data.shape)
        if bshape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(bshape)}")


def _take_history(self: Tensor, res: Tensor) -> None:
    """After the write, ``self`` takes ``res``'s node as its grad_fn ("rebase"), or, for a
    view, its base's history is rewritten (Note [Views and in-place])."""
    node = res._gfn
    if node._out is not None and res._data.shape == self._data.shape:
        # the op saved its output: that output now lives in self's memory, under self's
        # version counter (shared with the base and every view), so a later write into
        # any of them is caught when the rule reads it (PyTorch saves self itself, in
        # self's dtype: x32.pow_(e64) saves the float32 result, and its node is x's
        # grad_fn with no cast node after it; the engine casts gradients to each edge's
        # dtype)
        node._out[res._out_nr] = (self._data, self._vc, self._vc[0])
    if res._data.shape != self._data.shape:
        res = expand(res, self._data.shape)
    if self._base is not None:
        _rebase_view(self, res)
        if node._out is not None and res._data.shape == self._data.shape:
            # Note [Saved outputs of in-place ops on views]
            gfn = self.grad_fn  # the view's, re-derived over the base's CopySlices
            if node._out_fn is None:
                node._out_fn = {}
            node._out_fn[res._out_nr] = (weakref.ref(gfn), self._out_nr)
        return
    old = self._gfn  # Note [In-place ops]: the result's node becomes self's grad_fn
    self._gfn = res._gfn
    self._out_nr = res._out_nr
    if not self._rg:
        self._rg = True
        if self._views is not None:
            mark_views_requiring_grad(self)
    if self._retains:
        move_retain(self, old, self._gfn)


def _snapshot_saved_self(self: Tensor, node) -> None:
    """If the op being applied in place saved ``self`` (its rule needs the value from
    before the write, e.g. the other operand's gradient of ``x.mul_(w)``), save a copy
    instead, keeping self's old history so double backward still reaches it. PyTorch
    does the same ("original self")."""
    saved = node._saved if node is not None else None
    if not saved:
        return
    save = node._op.save
    for i, x in enumerate(saved):
        if x is self and save[i] == 0:  # only the self operand (PyTorch: original self)
            snap = _make(self._data.copy())
            if self._rg:
                snap._rg = True
                snap.grad_fn = self.grad_fn
                snap._out_nr = self._out_nr
            saved[i] = snap
            node._ver[i] = 0


def _overlapping_self(view_t: Tensor) -> Tensor:
    """The values of ``view_t`` (a view whose elements share memory), as a tensor recorded
    from its base whose gradient rule is CopySlices' overwrite (Note [In-place ops on
    overlapping views])."""
    base = view_t._base
    d = view_t._data
    where = base_positions(view_t._vfn, base._data.shape)
    contiguous = np.empty(d.shape, d.dtype).strides
    order = _overlap.ti_order(d.shape, [d.strides, contiguous])
    locs = where.reshape(-1)[order]
    last = np.unique(locs[::-1], return_index=True)[1]  # the last write to each location
    pos = order[::-1][last]
    return apply(_OVERLAP_SELF, (base,), (d.copy(), base._data.shape, base._data.dtype, pos,
                                           locs[::-1][last]))


def _rebase_view(view_t: Tensor, res: Tensor) -> None:
    """An in-place op wrote ``res`` into the view ``view_t``: the base's new history is a
    CopySlices node over its old history and ``res`` (Note [Views and in-place]); the view
    itself, like every other view of the base, re-derives its grad_fn from it (Note [View
    grad_fn regeneration])."""
    check_view_rebase(view_t, indirect=False)
    base = view_t._base
    old_node = base._gfn
    old = _make(base._data)
    old._rg = base._rg
    old._gfn = old_node
    old._out_nr = base._out_nr
    old._acc = base._acc
    fn = res._gfn
    e0 = fn._edges[0] if fn is not None and fn._edges else None
    if fn is not None and res._out_nr == 0 and fn._nout == 1 and fn._op.__class__ is Op and \
            0 not in fn._op.nondiff and \
            e0 is not None and e0[0] is view_t._gfn and not fn._hooked:
        # Note [CopySlices folding]: as PyTorch, one CopySlices node that runs the op's
        # node on the written region's gradient: its edges are the base's old history
        # and the op's other inputs (the op's edge to the view itself is replaced)
        node = record(_folded_copy_slices(fn._op.nondiff), base, (old,), (view_t._vfn, fn))
        node._edges = [node._edges[0], *fn._edges[1:]]
    else:
        record(_COPY_SLICES, base, (old, res), view_t._vfn)
    if base._out_nr:
        base._out_nr = 0
    if base._views is not None:
        mark_views_requiring_grad(base)
    if base._retains:
        move_retain(base, old_node, base._gfn)
    view_t._rg = True  # its grad_fn is re-derived on next use (its version is stale)


def _make_inplace(fn, name):
    fast = _FAST_INPLACE.get(name)
    kind = _overlap.policy(name)
    # the ops that refuse even full overlap refuse the written tensor itself as an input
    # (Note [Memory overlap in in-place ops] in overlap.py)
    refuse_self = kind in ("no_overlap", "index_put")

    def method(self, *args, **kwargs) -> Tensor:
        # Note [Memory overlap in in-place ops] (overlap.py), inline: the hot path of every
        # in-place op. An array that owns its memory is writable (ours are: only views of
        # others are made read-only), and two such arrays never overlap unless they are
        # one; the checks run again only while _overlapping_inplace itself writes
        if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor/tensor.py)
            check_inference_write(self)
        d = self._data
        own = d.base is None
        if not own and not d.flags.writeable:
            if self is not _WRITING[0]:
                return _overlapping_inplace(self, fn, kind, name, method, args, kwargs)
        else:
            for a in (args if not kwargs else (*args, *kwargs.values())):
                if isinstance(a, Tensor):
                    ad = a._data
                    if ad.__class__ is not _ndarray and is_batched_data(ad):
                        _refuse_batched_result(a)  # Note [Batched writes]
                    if ad is d:
                        if refuse_self:  # scatter_(0, i, x) with x itself: PyTorch refuses
                            raise RuntimeError(_overlap.PARTIAL_MSG + f" ({name} reads the "
                                               "tensor it writes: pass x.clone() instead)")
                        continue
                    if own and _apart(d, ad):
                        continue
                    if _may_share(d, ad) and self is not _WRITING[0]:
                        return _overlapping_inplace(self, fn, kind, name, method, args,
                                                    kwargs)
        if not STATE.enabled or not (self._rg or _any_rg(args) or _any_rg(kwargs.values())):
            if fast is not None and fast(self, *args, **kwargs):
                self._vc[0] += 1
                return self
            return _write_plain(self, fn(self, *args, **kwargs))
        # PyTorch's check_inplace runs before the kernel: a leaf (or a view of one) is
        # refused before any argument or shape error of the op itself
        _check_inplace_leaf(self, True)
        return _inplace(self, fn(self, *args, **kwargs))
    method.__name__ = name
    method.__doc__ = f"In-place ``{fn.__name__}`` (bumps the version counter)."
    return method


_may_share = np.may_share_memory
_ndarray = np.ndarray


def _apart(d: np.ndarray, ad: np.ndarray) -> bool:
    """Whether ``ad`` cannot overlap ``d``, an array that owns its memory: ``ad`` owns its
    own, or is a view of another array that does (a gradient made as the transpose of a
    product). Otherwise NumPy's overlap test decides."""
    owner = ad.base
    return owner is None or (owner is not d and owner.__class__ is _ndarray and
                             owner.base is None)


def _overlapping_inplace(self, fn, kind, name, method, args, kwargs):
    """An in-place op on a tensor whose memory NumPy holds read-only (an expanded or
    overlapping view) or that an argument may share: PyTorch's checks, then the write
    (Note [Memory overlap in in-place ops] in overlap.py)."""
    d = self._data
    if is_batched_data(d):
        return batched_write("ti", self, fn, args, kwargs)
    ins = [a._data for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and
           a is not self]
    _overlap.check(d, ins[:1] if kind == "masked_fill" else ins, kind, name)
    compute = None
    if kind == "ti":
        def compute():
            return fn(self, *args, **kwargs)._data
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
        if tensors and result_type(self, *tensors).np != d.dtype:
            # PyTorch's CPU TensorIterator reads a promoted copy of self and copies a
            # temporary result back: every value is computed from the memory as it was
            # (Note [Memory overlap in in-place ops]); the copy's order is the output's
            # and the temporary's (contiguous)
            frozen = []

            def compute():
                if not frozen:
                    frozen.append(fn(self, *args, **kwargs)._data)
                return frozen[0]
            ins = [np.empty(d.shape, np.int8)]

    def run():
        return method(self, *args, **kwargs)
    if STATE.enabled and _views_itself(self):  # Note [In-place ops on overlapping views]
        def run():
            _check_inplace_leaf(self, True)
            r = fn(_overlapping_self(self), *args, **kwargs)
            node = r._gfn
            out = _inplace(self, r)
            if node is not None and node._out is not None:  # a saved result is, as in
                # PyTorch, the view: what the kernel leaves in memory
                node._out[r._out_nr] = (d, self._vc, self._vc[0])
            return out
    return _aliased_write(self, run, compute, ins,
                          rewrite=_partial_rewrite(self, fn, kind, args, kwargs))


def _partial_rewrite(self, fn, kind, args, kwargs):
    """For the in-place ops that write only some elements (masked_fill_, index_put_,
    scatter_, index_copy_, tril_, ...): a function writing just those into a writable array
    (``_aliased_write``'s ``rewrite``); None for elementwise ops."""
    def arr(v):
        return v._data if isinstance(v, Tensor) else v
    if kind in ("no_overlap", "none", "index_fill"):  # the elements whose value it changes
        def rewrite(w):
            prev = STATE.enabled
            STATE.enabled = False
            try:
                res = np.broadcast_to(fn(self, *args, **kwargs)._data, w.shape).astype(w.dtype)
            finally:
                STATE.enabled = prev
            old = self._data  # (the memory as it was)
            bits = np.dtype(f"u{w.itemsize}")
            changed = np.ascontiguousarray(res).view(bits) != \
                np.ascontiguousarray(old).view(bits)
            w[changed] = res[changed]
        return rewrite
    if kind == "masked_fill":
        mask = args[0] if args else kwargs["mask"]
        value = args[1] if len(args) > 1 else kwargs["value"]
        return lambda w: w.__setitem__(np.broadcast_to(arr(mask), w.shape), arr(value))
    if kind == "index_put":
        indices, values = args[0], arr(args[1])
        accumulate = args[2] if len(args) > 2 else kwargs.get("accumulate", False)
        key = norm_key(tuple(indices) if isinstance(indices, list) else indices)
        if accumulate:
            return lambda w: np.add.at(w, key, values)
        return lambda w: w.__setitem__(key, values)
    return None


# Note [Direct in-place kernels]
# Outside any graph (optimizer steps under no_grad), the arithmetic in-place ops write
# straight into the tensor's array with ``out=``: computing a full-size result and
# copying it back costs two large temporaries per call, which glibc returns to the OS
# and faults back in every step. Each fast path applies only when the result dtype is
# the tensor's own floating dtype and the operands broadcast to its shape; otherwise
# it returns False and the general path runs. The operation order is the general
# path's, so results are identical.
_F32_64 = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def _operand(self, other):
    """``other`` as an array that can be written into ``self`` in place, or None."""
    d = self._data
    if isinstance(other, Tensor):
        od = other._data
        if od.dtype != d.dtype:
            return None
        if od.shape != d.shape:
            try:
                if np.broadcast_shapes(od.shape, d.shape) != d.shape:
                    return None
            except ValueError:  # the general path raises PyTorch's error
                return None
        return od
    if other.__class__ in (int, float):
        return _scalar_array(other, d.dtype)
    return None


def _fast_arith(ufunc):
    def fast(self, other, *rest, alpha=1, rounding_mode=None):
        d = self._data
        if d.dtype not in _F32_64 or rounding_mode is not None or _FW.active or rest:
            return False  # (rest: Note [Legacy value-first forms], _functions/legacy_forms.py)
        od = _operand(self, other)
        if od is None or (alpha.__class__ is not int and alpha.__class__ is not float):
            return False  # bool, complex, NumPy or tensor alpha: the general path checks it
        if alpha != 1:
            od = _scaled(od, alpha, d.dtype)
        ufunc(d, od, out=d)
        return True
    return fast


def _scaled(od, alpha, dt):
    """``alpha * od``: a temporary, a pooled one for large steps (Note [Buffer pool])."""
    a = _scalar_array(alpha, dt)
    return np.multiply(od, a) if od.nbytes < _buffers.pool_min() else \
        np.multiply(od, a, out=_buffers.empty(od.shape, dt))


def add_scaled_(param: Tensor, grad: Tensor, alpha: float) -> bool:
    """``param.add_(grad, alpha=alpha)`` for an optimizer step, where the general in-place
    path's checks are known to pass: True when done, False to take ``add_`` instead.

    Done here only outside grad mode and forward AD, for a float32/float64 tensor that
    owns its writable memory and a gradient of its dtype and shape in other memory (an
    array of its own, or a view of an array that owns its own): then ``add_``'s checks
    (inference, overlap, leaf) pass and its kernel is this one (Note [Direct in-place
    kernels]), so the values and the version bump are ``add_``'s.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functions.inplace import add_scaled_
        >>> w = torch.ones(2)
        >>> with torch.no_grad():
        ...     add_scaled_(w, torch.ones(2), -0.5), w, w._version
        (True, tensor([0.5000, 0.5000]), 1)
    """
    d = param._data
    gd = grad._data
    if STATE.enabled or _FW.active or param._vc.__class__ is not list or \
            d.base is not None or gd.dtype is not d.dtype or gd.shape != d.shape or \
            d.dtype not in _F32_64 or grad.__class__ is not Tensor or \
            alpha.__class__ is not float or not d.flags.writeable:
        return False
    if gd is d or not _apart(d, gd):
        return False
    np.add(d, _scaled(gd, alpha, d.dtype) if alpha != 1 else gd, out=d)
    param._vc[0] += 1
    return True


def _fast_addc(ufunc):
    def fast(self, tensor1, tensor2, *rest, value=1):
        d = self._data
        if d.dtype not in _F32_64 or _fw_active() or rest:
            return False  # (rest: Note [Legacy value-first forms], _functions/legacy_forms.py)
        a, b = _operand(self, tensor1), _operand(self, tensor2)
        if a is None or b is None or value.__class__ not in (int, float):
            return False
        # np.asarray: a 0-d product comes back from NumPy as a scalar, not an array
        t = np.asarray(np.multiply(a, _scalar_array(value, d.dtype))) if value != 1 else a.copy()
        if t.shape != np.broadcast_shapes(t.shape, b.shape):
            return False
        ufunc(t, b, out=t)  # (value * t1) op t2, then added: PyTorch's kernel order
        np.add(d, t, out=d)
        return True
    return fast


def _fast_lerp(self, end, weight):
    d = self._data
    if d.dtype not in _F32_64 or _fw_active() or weight.__class__ not in (int, float) or \
            not isinstance(end, Tensor):
        return False
    e = _operand(self, end)
    if e is None:
        return False
    t = np.subtract(e, d)
    if _py_abs(weight) < 0.5:  # PyTorch's two-sided formula, as in the lerp kernel
        t *= _scalar_array(weight, d.dtype)
        np.add(d, t, out=d)
    else:
        t *= _scalar_array(1 - weight, d.dtype)
        np.subtract(e, t, out=d)
    return True


def _fw_active() -> bool:
    """True while a forward-AD dual level is open (tangents must be tracked)."""
    return bool(_FW.active)


_FAST_INPLACE = {
    "add_": _fast_arith(np.add), "sub_": _fast_arith(np.subtract),
    "mul_": _fast_arith(np.multiply), "div_": _fast_arith(np.true_divide),
    "addcmul_": _fast_addc(np.multiply), "addcdiv_": _fast_addc(np.true_divide),
    "lerp_": _fast_lerp,
}


def _write_plain(self, res):
    """In-place write outside any graph (no_grad updates, optimizers)."""
    _check_inplace_leaf(self)
    sd = self._data.dtype
    if res._data.dtype != sd and not _can_cast(res._data.dtype, sd):
        return _inplace(self, res)
    if res._data.shape != self._data.shape:
        return _inplace(self, res)
    np.copyto(self._data, res._data, casting="unsafe")
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, res)
    return self
