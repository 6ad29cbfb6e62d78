"""Walking a backward graph: nodes, output shapes, saved memory, names (shared by viz tools).

Example:
    >>> import retrograd as torch
    >>> from retrograd.viz._walk import walk
    >>> x = torch.ones(2, requires_grad=True)
    >>> g = walk((x * 2).sum())
    >>> [n.name() for n in g.nodes][:2], len(g.nodes)
    (['SumBackward0', 'MulBackward0'], 3)
"""

from __future__ import annotations

import linecache
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np

from .._core.dtype import FROM_NP
from .._graph.node import AccumulateGrad, _OutputSlot, site_line
from .._tensor.tensor import Tensor

__all__ = ["Graph", "walk", "site_text", "nbytes_str", "module_of", "param_names",
           "named_tensors"]


class Graph:
    """The nodes reachable from some tensors, in a stable order (roots first, then DFS).

    ``out_meta[node]`` is ``{out_nr: (shape, dtype)}`` as read from the edges that point
    at the node (and from the root tensors); ``roots`` are ``(node, tensor_name)`` pairs.
    """

    def __init__(self):
        self.nodes: list = []
        self.out_meta: dict = {}
        self.roots: list = []
        self.edges: list = []  # (child, parent, input_index)
        self.truncated = False

    def __repr__(self) -> str:
        more = " (truncated)" if self.truncated else ""
        return f"<Graph: {len(self.nodes)} nodes, {len(self.roots)} roots{more}>"


def _as_list(tensors) -> list:
    if isinstance(tensors, Tensor):
        return [("output", tensors)]
    if isinstance(tensors, dict):
        return list(tensors.items())
    out = []
    for i, t in enumerate(tensors):
        out.append((f"output {i}", t))
    return out


