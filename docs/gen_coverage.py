"""Write docs/coverage.md: which public names of PyTorch's modules retrograd provides.

The mkdocs build (``hooks:`` in mkdocs.yml) renders the page from the current code when
PyTorch is importable, and from the committed file otherwise; ``python
docs/gen_coverage.py`` rewrites the committed file.
"""

from __future__ import annotations

import importlib
import inspect
import os

MODULES = [
    ("torch", "retrograd"),
    ("torch.autograd", "retrograd.autograd"),
    ("torch.nn", "retrograd.nn"),
    ("torch.nn.functional", "retrograd.nn.functional"),
    ("torch.nn.init", "retrograd.nn.init"),
    ("torch.nn.utils", "retrograd.nn.utils"),
    ("torch.optim", "retrograd.optim"),
    ("torch.optim.lr_scheduler", "retrograd.optim.lr_scheduler"),
    ("torch.utils.data", "retrograd.utils.data"),
    ("torch.utils.checkpoint", "retrograd.utils.checkpoint"),
    ("torch.amp", "retrograd.amp"),
    ("torch.linalg", "retrograd.linalg"),
    ("torch.func", "retrograd.func"),
    ("torch.special", "retrograd.special"),
    ("torch.distributions", "retrograd.distributions"),
    ("torch.testing", "retrograd.testing"),
    ("torch.jit", "retrograd.jit"),
]

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coverage.md")


def _public(mod) -> list:
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for n in names:
        obj = getattr(mod, n, None)
        if n.startswith("_") or inspect.ismodule(obj):
            continue
        out.append(n)
    return sorted(set(out))


def generate() -> str | None:
    """The page's markdown, or None when PyTorch or retrograd cannot be imported."""
    try:
        import torch
    except ImportError:
        return None
    lines = ["# Coverage of PyTorch's public names", "",
             f"Generated from PyTorch {torch.__version__} and retrograd by "
             "`docs/gen_coverage.py`. A name counts as covered when retrograd's module has "
             "it; whether it behaves the same is what the test suite checks. See "
             "[PyTorch compatibility](compatibility.md) for the areas and the differences.",
             "", "| PyTorch module | covered | of |", "|---|---|---|"]
    sections = []
    for tname, rname in MODULES:
        try:
            tmod = importlib.import_module(tname)
        except ImportError:
            continue
        try:
            rmod = importlib.import_module(rname)
        except ImportError:
            rmod = None
        names = _public(tmod)
        have = [n for n in names if rmod is not None and hasattr(rmod, n)]
        missing = [n for n in names if n not in have]
        lines.append(f"| `{tname}` | {len(have)} | {len(names)} |")
        sections += ["", f"## `{tname}`", "",
                     "**Provided:** " + (", ".join(f"`{n}`" for n in have) or "none"), "",
                     "**Not provided:** " + (", ".join(f"`{n}`" for n in missing) or "none")]
    return "\n".join(lines + sections) + "\n"


def write() -> bool:
    text = generate()
    if text is None:
        return False
    old = open(OUT).read() if os.path.exists(OUT) else None
    if text != old:
        with open(OUT, "w") as f:
            f.write(text)
    return True


def on_page_markdown(markdown: str, page, **kwargs) -> str:  # mkdocs hook
    """The coverage page as generated now when PyTorch is installed, else as committed.

    The build never writes into docs/ (``python docs/gen_coverage.py`` does that)."""
    if page.file.src_uri == "coverage.md":
        return generate() or markdown
    return markdown


if __name__ == "__main__":
    print("wrote" if write() else "PyTorch is not installed; left", OUT)
