"""Make the pictures in docs/img from the code that the docs describe.

Each picture is what a command of the project writes: the demo (``retrograd demo``'s
gradient-flow plot and backward graph) and the example scripts in examples/. This
script runs them with their default settings and copies their pictures here, so the
docs show what a reader gets. Each PNG carries a ``Description`` text chunk that says
what made it (and, for the demo, the facts that the test suite compares with the code:
the layers and the number of steps); the graph SVG's title says its op and leaf counts.

Run: ``python docs/make_pictures.py`` (all, about two minutes, mostly the WGAN-GP
example), ``python docs/make_pictures.py demo_graph.svg`` (some), ``--list``. The graph
needs Graphviz's ``dot`` program; without it that picture is skipped with the reason,
as ``retrograd demo`` does. ``tests/docs/test_docs_pictures.py`` checks that the committed
pictures agree with what the code makes now.

Example:
    >>> sorted(PICTURES)[:2]
    ['checkpoint_memory.png', 'demo_graph.svg']
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import math
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IMG = os.path.join(HERE, "img")

# the demo's settings: `retrograd demo` with its defaults
DEMO = {"epochs": 5, "model": "cnn", "seed": 0}

# picture -> (what makes it, the file that maker writes)
PICTURES = {
    "demo_grad_flow.png": ("demo", "grad_flow.png"),
    "demo_graph.svg": ("demo", "graph.svg"),
    "grad_flow_sigmoid.png": ("examples/02_gradient_flow.py", "grad_flow_sigmoid.png"),
    "wgan_gp_ring.png": ("examples/04_wgan_gp.py", "samples.png"),
    "checkpoint_memory.png": ("examples/05_checkpointing.py", "checkpoint_memory.png"),
}


def demo_facts(**demo_kw) -> str:
    """What the demo's gradient-flow plot shows, computed without training: the layers
    and the number of optimizer steps (``demo_kw``: settings other than ``DEMO``'s)."""
    from retrograd._cli.demo import _build_model, demo
    from retrograd.data import load_digits

    kw = {**DEMO, **demo_kw}
    batch = inspect.signature(demo).parameters["batch_size"].default
    n_train = load_digits()[0].shape[0] - 360  # the demo keeps 360 images for testing
    if kw.get("limit") is not None:
        n_train = min(n_train, kw["limit"])
    names = [n for n, _ in _build_model(kw["model"]).named_parameters()]
    steps = kw["epochs"] * math.ceil(n_train / batch)
    return (f"retrograd demo --model {kw['model']} --epochs {kw['epochs']}: {steps} optimizer "
            f"steps; parameters: {', '.join(names)}")


def graph_facts(text: str) -> tuple[str, int]:
    """``(title, number of nodes)`` of a backward graph as DOT text or as Graphviz SVG
    (its legend is not a node of the graph)."""
    if text.lstrip().startswith("digraph"):
        title = re.search(r'^\s*labelloc=t; label="([^"]*)"', text, re.M).group(1)
        return title, len(re.findall(r"^\s*[nr]\d+ \[", text, re.M))
    title = re.search(r'<text [^>]*>(one training step[^<]*)</text>', text).group(1)
    return title, text.count('class="node"') - text.count("<title>legend</title>")


def _run_demo(out: str, **kw) -> dict:
    from retrograd._cli.demo import demo

    res = demo(out=out, progress=False, **{**DEMO, **kw})
    return res.files


def _run_example(script: str, out: str) -> None:
    path = os.path.join(ROOT, script)
    spec = importlib.util.spec_from_file_location("example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--out", out])


def _describe_png(path: str, text: str) -> None:
    """Write ``text`` into the PNG's ``Description`` chunk (pixels unchanged)."""
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Software", "retrograd docs/make_pictures.py")
    info.add_text("Description", text)
    with Image.open(path) as im:
        im.load()
        im.save(path, pnginfo=info)


def png_description(path: str) -> str | None:
    """The ``Description`` text of a PNG written by this script."""
    from PIL import Image

    with Image.open(path) as im:
        return im.text.get("Description")


def make(names: list[str], img: str = IMG, demo_kw: dict | None = None) -> dict[str, str]:
    """Make the named pictures into ``img``; returns what was skipped and why.
    ``demo_kw``: demo settings other than ``DEMO``'s (the tests train less)."""
    demo_kw = demo_kw or {}
    from retrograd.viz import graphviz_available

    skipped = {}
    made_by = {}
    for name in names:
        made_by.setdefault(PICTURES[name][0], []).append(name)
    with tempfile.TemporaryDirectory() as tmp:
        for maker, pics in made_by.items():
            out = os.path.join(tmp, re.sub(r"\W", "_", maker))
            if maker == "demo":
                _run_demo(out, **demo_kw)
            else:
                _run_example(maker, out)
            for name in pics:
                src = os.path.join(out, PICTURES[name][1])
                if name.endswith(".svg") and not graphviz_available()[0]:
                    skipped[name] = graphviz_available()[1]
                    continue
                shutil.copyfile(src, os.path.join(img, name))
                if name.endswith(".png"):
                    _describe_png(os.path.join(img, name),
                                  demo_facts(**demo_kw) if maker == "demo"
                                  else f"python {maker} (its default settings)")
                print(f"wrote docs/img/{name}")
    for name, why in skipped.items():
        print(f"skipped docs/img/{name}: {why}")
    return skipped


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", metavar="PICTURE",
                   help="pictures to make (default: all); see --list")
    p.add_argument("--list", action="store_true", help="list the pictures and what makes them")
    args = p.parse_args(argv)
    if args.list:
        for name, (maker, _) in PICTURES.items():
            print(f"{name:<24} {maker}")
        return 0
    unknown = [n for n in args.names if n not in PICTURES]
    if unknown:
        p.error(f"unknown picture(s) {', '.join(unknown)}; choose from {', '.join(PICTURES)}")
    make(args.names or list(PICTURES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
