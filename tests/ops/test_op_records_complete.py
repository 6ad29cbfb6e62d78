"""Op records are complete when constructed (Note [Complete records] in ops/op.py, issue
36): nothing is assigned onto a record after ``Op(...)``, only the records modules make
records, and no engine or dispatch code tests a record by its name. The source is
scanned with ``ast``; each scanner is first shown to catch what it looks for."""

from __future__ import annotations

import ast
import copy
import importlib
import pathlib

import pytest

from retrograd.ops.op import REGISTRY, Op

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "retrograd"
FILES = sorted(SRC.rglob("*.py"))

SLOTS = frozenset(Op.__slots__)
# slot names that other objects use too (state.batch, Tensor.name, self.kind): an
# assignment to one of these counts when its target is a record (see _is_record)
SHARED = frozenset({"name", "kind", "batch", "save", "view", "fwd"})
# the one writable field, and the one module that writes it (Note [Tracing])
KERNEL_SWAPPERS = {("fwd", "_compile/trace.py")}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _namespace(path: pathlib.Path) -> dict:
    if path.name == "__main__.py":
        return {}
    try:
        return vars(importlib.import_module(_module_name(path)))
    except Exception:  # (optional dependencies): judged by names alone
        return {}


def _resolve(expr: ast.expr, ns: dict):
    """The object a dotted expression (``T.mul``, ``mul``) names in a module, or None."""
    if isinstance(expr, ast.Name):
        return ns.get(expr.id)
    if isinstance(expr, ast.Attribute):
        base = _resolve(expr.value, ns)
        return None if base is None else getattr(base, expr.attr, None)
    return None


def _record_like_name(expr: ast.expr) -> bool:
    """A variable or attribute named as records are (``op``, ``_op``, ``fold_op``,
    ``node._op``)."""
    name = expr.id if isinstance(expr, ast.Name) else (
        expr.attr if isinstance(expr, ast.Attribute) else None)
    return name is not None and (name in ("op", "_op") or name.endswith("_op"))


def _is_record(expr: ast.expr, ns: dict) -> bool:
    return isinstance(_resolve(expr, ns), Op) or _record_like_name(expr)


def _stores(tree: ast.AST):
    """(line, receiver, attribute) of every attribute assignment in ``tree``, including
    ``setattr(x, "a", v)`` and ``object.__setattr__(x, "a", v)``."""
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store):
                    yield node.lineno, t.value, t.attr
        if isinstance(node, ast.Call) and len(node.args) >= 3 and \
                isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == "setattr") or (
                    isinstance(f, ast.Attribute) and f.attr == "__setattr__"):
                yield node.lineno, node.args[0], node.args[1].value


def assignments_onto_records(source: str, ns: dict, where: str = "") -> list:
    """The assignments onto an op record in ``source`` (module namespace ``ns``)."""
    found = []
    for line, receiver, attr in _stores(ast.parse(source)):
        if attr not in SLOTS and attr != "_save_if":
            continue
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            continue  # (another class's own field, or Op.__init__)
        if (attr, where) in KERNEL_SWAPPERS:
            continue
        if attr not in SHARED or _is_record(receiver, ns):
            found.append(f"{where}:{line}: {ast.unparse(receiver)}.{attr} = ...")
    return found


def test_the_assignment_scanner_finds_assignments_onto_records():
    from retrograd.ops.records import table as T

    ns = {"T": T, "mul": T.mul, "state": object()}
    source = "\n".join([
        "T.mul.save_if = ((1,), (0,))",
        "mul.kind = None",
        "for _op in (T.exp, T.log):\n    _op.grad_once = None",
        "def f(op, nondiff):\n    op.nondiff = nondiff",
        "setattr(T.mul, 'jvp', None)",
        "object.__setattr__(T.mul, 'batch', None)",
        "T.mul.fwd = print",
        "state.batch = 0",  # not records: none of these counts
        "self.kind = 'x'",
        "Tensor.name = None",
    ])
    found = assignments_onto_records(source, ns)
    assert sorted(f.split(": ", 1)[1] for f in found) == sorted([
        "T.mul.save_if = ...", "mul.kind = ...", "_op.grad_once = ...", "op.nondiff = ...",
        "T.mul.jvp = ...", "T.mul.batch = ...", "T.mul.fwd = ..."])


