"""draw_graph and graph_report: the graph drawn is torch's graph; the memory adds up;
the `total_loss += loss` leak is detected."""

import json
import shutil
import warnings

import pytest
import torch

import retrograd as rg
from retrograd.viz import draw_graph, graph_report, graphviz_available, track_modules


def torch_graph_names(t) -> list:
    """Node names of torch's backward graph (iterative walk over next_functions)."""
    seen, out, stack = set(), [], [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        out.append(n.name())
        stack.extend(f for f, _ in n.next_functions)
    return sorted(out)


def program(lib):
    lib.manual_seed(0)
    w1 = lib.randn(4, 3, requires_grad=True)
    b1 = lib.zeros(4, requires_grad=True)
    w2 = lib.randn(2, 4, requires_grad=True)
    x = lib.randn(5, 3)
    h = (x @ w1.t() + b1).tanh()
    out = (h @ w2.t()).sigmoid()
    loss = (out - 1).pow(2).mean()
    return loss, {"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2}, x, h, out


def test_nodes_match_torch_graph():
    tloss, *_ = program(torch)
    loss, params, *_ = program(rg)
    pic = draw_graph(loss, params=params)
    ours = sorted(n["name"] if n["kind"] == "op" else "torch::autograd::AccumulateGrad"
                  for n in pic.nodes)
    assert ours == torch_graph_names(tloss)
    leaves = {n["name"]: n["shape"] for n in pic.nodes if n["kind"] == "leaf"}
    assert leaves == {"fc1.weight": "(4, 3) float32", "fc1.bias": "(4) float32",
                      "fc2.weight": "(2, 4) float32"}


def test_dot_text_has_shapes_saved_bytes_and_lines():
    loss, params, x, h, out = program(rg)
    pic = draw_graph({"loss": loss}, params=params, title="t")
    src = pic.source
    assert src.startswith("digraph backward {") and src.rstrip().endswith("}")
    assert src.count("{") == src.count("}")
    tanh = next(n for n in pic.nodes if n["name"] == "TanhBackward0")
    assert tanh["shape"] == "(5, 4) float32"
    assert tanh["saved"] == h._data.nbytes  # tanh saves its output
    assert "test_viz_graph.py" in tanh["site"] and "tanh()" in tanh["site"]
    assert 'label="loss\\n() float32"' in src
    assert "subgraph cluster_" in src and 'label="fc1"' in src  # grouped by module
    assert "t: " in src


def test_no_params_and_no_grouping():
    x = rg.ones(3, requires_grad=True)
    pic = draw_graph([x.exp(), x.sin()], group_modules=False, show_sites=False,
                     show_saved=False)
    assert "cluster" not in pic.source and "output 0" in pic.source and "output 1" in pic.source
    assert [n["name"] for n in pic.nodes if n["kind"] == "leaf"] == ["leaf"]


def test_max_nodes_truncates():
    x = rg.ones(2, requires_grad=True)
    y = x
    for _ in range(50):
        y = y * 1.01
    pic = draw_graph(y.sum(), max_nodes=10)
    assert len(pic.nodes) == 10 and "graph continues" in pic.source


def test_deep_graph_no_recursion():
    x = rg.ones(1, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y + 1.0
    pic = draw_graph(y, max_nodes=10 ** 6)
    assert len(pic.nodes) == 3001
    assert graph_report(y).n_ops == 3000


def test_freed_nodes_are_shown():
    loss, params, *_ = program(rg)
    loss.backward()
    pic = draw_graph(loss, params=params)
    assert "freed by backward" in pic.source
    assert "grad norm" in pic.source  # leaves show their gradient once it exists
    rep = graph_report(loss, params=params)
    assert rep.total_bytes == 0 and 0 < rep.n_freed < rep.n_ops  # nodes that saved nothing
    assert "already freed" in rep.table()


def test_save_dot_and_render(tmp_path):
    loss, params, *_ = program(rg)
    pic = draw_graph(loss, params=params)
    p = pic.save(str(tmp_path / "g.dot"))
    assert open(p).read() == pic.source
    ok, _ = graphviz_available()
    if not ok:
        pytest.skip("Graphviz's dot is not installed")
    svg = pic.save(str(tmp_path / "g.svg"))
    text = open(svg).read()
    assert "<svg" in text and "TanhBackward0" in text
    png = pic.save(str(tmp_path / "g.png"))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_save_without_graphviz_writes_dot(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    ok, why = graphviz_available()
    assert not ok and "Graphviz" in why
    pic = draw_graph((rg.ones(2, requires_grad=True) * 2).sum())
    with pytest.warns(RuntimeWarning, match="not rendered"):
        p = pic.save(str(tmp_path / "g.svg"))
    assert p.endswith("g.dot") and open(p).read().startswith("digraph")
    with pytest.raises(RuntimeError, match="cannot render"):
        pic.render("png")


def test_track_modules_and_collapse():
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.Tanh(), rg.nn.Linear(4, 2))
    with track_modules(net):
        out = net(rg.randn(5, 3)).sum()
    mods = {n.metadata_.get("module") for n in _nodes(out) if n.metadata_}
    assert mods == {"0", "1", "2"}
    pic = draw_graph(out, params=net, collapse_modules=True)
    assert "box3d" in pic.source and '0 (Linear)' in pic.source
    # hooks are gone after the block
    out2 = net(rg.randn(5, 3)).sum()
    assert all(not n.metadata_ for n in _nodes(out2) if hasattr(n, "metadata_"))


def test_shared_module_gets_one_box_per_call():
    pool = rg.nn.ReLU()
    lin = rg.nn.Linear(2, 2)

    class Net(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.act, self.lin = pool, lin

        def forward(self, x):
            return self.act(self.lin(self.act(x)))

    net = Net()
    with track_modules(net):
        y = net(rg.ones(1, 2, requires_grad=True)).sum()
    src = draw_graph(y, params=net).source
    assert "act #1 (ReLU)" in src and "act #2 (ReLU)" in src


def _nodes(t):
    from retrograd.viz._walk import walk

    return walk(t).nodes


# -- graph_report -------------------------------------------------------------------------

def test_report_bytes_by_op_module_and_line():
    loss, params, x, h, out = program(rg)
    rep = graph_report(loss, params=params)
    by_op = {r["op"]: r["bytes"] for r in rep.by_op}
    # tanh and sigmoid save their outputs; pow saves its input (out - 1)
    assert by_op["TanhBackward0"] == h._data.nbytes
    assert by_op["SigmoidBackward0"] == out._data.nbytes
    assert rep.total_bytes == sum(r["bytes"] for r in rep.by_op)
    assert rep.total_bytes == sum(r["bytes"] for r in rep.by_line)
    assert rep.by_op == sorted(rep.by_op, key=lambda r: (-r["bytes"], -r["nodes"], r["op"]))
    lines = [r["line"] for r in rep.by_line]
    assert any("tanh()" in s for s in lines)
    table = rep.table()
    assert table.startswith("graph of ") and "by op" in table and "by line" in table
    json.dumps(rep.to_dict())


def test_report_counts_shared_buffers_once():
    x = rg.ones(1000, requires_grad=True)
    y = x.exp()
    z = y.sin() * y.cos()  # y saved by exp (its output), sin and cos (their input)
    rep = graph_report(z.sum())
    by_op = {r["op"]: r["bytes"] for r in rep.by_op}
    assert by_op["ExpBackward0"] == 4000 and by_op["SinBackward0"] == 0
    assert rep.leaf_bytes == 0 or rep.leaf_bytes == 4000


def test_checkpointing_shows_smaller_graph():
    from retrograd.utils.checkpoint import checkpoint

    rg.manual_seed(0)
    net = rg.nn.Sequential(*[m for _ in range(4) for m in (rg.nn.Linear(32, 32), rg.nn.Tanh())])
    x = rg.randn(16, 32)
    plain = graph_report(net(x).sum())
    ck = graph_report(checkpoint(net, x, use_reentrant=False).sum())
    assert ck.total_bytes < plain.total_bytes / 4


def test_leak_across_optimizer_steps_is_flagged():
    w = rg.ones(4, requires_grad=True)
    opt = rg.optim.SGD([w], lr=0.1)
    total = 0
    for _ in range(4):
        loss = (w * w).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = total + loss
    rep = graph_report(total, params={"w": w})
    assert rep.steps_spanned == 3
    assert "spans 3 optimizer steps" in rep.warnings[0] and "loss.item()" in rep.warnings[0]
    assert "WARNING" in rep.table()
    # the fix: accumulate numbers, and a single step's graph has no warning
    loss = (w * w).sum()
    assert graph_report(loss, params={"w": w}).warnings == []


def test_leak_detection_with_module_and_adam():
    rg.manual_seed(0)
    net = rg.nn.Linear(3, 1)
    opt = rg.optim.Adam(net.parameters(), lr=0.01)
    # the input needs a gradient: addmm saves W.t() only for the input's, as in torch
    x = rg.randn(8, 3, requires_grad=True)
    running = 0
    for _ in range(3):
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss
    rep = graph_report(running, params=net)
    assert rep.steps_spanned >= 2 and "weight" in rep.warnings[0]


def test_independent_copies_warning():
    w = rg.ones(3, requires_grad=True)
    total = 0
    for _ in range(10):
        total = total + (w + 1.0).sum()  # w is never saved: only the weaker signal applies
    rep = graph_report(total, params={"w": w})
    assert rep.steps_spanned == 0
    assert rep.warnings and "10 independent copies" in rep.warnings[0]
    # a recurrent chain reuses w too, but each use depends on the previous one
    h = rg.zeros(3)
    for _ in range(10):
        h = (h + w).tanh()
    assert graph_report(h.sum(), params={"w": w}).warnings == []


def test_report_of_leaf_and_non_grad_tensor():
    x = rg.ones(2, requires_grad=True)
    rep = graph_report(x)
    assert rep.n_ops == 0 and rep.n_leaves == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert graph_report(rg.ones(2)).n_nodes == 0
