"""The core stays readable (issue 36, DESIGN.md "Where things live"): every function of
the core files has a McCabe complexity of 15 or less, counted as ruff's C901 (and the
mccabe plugin) count it; no source file swaps a function's code object."""

from __future__ import annotations

import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "retrograd"

#: the core: the op record and the hot path, the engine and the node, the Tensor, grad
#: mode and custom Functions
CORE = ["ops/dispatch.py", "ops/op.py", "_functions/inplace.py", "_graph/engine.py",
        "_graph/node.py", "_tensor/tensor.py", "_core/grad_mode.py", "autograd/function.py"]
MAX_COMPLEXITY = 15

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _irrefutable(pattern: ast.pattern) -> bool:
    """A case pattern that matches anything (``_``, a bare capture, an or-pattern of one)."""
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None
    if isinstance(pattern, ast.MatchOr):
        return any(_irrefutable(p) for p in pattern.patterns)
    return False


def _decisions(stmts: list) -> int:
    """The decision points in ``stmts``, as ruff's C901 counts them: one per ``if``/
    ``elif``, loop, ``except`` clause, ``try``'s ``else``, ``case`` (but a last catch-all),
    and nested ``def``; expressions (``and``, ``or``, conditional expressions,
    comprehensions) count none."""
    n = 0
    for st in stmts:
        if isinstance(st, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            n += 1 + _decisions(st.body) + _decisions(st.orelse)  # (an elif is an If there)
        elif isinstance(st, (ast.With, ast.AsyncWith, ast.ClassDef)):
            n += _decisions(st.body)
        elif isinstance(st, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            n += _decisions(st.body) + _decisions(st.orelse) + _decisions(st.finalbody)
            n += bool(st.orelse) + sum(1 + _decisions(h.body) for h in st.handlers)
        elif isinstance(st, ast.Match):
            n += sum(1 + _decisions(c.body) for c in st.cases)
            last = st.cases[-1] if st.cases else None
            n -= last is not None and last.guard is None and _irrefutable(last.pattern)
        elif isinstance(st, _FUNCTIONS):
            n += 1 + _decisions(st.body)
    return n


def complexity(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """McCabe complexity of a function: its decision points plus one."""
    return _decisions(fn.body) + 1


def _functions(path: pathlib.Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, _FUNCTIONS):
            yield node


def test_counting_matches_mccabe_on_examples():
    cases = {
        "def f():\n    pass\n": 1,
        "def f(n):\n    if n > 3:\n        return 1\n    elif n > 4:\n        return 2\n"
        "    else:\n        return 3\n": 3,
        "def f(a, b):\n    return a and b or (a if b else [x for x in a if x])\n": 1,
        "def f(xs):\n    for x in xs:\n        print(x)\n    else:\n        print(None)\n": 2,
        "def f():\n    def a():\n        def b():\n            pass\n        b()\n    a()\n": 3,
        "def f():\n    try:\n        g()\n    except A:\n        h()\n    except B:\n"
        "        i()\n    else:\n        j()\n": 4,
        "def f():\n    try:\n        pass\n    finally:\n        if r:\n            g()\n": 2,
        "def f():\n    with lock:\n        while x:\n            g()\n": 2,
        "def f(s):\n    match s:\n        case 1:\n            g()\n        case 2:\n"
        "            h()\n        case _:\n            i()\n": 3,
        "def f(s):\n    match s:\n        case 1:\n            g()\n        case x if x:\n"
        "            h()\n": 3,
    }
    for src, expected in cases.items():
        fn = ast.parse(src).body[0]
        assert complexity(fn) == expected, src


def test_core_functions_are_simple():
    """DESIGN.md: every function of the core at McCabe complexity 15 or less (named steps,
    not one function that does everything)."""
    over = {f"{name}:{fn.lineno} {fn.name}": c for name in CORE
            for fn in _functions(SRC / name) if (c := complexity(fn)) > MAX_COMPLEXITY}
    assert over == {}


def _assigns_code(node: ast.AST) -> bool:
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "setattr" and len(node.args) >= 2:
        name = node.args[1]
        return isinstance(name, ast.Constant) and name.value == "__code__"
    return any(isinstance(t, ast.Attribute) and t.attr == "__code__" for t in targets)


def test_no_code_object_swaps():
    """DESIGN.md: no function's ``__code__`` is replaced at run time (a mode is a flag or a
    function reference the code reads, not another body swapped in)."""
    swaps = [f"{p.relative_to(SRC)}:{n.lineno}" for p in sorted(SRC.rglob("*.py"))
             for n in ast.walk(ast.parse(p.read_text())) if _assigns_code(n)]
    assert swaps == []
