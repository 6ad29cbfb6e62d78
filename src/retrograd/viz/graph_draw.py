"""Pictures of the backward graph: Graphviz DOT text, rendered to SVG/PNG when possible.

``draw_graph(loss, params=dict(model.named_parameters()))`` returns a ``GraphPicture``:
its ``source`` is DOT text (no dependency needed), ``save('step.svg')`` renders it with
Graphviz (the ``graphviz`` Python package or a ``dot`` binary on PATH) and, when
neither is there, writes the DOT text next to it and says so.

Each op node shows its name, the shape and dtype of what it produced, the bytes of
the tensors it saved for backward, and the user's line that created it; leaves are
named by parameter name; ``group_modules``/``collapse_modules`` box or fold the ops
of each module (modules come from ``track_modules(model)`` or from the parameters
that feed a node).

Example:
    >>> import retrograd as torch
    >>> from retrograd.viz import draw_graph
    >>> w = torch.ones(3, requires_grad=True)
    >>> pic = draw_graph((w * 2).exp().sum(), params={"w": w})
    >>> print(pic.source.splitlines()[0])
    digraph backward {
    >>> [n["name"] for n in pic.nodes]
    ['SumBackward0', 'ExpBackward0', 'MulBackward0', 'w']
"""

from __future__ import annotations

import os
import shutil
import warnings

from .._graph.node import AccumulateGrad
from .._tensor import Tensor
from ._walk import assign_modules, attribute_saved, nbytes_str, param_names, site_text, walk

__all__ = ["draw_graph", "GraphPicture", "track_modules", "graphviz_available"]

_LEAF = "#cfe2f3"
_ROOT = "#c9e7c3"
_FREED = "#eeeeee"
_EDGE = "#555555"


def graphviz_available() -> tuple:
    """``(True, how)`` when DOT text can be rendered here, else ``(False, why not)``.

    Example:
        >>> from retrograd.viz import graphviz_available
        >>> ok, how = graphviz_available(); isinstance(how, str)
        True
    """
    dot = shutil.which("dot")
    try:
        import graphviz  # noqa: F401

        has_pkg = True
    except ImportError:
        has_pkg = False
    if dot is None:
        # Rendering needs only the `dot` program (a system package); the graphviz
        # Python package is an optional front end to it and cannot replace it.
        return False, ("Graphviz's `dot` program is not on PATH: install Graphviz, the "
                       "system package (apt-get install graphviz, brew install graphviz, "
                       "conda install graphviz, or https://graphviz.org/download/)"
                       + ("; the graphviz Python package alone does not provide it"
                          if has_pkg else ""))
    return True, "graphviz package" if has_pkg else f"dot binary ({dot})"


def _render(source: str, fmt: str) -> bytes:
    ok, why = graphviz_available()
    if not ok:
        raise RuntimeError(f"cannot render the graph to {fmt}: {why}. The DOT text is in "
                           "GraphPicture.source; save it as .dot, or paste it into any Graphviz "
                           "viewer.")
    try:
        import graphviz

        return graphviz.Source(source).pipe(format=fmt)
    except ImportError:
        import subprocess

        r = subprocess.run(["dot", f"-T{fmt}"], input=source.encode(), capture_output=True,
                           check=False, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"dot failed: {r.stderr.decode(errors='replace')}") from None
        return r.stdout


