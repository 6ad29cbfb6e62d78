"""``explain_grad(t)``: why is ``t.grad`` None? Names the cause, the op and the line.

The causes, in the order they are checked:

- ``'has_grad'``: it is not None.
- ``'not_leaf'``: ``t`` was computed (it has a ``grad_fn``) and ``retain_grad()`` was
  not called: backward fills ``.grad`` only for leaves.
- ``'cut'``: the gradient path was cut: ``detach()``, ``.data``, an op under
  ``no_grad()``, a cast to an integer dtype, a comparison, an in-place write under
  ``no_grad()``, ``detach_()``, ``requires_grad_(False)``, or a value taken out with
  ``item()``/``tolist()``/``numpy()``. The op and the user's line are named
  (markers left by the core, Note [Cut markers] in _graph/provenance.py).
- ``'not_requires_grad'``: ``t`` is a leaf made without ``requires_grad=True``.
- ``'not_used'``: ``t`` requires grad but no recorded op ever used it.
- ``'not_reached'``: ``t`` is used by some graph, but not by the ``loss``.
- ``'no_backward'``: ``t`` is on the graph, but no backward pass has filled its grad
  since it was last reset (``optimizer.zero_grad()`` sets grads to None).

For a leaf, the loss is the ``loss=`` given, else the tensor the last ``backward()``
was called on (Note [The last backward] in _graph/provenance.py): the cut named is
the one on the path from that loss to the leaf. With no backward to go by, the cuts
recorded on the leaf's paths are listed as candidates, none claimed as the cause.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> h = w.detach()
    >>> loss = (h * 3).sum()
    >>> e = torch.explain_grad(w, name="w")
    >>> e.cause, e.reason, e.op
    ('cut', 'detach', 'detach()')
"""

from __future__ import annotations

import ast
import itertools
import linecache
import os
import sys

from .._graph.node import AccumulateGrad, _Packed, is_library_file, site_line
from .._graph.provenance import Cut, last_backward, recent_cuts
from .._tensor.tensor import Tensor

__all__ = ["explain_grad", "GradExplanation"]

_FIX = {
    "detach": ("a detached tensor shares the values but has no history, so no gradient "
               "flows back through it",
               "use the tensor itself where gradients must flow; detach only values you log "
               "or want as constants"),
    "data": (".data returns the values without history (it is detach() without the "
             "version check), so no gradient flows back through it",
             "use the tensor itself (or .detach() for a deliberate constant)"),
    "no_grad": ("ops inside a no_grad() / inference_mode() block record no history",
                "move this computation out of the no_grad() block (keep no_grad for "
                "evaluation and parameter updates)"),
    "integer": ("integer tensors carry no gradient, so the path stops at the cast",
                "stay in floating point (torch.round keeps a float dtype), or use a "
                "straight-through estimator: y = x + (x.round() - x).detach()"),
    "comparison": ("comparisons give bool tensors, which carry no gradient",
                   "select values with torch.where(cond, a, b) (gradients flow to a and b), "
                   "or use a smooth surrogate such as torch.sigmoid(k * (x - t))"),
    "inplace": ("an in-place write under no_grad() copies the values into a tensor that "
                "records no history",
                "write outside no_grad() (x[i] = v and x.copy_(v) are differentiable), or "
                "build the tensor with torch.stack / torch.cat"),
    "detach_": ("detach_() removed the tensor from the graph in place",
                "use y = x.detach() (a new tensor) where you need a constant, and keep x in "
                "the graph"),
    "requires_grad_false": ("requires_grad_(False) turned gradient tracking off for this "
                            "leaf, so later ops on it record nothing",
                            "call requires_grad_(True) again before the forward pass (or "
                            "don't freeze it)"),
    "item": ("item() returns a Python number; values computed from it have no history",
             "keep the value as a tensor (use the tensor instead of .item()); call item() "
             "only for logging"),
    "tolist": ("tolist() returns Python numbers; values computed from them have no history",
               "keep the values as a tensor"),
    "numpy": ("a NumPy array has no history; tensors made from it do not require grad",
              "do the computation with tensor ops instead of NumPy"),
}


