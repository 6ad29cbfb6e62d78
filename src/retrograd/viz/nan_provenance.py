"""Where did the NaN come from? The first op whose value or gradient became non-finite.

``with nan_provenance() as prov:`` turns anomaly mode on for the block (so nodes
keep their forward traceback) and watches every recorded op: in the forward pass,
the first op whose output is non-finite although its inputs were finite; in the
backward pass (inside or after the block), the first node whose input gradients are
non-finite although the gradient it received was finite. When the non-finite
gradient sits exactly where the incoming gradient is 0, the op lies on a *masked
branch*: ``torch.where(x > 0, x.sqrt(), 0)`` computes ``sqrt`` everywhere, and at
the masked positions its derivative is ``0 * inf = nan``. The report then names
the ``where`` and shows the safe pattern (mask the input, not only the output).

``find_nonfinite(loss)`` does the backward half for a graph built outside the block.

Example:
    >>> import retrograd as torch
    >>> from retrograd.viz import nan_provenance
    >>> x = torch.tensor([-1.0, 4.0], requires_grad=True)
    >>> with nan_provenance() as prov:
    ...     y = torch.where(x > 0, x.sqrt(), 0.0)
    >>> y.sum().backward()   # inside or after the block
    >>> prov.forward["op"], prov.backward["op"], prov.backward["masked"]
    ('sqrt', 'SqrtBackward0', True)
    >>> x.grad
    tensor([   nan, 0.2500])
"""

from __future__ import annotations

import numpy as np

from .._core.grad_mode import STATE
from .._functions.creation import ones_like
from .._graph.modes import set_anomaly
from .._graph.node import AccumulateGrad
from .._graph.provenance import FORWARD_WATCHERS
from .._tensor.tensor import Tensor
from ..autograd import grad as _grad
from ._walk import saved_values, site_text, walk

__all__ = ["nan_provenance", "find_nonfinite", "NonFiniteReport"]

# Note [Non-finite provenance]
# Anomaly mode (autograd/anomaly_mode.py) stops at the first NaN *gradient*. This
# tool also wants the forward side, inf as well as NaN, and the masked-branch case,
# without stopping the program. Forward: record() calls the innermost
# FORWARD_WATCHERS callback for each op recorded while anomaly mode is on (no cost
# otherwise); the watcher checks the op's outputs and registers a post-hook on its
# node. Backward: that hook sees (grad_inputs, grad_outputs) of each node; the first
# node with a non-finite grad_input whose grad_outputs were all finite *created* the
# problem. It is "masked" when every non-finite position has an incoming gradient of
# exactly 0 (same shape): the op's derivative is infinite there, and the 0 of a
# where/mask turns it into NaN.

_SAFE = {
    "SqrtBackward0": ("sqrt", "x > 0", "torch.sqrt(safe_x)", "1.0"),
    "RsqrtBackward0": ("rsqrt", "x > 0", "torch.rsqrt(safe_x)", "1.0"),
    "LogBackward0": ("log", "x > 0", "torch.log(safe_x)", "1.0"),
    "Log2Backward0": ("log2", "x > 0", "torch.log2(safe_x)", "1.0"),
    "Log10Backward0": ("log10", "x > 0", "torch.log10(safe_x)", "1.0"),
    "DivBackward0": ("division", "x != 0", "1.0 / safe_x", "1.0"),
    "ReciprocalBackward0": ("reciprocal", "x != 0", "torch.reciprocal(safe_x)", "1.0"),
    "PowBackward0": ("pow", "x > 0", "safe_x ** p", "1.0"),
    "PowBackward1": ("pow", "x > 0", "safe_x ** p", "1.0"),
    "AcosBackward0": ("acos", "x.abs() < 1", "torch.acos(safe_x)", "0.0"),
    "AsinBackward0": ("asin", "x.abs() < 1", "torch.asin(safe_x)", "0.0"),
    "AtanhBackward0": ("atanh", "x.abs() < 1", "torch.atanh(safe_x)", "0.0"),
}

_AT_ZERO = {
    "SqrtBackward0": "sqrt has an infinite derivative at 0: use torch.sqrt(x + eps), or for a "
                     "norm torch.sqrt((x * x).sum() + eps)",
    "LogBackward0": "log has an infinite derivative at 0: use torch.log(x + eps) or "
                    "torch.log(x.clamp_min(eps))",
    "DivBackward0": "the divisor is 0: add eps to the denominator or mask it",
    "PowBackward0": "a fractional power has an infinite derivative at 0: use (x + eps) ** p",
    "NormBackward1": "the norm of a zero vector has no derivative: use "
                     "torch.sqrt((x * x).sum() + eps)",
    "LinalgVectorNormBackward0": "the norm of a zero vector has no derivative: use "
                                 "torch.sqrt((x * x).sum() + eps)",
    "ExpBackward0": "exp overflowed: subtract the maximum first (log-sum-exp), or clamp the input",
}


