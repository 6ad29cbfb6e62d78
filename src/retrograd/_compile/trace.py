"""Running one call of a function under the recorder (Note [Tracing] in record.py).

Note [Graph breaks]
torch.compile splits a function at Python code that needs a tensor's value (``.item()``,
``bool(t)``, ``.tolist()``, printing, NumPy conversion) and runs that code eagerly.
retrograd's tracer records while the call runs eagerly, so at such a point it stops
recording and the call simply goes on: its results are eager results. The trace is
then *broken*; the function runs eagerly whenever these guards hold (``explain``
lists each break with the user's line and the reason; ``fullgraph=True`` raises at the
first one instead). Other reasons a trace cannot become a plan are breaks too: Python
state the function changed (a replay would not change it again), a tensor's
requires_grad or grad_fn changed, a gradient with a graph of its own (create_graph
into ``.grad``), an output that autograd would differentiate later.

Note [Stores]
A training step often keeps a tensor in Python state: ``state["loss"] = loss``,
``self.last = out.detach()``, ``history[k] = p.grad``. torch.compile replays such
stores after its graph; so does a plan. The walk of reachable state (Note [Guards] in
state.py) is taken before and after the trace; a dict item or an attribute that now
holds a tensor the plan can name (a new tensor over one of its arrays, an input
tensor, an input's new ``.grad``) becomes a store the replay repeats, with the same
object wherever the eager call put it (one new tensor per eager tensor). Any other
change of Python state (a counter, an appended list, a removed key) is a graph break.

Example:
    >>> import retrograd as torch
    >>> from retrograd._compile.trace import trace_call
    >>> x = torch.ones(3)
    >>> t = trace_call(lambda v: (v * 2).sin(), (x,), {})
    >>> [e.name for e in t.rec.events], t.breaks
    (['mul', 'sin'], [])
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from .._core.grad_mode import STATE
from .._random import rng
from .._tensor import tensor as _T
from .._tensor.tensor import Tensor
from ..ops import buffers as _buffers
from ..ops.op import DIRECT_KERNELS, REGISTRY
from . import record as R
from .state import Reach, build_guards, fingerprint, reach

R._TENSOR[0] = Tensor
_ndarray = np.ndarray


@dataclass
class Trace:
    """What one traced call left: the log, the inputs, and what a replay must redo."""

    rec: R.Recorder
    found: Reach
    guards: object
    result: object = None  # the eager result, returned to the caller
    ext: list = field(default_factory=list)  # (slot, accessor)
    grads: list = field(default_factory=list)  # (tensor accessor, slot or None)
    rebinds: list = field(default_factory=list)  # (tensor accessor, slot)
    bumps: list = field(default_factory=list)  # (tensor accessor, delta)
    stores: list = field(default_factory=list)  # (container, key, kind, template)
    out: object = None  # the output template
    breaks: list = field(default_factory=list)  # (reason, user line)
    # Note [Compiled backward]: the event that starts the traced backward part, the
    # slots of its incoming gradients, the inputs it differentiates (accessors) and the
    # slots of their gradients (None: unused); the differentiated outputs' ids, in order
    bw_start: int = -1
    bw_grads: list = field(default_factory=list)
    bw_ins: list = field(default_factory=list)
    bw_outs: list = field(default_factory=list)
    diff_outs: list = field(default_factory=list)


class Out:
    """An output tensor of a plan: a new tensor over slot ``n`` (``k``: its number among
    the plan's new tensors, one object wherever the eager code put it; ``d``: its number
    among the outputs a compiled backward differentiates, or -1)."""

    __slots__ = ("n", "rg", "k", "d")

    def __init__(self, n: int, rg: bool, k: int = 0, d: int = -1):
        self.n, self.rg, self.k, self.d = n, rg, k, d


class GradOf:
    """An output (or stored value) that is an input tensor's new ``.grad``."""

    __slots__ = ("acc",)

    def __init__(self, acc):
        self.acc = acc


class Same:
    """An output that is one of the inputs' tensors, returned as itself."""

    __slots__ = ("acc",)

    def __init__(self, acc):
        self.acc = acc


_WRAPPERS: dict = {}