def _where(site) -> tuple:
    """(``'file.py:12'``, line text) of a (code, line) site."""
    if site is None:
        return None, ""
    code, line = site_line(site)
    return (f"{os.path.basename(code.co_filename)}:{line}",
            linecache.getline(code.co_filename, line).strip())


class GradExplanation:
    """The answer of ``explain_grad``: ``cause``, ``reason``, ``op``, ``site`` (``'file:line'``),
    ``code`` (the line's text), ``message``, ``fix``, and ``cuts`` (every cut that was
    found on the tensor's paths, newest first). ``str()`` gives the full explanation.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> e = torch.explain_grad(x * 2, name="y")
        >>> e.cause, e.op
        ('not_leaf', 'MulBackward0')
    """

    def __init__(self, cause: str, message: str, fix: str = "", reason: str | None = None,
                 op: str | None = None, site=None, cuts: list | None = None):
        self.cause = cause
        self.reason = reason
        self.op = op
        self.site, self.code = _where(site)
        self.lineno = None if site is None else site_line(site)[1]
        self.message = message
        self.fix = fix
        self.cuts = cuts or []
        self._listed = False  # the message lists every cut itself (candidates, none claimed)

    def __str__(self) -> str:
        s = self.message
        if self.fix:
            s += "\n  Fix: " + self.fix
        if len(self.cuts) > 1 and not self._listed:
            s += "\n  Other cuts on its paths: " + "; ".join(
                _cut_where(c) for c in self.cuts[1:4])
        return s

    def __repr__(self) -> str:
        return f"<GradExplanation {self.cause}: {self.message.splitlines()[0]}>"


def _cut_where(c: Cut) -> str:
    where, code = _where(c.site)
    s = f"{c.op} at {where or 'an unknown line'}"
    return s + (f" ({code})" if code else "")


# Note [Naming the tensor]
# Fix texts are code a user can paste: ``z.retain_grad()``, never "the
# tensor.retain_grad()". Without ``name=``, the tensor is named by the expression the
# user passed: the explain_grad(...) call on the user's line is parsed (its exact span
# from the code's positions table where Python keeps one, else the whole line) and its
# argument taken when it is a variable, an attribute or an index (``w``,
# ``model.fc.weight``, ``params[0]``). The loss is named in the same way, from the
# ``loss=`` argument or from the last backward() call (``loss.backward()``,
# ``torch.autograd.backward(loss)``), and the leaves of a loss from the user's variables
# that hold them. A ``name=`` that is no expression ("the first layer") is used in the
# prose, and the code says ``tensor`` (or the last word of "the loss": ``loss``).
class _Name:
    """How the prose calls a tensor (``text``) and how fix code writes it (``code``)."""

    __slots__ = ("text", "code")

    def __init__(self, text: str, code: str):
        self.text, self.code = text, code

    @property
    def grad(self) -> str:
        return f"{self.text}.grad" if self.text == self.code else f"{self.text}'s .grad"