def _bad(arr) -> tuple:
    """(count of non-finite entries, 'nan' / 'inf' / 'nan and inf')."""
    a = np.asarray(arr)
    if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
        return 0, ""
    if a.dtype.name in ("bfloat16", "float16"):
        a = a.astype(np.float32)
    nan = int(np.isnan(a).sum())
    inf = int(np.isinf(a).sum())
    kind = "nan and inf" if nan and inf else ("nan" if nan else "inf")
    return nan + inf, kind if nan + inf else ""


class NonFiniteReport:
    """What ``nan_provenance`` / ``find_nonfinite`` found.

    ``forward``: the first op whose output was non-finite (``created`` True when its
    inputs were finite), or None. ``backward``: the first node whose input gradients
    were non-finite, with ``created``, ``masked`` (the masked-branch case) and
    ``mask_op``/``mask_site`` (the where that masks it), or None. Each is a dict with
    ``op``, ``site`` ('file:line  code'), ``kind`` ('nan'/'inf'), ``count``.
    ``ok`` is True when nothing was found; ``str(report)`` explains and gives the fix.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import nan_provenance
        >>> with nan_provenance() as prov:
        ...     y = torch.ones(2, requires_grad=True) * 2
        >>> prov.ok, str(prov)
        (True, 'no non-finite values or gradients were seen')
    """

    def __init__(self):
        self.forward: dict | None = None
        self.backward: dict | None = None
        self.forward_passed = 0
        self.backward_passed = 0
        self._nodes: list = []

    @property
    def ok(self) -> bool:
        return self.forward is None and self.backward is None

    # callbacks -------------------------------------------------------------------
    def _watch_forward(self, node, outs, inputs) -> None:
        self._nodes.append(node)
        node.register_hook(self._make_hook(node))
        if self.forward is not None and self.forward["created"]:
            return
        seq = outs if isinstance(outs, tuple) else (outs,)
        count, kind = 0, ""
        for o in seq:
            if o is not None:
                c, k = _bad(o._data)
                if c:
                    count, kind = count + c, k
        if not count:
            return
        bad_in = any(isinstance(x, Tensor) and _bad(x._data)[0] for x in inputs)
        if bad_in:
            self.forward_passed += 1
            if self.forward is not None:
                return
        self.forward = {"op": node._op.name, "node": node.name(), "site": site_text(node._site),
                        "kind": kind, "count": count, "created": not bad_in,
                        "inputs": [_describe(x) for x in inputs if isinstance(x, Tensor)]}

    def _make_hook(self, node):
        def hook(grad_inputs, grad_outputs):
            self._check_backward(node, grad_inputs, grad_outputs)
        return hook

    def _check_backward(self, node, grad_inputs, grad_outputs) -> None:
        if self.backward is not None and self.backward["created"]:
            return
        count, kind, where = 0, "", None
        for i, g in enumerate(grad_inputs):
            if g is None:
                continue
            c, k = _bad(g._data)
            if c:
                count, kind = count + c, k
                where = (i, g) if where is None else where
        if not count:
            return
        bad_out = any(g is not None and _bad(g._data)[0] for g in grad_outputs)
        if bad_out:
            self.backward_passed += 1
            if self.backward is not None:
                return
        masked = False
        if not bad_out and where is not None and len(grad_outputs) == 1 and \
                grad_outputs[0] is not None:
            gi = np.asarray(where[1]._data, dtype=np.float64)
            go = np.asarray(grad_outputs[0]._data, dtype=np.float64)
            if gi.shape == go.shape:
                badpos = ~np.isfinite(gi)
                masked = bool(badpos.any() and (go[badpos] == 0).all())
        info = {"op": node.name(), "site": site_text(node._site), "kind": kind,
                "count": count, "created": not bad_out, "masked": masked, "input": where[0],
                "mask_op": None, "mask_site": None}
        if masked:
            mnode = self._consumer(node, ("WhereBackward0", "MulBackward0",
                                          "MaskedFillBackward0", "IndexPutBackward0"))
            if mnode is not None:
                info["mask_op"] = mnode.name()
                info["mask_site"] = site_text(mnode._site)
        self.backward = info

    def _consumer(self, node, names):
        for n in self._nodes:
            if n.name() in names:
                for e in n._edges:
                    if e is not None and e[0] is node:
                        return n
        return None

    # text ------------------------------------------------------------------------------
    def __str__(self) -> str:
        if self.ok:
            return "no non-finite values or gradients were seen"
        out = []
        f = self.forward
        if f is not None:
            if f["created"]:
                out.append(f"forward: {f['op']} produced {f['count']} {f['kind']} value(s) from "
                           f"finite inputs at {f['site'] or 'an unknown line'}.")
            else:
                out.append(f"forward: the first recorded op with a non-finite output was "
                           f"{f['op']} at {f['site'] or 'an unknown line'}, but its inputs "
                           "were already non-finite (they came from outside the graph: "
                           "check the data).")
        b = self.backward
        if b is not None:
            at = b["site"] or "an unknown line"
            if not b["created"]:
                out.append(f"backward: {b['op']} (created at {at}) received a non-finite "
                           "gradient: the gradient given to backward() or a hook was already "
                           "non-finite.")
            elif b["masked"]:
                name, cond, call, fill = _SAFE.get(b["op"], ("this op", "cond", "op(safe_x)",
                                                             "1.0"))
                mask = (f" by {b['mask_op']} at {b['mask_site']}" if b["mask_op"] else "")
                out.append(
                    f"backward: {b['op']} (created at {at}) produced {b['count']} {b['kind']} "
                    f"gradient(s) exactly where its incoming gradient is 0: a masked branch. "
                    f"The value was masked out{mask}, but {name} was still computed at the "
                    "masked positions, where its derivative is infinite, and 0 * inf = nan.\n"
                    f"  Safe pattern: mask the input as well as the output, so the unused "
                    f"branch sees a harmless value:\n"
                    f"      safe_x = torch.where({cond}, x, {fill})\n"
                    f"      y = torch.where({cond}, {call}, 0.0)")
            else:
                hint = _AT_ZERO.get(b["op"], "its derivative is not finite at these inputs")
                out.append(f"backward: {b['op']} (created at {at}) produced {b['count']} "
                           f"{b['kind']} gradient(s) from a finite incoming gradient: {hint}.")
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"<NonFiniteReport ok={self.ok}>"