def _install(rec: R.Recorder, gens: list) -> list:
    """Turn the hooks on (Note [Tracing]); returns what ``_uninstall`` puts back."""
    saved = []
    for op in REGISTRY:
        fwd = op.fwd
        if fwd is None:
            continue
        w = _WRAPPERS.get(id(op))
        if w is None or w.__wrapped__ is not fwd:
            w = _WRAPPERS[id(op)] = R.kernel_wrapper(op.name, fwd)
        saved.append((op, fwd))
        op.fwd = w
    for mod, name in DIRECT_KERNELS:  # Note [Direct kernels] (ops/op.py)
        m = sys.modules[mod]
        fn = getattr(m, name)
        w = _WRAPPERS.get((mod, name))
        if w is None or w.__wrapped__ is not fn:
            w = _WRAPPERS[(mod, name)] = R.kernel_wrapper(name, fn)
        saved.append((m, fn, name))
        setattr(m, name, w)
    for name in R.CONVERSIONS:  # Note [Tracing], 2: conversions NumPy does not report
        fn = getattr(np, name)
        w = _WRAPPERS.get(("numpy", name))
        if w is None or w.__wrapped__ is not fn:
            w = _WRAPPERS[("numpy", name)] = R.conversion_wrapper(name, fn)
        saved.append((np, fn, name))
        setattr(np, name, w)
    _T.set_trace_adopt(rec.adopt)
    bits = []
    for g in gens:
        if g.bits.__class__ is not R.BitsProxy:
            bits.append((g, g.bits))
            g.bits = R.BitsProxy(g, g.bits)
    pool = _buffers.configure(enabled=False)
    value_reads = _patch_value_reads()
    gen_init = rng.Generator.__init__

    def init(self, *a, _init=gen_init, **k):
        _init(self, *a, **k)
        R.REC[0].value_read("a torch.Generator made inside the compiled function (a replay "
                            "would carry its state over from the last call)")
    rng.Generator.__init__ = init
    reseeds = []
    for name in ("manual_seed", "seed", "set_state"):
        fn = getattr(rng.Generator, name)
        reseeds.append((name, fn))

        def reseed(self, *a, _fn=fn, _name=name, **k):
            R.REC[0].value_read(f"Generator.{_name}() inside the compiled function (a "
                                "replay would not reseed)")
            return _fn(self, *a, **k)
        setattr(rng.Generator, name, reseed)
    return [saved, bits, pool, value_reads, gen_init, reseeds]


def _uninstall(undo: list) -> None:
    saved, bits, pool, value_reads, gen_init, reseeds = undo
    rng.Generator.__init__ = gen_init
    for name, fn in reseeds:
        setattr(rng.Generator, name, fn)
    for item in saved:
        if len(item) == 2:
            item[0].fwd = item[1]
        else:
            setattr(item[0], item[2], item[1])
    _T.set_trace_adopt(None)
    for g, b in bits:
        g.bits = b
    _buffers.configure(**pool)
    for name, fn in value_reads:
        setattr(Tensor, name, fn)


def _patch_value_reads() -> list:
    """``Tensor.numpy()`` and ``numpy.asarray(t)`` of a traced tensor are breaks (they
    hand the array to code the tracer does not see)."""
    old = []
    for name, what in (("numpy", ".numpy()"), ("__array__", "numpy.asarray(tensor)")):
        fn = getattr(Tensor, name)
        old.append((name, fn))

        def patched(self, *a, _fn=fn, _what=what, **k):
            if self._data.__class__ is R.TracedArray:
                R.REC[0].value_read(f"NumPy conversion ({_what})")
                out = _fn(self, *a, **k)
                return _ndarray.view(out, _ndarray) if out.__class__ is R.TracedArray else out
            return _fn(self, *a, **k)
        setattr(Tensor, name, patched)
    return old


def _plain(a):
    return _ndarray.view(a, _ndarray) if a.__class__ is R.TracedArray else a


