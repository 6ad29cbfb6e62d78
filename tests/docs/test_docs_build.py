"""The documentation site builds with ``mkdocs build --strict`` (no warning: broken links,
unresolved cross-references), and the built API reference shows what the docstrings
say: every ``>>>`` example as a highlighted code block, outputs such as
``<SquareBackward0 object>`` kept as text, no doctest directives, a signature on every
class.

The relation checked between the docstrings and the built pages: each object rendered
in the API reference (an ``id`` heading) gets one code block per run of example lines
in its docstring (a run starts at a ``>>>`` line and ends at a blank line, as Griffe
splits examples), and the text of those blocks is the docstring's example lines
without their ``# doctest:`` comments. No ``>>>`` appears anywhere outside a code block,
and no page of the site shows a ``doctest:`` directive.

The build must not depend on what else is installed: mkdocs.yml is plain YAML (no
``!relative`` tag, which mkdocstrings-python's option validation rejects wherever
pydantic is installed), and the code blocks are highlighted by Pygments (a ``docs``
extra), checked on the built HTML.

The build takes about 10 s, so it runs once per session (the module's fixture).
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
API_PAGES = ["autograd", "nn", "optim", "tensor", "utils", "viz"]

if not os.environ.get("CI"):  # CI installs the `test` extra, which brings the docs tools
    pytest.importorskip("mkdocs", reason="the docs tools: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings_handlers.python")

_FLAGS = re.compile(r"\s*#\s*doctest:.+$")
_TAG = re.compile(r"<[^>]+>")
_HEADING = re.compile(r'<h[1-6] id="(retrograd[\w.]*)" class="doc doc-heading">')
_PYCON = re.compile(r'<div class="language-pycon highlight"><pre>(.*?)</pre>', re.S)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("site"))
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
         os.path.join(ROOT, "mkdocs.yml"), "-d", out],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    assert not warnings, "\n".join(warnings)
    return out


def _page(site: str, name: str) -> str:
    with open(os.path.join(site, "api", name, "index.html"), encoding="utf-8") as f:
        return f.read()


def _sections(page: str) -> dict[str, str]:
    """Each rendered object's id -> the HTML from its heading to the next heading (a
    class's own docstring comes before its members' headings)."""
    marks = list(_HEADING.finditer(page))
    return {m.group(1): page[m.end():(marks[i + 1].start() if i + 1 < len(marks)
                                       else len(page))]
            for i, m in enumerate(marks)}


def _resolve(ident: str):
    """The Python object behind a rendered id such as ``retrograd.optim.SGD.step``."""
    parts = ident.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise LookupError(ident)


def _example_runs(doc: str) -> list[list[str]]:
    """The docstring's example code, as runs of lines (a ``>>>`` line up to a blank)."""
    runs, cur = [], None
    for line in (doc or "").expandtabs().splitlines():
        text = line.strip()
        if not text:
            cur = None
        elif cur is not None:
            cur.append(_FLAGS.sub("", text).replace("<BLANKLINE>", ""))
        elif text.startswith(">>>"):
            cur = [_FLAGS.sub("", text)]
            runs.append(cur)
    return runs


def _block_lines(block: str) -> list[str]:
    return [ln.strip() for ln in html.unescape(_TAG.sub("", block)).splitlines()
            if ln.strip()]


def _own_doc(ident: str) -> str | None:
    """The docstring mkdocstrings shows for ``ident``: the object's own, not one that
    ``inspect.getdoc`` would inherit from a base class."""
    obj = _resolve(ident)
    if isinstance(obj, property):
        obj = obj.fget
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__",
                                                                               None)
    return doc if isinstance(doc, str) else None


def test_examples_are_code_blocks(site):
    totals = {"objects": 0, "blocks": 0, "prompts": 0, "angle_outputs": 0}
    for name in API_PAGES:
        page = _page(site, name)
        outside = re.sub(r"<pre>.*?</pre>", "", page, flags=re.S)
        assert "&gt;&gt;&gt;" not in outside, f"api/{name}: a >>> example outside a code block"
        assert "doctest:" not in page, f"api/{name}: a doctest directive is rendered"
        for ident, section in _sections(page).items():
            runs = _example_runs(_own_doc(ident))
            blocks = [_block_lines(b) for b in _PYCON.findall(section)]
            assert len(blocks) == len(runs), (ident, len(blocks), len(runs))
            for run, block in zip(runs, blocks):
                assert block == [ln for ln in run if ln], (ident, run, block)
            totals["objects"] += 1
            totals["blocks"] += len(blocks)
            totals["prompts"] += sum(ln.startswith(">>>") for run in runs for ln in run)
            totals["angle_outputs"] += sum(ln.startswith("<") and ln.endswith(">")
                                           for run in runs for ln in run)
    # the API reference as a whole: more than a thousand example lines, each in a block
    assert totals["prompts"] > 1000 and totals["blocks"] > 400, totals
    # outputs that look like HTML tags (<SquareBackward0 object>, <class ...>) survive
    assert totals["angle_outputs"] >= 5, totals


