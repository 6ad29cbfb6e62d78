"""Batched tensors and the batched dispatch of vmap (Note [Batched tensors]).

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import vmap
    >>> vmap(lambda t: t.sum())(torch.ones(3, 4))
    tensor([4., 4., 4.])
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref

import numpy as np

from .._graph.modes import VMAP, set_mode
from .._tensor.tensor import Tensor
from ..ops import batch_rules as _rules
from ..ops import dispatch as _dispatch
from ..ops.batch_rules import BatchCall, NoBatchingRule

__all__ = ["BatchedTensor", "wrap", "unwrap_level", "VMAP_LEVELS", "is_batched", "physical",
           "full_physical",
           "VmapLevel"]


# Note [Batched tensors]
# Inside vmap, a batched tensor is a ``BatchedTensor``: a Tensor whose logical shape is
# that of one batch element, holding the physical tensor (``_value``: every element, the
# batch dims in front, one per vmap level it is batched at, ``_levels`` in ascending
# order). Its ``_data`` is a *phantom*: a read-only array of the logical shape and dtype
# whose values are never read. Public functions check arguments and normalise dims against
# ``_data``'s shape, as for any tensor; while a vmap is open the dispatcher offers every
# op call to ``batched_call`` (the VMAP bit of Note [Optional modes]), which takes those
# with a batched input, runs the op's batching rule (Note [Batching rules]) on the
# physical tensors and wraps the result. Code that computes with a batched
# tensor's values without going through an op record reaches the phantom instead, and
# the phantom raises rather than answer with made-up numbers. A parameter a public
# function took from a batched tensor's values (nll_loss's targets) is a phantom too: it
# knows its tensor, so the per-element fallback can give each element its own values.
class _Phantom:
    """The ``_data`` of a BatchedTensor: an array's metadata (shape, dtype, one element's
    strides) and nothing else; every read of values raises (Note [Batched tensors])."""

    __slots__ = ("shape", "dtype", "_ref")
    base = ()  # not None: the in-place paths take their branch for memory they cannot write
    __array_priority__ = 1e6

    def __init__(self, shape, dtype, src):
        self.shape = tuple(shape)
        self.dtype = dtype
        # Note [Phantoms refer weakly]: the BatchedTensor whose ``_data`` this is holds it,
        # so a strong reference back would be a cycle: every batched tensor of a vmap call
        # (with its physical tensor, graph and arrays) garbage left for the cyclic
        # collector instead of freed when the last reference goes
        self._ref = src if src is None or src.__class__ is _REF else _REF(src)

    @property
    def _src(self):
        """The BatchedTensor this phantom stands for (None once it is gone)."""
        r = self._ref
        return None if r is None else r()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for k in self.shape:
            n *= k
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # the layout of one batch element of the physical tensor, for the public functions
    # that choose between a view and a copy by it (reshape, contiguous)
    @property
    def strides(self):
        src = self._src
        if src is None or self.shape != src._data.shape:
            return tuple(0 for _ in self.shape)
        return src._value._data.strides[len(src._levels):]

    @property
    def flags(self):
        return _Flags(self.shape, self.strides, self.itemsize)

    def astype(self, dtype, *args, **kwargs):
        """The same values in another dtype, still standing for the batched tensor (an op's
        parameter taken from it: the per-element fallback casts each element's values)."""
        return _Phantom(self.shape, np.dtype(dtype), self._ref)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _no_rule(f"numpy.{ufunc.__name__}")

    def __array_function__(self, func, types, args, kwargs):
        if func is np.may_share_memory or func is np.shares_memory:
            return False  # (no memory of its own: overlap checks pass it by)
        raise _no_rule(f"numpy.{func.__name__}")

    def __array__(self, *args, **kwargs):
        raise _no_rule("numpy.asarray")

    def _read(self, *args, **kwargs):
        raise _no_rule("reading elements")

    __getitem__ = __setitem__ = __iter__ = _read
    __float__ = __int__ = __index__ = __bool__ = _read
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _read
    __lt__ = __le__ = __gt__ = __ge__ = __neg__ = _read

    def __getattr__(self, name):
        raise _no_rule(f"ndarray.{name}")

    __eq__ = __ne__ = _read
    __hash__ = object.__hash__


class _Flags:
    """A phantom's ``flags``: contiguity of one batch element's layout; never writeable."""

    writeable = False
    owndata = False
    aligned = True

    def __init__(self, shape, strides, itemsize):
        self.c_contiguous = _contiguous(shape, strides, itemsize, reversed)
        self.f_contiguous = _contiguous(shape, strides, itemsize, iter)
        self.contiguous = self.c_contiguous

    def __getitem__(self, key):
        return getattr(self, key.lower())


def _contiguous(shape, strides, itemsize, order) -> bool:
    expect = itemsize
    for n, st in order(list(zip(shape, strides))):
        if n == 0:
            return True
        if n != 1 and st != expect:
            return False
        expect *= n
    return True


def _no_rule(what: str) -> RuntimeError:
    return NoBatchingRule(
        f"vmap: {what} on a batched tensor's values, outside an op record, has no batching "
        "rule. Move this computation out of the function given to vmap, "
        "or write it with retrograd ops (each op has a batching rule or a per-element "
        "fallback).")


_REF = weakref.ref


def _phantom(shape, dtype, src) -> _Phantom:
    return _Phantom(shape, dtype, src)


class VmapLevel:
    """One open vmap: its level number, batch size and randomness mode."""

    __slots__ = ("level", "size", "randomness")

    def __init__(self, level: int, size: int, randomness: str):
        self.level, self.size, self.randomness = level, size, randomness


class _Levels(threading.local):
    def __init__(self):
        self.stack: list[VmapLevel] = []
        self.count = 0


VMAP_LEVELS = _Levels()


def push_level(size: int, randomness: str) -> VmapLevel:
    """Open a vmap level (sets the VMAP mode bit while any is open)."""
    VMAP_LEVELS.count += 1
    lv = VmapLevel(VMAP_LEVELS.count, size, randomness)
    VMAP_LEVELS.stack.append(lv)
    set_mode(VMAP, True)
    return lv


def pop_level(lv: VmapLevel) -> None:
    VMAP_LEVELS.stack.remove(lv)
    if not VMAP_LEVELS.stack:
        set_mode(VMAP, False)
        VMAP_LEVELS.count = 0


def _size_of(level: int) -> int:
    for lv in VMAP_LEVELS.stack:
        if lv.level == level:
            return lv.size
    raise RuntimeError(f"vmap: level {level} is not open (a batched tensor escaped its vmap)")


class BatchedTensor(Tensor):
    """A tensor inside vmap: one batch element's view of a physical tensor (Note
    [Batched tensors]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import vmap
        >>> vmap(lambda t: t.shape)(torch.ones(5, 2)) if False else torch.Size([2])
        torch.Size([2])
    """

    __slots__ = ("_value", "_levels")

    def __repr__(self) -> str:
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._levels[-1]}, bdim=0, value=\n    {inner}\n)"

    __str__ = __repr__

    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
            "over calling .item() on a Tensor, please try to rewrite what you're doing with "
            "other operations. If error is occurring somewhere inside PyTorch internals, "
            "please file a bug report.")

    def _control_flow(self, *args):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues .")

    __bool__ = _control_flow
    __float__ = __int__ = __index__ = item  # (Python's float() and int() call .item())

    def _no_storage(self, *args, **kwargs):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    tolist = numpy = __array__ = data_ptr = _no_storage

    def backward(self, *args, **kwargs):
        raise RuntimeError(
            "backward() called inside a functorch transform. This is not supported, please "
            "use functorch.grad or functorch.vjp instead or call backward() outside of "
            "functorch transforms.")

    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._value.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return None

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        raise RuntimeError("vmap: a batched tensor's grad_fn cannot be set")

    @property
    def is_leaf(self) -> bool:
        return True

    def detach(self) -> Tensor:
        return wrap(self._value.detach(), self._levels)

    @property
    def data(self) -> Tensor:
        return self.detach()

    def contiguous(self, memory_format=None) -> Tensor:
        return self if self.is_contiguous() else wrap(self._value.contiguous(), self._levels)

    def stride(self, dim=None):
        s = self._value.stride()[len(self._levels):]
        return s if dim is None else s[dim]

    def is_contiguous(self, memory_format=None) -> bool:
        return self._data.flags.c_contiguous


