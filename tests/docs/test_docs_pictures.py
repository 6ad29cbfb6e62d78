"""The pictures in docs/img are made by docs/make_pictures.py from the code they show,
and the committed ones still agree with what that code makes now: the demo's backward
graph has the same title (op and leaf counts, saved memory) and the same nodes, the
demo's gradient-flow plot the same layers and number of steps. A change to the demo
that changes its pictures fails here until ``python docs/make_pictures.py`` is run."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
IMG = os.path.join(DOCS, "img")
SMALL = {"epochs": 1, "limit": 64}  # one optimizer step: the graph is the first step's


@pytest.fixture(scope="module")
def pictures():
    spec = importlib.util.spec_from_file_location("make_pictures",
                                                  os.path.join(DOCS, "make_pictures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_every_picture_is_made_by_the_script(pictures):
    referenced = set()
    for name in os.listdir(DOCS):
        if name.endswith(".md"):
            referenced |= set(re.findall(r"\]\(img/([^)]+)\)", _read(os.path.join(DOCS, name))))
    assert referenced and referenced <= set(pictures.PICTURES)
    assert sorted(os.listdir(IMG)) == sorted(pictures.PICTURES)
    for name, (maker, _) in pictures.PICTURES.items():
        if name.endswith(".png"):
            want = pictures.demo_facts() if maker == "demo" else \
                f"python {maker} (its default settings)"
            assert pictures.png_description(os.path.join(IMG, name)) == want, name


def test_committed_demo_graph_matches_the_demo(pictures, tmp_path):
    files = pictures._run_demo(str(tmp_path), **SMALL)
    now = pictures.graph_facts(_read(files["graph_dot"]))
    committed = pictures.graph_facts(_read(os.path.join(IMG, "demo_graph.svg")))
    assert committed == now
    # 14 ops: each Linear is addmm over a t() view of its weight, as PyTorch records it
    assert re.search(r": 14 ops, 8 leaves, saved", now[0]) and now[1] == 23


def test_make_writes_the_demo_pictures(pictures, tmp_path):
    pytest.importorskip("matplotlib")
    from retrograd.viz import graphviz_available

    skipped = pictures.make(["demo_grad_flow.png", "demo_graph.svg"], img=str(tmp_path),
                            demo_kw=SMALL)
    png = tmp_path / "demo_grad_flow.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert pictures.png_description(str(png)) == pictures.demo_facts(**SMALL)
    ok, why = graphviz_available()
    if ok:  # rendered by `dot`: the same graph as the committed picture
        assert skipped == {}
        assert pictures.graph_facts((tmp_path / "demo_graph.svg").read_text()) == \
            pictures.graph_facts(_read(os.path.join(IMG, "demo_graph.svg")))
    else:  # as `retrograd demo` does without Graphviz: skipped, with the reason
        assert skipped == {"demo_graph.svg": why}
        assert not (tmp_path / "demo_graph.svg").exists()


def test_command_line(pictures, capsys):
    assert pictures.main(["--list"]) == 0
    assert "demo_graph.svg           demo" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        pictures.main(["nope.png"])
    assert "unknown picture(s) nope.png" in capsys.readouterr().err