class GraphPicture:
    """A drawn backward graph: ``source`` (DOT text), ``nodes`` (data), ``save``/``render``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import draw_graph
        >>> x = torch.ones(2, requires_grad=True)
        >>> pic = draw_graph(x.sin().sum())
        >>> "SinBackward0" in pic.source, len(pic.nodes)
        (True, 3)
    """

    def __init__(self, source: str, nodes: list, note: str = ""):
        self.source = source
        self.nodes = nodes
        self.note = note

    @property
    def dot(self) -> str:
        return self.source

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"<GraphPicture: {len(self.nodes)} nodes>"

    def render(self, format: str = "svg") -> bytes:  # noqa: A002
        """The picture as bytes in ``format`` (svg, png, pdf); needs Graphviz."""
        return _render(self.source, format)

    def save(self, path: str, format: str | None = None) -> str:  # noqa: A002
        """Write the picture; returns the path written.

        The format comes from the extension (``.svg``, ``.png``, ``.pdf``; ``.dot`` or
        ``.gv`` for the text). When Graphviz is missing, the DOT text is written to the
        same name with ``.dot`` and a warning says why.

        Example:
            >>> import os, tempfile, retrograd as torch
            >>> from retrograd.viz import draw_graph
            >>> x = torch.ones(2, requires_grad=True)
            >>> p = draw_graph((x * x).sum()).save(os.path.join(tempfile.mkdtemp(), "g.dot"))
            >>> open(p).read().startswith("digraph")
            True
        """
        fmt = format or os.path.splitext(path)[1].lstrip(".").lower() or "dot"
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        if fmt in ("dot", "gv"):
            with open(path, "w", encoding="utf-8") as f:
                f.write(self.source)
            return path
        ok, why = graphviz_available()
        if not ok:
            alt = os.path.splitext(path)[0] + ".dot"
            with open(alt, "w", encoding="utf-8") as f:
                f.write(self.source)
            warnings.warn(f"graph not rendered to {fmt}: {why}. Wrote the DOT text to {alt} "
                          "instead.", RuntimeWarning, stacklevel=2)
            return alt
        data = _render(self.source, fmt)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _repr_svg_(self):
        ok, _ = graphviz_available()
        return self.render("svg").decode() if ok else None