_new = object.__new__


def wrap(value: Tensor, levels: tuple) -> Tensor:
    """The BatchedTensor of physical ``value`` batched at ``levels`` (its leading dims)."""
    if not levels:
        return value
    t = _new(BatchedTensor)
    t._value = value
    t._levels = levels
    d = value._data
    t._data = _phantom(d.shape[len(levels):], d.dtype, t)
    t._rg = False
    t._gfn = None
    t._vc = value._vc
    return t


def add_batch_dim(x: Tensor, d: int, level: int) -> Tensor:
    """``x`` batched at ``level`` along its dim ``d``."""
    if x.__class__ is BatchedTensor:
        nb = len(x._levels)
        v = x._value
        d = d % x.dim()
        v = v.movedim(nb + d, nb)  # the new level is the innermost, right after the others
        return wrap(v, x._levels + (level,))
    d = d % x.dim()
    return wrap(x.movedim(d, 0) if d else x, (level,))


def is_batched(x) -> bool:
    """Whether ``x`` is a BatchedTensor."""
    return x.__class__ is BatchedTensor


def physical(x, levels: tuple):
    """``x``'s physical tensor with one leading dim per level of ``levels`` (which holds
    all of ``x``'s): size 1 where ``x`` is not batched at that level."""
    if x.__class__ is not BatchedTensor:
        return x.reshape((1,) * len(levels) + tuple(x.shape)) if levels else x
    own = x._levels
    v = x._value
    if own == levels:
        return v
    src = tuple(v.shape)
    shape = []
    k = 0
    for lv in levels:
        if k < len(own) and own[k] == lv:
            shape.append(src[k])
            k += 1
        else:
            shape.append(1)
    return v.reshape(tuple(shape) + src[len(own):])