def test_reprs_in_angle_brackets_stay_text(site):
    page = _page(site, "autograd")  # retrograd.autograd.function's module example
    assert ('<span class="go">&lt;retrograd.autograd.function.SquareBackward object at '
            '0x...&gt;</span>') in page


def _python_init(cls: type) -> bool:
    """Whether ``cls`` is built through an ``__init__`` of retrograd's (its own or a base
    class's); classes made only by the library (``Node``, ``FunctionCtx``), enums,
    exceptions and ``Tensor`` (``__new__``; made by ``torch.tensor``) have none."""
    init = next(k.__dict__["__init__"] for k in cls.__mro__ if "__init__" in k.__dict__)
    return inspect.isfunction(init) and init.__module__.startswith("retrograd")


def test_every_class_shows_its_signature(site):
    shown = 0
    for name in API_PAGES:
        page = _page(site, name)
        for m in re.finditer(r'<div class="doc doc-object doc-class">\s*<h\d id="([\w.]+)"',
                             page):
            cls = m.group(1).rsplit(".", 1)[1]
            head = _block_lines(page[m.end():page.find('<div class="doc doc-contents', m.end())])
            has = any(ln.startswith(cls + "(") for ln in head)
            assert has or not _python_init(_resolve(m.group(1))), (m.group(1), head)
            shown += has
    assert shown > 100


def test_guide_pages_render_code_and_tables(site):
    with open(os.path.join(site, "guide", "index.html"), encoding="utf-8") as f:
        guide = f.read()
    assert guide.count('<div class="language-pycon highlight"><pre>') > 10
    with open(os.path.join(site, "index.html"), encoding="utf-8") as f:
        home = f.read()
    assert "<table>" in home and "NumPy alone" not in home
    assert os.path.exists(os.path.join(site, "css", "pygments.css"))


def test_code_blocks_are_highlighted(site):
    # Pygments' token spans; without Pygments, pymdownx.highlight writes bare <code>
    # blocks and the build still succeeds, so only the HTML tells
    with open(os.path.join(site, "guide", "index.html"), encoding="utf-8") as f:
        guide = f.read()
    assert '<span class="k">def</span>' in guide
    assert '<span class="kn">import</span>' in guide
    assert guide.count('<span class="gp">&gt;&gt;&gt; </span>') > 50


def test_no_page_shows_a_doctest_directive(site):
    shown = []
    for folder, _, files in os.walk(site):
        for name in files:
            if name.endswith((".html", ".json")):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    if "doctest:" in f.read():
                        shown.append(os.path.relpath(os.path.join(folder, name), site))
    assert not shown
    # the guide's sources do use them (its examples run as doctests): the hook cuts them
    with open(os.path.join(DOCS, "guide.md"), encoding="utf-8") as f:
        assert "# doctest: +ELLIPSIS" in f.read()


def test_config_is_plain_yaml():
    """mkdocs.yml has no custom YAML tags, and the griffe extension is a path string
    (resolved by mkdocstrings-python against the config file's folder)."""
    import yaml

    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)  # a !relative or !ENV tag fails here
    (mkdocstrings,) = [p["mkdocstrings"] for p in config["plugins"]
                       if isinstance(p, dict) and "mkdocstrings" in p]
    options = mkdocstrings["handlers"]["python"]["options"]
    assert options["extensions"] == ["docs/griffe_examples.py"]
    for ext in options["extensions"]:
        assert os.path.exists(os.path.join(ROOT, ext))
    if importlib.util.find_spec("pydantic") is not None:
        # validated as mkdocstrings-python validates them where pydantic is installed
        from mkdocstrings_handlers.python import PythonOptions

        PythonOptions.from_data(**options)
