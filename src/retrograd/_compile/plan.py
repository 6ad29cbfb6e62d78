"""A plan: a traced call as straight-line NumPy code over slots, with reused buffers.

Note [Plans]
A plan is the log of a trace (Note [Tracing] in record.py) turned into one Python
function of straight-line NumPy calls (as torch.fx turns a graph into code): no Tensor,
no dispatch, no node, no engine between the kernels. On the way:
- dead code is removed: a pure call whose results nothing reads (and that no output,
  ``.grad`` or rebound array needs);
- constants are folded: calls on constants alone were never logged, their results are
  constants of the plan;
- buffers are reused: a ufunc's result that stays inside the plan is written with
  ``out=`` into a buffer allocated once, shared with other results whose lifetimes do not
  overlap (a slot lives until its last reader, or the last reader of a view of it); an
  elementwise ufunc may write into the buffer of an input it is the last reader of (in
  place). Arrays that leave the plan (outputs, new ``.grad`` tensors, rebound ``.data``)
  are allocated fresh at every call, as eager code would, so a caller that keeps last
  step's gradient keeps its values.
- what eager code does besides NumPy calls is redone at the end: new ``.grad`` tensors,
  version-counter bumps, rebound arrays, the outputs.
``Plan.listing()`` shows the code and the buffers (``retrograd.compiler.show``).

Example:
    >>> import retrograd as torch
    >>> from retrograd._compile.trace import trace_call
    >>> from retrograd._compile.plan import Plan
    >>> x = torch.ones(3)
    >>> plan = Plan(trace_call(lambda v: (v * 2).sin(), (x,), {}))
    >>> plan.run([torch.zeros(3)])
    tensor([0., 0., 0.])
"""

from __future__ import annotations

import math
import re

import numpy as np

from .._tensor.tensor import _make
from . import fuse as FU
from . import record as R
from .trace import GradOf, Out, Same, Trace

_ufunc = np.ufunc


class ReplayMiss(Exception):
    """A check event of a replay saw another value than the trace (Note [Value reads])."""


class PlanError(Exception):
    """A trace that cannot become a plan; the message is the reason (a graph break)."""


def _escaping(tr: Trace) -> set:
    """The slots whose arrays leave the plan: new ``.grad`` arrays, rebound data, outputs
    and stored values (allocated at every call, never a reused buffer)."""
    out = set()
    for _acc, n in tr.grads:
        if n is not None:
            out.add(n)
    for _acc, n in tr.rebinds:
        out.add(n)
    out.update(x.n for x in _outs_in([tr.out] + [tmpl for *_w, tmpl in tr.stores]))
    return out