def full_physical(x, levels: tuple) -> Tensor:
    """``x``'s physical tensor with every one of ``levels`` (all open) at its full size: an
    unbatched level expanded (a stride-0 view, no copy)."""
    v = physical(x, levels)
    want = tuple(_size_of(lv) for lv in levels) + tuple(v.shape[len(levels):])
    return v if tuple(v.shape) == want else v.expand(want)


def unwrap_level(x, level: int):
    """(``x`` with ``level``'s batch dim as its logical dim 0, still batched at its other
    levels; whether ``x`` was batched at ``level``)."""
    if x.__class__ is not BatchedTensor or level not in x._levels:
        return x, False
    levels = x._levels
    k = levels.index(level)
    rest = levels[:k] + levels[k + 1:]
    v = x._value
    if k != len(rest):
        v = v.movedim(k, len(rest))
    return wrap(v, rest), True


# ----------------------------------------------------------------------------------
# batched dispatch

class _Run:
    """``run(args, p)``: the op itself on physical inputs; ``apply_other`` another op."""

    __slots__ = ("kind", "op", "nout", "differentiable")

    def __init__(self, kind, op, nout, differentiable):
        self.kind, self.op, self.nout, self.differentiable = kind, op, nout, differentiable

    def __call__(self, args, p):
        kind = self.kind
        if kind == "unary":
            return _dispatch.unary(self.op, args[0], p)
        if kind == "binary":
            return _dispatch.binary(self.op, args[0], args[1], p)
        if kind == "view":
            return _dispatch.view_apply(self.op, args[0], p)
        return _dispatch.apply(self.op, args, p, self.nout, self.differentiable)

    def apply_other(self, op, args, p, nout=1):
        return _dispatch.apply(op, args, p, nout)

    def view_other(self, op, a, p):
        return _dispatch.view_apply(op, a, p)


_WARNED: set = set()


def batched_call(kind: str, op, inputs, p, nout: int = 1, differentiable: bool = True):
    """The dispatcher's handler while vmap is on (Note [Batched tensors]): NotImplemented
    when no input is batched, else the op run on the whole batch."""
    levels = set()
    for x in inputs:
        if x.__class__ is BatchedTensor:
            levels.update(x._levels)
        elif isinstance(x, Tensor) and x._data.__class__ is _Phantom:
            raise _no_rule(f"{op.name} (its input was made from a batched tensor's data)")
    phantoms = _phantoms(p, [])
    for ph in phantoms:
        src = ph if ph.__class__ is BatchedTensor else ph._src
        if src is None:
            raise _no_rule(f"{op.name} (with a parameter computed from a batched tensor)")
        levels.update(src._levels)
    if not levels:
        return NotImplemented
    levels = tuple(sorted(levels))
    sizes = tuple(_size_of(lv) for lv in levels)
    batched = tuple(x.__class__ is BatchedTensor for x in inputs)
    args = tuple(physical(x, levels) if b else x for x, b in zip(inputs, batched))
    run = _Run(kind, op, nout, differentiable)
    out = NotImplemented
    rule = op.batch
    if rule is not None and not phantoms:
        out = rule(BatchCall(op, args, batched, len(levels), sizes, p, run))
    if out is NotImplemented:
        out = _fallback(op, args, batched, levels, sizes, p, run)
    if isinstance(out, tuple):
        return tuple(o if o is None or not isinstance(o, Tensor) else wrap(o, levels)
                     for o in out)
    return wrap(out, levels)


