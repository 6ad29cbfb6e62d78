"""Packaging and the objects a newcomer prints: py.typed ships, the viz objects have
reprs that say what they hold."""

import os
import re

import retrograd as rg
from retrograd._cli.demo import DemoResult
from retrograd.viz import GradFlowMonitor, nan_provenance, track_modules
from retrograd.viz._walk import walk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_py_typed_marker_is_package_data():
    assert os.path.isfile(os.path.join(os.path.dirname(rg.__file__), "py.typed"))
    with open(os.path.join(ROOT, "pyproject.toml")) as f:  # tomllib is 3.11+
        text = f.read()
    section = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^retrograd = \[.*"py\.typed".*\]$', section, re.M)


def test_grad_flow_monitor_repr():
    net = rg.nn.Sequential(rg.nn.Linear(2, 3), rg.nn.Linear(3, 1))
    mon = GradFlowMonitor(net)
    assert repr(mon) == ("<GradFlowMonitor: 4 parameters, 0 steps (a row per backward "
                         "step), 0 flagged, hooked>")
    net(rg.ones(1, 2)).sum().backward()
    mon.remove()
    assert "1 steps" in repr(mon) and repr(mon).endswith("removed>")


def test_track_modules_nan_provenance_graph_and_demo_result_reprs():
    net = rg.nn.Sequential(rg.nn.Linear(2, 2), rg.nn.ReLU())
    with track_modules(net) as tm:
        y = net(rg.ones(1, 2))
        assert repr(tm) == "<track_modules: 2 modules hooked, 2 calls tagged>"
    assert repr(tm) == "<track_modules: removed, 2 calls tagged>"
    prov = nan_provenance()
    assert repr(prov) == "<nan_provenance inactive: <NonFiniteReport ok=True>>"
    with prov:
        assert repr(prov).startswith("<nan_provenance active")
    g = walk(y.sum())
    assert repr(g) == f"<Graph: {len(g.nodes)} nodes, 1 roots>"
    res = DemoResult()
    res.metrics["final_test_acc"] = 0.9
    res.files["metrics"] = "m.json"
    assert repr(res) == "<DemoResult: test accuracy 90.0%, 1 files written, 0 skipped>"