class Plan:
    """A replayable plan built from a trace (Note [Plans])."""

    def __init__(self, tr: Trace, part: str = "all", fuse: bool = False,
                 saved: list | None = None):
        self.trace = tr
        self.part = part
        self.fuse = fuse
        rec = tr.rec
        slots = rec.slots
        events = rec.events
        lo, hi = 0, len(events)
        self.saved: list = []
        self.backward = None
        if tr.bw_start >= 0:  # Note [Compiled backward]
            if part == "all":
                part = self.part = "forward"
            lo, hi = (0, tr.bw_start) if part == "forward" else (tr.bw_start, len(events))
        self.inputs: list = []
        if part == "backward":
            escaping = {n for n in tr.bw_outs if n is not None}
            self.inputs = list(saved) + list(tr.bw_grads)
        else:
            escaping = _escaping(tr)
            if part == "forward":
                self.saved = _saved_slots(tr, slots, events)
                escaping.update(self.saved)
        # views of escaping arrays make their bases escape (they share memory)
        for n in range(len(slots) - 1, -1, -1):
            if n in escaping and slots[n].alias >= 0:
                escaping.add(slots[n].alias)
        written = set()
        for ev in events[lo:hi]:
            written.update(ev.writes)
        for n in range(len(slots) - 1, -1, -1):  # a write into a view writes its base
            if n in written and slots[n].alias >= 0:
                written.add(slots[n].alias)
        self.escaping = escaping
        if part == "backward":
            checks = [ev for ev in events[lo:hi] if ev.shape == "check"]
            if checks:
                raise PlanError(f"{checks[0].meta['what']}, in retrograd/"
                                f"{checks[0].meta['site']}, reads a value in the backward "
                                "pass, which a compiled backward cannot fall back from")
            self.rewind, self.rewind_arrays = [], []
        else:
            self.rewind, self.rewind_arrays = _check_order(events[:hi], slots, rec.drawn)
        # dead code: keep impure calls, writes, and what kept calls or outputs read
        needed = set(escaping)
        keep = [False] * len(events)
        for i in range(hi - 1, lo - 1, -1):
            ev = events[i]
            if not ev.pure or ev.writes or any(o in needed for o in ev.outs):
                keep[i] = True
                for s in R._slots_in(ev.args):
                    needed.add(s.n)
                for s in R._slots_in(ev.kwargs):
                    needed.add(s.n)
        self.keep = keep
        self.removed = (hi - lo) - sum(keep)
        # liveness: the last event that reads a slot or a view of it
        last = [-1] * len(slots)
        for i, ev in enumerate(events):
            if not keep[i]:
                continue
            for s in _reads(ev):
                last[s] = i
        for n in range(len(slots) - 1, -1, -1):
            a = slots[n].alias
            if a >= 0 and last[n] > last[a]:
                last[a] = last[n]
        self.last = last
        self.fused_at: dict = {}  # Note [Fusion] (fuse.py): last event -> its run
        self.fused: set = set()
        if fuse:
            self._fuse(events, slots, keep, escaping)
        self._assign_buffers(events, slots, escaping, last,
                             [k and i not in self.fused for i, k in enumerate(keep)])
        self.fresh_copy = {n for n, info in enumerate(slots)
                           if info.origin == "fresh" and (n in written or n in escaping)}
        self.source = self._codegen(tr, events, slots)
        self.fn = self._compile_source()
        if self.part == "forward":
            self.backward = Plan(tr, "backward", fuse, self.saved)

    def _fuse(self, events, slots, keep, escaping) -> None:
        for run in FU.groups(events, slots, keep):
            inside = set(run)
            read_after = set(escaping)
            for i, ev in enumerate(events):
                if keep[i] and i not in inside and i > run[0]:
                    read_after.update(_reads(ev))
            fr = FU.FusedRun(run, events, slots, read_after)
            if fr.outputs:
                self.fused_at[run[-1]] = fr  # (it runs where the run's last call was)
                self.fused.update(run)
                for s in fr.inputs:  # its inputs live until then
                    while s >= 0:
                        self.last[s] = max(self.last[s], run[-1])
                        s = slots[s].alias

    # -- buffers ----------------------------------------------------------------------
    def _assign_buffers(self, events, slots, escaping, last, keep) -> None:
        self.buffer_of: dict = {}  # slot -> buffer index
        self.buffers: list = []  # (shape, dtype, memory order)
        self.inplace = 0
        free: dict = {}  # (shape, dtype, memory order) -> [buffer indices]
        held: dict = {}  # buffer index -> slot holding it
        release_at: dict = {}  # event index -> [buffer indices]
        for i, ev in enumerate(events):
            if not keep[i]:
                continue
            if _bufferable(ev, slots, escaping):
                n = ev.outs[0]
                info = slots[n]
                key = (info.shape, info.dtype.str, info.order)
                b = None
                if ev.fn.signature is None:  # elementwise: may write over a dying input
                    for s in _reads(ev):
                        bi = self.buffer_of.get(s)
                        if bi is not None and last[s] == i and held.get(bi) == s and \
                                (slots[s].shape, slots[s].dtype.str, slots[s].order) == key and \
                                not _aliased_by_others(slots, s, i, last):
                            b = bi
                            release_at[i].remove(bi) if bi in release_at.get(i, ()) else None
                            self.inplace += 1
                            break
                if b is None:
                    pool = free.get(key)
                    if pool:
                        b = pool.pop()
                    else:
                        b = len(self.buffers)
                        self.buffers.append((info.shape, info.dtype, info.order))
                self.buffer_of[n] = b
                held[b] = n
                end = max(last[n], i)
                release_at.setdefault(end, []).append(b)
            for b in release_at.pop(i, ()):
                if held.get(b) is not None:
                    shape, dt, order = self.buffers[b]
                    free.setdefault((shape, np.dtype(dt).str, order), []).append(b)
                    held[b] = None

    # -- code -------------------------------------------------------------------------
    def _codegen(self, tr: Trace, events, slots) -> str:
        env: dict = {"MAKE": _make, "ASARRAY": np.asarray, "MISS": ReplayMiss}
        self.env = env
        names: dict = {}

        def const(v) -> str:
            key = id(v)
            name = names.get(key)
            if name is None:
                name = names[key] = f"c{len(names)}"
                env[name] = v
            return name

        def expr(x) -> str:
            c = x.__class__
            if c is R.Slot:
                return f"v{x.n}"
            if c is R.Const:
                return const(x.value)
            if c is R.TensorOf:
                return f"MAKE({expr(x.spec)})"
            if c is tuple:
                inner = ", ".join(expr(v) for v in x)
                return f"({inner},)" if len(x) == 1 else f"({inner})"
            if c is list:
                return "[" + ", ".join(expr(v) for v in x) + "]"
            if c is dict:
                return "{" + ", ".join(f"{k!r}: {expr(v)}" for k, v in x.items()) + "}"
            if c is slice:
                return f"slice({expr(x.start)}, {expr(x.stop)}, {expr(x.step)})"
            if x is None or c is bool or c is int or c is str:
                return repr(x)
            if c is float and math.isfinite(x):
                return repr(x)
            if x is Ellipsis:
                return "..."
            return const(x)

        lines = ["def replay(L, B):" if self.part != "backward" else "def replay(S, B):"]
        emit = lines.append
        env["SAVE"], env["RESTORE"] = _save_generator, _restore_generator
        env["COPYTO"] = np.copyto
        saved = [(f"g{k}", const(g)) for k, g in enumerate(self.rewind)]
        for i, n in enumerate(self.inputs):  # (the backward part: saved and grad arrays)
            emit(f"    v{n} = S[{i}]")
        for acc_what_slot in (tr.ext if self.part != "backward" else ()):
            n, (acc, what) = acc_what_slot
            if self.last[n] < 0 and n not in self.escaping:
                continue  # an array the plan never reads (a value the call stores over)
            base = f"L[{acc[1]}]" if acc[0] == "leaf" else const(acc[1])
            emit(f"    v{n} = {base}._data" if what == "data" else f"    v{n} = {base}._grad._data")
        for b in range(len(self.buffers)):  # (locals: no subscript per call)
            emit(f"    b{b} = B[{b}]")
        for name, g in saved:  # Note [Rewinding draws]
            emit(f"    {name} = SAVE({g})")
        for n in self.rewind_arrays:
            emit(f"    r{n} = v{n}.copy()")
        fresh_done = set()
        def load_fresh(s):
            info = slots[s]
            if info.origin == "fresh" and s not in fresh_done:
                fresh_done.add(s)
                snap = const(info.snapshot if info.snapshot is not None else info.array)
                emit(f"    v{s} = {snap}.copy()" if s in self.fresh_copy else
                     f"    v{s} = {snap}")

        env["FUSED"] = FU.run_fused
        for i, ev in enumerate(events):
            if not self.keep[i] or (i in self.fused and i not in self.fused_at):
                continue  # (a fused call: its run's kernel runs at the run's last call)
            run = self.fused_at.get(i)
            if run is not None:  # Note [Fusion]: the whole run as one kernel call
                for s in run.inputs:
                    load_fresh(s)
                outs = "".join(f"v{n}, " for n in run.outputs)
                ins = "".join(f", v{n}" for n in run.inputs)
                what = "+".join(events[k].name for k in run.events)
                emit(f"    {outs}= FUSED({const(run.kernel)}, {run.shape!r}, "
                     f"{const(run.dtype)}, {len(run.outputs)}{ins})  # fused: {what}")
                continue
            # fresh arrays appear at their first reader
            for s in _reads(ev):
                load_fresh(s)
            fn = const(ev.fn)
            if ev.shape == "check":
                emit(f"    if {fn}(v{ev.args[0].n}) != {const(ev.meta['expect'])}:")
                for name, g in saved:
                    emit(f"        RESTORE({g}, {name})")
                for n in self.rewind_arrays:
                    emit(f"        COPYTO(v{n}, r{n})")
                emit(f"        raise MISS({i})")
                continue
            args = ", ".join(expr(a) for a in ev.args)
            kwargs = ev.kwargs
            out = None
            if ev.outs and ev.outs[0] in self.buffer_of and slots[ev.outs[0]].event == i \
                    and ev.shape in ("one", "scalar"):
                out = f"b{self.buffer_of[ev.outs[0]]}"
            elif _positional_out(ev):
                out, kwargs = expr(kwargs["out"][0]), {}
            kw = ", ".join(f"{k}={expr(v)}" for k, v in kwargs.items())
            if out is not None:
                if ev.fn.__class__ is _ufunc and not kwargs and len(ev.args) == ev.fn.nin:
                    args += f", {out}"  # Note [Positional out]
                else:
                    kw = (kw + ", " if kw else "") + f"out={out}"
            call = f"{fn}({args}{', ' if args and kw else ''}{kw})"
            note = f"  # {ev.name}"  # (the listing's reader: which call this is)
            if ev.shape == "one":
                emit(f"    v{ev.outs[0]} = {call}{note}")
            elif ev.shape == "scalar":
                emit(f"    v{ev.outs[0]} = ASARRAY({call}){note}")
            elif ev.shape in ("tuple", "list"):
                outs = ", ".join(f"v{o}" for o in ev.outs)
                emit(f"    {outs}, = {call}{note}")
            else:
                emit(f"    {call}{note}")
        for s in sorted(self.escaping):  # fresh arrays that only leave the plan
            load_fresh(s)
        if self.part == "backward":
            outs = ", ".join("None" if n is None else f"v{n}" for n in tr.bw_outs)
            emit(f"    return ({outs},)")
            return _canonical("\n".join(lines) + "\n")
        for acc, n in tr.rebinds:
            emit(f"    {_holder(acc, const)}._data = v{n}")
        for (acc, what), d in tr.bumps:
            h = _holder(acc, const)
            emit(f"    {h}._vc[0] += {d}" if what == "data" else f"    {h}._grad._vc[0] += {d}")
        for acc, n in tr.grads:
            h = _holder(acc, const)
            emit(f"    {h}._grad = None" if n is None else f"    {h}._grad = MAKE(v{n})")
        made: set = set()
        for x in _outs_in([tr.out] + [tmpl for *_w, tmpl in tr.stores]):
            if x.k not in made:  # Note [Stores]: one new tensor wherever eager put it
                made.add(x.k)
                emit(f"    t{x.k} = MAKE(v{x.n})" + (".requires_grad_()" if x.rg else ""))
        for obj, key, kind, tmpl in tr.stores:
            value = self._out_expr(tmpl, const)
            if kind == "item":
                emit(f"    {const(obj)}[{const(key)}] = {value}")
            else:
                emit(f"    {const(obj)}.{key} = {value}")
        if self.part == "forward":  # Note [Compiled backward]: the node keeps these
            saved = "".join(f"v{n}, " for n in self.saved)
            diff = "".join(f"t{x.k}, " for x in sorted(_diff_outs(tr), key=lambda o: o.d))
            emit(f"    return {self._out_expr(tr.out, const)}, ({saved}), ({diff})")
        else:
            emit(f"    return {self._out_expr(tr.out, const)}")
        return _canonical("\n".join(lines) + "\n")

    def _out_expr(self, x, const) -> str:
        c = x.__class__
        if c is Out:
            return f"t{x.k}"
        if c is Same:
            return _holder(x.acc, const)
        if c is GradOf:
            return f"{_holder(x.acc, const)}._grad"
        if c is tuple:
            inner = ", ".join(self._out_expr(v, const) for v in x)
            return f"({inner},)" if len(x) == 1 else f"({inner})"
        if c is list:
            return "[" + ", ".join(self._out_expr(v, const) for v in x) + "]"
        if c is dict:
            return "{" + ", ".join(f"{k!r}: {self._out_expr(v, const)}"
                                   for k, v in x.items()) + "}"
        if c is R.Const:
            v = x.value
            if v is None or v.__class__ in (bool, int, str):
                return repr(v)
            return const(v)
        return "None"

    def _compile_source(self):
        code = compile(self.source, "<retrograd.compile plan>", "exec")
        ns: dict = {}
        exec(code, self.env, ns)
        self.bufs = [_buffer(*b) for b in self.buffers]
        return ns["replay"]

    def run(self, leaves):
        """Replay for a call whose flattened arguments are ``leaves``."""
        if self.backward is not None:
            return run_with_backward(self, leaves)
        return self.fn(leaves, self.bufs)

    # -- seeing it --------------------------------------------------------------------
    def listing(self) -> str:
        """The plan as text: the code, the buffers, what was removed and reused."""
        tr = self.trace
        nbytes = sum(int(np.prod(s, dtype=np.int64)) * np.dtype(d).itemsize
                     for s, d, _o in self.buffers)
        reused = len(self.buffer_of) - len(self.buffers)
        head = [f"# plan: {sum(self.keep)} calls ({self.removed} dead ones removed), "
                f"{len(tr.ext)} input arrays, {len(self.buffers)} reused buffers "
                f"({nbytes} bytes) serving {len(self.buffer_of)} results "
                f"({reused} reuses, {self.inplace} in place)"]
        if self.fused_at:
            n = sum(len(r.events) for r in self.fused_at.values())
            head.append(f"# fused: {n} elementwise calls in {len(self.fused_at)} Numba "
                        "kernels (Note [Fusion] in fuse.py)")
        text = "\n".join(head) + "\n" + self.source
        if self.backward is not None:
            text += ("# its backward (Note [Compiled backward]), over the "
                     f"{len(self.saved)} saved arrays and the incoming gradients:\n" +
                     self.backward.listing())
        return text


