"""Where a gradient path was cut: small markers that ``retrograd.explain_grad`` reads.

Example:
    >>> import retrograd as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> h = w.detach()
    >>> h._cut.reason, h._cut.op
    ('detach', 'detach()')
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict

from .node import AccumulateGrad, site_line, user_site

__all__ = ["Cut", "mark", "recent_cuts", "clear_cuts", "FORWARD_WATCHERS", "BackwardRoots",
           "note_backward", "last_backward"]

# Note [Cut markers]
# A tensor computed from a tensor that requires grad by a route that records no node
# is where a gradient path ends: detach(), .data, an op under a user's no_grad() block,
# a cast to an integer dtype, a comparison, detach_(), requires_grad_(False), and
# values that leave as Python numbers or NumPy arrays (item(), tolist(), numpy()).
# Only on those routes, and only when an input requires grad, a ``Cut`` is made (the
# hot path pays one flag test): the reason, the op, the user's line, the name and line
# of the source's node, and weak references to the leaves the source reaches (a walk
# of at most _MAX_WALK nodes, so ``loss.item()`` on a big graph stays cheap). The
# result tensor keeps its Cut in ``_cut``; a bounded table of recent cuts, one entry
# per (reason, op, line) with the leaves of every call merged, lets explain_grad(w)
# name the line that cut w's path even when the cut tensor itself is gone. Only weak
# references are kept: a detached tensor never keeps a graph alive. A value computed
# from a cut value by ops that record nothing (``a.int().float()``, ``h * 2`` for a
# detached h) carries the same Cut (ops/dispatch.py passes it on), so the cut on a
# tensor's own path is known without guessing from the table; ``last_out`` tells the
# cut's newest direct result from values computed from it.
# Grad mode turned off by the optimizers and the engine (which set STATE.enabled
# directly) makes no markers; only no_grad / set_grad_enabled(False) /
# inference_mode blocks, which set STATE.cut_watch, do. While the engine runs
# derivative rules it sets STATE.cut_watch to None, so the comparisons inside rules
# (relu's mask) under create_graph=True leave no markers either.

#: callbacks ``fn(node, outs, inputs)`` run by ``record()`` for every op recorded while
#: anomaly mode is on (the innermost one only); retrograd.viz.nan_provenance pushes one.
FORWARD_WATCHERS: list = []

_MAX_WALK = 256
_MAX_TABLE = 256
_MAX_LEAVES = 1024
_SEQ = itertools.count()
_TABLE: OrderedDict = OrderedDict()


class Cut:
    """One place where a gradient path ended (Note [Cut markers]).

    ``reason`` is one of ``'detach'``, ``'detach_'``, ``'data'``, ``'no_grad'``,
    ``'integer'``, ``'comparison'``, ``'item'``, ``'numpy'``, ``'tolist'``,
    ``'requires_grad_false'``; ``op`` names the call; ``site`` is (code, line) of the
    user's line; ``src_name``/``src_site`` describe the node the value came from.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> y = (x * 2).detach()
        >>> y._cut.src_name, y._cut.reaches(x)
        ('MulBackward0', True)
    """

    __slots__ = ("reason", "op", "site", "src_name", "src_site", "leaves", "truncated", "seq",
                 "count", "last_out")

    def __init__(self, reason: str, op: str, site, src_name: str | None, src_site):
        self.reason = reason
        self.op = op
        self.site = site
        self.src_name = src_name
        self.src_site = src_site
        self.leaves: dict = {}
        self.truncated = False
        self.seq = next(_SEQ)
        self.count = 1
        self.last_out = None  # a weak reference to the newest tensor this cut made

    def reaches(self, leaf) -> bool:
        """True when ``leaf`` (a tensor) was among the leaves the cut value came from."""
        acc = leaf._acc
        if acc is None:
            return False
        ref = self.leaves.get(id(acc))
        return ref is not None and ref() is acc

    def __repr__(self) -> str:
        from .node import format_site

        return f"<Cut {self.reason} {self.op} at {format_site(self.site)}>"


def _collect_leaves(node, leaves: dict) -> bool:
    """Add weak references to the AccumulateGrad nodes under ``node``; True if cut short."""
    seen = {node}
    stack = [node]
    n = 0
    while stack:
        cur = stack.pop()
        n += 1
        if n > _MAX_WALK:
            return True
        for e in cur._edges:
            if e is None:
                continue
            child = e[0]
            if child in seen:
                continue
            seen.add(child)
            if child.__class__ is AccumulateGrad:
                if id(child) not in leaves and len(leaves) < _MAX_LEAVES:
                    leaves[id(child)] = weakref.ref(child)
            else:
                stack.append(child)
    return False


def mark(reason: str, op: str, source, out=None) -> Cut:
    """Record that ``op`` cut the gradient path of ``source`` (a tensor that requires grad).

    The Cut is stored on ``out`` (``out._cut``) when given, and in the table of recent
    cuts. Called by the core (Tensor.detach, dispatch under no_grad, ...), never on the
    path of an op that records a node.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._graph.provenance import mark
        >>> w = torch.ones(1, requires_grad=True)
        >>> mark("detach", "my_cut()", w).reaches(w)
        True
    """
    site = user_site()
    try:
        node = source.grad_fn
    except RuntimeError:  # a stale view PyTorch refuses to re-derive: it raises only when
        node = source._gfn  # it is used with grad mode on, not for this note
    if node is None:
        node = source._acc if source._acc is not None else source._grad_accumulator()
    key = (reason, op, site)
    cut = _TABLE.get(key)
    if cut is None:
        cut = Cut(reason, op, site_line(site), node.name(), site_line(node._site))
        _TABLE[key] = cut
        if len(_TABLE) > _MAX_TABLE:
            _TABLE.popitem(last=False)
    else:
        cut.seq = next(_SEQ)
        cut.count += 1
        _TABLE.move_to_end(key)
    leaves = cut.leaves
    if node.__class__ is AccumulateGrad:
        k = id(node)
        if k not in leaves and len(leaves) < _MAX_LEAVES:
            leaves[k] = weakref.ref(node)
    elif _collect_leaves(node, leaves):
        cut.truncated = True
    if out is not None:
        out._cut = cut
        cut.last_out = weakref.ref(out)
    return cut


def recent_cuts() -> list:
    """The recorded cuts, newest first.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._graph.provenance import recent_cuts
        >>> _ = torch.ones(1, requires_grad=True).detach()
        >>> recent_cuts()[0].reason
        'detach'
    """
    return sorted(_TABLE.values(), key=lambda c: c.seq, reverse=True)


def clear_cuts() -> None:
    """Forget every recorded cut and this thread's last backward (tests, long sessions).

    Example:
        >>> from retrograd._graph.provenance import clear_cuts, last_backward, recent_cuts
        >>> clear_cuts(); recent_cuts(), last_backward()
        ([], None)
    """
    _TABLE.clear()
    _LAST.roots = None


# Note [The last backward]
# ``explain_grad(w)`` without ``loss=`` is asked right after a ``loss.backward()`` that
# left ``w.grad`` None: the user means that loss. backward()'s entry point
# (entry_points.backward, in front of the engine, which knows nothing of it) remembers,
# per thread, what the last ``backward()`` (not ``autograd.grad``, which fills no
# ``.grad``; not one run from inside another backward, such as reentrant checkpointing's)
# was called on: weak
# references to the output tensors, their cut markers (a loss that does not require grad
# makes backward() raise, and its ``_cut`` names the cut on its own path, Note [Cut
# markers]) and the user's line of the call. That is a few small objects per backward()
# call, nothing per op; no graph is kept alive. explain_grad walks the outputs' graph
# while they live, and falls back to their cut markers once they are gone.
class BackwardRoots:
    """What the last ``backward()`` of this thread was called on (Note [The last backward]).

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> loss = (x * 2).sum()
        >>> loss.backward()
        >>> last_backward().tensors()[0] is loss, site_line(last_backward().site)[1] > 0
        (True, True)
    """

    __slots__ = ("refs", "cuts", "site")

    def __init__(self, outputs):
        self.refs = [weakref.ref(o) for o in outputs]
        self.cuts = [o._cut for o in outputs]
        self.site = user_site()  # (code, offset): site_line() gives the line when asked

    def tensors(self) -> list:
        """The outputs that are still alive."""
        return [t for t in (r() for r in self.refs) if t is not None]

    def __repr__(self) -> str:
        from .node import format_site

        return f"<BackwardRoots of {len(self.refs)} tensor(s) at {format_site(self.site)}>"


class _Last(threading.local):
    def __init__(self):
        self.roots = None


_LAST = _Last()


def note_backward(outputs) -> None:
    """Remember ``outputs`` as the roots of this thread's last backward() (the engine calls
    it once per ``backward()``, Note [The last backward]).

    Example:
        >>> import retrograd as torch
        >>> y = torch.ones(1, requires_grad=True) * 2
        >>> note_backward([y]); last_backward().tensors()[0] is y
        True
    """
    _LAST.roots = BackwardRoots(outputs)


def last_backward() -> BackwardRoots | None:
    """The roots of this thread's last backward(), or None when there was none.

    Example:
        >>> from retrograd._graph.provenance import clear_cuts
        >>> clear_cuts(); last_backward() is None
        True
    """
    return _LAST.roots
