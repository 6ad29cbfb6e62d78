"""Fusing runs of elementwise calls of a plan into one Numba kernel (Note [Fusion]).

Note [Fusion]
A plan calls NumPy once per operation; on small arrays each call costs far more than
its arithmetic. With ``compile(..., mode="max-autotune")`` (or ``options={"fuse":
True}``) and Numba installed (``pip install 'retrograd[compile]'``), a run of
consecutive elementwise calls over arrays of one shape and floating dtype becomes one
loop compiled by Numba: each element is read once, every intermediate stays in a
register, and only the values read after the run (or leaving the plan) are written.
Fusible calls are NumPy's arithmetic and transcendental ufuncs with Python numbers or
same-shaped arrays as operands, and the op kernels whose arithmetic is written out
here (tanh, sigmoid and threshold backward), each as the same operations in the same
order and dtype as the NumPy code: a Python number is cast to the dtype first, as
NumPy's weak scalars are. Arithmetic is IEEE (no fast-math, NumPy's error model: a
division by zero gives inf); transcendental functions come from LLVM's math library
rather than NumPy's SIMD loops, so they may differ in the last bit. Kernels are cached
by their source, so the second trace of a function compiles nothing new.

Example:
    >>> from retrograd._compile.fuse import ELEMENTWISE
    >>> ELEMENTWISE["multiply"].format("a", "b")
    '(a * b)'
"""

from __future__ import annotations

import numpy as np

from . import record as R

#: NumPy ufunc -> the expression of one element (``{0}``, ``{1}``: the operands)
ELEMENTWISE = {
    "add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
    "divide": "({0} / {1})", "negative": "(-{0})", "positive": "(+{0})",
    "square": "({0} * {0})", "sqrt": "np.sqrt({0})", "exp": "np.exp({0})",
    "log": "np.log({0})", "sin": "np.sin({0})", "cos": "np.cos({0})", "tan": "np.tan({0})",
    "tanh": "np.tanh({0})", "sinh": "np.sinh({0})", "cosh": "np.cosh({0})",
    "log1p": "np.log1p({0})", "expm1": "np.expm1({0})", "absolute": "np.abs({0})",
}
#: op kernels written out (their NumPy code's operations, in its order)
KERNELS = {
    "tanh_backward": "((ONE - ({1} * {1})) * {0})",
    "sigmoid_backward": "(({0} * (ONE - {1})) * {1})",
    "threshold_backward": "(ZERO if {1} <= ZERO else {0})",
}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: arrays larger than this stay with NumPy: its SIMD loops for exp/tanh/sin beat the
#: scalar math library a fused loop calls, and a pass over memory costs more than a call
MAX_ELEMENTS = 16384
#: shorter runs stay with NumPy: calling a Numba kernel costs about as much as four
#: small ufunc calls (measured here: 5-6 us against 1-1.5 us)
MIN_RUN = 4
_CACHE: dict = {}