def trace_call(fn, args: tuple, kwargs: dict, fullgraph: bool = False) -> Trace:
    """Call ``fn(*args, **kwargs)`` eagerly while recording it (Note [Tracing])."""
    found = reach(fn, args, kwargs)
    guards = build_guards(fn, found)
    before = fingerprint(found)
    rec = R.Recorder(fullgraph)
    tr = Trace(rec, found, guards)
    # the inputs: the arguments' tensors, then the other tensors the function reaches
    tensors: list = []  # (accessor, tensor)
    seen: set = set()
    for i, leaf in enumerate(found.leaves):
        if isinstance(leaf, Tensor) and id(leaf) not in seen:
            seen.add(id(leaf))
            tensors.append((("leaf", i), leaf))
    for _label, t in found.tensors:
        if id(t) not in seen:
            seen.add(id(t))
            tensors.append((("obj", t), t))
    labels = {id(t): label for label, t in found.tensors}
    restore = []
    grads0 = {}
    vcs = {}
    for acc, t in tensors:
        label = labels.get(id(t), "?")
        for what, holder in (("data", t), ("grad", t._grad)):
            if holder is None:
                continue
            d = holder._data
            if not isinstance(d, _ndarray):  # a meta tensor: no data to follow
                continue
            d = _plain(d)
            restore.append((holder, d))
            holder._data = rec.external(d, label if what == "data" else label + ".grad")
            tr.ext.append((holder._data._slot, (acc, what)))
            if id(holder._vc) not in vcs:
                vcs[id(holder._vc)] = ((acc, what), holder, holder._vc[0])
        grads0[id(t)] = t._grad
    gens = [rng.default_generator] + list(found.generators)
    undo = _install(rec, gens)
    try:
        with rec:
            result = fn(*args, **kwargs)
            if not rec.breaks and STATE.enabled:
                _trace_backward(tr, rec, result, tensors)
    except R.BreakRead:
        _uninstall(undo)
        _restore(restore, tensors)
        raise
    except BaseException:
        _uninstall(undo)
        _restore(restore, tensors)
        raise
    _uninstall(undo)
    tr.result = result
    tr.breaks = list(rec.breaks)
    if not tr.breaks:
        _end_state(tr, tensors, grads0, vcs, before)
    _restore(restore, tensors)
    _plain_outputs(result)
    for _label, t in reach(fn, args, kwargs).tensors:  # new optimizer state and the like
        t._data = _plain(t._data)
        if t._grad is not None:
            t._grad._data = _plain(t._grad._data)
    return tr


def _trace_backward(tr: Trace, rec, result, tensors: list) -> None:
    """Record the backward pass of the outputs that autograd would differentiate later
    (Note [Compiled backward])."""
    outs: list = []
    stack = [result]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            if x._gfn is not None and all(x is not o for o in outs):
                outs.append(x)
        elif isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
    if not outs:
        return
    ins = [(acc, t) for acc, t in tensors if t._rg]
    if not ins:
        rec.breaks.append(("an output has a grad_fn but no input of the call requires grad "
                           "(requires_grad_() inside the compiled function)", "?"))
        return
    from ..autograd import grad as _grad

    tr.bw_start = len(rec.events)
    gouts = []
    for i, o in enumerate(outs):
        g = rec.external(np.ones(o._data.shape, o._data.dtype), f"grad_outputs[{i}]")
        tr.bw_grads.append(g._slot)
        gouts.append(_T._make(g))
    try:
        grads = _grad(outs, [t for _, t in ins], grad_outputs=gouts, retain_graph=True,
                      allow_unused=True)
    except Exception as err:
        rec.breaks.append((f"the backward of the outputs cannot be traced ({err})"[:300],
                           "?"))
        return
    tr.bw_ins = [acc for acc, _ in ins]
    tr.bw_outs = [None if g is None else _slot_of(rec, g._data) for g in grads]
    tr.diff_outs = [id(o) for o in outs]


def _restore(restore: list, tensors: list) -> None:
    """Plain arrays for the inputs again (a tensor rebound to another array keeps it)."""
    for holder, d in restore:
        cur = holder._data
        if cur.__class__ is R.TracedArray:
            holder._data = d if _same(cur, d) else _ndarray.view(cur, _ndarray)
    for _acc, t in tensors:
        t._data = _plain(t._data)
        g = t._grad
        if g is not None:
            g._data = _plain(g._data)


def _same(a, d) -> bool:
    return a.__array_interface__["data"][0] == d.__array_interface__["data"][0] and \
        a.shape == d.shape and a.strides == d.strides and a.dtype == d.dtype


def _plain_outputs(x) -> None:
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, Tensor):
            v._data = _plain(v._data)
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())


