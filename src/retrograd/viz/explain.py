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
- ``'not_reached'``: ``t`` is used by some graph, but not by the ``loss`` given.
- ``'no_backward'``: ``t`` is on the graph, but no backward pass has filled its grad
  since it was last reset (``optimizer.zero_grad()`` sets grads to None).

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

import linecache
import os

from .._graph.node import AccumulateGrad, site_line
from .._graph.provenance import Cut, recent_cuts
from .._tensor import Tensor

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

    def __str__(self) -> str:
        s = self.message
        if self.fix:
            s += "\n  Fix: " + self.fix
        if len(self.cuts) > 1:
            s += "\n  Other cuts on its paths: " + "; ".join(
                _cut_where(c) for c in self.cuts[1:4])
        return s

    def __repr__(self) -> str:
        return f"<GradExplanation {self.cause}: {self.message.splitlines()[0]}>"


def _cut_where(c: Cut) -> str:
    where, code = _where(c.site)
    s = f"{c.op} at {where or 'an unknown line'}"
    return s + (f" ({code})" if code else "")


def _cut_explanation(name: str, c: Cut, cuts: list, about_source: bool,
                     t: Tensor | None = None) -> GradExplanation:
    why, fix = _FIX.get(c.reason, ("the gradient path ends there", ""))
    where, code = _where(c.site)
    at = f"{c.op} at {where}" + (f": `{code}`" if code else "") if where else c.op
    src = ""
    if c.src_name and c.src_name.endswith("AccumulateGrad"):
        src = " (applied to a leaf tensor that requires grad)"
    elif c.src_name:
        swhere, _ = _where(c.src_site)
        src = f" (applied to the output of {c.src_name}" + (
            f" from {swhere})" if swhere else ")")
    if about_source:
        msg = (f"{name}.grad is None because the path from the loss to {name} was cut by "
               f"{at}{src}: {why}.")
    elif c.reason in ("detach_", "requires_grad_false"):
        msg = f"{name} does not require grad: {at}{src}: {why}."
    elif c.last_out is not None and c.last_out() is t:
        msg = f"{name} does not require grad: it was made by {at}{src}, and {why}."
    else:  # a value computed from the cut one, or an older result of the same line
        msg = (f"{name} does not require grad: its path back to the graph was cut by "
               f"{at}{src}: {why}.")
    return GradExplanation("cut", msg, fix, c.reason, c.op, c.site, cuts)


# Without the loss, a cut is chosen among those that reach the tensor by how often it
# is the bug rather than routine: logging (item()) and evaluation (no_grad, masks)
# reach every parameter in a normal training loop, so they come last.
_PRIORITY = {"detach": 0, "data": 0, "detach_": 0, "requires_grad_false": 0, "inplace": 1,
             "integer": 1, "comparison": 2, "no_grad": 3, "item": 4, "tolist": 4, "numpy": 4}


def _cuts_used_by(loss, t) -> list:
    """(node, cut) for cut values that the loss's graph consumed and that came from t."""
    root = loss.grad_fn
    if root is None:
        return []
    out, seen, stack = [], {root}, [root]
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


