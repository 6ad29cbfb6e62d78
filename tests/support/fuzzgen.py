"""The differential fuzzer: random autograd programs, run with retrograd and with torch.

A *program* is a list of steps; a step is one line of Python in which ``T`` stands
for the module (``T.exp(x0)``, ``v3[1:] = 2.0``, ``v4.sum().backward()``), plus the
names it defines and what to compare after it. ``run(program, m)`` executes the lines
in order with ``T = m`` and records, after each step, a snapshot of what the step may
have changed; ``compare(program)`` runs both modules and returns the first
``Difference`` (or None). Program ``i`` is built from seed ``i`` alone, so a failure
is reproduced by its seed, and ``render`` prints a program as a snippet a developer
can paste (``import retrograd as T`` or ``import torch as T`` at the top).

What a program contains (``generate``): leaves of float32, float64 (and now and then
int64) with broadcasting shapes including 0-d and empty ones, some with special
values (0, -0.0, ±1, inf, nan); elementwise unary and binary ops (scalars on either
side, mixed dtypes), reductions, softmax, matmul; views (slices, select, view and
reshape, transpose, permute, squeeze, unsqueeze, expand, diagonal, unfold, narrow,
split, chunk, unbind, as_strided, flatten, movedim, detach) including views of views;
in-place ops, setitem, index_fill_ and masked_fill_ on leaves, bases and views, with
and without ``no_grad``; ``retain_grad``, ``backward`` with ``retain_graph``,
``create_graph``, ``inputs=`` and ``gradient=``, ``autograd.grad`` with
``allow_unused`` and second-order gradients (gradients of gradients); and reads and
writes of ``.grad``.

What is compared, step by step: whether the step raised and the exception type; for
each tensor a step made or may have changed its shape, dtype, ``requires_grad``,
``is_leaf``, whether it has a ``grad_fn``, and its values (NaN positions equal,
dtype-appropriate tolerances); after every backward the ``.grad`` of every variable
(leaves, retained non-leaves, second-order results) with the same checks. At the end,
everything once more.

Entry points: ``generate(seed)``, ``compare(program)``, ``shrink(program, diff)``,
``render(program, diff)``, ``check_seed(seed)`` (all of it, honouring ``EXCLUSIONS``),
and ``python tests/support/fuzzgen.py --programs N [--seed S]`` for a campaign with a
summary of difference classes. The seeds the tests check by number are data:
``read_seeds(name)`` reads one of the files in tests/fuzz/data/.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import sys
import warnings
from collections.abc import Callable

import numpy as np

__all__ = ["Step", "Program", "Difference", "Exclusion", "EXCLUSIONS", "generate", "run",
           "compare", "shrink", "render", "parse", "check_seed", "classify", "excluded_by",
           "read_seeds", "write_open_seeds"]

# Note [Torch drives generation]
# To pick a valid next step the generator must know every variable's shape, dtype,
# requires_grad, is_leaf and whether it is a view. Re-implementing shape inference
# for fifty ops would be a second, buggy op library; instead the generator runs each
# step in torch the moment it emits it and reads torch's tensors. A step torch
# rejects stays in the program (it tests that retrograd raises the same exception
# type) and its names are simply never used again. Torch 2.13 is pinned for the test
# suite, so program i stays the same program; generation never looks at retrograd.
# A variable torch will not even describe (a multi-output view whose base was
# modified in place raises on reading is_leaf) is left out of every choice.

# Note [What a step compares]
# Comparing every variable after every step would cost O(steps**2) snapshots, so a
# step says what it may have changed: OUTS (the names it defines), ALIASES (in-place
# ops: every variable, since views, bases and detached tensors share storage) or
# GRADS (backward and friends: the names it defines and every variable's .grad).
# The end of a program compares everything, values and .grad, once more.
# A pasted program (``parse``) compares ALL: every variable and every .grad.
OUTS, ALIASES, GRADS, ALL = "outs", "aliases", "grads", "all"


@dataclasses.dataclass(frozen=True)
class Step:
    code: str
    outs: tuple = ()
    check: str = OUTS


@dataclasses.dataclass
class Program:
    seed: int
    steps: list

    def __len__(self) -> int:
        return len(self.steps)


@dataclasses.dataclass(frozen=True)
class Difference:
    """The first place where retrograd and torch disagree.

    ``step`` is the index of the step (``len(program)`` for the final comparison),
    ``code`` its line, ``kind`` what differs (exception, shape, dtype, requires_grad,
    is_leaf, grad_fn, values, type), ``what`` the expression that differs
    (``v3``, ``x0.grad``), and ``torch``/``retrograd`` the two sides in words.
    """

    step: int
    code: str
    kind: str
    what: str
    torch: str
    retrograd: str

    @property
    def signature(self) -> tuple:
        """What must stay the same while the shrinker drops steps."""
        return (self.code, self.kind, self.what)

    def __str__(self) -> str:
        return (f"{self.kind} of {self.what} after `{self.code}`:\n"
                f"  torch:     {self.torch}\n  retrograd: {self.retrograd}")


# ----------------------------------------------------------------------------------
# running a program


@functools.lru_cache(maxsize=4096)
def _compiled(code: str):
    return compile(code, "<fuzz>", "exec")


def _is_tensor(x) -> bool:
    # on the class: reading a property of some views raises (Note [Torch drives generation])
    return hasattr(type(x), "_version") and hasattr(type(x), "requires_grad")


def _values(t) -> np.ndarray:
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.array(t.numpy(force=True), copy=True)


def _snap(x):
    """A module-independent picture of ``x`` (tensor, None, number or a tuple of them)."""
    if _is_tensor(x):
        return ("tensor", tuple(x.shape), str(x.dtype), bool(x.requires_grad),
                bool(x.is_leaf), x.grad_fn is not None, _values(x))
    if x is None or isinstance(x, (bool, int, float, str)):
        return ("py", x)
    if isinstance(x, (tuple, list)):
        return ("seq", tuple(_snap(y) for y in x))
    return ("other", type(x).__name__)


def _snap_safe(f):
    try:
        return _snap(f())
    except Exception as e:
        return ("raised", type(e).__name__)


def _tensor_names(env) -> list:
    return [k for k, v in env.items() if k != "T" and _is_tensor(v)]


def run(program: Program, m) -> list:
    """Run ``program`` with ``T = m``; one record per step plus one for the end.

    A record is ``(exception or None, {what: snapshot})``.
    """
    env = {"T": m}
    trace = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in program.steps:
            try:
                exec(_compiled(step.code), env)
            except Exception as e:
                trace.append((e, {}))
                for o in step.outs:
                    env.pop(o, None)
                continue
            seen = {}
            for o in step.outs:
                seen[o] = _snap_safe(lambda o=o: env[o])
            if step.check in (ALIASES, ALL):
                for k in _tensor_names(env):
                    seen[k] = _snap_safe(lambda k=k: env[k])
            if step.check in (GRADS, ALL):
                for k in _tensor_names(env):
                    seen[k + ".grad"] = _snap_safe(lambda k=k: env[k].grad)
            trace.append((None, seen))
        seen = {}
        for k in _tensor_names(env):
            seen[k] = _snap_safe(lambda k=k: env[k])
            seen[k + ".grad"] = _snap_safe(lambda k=k: env[k].grad)
        trace.append((None, seen))
    return trace


# Note [Tolerances]
# Values are compared elementwise with |r - t| <= atol + rtol * |t|, NaN where torch
# has NaN, and infinities equal. atol is scaled by the largest finite magnitude of
# torch's tensor, so that a float32 sum whose terms cancel is judged against the size
# of the terms it came from, not against its own (near-zero) result. float64 gets
# 1e-7 relative: every op is one or two ulps apart between NumPy's and torch's libm,
# and a program chains up to twenty of them.
_TOL = {"float64": (1e-7, 1e-9), "float32": (2e-4, 2e-5), "float16": (1e-2, 1e-3),
        "bfloat16": (5e-2, 1e-2)}


def _compare_values(r: np.ndarray, t: np.ndarray, dtype: str, low: bool = False) -> str | None:
    if r.shape != t.shape:
        return "shape"
    if t.dtype.kind not in "fc":
        return None if np.array_equal(r, t) else "values"
    dtype = dtype.replace("torch.", "")
    if low and dtype == "float64":
        dtype = "float32"
    rtol, atol = _TOL.get(dtype, (1e-7, 1e-9))
    r = r.astype(np.float64)
    t = t.astype(np.float64)
    tn, rn = np.isnan(t), np.isnan(r)
    if not np.array_equal(tn, rn):
        return "values"
    fin = np.isfinite(t)
    if not np.array_equal(r[~fin & ~tn], t[~fin & ~tn]):
        return "values"
    if fin.any():
        scale = max(1.0, float(np.max(np.abs(t[fin]))))
        rf, tf = r[fin], t[fin]
        if not np.all(np.isfinite(rf)):
            return "values"
        if not np.all(np.abs(rf - tf) <= atol * scale + rtol * np.abs(tf)):
            return "values"
    return None


def _show(s) -> str:
    if s[0] == "tensor":
        _, shape, dtype, rg, leaf, gf, vals = s
        v = np.array2string(vals, precision=6, threshold=30).replace("\n", "")
        return (f"tensor({v}, shape={shape}, dtype={dtype}, requires_grad={rg}, "
                f"is_leaf={leaf}, grad_fn={'yes' if gf else 'None'})")
    if s[0] == "seq":
        return "(" + ", ".join(_show(x) for x in s[1]) + ")"
    return repr(s[1])


_FIELDS = ("shape", "dtype", "requires_grad", "is_leaf", "grad_fn")


def _compare_snaps(r, t, low: bool = False) -> str | None:
    """The kind of difference between two snapshots, or None (``low``: float32 seen)."""
    if r[0] != t[0]:
        return "type"
    if t[0] == "tensor":
        for k, (a, b) in enumerate(zip(r[1:6], t[1:6])):
            if a != b:
                return _FIELDS[k]
        return _compare_values(r[6], t[6], t[2], low)
    if t[0] == "seq":
        if len(r[1]) != len(t[1]):
            return "type"
        for a, b in zip(r[1], t[1]):
            kind = _compare_snaps(a, b, low)
            if kind:
                return kind
        return None
    if t[0] == "py" and isinstance(t[1], float) and isinstance(r[1], float):
        return _compare_values(np.array(r[1]), np.array(t[1]), "float64", low)
    return None if r[1] == t[1] else "values"


def _same_exception(r: BaseException, t: BaseException) -> bool:
    return isinstance(r, type(t)) or type(r).__name__ == type(t).__name__


def compare_traces(program: Program, rt: list, tt: list) -> Difference | None:
    low = any("float32" in s.code or ".float()" in s.code for s in program.steps)
    for i, ((re_, rs), (te, ts)) in enumerate(zip(rt, tt)):
        code = program.steps[i].code if i < len(program.steps) else "<end of program>"
        if (re_ is None) != (te is None) or (re_ is not None and not _same_exception(re_, te)):
            show = lambda e: "no exception" if e is None else f"{type(e).__name__}: {e}"  # noqa: E731
            return Difference(i, code, "exception", code, show(te)[:300], show(re_)[:300])
        for what in ts:
            if what not in rs:
                return Difference(i, code, "missing", what, "defined", "not defined")
            kind = _compare_snaps(rs[what], ts[what], low)
            if kind:
                return Difference(i, code, kind, what, _show(ts[what]), _show(rs[what]))
    return None


def _modules():
    import torch

    import retrograd
    return retrograd, torch


def compare(program: Program) -> Difference | None:
    """Run ``program`` with both modules; the first difference, or None."""
    retrograd, torch = _modules()
    tt = run(program, torch)
    rt = run(program, retrograd)
    return compare_traces(program, rt, tt)


# ----------------------------------------------------------------------------------
# generating a program

_SHAPES = [(), (), (1,), (3,), (3,), (4,), (2, 3), (2, 3), (3, 1), (1, 3), (3, 3), (2, 2),
           (2, 1, 3), (2, 3, 2), (1, 2, 1), (2, 3, 3), (0,), (0, 3), (3, 0, 2)]
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0]
_NONFINITE = [math.inf, -math.inf, math.nan]
_SCALARS = ["2.0", "0.5", "-1.5", "3", "0", "1", "-2"]


def _lit(a) -> str:
    if isinstance(a, np.ndarray):
        return _lit(a.tolist())
    if isinstance(a, list):
        return "[" + ", ".join(_lit(x) for x in a) + "]"
    if isinstance(a, float):
        if math.isnan(a):
            return "float('nan')"
        if math.isinf(a):
            return "float('inf')" if a > 0 else "-float('inf')"
        return repr(a)
    return repr(a)


def _shape_str(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _idx(expr: str, nd: int, d: int) -> str:
    """An index expression putting ``expr`` at dim ``d`` (of ``nd``)."""
    if d < 0:
        d += nd
    if d <= 2:
        return ", ".join([":"] * d + [expr])
    return "..., " + expr + ", :" * (nd - d - 1)


class _Builder:
    def __init__(self, seed: int):
        import torch
        self.torch = torch
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.steps: list = []
        self.env: dict = {"T": torch}
        self.count = 0

    # -- plumbing --------------------------------------------------------------

    def r(self) -> float:
        return float(self.rng.random())

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def randint(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        return int(self.rng.integers(lo, hi + 1))

    def name(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, code: str, outs=(), check: str = OUTS) -> bool:
        self.steps.append(Step(code, tuple(outs), check))
        try:
            exec(_compiled(code), self.env)
        except Exception:
            for o in outs:
                self.env.pop(o, None)
            return False
        return True

    def t(self, name):
        return self.env[name]

    def names(self, pred: Callable | None = None, floats: bool = True) -> list:
        out = []
        for k, v in self.env.items():
            if k == "T" or not _is_tensor(v):
                continue
            try:  # Note [Torch drives generation]
                v.is_leaf  # noqa: B018
                if floats and not v.is_floating_point():
                    continue
                if pred is None or pred(v):
                    out.append(k)
            except RuntimeError:
                continue
        return out

    def pick(self, names: list, weight: Callable | None = None) -> str:
        """One of ``names``, recent ones (and heavy ones) more likely."""
        w = np.arange(1, len(names) + 1, dtype=float)
        if weight is not None:
            w = w * np.array([weight(self.t(n)) for n in names], dtype=float)
        w = w / w.sum()
        return names[int(self.rng.choice(len(names), p=w))]

    # -- operands --------------------------------------------------------------

    def leaf(self, shape=None, dtype=None, requires_grad=None) -> str:
        shape = tuple(self.choice(_SHAPES) if shape is None else shape)
        if dtype is None:
            dtype = "int64" if self.r() < 0.04 else self.choice(["float32", "float64"])
        if requires_grad is None:
            requires_grad = dtype != "int64" and self.r() < 0.8
        name = self.name("x")
        rg = f", requires_grad={requires_grad}" if requires_grad else ""
        if int(np.prod(shape)) == 0 or (shape and self.r() < 0.05):
            fill = "zeros" if int(np.prod(shape)) == 0 else self.choice(["zeros", "ones"])
            code = f"{name} = T.{fill}({_shape_str(shape)}, dtype=T.{dtype}{rg})"
        else:
            if dtype == "int64":
                vals = self.rng.integers(-3, 4, shape).astype(np.int64)
                data = _lit(vals)
            else:
                vals = np.round(self.rng.uniform(-2.0, 2.0, shape), 3)
                if self.r() < 0.25:  # special values: kinks, ties, signed zeros
                    pool = _SPECIAL + (_NONFINITE if self.r() < 0.3 else [])
                    mask = self.rng.random(shape) < 0.4
                    spec = np.array([self.choice(pool) for _ in range(int(np.prod(shape)))])
                    vals = np.where(mask, spec.reshape(shape), vals)
                data = _lit(np.asarray(vals, dtype=float))
            code = f"{name} = T.tensor({data}, dtype=T.{dtype}{rg})"
        self.emit(code, (name,))
        return name

    def sub_shape(self, shape, grow: bool) -> tuple:
        """A shape that broadcasts with ``shape`` (into it, unless ``grow``)."""
        shape = list(shape)
        if shape and self.r() < 0.3:
            shape = shape[self.randint(1, len(shape)):]
        shape = [1 if self.r() < 0.3 else s for s in shape]
        if grow and self.r() < 0.15 and len(shape) < 3:
            shape = [2] + shape
        return tuple(shape)

    def operand(self, shape, into: bool = False) -> str:
        """A scalar literal or a tensor name whose shape broadcasts with ``shape``."""
        u = self.r()
        if u < 0.25:
            return self.choice(_SCALARS)
        if u < 0.28:  # a shape that does not broadcast: the error must match
            bad = tuple(s + 2 for s in shape) if shape else (2,)
            return self.leaf(bad)

        def fits(v):
            try:
                b = np.broadcast_shapes(tuple(v.shape), tuple(shape))
            except ValueError:
                return False
            return b == tuple(shape) if into else True
        cands = self.names(fits, floats=False)
        if cands and u < 0.65:
            return self.pick(cands)
        return self.leaf(self.sub_shape(shape, grow=not into))

    def dim(self, nd: int) -> int:
        return self.randint(-max(nd, 1), max(nd, 1) - 1)

    # -- step kinds --------------------------------------------------------------

    def step_unary(self):
        x = self.pick(self.names())
        p = self.choice(["2", "3", "0.5", "-1", "0", "1.5", "-0.5"])
        a, b = sorted([self.choice(["-1.0", "-0.5", "0.0", "0.5", "1.0"]) for _ in range(2)],
                      key=float)
        fn = self.choice([
            "{x}.exp()", "T.log({x})", "{x}.sin()", "T.cos({x})", "{x}.tanh()",
            "T.sigmoid({x})", "{x}.relu()", "{x}.abs()", "-{x}", "{x}.sqrt()",
            "T.rsqrt({x})", "{x}.reciprocal()", "{x}.square()", "T.log1p({x})",
            "{x}.expm1()", "T.atan({x})", "T.erf({x})", "{x}.floor()", "{x}.round()",
            "{x}.sign()", "{x}.asin()", "T.acos({x})", "{x}.sinh()", "T.log2({x})",
            f"{{x}}.clamp({a}, {b})", f"{{x}}.clamp(min={a})", f"T.clamp({{x}}, max={b})",
            f"{{x}} ** {p}", f"T.pow({{x}}, {p})", f"{p} ** {{x}}",
            "T.nn.functional.elu({x})", "T.nn.functional.softplus({x})",
            "T.nn.functional.gelu({x})", "T.nn.functional.silu({x})",
            "T.nn.functional.leaky_relu({x}, 0.1)", "T.nn.functional.hardtanh({x})",
            "{x}.clone()", "{x} * 2", "{x} + 1", "1 - {x}", "{x} / 3", "{x}.float()",
            "{x}.double()", "{x}.to(T.float32)", "T.where({x} > 0, {x}, 0.0)",
            "{x}.nan_to_num()", "T.nn.functional.relu({x})", "T.nn.functional.mish({x})",
        ])
        out = self.name()
        code = f"{out} = " + fn.format(x=x)
        if self.r() < 0.05:
            code = "with T.no_grad(): " + code
        self.emit(code, (out,))

    # Note [Scalars in function calls]
    # torch.maximum(x, 2.0), torch.atan2(0, x) and torch.lerp(x, 1, 0.3) are
    # TypeErrors in torch; a fuzzer that drew scalars for them freely would spend a
    # fifth of its programs on that one error. Those functions get a scalar operand
    # in one draw of ten only: often enough to keep checking the error.
    _BOTH_TENSORS = ("T.atan2", "T.maximum", "T.minimum", "T.lerp")

    def step_binary(self):
        x = self.pick(self.names())
        fn = self.choice([
            "{x} + {y}", "{x} - {y}", "{x} * {y}", "{x} / {y}", "T.pow({x}, {y})",
            "{x} ** {y}", "T.atan2({x}, {y})", "T.maximum({x}, {y})", "T.minimum({x}, {y})",
            "T.add({x}, {y}, alpha=2)", "T.sub({x}, {y}, alpha=0.5)", "T.lerp({x}, {y}, 0.3)",
            "T.where({x} > {y}, {x}, {y})", "T.mul({x}, {y})", "T.div({x}, {y})",
            "T.fmod({x}, {y})", "T.remainder({x}, {y})",
        ])
        y = self.operand(tuple(self.t(x).shape))
        if self.r() < 0.5:
            x, y = y, x  # the scalar (or the new leaf) on the left
        if fn.startswith(self._BOTH_TENSORS) or fn.startswith("T.fmod"):
            if not _is_tensor(self.env.get(x)) and self.r() < 0.9:
                x = self.leaf(self.sub_shape(tuple(self.t(y).shape), grow=True))
        if fn.startswith(self._BOTH_TENSORS):
            if not _is_tensor(self.env.get(y)) and self.r() < 0.9:
                y = self.leaf(self.sub_shape(tuple(self.t(x).shape), grow=True))
        out = self.name()
        self.emit(f"{out} = " + fn.format(x=x, y=y), (out,))

    def step_reduce(self):
        x = self.pick(self.names())
        nd = self.t(x).dim()
        d = self.dim(nd)
        kd = ", keepdim=True" if self.r() < 0.3 else ""
        dims = "(0, -1)" if nd >= 2 else "0"
        fn = self.choice([
            "{x}.sum()", f"{{x}}.sum({d}{kd})", f"{{x}}.sum({dims})", "{x}.mean()",
            f"{{x}}.mean({d}{kd})", "{x}.prod()", f"{{x}}.prod({d}{kd})", "{x}.amax()",
            f"{{x}}.amax({d}{kd})", f"{{x}}.amin({dims})", "{x}.max()", f"{{x}}.max({d})[0]",
            f"{{x}}.min({d}{kd}).values", "{x}.std()", f"{{x}}.std({d}{kd})",
            f"{{x}}.var({d}, correction=0)", "{x}.var()", "{x}.norm()",
            f"{{x}}.norm(dim={d}{kd})", f"T.linalg.vector_norm({{x}}, 1, dim={d})",
            f"T.logsumexp({{x}}, {d}{kd})", f"T.softmax({{x}}, {d})",
            f"T.log_softmax({{x}}, {d})", f"{{x}}.cumsum({d})", f"{{x}}.cumprod({d})",
            f"T.nn.functional.softmax({{x}}, dim={d})",
        ])
        out = self.name()
        self.emit(f"{out} = " + fn.format(x=x), (out,))

    def step_matmul(self):
        x = self.pick(self.names())
        shape = tuple(self.t(x).shape)
        n = shape[-1] if shape else 2
        k = self.randint(1, 3)
        u = self.r()
        if u < 0.3:
            other = (n,)
        elif u < 0.8 or len(shape) < 2:
            other = (n, k)
        else:
            other = (2, n, k) if len(shape) == 2 else (shape[0], n, k)
        if self.r() < 0.05:
            other = (n + 1, k)
        y = self.leaf(other, dtype=str(self.t(x).dtype).replace("torch.", "")
                      if self.r() < 0.85 else None)
        if self.r() < 0.3:
            x, y = y, x
        out = self.name()
        fn = self.choice(["{x} @ {y}", "T.matmul({x}, {y})"])
        self.emit(f"{out} = " + fn.format(x=x, y=y), (out,))

    def view_exprs(self, x: str) -> list:
        t = self.t(x)
        shape = tuple(t.shape)
        nd = len(shape)
        numel = int(np.prod(shape)) if shape else 1
        c = [f"{x}.view(-1)", f"{x}.reshape(-1)", f"{x}.flatten()", f"{x}[None]",
             f"{x}[...]", f"{x}.detach()", f"{x}.unsqueeze({self.randint(-nd - 1, nd)})",
             f"{x}.view({_shape_str(shape + (1,))})", f"{x}.squeeze()",
             f"{x}.expand({_shape_str((2,) + shape)})", f"{x}.view_as({x})"]
        if nd <= 2:
            c.append(f"{x}.t()")
        if numel >= 2 and t.is_contiguous():
            c.append(f"{x}.as_strided(({numel - 1}, 2), (1, 1))")
            s = self.randint(1, 2)
            c.append(f"{x}.as_strided(({(numel - 1) // s + 1},), ({s},))")
        if numel >= 1 and t.is_contiguous() and nd >= 1:
            # offsets count in the storage, which for a view holds the base's elements
            off = t.storage_offset()
            c.append(f"{x}.as_strided({_shape_str(shape)}, {_shape_str(t.stride())}, {off})")
        if nd == 0:
            return c
        d = self.dim(nd)
        n = shape[d]
        a = self.randint(0, n)
        b = self.randint(a, n)
        c += [f"{x}[{_idx(f'{a}:{b}', nd, d)}]", f"{x}[{_idx('::2', nd, d)}]",
              f"{x}.narrow({d}, {a}, {b - a})", f"{x}.flatten({d})",
              f"{x}.movedim({d}, {self.dim(nd)})", f"{x}.transpose({d}, {self.dim(nd)})",
              f"{x}.permute({tuple(int(p) for p in self.rng.permutation(nd))})",
              f"{x}.view({_shape_str(shape[:-1] + (-1, 1))})"]
        if n > 0:
            i = self.randint(-n, n - 1)
            c += [f"{x}[{_idx(str(i), nd, d)}]", f"{x}.select({d}, {i})",
                  f"{x}.unbind({d})[{self.randint(0, n - 1)}]",
                  f"{x}.unfold({d}, {self.randint(1, n)}, {self.randint(1, 2)})",
                  f"{x}.split({self.randint(1, n)}, {d})[0]",
                  f"{x}.chunk({self.randint(1, 3)}, {d})[-1]"]
        if 1 in shape:
            c.append(f"{x}.squeeze({shape.index(1)})")
            c.append(f"{x}.expand({_shape_str(tuple(3 if s == 1 else s for s in shape))})")
        if nd >= 2:
            c += [f"{x}.mT", f"{x}.diagonal()",
                  f"{x}.diagonal({self.randint(-1, 1)}, {self.dim(nd)}, {self.dim(nd)})",
                  f"{x}.view({_shape_str(shape[:-2] + (-1,))})",
                  f"{x}.reshape({_shape_str(shape[:-2] + (-1,))})"]
            if shape[0] > 0 and shape[1] > 0:
                c.append(f"{x}[{self.randint(0, shape[0] - 1)}, {a if a < n else 0}:]")
        return c

    def step_view(self):
        x = self.pick(self.names(floats=False),
                      weight=lambda v: 3.0 if v._base is not None or not v.is_leaf else 1.0)
        out = self.name()
        self.emit(f"{out} = " + self.choice(self.view_exprs(x)), (out,))

    def inplace_target(self) -> str:
        def w(v):
            if v._base is not None:
                return 4.0
            return 0.6 if v.is_leaf else 2.5
        return self.pick(self.names(), weight=w)

    def step_inplace(self):
        x = self.inplace_target()
        shape = tuple(self.t(x).shape)
        nd = len(shape)
        u = self.r()
        if u < 0.35:
            y = self.operand(shape, into=True)
            code = x + "." + self.choice([
                "add_({y})", "sub_({y})", "mul_({y})", "div_({y})", "copy_({y})",
                "add_({y}, alpha=2)", "pow_({y})", "lerp_({y}, 0.5)", "clamp_(min={y})",
                "copy_({y})", "mul_({y})"]).format(y=y)
            if ".copy_(" in code and not _is_tensor(self.env.get(y)):
                code = f"{x}.fill_({y})"
            elif ".lerp_(" in code and not _is_tensor(self.env.get(y)):
                code = f"{x}.lerp_({x} * 2, 0.5)"
        elif u < 0.6:
            code = x + "." + self.choice([
                "exp_()", "sigmoid_()", "tanh_()", "relu_()", "neg_()", "abs_()",
                "sqrt_()", "clamp_(-0.5, 0.5)", "clamp_(min=0.0)", "pow_(2)", "zero_()",
                "fill_(1.5)", "mul_(0)", "sin_()", "reciprocal_()", "log_()", "floor_()",
                "square_()", "add_(1)", "mul_(2)", "div_(-2)"])
        elif u < 0.85 and nd > 0:
            code = self.setitem(x, shape)
        elif nd > 0:
            d = self.dim(nd)
            n = shape[d]
            val = self.choice(["0.0", "-1.5", "2.0"])
            if self.r() < 0.3 and n > 0:
                idx = sorted({self.randint(0, n - 1) for _ in range(2)})
                code = f"{x}.index_fill_({d}, T.tensor({idx}), {val})"
            else:
                code = f"{x}.masked_fill_({x} > 0, {val})"
        else:
            code = f"{x}.fill_({self.choice(_SCALARS)})"
        if self.r() < 0.08:
            code = "with T.no_grad(): " + code
        self.emit(code, (), ALIASES)

    def setitem(self, x: str, shape) -> str:
        nd = len(shape)
        d = self.dim(nd)
        n = shape[d]
        a = self.randint(0, n)
        b = self.randint(a, n)
        opts = [_idx(f"{a}:{b}", nd, d), _idx("::2", nd, d), "...", f"{x} > 0"]
        if n > 0:
            opts += [_idx(str(self.randint(-n, n - 1)), nd, d)]
            idx = sorted({self.randint(0, n - 1) for _ in range(2)})
            opts += [_idx(f"T.tensor({idx})", nd, d)]
        idx = self.choice(opts)
        try:
            target = tuple(eval(f"{x}[{idx}]", dict(self.env)).shape)
        except Exception:
            target = ()
        if self.r() < 0.4 or "> 0" in idx:
            val = self.choice(_SCALARS)
        else:
            val = self.operand(target, into=True)
        return f"{x}[{idx}] = {val}"

    def step_autograd(self):
        rg = self.names(lambda v: v.requires_grad)
        u = self.r()
        if not rg or u < 0.2:
            return self.step_misc()
        if u < 0.32:
            x = self.pick(rg)
            self.emit(f"{x}.retain_grad()", (), OUTS)
            return
        if u < 0.66:
            return self.step_backward(rg)
        return self.step_grad(rg)

    def root(self, rg: list) -> str:
        """A differentiable output: gradients of gradients preferred when there are some."""
        second = [n for n in rg if n.startswith("g") or ".grad" in n]
        if second and self.r() < 0.5:
            y = self.pick(second)
        else:
            y = self.pick(rg)
        shape = tuple(self.t(y).shape)
        u = self.r()
        if u < 0.55:
            return f"{y}.sum()"
        if u < 0.7:
            return f"{y}.mean()"
        if u < 0.85:
            w = self.leaf(shape, requires_grad=False)
            return f"({y} * {w}).sum()"
        return f"({y} * {y}).sum()"

    def step_backward(self, rg: list):
        out = self.root(rg)
        kw = []
        u = self.r()
        if u < 0.3:
            kw.append("retain_graph=True")
        elif u < 0.45:
            kw.append("create_graph=True")
        if self.r() < 0.1:
            leaves = self.names(lambda v: v.requires_grad and v.is_leaf)
            if leaves:
                kw.append(f"inputs=[{self.pick(leaves)}]")
        code = f"{out}.backward({', '.join(kw)})"
        if self.r() < 0.1:
            y = self.pick(rg)
            code = f"{y}.backward(T.ones_like({y}){''.join(', ' + k for k in kw)})"
        self.emit(code, (), GRADS)

    def step_grad(self, rg: list):
        out = self.root(rg)
        k = min(len(rg), self.randint(1, 3))
        leaves = self.names(lambda v: v.requires_grad and v.is_leaf)
        pool = leaves if leaves and self.r() < 0.7 else rg
        ins = list(dict.fromkeys(self.pick(pool) for _ in range(k)))
        g = self.name("g")
        names = tuple(f"{g}_{j}" for j in range(len(ins)))
        kw = []
        if self.r() < 0.5:
            kw.append("create_graph=True")
        elif self.r() < 0.3:
            kw.append("retain_graph=True")
        if self.r() < 0.8:
            kw.append("allow_unused=True")
            if self.r() < 0.15:
                kw.append("materialize_grads=True")
        lhs = ", ".join(names) + ("," if len(names) == 1 else "")
        call = f"T.autograd.grad({out}, [{', '.join(ins)}]{''.join(', ' + a for a in kw)})"
        self.emit(f"{lhs} = {call}", names, GRADS)

    def step_misc(self):
        with_grad = self.names(lambda v: v.grad is not None, floats=False)
        u = self.r()
        if u < 0.3 and with_grad:
            x = self.pick(with_grad)
            g = self.name("g")
            self.emit(f"{g} = {x}.grad", (g,))
        elif u < 0.45 and with_grad:
            x = self.pick(with_grad)
            self.emit(f"{x}.grad = None", (), GRADS)
        elif u < 0.6 and with_grad:
            x = self.pick(with_grad)
            self.emit(f"{x}.grad.{self.choice(['mul_(2)', 'zero_()', 'add_(1)'])}", (), GRADS)
        elif u < 0.8:
            x = self.pick(self.names(floats=False))
            arg = "" if self.r() < 0.7 else "False"
            self.emit(f"{x}.requires_grad_({arg})", (), ALIASES)
        else:
            self.leaf()

    # -- the whole program -------------------------------------------------------

    def build(self, n_steps: int) -> Program:
        for _ in range(self.randint(1, 3)):
            self.leaf()
        kinds = ["unary", "binary", "reduce", "matmul", "view", "inplace", "autograd",
                 "leaf"]
        weights = np.array([15, 13, 9, 4, 20, 20, 14, 3], dtype=float)
        weights /= weights.sum()
        for _ in range(n_steps):
            if not self.names():
                self.leaf(dtype=self.choice(["float32", "float64"]))
                continue
            kind = kinds[int(self.rng.choice(len(kinds), p=weights))]
            if kind == "leaf":
                self.leaf()
            else:
                getattr(self, "step_" + kind)()
        rg = self.names(lambda v: v.requires_grad)
        if rg and self.r() < 0.75:
            if self.r() < 0.5:
                self.step_backward(rg)
            else:
                self.step_grad(rg)
            rg = self.names(lambda v: v.requires_grad)
            if rg and self.r() < 0.4:
                self.step_backward(rg)
        return Program(self.seed, self.steps)


def generate(seed: int, max_steps: int = 16) -> Program:
    """Program number ``seed``: the same program every time (Note [Torch drives generation])."""
    b = _Builder(seed)
    n = int(b.rng.integers(3, max_steps + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return b.build(n)


# ----------------------------------------------------------------------------------
# shrinking and printing


def shrink(program: Program, diff: Difference, budget: int = 400) -> tuple:
    """Drop steps while the same difference (``Difference.signature``) persists.

    Steps whose names were dropped raise NameError in both modules, which is not a
    difference, so they go too. Returns ``(smaller program, its difference)``.
    """
    steps = list(program.steps)
    sig = diff.signature
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        i = len(steps) - 1
        while i >= 0 and tries < budget:
            if steps[i].code == diff.code:
                i -= 1
                continue
            cand = Program(program.seed, steps[:i] + steps[i + 1:])
            tries += 1
            d = compare(cand)
            if d is not None and d.signature == sig:
                steps, diff, changed = cand.steps, d, True
            i -= 1
    return Program(program.seed, steps), diff


_ASSIGN = re.compile(r"^(?:with T\.no_grad\(\): )?([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*),? = ")


def parse(code: str, seed: int = -1) -> Program:
    """A program from lines of code (a pasted reproducer); every step compares ALL."""
    steps = []
    for line in code.strip().splitlines():
        line = line.rstrip()
        if not line or line.startswith(("#", "import ", "print(")):
            continue
        m = _ASSIGN.match(line)
        outs = tuple(m.group(1).split(", ")) if m else ()
        steps.append(Step(line, outs, ALL))
    return Program(seed, steps)


def render(program: Program, diff: Difference | None = None, module: str = "retrograd") -> str:
    """The program as a snippet to paste (``T`` = ``module``), the difference as comments."""
    lines = [f"# fuzz seed {program.seed}", f"import {module} as T", ""]
    lines += [s.code for s in program.steps]
    if diff is not None:
        if diff.kind != "exception":
            lines.append(f"print({diff.what})")
        lines.append("")
        lines += ["# " + ln for ln in str(diff).splitlines()]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------
# exclusions


@dataclasses.dataclass(frozen=True)
class Exclusion:
    """An intentional, documented difference (docs/compatibility.md, "Differential fuzzing").

    ``match(diff, program)`` says whether a difference is this one; ``examples`` are
    programs (code for ``parse``) that show it, tested in test_fuzz.py so that the
    entry goes away when retrograd changes.
    """

    category: str
    reason: str
    match: Callable
    examples: tuple
    # the difference comes from the last bits of NumPy's SIMD loops, which depend on the
    # CPU (NumPy's baseline loops on an x86-64-v2 CPU agree with torch there): an example
    # may agree with torch on such a machine, which is fine; it must never differ otherwise
    cpu_dependent: bool = False


def _gone(diff: Difference, again: Difference | None) -> bool:
    """Whether ``diff`` is absent from a rewritten program's first difference ``again``."""
    return again is None or (again.step, again.kind, again.what) != (diff.step, diff.kind,
                                                                     diff.what)


