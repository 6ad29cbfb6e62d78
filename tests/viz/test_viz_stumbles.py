"""The viz tools meet a newcomer's habits: parameters handed over any natural way,
pictures and progress bars that work in Jupyter, a graph picture that explains its
colours and shows checkpointed regions, and plot labels that stay off the curves."""

from __future__ import annotations

import math
import re
import sys
import types

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.checkpoint import checkpoint
from retrograd.viz import GradFlowMonitor, draw_graph, graph_report

NAMES = ["0.weight", "0.bias", "2.weight", "2.bias"]
UNNAMED = ["param0", "param1", "param2", "param3"]


def _net():
    rg.manual_seed(0)
    return rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.Tanh(), rg.nn.Linear(4, 2))


# how each natural form names the parameters
FORMS = [
    ("module", lambda net: net, NAMES),
    ("parameters()", lambda net: net.parameters(), NAMES),
    ("named_parameters()", lambda net: net.named_parameters(), NAMES),
    ("dict", lambda net: dict(net.named_parameters()), NAMES),
    ("list of pairs", lambda net: list(net.named_parameters()), NAMES),
    ("list", lambda net: list(net.parameters()), UNNAMED),
    ("tuple", lambda net: tuple(net.parameters()), UNNAMED),
    ("plain generator", lambda net: (p for p in net.parameters()), UNNAMED),
]


@pytest.mark.parametrize("form,make,names", FORMS, ids=[f[0] for f in FORMS])
def test_grad_flow_monitor_takes_parameters_any_natural_way(form, make, names):
    net = _net()
    mon = GradFlowMonitor(make(net))
    for _ in range(2):
        net.zero_grad()
        net(rg.ones(5, 3)).pow(2).sum().backward()
    assert mon.names == names
    # a generator is read once, whole: every parameter is watched, every step recorded
    assert mon.steps == [1, 2]
    assert all(not math.isnan(v) for n in names for v in mon.history[n]["mean"])


@pytest.mark.parametrize("form,make,names", FORMS, ids=[f[0] for f in FORMS])
def test_draw_graph_and_graph_report_take_parameters_any_natural_way(form, make, names):
    net = _net()
    loss = net(rg.ones(5, 3)).pow(2).sum()
    pic = draw_graph(loss, params=make(net))
    assert sorted(n["name"] for n in pic.nodes if n["kind"] == "leaf") == sorted(names)
    rep = graph_report(loss, params=make(net))
    assert rep.n_leaves == 4
    if names is NAMES:  # modules come from the parameter names
        assert {r["module"] for r in rep.by_module} >= {"0", "2"}


def test_a_single_tensor_and_tied_weights():
    w = rg.ones(2, requires_grad=True)
    assert GradFlowMonitor(w).names == ["param0"]
    assert GradFlowMonitor([w, w]).names == ["param0"]  # named once, hooked once


def test_what_is_not_parameters_raises_a_type_error_saying_what_is_accepted():
    accepted = "a Module, model.parameters(), model.named_parameters()"
    for bad in (3, "weights", [1.0, 2.0], [("w", rg.ones(1)), 5]):
        for call in (GradFlowMonitor, lambda p: draw_graph(rg.ones(1), params=p),
                     lambda p: graph_report(rg.ones(1), params=p)):
            with pytest.raises(TypeError, match=re.escape(accepted)):
                call(bad)
    with pytest.raises(TypeError, match="not a Tensor"):
        GradFlowMonitor({"x": [1.0]})


def test_a_used_up_generator_says_so():
    net = _net()
    params = net.parameters()
    rg.optim.SGD(params, lr=0.1)  # reads the generator to its end
    with pytest.raises(ValueError, match="generator that can be read only once"):
        GradFlowMonitor(params)


# Jupyter