def walk(tensors, max_nodes: int | None = None) -> Graph:
    """Every node reachable from ``tensors`` (a tensor, a list, or a ``{name: tensor}`` dict).

    Iterative (no recursion), so graphs of any depth work. ``max_nodes`` stops early
    (``graph.truncated`` says so).
    """
    g = Graph()
    seen: set = set()
    stack: list = []
    for name, t in _as_list(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor, got {type(t).__name__} for {name}")
        node = t.grad_fn
        if node is None:
            if not t._rg:
                continue
            node = t._grad_accumulator()
        g.roots.append((node, name))
        g.out_meta.setdefault(node, {})[t._out_nr] = (tuple(t._data.shape), t.dtype)
        if node not in seen:
            seen.add(node)
            stack.append(node)
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        if max_nodes is not None and len(order) >= max_nodes:
            g.truncated = bool(stack) or any(
                e is not None and e[0] not in seen for e in node._edges)
            break
        edges = node._edges
        for i in range(len(edges) - 1, -1, -1):
            e = edges[i]
            if e is None:
                continue
            child = e[0]
            g.out_meta.setdefault(child, {})[e[1]] = (tuple(e[2]), FROM_NP.get(np.dtype(e[3])))
            g.edges.append((child, node, i))
            if child not in seen:
                seen.add(child)
                stack.append(child)
    g.nodes = order
    return g


def root_array(a: np.ndarray) -> np.ndarray:
    """The array that owns the memory ``a`` looks at."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def saved_values(node) -> list:
    """``(slot, kind, array)`` for each saved tensor of ``node`` still held.

    ``kind`` is ``'output'`` (the node's own output), ``'activation'`` (a non-leaf
    input), ``'leaf'`` (a tensor that requires grad and has no grad_fn: a parameter),
    or ``'constant'`` (a tensor that needs no grad: data, masks, indices).
    """
    saved = node._saved
    if not saved:
        return []
    out = []
    for j, s in enumerate(saved):
        cls = s.__class__
        if cls is _OutputSlot:
            if node._out is not None and node._out[s.k] is not None:
                out.append((j, "output", node._out[s.k][0]))
        elif isinstance(s, Tensor):
            out.append((j, _kind(s), s._data))
        elif hasattr(s, "packed") and hasattr(s, "unpack_fn"):  # went through a pack hook
            for v in _tensors_in(s.packed):
                out.append((j, "output" if s.is_output else _kind(v), v._data))
    return out


def _kind(t: Tensor) -> str:
    if t.grad_fn is not None:
        return "activation"
    return "leaf" if t._rg else "constant"


def _tensors_in(obj) -> list:
    """Tensors a pack hook's result keeps alive: the tensor itself, tensors in a tuple
    (save_on_cpu), or, for a checkpoint holder, the inputs its segment keeps to rerun."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [x for x in obj if isinstance(x, Tensor)]
    frame = getattr(obj, "frame", None)
    inputs = getattr(frame, "inputs", None)
    if isinstance(inputs, (tuple, list)):
        return [x for x in inputs if isinstance(x, Tensor)]
    return []


def site_text(site, with_code: bool = True) -> str:
    """``'file.py:12  y = x * 2'`` for a node's (code, line), or ``''``."""
    if site is None:
        return ""
    code, line = site_line(site)
    s = f"{os.path.basename(code.co_filename)}:{line}"
    if with_code:
        src = linecache.getline(code.co_filename, line).strip()
        if src:
            s += "  " + src
    return s


def nbytes_str(n: float) -> str:
    """Human-readable byte count.

    Example:
        >>> from retrograd.viz._walk import nbytes_str
        >>> nbytes_str(512), nbytes_str(2048), nbytes_str(3 * 2**20)
        ('512 B', '2.0 KiB', '3.0 MiB')
    """
    for unit, div in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{int(n)} B"


# Note [Naming parameters]
# The viz tools take parameters the way people hold them: a Module, model.parameters()
# (a generator, so it is read once, into a list, before anything else looks at it),
# model.named_parameters(), a list or tuple of tensors or of (name, tensor) pairs, a
# {name: tensor} dict, or one tensor. Names come from the Module, the pairs or the keys.
# A tensor given bare has no name of its own. When what was given is the generator that
# Module.parameters() returns, its module is right there (the generator's frame holds
# `self`, and the generator's code object is checked to be Module.parameters' own, so
# nothing is guessed from a name): the tensor gets PyTorch's dotted name from that
# module's named_parameters(). Otherwise it is "param<i>", i its position in what was
# given. A tensor given twice (tied weights) keeps its first name, as in
# named_parameters(). Anything else raises a TypeError listing what is accepted.
_ACCEPTED = ("a Module, model.parameters(), model.named_parameters(), a list of tensors or "
             "of (name, tensor) pairs, or a {name: tensor} dict")


class HasNamedParameters(Protocol):
    """A module, as the viz tools know one: anything with ``named_parameters()``."""

    def named_parameters(self) -> Iterator[tuple[str, Tensor]]: ...


#: what names the leaves (Note [Naming parameters])
ParamsLike = (HasNamedParameters | Tensor | Iterable[Tensor] | Iterable[tuple[str, Tensor]]
              | dict[str, Tensor])
#: what a graph is walked from: a tensor, several, or ``{name: tensor}``
Roots = Tensor | Sequence[Tensor] | dict[str, Tensor]


def _module_names(params) -> dict:
    """``{id(parameter): dotted name}`` when ``params`` is a Module.parameters() generator."""
    from ..nn.modules.module import Module

    frame = getattr(params, "gi_frame", None)
    if frame is None or params.gi_code is not Module.parameters.__code__:
        return {}
    module = frame.f_locals.get("self")
    if not isinstance(module, Module):
        return {}
    return {id(p): n for n, p in module.named_parameters()}


def _pair(item) -> tuple | None:
    """``(name, tensor)`` when ``item`` is a named pair, else None."""
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
        return item[0], item[1]
    return None


def named_tensors(params, who: str = "params") -> list:
    """``[(name, tensor), ...]`` from whatever holds the parameters (Note [Naming
    parameters]); ``None`` gives ``[]``. Each tensor appears once.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz._walk import named_tensors
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2))
        >>> [n for n, _ in named_tensors(net.parameters())]
        ['0.weight', '0.bias']
        >>> [n for n, _ in named_tensors(list(net.parameters()))]
        ['param0', 'param1']
        >>> named_tensors(3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
          ...
        TypeError: params takes a Module, model.parameters(), ... dict; got int
    """
    if params is None:
        return []
    if isinstance(params, Tensor):
        items = [("param0", params)]
    elif callable(getattr(params, "named_parameters", None)):
        items = list(params.named_parameters())
    elif isinstance(params, dict):
        items = [(str(k), v) for k, v in params.items()]
    elif isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise TypeError(f"{who} takes {_ACCEPTED}; got {type(params).__name__}")
    else:
        known = _module_names(params)
        items = []
        for i, item in enumerate(list(params)):
            pair = _pair(item)
            if pair is None and not isinstance(item, Tensor):
                raise TypeError(f"{who} takes {_ACCEPTED}; item {i} is a "
                                f"{type(item).__name__}")
            items.append(pair or (known.get(id(item), f"param{i}"), item))
    out, seen = [], set()
    for name, t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"parameter {name!r} is a {type(t).__name__}, not a Tensor")
        if id(t) not in seen:
            seen.add(id(t))
            out.append((name, t))
    return out


def param_names(params) -> dict:
    """``{id(AccumulateGrad node): name}`` for the leaves among ``params`` (anything
    ``named_tensors`` takes).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz._walk import param_names
        >>> w = torch.ones(2, requires_grad=True)
        >>> list(param_names([w]).values()), list(param_names({"w": w}).values())
        (['param0'], ['w'])
    """
    out = {}
    for name, p in named_tensors(params):
        if p._rg and p.grad_fn is None:
            out[id(p._grad_accumulator())] = name
    return out


def module_of(node, names: dict, g: Graph | None = None) -> str | None:
    """The module that made ``node``: ``node.metadata['module']`` when tracked (see
    ``viz.track_modules``), else the module of a parameter that feeds it directly."""
    md = node.metadata_
    if md is not None and "module" in md:
        return md["module"]
    if node.__class__ is AccumulateGrad:
        name = names.get(id(node))
        return name.rsplit(".", 1)[0] if name and "." in name else None
    for e in node._edges:
        if e is not None and e[0].__class__ is AccumulateGrad:
            name = names.get(id(e[0]))
            if name is not None:
                return name.rsplit(".", 1)[0] if "." in name else ""
    return None