_DISCONTINUOUS = re.compile(r"remainder|fmod|floor|ceil|round|sign|trunc|>|amax|amin|max|min|"
                            r"argmax|\[0\]|\.values|relu|hardtanh|clamp|where|masked_fill|"
                            r"log|sqrt")  # (-inf at 0, nan below: a value one ulp off 0)


def _float32_rounding(diff: Difference, program: Program) -> bool:
    # Note [Tolerances]: a step that jumps (remainder, floor, sign, a mask x > 0, a
    # max that picks one of two near-ties) turns a one-ulp float32 difference of its
    # input into an O(1) difference of its output. Such a value difference is float32
    # rounding when the same program computed in float64 throughout agrees there.
    # Or a sum that cancels: terms of mirrored paths (atan2(x, x)'s two gradients) add to
    # exactly 0 in one library and to a few float32 ulps of the terms in the other, when
    # the two engines sum the contributions in another order.
    cancels = bool(_ZERO_VALUES.match(diff.torch) or _ZERO_VALUES.match(diff.retrograd))
    if diff.kind != "values" or not (cancels or _DISCONTINUOUS.search(diff.code)):
        return False
    text = [s.code for s in program.steps]
    if not any("float32" in c or ".float()" in c for c in text):
        return False
    steps = [Step(s.code.replace("T.float32", "T.float64").replace(".float()", ".double()"),
                  s.outs, s.check) for s in program.steps]
    return _gone(diff, compare(Program(program.seed, steps)))