def test_plot_returns_the_figure_a_notebook_cell_shows(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    w = rg.ones(2, requires_grad=True)
    mon = GradFlowMonitor([w])
    (w * 3).sum().backward()
    assert isinstance(mon.plot(), Figure)
    assert isinstance(mon.plot(str(tmp_path / "f.png")), Figure)


def test_graph_picture_in_a_notebook_without_graphviz(monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    x = rg.ones(2, requires_grad=True)
    pic = draw_graph(x.exp().sum())
    assert pic._repr_svg_() is None
    page = pic._repr_html_()
    assert "apt-get install graphviz" in page and "digraph backward" in page


def _fake_tqdm(monkeypatch, base=object):
    """Put a recording bar class in place of tqdm.auto's."""
    made = []

    class Bar(base):
        def __init__(self, iterable, **kwargs):  # no super(): no widget, no terminal
            self.iterable, self.kwargs = iterable, kwargs
            made.append(self)

        def __iter__(self):
            return iter(self.iterable)

        def set_postfix(self, **kwargs):
            pass

        def close(self):
            pass

    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=Bar))
    return made


def test_progress_bar_comes_from_tqdm_auto(tmp_path, monkeypatch):
    pytest.importorskip("tqdm")
    from retrograd._cli.demo import demo

    made = _fake_tqdm(monkeypatch)
    demo(epochs=1, model="mlp", out=str(tmp_path), limit=64, progress=True)
    assert len(made) == 1 and made[0].kwargs["unit"] == "batch"
    assert made[0].kwargs["ncols"] == 88  # a console bar keeps its width


def test_progress_bar_in_a_notebook_is_a_widget_by_default(tmp_path, monkeypatch):
    pytest.importorskip("tqdm")
    from tqdm.notebook import tqdm_notebook

    from retrograd._cli.demo import demo

    made = _fake_tqdm(monkeypatch, base=tqdm_notebook)
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("zmqshell"))
    demo(epochs=1, model="mlp", out=str(tmp_path), limit=64)  # progress=None
    assert len(made) == 1
    assert "ncols" not in made[0].kwargs and "file" not in made[0].kwargs


def test_progress_bar_without_tqdm(tmp_path, monkeypatch):
    from retrograd._cli.demo import demo

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    res = demo(epochs=1, model="mlp", out=str(tmp_path), limit=64, progress=True)
    assert "tqdm is not installed" in res.skipped["progress bar"]


# the graph picture: legend and checkpointed regions


def _cluster_members(src: str, name: str) -> set:
    """Node ids declared inside ``subgraph <name>`` (nested clusters included)."""
    lines = src.splitlines()
    start = next(i for i, line in enumerate(lines) if f"subgraph {name} {{" in line)
    depth, out = 0, set()
    for line in lines[start:]:
        depth += line.count("{") - line.count("}")
        m = re.match(r"\s*(n\d+) \[", line)
        if m:
            out.add(m.group(1))
        if depth == 0:
            return out
    raise AssertionError("unclosed cluster")


def test_graph_picture_has_a_legend_of_its_colours():
    from retrograd.viz.graph_draw import _FREED, _LEAF, _ROOT

    w = rg.ones(3, requires_grad=True)
    y = (w * 2).exp().sum()
    src = draw_graph(y, params={"w": w}).source
    legend = next(line for line in src.splitlines() if line.strip().startswith("legend "))
    assert _LEAF in legend and _ROOT in legend and "leaf" in legend and "output" in legend
    assert "saved" in legend and _FREED not in legend  # nothing was freed yet
    y.backward()
    legend = draw_graph(y, params={"w": w}).source.split("legend [", 1)[1]
    assert _FREED in legend and "freed" in legend
    assert "legend" not in draw_graph(y, legend=False).source


def test_graph_picture_marks_the_checkpointed_region():
    net = _net()
    x = rg.ones(5, 3)
    h = net[0](x)
    h = checkpoint(lambda t: net[2](net[1](t)), h, use_reentrant=False)
    loss = h.pow(2).sum()
    pic = draw_graph(loss, params=net)
    inside = {n["name"] for n in pic.nodes if n["checkpointed"]}
    assert inside == {"TanhBackward0", "AddmmBackward0", "TBackward0"}
    assert sum(n["checkpointed"] for n in pic.nodes) == 3  # layer 2's, not layer 0's
    members = _cluster_members(pic.source, "cluster_checkpoint_0")
    ids = {n["id"] for n in pic.nodes if n["checkpointed"]}
    leaves2 = {n["id"] for n in pic.nodes if n["name"] in ("2.weight", "2.bias")}
    assert members == ids | leaves2  # layer 2's weights are drawn in its box
    assert 'label="checkpointed: recomputed in backward"' in pic.source
    assert "checkpointed" in pic.source.split("legend [", 1)[1]
    # the unchecked graph has no such box
    plain = draw_graph(net[2](net[1](net[0](x))).sum(), params=net)
    assert "checkpoint" not in plain.source and not any(n["checkpointed"] for n in plain.nodes)