def available() -> bool:
    """Whether Numba can be imported here."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _expr_of(ev) -> str | None:
    if ev.fn.__class__ is np.ufunc:  # (by the ufunc's own name: op records name it too)
        return ELEMENTWISE.get(ev.fn.__name__) if ev.fn.nout == 1 else None
    return KERNELS.get(ev.name)


def _fusible(ev, slots):
    """The (shape, dtype) a call computes over, if it can join a fused run."""
    if ev.shape != "one" or ev.writes or not ev.pure or ev.kwargs or len(ev.outs) != 1:
        return None
    if _expr_of(ev) is None:
        return None
    out = slots[ev.outs[0]]
    if out.dtype not in _FLOATS or out.origin != "event" or \
            int(np.prod(out.shape)) > MAX_ELEMENTS:
        return None
    for a in ev.args:
        if a.__class__ is R.Slot:
            info = slots[a.n]
            if info.shape != out.shape or info.dtype != out.dtype:
                return None
        elif a.__class__ is R.Const:  # a number NumPy holds: one of the dtype only
            v = a.value
            if not isinstance(v, (np.ndarray, np.generic)) or v.shape != () or \
                    v.dtype != out.dtype:
                return None
        elif a.__class__ not in (int, float):
            return None
    return (out.shape, out.dtype.str)


def groups(events, slots, keep) -> list:
    """Runs of kept fusible calls over one shape and dtype (``MIN_RUN`` or more). A run steps over
    a call that does not depend on it (a pure call reading none of the run's results:
    the ``expand`` that starts a backward pass); the fused kernel runs where the run's
    last call was, after the calls it stepped over."""
    out: list = []
    run: list = []
    made: set = set()
    key = None
    for i, ev in enumerate(events):
        if not keep[i]:
            continue
        k = _fusible(ev, slots)
        if k is not None and k == key:
            run.append(i)
            made.update(ev.outs)
            continue
        if run and ev.pure and not ev.writes and ev.shape != "check" and \
                not any(s.n in made for s in R.walk_tree((ev.args, ev.kwargs), R.Slot)):
            continue  # independent of the run: the run goes on past it
        if len(run) >= MIN_RUN:
            out.append(run)
        run, key = ([i], k) if k is not None else ([], None)
        made = set(ev.outs) if k is not None else set()
    if len(run) >= MIN_RUN:
        out.append(run)
    return out


class FusedRun:
    """One fused run: its events, the slots it reads and writes, and its kernel."""

    def __init__(self, run: list, events, slots, read_after: set):
        self.events = run
        made = [events[i].outs[0] for i in run]
        inside = set(made)
        self.inputs: list = []
        for i in run:
            for a in events[i].args:
                if a.__class__ is R.Slot and a.n not in inside and a.n not in self.inputs:
                    self.inputs.append(a.n)
        self.outputs = [n for n in made if n in read_after]
        info = slots[made[0]]
        self.shape, self.dtype = info.shape, info.dtype
        self.source = self._source(events, slots)
        self.kernel = _compiled(self.source, self.dtype, tuple(self.consts))

    def _source(self, events, slots) -> str:
        names = {n: f"a{k}" for k, n in enumerate(self.inputs)}
        consts: list = []
        lines = [f"def kernel(n, {', '.join(f'i{k}' for k in range(len(self.inputs)))}"
                 f"{', ' if self.inputs else ''}"
                 f"{', '.join(f'o{k}' for k in range(len(self.outputs)))}):",
                 "    for j in range(n):"]
        for k, _n in enumerate(self.inputs):
            lines.append(f"        a{k} = i{k}[j]")

        def operand(a) -> str:
            if a.__class__ is R.Slot:
                return names[a.n]
            if a.__class__ is R.Const:
                a = a.value.item()
            consts.append(a)  # a Python number: cast to the dtype, as NumPy's weak scalars
            return f"C{len(consts) - 1}"
        for i in self.events:
            ev = events[i]
            expr = _expr_of(ev)
            n = ev.outs[0]
            names[n] = f"t{n}"
            lines.append(f"        t{n} = {expr.format(*[operand(a) for a in ev.args])}")
        for k, n in enumerate(self.outputs):
            lines.append(f"        o{k}[j] = {names[n]}")
        self.consts = consts
        return "\n".join(lines) + "\n"


def _compiled(source: str, dtype, consts: tuple):
    key = (source, dtype.str, repr(consts))
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    import numba

    env = {"np": np, "ONE": dtype.type(1), "ZERO": dtype.type(0)}
    for k, c in enumerate(consts):
        env[f"C{k}"] = dtype.type(c)
    ns: dict = {}
    exec(compile(source, "<retrograd.compile fused kernel>", "exec"), env, ns)
    fn = numba.njit(cache=False, fastmath=False, error_model="numpy")(ns["kernel"])
    _CACHE[key] = fn
    return fn


def run_fused(kernel, shape, dtype, nout: int, *inputs):
    """Call a fused kernel: flat views of the inputs in, new arrays out."""
    outs = [np.empty(shape, dtype) for _ in range(nout)]  # (a run has one at least)
    kernel(outs[0].size, *[np.ascontiguousarray(x).reshape(-1) for x in inputs],
           *[o.reshape(-1) for o in outs])
    return outs