# Note [Counting saved memory]
# A buffer saved by several nodes (x saved by both a mul and an exp, exp's output saved
# again as sin's input, a view of a saved tensor) is counted once, for the node that
# was created first (the smallest sequence number: usually the op that produced it), by
# the memory of the array that owns it (a saved view keeps its whole base alive).
# Saved leaves that require grad (parameters) are counted apart: they live whether or
# not the graph does.
def attribute_saved(g: Graph) -> tuple:
    """``({node: bytes}, leaf_bytes)`` for the nodes of ``g`` (Note [Counting saved memory])."""
    owner: dict = {}  # id(root array) -> (seq, node, nbytes)
    leaf_roots: dict = {}
    for node in g.nodes:
        if node.__class__ is AccumulateGrad:
            var = node._var()
            if var is not None:
                root = root_array(var._data)
                leaf_roots[id(root)] = root.nbytes
    for node in g.nodes:
        for _, kind, arr in saved_values(node):
            root = root_array(arr)
            if kind == "leaf":
                leaf_roots[id(root)] = root.nbytes
                continue
            cur = owner.get(id(root))
            if cur is None or node._seq < cur[0]:
                owner[id(root)] = (node._seq, node, root.nbytes)
    per: dict = {}
    for key, (_, node, nbytes) in owner.items():
        if key in leaf_roots:
            continue
        per[node] = per.get(node, 0) + nbytes
    return per, sum(leaf_roots.values())


def assign_modules(g: Graph, names: dict) -> dict:
    """``{node: module name or None}``: tracked tags first (``track_modules``), then the
    module of a parameter feeding the node directly, then a node whose inputs and
    consumers all sit in one module joins it (the matmul between a layer's transposed
    weight and its bias add)."""
    mods = {n: module_of(n, names) for n in g.nodes}
    consumers: dict = {}
    for child, parent, _ in g.edges:
        consumers.setdefault(child, []).append(parent)
    for _ in range(3):
        changed = False
        for n in g.nodes:
            if mods[n] is not None or n.__class__ is AccumulateGrad:
                continue
            ins = {mods.get(e[0]) for e in n._edges if e is not None}
            outs = {mods.get(p) for p in consumers.get(n, ())}
            common = (ins & outs) - {None}
            if len(common) == 1 and None not in outs and len(outs) == 1:
                mods[n] = common.pop()
                changed = True
        if not changed:
            break
    return mods


# Note [Checkpointed regions]
# A picture marks the nodes made inside utils.checkpoint.checkpoint, since those are
# the ones whose activations are recomputed in backward. The graph tells them apart by
# what they saved: inside a non-reentrant segment every saved tensor goes through the
# segment's pack hook, which stores a holder whose `frame` is the segment, and the
# frame records the node sequence numbers around its forward (`seq_range`). So every
# node that saved something names its segment, and every op node whose sequence
# number lies in that range (those that saved nothing too) belongs to it; nested
# segments give each node to the innermost. A reentrant checkpoint is one node of
# CheckpointFunction (its ops ran under no_grad and are not in the graph), a region by
# itself. Once backward has freed a segment's saved tensors (no retain_graph) nothing
# in the graph remembers the segment, and the picture no longer marks it.
def checkpoint_regions(g: Graph) -> tuple:
    """``({node: region number}, [label, ...])`` for the op nodes of ``g`` made inside
    ``utils.checkpoint.checkpoint`` (Note [Checkpointed regions]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import checkpoint
        >>> from retrograd.viz._walk import walk, checkpoint_regions
        >>> x = torch.ones(2, requires_grad=True)
        >>> y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False).sum()
        >>> where, labels = checkpoint_regions(walk(y))
        >>> sorted(n.name() for n in where), labels
        (['ExpBackward0', 'SinBackward0'], ['checkpointed: recomputed in backward'])
    """
    from ..utils.checkpoint import CheckpointFunction

    ranges: dict = {}
    reentrant = []
    for node in g.nodes:
        if isinstance(getattr(node._op, "cls", None), type) and issubclass(
                node._op.cls, CheckpointFunction):
            reentrant.append(node)
        for s in node._saved or ():
            frame = getattr(getattr(s, "packed", None), "frame", None)
            rng = getattr(frame, "seq_range", None)
            if rng is not None:
                ranges.setdefault(id(frame), rng)
    spans = sorted(ranges.values())
    where: dict = {}
    # outer segments first, so a node of a nested one ends up with the innermost
    for k in sorted(range(len(spans)), key=lambda i: spans[i][0] - spans[i][1]):
        first, last = spans[k]
        for node in g.nodes:
            if node.__class__ is not AccumulateGrad and first < node._seq < last:
                where[node] = k
    labels = ["checkpointed: recomputed in backward"] * len(spans)
    for node in reentrant:
        where[node] = len(labels)
        labels.append("checkpointed (reentrant): its ops rerun in backward")
    return where, labels