def _plain(expr) -> bool:
    """Whether an expression is a name, attribute or constant index: safe to write twice."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Subscript) and not isinstance(
                expr.slice, (ast.Constant, ast.Name)):
            return False
        expr = expr.value
    return isinstance(expr, ast.Name)


def _as_name(name: str) -> _Name:
    try:
        plain = _plain(ast.parse(name.strip(), mode="eval").body)
    except SyntaxError:
        plain = False
    if plain:
        return _Name(name, name)
    words = name.split()
    if len(words) == 2 and words[0] == "the" and words[1].isidentifier():
        return _Name(name, words[1])  # "the loss": loss
    return _Name(name, "tensor")


def _func_name(func) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _call_at(site, fname: str):
    """The ``ast.Call`` of the function ``fname`` at a (code, offset, ...) site, or None."""
    if site is None or len(site) != 3:
        return None
    code, lasti = site[0], site[1]
    lines = linecache.getlines(code.co_filename)
    positions = getattr(code, "co_positions", None)  # Python 3.11+
    pos = None
    if positions is not None and lasti >= 0:  # one entry per 2-byte code unit
        pos = next(itertools.islice(positions(), lasti // 2, None), None)
    try:
        if pos is not None and None not in pos:
            l0, l1, c0, c1 = pos
            part = [ln.encode() for ln in lines[l0 - 1:l1]]
            if len(part) != l1 - l0 + 1:
                return None
            part[-1] = part[-1][:c1]
            part[0] = part[0][c0:]
            tree = ast.parse("(" + b"".join(part).decode() + ")", mode="eval")
        else:
            line = site_line(site)[1]
            tree = ast.parse(lines[line - 1].strip()) if 0 < line <= len(lines) else None
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    if tree is None:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _func_name(n.func) == fname]
    return calls[0] if len(calls) == 1 or (calls and pos is not None) else None


def _arg(call, k: int, keyword: str) -> str | None:
    """The source of argument ``k`` (or ``keyword=``) of a call when it is plain."""
    if call is None:
        return None
    expr = call.args[k] if len(call.args) > k else next(
        (kw.value for kw in call.keywords if kw.arg == keyword), None)
    return ast.unparse(expr) if expr is not None and _plain(expr) else None


def _backward_subject(site) -> str | None:
    """What a ``backward()`` call at ``site`` was called on: ``loss`` for ``loss.backward()``
    and for ``torch.autograd.backward(loss)``."""
    call = _call_at(site, "backward")
    if call is None:
        return None
    f = call.func
    if isinstance(f, ast.Attribute) and _func_name(f.value) != "autograd":  # loss.backward()
        return ast.unparse(f.value) if _plain(f.value) else None
    return _arg(call, 0, "tensors")


def _user_frame():
    """The first frame outside retrograd above the caller (the user's explain_grad call)."""
    f = sys._getframe(1)
    while f is not None and is_library_file(f.f_code.co_filename):
        f = f.f_back
    return f


def _names_of(frame, tensors: list) -> list:
    """The user's variables (in ``frame``) that hold ``tensors``, in their order."""
    if frame is None:
        return []
    found: dict = {}
    for scope in (frame.f_locals, frame.f_globals):
        for k, v in scope.items():
            if isinstance(v, Tensor) and not k.startswith("_"):
                found.setdefault(id(v), k)
    return [found[id(t)] for t in tensors if id(t) in found]


class _Loss:
    """The loss an explanation checks against: the ``loss=`` given, or the tensors of the
    last backward() (Note [The last backward]); ``code`` names it in fix code."""

    __slots__ = ("tensors", "record", "code", "implicit")

    def __init__(self, loss, call):
        self.record = None
        self.implicit = loss is None
        if loss is not None:
            self.tensors = [loss]
            self.code = _arg(call, 1, "loss") or "loss"
            return
        self.record = rec = last_backward()
        self.tensors = rec.tensors() if rec is not None else []
        self.code = (_backward_subject(rec.site) if rec is not None else None) or "loss"

    def graphs(self) -> list:
        """The graph roots of the tensors that require grad."""
        out = []
        for r in self.tensors:
            if r._rg:
                g = r.grad_fn if r.grad_fn is not None else r._acc
                if g is not None:
                    out.append(g)
        return out

    def gone(self) -> bool:
        """A backward() ran, but every tensor it was called on has since been freed."""
        return self.record is not None and not self.tensors

    def at(self, skip: str = "") -> str:
        """``at f.py:6: `loss.backward()` ``, where the last backward() was called (``''``
        when the loss was given); the line's text is left out when it is ``skip``."""
        if self.record is None:
            return ""
        where, code = _where(self.record.site)
        if not where:
            return ""
        return f"at {where}" + (f": `{code}`" if code and code != skip else "")

    def subject(self) -> str:
        """How the prose calls the loss."""
        if not self.implicit:
            return "the loss"
        at = self.at()
        return "the loss of the last backward()" + (f" ({at})" if at else "")

    def note(self) -> str:
        """A sentence saying which loss was checked, when it was not given."""
        if not self.implicit or self.record is None:
            return ""
        at = self.at()
        return (" The loss checked is the one backward() was last called on"
                + (f", {at}" if at else "") + "; pass loss= to check another.")


def _paren(s: str) -> str:
    return f" ({s})" if s else ""


def _cut_explanation(nm: _Name, c: Cut, cuts: list, about_source: bool,
                     t: Tensor | None = None) -> GradExplanation:
    why, fix = _FIX.get(c.reason, ("the gradient path ends there", ""))
    at = _cut_at(c)
    src = ""
    if c.src_name and c.src_name.endswith("AccumulateGrad"):
        src = " (applied to a leaf tensor that requires grad)"
    elif c.src_name:
        swhere, _ = _where(c.src_site)
        src = f" (applied to the output of {c.src_name}" + (
            f" from {swhere})" if swhere else ")")
    if about_source:
        msg = (f"{nm.grad} is None because the path from the loss to {nm.text} was cut by "
               f"{at}{src}: {why}.")
    elif c.reason in ("detach_", "requires_grad_false"):
        msg = f"{nm.text} does not require grad: {at}{src}: {why}."
    elif c.last_out is not None and c.last_out() is t:
        msg = f"{nm.text} does not require grad: it was made by {at}{src}, and {why}."
    else:  # a value computed from the cut one, or an older result of the same line
        msg = (f"{nm.text} does not require grad: its path back to the graph was cut by "
               f"{at}{src}: {why}.")
    return GradExplanation("cut", msg, fix, c.reason, c.op, c.site, cuts)


def _cut_at(c: Cut) -> str:
    where, code = _where(c.site)
    return f"{c.op} at {where}" + (f": `{code}`" if code else "") if where else c.op


# Without the loss, a cut is chosen among those that reach the tensor by how often it
# is the bug rather than routine: logging (item()) and evaluation (no_grad, masks)
# reach every parameter in a normal training loop, so they come last.
_PRIORITY = {"detach": 0, "data": 0, "detach_": 0, "requires_grad_false": 0, "inplace": 1,
             "integer": 1, "comparison": 2, "no_grad": 3, "item": 4, "tolist": 4, "numpy": 4}
# Cuts whose values leave as Python numbers or NumPy arrays: nothing made from them
# carries a marker, so the loss's graph cannot show them (Note [Cut markers]).
_LEAVES_TENSORS = ("item", "tolist", "numpy")


def _cuts_used_by(roots: list, t) -> list:
    """(node, cut) for cut values that the roots' graph consumed and that came from t."""
    out, seen, stack = [], set(roots), list(roots)
    while stack:
        n = stack.pop()
        for _, c in n.__dict__.get("_cut_in", ()) if hasattr(n, "__dict__") else ():
            if c.reaches(t):
                out.append((n, c))
        for e in n._edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    out.sort(key=lambda nc: -nc[1].seq)
    return out


def _reachable(root, target) -> bool:
    seen = {root}
    stack = [root]
    while stack:
        n = stack.pop()
        if n is target:
            return True
        for e in n._edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    return False


def _leaves_of(node, limit: int = 8) -> list:
    out, seen, stack = [], {node}, [node]
    while stack and len(out) < limit:
        n = stack.pop()
        for e in n._edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                if e[0].__class__ is AccumulateGrad:
                    out.append(e[0])
                else:
                    stack.append(e[0])
    return out


def explain_grad(tensor: Tensor, loss: Tensor | None = None, name: str | None = None
                 ) -> GradExplanation:
    """Say why ``tensor.grad`` is None (or that it is not), naming the op and line.

    ``loss`` is the tensor you called backward() on (by default, the one the last
    backward() was called on): the cut named is the one on the path from it. ``name``
    is how the messages call the tensor (by default, the expression you passed, such as
    ``w``). ``print()`` the result for the full text.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(3, requires_grad=True)
        >>> with torch.no_grad():
        ...     h = w * 2
        >>> e = torch.explain_grad(h)
        >>> e.cause, e.reason, e.op
        ('cut', 'no_grad', 'mul')
        >>> print(e)  # doctest: +ELLIPSIS
        h does not require grad: it was made by mul at ...
          Fix: move this computation out of the no_grad() block ...
        >>> torch.explain_grad(torch.zeros(2), name="z").cause
        'not_requires_grad'
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"explain_grad expects a Tensor, got {type(tensor).__name__}")
    t = tensor
    frame = _user_frame()
    call = None
    if frame is not None and (name is None or loss is not None):
        call = _call_at((frame.f_code, frame.f_lasti, None), "explain_grad")
    if name is None:
        given = _arg(call, 0, "tensor")
        nm = _Name(given, given) if given else _Name("the tensor", "tensor")
    else:
        nm = _as_name(name)
    if t._grad is not None:
        return GradExplanation("has_grad", f"{nm.grad} is set (shape {tuple(t.shape)}).")
    if t.grad_fn is not None:
        return _explain_computed(t, nm, _Loss(loss, call), frame)
    if not t._rg:
        return _explain_no_rg(t, nm)
    return _explain_leaf(t, nm, _Loss(loss, call))


def _explain_no_rg(t: Tensor, nm: _Name) -> GradExplanation:
    """A leaf that does not require grad."""
    c = t._cut
    if c is not None:
        return _cut_explanation(nm, c, [c], about_source=False, t=t)
    if not t.is_floating_point():
        return GradExplanation(
            "not_requires_grad",
            f"{nm.text} has dtype {t.dtype}: only floating-point tensors can require grad.",
            f"convert it first ({nm.code}.float()) if it should have a gradient",
            op=None)
    # No cut marker: no value that required grad is among its sources (cut values
    # pass their marker on to what is computed from them, Note [Cut markers]).
    return GradExplanation(
        "not_requires_grad",
        f"{nm.text} is a leaf that does not require grad: it was created without "
        "requires_grad=True (or from data such as a NumPy array or Python numbers), "
        "and no tensor that requires grad was used to compute it, so nothing is "
        "recorded for it.",
        f"create it with requires_grad=True, or call {nm.code}.requires_grad_() before the "
        "forward pass", op=None)


def _explain_computed(t: Tensor, nm: _Name, loss: _Loss, frame) -> GradExplanation:
    """A tensor with a grad_fn: not a leaf."""
    node = t.grad_fn
    where, code = _where(node._site)
    made = f"{node.name()}" + (f" at {where}" if where else "") + (
        f": `{code}`" if code else "")
    c, lc = nm.code, loss.code
    if t._retains:
        graphs = loss.graphs()
        if graphs and not any(_reachable(g, node) for g in graphs):
            return GradExplanation(
                "not_reached", f"{nm.text} keeps its grad (retain_grad()), but it is not on "
                "the graph of the loss, so backward() never reaches it." + loss.note(),
                f"check that {lc} is computed from {c}", op=node.name(), site=node._site)
        return GradExplanation(
            "no_backward", f"{nm.text} keeps its grad (retain_grad()), but no backward pass "
            "has reached it since.", f"call {lc}.backward() after {c}.retain_grad()",
            op=node.name(), site=node._site)
    head = f"{nm.text} is not a leaf: it was computed by {made}"
    rule = ("backward() fills .grad only for leaves (tensors created with "
            "requires_grad=True, and parameters)")
    if any(r is t for r in loss.tensors):
        leaves = [a.variable for a in sorted(_leaves_of(node), key=lambda a: -a._seq)]
        names = _names_of(frame, [v for v in leaves if v is not None])
        which = ", ".join(f"{n}.grad" for n in names) or "the .grad of each leaf"
        return GradExplanation(
            "not_leaf",
            f"{head}, and it is the tensor the last backward() was called on"
            f"{_paren(loss.at(skip=code))}. {rule}: "
            f"the gradients of {nm.text} with respect to its leaves are in their .grad, and "
            f"{nm.text}'s gradient with respect to itself (all ones) is not kept.",
            f"read the gradients from the leaves ({which}); to keep {c}'s own gradient too, "
            f"call {c}.retain_grad() before {c}.backward()",
            op=node.name(), site=node._site)
    if _lost_leaf(t, node):
        return GradExplanation(
            "not_leaf",
            f"{head}. {rule}, and it looks like a parameter that became a computed tensor: "
            f"nothing but its graph holds the leaf {nm.text} was computed from, so no code "
            "can read that leaf's .grad (as after w = torch.randn(3, requires_grad=True) * "
            "0.1, self.w = nn.Parameter(torch.randn(3)) * 0.1, or an update w = w - lr * "
            "w.grad outside torch.no_grad()). Make the leaf last: "
            "w = (torch.randn(3) * 0.1).requires_grad_().",
            f"make {c} itself the leaf: {c} = (torch.randn(...) * 0.1).requires_grad_() or "
            f"{c} = nn.Parameter(torch.randn(...) * 0.1), and update it in place under "
            f"no_grad (with torch.no_grad(): {c} -= lr * {c}.grad)",
            op=node.name(), site=node._site)
    return GradExplanation(
        "not_leaf",
        f"{head}. {rule}; a computed tensor's gradient is passed on to its inputs and then "
        "dropped.",
        f"call {c}.retain_grad() before {lc}.backward() to keep it, or get it directly "
        f"with torch.autograd.grad({lc}, {c}) or a hook ({c}.register_hook(print))",
        op=node.name(), site=node._site)


# Note [Lost leaves]
# "A parameter that became a computed tensor" (w = torch.randn(3, requires_grad=True)
# * 0.1; self.w = nn.Parameter(torch.randn(3)) * 0.1; w = w - lr * w.grad outside
# no_grad()) is told from an ordinary intermediate (y = x * 2) by what still holds its
# one leaf: nothing but the graph. The leaf's accumulator holds it weakly (so it may be
# gone already), a node that saved it holds it in its saved list, a view holds its
# base; any other reference (a variable, a module's parameter table, an optimizer) means
# some code can still read the leaf's .grad, and the tensor is an ordinary intermediate.
# The other references are sys.getrefcount's count less the graph's, measured against a
# probe object held the same way (so the interpreter's own references cancel out).
def _lost_leaf(t: Tensor, node) -> bool:
    """Whether ``t``'s small graph has one leaf that nothing but the graph holds."""
    leaves = _leaves_of(node)
    if len(leaves) != 1 or not _small(node):
        return False
    var = leaves[0].variable
    if var is None:
        return True
    inside = _graph_refs(t, node, var)
    probe = object()
    return sys.getrefcount(var) - sys.getrefcount(probe) <= inside


def _graph_refs(t: Tensor, node, var) -> int:
    """References to ``var`` held by ``t`` (as a view's base) and by ``node``'s graph."""
    n_refs = 0
    base = t
    while base._base is not None:
        n_refs += base._base is var
        base = base._base
    seen, stack = {node}, [node]
    while stack:
        n = stack.pop()
        saved = n._saved
        if saved.__class__ in (list, tuple) or isinstance(saved, list):
            for s in saved:
                n_refs += s is var or (s.__class__ is _Packed and s.packed is var)
        for e in n._edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    return n_refs


def _listing(cuts: list) -> str:
    """The candidate cuts, one clause each."""
    return "; ".join(f"{_cut_at(c)} ({_FIX.get(c.reason, ('the path ends there',))[0]})"
                     for c in cuts[:4])


def _explain_leaf(t: Tensor, nm: _Name, loss: _Loss) -> GradExplanation:
    """A leaf that requires grad but has no grad: find the cut on the loss's path."""
    # a loss that does not require grad: backward() raised on it -------------------------
    dead = loss.gone()
    own = list(loss.record.cuts) if dead else [r._cut for r in loss.tensors if not r._rg]
    for c in own:
        if c is not None and c.reaches(t):  # the cut on the loss's own path
            e = _cut_explanation(nm, c, [c], about_source=True)
            e.message = (f"{loss.subject()} does not require grad (backward() cannot run on "
                         "it), and " + e.message[0].lower() + e.message[1:])
            return e
    if len(loss.tensors) == 1 and not loss.tensors[0]._rg:
        inner = explain_grad(loss.tensors[0], name="the loss")
        return GradExplanation(
            inner.cause, f"{loss.subject()} does not require grad, so backward() cannot "
            f"reach {nm.text}. Why: " + inner.message, inner.fix, inner.reason,
            inner.op, None, inner.cuts)
    # the loss's graph ----------------------------------------------------------------
    acc = t._acc
    graphs = loss.graphs()
    on_loss = None
    if graphs:
        on_loss = acc is not None and any(_reachable(g, acc) for g in graphs)
        if on_loss:
            return GradExplanation(
                "no_backward", f"{nm.text} is on the graph of the loss, but its .grad is None: "
                "backward() has not run on that graph since the grad was last reset "
                "(optimizer.zero_grad() sets grads to None by default)." + loss.note(),
                f"call {loss.code}.backward() before reading .grad (and zero_grad() before "
                "the forward pass, not between backward() and step())")
        used = _cuts_used_by(graphs, t)
        if used:
            node, c = used[0]
            e = _cut_explanation(nm, c, [c for _, c in used], about_source=True)
            uwhere, ucode = _where(node._site)
            if uwhere:
                e.message += (f" The cut value was then used by {node.name()} at {uwhere}"
                              + (f": `{ucode}`." if ucode else "."))
            e.message += loss.note()
            return e
    return _explain_unseen(t, nm, loss, on_loss)


def _explain_unseen(t: Tensor, nm: _Name, loss: _Loss, on_loss: bool | None
                    ) -> GradExplanation:
    """A leaf whose cut the loss's graph does not show (``on_loss`` False), or with no
    graph to go by (None): the recorded cuts that reach it, claimed only when a value
    left as a Python number on the way to a known loss."""
    acc = t._acc
    cuts = sorted((c for c in recent_cuts() if c.reaches(t)),
                  key=lambda c: (_PRIORITY.get(c.reason, 5), -c.seq))
    if on_loss is not None:
        left = [c for c in cuts if c.reason in _LEAVES_TENSORS]
        if left:  # a value that left as a Python number: the graph cannot show it
            e = _cut_explanation(nm, left[0], left, about_source=True)
            e.message += loss.note()
            return e
    if acc is None:
        return GradExplanation(
            "not_used", f"{nm.text} requires grad but no op that records gradients has used "
            "it (it never entered a graph).",
            f"check that the loss is computed from {nm.code} (and not from a copy made with "
            "torch.tensor(...) or NumPy)")
    if on_loss is False:
        unseen = (f" Cuts recorded on its paths that the loss's graph does not show: "
                  f"{_listing(cuts)}." if cuts else " No cut on its paths was recorded.")
        e = GradExplanation(
            "not_reached", f"{nm.text} is used by a graph, but not by the graph of this "
            f"loss.{unseen}" + loss.note(),
            f"check that {loss.code} is computed from {nm.code}; draw the graph with "
            f"retrograd.viz.draw_graph({loss.code}) to see what it depends on",
            cuts=cuts)
        e._listed = True
        return e
    seen = (f"{loss.subject()} has been freed, so its graph cannot be searched"
            if loss.gone() else
            "no backward() was seen to show which path the loss took")
    if cuts:  # candidates only: with no graph to go by, none is claimed as the cause
        c = cuts[0]
        e = GradExplanation(
            "cut", f"{nm.grad} is None, and {seen}. Cuts recorded on the paths from "
            f"{nm.text} (any of them, if the loss was computed through it, explains it): "
            f"{_listing(cuts)}.",
            f"pass the loss, explain_grad({nm.code}, loss=loss), or call loss.backward() "
            f"first: the cut on the path from that loss to {nm.code} is then named",
            c.reason, c.op, c.site, cuts)
        e._listed = True
        return e
    return GradExplanation(
        "no_backward", f"{nm.text} is used by a graph, no cut on its paths was recorded, "
        f"and {seen}: either backward() has not run yet, or its .grad was reset to None "
        "since (optimizer.zero_grad()), or the loss you called backward() on does not "
        "depend on it.",
        f"call loss.backward() first; pass loss= to explain_grad to check that {nm.code} is "
        "on that loss's graph")


def _small(node, limit: int = 4) -> bool:
    seen, stack = {node}, [node]
    while stack:
        n = stack.pop()
        for e in n._edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                if len(seen) > limit:
                    return False
                stack.append(e[0])
    return True
