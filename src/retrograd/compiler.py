"""``retrograd.compile`` and ``retrograd.compiler``: trace a call once, replay it as a
plan of NumPy calls (torch.compile's role; Note [Tracing] in _compile/record.py).

Note [What compile does here]
PyTorch's torch.compile captures Python bytecode into FX graphs and generates kernels.
retrograd's tracer works one level lower: it runs the function once, eagerly, and writes
down every NumPy call that touches a tensor's memory (forward kernels, the derivative
rules the engine runs for ``backward()``, the optimizer's updates), then turns that log
into straight-line Python over arrays with reused buffers (Note [Plans] in
_compile/plan.py). Replays call the kernels directly: no Tensor objects, no dispatch,
no graph nodes in between. What the plan cannot express (a value read in Python, an
output that autograd will differentiate later, Python state the call changed) is a
graph break: those calls run eagerly, and ``explain`` says why.

Example:
    >>> import retrograd as torch
    >>> @torch.compile
    ... def step(x):
    ...     return (x * 2).sin().sum()
    >>> float(step(torch.ones(3)))
    2.727892...
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._compile import record as R
from ._compile.api import CompiledFunction, Unsupported, config
from .nn.modules.module import Module

__all__ = ["compile", "explain", "show", "draw_plan", "reset", "disable", "is_compiling",
           "is_dynamo_compiling", "list_backends", "Unsupported", "config",
           "ExplainOutput"]

#: the backends torch.compile names; every one but "eager" compiles to a plan here
_BACKENDS = ("inductor", "aot_eager", "eager", "cudagraphs", "openxla", "tvm", "onnxrt")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_LIVE: weakref.WeakSet = weakref.WeakSet()  # the compiled functions alive, for reset()


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable = "inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False) -> Any:
    """Compile a function or a module: its calls replay a traced plan (torch.compile).

    Call forms as torch.compile's: ``compile(fn)``, ``@compile``, ``@compile(...)``,
    ``compile(module)`` (an ``OptimizedModule`` whose calls are compiled; its
    ``_orig_mod`` is the module). ``backend="eager"`` or ``disable=True`` runs the
    function uncompiled. ``fullgraph=True`` raises ``Unsupported`` at the first graph
    break instead of running that call eagerly. ``dynamic`` is accepted; plans are
    specialised to the sizes they saw (a new size retraces, up to the recompile limit).

    Example:
        >>> import retrograd as torch
        >>> lin = torch.nn.Linear(3, 1)
        >>> opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        >>> @torch.compile(fullgraph=True)
        ... def train_step(x, y):
        ...     opt.zero_grad()
        ...     loss = ((lin(x) - y) ** 2).mean()
        ...     loss.backward()
        ...     opt.step()
        ...     return loss.detach()
        >>> x, y = torch.ones(4, 3), torch.zeros(4, 1)
        >>> losses = [round(float(train_step(x, y)), 4) for _ in range(4)]
        >>> losses[0] > losses[-1]
        True
    """
    settings = _settings(fullgraph, dynamic, backend, mode, options, disable)
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if isinstance(model, Module):
        return OptimizedModule(model, settings)
    if not callable(model):
        raise RuntimeError("torch.compile() expects a callable: a function or an "
                           f"nn.Module, not {type(model).__name__}")
    return _compiled_function(model, settings)


def _settings(fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
              disable=False) -> dict:
    """``compile``'s arguments checked as torch.compile checks them, as the settings of a
    ``CompiledFunction`` (one place for ``compile`` and ``Module.compile``)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(str(m) for m in _MODES[1:])}")
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError(
            "retrograd.compile: a custom backend callable receives a torch.fx GraphModule "
            "in PyTorch; retrograd's plans are not FX graphs. Pass backend='inductor' "
            "(the default: retrograd's plan) or backend='eager'.")
    if backend not in _BACKENDS:
        raise _invalid_backend(backend)
    return {"fullgraph": fullgraph, "dynamic": dynamic, "backend": backend,
            "disable": disable, "fuse": _fusion_asked(mode, options)}


def _compiled_function(fn, settings: dict) -> CompiledFunction:
    cf = CompiledFunction(fn, **settings)
    _LIVE.add(cf)  # (for reset())
    return cf