def _describe(t: Tensor) -> str:
    c, k = _bad(t._data)
    return f"{tuple(t.shape)} {str(t.dtype).replace('torch.', '')}" + (
        f" with {c} {k}" if c else "")


class nan_provenance:
    """Context manager: watch the ops of the block (and the backward of their graph)
    for the first non-finite value or gradient. ``as`` gives the ``NonFiniteReport``.

    Anomaly mode is on inside the block (nodes keep forward tracebacks). If an
    exception leaves the block, the report is attached to it as a note.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import nan_provenance
        >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
        >>> with nan_provenance() as prov:
        ...     y = (x.sqrt() * 3).sum()
        >>> y.backward()
        >>> prov.backward["op"], prov.backward["masked"], prov.backward["kind"]
        ('SqrtBackward0', False, 'inf')
    """

    def __init__(self):
        self.report = NonFiniteReport()
        self._prev = None

    def __repr__(self) -> str:
        state = "active" if self._prev is not None else "inactive"
        return f"<nan_provenance {state}: {self.report!r}>"

    def __enter__(self) -> NonFiniteReport:
        self._prev = (STATE.anomaly, STATE.anomaly_check_nan)
        set_anomaly(True, False)  # report, don't stop (Note [Non-finite provenance])
        FORWARD_WATCHERS.append(self.report._watch_forward)
        return self.report

    def __exit__(self, exc_type, exc, tb) -> bool:
        FORWARD_WATCHERS.remove(self.report._watch_forward)
        set_anomaly(*self._prev)
        self._prev = None
        if exc is not None and not self.report.ok and hasattr(exc, "add_note"):
            exc.add_note("retrograd.viz.nan_provenance: " + str(self.report))
        return False


def find_nonfinite(output: Tensor, gradient: Tensor | None = None) -> NonFiniteReport:
    """Run a backward pass of ``output`` (keeping its graph, touching no ``.grad``) and
    report the first node whose gradient became non-finite (``report.backward``).

    Forward values are checked where the graph saved them (``report.forward`` names
    the first node that saved a non-finite value); for the full forward check build
    the graph inside ``nan_provenance()``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import find_nonfinite
        >>> x = torch.tensor([0.0, 4.0], requires_grad=True)
        >>> y = torch.where(x > 0, x.log(), x)
        >>> r = find_nonfinite(y.sum())
        >>> r.backward["op"], r.backward["masked"], r.backward["mask_op"]
        ('LogBackward0', True, 'WhereBackward0')
    """

    rep = NonFiniteReport()
    g = walk(output)
    rep._nodes = list(g.nodes)
    for node in sorted(g.nodes, key=lambda n: n._seq):
        if node.__class__ is AccumulateGrad or node._saved is None:
            continue
        for _, _kind, arr in saved_values(node):
            c, k = _bad(arr)
            if c:
                rep.forward = {"op": node.name(), "node": node.name(),
                               "site": site_text(node._site), "kind": k, "count": c,
                               "created": False, "inputs": []}
                break
        if rep.forward is not None:
            rep.forward["created"] = True  # the earliest node holding one: best known origin
            break
    handles = [n.register_hook(rep._make_hook(n)) for n in g.nodes
               if n.__class__ is not AccumulateGrad]
    leaves = [n._var() for n in g.nodes if n.__class__ is AccumulateGrad]
    leaves = [v for v in leaves if v is not None]
    prev = STATE.anomaly_check_nan
    try:
        STATE.anomaly_check_nan = False
        if leaves:
            if gradient is None and output._data.size != 1:

                gradient = ones_like(output)
            _grad(output, leaves, grad_outputs=gradient, retain_graph=True, allow_unused=True)
    finally:
        STATE.anomaly_check_nan = prev
        for h in handles:
            h.remove()
    return rep