_ZERO_VALUES = re.compile(r"tensor\(([\[\]\s]|-?0\.)*,")


def _graph_of_a_zero_gradient(diff: Difference, program: Program) -> bool:
    # a gradient with no nonzero element (empty, or all zeros on both sides) that has
    # a graph here and none in torch (or the reverse); nothing else about it differs
    if diff.kind not in ("requires_grad", "is_leaf", "grad_fn"):
        return False
    if not (diff.what.endswith(".grad") or diff.what.startswith("g")):
        return False
    if _ZERO_VALUES.match(diff.torch) and _ZERO_VALUES.match(diff.retrograd):
        return True
    return _zero_contribution(diff, program)


def _zero_contribution(diff: Difference, program: Program) -> bool:
    # a backward under create_graph added such a gradient to a .grad that held values:
    # the sum's graph differs as the addend's does. It is this case when, with that
    # .grad set to None just before the step, the step shows the zero gradient itself
    if not (diff.what.endswith(".grad") and "create_graph=True" in diff.code
            and diff.step < len(program.steps)):
        return False
    steps = list(program.steps)
    steps.insert(diff.step, Step(f"{diff.what} = None"))
    again = compare(Program(program.seed, steps))
    return (again is not None and (again.step, again.what) == (diff.step + 1, diff.what)
            and again.kind in ("requires_grad", "is_leaf", "grad_fn")
            and bool(_ZERO_VALUES.match(again.torch) and _ZERO_VALUES.match(again.retrograd)))