def _canonical(source: str) -> str:
    """The source with its slot variables numbered in order of first use, so that two
    traces of the same work give the same text (Note [Second trace] in api.py)."""
    names: dict = {}

    def rename(m):
        return names.setdefault(m.group(0), f"v{len(names)}")
    return _SLOT_VAR.sub(rename, source)


_SLOT_VAR = re.compile(r"\bv\d+\b")


def _diff_outs(tr: Trace) -> list:
    """The outputs a compiled backward differentiates (Note [Compiled backward])."""
    return [x for x in _outs_in([tr.out] + [t for *_w, t in tr.stores]) if x.d >= 0]


def _saved_slots(tr: Trace, slots, events) -> list:
    """The arrays of the forward part that the backward part reads (Note [Compiled
    backward]): made before the boundary, or inputs of the call."""
    k = tr.bw_start
    grads = set(tr.bw_grads)
    out: list = []
    seen: set = set()
    for ev in events[k:]:
        for n in _reads(ev):
            info = slots[n]
            if n in seen or n in grads or info.origin == "fresh":
                continue
            if info.origin == "ext" or info.event < k:
                seen.add(n)
                out.append(n)
    return out


def _outs_in(x):
    """The ``Out`` templates inside an output or store template, in order."""
    return R.walk_tree(x, Out)


