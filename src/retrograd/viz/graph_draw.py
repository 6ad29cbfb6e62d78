"""Pictures of the backward graph: Graphviz DOT text, rendered to SVG/PNG when possible.

``draw_graph(loss, params=dict(model.named_parameters()))`` returns a ``GraphPicture``:
its ``source`` is DOT text (no dependency needed), ``save('step.svg')`` renders it with
Graphviz (the ``graphviz`` Python package or a ``dot`` binary on PATH) and, when
neither is there, writes the DOT text next to it and says so.

Each op node shows its name, the shape and dtype of what it produced, the bytes of
the tensors it saved for backward, and the user's line that created it; leaves are
named by parameter name; ``group_modules``/``collapse_modules`` box or fold the ops
of each module (modules come from ``track_modules(model)`` or from the parameters
that feed a node). Nodes made inside ``utils.checkpoint.checkpoint`` sit in a red
dashed box labelled "checkpointed", and a legend says what each colour and box means.

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
from .._tensor.tensor import Tensor
from ._walk import (
    ParamsLike,
    Roots,
    assign_modules,
    attribute_saved,
    checkpoint_regions,
    nbytes_str,
    param_names,
    site_text,
    walk,
)

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

    def render(self, format: str = "svg") -> bytes:
        """The picture as bytes in ``format`` (svg, png, pdf); needs Graphviz."""
        return _render(self.source, format)

    def save(self, path: str, format: str | None = None) -> str:
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

    def _repr_html_(self):
        """What a Jupyter cell shows when Graphviz is missing (else the SVG above): why
        there is no picture, and the DOT text to paste into any Graphviz viewer."""
        ok, why = graphviz_available()
        if ok:
            return None
        import html

        return (f"<p>{html.escape(repr(self))}: no picture, because {html.escape(why)}.</p>"
                "<details><summary>DOT text (paste it into any Graphviz viewer)</summary>"
                f"<pre>{html.escape(self.source)}</pre></details>")


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


_CKPT = "#c0392b"
_CKPT_FILL = "#fdf0ee"


def _legend(present: set) -> str:
    """The DOT line of a legend node: one row per kind of thing the picture shows."""
    rows = [(_LEAF, "leaf: a parameter or input that requires grad")] if "leaf" in present \
        else []
    rows.append((f"#ffffff:{_heat(1.0)}", "op (a backward node); fill: the memory its saved "
                                          "tensors hold (white none, orange most)"))
    if "freed" in present:
        rows.append((_FREED, "op whose saved tensors backward already freed"))
    if "output" in present:
        rows.append((_ROOT, "output: a tensor the graph was drawn from"))
    if "collapsed" in present:
        rows.append(("#ffffff", "3-D box: a module folded into one node (fill as for ops)"))
    swatches = [f'BORDER="1" BGCOLOR="{c}"' for c, _ in rows]
    if "module" in present:
        rows.append(("", "grey dashed box: the ops of one module"))
        swatches.append('BORDER="1" STYLE="dashed" COLOR="#888888"')
    if "checkpointed" in present:
        rows.append(("", "red dashed box: checkpointed (made inside checkpoint(); "
                         "recomputed in backward)"))
        swatches.append(f'BORDER="2" STYLE="dashed" COLOR="{_CKPT}" BGCOLOR="{_CKPT_FILL}"')
    cells = [f'<TR><TD {sw} WIDTH="22"> </TD><TD ALIGN="LEFT">{t}</TD></TR>'
             for sw, (_, t) in zip(swatches, rows)]
    table = ('<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="3" CELLPADDING="3">'
             '<TR><TD COLSPAN="2"><B>legend</B></TD></TR>' + "".join(cells) + "</TABLE>")
    return f'  legend [shape=plaintext, fontsize=9, margin=0, label=<{table}>];'


def _present(g, infos: list, rep: dict, ids: dict, body: dict, regions: dict) -> set:
    """The kinds of thing the picture shows, for its legend."""
    present = {"freed" for i in infos if i.get("freed")}
    if any(rep[n] == ids[n] for n in g.nodes if n.__class__ is AccumulateGrad):
        present.add("leaf")
    if any(rep[n] != ids[n] for n in g.nodes):
        present.add("collapsed")
    if any(m is not None for mods in body.values() for m in mods):
        present.add("module")
    if g.roots:
        present.add("output")
    if regions:
        present.add("checkpointed")
    return present


def _module_names(g, names: dict) -> tuple:
    """``({node: module box name}, {module: type name})``; a module called several
    times (a shared pooling layer) gets one box per call."""
    mtypes = {}
    calls: dict = {}
    for node in g.nodes:
        md = node.metadata_
        if md is not None and "module_type" in md:
            mtypes[md["module"]] = md["module_type"]
        if md is not None and "module_call" in md:
            calls.setdefault(md["module"], set()).add(md["module_call"])
    modules = assign_modules(g, names)
    for node in g.nodes:
        md = node.metadata_
        if md is not None and len(calls.get(md.get("module"), ())) > 1:
            modules[node] = f"{md['module']} #{md['module_call'] + 1}"
            mtypes.setdefault(modules[node], md.get("module_type"))
    return modules, mtypes


def _leaf_node(node, nid: str, shape: str, names: dict, module) -> tuple:
    """(DOT attributes, label lines, info) of a leaf's AccumulateGrad node."""
    var = node._var()
    label = names.get(id(node)) or "leaf"
    if var is not None:
        shape = _shape_str({0: (tuple(var._data.shape), var.dtype)})
    lines = [label, shape]
    if var is not None and var._grad is not None:
        from numpy import linalg

        lines.append(f"grad norm {float(linalg.norm(var._grad._data.ravel())):.3g}")
    attrs = f'shape=box, style="filled", fillcolor="{_LEAF}"'
    info = {"id": nid, "name": label, "kind": "leaf", "shape": shape, "saved": 0,
            "site": "", "module": module}
    return attrs, lines, info