# Note [Exclusions]
# Only differences retrograd documents as intentional (docs/compatibility.md,
# "Differences, and why" and "Differential fuzzing") belong here; each has a reason,
# a matcher as narrow as the difference (best: it re-runs the program with the cause
# taken away and sees the difference go), and examples that test_fuzz.py runs to
# prove the difference still exists and is matched. Wrong gradients, wrong values
# and mismatched error types are defects: they fail the test and are fixed in
# retrograd, not listed here.
EXCLUSIONS: list = [
    Exclusion(
        "float32 rounding at a discontinuity",
        "a one-ulp float32 difference between NumPy's and torch's kernels (both "
        "correctly rounded to within an ulp) becomes an O(1) difference after "
        "remainder, floor, sign or a mask (or log or sqrt of a value one ulp from 0: nan "
        "against -inf or 0), or a sum of gradient contributions that cancels exactly in one "
        "library and to a few ulps of its terms in the other (summed in another order); "
        "excluded only when the same program in float64 agrees at that step.",
        _float32_rounding,
        ("x2 = T.tensor([[0.299, -1.654], [-1.293, 1.911], [-1.835, -0.936]], "
         "dtype=T.float32, requires_grad=True)\n"
         "v4 = T.nn.functional.softmax(x2, dim=-2)\n"
         "v5 = v4.transpose(-2, 0)\n"
         "v5.pow_(-2)\n"
         "x6 = T.tensor([[-1.714], [-1.335], [1.431]], dtype=T.float64)\n"
         "v7 = T.remainder(v5, x6)\n",
         # a gradient that is 0 in float32 in torch and -1e-8 here, then log (fuzz seed 2624)
         "x3 = T.tensor([[-1.151], [0.054], [-0.092]], dtype=T.float32, requires_grad=True)\n"
         "v6 = T.softmax(x3, -2)\n"
         "g8_0, = T.autograd.grad(v6.sum(), [x3], create_graph=True, allow_unused=True)\n"
         "g8_0.log_()\n"),
        cpu_dependent=True,
    ),
]