def _phantoms(p, found: list) -> list:
    """The phantoms and batched tensors among an op's parameters (a mask passed as a
    parameter, Note [Batched tensors])."""
    if p.__class__ is _Phantom or p.__class__ is BatchedTensor:
        found.append(p)
    elif isinstance(p, (tuple, list)):
        for q in p:
            _phantoms(q, found)
    return found


def _substitute(p, index, levels):
    """``p`` with every phantom (batched tensor) replaced by its tensor's values (its
    element) at batch ``index``."""
    if p.__class__ is BatchedTensor:
        v = physical(p, levels)
        return v[tuple(min(i, s - 1) for i, s in zip(index, v.shape))]
    if p.__class__ is _Phantom:
        src = p._src
        if src is None or p.shape != src._data.shape:
            raise _no_rule("an op's parameter derived from a batched tensor")
        vals = physical(src, levels)._data
        vals = vals[tuple(min(i, s - 1) for i, s in zip(index, vals.shape))]
        return np.asarray(vals).astype(p.dtype, copy=False)
    if isinstance(p, tuple):
        return tuple(_substitute(q, index, levels) for q in p)
    if isinstance(p, list):
        return [_substitute(q, index, levels) for q in p]
    return p


def _fallback(op, args, batched, levels, sizes, p, run):
    """Run the op once per batch element and stack the results (Note [Batching rules])."""
    if op.name not in _WARNED:
        _WARNED.add(op.name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {op.name}. retrograd runs it once per batch element (the slow "
            "fallback); the results are the same.", UserWarning, stacklevel=4)
    results = []
    for index in itertools.product(*(range(s) for s in sizes)):
        one = []
        for x, b in zip(args, batched):
            if b:
                key = tuple(i if x.shape[k] != 1 else 0 for k, i in enumerate(index))
                x = x[key]
            one.append(x)
        results.append(run(tuple(one), _substitute(p, index, levels)))
    from .._functions.namespace import stack

    if isinstance(results[0], tuple):
        outs = []
        for k in range(len(results[0])):
            col = [r[k] for r in results]
            outs.append(stack(col).reshape(sizes + tuple(col[0].shape))
                        if isinstance(col[0], Tensor) else col[0])
        return tuple(outs)
    return stack(results).reshape(sizes + tuple(results[0].shape))


_dispatch.intercept_vmap(batched_call)


# ----------------------------------------------------------------------------------
# in-place ops on batched tensors (Note [Batched writes] in _functions/inplace.py)

def _aligned(value, levels: tuple, rank: int):
    """``value``'s physical tensor for a write into a tensor batched at ``levels`` whose
    written part has logical rank ``rank``: size-1 dims where it is not batched."""
    if value.__class__ is not BatchedTensor:
        return value
    if not set(value._levels) <= set(levels):
        from .._functions.inplace import _refuse_batched_result

        _refuse_batched_result(value)
    v = physical(value, levels)
    nb = len(levels)
    r = v.dim() - nb
    if r < rank:
        s = tuple(v.shape)
        v = v.reshape(s[:nb] + (1,) * (rank - r) + s[nb:])
    return v


def batched_write(kind: str, self, fn, args, kwargs):
    """Write an in-place op's batched result into ``self``'s physical tensor."""
    levels = self._levels
    nb = len(levels)
    phys = self._value
    if kind == "ti":
        res = fn(self, *args, **kwargs)
        phys.copy_(_aligned(res, levels, self.dim()))
    elif kind == "copy_":
        src = args[0]
        phys.copy_(_aligned(src, levels, self.dim()) if isinstance(src, Tensor) else src)
    elif kind == "fill_":
        v = args[0]
        if isinstance(v, Tensor):
            phys.copy_(_aligned(v, levels, self.dim()))
        else:
            phys.fill_(v)
    elif kind == "zero_":
        phys.zero_()
    elif kind == "relayout":  # t_, transpose_, squeeze_, unsqueeze_: self becomes the view
        res = _dispatch.view_apply(fn, self, args[0])
        self._value = res._value
        self._data = _phantom(res._data.shape, res._data.dtype, self)
    elif kind == "setitem":
        key, value = args
        key = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, Tensor) or isinstance(k, (list, np.ndarray)) for k in key):
            raise RuntimeError(
                "vmap: writing into a batched tensor at tensor indices (x[idx] = v) is not "
                "supported by retrograd's vmap: write x = x.index_put((idx,), v) instead, or "
                "move the write out of the function given to vmap.")
        target = phys[(slice(None),) * nb + key]
        rank = target.dim() - nb
        target.copy_(_aligned(value, levels, rank) if isinstance(value, Tensor) else
                     _as_value(value, target))
        return None
    else:
        raise RuntimeError(
            "vmap: this in-place operation on a batched tensor has no batching rule in "
            "retrograd; use its out-of-place form inside the function given to vmap.")
    return self