def _check_order(events, slots, drawn) -> tuple:
    """What a replay that stops at a check (Note [Value reads]) must take back
    (Note [Rewinding draws]): the generators drawn from, and the input arrays written,
    before the last check."""
    root_of = []
    for n in range(len(slots)):
        root = n
        while slots[root].alias >= 0:
            root = slots[root].alias
        root_of.append(root)
    last_check = max((i for i, ev in enumerate(events) if ev.shape == "check"), default=-1)
    arrays: list = []
    for ev in events[:last_check]:
        for w in ev.writes:
            root = root_of[w]
            if slots[root].origin == "ext" and root not in arrays:
                arrays.append(root)
    gens: list = []
    for i, g in drawn:
        if i < last_check and all(g is not h for h in gens):
            gens.append(g)
    return gens, arrays


# Note [Rewinding draws]
# A replay that stops at a check (Note [Value reads] in record.py) runs the call eagerly
# instead, so it must leave no trace. Random draws before the check advanced a
# generator: the replay saves each such generator's state when it starts (the bit
# generator's state and the cached normal draws) and puts it back before it stops, so
# the eager call draws the same numbers an uncompiled call would. Input arrays written
# before the check (batch norm's running statistics) are copied at the start and copied
# back. The copies cost a replay only where a check follows such an effect.
def _save_generator(g):
    return (g.bits.state, g.next_double_normal, g.next_float_normal)