def _op_node(node, nid: str, shape: str, nbytes: int, biggest: int, module,
             show_saved: bool, show_sites: bool) -> tuple:
    """(DOT attributes, label lines, info) of an op node."""
    freed = node._saved is None
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
    info = {"id": nid, "name": node.name(), "kind": "op", "shape": shape, "saved": nbytes,
            "site": site, "module": module, "freed": freed}
    return attrs, lines, info


def _placement(g, regions: dict) -> dict:
    """``{node: checkpointed region it is drawn in}``: its own region, or for a leaf,
    the region of its consumers when they all share one (a checkpointed layer's weight
    sits inside the layer's box)."""
    placed = dict(regions)
    consumers: dict = {}
    for child, parent, _ in g.edges:
        if child.__class__ is AccumulateGrad:
            consumers.setdefault(child, set()).add(regions.get(parent))
    for leaf, where in consumers.items():
        if len(where) == 1 and None not in where:
            placed[leaf] = where.pop()
    return placed


def _collapse(g, body: dict, modules: dict, mtypes: dict, names: dict, saved_by: dict,
              biggest: int, show_saved: bool) -> dict:
    """Fold each module's nodes in ``body`` into one node; returns ``{node: its new id}``
    for the folded nodes (the folded node sits in a checkpointed region when all its
    nodes do)."""
    rep: dict = {}
    folded = [m for m in dict.fromkeys(m for mods in body.values() for m in mods)
              if m is not None]
    for k, mod in enumerate(folded):
        members = [n for n in g.nodes if modules[n] == mod]
        regions = [r for r, mods in body.items() if mods.pop(mod, None) is not None]
        ops = [n.name() for n in members if n.__class__ is not AccumulateGrad]
        leaves = [names.get(id(n), "leaf") for n in members if n.__class__ is AccumulateGrad]
        mid = f"m{k}_{abs(hash(mod)) % 10 ** 6}"
        total = sum(saved_by.get(n, 0) for n in members)
        head = f"{mod or '(root)'}" + (f" ({mtypes[mod]})" if mod in mtypes else "")
        names_fwd = list(dict.fromkeys(reversed(ops)))  # in forward order
        rows = [", ".join(names_fwd[i:i + 3]) for i in range(0, len(names_fwd), 3)]
        label = [head] + (rows or ["-"])
        if leaves:
            label.append("params: " + ", ".join(p.rsplit(".", 1)[-1] for p in leaves))
        if show_saved and total:
            label.append(f"saved {nbytes_str(total)}")
        region = regions[0] if len(regions) == 1 else None
        body.setdefault(region, {}).setdefault(None, []).append(
            f"{mid} [label={_q(chr(10).join(label))}, shape=box3d, "
            f'style="filled", fillcolor="{_heat(total / biggest)}"];')
        for n in members:
            rep[n] = mid
    return rep


def _clusters(body: dict, mtypes: dict, region_labels: list) -> list:
    """DOT lines of the nodes, boxed by checkpointed region, then by module."""
    out = []
    k = 0
    for region, mods in body.items():
        pad = "  "
        if region is not None:
            out.append(f"  subgraph cluster_checkpoint_{region} {{")
            out.append(f"    label={_q(region_labels[region])}; style=\"dashed,filled\"; "
                       f'color="{_CKPT}"; fillcolor="{_CKPT_FILL}"; penwidth=1.6; '
                       f'fontcolor="{_CKPT}"; fontsize=10;')
            pad = "    "
        for mod, blines in mods.items():
            if mod is None:
                out.extend(pad + b for b in blines)
                continue
            mlabel = (mod or "(root)") + (f" ({mtypes[mod]})" if mod in mtypes else "")
            out.append(f"{pad}subgraph cluster_{k} {{")
            out.append(f'{pad}  label={_q(mlabel)}; style="rounded,dashed"; color="#888888"; '
                       'fontcolor="#000000"; fontsize=10;')
            out.extend(pad + "  " + b for b in blines)
            out.append(pad + "}")
            k += 1
        if region is not None:
            out.append("  }")
    return out


