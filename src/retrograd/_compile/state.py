"""What a compiled function reaches, and the guards that say a plan still fits.

Note [Reachable state]
A trace follows the tensors the function can reach without running it: its arguments,
the cells of its closure, the globals its code names, ``self`` of a bound method, and,
inside those, modules (parameters, buffers, submodules, tensor attributes), optimizers
(parameters and state), lists, tuples, dicts and plain objects, a few levels deep.
Each such tensor's array is an input of the plan (read again at every replay), and so
is its ``.grad``. Everything else the function touches is a constant.

Note [Guards]
A plan fits a call when everything the trace depended on is as it was: the arguments'
structure, their tensors' shapes, dtypes, requires_grad and whether they have a grad,
Python numbers among the arguments (by value), the reachable objects (by identity), the
modules' training flags and hook counts, the optimizers' hyperparameters and state
layout, grad mode, autocast and the default dtype. The checks are compiled into one
Python expression per plan (a few microseconds); ``explain_miss`` re-runs them one by
one to say which failed (PyTorch's recompile reasons). The same walk taken before and
after the trace shows Python state the function changed (``self.count += 1``, a list
it appended to): a replay would not repeat that, so such a function runs eagerly
(Note [Graph breaks] in trace.py).

Example:
    >>> import retrograd as torch
    >>> from retrograd._compile.state import reach
    >>> lin = torch.nn.Linear(2, 1)
    >>> found = reach(lambda x: lin(x), (torch.ones(2),), {})
    >>> sorted(label for label, _ in found.tensors)
    ['args[0]', 'lin.bias', 'lin.weight']
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._random.rng import Generator
from .._tensor.tensor import Tensor

_SCALARS = (int, float, bool, str, bytes, type(None), complex)
_MAX_DEPTH = 6
_MAX_ITEMS = 512


@dataclass
class Reach:
    """The result of the walk: tensors (label, tensor) in discovery order, the other
    objects, the generators, and the argument leaves."""

    tensors: list = field(default_factory=list)
    objects: list = field(default_factory=list)  # (label, object)
    generators: list = field(default_factory=list)
    leaves: list = field(default_factory=list)  # the flattened arguments
    roots: list = field(default_factory=list)  # (kind, key, object): what the fn names


def flatten(args, kwargs) -> tuple[list, object]:
    """The leaves of ``(args, kwargs)`` (tensors, numbers, other objects) and the
    structure to rebuild them."""
    leaves: list = []
    return leaves, _walk((tuple(args), dict(kwargs)), leaves)


def _walk(x, leaves: list):
    # (a module function: a closure calling itself would be a reference cycle holding
    # the call's arguments until the cyclic collector runs)
    c = x.__class__
    if c is tuple or c is list:
        return (c.__name__, tuple(_walk(v, leaves) for v in x))
    if c is dict:
        return ("dict", tuple((k, _walk(v, leaves)) for k, v in x.items()))
    leaves.append(x)
    return None


def reach(fn, args, kwargs) -> Reach:
    """Walk what ``fn`` reaches (Note [Reachable state])."""
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer

    r = Reach()
    r.leaves = flatten(args, kwargs)[0]
    seen: set = set()
    todo: list = []
    for i, leaf in enumerate(r.leaves):
        todo.append((f"args[{i}]", leaf, 0))
    for kind, key, obj in _roots(fn):
        r.roots.append((kind, key, obj))
        todo.append((key, obj, 0))
    while todo:
        label, x, depth = todo.pop(0)
        if id(x) in seen or isinstance(x, _SCALARS) or depth > _MAX_DEPTH:
            continue
        if isinstance(x, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                          type, types.MethodType, np.ndarray, np.generic, np.dtype)):
            if isinstance(x, types.MethodType) and x.__self__ is not None:
                todo.append((label + ".__self__", x.__self__, depth + 1))
            continue
        seen.add(id(x))
        if isinstance(x, Tensor):
            r.tensors.append((label, x))
            continue
        if isinstance(x, Generator):
            r.generators.append(x)
            continue
        r.objects.append((label, x))
        if isinstance(x, Module):
            for name, p in x._parameters.items():
                if p is not None:
                    todo.append((f"{label}.{name}", p, depth + 1))
            for name, b in x._buffers.items():
                if b is not None:
                    todo.append((f"{label}.{name}", b, depth + 1))
            for name, m in x._modules.items():
                if m is not None:
                    todo.append((f"{label}.{name}", m, depth + 1))
            for name, v in vars(x).items():
                if name[0] != "_" and not isinstance(v, _SCALARS):
                    todo.append((f"{label}.{name}", v, depth + 1))
        elif isinstance(x, Optimizer):
            for gi, g in enumerate(x.param_groups):
                todo.append((f"{label}.param_groups[{gi}]", g, depth + 1))
            for si, st in enumerate(x.state.values()):
                todo.append((f"{label}.state[{si}]", st, depth + 1))
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x[:_MAX_ITEMS]):
                todo.append((f"{label}[{i}]", v, depth + 1))
        elif isinstance(x, dict):
            for k, v in list(x.items())[:_MAX_ITEMS]:
                todo.append((f"{label}[{k!r}]", v, depth + 1))
        elif hasattr(x, "__dict__") and not isinstance(x, type):
            for name, v in list(vars(x).items())[:_MAX_ITEMS]:
                if not isinstance(v, _SCALARS):
                    todo.append((f"{label}.{name}", v, depth + 1))
    return r


def _roots(fn):
    """What ``fn``'s code names: ``self``, closure cells, globals (kind, label, object)."""
    target = fn
    if hasattr(target, "forward") and not isinstance(target, types.FunctionType) and \
            not isinstance(target, types.MethodType):
        yield ("self", "self", target)
        target = target.forward
    if isinstance(target, types.MethodType):
        yield ("self", "self", target.__self__)
        target = target.__func__
    code = getattr(target, "__code__", None)
    if code is None:
        return
    for name, cell in zip(code.co_freevars, target.__closure__ or ()):
        try:
            yield ("cell", name, cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    g = target.__globals__
    for name in _names(code):
        if name in g:
            yield ("global", name, g[name])


def _names(code) -> list:
    """The global names a code object (and the code nested in it) reads."""
    out: list = []
    stack = [code]
    while stack:
        c = stack.pop()
        out.extend(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return list(dict.fromkeys(out))


# ----------------------------------------------------------------------------------
# guards (Note [Guards])


# Note [Guard expressions]
# A replay's guards cost about 70 ns per check (W3: 146 checks, 10 us of a 120 us call),
# so the one expression is written for speed: a check may carry a *fast form* besides
# its standalone source, and the fast forms of a tensor's checks share its array
# through an assignment expression (``(d3 := o7._data).shape == (64, 32) and
# d3.dtype == o9 and d3.strides == (128, 4)``: one attribute read, not three). The
# expression is evaluated left to right and stops at the first failing check, so a
# name is always bound before a later fast form reads it. ``explain_miss`` runs the
# standalone sources, one by one.
class Guards:
    """The checks a plan depends on: ``check(leaves)`` is one compiled expression."""

    def __init__(self, checks: list, env: dict):
        self.checks = checks  # (source, description[, fast form]): Note [Guard expressions]
        self.env = env
        src = " and ".join(f"({c[2] if len(c) > 2 else c[0]})" for c in checks) or "True"
        self.source = src
        self.check = eval(f"lambda L: {src}", env)

    def explain_miss(self, leaves) -> str:
        """The first check that fails for ``leaves`` (a recompile reason)."""
        for c, what, *_ in self.checks:
            try:
                ok = eval(f"lambda L: {c}", self.env)(leaves)
            except Exception:
                ok = False
            if not ok:
                return what
        return ""


def _value_ok(v) -> bool:
    """A Python value a guard compares by value (numbers, strings, tuples of them)."""
    if isinstance(v, _SCALARS):
        return not (isinstance(v, float) and v != v)
    if v.__class__ is tuple:
        return all(_value_ok(x) for x in v)
    return False


def build_guards(fn, found: Reach) -> Guards:
    """The guards for a plan traced with what ``found`` holds (Note [Guards])."""
    from ..amp import state as _amp
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer

    env: dict = {"STATE": STATE, "D": D, "AMP": _amp.AMP}
    checks: list = []
    n = [0]

    def ref(obj) -> str:
        n[0] += 1
        name = f"o{n[0]}"
        env[name] = obj
        return name

    checks.append((f"len(L) == {len(found.leaves)}", "the number of arguments changed"))
    for i, leaf in enumerate(found.leaves):
        if isinstance(leaf, Tensor):
            checks.extend(_tensor_checks(f"L[{i}]", leaf, f"args[{i}]", ref))
        elif _value_ok(leaf):
            checks.append((f"L[{i}].__class__ is {ref(leaf.__class__)} and L[{i}] == "
                           f"{ref(leaf)}", f"args[{i}] is no longer {leaf!r}"))
        else:
            checks.append((f"L[{i}] is {ref(leaf)}", f"args[{i}] is another object"))
    for kind, key, obj in found.roots:
        if kind == "cell":
            target = fn.__func__ if isinstance(fn, types.MethodType) else fn
            if hasattr(target, "forward") and not isinstance(target, types.FunctionType):
                continue
            cell = target.__closure__[target.__code__.co_freevars.index(key)]
            checks.append((f"{ref(cell)}.cell_contents is {ref(obj)}",
                           f"closure variable {key!r} was rebound"))
        elif kind == "global":
            g = (fn.__func__ if isinstance(fn, types.MethodType) else fn)
            g = getattr(g, "__globals__", None) or getattr(g.forward, "__globals__", {})
            if _value_ok(obj):
                checks.append((f"{ref(g)}.get({key!r}) == {ref(obj)}",
                               f"global {key!r} is no longer {obj!r}"))
            else:
                checks.append((f"{ref(g)}.get({key!r}) is {ref(obj)}",
                               f"global {key!r} was rebound"))
    arg_ids = {id(x) for x in found.leaves}
    for label, t in found.tensors:
        if id(t) not in arg_ids:
            checks.extend(_tensor_checks(ref(t), t, label, ref))
    for label, obj in found.objects:
        if isinstance(obj, Module):
            o = ref(obj)
            checks.append((f"{o}.training is {obj.training}",
                           f"{label}.training is no longer {obj.training}"))
            for dname in ("_parameters", "_buffers", "_modules"):
                d = getattr(obj, dname)
                checks.append((f"len({o}.{dname}) == {len(d)}",
                               f"{label}: a parameter, buffer or submodule was added or "
                               "removed"))
                for k, v in d.items():
                    checks.append((f"{o}.{dname}.get({k!r}) is {ref(v)}",
                                   f"{label}.{k} was replaced"))
            # (the module's own count, kept by every register and remove: Note [Module
            # call fast path] in nn/modules/module.py)
            hooks = obj.__dict__.get("_hook_count", 0)
            md = ref(None)  # the module's __dict__, read once (Note [Guard expressions])
            checks.append((f"{o}.__dict__.get('_hook_count', 0) == {hooks}",
                           f"{label}: hooks were added or removed",
                           f"({md} := {o}.__dict__).get('_hook_count', 0) == {hooks}"))
            for k, v in vars(obj).items():
                if k[0] != "_" and k != "training" and _value_ok(v):  # (training: above)
                    checks.append((f"{o}.__dict__.get({k!r}) == {ref(v)}",
                                   f"{label}.{k} is no longer {v!r}",
                                   f"{md}.get({k!r}) == {_literal(v, ref)}"))
        elif isinstance(obj, Optimizer):
            o = ref(obj)
            for gi, g in enumerate(obj.param_groups):
                pg = ref(None)  # the group, read once (Note [Guard expressions])
                first = True
                for k, v in g.items():
                    if k != "params" and _value_ok(v):
                        group = f"({pg} := {o}.param_groups[{gi}])" if first else pg
                        first = False
                        checks.append((f"{o}.param_groups[{gi}].get({k!r}) == {ref(v)}",
                                       f"{label}.param_groups[{gi}][{k!r}] is no longer "
                                       f"{v!r}", f"{group}.get({k!r}) == {_literal(v, ref)}"))
            checks.append((_state_layout_check(o, obj, ref),
                           f"{label}: the optimizer's state changed layout"))
    checks.append((f"STATE.enabled is {STATE.enabled}", "grad mode changed"))
    checks.append((f"AMP.on is {bool(_amp.AMP.on)}", "autocast was turned on or off"))
    checks.append((f"D.DEFAULTS.float is {ref(D.DEFAULTS.float)}", "the default dtype changed"))
    return Guards(checks, env)


def _literal(v, ref) -> str:
    """``v`` written into a guard: an int, bool, string or None as a literal, anything
    else (a float: ``inf`` has no literal) by reference."""
    return repr(v) if v is None or v.__class__ in (int, bool, str) else ref(v)


def _tensor_checks(expr: str, t: Tensor, label: str, ref) -> list:
    d = t._data
    a = ref(None)  # (a fresh name for the fast forms' array: Note [Guard expressions])
    shape, dtype = (f"{expr}._data.shape == {d.shape!r}", f"{expr}._data.dtype == {ref(d.dtype)}")
    none = "is None" if t._gfn is None else "is not None"
    out = [(f"{expr}.__class__ is {ref(t.__class__)}", f"{label} is no longer a tensor"),
           (shape, f"{label}.shape is no longer {tuple(d.shape)}",
            f"({a} := {expr}._data).shape == {d.shape!r}"),
           (dtype, f"{label}.dtype is no longer "
            f"{D.FROM_NP[d.dtype] if d.dtype in D.FROM_NP else d.dtype}",
            f"{a}.dtype == {dtype.rsplit(' ', 1)[1]}"),
           (f"{expr}._data.strides == {d.strides!r}", f"{label}'s memory layout changed",
            f"{a}.strides == {d.strides!r}"),
           (f"{expr}._rg is {t._rg}", f"{label}.requires_grad is no longer {t._rg}"),
           (f"{expr}._gfn {none}",
            f"{label} {'became' if t._gfn is None else 'is no longer'} a graph output"),
           (f"{expr}._grad {'is None' if t._grad is None else 'is not None'}",
            f"{label}.grad is {'no longer' if t._grad is None else 'now'} None")]
    if t._grad is not None:
        g = t._grad._data
        gdt = ref(g.dtype)
        out.append((f"{expr}._grad._data.shape == {g.shape!r} and {expr}._grad._data.dtype "
                    f"== {gdt}", f"{label}.grad changed shape or dtype",
                    f"({a} := {expr}._grad._data).shape == {g.shape!r} and {a}.dtype == {gdt}"))
    if t._base is not None:
        out.append((f"{expr}._base is {ref(t._base)}", f"{label} is a view of another base"))
    return out


def _state_layout_check(o: str, opt, ref) -> str:
    """One expression over the optimizer's state: the same dict, the same parameters
    with state, each state dict the same object with the same keys, its tensors the same
    objects and its other values equal (written out, so a check costs no call)."""
    st = opt.state
    parts = [f"{o}.state is {ref(st)}", f"len({o}.state) == {len(st)}"]
    for p, d in st.items():
        dn = ref(d)
        parts.append(f"{o}.state.get({ref(p)}) is {dn}")
        parts.append(f"len({dn}) == {len(d)}")
        for k, v in d.items():
            if isinstance(v, Tensor) or not _value_ok(v):
                parts.append(f"{dn}.get({k!r}) is {ref(v)}")
            else:
                parts.append(f"{dn}.get({k!r}) == {ref(v)}")
    return " and ".join(parts)


def fingerprint(found: Reach) -> dict:
    """The Python state of what the function reaches, to compare before and after a
    trace (Note [Guards], Note [Stores]): label -> (value, where) with numbers by value,
    objects by identity, lists by their items' identities; ``where`` is ``(container,
    key, kind)`` for a dict item or an attribute (a place a replay can store into
    again), None for the rest."""
    out: dict = {}
    for label, obj in found.objects:
        if isinstance(obj, dict):
            items = list(obj.items())[:_MAX_ITEMS]
            out[f"{label}: keys"] = (tuple(k if _value_ok(k) else id(k) for k, _ in items),
                                     None)
            for k, v in items:
                out[f"{label}[{k!r}]"] = (_fp(v), (obj, k, "item"))
        elif isinstance(obj, (list, tuple)):
            out[label] = (tuple(_fp(v) for v in obj[:_MAX_ITEMS]), None)
        elif hasattr(obj, "__dict__"):
            for k, v in vars(obj).items():
                if k in _IGNORED_ATTRS:
                    continue
                out[f"{label}.{k}"] = (_fp(v), (obj, k, "attr"))
    for label, t in found.tensors:
        out[f"{label}: requires_grad"] = (t._rg, None)
        out[f"{label}: grad_fn"] = (id(t._gfn), None)
    return out


#: attributes that change as a replay changes them (or that are caches)
_IGNORED_ATTRS = frozenset(("_grad", "_version", "__wrapped__"))


def _fp(v):
    if _value_ok(v):
        return v
    if isinstance(v, (list, tuple)) and len(v) <= _MAX_ITEMS:
        return (type(v).__name__, tuple(id(x) for x in v))
    if isinstance(v, dict) and len(v) <= _MAX_ITEMS:
        return ("dict", tuple((k if _value_ok(k) else id(k), id(x)) for k, x in v.items()))
    return ("id", id(v))