def _restore_generator(g, saved) -> None:
    g.bits.state, g.next_double_normal, g.next_float_normal = saved


def _holder(acc, const) -> str:
    return f"L[{acc[1]}]" if acc[0] == "leaf" else const(acc[1])


def _reads(ev):
    for s in R._slots_in(ev.args):
        yield s.n
    for s in R._slots_in(ev.kwargs):
        yield s.n


# Note [Buffer layouts]
# NumPy gives a ufunc's result the memory order of its inputs (order="K"): the sum of two
# transposed arrays is transposed too. A buffer that stands for such a result is made in
# the same order (SlotInfo.order), so every later call sees the strides eager code saw:
# the same speed (a C-order buffer under transposed operands makes the ufunc walk memory
# across its rows, several times slower on a 256 x 256 gradient) and the same numbers
# (a reduction's summation order follows the layout).
def _buffer(shape: tuple, dt, order: tuple):
    """An empty buffer of ``shape`` whose axes lie in memory in ``order`` (() for C)."""
    if not order:
        return np.empty(shape, dt)
    return np.empty([shape[k] for k in order], dt).transpose(np.argsort(order))


# Note [Positional out]
# A ufunc parses keyword arguments at every call: ``np.multiply(a, b, out=o)`` costs ~10%
# more than ``np.multiply(a, b, o)`` on small arrays, where a plan's time is call
# overhead. So a ufunc call given all its inputs and one output (a buffer of the plan, or
# the caller's own ``out=(x,)``) passes the output positionally; buffers are locals.
def _positional_out(ev) -> bool:
    """Whether ``ev`` is a ufunc call whose only keyword is a one-array ``out=``."""
    if ev.fn.__class__ is not _ufunc or ev.fn.nout != 1 or len(ev.kwargs) != 1:
        return False
    out = ev.kwargs.get("out")
    return out.__class__ is tuple and len(out) == 1 and out[0].__class__ is R.Slot and \
        len(ev.args) == ev.fn.nin


