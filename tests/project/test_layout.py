"""The shape of the source tree that the re-layering set (issue 13): files of a
readable size, short engine functions, imports pointing down the layers, and every
note a comment cites by its bracketed title is written down somewhere."""

from __future__ import annotations

import ast
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "retrograd"
FILES = sorted(SRC.rglob("*.py"))

# the layers, bottom first: a module may import from its own layer and those below.
# Every top-level module and package of retrograd is named here (the test below checks).
LAYERS = [
    {"_core", "version"},                                     # dtypes, device, Size, flags
    {"_graph"},                                               # Node, engine, hooks, modes
    {"_tensor", "storage"},                                   # Tensor, its printing
    {"_random"},                                              # the generator, its kernels
    {"ops"},                                                  # records, kernels, dispatch
    {"_functions"},                                           # the public tensor functions
    {"autograd", "amp", "linalg", "special", "func", "_functorch", "_cond"},
    {"nn", "optim", "utils", "viz", "distributed", "distributions", "cpu", "cuda", "data",
     "backends", "jit", "testing", "_serialization", "serialization", "safetensors"},
    {"_compile", "compiler"},
    {"__init__"},                                             # ``import retrograd``
    {"_cli", "__main__"},                                     # the ``retrograd`` command
]


def _top(parts: tuple) -> str:
    """The top-level module or package that ``parts`` (relative to the package) names;
    ``()`` is the package itself (``import retrograd``), its ``__init__``."""
    if not parts:
        return "__init__"
    top = parts[0]
    return top[:-3] if top.endswith(".py") else top


def _layer(parts: tuple) -> int | None:
    top = _top(parts)
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    return None


def test_every_top_level_module_has_a_layer():
    tops = {_top(p.relative_to(SRC).parts) for p in FILES}
    named = set().union(*LAYERS)
    assert sorted(tops - named) == [] and sorted(named - tops) == []


_HISTORY_NAME = re.compile(r"(_extras?|_more|_fixes|_review|issue\d*)$|^issue")


def test_files_are_named_after_their_job():
    """No module is named after when it was written (``*_extra``, ``*_more``, an issue)."""
    bad = [str(p.relative_to(SRC)) for p in FILES if _HISTORY_NAME.search(p.stem)]
    assert not bad


def _module_of(parts: tuple) -> str | None:
    """The dotted name of the module ``parts`` (relative to the package) names, if it is a
    module or package of retrograd's own; else None (a function or class)."""
    path = SRC.joinpath(*parts)
    if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
        return ".".join((SRC.name,) + parts)
    return None


def test_one_alias_per_module():
    """Note [Module aliases] (ops/__init__.py): a module imported under an alias has that
    alias in every file, and an alias names one module everywhere."""
    aliases: dict = {}
    modules: dict = {}
    for path in FILES:
        here = path.relative_to(SRC).parts[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here[:len(here) - node.level + 1] if node.level > 1 else here
                mod = base + tuple(p for p in (node.module or "").split(".") if p)
            elif (node.module or "").split(".")[0] == SRC.name:
                mod = tuple(node.module.split(".")[1:])
            else:
                continue
            for a in node.names:
                name = _module_of(mod + (a.name,))
                if name is None or a.asname is None:
                    continue
                where = f"{path.relative_to(SRC)}:{node.lineno}"
                aliases.setdefault(a.asname, {}).setdefault(name, where)
                modules.setdefault(name, {}).setdefault(a.asname, where)
    assert {k: v for k, v in aliases.items() if len(v) > 1} == {}
    assert {k: v for k, v in modules.items() if len(v) > 1} == {}


def test_no_source_file_over_1500_lines():
    long = {str(p.relative_to(SRC)): n for p in FILES
            if (n := len(p.read_text().splitlines())) > 1500}
    assert not long


def test_engine_functions_are_short():
    tree = ast.parse((SRC / "_graph" / "engine.py").read_text())
    lengths = {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree)
               if isinstance(n, ast.FunctionDef)}
    assert max(lengths.values()) <= 60, sorted(lengths.items(), key=lambda kv: -kv[1])[:3]


def _imports(path: pathlib.Path):
    """(line, the module parts it may name, relative to the package) of each import of
    retrograd's own code in ``path``, relative (``from ..ops import table``) or absolute
    (``import retrograd as R``, ``from retrograd.ops import dispatch``); the package itself
    is ``()``. A ``from`` import names its module and, maybe, submodules."""
    here = path.relative_to(SRC).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == SRC.name:
                    yield node.lineno, [tuple(a.name.split(".")[1:])]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1] if node.level > 1 else here
                mod = base + tuple(p for p in (node.module or "").split(".") if p)
            elif (node.module or "").split(".")[0] == SRC.name:
                mod = tuple(node.module.split(".")[1:])
            else:
                continue
            yield node.lineno, [mod] + [mod + (a.name,) for a in node.names]


def test_imports_point_down_the_layers():
    upward = []
    for path in FILES:
        parts = path.relative_to(SRC).parts
        mine = _layer(parts)
        if mine is None:
            continue
        for line, targets in _imports(path):
            target = targets[0] if targets[0] or len(targets) == 1 else targets[1]
            theirs = _layer(target)
            if theirs is not None and theirs > mine:
                upward.append(f"{'/'.join(parts)}:{line} imports {'.'.join(target) or SRC.name}")
    assert not upward


_CITE = re.compile(r"Note \[([^\]]+)\]")
_DEFINE = re.compile(r"^\s*(?:#\s*)?Note \[([^\]]+)\]", re.M)  # a line that starts with it


def test_every_cited_note_is_written_down():
    root = SRC.parent.parent
    texts = [p.read_text() for p in FILES]
    texts += [p.read_text() for d in ("tests", "bench") for p in (root / d).rglob("*.py")]
    texts += [p.read_text() for p in (root / "docs").rglob("*.md")]
    defined = {re.sub(r"\s*\n\s*#?:?\s*", " ", m) for t in texts for m in _DEFINE.findall(t)}
    cited = {re.sub(r"\s*\n\s*#?:?\s*", " ", m) for t in texts for m in _CITE.findall(t)}
    assert sorted(cited - defined) == []


def _file_of(parts: tuple) -> pathlib.Path | None:
    """The module file that ``parts`` (relative to the package) names, if it is one."""
    if not parts:
        return None
    f = SRC.joinpath(*parts[:-1], parts[-1] + ".py")
    return f if f.exists() else None


def _module_edges() -> dict:
    """file -> the module files of the package it imports (at any depth of the file)."""
    edges: dict = {}
    for path in FILES:
        if path.name == "__init__.py":  # package faces only hand names on
            continue
        out = edges.setdefault(path, set())
        for _, targets in _imports(path):
            for target in targets:
                f = _file_of(target)
                if f is not None and f != path:
                    out.add(f)
    return edges


def test_no_import_circles():
    edges = _module_edges()
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    circles = []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(str(w.relative_to(SRC)))
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in list(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    assert circles == []
