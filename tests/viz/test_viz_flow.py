"""GradFlowMonitor: per-parameter statistics equal torch's gradients; flags; plot."""

import csv
import math
import sys

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.viz import GradFlowMonitor


def make(lib, scale=1.0):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    return net


def copy_weights(src, dst):
    with torch.no_grad():
        for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))


def test_stats_match_torch_every_optimizer_step():
    net = make(rg)
    tnet = make(torch)
    copy_weights(net, tnet)
    opt = rg.optim.SGD(net.parameters(), lr=0.1)
    topt = torch.optim.SGD(tnet.parameters(), lr=0.1)
    mon = GradFlowMonitor(net, optimizer=opt)
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    expected = {n: [] for n, _ in tnet.named_parameters()}
    for _ in range(3):
        for lib, m, o, xx in ((rg, net, opt, rg.tensor(x)), (torch, tnet, topt, torch.tensor(x))):
            o.zero_grad()
            m(xx).pow(2).mean().backward()
            o.step() if lib is rg else None
        for n, p in tnet.named_parameters():
            g = p.grad.double()
            expected[n].append((g.abs().mean().item(), g.abs().max().item(), g.norm().item()))
        topt.step()
    assert mon.steps == [1, 2, 3] and mon.mode == "optimizer"
    for n, rows in expected.items():
        h = mon.history[n]
        got = list(zip(h["mean"], h["max"], h["norm"]))
        np.testing.assert_allclose(got, rows, rtol=1e-5, atol=1e-7)


def test_backward_hook_mode_one_row_per_backward():
    w = rg.ones(3, requires_grad=True)
    b = rg.ones(1, requires_grad=True)
    mon = GradFlowMonitor({"w": w, "b": b})
    for k in range(1, 4):
        w.grad = b.grad = None
        (w * k + b).sum().backward()
    assert mon.mode == "backward" and mon.steps == [1, 2, 3]
    assert mon.history["w"]["max"] == [1.0, 2.0, 3.0]
    assert mon.history["b"]["norm"] == [3.0, 3.0, 3.0]
    mon.remove()
    (w * 9).sum().backward()
    assert mon.steps == [1, 2, 3]


def test_missing_gradient_is_nan_and_not_flagged():
    w = rg.ones(2, requires_grad=True)
    u = rg.ones(2, requires_grad=True)
    mon = GradFlowMonitor({"w": w, "u": u}, optimizer=rg.optim.SGD([w, u], lr=0.1))
    w.grad = rg.ones(2)
    mon.record()
    assert math.isnan(mon.history["u"]["mean"][0]) and mon.flags() == []


def test_flags_vanishing_exploding_nonfinite():
    a = rg.ones(2, requires_grad=True)
    b = rg.ones(2, requires_grad=True)
    c = rg.ones(2, requires_grad=True)
    mon = GradFlowMonitor({"a": a, "b": b, "c": c}, optimizer=rg.optim.SGD([a], lr=0.0),
                          vanish=1e-6, explode=10.0)
    a.grad, b.grad, c.grad = rg.full((2,), 1e-9), rg.full((2,), 50.0), rg.tensor([1.0, 2.0])
    mon.record()
    c.grad = rg.tensor([float("nan"), 1.0])
    mon.record()
    kinds = {(f["name"], f["step"]): f["kind"] for f in mon.flags()}
    assert kinds == {("a", 1): "vanishing", ("a", 2): "vanishing", ("b", 1): "exploding",
                     ("b", 2): "exploding", ("c", 2): "non-finite"}
    assert mon.flagged_layers() == {"a": "vanishing", "b": "exploding", "c": "non-finite"}
    summary = mon.summary()
    assert "vanishing" in summary and "non-finite" in summary


def test_csv_and_dict(tmp_path):
    w = rg.ones(2, requires_grad=True)
    mon = GradFlowMonitor({"w": w})
    (w * 3).sum().backward()
    p = mon.save_csv(str(tmp_path / "flow.csv"))
    rows = list(csv.DictReader(open(p)))
    assert rows == [{"step": "1", "parameter": "w", "mean_abs": "3.0", "max_abs": "3.0",
                     "norm": str(math.sqrt(18.0))}]
    d = mon.to_dict()
    assert d["steps"] == [1] and d["history"]["w"]["max"] == [3.0]


def test_errors():
    with pytest.raises(ValueError, match="no parameters"):
        GradFlowMonitor({"x": rg.ones(2)})
    with pytest.raises(TypeError, match="not a Tensor"):
        GradFlowMonitor({"x": [1.0]})


def test_plot_png(tmp_path):
    pytest.importorskip("matplotlib")
    net = make(rg)
    opt = rg.optim.Adam(net.parameters(), lr=0.01)
    mon = GradFlowMonitor(net, optimizer=opt, vanish=1e-3)
    x = rg.randn(8, 4)
    for step in range(50):
        opt.zero_grad()
        (net(x) * (1e-6 if step > 40 else 1.0)).pow(2).mean().backward()
        opt.step()
        if step % 10 == 9:
            mon.mark(f"epoch {step // 10 + 1}")
    path = tmp_path / "flow.png"
    fig = mon.plot(str(path))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and any("[vanishing]" in t.get_text()
                                             for t in ax.get_legend().get_texts())


def test_plot_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    w = rg.ones(2, requires_grad=True)
    mon = GradFlowMonitor({"w": w})
    with pytest.raises(ImportError, match="retrograd\\[demo\\]"):
        mon.plot()