def draw_graph(tensors: Roots, params: ParamsLike | None = None, *, collapse_modules: bool = False,
               group_modules: bool = True, show_saved: bool = True, show_sites: bool = True,
               max_nodes: int = 400, title: str | None = None, rankdir: str = "TB",
               legend: bool = True) -> GraphPicture:
    """Draw the backward graph of ``tensors`` (a tensor, a list, or ``{name: tensor}``).

    ``params`` names the leaves: the model itself, ``model.parameters()``,
    ``model.named_parameters()``, a list of tensors or a ``{name: tensor}`` dict (Note
    [Naming parameters] in _walk.py). With ``collapse_modules`` each module's ops
    become one node. Graphs above ``max_nodes`` are cut off (the picture says how many
    were left out). Nodes made inside ``utils.checkpoint.checkpoint`` sit in a red
    dashed box labelled "checkpointed" (Note [Checkpointed regions] in _walk.py), and
    ``legend`` adds a key to the colours and boxes.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import draw_graph
        >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> pic = draw_graph({"loss": (a * a).sum()}, params={"a": a})
        >>> [(n["name"], n["shape"]) for n in pic.nodes]
        [('SumBackward0', '() float32'), ('MulBackward0', '(2) float32'), ('a', '(2) float32')]
        >>> "legend" in pic.source, "checkpointed" in pic.source
        (True, False)
    """
    names = param_names(params)
    g = walk(tensors, max_nodes=max_nodes)
    saved_by, _ = attribute_saved(g)  # Note [Counting saved memory] in _walk.py
    biggest = max(saved_by.values(), default=0) or 1
    ids = {node: f"n{i}" for i, node in enumerate(g.nodes)}
    modules, mtypes = _module_names(g, names)
    regions, region_labels = checkpoint_regions(g)
    placed = _placement(g, regions)
    infos = []
    body: dict = {}  # checkpointed region (or None) -> module (or None) -> DOT lines
    for node in g.nodes:
        nid = ids[node]
        shape = _shape_str(g.out_meta.get(node, {}))
        if node.__class__ is AccumulateGrad:
            attrs, lines, info = _leaf_node(node, nid, shape, names, modules[node])
        else:
            attrs, lines, info = _op_node(node, nid, shape, saved_by.get(node, 0), biggest,
                                          modules[node], show_saved, show_sites)
        info["checkpointed"] = node in regions
        infos.append(info)
        cluster = modules[node] if (group_modules or collapse_modules) else None
        body.setdefault(placed.get(node), {}).setdefault(cluster, []).append(
            f"{nid} [label={_q(chr(10).join(lines))}, {attrs}];")
    rep = dict(ids)
    if collapse_modules:
        rep.update(_collapse(g, body, modules, mtypes, names, saved_by, biggest, show_saved))

    lines = ["digraph backward {",
             f'  graph [rankdir={rankdir}, fontname="Helvetica", fontsize=11, '
             'nodesep=0.25, ranksep=0.35];',
             '  node [fontname="Helvetica", fontsize=10, margin="0.12,0.05"];',
             f'  edge [color="{_EDGE}", arrowsize=0.6];']
    n_ops = sum(1 for n in g.nodes if n.__class__ is not AccumulateGrad)
    cap = (f"{title or 'backward graph'}: {n_ops} ops, {len(g.nodes) - n_ops} leaves, saved "
           f"{nbytes_str(sum(saved_by.values()))}")
    if g.truncated:
        cap += f" (first {max_nodes} nodes shown)"
    lines.append(f"  labelloc=t; label={_q(cap)};")
    lines.extend(_clusters(body, mtypes, region_labels))
    done = set()
    for child, parent, _ in g.edges:
        if child not in ids or parent not in ids:
            continue
        a, b = rep[child], rep[parent]
        if a != b and (a, b) not in done:
            done.add((a, b))
            lines.append(f"  {a} -> {b};")
    for k, (node, name) in enumerate(g.roots):
        meta = g.out_meta.get(node, {})
        lines.append(f"  r{k} [label={_q(name + chr(10) + _shape_str(meta))}, shape=ellipse, "
                     f'style="filled", fillcolor="{_ROOT}"];')
        if node in rep:
            lines.append(f"  {rep[node]} -> r{k};")
    if g.truncated:
        lines.append('  more [label="… graph continues (raise max_nodes)", shape=plaintext];')
    if legend:
        present = _present(g, infos, rep, ids, body, regions)
        lines.append(_legend(present))
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
        from ..ops.op import _next_seq

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
