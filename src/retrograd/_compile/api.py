"""``retrograd.compile``: trace a call once, replay it as a plan (Note [Tracing]).

Note [Compiled functions]
A ``CompiledFunction`` keeps a few entries, one per set of guards (Note [Guards] in
state.py). A call whose guards match no entry is traced (it runs eagerly, recording)
and makes a candidate entry; a trace with a graph break (Note [Graph breaks] in
trace.py) makes an entry that runs eagerly. After ``recompile_limit`` entries (8, as
torch._dynamo's ``config.recompile_limit``) further misses run eagerly with PyTorch's
warning.

Note [Second trace]
The tracer cannot see an array that Python code copied out of a traced one through a
path NumPy does not report (``np.array(x)`` of a traced array, a C extension): such an
array becomes a constant of the plan. So a candidate is not trusted at once: the next
call with the same guards is traced again and the two plans must be the same code over
the same constants (arrays compared by value). A constant that changed between the two
calls is one the trace depends on without following it; the entry then runs eagerly,
and ``explain`` says so. From the third call on, the plan replays.

Example:
    >>> import retrograd as torch
    >>> @torch.compile
    ... def f(x):
    ...     return (x * 2).sin()
    >>> [f(torch.ones(2) * k) for k in range(3)][-1]
    tensor([-0.7568, -0.7568])
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import record as R
from .plan import Plan, PlanError, ReplayMiss
from .state import flatten
from .trace import trace_call


class Unsupported(RuntimeError):
    """A graph break under ``fullgraph=True`` (torch._dynamo.exc.Unsupported)."""


class _Config:
    """torch._dynamo.config's knobs that retrograd's compiler reads."""

    recompile_limit = 8
    verify = True  # Note [Second trace]


config = _Config()


@dataclass
class Entry:
    """One set of guards and what to do when they hold."""

    treedef: object
    guards: object
    candidate: Plan | None = None
    plan: Plan | None = None
    eager: bool = False
    reasons: list = field(default_factory=list)  # (reason, user line)
    replays: int = 0
    misses: int = 0


class CompiledFunction:
    """What ``retrograd.compile(fn)`` returns for a function (Note [Compiled functions])."""

    def __init__(self, fn, fullgraph: bool = False, dynamic=None, backend=None,
                 disable: bool = False, fuse: bool = False):
        self._fn = fn
        self.fuse = fuse
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend = backend
        self.disabled = disable or backend == "eager" or \
            getattr(fn, "_retrograd_compile_disabled", False)
        self.entries: list[Entry] = []
        self.recompile_reasons: list = []
        self._warned = False
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        fn = self._fn
        if self.disabled or R.REC[0].active:  # (a compiled call inside a trace is traced)
            return fn(*args, **kwargs)
        leaves, treedef = flatten(args, kwargs)
        entries = self.entries
        for i, e in enumerate(entries):
            if e.treedef == treedef and e.guards.check(leaves):
                if i:  # the entry that fits goes first: a steady loop checks one set
                    entries.insert(0, entries.pop(i))
                if e.plan is not None:
                    e.replays += 1
                    try:
                        return e.plan.run(leaves)
                    except ReplayMiss as miss:
                        return self._missed(e, miss, args, kwargs)
                if e.eager:
                    return fn(*args, **kwargs)
                return self._second_trace(e, args, kwargs)
        if self.entries:
            reason = next((e.guards.explain_miss(leaves) for e in self.entries
                           if e.treedef == treedef), "the structure of the arguments changed")
            self.recompile_reasons.append(reason)
        if len(self.entries) >= config.recompile_limit:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})\n"
                    f"   function: {getattr(fn, '__qualname__', fn)!r}\n"
                    f"   last reason: {self.recompile_reasons[-1]}\n"
                    "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
                    "To diagnose recompilation issues, see https://pytorch.org/docs/main/"
                    "torch.compiler_troubleshooting.html (retrograd: the function now runs "
                    "eagerly when no cached plan fits; "
                    "retrograd.compiler.explain lists the reasons)", stacklevel=2)
            return fn(*args, **kwargs)
        tr = self._trace(args, kwargs)
        e = Entry(treedef, tr.guards)
        self.entries.append(e)
        if tr.breaks:
            e.eager = True
            e.reasons = tr.breaks
        else:
            try:
                e.candidate = Plan(tr, fuse=self.fuse)
            except PlanError as err:
                e.eager = True
                e.reasons = [(str(err), "?")]
                return tr.result
            if not config.verify:
                e.plan = e.candidate
        return tr.result

    def _missed(self, e: Entry, miss, args, kwargs):
        """A replay stopped at a check (Note [Value reads]): this call runs eagerly; a
        plan whose checks keep failing is given up."""
        e.misses += 1
        if e.misses >= config.recompile_limit:
            ev = e.plan.trace.rec.events[miss.args[0]]
            e.plan = None
            e.eager = True
            e.reasons = [(f"{ev.meta['what']}, in retrograd/{ev.meta['site']}, saw other "
                          f"values than the trace {e.misses} times", "?")]
        return self._fn(*args, **kwargs)

    def _trace(self, args, kwargs):
        try:
            return trace_call(self._fn, args, kwargs, fullgraph=self.fullgraph)
        except R.BreakRead as err:
            raise Unsupported(
                f"graph break under fullgraph=True: {err}. The function needs a tensor's "
                "value in Python there; move that out of the compiled function, or "
                "compile without fullgraph=True to run it eagerly.") from None

    def _second_trace(self, e: Entry, args, kwargs):
        tr = self._trace(args, kwargs)
        if tr.breaks:
            e.eager = True
            e.reasons = tr.breaks
            return tr.result
        try:
            plan = Plan(tr, fuse=self.fuse)
        except PlanError as err:
            e.eager = True
            e.reasons = [(str(err), "?")]
            e.candidate = None
            return tr.result
        why = _differs(e.candidate, plan)
        if why:
            e.eager = True
            e.reasons = [(why, "?")]
        else:
            e.plan = plan
        e.candidate = None
        return tr.result


def _differs(a: Plan, b: Plan) -> str:
    """Why two plans of the same guards are not the same (Note [Second trace])."""
    if a.source != b.source:
        return ("the second trace recorded other calls than the first: the function's "
                "work depends on something the guards do not cover")
    for k, va in a.env.items():
        vb = b.env.get(k)
        if va is vb:
            continue
        if isinstance(va, np.ndarray) and isinstance(vb, np.ndarray):
            if va.shape == vb.shape and va.dtype == vb.dtype and \
                    va.tobytes() == vb.tobytes():
                continue
            return (f"an array the trace could not follow changed between two calls "
                    f"(constant {k}, shape {tuple(va.shape)}): the function computes it "
                    "from a tensor by a path the tracer does not see")
        try:
            if type(va) is type(vb) and va == vb:
                continue
        except Exception:
            pass
        return f"a constant of the plan changed between two calls ({k}: {va!r} -> {vb!r})"
    return ""