EXCLUSIONS.append(Exclusion(
    "the graph of an identically zero gradient",
    "under create_graph, torch's kernels return some gradients that are zero by "
    "construction without a graph: an empty tensor's, the slice a setitem or an in-place "
    "op on a view zero-fills (CopySlices), a matmul over an empty dimension; retrograd "
    "records the rule's ops there too, so such a gradient requires grad. The values are "
    "equal (no element, or zeros), and its own gradient is zero either way. Matched only "
    "for a gradient whose every element is zero on both sides, or a .grad that a backward "
    "added such a gradient to (with that .grad set to None first, the step shows it).",
    _graph_of_a_zero_gradient,
    ("x2 = T.zeros((0,), dtype=T.float32, requires_grad=True)\n"
     "x3 = T.zeros((0,), dtype=T.float32, requires_grad=True)\n"
     "v4 = T.sub(x3, x2, alpha=0.5)\n"
     "x5 = T.tensor(-0.484, dtype=T.float32, requires_grad=True)\n"
     "v6 = x5 + v4\n"
     "v7 = v6.narrow(0, 0, 0)\n"
     "v7.zero_()\n"
     "v8 = v7.view((0, 1))\n"
     "(v8 * v8).sum().backward(create_graph=True)\n",
     "x2 = T.zeros((3, 0, 2), dtype=T.float64)\n"
     "x4 = T.tensor([[0.802], [1.742]], dtype=T.float64, requires_grad=True)\n"
     "v5 = x2 @ x4\n"
     "v7 = v5.unfold(0, 1, 1)\n"
     "v7.mul_(2)\n"
     "(v7 * v7).sum().backward(create_graph=True, inputs=[x4])\n",
     # the same zero gradient added to a .grad that holds values (fuzz seed 10818)
     "x2 = T.zeros((3, 0, 2), dtype=T.float64)\n"
     "x4 = T.tensor([[0.802], [1.742]], dtype=T.float64, requires_grad=True)\n"
     "v5 = x2 @ x4\n"
     "x4.flatten(0).sum().backward(inputs=[x4])\n"
     "v7 = v5.unfold(0, 1, 1)\n"
     "v7.mul_(2)\n"
     "(v7 * v7).sum().backward(create_graph=True, inputs=[x4])\n"),
))