def _q(s: str) -> str:
    """A DOT double-quoted string (labels keep ``\\n`` line breaks)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape_str(meta) -> str:
    if not meta:
        return ""
    parts = []
    for k in sorted(meta):
        shape, dt = meta[k]
        dts = str(dt).replace("torch.", "") if dt is not None else "?"
        parts.append(f"{tuple(shape)} {dts}".replace(",)", ")"))
    return ", ".join(parts)


def _heat(frac: float) -> str:
    """White to orange as the share of saved memory grows."""
    frac = max(0.0, min(1.0, frac))
    r, g, b = 255, int(255 - 115 * frac), int(255 - 200 * frac)
    return f"#{r:02x}{g:02x}{b:02x}"


def _short(s: str, n: int = 56) -> str:
    return s if len(s) <= n else s[:n - 1] + "…"


def draw_graph(tensors, params=None, *, collapse_modules: bool = False,
               group_modules: bool = True, show_saved: bool = True, show_sites: bool = True,
               max_nodes: int = 400, title: str | None = None,
               rankdir: str = "TB") -> GraphPicture:
    """Draw the backward graph of ``tensors`` (a tensor, a list, or ``{name: tensor}``).

    ``params`` names the leaves (``dict(model.named_parameters())`` or the module
    itself). With ``collapse_modules`` each module's ops become one node. Graphs above
    ``max_nodes`` are cut off (the picture says how many were left out).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import draw_graph
        >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> pic = draw_graph({"loss": (a * a).sum()}, params={"a": a})
        >>> [(n["name"], n["shape"]) for n in pic.nodes]
        [('SumBackward0', '() float32'), ('MulBackward0', '(2) float32'), ('a', '(2) float32')]
    """
    names = param_names(params)
    g = walk(tensors, max_nodes=max_nodes)
    saved_by, _ = attribute_saved(g)  # Note [Counting saved memory] in _walk.py
    biggest = max(saved_by.values(), default=0) or 1
    ids = {node: f"n{i}" for i, node in enumerate(g.nodes)}
    mtypes = {}
    for node in g.nodes:
        md = node.metadata_
        if md is not None and "module_type" in md:
            mtypes[md["module"]] = md["module_type"]
    modules = assign_modules(g, names)
    # a module called several times (a shared pooling layer) gets one box per call
    calls: dict = {}
    for node in g.nodes:
        md = node.metadata_
        if md is not None and "module_call" in md:
            calls.setdefault(md["module"], set()).add(md["module_call"])
    for node in g.nodes:
        md = node.metadata_
        if md is not None and len(calls.get(md.get("module"), ())) > 1:
            modules[node] = f"{md['module']} #{md['module_call'] + 1}"
            mtypes.setdefault(modules[node], md.get("module_type"))

    infos = []
    body: dict = {}  # cluster name (or None) -> list of DOT lines
    for node in g.nodes:
        nid = ids[node]
        meta = g.out_meta.get(node, {})
        shape = _shape_str(meta)
        if node.__class__ is AccumulateGrad:
            var = node._var()
            pname = names.get(id(node))
            label = pname or "leaf"
            if var is not None:
                shape = _shape_str({0: (tuple(var._data.shape), var.dtype)})
            lines = [label, shape]
            if var is not None and var._grad is not None:
                from numpy import linalg

                lines.append(f"grad norm {float(linalg.norm(var._grad._data.ravel())):.3g}")
            attrs = f'shape=box, style="filled", fillcolor="{_LEAF}"'
            info = {"id": nid, "name": label, "kind": "leaf", "shape": shape, "saved": 0,
                    "site": "", "module": modules[node]}
        else:
            freed = node._saved is None
            nbytes = saved_by.get(node, 0)
            lines = [node.name(), shape]
            if show_saved:
                if freed:
                    lines.append("saved: freed by backward")
                elif nbytes:
                    lines.append(f"saved {nbytes_str(nbytes)}")
            site = site_text(node._site) if show_sites else ""
            if site:
                lines.append(_short(site))
            color = _FREED if freed else _heat(nbytes / biggest if nbytes else 0.0)
            attrs = f'shape=box, style="rounded,filled", fillcolor="{color}"'
            info = {"id": nid, "name": node.name(), "kind": "op", "shape": shape,
                    "saved": nbytes, "site": site, "module": modules[node]}
        infos.append(info)
        cluster = modules[node] if (group_modules or collapse_modules) else None
        body.setdefault(cluster, []).append(f"  {nid} [label={_q(chr(10).join(lines))}, "
                                            f"{attrs}];")

    # collapse: one node per module
    rep = dict(ids)
    out_lines = []
    if collapse_modules:
        for mod in list(body):
            if mod is None:
                continue
            members = [n for n in g.nodes if modules[n] == mod]
            ops = [n.name() for n in members if n.__class__ is not AccumulateGrad]
            leaves = [names.get(id(n), "leaf") for n in members
                      if n.__class__ is AccumulateGrad]
            mid = f"m{len(out_lines)}_{abs(hash(mod)) % 10 ** 6}"
            total = sum(saved_by.get(n, 0) for n in members)
            head = f"{mod or '(root)'}" + (f" ({mtypes[mod]})" if mod in mtypes else "")
            names_fwd = list(dict.fromkeys(reversed(ops)))  # in forward order
            rows = [", ".join(names_fwd[i:i + 3]) for i in range(0, len(names_fwd), 3)]
            label = [head] + (rows or ["-"])
            if leaves:
                label.append("params: " + ", ".join(p.rsplit(".", 1)[-1] for p in leaves))
            if show_saved and total:
                label.append(f"saved {nbytes_str(total)}")
            out_lines.append(f"  {mid} [label={_q(chr(10).join(label))}, shape=box3d, "
                             f'style="filled", fillcolor="{_heat(total / biggest)}"];')
            for n in members:
                rep[n] = mid
            del body[mod]

    lines = ["digraph backward {",
             f'  graph [rankdir={rankdir}, fontname="Helvetica", fontsize=11, '
             'nodesep=0.25, ranksep=0.35];',
             '  node [fontname="Helvetica", fontsize=10, margin="0.12,0.05"];',
             f'  edge [color="{_EDGE}", arrowsize=0.6];']
    total_saved = sum(saved_by.values())
    n_ops = sum(1 for n in g.nodes if n.__class__ is not AccumulateGrad)
    head = title or "backward graph"
    cap = f"{head}: {n_ops} ops, {len(g.nodes) - n_ops} leaves, saved {nbytes_str(total_saved)}"
    if g.truncated:
        cap += f" (first {max_nodes} nodes shown)"
    lines.append(f"  labelloc=t; label={_q(cap)};")
    for k, (mod, blines) in enumerate(body.items()):
        if mod is None:
            lines.extend(blines)
            continue
        mlabel = (mod or "(root)") + (f" ({mtypes[mod]})" if mod in mtypes else "")
        lines.append(f"  subgraph cluster_{k} {{")
        lines.append(f'    label={_q(mlabel)}; style="rounded,dashed"; color="#888888"; '
                     'fontsize=10;')
        lines.extend("  " + b for b in blines)
        lines.append("  }")
    lines.extend(out_lines)
    done = set()
    for child, parent, _ in g.edges:
        if child not in ids or parent not in ids:
            continue
        a, b = rep[child], rep[parent]
        if a == b or (a, b) in done:
            continue
        done.add((a, b))
        lines.append(f"  {a} -> {b};")
    for k, (node, name) in enumerate(g.roots):
        rid = f"r{k}"
        meta = g.out_meta.get(node, {})
        lines.append(f"  {rid} [label={_q(name + chr(10) + _shape_str(meta))}, shape=ellipse, "
                     f'style="filled", fillcolor="{_ROOT}"];')
        if node in rep:
            lines.append(f"  {rep[node]} -> {rid};")
    if g.truncated:
        lines.append('  more [label="… graph continues (raise max_nodes)", shape=plaintext];')
    lines.append("}")
    return GraphPicture("\n".join(lines) + "\n", infos)


class track_modules:
    """Tag every node a module's forward creates with the module's name (and type).

    Use as a context manager around the forward pass (or call ``remove()``); the
    tags go to ``node.metadata['module']`` (and ``'module_type'``, ``'module_call'``:
    which call of a module used several times) and are what ``draw_graph`` and
    ``graph_report`` group by. Inner modules win: a node made by ``net.block.conv``
    is tagged ``'block.conv'``. ``root`` names the model itself (untagged otherwise),
    e.g. ``track_modules(loss_fn, root='loss')``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import track_modules
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
        >>> with track_modules(net):
        ...     y = net(torch.ones(1, 2))
        >>> y.grad_fn.metadata["module"], y.grad_fn.metadata["module_type"]
        ('1', 'ReLU')
        >>> tracker = track_modules(net); _ = net(torch.ones(1, 2)); tracker
        <track_modules: 2 modules hooked, 2 calls tagged>
    """

    def __init__(self, model, root: str | None = None):
        from ..ops._core import _next_seq

        self._next_seq = _next_seq
        self._handles = []
        self._starts: dict = {}
        self._calls: dict = {}
        for name, mod in model.named_modules():
            if not name:
                if root is None:
                    continue
                name = root
            self._handles.append(mod.register_forward_pre_hook(self._pre))
            self._handles.append(mod.register_forward_hook(self._make_post(name)))

    def _pre(self, mod, args):
        self._starts.setdefault(id(mod), []).append(self._next_seq())

    def _make_post(self, name: str):
        def post(mod, args, output):
            stack = self._starts.get(id(mod))
            if not stack:
                return
            start = stack.pop()
            call = self._calls.get(name, 0)
            self._calls[name] = call + 1
            _tag(output, start, name, type(mod).__name__, call)
        return post

    def remove(self) -> None:
        """Unregister the module hooks (nodes already tagged keep their tags)."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def __repr__(self) -> str:
        state = f"{len(self._handles) // 2} modules hooked" if self._handles else "removed"
        return f"<track_modules: {state}, {sum(self._calls.values())} calls tagged>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def _tag(output, start: int, name: str, mtype: str, call: int) -> None:
    todo = []
    objs = [output]
    while objs:
        o = objs.pop()
        if isinstance(o, Tensor):
            if o.grad_fn is not None:
                todo.append(o.grad_fn)
        elif isinstance(o, (tuple, list)):
            objs.extend(o)
        elif isinstance(o, dict):
            objs.extend(o.values())
    seen = set()
    while todo:
        node = todo.pop()
        if node in seen or node.__class__ is AccumulateGrad or node._seq < start:
            continue
        seen.add(node)
        md = node.metadata
        if "module" not in md:
            md["module"] = name
            md["module_type"] = mtype
            md["module_call"] = call
        for e in node._edges:
            if e is not None:
                todo.append(e[0])