def test_nothing_is_assigned_onto_an_op_record():
    """Every field is a constructor argument (Note [Complete records])."""
    found = []
    for path in FILES:
        where = str(path.relative_to(SRC))
        found += assignments_onto_records(path.read_text(), _namespace(path), where)
    assert found == []


def test_records_refuse_assignment_but_for_their_kernel():
    op = REGISTRY[0]
    for field in sorted(SLOTS - {"fwd"}):
        with pytest.raises(AttributeError, match="complete when constructed"):
            setattr(op, field, getattr(op, field))
    with pytest.raises(AttributeError):
        op.anything = 1  # (no such slot)
    kernel = op.fwd
    op.fwd = print  # the tracer wraps kernels while it records (Note [Tracing])
    try:
        assert op.fwd is print
    finally:
        op.fwd = kernel
    assert copy.copy(op) is op and copy.deepcopy([op])[0] is op


def test_a_record_takes_every_field_from_its_constructor():
    from retrograd._graph.node import RELEASED
    from retrograd.ops.op import SAVE_CROSSED, SAVE_GENERAL

    def once(node, needs):
        return True

    op = Op("doc_example_op", None, (None, None), (0, 1), save_if=((1,), (0,)), kind="float",
            grad_once=once, unsaved=RELEASED, bool_error="no bools", nondiff=(0,),
            register=False)
    assert (op.kind, op.grad_once, op.unsaved, op.bool_error, op.nondiff) == (
        "float", once, RELEASED, "no bools", (0,))
    assert op.save_plan == SAVE_CROSSED and op not in REGISTRY
    assert Op("doc_example_op", None, save=(0, 1), save_if=((0,), (1,)),
              register=False).save_plan == SAVE_GENERAL


def _op_constructions(source: str) -> list:
    return [n.lineno for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id == "Op") or
        (isinstance(n.func, ast.Attribute) and n.func.attr == "Op"))]


def test_only_the_records_modules_construct_records():
    assert _op_constructions("x = Op('a', f)\ny = op.Op('b', g)\nz = Opt('c')") == [1, 2]
    found = []
    for path in FILES:
        rel = path.relative_to(SRC)
        if rel.parts[:2] == ("ops", "records") or rel == pathlib.Path("ops", "op.py"):
            continue
        found += [f"{rel}:{line}" for line in _op_constructions(path.read_text())]
    assert found == []


def _strings(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str)
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return bool(expr.elts) and all(_strings(e) for e in expr.elts)
    return False


def _op_name(expr: ast.expr) -> bool:
    """``op.name``, ``node._op.name``, ``getattr(op, "name", ...)``, or a slice of one."""
    if isinstance(expr, ast.Subscript):
        return _op_name(expr.value)
    if isinstance(expr, ast.Attribute) and expr.attr == "name":
        return _record_like_name(expr.value)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and \
            expr.func.id == "getattr" and len(expr.args) >= 2:
        arg = expr.args[1]
        return isinstance(arg, ast.Constant) and arg.value == "name" and \
            _record_like_name(expr.args[0])
    return False


def name_tests(source: str) -> list:
    """Lines that compare a record's name with a string (or test how it starts or ends)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_op_name(s) for s in sides) and any(_strings(s) for s in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("startswith", "endswith") and _op_name(node.func.value):
            found.append(node.lineno)
    return found


def test_the_name_test_scanner_finds_name_tests():
    source = "\n".join([
        'getattr(op, "name", None) == "remainder"',
        'op.name[:3] == "sub"',
        'c.op.name in ("transpose", "permute")',
        'node._op.name.startswith("sub")',
        'op.name not in _WARNED',  # not tests by a name written here: none of these counts
        'x.dtype.name == "bfloat16"',
        'op.node_name == _NOT_IMPLEMENTED',
    ])
    assert sorted(name_tests(source)) == [1, 2, 3, 4]


def test_no_engine_or_dispatch_code_tests_a_record_by_its_name():
    """What the engine, dispatch and the rules around them must know of a record is a
    field of it (Note [Complete records])."""
    places = [*(SRC / "_graph").glob("*.py"), *(SRC / "ops").glob("*.py"),
              *(SRC / "_functorch").glob("*.py"), *(SRC / "amp").glob("*.py")]
    found = [f"{p.relative_to(SRC)}:{line}" for p in sorted(places)
             for line in name_tests(p.read_text())]
    assert found == []