def explain_grad(tensor: Tensor, loss: Tensor | None = None, name: str = "the tensor"
                 ) -> GradExplanation:
    """Say why ``tensor.grad`` is None (or that it is not), naming the op and line.

    Pass the ``loss`` you called backward() on to check that the tensor is on its
    graph; ``name`` is used in the message. ``print()`` the result for the full text.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(3, requires_grad=True)
        >>> with torch.no_grad():
        ...     h = w * 2
        >>> e = torch.explain_grad(h, name="h")
        >>> e.cause, e.reason, e.op
        ('cut', 'no_grad', 'mul')
        >>> torch.explain_grad(torch.zeros(2), name="z").cause
        'not_requires_grad'
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"explain_grad expects a Tensor, got {type(tensor).__name__}")
    t = tensor
    if t._grad is not None:
        return GradExplanation("has_grad", f"{name}.grad is set (shape {tuple(t.shape)}).")

    # computed tensors ------------------------------------------------------------
    if t.grad_fn is not None:
        node = t.grad_fn
        where, code = _where(node._site)
        made = f"{node.name()}" + (f" at {where}" if where else "") + (
            f": `{code}`" if code else "")
        if t._retains:
            if loss is not None and loss.grad_fn is not None and not _reachable(
                    loss.grad_fn, node):
                return GradExplanation(
                    "not_reached", f"{name} keeps its grad (retain_grad()), but it is not on "
                    "the graph of the loss, so backward() never reaches it.",
                    "check that the loss is computed from it", op=node.name(), site=node._site)
            return GradExplanation(
                "no_backward", f"{name} keeps its grad (retain_grad()), but no backward pass "
                "has reached it since.", "call loss.backward() after retain_grad()",
                op=node.name(), site=node._site)
        leaves = _leaves_of(node)
        hint = ""
        if len(leaves) == 1 and _small(node):
            hint = (" It looks like a parameter that became a computed tensor (e.g. "
                    "torch.randn(..., requires_grad=True) * 0.1): make the leaf last, "
                    "w = (torch.randn(...) * 0.1).requires_grad_().")
        return GradExplanation(
            "not_leaf",
            f"{name} is not a leaf: it was computed by {made}. backward() fills .grad only "
            "for leaves (tensors created with requires_grad=True, and parameters); a computed "
            f"tensor's gradient is passed on to its inputs and then dropped.{hint}",
            f"call {name}.retain_grad() before backward() to keep it, or get it directly "
            f"with torch.autograd.grad(loss, {name}) or a hook ({name}.register_hook(fn))",
            op=node.name(), site=node._site)

    # leaves that do not require grad -----------------------------------------------
    if not t._rg:
        c = t._cut
        if c is not None:
            return _cut_explanation(name, c, [c], about_source=False, t=t)
        if not t.is_floating_point():
            return GradExplanation(
                "not_requires_grad",
                f"{name} has dtype {t.dtype}: only floating-point tensors can require grad.",
                f"convert it first ({name}.float()) if it should have a gradient",
                op=None)
        # No cut marker: no value that required grad is among its sources (cut values
        # pass their marker on to what is computed from them, Note [Cut markers]).
        return GradExplanation(
            "not_requires_grad",
            f"{name} is a leaf that does not require grad: it was created without "
            "requires_grad=True (or from data such as a NumPy array or Python numbers), "
            "and no tensor that requires grad was used to compute it, so nothing is "
            "recorded for it.",
            f"create it with requires_grad=True, or call {name}.requires_grad_() before the "
            "forward pass", op=None)

    # leaves that require grad but have no grad ------------------------------------------
    acc = t._acc
    on_loss = None
    if loss is not None:
        if not loss._rg:
            c = loss._cut  # the cut on the loss's own path (Note [Cut markers])
            if c is not None and c.reaches(t):
                e = _cut_explanation(name, c, [c], about_source=True)
                e.message = "the loss does not require grad (backward() cannot run on it), " \
                    "and " + e.message[0].lower() + e.message[1:]
                return e
            inner = explain_grad(loss, name="the loss")
            return GradExplanation(
                inner.cause, f"the loss does not require grad, so backward() cannot reach "
                f"{name}. Why: " + inner.message, inner.fix, inner.reason, inner.op,
                None, inner.cuts)
        root = loss.grad_fn if loss.grad_fn is not None else loss._acc
        on_loss = acc is not None and root is not None and _reachable(root, acc)
        if on_loss:
            return GradExplanation(
                "no_backward", f"{name} is on the graph of the loss, but its .grad is None: "
                "backward() has not run on that graph since the grad was last reset "
                "(optimizer.zero_grad() sets grads to None by default).",
                "call loss.backward() before reading .grad (and zero_grad() before the "
                "forward pass, not between backward() and step())")
    if loss is not None:
        used = _cuts_used_by(loss, t)
        if used:
            node, c = used[0]
            e = _cut_explanation(name, c, [c for _, c in used], about_source=True)
            uwhere, ucode = _where(node._site)
            if uwhere:
                e.message += (f" The cut value was then used by {node.name()} at {uwhere}"
                              + (f": `{ucode}`." if ucode else "."))
            return e
    cuts = sorted((c for c in recent_cuts() if c.reaches(t)),
                  key=lambda c: (_PRIORITY.get(c.reason, 5), -c.seq))
    if cuts:
        return _cut_explanation(name, cuts[0], cuts, about_source=True)
    if acc is None:
        return GradExplanation(
            "not_used", f"{name} requires grad but no op that records gradients has used it "
            "(it never entered a graph).",
            f"check that the loss is computed from {name} (and not from a copy made with "
            "torch.tensor(...) or NumPy)")
    if on_loss is False:
        return GradExplanation(
            "not_reached", f"{name} is used by a graph, but not by the graph of this loss, and "
            "no cut on its paths was recorded.",
            f"check that the loss is computed from {name}; draw the graph with "
            "retrograd.viz.draw_graph(loss) to see what it depends on")
    return GradExplanation(
        "no_backward", f"{name} is used by a graph and no cut on its paths was recorded, so "
        "either backward() has not run yet, or its .grad was reset to None since "
        "(optimizer.zero_grad()), or the loss you called backward() on does not depend on it.",
        f"call loss.backward() first; pass loss= to explain_grad to check that {name} is on "
        "that loss's graph")


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
