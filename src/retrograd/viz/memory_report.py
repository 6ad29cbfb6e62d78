"""``graph_report(t)``: the memory a backward graph holds, and the graph that never ends.

Saved tensors are what a graph costs: every op keeps what its derivative rule needs
(inputs, outputs, masks) until backward frees it. The report adds them up by op, by
module and by the user's line, largest first, as a table for a terminal
(``print(report)``) and as data (``report.to_dict()``), and warns when one graph's
history spans several optimizer steps.

Example:
    >>> import retrograd as torch
    >>> from retrograd.viz import graph_report
    >>> x = torch.ones(1000, requires_grad=True)
    >>> r = graph_report(x.exp().sin().sum())
    >>> r.total_bytes, [(row["op"], row["bytes"]) for row in r.by_op if row["bytes"]]
    (4000, [('ExpBackward0', 4000)])
"""

from __future__ import annotations

from .._graph.node import AccumulateGrad
from .._tensor.tensor import Tensor
from ._walk import (
    ParamsLike,
    Roots,
    assign_modules,
    attribute_saved,
    nbytes_str,
    param_names,
    site_text,
    walk,
)

__all__ = ["graph_report", "GraphReport"]


# Note [Graph spanning optimizer steps]
# The `total_loss += loss` leak keeps every step's graph alive by chaining them into
# one. Counting steps directly would need a hook in every optimizer, installed before
# training, and a graph can span updates made by hand (`w -= lr * w.grad`) just as
# well. Instead the rule reads what the graph itself records: every node that saved a
# leaf for backward stored that leaf's version counter at that moment (Node._ver, kept
# even after backward frees the values; the input it belongs to is op.save[j], whose
# edge names the leaf's AccumulateGrad). Optimizers update parameters in place, so each
# step bumps their versions. A graph that saved the same leaf at k different versions
# was built across at least k - 1 in-place updates of it, i.e. across optimizer steps:
# that is the warning, naming the leaf and the span. Graphs whose leaves are never
# saved (only added, say) cannot be dated this way; for those a second, weaker signal
# counts independent copies of the same computation: a leaf used by many nodes none of
# which depends on another (a loop over samples does this too, so it is worded as a
# possibility and needs `repeat_threshold` copies).


class GraphReport:
    """What ``graph_report`` found. Attributes: ``total_bytes`` (saved memory, each buffer
    once, parameters excluded), ``leaf_bytes`` (saved parameters, alive anyway),
    ``n_nodes``, ``n_freed`` (nodes whose saved tensors backward already freed),
    ``by_op``/``by_module``/``by_line`` (rows, largest first), ``warnings`` (text),
    ``steps_spanned`` (0 when the graph is from one step).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import graph_report
        >>> x = torch.ones(10, requires_grad=True)
        >>> print(graph_report((x.exp() * x).sum()).table().splitlines()[0])
        graph of 3 ops and 1 leaves: saved 40 B (+ 40 B of parameters)
    """

    def __init__(self):
        self.total_bytes = 0
        self.leaf_bytes = 0
        self.n_nodes = 0
        self.n_ops = 0
        self.n_leaves = 0
        self.n_freed = 0
        self.by_op: list = []
        self.by_module: list = []
        self.by_line: list = []
        self.warnings: list = []
        self.steps_spanned = 0

    def to_dict(self) -> dict:
        """The report as plain data (JSON-serialisable)."""
        return {"total_bytes": self.total_bytes, "leaf_bytes": self.leaf_bytes,
                "n_nodes": self.n_nodes, "n_ops": self.n_ops, "n_leaves": self.n_leaves,
                "n_freed": self.n_freed, "by_op": self.by_op, "by_module": self.by_module,
                "by_line": self.by_line, "warnings": list(self.warnings),
                "steps_spanned": self.steps_spanned}

    def table(self, top: int = 10) -> str:
        """A text table for a terminal (the ``top`` largest rows of each grouping)."""
        out = [f"graph of {self.n_ops} ops and {self.n_leaves} leaves: saved "
               f"{nbytes_str(self.total_bytes)} (+ {nbytes_str(self.leaf_bytes)} of "
               "parameters)"]
        if self.n_freed:
            out.append(f"  {self.n_freed} nodes already freed their saved tensors (backward "
                       "ran on them)")
        for title, rows, key in (("by op", self.by_op, "op"),
                                 ("by module", self.by_module, "module"),
                                 ("by line", self.by_line, "line")):
            rows = [r for r in rows if r["bytes"]]
            if not rows or (key == "module" and all(r[key] == "(no module)" for r in rows)):
                continue
            out.append("")
            width = min(60, max(len(str(r[key])) for r in rows[:top]))
            out.append(f"{title:<{width}}  {'saved':>10}  {'share':>6}  {'nodes':>5}")
            for r in rows[:top]:
                share = r["bytes"] / self.total_bytes if self.total_bytes else 0.0
                label = str(r[key])
                if len(label) > width:
                    label = label[:width - 1] + "…"
                out.append(f"{label:<{width}}  {nbytes_str(r['bytes']):>10}  {share:>6.1%}  "
                           f"{r['nodes']:>5}")
            if len(rows) > top:
                rest = sum(r["bytes"] for r in rows[top:])
                out.append(f"{'(' + str(len(rows) - top) + ' more)':<{width}}  "
                           f"{nbytes_str(rest):>10}")
        for w in self.warnings:
            out.append("")
            out.append("WARNING: " + w)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return (f"<GraphReport: {self.n_ops} ops, saved {nbytes_str(self.total_bytes)}, "
                f"{len(self.warnings)} warnings>")


def _rows(acc: dict, key: str) -> list:
    rows = [{key: k, "bytes": v[0], "nodes": v[1]} for k, v in acc.items()]
    rows.sort(key=lambda r: (-r["bytes"], -r["nodes"], str(r[key])))
    return rows