_INPLACE_STEP = re.compile(r"\w_\(|\] = |\.grad = ")
_SECOND_ORDER = re.compile(r"\bg\d+_\d+\b|\.grad\b")


def _saved_by_second_order(diff: Difference, program: Program) -> bool:
    # torch's double-backward formulas are ops of their own (SoftplusBackwardBackward0 and
    # the like) that save their inputs; retrograd's rules are made of ordinary ops, which
    # save other tensors. So an in-place write after a create_graph gradient can
    # invalidate torch's second-order graph and not retrograd's (whose second derivative
    # is then the one at the values the gradient was computed at). Matched when
    # torch raises the version error, at a backward of a gradient, and the difference
    # goes with the in-place steps between the gradient and that backward left out
    if not (diff.kind == "exception" and diff.retrograd == "no exception"
            and "modified by an inplace operation" in diff.torch
            and _SECOND_ORDER.search(diff.code)
            and (".backward(" in diff.code or "autograd.grad(" in diff.code)):
        return False
    made = [i for i, st in enumerate(program.steps[:diff.step]) if "create_graph=True" in st.code]
    if not made:
        return False
    cut = [i for i in range(made[0] + 1, diff.step)
           if _INPLACE_STEP.search(program.steps[i].code)]
    if not cut:
        return False
    steps = [st for i, st in enumerate(program.steps) if i not in cut]
    again = compare(Program(program.seed, steps))
    code = diff.code
    return again is None or not (again.kind == "exception" and again.code == code)