def _bufferable(ev, slots, escaping) -> bool:
    """A ufunc call whose single result stays inside the plan (Note [Plans])."""
    if ev.fn.__class__ is not _ufunc or ev.fn.nout != 1 or "out" in ev.kwargs or \
            len(ev.args) > ev.fn.nin or \
            ev.shape != "one" or len(ev.outs) != 1 or ev.writes:
        # (a 0-d result NumPy gave as a scalar was a copy in the trace: views of it were
        # not views of a buffer, so it gets none)
        return False
    n = ev.outs[0]
    info = slots[n]
    return n not in escaping and info.alias < 0 and info.origin == "event"


def _aliased_by_others(slots, s: int, i: int, last) -> bool:
    """Whether a view of slot ``s`` is read after event ``i``."""
    for n, info in enumerate(slots):
        if info.alias == s and last[n] > i:
            return True
    return False


# Note [Compiled backward]
# A compiled call whose outputs autograd will differentiate later (``out =
# compiled_model(x); loss(out).backward()``) is traced with its backward too, as
# torch.compile's AOT autograd does: after the call the tracer runs
# ``autograd.grad(outputs, inputs that require grad, grad_outputs=G)`` with G arrays that
# are inputs of the trace, so the log holds the forward events, then the backward
# events. The forward part becomes a plan that also returns the arrays the backward part
# reads (made by the forward, or inputs of the call: the saved arrays, allocated fresh at
# every call, never a reused buffer); the backward part becomes a second plan over the
# saved arrays and G. A replay runs the forward plan inside one autograd.Function,
# ``CompiledFunction``, whose node (``CompiledFunctionBackward``, PyTorch's name) holds
# the saved arrays and runs the backward plan: one node for the whole call, edges to the
# inputs that require grad. Its backward is not differentiable again (PyTorch's compiled
# backward is not either); a value read in the backward part cannot fall back to eager
# code, so it makes the call run eagerly.
def run_with_backward(plan: Plan, leaves):
    """A forward replay with its backward attached (Note [Compiled backward])."""
    from .backward import CompiledFunction

    box: list = []
    diff_in = [leaves[acc[1]] if acc[0] == "leaf" else acc[1] for acc in plan.trace.bw_ins]
    CompiledFunction.apply(plan, leaves, box, *diff_in)
    return box[0]