def _fusion_asked(mode, options) -> bool:
    """Whether to fuse elementwise runs with Numba (Note [Fusion] in _compile/fuse.py):
    ``mode="max-autotune"`` (or its no-cudagraphs form) or ``options={"fuse": True}``."""
    fuse = mode in ("max-autotune", "max-autotune-no-cudagraphs") or \
        bool((options or {}).get("fuse", False))
    if fuse:
        from ._compile.fuse import available

        if not available():
            raise RuntimeError(
                f"retrograd.compile: {'mode=' + repr(mode) if mode else 'options fuse=True'}"
                " fuses elementwise calls with Numba, which is not installed: pip install "
                "'retrograd[compile]' (or numba), or compile without it (the default mode "
                "replays NumPy calls)")
    return fuse


def _invalid_backend(name) -> Exception:
    return RuntimeError(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` "
                        f"for available backends (retrograd: {', '.join(list_backends())})")


def compiled_call(module, settings: dict) -> CompiledFunction:
    """The compiled form of ``module``'s calls (its hooks included, as torch.compile's)."""
    return _compiled_function(module._call_uncompiled, settings)


class OptimizedModule(Module):
    """What ``compile(module)`` returns (torch._dynamo's OptimizedModule): a module that
    holds the original as its submodule ``_orig_mod`` (so its ``state_dict`` keys carry
    that prefix, as PyTorch's) and whose calls run through a compiled plan; attributes it
    does not have are the original's.

    Example:
        >>> import retrograd as torch
        >>> m = torch.compile(torch.nn.Linear(2, 2))
        >>> type(m._orig_mod).__name__, list(m.state_dict())
        ('Linear', ['_orig_mod.weight', '_orig_mod.bias'])
    """

    def __init__(self, mod, settings: dict):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled_call(mod, settings)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """The compiled call (as torch's OptimizedModule.forward)."""
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def _module_compile(self, *args, **kwargs) -> None:
    """Compile this module's calls in place (``retrograd.compile``'s arguments);
    ``_compiled_call_impl`` holds the compiled function (Note [Compiled modules] in
    nn/modules/module.py).

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.Linear(2, 1)
        >>> m.compile()
        >>> with torch.no_grad():
        ...     outs = [m(torch.ones(2)) for _ in range(3)]
        >>> bool((outs[0] == outs[2]).all())
        True
    """
    settings = _settings(*args, **kwargs)
    if self.__dict__.get("_compiled_call_impl") is None:
        self.__dict__["_hook_count"] += 1
    self.__dict__["_compiled_call_impl"] = compiled_call(self, settings)


_module_compile.__name__ = _module_compile.__qualname__ = "compile"
Module.compile = _module_compile


@dataclass
class ExplainOutput:
    """What ``explain`` found (torch._dynamo's ExplainOutput): how many plans (graphs),
    how many breaks, and each break's reason with the user's line."""

    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    op_count: int = 0
    plans: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:\n    Reason: {b.reason}\n"
                         f"    User Stack: {b.user_stack}")
        return "\n".join(lines) + "\n"


@dataclass
class BreakReason:
    """One graph break: why, and the user's line where it happened."""

    reason: str
    user_stack: str


def explain(fn: Callable, *args, **kwargs):
    """Trace ``fn(*args, **kwargs)`` once and report its graph breaks
    (``torch._dynamo.explain``). With no arguments, returns a function that takes them
    (PyTorch's newer form ``explain(fn)(*args)``).

    Example:
        >>> import retrograd as torch
        >>> def f(x):
        ...     y = x.sin()
        ...     if y.sum() > 0:  # reads a value: a graph break
        ...         y = y * 2
        ...     return y
        >>> out = torch.compiler.explain(f, torch.ones(3))
        >>> out.graph_break_count, "bool()" in out.break_reasons[0].reason
        (1, True)
    """
    if not args and not kwargs:
        return lambda *a, **k: explain(fn, *a, **k)
    from ._compile.plan import Plan, PlanError
    from ._compile.trace import trace_call

    cf = _compiled_of(fn)
    tr = trace_call(fn if cf is None else cf._fn, args, kwargs)
    out = ExplainOutput()
    out.break_reasons = [BreakReason(r, site) for r, site in tr.breaks]
    if not tr.breaks:
        try:
            plan = Plan(tr)
            out.plans.append(plan)
            out.op_count = sum(plan.keep)
        except PlanError as err:
            out.break_reasons.append(BreakReason(str(err), "?"))
    out.graph_break_count = len(out.break_reasons)
    out.graph_count = len(out.plans) + out.graph_break_count
    return out


def show(fn) -> str:
    """The plans a compiled function holds, as text: each plan's straight-line code,
    its buffers (reused and in place), the calls removed as dead; for entries that run
    eagerly, the reasons.

    Example:
        >>> import retrograd as torch
        >>> f = torch.compile(lambda x: (x * 2).exp())
        >>> for _ in range(3):
        ...     _ = f(torch.ones(4))
        >>> print(torch.compiler.show(f).splitlines()[1].split(",")[0])
        # plan: 2 calls (0 dead ones removed)
    """
    cf = _compiled_of(fn, "show")
    parts = []
    for i, e in enumerate(cf.entries):
        parts.append(f"# entry {i}: guards {e.guards.source[:200]}"
                     f"{'...' if len(e.guards.source) > 200 else ''}")
        if e.plan is not None:
            parts.append(e.plan.listing())
        elif e.eager:
            parts.extend(f"# runs eagerly: {r} (at {site})" for r, site in e.reasons)
        else:
            parts.append("# traced once; the next call with these guards traces again to "
                         "confirm the plan (Note [Second trace])")
    return "\n".join(parts) + "\n"


def draw_plan(fn, entry: int | None = None):
    """A picture of a compiled function's plan (``entry``: which set of guards, as
    ``show`` numbers them; the most recently used plan by default): its calls, the
    arrays between them, reused buffers, in-place writes, checks and draws, and its
    compiled backward (Note [Plan pictures] in _compile/picture.py). Returns a
    ``GraphPicture`` (``.source`` is DOT text, ``.save("plan.svg")`` renders it where
    Graphviz is installed).

    Example:
        >>> import retrograd as torch
        >>> f = torch.compile(lambda x: x.sin() * 2)
        >>> for _ in range(3):
        ...     _ = f(torch.ones(3))
        >>> [n["label"] for n in torch.compiler.draw_plan(f).nodes]
        ['args[0]', 'sin', 'mul']
    """
    from ._compile.picture import plan_picture

    cf = _compiled_of(fn, "draw_plan")
    plans = [(i, e.plan) for i, e in enumerate(cf.entries) if e.plan is not None]
    if entry is not None:
        plans = [(i, p) for i, p in plans if i == entry]
    if not plans:
        raise RuntimeError("no plan to draw yet: a compiled function replays from its third "
                           "call with the same guards (torch.compiler.show says why an entry "
                           "runs eagerly)")
    return plan_picture(plans[0][1])  # (entries are kept most recently used first)


def _compiled_of(fn, who: str | None = None) -> CompiledFunction | None:
    """The CompiledFunction behind what ``compile`` returned: itself, an OptimizedModule's,
    or the one ``Module.compile()`` installed. None (``who`` None) or TypeError else."""
    if isinstance(fn, OptimizedModule):
        return fn._compiled
    if isinstance(fn, Module) and fn.__dict__.get("_compiled_call_impl") is not None:
        return fn._compiled_call_impl
    if isinstance(fn, CompiledFunction) or who is None:
        return fn if isinstance(fn, CompiledFunction) else None
    raise TypeError(f"retrograd.compiler.{who} expects what retrograd.compile returned (or a "
                    f"module after .compile()), not {type(fn).__name__}")


def reset() -> None:
    """Forget every plan of every compiled function (``torch._dynamo.reset()``).

    Example:
        >>> import retrograd as torch
        >>> torch.compiler.reset()
    """
    for cf in _LIVE:
        cf.entries.clear()
        cf.recompile_reasons.clear()
        cf._warned = False


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None):
    """Mark ``fn`` to run uncompiled (``torch.compiler.disable``): inside a compiled
    function its calls are traced as eager code is, and compiling it runs it eagerly.

    Example:
        >>> import retrograd as torch
        >>> f = torch.compiler.disable(lambda x: x + 1)
        >>> torch.compile(f)(torch.ones(1))
        tensor([2.])
    """
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    try:
        fn._retrograd_compile_disabled = True
    except (AttributeError, TypeError):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            return fn(*a, **k)
        wrapper._retrograd_compile_disabled = True
        return wrapper
    return fn


def is_compiling() -> bool:
    """Whether a trace is recording now (``torch.compiler.is_compiling``).

    Example:
        >>> import retrograd as torch
        >>> torch.compiler.is_compiling()
        False
    """
    return bool(R.REC[0].active)


is_dynamo_compiling = is_compiling


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The backend names ``compile`` accepts.

    Example:
        >>> import retrograd as torch
        >>> "inductor" in torch.compiler.list_backends()
        True
    """
    return sorted(b for b in _BACKENDS)
