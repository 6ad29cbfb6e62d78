"""A picture of a plan (``retrograd.compiler.draw_plan``): its calls as boxes, the arrays
they pass as arrows, and what the plan did with each result.

Note [Plan pictures]
One box per call the replay makes, in order, labelled with the NumPy function or op
kernel and the result's shape; an arrow from the call (or input array) that made each
argument. Colours say what the plan did: green, the result lives in a reused buffer
(``out=``); blue, it was written over an input it was the last reader of (in place);
orange, the call writes into an input of the call (an optimizer update, batch norm's
running statistics); red diamonds are checks a replay evaluates again; purple, random
draws. Inputs are grey boxes named after the tensor they came from. A plan with a
compiled backward (Note [Compiled backward] in plan.py) draws it as a second cluster,
with the saved arrays crossing over.

Example:
    >>> import retrograd as torch
    >>> f = torch.compile(lambda x: (x * 2).exp())
    >>> for _ in range(3):
    ...     _ = f(torch.ones(4))
    >>> pic = torch.compiler.draw_plan(f)
    >>> "exp" in pic.source and pic.source.startswith("digraph")
    True
"""

from __future__ import annotations

from ..viz.graph_draw import GraphPicture
from . import record as R

_COLOURS = {"buffer": "#c8e6c9", "inplace": "#bbdefb", "write": "#ffe0b2",
            "draw": "#e1bee7", "plain": "#ffffff"}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cluster(plan, lines: list, nodes: list, made: dict, tag: str) -> None:
    tr = plan.trace
    slots = tr.rec.slots
    events = tr.rec.events
    for n, (acc, _what) in (tr.ext if plan.part != "backward" else ()):
        info = slots[n]
        if plan.last[n] < 0 and n not in plan.escaping:
            continue
        name = info.label or ("args" if acc[0] == "leaf" else "input")
        node = f"{tag}in{n}"
        made[n] = node
        lines.append(f"  {node} [shape=box, style=filled, fillcolor=\"#eeeeee\", "
                     f"label={_quote(f'{name}{tuple(info.shape)}')}];")
        nodes.append({"id": node, "kind": "input", "label": name})
    for n in plan.inputs:
        node = f"{tag}saved{n}"
        if n not in made:
            made[n] = node
            what = "grad_output" if n in tr.bw_grads else "saved"
            lines.append(f"  {node} [shape=box, style=filled, fillcolor=\"#eeeeee\", "
                         f"label={_quote(f'{what}{tuple(slots[n].shape)}')}];")
            nodes.append({"id": node, "kind": what, "label": what})
    for i, ev in enumerate(events):
        if not plan.keep[i]:
            continue
        node = f"{tag}e{i}"
        out = ev.outs[0] if ev.outs else None
        shape = f"{tuple(slots[out].shape)}" if out is not None else ""
        if ev.shape == "check":
            lines.append(f"  {node} [shape=diamond, style=filled, fillcolor=\"#ffcdd2\", "
                         f"label={_quote('check ' + ev.meta.get('what', '')[:30])}];")
            kind = "check"
        else:
            kind = "plain"
            if ev.fn is R.draw_words or not ev.pure and not ev.writes:
                kind = "draw"
            elif ev.writes:
                kind = "write"
            elif out is not None and out in plan.buffer_of:
                kind = "buffer"
            label = _quote(f"{ev.name}\n{shape}")
            lines.append(f"  {node} [shape=box, style=\"rounded,filled\", "
                         f"fillcolor=\"{_COLOURS[kind]}\", label={label}];")
        nodes.append({"id": node, "kind": kind, "label": ev.name, "shape": shape})
        for s in dict.fromkeys(_reads(ev)):
            src = made.get(s)
            if src is not None:
                lines.append(f"  {src} -> {node};")
        for o in ev.outs:
            made[o] = node


def _reads(ev):
    for s in R._slots_in(ev.args):
        yield s.n
    for s in R._slots_in(ev.kwargs):
        yield s.n


def plan_picture(plan) -> GraphPicture:
    """The picture of ``plan`` (Note [Plan pictures])."""
    lines = ["digraph plan {", "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10]; edge [color="#555555"];']
    nodes: list = []
    made: dict = {}
    lines.append("  subgraph cluster_forward { label=\"forward\";" if plan.backward
                 else "  subgraph cluster_plan { label=\"plan\";")
    _cluster(plan, lines, nodes, made, "f")
    lines.append("  }")
    if plan.backward is not None:
        lines.append("  subgraph cluster_backward { label=\"backward\";")
        _cluster(plan.backward, lines, nodes, {}, "b")
        lines.append("  }")
        for n in plan.saved:  # the saved arrays cross from the forward to the backward
            if n in made:
                lines.append(f"  {made[n]} -> bsaved{n} [style=dashed];")
    lines.append("}")
    return GraphPicture("\n".join(lines) + "\n", nodes,
                        note=f"{len([x for x in nodes if x['kind'] != 'input'])} calls")
