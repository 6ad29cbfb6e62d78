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

import numpy as np

from .._dtype import FROM_NP
from .._graph.node import AccumulateGrad, _OutputSlot, site_line
from .._tensor import Tensor

__all__ = ["Graph", "walk", "site_text", "nbytes_str", "module_of", "param_names"]


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


def param_names(params) -> dict:
    """``{id(AccumulateGrad node): name}`` for named parameters (a dict, a Module or pairs)."""
    if params is None:
        return {}
    if hasattr(params, "named_parameters"):
        params = dict(params.named_parameters())
    items = params.items() if isinstance(params, dict) else params
    out = {}
    for name, p in items:
        if isinstance(p, Tensor) and p._rg and p.grad_fn is None:
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