def test_graph_picture_marks_a_reentrant_checkpoint_and_nested_ones():
    x = rg.ones(3, requires_grad=True)
    y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=True).sum()
    pic = draw_graph(y)
    assert [n["name"] for n in pic.nodes if n["checkpointed"]] == ["CheckpointFunctionBackward"]
    assert "checkpointed (reentrant)" in pic.source

    def outer(t):
        a = t.cos()
        return checkpoint(lambda u: u.tanh() * 2, a, use_reentrant=False).exp()

    z = checkpoint(outer, x, use_reentrant=False).sum()
    pic = draw_graph(z)
    by_name = {n["name"]: n["id"] for n in pic.nodes}
    outer_ids = _cluster_members(pic.source, "cluster_checkpoint_0")
    inner_ids = _cluster_members(pic.source, "cluster_checkpoint_1")
    assert by_name["TanhBackward0"] in inner_ids and by_name["MulBackward0"] in inner_ids
    assert by_name["CosBackward0"] in outer_ids and by_name["ExpBackward0"] in outer_ids
    assert by_name["SumBackward0"] not in outer_ids | inner_ids


def test_graph_picture_renders_when_graphviz_is_here(tmp_path):
    from retrograd.viz import graphviz_available

    if not graphviz_available()[0]:
        pytest.skip("Graphviz's dot is not installed")
    net = _net()
    h = checkpoint(net, rg.ones(2, 3), use_reentrant=False)
    svg = draw_graph(h.sum(), params=net).render("svg").decode()
    assert "checkpointed" in svg and "legend" in svg


# the gradient-flow plot: labels off the curves


def _text_boxes(fig):
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip()]


def _line_points(ax):
    """Display points along every curve of ``ax``, as drawn (inside the axes)."""
    box = ax.get_window_extent()
    pts = []
    for line in ax.lines:
        xy = line.get_transform().transform(np.column_stack(line.get_data()).astype(float))
        for a, b in zip(xy[:-1], xy[1:]):
            if not (np.isfinite(a).all() and np.isfinite(b).all()):
                continue
            for f in np.linspace(0.0, 1.0, 60):
                p = a + f * (b - a)
                if box.x0 <= p[0] <= box.x1 and box.y0 <= p[1] <= box.y1:
                    pts.append(p)
    return np.array(pts)


@pytest.mark.parametrize("level", [0.8, 1.25])  # just under, just over the thresholds
def test_plot_labels_never_sit_on_the_curves(level):
    pytest.importorskip("matplotlib")
    # every layer runs along a threshold, where the band labels used to be written
    a = rg.ones(4, requires_grad=True)
    b = rg.ones(4, requires_grad=True)
    opt = rg.optim.SGD([a, b], lr=0.0)
    mon = GradFlowMonitor({"a": a, "b": b}, optimizer=opt, vanish=1e-3, explode=1e2)
    for step in range(6):
        a.grad, b.grad = rg.ones(4) * (1e-3 * level), rg.ones(4) * (1e2 * level)
        opt.step()
        if step % 2:
            mon.mark(f"epoch {step // 2 + 1}")
    fig = mon.plot()
    fig.canvas.draw()
    ax = fig.axes[0]
    pts = np.concatenate([_line_points(ax), _line_points(fig.axes[1])])  # and the bars' axes
    assert len(pts) > 100
    for text, bb in _text_boxes(fig):
        hit = ((pts[:, 0] > bb.x0 + 1) & (pts[:, 0] < bb.x1 - 1) & (pts[:, 1] > bb.y0 + 1)
               & (pts[:, 1] < bb.y1 - 1))
        assert not hit.any(), f"label {text!r} is drawn over a curve"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "vanishing zone (< 0.001)" in legend and "exploding zone (> 100)" in legend