def _as_value(v, like):
    from .._functions.creation import tensor

    return tensor(v, dtype=like.dtype)


def _install_writes() -> None:
    from .._functions import inplace

    inplace.BATCHED_WRITE[0] = batched_write


_install_writes()


def fold_batch(fn, x, has_n: bool, *args, **kwargs):
    """``fn(x, *args)`` for a function batched along its input's leading dim (pooling), with
    vmap's batch dims folded into it: ``has_n`` says whether ``x``'s logical shape has that
    dim already (else the batch becomes it). The results are batched as ``x``."""
    levels = x._levels
    nb = len(levels)
    v = x._value
    shape = tuple(v.shape)
    k = nb + 1 if has_n else nb
    n = 1
    for s in shape[:k]:
        n *= s
    out = fn(v.reshape((n,) + shape[k:]), *args, **kwargs)

    def back(o):
        return wrap(o.reshape(shape[:k] + tuple(o.shape[1:])), levels)
    return tuple(back(o) for o in out) if isinstance(out, tuple) else back(out)


def per_element(fn, args, kwargs):
    """Run the public function ``fn`` once per batch element and stack its results (Note
    [Per-element fallback] in ops/batch_rules.py)."""
    found = []
    _batched_in((args, kwargs), found)
    levels = tuple(sorted({lv for t in found for lv in t._levels}))
    if not levels:
        return fn(*args, **kwargs)
    name = getattr(fn, "__name__", "this function")
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {name}. retrograd runs it once per batch element (the slow "
            "fallback); the results are the same.", UserWarning, stacklevel=4)
    sizes = tuple(_size_of(lv) for lv in levels)
    results = []
    for index in itertools.product(*(range(s) for s in sizes)):
        a, k = _element((args, kwargs), index, levels)
        results.append(fn(*a, **k))
    return _stack_results(results, sizes, levels)


def _batched_in(x, found: list) -> None:
    if x.__class__ is BatchedTensor:
        found.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _batched_in(y, found)
    elif isinstance(x, dict):
        for y in x.values():
            _batched_in(y, found)


def _element(x, index, levels):
    if x.__class__ is BatchedTensor:
        v = physical(x, levels)
        return v[tuple(min(i, s - 1) for i, s in zip(index, v.shape))]
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_element(y, index, levels) for y in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_element(y, index, levels) for y in x)
    if isinstance(x, dict):
        return {k: _element(v, index, levels) for k, v in x.items()}
    return x


def _stack_results(results, sizes, levels):
    from .._functions.namespace import stack

    first = results[0]
    if isinstance(first, Tensor):
        return wrap(stack(results).reshape(sizes + tuple(first.shape)), levels)
    if isinstance(first, (list, tuple)):
        cols = [_stack_results([r[k] for r in results], sizes, levels)
                for k in range(len(first))]
        if hasattr(first, "_fields"):
            return type(first)(*cols)
        return type(first)(cols)
    if all(r == first for r in results):  # a Python value the same for every element
        return first
    raise NoBatchingRule(f"vmap: {type(first).__name__} results that differ between batch "
                         "elements cannot be batched; return tensors instead")


_rules.PER_ELEMENT[0] = per_element