def _end_state(tr: Trace, tensors: list, grads0: dict, vcs: dict, before: dict) -> None:
    """What a replay must redo beyond the log: new ``.grad`` tensors, arrays rebound,
    version bumps, the outputs; and the reasons a trace cannot be replayed."""
    rec = tr.rec
    own = {acc_what: n for n, acc_what in tr.ext}
    for acc, t in tensors:
        d = t._data
        if d.__class__ is R.TracedArray and d._slot is not None:
            if d._slot != own.get((acc, "data")):
                tr.rebinds.append((acc, d._slot))
        elif isinstance(d, _ndarray):
            n = rec._resolve(d)
            if n is None:
                tr.breaks.append((f"{_label(tr, t)} was given an array the trace cannot "
                                  "follow", "?"))
                return
            tr.rebinds.append((acc, n))
        g0, g1 = grads0[id(t)], t._grad
        if g1 is g0:
            continue
        if g1 is None:
            tr.grads.append((acc, None))
            continue
        if g1._rg:
            tr.breaks.append((f"{_label(tr, t)}.grad has a graph of its own (backward with "
                              "create_graph=True into .grad)", "?"))
            return
        n = _slot_of(rec, g1._data)
        if n is None:
            tr.breaks.append((f"{_label(tr, t)}.grad is an array the trace cannot follow",
                              "?"))
            return
        tr.grads.append((acc, n))
    for acc_what, holder, v0 in vcs.values():
        if holder._vc[0] != v0:
            tr.bumps.append((acc_what, holder._vc[0] - v0))
    inputs = {id(t): acc for acc, t in tensors}
    for acc, t in tensors:  # (new .grad tensors: stores and outputs may name them)
        if t._grad is not None and t._grad is not grads0[id(t)]:
            inputs[id(t._grad)] = ("grad", acc)
    memo: dict = {}
    after = fingerprint(tr.found)
    for k, (v, _where) in before.items():
        if k not in after:
            tr.breaks.append((f"the call removed Python state a replay would not remove "
                              f"again: {k}", "?"))
            return
        if k.endswith(": keys") and not set(v) <= set(after[k][0]):
            tr.breaks.append((f"the call removed items a replay would not remove again: "
                              f"{k[:-6]}", "?"))
            return
    for k, (v, where) in after.items():
        old = before.get(k)
        if old is not None and old[0] == v or k.endswith(": keys"):
            continue
        value = _stored(where)
        if where is None or not isinstance(value, Tensor):
            tr.breaks.append((f"the call changed Python state a replay would not change "
                              f"again: {k}", "?"))
            return
        tmpl = _out_template(tr, value, inputs, memo)
        if tr.breaks:
            return
        tr.stores.append((where[0], where[1], where[2], tmpl))
    tr.out = _out_template(tr, tr.result, inputs, memo)


def _stored(where):
    if where is None:
        return None
    obj, key, kind = where
    return obj.get(key) if kind == "item" else getattr(obj, key, None)


def _label(tr: Trace, t) -> str:
    for label, x in tr.found.tensors:
        if x is t:
            return label
    return "an argument"


def _slot_of(rec, d):
    if d.__class__ is R.TracedArray and d._slot is not None:
        return d._slot
    if isinstance(d, _ndarray):
        return rec._resolve(d)
    return None


def _out_template(tr: Trace, x, inputs: dict, memo: dict):
    """What a replay returns (or stores, Note [Stores]) for the eager value ``x``: an
    input tensor as itself, a new ``.grad`` as the one the replay made, a new tensor once
    per eager tensor (``memo``: the same object wherever the eager code put it)."""
    c = x.__class__
    if isinstance(x, Tensor):
        acc = inputs.get(id(x))
        if acc is not None:
            return GradOf(acc[1]) if acc[0] == "grad" else Same(acc)
        if id(x) in memo:
            return memo[id(x)]
        if x._gfn is not None and id(x) in tr.diff_outs:  # Note [Compiled backward]
            n = _slot_of(tr.rec, x._data)
            if n is None:
                tr.breaks.append(("an output is an array the trace cannot follow", "?"))
                return None
            out = memo[id(x)] = Out(n, False, len(memo), tr.diff_outs.index(id(x)))
            return out
        if x._gfn is not None:
            tr.breaks.append(("an output has a grad_fn: differentiating a compiled "
                              "function's outputs after the call is not compiled yet "
                              "(call backward() inside the function)", "?"))
            return None
        n = _slot_of(tr.rec, x._data)
        if n is None:
            tr.breaks.append(("an output is an array the trace cannot follow", "?"))
            return None
        out = memo[id(x)] = Out(n, x._rg, len(memo))
        return out
    if c is tuple or c is list:
        return c(_out_template(tr, v, inputs, memo) for v in x)
    if c is dict:
        return {k: _out_template(tr, v, inputs, memo) for k, v in x.items()}
    return R.Const(x)


__all__ = ["Trace", "trace_call", "Out", "Same", "GradOf"]