def _saved_leaf_versions(node) -> list:
    """(leaf AccumulateGrad node, version) for each leaf this node saved (Note [Graph
    spanning optimizer steps])."""
    vers = node._ver
    if not vers:
        return []
    out = []
    saved = node._saved
    if saved:
        for j, s in enumerate(saved):
            if j < len(vers) and vers[j] is not None and isinstance(s, Tensor):
                leaf = s if s._base is None else s._base  # a leaf, or a view of one (W.t())
                if leaf._gfn is None and leaf._rg and leaf._acc is not None:
                    out.append((leaf._acc, vers[j]))
        return out
    save = getattr(node._op, "save", None)
    if not save:
        return out
    edges = node._edges
    for j, idx in enumerate(save):
        if isinstance(idx, int) and j < len(vers) and vers[j] is not None and idx < len(edges):
            e = edges[idx]
            while e is not None and getattr(e[0]._op, "view", False) and len(e[0]._edges) == 1:
                e = e[0]._edges[0]  # a view of a leaf (nn.Linear saves its weight's .t())
            if e is not None and e[0].__class__ is AccumulateGrad:
                out.append((e[0], vers[j]))
    return out


def graph_report(tensors: Roots, params: ParamsLike | None = None, *,
                 repeat_threshold: int = 8, max_steps: int = 1) -> GraphReport:
    """Report the memory held by the graph of ``tensors``, and warn about leaks.

    ``params`` (the model, ``model.parameters()``, ``model.named_parameters()``, a list
    of tensors or a ``{name: tensor}`` dict) names leaves and modules. A warning is
    raised in the report when the graph saved a parameter at more than ``max_steps``
    versions (Note [Graph spanning optimizer steps]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import graph_report
        >>> w = torch.ones(4, requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> total = 0
        >>> for _ in range(3):
        ...     loss = (w * w).sum()
        ...     opt.zero_grad(); loss.backward(); opt.step()
        ...     total = total + loss          # the leak: history of every step kept
        >>> r = graph_report(total, params={"w": w})
        >>> r.steps_spanned, r.warnings[0].split(":")[0]
        (2, 'This graph spans 2 optimizer steps')
    """
    names = param_names(params)
    g = walk(tensors)
    rep = GraphReport()
    rep.n_nodes = len(g.nodes)
    by_op: dict = {}
    by_mod: dict = {}
    by_line: dict = {}
    versions: dict = {}
    per, rep.leaf_bytes = attribute_saved(g)  # Note [Counting saved memory] in _walk.py
    mods = assign_modules(g, names)
    for node in g.nodes:
        if node.__class__ is AccumulateGrad:
            rep.n_leaves += 1
            continue
        rep.n_ops += 1
        if node._saved is None:
            rep.n_freed += 1
        nbytes = per.get(node, 0)
        rep.total_bytes += nbytes
        for acc_d, key in ((by_op, node.name()),
                           (by_mod, mods.get(node) or "(no module)"),
                           (by_line, site_text(node._site) or "(unknown line)")):
            b, n = acc_d.get(key, (0, 0))
            acc_d[key] = (b + nbytes, n + 1)
        for leaf, v in _saved_leaf_versions(node):
            versions.setdefault(leaf, set()).add(v)
    rep.by_op = _rows(by_op, "op")
    rep.by_module = _rows(by_mod, "module")
    rep.by_line = _rows(by_line, "line")

    spans = [(len(v) - 1, leaf, v) for leaf, v in versions.items() if len(v) > max_steps]
    if spans:
        spans.sort(key=lambda s: -s[0])
        k, leaf, vs = spans[0]
        rep.steps_spanned = k
        lname = names.get(id(leaf)) or _leaf_desc(leaf)
        rep.warnings.append(
            f"This graph spans {k} optimizer steps: it saved {lname} at {len(vs)} different "
            f"versions ({min(vs)}..{max(vs)}), so parts of it were built before updates of "
            f"{lname} and parts after. A tensor that requires grad is being carried from one "
            "training step to the next, and every step's graph stays alive (the classic "
            "`total_loss += loss`). Accumulate a number instead: total_loss += loss.item() "
            "(or loss.detach()); for a hidden state carried across steps, h = h.detach().")
    else:
        w = _repeats(g, names, repeat_threshold)
        if w:
            rep.warnings.append(w)
    return rep


def _leaf_desc(acc) -> str:
    v = acc._var()
    return "a leaf" if v is None else f"a leaf of shape {tuple(v.shape)}"


def _repeats(g, names: dict, threshold: int) -> str | None:
    """The weaker signal of Note [Graph spanning optimizer steps]: a leaf used by
    ``threshold`` or more nodes none of which depends on another."""
    users: dict = {}
    for child, parent, _ in g.edges:
        if child.__class__ is AccumulateGrad:
            users.setdefault(child, set()).add(parent)
    for leaf, us in users.items():
        if len(us) < threshold:
            continue
        sample = list(us)[:32]
        sset = set(sample)
        independent = True
        for u in sample:
            seen, stack = {u}, [u]
            while stack and independent:
                n = stack.pop()
                for e in n._edges:
                    if e is None or e[0] in seen:
                        continue
                    if e[0] in sset:
                        independent = False
                        break
                    seen.add(e[0])
                    stack.append(e[0])
            if not independent:
                break
        if independent:
            lname = names.get(id(leaf)) or _leaf_desc(leaf)
            return (f"This graph holds {len(us)} independent copies of the same computation "
                    f"({lname} is used by {len(us)} unconnected subgraphs). If you are "
                    "adding up losses across batches for logging, add loss.item() instead; "
                    "if you loop over samples within one step on purpose, ignore this.")
    return None
