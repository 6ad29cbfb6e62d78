"""docs/how-it-works.md stays true: its examples run and print what it shows, and every
place (``path:name``) and Note it sends the reader to is still in the source.

(Cited Notes are spelled ``Note`` + ``[title]`` in this file's own text so that
tests/test_layout.py, which reads the tests too, does not take them for citations.)"""

from __future__ import annotations

import ast
import doctest
import pathlib
import re
import sys
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-it-works.md"
SRC = ROOT / "src" / "retrograd"
BLOCK = re.compile(r'```(\w+)(?: title="([^"]+)")?\n(.*?)```', re.S)
# a place: `src/retrograd/<file>.py` or `src/retrograd/<file>.py:name` (name: a top-level
# function, class or assigned name, or Class.member), always inside backticks
PLACE = re.compile(r"`(src/retrograd/[\w/]+\.py)(?::([\w.]+))?`")
CITE = re.compile(r"Note \[([^\]]+)\]")
# as tests/test_layout.py: a Note is written down where a line starts with it
DEFINE = re.compile(r"^\s*(?:#\s*)?Note \[([^\]]+)\]", re.M)
STEPS = re.compile(r"^## (\d)\. (.*?)$(.*?)(?=^## |\Z)", re.M | re.S)


def _text() -> str:
    return PAGE.read_text(encoding="utf-8")


def _defined(path: pathlib.Path) -> set:
    """The dotted names ``path`` defines: top-level functions, classes and assigned
    names, and the functions and assigned names of each class (``Class.member``)."""
    names = set()

    def add(body, prefix: str, depth: int) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                names.add(prefix + node.name)
                if depth == 0:
                    add(node.body, node.name + ".", 1)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            names.add(prefix + n.id)

    add(ast.parse(path.read_text(encoding="utf-8")).body, "", 0)
    return names


def missing_places(text: str) -> list:
    """The ``path`` or ``path:name`` citations of ``text`` that the source lacks."""
    missing, cache = [], {}
    for path, name in PLACE.findall(text):
        f = ROOT / path
        if not f.is_file():
            missing.append(path)
            continue
        if name:
            if f not in cache:
                cache[f] = _defined(f)
            if name not in cache[f]:
                missing.append(f"{path}:{name}")
    return missing


def _norm(title: str) -> str:
    return re.sub(r"\s*\n\s*#?:?\s*", " ", title)


def missing_notes(text: str) -> list:
    """The titles of the Notes ``text`` cites that no source file has as a heading."""
    defined = {_norm(m) for p in SRC.rglob("*.py")
               for m in DEFINE.findall(p.read_text(encoding="utf-8"))}
    return sorted({_norm(m) for m in CITE.findall(text)} - defined)


def test_every_cited_place_exists():
    text = _text()
    assert len(PLACE.findall(text)) >= 30
    assert missing_places(text) == []


def test_every_cited_note_is_written_in_the_source():
    text = _text()
    assert len(set(CITE.findall(text))) >= 15
    assert missing_notes(text) == []
    # the page only cites Notes: a line of it that started with one would count as
    # writing that Note down for tests/test_layout.py's check of every cited Note
    assert not DEFINE.findall(text)


def test_the_checks_catch_a_broken_citation():
    good = "`src/retrograd/ops/dispatch.py:binary` `src/retrograd/_graph/node.py:Node._unpack`"
    assert missing_places(good) == []
    assert missing_places("`src/retrograd/ops/dispatch.py:no_such_fn`") == [
        "src/retrograd/ops/dispatch.py:no_such_fn"]
    assert missing_places("`src/retrograd/_graph/node.py:Node.no_such`") == [
        "src/retrograd/_graph/node.py:Node.no_such"]
    assert missing_places("`src/retrograd/no_such_file.py`") == ["src/retrograd/no_such_file.py"]
    note = "Note "  # (see the module docstring)
    assert missing_notes(f"{note}[Engine order] and {note}[No such note]") == ["No such note"]


def test_each_step_names_places_and_notes_and_has_an_example():
    steps = STEPS.findall(_text())
    assert [int(n) for n, _, _ in steps] == list(range(9))
    for n, title, body in steps[1:]:
        assert PLACE.search(body), f"step {n} ({title}) names no place to read"
        assert CITE.search(body), f"step {n} ({title}) names no Note"
        assert "```pycon\n>>> " in body, f"step {n} ({title}) has no example"


def test_the_tiny_engine_is_under_60_lines():
    (code,) = [c for lang, title, c in BLOCK.findall(_text()) if title == "tiny_autograd.py"]
    assert len([ln for ln in code.splitlines() if ln.strip()]) < 60


@pytest.fixture
def saved_files(tmp_path):
    """The page's titled Python blocks, saved under their titles and importable."""
    names = []
    for lang, title, code in BLOCK.findall(_text()):
        if lang == "python" and title:
            (tmp_path / title).write_text(code, encoding="utf-8")
            names.append(title.removesuffix(".py"))
    sys.path.insert(0, str(tmp_path))
    yield names
    sys.path.remove(str(tmp_path))
    for name in names:
        sys.modules.pop(name, None)


def test_the_examples_print_what_the_page_shows(saved_files):
    assert saved_files == ["tiny_autograd"]
    sessions = [code for lang, _, code in BLOCK.findall(_text()) if lang == "pycon"]
    test = doctest.DocTestParser().get_doctest("\n".join(sessions), {}, PAGE.name,
                                               str(PAGE), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example that warns is not one to copy
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 60