EXCLUSIONS.append(Exclusion(
    "tensors saved by a second-order graph",
    "torch differentiates a gradient through double-backward ops of its own "
    "(SoftplusBackwardBackward0, ...) that save their inputs; retrograd's derivative "
    "rules are ordinary ops that save other tensors (a sigmoid's result, not its input). "
    "An in-place write after autograd.grad(..., create_graph=True) can therefore "
    "invalidate torch's second-order graph (it raises the version error) and not "
    "retrograd's, which differentiates at the values the gradient was computed at. "
    "Matched when torch raises that error at a backward of a gradient, and the "
    "difference goes without the in-place steps made after the gradient.",
    _saved_by_second_order,
    ("x1 = T.tensor([[0.354, -1.9, 1.298], [-0.218, -0.421, 1.778]], dtype=T.float64, "
     "requires_grad=True)\n"
     "x3 = T.tensor([[-1.871, 1.21, -1.038], [-0.178, -0.249, -0.164]], dtype=T.float64, "
     "requires_grad=True)\n"
     "v4 = x1 / x3\n"
     "v5 = T.nn.functional.softplus(v4)\n"
     "g10_0, = T.autograd.grad(v5.sum(), [x3], create_graph=True)\n"
     "v4.mul_(2)\n"
     "(g10_0 * g10_0).sum().backward()\n",),
))


def _layout(t) -> tuple | None:
    try:
        return tuple(t.stride()), t._base is not None
    except Exception:
        return None


def _layouts(program: Program, m, upto: int) -> dict:
    """{(step, name): (strides, is a view)} of the tensors steps before ``upto`` define."""
    env = {"T": m}
    seen = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, step in enumerate(program.steps[:upto]):
            try:
                exec(_compiled(step.code), env)
            except Exception:
                continue
            for o in step.outs:
                if _is_tensor(env.get(o)):
                    seen[(i, o)] = _layout(env[o])
    return seen


_NAME = re.compile(r"\b[xvg]\d+(?:_\d+)?\b")


def _memory_layout(diff: Difference, program: Program) -> bool:
    # torch's elementwise results keep a permuted input's strides, some of its gradients
    # are expanded tensors (strides 0) or views made under no_grad; retrograd's are
    # C-contiguous arrays of their own. It is this difference when it goes with the
    # step's tensors whose layout differs replaced by contiguous copies where they are
    # made
    if diff.step >= len(program.steps):
        return False
    retrograd, torch = _modules()
    names = set(_NAME.findall(diff.code))
    t, r = _layouts(program, torch, diff.step), _layouts(program, retrograd, diff.step)
    # a gradient of autograd.grad, or a result that is a view on neither side (a view op
    # that made a copy, or the reverse, is a defect, not a layout)
    differ = {k for k in t if k[1] in names and k in r and t[k] != r[k] and t[k] and r[k]
              and (k[1].startswith("g") or not (t[k][1] or r[k][1]))}
    if not differ:
        return False
    steps = []
    for i, st in enumerate(program.steps):
        steps.append(st)
        for o in st.outs:
            if (i, o) in differ:
                steps.append(Step(f"{o} = {o}.clone(memory_format=T.contiguous_format)"))
    again = compare(Program(program.seed, steps))
    return again is None or (again.code, again.kind, again.what) != (diff.code, diff.kind,
                                                                    diff.what)


EXCLUSIONS.append(Exclusion(
    "memory layout of results and gradients",
    "torch's elementwise results keep a permuted input's strides, and some of its "
    "gradients are expanded tensors (the gradient of sum is an expanded scalar, with "
    "strides PyTorch chose for its dims of size 1) or views made under no_grad; "
    "retrograd's are C-contiguous arrays of their own. So view() compatibility, the "
    "in-place overlap checks and the error for an in-place write into a no_grad view can "
    "differ on them. Matched when the difference goes with those tensors (strides or "
    "view-ness differing) replaced by contiguous copies where they are made.",
    _memory_layout,
    (  # an expanded gradient whose size-1 dim has stride 1 in torch (fuzz seed 105548)
     "x1 = T.tensor([[-0.19], [1.055], [-0.307]], dtype=T.float32, requires_grad=True)\n"
     "v2 = x1.squeeze(1)\n"
     "g4_0, = T.autograd.grad(v2.sum(), [x1], create_graph=True)\n"
     "g4_0[:, ::2] = g4_0\n",
     # a product that keeps its operand's permuted strides in torch (fuzz seed 109958)
     "x4 = T.tensor([[[0.69, -0.397], [0.36, -0.912]], [[0.957, 1.929], [-0.363, 1.207]]], "
     "dtype=T.float64, requires_grad=True)\n"
     "v6 = x4.unsqueeze(1)\n"
     "v9 = v6.unfold(0, 2, 1)\n"
     "x10 = T.ones((1, 1, 2, 2, 2), dtype=T.float64)\n"
     "v11 = v9 * x10\n"
     "v12 = v11.view((1, 1, 2, -1))\n"),
))


def excluded_by(diff: Difference, program: Program) -> Exclusion | None:
    for ex in EXCLUSIONS:
        if ex.match(diff, program):
            return ex
    return None


# ----------------------------------------------------------------------------------
# one seed, and a campaign


@dataclasses.dataclass
class Outcome:
    seed: int
    program: Program
    diff: Difference | None
    excluded: Exclusion | None = None

    @property
    def failed(self) -> bool:
        return self.diff is not None and self.excluded is None


def check_seed(seed: int, do_shrink: bool = True) -> Outcome:
    """Generate program ``seed``, compare, and shrink a non-excluded difference."""
    prog = generate(seed)
    diff = compare(prog)
    if diff is None:
        return Outcome(seed, prog, None)
    ex = excluded_by(diff, prog)
    if ex is None and do_shrink:
        prog, diff = shrink(prog, diff)
    return Outcome(seed, prog, diff, ex)


_CALL = re.compile(r"\.([a-z_][a-z0-9_]*)\(|T\.(?:nn\.functional\.|linalg\.|autograd\.)?"
                   r"([a-z_][a-z0-9_]*)\(|(\[.*\]\s*=)|(\*\*|@| [-+*/] )")


#: campaign classes named by a known cause: (where to look, pattern, name)
_CAUSES = (
    ("retrograd", "refers to a single memory location", "in-place overlap check (retrograd "
     "refuses what torch allows, or the reverse)"),
    ("torch", "refers to a single memory location", "in-place overlap check (retrograd "
     "refuses what torch allows, or the reverse)"),
    ("retrograd", "assignment destination is read-only", "in-place write into a read-only "
     "NumPy buffer"),
    ("retrograd", "expected at least one Tensor", "add/sub with alpha and a Python scalar"),
    ("retrograd", "has no attribute", "missing function or method"),
    ("torch", "derivative for aten::", "gradient where torch has none"),
    ("torch", "backward through the graph a second time", "second backward: torch raises, "
     "retrograd does not"),
    ("retrograd", "backward through the graph a second time", "second backward: retrograd "
     "raises, torch does not"),
    ("retrograd", "modified by an inplace operation", "version check: retrograd saved a "
     "tensor torch does not save"),
    ("torch", "must be Tensor, not", "a Python scalar where torch wants a Tensor"),
    ("torch", "received an invalid combination of arguments", "a Python scalar where torch "
     "wants a Tensor"),
    ("torch", "expected dtype", "mixed dtypes accepted where torch refuses"),
    ("torch", "dtypes match", "mixed dtypes accepted where torch refuses"),
)


def classify(diff: Difference) -> str:
    """A class for a campaign summary: a known cause, else the kind and the step's op."""
    if diff.kind == "exception":
        for side, pat, name in _CAUSES:
            if pat in (diff.retrograd if side == "retrograd" else diff.torch):
                return name
    code = diff.code.replace("with T.no_grad(): ", "no_grad ")
    rhs = code.split(" = ", 1)[-1] if re.match(r"^[\w, ]+ = ", code) else code
    ops = []
    for m in _CALL.finditer(rhs):
        ops.append(m.group(1) or m.group(2) or ("setitem" if m.group(3) else m.group(4).strip()))
    op = ops[-1] if ops and ops[-1] in ("backward", "grad") else (ops[0] if ops else "?")
    if diff.kind == "exception":
        te = diff.torch.split(":")[0]
        rg = diff.retrograd.split(":")[0]
        return f"exception {te} vs {rg} at {op}"
    where = "grad" if diff.what.endswith(".grad") or diff.what.startswith("g") else "value"
    if "materialize_grads" in code and diff.kind == "requires_grad":
        return "materialize_grads zeros with create_graph"
    return f"{diff.kind} of {where} at {op}"


#: the seed files: tests/fuzz/data/*.txt
SEED_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz",
                         "data")


def read_seeds(name: str) -> list[tuple[int, str]]:
    """The ``(seed, description)`` pairs of tests/fuzz/data/``name``, in file order.

    One seed a line, then its one-line description (in excluded_seeds.txt, the category of
    the ``EXCLUSIONS`` entry that must claim it); blank lines and lines starting with
    ``#`` are comments."""
    rows = []
    with open(os.path.join(SEED_DATA, name), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                seed, *text = line.split(None, 1)
                rows.append((int(seed), text[0] if text else ""))
    return rows


def write_open_seeds(count: int = 3000, name: str = "open_seeds.txt") -> list[int]:
    """Rewrite tests/fuzz/data/``name`` with the seeds of ``0 .. count-1`` that differ from
    torch and no exclusion claims, each with its difference class; the file's leading
    comment block is kept. Returns those seeds."""
    path = os.path.join(SEED_DATA, name)
    with open(path, encoding="utf-8") as f:
        header = []
        for line in f:
            if not line.startswith("#"):
                break
            header.append(line)
    rows = [(s, o) for s in range(count) for o in [check_seed(s, do_shrink=False)] if o.failed]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(header)
        f.writelines(f"{s}  {classify(o.diff)}\n" for s, o in rows)
    return [s for s, _ in rows]


def campaign(start: int, count: int, out=sys.stdout) -> list:
    """Check seeds ``start .. start+count-1``; print the difference classes and one
    shrunk reproducer per class. Returns the outcomes with a difference."""
    bad = []
    classes: dict = {}
    for seed in range(start, start + count):
        o = check_seed(seed, do_shrink=False)
        if o.diff is None:
            continue
        bad.append(o)
        key = "excluded: " + o.excluded.category if o.excluded else classify(o.diff)
        classes.setdefault(key, []).append(o)
    print(f"{count} programs from seed {start}: {len(bad)} with a difference, "
          f"{sum(o.failed for o in bad)} not excluded", file=out)
    for key, outs in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        first = outs[0]
        seeds = ", ".join(str(o.seed) for o in outs[:12])
        print(f"\n== {key}: {len(outs)} (seeds {seeds}{' ...' if len(outs) > 12 else ''})",
              file=out)
        prog, diff = (first.program, first.diff) if first.excluded else \
            shrink(first.program, first.diff)
        print(render(prog, diff), file=out)
    return bad


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--open-seeds", action="store_true",
                    help="rewrite tests/fuzz/data/open_seeds.txt with the seeds of the default "
                         "range (0-2999) that differ")
    ns = ap.parse_args()
    if ns.open_seeds:
        seeds = write_open_seeds()
        print(f"{len(seeds)} open seeds written to {os.path.join(SEED_DATA, 'open_seeds.txt')}")
    else:
        campaign(ns.seed, ns.programs)
